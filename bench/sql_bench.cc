// sql_bench.cc — pdl-sqlbench: SQLite micro-benchmarks on the pdl VFS, per page-update method,
// against the unix VFS in the same run.
//
// For each journal mode (default DELETE and WAL), method, commit mode (default journal — the
// rollback journal on flash — and atomic — the journal in memory, each commit one atomic commit
// of the store) and obsolete mode (default the images' own, memory), on a fresh image:
//   insert  N single-row transactions (autocommit) into t(id INTEGER PRIMARY KEY, a, b), b a
//           text of --row-bytes bytes (default 100);
//   update  N single-row transactions, rows chosen by a seeded generator.
// Reported per committed transaction: simulated flash µs (PDL paper Table 1 timing), flash
// programs / reads / erases / bytes programmed — in total and split into database, journal or
// WAL, directory (Volume metadata) and GC (cost.h's attribution rule) — and host wall µs. The
// same statements run on the unix VFS on a file in the same directory (tmpfs by default), and
// the ratio unix_wall / pdl_wall is printed: > 1 means pdl ran faster than unix on the host.
// Flash time is simulated, never slept, so the wall ratio measures the software stack.
//
// Exit status: 0 success, 1 SQLite or engine error (message printed), 2 bad arguments.
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "flash/common/c_edge.h"
#include "flash/common/split.h"
#include "flash/common/json.h"
#include "flash/common/output_file.h"
#include "flash/common/scratch_dir.h"
#include "flash/image/image.h"
#include "vfs/pdl_vfs.h"

namespace {

using Clock = std::chrono::steady_clock;

const char kUsage[] =
    "usage: pdl-sqlbench [options]\n"
    "  --rows N          transactions per phase (default 10000)\n"
    "  --methods LIST    page-update methods, comma-separated (default pdl,opu)\n"
    "  --journal LIST    journal modes, comma-separated (default delete,wal)\n"
    "  --commit LIST     journal (on flash) and/or atomic (in memory) (default journal,atomic)\n"
    "  --obsolete LIST   PDL/OPU obsolete marks: spare and/or memory (default memory, the\n"
    "                    images' own; spare is the paper's and pdl's before atomic commit)\n"
    "  --row-bytes N     bytes of text per row (default 100)\n"
    "  --dir DIR         where images and the unix database go (default /dev/shm, else /tmp)\n"
    "  --size SIZE       chip size for new images (default 256M)\n"
    "  --uri-extra S     extra URI parameters for pdl images, e.g. '&max_diff=2048'\n"
    "  --json FILE       also write the results as JSON\n"
    "  --seed N          update row choice (default 1)\n"
    "  --help\n";

struct Options {
  int rows = 10000;
  int row_bytes = 100;
  std::vector<std::string> methods{"pdl", "opu"}, journals{"delete", "wal"};
  std::vector<std::string> commits{"journal", "atomic"}, obsoletes{"memory"};
  std::string dir, size = "256M", extra, json;
  uint64_t seed = 1;
};


struct Fail {
  std::string msg;
};

void check(sqlite3* db, int rc, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
    throw Fail{std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc))};
}

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "?";
    sqlite3_free(err);
    throw Fail{sql + ": " + m};
  }
}

// Per-phase flash figures (totals over the phase; divided by rows when printed).
struct Flash {
  double sim_us = 0, programs = 0, reads = 0, erases = 0, bytes_programmed = 0;
  double kind_sim_us[pdl::kFileKinds] = {}, kind_programs[pdl::kFileKinds] = {};
  double gc_sim_us = 0, other_sim_us = 0, gc_programs = 0, other_programs = 0;
  uint64_t bytes_written[pdl::kFileKinds] = {}, bytes_changed[pdl::kFileKinds] = {};
};

Flash read_flash(pdl::Image& img) {
  Flash f;
  const pdl::VolumeStats vs = img.volume->stats();
  auto lock = img.volume->lock();
  pdl::PageStore& st = img.volume->store();
  const pdl::NandCounters& c = img.nand->counters();
  f.sim_us = double(c.sim_us);
  f.programs = double(c.programs);
  f.reads = double(c.page_reads + c.spare_reads);
  f.erases = double(c.erases);
  f.bytes_programmed = double(c.bytes_programmed);
  const pdl::CostBreakdown& cb = st.costs();
  for (unsigned k = 0; k < pdl::kFileKinds; k++) {
    f.kind_sim_us[k] = cb.cls[k].flash.sim_us;
    f.kind_programs[k] = cb.cls[k].flash.programs;
    f.bytes_written[k] = vs.kind[k].bytes_written;
    f.bytes_changed[k] = vs.kind[k].bytes_changed;
  }
  f.gc_sim_us = cb.gc.sim_us;
  f.other_sim_us = cb.other.sim_us;
  f.gc_programs = cb.gc.programs;
  f.other_programs = cb.other.programs;
  return f;
}

struct Phase {
  std::string vfs, method, journal, phase, commit, obsolete;
  double wall_us_per_txn = 0;
  bool has_flash = false;
  Flash flash;
};

// Runs the insert and update phases on `uri`; flash figures if `image_path` is a pdl image.
std::vector<Phase> run(const Options& o, const std::string& uri, const std::string& vfs,
                       const std::string& method, const std::string& journal,
                       const std::string& image_path, const std::string& commit = "",
                       const std::string& obsolete = "") {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(uri.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    std::string m = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    throw Fail{"open " + uri + ": " + m + " " + pdl::vfs::last_error()};
  }
  std::vector<Phase> out;
  try {
    exec(db, "PRAGMA journal_mode=" + journal);
    exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT)");
    pdl::Image* img = image_path.empty() ? nullptr : pdl::vfs::image_of(image_path);
    if (!image_path.empty() && !img) throw Fail{"image not registered: " + image_path};
    sqlite3_stmt *ins = nullptr, *upd = nullptr;
    check(db, sqlite3_prepare_v2(db, "INSERT INTO t(a, b) VALUES (?1, ?2)", -1, &ins, nullptr),
          "prepare");
    check(db, sqlite3_prepare_v2(db, "UPDATE t SET a = a + 1, b = ?2 WHERE id = ?1", -1, &upd,
                                 nullptr),
          "prepare");
    std::mt19937_64 rng(o.seed);
    std::string text;
    for (int phase = 0; phase < 2; phase++) {
      if (img) exec(db, "PRAGMA pdl_stats_reset");
      const auto t0 = Clock::now();
      sqlite3_stmt* s = phase == 0 ? ins : upd;
      for (int i = 0; i < o.rows; i++) {
        // "row I phase P <hex>" padded with letters to --row-bytes.
        char head[64];
        std::snprintf(head, sizeof head, "row %d phase %d %016llx ", i, phase,
                      (unsigned long long)rng());
        text = head;
        while (text.size() < size_t(o.row_bytes)) text += char('a' + text.size() % 26);
        text.resize(size_t(o.row_bytes));
        sqlite3_bind_int64(s, 1, phase == 0 ? i : 1 + int64_t(rng() % uint64_t(o.rows)));
        sqlite3_bind_text(s, 2, text.c_str(), int(text.size()), SQLITE_TRANSIENT);
        check(db, sqlite3_step(s), phase == 0 ? "insert" : "update");
        sqlite3_reset(s);
      }
      Phase p;
      p.vfs = vfs;
      p.method = method;
      p.journal = journal;
      // What the store does, not what was asked: IPU keeps its journal on flash.
      p.commit = img ? (img->volume->atomic() ? "atomic" : "journal") : commit;
      p.obsolete = obsolete;
      p.phase = phase == 0 ? "insert" : "update";
      p.wall_us_per_txn =
          std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / o.rows;
      if (img) {
        p.has_flash = true;
        p.flash = read_flash(*img);
      }
      out.push_back(p);
    }
    sqlite3_finalize(ins);
    sqlite3_finalize(upd);
  } catch (...) {
    sqlite3_close(db);
    throw;
  }
  check(db, sqlite3_close(db), "close");
  return out;
}

}  // namespace

static int run(int argc, char** argv) {
  Options o;
  std::set<std::string> seen;  // an option given twice is refused, not silently overridden
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "pdl-sqlbench: %s needs a value\n%s", a.c_str(), kUsage);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a.rfind("--", 0) == 0 && !seen.insert(a).second) {
      std::fprintf(stderr, "pdl-sqlbench: %s given twice\n", a.c_str());
      return 2;
    }
    if (a == "--rows") o.rows = std::atoi(val().c_str());
    else if (a == "--methods") o.methods = pdl::split_list(val());
    else if (a == "--journal") o.journals = pdl::split_list(val());
    else if (a == "--commit") o.commits = pdl::split_list(val());
    else if (a == "--obsolete") o.obsoletes = pdl::split_list(val());
    else if (a == "--row-bytes") o.row_bytes = std::atoi(val().c_str());
    else if (a == "--dir") o.dir = val();
    else if (a == "--size") o.size = val();
    else if (a == "--uri-extra") o.extra = val();
    else if (a == "--json") o.json = val();
    else if (a == "--seed") o.seed = std::strtoull(val().c_str(), nullptr, 10);
    else if (a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "pdl-sqlbench: unknown option %s\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (o.rows <= 0 || o.row_bytes < 1 || o.row_bytes > 100000) {
    std::fprintf(stderr, "pdl-sqlbench: --rows must be positive, --row-bytes 1 .. 100000\n");
    return 2;
  }
  for (const std::string& c : o.commits)
    if (c != "journal" && c != "atomic") {
      std::fprintf(stderr, "pdl-sqlbench: --commit: journal or atomic, not '%s'\n", c.c_str());
      return 2;
    }
  for (const std::string& b : o.obsoletes)
    if (b != "spare" && b != "memory") {
      std::fprintf(stderr, "pdl-sqlbench: --obsolete: spare or memory, not '%s'\n", b.c_str());
      return 2;
    }
  {  // the chip size and the results file, before any run
    pdl::ImageParams p;
    pdl::Status st = p.set("size", o.size);
    if (st.is_ok()) st = p.geometry().validate();
    if (!st.is_ok()) {
      std::fprintf(stderr, "pdl-sqlbench: --size: %s\n", std::string(st.message()).c_str());
      return 2;
    }
    if (!o.json.empty()) st = pdl::check_output_file(o.json);
    if (!st.is_ok()) {
      std::fprintf(stderr, "pdl-sqlbench: --json %s\n", std::string(st.message()).c_str());
      return 2;
    }
  }
  if (o.dir.empty()) o.dir = pdl::default_scratch_root();
  std::string work;
  if (pdl::Status st = pdl::make_scratch_dir(o.dir, "pdl-sqlbench", &work); !st.is_ok()) {
    std::fprintf(stderr, "pdl-sqlbench: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  if (pdl::vfs::register_vfs() != SQLITE_OK) {
    std::fprintf(stderr, "pdl-sqlbench: cannot register the pdl VFS\n");
    return 1;
  }
  std::vector<Phase> all;
  int status = 0;
  try {
    for (const std::string& j : o.journals) {
      const std::string unix_path = work + "/unix-" + j + ".db";
      std::fprintf(stderr, "unix %s ...\n", j.c_str());
      auto r = run(o, "file:" + unix_path + "?vfs=unix", "unix", "-", j, "");
      all.insert(all.end(), r.begin(), r.end());
      for (const std::string& m : o.methods)
        for (const std::string& c : o.commits)
          for (const std::string& b : o.obsoletes) {
            const bool marks = m == "pdl" || m == "opu";  // IPU and IPL have none
            if (!marks && b != o.obsoletes.front()) continue;
            // IPU has no atomic commit: its journal is on flash whatever is asked (once).
            if (m == "ipu" && c != o.commits.front()) continue;
            const std::string img = work + "/" + m + "-" + j + ".db";
            std::fprintf(stderr, "pdl %s %s commit=%s obsolete=%s ...\n", m.c_str(), j.c_str(),
                         c.c_str(), b.c_str());
            r = run(o, "file:" + img + "?vfs=pdl&method=" + m + "&size=" + o.size +
                           "&clock=logical&commit=" + c + (marks ? "&obsolete=" + b : "") +
                           o.extra,
                    "pdl", m, j, img, c, marks ? b : "-");
            all.insert(all.end(), r.begin(), r.end());
            unlink(img.c_str());
          }
      unlink(unix_path.c_str());
      unlink((unix_path + "-wal").c_str());
      unlink((unix_path + "-shm").c_str());
    }
  } catch (const Fail& f) {
    std::fprintf(stderr, "pdl-sqlbench: %s\n", f.msg.c_str());
    status = 1;
  }
  rmdir(work.c_str());
  if (status) return status;

  std::printf("pdl-sqlbench: %d single-row transactions per phase, %d-byte rows; chip %s; "
              "images in %s\n", o.rows, o.row_bytes, o.size.c_str(), o.dir.c_str());
  std::printf("Per committed transaction. sim_us = simulated flash time (PDL paper Table 1); "
              "programs split db/jrnl/dir/gc by file kind (cost.h; marks with the pages they\n"
              "obsolete); wall_us = host time; speed = unix wall / pdl wall in the same run "
              "(> 1: pdl faster).\n\n");
  std::printf("%-7s %-6s %-7s %-6s %-7s %9s %8s %6s %6s %6s %6s %7s %7s %7s %9s %6s\n",
              "journal", "method", "commit", "marks", "phase", "sim_us", "programs", "db", "jrnl",
              "dir", "gc", "reads", "erases", "KiB_pgm", "wall_us", "speed");
  std::vector<std::string> json;
  for (const Phase& p : all) {
    double unix_wall = 0;
    for (const Phase& q : all)
      if (q.vfs == "unix" && q.journal == p.journal && q.phase == p.phase)
        unix_wall = q.wall_us_per_txn;
    const double n = o.rows;
    pdl::JsonObj rec;
    rec.s("vfs", p.vfs).s("method", p.method).s("journal", p.journal).s("phase", p.phase)
        .s("commit", p.commit).s("obsolete", p.obsolete).u("row_bytes", uint64_t(o.row_bytes))
        .u("transactions", uint64_t(o.rows)).n("wall_us_per_txn", p.wall_us_per_txn);
    if (!p.has_flash) {
      std::printf("%-7s %-6s %-7s %-6s %-7s %9s %8s %6s %6s %6s %6s %7s %7s %7s %9.1f %6s\n",
                  p.journal.c_str(), "unix", "-", "-", p.phase.c_str(), "-", "-", "-", "-", "-",
                  "-", "-", "-", "-", p.wall_us_per_txn, "1.00");
      json.push_back(rec.str());
      continue;
    }
    const Flash& f = p.flash;
    const unsigned jk = p.journal == "wal" ? unsigned(pdl::FileKind::kWal)
                                           : unsigned(pdl::FileKind::kJournal);
    const double jrnl = f.kind_sim_us[unsigned(pdl::FileKind::kJournal)] +
                        f.kind_sim_us[unsigned(pdl::FileKind::kWal)];
    const double speed = unix_wall / p.wall_us_per_txn;
    const double jrnl_pg = f.kind_programs[unsigned(pdl::FileKind::kJournal)] +
                           f.kind_programs[unsigned(pdl::FileKind::kWal)];
    std::printf("%-7s %-6s %-7s %-6s %-7s %9.1f %8.2f %6.2f %6.2f %6.2f %6.2f %7.2f %7.4f %7.2f "
                "%9.1f %6.2f\n",
                p.journal.c_str(), p.method.c_str(), p.commit.c_str(), p.obsolete.c_str(),
                p.phase.c_str(), f.sim_us / n, f.programs / n,
                f.kind_programs[unsigned(pdl::FileKind::kDatabase)] / n, jrnl_pg / n,
                f.kind_programs[unsigned(pdl::FileKind::kDirectory)] / n, f.gc_programs / n,
                f.reads / n, f.erases / n, f.bytes_programmed / n / 1024.0, p.wall_us_per_txn,
                speed);
    rec.n("sim_us_per_txn", f.sim_us / n)
        .n("db_sim_us_per_txn", f.kind_sim_us[unsigned(pdl::FileKind::kDatabase)] / n)
        .n("journal_sim_us_per_txn", jrnl / n)
        .n("directory_sim_us_per_txn", f.kind_sim_us[unsigned(pdl::FileKind::kDirectory)] / n)
        .n("gc_sim_us_per_txn", f.gc_sim_us / n)
        .n("programs_per_txn", f.programs / n)
        .n("db_programs_per_txn", f.kind_programs[unsigned(pdl::FileKind::kDatabase)] / n)
        .n("journal_programs_per_txn", jrnl_pg / n)
        .n("directory_programs_per_txn", f.kind_programs[unsigned(pdl::FileKind::kDirectory)] / n)
        .n("gc_programs_per_txn", f.gc_programs / n)
        .n("other_programs_per_txn", f.other_programs / n)
        .n("reads_per_txn", f.reads / n)
        .n("erases_per_txn", f.erases / n)
        .n("bytes_programmed_per_txn", f.bytes_programmed / n)
        .n("db_bytes_written_per_txn", double(f.bytes_written[0]) / n)
        .n("db_bytes_changed_per_txn", double(f.bytes_changed[0]) / n)
        .n("journal_bytes_written_per_txn", double(f.bytes_written[jk]) / n)
        .n("unix_wall_us_per_txn", unix_wall)
        .n("speed_vs_unix", speed);
    json.push_back(rec.str());
  }
  if (!o.json.empty()) {
    FILE* fp = std::fopen(o.json.c_str(), "w");
    if (!fp) {
      std::fprintf(stderr, "pdl-sqlbench: cannot write %s\n", o.json.c_str());
      return 1;
    }
    std::fputs("[\n", fp);
    for (size_t i = 0; i < json.size(); i++)
      std::fprintf(fp, "  %s%s\n", json[i].c_str(), i + 1 < json.size() ? "," : "");
    std::fputs("]\n", fp);
    std::fclose(fp);
  }
  return 0;
}

int main(int argc, char** argv) {
  return pdl::guarded_main("pdl-sqlbench", run, argc, argv, 1);
}
