// host_bench.cc — pdl-hostbench: what pdl costs the host against SQLite's stock unix VFS on the
// same SQL, in CPU time and wall time (`./run hostbench`).
//
// Workloads (--workloads), each run on the pdl VFS (--method, default PDL(256B); each commit
// mode of --commit: journal = the rollback journal or WAL on flash, atomic = each commit one
// atomic commit of the store) and on the unix VFS, a fresh image / database file per run, in
// --dir (default /dev/shm: tmpfs, so the unix VFS pays no device either):
//   rows  --rows single-row INSERT transactions into t(id INTEGER PRIMARY KEY, a, b), b a
//         --row-bytes text, then --rows single-row UPDATE transactions (seeded row choice;
//         row_txns.h), in every journal mode of --journal (default all six);
//   bulk  one transaction inserting --bulk-rows rows, then CREATE INDEX on a (--bulk-journal);
//   tpcc  pdl-tpcc --quick (tpcc/session.h): the method in both commit modes and the unix VFS
//         cloned from one loaded database, warmed up until garbage collection is active, then
//         the same --tpcc-transactions on each member in turn (--tpcc-journal).
// Measured per run: CPU = user + sys time of this process (CLOCK_PROCESS_CPUTIME_ID; the VFS
// and SQLite start no thread, all work is on this one) and wall = steady_clock, around the
// workload's statements only (not the open, the image's creation or the close). For rows and
// bulk, one repetition is a unix run and a pdl run back to back, in an order swapped every
// repetition; repetitions are the outer loop, so a configuration's samples spread over the
// whole run. For tpcc, one repetition is one fleet (its unix member measured first every other
// repetition). Reported per configuration: speed = unix time / pdl time (> 1: pdl faster) in
// CPU and in wall time, median and range (min-max) over the repetitions, and the median
// times. Flash time is simulated, never slept: the figures measure the software stack.
//
// Exit status: 0 success, 1 SQLite or engine error (message printed), 2 bad arguments.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/row_txns.h"
#include "cli/app.h"
#include "flash/common/c_edge.h"
#include "flash/common/json.h"
#include "flash/common/output_file.h"
#include "flash/common/scratch_dir.h"
#include "flash/common/split.h"
#include "flash/device/emulated_nand.h"
#include "flash/image/image_params.h"
#include "sql/sql.h"
#include "tpcc/cpu_clock.h"
#include "tpcc/session.h"
#include "vfs/pdl_vfs.h"

namespace {

using Clock = std::chrono::steady_clock;
using pdl::Status;

const char kDescription[] =
    "pdl against SQLite's unix VFS on the same SQL, in host CPU and wall time: single-row\n"
    "transactions in every journal mode, a bulk load and TPC-C --quick, each in both commit\n"
    "modes; interleaved repetitions, speed = unix time / pdl time (> 1: pdl faster).";
const char kExitStatus[] =
    "exit status: 0 ok, 1 SQLite or engine error (message printed), 2 usage error.";

struct Options {
  int rows = 3000, bulk_rows = 100000, row_bytes = 100, repetitions = 5;
  uint64_t tpcc_transactions = 1000, seed = 1;
  std::vector<std::string> workloads{"rows", "bulk", "tpcc"};
  std::vector<std::string> journals{"delete", "truncate", "persist", "memory", "wal", "off"};
  std::vector<std::string> bulk_journals{"delete", "wal"}, tpcc_journals{"delete", "wal", "memory"};
  std::vector<std::string> commits{"journal", "atomic"};
  std::string method = "pdl", dir, size = "256M", json;
};

// Host time of one run of a workload.
struct Sample {
  double cpu_s = 0, wall_s = 0;
};

// A workload in one journal and commit mode: its samples, a unix and a pdl one per repetition.
struct Config {
  std::string workload, journal, commit;
  uint64_t transactions = 0;  // per run
  std::vector<Sample> unix_runs, pdl_runs;
};

class Stopwatch {
 public:
  Stopwatch() : cpu0_(pdl::tpcc::cpu_seconds()), wall0_(Clock::now()) {}
  Sample read() const {
    return {pdl::tpcc::cpu_seconds() - cpu0_,
            std::chrono::duration<double>(Clock::now() - wall0_).count()};
  }

 private:
  double cpu0_;
  Clock::time_point wall0_;
};

// One run of `workload` ("rows" or "bulk") on `uri`, timed into *out.
Status run_sql(const Options& o, const std::string& workload, const std::string& journal,
               const std::string& uri, Sample* out) {
  pdl::sql::Db db;
  PDL_TRY(db.open(uri));
  std::string mode;
  PDL_TRY(db.query_text("PRAGMA journal_mode=" + journal, &mode));
  if (mode != journal)
    return Status::error(pdl::Errc::kInvalidArgument,
                         "journal_mode " + journal + " not accepted (SQLite says " + mode + ")");
  {
    const bool bulk = workload == "bulk";
    pdl::bench::RowTxns work(bulk ? o.bulk_rows : o.rows, o.row_bytes, o.seed);
    PDL_TRY(work.prepare(db));
    const Stopwatch sw;
    if (bulk) {
      PDL_TRY(db.exec("BEGIN"));
      PDL_TRY(work.run_phase(0));
      PDL_TRY(db.exec("COMMIT"));
      PDL_TRY(db.exec("CREATE INDEX t_a ON t(a)"));
    } else {
      PDL_TRY(work.run_phase(0));
      PDL_TRY(work.run_phase(1));
    }
    *out = sw.read();
  }
  return db.close();
}

// One repetition of every rows / bulk configuration: a unix and a pdl run each, unix first
// on even repetitions.
Status repeat_sql(const Options& o, const std::string& work, int rep,
                  std::vector<Config>* configs) {
  const std::string unix_path = work + "/unix.db", image = work + "/pdl.db";
  for (Config& c : *configs) {
    if (c.workload == "tpcc") continue;
    std::fprintf(stderr, "repetition %d/%d: %s %s commit=%s ...\n", rep + 1, o.repetitions,
                 c.workload.c_str(), c.journal.c_str(), c.commit.c_str());
    for (int k = 0; k < 2; k++) {
      const bool unix_turn = (k == 0) == (rep % 2 == 0);
      Sample s;
      Status st;
      if (unix_turn) {
        st = run_sql(o, c.workload, c.journal, "file:" + unix_path + "?vfs=unix", &s);
        pdl::bench::remove_unix_db(unix_path);
      } else {
        st = run_sql(o, c.workload, c.journal,
                     pdl::bench::pdl_uri(image, o.method, o.size, c.commit, "", ""), &s);
        unlink(image.c_str());
      }
      if (!st.is_ok())
        return Status::error(st.code(), c.workload + " " + c.journal + " commit=" + c.commit +
                                            " on " + (unix_turn ? "unix" : "pdl") + ": " +
                                            std::string(st.message()));
      (unix_turn ? c.unix_runs : c.pdl_runs).push_back(s);
    }
  }
  return Status::ok();
}

// pdl-tpcc's options for --quick with the method in both commit modes, quiet.
pdl::tpcc::Options tpcc_options(const Options& o) {
  const std::string txns = std::to_string(o.tpcc_transactions), seed = std::to_string(o.seed);
  std::string commits;
  for (const std::string& c : o.commits) commits += (commits.empty() ? "" : ",") + c;
  std::vector<std::string> args{"pdl-hostbench (tpcc)", "--quick", "--quiet", "--methods",
                                o.method, "--commit", commits, "--transactions", txns,
                                "--seed", seed};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return pdl::tpcc::parse_options(int(argv.size()), argv.data());
}

// One repetition of every tpcc configuration: a fleet per journal mode.
Status repeat_tpcc(const Options& o, const pdl::tpcc::Options& to, const std::string& work,
                   const std::string& source, uint64_t chip, int rep,
                   std::vector<Config>* configs) {
  const pdl::tpcc::Scale scale = pdl::tpcc::Scale::make(to.warehouses, to.scale);
  for (const std::string& j : o.tpcc_journals) {
    std::fprintf(stderr, "repetition %d/%d: tpcc %s ...\n", rep + 1, o.repetitions, j.c_str());
    pdl::tpcc::FleetConfig cfg = pdl::tpcc::fleet_config(to, scale, j, chip, work);
    cfg.unix_first = rep % 2 == 1;
    std::vector<pdl::tpcc::RunResult> runs;
    Status st = pdl::tpcc::run_journal(to, cfg, source, false, &runs);
    for (const pdl::tpcc::MethodSpec& m : to.methods)
      pdl::bench::remove_unix_db(work + "/" + m.key + ".db");
    pdl::bench::remove_unix_db(work + "/unix.db");
    if (!st.is_ok()) return Status::error(st.code(), "tpcc " + j + ": " + std::string(st.message()));
    std::string why;
    if (!pdl::tpcc::checks_ok(runs, &why))
      return Status::error(pdl::Errc::kCorrupt, "tpcc " + j + ": check failed: " + why);
    const std::vector<pdl::tpcc::Measurement>& ms = runs.front().members;
    const auto unix_m = std::find_if(ms.begin(), ms.end(), [](auto& m) { return !m.has_flash; });
    if (unix_m == ms.end()) return Status::error(pdl::Errc::kNotFound, "tpcc: no unix member");
    for (Config& c : *configs) {
      if (c.workload != "tpcc" || c.journal != j) continue;
      for (const pdl::tpcc::Measurement& m : ms)
        if (m.has_flash && m.commit == c.commit) {
          c.transactions = m.txns;
          c.pdl_runs.push_back({m.cpu_s, m.wall_s});
          c.unix_runs.push_back({unix_m->cpu_s, unix_m->wall_s});
        }
    }
  }
  return Status::ok();
}

struct Spread {
  double median = 0, min = 0, max = 0;
};

Spread spread(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v.front(), v.back()};
}

// Per repetition: unix time / pdl time, in CPU (cpu) or wall time.
std::vector<double> speeds(const Config& c, bool cpu) {
  std::vector<double> r;
  for (size_t i = 0; i < c.unix_runs.size() && i < c.pdl_runs.size(); i++) {
    const double u = cpu ? c.unix_runs[i].cpu_s : c.unix_runs[i].wall_s;
    const double p = cpu ? c.pdl_runs[i].cpu_s : c.pdl_runs[i].wall_s;
    r.push_back(p > 0 ? u / p : 0);
  }
  return r;
}

std::vector<double> times(const std::vector<Sample>& runs, bool cpu) {
  std::vector<double> r;
  for (const Sample& s : runs) r.push_back(cpu ? s.cpu_s : s.wall_s);
  return r;
}

std::string spread_json(const std::vector<double>& v) {
  const Spread s = spread(v);
  std::vector<std::string> all;
  for (double x : v) all.push_back(pdl::json_num(x));
  return pdl::JsonObj().n("median", s.median).n("min", s.min).n("max", s.max)
      .a("samples", all).str();
}

void print_table(const std::vector<Config>& configs) {
  std::printf("speed = unix time / pdl time (> 1: pdl faster): median [min-max] over the "
              "repetitions;\ncpu = user + sys of the process, wall = elapsed; ms = median time "
              "of one run (its transactions only)\n\n");
  std::printf("%-5s %-8s %-7s %6s | %-18s %-18s | %9s %9s %9s %9s\n", "work", "journal",
              "commit", "txns", "cpu speed", "wall speed", "cpu_unix", "cpu_pdl", "wall_unix",
              "wall_pdl");
  for (const Config& c : configs) {
    if (c.pdl_runs.empty()) continue;
    char cpu[40], wall[40];
    const Spread sc = spread(speeds(c, true)), sw = spread(speeds(c, false));
    std::snprintf(cpu, sizeof cpu, "%.2f [%.2f-%.2f]", sc.median, sc.min, sc.max);
    std::snprintf(wall, sizeof wall, "%.2f [%.2f-%.2f]", sw.median, sw.min, sw.max);
    std::printf("%-5s %-8s %-7s %6llu | %-18s %-18s | %9.1f %9.1f %9.1f %9.1f\n",
                c.workload.c_str(), c.journal.c_str(), c.commit.c_str(),
                (unsigned long long)c.transactions, cpu, wall,
                spread(times(c.unix_runs, true)).median * 1e3,
                spread(times(c.pdl_runs, true)).median * 1e3,
                spread(times(c.unix_runs, false)).median * 1e3,
                spread(times(c.pdl_runs, false)).median * 1e3);
  }
}

std::string json_report(const Options& o, const std::vector<Config>& configs) {
  std::vector<std::string> recs;
  for (const Config& c : configs) {
    if (c.pdl_runs.empty()) continue;
    pdl::JsonObj r;
    r.s("workload", c.workload).s("journal", c.journal).s("commit", c.commit)
        .s("method", o.method).u("transactions", c.transactions)
        .u("repetitions", c.pdl_runs.size())
        .raw("cpu_speed", spread_json(speeds(c, true)))
        .raw("wall_speed", spread_json(speeds(c, false)))
        .raw("unix_cpu_s", spread_json(times(c.unix_runs, true)))
        .raw("pdl_cpu_s", spread_json(times(c.pdl_runs, true)))
        .raw("unix_wall_s", spread_json(times(c.unix_runs, false)))
        .raw("pdl_wall_s", spread_json(times(c.pdl_runs, false)));
    recs.push_back(r.str());
  }
  std::string joined;  // a record per line
  for (const std::string& r : recs) joined += (joined.empty() ? "" : ",\n  ") + r;
  pdl::JsonObj top;
  top.s("program", "pdl-hostbench").s("method", o.method).s("dir", o.dir).s("image_io", pdl::EmulatedNand::host_io(o.dir))
      .u("repetitions", uint64_t(o.repetitions)).u("rows", uint64_t(o.rows))
      .u("bulk_rows", uint64_t(o.bulk_rows)).u("row_bytes", uint64_t(o.row_bytes))
      .u("tpcc_transactions", o.tpcc_transactions).s("chip_size", o.size).u("seed", o.seed)
      .raw("results", "[\n  " + joined + "\n]");
  return top.str() + "\n";
}

}  // namespace

static int run(int argc, char** argv) {
  Options o;
  pdl::cli::CommandLine cl({"pdl-hostbench", {"[options]"}, kDescription, kExitStatus});
  pdl::cli::App& app = cl.app();
  std::string workloads, journals, bulk_journals, tpcc_journals, commits;
  const pdl::cli::Validator journal = pdl::cli::list_of(
      {"delete", "truncate", "persist", "memory", "wal", "off"}, "journal mode");
  app.add_option("--workloads", workloads, "rows, bulk and/or tpcc")
      ->type_name("LIST")->check(pdl::cli::list_of({"rows", "bulk", "tpcc"}, "workload"))
      ->default_str("rows,bulk,tpcc");
  app.add_option("--repetitions", o.repetitions, "unix/pdl pairs per configuration")
      ->type_name("N")->check(pdl::cli::integer(1, 1000))->capture_default_str();
  app.add_option("--rows", o.rows, "rows: transactions per phase (insert, update)")
      ->type_name("N")->check(pdl::cli::integer(1, INT32_MAX))->capture_default_str();
  app.add_option("--journal", journals, "rows: SQLite journal modes")
      ->type_name("LIST")->check(journal)->default_str("delete,truncate,persist,memory,wal,off");
  app.add_option("--bulk-rows", o.bulk_rows, "bulk: rows inserted in the one transaction")
      ->type_name("N")->check(pdl::cli::integer(1, INT32_MAX))->capture_default_str();
  app.add_option("--bulk-journal", bulk_journals, "bulk: SQLite journal modes")
      ->type_name("LIST")->check(journal)->default_str("delete,wal");
  app.add_option("--tpcc-transactions", o.tpcc_transactions,
                 "tpcc: measured transactions per member")
      ->type_name("N")->check(pdl::cli::integer(1, 1000000))->capture_default_str();
  app.add_option("--tpcc-journal", tpcc_journals, "tpcc: SQLite journal modes")
      ->type_name("LIST")->check(journal)->default_str("delete,wal,memory");
  app.add_option("--method", o.method, "the page-update method: pdl, opu, ipu or ipl")
      ->type_name("M")->capture_default_str();
  app.add_option("--commit", commits, "journal (on flash) and/or atomic")
      ->type_name("LIST")->check(pdl::cli::list_of({"journal", "atomic"}, "commit mode"))
      ->default_str("journal,atomic");
  app.add_option("--row-bytes", o.row_bytes, "rows, bulk: bytes of text per row")
      ->type_name("N")->check(pdl::cli::integer(1, 100000))->capture_default_str();
  app.add_option("--size", o.size, "rows, bulk: chip size of the images")
      ->type_name("SIZE")->capture_default_str();
  app.add_option("--dir", o.dir, "where images and unix databases go")
      ->type_name("DIR")->default_str("/dev/shm, else /tmp");
  app.add_option("--seed", o.seed, "row texts, update row choice, TPC-C data and inputs")
      ->type_name("N")->check(pdl::cli::integer(0, UINT32_MAX))->capture_default_str();
  app.add_option("--json", o.json, "also write the results as JSON")->type_name("FILE");
  if (const int rc = cl.parse(argc, argv); rc >= 0) return rc;
  if (!workloads.empty()) o.workloads = pdl::split_list(workloads);
  if (!journals.empty()) o.journals = pdl::split_list(journals);
  if (!bulk_journals.empty()) o.bulk_journals = pdl::split_list(bulk_journals);
  if (!tpcc_journals.empty()) o.tpcc_journals = pdl::split_list(tpcc_journals);
  if (!commits.empty()) o.commits = pdl::split_list(commits);
  pdl::Method method = pdl::Method::kPdl;
  if (!pdl::parse_method(o.method, &method)) return cl.error("--method: unknown method " + o.method);
  {  // the chip size and the results file, before any run
    pdl::ImageParams p;
    Status st = p.set("size", o.size);
    if (st.is_ok()) st = p.geometry().validate();
    if (!st.is_ok()) return cl.error("--size: " + std::string(st.message()));
    if (!o.json.empty()) st = pdl::check_output_file(o.json);
    if (!st.is_ok()) return cl.error("--json " + std::string(st.message()));
  }
  auto has = [&](const char* w) {
    return std::find(o.workloads.begin(), o.workloads.end(), w) != o.workloads.end();
  };
  // IPU has no atomic commit: with it, the journal on flash only (once).
  std::vector<std::string> commit_modes = o.commits;
  if (!pdl::has_atomic_commit(method)) commit_modes = {"journal"};
  std::vector<Config> configs;
  for (const auto& [w, js] : {std::pair{"rows", &o.journals}, std::pair{"bulk", &o.bulk_journals},
                              std::pair{"tpcc", &o.tpcc_journals}})
    if (has(w))
      for (const std::string& j : *js)
        for (const std::string& c : commit_modes)
          configs.push_back({w, j, c, std::string(w) == "rows" ? 2 * uint64_t(o.rows)
                                      : std::string(w) == "bulk" ? uint64_t(o.bulk_rows)
                                                                 : o.tpcc_transactions,
                             {}, {}});
  const pdl::tpcc::Options to = has("tpcc") ? tpcc_options(o) : pdl::tpcc::Options{};

  if (o.dir.empty()) o.dir = pdl::default_scratch_root();
  std::string work;
  if (Status st = pdl::make_scratch_dir(o.dir, "pdl-hostbench", &work); !st.is_ok()) {
    std::fprintf(stderr, "pdl-hostbench: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  if (pdl::vfs::register_vfs() != SQLITE_OK) {
    std::fprintf(stderr, "pdl-hostbench: cannot register the pdl VFS\n");
    rmdir(work.c_str());
    return 1;
  }
  pdl::sql::set_open_detail(pdl::vfs::last_error);
  Status st;
  const std::string source = work + "/tpcc-load.db";
  uint64_t chip = 0;
  if (has("tpcc")) {
    std::fprintf(stderr, "tpcc: loading ...\n");
    double secs = 0;
    uint64_t pages = 0;
    st = pdl::tpcc::load_source(to, pdl::tpcc::Scale::make(to.warehouses, to.scale), source,
                                nullptr, &secs, &pages);
    chip = pdl::tpcc::chip_bytes_for(to, pages);
  }
  for (int rep = 0; st.is_ok() && rep < o.repetitions; rep++) {
    st = repeat_sql(o, work, rep, &configs);
    if (st.is_ok() && has("tpcc")) st = repeat_tpcc(o, to, work, source, chip, rep, &configs);
  }
  pdl::bench::remove_unix_db(source);
  rmdir(work.c_str());
  if (!st.is_ok()) {
    std::fprintf(stderr, "pdl-hostbench: %s\n", std::string(st.message()).c_str());
    return 1;
  }

  std::printf("pdl-hostbench: %s vs the unix VFS in %s; %d repetitions; rows: %d + %d "
              "single-row transactions, %d-byte text; bulk: %d rows in one transaction + an "
              "index; tpcc: --quick, %llu transactions per member; chip %s (rows, bulk)\n",
              o.method.c_str(), o.dir.c_str(), o.repetitions, o.rows, o.rows, o.row_bytes,
              o.bulk_rows, (unsigned long long)o.tpcc_transactions, o.size.c_str());
  std::printf("image files in %s: %s\n", o.dir.c_str(), pdl::EmulatedNand::host_io(o.dir).c_str());
  print_table(configs);
  if (!o.json.empty()) {
    FILE* f = std::fopen(o.json.c_str(), "w");
    const std::string text = json_report(o, configs);
    if (!f || std::fputs(text.c_str(), f) < 0 || std::fclose(f) != 0) {
      std::fprintf(stderr, "pdl-hostbench: cannot write %s\n", o.json.c_str());
      return 1;
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  return pdl::guarded_main("pdl-hostbench", run, argc, argv, 1);
}
