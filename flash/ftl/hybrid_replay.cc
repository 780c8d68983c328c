// hybrid_replay.cc — HybridStore's mount after a power cut from a checkpoint plus the blocks
// declared since it (docs/design.md §17): HybridStore::replay and take_replayed_lpns.
//
// The scan (hybrid_recovery.cc) is pass 1 — every page's record read into the page records —
// then pass 2 and the placement over those records alone (resolve_scan: highest seq per lpn,
// ties by copy generation and complete full merges, roles from each block's records and seqs).
// The checkpoint's tables hold every programmed page's record exactly as pass 1 reads it
// (hybrid_tables.cc; a scan mount keeps the stale records of the blocks it frees). A block no
// summary declared has not been programmed, erased or marked bad since the checkpoint, so its
// records on flash are the checkpoint's — except in a retiring block, whose failed program left
// a page the tables know nothing of. So the replay runs pass 1 by reading the declared and the
// retiring blocks, takes the checkpoint's page records (and bad marks) for every other block,
// and runs the scan's own resolve_scan over the result: the store a scan would mount, by
// construction, reading R = the declared and retiring blocks only. (In RAM it goes over every
// page record, as mount_tables does: no flash operation proportional to the chip.) The page
// records are moved from the checkpoint's store into the new one, not copied (a re-read
// block's are emptied first; the lpns they named are kept aside for the touched list): the
// peak RAM is one set of page records, not two.
// What the checkpoint knows and a scan cannot is then kept for the blocks not declared, where
// nothing the store reports can tell: a free block it had erased is still erased (no erase
// before its use), and a block to be scrubbed that still holds data stays so. (A retiring block
// is not kept retiring: that shows — block_info's open or full — and the replay is to equal a
// scan; the scan's store finds the failing block again at its next program there.)
// Programs and erases nothing.
#include <algorithm>
#include <string>

#include "flash/ftl/hybrid_store.h"

namespace pdl {

Status HybridStore::replay(Nand& nand, const StoreParams& params, TableReader& r,
                           const std::vector<uint32_t>& declared, std::unique_ptr<PageStore>* out,
                           MountReport* report) {
  const MountClock clock(nand);
  std::unique_ptr<PageStore> ck_store;
  PDL_TRY(mount_tables(nand, params, CommitMode::kPerPage, r, &ck_store));
  HybridStore& ck = static_cast<HybridStore&>(*ck_store);
  const uint32_t nblocks = uint32_t(ck.blocks_.size()), P = ck.ppb();
  std::vector<bool> changed(nblocks, false);
  for (const uint32_t b : declared) {
    if (b >= nblocks || b < kSuperblockBlocks)
      return Status::error(Errc::kCorrupt, "replay: declared block " + std::to_string(b) +
                                               " is not the store's");
    changed[b] = true;
  }
  std::vector<bool> reread(nblocks, false);
  std::vector<uint32_t> reread_lpns;  // the re-read blocks' lpns in the checkpoint's records
  for (uint32_t b = kSuperblockBlocks; b < nblocks; b++) {
    reread[b] = changed[b] || ck.retiring_[b];
    if (!reread[b]) continue;
    for (uint32_t i = 0; i < P; i++)
      if (ck.page_lpn_[ck.ppa(b, i)] != kNone) reread_lpns.push_back(ck.page_lpn_[ck.ppa(b, i)]);
  }
  std::unique_ptr<HybridStore> s(new HybridStore(nand, ck.params_, /*page_records=*/false));
  s->page_lpn_ = std::move(ck.page_lpn_);
  s->page_seq_ = std::move(ck.page_seq_);
  s->page_aux_ = std::move(ck.page_aux_);
  s->page_trim_ = std::move(ck.page_trim_);
  MountReport rep;
  for (uint32_t b = 0; b < nblocks; b++) {
    const bool bad = !reread[b] && ck.blocks_[b].role == Role::kBad;
    // (What a fresh store holds where the checkpoint's records are not taken: scan_block
    // fills programmed pages only.)
    if (reread[b] || bad || b < kSuperblockBlocks)
      for (uint32_t i = 0; i < P; i++) {
        const Ppa p = s->ppa(b, i);
        s->page_lpn_[p] = kNone;
        s->page_seq_[p] = 0;
        s->page_aux_[p] = 0;
        s->page_trim_[p] = false;
      }
    if (b < kSuperblockBlocks) continue;
    if (reread[b]) {
      PDL_TRY(s->scan_block(b, &rep));
      rep.replayed_blocks++;
    } else if (bad) {
      s->blocks_[b].role = Role::kBad;
    } else {
      s->blocks_[b].wp = ck.blocks_[b].wp;
    }
  }
  s->resolve_scan(&rep);
  rep.live_lpns = 0;  // (MountReport: counted by a scan only)
  for (uint32_t b = kSuperblockBlocks; b < nblocks; b++) {
    if (changed[b]) continue;
    const Role role = s->blocks_[b].role;
    if (role == Role::kFree && ck.erased_[b]) s->erased_[b] = true;
    if (holds_data(role) && ck.scrubbing_.count(b)) s->scrubbing_.insert(b);
  }
  // The lpns that may read differently (take_replayed_lpns): those named by a record of a
  // re-read block, then or now — every write, trim and merge copy since the checkpoint is in a
  // declared block, and an lpn moved away from a block had its record there — and any whose
  // current record or mapping differs from the checkpoint's.
  const uint32_t n = uint32_t(s->cur_.size());
  std::vector<bool> touched(n, false);
  for (const uint32_t l : reread_lpns) touched[l] = true;
  for (uint32_t b = kSuperblockBlocks; b < nblocks; b++) {
    if (!reread[b]) continue;
    for (uint32_t i = 0; i < P; i++)
      if (const Ppa p = s->ppa(b, i); s->page_lpn_[p] != kNone) touched[s->page_lpn_[p]] = true;
  }
  s->replayed_ = true;
  for (Lpn l = 0; l < n; l++)
    if (touched[l] || s->cur_[l] != ck.cur_[l] || s->mapped_[l] != ck.mapped_[l])
      s->replayed_lpns_.push_back(l);
  s->ledger_.charge(s->ledger_.other());
  clock.finish(&rep);
  if (report) *report = rep;
  *out = std::move(s);
  return Status::ok();
}

bool HybridStore::take_replayed_lpns(std::vector<Lpn>* out) {
  if (!replayed_) return false;
  *out = std::move(replayed_lpns_);
  replayed_lpns_ = {};
  replayed_ = false;
  return true;
}

}  // namespace pdl
