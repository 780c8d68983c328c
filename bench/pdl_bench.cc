// pdl_bench.cc — pdl-bench: the paper's synthetic experiments straight on PageStores.
//
//   --exp 1      seed 000 Experiment 1 (Fig. 8): read, write and overall simulated flash time
//                per update operation for PDL(256B), PDL(2KB) and OPU, each on a fresh chip,
//                %ChangedByOneU_Op = 2, N_updates_till_write = 1 (update_workload.h).
//   --exp codec  diff_encode / diff_apply throughput (codec_bench.h).
//   --exp mount  cost of mounting (recovery scan, seed 000 Fig. 7) a chip half full of data.
//   --exp all    all three.
// Times of store experiments are simulated flash microseconds (seed 000 Table 1), not host time;
// host (wall) seconds are reported beside them. Progress goes to stderr, results to stdout and,
// with --json FILE, to a JSON array of records.
//
// Exit status: 0 success, 1 engine error (its Status is printed), 2 bad arguments.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/codec_bench.h"
#include "bench/update_workload.h"
#include "flash/common/crc32c.h"
#include "flash/common/json.h"
#include "flash/device/emulated_nand.h"
#include "flash/store/page_store.h"

namespace pdl::bench {
namespace {

using Clock = std::chrono::steady_clock;

const char kUsage[] =
    "usage: pdl-bench --exp 1|codec|mount|all [options]\n"
    "  --exp E             experiment: 1 (seed 000 Exp. 1), codec, mount, all (1 + codec + mount)\n"
    "  --quick             small chips and windows (256-block chip for exp 1, 2048 for mount)\n"
    "  --paper-scale       exp 1 on the paper's 2 GiB chip (16384 blocks, 1 GiB of data)\n"
    "  --json FILE         also write the results as a JSON array to FILE\n"
    "  --obsolete M        spare (default, the paper's), memory, or both\n"
    "  --seed N            workload seed (default 1)\n"
    "  --blocks N          chip blocks for exp 1 and mount (64 pages of 2048+64 B each)\n"
    "  --changed PCT       %ChangedByOneU_Op (default 2)\n"
    "  --n-updates N       N_updates_till_write (default 1)\n"
    "  --update-pct PCT    %UpdateOps: the rest are read-only operations (default 100)\n"
    "  --change-run N      bytes per changed run (default 8)\n"
    "  --data-pct PCT      logical pages as % of the data pages (default 50)\n"
    "  --warm-rounds R     warm-up target, erases per data block (default 10; quick 3)\n"
    "  --measure-rounds R  measure window, erases per data block (default 5; quick 2)\n"
    "  --measure-ops N     measure exactly N operations (overrides --measure-rounds)\n"
    "  --help              this text\n";

struct Options {
  bool exp1 = false, codec = false, mount = false;
  bool quick = false, paper = false;
  std::string json;
  std::vector<ObsoleteMode> modes{ObsoleteMode::kSpare};
  uint64_t seed = 1;
  uint32_t blocks = 0;  // 0 = by scale
  double changed = 2;
  uint32_t n_updates = 1;
  double update_pct = 100;
  uint32_t change_run = 8;
  double data_pct = 50;
  double warm_rounds = -1, measure_rounds = -1;
  uint64_t measure_ops = 0;
};

// ---- argument parsing ----

struct UsageError {
  std::string msg;
};

bool parse_u64(const std::string& s, uint64_t* v) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *v = x;
  return true;
}

bool parse_double(const std::string& s, double* v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(s.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(x)) return false;
  *v = x;
  return true;
}

// Returns false (with *err) on bad arguments; *help set for --help.
bool parse_args(int argc, char** argv, Options* o, std::string* err, bool* help) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool have_exp = false;
  for (size_t i = 0; i < args.size(); i++) {
    std::string a = args[i], val;
    bool has_val = false;
    if (a.rfind("--", 0) == 0) {
      const size_t eq = a.find('=');
      if (eq != std::string::npos) {
        val = a.substr(eq + 1);
        a = a.substr(0, eq);
        has_val = true;
      }
    }
    auto value = [&](std::string* out) {
      if (has_val) {
        *out = val;
        return true;
      }
      if (i + 1 >= args.size()) {
        *err = a + " needs a value";
        return false;
      }
      *out = args[++i];
      return true;
    };
    auto flag = [&]() {
      if (has_val) *err = a + " takes no value";
      return !has_val;
    };
    auto num_u = [&](uint64_t lo, uint64_t hi, uint64_t* out) {
      std::string s;
      if (!value(&s)) return false;
      uint64_t x;
      if (!parse_u64(s, &x) || x < lo || x > hi) {
        *err = a + ": expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) +
               ", got '" + s + "'";
        return false;
      }
      *out = x;
      return true;
    };
    auto num_d = [&](double lo, double hi, bool lo_open, double* out) {
      std::string s;
      if (!value(&s)) return false;
      double x;
      if (!parse_double(s, &x) || x > hi || x < lo || (lo_open && x == lo)) {
        char buf[120];
        std::snprintf(buf, sizeof buf, ": expected a number in %s%g, %g], got '",
                      lo_open ? "(" : "[", lo, hi);
        *err = a + buf + s + "'";
        return false;
      }
      *out = x;
      return true;
    };
    uint64_t u = 0;
    if (a == "--help" || a == "-h") {
      *help = true;
      return true;
    } else if (a == "--exp") {
      std::string e;
      if (!value(&e)) return false;
      if (e == "1")
        o->exp1 = true;
      else if (e == "codec")
        o->codec = true;
      else if (e == "mount")
        o->mount = true;
      else if (e == "all")
        o->exp1 = o->codec = o->mount = true;
      else {
        *err = "--exp: unknown experiment '" + e + "' (1, codec, mount, all)";
        return false;
      }
      have_exp = true;
    } else if (a == "--quick") {
      if (!flag()) return false;
      o->quick = true;
    } else if (a == "--paper-scale") {
      if (!flag()) return false;
      o->paper = true;
    } else if (a == "--json") {
      if (!value(&o->json)) return false;
      if (o->json.empty()) {
        *err = "--json: empty file name";
        return false;
      }
    } else if (a == "--obsolete") {
      std::string m;
      if (!value(&m)) return false;
      ObsoleteMode mode;
      if (m == "both")
        o->modes = {ObsoleteMode::kSpare, ObsoleteMode::kMemory};
      else if (parse_obsolete(m, &mode))
        o->modes = {mode};
      else {
        *err = "--obsolete: expected spare, memory or both, got '" + m + "'";
        return false;
      }
    } else if (a == "--seed") {
      if (!num_u(0, UINT64_MAX, &o->seed)) return false;
    } else if (a == "--blocks") {
      if (!num_u(16, 65536, &u)) return false;
      o->blocks = uint32_t(u);
    } else if (a == "--changed") {
      if (!num_d(0, 100, true, &o->changed)) return false;
    } else if (a == "--n-updates") {
      if (!num_u(1, 1000, &u)) return false;
      o->n_updates = uint32_t(u);
    } else if (a == "--update-pct") {
      if (!num_d(0, 100, false, &o->update_pct)) return false;
    } else if (a == "--change-run") {
      if (!num_u(1, 65536, &u)) return false;
      o->change_run = uint32_t(u);
    } else if (a == "--data-pct") {
      if (!num_d(0, 90, true, &o->data_pct)) return false;
    } else if (a == "--warm-rounds") {
      if (!num_d(0, 1000, false, &o->warm_rounds)) return false;
    } else if (a == "--measure-rounds") {
      if (!num_d(0, 1000, true, &o->measure_rounds)) return false;
    } else if (a == "--measure-ops") {
      if (!num_u(1, uint64_t(1) << 40, &o->measure_ops)) return false;
    } else {
      *err = "unknown argument '" + args[i] + "'";
      return false;
    }
  }
  if (!have_exp) {
    *err = "--exp is required";
    return false;
  }
  if (o->quick && o->paper) {
    *err = "--quick and --paper-scale exclude each other";
    return false;
  }
  return true;
}

// ---- helpers ----

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Geometry chip(uint32_t blocks) {
  Geometry g;
  g.blocks = blocks;
  return g.resolved();
}

uint32_t logical_pages_for(const Geometry& g, double data_pct) {
  const uint64_t data_pages = uint64_t(g.blocks - kSuperblockBlocks) * g.pages_per_block;
  return uint32_t(std::max<uint64_t>(1, uint64_t(double(data_pages) * data_pct / 100.0)));
}

std::string mib(uint64_t bytes) {
  char buf[32];
  const double m = double(bytes) / (1024.0 * 1024.0);
  if (m >= 1024)
    std::snprintf(buf, sizeof buf, "%.2f GiB", m / 1024);
  else
    std::snprintf(buf, sizeof buf, "%.0f MiB", m);
  return buf;
}

// ---- Experiment 1 ----

Status run_exp1(const Options& o, std::vector<std::string>* json) {
  const uint32_t blocks = o.blocks ? o.blocks : o.paper ? 16384 : o.quick ? 256 : 2048;
  const Geometry g = chip(blocks);
  PDL_TRY(g.validate());
  WorkloadConfig cfg;
  cfg.changed_pct = o.changed;
  cfg.n_updates = o.n_updates;
  cfg.update_pct = o.update_pct;
  cfg.change_run = o.change_run;
  cfg.warm_rounds = o.warm_rounds >= 0 ? o.warm_rounds : o.quick ? 3 : 10;
  cfg.measure_rounds = o.measure_rounds > 0 ? o.measure_rounds : o.quick ? 2 : 5;
  cfg.measure_ops = o.measure_ops;
  if (o.quick) cfg.min_measure_ops = 10000;
  cfg.seed = o.seed;
  const uint32_t lpns = logical_pages_for(g, o.data_pct);
  const size_t changed_bytes = PageChanger(g.page_data, o.changed, o.change_run).bytes_per_change();

  struct Cfg {
    Method m;
    uint32_t max_diff;
  };
  const Cfg methods[] = {{Method::kPdl, 256}, {Method::kPdl, 2048}, {Method::kOpu, 0}};

  std::printf(
      "\n== Exp. 1: read, write and overall time per update operation (seed 000 Fig. 8) ==\n");
  std::printf(
      "chip %s; data %u logical pages = %s (%.0f%% of the data pages); "
      "%%ChangedByOneU_Op=%g (%zu B in %u-B runs), N_updates_till_write=%u, "
      "%%UpdateOps=%g; warm-up %g gc rounds, measure ~%g rounds%s; seed %" PRIu64 ".\n",
      g.describe().c_str(), lpns, mib(uint64_t(lpns) * g.page_data).c_str(), o.data_pct, o.changed,
      changed_bytes, o.change_run, o.n_updates, o.update_pct, cfg.warm_rounds, cfg.measure_rounds,
      o.measure_ops ? " (fixed op count)" : "", o.seed);
  std::printf(
      "Times are simulated flash microseconds per operation (Table 1: read %u, program %u, "
      "erase %u us); GC is amortized into write.\n",
      g.read_us, g.program_us, g.erase_us);
  std::fflush(stdout);

  std::vector<WorkloadResult> results;
  for (ObsoleteMode mode : o.modes) {
    for (const Cfg& c : methods) {
      StoreParams p;
      p.method = c.m;
      p.max_differential = c.max_diff;
      p.obsolete = mode;
      p.logical_pages = lpns;
      WorkloadConfig wc = cfg;
      wc.label = method_label(p, g.page_data) + " " + obsolete_name(mode);
      std::fprintf(stderr, "exp 1: %s ...\n", wc.label.c_str());
      WorkloadResult r;
      PDL_TRY(run_update_workload(g, p, wc, &r));
      const uint64_t timed =
          uint64_t(std::llround((r.read_us + r.write_us) * double(r.measure_ops)));
      if (timed != r.nand.sim_us)
        std::fprintf(stderr,
                     "WARNING: %s: timed read+write %" PRIu64 " us != chip time %" PRIu64 " us\n",
                     wc.label.c_str(), timed, r.nand.sim_us);
      if (r.warm_capped)
        std::fprintf(stderr, "WARNING: %s: warm-up capped at %.2f gc rounds\n", wc.label.c_str(),
                     r.gc_rounds_reached);
      results.push_back(r);

      const double n = double(r.measure_ops);
      const StoreStats& s = r.stats;
      json->push_back(JsonObj()
                          .s("exp", "1")
                          .s("method", r.method)
                          .s("obsolete", obsolete_name(mode))
                          .u("max_diff", r.params.max_differential)
                          .n("changed_pct", o.changed)
                          .u("changed_bytes", r.bytes_per_change)
                          .u("change_run", o.change_run)
                          .u("n_updates", o.n_updates)
                          .n("update_pct", o.update_pct)
                          .n("read_us", r.read_us)
                          .n("write_us", r.write_us)
                          .n("total_us", r.total_us)
                          .n("erases_per_op", r.erases_per_op)
                          .n("programs_per_op", r.programs_per_op)
                          .n("reads_per_op", r.reads_per_op)
                          .n("spare_reads_per_op", r.spare_reads_per_op)
                          .u("gc_runs", s.gc_runs)
                          .u("case1", s.case1)
                          .u("case2", s.case2)
                          .u("case3", s.case3)
                          .u("diff_records", s.diff_records)
                          .n("avg_diff_bytes", r.avg_diff_bytes)
                          .n("base_pages_per_op", double(s.base_pages_written) / n)
                          .n("diff_pages_per_op", double(s.diff_pages_written) / n)
                          .n("obsolete_marks_per_op", double(s.obsolete_marks) / n)
                          .n("gc_base_moves_per_op", double(s.gc_base_moves) / n)
                          .n("gc_diff_pages_per_op", double(s.gc_diff_pages) / n)
                          .n("gc_rounds_reached", r.gc_rounds_reached)
                          .n("warm_last_erases_per_op", r.warm_last_erases_per_op)
                          .n("measure_gc_rounds", r.measure_rounds)
                          .n("warm_rounds", cfg.warm_rounds)
                          .u("warm_ops", r.warm_ops)
                          .u("blocks", g.blocks)
                          .u("logical_pages", r.logical_pages)
                          .u("measure_ops", r.measure_ops)
                          .u("measure_updates", r.measure_updates)
                          .n("wall_s", r.wall_s)
                          .n("load_wall_s", r.load_wall_s)
                          .n("warm_wall_s", r.warm_wall_s)
                          .u("seed", o.seed)
                          .str());
    }
  }

  std::printf("\n%-11s %-8s %9s %9s %9s %10s %12s %9s %9s %9s %7s\n", "method", "obsolete",
              "read_us", "write_us", "total_us", "erases/op", "programs/op", "reads/op",
              "gc_rounds", "ops", "wall_s");
  for (const WorkloadResult& r : results)
    std::printf("%-11s %-8s %9.1f %9.1f %9.1f %10.4f %12.3f %9.3f %9.2f %9" PRIu64 " %7.2f\n",
                r.method.c_str(), obsolete_name(r.params.obsolete), r.read_us, r.write_us,
                r.total_us, r.erases_per_op, r.programs_per_op, r.reads_per_op, r.gc_rounds_reached,
                r.measure_ops, r.wall_s);
  std::printf("\n%-11s %-8s %7s %7s %7s %9s %9s %9s %9s %9s %9s\n", "method", "obsolete", "case1%",
              "case2%", "case3%", "diff_B", "base/op", "dpage/op", "obs/op", "gc/op", "gcmove/op");
  for (const WorkloadResult& r : results) {
    const StoreStats& s = r.stats;
    const double n = double(r.measure_ops);
    const double w = s.writes ? double(s.writes) : 1.0;
    std::printf("%-11s %-8s %7.1f %7.1f %7.1f %9.1f %9.3f %9.3f %9.3f %9.4f %9.3f\n",
                r.method.c_str(), obsolete_name(r.params.obsolete), 100.0 * double(s.case1) / w,
                100.0 * double(s.case2) / w, 100.0 * double(s.case3) / w, r.avg_diff_bytes,
                double(s.base_pages_written) / n, double(s.diff_pages_written) / n,
                double(s.obsolete_marks) / n, double(s.gc_runs) / n,
                double(s.gc_base_moves + s.gc_diff_pages) / n);
  }
  std::printf(
      "(caseN%% = share of writes taking Case N of Fig. 4; diff_B = mean differential "
      "record size incl. 16-B header; gc_rounds = erases per data block reached by "
      "warm-up)\n");
  std::fflush(stdout);
  return Status::ok();
}

// ---- mount ----

Status run_mount(const Options& o, std::vector<std::string>* json) {
  const uint32_t blocks = o.blocks ? o.blocks : o.quick ? 2048 : 16384;
  const Geometry g = chip(blocks);
  PDL_TRY(g.validate());
  const uint32_t lpns = logical_pages_for(g, o.data_pct);
  std::printf("\n== mount: recovery scan (seed 000 Fig. 7) of a chip holding data ==\n");
  std::printf(
      "chip %s; data %u logical pages = %s written by PDL(256B), then %u updates "
      "(%%Changed=%g), sync, then mount_store on the same chip.\n",
      g.describe().c_str(), lpns, mib(uint64_t(lpns) * g.page_data).c_str(), lpns / 2, o.changed);
  std::fflush(stdout);

  for (ObsoleteMode mode : o.modes) {
    const auto t_all = Clock::now();
    std::fprintf(stderr, "mount (%s): fill ...\n", obsolete_name(mode));
    std::unique_ptr<EmulatedNand> nand;
    PDL_TRY(EmulatedNand::create_ram(g, &nand));
    StoreParams p;
    p.method = Method::kPdl;
    p.max_differential = 256;
    p.obsolete = mode;
    p.logical_pages = lpns;
    std::unique_ptr<PageStore> store;
    PDL_TRY(format_store(*nand, p, &store));
    const size_t ppmt_bytes = store->mapping_bytes_per_lpn();

    // Fill, remembering a checksum of every page's last written value.
    std::mt19937_64 rng(o.seed);
    std::vector<uint32_t> sums(lpns);
    std::vector<uint8_t> page(g.page_data);
    auto t0 = Clock::now();
    for (Lpn l = 0; l < lpns; l++) {
      random_fill(page, rng);
      sums[l] = crc32c(page.data(), page.size());
      PDL_TRY(store->write(l, page));
    }
    PageChanger changer(g.page_data, o.changed, o.change_run);
    std::uniform_int_distribution<uint32_t> pick(0, lpns - 1);
    for (uint32_t i = 0; i < lpns / 2; i++) {
      const Lpn l = pick(rng);
      PDL_TRY(store->read(l, page));
      changer.change(page, rng);
      sums[l] = crc32c(page.data(), page.size());
      PDL_TRY(store->write(l, page));
    }
    PDL_TRY(store->sync());
    const double fill_s = seconds_since(t0);
    const StoreStats fs = store->stats();
    store.reset();  // "power off": only the chip remains

    std::fprintf(stderr, "mount (%s): scan ...\n", obsolete_name(mode));
    MountReport rep;
    t0 = Clock::now();
    PDL_TRY(mount_store(*nand, &store, &rep));
    const double mount_wall = seconds_since(t0);

    // Every page must read back as last written.
    t0 = Clock::now();
    uint64_t bad = 0;
    for (Lpn l = 0; l < lpns; l++) {
      PDL_TRY(store->read(l, page));
      if (crc32c(page.data(), page.size()) != sums[l]) bad++;
    }
    const double verify_s = seconds_since(t0);
    if (bad)
      return Status::error(Errc::kCorrupt, std::to_string(bad) + " of " + std::to_string(lpns) +
                                               " pages read back wrong after mount");

    const double sim_s = double(rep.sim_us) / 1e6;
    const double chip_gib = double(g.data_bytes()) / double(1ull << 30);
    std::printf("mount %-6s  pages scanned %" PRIu64
                "  simulated %.2f s (%.1f s per GiB of chip)"
                "  wall %.3f s (report %.3f s)  live lpns %" PRIu64 "  valid diff pages %" PRIu64
                "  torn %" PRIu64 "  free blocks %" PRIu64 "\n",
                obsolete_name(mode), rep.pages_scanned, sim_s, sim_s / chip_gib, mount_wall,
                rep.wall_s, rep.live_lpns, rep.valid_diff_pages, rep.torn_pages, rep.free_blocks);
    std::printf("      fill %.2f s wall (%" PRIu64 " diff pages, %" PRIu64
                " base pages written); "
                "all %u pages verified after mount in %.2f s; total %.1f s\n",
                fill_s, fs.diff_pages_written, fs.base_pages_written, lpns, verify_s,
                seconds_since(t_all));
    std::printf(
        "      ppmt: %zu bytes of RAM per logical page (PageStore::mapping_bytes_per_lpn)\n",
        ppmt_bytes);
    std::fflush(stdout);
    json->push_back(JsonObj()
                        .s("exp", "mount")
                        .s("method", "PDL(256B)")
                        .s("obsolete", obsolete_name(mode))
                        .u("blocks", g.blocks)
                        .u("chip_bytes", g.data_bytes())
                        .u("logical_pages", lpns)
                        .u("data_bytes", uint64_t(lpns) * g.page_data)
                        .u("updates", lpns / 2)
                        .u("pages_scanned", rep.pages_scanned)
                        .n("sim_s", sim_s)
                        .n("sim_s_per_gib", sim_s / chip_gib)
                        .n("wall_s", mount_wall)
                        .n("report_wall_s", rep.wall_s)
                        .u("live_lpns", rep.live_lpns)
                        .u("valid_diff_pages", rep.valid_diff_pages)
                        .u("torn_pages", rep.torn_pages)
                        .u("free_blocks", rep.free_blocks)
                        .u("ppmt_bytes_per_lpn", ppmt_bytes)
                        .n("fill_wall_s", fill_s)
                        .u("verified_pages", lpns)
                        .str());
  }
  return Status::ok();
}

bool write_json(const std::string& path, const std::vector<std::string>& recs) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::string out = "[\n";
  for (size_t i = 0; i < recs.size(); i++)
    out += "  " + recs[i] + (i + 1 < recs.size() ? ",\n" : "\n");
  out += "]\n";
  const bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  return std::fclose(f) == 0 && ok;
}

int main_impl(int argc, char** argv) {
  Options o;
  std::string err;
  bool help = false;
  if (!parse_args(argc, argv, &o, &err, &help)) {
    std::fprintf(stderr, "pdl-bench: %s\n%s", err.c_str(), kUsage);
    return 2;
  }
  if (help) {
    std::printf("%s", kUsage);
    return 0;
  }
  const auto t0 = Clock::now();
  std::vector<std::string> json;
  Status st;
  if (o.exp1) st = run_exp1(o, &json);
  if (st.is_ok() && o.codec) {
    std::printf("\n== codec: page-differential encode/apply throughput ==\n");
    std::fflush(stdout);
    run_codec_bench(o.quick, &json);
  }
  if (st.is_ok() && o.mount) st = run_mount(o, &json);
  if (!st.is_ok()) {
    std::fprintf(stderr, "pdl-bench: error: %s\n", st.to_string().c_str());
    return 1;
  }
  std::printf("\ntotal wall time %.1f s\n", seconds_since(t0));
  if (!o.json.empty()) {
    if (!write_json(o.json, json)) {
      std::fprintf(stderr, "pdl-bench: error: cannot write %s: %s\n", o.json.c_str(),
                   std::strerror(errno));
      return 1;
    }
    std::fprintf(stderr, "wrote %zu records to %s\n", json.size(), o.json.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace pdl::bench

int main(int argc, char** argv) {
  return pdl::bench::main_impl(argc, argv);
}
