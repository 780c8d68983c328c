// nvm_bench.cc — pdl-nvmbench: [IPL-PCRAM] §4's evaluation (its Fig. 2) on SQLite: small
// records (40-50 bytes) inserted in random order into a B+-tree (an SQLite table through the pdl
// VFS, kv_records.h), then retrieved in random order, on flash-only IPL (512-byte log sectors
// programmed into the block's flash log pages) and on IPL with every block's log area in PCRAM
// beside the chip, with 512-byte and 128-byte in-memory log sectors.
//
// The paper: 5 M records, 8 KB pages, a 20 MB buffer over a 360 MB database (5.5 %). Here
// --records (default 200,000; --quick 20,000; --paper 5,000,000) with the same page size and
// the same buffer share: SQLite's cache = --buffer-pct (5.5) % of the database's final pages,
// measured by the same inserts on the unix VFS first. Every method gets a fresh emulated chip
// of one size (at least twice the database in every method's logical pages), IPL(18KB)'s log
// capacity per block in both media: flash-only 18 KiB of log pages per 128 KiB block; PCRAM
// 18 KiB of NVM per block (the catalogue's ipl-pcram entries).
//
// Per phase (insert, retrieve) and method: the chip's reads, programs, erases, IPL's merges and
// log sectors, the NVM's writes, reads and bytes, and two simulated times, both
// machine-independent: `sim_s` as the chip measured it ([PDL] Table 1 flash timing: read 110,
// program 1010, erase 1500 us; PCRAM [IPL-PCRAM] Table 1), and `paper_s`, the same operation
// counts at [IPL-PCRAM] Table 1's flash timing (read 75 us, program 250 us, a 512-byte log
// sector 213 us, erase 1.5 ms) plus the PCRAM time — the setting of the paper's figure.
// Exit status: 0 ok, 1 a run or a content check failed, 2 usage error.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/chip_size.h"
#include "bench/kv_records.h"
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
    "The IPL-with-PCRAM paper's evaluation on SQLite: small records inserted in random order\n"
    "into a table, then retrieved in random order, on flash-only IPL and on IPL with its log\n"
    "areas in PCRAM (512- and 128-byte log sectors); simulated time, merges and NVM per phase.";
const char kExitStatus[] =
    "exit status: 0 ok, 1 a run or a check failed (message printed), 2 usage error.";

constexpr uint32_t kFlashPage = 2048;
constexpr uint32_t kPagesPerBlock = 64;
// [IPL-PCRAM] Table 1 (NAND: Samsung K9F8G08U0M) and §4: a 512-byte sector write 213 us.
constexpr double kPaperReadUs = 75, kPaperProgramUs = 250, kPaperSectorUs = 213,
                 kPaperEraseUs = 1500;
const char kDefaultMethods[] = "ipl18k,ipl-pcram512,ipl-pcram";

struct Options {
  uint64_t records = 200000, seed = 1, batch = 0;
  uint32_t db_page = 8192;
  double buffer_pct = 5.5;
  std::string dir, json, txt;
  bool quick = false, paper = false, quiet = false;
};

struct Phase {
  std::string method, label, phase;
  NandCounters flash;
  StoreStats store;
  double wall_s = 0;
  bool nvm = false;  // the method keeps its log in NVM (its log sectors are NVM writes)
  // Log sectors programmed into flash (flash-only IPL's partial programs).
  uint64_t flash_sectors() const { return nvm ? 0 : store.log_sectors; }
  double paper_us() const {
    const double reads = double(flash.page_reads + flash.spare_reads);
    const double sectors = double(flash_sectors());
    return reads * kPaperReadUs + (double(flash.programs) - sectors) * kPaperProgramUs +
           sectors * kPaperSectorUs + double(flash.erases) * kPaperEraseUs +
           double(flash.nvm_ns) / 1000.0;
  }
};

struct MethodRun {
  MethodPreset m;
  uint32_t nvm_bytes = 0, log_sector = 0;
  std::vector<Phase> phases;
};

// The database pages the inserts leave, measured on the unix VFS in `work`.
Status unix_db_pages(const std::string& work, const Options& o, int64_t* pages) {
  const std::string path = work + "/unix.db";
  {
    sql::Db db;
    PDL_TRY(db.open("file:" + path + "?vfs=unix"));
    KvRecords kv(o.records, o.batch, o.seed);
    PDL_TRY(kv.prepare(db, o.db_page, 100000));
    PDL_TRY(kv.insert_all());
    PDL_TRY(db.query_int("PRAGMA page_count", pages));
  }
  unlink(path.c_str());
  return Status::ok();
}

Status run_method(const std::string& work, const Options& o, uint64_t chip, int64_t cache_pages,
                  MethodRun* r) {
  const std::string path = work + "/" + r->m.key + ".db";
  const std::string uri = "file:" + path + "?vfs=pdl&" + r->m.uri_params(kFlashPage, chip) +
                          "&page=" + std::to_string(kFlashPage) + "&size=" +
                          std::to_string(chip) + "&clock=logical&commit=journal";
  Status st;
  {
    sql::Db db;
    st = db.open(uri);
    KvRecords kv(o.records, o.batch, o.seed);
    if (st.is_ok()) st = kv.prepare(db, o.db_page, cache_pages);
    Image* img = st.is_ok() ? vfs::image_of(path) : nullptr;
    if (st.is_ok() && !img) st = Status::error(Errc::kIoError, "the VFS has no image " + path);
    if (st.is_ok()) {
      r->nvm_bytes = img->nand->geometry().nvm_bytes;
      auto lock = img->volume->lock();
      r->log_sector = img->volume->store().params().log_sector;
    }
    for (int phase = 0; phase < 2 && st.is_ok(); phase++) {
      const ImageCounters before = snapshot(*img);
      const auto t0 = Clock::now();
      st = phase == 0 ? kv.insert_all() : kv.retrieve_all();
      Phase p;
      p.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (!st.is_ok()) break;
      const ImageCounters d = snapshot(*img) - before;
      p.method = r->m.key;
      p.label = r->m.label;
      p.phase = phase == 0 ? "insert" : "retrieve";
      p.flash = d.nand;
      p.store = d.store;
      p.nvm = r->m.uses_nvm();
      r->phases.push_back(p);
    }
    if (st.is_ok()) {
      int64_t n = 0;
      st = db.query_int("SELECT count(*) FROM kv", &n);
      if (st.is_ok() && uint64_t(n) != o.records)
        st = Status::error(Errc::kCorrupt, "the table holds " + std::to_string(n) +
                                               " records, expected " + std::to_string(o.records));
    }
    const Status cl = db.close();
    if (st.is_ok()) st = cl;
  }
  unlink(path.c_str());
  if (!st.is_ok())
    return Status::error(st.code(), r->m.label + ": " + std::string(st.message()));
  return Status::ok();
}

void print_tables(FILE* f, const Options& o, const std::vector<MethodRun>& runs, uint64_t chip,
                  int64_t db_pages, int64_t cache_pages) {
  std::fprintf(f,
               "pdl-nvmbench: [IPL-PCRAM] Fig. 2 on SQLite: %llu records of 40-50 bytes, "
               "random inserts then random retrievals; SQLite pages %u B, the database %lld "
               "pages (%.1f MiB), cache %lld pages (%.1f %%); chip %.0f MiB of %u-byte flash "
               "pages, seed %llu\n",
               (unsigned long long)o.records, o.db_page, (long long)db_pages,
               double(db_pages) * o.db_page / 1048576.0, (long long)cache_pages,
               100.0 * double(cache_pages) / double(std::max<int64_t>(1, db_pages)),
               double(chip) / 1048576.0, kFlashPage, (unsigned long long)o.seed);
  std::fprintf(f, "paper s: the counts at [IPL-PCRAM] Table 1 flash timing (read 75 us, program "
                  "250 us, 512-B sector 213 us, erase 1.5 ms) + PCRAM time; sim s: as the chip "
                  "measured ([PDL] Table 1 flash + PCRAM).\n");
  for (const char* phase : {"insert", "retrieve"}) {
    std::fprintf(f, "\n== %s ==\n", phase);
    std::fprintf(f, "%-18s %10s %9s %9s %9s %7s %9s %9s %11s %9s %9s %8s\n", "method", "paper s",
                 "sim s", "reads", "programs", "erases", "merges", "sectors", "nvm KiB wr",
                 "nvm wr", "nvm rd", "wall s");
    for (const MethodRun& r : runs)
      for (const Phase& p : r.phases)
        if (p.phase == phase)
          std::fprintf(f, "%-18s %10.2f %9.2f %9llu %9llu %7llu %9llu %9llu %11.0f %9llu %9llu "
                          "%8.1f\n",
                       p.label.c_str(), p.paper_us() / 1e6, double(p.flash.sim_us) / 1e6,
                       (unsigned long long)(p.flash.page_reads + p.flash.spare_reads),
                       (unsigned long long)p.flash.programs, (unsigned long long)p.flash.erases,
                       (unsigned long long)p.store.merges,
                       (unsigned long long)p.store.log_sectors,
                       double(p.flash.nvm_bytes_written) / 1024.0,
                       (unsigned long long)p.flash.nvm_writes,
                       (unsigned long long)p.flash.nvm_reads, p.wall_s);
  }
  std::fprintf(f, "\nsectors = log sectors written (flash-only: partial programs; PCRAM: NVM "
                  "writes of one sector each).\n");
}

std::string json_of(const Options& o, const std::vector<MethodRun>& runs, uint64_t chip,
                    int64_t db_pages, int64_t cache_pages) {
  std::vector<std::string> rows;
  for (const MethodRun& r : runs)
    for (const Phase& p : r.phases) {
      JsonObj j;
      j.s("method", p.method).s("label", p.label).s("phase", p.phase).b("nvm", p.nvm)
          .u("nvm_bytes", r.nvm_bytes).u("log_sector", r.log_sector)
          .u("log_region", r.m.log_region)
          .n("paper_s", p.paper_us() / 1e6).n("sim_s", double(p.flash.sim_us) / 1e6)
          .u("page_reads", p.flash.page_reads).u("spare_reads", p.flash.spare_reads)
          .u("programs", p.flash.programs).u("erases", p.flash.erases)
          .u("merges", p.store.merges).u("merge_pages", p.store.merge_pages)
          .u("log_sectors", p.store.log_sectors).u("flash_log_sectors", p.flash_sectors())
          .u("log_records", p.store.log_records).u("log_bytes", p.store.log_bytes)
          .u("nvm_writes", p.flash.nvm_writes).u("nvm_reads", p.flash.nvm_reads)
          .u("nvm_bytes_written", p.flash.nvm_bytes_written)
          .u("nvm_bytes_read", p.flash.nvm_bytes_read).n("nvm_s", double(p.flash.nvm_ns) / 1e9)
          .n("wall_s", p.wall_s);
      rows.push_back(j.str());
    }
  JsonObj top;
  top.s("tool", "pdl-nvmbench").b("quick", o.quick).b("paper_scale", o.paper)
      .u("records", o.records).u("seed", o.seed).u("batch", o.batch).u("db_page", o.db_page)
      .u("flash_page", kFlashPage).u("pages_per_block", kPagesPerBlock)
      .n("buffer_pct", o.buffer_pct).u("db_pages", uint64_t(db_pages))
      .u("cache_pages", uint64_t(cache_pages)).u("chip_bytes", chip)
      .s("paper_timing", "IPL-PCRAM Table 1: read 75 us, program 250 us, 512-B sector 213 us, "
                         "erase 1500 us; PCRAM read 206 ns, write 7.1 us per 32 B, latency 78 ns")
      .s("sim_timing", "PDL Table 1 flash (read 110, program 1010, erase 1500 us) + PCRAM")
      .a("runs", rows);
  return top.str() + "\n";
}

}  // namespace

static int run(int argc, char** argv) {
  Options o;
  cli::CommandLine cl({"pdl-nvmbench", {"[options]"}, kDescription, kExitStatus});
  cli::App& app = cl.app();
  std::string methods;
  cli::Option* records = app.add_option("--records", o.records, "records inserted, then retrieved")
      ->type_name("N")->check(cli::integer(1, 100000000))
      ->default_str("200000; --quick 20000; --paper 5000000");
  app.add_flag("--quick", o.quick, "20,000 records");
  app.add_flag("--paper", o.paper, "the paper's scale: 5,000,000 records (hours)");
  app.add_option("--methods", methods, "catalogue keys (IPL flash-only or with PCRAM)")
      ->type_name("LIST")->default_str(kDefaultMethods);
  app.add_option("--db-page", o.db_page, "SQLite page size (the paper's 8 KB)")
      ->type_name("BYTES")->check(cli::is_member({1024, 2048, 4096, 8192, 16384, 32768, 65536}))
      ->capture_default_str();
  app.add_option("--buffer-pct", o.buffer_pct,
                 "SQLite's cache, % of the database's final pages (the paper's 20 MB of 360 MB)")
      ->type_name("PCT")->check(cli::number(1e-3, 1000))->capture_default_str();
  app.add_option("--batch", o.batch, "inserts (and lookups) per transaction")
      ->type_name("N")->check(cli::integer(1, 100000000))->default_str("records / 10");
  app.add_option("--seed", o.seed, "key orders")
      ->type_name("N")->check(cli::integer(0, UINT64_MAX))->capture_default_str();
  app.add_option("--dir", o.dir, "scratch directory")->type_name("DIR")
      ->default_str("/dev/shm, else /tmp");
  app.add_option("--json", o.json, "write the results as JSON")->type_name("FILE");
  app.add_option("--txt", o.txt, "also write the tables to FILE")->type_name("FILE");
  app.add_flag("--quiet", o.quiet, "no progress on stderr");
  if (const int rc = cl.parse(argc, argv); rc >= 0) return rc;
  if (o.quick && o.paper) return cl.error("--quick and --paper exclude each other");
  if (!records->count()) o.records = o.paper ? 5000000 : o.quick ? 20000 : 200000;
  if (o.batch == 0) o.batch = std::max<uint64_t>(1, o.records / 10);
  std::vector<MethodPreset> presets;
  for (const std::string& k : split_list(methods.empty() ? kDefaultMethods : methods)) {
    const MethodPreset* p = find_method(k);
    if (!p) return cl.error("--methods: unknown method '" + k + "' (known: " + method_keys() + ")");
    if (p->method != Method::kIpl)
      return cl.error("--methods: " + k + " is not IPL (the experiment compares IPL's log media)");
    if (std::none_of(presets.begin(), presets.end(),
                     [&](const MethodPreset& q) { return q.key == p->key; }))
      presets.push_back(*p);
  }
  if (presets.empty()) return cl.error("--methods: no method given");
  for (const std::string& f : {o.json, o.txt})
    if (!f.empty())
      if (Status st = check_output_file(f); !st.is_ok())
        return cl.error(f + ": " + std::string(st.message()));

  std::string work;
  if (!open_sql_scratch("pdl-nvmbench", o.dir, &work)) return 1;
  int64_t db_pages = 0;
  if (!o.quiet) std::fprintf(stderr, "unix VFS: %llu records ...\n", (unsigned long long)o.records);
  Status st = unix_db_pages(work, o, &db_pages);
  const int64_t cache_pages =
      std::max<int64_t>(1, std::llround(double(db_pages) * o.buffer_pct / 100.0));
  const uint64_t chip =
      chip_bytes_for(uint64_t(db_pages) * o.db_page, presets, kFlashPage, kPagesPerBlock);
  std::vector<MethodRun> runs;
  for (const MethodPreset& m : presets) {
    if (!st.is_ok()) break;
    if (!o.quiet) std::fprintf(stderr, "%s: %llu records ...\n", m.label.c_str(),
                               (unsigned long long)o.records);
    MethodRun r;
    r.m = m;
    st = run_method(work, o, chip, cache_pages, &r);
    if (st.is_ok()) runs.push_back(std::move(r));
  }
  rmdir(work.c_str());
  if (!st.is_ok()) {
    std::fprintf(stderr, "pdl-nvmbench: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  print_tables(stdout, o, runs, chip, db_pages, cache_pages);
  return write_results(
      "pdl-nvmbench", o.txt, [&](FILE* f) { print_tables(f, o, runs, chip, db_pages, cache_pages); }, o.json,
      [&] { return json_of(o, runs, chip, db_pages, cache_pages); });
}

int main(int argc, char** argv) { return pdl::guarded_main("pdl-nvmbench", run, argc, argv, 1); }
