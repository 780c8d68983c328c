// tables_compare.h — a store mounted from a checkpoint (or replayed after a power cut) compared
// with a scan of the same chip, through the PageStore interface only: `pdl fsck`'s checkpoint
// check and the checkpoint tests.
//
// Equal means: the same logical pages; per lpn mapped alike, the same base and differential
// page; per block the same bad mark and valid page count — except what a checkpoint keeps
// that a scan resolves differently without a read telling them apart: a trimmed lpn's
// tombstone the run time still points at after its last base copy was marked obsolete (PDL
// and OPU drop it when GC erases the page it is on; a scan drops a tombstone with no copy left
// to hide at once). Such an lpn is unmapped with no base page in both; its differential page
// counts in the checkpoint's block valid count, which may then exceed the scan's by at most
// the pages only such tombstones point at (docs/design.md §18).
//
// Then, where the interface shows all the same, the engine's own tables beyond it, field by
// field, where the engine has such a comparison: IPL and IPU (flash/ipl/ipl_compare.h: the seq
// counters, the commit log, garbage log sectors, the blocks to purge, ...); PDL, OPU and the
// FTLs show everything their scan rebuilds through the interface. A store in front of an
// engine (CheckpointedStore) is compared by its engine.
#pragma once

#include <cstdint>
#include <string>

#include "flash/store/page_store.h"

namespace pdl {

struct TablesDifference {
  uint64_t lpns = 0;    // lpns that differ
  uint64_t blocks = 0;  // blocks that differ
  bool engine = false;  // the engine's own tables differ (compare_engine_tables)
  std::string first;    // the first difference, in words ("" if none)
};

// Blocks 0 .. blocks-1 of a chip of `pages_per_block`. `strict`: also every field of each
// lpn's location (buffered, uncommitted, pending trim, record size) and each block's state and
// erase count. Reads table pages (uncounted).
TablesDifference compare_tables(const PageStore& checkpoint, const PageStore& scan,
                                uint32_t blocks, uint32_t pages_per_block, bool strict = false);

// The engine's own tables only: "" if equal, or if either store's engine has no such
// comparison (not IPL or IPU), else the first field that differs. `replayed`: `mounted` was
// replayed after a power cut (a fresh store rebuilt as a scan rebuilds it: every field is
// compared), else mounted from the checkpoint's tables alone (the run time's own state a scan
// cannot rebuild is left out: ipl_compare.h).
std::string compare_engine_tables(const PageStore& mounted, const PageStore& scan,
                                  bool replayed);

}  // namespace pdl
