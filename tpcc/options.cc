// options.cc — see options.h.
#include "tpcc/options.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <utility>

#include "flash/common/output_file.h"
#include "flash/common/split.h"
#include "flash/image/image_params.h"
#include "flash/image/open_store.h"
#include "flash/volume/volume_format.h"

namespace pdl::tpcc {
namespace {

const char kUsage[] =
    "usage: pdl-tpcc [options]\n"
    "A TPC-C-like workload on SQLite through the pdl VFS: loads once, clones the database into\n"
    "a fresh emulated chip per page-update method, warms each up until garbage collection is\n"
    "active, runs the same transaction sequence on each and reports simulated flash I/O per\n"
    "transaction (PDL paper Table 1 timing), split into database pages and journal/WAL.\n"
    "\n"
    "  --warehouses N      warehouses (default 1)\n"
    "  --scale F           shrink items and customers by F, 0 < F <= 1 (default 1; --quick 0.05)\n"
    "  --methods LIST      pdl, pdl2k, opu, ipu, ipl, ipl64k or all (default pdl,opu,ipu,ipl;\n"
    "                      with --sweep the paper's Fig. 14 set: pdl,pdl2k,opu,ipl,ipl64k)\n"
    "  --journal-mode LIST SQLite journal modes (default delete,wal,memory)\n"
    "  --commit LIST       atomic (the journal in memory, each commit one atomic commit of the\n"
    "                      store) and/or journal (the journal on flash; IPU always)\n"
    "                      (default journal,atomic: both, side by side)\n"
    "  --transactions N    measured transactions per method (default 5000; --quick 1000)\n"
    "  --duration S        measure the first method for S seconds, the others as many\n"
    "  --cache-pct P       SQLite page cache, % of the database's pages (default 1)\n"
    "  --chip-size SIZE    chip size of every image, e.g. 64M (default: auto, data <= half)\n"
    "  --page-size BYTES   flash page = SQLite page (default 2048)\n"
    "  --warmup N          warm-up transactions (default: until each chip erased its blocks\n"
    "                      --gc-rounds times on average)\n"
    "  --gc-rounds R       warm-up target (default 1)\n"
    "  --warmup-max N      cap of the automatic warm-up (default 20 x --transactions)\n"
    "  --obsolete MODE     PDL/OPU obsolete marks: spare (the paper's) or memory (default)\n"
    "  --wear-level N|off  PDL/OPU static wear levelling: the erase-count spread that moves\n"
    "                      cold data (default 1024; off: none, free blocks FIFO)\n"
    "  --no-unix           skip the unix-VFS wall-clock reference\n"
    "  --seed N            data and transaction inputs (default 1)\n"
    "  --sweep             Exp. 7: I/O per transaction as the cache varies (--sweep-cache)\n"
    "  --sweep-cache LIST  cache sizes, % (default 0.1,0.2,0.5,1,2,5,10)\n"
    "  --json FILE         write all results as JSON\n"
    "  --csv FILE          write one row per journal mode, cache size and method\n"
    "  --image-dir DIR     keep the images: DIR/<method>.db (DIR/<journal>/<method>.db with\n"
    "                      several journal modes); open with file:DIR/pdl.db?vfs=pdl\n"
    "  --work-dir DIR      scratch directory (default /dev/shm, else /tmp)\n"
    "  --quick             --scale 0.05 --transactions 1000 unless given\n"
    "  --quiet             no progress on stderr\n"
    "  --help\n"
    "Exit status: 0 ok, 1 a run failed or a consistency check failed, 2 bad arguments.\n";

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "pdl-tpcc: %s\n%s", msg.c_str(), kUsage);
  std::exit(2);
}


double number(const std::string& opt, const std::string& v, double lo, double hi) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(d >= lo && d <= hi))
    usage_error(opt + " " + v + ": expected a number in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  return d;
}

uint64_t count(const std::string& opt, const std::string& v, uint64_t lo, uint64_t hi) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || v[0] == '-' || n < lo || n > hi)
    usage_error(opt + " " + v + ": expected an integer in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  return n;
}

// --chip-size against every method's image: the geometry (at least 8 erase blocks), the
// method's reserve and the volume's directory, as the first open would check them after the
// load.
void check_chip(const Options& o) {
  if (o.chip_bytes == 0) return;
  const std::string shown = "--chip-size " + format_size(o.chip_bytes);
  for (const MethodSpec& m : o.methods) {
    ImageParams p;
    Status st = p.set("size", format_size(o.chip_bytes));
    for (const std::string& kv : split_list(m.uri + o.uri_extra, '&')) {
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
    if (!st.is_ok()) usage_error(shown + " (" + m.key + "): " + std::string(st.message()));
  }
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  bool scale_set = false, txns_set = false, methods_set = false;
  std::set<std::string> seen;  // an option given twice is refused, not silently overridden
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) == 0 && !seen.insert(a).second) usage_error(a + " given twice");
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--warehouses") {
      o.warehouses = int(count(a, val(), 1, 1000));
    } else if (a == "--scale") {
      o.scale = number(a, val(), 1e-6, 1.0);
      scale_set = true;
    } else if (a == "--methods") {
      std::string err;
      if (!parse_methods(val(), &o.methods, &err)) usage_error("--methods: " + err);
      methods_set = true;
    } else if (a == "--journal-mode") {
      o.journals = split_list(val());
      for (const std::string& j : o.journals)
        if (j != "delete" && j != "truncate" && j != "persist" && j != "memory" && j != "wal" &&
            j != "off")
          usage_error("--journal-mode: unknown mode '" + j +
                      "' (delete, truncate, persist, memory, wal, off)");
      if (o.journals.empty()) usage_error("--journal-mode: no mode given");
    } else if (a == "--commit") {
      o.commits = split_list(val());
      for (const std::string& c : o.commits)
        if (c != "atomic" && c != "journal")
          usage_error("--commit: unknown mode '" + c + "' (atomic, journal)");
      if (o.commits.empty()) usage_error("--commit: no mode given");
    } else if (a == "--transactions") {
      o.transactions = count(a, val(), 1, 1ull << 40);
      txns_set = true;
    } else if (a == "--duration") {
      o.duration_s = number(a, val(), 0.001, 1e7);
    } else if (a == "--cache-pct") {
      o.cache_pct = number(a, val(), 1e-6, 1000);
    } else if (a == "--chip-size") {
      const std::string v = val();
      if (v != "auto" && !parse_size(v, &o.chip_bytes))
        usage_error("--chip-size " + v + ": expected a size such as 64M or 1G");
    } else if (a == "--page-size") {
      o.page = uint32_t(count(a, val(), 512, 32768));
      if ((o.page & (o.page - 1)) != 0) usage_error("--page-size: must be a power of two");
    } else if (a == "--warmup") {
      const std::string v = val();
      o.warmup = v == "auto" ? 0 : count(a, v, 1, 1ull << 40);
    } else if (a == "--gc-rounds") {
      o.gc_rounds = number(a, val(), 0, 1000);
    } else if (a == "--warmup-max") {
      o.warmup_max = count(a, val(), 1, 1ull << 40);
    } else if (a == "--obsolete") {
      const std::string v = val();
      if (v != "spare" && v != "memory") usage_error("--obsolete: spare or memory");
      o.uri_extra += "&obsolete=" + v;
    } else if (a == "--wear-level") {
      const std::string v = val();
      if (v != "off") count(a, v, 1, 1000000000);
      o.uri_extra += "&wear_level=" + v;
    } else if (a == "--no-unix") {
      o.unix_reference = false;
    } else if (a == "--seed") {
      o.seed = count(a, val(), 0, ~0ull);
    } else if (a == "--sweep") {
      o.sweep = true;
    } else if (a == "--sweep-cache") {
      o.sweep_cache.clear();
      for (const std::string& v : split_list(val()))
        o.sweep_cache.push_back(number(a, v, 1e-6, 1000));
      if (o.sweep_cache.empty()) usage_error("--sweep-cache: no size given");
    } else if (a == "--json") {
      o.json = val();
    } else if (a == "--csv") {
      o.csv = val();
    } else if (a == "--image-dir") {
      o.image_dir = val();
    } else if (a == "--work-dir") {
      o.work_dir = val();
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--quiet") {
      o.progress = false;
    } else {
      usage_error("unknown option " + a);
    }
  }
  if (o.quick) {
    if (!scale_set) o.scale = 0.05;
    if (!txns_set) o.transactions = 1000;
  }
  // The sweep compares the methods of the paper's Fig. 14 unless told otherwise.
  if (o.sweep && !methods_set) {
    std::string err;
    (void)parse_methods("pdl,pdl2k,opu,ipl,ipl64k", &o.methods, &err);
  }
  if (o.warmup_max == 0) o.warmup_max = std::max<uint64_t>(20000, 20 * o.transactions);
  o.methods = with_commits(o.methods, o.commits);
  check_chip(o);
  // The results files must be writable before the load and the runs, not after.
  for (const auto& [opt, file] : {std::pair{"--json", o.json}, std::pair{"--csv", o.csv}})
    if (!file.empty())
      if (Status st = check_output_file(file); !st.is_ok())
        usage_error(std::string(opt) + " " + std::string(st.message()));
  return o;
}

}  // namespace pdl::tpcc
