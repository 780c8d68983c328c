// block_table_sizes.h — what the block manager's checkpointed tables (section PBLK,
// docs/format.md §13.1) take on a chip of a given size, as formatted and after a page-mapped
// workload, without a chip: pdl-blkbench's measurement (bench/block_table_bench.cc), here
// because only the image layer may name an engine (tools/check_layers.py).
//
// The workload: every logical page of half the data area written once in order, then `rounds`
// times as many uniformly random updates, with greedy garbage collection moving valid pages to
// the GC head, as PdlStore does, through a BlockManager over a stand-in chip whose only
// operation is erase. Its page maps take 4 bytes per logical page and per physical page (~200 MB
// at 64 GiB). Each saved section is loaded into a fresh manager and saved again; different
// bytes are an error (kCorrupt), as is a workload the manager cannot serve.
#pragma once

#include <cstdint>

#include "flash/common/status.h"
#include "flash/device/geometry.h"

namespace pdl {

struct BlockTableSize {
  uint64_t bytes = 0;      // PBLK now (version 2)
  uint64_t v1_bytes = 0;   // the same tables in version 1's fixed-width layout
  uint32_t free = 0, closed = 0;
};

// The store's blocks start at block 2 (after the superblock's), with a GC reserve of 4.
Status block_table_sizes(const Geometry& g, uint64_t rounds, uint64_t seed,
                         BlockTableSize* formatted, BlockTableSize* worked);

}  // namespace pdl
