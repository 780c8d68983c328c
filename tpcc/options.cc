// options.cc — see options.h. The command line is CLI11's, in the house layout (cli/app.h).
#include "tpcc/options.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "cli/app.h"
#include "flash/common/output_file.h"
#include "flash/common/split.h"
#include "flash/image/image_params.h"
#include "flash/image/open_store.h"
#include "flash/volume/volume_format.h"

namespace pdl::tpcc {
namespace {

const char kDescription[] =
    "A TPC-C-like workload on SQLite through the pdl VFS: loads once, clones the database into\n"
    "a fresh emulated chip per page-update method, warms each up until garbage collection is\n"
    "active, runs the same transaction sequence on each and reports simulated flash I/O per\n"
    "transaction (PDL paper Table 1 timing), split into database pages and journal/WAL.";

const char kExitStatus[] =
    "exit status: 0 ok, 1 a run failed or a consistency check failed, 2 usage error.";

// --chip-size against every method's image: the geometry (at least 8 erase blocks), the
// method's reserve and the volume's directory, as the first open would check them after the
// load. "" if it fits, else why not.
std::string check_chip(const Options& o) {
  if (o.chip_bytes == 0) return "";
  const std::string shown = "--chip-size " + format_size(o.chip_bytes);
  for (const MethodSpec& m : o.methods) {
    ImageParams p;
    Status st = p.set("size", format_size(o.chip_bytes));
    const std::string sb = m.preset.method == Method::kStableBuffer ? o.sb_extra : "";
    for (const std::string& kv : split_list(m.uri_params(o.page, o.chip_bytes) + o.uri_extra + sb, '&')) {
      if (!st.is_ok()) break;
      const size_t eq = kv.find('=');
      if (eq != std::string::npos) st = p.set(kv.substr(0, eq), kv.substr(eq + 1));
    }
    p.page = o.page;
    const Geometry g = p.geometry();
    if (st.is_ok()) st = g.validate();
    StoreParams sp = p.store_params();
    if (st.is_ok()) st = resolve_store_params(&sp, g);
    VolumeLayout layout;
    if (st.is_ok()) st = VolumeLayout::plan(sp.logical_pages, g.page_data, 0, &layout);
    if (!st.is_ok()) return shown + " (" + m.key + "): " + std::string(st.message());
  }
  return "";
}

// `word` or an integer in [lo, hi].
cli::Validator word_or_integer(std::string word, uint64_t lo, uint64_t hi) {
  return cli::Validator(
      [word, lo, hi](std::string& s) -> std::string {
        uint64_t v = 0;
        if (s == word || (cli::parse_decimal(s, &v) && v >= lo && v <= hi)) return "";
        return "expected " + word + " or an integer in [" + std::to_string(lo) + ", " +
               std::to_string(hi) + "], got '" + s + "'";
      },
      "");
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  cli::CommandLine cl({"pdl-tpcc", {"[options]"}, kDescription, kExitStatus});
  cli::App& app = cl.app();
  std::string methods, journals, commits, chip, warmup, obsolete, wear_level, sweep_cache;
  const char* const kWorkload = "workload";
  app.add_option("--warehouses", o.warehouses, "warehouses")
      ->type_name("N")->check(cli::integer(1, 1000))->capture_default_str()->group(kWorkload);
  cli::Option* scale = app.add_option("--scale", o.scale,
                                      "shrink items and customers by F, 0 < F <= 1")
      ->type_name("F")->check(cli::number(1e-6, 1.0))->default_str("1; --quick 0.05")->group(kWorkload);
  app.add_option("--seed", o.seed, "data and transaction inputs")
      ->type_name("N")->check(cli::integer(0, UINT64_MAX))->capture_default_str()
      ->group(kWorkload);
  cli::Option* txns = app.add_option("--transactions", o.transactions,
                                     "measured transactions per method")
      ->type_name("N")->check(cli::integer(1, 1ull << 40))->default_str("5000; --quick 1000")
      ->group(kWorkload);
  app.add_option("--duration", o.duration_s,
                 "measure the first method for S seconds, the others as many")
      ->type_name("S")->check(cli::number(0.001, 1e7))->group(kWorkload);
  app.add_option("--warmup", warmup,
                 "warm-up transactions (auto: until each chip erased its blocks\n"
                 "--gc-rounds times on average)")
      ->type_name("N|auto")->check(word_or_integer("auto", 1, 1ull << 40))->default_str("auto")
      ->group(kWorkload);
  app.add_option("--gc-rounds", o.gc_rounds, "warm-up target")
      ->type_name("R")->check(cli::number(0, 1000))->default_str("1")->group(kWorkload);
  app.add_option("--warmup-max", o.warmup_max, "cap of the automatic warm-up")
      ->type_name("N")->check(cli::integer(1, 1ull << 40))->default_str("20 x --transactions")
      ->group(kWorkload);
  app.add_flag("--quick", o.quick, "--scale 0.05 --transactions 1000 unless given")
      ->group(kWorkload);

  const char* const kMethods = "methods and images";
  // The method keys are the catalogue's (methods.h): parse_methods checks them.
  cli::Option* methods_opt =
      app.add_option("--methods", methods,
                     "pdl, pdl2k, opu, ipu, ipl, ipl64k or all (with --sweep the paper's\n"
                     "Fig. 14 set: pdl,pdl2k,opu,ipl,ipl64k); SQLite on an FTL device\n"
                     "(journal on the device): ftl-page, bast16, bast32, fast16, fast32,\n"
                     "and with StableBuffer in front sb-page, sb-bast16, sb-fast16, or ftl\n"
                     "for all eight; with NVM beside the chip: pdl-nvm, pdl2k-nvm,\n"
                     "ipl-pcram, ipl-pcram512, or nvm for\n"
                     "pdl-nvm,pdl2k-nvm,pdl,opu,ipl,ipl-pcram; none: the unix VFS alone")
          ->type_name("LIST")->default_str("pdl,opu,ipu,ipl")->group(kMethods);
  app.add_option("--journal-mode", journals, "SQLite journal modes")
      ->type_name("LIST")
      ->check(cli::list_of({"delete", "truncate", "persist", "memory", "wal", "off"}, "mode"))
      ->default_str("delete,wal,memory")->group(kMethods);
  app.add_option("--commit", commits,
                 "atomic (the journal in memory, each commit one atomic commit of the\n"
                 "store) and/or journal (the journal on flash; IPU always)")
      ->type_name("LIST")->check(cli::list_of({"atomic", "journal"}, "mode"))
      ->default_str("journal,atomic: both, side by side")->group(kMethods);
  app.add_option("--cache-pct", o.cache_pct, "SQLite page cache, % of the database's pages")
      ->type_name("P")->check(cli::number(1e-6, 1000))->default_str("1")->group(kMethods);
  app.add_option("--chip-size", chip, "chip size of every image, e.g. 64M")
      ->type_name("SIZE")
      ->check(cli::Validator(
          [](std::string& s) -> std::string {
            uint64_t b = 0;
            return s == "auto" || parse_size(s, &b) ? ""
                                                    : "expected a size such as 64M or 1G, got '" +
                                                          s + "'";
          },
          ""))
      ->default_str("auto, data <= half")->group(kMethods);
  app.add_option("--page-size", o.page, "flash page = SQLite page")
      ->type_name("BYTES")
      ->check(cli::Validator(
          [range = cli::integer(512, 32768)](std::string& s) -> std::string {
            if (std::string why = range(s); !why.empty()) return why;
            const uint64_t v = std::strtoull(s.c_str(), nullptr, 10);
            return (v & (v - 1)) == 0 ? "" : "must be a power of two";
          },
          ""))
      ->capture_default_str()->group(kMethods);
  app.add_option("--obsolete", obsolete,
                 "PDL/OPU obsolete marks: spare (the paper's) or memory")
      ->type_name("MODE")->check(cli::one_of({"spare", "memory"}))->default_str("memory")
      ->group(kMethods);
  app.add_option("--wear-level", wear_level,
                 "PDL/OPU static wear levelling: the erase-count spread that moves\n"
                 "cold data (off: none, free blocks FIFO)")
      ->type_name("N|off")->check(word_or_integer("off", 1, 1000000000))->default_str("1024")
      ->group(kMethods);
  std::string checkpoint;
  app.add_option("--checkpoint", checkpoint,
                 "a checkpoint area on every image (docs/design.md §17): on, off")
      ->type_name("on|off")->check(cli::one_of({"on", "off"}))
      ->default_str("on where it fits")->group(kMethods);
  std::string table_cache;
  app.add_option("--table-cache", table_cache,
                 "URI table_cache: clean table pages each of PDL/OPU's paged tables keeps,\n"
                 "and the dirty pages kept before sparse ones fold into entries\n"
                 "(docs/design.md §18)")
      ->type_name("PAGES")->check(cli::integer(1, 1u << 24))->default_str("256")
      ->group(kMethods);
  app.add_flag("--checkpoint-cost", o.checkpoint_cost,
               "write a checkpoint of each pdl member after the warm-up (as a clean close\n"
               "and reopen would), and after each measurement one without and one with\n"
               "the Volume's tables (a periodic one, the close's), counting their I/O")
      ->group(kMethods);
  std::string sb_slots, sb_recognition, sb_flush;
  app.add_option("--sb-slots", sb_slots, "StableBuffer staging slots of the sb-* methods")
      ->type_name("N")->check(cli::integer(1, 1u << 24))->default_str("the engine's")
      ->group(kMethods);
  app.add_option("--sb-recognition", sb_recognition,
                 "StableBuffer write-pattern recognition of the sb-* methods")
      ->type_name("MODE")->check(cli::one_of({"ondemand", "incremental"}))
      ->default_str("ondemand")->group(kMethods);
  app.add_option("--sb-flush", sb_flush, "StableBuffer flushing of the sb-* methods")
      ->type_name("MODE")->check(cli::one_of({"passive", "proactive"}))
      ->default_str("passive")->group(kMethods);
  app.add_option("--image-dir", o.image_dir,
                 "keep the images: DIR/<method>.db (DIR/<journal>/<method>.db with\n"
                 "several journal modes); open with file:DIR/pdl.db?vfs=pdl")
      ->type_name("DIR")->group(kMethods);
  app.add_option("--store", o.store,
                 "run the one method (one --methods, one --commit) in this existing pdl\n"
                 "store, an image file or /dev/mtdN made by `pdl format`: the database is\n"
                 "its file <method>.db, beside the files it already holds (never formatted\n"
                 "or removed here; the method must match the store's)")
      ->type_name("PATH")->group(kMethods);
  app.add_option("--unix-dir", o.unix_dir,
                 "the unix reference's database in DIR (DIR/unix.db, e.g. on a mounted\n"
                 "flash file system) instead of beside the images")
      ->type_name("DIR")->group(kMethods);
  app.add_option("--work-dir", o.work_dir, "scratch directory")
      ->type_name("DIR")->default_str("/dev/shm, else /tmp")->group(kMethods);

  const char* const kSweep = "Exp. 7";
  app.add_flag("--sweep", o.sweep, "I/O per transaction as the cache varies (--sweep-cache)")
      ->group(kSweep);
  app.add_option("--sweep-cache", sweep_cache, "cache sizes, %")
      ->type_name("LIST")->default_str("0.1,0.2,0.5,1,2,5,10")->group(kSweep);

  const char* const kOutput = "output";
  app.add_option("--json", o.json, "write all results as JSON")->type_name("FILE")
      ->group(kOutput);
  app.add_option("--csv", o.csv, "write one row per journal mode, cache size and method")
      ->type_name("FILE")->group(kOutput);
  bool no_unix = false, quiet = false, track_changes = false;
  app.add_flag("--no-unix", no_unix, "skip the unix-VFS wall-clock reference")->group(kOutput);
  app.add_flag("--track-changes", track_changes,
               "measure the database bytes each page write changes (db_bytes_changed; one "
               "uncounted read per page written: host time only)")
      ->group(kOutput);
  app.add_flag("--quiet", quiet, "no progress on stderr")->group(kOutput);
  app.add_option("--phase-cmd", o.phase_cmd,
                 "a shell command run as `CMD start` just before each measured phase and\n"
                 "`CMD end` just after it (e.g. to snapshot a device's own counters); the\n"
                 "run fails if it does")
      ->type_name("CMD")->group(kOutput);

  if (const int rc = cl.parse(argc, argv); rc >= 0) std::exit(rc);
  auto fail = [&](const std::string& msg) { std::exit(cl.error(msg)); };

  if (methods == "none") {
    o.methods.clear();
  } else if (methods_opt->count()) {
    std::string err;
    if (!parse_methods(methods, &o.methods, &err)) fail("--methods: " + err);
  }
  if (!journals.empty()) o.journals = split_list(journals);
  if (!commits.empty()) o.commits = split_list(commits);
  if (!chip.empty() && chip != "auto") (void)parse_size(chip, &o.chip_bytes);
  if (!warmup.empty() && warmup != "auto") o.warmup = std::strtoull(warmup.c_str(), nullptr, 10);
  if (!obsolete.empty()) o.uri_extra += "&obsolete=" + obsolete;
  if (!wear_level.empty()) o.uri_extra += "&wear_level=" + wear_level;
  if (track_changes) o.uri_extra += "&track_changes=on";
  if (!checkpoint.empty()) o.uri_extra += "&checkpoint=" + checkpoint;
  if (!table_cache.empty()) o.uri_extra += "&table_cache=" + table_cache;
  if (!sb_slots.empty()) o.sb_extra += "&sb_slots=" + sb_slots;
  if (!sb_recognition.empty()) o.sb_extra += "&sb_recognition=" + sb_recognition;
  if (!sb_flush.empty()) o.sb_extra += "&sb_flush=" + sb_flush;
  o.unix_reference = !no_unix;
  o.progress = !quiet;
  if (app.count("--sweep-cache")) {
    o.sweep_cache.clear();
    const cli::Validator size = cli::number(1e-6, 1000);
    for (std::string v : split_list(sweep_cache)) {
      if (const std::string why = size(v); !why.empty()) fail("--sweep-cache: " + why);
      o.sweep_cache.push_back(std::strtod(v.c_str(), nullptr));
    }
    if (o.sweep_cache.empty()) fail("--sweep-cache: no size given");
  }

  if (o.quick) {
    if (!scale->count()) o.scale = 0.05;
    if (!txns->count()) o.transactions = 1000;
  }
  // The sweep compares the methods of the paper's Fig. 14 unless told otherwise.
  if (o.sweep && !methods_opt->count()) {
    std::string err;
    (void)parse_methods("pdl,pdl2k,opu,ipl,ipl64k", &o.methods, &err);
  }
  if (o.warmup_max == 0) o.warmup_max = std::max<uint64_t>(20000, 20 * o.transactions);
  o.methods = with_commits(o.methods, o.commits);
  if (o.methods.empty() && !o.unix_reference) fail("--methods none with --no-unix: nothing to run");
  if (o.methods.empty() && o.sweep) fail("--sweep needs a method");
  if (!o.store.empty()) {
    if (o.methods.size() != 1)
      fail("--store runs one method: give one --methods and one --commit (" +
           std::to_string(o.methods.size()) + " members asked)");
    if (o.chip_bytes) fail("--store: the store has its own size; leave out --chip-size");
    if (!o.image_dir.empty()) fail("--store and --image-dir exclude each other");
  }
  if (const std::string why = check_chip(o); !why.empty()) fail(why);
  // The results files must be writable before the load and the runs, not after.
  for (const auto& [opt, file] : {std::pair{"--json", o.json}, std::pair{"--csv", o.csv}})
    if (!file.empty())
      if (Status st = check_output_file(file); !st.is_ok())
        fail(std::string(opt) + " " + std::string(st.message()));
  return o;
}

}  // namespace pdl::tpcc
