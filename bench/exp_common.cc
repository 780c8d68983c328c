// exp_common.cc — series, result records and text tables shared by the experiments.
#include "bench/exp_common.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace pdl::bench {

std::string Series::label() const {
  if (!method.has_obsolete_modes()) return method.label;
  return method.label + " " + obsolete_name(mode);
}

std::vector<Series> make_series(const std::vector<MethodPreset>& methods,
                                const std::vector<ObsoleteMode>& modes, Placement p) {
  std::vector<Series> v;
  // Mode-major, so a table lists every spare series before the memory ones (the paper's mode
  // first); methods without modes appear once, with the first mode.
  for (size_t k = 0; k < modes.size(); k++)
    for (const MethodPreset& m : methods) {
      if (!m.has_obsolete_modes() && k > 0) continue;
      v.push_back({m, m.has_obsolete_modes() ? modes[k] : ObsoleteMode::kSpare, p});
    }
  return v;
}

std::vector<Series> sweep_series(const Options& o, Placement p) {
  return make_series(o.sweep_methods(), o.sweep_modes_for(p), p);
}

std::string placement_note(const Options& o, Placement p) {
  if (o.placements.size() == 1 && o.placements[0] == Placement::kFields) return "";
  if (p == Placement::kRun)
    return " [placement run: each change one contiguous run at a random offset]";
  return " [placement fields: each change in " + std::to_string(o.change_run) +
         "-byte runs at random places]";
}

RunSpec series_spec(const Series& s, uint32_t blocks, uint32_t n_updates, double changed_pct) {
  RunSpec r;
  r.method = s.method;
  r.mode = s.mode;
  r.placement = s.placement;
  r.blocks = blocks;
  r.n_updates = n_updates;
  r.changed_pct = changed_pct;
  return r;
}

namespace {

// Fields naming the run: method, parameters, chip.
void spec_fields(Record& r, const std::string& exp, const std::string& source, const RunSpec& s,
                 const Geometry& g, uint32_t logical_pages, double update_pct,
                 uint32_t change_run, uint32_t logical_page, GcVictim victim) {
  const double mib = 1024.0 * 1024.0;
  r.s("exp", exp)
      .s("source", source)
      .s("method", s.method.label)
      .s("method_key", s.method.key)
      .s("obsolete", obsolete_label(s.method.method, s.mode))
      .b("hinted", s.method.note_updates)
      .u("n_updates", s.n_updates)
      .n("changed_pct", s.changed_pct)
      .u("changed_bytes",
         PageChanger(logical_page, s.changed_pct, change_run, s.placement).bytes_per_change())
      .u("change_run", change_run)
      .s("placement", placement_name(s.placement))
      .u("logical_page", logical_page)
      .u("log_sector", log_sector_bytes(s.method))
      .u("nop", g.partial_programs)
      .u("nvm_bytes", g.nvm_bytes)
      .s("gc_victim", !has_obsolete_marks(s.method.method) ? "none"
                      : victim == GcVictim::kOldest ? "oldest" : "greedy")
      .n("update_pct", update_pct)
      .u("t_read_us", g.read_us)
      .u("t_write_us", g.program_us)
      .u("t_erase_us", g.erase_us)
      .u("blocks", g.blocks)
      .n("chip_mib", double(g.data_bytes()) / mib)
      .u("logical_pages", logical_pages)
      .n("data_mib", double(logical_pages) * g.page_data / mib)
      .n("data_pct", 100.0 * logical_pages /
                         double(uint64_t(g.blocks - kSuperblockBlocks) * g.pages_per_block));
}

// The figures of a window under timings (tr, tw, te).
void figure_fields(Record& r, const Measurement& m, double tr, double tw, double te) {
  const double n = double(m.measure_ops);
  const double read_us = m.read_step.time_us(tr, tw, te) / n;
  const double write_us = m.write_step.time_us(tr, tw, te) / n;
  const double gc_us =
      ((m.gc.page_reads + m.gc.spare_reads) * tr + m.gc.programs * tw + m.gc.erases * te) / n;
  const StepCounts& w = m.write_step;
  r.n("read_us", read_us)
      .n("write_us", write_us)
      .n("total_us", read_us + write_us)
      .n("gc_us", gc_us)
      .n("gc_share", write_us > 0 ? gc_us / write_us : 0)
      .n("write_read_us", double(w.page_reads + w.spare_reads) * tr / n)
      .n("write_program_us", double(w.programs) * tw / n)
      .n("write_erase_us", double(w.erases) * te / n)
      .n("gc_read_us", (m.gc.page_reads + m.gc.spare_reads) * tr / n);
}

void count_fields(Record& r, const Measurement& m) {
  const double n = double(m.measure_ops);
  const StoreStats& s = m.stats;
  const double w = s.writes ? double(s.writes) : 1.0;
  r.n("erases_per_op", m.erases_per_op)
      .n("programs_per_op", m.programs_per_op)
      .n("reads_per_op", m.reads_per_op)
      .n("spare_reads_per_op", m.spare_reads_per_op)
      .n("erases_per_update",
         m.measure_updates ? double(m.nand.erases) / double(m.measure_updates) : 0)
      .u("rs_page_reads", m.read_step.page_reads)
      .u("rs_spare_reads", m.read_step.spare_reads)
      .u("rs_programs", m.read_step.programs)
      .u("rs_erases", m.read_step.erases)
      .u("ws_page_reads", m.write_step.page_reads)
      .u("ws_spare_reads", m.write_step.spare_reads)
      .u("ws_programs", m.write_step.programs)
      .u("ws_erases", m.write_step.erases)
      .n("gc_page_reads", m.gc.page_reads)
      .n("gc_spare_reads", m.gc.spare_reads)
      .n("gc_programs", m.gc.programs)
      .n("gc_erases", m.gc.erases)
      .n("base_pages_per_op", double(s.base_pages_written) / n)
      .n("diff_pages_per_op", double(s.diff_pages_written) / n)
      .n("obsolete_marks_per_op", double(s.obsolete_marks) / n)
      .n("gc_base_moves_per_op", double(s.gc_base_moves) / n)
      .n("gc_diff_pages_per_op", double(s.gc_diff_pages) / n)
      .n("log_records_per_op", double(s.log_records) / n)
      .n("log_sectors_per_op", double(s.log_sectors) / n)
      .n("merges_per_op", double(s.merges) / n)
      .n("avg_diff_bytes", m.avg_diff_bytes)
      .n("case1_pct", 100.0 * double(s.case1) / w)
      .n("case2_pct", 100.0 * double(s.case2) / w)
      .n("case3_pct", 100.0 * double(s.case3) / w)
      .u("stats_reads", s.reads)
      .u("stats_writes", s.writes)
      .u("stats_base_pages_written", s.base_pages_written)
      .u("stats_diff_pages_written", s.diff_pages_written)
      .u("stats_diff_records", s.diff_records)
      .u("stats_diff_bytes", s.diff_bytes)
      .u("stats_case1", s.case1)
      .u("stats_case2", s.case2)
      .u("stats_case3", s.case3)
      .u("stats_obsolete_marks", s.obsolete_marks)
      .u("stats_gc_runs", s.gc_runs)
      .u("stats_gc_base_moves", s.gc_base_moves)
      .u("stats_gc_diff_moves", s.gc_diff_moves)
      .u("stats_gc_diff_pages", s.gc_diff_pages)
      .u("stats_gc_merges", s.gc_merges)
      .u("stats_log_records", s.log_records)
      .u("stats_log_bytes", s.log_bytes)
      .u("stats_log_sectors", s.log_sectors)
      .u("stats_merges", s.merges)
      .u("stats_merge_pages", s.merge_pages)
      .u("stats_hinted_writes", s.hinted_writes);
}

void run_fields(Record& r, const RunResult& res, const Measurement& m, uint64_t seed,
                double warm_target) {
  const SetupInfo& su = res.setup;
  r.n("gc_rounds_reached", su.gc_rounds_reached)
      .n("warm_rounds", warm_target)
      .u("warm_ops", su.warm_ops)
      .b("warm_capped", su.warm_capped)
      .n("warm_last_erases_per_op", su.warm_last_erases_per_op)
      .n("measure_gc_rounds", m.measure_rounds)
      .u("measure_ops", m.measure_ops)
      .u("measure_updates", m.measure_updates)
      .b("unsteady", m.unsteady)
      .n("wall_s", m.wall_s)
      .n("load_wall_s", su.load_wall_s)
      .n("warm_wall_s", su.warm_wall_s)
      .n("run_wall_s", res.wall_s)
      .u("seed", seed);
}

}  // namespace

Record measured_record(const std::string& exp, const RunPlan& plan, size_t i, size_t j) {
  const RunSpec& s = plan.spec(i);
  const RunResult& res = plan.result(i);
  const Measurement& m = res.m[j];
  const Geometry& g = res.setup.geo;
  Record r;
  spec_fields(r, exp, "measured", s, g, res.setup.logical_pages, m.update_pct,
              plan.base().change_run, plan.logical_page(s), plan.base().gc_victim);
  r.u("max_diff", res.setup.params.max_differential).u("log_region", res.setup.params.log_region);
  figure_fields(r, m, g.read_us, g.program_us, g.erase_us);
  count_fields(r, m);
  run_fields(r, res, m, plan.base().seed, plan.base().warm_rounds);
  return r;
}

Record derived_record(const std::string& exp, const RunPlan& plan, size_t i, size_t j,
                      uint32_t t_read, uint32_t t_write, uint32_t t_erase) {
  const RunSpec& s = plan.spec(i);
  const RunResult& res = plan.result(i);
  const Measurement& m = res.m[j];
  Geometry g = res.setup.geo;
  g.read_us = t_read;
  g.program_us = t_write;
  g.erase_us = t_erase;
  Record r;
  spec_fields(r, exp, "derived", s, g, res.setup.logical_pages, m.update_pct,
              plan.base().change_run, plan.logical_page(s), plan.base().gc_victim);
  r.u("max_diff", res.setup.params.max_differential).u("log_region", res.setup.params.log_region);
  figure_fields(r, m, t_read, t_write, t_erase);
  count_fields(r, m);
  run_fields(r, res, m, plan.base().seed, plan.base().warm_rounds);
  return r;
}

double derived_total(const Measurement& m, double t_read, double t_write, double t_erase) {
  return (m.read_step.time_us(t_read, t_write, t_erase) +
          m.write_step.time_us(t_read, t_write, t_erase)) /
         double(m.measure_ops);
}

Record error_record(const std::string& exp, const RunPlan& plan, size_t i) {
  const RunSpec& s = plan.spec(i);
  const Geometry g = run_chip(s.method, s.blocks, s.t_read, s.t_program, s.t_erase).resolved();
  Record r;
  spec_fields(r, exp, "error", s, g, plan.logical_pages(s.blocks),
              s.update_pcts.empty() ? 100 : s.update_pcts.back(), plan.base().change_run,
              plan.logical_page(s), plan.base().gc_victim);
  r.s("error", plan.result(i).status.to_string());
  return r;
}

bool add_record(const std::string& exp, const RunPlan& plan, size_t i, size_t j, ExpOutput* out) {
  if (!plan.result(i).status.is_ok()) {
    out->records.push_back(error_record(exp, plan, i));
    out->failed_runs++;
    return false;
  }
  out->records.push_back(measured_record(exp, plan, i, j));
  return true;
}

void print_grid(const std::string& title, const std::string& corner,
                const std::vector<std::string>& xs, const std::vector<std::string>& rows,
                const std::vector<std::vector<std::string>>& cells) {
  size_t w0 = corner.size();
  for (const std::string& r : rows) w0 = std::max(w0, r.size());
  size_t wc = 7;
  for (const std::string& x : xs) wc = std::max(wc, x.size());
  for (const auto& row : cells)
    for (const std::string& c : row) wc = std::max(wc, c.size());
  std::printf("\n%s\n%-*s", title.c_str(), int(w0), corner.c_str());
  for (const std::string& x : xs) std::printf(" %*s", int(wc), x.c_str());
  std::printf("\n");
  for (size_t r = 0; r < rows.size(); r++) {
    std::printf("%-*s", int(w0), rows[r].c_str());
    for (size_t c = 0; c < xs.size(); c++)
      std::printf(" %*s", int(wc), c < cells[r].size() ? cells[r][c].c_str() : "");
    std::printf("\n");
  }
  std::fflush(stdout);
}

bool is_pdl2k(const MethodPreset& m) {
  return m.method == Method::kPdl && m.max_differential == 0 && m.gc_merge;
}

bool is_pdl2k_nomerge(const MethodPreset& m) {
  return m.method == Method::kPdl && m.max_differential == 0 && !m.gc_merge;
}

void print_merge_table(const RunPlan& plan, const std::vector<MergePair>& rows) {
  if (rows.empty()) return;
  std::printf(
      "\nPDL(2KB) with vs without the GC merge (GC rewrites a differential > half a page into a "
      "new base page; without it PDL(2KB) may have no steady state):\n");
  std::printf("%-12s %8s %8s %10s %10s %10s %10s %6s %6s %7s %7s\n", "", "case3%", "case3%",
              "gcmerge/op", "gcmerge/op", "total_us", "total_us", "unst.", "unst.", "gc_rnd",
              "gc_rnd");
  std::printf("%-12s %8s %8s %10s %10s %10s %10s %6s %6s %7s %7s\n", "", "merge", "none",
              "merge", "none", "merge", "none", "merge", "none", "merge", "none");
  for (const MergePair& p : rows) {
    const RunResult& a = plan.result(p.with);
    const RunResult& b = plan.result(p.without);
    if (!a.status.is_ok() || !b.status.is_ok()) {
      std::printf("%-12s fail\n", p.label.c_str());
      continue;
    }
    const Measurement& ma = a.m[0];
    const Measurement& mb = b.m[0];
    auto case3 = [](const Measurement& m) {
      return m.stats.writes ? 100.0 * double(m.stats.case3) / double(m.stats.writes) : 0.0;
    };
    auto merges = [](const Measurement& m) {
      return double(m.stats.gc_merges) / double(m.measure_ops);
    };
    auto unsteady = [](const RunResult& r) {
      return r.m[0].unsteady || r.setup.warm_capped ? "yes" : "no";
    };
    std::printf("%-12s %8.1f %8.1f %10.4f %10.4f %10.1f %10.1f %6s %6s %7.2f %7.2f\n",
                p.label.c_str(), case3(ma), case3(mb), merges(ma), merges(mb), ma.total_us,
                mb.total_us, unsteady(a), unsteady(b), a.setup.gc_rounds_reached,
                b.setup.gc_rounds_reached);
  }
  std::printf("(unst. = not in a steady state: erases/op off the last warm-up round's by > 20 %%, "
              "or warm-up stopped at its operation cap; gc_rnd = GC rounds reached by warm-up)\n");
}

std::string fmt_num(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string cell(const RunPlan& plan, size_t i, size_t j, double (*f)(const Measurement&),
                 const char* format) {
  const RunResult& r = plan.result(i);
  if (!r.status.is_ok()) return "fail";
  return fmt_num(format, f(r.m[j]));
}

void print_setup_line(const Options& o, const RunPlan& plan, uint32_t blocks) {
  const Geometry g = chip(blocks);
  const uint32_t lpns = plan.logical_pages(blocks);
  const WorkloadConfig& cfg = plan.base();
  std::printf(
      "chip %s; data %u logical pages = %.0f MiB (%g%% of the data pages), the same for every "
      "method; changes in %u-byte runs; warm-up to %g gc rounds (erases per data block), then "
      "%s; seed %" PRIu64 ".\n",
      g.describe().c_str(), lpns, double(lpns) * g.page_data / (1024.0 * 1024.0), o.data_pct,
      cfg.change_run, cfg.warm_rounds,
      cfg.measure_ops ? (std::to_string(cfg.measure_ops) + " operations measured per point").c_str()
                      : ("~" + fmt_num("%g", cfg.measure_rounds) +
                         " gc rounds measured (at least " + std::to_string(cfg.min_measure_ops) +
                         " operations)").c_str(),
      cfg.seed);
}

void print_plan_header(const Options& o, const RunPlan& plan) {
  auto names = [](const std::vector<MethodPreset>& ms) {
    std::string s;
    for (const MethodPreset& m : ms) s += (s.empty() ? "" : ", ") + m.label;
    return s;
  };
  auto modes = [](const std::vector<ObsoleteMode>& ms) {
    std::string s;
    for (ObsoleteMode m : ms) s += (s.empty() ? "" : "+") + std::string(obsolete_name(m));
    return s;
  };
  const WorkloadConfig& cfg = plan.base();
  std::printf("pdl-bench: the PDL paper's experiments");
  for (int e = 1; e <= 6; e++)
    if (o.exp[e]) std::printf(" %d", e);
  if (o.exp2_8k) std::printf(" 2-8k");
  if (o.iplsweep) std::printf(" iplsweep");
  std::printf(" (%s scale), %zu distinct runs\n",
              o.blocks || o.sweep_blocks ? "custom" : o.paper ? "paper" : o.quick ? "quick" : "default",
              plan.size());
  if (o.exp[1])
    std::printf("  Exp. 1: %u-block chip, methods %s; obsolete %s for PDL/OPU\n",
                o.exp1_chip_blocks(), names(o.exp1_methods()).c_str(),
                modes(o.exp1_modes).c_str());
  if (o.exp[2] || o.exp[3] || o.exp[4] || o.exp[5] || o.exp[6])
    std::printf("  Exp. 2-6: %u-block chip, methods %s; obsolete %s for PDL/OPU\n",
                o.sweep_chip_blocks(), names(o.sweep_methods()).c_str(),
                modes(o.sweep_modes).c_str());
  std::printf(
      "  data %g%% of the data pages for every method; warm-up until erases since the load "
      "reach %g x data blocks (GC rounds; reached figure in each record), then a window of ",
      o.data_pct, cfg.warm_rounds);
  if (cfg.measure_ops)
    std::printf("%llu operations per point\n", (unsigned long long)cfg.measure_ops);
  else
    std::printf(
        "~%g GC rounds (at least %llu operations; IPU at least %llu: one block rewrite per "
        "update, its cost barely varies)\n",
        cfg.measure_rounds, (unsigned long long)cfg.min_measure_ops,
        (unsigned long long)std::min(cfg.min_measure_ops, kIpuMinOps));
  if (o.placements.size() > 1)
    std::printf("  placements: fields (%u-byte runs at random places) and run (one contiguous "
                "run); the sweeps (Exp. 2-4, 6) run 'run' in obsolete=spare only\n",
                o.change_run);
  else if (o.placements[0] == Placement::kRun)
    std::printf("  placement: run (each change one contiguous run at a random offset)\n");
  if (o.logical_page)
    std::printf("  logical page: %u bytes (flash pages read, changed and written together)\n",
                o.logical_page);
  if (o.gc_victim == GcVictim::kOldest)
    std::printf("  PDL/OPU garbage collection takes the oldest closed block (JFFS's order), "
                "not the emptiest\n");
  std::printf(
      "  IPU and IPL have no obsolete marks (obsolete = none); IPL gets every changed run "
      "through PageStore::note_update, IPL(..)/diff does not (it diffs pages itself)\n");
  std::fflush(stdout);
}

}  // namespace pdl::bench
