// figures.h — what a measured phase cost, split into database pages, journal/WAL and the
// Volume's directory, and latency percentiles.
//
// The split rule (on top of flash/store/cost.h's attribution): work done for a kind's read or
// write is that kind's; garbage collection (PDL/OPU GC, IPL merges) and any other shared work
// is apportioned to the kinds in proportion to the bytes each programmed in the phase — GC
// reclaims the flash space those programs consumed (the paper amortizes GC into the writes
// that cause it, [PDL] §5.1). The parts sum to the chip's counters.
#pragma once

#include <cstdint>
#include <vector>

#include "flash/image/image_counters.h"

namespace pdl::tpcc {

struct Part {
  double sim_us = 0, reads = 0, programs = 0, erases = 0, bytes_programmed = 0;
  double sqlite_bytes = 0;  // bytes SQLite wrote to files of this part
  // Flash bytes programmed per byte SQLite wrote (0 if SQLite wrote nothing).
  double write_amplification() const {
    return sqlite_bytes > 0 ? bytes_programmed / sqlite_bytes : 0;
  }
  Part& operator/=(double n);
};

struct CostSplit {
  Part database, journal, directory, total;
  double gc_sim_us = 0;  // the shared part before apportioning (for the report)
};

CostSplit split_costs(const ImageCounters& d);

// Nearest-rank percentile (p in (0, 100]) of `sorted` (ascending); 0 if empty.
double percentile(const std::vector<double>& sorted, double p);

}  // namespace pdl::tpcc
