// bench_options.cc — pdl-bench's command line (CLI11, in the house layout of cli/app.h) and
// scale defaults.
#include "bench/bench_options.h"

#include <cstdlib>

#include "cli/app.h"
#include "flash/common/output_file.h"
#include "flash/image/image_params.h"

namespace pdl::bench {

namespace {

const char kDescription[] =
    "The experiments of the PDL paper (Exp. 1-6, Table 2) on emulated chips, for the page-update\n"
    "methods, plus the codec and mount benchmarks; simulated flash time per operation.";

const char kExperiments[] =
    "1..6 (PDL paper Exp. 1-6, Table 2), iplsweep, 2-8k, codec, mount,\n"
    "all (= 1,2,3,4,5,6,iplsweep,2-8k,codec,mount), comma-separated:\n"
    "  1  read/write/overall time per update op (Fig. 8)\n"
    "  2  overall time vs N_updates_till_write 1-8 (Fig. 9)\n"
    "  3  overall time vs %ChangedByOneU_Op 0.1-100, N=1,5 (Fig. 10)\n"
    "  4  overall time per op vs %UpdateOps 0-100, N=1,5 (Fig. 11)\n"
    "  5  overall time vs T_read 10-1500 x T_write 500,1000 (Fig. 12)\n"
    "  6  erases per update op vs N_updates_till_write 1-8 (Fig. 13)\n"
    "  iplsweep  IPL log region 8-64 KB x log sector 512, 128 B at exp 1's point\n"
    "  2-8k  exp 2 with 8 KB logical pages (4 flash pages; paper section 5.1)";

const char kExitStatus[] =
    "An option given twice: the last one counts.\n"
    "exit status: 0 ok, 1 a run failed, 2 usage error.";

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

// "256M,1G": chip sizes, each whole 128 KiB blocks of the Table 1 chip, 2 MiB .. 256 GiB.
bool parse_sizes(const std::string& list, std::vector<uint64_t>* out, std::string* err) {
  out->clear();
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    const std::string e = list.substr(pos, comma - pos);
    pos = comma + 1;
    uint64_t b = 0;
    if (!parse_size(e, &b) || b < (2u << 20) || b > kMaxChipBytes || b % (128u << 10)) {
      *err = "expected chip sizes of whole 128 KiB blocks from 2M to 256G (\"256M,1G\"), got '" +
             e + "'";
      return false;
    }
    out->push_back(b);
  }
  return true;
}

bool parse_exps(const std::string& list, Options* o, std::string* err) {
  for (int i = 0; i <= 6; i++) o->exp[i] = false;
  o->codec = o->mount = o->iplsweep = o->exp2_8k = o->all = false;
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
    else if (e == "iplsweep")
      o->iplsweep = true;
    else if (e == "2-8k")
      o->exp2_8k = true;
    else if (e == "all") {
      for (int i = 1; i <= 6; i++) o->exp[i] = true;
      o->codec = o->mount = o->iplsweep = o->exp2_8k = o->all = true;
    } else {
      *err = "unknown experiment '" + e + "' (1..6, iplsweep, 2-8k, codec, mount, all)";
      return false;
    }
  }
  if (!any) *err = "empty list";
  return any;
}

}  // namespace

int parse_args(int argc, char** argv, Options* o) {
  cli::CommandLine cl({"pdl-bench", {"--exp LIST [options]"}, kDescription, kExitStatus,
                       cli::Repeats::kLastWins});
  cli::App& app = cl.app();
  std::string exps, methods, obsolete, sweep_obsolete, placement, victim;
  // The lists are checked as given, by the same functions that read them afterwards.
  const cli::Validator exp_list(
      [](std::string& s) -> std::string {
        Options scratch;
        std::string err;
        return parse_exps(s, &scratch, &err) ? "" : err;
      },
      "");
  const cli::Validator modes(
      [](std::string& s) -> std::string {
        std::vector<ObsoleteMode> m;
        return parse_modes(s, &m) ? "" : "expected spare, memory or both, got '" + s + "'";
      },
      "");
  const char* const kWhat = "what to run";
  app.add_option("--exp", exps, kExperiments)
      ->type_name("LIST")->required()->check(exp_list)->group(kWhat);
  cli::Option* methods_opt = app.add_option("--methods", methods,
                 "comma-separated method keys: pdl256, pdl2k, opu, ipu, ipl18k,\n"
                 "ipl64k, ipl18k-diff, ipl64k-diff, ...; with NVM beside the chip:\n"
                 "pdl-nvm, pdl2k-nvm, ipl-pcram, ipl-pcram512")
      ->type_name("LIST")
      ->default_str("exp 1 every flash-only one, the sweeps the paper's six, mount pdl256")
      ->group(kWhat);
  app.add_option("--obsolete", obsolete,
                 "PDL/OPU obsolete marks for every experiment: spare (the paper's),\n"
                 "memory, or both")
      ->type_name("M")->check(modes)->default_str("both; mount: spare")->group(kWhat);
  app.add_option("--sweep-obsolete", sweep_obsolete, "the same for exp 2-6 only")
      ->type_name("M")->check(modes)->group(kWhat);
  app.add_option("--jobs", o->jobs, "runs in parallel; results do not depend on it")
      ->type_name("N")->check(cli::integer(1, 256))->default_str("hardware threads")
      ->group(kWhat);

  const char* const kScale = "scale";
  cli::Option* quick = app.add_flag("--quick", o->quick,
                                    "every experiment on a 256-block chip, 3 GC rounds of warm-up")
                           ->group(kScale);
  app.add_flag("--paper-scale", o->paper,
               "every experiment on the paper's 2 GiB chip (16384 blocks)")
      ->excludes(quick)->group(kScale);
  app.add_option("--blocks", o->blocks,
                 "chip blocks for exp 1 (and exp 2-6 unless --sweep-blocks)")
      ->type_name("N")->check(cli::integer(16, 65536))
      ->default_str("2048; --quick 256; --paper-scale 16384")->group(kScale);
  app.add_option("--sweep-blocks", o->sweep_blocks, "chip blocks for exp 2-6")
      ->type_name("N")->check(cli::integer(16, 65536))
      ->default_str("--blocks if given, else 512; --quick 256; --paper-scale 16384")
      ->group(kScale);
  app.add_option("--data-pct", o->data_pct,
                 "logical pages as % of the data pages (49: fits IPL(64KB))")
      ->type_name("PCT")->check(cli::number(0, 90, true))->capture_default_str()->group(kScale);
  app.add_option("--warm-rounds", o->warm_rounds, "warm-up target, erases per data block")
      ->type_name("R")->check(cli::number(0, 1000))->default_str("10; quick 3")->group(kScale);
  app.add_option("--measure-rounds", o->measure_rounds,
                 "measure window, erases per data block")
      ->type_name("R")->check(cli::number(0, 1000, true))->default_str("5; quick 2")
      ->group(kScale);
  app.add_option("--measure-ops", o->measure_ops,
                 "measure exactly N operations per point (overrides --measure-rounds)")
      ->type_name("N")->check(cli::integer(1, uint64_t(1) << 40))->group(kScale);

  std::string mount_sizes, scan_max;
  const char* const kMount = "mount (--exp mount)";
  app.add_option("--mount-sizes", mount_sizes,
                 "chip sizes, each filled (--mount-fill) and mounted after a clean\n"
                 "unmount and after a power cut, each mount in a fresh process")
      ->type_name("LIST")
      ->check(cli::Validator(
          [](std::string& s) -> std::string {
            std::vector<uint64_t> v;
            std::string err;
            return parse_sizes(s, &v, &err) ? "" : err;
          },
          ""))
      ->default_str("256M,1G,4G,16G,64G; --quick and --exp all 256M,1G")->group(kMount);
  app.add_option("--mount-scan-max", scan_max,
                 "also measure chips up to this size without a checkpoint area\n"
                 "(the full scan of every spare area)")
      ->type_name("SIZE")
      ->check(cli::Validator(
          [](std::string& s) -> std::string {
            uint64_t b = 0;
            return parse_size(s, &b) ? "" : "expected a size (4G), got '" + s + "'";
          },
          ""))
      ->default_str("4G; --quick and --exp all every size")->group(kMount);
  app.add_option("--mount-fill", o->mount_fill_pct,
                 "% of the logical pages written before the mounts; 0: an empty chip\n"
                 "(format, checkpoint, mount: no power-cut run)")
      ->type_name("PCT")->check(cli::number(0, 100))->capture_default_str()->group(kMount);
  app.add_option("--mount-verify", o->mount_verify,
                 "after each mount read only this many written pages, drawn at random\n"
                 "(plus those written after the last sync); 0: every page. For chips\n"
                 "larger than the host's page cache")
      ->type_name("N")->check(cli::integer(0, uint64_t(1) << 32))->capture_default_str()
      ->group(kMount);
  app.add_option("--work-dir", o->work_dir,
                 "directory for the sparse image files (each removed once measured)")
      ->type_name("DIR")->check(cli::existing_directory())
      ->default_str("a scratch directory in $TMPDIR, removed after")->group(kMount);
  app.add_flag("--mount-tamper", o->mount_tamper)->group("");  // test hook (tests/bench)

  const char* const kWorkload = "workload";
  app.add_option("--seed", o->seed, "workload seed (every run uses it)")
      ->type_name("N")->check(cli::integer(0, UINT64_MAX))->capture_default_str()
      ->group(kWorkload);
  app.add_option("--gc-victim", victim,
                 "PDL/OPU garbage collection's victim: greedy (fewest valid pages)\n"
                 "or oldest (JFFS's order, the collection the PDL paper cites)")
      ->type_name("P")
      ->check(cli::Validator(
          [](std::string& s) -> std::string {
            return s == "greedy" || s == "oldest" ? ""
                                                  : "expected greedy or oldest, got '" + s + "'";
          },
          ""))
      ->default_str("greedy")->group(kWorkload);
  app.add_option("--changed", o->changed, "exp 1's %ChangedByOneU_Op")
      ->type_name("PCT")->check(cli::number(0, 100, true))->capture_default_str()
      ->group(kWorkload);
  app.add_option("--n-updates", o->n_updates, "exp 1's N_updates_till_write")
      ->type_name("N")->check(cli::integer(1, 1000))->capture_default_str()->group(kWorkload);
  app.add_option("--update-pct", o->update_pct, "exp 1's %UpdateOps")
      ->type_name("PCT")->check(cli::number(0, 100))->capture_default_str()->group(kWorkload);
  app.add_option("--change-run", o->change_run, "bytes per changed run (placement fields)")
      ->type_name("N")->check(cli::integer(1, 65536))->capture_default_str()->group(kWorkload);
  app.add_option("--placement", placement,
                 "where a change's bytes go: fields (--change-run bytes at random\n"
                 "places), run (one contiguous run at a random offset) or both")
      ->type_name("P")->check(cli::is_member({"fields", "run", "both"}))
      ->default_str("fields; --exp all both")->group(kWorkload);
  app.add_option("--logical-page", o->logical_page,
                 "bytes of a logical page: k consecutive flash pages read, changed\n"
                 "(%ChangedByOneU_Op of k pages) and written back per operation")
      ->type_name("BYTES")
      ->check(cli::Validator(
          [](std::string& v) -> std::string {
            const unsigned long n = std::strtoul(v.c_str(), nullptr, 10);
            return n >= 2048 && n <= (1u << 20) && n % 2048 == 0 &&
                           v.find_first_not_of("0123456789") == std::string::npos
                       ? ""
                       : "expected a multiple of the 2048-byte flash page up to 1 MiB, got '" +
                             v + "'";
          },
          ""))
      ->default_str("2048 (a flash page)")->group(kWorkload);

  const char* const kOutput = "output";
  app.add_option("--json", o->json, "write every record as a JSON array to FILE")
      ->type_name("FILE")->check(cli::non_empty("file name"))->group(kOutput);
  app.add_option("--csv", o->csv_prefix,
                 "write PREFIX + exp1.csv ... exp6.csv (one per experiment run)")
      ->type_name("PREFIX")->check(cli::non_empty("file name"))->group(kOutput);
  app.add_flag("--verbose", o->verbose, "per-run progress lines (warm-up, measure) on stderr")
      ->group(kOutput);

  if (const int rc = cl.parse(argc, argv); rc >= 0) return rc;
  std::string err;
  (void)parse_exps(exps, o, &err);  // checked by exp_list
  if (methods_opt->count() > 0 &&
      !parse_methods(methods, method_catalogue(), method_keys(), &o->methods, &err))
    return cl.error("--methods: " + err);
  if (!obsolete.empty()) {
    (void)parse_modes(obsolete, &o->exp1_modes);
    o->mount_modes = o->sweep_modes = o->exp1_modes;
  }
  if (!sweep_obsolete.empty()) (void)parse_modes(sweep_obsolete, &o->sweep_modes);
  if (!mount_sizes.empty()) (void)parse_sizes(mount_sizes, &o->mount_sizes, &err);
  if (!scan_max.empty()) (void)parse_size(scan_max, &o->mount_scan_max);
  if (victim == "oldest") o->gc_victim = GcVictim::kOldest;
  o->placement_set = !placement.empty();
  if (placement == "run")
    o->placements = {Placement::kRun};
  else if (placement == "both" || (placement.empty() && o->all))
    o->placements = {Placement::kFields, Placement::kRun};
  // The results are written at the end: refuse a file that cannot be written before the run.
  for (const std::string& f : {o->json, o->csv_prefix.empty() ? "" : o->csv_prefix + "exp1.csv"})
    if (!f.empty())
      if (Status st = check_output_file(f); !st.is_ok())
        return cl.error((f == o->json ? "--json " : "--csv ") + std::string(st.message()));
  return -1;
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

std::vector<uint64_t> Options::mount_chip_sizes() const {
  if (!mount_sizes.empty()) return mount_sizes;
  if (quick || all) return {256ull << 20, 1ull << 30};
  return {256ull << 20, 1ull << 30, 4ull << 30, 16ull << 30, 64ull << 30};
}

uint64_t Options::mount_scan_max_bytes() const {
  if (mount_scan_max) return mount_scan_max;
  return quick || all ? kMaxChipBytes : 4ull << 30;
}

uint32_t Options::sweep_chip_blocks() const {
  if (sweep_blocks) return sweep_blocks;
  if (blocks) return blocks;
  return paper ? 16384 : quick ? 256 : 512;
}

WorkloadConfig Options::base_workload() const {
  WorkloadConfig cfg;
  cfg.change_run = change_run;
  cfg.logical_page = logical_page;
  cfg.warm_rounds = warm_rounds >= 0 ? warm_rounds : quick ? 3 : 10;
  cfg.measure_rounds = measure_rounds > 0 ? measure_rounds : quick ? 2 : 5;
  cfg.measure_ops = measure_ops;
  if (quick) cfg.min_measure_ops = 10000;
  cfg.seed = seed;
  cfg.gc_victim = gc_victim;
  cfg.progress = verbose;
  return cfg;
}

std::vector<MethodPreset> Options::exp1_methods() const {
  return methods.empty() ? raw_nand_methods() : methods;  // FTL devices: by key only
}

std::vector<MethodPreset> Options::sweep_methods() const {
  return methods.empty() ? paper_methods() : methods;
}

std::vector<ObsoleteMode> Options::sweep_modes_for(Placement p) const {
  if (p == Placement::kRun && placements.size() > 1) return {ObsoleteMode::kSpare};
  return sweep_modes;
}

}  // namespace pdl::bench
