// pdl_crash.cc — pdl-crash: random power cuts over TPC-C-like runs on SQLite, every page-update
// method, checked against an oracle of acknowledged commits (docs/reliability.md;
// `./run crash --cuts N`).
//
// Per configuration (method × commit mode × journal mode; commit=atomic for the methods that
// have it — PDL, OPU and IPL — where journal modes MEMORY and OFF are crash-safe too):
//   1. a template image: a small TPC-C database loaded through the pdl VFS (clock=logical, so
//      every replay writes the same bytes);
//   2. the reference: the template copied, transactions 0..T-1 run uncut; the content checksum
//      (check.h) after each, and the mutating flash operations the run took;
//   3. each trial: the template copied, the chip set to cut power after k operations (k uniform
//      in the reference run's range) with a random tear (none / prefix / random bits, data and
//      spare apart); transactions run until one fails. Every other trial also cuts power once
//      more, inside the mount's recovery (the raw store + Volume, on the image file). Then the
//      image is reopened through the VFS and must satisfy:
//        I1  content checksum = the reference after the last acknowledged transaction, or after
//            the one in flight (durable without its acknowledgement);
//        I2  PRAGMA integrity_check and PRAGMA pdl_check say ok; TPC-C conditions 1-10, 12 hold;
//        I4  a cut during recovery changed none of that;
//      and the recovered database commits a further transaction.
// Output: cuts tried, recovery cuts, failures (each with the command reproducing it), simulated
// flash time and wall time. Exit status: 0 no failure, 1 a failure or an error, 2 bad arguments.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "cli/app.h"
#include "flash/image/methods.h"
#include "flash/image/open_store.h"
#include "flash/common/c_edge.h"
#include "flash/common/scratch_dir.h"
#include "flash/common/split.h"
#include "flash/device/emulated_nand.h"
#include "flash/store/page_store.h"
#include "flash/volume/volume.h"
#include "tpcc/check.h"
#include "tpcc/loader.h"
#include "tpcc/terminal.h"
#include "tpcc/workload.h"
#include "vfs/pdl_vfs.h"

using namespace pdl;
using namespace pdl::tpcc;

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  uint64_t cuts = 200;  // in all, spread over the configurations
  std::vector<std::string> methods = {"pdl", "opu", "ipu", "ipl"};
  std::vector<std::string> commits = {"atomic", "journal"};
  std::vector<std::string> journals = {"delete", "wal", "memory"};
  uint64_t txns = 20;   // transactions per trial
  uint64_t seed = 1;
  double factor = 0.01;
  std::string chip = "4M";
  std::string dir;      // scratch root ("" = /dev/shm or /tmp)
  int64_t only_trial = -1;
  bool keep = false;
};

const char kDescription[] =
    "Random power cuts over TPC-C-like runs on SQLite through the pdl VFS; after each cut\n"
    "(and, every other trial, a second cut during the recovery) the database must hold every\n"
    "acknowledged commit and nothing half-done.";
const char kExitStatus[] =
    "An option given twice: the last one counts.\n"
    "exit status: 0 every trial passed, 1 a failure or an error, 2 usage error.";

// -1: go on; otherwise the exit code (help printed, or why the arguments are refused).
int parse(int argc, char** argv, Options* o) {
  cli::CommandLine cl({"pdl-crash",
                       {"[--cuts N] [--methods pdl,opu,ipu,ipl] [--commit atomic,journal]\n"
                        "                 [--journals delete,wal,memory] [--txns N] [--seed S]\n"
                        "                 [--factor F] [--chip SIZE] [--dir DIR] [--trial I] [--keep]"},
                       kDescription, kExitStatus, cli::Repeats::kLastWins});
  CLI::App& app = cl.app();
  std::string methods, commits, journals;
  app.add_option("--cuts", o->cuts, "cuts in all, over the configurations")
      ->type_name("N")->check(cli::integer(1, UINT64_MAX))->capture_default_str();
  app.add_option("--methods", methods, "page-update methods")
      ->type_name("L")
      ->check(cli::list_of({"pdl", "opu", "ipu", "ipl", "ftl-page", "bast16", "bast32", "fast16",
                            "fast32", "sb-page", "sb-bast16", "sb-fast16"},
                           "method"))
      ->default_str("pdl,opu,ipu,ipl; also the FTL devices' catalogue keys\n"
                    "ftl-page, bast16, bast32, fast16, fast32, sb-page, sb-bast16,\n"
                    "sb-fast16 (journal on the device: commit=journal only)");
  app.add_option("--commit", commits,
                 "commit=atomic (PDL, OPU, IPL; IPU keeps its journal on flash)\n"
                 "and/or commit=journal")
      ->type_name("L")->check(cli::list_of({"atomic", "journal"}, "commit mode"))
      ->default_str("atomic,journal");
  app.add_option("--journals", journals,
                 "delete, truncate, persist, wal; memory and off with\ncommit=atomic only")
      ->type_name("L")
      ->check(cli::list_of({"delete", "wal", "truncate", "persist", "memory", "off"},
                           "journal mode"))
      ->default_str("delete,wal,memory");
  app.add_option("--txns", o->txns, "transactions per trial")
      ->type_name("N")->check(cli::integer(1, UINT64_MAX))->capture_default_str();
  app.add_option("--factor", o->factor, "TPC-C scale factor of the 1-warehouse database")
      ->type_name("F")->check(cli::number(0, 1, true))->default_str("0.01");
  app.add_option("--chip", o->chip, "emulated chip size")->type_name("SIZE")
      ->capture_default_str();
  app.add_option("--seed", o->seed, "seed of the workload, the cut points and the tears")
      ->type_name("S")->check(cli::integer(0, UINT64_MAX))->capture_default_str();
  app.add_option("--trial", o->only_trial,
                 "run only trial I of each configuration (reproduce a failure)")
      ->type_name("I")->check(cli::integer(0, INT64_MAX));
  app.add_option("--dir", o->dir, "scratch root")->type_name("DIR")
      ->default_str("/dev/shm, else /tmp");
  app.add_flag("--keep", o->keep, "keep the scratch directory");
  if (const int rc = cl.parse(argc, argv); rc >= 0) return rc;
  if (!methods.empty()) o->methods = split_list(methods);
  if (!commits.empty()) o->commits = split_list(commits);
  if (!journals.empty()) o->journals = split_list(journals);
  return -1;
}

// Whether `method` has an atomic commit (the others keep SQLite's journal on flash).
bool atomic_capable(const std::string& method) {
  if (const MethodPreset* p = find_method(method); p && is_ftl_device(p->method)) return false;
  Method m = Method::kPdl;
  return !parse_method(method, &m) || has_atomic_commit(m);
}

// The URI parameters naming `method`: a method name ("method=pdl") or an FTL device's catalogue
// key ("method=ftl&ftl=bast&log_blocks=16").
std::string method_params(const std::string& method) {
  if (const MethodPreset* p = find_method(method); p && is_ftl_device(p->method))
    return p->uri_params(2048);
  return "method=" + method;
}

// Journal modes MEMORY and OFF keep no journal a crash could roll back with: crash-safe only
// when the store commits whole transactions.
bool needs_atomic(const std::string& journal) { return journal == "memory" || journal == "off"; }

struct Config {
  std::string method, commit, journal;
  std::string uri(const Options& o, const std::string& path) const {
    return "file:" + path + "?vfs=pdl&" + method_params(method) + "&commit=" + commit + "&size=" +
           o.chip + "&page=2048&clock=logical";
  }
  std::string name() const { return method + "-" + commit + "-" + journal; }
};

// Every method × commit mode × journal mode that promises something across a crash: a method
// without atomic commit once, with commit=journal; MEMORY and OFF only with commit=atomic.
std::vector<Config> configurations(const Options& o) {
  std::vector<Config> out;
  for (const auto& m : o.methods) {
    std::vector<std::string> commits;
    for (const auto& c : o.commits) {
      const std::string cm = atomic_capable(m) ? c : "journal";
      if (std::find(commits.begin(), commits.end(), cm) == commits.end()) commits.push_back(cm);
    }
    for (const auto& c : commits)
      for (const auto& j : o.journals)
        if (c == "atomic" || !needs_atomic(j)) out.push_back({m, c, j});
  }
  return out;
}

Status open_db(const Options& o, const Config& c, const std::string& path, sql::Db* db) {
  PDL_TRY(db->open(c.uri(o, path)));
  std::string mode;
  PDL_TRY(db->query_text("PRAGMA journal_mode=" + c.journal, &mode));
  PDL_TRY(db->exec("PRAGMA synchronous=FULL; PRAGMA wal_autocheckpoint=64"));
  return Status::ok();
}

EmulatedNand* chip_of(const std::string& path) {
  return static_cast<EmulatedNand*>(vfs::device_of(path));
}

// Mount with the flash API (store recovery, then the Volume's clean-up), the chip cut after
// `cut` mutating operations (none if negative). Returns the operations the recovery did.
Status recover(const Config& c, const std::string& path, int64_t cut, Tear tear, uint64_t seed,
               uint64_t* ops) {
  std::unique_ptr<EmulatedNand> nand;
  PDL_TRY(EmulatedNand::open_file(path, &nand));
  if (cut >= 0) nand->cut_power_after(uint64_t(cut), tear, seed);
  std::unique_ptr<PageStore> store;
  std::unique_ptr<Volume> vol;
  Status st = mount_store(*nand, &store);
  // As the VFS mounts an image of commit=atomic: the store in its group mode before the
  // Volume's clean-up writes anything.
  if (st.is_ok() && c.commit == "atomic") st = store->set_commit_mode(CommitMode::kGroup);
  VolumeOptions vo;
  vo.remount = remount_opener(*nand);  // as an image's Volume: a halted store is mounted again
  if (st.is_ok()) st = Volume::open(std::move(store), vo, &vol);
  if (st.is_ok()) st = vol->close();
  *ops = nand->mutating_ops();
  if (cut >= 0 && st.is(Errc::kPowerCut)) return Status::ok();
  return st;
}

struct Reference {
  std::vector<uint64_t> checksum;  // [i] = after transactions 0..i-1
  uint64_t ops = 0;                // mutating flash operations of the whole run
  uint64_t erases = 0;             // of which block erases (garbage collection, merges)
};

struct Totals {
  uint64_t cuts = 0, recovery_cuts = 0, failures = 0, acked = 0, in_flight_durable = 0;
  double sim_s = 0;
};

Status build_reference(const Options& o, const Config& c, const Workload& wl,
                       const std::string& tmpl, const std::string& dir, Reference* ref) {
  const std::string path = dir + "/reference.img";
  std::filesystem::copy_file(tmpl, path, std::filesystem::copy_options::overwrite_existing);
  sql::seed_prng(uint32_t(o.seed));  // as in every trial: the same bytes, the same operations
  sql::Db db;
  PDL_TRY(open_db(o, c, path, &db));
  {
    Terminal term(db, wl.scale());
    PDL_TRY(term.prepare());
    uint64_t sum = 0;
    PDL_TRY(content_checksum(db, &sum));
    ref->checksum = {sum};
    EmulatedNand* nand = chip_of(path);
    if (!nand) return Status::error(Errc::kIoError, "no device for " + path);
    const uint64_t ops0 = nand->mutating_ops(), erases0 = nand->counters().erases;
    for (uint64_t i = 0; i < o.txns; i++) {
      TxnOutcome out;
      PDL_TRY(term.run(wl.input(i), &out));
      PDL_TRY(content_checksum(db, &sum));
      ref->checksum.push_back(sum);
    }
    ref->ops = nand->mutating_ops() - ops0;
    ref->erases = nand->counters().erases - erases0;
  }
  return db.close();
}

// One trial; a failure is reported (and counted) here, an error of the harness returned.
Status trial(const Options& o, const Config& c, const Workload& wl, const std::string& tmpl,
             const std::string& dir, const Reference& ref, uint64_t index, Totals* t) {
  std::mt19937_64 rng(o.seed * 1000003 + index * 7919 + std::hash<std::string>()(c.method) +
                      (c.journal == "wal" ? 17 : 0) + (c.commit == "atomic" ? 31 : 0));
  const uint64_t k = rng() % ref.ops;
  const Tear tear = Tear(rng() % 3);
  const uint64_t tear_seed = rng();
  const bool recovery_cut = index % 2 == 1;
  const std::string path = dir + "/trial.img";
  std::filesystem::copy_file(tmpl, path, std::filesystem::copy_options::overwrite_existing);
  uint64_t acked = 0, attempted = 0;
  sql::seed_prng(uint32_t(o.seed));
  {
    sql::Db db;
    PDL_TRY(open_db(o, c, path, &db));
    Terminal term(db, wl.scale());
    PDL_TRY(term.prepare());
    EmulatedNand* nand = chip_of(path);
    if (!nand) return Status::error(Errc::kIoError, "no device for " + path);
    const uint64_t us0 = nand->counters().sim_us;
    nand->cut_power_after(k, tear, tear_seed);
    for (attempted = 0; attempted < o.txns; attempted++) {
      TxnOutcome out;
      if (!term.run(wl.input(attempted), &out).is_ok()) break;
      acked = attempted + 1;
    }
    t->sim_s += double(nand->counters().sim_us - us0) / 1e6;
    if (!nand->frozen())
      return Status::error(Errc::kInvalidArgument, "the run ended before cut " +
                                                       std::to_string(k) + " (not repeatable?)");
  }  // the terminal's statements, then the connection closed (errors expected: chip frozen)
  t->cuts++;
  t->acked += acked;
  std::string where;
  if (recovery_cut) {
    const std::string copy = path + ".copy";
    std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
    uint64_t rec_ops = 0;
    Status st = recover(c, copy, -1, Tear::kNone, 0, &rec_ops);
    std::filesystem::remove(copy);
    if (!st.is_ok()) where = "recovery: " + st.to_string();
    if (st.is_ok() && rec_ops > 0) {
      uint64_t ignored;
      st = recover(c, path, int64_t(rng() % rec_ops), Tear(rng() % 3), rng(), &ignored);
      if (!st.is_ok()) where = "cut recovery: " + st.to_string();
      t->recovery_cuts++;
    }
  }
  if (where.empty()) {
    sql::Db db;
    Status st = open_db(o, c, path, &db);
    std::string integrity, pdl_check;
    uint64_t sum = 0;
    std::vector<ConditionResult> conds;
    if (st.is_ok()) st = db.query_text("PRAGMA integrity_check", &integrity);
    if (st.is_ok()) st = db.query_text("PRAGMA pdl_check", &pdl_check);
    if (st.is_ok()) st = content_checksum(db, &sum);
    if (st.is_ok()) st = check_consistency(db, &conds);
    if (!st.is_ok()) {
      where = "reopen: " + st.to_string();
    } else if (integrity != "ok" || pdl_check != "ok") {
      where = "integrity_check: " + integrity + "; pdl_check: " + pdl_check;
    } else if (sum != ref.checksum[acked] &&
               !(attempted < o.txns && sum == ref.checksum[acked + 1])) {
      where = "content is neither the state after the " + std::to_string(acked) +
              " acknowledged transactions nor after the one in flight";
    } else {
      if (sum != ref.checksum[acked]) t->in_flight_durable++;
      for (const ConditionResult& r : conds)
        if (r.violations) where += "condition " + std::to_string(r.number) + " violated; ";
      if (where.empty()) {  // the recovered database takes a new transaction
        Terminal term(db, wl.scale());
        TxnOutcome out;
        st = term.prepare();
        if (st.is_ok()) st = term.run(wl.input(o.txns), &out);
        if (!st.is_ok()) where = "a transaction after recovery: " + st.to_string();
      }
    }
    if (where.empty()) {
      st = db.close();
      if (!st.is_ok()) where = "close after recovery: " + st.to_string();
    }
  }
  if (!where.empty()) {
    t->failures++;
    std::fprintf(stderr,
                 "FAILED %s trial %llu: cut after %llu of %llu ops, tear %d%s; %llu "
                 "acknowledged: %s\n  reproduce: pdl-crash --methods %s --commit %s --journals %s "
                 "--seed %llu --txns %llu --factor %g --chip %s --trial %llu\n",
                 c.name().c_str(), (unsigned long long)index,
                 (unsigned long long)k, (unsigned long long)ref.ops, int(tear),
                 recovery_cut ? ", then a cut in the recovery" : "", (unsigned long long)acked,
                 where.c_str(), c.method.c_str(), c.commit.c_str(), c.journal.c_str(),
                 (unsigned long long)o.seed, (unsigned long long)o.txns, o.factor,
                 o.chip.c_str(), (unsigned long long)index);
  }
  return Status::ok();
}

Status run_config(const Options& o, const Config& c, uint64_t trials, const std::string& root,
                  Totals* t) {
  const std::string dir = root + "/" + c.name();
  if (mkdir(dir.c_str(), 0755) != 0)
    return Status::error(Errc::kIoError, "cannot create " + dir + ": " + std::strerror(errno));
  const Scale scale = Scale::make(1, o.factor);
  const Workload wl(scale, o.seed);
  const std::string tmpl = dir + "/template.img";
  {
    sql::Db db;
    PDL_TRY(db.open(c.uri(o, tmpl)));
    PDL_TRY(db.exec("PRAGMA page_size=2048"));
    std::string mode;
    PDL_TRY(db.query_text("PRAGMA journal_mode=" + c.journal, &mode));
    PDL_TRY(load(db, scale, o.seed));
    PDL_TRY(db.close());
  }
  Reference ref;
  PDL_TRY(build_reference(o, c, wl, tmpl, dir, &ref));
  if (ref.ops == 0) return Status::error(Errc::kInvalidArgument, "the run wrote nothing");
  const uint64_t failures0 = t->failures, cuts0 = t->cuts;
  for (uint64_t i = 0; i < trials; i++) {
    if (o.only_trial >= 0 && uint64_t(o.only_trial) != i) continue;
    PDL_TRY(trial(o, c, wl, tmpl, dir, ref, i, t));
  }
  std::printf("  %-4s %-7s %-8s %6llu cuts over %llu flash operations (%llu erases) of %llu "
              "transactions, %llu failed\n",
              c.method.c_str(), c.commit.c_str(), c.journal.c_str(),
              (unsigned long long)(t->cuts - cuts0),
              (unsigned long long)ref.ops, (unsigned long long)ref.erases,
              (unsigned long long)o.txns, (unsigned long long)(t->failures - failures0));
  std::fflush(stdout);
  std::filesystem::remove_all(dir);
  return Status::ok();
}

}  // namespace

static int run(int argc, char** argv) {
  Options o;
  if (const int rc = parse(argc, argv, &o); rc >= 0) return rc;
  if (vfs::register_vfs() != SQLITE_OK) {
    std::fprintf(stderr, "pdl-crash: cannot register the pdl VFS\n");
    return 1;
  }
  sql::set_open_detail(vfs::last_error);
  const std::vector<Config> configs = configurations(o);
  if (configs.empty()) {  // (before the scratch directory: a usage error leaves nothing behind)
    return cli::usage_error("pdl-crash", "journal modes memory and off: each promises nothing "
                                         "across a crash with commit=journal (add --commit atomic)");
  }
  std::string root;
  Status st = make_scratch_dir(o.dir, "pdl-crash", &root);
  if (!st.is_ok()) {
    std::fprintf(stderr, "pdl-crash: %s\n", st.to_string().c_str());
    return 1;
  }
  const uint64_t per = std::max<uint64_t>(1, (o.cuts + configs.size() - 1) / configs.size());
  std::printf("pdl-crash: %llu cuts (%llu per configuration), %llu TPC-C transactions "
              "per trial, %s, chip %s, seed %llu\n",
              (unsigned long long)(per * configs.size()), (unsigned long long)per,
              (unsigned long long)o.txns, Scale::make(1, o.factor).describe().c_str(),
              o.chip.c_str(), (unsigned long long)o.seed);
  std::fflush(stdout);
  const auto t0 = Clock::now();
  Totals t;
  for (const Config& c : configs) {
    st = run_config(o, c, per, root, &t);
    if (!st.is_ok()) {
      std::fprintf(stderr, "pdl-crash: %s: %s (scratch kept in %s)\n", c.name().c_str(),
                   st.to_string().c_str(), root.c_str());
      return 1;
    }
  }
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("pdl-crash: %llu cuts, %llu of them followed by a cut during the recovery (every "
              "other trial, where the recovery writes); "
              "%llu failures; %llu transactions acknowledged before the cuts, %llu in-flight "
              "ones found durable; simulated flash time %.1f s; wall %.1f s\n",
              (unsigned long long)t.cuts, (unsigned long long)t.recovery_cuts,
              (unsigned long long)t.failures, (unsigned long long)t.acked,
              (unsigned long long)t.in_flight_durable, t.sim_s, wall);
  if (!o.keep) std::filesystem::remove_all(root);
  return t.failures ? 1 : 0;
}

int main(int argc, char** argv) {
  return pdl::guarded_main("pdl-crash", run, argc, argv, 1);
}
