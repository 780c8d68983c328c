// run_plan.h — the update-workload runs the experiments need, deduplicated and run in parallel.
//
// Each experiment asks the plan for the runs it needs (RunSpec: method, obsolete mode, chip,
// timing, N_updates_till_write, %ChangedByOneU_Op and the %UpdateOps points to measure); a
// run wanted by several experiments (e.g. N = 1, 2 % for Exp. 2, 3, 5 and 6) is run once.
// execute() runs them on `jobs` threads. Every run owns its chip, store and RNG (seeded with
// the same --seed), so the results do not depend on the number of jobs or on the order.
//
// A run is: format, load, warm up once at %UpdateOps = 100, then one measured window per
// %UpdateOps point, in order, on the same chip (Exp. 4: read-only operations do not change the
// flash state, so the steady state reached by the warm-up holds for every point).
//
// Before running, each method is probed by formatting a small chip; a method whose store
// cannot be formatted (e.g. Errc::kUnsupported while its engine is not built) is reported once
// and its runs are skipped with that error.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench/update_workload.h"
#include "flash/common/status.h"
#include "flash/image/methods.h"

namespace pdl::bench {

// IPU's measure window has a lower floor (at least kIpuMinOps operations instead of
// WorkloadConfig::min_measure_ops): it rewrites one block per update, ~70 ms of simulated time
// that barely varies, so a few thousand operations fix its mean.
inline constexpr uint64_t kIpuMinOps = 2000;

struct RunSpec {
  MethodPreset method;
  ObsoleteMode mode = ObsoleteMode::kSpare;  // kSpare for methods without obsolete modes
  uint32_t blocks = 0;
  uint32_t t_read = 0, t_program = 0, t_erase = 0;  // 0 = Table 1
  uint32_t n_updates = 1;
  double changed_pct = 2;
  Placement placement = Placement::kFields;  // where a change's bytes go
  uint32_t logical_page = 0;  // bytes; 0 = the plan's (WorkloadConfig::logical_page)
  std::vector<double> update_pcts{100};
  // Window of a %UpdateOps point p < 100: the 100 % window x 100 / max(p, min_scaled_pct), so
  // low-update points still see a few GC rounds (0 = every point gets the 100 % window).
  double min_scaled_pct = 0;

  std::string key() const;       // identity for deduplication
  std::string describe() const;  // "PDL(256B) spare N=1 changed=2% 512 blocks"
};

// The chip of a run of `m`: a Table 1 chip of `blocks` blocks (timings replaced where
// non-zero) whose NOP (partial programs per page) is max(4, page data / log sector) for an
// flash-only IPL with a log sector set, so that a page can take every one of its log sectors;
// with the NVM an NVM entry uses (MethodPreset::nvm_bytes(blocks)), none for the others.
Geometry run_chip(const MethodPreset& m, uint32_t blocks, uint32_t t_read = 0,
                  uint32_t t_program = 0, uint32_t t_erase = 0);
// Bytes of one IPL log sector of `m` (the engine's 512 when not set), 0 for other methods.
uint32_t log_sector_bytes(const MethodPreset& m);

struct RunResult {
  Status status;
  SetupInfo setup;
  std::vector<Measurement> m;  // one per RunSpec::update_pcts, in order
  double wall_s = 0;           // host seconds of the whole run
};

class RunPlan {
 public:
  explicit RunPlan(WorkloadConfig base, double data_pct) : base_(std::move(base)), data_pct_(data_pct) {}
  // Adds a run (or finds the identical one); returns its index.
  size_t add(const RunSpec& spec);
  const RunSpec& spec(size_t i) const { return specs_[i]; }
  const RunResult& result(size_t i) const { return results_[i]; }
  size_t size() const { return specs_.size(); }
  const WorkloadConfig& base() const { return base_; }
  // Logical pages every method gets on a chip of `blocks` blocks.
  uint32_t logical_pages(uint32_t blocks) const;
  // Bytes of the workload's logical page in run `s` (a flash page unless set).
  uint32_t logical_page(const RunSpec& s) const;
  // Probes the methods, then runs everything on `jobs` threads. Progress on stderr.
  void execute(unsigned jobs);
  // Methods whose probe failed, with the error.
  const std::map<std::string, Status>& unavailable() const { return unavailable_; }

 private:
  RunResult run_one(const RunSpec& s) const;
  WorkloadConfig base_;
  double data_pct_;
  std::vector<RunSpec> specs_;
  std::vector<RunResult> results_;
  std::map<std::string, size_t> index_;
  std::map<std::string, Status> unavailable_;
};

}  // namespace pdl::bench
