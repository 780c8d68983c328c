// bench_options.cc — pdl-bench's usage text, argument parsing and scale defaults.
#include "bench/bench_options.h"

#include "flash/common/output_file.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pdl::bench {

const char kUsage[] =
    "usage: pdl-bench --exp LIST [options]\n"
    "  --exp LIST          comma-separated: 1..6 (PDL paper Exp. 1-6, Table 2), codec, mount,\n"
    "                      all (= 1,2,3,4,5,6,codec,mount); the last --exp given wins\n"
    "                        1  read/write/overall time per update op (Fig. 8)\n"
    "                        2  overall time vs N_updates_till_write 1-8 (Fig. 9)\n"
    "                        3  overall time vs %ChangedByOneU_Op 0.1-100, N=1,5 (Fig. 10)\n"
    "                        4  overall time per op vs %UpdateOps 0-100, N=1,5 (Fig. 11)\n"
    "                        5  overall time vs T_read 10-1500 x T_write 500,1000 (Fig. 12)\n"
    "                        6  erases per update op vs N_updates_till_write 1-8 (Fig. 13)\n"
    "  --methods LIST      comma-separated method keys (default: exp 1 all of them, the\n"
    "                      sweeps the paper's six): pdl256, pdl2k, opu, ipu, ipl18k, ipl64k,\n"
    "                      ipl18k-diff, ipl64k-diff\n"
    "  --obsolete M        PDL/OPU obsolete marks for every experiment: spare (the paper's),\n"
    "                      memory, or both (default: both; mount: spare)\n"
    "  --sweep-obsolete M  the same for exp 2-6 only\n"
    "  --jobs N            runs in parallel (default: hardware threads); results do not\n"
    "                      depend on it\n"
    "  --quick             every experiment on a 256-block chip, 3 GC rounds of warm-up\n"
    "  --paper-scale       every experiment on the paper's 2 GiB chip (16384 blocks)\n"
    "  --blocks N          chip blocks for exp 1 and mount (and exp 2-6 unless --sweep-blocks)\n"
    "  --sweep-blocks N    chip blocks for exp 2-6 (default 512; exp 1's default is 2048)\n"
    "  --json FILE         write every record as a JSON array to FILE\n"
    "  --csv PREFIX        write PREFIX + exp1.csv ... exp6.csv (one per experiment run)\n"
    "  --seed N            workload seed (default 1; every run uses it)\n"
    "  --changed PCT       exp 1's %ChangedByOneU_Op (default 2)\n"
    "  --n-updates N       exp 1's N_updates_till_write (default 1)\n"
    "  --update-pct PCT    exp 1's %UpdateOps (default 100)\n"
    "  --change-run N      bytes per changed run (default 8)\n"
    "  --data-pct PCT      logical pages as % of the data pages (default 49: fits IPL(64KB))\n"
    "  --warm-rounds R     warm-up target, erases per data block (default 10; quick 3)\n"
    "  --measure-rounds R  measure window, erases per data block (default 5; quick 2)\n"
    "  --measure-ops N     measure exactly N operations per point (overrides --measure-rounds)\n"
    "  --verbose           per-run progress lines (warm-up, measure) on stderr\n"
    "  --help              this text\n";

namespace {

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

bool parse_modes(const std::string& m, std::vector<ObsoleteMode>* out) {
  ObsoleteMode mode;
  if (m == "both")
    *out = {ObsoleteMode::kSpare, ObsoleteMode::kMemory};
  else if (parse_obsolete(m, &mode))
    *out = {mode};
  else
    return false;
  return true;
}

bool parse_exps(const std::string& list, Options* o, std::string* err) {
  for (int i = 0; i <= 6; i++) o->exp[i] = false;
  o->codec = o->mount = false;
  size_t pos = 0;
  bool any = false;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    const std::string e = list.substr(pos, comma - pos);
    pos = comma + 1;
    if (e.empty()) continue;
    any = true;
    if (e.size() == 1 && e[0] >= '1' && e[0] <= '6')
      o->exp[e[0] - '0'] = true;
    else if (e == "codec")
      o->codec = true;
    else if (e == "mount")
      o->mount = true;
    else if (e == "all") {
      for (int i = 1; i <= 6; i++) o->exp[i] = true;
      o->codec = o->mount = true;
    } else {
      *err = "--exp: unknown experiment '" + e + "' (1..6, codec, mount, all)";
      return false;
    }
  }
  if (!any) *err = "--exp: empty list";
  return any;
}

}  // namespace

bool parse_args(int argc, char** argv, Options* o, std::string* err, bool* help) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool have_exp = false, have_sweep_modes = false;
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
    std::string s;
    if (a == "--help" || a == "-h") {
      *help = true;
      return true;
    } else if (a == "--exp") {
      if (!value(&s) || !parse_exps(s, o, err)) return false;
      have_exp = true;
    } else if (a == "--methods") {
      if (!value(&s)) return false;
      std::string e;
      if (!parse_methods(s, method_catalogue(), method_keys(), &o->methods, &e)) {
        *err = "--methods: " + e;
        return false;
      }
    } else if (a == "--obsolete" || a == "--sweep-obsolete") {
      if (!value(&s)) return false;
      std::vector<ObsoleteMode> modes;
      if (!parse_modes(s, &modes)) {
        *err = a + ": expected spare, memory or both, got '" + s + "'";
        return false;
      }
      if (a == "--obsolete") {
        o->exp1_modes = o->mount_modes = modes;
        if (!have_sweep_modes) o->sweep_modes = modes;
      } else {
        o->sweep_modes = modes;
        have_sweep_modes = true;
      }
    } else if (a == "--jobs") {
      if (!num_u(1, 256, &u)) return false;
      o->jobs = unsigned(u);
    } else if (a == "--quick") {
      if (!flag()) return false;
      o->quick = true;
    } else if (a == "--paper-scale") {
      if (!flag()) return false;
      o->paper = true;
    } else if (a == "--verbose") {
      if (!flag()) return false;
      o->verbose = true;
    } else if (a == "--json" || a == "--csv") {
      if (!value(&s)) return false;
      if (s.empty()) {
        *err = a + ": empty file name";
        return false;
      }
      (a == "--json" ? o->json : o->csv_prefix) = s;
    } else if (a == "--seed") {
      if (!num_u(0, UINT64_MAX, &o->seed)) return false;
    } else if (a == "--blocks" || a == "--sweep-blocks") {
      if (!num_u(16, 65536, &u)) return false;
      (a == "--blocks" ? o->blocks : o->sweep_blocks) = uint32_t(u);
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
  // The results are written at the end: refuse a file that cannot be written before the run.
  for (const std::string& f : {o->json, o->csv_prefix.empty() ? "" : o->csv_prefix + "exp1.csv"})
    if (!f.empty())
      if (Status st = check_output_file(f); !st.is_ok()) {
        *err = (f == o->json ? "--json " : "--csv ") + std::string(st.message());
        return false;
      }
  return true;
}

Geometry chip(uint32_t blocks, uint32_t t_read, uint32_t t_program, uint32_t t_erase) {
  Geometry g;
  g.blocks = blocks;
  g.read_us = t_read;
  g.program_us = t_program;
  g.erase_us = t_erase;
  return g.resolved();
}

uint32_t Options::exp1_chip_blocks() const {
  if (blocks) return blocks;
  return paper ? 16384 : quick ? 256 : 2048;
}

uint32_t Options::sweep_chip_blocks() const {
  if (sweep_blocks) return sweep_blocks;
  if (blocks) return blocks;
  return paper ? 16384 : quick ? 256 : 512;
}

WorkloadConfig Options::base_workload() const {
  WorkloadConfig cfg;
  cfg.change_run = change_run;
  cfg.warm_rounds = warm_rounds >= 0 ? warm_rounds : quick ? 3 : 10;
  cfg.measure_rounds = measure_rounds > 0 ? measure_rounds : quick ? 2 : 5;
  cfg.measure_ops = measure_ops;
  if (quick) cfg.min_measure_ops = 10000;
  cfg.seed = seed;
  cfg.progress = verbose;
  return cfg;
}

std::vector<MethodPreset> Options::exp1_methods() const {
  return methods.empty() ? method_catalogue() : methods;
}

std::vector<MethodPreset> Options::sweep_methods() const {
  return methods.empty() ? paper_methods() : methods;
}

}  // namespace pdl::bench
