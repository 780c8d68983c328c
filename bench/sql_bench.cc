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
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/row_txns.h"
#include "cli/app.h"
#include "flash/common/c_edge.h"
#include "flash/common/split.h"
#include "flash/common/json.h"
#include "flash/common/output_file.h"
#include "flash/common/scratch_dir.h"
#include "flash/image/image.h"
#include "flash/image/methods.h"
#include "sql/sql.h"
#include "vfs/pdl_vfs.h"

namespace {

using Clock = std::chrono::steady_clock;

const char kDescription[] =
    "SQLite single-row transactions (insert, then update) on the pdl VFS, per page-update\n"
    "method, journal mode, commit mode and obsolete mode, against the unix VFS in the same run.";
const char kExitStatus[] =
    "exit status: 0 ok, 1 SQLite or engine error (message printed), 2 usage error.";

struct Options {
  int rows = 10000;
  int row_bytes = 100;
  std::vector<std::string> methods{"pdl", "opu"}, journals{"delete", "wal"};
  std::vector<std::string> commits{"journal", "atomic"}, obsoletes{"memory"};
  std::string dir, size = "256M", extra, json;
  uint64_t seed = 1;
};


// Per-phase flash figures (totals over the phase; divided by rows when printed).
struct Flash {
  double sim_us = 0, programs = 0, reads = 0, erases = 0, bytes_programmed = 0;
  double kind_sim_us[pdl::kFileKinds] = {}, kind_programs[pdl::kFileKinds] = {};
  double gc_sim_us = 0, other_sim_us = 0, gc_programs = 0, other_programs = 0;
  uint64_t bytes_written[pdl::kFileKinds] = {}, bytes_changed[pdl::kFileKinds] = {};
  bool changes_tracked = false;  // URI track_changes=on (--uri-extra)
  // NVM beside the chip (its accesses' time is in sim_us) and the store's merges (IPL).
  double nvm_writes = 0, nvm_bytes_written = 0, nvm_reads = 0, nvm_us = 0, merges = 0;
  uint64_t nvm_bytes = 0;  // the device's NVM (a size, not a count)
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
  f.nvm_writes = double(c.nvm_writes);
  f.nvm_bytes_written = double(c.nvm_bytes_written);
  f.nvm_reads = double(c.nvm_reads);
  f.nvm_us = double(c.nvm_ns) / 1000.0;
  f.nvm_bytes = img.nand->geometry().nvm_bytes;
  f.merges = double(st.stats().merges);
  const pdl::CostBreakdown& cb = st.costs();
  for (unsigned k = 0; k < pdl::kFileKinds; k++) {
    f.kind_sim_us[k] = cb.cls[k].flash.sim_us;
    f.kind_programs[k] = cb.cls[k].flash.programs;
    f.bytes_written[k] = vs.kind[k].bytes_written;
    f.bytes_changed[k] = vs.kind[k].bytes_changed;
  }
  f.changes_tracked = vs.changes_tracked;
  f.gc_sim_us = cb.gc.sim_us;
  f.other_sim_us = cb.other.sim_us;
  f.gc_programs = cb.gc.programs;
  f.other_programs = cb.other.programs;
  return f;
}

struct Phase {
  std::string vfs, method, label, journal, phase, commit, obsolete;
  double wall_us_per_txn = 0;
  bool has_flash = false;
  Flash flash;
};

// Runs the insert and update phases on `uri`, appending to *out; flash figures if `image_path`
// is a pdl image.
pdl::Status run(const Options& o, const std::string& uri, const std::string& vfs,
                const std::string& method, const std::string& journal,
                const std::string& image_path, std::vector<Phase>* out,
                const std::string& commit = "", const std::string& obsolete = "",
                const std::string& label = "") {
  pdl::sql::Db db;
  PDL_TRY(db.open(uri));
  PDL_TRY(db.exec("PRAGMA journal_mode=" + journal));
  pdl::Image* img = image_path.empty() ? nullptr : pdl::vfs::image_of(image_path);
  if (!image_path.empty() && !img)
    return pdl::Status::error(pdl::Errc::kNotFound, "image not registered: " + image_path);
  pdl::bench::RowTxns work(o.rows, o.row_bytes, o.seed);
  PDL_TRY(work.prepare(db));
  for (int phase = 0; phase < 2; phase++) {
    if (img) PDL_TRY(db.exec("PRAGMA pdl_stats_reset"));
    const auto t0 = Clock::now();
    PDL_TRY(work.run_phase(phase));
    Phase p;
    p.vfs = vfs;
    p.method = method;
    p.label = label.empty() ? method : label;
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
    out->push_back(p);
  }
  return db.close();
}

}  // namespace

static int run(int argc, char** argv) {
  Options o;
  pdl::cli::CommandLine cl({"pdl-sqlbench", {"[options]"}, kDescription, kExitStatus});
  pdl::cli::App& app = cl.app();
  std::string methods, journals, commits, obsoletes;
  app.add_option("--rows", o.rows, "transactions per phase")
      ->type_name("N")->check(pdl::cli::integer(1, INT32_MAX))->capture_default_str();
  app.add_option("--methods", methods,
                 "page-update methods, comma-separated (pdl, opu, ipu, ipl: the\n"
                 "images' defaults), or catalogue keys: pdl256, ipl18k, ...; FTL devices\n"
                 "(ftl-page, bast16, bast32, fast16, fast32, sb-page, sb-bast16,\n"
                 "sb-fast16: the journal on the device); NVM beside the chip (pdl-nvm,\n"
                 "pdl2k-nvm, ipl-pcram, ipl-pcram512: the chip gets the NVM the entry\n"
                 "uses)")
      ->type_name("LIST")->default_str("pdl,opu");
  app.add_option("--journal", journals, "journal modes, comma-separated")
      ->type_name("LIST")->default_str("delete,wal");
  app.add_option("--commit", commits, "journal (on flash) and/or atomic (in memory)")
      ->type_name("LIST")->check(pdl::cli::list_of({"journal", "atomic"}, "commit mode"))
      ->default_str("journal,atomic");
  app.add_option("--obsolete", obsoletes,
                 "PDL/OPU obsolete marks: spare and/or memory (memory is the\n"
                 "images' own; spare is the paper's and pdl's before atomic commit)")
      ->type_name("LIST")->check(pdl::cli::list_of({"spare", "memory"}, "obsolete mode"))
      ->default_str("memory");
  app.add_option("--row-bytes", o.row_bytes, "bytes of text per row")
      ->type_name("N")->check(pdl::cli::integer(1, 100000))->capture_default_str();
  app.add_option("--dir", o.dir, "where images and the unix database go")
      ->type_name("DIR")->default_str("/dev/shm, else /tmp");
  app.add_option("--size", o.size, "chip size for new images")
      ->type_name("SIZE")->capture_default_str();
  app.add_option("--uri-extra", o.extra, "extra URI parameters for pdl images, e.g. '&max_diff=2048', '&track_changes=on'")
      ->type_name("S");
  app.add_option("--json", o.json, "also write the results as JSON")->type_name("FILE");
  app.add_option("--seed", o.seed, "update row choice")
      ->type_name("N")->check(pdl::cli::integer(0, UINT64_MAX))->capture_default_str();
  if (const int rc = cl.parse(argc, argv); rc >= 0) return rc;
  if (!methods.empty()) o.methods = pdl::split_list(methods);
  if (!journals.empty()) o.journals = pdl::split_list(journals);
  if (!commits.empty()) o.commits = pdl::split_list(commits);
  if (!obsoletes.empty()) o.obsoletes = pdl::split_list(obsoletes);
  uint64_t chip_bytes = 0;
  {  // the chip size and the results file, before any run
    pdl::ImageParams p;
    pdl::Status st = p.set("size", o.size);
    if (st.is_ok()) st = p.geometry().validate();
    if (!st.is_ok()) return cl.error("--size: " + std::string(st.message()));
    chip_bytes = *p.size;
    if (!o.json.empty()) st = pdl::check_output_file(o.json);
    if (!st.is_ok()) return cl.error("--json " + std::string(st.message()));
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
  pdl::sql::set_open_detail(pdl::vfs::last_error);
  std::vector<Phase> all;
  pdl::Status st;
  for (const std::string& j : o.journals) {
    const std::string unix_path = work + "/unix-" + j + ".db";
    std::fprintf(stderr, "unix %s ...\n", j.c_str());
    st = run(o, "file:" + unix_path + "?vfs=unix", "unix", "-", j, "", &all);
    for (const std::string& m : o.methods)
      for (const std::string& c : o.commits)
        for (const std::string& b : o.obsoletes) {
          if (!st.is_ok()) break;
          pdl::Method method = pdl::Method::kPdl;
          // A catalogue key that is not a bare method name (pdl256, bast16, sb-fast16,
          // pdl-nvm, ...): its URI parameters after "method=" (an NVM entry's NVM sized for
          // the chip).
          const pdl::MethodPreset* preset = pdl::find_method(m);
          if (preset && pdl::parse_method(m, &method)) preset = nullptr;
          const std::string mparam = preset ? preset->uri_params(2048, chip_bytes).substr(7) : m;
          if (preset) method = preset->method;
          const bool known = preset || pdl::parse_method(m, &method);
          const bool marks = known && pdl::has_obsolete_marks(method);  // IPU and IPL have none
          if (!marks && b != o.obsoletes.front()) continue;
          // IPU has no atomic commit: its journal is on flash whatever is asked (once).
          if (known && !pdl::has_atomic_commit(method) && c != o.commits.front()) continue;
          const std::string img = work + "/" + m + "-" + j + ".db";
          std::fprintf(stderr, "pdl %s %s commit=%s obsolete=%s ...\n", m.c_str(), j.c_str(),
                       c.c_str(), b.c_str());
          st = run(o, pdl::bench::pdl_uri(img, mparam, o.size, c, marks ? b : "", o.extra), "pdl", m,
                   j, img, &all, c, marks ? b : "-", preset ? preset->label : m);
          unlink(img.c_str());
        }
    pdl::bench::remove_unix_db(unix_path);
    if (!st.is_ok()) break;
  }
  if (!st.is_ok()) std::fprintf(stderr, "pdl-sqlbench: %s\n", std::string(st.message()).c_str());
  rmdir(work.c_str());
  if (!st.is_ok()) return 1;

  std::printf("pdl-sqlbench: %d single-row transactions per phase, %d-byte rows; chip %s; "
              "images in %s\n", o.rows, o.row_bytes, o.size.c_str(), o.dir.c_str());
  std::printf("Per committed transaction. sim_us = simulated flash time (PDL paper Table 1); "
              "programs split db/jrnl/dir/gc by file kind (cost.h; marks with the pages they\n"
              "obsolete); nvm_B = NVM bytes written (their PCRAM time is in sim_us); wall_us = "
              "host time;\nspeed = unix wall / pdl wall in the same run (> 1: pdl faster).\n\n");
  std::printf("%-7s %-12s %-7s %-6s %-7s %9s %8s %6s %6s %6s %6s %7s %7s %7s %7s %9s %6s\n",
              "journal", "method", "commit", "marks", "phase", "sim_us", "programs", "db", "jrnl",
              "dir", "gc", "reads", "erases", "KiB_pgm", "nvm_B", "wall_us", "speed");
  std::vector<std::string> json;
  for (const Phase& p : all) {
    double unix_wall = 0;
    for (const Phase& q : all)
      if (q.vfs == "unix" && q.journal == p.journal && q.phase == p.phase)
        unix_wall = q.wall_us_per_txn;
    const double n = o.rows;
    pdl::JsonObj rec;
    rec.s("vfs", p.vfs).s("method", p.method).s("label", p.label).s("journal", p.journal)
        .s("phase", p.phase)
        .s("commit", p.commit).s("obsolete", p.obsolete).u("row_bytes", uint64_t(o.row_bytes))
        .u("transactions", uint64_t(o.rows)).n("wall_us_per_txn", p.wall_us_per_txn);
    if (!p.has_flash) {
      std::printf("%-7s %-12s %-7s %-6s %-7s %9s %8s %6s %6s %6s %6s %7s %7s %7s %7s %9.1f %6s\n",
                  p.journal.c_str(), "unix", "-", "-", p.phase.c_str(), "-", "-", "-", "-", "-",
                  "-", "-", "-", "-", "-", p.wall_us_per_txn, "1.00");
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
    std::printf("%-7s %-12s %-7s %-6s %-7s %9.1f %8.2f %6.2f %6.2f %6.2f %6.2f %7.2f %7.4f %7.2f "
                "%7.0f %9.1f %6.2f\n",
                p.journal.c_str(), p.method.c_str(), p.commit.c_str(), p.obsolete.c_str(),
                p.phase.c_str(), f.sim_us / n, f.programs / n,
                f.kind_programs[unsigned(pdl::FileKind::kDatabase)] / n, jrnl_pg / n,
                f.kind_programs[unsigned(pdl::FileKind::kDirectory)] / n, f.gc_programs / n,
                f.reads / n, f.erases / n, f.bytes_programmed / n / 1024.0,
                f.nvm_bytes_written / n, p.wall_us_per_txn, speed);
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
        .raw("db_bytes_changed_per_txn",
             f.changes_tracked ? pdl::json_num(double(f.bytes_changed[0]) / n) : "null")
        .n("journal_bytes_written_per_txn", double(f.bytes_written[jk]) / n)
        .n("nvm_writes_per_txn", f.nvm_writes / n)
        .n("nvm_bytes_written_per_txn", f.nvm_bytes_written / n)
        .n("nvm_reads_per_txn", f.nvm_reads / n)
        .n("nvm_us_per_txn", f.nvm_us / n)
        .u("nvm_bytes", f.nvm_bytes)
        .n("merges_per_txn", f.merges / n)
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
