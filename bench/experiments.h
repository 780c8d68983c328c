// experiments.h — [PDL] Experiments 1-6 (Table 2) over PageStores, and the two extra
// pdl-bench experiments (codec, mount). Parameters (Table 2):
//   Exp. 1  read/write/overall time per update op           %Changed = 2, N = 1       (exp1.cc)
//   Exp. 2  overall time per update op vs N                 %Changed = 2, N = 1..8    (exp2.cc)
//   Exp. 3  overall time per update op vs %Changed          0.1..100, N = 1, 5        (exp3.cc)
//   Exp. 4  overall time per op vs %UpdateOps               0..100, %Changed 2, N 1, 5 (exp4.cc)
//   Exp. 5  overall time per update op vs T_read x T_write  10..1500 x 500, 1000 us   (exp5.cc)
//   Exp. 6  erases per update op vs N                       %Changed = 2, N = 1..8    (exp2.cc)
// Exp. 1 runs on the Exp. 1 chip; Exp. 2-6 on the sweep chip (bench_options.h).
#pragma once

#include <string>
#include <vector>

#include "bench/bench_options.h"
#include "bench/exp_common.h"
#include "bench/run_plan.h"
#include "flash/common/status.h"

namespace pdl::bench {

// What the update experiments will run: scale, methods, modes, rules (stdout, before running).
void print_plan_header(const Options& o, const RunPlan& plan);

void plan_exp1(const Options& o, RunPlan& plan);
void report_exp1(const Options& o, RunPlan& plan, ExpOutput* out);
void plan_exp2(const Options& o, RunPlan& plan);  // also Exp. 6's runs
void report_exp2(const Options& o, RunPlan& plan, ExpOutput* out);
void report_exp6(const Options& o, RunPlan& plan, ExpOutput* out);
void plan_exp2_8k(const Options& o, RunPlan& plan);  // Exp. 2 with 8 KB logical pages
void report_exp2_8k(const Options& o, RunPlan& plan, ExpOutput* out);
// The IPL log-region sweep at Exp. 1's point (exp_iplsweep.cc).
void plan_iplsweep(const Options& o, RunPlan& plan);
void report_iplsweep(const Options& o, RunPlan& plan, ExpOutput* out);
void plan_exp3(const Options& o, RunPlan& plan);
void report_exp3(const Options& o, RunPlan& plan, ExpOutput* out);
void plan_exp4(const Options& o, RunPlan& plan);
void report_exp4(const Options& o, RunPlan& plan, ExpOutput* out);
void plan_exp5(const Options& o, RunPlan& plan);
void report_exp5(const Options& o, RunPlan& plan, ExpOutput* out);

// mount: mount time, pages read and RAM by chip size, after a clean unmount and after a power
// cut, with and without a checkpoint area (exp_mount.cc).
Status run_mount(const Options& o, std::vector<std::string>* json);

}  // namespace pdl::bench
