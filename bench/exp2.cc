// exp2.cc — [PDL] Experiment 2 (Fig. 9): overall time per update operation as
// N_updates_till_write goes 1..8 (%ChangedByOneU_Op = 2), and Experiment 6 (Fig. 13): erases
// per update operation over the same runs. With the default method list the sweep also runs
// the fidelity variants IPL(18KB)/128B, IPL(64KB)/128B (every placement) and
// PDL(2KB)/no-merge (placement fields), and one placement at a time is printed. Exp. "2-8k":
// Exp. 2 with 8 KB logical pages ([PDL] §5.1: 4 flash pages per logical page), the paper's
// six, obsolete=spare, placement fields; records carry exp "2-8k" and logical_page 8192.
#include <cmath>
#include <cstdio>

#include "bench/experiments.h"

namespace pdl::bench {
namespace {

constexpr uint32_t kMaxN = 8;
constexpr double kChanged = 2;
constexpr uint32_t kLogicalPage8k = 8192;

// The sweep's series with placement `p`, plus (default method list only) the fidelity
// variants in obsolete=spare.
std::vector<Series> exp2_series(const Options& o, Placement p) {
  std::vector<Series> v = sweep_series(o, p);
  if (!o.methods.empty()) return v;
  for (const char* key : {"ipl18k-s128", "ipl64k-s128", "pdl2k-nomerge"}) {
    const MethodPreset* m = find_method(key);
    if (m && (m->gc_merge || p == Placement::kFields))
      v.push_back({*m, ObsoleteMode::kSpare, p});
  }
  return v;
}

std::vector<Series> exp2_8k_series(const Options& o) {
  return make_series(o.sweep_methods(), {ObsoleteMode::kSpare}, Placement::kFields);
}

RunSpec spec_8k(const Series& s, const Options& o, uint32_t n) {
  RunSpec r = series_spec(s, o.sweep_chip_blocks(), n, kChanged);
  r.logical_page = kLogicalPage8k;
  return r;
}

std::vector<std::string> n_columns() {
  std::vector<std::string> xs;
  for (uint32_t n = 1; n <= kMaxN; n++) xs.push_back("N=" + std::to_string(n));
  return xs;
}

// Records for exp `exp` and a grid of `f` over series x N.
void report_grid(const Options& o, RunPlan& plan, const std::string& exp, const std::string& title,
                 double (*f)(const Measurement&), const char* format, ExpOutput* out) {
  for (Placement p : o.placements) {
    std::vector<std::string> rows;
    std::vector<std::vector<std::string>> cells;
    std::vector<MergePair> pairs;
    for (const Series& s : exp2_series(o, p)) {
      rows.push_back(s.label());
      cells.emplace_back();
      for (uint32_t n = 1; n <= kMaxN; n++) {
        const size_t i = plan.add(series_spec(s, o.sweep_chip_blocks(), n, kChanged));
        add_record(exp, plan, i, 0, out);
        cells.back().push_back(cell(plan, i, 0, f, format));
        if (is_pdl2k_nomerge(s.method) && s.mode == ObsoleteMode::kSpare) {
          const MethodPreset* with = find_method("pdl2k");
          Series w{*with, ObsoleteMode::kSpare, p};
          pairs.push_back({"N=" + std::to_string(n),
                           plan.add(series_spec(w, o.sweep_chip_blocks(), n, kChanged)), i});
        }
      }
    }
    print_grid(title + placement_note(o, p), "method", n_columns(), rows, cells);
    if (exp == "2") print_merge_table(plan, pairs);
  }
}

}  // namespace

void plan_exp2(const Options& o, RunPlan& plan) {
  for (Placement p : o.placements)
    for (const Series& s : exp2_series(o, p))
      for (uint32_t n = 1; n <= kMaxN; n++)
        plan.add(series_spec(s, o.sweep_chip_blocks(), n, kChanged));
}

void plan_exp2_8k(const Options& o, RunPlan& plan) {
  for (const Series& s : exp2_8k_series(o))
    for (uint32_t n = 1; n <= kMaxN; n++) plan.add(spec_8k(s, o, n));
}

void report_exp2_8k(const Options& o, RunPlan& plan, ExpOutput* out) {
  std::printf(
      "\n== Exp. 2 with 8 KB logical pages: overall time per update operation vs "
      "N_updates_till_write (PDL paper section 5.1, Fig. 9) ==\n");
  print_setup_line(o, plan, o.sweep_chip_blocks());
  std::printf(
      "A logical page is %u bytes = %u consecutive flash pages, read, changed (%%ChangedByOneU_Op"
      "=%g of the %u bytes, placement fields) and written back per operation; obsolete=spare; "
      "simulated us per update operation of a logical page.\n",
      kLogicalPage8k, kLogicalPage8k / chip(o.sweep_chip_blocks()).page_data, kChanged,
      kLogicalPage8k);
  std::vector<std::string> rows;
  std::vector<std::vector<std::string>> cells;
  for (const Series& s : exp2_8k_series(o)) {
    rows.push_back(s.label());
    cells.emplace_back();
    for (uint32_t n = 1; n <= kMaxN; n++) {
      const size_t i = plan.add(spec_8k(s, o, n));
      add_record("2-8k", plan, i, 0, out);
      cells.back().push_back(
          cell(plan, i, 0, [](const Measurement& m) { return m.total_us; }, "%.1f"));
    }
  }
  print_grid("overall time per update op (us), 8 KB logical pages", "method", n_columns(), rows,
             cells);
  std::fflush(stdout);
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
  for (const Series& s : exp2_series(o, o.placements.front())) {
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
