// update_workload.h — the paper's synthetic update workload (seed 000 §5.1) on a PageStore.
//
// An *update operation* (seed 000 §5.1): (1) read a logical page chosen uniformly at random,
// (2) change %ChangedByOneU_Op of its bytes, N_updates_till_write times in memory, (3) write
// it back. A read-only operation (the 100 - %UpdateOps share, Exp. 4) is step (1) alone.
//
// Change model: a change is a set of contiguous runs of `change_run` bytes (default 8: one
// numeric field) at random field-aligned offsets, distinct within one change, every changed
// byte given a different value; total bytes changed = round(pct/100 x page size), at least 1
// (the last run is shortened to hit the total exactly). Runs of successive changes are drawn
// independently, so they may overlap earlier ones, as the paper's N_updates_till_write
// discussion (Exp. 2) assumes.
//
// Procedure (run_update_workload):
//   (a) format a fresh RAM EmulatedNand;
//   (b) load: write every logical page once with random content, then sync;
//   (c) warm up: update operations until the chip's erases since the load reach
//       warm_rounds x data blocks ("garbage collection is invoked for each block at least ten
//       times on the average", seed 000 §5.1);
//   (d) measure: snapshot NandCounters and StoreStats (nothing is reset), run measure_ops
//       operations, timing each PageStore::read and PageStore::write call by its sim_us
//       delta. GC runs inside write, so its cost is amortized into write time, as in the paper.
// All times are simulated flash microseconds (seed 000 Table 1), not host time.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "flash/common/status.h"
#include "flash/device/emulated_nand.h"
#include "flash/device/geometry.h"
#include "flash/store/page_store.h"
#include "flash/store/store_params.h"

namespace pdl::bench {

struct WorkloadConfig {
  double changed_pct = 2;     // %ChangedByOneU_Op
  uint32_t n_updates = 1;     // N_updates_till_write
  double update_pct = 100;    // %UpdateOps; the rest are read-only operations
  uint32_t change_run = 8;    // bytes per changed run (a field)
  double warm_rounds = 10;    // erases per data block to reach before measuring
  double measure_rounds = 5;  // measure window, in erases per data block (if measure_ops = 0)
  uint64_t measure_ops = 0;   // operations measured; 0 = derived from measure_rounds
  uint64_t min_measure_ops = 20000;  // bounds of the derived window
  uint64_t max_measure_ops = 50000000;
  uint64_t seed = 1;
  bool progress = true;  // progress lines on stderr
  std::string label;     // prefix for progress lines
};

// Applies one change (cfg.changed_pct of the page) to `page` in place.
class PageChanger {
 public:
  PageChanger(size_t page_size, double changed_pct, uint32_t change_run);
  void change(std::span<uint8_t> page, std::mt19937_64& rng);
  size_t bytes_per_change() const { return total_; }

 private:
  size_t page_size_, run_, total_;
  std::vector<uint32_t> slots_;  // a permutation of the field slots (partial Fisher-Yates)
};

// Fills `page` with random bytes.
void random_fill(std::span<uint8_t> page, std::mt19937_64& rng);

// Writes every logical page once with random content, then syncs (step (b)).
Status load_store(PageStore& store, std::mt19937_64& rng);

// Simulated time spent in one operation.
struct OpCost {
  uint64_t read_us = 0, write_us = 0;
  bool update = false;
};

// One operation (update with probability update_pct/100, else read-only) on a random lpn.
class OpRunner {
 public:
  OpRunner(PageStore& store, const WorkloadConfig& cfg, std::mt19937_64& rng);
  Status run_one(OpCost* cost);

 private:
  PageStore& store_;
  const WorkloadConfig& cfg_;
  std::mt19937_64& rng_;
  PageChanger changer_;
  std::vector<uint8_t> page_;
  std::uniform_int_distribution<uint32_t> pick_;
  std::bernoulli_distribution is_update_;
};

struct WorkloadResult {
  std::string method;  // "PDL(256B)", "PDL(2KB)", "OPU"
  StoreParams params;  // resolved
  Geometry geo;
  uint32_t data_blocks = 0;
  uint32_t logical_pages = 0;
  size_t bytes_per_change = 0;

  // load and warm-up
  double load_wall_s = 0, warm_wall_s = 0;
  uint64_t warm_ops = 0;
  double gc_rounds_reached = 0;  // erases during warm-up / data blocks
  bool warm_capped = false;      // warm-up stopped at its operation cap before the target
  // Erases per operation over the last gc round of warm-up (0 if unknown). Far from
  // erases_per_op means the workload had not reached a steady state.
  double warm_last_erases_per_op = 0;

  // measured phase, per operation (all operations, updates and read-only alike)
  uint64_t measure_ops = 0, measure_updates = 0;
  double read_us = 0, write_us = 0, total_us = 0;
  double erases_per_op = 0, programs_per_op = 0, reads_per_op = 0, spare_reads_per_op = 0;
  double measure_rounds = 0;  // erases during measurement / data blocks
  NandCounters nand;          // deltas over the measured phase
  StoreStats stats;           // deltas over the measured phase
  double avg_diff_bytes = 0;  // encoded differential record size (header included)
  double wall_s = 0;          // host seconds of the measured phase
};

// Display name of a method configuration: "PDL(256B)", "PDL(2KB)", "OPU".
std::string method_label(const StoreParams& p, uint32_t page_size);

// Steps (a)-(d) on a fresh RAM chip of geometry `g` with store parameters `p`.
Status run_update_workload(const Geometry& g, const StoreParams& p, const WorkloadConfig& cfg,
                           WorkloadResult* out);

// StoreStats a - b, field by field.
StoreStats stats_delta(const StoreStats& a, const StoreStats& b);

}  // namespace pdl::bench
