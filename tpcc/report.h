// report.h — pdl-tpcc's results: the printed tables, JSON and CSV.
//
// Per method and journal mode: new orders per minute (NOPM-style, wall clock; not tpmC),
// wall transactions/s and the ratio to the unix VFS in the same run (and the same ratio in
// host CPU time: user + sys spent in each member's transactions), per-type latency
// p50/p95/p99 (wall), and per transaction the simulated flash I/O ([PDL] Table 1 timing),
// reads, programs, erases, bytes programmed, bytes SQLite wrote and write amplification — in
// total and for database pages and journal/WAL (figures.h's split) — and each method's
// simulated I/O time relative to PDL(256B)'s, for the database part and the total.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "tpcc/check.h"
#include "tpcc/fleet.h"

namespace pdl::tpcc {

// One measured phase of one fleet: a journal mode at one cache size.
struct RunResult {
  std::string journal;
  double cache_pct = 0;
  uint64_t chip_bytes = 0;
  uint32_t page = 0;
  WarmupReport warmup;
  std::vector<Measurement> members;
  std::vector<CheckReport> checks;  // empty when the phase was not checked (sweep points)
};

struct ReportContext {
  Scale scale;
  uint64_t seed = 0;
  double load_s = 0;          // wall time of the load (unix VFS)
  uint64_t loaded_pages = 0;  // database pages after the load
};

bool crash_safe(const std::string& journal);  // false for memory and off
// The comparison tables of one run.
void print_run(FILE* f, const ReportContext& ctx, const RunResult& r);
// One line per method across the journal modes run: database-page and total simulated I/O
// per transaction and their ratio to PDL(256B)'s, and wall speed against the unix VFS.
void print_summary(FILE* f, const std::vector<RunResult>& runs);
// Exp. 7: I/O per transaction against cache size, one table per journal mode.
void print_sweep(FILE* f, const std::vector<RunResult>& points);
// true if every member of every checked run passed and checksums agree within each run.
bool checks_ok(const std::vector<RunResult>& runs, std::string* why);

std::string json_report(const ReportContext& ctx, const std::vector<RunResult>& runs,
                        const std::vector<RunResult>& sweep);
std::string csv_report(const std::vector<RunResult>& runs, const std::vector<RunResult>& sweep);

}  // namespace pdl::tpcc
