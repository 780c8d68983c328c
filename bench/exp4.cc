// exp4.cc — [PDL] Experiment 4 (Fig. 11): overall time per operation for mixes of read-only
// and update operations as %UpdateOps goes 0..100 (%ChangedByOneU_Op = 2, N = 1 and 5).
//
// Read-only operations do not change the flash state, so one chip per (method, N) is warmed up
// once (at 100 % updates) and every %UpdateOps point is then measured on it in turn. Window of
// a point p: the 100 % window (measure rounds of GC) x 100 / max(p, 20), so every point with
// p >= 20 sees the same number of updates and GC rounds, and lower points 5 x the operations.
// Beside the measurement, each record carries derived_total_us = R + p/100 x W, with R and W
// the read and write time per operation of the run's own 100 % point (a consistency check).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bench/experiments.h"

namespace pdl::bench {
namespace {

constexpr uint32_t kN[] = {1, 5};
constexpr double kChanged = 2;
constexpr double kMinScaledPct = 20;

RunSpec exp4_spec(const Series& s, const Options& o, uint32_t n) {
  RunSpec r = series_spec(s, o.sweep_chip_blocks(), n, kChanged);
  r.update_pcts.clear();
  for (int p = 0; p <= 100; p += 10) r.update_pcts.push_back(p);
  r.min_scaled_pct = kMinScaledPct;
  return r;
}

}  // namespace

void plan_exp4(const Options& o, RunPlan& plan) {
  for (Placement p : o.placements)
    for (const Series& s : sweep_series(o, p))
      for (uint32_t n : kN) plan.add(exp4_spec(s, o, n));
}

void report_exp4(const Options& o, RunPlan& plan, ExpOutput* out) {
  std::printf(
      "\n== Exp. 4: overall time per operation vs %%UpdateOps (PDL paper Fig. 11) ==\n");
  print_setup_line(o, plan, o.sweep_chip_blocks());
  std::printf(
      "%%ChangedByOneU_Op=%g; one warm-up per (method, N), then every %%UpdateOps point on the "
      "same chip (window x 100/max(p, %g)); simulated us per operation (read-only and update "
      "alike). In brackets: max |measured - derived| over the points, derived = R + p/100 x W "
      "from the run's 100%% point.\n",
      kChanged, kMinScaledPct);
  std::vector<std::string> xs;
  for (int p = 0; p <= 100; p += 10) xs.push_back(std::to_string(p) + "%");
  xs.push_back("check");
  for (Placement pl : o.placements)
  for (uint32_t n : kN) {
    std::vector<std::string> rows;
    std::vector<std::vector<std::string>> cells;
    for (const Series& s : sweep_series(o, pl)) {
      const RunSpec spec = exp4_spec(s, o, n);
      const size_t i = plan.add(spec);
      rows.push_back(s.label());
      cells.emplace_back();
      const RunResult& r = plan.result(i);
      if (!r.status.is_ok()) {
        add_record("4", plan, i, 0, out);
        cells.back().assign(spec.update_pcts.size(), "fail");
        continue;
      }
      const Measurement& full = r.m.back();  // the 100 % point
      double worst = 0;
      for (size_t j = 0; j < spec.update_pcts.size(); j++) {
        Record rec = measured_record("4", plan, i, j);
        const double p = r.m[j].update_pct;
        const double derived = full.read_us + p / 100.0 * full.write_us;
        rec.n("derived_total_us", derived);
        worst = std::max(worst, std::fabs(r.m[j].total_us - derived));
        out->records.push_back(std::move(rec));
        cells.back().push_back(fmt_num("%.1f", r.m[j].total_us));
      }
      cells.back().push_back(fmt_num("(%.1f)", worst));
    }
    print_grid("overall time per operation (us), N_updates_till_write = " + std::to_string(n) +
                   placement_note(o, pl),
               "method \\ %UpdateOps", xs, rows, cells);
  }
}

}  // namespace pdl::bench
