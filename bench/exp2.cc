// exp2.cc — [PDL] Experiment 2 (Fig. 9): overall time per update operation as
// N_updates_till_write goes 1..8 (%ChangedByOneU_Op = 2), and Experiment 6 (Fig. 13): erases
// per update operation over the same runs.
#include <cmath>
#include <cstdio>

#include "bench/experiments.h"

namespace pdl::bench {
namespace {

constexpr uint32_t kMaxN = 8;
constexpr double kChanged = 2;

std::vector<Series> exp2_series(const Options& o) {
  return make_series(o.sweep_methods(), o.sweep_modes);
}

std::vector<std::string> n_columns() {
  std::vector<std::string> xs;
  for (uint32_t n = 1; n <= kMaxN; n++) xs.push_back("N=" + std::to_string(n));
  return xs;
}

// Records for exp `exp` and a grid of `f` over series x N.
void report_grid(const Options& o, RunPlan& plan, const std::string& exp, const std::string& title,
                 double (*f)(const Measurement&), const char* format, ExpOutput* out) {
  std::vector<std::string> rows;
  std::vector<std::vector<std::string>> cells;
  for (const Series& s : exp2_series(o)) {
    rows.push_back(s.label());
    cells.emplace_back();
    for (uint32_t n = 1; n <= kMaxN; n++) {
      const size_t i = plan.add(series_spec(s, o.sweep_chip_blocks(), n, kChanged));
      add_record(exp, plan, i, 0, out);
      cells.back().push_back(cell(plan, i, 0, f, format));
    }
  }
  print_grid(title, "method", n_columns(), rows, cells);
}

}  // namespace

void plan_exp2(const Options& o, RunPlan& plan) {
  for (const Series& s : exp2_series(o))
    for (uint32_t n = 1; n <= kMaxN; n++)
      plan.add(series_spec(s, o.sweep_chip_blocks(), n, kChanged));
}

void report_exp2(const Options& o, RunPlan& plan, ExpOutput* out) {
  std::printf(
      "\n== Exp. 2: overall time per update operation vs N_updates_till_write (PDL paper Fig. 9) "
      "==\n");
  print_setup_line(o, plan, o.sweep_chip_blocks());
  std::printf("%%ChangedByOneU_Op=%g, %%UpdateOps=100; simulated us per update operation.\n",
              kChanged);
  report_grid(o, plan, "2", "overall time per update op (us)",
              [](const Measurement& m) { return m.total_us; }, "%.1f", out);

  // Chip-size check: Exp. 1 (its own chip) and Exp. 2's N = 1 point are the same experiment.
  const bool same_point = o.exp[1] && o.changed == kChanged && o.n_updates == 1 &&
                          o.update_pct == 100 && o.exp1_chip_blocks() != o.sweep_chip_blocks();
  if (!same_point) return;
  std::printf("\nchip-size check: Exp. 1 on %u blocks vs Exp. 2 N=1 on %u blocks (total us per "
              "update op)\n",
              o.exp1_chip_blocks(), o.sweep_chip_blocks());
  for (const Series& s : exp2_series(o)) {
    RunSpec e1 = series_spec(s, o.exp1_chip_blocks(), 1, kChanged);
    bool in_exp1 = false;
    for (const MethodPreset& m : o.exp1_methods()) in_exp1 |= m.key == s.method.key;
    bool mode_in_exp1 = !s.method.has_obsolete_modes();
    for (ObsoleteMode md : o.exp1_modes) mode_in_exp1 |= md == s.mode;
    if (!in_exp1 || !mode_in_exp1) continue;
    const size_t a = plan.add(e1);
    const size_t b = plan.add(series_spec(s, o.sweep_chip_blocks(), 1, kChanged));
    if (!plan.result(a).status.is_ok() || !plan.result(b).status.is_ok()) continue;
    const double ta = plan.result(a).m[0].total_us, tb = plan.result(b).m[0].total_us;
    std::printf("  %-22s %9.1f %9.1f  %+.2f%%\n", s.label().c_str(), ta, tb,
                100.0 * (tb / ta - 1.0));
  }
  std::fflush(stdout);
}

void report_exp6(const Options& o, RunPlan& plan, ExpOutput* out) {
  std::printf(
      "\n== Exp. 6: erases per update operation vs N_updates_till_write (PDL paper Fig. 13) ==\n");
  print_setup_line(o, plan, o.sweep_chip_blocks());
  std::printf("%%ChangedByOneU_Op=%g; the runs of Exp. 2 (records repeated with exp=6).\n",
              kChanged);
  report_grid(o, plan, "6", "erases per update op",
              [](const Measurement& m) { return m.erases_per_op; }, "%.5f", out);
}

}  // namespace pdl::bench
