// exp3.cc — [PDL] Experiment 3 (Fig. 10): overall time per update operation as
// %ChangedByOneU_Op goes 0.1..100, for N_updates_till_write = 1 and 5.
#include <cstdio>

#include "bench/experiments.h"

namespace pdl::bench {
namespace {

constexpr double kChanged[] = {0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100};
constexpr uint32_t kN[] = {1, 5};

}  // namespace

void plan_exp3(const Options& o, RunPlan& plan) {
  for (Placement p : o.placements)
    for (const Series& s : sweep_series(o, p))
      for (uint32_t n : kN)
        for (double c : kChanged) plan.add(series_spec(s, o.sweep_chip_blocks(), n, c));
}

void report_exp3(const Options& o, RunPlan& plan, ExpOutput* out) {
  std::printf(
      "\n== Exp. 3: overall time per update operation vs %%ChangedByOneU_Op (PDL paper Fig. 10) "
      "==\n");
  print_setup_line(o, plan, o.sweep_chip_blocks());
  std::printf("%%UpdateOps=100; simulated us per update operation.\n");
  std::vector<std::string> xs;
  for (double c : kChanged) xs.push_back(fmt_num("%g%%", c));
  for (Placement p : o.placements)
  for (uint32_t n : kN) {
    std::vector<std::string> rows;
    std::vector<std::vector<std::string>> cells;
    for (const Series& s : sweep_series(o, p)) {
      rows.push_back(s.label());
      cells.emplace_back();
      for (double c : kChanged) {
        const size_t i = plan.add(series_spec(s, o.sweep_chip_blocks(), n, c));
        add_record("3", plan, i, 0, out);
        cells.back().push_back(cell(plan, i, 0, [](const Measurement& m) { return m.total_us; }));
      }
    }
    print_grid("overall time per update op (us), N_updates_till_write = " + std::to_string(n) +
                   placement_note(o, p),
               "method \\ %Changed", xs, rows, cells);
  }
}

}  // namespace pdl::bench
