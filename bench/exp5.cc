// exp5.cc — [PDL] Experiment 5 (Fig. 12): overall time per update operation as the flash
// timing varies: T_read 10..1500 us x T_write (program) 500 and 1000 us, T_erase = 1500 us
// (%ChangedByOneU_Op = 2, N_updates_till_write = 1).
//
// The methods' decisions never depend on timing, so a run at Table 1 timing performs exactly
// the same flash operations as one at any other timing. Every point is therefore *derived*
// (source = "derived") from the per-step operation counts of Exp. 2's N = 1 run (reads of the
// reading step, reads/programs/erases of the writing step, GC included). A few points are also
// *measured* (source = "measured") on chips whose Geometry::read_us / program_us are changed;
// their records carry derived_total_us, and the report prints both (they must be equal).
// The measured points: the first placement asked for only (fields unless --placement run);
// the derived grids for every placement (free: Exp. 2's N=1 runs of that placement).
#include <cmath>
#include <cstdio>

#include "bench/experiments.h"

namespace pdl::bench {
namespace {

constexpr uint32_t kTRead[] = {10, 25, 50, 110, 250, 500, 750, 1000, 1250, 1500};
constexpr uint32_t kTWrite[] = {500, 1000};
constexpr uint32_t kTErase = 1500;
struct Point {
  uint32_t t_read, t_write;
};
constexpr Point kMeasured[] = {{10, 500}, {500, 1000}, {1500, 500}};
constexpr double kChanged = 2;

RunSpec measured_spec(const Series& s, const Options& o, Point p) {
  RunSpec r = series_spec(s, o.sweep_chip_blocks(), 1, kChanged);
  r.t_read = p.t_read;
  r.t_program = p.t_write;
  r.t_erase = kTErase;
  return r;
}

}  // namespace

void plan_exp5(const Options& o, RunPlan& plan) {
  for (const Series& s : sweep_series(o, o.placements.front())) {
    plan.add(series_spec(s, o.sweep_chip_blocks(), 1, kChanged));
    for (Point p : kMeasured) plan.add(measured_spec(s, o, p));
  }
  for (size_t k = 1; k < o.placements.size(); k++)
    for (const Series& s : sweep_series(o, o.placements[k]))
      plan.add(series_spec(s, o.sweep_chip_blocks(), 1, kChanged));
}

void report_exp5(const Options& o, RunPlan& plan, ExpOutput* out) {
  std::printf(
      "\n== Exp. 5: overall time per update operation vs T_read and T_write (PDL paper Fig. 12) "
      "==\n");
  print_setup_line(o, plan, o.sweep_chip_blocks());
  std::printf(
      "%%ChangedByOneU_Op=%g, N_updates_till_write=1, T_erase=%u us. Cells are DERIVED from the "
      "operation counts of Exp. 2's N=1 run (Table 1 timing); '*' marks points also MEASURED on "
      "a chip with that timing (checked below).\n",
      kChanged, kTErase);
  std::vector<std::string> xs;
  for (uint32_t t : kTRead) xs.push_back("Tr=" + std::to_string(t));
  for (Placement pl : o.placements)
  for (uint32_t tw : kTWrite) {
    const std::vector<Series> series = sweep_series(o, pl);
    std::vector<std::string> rows;
    std::vector<std::vector<std::string>> cells;
    for (const Series& s : series) {
      const size_t base = plan.add(series_spec(s, o.sweep_chip_blocks(), 1, kChanged));
      rows.push_back(s.label());
      cells.emplace_back();
      for (uint32_t tr : kTRead) {
        if (!plan.result(base).status.is_ok()) {
          cells.back().push_back("fail");
          continue;
        }
        std::string c = fmt_num("%.1f", derived_total(plan.result(base).m[0], tr, tw, kTErase));
        for (Point p : kMeasured)
          if (p.t_read == tr && p.t_write == tw && pl == o.placements.front()) c += "*";
        out->records.push_back(derived_record("5", plan, base, 0, tr, tw, kTErase));
        cells.back().push_back(c);
      }
      if (tw == kTWrite[0] && !plan.result(base).status.is_ok()) add_record("5", plan, base, 0, out);
    }
    print_grid("overall time per update op (us), T_write = " + std::to_string(tw) + " us" +
                   placement_note(o, pl),
               "method \\ T_read", xs, rows, cells);
  }
  const std::vector<Series> series = sweep_series(o, o.placements.front());

  std::printf("\nmeasured vs derived (us per update op):\n");
  std::printf("  %-22s %13s %12s %12s %10s\n", "method", "T_read/T_write", "measured",
              "derived", "diff");
  for (const Series& s : series) {
    const size_t base = plan.add(series_spec(s, o.sweep_chip_blocks(), 1, kChanged));
    for (Point p : kMeasured) {
      const size_t i = plan.add(measured_spec(s, o, p));
      if (!plan.result(i).status.is_ok() || !plan.result(base).status.is_ok()) {
        add_record("5", plan, i, 0, out);
        continue;
      }
      Record rec = measured_record("5", plan, i, 0);
      const double measured = plan.result(i).m[0].total_us;
      const double derived = derived_total(plan.result(base).m[0], p.t_read, p.t_write, kTErase);
      rec.n("derived_total_us", derived);
      rec.n("derived_minus_measured_us", derived - measured);
      out->records.push_back(std::move(rec));
      std::printf("  %-22s %6u/%-6u %12.3f %12.3f %10.3g\n", s.label().c_str(), p.t_read,
                  p.t_write, measured, derived, derived - measured);
    }
  }
  std::fflush(stdout);
}

}  // namespace pdl::bench
