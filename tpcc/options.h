// options.h — pdl-tpcc's command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpcc/methods.h"

namespace pdl::tpcc {

struct Options {
  int warehouses = 1;
  double scale = 1.0;
  std::vector<MethodSpec> methods = default_methods();
  std::vector<std::string> journals{"delete", "wal", "memory"};
  std::vector<std::string> commits{"journal", "atomic"};  // --commit (methods.h)
  uint64_t transactions = 5000;  // measured, per method
  double duration_s = 0;         // > 0: instead of `transactions`
  double cache_pct = 1.0;
  uint64_t chip_bytes = 0;       // 0: auto
  uint32_t page = 2048;
  uint64_t warmup = 0;           // 0: until GC is active (gc_rounds)
  double gc_rounds = 1.0;
  uint64_t warmup_max = 0;       // 0: 20 x transactions (at least 20,000)
  bool unix_reference = true;
  uint64_t seed = 1;
  std::string json, csv, image_dir, work_dir, uri_extra;
  // --store: the one pdl member runs in this existing store (an image file or /dev/mtdN made
  // by `pdl format`), its database the store's file <key>.db beside whatever else it holds.
  std::string store;
  std::string unix_dir;   // --unix-dir: the unix reference's database is DIR/unix.db
  std::string phase_cmd;  // --phase-cmd: run as "CMD start" / "CMD end" around each measurement
  // URI parameters for the StableBuffer members only ("&sb_slots=256&sb_flush=proactive").
  std::string sb_extra;
  bool sweep = false;
  std::vector<double> sweep_cache{0.1, 0.2, 0.5, 1, 2, 5, 10};
  bool quick = false;
  bool progress = true;
  // --checkpoint-cost: after the warm-up, a checkpoint of each pdl member (as a clean close and
  // reopen leave it: summaries and periodic checkpoints run from there); after each
  // measurement, one as a periodic one writes and one as the close's, counting their I/O
  // (Measurement::checkpoint).
  bool checkpoint_cost = false;
};

// Parses argv; on --help prints usage and exits 0, on a bad argument prints why and exits 2.
Options parse_options(int argc, char** argv);

}  // namespace pdl::tpcc
