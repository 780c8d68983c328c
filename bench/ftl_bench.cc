// ftl_bench.cc — pdl-ftlbench: [IPL-B+tree]'s random-insert experiment (its Fig. 6) on SQLite:
// N random-key inserts into an indexed table (random_inserts.h; SQLite's B-tree, page = flash
// page of 2 KiB) on each page-update method over raw NAND (PDL(256B), PDL(2KB), OPU, IPL(18KB))
// and on commodity FTL devices (the page-mapping FTL, BAST and FAST with the paper's 11 % and
// 22 % log blocks), SQLite's cache swept like the paper's buffer frames, in two durability
// settings (paper: no per-insert durability; durable: synchronous=FULL, a commit per insert).
//
// For every (setting, cache, method): a fresh emulated chip of one size for all methods, the
// same inserts, and the chip's reads, programs, erases and simulated I/O time ([PDL] Table 1
// timing) over the inserts; the table's content is checked afterwards (count and key sum).
// Log blocks: the paper's 16 and 32 log blocks were 11 % and 22 % of its B+-tree's data
// blocks; bast16/fast16 get 11 % and bast32/fast32 22 % of the blocks this run's database
// occupies (measured by the same inserts on the unix VFS first), at least 2.
// Exit status: 0 ok, 1 a run or a check failed, 2 usage error.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/chip_size.h"
#include "bench/random_inserts.h"
#include "bench/results_file.h"
#include "bench/sql_scratch.h"
#include "cli/app.h"
#include "flash/common/c_edge.h"
#include "flash/common/json.h"
#include "flash/common/output_file.h"
#include "flash/common/scratch_dir.h"
#include "flash/common/split.h"
#include "flash/image/image_counters.h"
#include "flash/image/image_params.h"
#include "flash/image/methods.h"
#include "flash/image/open_store.h"
#include "sql/sql.h"
#include "vfs/pdl_vfs.h"

namespace {

using namespace pdl;
using namespace pdl::bench;
using Clock = std::chrono::steady_clock;

const char kDescription[] =
    "The IPL B+-tree paper's random-insert experiment on SQLite: N random-key inserts into an\n"
    "indexed table on PDL, OPU and IPL over raw NAND and on page-mapping, BAST and FAST FTL\n"
    "devices, SQLite's cache swept; reads, programs, erases and simulated I/O time.";
const char kExitStatus[] =
    "exit status: 0 ok, 1 a run or a check failed (message printed), 2 usage error.";

constexpr uint32_t kPage = 2048;
constexpr uint32_t kPagesPerBlock = 64;
// [IPL-B+tree]: 16 and 32 log blocks were 11 % and 22 % of the data blocks (about 145).
constexpr double kPaperDataBlocks = 16 / 0.11;

struct Options {
  uint64_t keys = 200000;
  uint64_t seed = 1;
  std::vector<std::string> methods{"pdl256", "pdl2k", "opu", "ipl18k", "ftl-page",
                                   "bast16", "bast32", "fast16",  "fast32"};
  std::vector<double> cache_pct{1, 4, 16, 64};
  std::vector<std::string> settings{"paper", "durable"};
  uint64_t batch = 0;          // paper setting: inserts per transaction (0: keys / 10)
  uint64_t durable_batch = 1;  // durable setting: inserts per transaction
  uint64_t durable_keys = 0;   // durable setting: keys (0: keys / 4)
  std::string dir, json, txt;
  bool paper = false, quiet = false;
};

struct Record {
  std::string setting, key, label;
  double cache_pct = 0;
  int64_t cache_pages = 0;
  uint64_t keys = 0, batch = 0, chip_bytes = 0;
  uint32_t log_blocks = 0;  // BAST/FAST
  std::string commit;
  NandCounters flash;       // over the inserts
  double wall_s = 0;
  int64_t db_pages = 0;     // at the end
};

// The preset for `key`, BAST/FAST log blocks scaled to `db_blocks` data blocks.
MethodPreset scaled_preset(const MethodPreset& p, uint64_t db_blocks) {
  MethodPreset q = p;
  if (q.ftl == FtlKind::kBast || q.ftl == FtlKind::kFast)
    q.log_blocks = std::max<uint32_t>(
        2, uint32_t(std::lround(double(p.log_blocks) * double(db_blocks) / kPaperDataBlocks)));
  return q;
}

Status check_table(sql::Db& db, uint64_t n) {
  int64_t count = 0, sum = 0;
  PDL_TRY(db.query_int("SELECT count(*) FROM t", &count));
  PDL_TRY(db.query_int("SELECT sum(k) FROM t", &sum));
  const int64_t want = int64_t(n) * int64_t(n + 1) / 2;
  if (uint64_t(count) != n || sum != want)
    return Status::error(Errc::kCorrupt, "table holds " + std::to_string(count) +
                                             " entries (key sum " + std::to_string(sum) +
                                             "), expected " + std::to_string(n) + " (" +
                                             std::to_string(want) + ")");
  std::string ic;
  PDL_TRY(db.query_text("PRAGMA integrity_check", &ic));
  if (ic != "ok") return Status::error(Errc::kCorrupt, "integrity_check: " + ic);
  return Status::ok();
}

// The database pages the inserts leave, measured on the unix VFS in `work`.
Status unix_db_pages(const std::string& work, const InsertSetting& s,
                     const std::vector<int64_t>& keys, int64_t* pages) {
  const std::string path = work + "/unix.db";
  {
    sql::Db db;
    PDL_TRY(db.open("file:" + path + "?vfs=unix"));
    PDL_TRY(db.exec("PRAGMA page_size=" + std::to_string(kPage)));
    PDL_TRY(prepare_inserts(db, s, 100000));
    PDL_TRY(run_inserts(db, s, keys));
    PDL_TRY(db.query_int("PRAGMA page_count", pages));
    PDL_TRY(db.close());
  }
  for (const char* sfx : {"", "-journal"}) unlink((path + sfx).c_str());
  return Status::ok();
}

Status run_one(const std::string& work, const InsertSetting& s, const MethodPreset& m,
               const std::vector<int64_t>& keys, double pct, int64_t final_pages,
               uint64_t chip, Record* r) {
  const std::string path = work + "/" + m.key + ".db";
  r->setting = s.name;
  r->key = m.key;
  r->label = m.label;
  r->cache_pct = pct;
  r->cache_pages = std::max<int64_t>(1, std::llround(double(final_pages) * pct / 100.0));
  r->keys = keys.size();
  r->batch = s.batch;
  r->chip_bytes = chip;
  r->log_blocks = m.log_blocks;
  // Durable: the raw-NAND methods with their atomic commit (the journal in memory), the FTL
  // devices with the journal on the device; paper: no journal at all.
  r->commit = s.name == "durable" && has_atomic_commit(m.method) ? "atomic" : "journal";
  const std::string uri = "file:" + path + "?vfs=pdl&" + m.uri_params(kPage) + "&page=" +
                          std::to_string(kPage) + "&size=" + std::to_string(chip) +
                          "&clock=logical&commit=" + r->commit;
  Status st;
  {
    sql::Db db;
    st = db.open(uri);
    if (st.is_ok()) st = db.exec("PRAGMA page_size=" + std::to_string(kPage));
    if (st.is_ok()) st = prepare_inserts(db, s, r->cache_pages);
    Image* img = st.is_ok() ? vfs::image_of(path) : nullptr;
    if (st.is_ok() && !img) st = Status::error(Errc::kIoError, "the VFS has no image " + path);
    if (st.is_ok()) {
      const ImageCounters before = snapshot(*img);
      const auto t0 = Clock::now();
      st = run_inserts(db, s, keys);
      r->wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (st.is_ok()) r->flash = (snapshot(*img) - before).nand;
    }
    if (st.is_ok()) st = check_table(db, keys.size());
    if (st.is_ok()) st = db.query_int("PRAGMA page_count", &r->db_pages);
    const Status cl = db.close();
    if (st.is_ok()) st = cl;
  }
  for (const char* sfx : {"", "-journal"}) unlink((path + sfx).c_str());
  if (!st.is_ok())
    return Status::error(st.code(), m.label + " (" + s.name + ", cache " + std::to_string(pct) +
                                        "%): " + std::string(st.message()));
  return Status::ok();
}

std::string describe(const MethodPreset& m) {
  if (m.ftl == FtlKind::kBast || m.ftl == FtlKind::kFast)
    return m.label + " [" + std::to_string(m.log_blocks) + " log blocks]";
  return m.label;
}

void print_tables(FILE* f, const Options& o, const std::vector<Record>& recs,
                  const std::vector<MethodPreset>& methods, uint64_t db_blocks) {
  std::fprintf(f, "pdl-ftlbench: [IPL-B+tree] random inserts on SQLite (2 KiB pages = flash "
                  "pages), seed %llu; the database ends on %llu blocks of 64 pages; BAST/FAST "
                  "log blocks: %s 11 %%, %s 22 %% of them\n",
               (unsigned long long)o.seed, (unsigned long long)db_blocks, "bast16/fast16 =",
               "bast32/fast32 =");
  std::fprintf(f, "Simulated I/O time: [PDL] Table 1 (read 110 us, program 1010 us, erase "
                  "1500 us). Counts are flash operations over the inserts.\n");
  for (const std::string& setting : o.settings) {
    std::vector<const Record*> rs;
    for (const Record& r : recs)
      if (r.setting == setting) rs.push_back(&r);
    if (rs.empty()) continue;
    std::fprintf(f, "\n== setting %s: %llu keys, %llu inserts per transaction, %s ==\n",
                 setting.c_str(), (unsigned long long)rs[0]->keys,
                 (unsigned long long)rs[0]->batch,
                 setting == "durable"
                     ? "journal_mode=DELETE, synchronous=FULL (raw NAND: atomic commit; FTL: "
                       "journal on the device)"
                     : "journal_mode=OFF, synchronous=OFF (no log, as the paper's B+-tree)");
    std::fprintf(f, "%-30s %7s %6s %10s %10s %9s %10s %8s\n", "method", "cache%", "frames",
                 "reads", "programs", "erases", "sim s", "x best");
    for (double pct : o.cache_pct) {
      double best = 0;
      for (const Record* r : rs)
        if (r->cache_pct == pct && !is_ftl_device(find_method(r->key)->method) &&
            (best == 0 || double(r->flash.sim_us) < best))
          best = double(r->flash.sim_us);
      for (const MethodPreset& m : methods)
        for (const Record* r : rs)
          if (r->cache_pct == pct && r->key == m.key)
            std::fprintf(f, "%-30s %7g %6lld %10llu %10llu %9llu %10.2f %8.2f\n",
                         describe(m).c_str(), pct, (long long)r->cache_pages,
                         (unsigned long long)(r->flash.page_reads + r->flash.spare_reads),
                         (unsigned long long)r->flash.programs,
                         (unsigned long long)r->flash.erases, double(r->flash.sim_us) / 1e6,
                         best > 0 ? double(r->flash.sim_us) / best : 0.0);
      std::fprintf(f, "\n");
    }
  }
  std::fprintf(f, "x best = simulated I/O time / the best raw-NAND method's at that cache "
                  "size.\n");
}

std::string json_of(const Options& o, const std::vector<Record>& recs, uint64_t db_blocks) {
  std::vector<std::string> rows;
  for (const Record& r : recs) {
    JsonObj j;
    j.s("setting", r.setting).s("method", r.key).s("label", r.label)
        .b("ftl_device", is_ftl_device(find_method(r.key)->method)).s("commit", r.commit)
        .n("cache_pct", r.cache_pct).u("cache_pages", uint64_t(r.cache_pages))
        .u("keys", r.keys).u("batch", r.batch).u("chip_bytes", r.chip_bytes)
        .u("log_blocks", r.log_blocks).u("reads", r.flash.page_reads + r.flash.spare_reads)
        .u("page_reads", r.flash.page_reads).u("spare_reads", r.flash.spare_reads)
        .u("programs", r.flash.programs).u("erases", r.flash.erases)
        .u("bytes_programmed", r.flash.bytes_programmed)
        .n("sim_s", double(r.flash.sim_us) / 1e6).n("wall_s", r.wall_s)
        .u("db_pages", uint64_t(r.db_pages));
    rows.push_back(j.str());
  }
  JsonObj top;
  top.s("tool", "pdl-ftlbench").b("paper_scale", o.paper).u("keys", o.keys).u("seed", o.seed)
      .u("page_bytes", kPage).u("pages_per_block", kPagesPerBlock).u("db_blocks", db_blocks)
      .s("timing", "PDL paper Table 1: read 110 us, program 1010 us, erase 1500 us (simulated)")
      .a("runs", rows);
  return top.str() + "\n";
}

}  // namespace

static int run(int argc, char** argv) {
  Options o;
  cli::CommandLine cl({"pdl-ftlbench", {"[options]"}, kDescription, kExitStatus});
  cli::App& app = cl.app();
  std::string methods, caches, settings;
  cli::Option* keys = app.add_option("--keys", o.keys, "random-key inserts")
      ->type_name("N")->check(cli::integer(1, 100000000))->default_str("200000; --paper 1000000");
  app.add_flag("--paper", o.paper, "the paper's scale: 1,000,000 keys");
  app.add_option("--methods", methods, "catalogue keys")
      ->type_name("LIST")->default_str("pdl256,pdl2k,opu,ipl18k,ftl-page,bast16,bast32,fast16,fast32");
  app.add_option("--cache-pct", caches, "SQLite cache sizes, % of the final database's pages")
      ->type_name("LIST")->default_str("1,4,16,64");
  app.add_option("--settings", settings, "paper and/or durable")
      ->type_name("LIST")->check(cli::list_of({"paper", "durable"}, "setting"))
      ->default_str("paper,durable");
  app.add_option("--batch", o.batch, "paper setting: inserts per transaction")
      ->type_name("N")->check(cli::integer(1, 100000000))->default_str("keys / 10");
  app.add_option("--durable-batch", o.durable_batch, "durable setting: inserts per transaction")
      ->type_name("N")->check(cli::integer(1, 100000000))->capture_default_str();
  app.add_option("--durable-keys", o.durable_keys, "durable setting: random-key inserts")
      ->type_name("N")->check(cli::integer(1, 100000000))->default_str("keys / 4");
  app.add_option("--seed", o.seed, "key order")
      ->type_name("N")->check(cli::integer(0, UINT64_MAX))->capture_default_str();
  app.add_option("--dir", o.dir, "scratch directory")->type_name("DIR")
      ->default_str("/dev/shm, else /tmp");
  app.add_option("--json", o.json, "write the results as JSON")->type_name("FILE");
  app.add_option("--txt", o.txt, "also write the tables to FILE")->type_name("FILE");
  app.add_flag("--quiet", o.quiet, "no progress on stderr");
  if (const int rc = cl.parse(argc, argv); rc >= 0) return rc;
  if (o.paper && !keys->count()) o.keys = 1000000;
  if (!settings.empty()) o.settings = split_list(settings);
  if (!caches.empty()) {
    o.cache_pct.clear();
    const cli::Validator pct = cli::number(1e-6, 1000);
    for (std::string v : split_list(caches)) {
      if (const std::string why = pct(v); !why.empty()) return cl.error("--cache-pct: " + why);
      o.cache_pct.push_back(std::strtod(v.c_str(), nullptr));
    }
    if (o.cache_pct.empty()) return cl.error("--cache-pct: no size given");
  }
  std::vector<MethodPreset> presets;
  for (const std::string& k : split_list(methods.empty() ? "pdl256,pdl2k,opu,ipl18k,ftl-page,"
                                                           "bast16,bast32,fast16,fast32"
                                                         : methods)) {
    const MethodPreset* p = find_method(k);
    if (!p) return cl.error("--methods: unknown method '" + k + "' (known: " + method_keys() + ")");
    if (p->method == Method::kStableBuffer || p->method == Method::kIpu)
      return cl.error("--methods: " + k + " is not in this experiment (raw-NAND PDL, OPU, IPL "
                                          "and the FTL devices without StableBuffer)");
    presets.push_back(*p);
  }
  if (presets.empty()) return cl.error("--methods: no method given");
  for (const std::string& f : {o.json, o.txt})
    if (!f.empty())
      if (Status st = check_output_file(f); !st.is_ok())
        return cl.error(f + ": " + std::string(st.message()));
  if (o.batch == 0) o.batch = std::max<uint64_t>(1, o.keys / 10);
  if (o.durable_keys == 0) o.durable_keys = std::max<uint64_t>(1, o.keys / 4);

  std::string work;
  if (!open_sql_scratch("pdl-ftlbench", o.dir, &work)) return 1;
  std::vector<Record> recs;
  uint64_t db_blocks = 0;
  std::vector<MethodPreset> scaled;
  Status st;
  for (const std::string& sname : o.settings) {
    InsertSetting s{sname, sname == "durable" ? o.durable_batch : o.batch};
    const std::vector<int64_t> keys =
        insert_order(sname == "durable" ? o.durable_keys : o.keys, o.seed);
    int64_t final_pages = 0;
    st = unix_db_pages(work, s, keys, &final_pages);
    if (!st.is_ok()) break;
    const uint64_t blocks = (uint64_t(final_pages) + kPagesPerBlock - 1) / kPagesPerBlock;
    // The log-block shares follow the paper-setting database (the experiment's); the durable
    // one runs fewer keys on the same devices.
    if (db_blocks == 0) {
      db_blocks = blocks;
      for (const MethodPreset& p : presets) scaled.push_back(scaled_preset(p, db_blocks));
    }
    const uint64_t chip = chip_bytes_for(uint64_t(std::max(final_pages, int64_t(db_blocks) *
                                                                            kPagesPerBlock)) *
                                             kPage,
                                         scaled, kPage, kPagesPerBlock);
    for (double pct : o.cache_pct)
      for (const MethodPreset& m : scaled) {
        if (!o.quiet)
          std::fprintf(stderr, "%s: %s, %zu keys, cache %g%% ...\n", sname.c_str(),
                       describe(m).c_str(), keys.size(), pct);
        Record r;
        st = run_one(work, s, m, keys, pct, final_pages, chip, &r);
        if (!st.is_ok()) break;
        recs.push_back(r);
      }
    if (!st.is_ok()) break;
  }
  rmdir(work.c_str());
  if (!st.is_ok()) {
    std::fprintf(stderr, "pdl-ftlbench: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  print_tables(stdout, o, recs, scaled, db_blocks);
  return write_results(
      "pdl-ftlbench", o.txt, [&](FILE* f) { print_tables(f, o, recs, scaled, db_blocks); }, o.json,
      [&] { return json_of(o, recs, db_blocks); });
}

int main(int argc, char** argv) { return pdl::guarded_main("pdl-ftlbench", run, argc, argv, 1); }
