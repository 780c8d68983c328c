// pdl_inspect.cc — PdlStore::locate, block_info and mapped_pages: the engine's in-memory
// tables exposed read-only for tools (pdl dump, pdl info, pdl fsck) and tests.
//
// mapped_pages() is the ppmt's count of entries with a base page (PagedTable's counted
// entries: no table page read) less those whose newest record, in the write buffer, is a
// tombstone (is_mapped's rule); it reads at most the buffer's lpns' ppmt entries.
//
// locate(lpn) is the ppmt entry ([PDL] Fig. 3) plus the differential write buffer's view of
// the lpn; block_info(b) is the block manager's state of b, its valid-page count and the Nand's
// erase count. Both read RAM only — but locate may load a table page (docs/design.md §18),
// uncounted: no counted flash operation, no stats, no simulated time.
//
// Block states are derived from the BlockManager's public view (which says free / written):
//   blocks 0 .. kSuperblockBlocks-1  -> kReserved (the superblock copies)
//   in the free queue                -> kFree
//   the block GC is collecting       -> kVictim
//   fewer than pages_per_block pages handed out (BlockManager::written) -> kOpen: only a
//     write head's block is neither free nor fully handed out (closed blocks count as fully
//     written, mount's partly programmed ones included)
//   otherwise                        -> kFull
#include "flash/pdl/pdl_store.h"

namespace pdl {

uint64_t PdlStore::mapped_pages() const {
  const UncountedReads uncounted(nand_);
  uint64_t n = ppmt_.counted_entries();
  dwb_.for_each([&](const RecordView& r) {
    if (r.tombstone && r.lpn < ppmt_.size() && ppmt_.get(r.lpn).base != kNoPpa) n--;
  });
  return n;
}

LpnLocation PdlStore::locate(Lpn lpn) const {
  LpnLocation loc;
  if (lpn >= ppmt_.size()) return loc;
  const UncountedReads uncounted(nand_);
  const PpmtEntry e = ppmt_.get(lpn);
  loc.base = e.base == kPendingPpa ? kNoPpa : e.base;
  loc.base_in_buffer = e.base == kPendingPpa;
  loc.uncommitted = committed_of(lpn) != nullptr;
  loc.diff = e.diff;
  if (e.in_dwb) {
    RecordView r;
    if (dwb_.find(lpn, &r)) {  // Invariant: in_dwb <=> the buffer holds a record
      loc.diff_in_buffer = true;
      loc.trim_pending = r.tombstone;
      loc.diff_bytes = uint32_t(r.size());
    }
  }
  return loc;
}

BlockInfo PdlStore::block_info(uint32_t block) const {
  BlockInfo info;
  if (block >= geo_.blocks) return info;  // outside the chip: nothing of the store's
  info.erase_count = nand_.erase_count(block);
  if (block < kSuperblockBlocks) {
    info.state = BlockInfo::kReserved;
    return info;
  }
  info.valid_pages = blocks_.valid(block);
  if (blocks_.is_free(block))
    info.state = BlockInfo::kFree;
  else if (blocks_.is_bad(block))
    info.state = BlockInfo::kBad;
  else if (int64_t(block) == gc_victim_)
    info.state = BlockInfo::kVictim;
  else if (blocks_.written(block) < geo_.pages_per_block)
    info.state = BlockInfo::kOpen;
  else
    info.state = BlockInfo::kFull;
  return info;
}

}  // namespace pdl
