// exp_common.h — what the [PDL] experiments (exp1.cc ... exp5.cc) share: the series they
// plot (method x obsolete mode), the result record of one measured window, and the text grid
// printed on stdout.
//
// Every experiment is two functions over the same list of RunSpecs: plan_expN adds the runs
// to the RunPlan (before it executes), report_expN finds them again (RunPlan::add returns the
// existing index of an identical spec), appends JSON/CSV records and prints its tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_options.h"
#include "bench/bench_record.h"
#include "bench/run_plan.h"
#include "flash/image/methods.h"

namespace pdl::bench {

// One line of a figure: a method, and for PDL/OPU an obsolete mode.
// (Tables print one placement at a time; the label does not name it.)
struct Series {
  MethodPreset method;
  ObsoleteMode mode = ObsoleteMode::kSpare;
  Placement placement = Placement::kFields;
  std::string label() const;  // "PDL(256B) spare", "IPL(18KB)"
};
// Methods x modes (methods without obsolete modes once), all with placement `p`.
std::vector<Series> make_series(const std::vector<MethodPreset>& methods,
                                const std::vector<ObsoleteMode>& modes,
                                Placement p = Placement::kFields);
// The sweeps' series (Exp. 2-4, 6) with placement `p`: sweep methods x sweep_modes_for(p).
std::vector<Series> sweep_series(const Options& o, Placement p);
// A table title's note of placement `p`: "" when only the default (fields) runs, else
// " [placement fields: ...]" / " [placement run: ...]".
std::string placement_note(const Options& o, Placement p);
// A run of `s` on `blocks` blocks at Table 1 timing, 100 % updates.
RunSpec series_spec(const Series& s, uint32_t blocks, uint32_t n_updates, double changed_pct);

struct ExpOutput {
  std::vector<Record> records;
  int failed_runs = 0;  // records with an error
};

// Every figure of measured window j of run i, tagged exp = `exp`, source = "measured".
Record measured_record(const std::string& exp, const RunPlan& plan, size_t i, size_t j);
// The same window's figures at other timings (T_read, T_write = T_program, T_erase), computed
// from its per-step operation counts; source = "derived".
Record derived_record(const std::string& exp, const RunPlan& plan, size_t i, size_t j,
                      uint32_t t_read, uint32_t t_write, uint32_t t_erase);
// Overall time per operation of a window under timings (t_read, t_write, t_erase), from its
// per-step operation counts.
double derived_total(const Measurement& m, double t_read, double t_write, double t_erase);
// A run that failed: its parameters and the error.
Record error_record(const std::string& exp, const RunPlan& plan, size_t i);

// Appends measured_record (or error_record, counting the failure) for window j of run i;
// returns false for a failed run.
bool add_record(const std::string& exp, const RunPlan& plan, size_t i, size_t j, ExpOutput* out);

// Prints a table: one row per label, one column per x, cells already formatted.
void print_grid(const std::string& title, const std::string& corner,
                const std::vector<std::string>& xs, const std::vector<std::string>& rows,
                const std::vector<std::vector<std::string>>& cells);

std::string fmt_num(const char* f, double v);  // snprintf of one double
// "%.1f" of field `f` of a run's window, or "fail" for a failed run.
std::string cell(const RunPlan& plan, size_t i, size_t j, double (*f)(const Measurement&),
                 const char* format = "%.1f");
// PDL(2KB) with vs without GC's merge of large differentials: one line per (row label, run
// with the merge, run without it): Case 3 %, GC merges per op, total us, unsteady, GC rounds.
struct MergePair {
  std::string label;
  size_t with, without;
};
void print_merge_table(const RunPlan& plan, const std::vector<MergePair>& rows);
// Whether `m` is pdl2k's no-merge twin ("pdl2k-nomerge") or pdl2k itself.
bool is_pdl2k(const MethodPreset& m);
bool is_pdl2k_nomerge(const MethodPreset& m);

// The header line of a sweep: chip, data, workload settings.
void print_setup_line(const Options& o, const RunPlan& plan, uint32_t blocks);

}  // namespace pdl::bench
