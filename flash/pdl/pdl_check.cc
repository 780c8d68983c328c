// pdl_check.cc — PdlStore::check(): the engine's invariants recomputed from scratch.
//
// Everything the engine keeps twice is compared: the reverse map against the ppmt, vdct
// against the lpns pointing at each differential page, `copies` against the reverse map,
// `in_dwb` against the write buffer, and each block's valid count against its pages. Free
// blocks must hold nothing valid. O(physical pages + logical pages), no flash operation.
#include <string>

#include "flash/pdl/pdl_store.h"

namespace pdl {

Status PdlStore::check() const {
  auto bad = [](const std::string& m) { return Status::error(Errc::kCorrupt, "tables: " + m); };
  const uint64_t pages = geo_.total_pages();
  std::vector<uint32_t> vdct(pages, 0), copies(ppmt_.size(), 0);
  for (Lpn l = 0; l < ppmt_.size(); l++) {
    const PpmtEntry& e = ppmt_[l];
    if (e.base != kNoPpa && (e.base >= pages || p2l_[e.base] != l))
      return bad("lpn " + std::to_string(l) + ": base page not in the reverse map");
    if (e.diff != kNoPpa) {
      if (e.diff >= pages || p2l_[e.diff] != kP2lDifferential)
        return bad("lpn " + std::to_string(l) + ": differential page not a differential page");
      vdct[e.diff]++;
    }
    RecordView r;
    if (bool(e.in_dwb) != dwb_.find(l, &r))
      return bad("lpn " + std::to_string(l) + ": in_dwb disagrees with the write buffer");
  }
  for (Ppa p = 0; p < pages; p++) {
    if (vdct[p] != vdct_[p])
      return bad("page " + std::to_string(p) + ": vdct " + std::to_string(vdct_[p]) +
                 ", recount " + std::to_string(vdct[p]));
    if (p2l_[p] < ppmt_.size()) copies[p2l_[p]]++;
  }
  for (Lpn l = 0; l < ppmt_.size(); l++)
    if (copies[l] != ppmt_[l].copies)
      return bad("lpn " + std::to_string(l) + ": copies " + std::to_string(ppmt_[l].copies) +
                 ", reverse map has " + std::to_string(copies[l]));
  const uint32_t ppb = geo_.pages_per_block;
  for (uint32_t b = kSuperblockBlocks; b < geo_.blocks; b++) {
    uint32_t valid = 0;
    for (Ppa p = b * ppb; p < (b + 1) * ppb; p++) {
      const uint32_t m = p2l_[p];
      if (m == kP2lDifferential) valid += vdct_[p] > 0;
      else if (m != kP2lNone && ppmt_[m].base == p) valid++;
    }
    if (valid != blocks_.valid(b))
      return bad("block " + std::to_string(b) + ": valid count " +
                 std::to_string(blocks_.valid(b)) + ", recount " + std::to_string(valid));
    if (blocks_.is_free(b) && valid)
      return bad("block " + std::to_string(b) + " is free but holds valid pages");
  }
  return Status::ok();
}

}  // namespace pdl
