// pdl_check.cc — PdlStore::check(): the engine's invariants recomputed from scratch.
//
// Everything the engine keeps twice is compared: the reverse map against the ppmt and the open
// group's committed entries, the ppmt's count of lpns with a base page against its entries,
// vdct against the lpns pointing at each differential page (current and committed), `copies`
// against the reverse map, `in_dwb` against the write buffer, the pending base page against
// its lpn, and each block's valid count against its pages (the pinned commit page included).
// Free blocks must hold nothing valid. With NVM, the log must hold the committed write buffer
// and the last commit (NvmLog::verify: NVM reads, uncounted).
// O(physical pages + logical pages + NVM bytes). With demand-loaded tables (docs/design.md
// §18) every table page is read once it is not resident: those reads are not counted (a check
// is no I/O of the store's), and a page that fails to load is the check's error.
// check_mount() is the part a mount from a checkpoint runs: O(blocks), no table page read.
#include <string>

#include "flash/pdl/pdl_store.h"

namespace pdl {

Status PdlStore::check_mount() const {
  auto bad = [](const std::string& m) { return Status::error(Errc::kCorrupt, "tables: " + m); };
  PDL_TRY(tables_status());
  const uint64_t pages = geo_.total_pages();
  const uint32_t ppb = geo_.pages_per_block;
  if (commit_ppa_ != kNoPpa && (commit_ppa_ >= pages || blocks_.is_free(commit_ppa_ / ppb)))
    return bad("the commit page " + std::to_string(commit_ppa_) + " is not on flash");
  uint32_t voids = 0;
  for (uint32_t b = 0; b < geo_.blocks; b++) {
    voids += void_block_[b] != 0;
    if (b < kSuperblockBlocks) continue;
    if (blocks_.is_free(b) && blocks_.valid(b))
      return bad("block " + std::to_string(b) + " is free but holds valid pages");
    if (blocks_.valid(b) > ppb)
      return bad("block " + std::to_string(b) + ": valid count " +
                 std::to_string(blocks_.valid(b)) + " above its pages");
  }
  if (voids != void_blocks_) return bad("void block count");
  if (pending_.held || !committed_.empty() || !group_page_.empty())
    return bad("an open group at mount");
  return Status::ok();
}

Status PdlStore::check() const {
  const UncountedReads uncounted(nand_);
  PDL_TRY(tables_status());
  auto bad = [](const std::string& m) { return Status::error(Errc::kCorrupt, "tables: " + m); };
  const uint64_t pages = geo_.total_pages();
  std::vector<uint32_t> vdct(pages, 0), copies(ppmt_.size(), 0);
  auto base_ok = [&](Lpn l, Ppa b, bool pending_allowed) {
    if (b == kNoPpa) return true;
    if (b == kPendingPpa) return pending_allowed && pending_.held && pending_.lpn == l;
    return b < pages && p2l_.get(b) == l;
  };
  auto diff_ok = [&](Ppa d) {
    return d == kNoPpa || (d < pages && p2l_.get(d) == kP2lDifferential);
  };
  uint64_t with_base = 0;
  for (Lpn l = 0; l < ppmt_.size(); l++) {
    const PpmtEntry e = ppmt_.get(l);
    const Refs* c = committed_of(l);
    with_base += e.base != kNoPpa;
    if (!base_ok(l, e.base, true))
      return bad("lpn " + std::to_string(l) + ": base page not in the reverse map");
    if (!diff_ok(e.diff))
      return bad("lpn " + std::to_string(l) + ": differential page not a differential page");
    if (e.diff != kNoPpa) vdct[e.diff]++;
    if (c) {
      if (!base_ok(l, c->base, false) || !diff_ok(c->diff))
        return bad("lpn " + std::to_string(l) + ": committed entry not on flash");
      if (c->diff != kNoPpa && c->diff != e.diff) vdct[c->diff]++;
    } else if (e.base == kPendingPpa) {
      return bad("lpn " + std::to_string(l) + ": pending base page outside the open group");
    }
    RecordView r;
    if (bool(e.in_dwb) != dwb_.find(l, &r))
      return bad("lpn " + std::to_string(l) + ": in_dwb disagrees with the write buffer");
    if (groups_ && e.in_dwb && !c && !nvm_)  // (with NVM the buffer outlives commits)
      return bad("lpn " + std::to_string(l) + ": buffered record outside the open group");
  }
  if (with_base != ppmt_.counted_entries())
    return bad("the ppmt counts " + std::to_string(ppmt_.counted_entries()) +
               " lpns with a base page, its entries " + std::to_string(with_base));
  if (pending_.held && (pending_.lpn >= ppmt_.size() || ppmt_.get(pending_.lpn).base != kPendingPpa))
    return bad("the pending base page's lpn does not point at it");
  for (Ppa p = 0; p < pages; p++) {
    if (vdct[p] != vdct_.get(p))
      return bad("page " + std::to_string(p) + ": vdct " + std::to_string(vdct_.get(p)) +
                 ", recount " + std::to_string(vdct[p]));
    if (p2l_.get(p) < ppmt_.size()) copies[p2l_.get(p)]++;
  }
  for (Lpn l = 0; l < ppmt_.size(); l++)
    if (copies[l] != ppmt_.get(l).copies)
      return bad("lpn " + std::to_string(l) + ": copies " + std::to_string(ppmt_.get(l).copies) +
                 ", reverse map has " + std::to_string(copies[l]));
  if (commit_ppa_ != kNoPpa && (commit_ppa_ >= pages || blocks_.is_free(commit_ppa_ /
                                                                        geo_.pages_per_block)))
    return bad("the commit page " + std::to_string(commit_ppa_) + " is not on flash");
  const uint32_t ppb = geo_.pages_per_block;
  for (uint32_t b = kSuperblockBlocks; b < geo_.blocks; b++) {
    uint32_t valid = 0;
    for (Ppa p = b * ppb; p < (b + 1) * ppb; p++) valid += referenced(p) || p == commit_ppa_;
    if (valid != blocks_.valid(b))
      return bad("block " + std::to_string(b) + ": valid count " +
                 std::to_string(blocks_.valid(b)) + ", recount " + std::to_string(valid));
    if (blocks_.is_free(b) && valid)
      return bad("block " + std::to_string(b) + " is free but holds valid pages");
  }
  if (nvm_) {
    // The NVM log holds the committed buffer and the last commit (read without counting: a
    // check is no I/O of the store's).
    std::vector<RecordView> committed;
    committed_dwb_.for_each([&](const RecordView& r) { committed.push_back(r); });
    PDL_TRY(nvm_->verify(nand_, nvm_commit_seq_, committed));
  }
  return tables_status();  // (a table page that failed to load while checking)
}

}  // namespace pdl
