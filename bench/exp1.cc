// exp1.cc — [PDL] Experiment 1 (Fig. 8): read, write and overall simulated flash time per
// update operation, each method on a fresh chip (%ChangedByOneU_Op = 2, N_updates_till_write
// = 1 unless --changed / --n-updates / --update-pct say otherwise), both obsolete modes for
// PDL and OPU by default, and IPL both with the update-log hook and without it (/diff). With
// several placements (--placement both, --exp all) the tables are printed once per placement.
#include <cinttypes>
#include <cstdio>

#include "bench/experiments.h"

namespace pdl::bench {
namespace {

std::vector<RunSpec> exp1_specs(const Options& o, Placement p) {
  std::vector<RunSpec> v;
  for (const Series& s : make_series(o.exp1_methods(), o.exp1_modes, p)) {
    RunSpec r = series_spec(s, o.exp1_chip_blocks(), o.n_updates, o.changed);
    r.update_pcts = {o.update_pct};
    v.push_back(r);
  }
  return v;
}

}  // namespace

void plan_exp1(const Options& o, RunPlan& plan) {
  for (Placement p : o.placements)
    for (const RunSpec& s : exp1_specs(o, p)) plan.add(s);
}

namespace {
void report_exp1_placement(const Options& o, RunPlan& plan, Placement p, ExpOutput* out);
}  // namespace

void report_exp1(const Options& o, RunPlan& plan, ExpOutput* out) {
  const uint32_t blocks = o.exp1_chip_blocks();
  const Geometry g = chip(blocks);
  std::printf(
      "\n== Exp. 1: read, write and overall time per update operation (PDL paper Fig. 8) ==\n");
  print_setup_line(o, plan, blocks);
  std::printf(
      "%%ChangedByOneU_Op=%g (%zu B), N_updates_till_write=%u, %%UpdateOps=%g. Times are "
      "simulated flash us per operation (Table 1: read %u, program %u, erase %u us); GC is "
      "amortized into write (gc%% = its share of write).\n",
      o.changed, PageChanger(g.page_data, o.changed, o.change_run).bytes_per_change(),
      o.n_updates, o.update_pct, g.read_us, g.program_us, g.erase_us);
  for (Placement p : o.placements) report_exp1_placement(o, plan, p, out);
  std::fflush(stdout);
}

namespace {

void report_exp1_placement(const Options& o, RunPlan& plan, Placement p, ExpOutput* out) {
  const std::string note = placement_note(o, p);
  if (!note.empty()) std::printf("\n-- Exp. 1%s --\n", note.c_str());
  std::vector<size_t> idx;
  for (const RunSpec& s : exp1_specs(o, p)) {
    const size_t i = plan.add(s);
    idx.push_back(i);
    add_record("1", plan, i, 0, out);
  }
  std::printf("\n%-15s %-7s %9s %9s %6s %9s %10s %11s %9s %9s %9s %7s\n", "method", "obsol.",
              "read_us", "write_us", "gc%", "total_us", "erases/op", "programs/op", "reads/op",
              "gc_rounds", "ops", "wall_s");
  for (size_t i : idx) {
    const RunSpec& s = plan.spec(i);
    const RunResult& r = plan.result(i);
    const std::string obs = obsolete_label(s.method.method, s.mode);
    if (!r.status.is_ok()) {
      std::printf("%-15s %-7s FAILED: %s\n", s.method.label.c_str(), obs.c_str(),
                  r.status.to_string().c_str());
      continue;
    }
    const Measurement& m = r.m[0];
    std::printf("%-15s %-7s %9.1f %9.1f %6.1f %9.1f %10.4f %11.3f %9.3f %9.2f %9" PRIu64
                " %7.2f\n",
                s.method.label.c_str(), obs.c_str(), m.read_us, m.write_us,
                m.write_us > 0 ? 100.0 * m.gc_us / m.write_us : 0.0, m.total_us, m.erases_per_op,
                m.programs_per_op, m.reads_per_op, r.setup.gc_rounds_reached, m.measure_ops,
                m.wall_s);
  }
  std::printf("\n%-15s %-7s %7s %7s %7s %8s %8s %8s %8s %8s %8s %8s\n", "method", "obsol.",
              "case1%", "case2%", "case3%", "diff_B", "base/op", "dpage/op", "obs/op", "logrec/op",
              "logsec/op", "merge/op");
  for (size_t i : idx) {
    const RunSpec& s = plan.spec(i);
    const RunResult& r = plan.result(i);
    if (!r.status.is_ok()) continue;
    const Measurement& m = r.m[0];
    const StoreStats& st = m.stats;
    const double n = double(m.measure_ops);
    const double w = st.writes ? double(st.writes) : 1.0;
    std::printf("%-15s %-7s %7.1f %7.1f %7.1f %8.1f %8.3f %8.3f %8.3f %8.3f %8.3f %8.4f\n",
                s.method.label.c_str(), obsolete_label(s.method.method, s.mode).c_str(),
                100.0 * double(st.case1) / w, 100.0 * double(st.case2) / w,
                100.0 * double(st.case3) / w, m.avg_diff_bytes,
                double(st.base_pages_written) / n, double(st.diff_pages_written) / n,
                double(st.obsolete_marks) / n, double(st.log_records) / n,
                double(st.log_sectors) / n, double(st.merges) / n);
  }
  std::printf(
      "(caseN%% = share of writes taking Case N of Fig. 4; diff_B = mean differential record "
      "incl. 16-B header; logrec/logsec = IPL log records / log sectors programmed; merge = "
      "IPL merges or IPU block rewrites; gc_rounds = erases per data block reached by warm-up)\n");

  // The cost of DBMS independence for IPL: the hinted run against its /diff twin.
  for (size_t a : idx)
    for (size_t b : idx) {
      const RunSpec& sa = plan.spec(a);
      const RunSpec& sb = plan.spec(b);
      if (sa.method.method != Method::kIpl || !sa.method.note_updates ||
          sb.method.note_updates || sb.method.log_region != sa.method.log_region ||
          sb.method.log_sector != sa.method.log_sector)
        continue;
      if (!plan.result(a).status.is_ok() || !plan.result(b).status.is_ok()) continue;
      const Measurement& ma = plan.result(a).m[0];
      const Measurement& mb = plan.result(b).m[0];
      std::printf("%s without the update-log hook (%s): %.1f -> %.1f us per update op (%+.1f%%), "
                  "%.3f -> %.3f log records per op\n",
                  sa.method.label.c_str(), sb.method.label.c_str(), ma.total_us, mb.total_us,
                  100.0 * (mb.total_us / ma.total_us - 1.0),
                  double(ma.stats.log_records) / double(ma.measure_ops),
                  double(mb.stats.log_records) / double(mb.measure_ops));
    }

  // PDL(2KB) against its no-merge twin, per obsolete mode.
  std::vector<MergePair> pairs;
  for (size_t a : idx)
    for (size_t b : idx)
      if (is_pdl2k(plan.spec(a).method) && is_pdl2k_nomerge(plan.spec(b).method) &&
          plan.spec(a).mode == plan.spec(b).mode)
        pairs.push_back({obsolete_name(plan.spec(a).mode), a, b});
  print_merge_table(plan, pairs);
}

}  // namespace

}  // namespace pdl::bench
