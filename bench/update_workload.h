// update_workload.h — the paper's synthetic update workload ([PDL] §5.1) on a PageStore.
//
// An *update operation* ([PDL] §5.1): (1) read a logical page chosen uniformly at random,
// (2) change %ChangedByOneU_Op of its bytes, N_updates_till_write times in memory, (3) write
// it back. A read-only operation (the 100 - %UpdateOps share, Exp. 4) is step (1) alone.
//
// Change model: total bytes changed = round(pct/100 x logical page size), at least 1, every
// changed byte given a different value, placed one of two ways ([PDL] §5.1 only says the
// changed portion is randomly selected):
//   fields  contiguous runs of `change_run` bytes (default 8: one numeric field) at random
//           field-aligned offsets, distinct within one change (the last run is shortened to
//           hit the total exactly);
//   run     the whole change as one contiguous run at a uniformly random offset.
// Runs of successive changes are drawn independently, so they may overlap earlier ones, as
// the paper's N_updates_till_write discussion (Exp. 2) assumes.
//
// Logical page: by default one store page. With WorkloadConfig::logical_page = k x the store's
// page ([PDL] §5.1 also ran 8 KB logical pages on 2 KB flash pages), logical page i is the k
// consecutive store pages k*i .. k*i+k-1 (as pdl's VFS stores a SQLite page larger than a
// flash page): an operation reads the k pages; an update changes %ChangedByOneU_Op of the
// k x page bytes and writes the k pages back; the figures are per logical-page operation.
//
// Update-log hook: with WorkloadConfig::note_updates (the default), every run of every one of
// the N changes is reported to PageStore::note_update(lpn, offset, len) before the write, as
// the paper's in-DBMS IPL learnt its update logs from the DBMS (a run crossing a store page
// boundary is reported per store page). Stores other than IPL ignore
// it; with note_updates = false IPL must find the changes itself by comparing with the
// previous version (the DBMS-independent path).
//
// Procedure (UpdateBench):
//   (a) format a fresh RAM EmulatedNand;
//   (b) load: write every logical page once with random content, then sync;
//   (c) warm up: update operations until the chip's erases since the load reach
//       warm_rounds x data blocks ("garbage collection is invoked for each block at least ten
//       times on the average", [PDL] §5.1);
//   (d) measure (any number of times, each continuing on the same chip): snapshot
//       NandCounters, StoreStats and the GC cost bucket (nothing is reset), run the window's
//       operations, counting each PageStore::read and PageStore::write call's flash operations
//       and sim_us by delta. GC runs inside write, so its cost is amortized into write time, as
//       in the paper.
// All times are simulated flash microseconds ([PDL] Table 1), not host time. The flash
// operation counts of each step are kept, so the time under any other (T_read, T_write,
// T_erase) follows exactly (the methods' decisions never depend on timing): see StepCounts.
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

// Where the changed bytes of one change go (see the change model above).
enum class Placement { kFields, kRun };
const char* placement_name(Placement p);  // "fields", "run"

struct WorkloadConfig {
  double changed_pct = 2;     // %ChangedByOneU_Op
  uint32_t n_updates = 1;     // N_updates_till_write
  double update_pct = 100;    // %UpdateOps; the rest are read-only operations
  uint32_t change_run = 8;    // bytes per changed run (a field), Placement::kFields
  Placement placement = Placement::kFields;
  uint32_t logical_page = 0;  // bytes, a multiple of the store page; 0 = one store page
  bool note_updates = true;   // report changed runs to PageStore::note_update
  double warm_rounds = 10;    // erases per data block to reach before measuring
  double measure_rounds = 5;  // measure window, in erases per data block (if measure_ops = 0)
  uint64_t measure_ops = 0;   // operations measured; 0 = derived from measure_rounds
  uint64_t min_measure_ops = 20000;  // bounds of the derived window
  uint64_t max_measure_ops = 50000000;
  uint64_t seed = 1;
  // PDL/OPU garbage collection's victim order for every run (StoreParams::gc_victim): greedy,
  // or JFFS's oldest-first, the collection [PDL] footnote 15 cites.
  GcVictim gc_victim = GcVictim::kGreedy;
  bool progress = true;  // periodic progress lines on stderr (warnings are always printed)
  std::string label;     // prefix for progress lines
};

// One contiguous run of changed bytes.
struct ChangeRun {
  uint32_t offset = 0, len = 0;
};

// Applies one change (cfg.changed_pct of the page) to `page` in place.
class PageChanger {
 public:
  PageChanger(size_t page_size, double changed_pct, uint32_t change_run,
              Placement placement = Placement::kFields);
  // Changes `page`; if `runs` is not null, appends the runs changed (in the order drawn).
  void change(std::span<uint8_t> page, std::mt19937_64& rng, std::vector<ChangeRun>* runs = nullptr);
  size_t bytes_per_change() const { return total_; }

 private:
  size_t page_size_, run_, total_;
  Placement placement_;
  std::vector<uint32_t> slots_;  // a permutation of the field slots (partial Fisher-Yates)
};

// Fills `page` with random bytes.
void random_fill(std::span<uint8_t> page, std::mt19937_64& rng);

// Writes every logical page once with random content, then syncs (step (b)).
Status load_store(PageStore& store, std::mt19937_64& rng);

// Flash operations of one step (reading or writing) summed over operations.
struct StepCounts {
  uint64_t page_reads = 0, spare_reads = 0, programs = 0, erases = 0, sim_us = 0;
  uint64_t nvm_ns = 0;  // NVM beside the chip: its simulated time (PCRAM timing, not derived)
  void add(const NandCounters& d) {
    page_reads += d.page_reads;
    spare_reads += d.spare_reads;
    programs += d.programs;
    erases += d.erases;
    sim_us += d.sim_us;
    nvm_ns += d.nvm_ns;
  }
  // Simulated time of these operations under other timings (a spare-only read costs t_read).
  // The step's time at flash timings (t_read, t_program, t_erase), its NVM time as measured.
  double time_us(double t_read, double t_program, double t_erase) const {
    return double(page_reads + spare_reads) * t_read + double(programs) * t_program +
           double(erases) * t_erase + double(nvm_ns) / 1000.0;
  }
};

// Flash work of one operation, by step.
struct OpCost {
  NandCounters read, write;  // deltas over PageStore::read and PageStore::write
  bool update = false;
};

// One operation (update with probability update_pct/100, else read-only) on a random lpn.
// `nand` is the chip under `store`, whose counters give each operation's cost.
class OpRunner {
 public:
  OpRunner(PageStore& store, Nand& nand, const WorkloadConfig& cfg, std::mt19937_64& rng);
  Status run_one(OpCost* cost);
  void set_update_pct(double pct);

 private:
  PageStore& store_;
  Nand& nand_;
  const WorkloadConfig& cfg_;
  std::mt19937_64& rng_;
  uint32_t store_pages_;  // store pages per logical page (k)
  PageChanger changer_;
  std::vector<uint8_t> page_;  // one logical page
  std::vector<ChangeRun> runs_;
  std::uniform_int_distribution<uint32_t> pick_;
  std::bernoulli_distribution is_update_;
};

// Steps (a)-(c): what the chip looked like when measurement began.
struct SetupInfo {
  std::string method;  // method_label
  StoreParams params;  // resolved
  Geometry geo;
  uint32_t data_blocks = 0;
  uint32_t logical_pages = 0;  // the store's (flash-page sized)
  uint32_t logical_page = 0;   // bytes of the workload's logical page (k x page size)
  size_t bytes_per_change = 0;
  double load_wall_s = 0, warm_wall_s = 0;
  uint64_t warm_ops = 0;
  double gc_rounds_reached = 0;  // erases during warm-up / data blocks
  bool warm_capped = false;      // warm-up stopped at its operation cap before the target
  // Erases per operation over the last gc round of warm-up (0 if unknown). Far from the
  // measured erases per operation means the workload had not reached a steady state.
  double warm_last_erases_per_op = 0;
  uint64_t window_ops = 0;  // the measure window derived from measure_rounds (or measure_ops)
};

// Step (d): one measured window, per operation unless named otherwise.
struct Measurement {
  double update_pct = 100;
  uint64_t measure_ops = 0, measure_updates = 0;
  double read_us = 0, write_us = 0, total_us = 0;
  double gc_us = 0;        // simulated time of garbage collection (PageStore::costs().gc)
  double erases_per_op = 0, programs_per_op = 0, reads_per_op = 0, spare_reads_per_op = 0;
  double measure_rounds = 0;  // erases during measurement / data blocks
  StepCounts read_step, write_step;  // totals over the window
  FlashCost gc;                      // GC work over the window (totals)
  NandCounters nand;                 // deltas over the window
  StoreStats stats;                  // deltas over the window
  double avg_diff_bytes = 0;         // encoded differential record size (header included)
  bool unsteady = false;             // erases/op off the last warm-up round's by > 20 %
  double wall_s = 0;                 // host seconds of the window
};

// A store on a fresh chip, loaded and warmed up; then any number of measured windows.
class UpdateBench {
 public:
  // Steps (a)-(c). The warm-up runs cfg.n_updates / changed_pct updates at %UpdateOps = 100
  // if cfg.update_pct > 0 (read-only operations do not change the flash state).
  static Status create(const Geometry& g, const StoreParams& p, const WorkloadConfig& cfg,
                       std::unique_ptr<UpdateBench>* out);
  // Step (d): `ops` operations (0 = setup().window_ops) at %UpdateOps = update_pct.
  Status measure(double update_pct, uint64_t ops, Measurement* out);
  const SetupInfo& setup() const { return setup_; }

 private:
  UpdateBench() = default;
  WorkloadConfig cfg_;
  SetupInfo setup_;
  std::unique_ptr<EmulatedNand> nand_;
  std::unique_ptr<PageStore> store_;
  std::mt19937_64 rng_;
  std::unique_ptr<OpRunner> runner_;
};

struct WorkloadResult {
  SetupInfo setup;
  Measurement m;
};

// Steps (a)-(d) once, at cfg.update_pct, on a fresh RAM chip of geometry `g`.
Status run_update_workload(const Geometry& g, const StoreParams& p, const WorkloadConfig& cfg,
                           WorkloadResult* out);

// StoreStats a - b, field by field.
StoreStats stats_delta(const StoreStats& a, const StoreStats& b);

}  // namespace pdl::bench
