// pdl_tpcc.cc — pdl-tpcc: a TPC-C-like workload on SQLite comparing page-update methods in one
// run (PDL paper Exp. 7), the project's main job (`./run demo` = pdl-tpcc --quick).
//
// 1. Load the database once on the unix VFS (loader.h), page size = flash page.
// 2. Per journal mode: clone it into a fresh emulated chip per method (Fleet), warm up until
//    garbage collection is active on every chip, run the same transactions on each, check
//    the TPC-C consistency conditions, integrity_check and that every method ended with the
//    same content; print the comparison (report.h).
// 3. --sweep: Exp. 7, I/O per transaction as SQLite's cache varies from 0.1% to 10% of the
//    database (one warm-up, then the cache sizes in turn on the same fleet).
// Exit status: 0 ok, 1 a run or a check failed (message on stderr), 2 bad arguments.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "flash/common/c_edge.h"
#include "flash/common/scratch_dir.h"
#include "flash/image/image_params.h"
#include "tpcc/session.h"
#include "vfs/pdl_vfs.h"

using namespace pdl;
using namespace pdl::tpcc;

namespace {

using Clock = std::chrono::steady_clock;

bool make_dir(const std::string& d) {
  struct stat st;
  if (stat(d.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
  return mkdir(d.c_str(), 0755) == 0;
}

std::string absolute(const std::string& p) {
  char buf[4096];
  return realpath(p.c_str(), buf) ? std::string(buf) : p;
}

// A progress bar on a terminal, a line per table otherwise.
class LoadBar {
 public:
  LoadBar(uint64_t total, bool on) : total_(total), on_(on), tty_(isatty(2)) {}
  void update(const char* table, uint64_t done, uint64_t table_total) {
    if (!on_) return;
    done_[table] = done;
    uint64_t all = 0;
    for (auto& [t, n] : done_) all += n;
    const double frac = total_ ? std::min(1.0, double(all) / double(total_)) : 1.0;
    if (tty_) {
      char bar[41];
      const int fill = int(frac * 40);
      for (int i = 0; i < 40; i++) bar[i] = i < fill ? '#' : '.';
      bar[40] = 0;
      std::fprintf(stderr, "\rloading [%s] %3.0f%%  %-10s %9llu rows ", bar, frac * 100, table,
                   (unsigned long long)done);
    } else if (done == table_total) {
      std::fprintf(stderr, "loading: %-10s %9llu rows (%3.0f%% of all)\n", table,
                   (unsigned long long)done, frac * 100);
    }
  }
  void finish() {
    if (on_ && tty_) std::fprintf(stderr, "\n");
  }

 private:
  uint64_t total_;
  bool on_, tty_;
  std::map<std::string, uint64_t> done_;
};

}  // namespace

static int run(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  const Scale scale = Scale::make(o.warehouses, o.scale);
  std::string scratch;
  if (Status st = make_scratch_dir(o.work_dir, "pdl-tpcc", &scratch); !st.is_ok()) {
    std::fprintf(stderr, "pdl-tpcc: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  const std::string work = absolute(scratch);
  std::string image_root = work;
  if (!o.image_dir.empty()) {
    if (!make_dir(o.image_dir)) {
      std::fprintf(stderr, "pdl-tpcc: cannot use --image-dir %s\n", o.image_dir.c_str());
      rmdir(work.c_str());
      return 2;
    }
    image_root = absolute(o.image_dir);
  }
  int status = 0;
  std::vector<RunResult> runs, sweep;
  ReportContext ctx;
  ctx.scale = scale;
  ctx.seed = o.seed;
  std::vector<std::string> dirs;
  const std::string source = work + "/load.db";
  LoadBar bar(scale.total_rows(), o.progress);
  Status st = load_source(o, scale, source,
                          [&](const char* t, uint64_t d, uint64_t n) { bar.update(t, d, n); },
                          &ctx.load_s, &ctx.loaded_pages);
  bar.finish();
  if (st.is_ok())
    std::printf("pdl-tpcc: %s, seed %llu: loaded about %llu rows (%llu pages of %u bytes) in "
                "%.1f s on the unix VFS\n", scale.describe().c_str(), (unsigned long long)o.seed,
                (unsigned long long)scale.total_rows(), (unsigned long long)ctx.loaded_pages,
                o.page, ctx.load_s);
  // (--store: the store's own size, reported from its geometry)
  const uint64_t chip =
      !o.store.empty() ? 0 : st.is_ok() ? chip_bytes_for(o, ctx.loaded_pages) : o.chip_bytes;
  if (st.is_ok() && !o.unix_dir.empty() && !make_dir(o.unix_dir))
    st = Status::error(Errc::kIoError, "cannot use --unix-dir " + o.unix_dir);
  for (size_t j = 0; st.is_ok() && j < o.journals.size(); j++) {
    const FleetConfig cfg = fleet_config(
        o, scale, o.journals[j], chip,
        o.journals.size() > 1 ? image_root + "/" + o.journals[j] : image_root);
    if (!make_dir(cfg.dir)) {
      st = Status::error(Errc::kIoError, "cannot create " + cfg.dir);
      break;
    }
    dirs.push_back(cfg.dir);
    if (o.sweep) {
      st = run_journal(o, cfg, source, true, &sweep);
    } else {
      st = run_journal(o, cfg, source, false, &runs);
      if (st.is_ok()) print_run(stdout, ctx, runs.back());
    }
    std::fflush(stdout);
  }
  if (!st.is_ok()) {
    std::fprintf(stderr, "pdl-tpcc: %s\n", st.to_string().c_str());
    if (st.is(Errc::kFull))
      std::fprintf(stderr, "pdl-tpcc: the chip (%s) is too small for this run: give a larger "
                           "--chip-size, or leave it out (auto)\n", format_size(chip).c_str());
    status = 1;
  }
  if (runs.size() > 1) print_summary(stdout, runs);
  if (!sweep.empty()) print_sweep(stdout, sweep);
  std::string why;
  if (status == 0 && (!checks_ok(runs, &why) || !checks_ok(sweep, &why))) {
    std::fprintf(stderr, "pdl-tpcc: check failed: %s\n", why.c_str());
    status = 1;
  }
  if (!o.json.empty() || !o.csv.empty()) {
    for (const auto& [file, text] : {std::pair{o.json, json_report(ctx, runs, sweep)},
                                     std::pair{o.csv, csv_report(runs, sweep)}}) {
      if (file.empty()) continue;
      FILE* f = std::fopen(file.c_str(), "w");
      if (!f || std::fputs(text.c_str(), f) < 0 || std::fclose(f) != 0) {
        std::fprintf(stderr, "pdl-tpcc: cannot write %s\n", file.c_str());
        status = 1;
      }
    }
  }
  // Clean up: the loaded database always; the images unless --image-dir.
  unlink(source.c_str());
  if (o.image_dir.empty()) {
    for (const std::string& d : dirs) {
      for (const MethodSpec& m : o.methods)
        for (const char* sfx : {"", "-journal", "-wal", "-shm"})
          unlink((d + "/" + m.key + ".db" + sfx).c_str());
      for (const char* sfx : {"", "-journal", "-wal", "-shm"})
        unlink((d + "/unix.db" + sfx).c_str());
      if (d != work) rmdir(d.c_str());
    }
    if (!o.unix_dir.empty())
      for (const char* sfx : {"", "-journal", "-wal", "-shm"})
        unlink((o.unix_dir + "/unix.db" + sfx).c_str());
  } else if (status == 0) {
    std::printf("\nimages kept in %s (open with file:%s/%s.db?vfs=pdl)\n", image_root.c_str(),
                dirs.empty() ? image_root.c_str() : dirs.front().c_str(),
                o.methods.empty() ? "unix" : o.methods.front().key.c_str());
  }
  if (!o.store.empty() && status == 0)
    std::printf("\nthe database stays in the store: file:%s?vfs=pdl&db=%s.db\n", o.store.c_str(),
                o.methods.front().key.c_str());
  rmdir(work.c_str());
  return status;
}

int main(int argc, char** argv) {
  return pdl::guarded_main("pdl-tpcc", run, argc, argv, 1);
}
