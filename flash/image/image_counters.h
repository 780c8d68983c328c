// image_counters.h — a snapshot of every counter of an open image (flash operations, their
// attribution to file kinds, store and Volume statistics), and the difference of two snapshots.
//
// Benchmarks measure a phase as snapshot(after) - snapshot(before) instead of resetting the
// counters, so a phase never disturbs what the image reports about its whole life (PRAGMA
// pdl_stats) and several phases can be measured from one warm-up. Taking a snapshot costs no
// flash operation.
#pragma once

#include "flash/store/cost.h"
#include "flash/image/image.h"

namespace pdl {

struct ImageCounters {
  NandCounters nand;
  CostBreakdown costs;
  StoreStats store;
  VolumeStats volume;
  uint32_t free_blocks = 0;  // a snapshot, not a counter: kept from the later operand of `-`
};

// Locks the Volume while reading the store.
ImageCounters snapshot(Image& img);

// What happened between `before` and `after` (both of the same image).
ImageCounters operator-(const ImageCounters& after, const ImageCounters& before);

}  // namespace pdl
