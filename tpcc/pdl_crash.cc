// pdl_crash.cc — pdl-crash: random power cuts over TPC-C-like runs on SQLite, every page-update
// method, checked against an oracle of acknowledged commits (docs/reliability.md;
// `./run crash --cuts N`).
//
// Per configuration (method × commit mode × journal mode; commit=atomic for the methods that
// have it — PDL, OPU and IPL — where journal modes MEMORY and OFF are crash-safe too):
//   1. a template image with a checkpoint area (checkpoint=on, replay_blocks small so that
//      periodic checkpoints and summary pages come often; docs/design.md §17): a small TPC-C
//      database loaded through the pdl VFS (clock=logical, so every replay writes the same
//      bytes) and closed cleanly (a checkpoint);
//   2. the reference: the template copied, transactions 0..T-1 run uncut in sessions of
//      --reopen of them, each session ending in a clean close (a checkpoint write) and the next
//      one opening the image again (a mount from that checkpoint, which must program nothing);
//      the content checksum (check.h) after each transaction, and the mutating flash
//      operations the run took (the opens' none);
//   3. each trial: the template copied, the chip set to cut power after k operations (k uniform
//      in the reference run's range, closes included) with a random tear (none / prefix /
//      random bits, data and spare apart); the run goes on until an operation fails. Where the
//      cut landed is counted (cut_site.h: data, checkpoint stream, summary, area erase, log;
//      and whether in a clean close). Then the mount of the cut chip: if it is from a
//      checkpoint it must program nothing, and a cut at a random operation of it (the device
//      gone from there on) must leave the image byte for byte as it was. Every other trial
//      also cuts power once more, inside the mount's recovery where it writes (the raw store +
//      Volume, on the image file). Then the image is reopened through the VFS and must satisfy:
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
#include "flash/image/image.h"
#include "flash/store/page_store.h"
#include "flash/volume/volume.h"
#include "tpcc/check.h"
#include "tpcc/cut_site.h"
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
  uint64_t reopen = 5;  // a clean close and reopen after every `reopen` transactions (0: never)
  uint32_t replay_blocks = 4;
  uint32_t table_cache = 0;  // URI table_cache (0: the default, not in the URI)
  std::string nvm;           // URI nvm= for the methods that use NVM (empty: none)
  bool checkpoint = true;
  uint64_t seed = 1;
  double factor = 0.01;
  std::string chip = "4M";
  uint32_t block_pages = 16;  // pages per erase block (2 KiB pages)
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
                        "                 [--journals delete,wal,memory] [--txns N] [--reopen N]\n"
                        "                 [--replay-blocks N] [--table-cache N] [--nvm SIZE]\n"
                        "                 [--checkpoint on|off]\n"
                        "                 [--seed S]\n"
                        "                 [--factor F] [--chip SIZE] [--block-pages N] [--dir DIR]\n"
                        "                 [--trial I] [--keep]"},
                       kDescription, kExitStatus, cli::Repeats::kLastWins});
  cli::App& app = cl.app();
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
  app.add_option("--reopen", o->reopen,
                 "a clean close (checkpoint) and reopen after every N\ntransactions (0: never)")
      ->type_name("N")->check(cli::integer(0, UINT64_MAX))->capture_default_str();
  app.add_option("--replay-blocks", o->replay_blocks,
                 "URI replay_blocks: declared blocks before a periodic\ncheckpoint")
      ->type_name("N")->check(cli::integer(1, 1000000))->capture_default_str();
  app.add_option("--table-cache", o->table_cache,
                 "URI table_cache: clean table pages per paged table, also\n"
                 "the dirty pages kept before sparse ones fold into entries\n"
                 "(PDL, OPU; 0: the default)")
      ->type_name("N")->check(cli::integer(0, 1u << 24))->capture_default_str();
  app.add_option("--nvm", o->nvm,
                 "URI nvm=SIZE for pdl and ipl (PDL's write buffer, IPL's\n"
                 "log areas in NVM beside the chip; the other methods run\n"
                 "without)")
      ->type_name("SIZE");
  std::string checkpoint = "on";
  app.add_option("--checkpoint", checkpoint, "checkpoint area on the chip (URI checkpoint=)")
      ->type_name("on|off")->check(cli::one_of({"on", "off"}))->capture_default_str();
  app.add_option("--factor", o->factor, "TPC-C scale factor of the 1-warehouse database")
      ->type_name("F")->check(cli::number(0, 1, true))->default_str("0.01");
  app.add_option("--chip", o->chip, "emulated chip size")->type_name("SIZE")
      ->capture_default_str();
  app.add_option("--block-pages", o->block_pages, "pages per erase block (of 2 KiB)")
      ->type_name("N")->check(cli::integer(2, 1024))->capture_default_str();
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
  o->checkpoint = checkpoint == "on";
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
           o.chip + "&page=2048&pages_per_block=" + std::to_string(o.block_pages) +
           "&clock=logical&checkpoint=" + (o.checkpoint ? "on" : "off") +
           "&replay_blocks=" + std::to_string(o.replay_blocks) +
           (o.table_cache ? "&table_cache=" + std::to_string(o.table_cache) : "") +
           (!o.nvm.empty() && (method == "pdl" || method == "ipl") ? "&nvm=" + o.nvm : "");
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
  uint64_t ops = 0;                // mutating flash operations of the whole run (closes too)
  uint64_t erases = 0;             // of which block erases (garbage collection, merges)
  uint64_t closes = 0;             // clean closes (checkpoint writes) in the run
  uint64_t open_from_checkpoint = 0;  // reopens that mounted from the checkpoint
};

struct Totals {
  uint64_t cuts = 0, recovery_cuts = 0, failures = 0, acked = 0, in_flight_durable = 0;
  CutSites sites{};          // where the cuts landed
  uint64_t in_close = 0;     // of which inside a clean close
  uint64_t mount_cuts = 0;   // cuts inside a mount from a checkpoint of the cut chip
  double sim_s = 0;
};

// What one run of the workload did (the reference's, or a trial's up to its cut).
struct RunResult {
  uint64_t acked = 0;        // transactions acknowledged
  bool in_flight = false;    // a transaction was running when the power was cut
  bool landed = false;       // the cut landed (the chip froze)
  bool in_close = false;     // ... inside a clean close
  CutSite site = CutSite::kData;
  uint64_t ops = 0;          // mutating operations of the sessions (after each open)
  uint64_t erases = 0;
  uint64_t closes = 0, open_from_checkpoint = 0;
  double sim_s = 0;
  std::vector<uint64_t> checksum;  // with `checksums`: after each transaction (and before)
};

// Transactions 0..txns-1 on the image at `path`, in sessions of o.reopen: each session opens
// the image (a mount: from the checkpoint the previous close wrote), runs its transactions and
// closes it cleanly (a checkpoint write). With `cut` >= 0 the power is cut at mutating
// operation `cut` of the sessions (counted after each open: a mount from a checkpoint writes
// nothing, which is checked) and the run stops there. Errors: the harness's (an open that
// wrote after mounting from a checkpoint is one).
Status run_workload(const Options& o, const Config& c, const Workload& wl,
                    const std::string& path, int64_t cut, Tear tear, uint64_t tear_seed,
                    bool checksums, RunResult* r) {
  sql::seed_prng(uint32_t(o.seed));  // every run: the same bytes, the same operations
  const uint64_t per = o.reopen ? o.reopen : o.txns;
  uint64_t next = 0;
  for (bool first = true; (first || next < o.txns) && !r->landed; first = false) {
    sql::Db db;
    const uint64_t before_open = EmulatedNand::thread_mutating_ops();
    PDL_TRY(db.open(c.uri(o, path)));
    EmulatedNand* nand = chip_of(path);
    Image* img = vfs::image_of(path);
    if (!nand || !img) return Status::error(Errc::kIoError, "no device for " + path);
    const uint64_t open_ops = EmulatedNand::thread_mutating_ops() - before_open;
    if (img->mount.from_checkpoint && !first) r->open_from_checkpoint++;
    if (img->mount.from_checkpoint && open_ops)
      return Status::error(Errc::kInvalidArgument,
                           "a mount from a checkpoint programmed or erased " +
                               std::to_string(open_ops) + " times");
    uint32_t area = 0;
    {
      auto g = img->volume->lock();
      const StoreParams& sp = img->volume->store().params();
      area = sp.checkpoint ? sp.checkpoint_blocks : 0;
    }
    const Geometry geo = nand->geometry();
    if (cut >= 0) nand->cut_power_after(uint64_t(cut) - r->ops, tear, tear_seed);
    const uint64_t ops0 = EmulatedNand::thread_mutating_ops(), erases0 = nand->counters().erases,
                   us0 = nand->counters().sim_us;
    Status st = Status::ok();
    {
      std::string mode;
      st = db.query_text("PRAGMA journal_mode=" + c.journal, &mode);
      if (st.is_ok()) st = db.exec("PRAGMA synchronous=FULL; PRAGMA wal_autocheckpoint=64");
      Terminal term(db, wl.scale());
      if (st.is_ok()) st = term.prepare();
      if (checksums && first && st.is_ok()) {
        uint64_t sum = 0;
        st = content_checksum(db, &sum);
        r->checksum.push_back(sum);
      }
      const uint64_t end = std::min(o.txns, next + per);
      for (; st.is_ok() && next < end; next++) {
        TxnOutcome out;
        r->in_flight = true;
        st = term.run(wl.input(next), &out);
        if (!st.is_ok()) break;
        r->in_flight = false;
        r->acked = next + 1;
        if (checksums) {
          uint64_t sum = 0;
          st = content_checksum(db, &sum);
          r->checksum.push_back(sum);
        }
      }
      if (!st.is_ok() && !nand->frozen()) return st;  // (not the cut: the harness's error)
      r->landed = nand->frozen();
      r->erases += nand->counters().erases - erases0;
      r->sim_s += double(nand->counters().sim_us - us0) / 1e6;
    }  // the terminal's statements
    const bool landed_before = r->landed;
    (void)db.close();  // a clean close: the Volume's, then the checkpoint write
    r->closes += landed_before ? 0 : 1;
    const EmulatedNand::Interrupted& at = EmulatedNand::thread_interrupted();
    r->landed = cut >= 0 && at.op != EmulatedNand::Interrupted::Op::kNone;
    r->in_close = r->landed && !landed_before;
    r->ops += EmulatedNand::thread_mutating_ops() - ops0;
    if (r->landed) r->site = cut_site(at, geo, area);
  }
  return Status::ok();
}

Status build_reference(const Options& o, const Config& c, const Workload& wl,
                       const std::string& tmpl, const std::string& dir, Reference* ref) {
  const std::string path = dir + "/reference.img";
  std::filesystem::copy_file(tmpl, path, std::filesystem::copy_options::overwrite_existing);
  RunResult r;
  PDL_TRY(run_workload(o, c, wl, path, -1, Tear::kNone, 0, true, &r));
  ref->checksum = r.checksum;
  ref->ops = r.ops;
  ref->erases = r.erases;
  ref->closes = r.closes;
  ref->open_from_checkpoint = r.open_from_checkpoint;
  return Status::ok();
}

// The bytes of the file at `path` ("" if it cannot be read).
std::string file_bytes(const std::string& path) {
  std::string out;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    char buf[1 << 16];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
    std::fclose(f);
  }
  return out;
}

// The mount of the cut chip at `path`, on copies: if it is from a checkpoint it must program
// nothing (every mutating operation would freeze the chip), and a mount cut at a random one of
// its operations (the device gone from there on: a power cut of a mount that writes nothing)
// must leave the image byte for byte as it was, the next mount again from the checkpoint.
// "" if all holds (`*cut` tells whether there was a mount from a checkpoint to cut).
std::string mount_cut(const std::string& path, std::mt19937_64& rng, bool* cut) {
  *cut = false;
  const std::string copy = path + ".mount";
  auto mount_copy = [&](int64_t gone_at, MountReport* rep, uint64_t* reads,
                        bool* wrote) -> Status {
    std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
    std::unique_ptr<EmulatedNand> nand;
    PDL_TRY(EmulatedNand::open_file(copy, &nand));
    nand->cut_power_after(0);  // any program or erase freezes the chip
    const uint64_t ops0 = nand->operations();
    if (gone_at >= 0) nand->io_errors_at(uint64_t(gone_at), UINT64_MAX / 2);
    std::unique_ptr<PageStore> store;
    const Status st = mount_store(*nand, &store, rep);
    store.reset();
    *reads = nand->operations() - ops0;
    *wrote = nand->frozen();
    return st;
  };
  MountReport rep;
  uint64_t reads = 0;
  bool wrote = false;
  Status st = mount_copy(-1, &rep, &reads, &wrote);
  std::string where;
  if (st.is_ok() && rep.from_checkpoint) {
    if (wrote) {
      where = "a mount from a checkpoint programmed or erased";
    } else if (reads > 0) {
      const std::string before = file_bytes(path);
      MountReport cut_rep, again;
      uint64_t ignored = 0;
      (void)mount_copy(int64_t(rng() % reads), &cut_rep, &ignored, &wrote);
      if (wrote || file_bytes(copy) != before) {
        where = "a mount from a checkpoint cut part-way changed the image";
      } else {
        std::unique_ptr<EmulatedNand> nand;
        std::unique_ptr<PageStore> store;
        st = EmulatedNand::open_file(copy, &nand);
        if (st.is_ok()) st = mount_store(*nand, &store, &again);
        if (!st.is_ok() || !again.from_checkpoint ||
            again.checkpoint_gen != rep.checkpoint_gen ||
            again.replayed_blocks != rep.replayed_blocks)
          where = "the mount after a cut mount differs: " + st.to_string() + ", " +
                  (again.from_checkpoint ? "checkpoint" : "scan: " + again.scan_reason);
        else
          *cut = true;
      }
    }
  }
  std::filesystem::remove(copy);
  return where;
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
  RunResult run;
  PDL_TRY(run_workload(o, c, wl, path, int64_t(k), tear, tear_seed, false, &run));
  t->sim_s += run.sim_s;
  if (!run.landed)
    return Status::error(Errc::kInvalidArgument, "the run ended before cut " +
                                                     std::to_string(k) + " (not repeatable?)");
  const uint64_t acked = run.acked;
  t->cuts++;
  t->acked += acked;
  t->sites[size_t(run.site)]++;
  if (run.in_close) t->in_close++;
  bool mount_was_cut = false;
  std::string where = mount_cut(path, rng, &mount_was_cut);
  if (mount_was_cut) t->mount_cuts++;
  if (where.empty() && recovery_cut) {
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
               !(run.in_flight && sum == ref.checksum[acked + 1])) {
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
                 "--seed %llu --txns %llu --reopen %llu --replay-blocks %u --table-cache %u "
                 "%s%s--checkpoint %s --factor %g --chip %s --block-pages %u --trial %llu\n",
                 c.name().c_str(), (unsigned long long)index,
                 (unsigned long long)k, (unsigned long long)ref.ops, int(tear),
                 recovery_cut ? ", then a cut in the recovery" : "", (unsigned long long)acked,
                 where.c_str(), c.method.c_str(), c.commit.c_str(), c.journal.c_str(),
                 (unsigned long long)o.seed, (unsigned long long)o.txns,
                 (unsigned long long)o.reopen, o.replay_blocks, o.table_cache,
                 o.nvm.empty() ? "" : "--nvm ", o.nvm.empty() ? "" : (o.nvm + " ").c_str(),
                 o.checkpoint ? "on" : "off", o.factor, o.chip.c_str(), o.block_pages, (unsigned long long)index);
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
  const Totals t0 = *t;
  for (uint64_t i = 0; i < trials; i++) {
    if (o.only_trial >= 0 && uint64_t(o.only_trial) != i) continue;
    PDL_TRY(trial(o, c, wl, tmpl, dir, ref, i, t));
  }
  std::printf("  %-4s %-7s %-8s %6llu cuts over %llu flash operations (%llu erases) of %llu "
              "transactions, %llu failed\n",
              c.method.c_str(), c.commit.c_str(), c.journal.c_str(),
              (unsigned long long)(t->cuts - t0.cuts),
              (unsigned long long)ref.ops, (unsigned long long)ref.erases,
              (unsigned long long)o.txns, (unsigned long long)(t->failures - t0.failures));
  CutSites sites{};
  for (size_t i = 0; i < sites.size(); i++) sites[i] = t->sites[i] - t0.sites[i];
  std::printf("       landed: %s; %llu in a clean close (%llu closes, %llu reopens from the "
              "checkpoint per run); %llu mounts from a checkpoint cut\n",
              describe(sites).c_str(), (unsigned long long)(t->in_close - t0.in_close),
              (unsigned long long)ref.closes, (unsigned long long)ref.open_from_checkpoint,
              (unsigned long long)(t->mount_cuts - t0.mount_cuts));
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
              "per trial, %s, chip %s (%u pages of 2 KiB per block), checkpoint area %s, replay_blocks %u, table_cache %s, NVM %s, a clean close "
              "and reopen every %llu transactions, seed %llu\n",
              (unsigned long long)(per * configs.size()), (unsigned long long)per,
              (unsigned long long)o.txns, Scale::make(1, o.factor).describe().c_str(),
              o.chip.c_str(), o.block_pages, o.checkpoint ? "on" : "off", o.replay_blocks,
              o.table_cache ? std::to_string(o.table_cache).c_str() : "default",
              o.nvm.empty() ? "none" : (o.nvm + " (pdl, ipl)").c_str(), (unsigned long long)o.reopen, (unsigned long long)o.seed);
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
              "ones found durable; simulated flash time %.1f s; wall %.1f s\n"
              "pdl-crash: cuts landed in %s; %llu in a clean close; %llu mounts from a "
              "checkpoint cut part-way (each programmed nothing, the image unchanged)\n",
              (unsigned long long)t.cuts, (unsigned long long)t.recovery_cuts,
              (unsigned long long)t.failures, (unsigned long long)t.acked,
              (unsigned long long)t.in_flight_durable, t.sim_s, wall, describe(t.sites).c_str(),
              (unsigned long long)t.in_close, (unsigned long long)t.mount_cuts);
  if (!o.keep) std::filesystem::remove_all(root);
  return t.failures ? 1 : 0;
}

int main(int argc, char** argv) {
  return pdl::guarded_main("pdl-crash", run, argc, argv, 1);
}
