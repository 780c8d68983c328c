// report.cc — see report.h.
#include "tpcc/report.h"

#include <algorithm>
#include <cinttypes>

#include "flash/common/json.h"
#include "flash/image/image_params.h"
#include "flash/image/stats_json.h"
#include "tpcc/figures.h"

namespace pdl::tpcc {
namespace {

// A member's figures per transaction.
struct Derived {
  CostSplit per_txn;  // divided by transactions
  double nopm = 0, tps = 0;
  double cpu_per_txn = 0;  // host CPU seconds per transaction
  // [StableBuffer]'s two metrics in simulated time (docs/design.md, "write response time"):
  // device time SQLite waited for per page write (everything but its reads: the writes, the
  // syncs, the merges and GC they caused, divided by its xWrite calls), and transactions per
  // simulated second of device time (reads included).
  double write_response_us = 0;
  double write_us = 0;         // the phase's device time outside SQLite's reads
  double sim_tps = 0;          // transactions / simulated seconds
  double sim_writes_per_s = 0; // xWrite calls / simulated seconds
};

Derived derive(const Measurement& m) {
  Derived d;
  const double n = m.txns ? double(m.txns) : 1.0;
  if (m.has_flash) {
    d.per_txn = split_costs(m.flash);
    for (Part* p : {&d.per_txn.database, &d.per_txn.journal, &d.per_txn.directory,
                    &d.per_txn.total})
      *p /= n;
    d.per_txn.gc_sim_us /= n;
    const double total_us = double(m.flash.nand.sim_us);
    d.write_us = std::max(0.0, total_us - m.io.read_us);
    d.write_response_us = m.io.writes ? d.write_us / double(m.io.writes) : 0;
    d.sim_tps = total_us > 0 ? double(m.txns) / (total_us / 1e6) : 0;
    d.sim_writes_per_s = total_us > 0 ? double(m.io.writes) / (total_us / 1e6) : 0;
  }
  if (m.wall_s > 0) {
    d.tps = double(m.txns) / m.wall_s;
    d.nopm = double(m.new_orders) / (m.wall_s / 60.0);
  }
  d.cpu_per_txn = m.cpu_s / n;
  return d;
}

const Measurement* member(const RunResult& r, const std::string& key) {
  for (const Measurement& m : r.members)
    if (m.key == key) return &m;
  return nullptr;
}

// The reference for ratios: PDL(256B) — with atomic commit if both modes ran — if present,
// else the first member with flash.
const Measurement* reference(const RunResult& r) {
  for (const char* key : {"pdl", "pdl-atomic", "pdl-journal"})
    if (const Measurement* m = member(r, key)) return m;
  for (const Measurement& m : r.members)
    if (m.has_flash) return &m;
  return nullptr;
}

// Whether member m survives a power cut in r's journal mode: MEMORY and OFF do only with
// atomic commit (the store then commits whole transactions).
bool member_crash_safe(const RunResult& r, const Measurement& m) {
  return crash_safe(r.journal) || m.commit == "atomic";
}

const Measurement* unix_member(const RunResult& r) {
  for (const Measurement& m : r.members)
    if (!m.has_flash) return &m;
  return nullptr;
}

double ratio(double a, double b) { return b > 0 ? a / b : 0; }

std::string latency_cell(const TypeFigures& t) {
  if (t.wall_us.empty()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f/%.2f/%.2f", percentile(t.wall_us, 50) / 1000,
                percentile(t.wall_us, 95) / 1000, percentile(t.wall_us, 99) / 1000);
  return buf;
}

std::string part_json(const Part& p) {
  JsonObj o;
  o.n("sim_ms", p.sim_us / 1000).n("reads", p.reads).n("programs", p.programs)
      .n("erases", p.erases).n("bytes_programmed", p.bytes_programmed)
      .n("sqlite_bytes_written", p.sqlite_bytes).n("write_amplification", p.write_amplification());
  return o.str();
}

std::string run_json(const RunResult& r) {
  const Measurement* ref = reference(r);
  const Measurement* ux = unix_member(r);
  const Derived dref = ref ? derive(*ref) : Derived{};
  const Derived dux = ux ? derive(*ux) : Derived{};
  std::vector<std::string> members;
  for (size_t i = 0; i < r.members.size(); i++) {
    const Measurement& m = r.members[i];
    const Derived d = derive(m);
    JsonObj o;
    o.s("key", m.key).s("label", m.label).s("vfs", m.has_flash ? "pdl" : "unix")
        .s("commit", m.commit).b("crash_safe", member_crash_safe(r, m))
        .u("first_transaction", m.first_txn).u("transactions", m.txns).n("wall_s", m.wall_s)
        .u("new_orders", m.new_orders).n("nopm", d.nopm).n("transactions_per_s", d.tps);
    o.n("cpu_s", m.cpu_s);
    if (ux)
      o.n("wall_speed_vs_unix", ratio(d.tps, dux.tps))
          .n("cpu_speed_vs_unix", ratio(dux.cpu_per_txn, d.cpu_per_txn));
    std::vector<std::string> types;
    for (int t = 0; t < kTxnTypes; t++) {
      const TypeFigures& tf = m.types[size_t(t)];
      JsonObj to;
      to.s("type", txn_name(TxnType(t))).u("count", tf.count).u("rolled_back", tf.rolled_back)
          .n("p50_ms", percentile(tf.wall_us, 50) / 1000)
          .n("p95_ms", percentile(tf.wall_us, 95) / 1000)
          .n("p99_ms", percentile(tf.wall_us, 99) / 1000);
      if (m.has_flash) to.n("sim_ms_per_txn", tf.count ? tf.sim_us / double(tf.count) / 1000 : 0);
      types.push_back(to.str());
    }
    o.a("latency", types);
    if (m.has_flash) {
      JsonObj pt;
      pt.raw("total", part_json(d.per_txn.total)).raw("database", part_json(d.per_txn.database))
          .raw("journal", part_json(d.per_txn.journal))
          .raw("directory", part_json(d.per_txn.directory))
          .n("gc_sim_ms", d.per_txn.gc_sim_us / 1000);
      o.o("per_transaction", pt);
      o.o("device", JsonObj()
                        .s("method", method_name(m.store.method))
                        .s("ftl", is_ftl_device(m.store.method) ? ftl_name(m.store.ftl) : "")
                        .u("log_blocks", m.store.log_blocks).u("sb_slots", m.store.sb_slots)
                        .s("sb_recognition", sb_recognition_name(m.store.sb_recognition))
                        .s("sb_flush", sb_flush_name(m.store.sb_flush)));
      o.o("io", JsonObj()
                    .u("read_calls", m.io.reads).u("write_calls", m.io.writes)
                    .u("db_write_calls", m.io.db_writes).u("sync_calls", m.io.syncs)
                    .n("sim_ms", double(m.flash.nand.sim_us) / 1000)
                    .n("read_sim_ms", m.io.read_us / 1000).n("write_sim_ms", d.write_us / 1000)
                    .n("write_response_ms", d.write_response_us / 1000)
                    .n("sim_transactions_per_s", d.sim_tps)
                    .n("sim_writes_per_s", d.sim_writes_per_s));
      o.o("store", store_stats_json(m.flash.store)).u("free_blocks_after", m.flash.free_blocks);
      {  // The checkpoint area's work (tpcc/fleet.h, CheckpointFigures).
        const CheckpointFigures& c = m.checkpoint;
        auto ops = [](const NandCounters& n, uint64_t pages) {
          return JsonObj()
              .u("area_pages", pages).u("page_reads", n.page_reads)
              .u("spare_reads", n.spare_reads).u("programs", n.programs)
              .u("erases", n.erases).n("sim_ms", double(n.sim_us) / 1000);
        };
        JsonObj cj;
        cj.b("area", c.area).u("periodic_checkpoints", c.periodic)
            .u("txns_a_cut_would_scan", c.scan_exposed);
        if (!c.none.empty()) cj.s("none", c.none);
        if (c.measured)
          cj.o("periodic_one", ops(c.periodic_one, c.periodic_pages))
              .o("close_one", ops(c.close_one, c.close_pages));
        o.o("checkpoint", cj);
      }
      // The chip's operations over the measured transactions, exact (the figures above are
      // these per transaction).
      const NandCounters& nc = m.flash.nand;
      o.o("counts", JsonObj()
                        .u("page_reads", nc.page_reads).u("spare_reads", nc.spare_reads)
                        .u("programs", nc.programs).u("erases", nc.erases));
      // NVM beside the chip (its time is in the simulated figures above).
      const double nt = double(std::max<uint64_t>(1, m.txns));
      o.o("nvm", JsonObj()
                     .u("device_bytes", m.store.nvm_bytes)
                     .n("writes_per_txn", double(nc.nvm_writes) / nt)
                     .n("bytes_written_per_txn", double(nc.nvm_bytes_written) / nt)
                     .n("reads_per_txn", double(nc.nvm_reads) / nt)
                     .n("sim_ms_per_txn", double(nc.nvm_ns) / 1e6 / nt));
      o.o("wear", JsonObj()
                      .s("wear_level", m.wear_level)
                      .u("erase_count_min", m.wear.min)
                      .u("erase_count_max", m.wear.max)
                      .n("erase_count_mean", m.wear.mean)
                      .n("max_over_mean", m.wear.mean > 0 ? m.wear.max / m.wear.mean : 0));
      const KindStats& kd = m.flash.volume.kind[unsigned(FileKind::kDatabase)];
      o.u("db_chunks_read", kd.chunks_read).u("db_chunks_written", kd.chunks_written)
          .raw("db_bytes_changed", m.flash.volume.changes_tracked
                                       ? std::to_string(kd.bytes_changed)
                                       : "null");
      if (ref) {
        o.n("ratio_to_pdl_database", ratio(d.per_txn.database.sim_us, dref.per_txn.database.sim_us))
            .n("ratio_to_pdl_total", ratio(d.per_txn.total.sim_us, dref.per_txn.total.sim_us));
      }
    }
    if (i < r.warmup.gc_rounds.size()) o.n("warmup_gc_rounds", r.warmup.gc_rounds[i]);
    if (i < r.checks.size()) {
      const CheckReport& c = r.checks[i];
      std::vector<std::string> conds;
      for (const ConditionResult& cr : c.conditions) {
        JsonObj co;
        co.u("condition", uint64_t(cr.number)).s("what", cr.what)
            .u("violations", uint64_t(cr.violations));
        conds.push_back(co.str());
      }
      char sum[24];
      std::snprintf(sum, sizeof sum, "%016" PRIx64, c.checksum);
      JsonObj ch;
      ch.b("ok", c.ok()).a("conditions", conds).s("integrity_check", c.integrity)
          .s("checksum", sum);
      o.o("check", ch);
    }
    members.push_back(o.str());
  }
  JsonObj o;
  o.s("journal_mode", r.journal).b("crash_safe", crash_safe(r.journal))
      .n("cache_pct", r.cache_pct).u("chip_bytes", r.chip_bytes).u("page_bytes", r.page)
      .u("cache_pages", r.members.empty() ? 0 : r.members[0].cache_pages)
      .u("db_pages", r.members.empty() ? 0 : r.members[0].db_pages)
      .u("warmup_transactions", r.warmup.transactions).b("warmup_fixed", r.warmup.fixed)
      .n("warmup_gc_rounds_target", r.warmup.target).b("warmup_reached", r.warmup.reached)
      .s("reference", ref ? ref->key : "").a("methods", members);
  return o.str();
}

}  // namespace

bool crash_safe(const std::string& journal) { return journal != "memory" && journal != "off"; }

void print_run(FILE* f, const ReportContext& ctx, const RunResult& r) {
  const Measurement* ref = reference(r);
  const Measurement* ux = unix_member(r);
  const Derived dref = ref ? derive(*ref) : Derived{};
  const Derived dux = ux ? derive(*ux) : Derived{};
  const Measurement& m0 = r.members.front();
  std::fprintf(f, "\n== journal_mode=%s%s | SQLite cache %g%% of %" PRIu64 " pages = %u pages "
                  "| chip %s, %u-byte pages | %s ==\n",
               r.journal.c_str(),
               crash_safe(r.journal) ? "" : " (crash-safe with atomic commit only)",
               r.cache_pct, m0.db_pages, m0.cache_pages, format_size(r.chip_bytes).c_str(), r.page,
               ctx.scale.describe().c_str());
  char why[160];
  if (r.warmup.fixed)
    std::snprintf(why, sizeof why, "a fixed number");
  else if (r.warmup.reached)
    std::snprintf(why, sizeof why, "until every chip had erased its blocks %g times on average",
                  r.warmup.target);
  else
    std::snprintf(why, sizeof why, "STOPPED AT THE CAP before every chip erased its blocks %g "
                                   "times: not all at steady state", r.warmup.target);
  std::fprintf(f, "warm-up: %" PRIu64 " transactions on every method (%s); GC rounds "
                  "(erases / data blocks):", r.warmup.transactions, why);
  for (size_t i = 0; i < r.members.size() && i < r.warmup.gc_rounds.size(); i++)
    if (r.members[i].has_flash)
      std::fprintf(f, " %s %.2f", r.members[i].key.c_str(), r.warmup.gc_rounds[i]);
  std::fprintf(f, "\nmeasured: transactions %" PRIu64 "..%" PRIu64 ", the same on every method\n",
               m0.first_txn, m0.first_txn + m0.txns - 1);

  std::fprintf(f, "\nSimulated flash I/O per transaction, ms (PDL paper Table 1 timing; GC "
                  "apportioned by bytes programmed)\n");
  std::fprintf(f, "%-17s %9s %9s %9s %8s %8s %9s %9s\n", "method", "total", "database",
               "jrnl/wal", "dir", "(gc)", "db/PDL", "total/PDL");
  for (const Measurement& m : r.members) {
    if (!m.has_flash) continue;
    const Derived d = derive(m);
    const CostSplit& c = d.per_txn;
    std::fprintf(f, "%-17s %9.2f %9.2f %9.2f %8.2f %8.2f %9.2f %9.2f\n", m.label.c_str(),
                 c.total.sim_us / 1000, c.database.sim_us / 1000, c.journal.sim_us / 1000,
                 c.directory.sim_us / 1000, c.gc_sim_us / 1000,
                 ratio(c.database.sim_us, dref.per_txn.database.sim_us),
                 ratio(c.total.sim_us, dref.per_txn.total.sim_us));
  }
  std::fprintf(f, "\nFlash operations per transaction: database pages | journal/WAL | total "
                  "(KiB programmed, KiB SQLite wrote, write amplification)\n");
  std::fprintf(f, "%-17s %6s %6s %6s %7s %7s %5s | %6s %6s %6s %7s %7s %5s | %6s %6s %6s %7s %5s\n",
               "method", "reads", "progs", "erases", "KiBpgm", "KiBsql", "WA", "reads", "progs",
               "erases", "KiBpgm", "KiBsql", "WA", "reads", "progs", "erases", "KiBpgm", "WA");
  for (const Measurement& m : r.members) {
    if (!m.has_flash) continue;
    const CostSplit c = derive(m).per_txn;
    auto cols = [&](const Part& p, bool sql) {
      std::fprintf(f, "%6.1f %6.2f %6.3f %7.1f ", p.reads, p.programs, p.erases,
                   p.bytes_programmed / 1024);
      if (sql) std::fprintf(f, "%7.1f ", p.sqlite_bytes / 1024);
      std::fprintf(f, "%5.2f", p.write_amplification());
    };
    std::fprintf(f, "%-17s ", m.label.c_str());
    cols(c.database, true);
    std::fprintf(f, " | ");
    cols(c.journal, true);
    std::fprintf(f, " | ");
    cols(c.total, false);
    std::fprintf(f, "\n");
  }
  std::fprintf(f, "\nWrite response time ([StableBuffer]'s metric, simulated): device time "
                  "outside SQLite's reads (writes, syncs, the\nmerges and GC they cause) per "
                  "page write SQLite made (xWrite, database and journal); throughput in simulated "
                  "time\n");
  std::fprintf(f, "%-17s %9s %9s %8s %10s %10s %10s %11s\n", "method", "writes/tx",
               "syncs/tx", "reads/tx", "read ms/tx", "write ms/tx", "resp. ms", "txn/sim-s");
  for (const Measurement& m : r.members) {
    if (!m.has_flash) continue;
    const Derived d = derive(m);
    const double n = m.txns ? double(m.txns) : 1.0;
    std::fprintf(f, "%-17s %9.2f %9.2f %8.2f %10.2f %10.2f %10.3f %11.2f\n", m.label.c_str(),
                 double(m.io.writes) / n, double(m.io.syncs) / n, double(m.io.reads) / n,
                 m.io.read_us / n / 1000, d.write_us / n / 1000, d.write_response_us / 1000,
                 d.sim_tps);
  }
  std::fprintf(f, "\nErase counts of the chip's blocks after the run (lifetime, clone included); "
                  "wear-levelling cost over the measured run\n");
  std::fprintf(f, "%-17s %6s %6s %8s %6s %8s %7s | %7s %9s %9s\n", "method", "WL", "min", "mean",
               "max", "max/mean", "max-min", "wl_runs", "wl_pages", "wl_erases");
  for (const Measurement& m : r.members) {
    if (!m.has_flash) continue;
    const StoreStats& ss = m.flash.store;
    std::fprintf(f, "%-17s %6s %6u %8.2f %6u %8.2f %7u | %7" PRIu64 " %9" PRIu64 " %9" PRIu64 "\n",
                 m.label.c_str(), m.wear_level.c_str(), m.wear.min, m.wear.mean, m.wear.max,
                 m.wear.mean > 0 ? m.wear.max / m.wear.mean : 0.0, m.wear.max - m.wear.min,
                 ss.wl_runs, ss.wl_page_moves, ss.wl_erases);
  }
  std::fprintf(f, "\nWall clock (host; flash time is simulated, never slept): NOPM = committed "
                  "New-Orders per minute (not tpmC); x unix = speed vs the unix VFS in wall time,\n"
                  "cpu x unix = in host CPU time (user + sys; > 1: faster); latency ms "
                  "p50/p95/p99\n");
  std::fprintf(f, "%-17s %8s %8s %7s %10s", "method", "NOPM", "txn/s", "x unix", "cpu x unix");
  for (int t = 0; t < kTxnTypes; t++) std::fprintf(f, " %17s", txn_name(TxnType(t)));
  std::fprintf(f, "\n");
  for (const Measurement& m : r.members) {
    const Derived d = derive(m);
    std::fprintf(f, "%-17s %8.0f %8.1f %7.2f %10.2f", m.label.c_str(), d.nopm, d.tps,
                 ux ? ratio(d.tps, dux.tps) : 0.0,
                 ux ? ratio(dux.cpu_per_txn, d.cpu_per_txn) : 0.0);
    for (int t = 0; t < kTxnTypes; t++)
      std::fprintf(f, " %17s", latency_cell(m.types[size_t(t)]).c_str());
    std::fprintf(f, "\n");
  }
  if (!r.checks.empty()) {
    std::fprintf(f, "\nChecks after the run (TPC-C §3.3.2 consistency, PRAGMA integrity_check, "
                    "content checksum):\n");
    bool same = true;
    for (size_t i = 0; i < r.checks.size() && i < r.members.size(); i++) {
      std::fprintf(f, "  %-17s %s; checksum %016" PRIx64 "\n", r.members[i].label.c_str(),
                   r.checks[i].summary().c_str(), r.checks[i].checksum);
      same = same && r.checks[i].checksum == r.checks[0].checksum;
    }
    std::fprintf(f, "  same database content on every method: %s\n", same ? "yes" : "NO");
  }
}

void print_summary(FILE* f, const std::vector<RunResult>& runs) {
  if (runs.empty()) return;
  const Measurement* ref0 = reference(runs.front());
  std::fprintf(f, "\n== Summary: simulated flash I/O per transaction, ms (x %s); wall "
                  "speed vs the unix VFS ==\n%-17s", ref0 ? ref0->label.c_str() : "-", "method");
  for (const RunResult& r : runs) std::fprintf(f, " | %-35s", r.journal.c_str());
  std::fprintf(f, "\n%-17s", "");
  for (size_t i = 0; i < runs.size(); i++)
    std::fprintf(f, " | %-14s %-14s %5s", "database", "total", "wall");
  std::fprintf(f, "\n");
  for (const Measurement& m0 : runs.front().members) {
    std::fprintf(f, "%-17s", m0.label.c_str());
    for (const RunResult& r : runs) {
      const Measurement* ref = reference(r);
      const Measurement* ux = unix_member(r);
      const Measurement* m = nullptr;
      for (const Measurement& x : r.members)
        if (x.key == m0.key) m = &x;
      if (!m || !m->has_flash) {
        std::fprintf(f, " | %-14s %-14s %5s", "-", "-", "1.00");
        continue;
      }
      const Derived d = derive(*m), dr = ref ? derive(*ref) : d;
      char db[32], tot[32];
      std::snprintf(db, sizeof db, "%.1f (%.2f)", d.per_txn.database.sim_us / 1000,
                    ratio(d.per_txn.database.sim_us, dr.per_txn.database.sim_us));
      std::snprintf(tot, sizeof tot, "%.1f (%.2f)", d.per_txn.total.sim_us / 1000,
                    ratio(d.per_txn.total.sim_us, dr.per_txn.total.sim_us));
      std::fprintf(f, " | %-14s %-14s %5.2f", db, tot, ux ? ratio(d.tps, derive(*ux).tps) : 0.0);
    }
    std::fprintf(f, "\n");
  }
  // Atomic commit against the journal on flash, when both ran: total simulated I/O per
  // transaction (database, journal/WAL, directory, GC), and PDL's against its own in MEMORY
  // mode (no journal I/O at all).
  const RunResult* memory_run = nullptr;
  for (const RunResult& r : runs)
    if (r.journal == "memory") memory_run = &r;
  bool header = false;
  for (const RunResult& r : runs) {
    const Measurement* pa = member(r, "pdl-atomic");
    if (!pa) continue;
    if (!header) {
      std::fprintf(f, "\nPDL(256B) with atomic commit against: (total simulated I/O per "
                      "transaction, ratio = the other / PDL(256B) atomic)\n");
      header = true;
    }
    const double t = derive(*pa).per_txn.total.sim_us;
    std::fprintf(f, "  %-8s PDL(256B) atomic %.2f ms", r.journal.c_str(), t / 1000);
    for (const char* key : {"opu-journal", "opu-atomic", "pdl-journal"})
      if (const Measurement* m = member(r, key))
        std::fprintf(f, "; %s %.2f ms (%.2fx)", m->label.c_str(),
                     derive(*m).per_txn.total.sim_us / 1000,
                     ratio(derive(*m).per_txn.total.sim_us, t));
    if (memory_run && memory_run != &r)
      if (const Measurement* mm = member(*memory_run, "pdl-atomic"))
        std::fprintf(f, "; = %.2fx its MEMORY-mode I/O",
                     ratio(t, derive(*mm).per_txn.total.sim_us));
    std::fprintf(f, "\n");
  }
}

void print_sweep(FILE* f, const std::vector<RunResult>& points) {
  std::string journal;
  for (const RunResult& r : points) {
    if (r.journal != journal) {
      journal = r.journal;
      std::fprintf(f, "\n== Exp. 7: simulated flash I/O per transaction (ms) vs SQLite cache, "
                      "journal_mode=%s ==\n", journal.c_str());
      std::fprintf(f, "%-8s %7s  %-17s %9s %9s %9s %9s\n", "cache%", "pages", "method",
                   "database", "total", "db/PDL", "total/PDL");
    }
    const Measurement* ref = reference(r);
    const Derived dref = ref ? derive(*ref) : Derived{};
    for (const Measurement& m : r.members) {
      if (!m.has_flash) continue;
      const CostSplit c = derive(m).per_txn;
      std::fprintf(f, "%-8g %7u  %-17s %9.2f %9.2f %9.2f %9.2f\n", r.cache_pct, m.cache_pages,
                   m.label.c_str(), c.database.sim_us / 1000, c.total.sim_us / 1000,
                   ratio(c.database.sim_us, dref.per_txn.database.sim_us),
                   ratio(c.total.sim_us, dref.per_txn.total.sim_us));
    }
  }
}

bool checks_ok(const std::vector<RunResult>& runs, std::string* why) {
  for (const RunResult& r : runs)
    for (size_t i = 0; i < r.checks.size(); i++) {
      const std::string who = r.members[i].label + " (" + r.journal + ")";
      if (!r.checks[i].ok()) {
        *why = who + ": " + r.checks[i].summary();
        return false;
      }
      if (r.checks[i].checksum != r.checks[0].checksum) {
        *why = who + ": database content differs from " + r.members[0].label + "'s";
        return false;
      }
    }
  return true;
}

std::string json_report(const ReportContext& ctx, const std::vector<RunResult>& runs,
                        const std::vector<RunResult>& sweep) {
  std::vector<std::string> rj, sj;
  for (const RunResult& r : runs) rj.push_back(run_json(r));
  for (const RunResult& r : sweep) sj.push_back(run_json(r));
  JsonObj o;
  o.s("tool", "pdl-tpcc").u("warehouses", uint64_t(ctx.scale.warehouses))
      .n("scale", ctx.scale.factor).u("items", uint64_t(ctx.scale.items))
      .u("customers_per_district", uint64_t(ctx.scale.customers)).u("seed", ctx.seed)
      .n("load_wall_s", ctx.load_s).u("loaded_db_pages", ctx.loaded_pages)
      .s("timing", "PDL paper Table 1: read 110 us, program 1010 us, erase 1500 us (simulated)")
      .a("runs", rj).a("sweep", sj);
  return o.str() + "\n";
}

std::string csv_report(const std::vector<RunResult>& runs, const std::vector<RunResult>& sweep) {
  std::string out =
      "phase,journal_mode,cache_pct,cache_pages,db_pages,method,label,transactions,nopm,"
      "transactions_per_s,sim_ms_total,sim_ms_database,sim_ms_journal,sim_ms_directory,"
      "sim_ms_gc,reads,programs,erases,bytes_programmed,sqlite_bytes_written,"
      "write_amplification,db_reads,db_programs,db_erases,db_bytes_programmed,"
      "db_sqlite_bytes_written,db_write_amplification,ratio_to_pdl_database,ratio_to_pdl_total\n";
  auto rows = [&](const char* phase, const std::vector<RunResult>& rs) {
    for (const RunResult& r : rs) {
      const Measurement* ref = reference(r);
      const Derived dref = ref ? derive(*ref) : Derived{};
      for (const Measurement& m : r.members) {
        const Derived d = derive(m);
        const CostSplit& c = d.per_txn;
        char buf[1024];
        std::snprintf(buf, sizeof buf,
                      "%s,%s,%g,%u,%" PRIu64 ",%s,\"%s\",%" PRIu64 ",%.1f,%.2f,%.4f,%.4f,%.4f,"
                      "%.4f,%.4f,%.3f,%.3f,%.5f,%.1f,%.1f,%.4f,%.3f,%.3f,%.5f,%.1f,%.1f,%.4f,"
                      "%.4f,%.4f\n",
                      phase, r.journal.c_str(), r.cache_pct, m.cache_pages, m.db_pages,
                      m.key.c_str(), m.label.c_str(), m.txns, d.nopm, d.tps,
                      c.total.sim_us / 1000, c.database.sim_us / 1000, c.journal.sim_us / 1000,
                      c.directory.sim_us / 1000, c.gc_sim_us / 1000, c.total.reads,
                      c.total.programs, c.total.erases, c.total.bytes_programmed,
                      c.total.sqlite_bytes, c.total.write_amplification(), c.database.reads,
                      c.database.programs, c.database.erases, c.database.bytes_programmed,
                      c.database.sqlite_bytes, c.database.write_amplification(),
                      m.has_flash ? ratio(c.database.sim_us, dref.per_txn.database.sim_us) : 0,
                      m.has_flash ? ratio(c.total.sim_us, dref.per_txn.total.sim_us) : 0);
        out += buf;
      }
    }
  };
  rows("comparison", runs);
  rows("sweep", sweep);
  return out;
}

}  // namespace pdl::tpcc
