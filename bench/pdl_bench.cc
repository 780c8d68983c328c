// pdl_bench.cc — pdl-bench: the paper's synthetic experiments straight on PageStores.
//
//   --exp 1..6   [PDL] Experiments 1-6 (Table 2, Figures 8-13; experiments.h): update
//                operations on a loaded, warmed-up chip, per method (flash/image/methods.h), at the
//                scale of bench_options.h. The runs all experiments need are collected in one
//                RunPlan, deduplicated and run on --jobs threads (run_plan.h).
//   --exp codec  diff_encode / diff_apply throughput (codec_bench.h).
//   --exp mount  mount time and RAM by chip size, after a clean unmount and after a power cut,
//                with and without a checkpoint area (exp_mount.cc); each mount runs in a child
//                pdl-bench started in the hidden mode --mount-probe (mount_probe.h).
//   --exp all    all of them.
// Times of store experiments are simulated flash microseconds (PDL paper Table 1), not host time;
// host (wall) seconds are reported beside them. Progress goes to stderr, readable tables to
// stdout; --json FILE writes every record as a JSON array, --csv PREFIX one CSV per experiment.
//
// Exit status: 0 success; 1 an engine error, or some runs failed (e.g. a method whose store
// cannot be formatted: reported, skipped, the others still run); 2 bad arguments.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "flash/common/c_edge.h"
#include "bench/bench_options.h"
#include "bench/wall_clock.h"
#include "bench/codec_bench.h"
#include "bench/experiments.h"
#include "bench/mount_probe.h"
#include "bench/run_plan.h"

namespace pdl::bench {
namespace {

int main_impl(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--mount-probe") == 0)
    return mount_probe_main(argc - 2, argv + 2);
  Options o;
  if (const int rc = parse_args(argc, argv, &o); rc >= 0) return rc;
  const auto t0 = Clock::now();
  std::vector<std::string> json;
  int failed = 0;

  if (o.any_update_exp()) {
    RunPlan plan(o.base_workload(), o.data_pct);
    if (o.exp[1]) plan_exp1(o, plan);
    if (o.exp[2] || o.exp[6]) plan_exp2(o, plan);
    if (o.exp[3]) plan_exp3(o, plan);
    if (o.exp[4]) plan_exp4(o, plan);
    if (o.exp[5]) plan_exp5(o, plan);
    if (o.iplsweep) plan_iplsweep(o, plan);
    if (o.exp2_8k) plan_exp2_8k(o, plan);
    print_plan_header(o, plan);
    plan.execute(o.jobs);

    ExpOutput outs[9];  // [1..6] Exp. 1-6, [7] iplsweep, [8] 2-8k
    if (o.exp[1]) report_exp1(o, plan, &outs[1]);
    if (o.exp[2]) report_exp2(o, plan, &outs[2]);
    if (o.exp[3]) report_exp3(o, plan, &outs[3]);
    if (o.exp[4]) report_exp4(o, plan, &outs[4]);
    if (o.exp[5]) report_exp5(o, plan, &outs[5]);
    if (o.exp[6]) report_exp6(o, plan, &outs[6]);
    if (o.exp2_8k) report_exp2_8k(o, plan, &outs[8]);
    if (o.iplsweep) report_iplsweep(o, plan, &outs[7]);
    const char* const csv_names[9] = {"",     "exp1", "exp2", "exp3",    "exp4",
                                      "exp5", "exp6", "iplsweep", "exp2-8k"};
    for (int e = 1; e <= 8; e++) {
      if (e <= 6 ? !o.exp[e] : e == 7 ? !o.iplsweep : !o.exp2_8k) continue;
      failed += outs[e].failed_runs;
      for (const Record& r : outs[e].records) json.push_back(r.json());
      if (!o.csv_prefix.empty()) {
        const std::string path = o.csv_prefix + csv_names[e] + ".csv";
        if (!write_csv(path, outs[e].records)) {
          std::fprintf(stderr, "pdl-bench: error: cannot write %s: %s\n", path.c_str(),
                       std::strerror(errno));
          return 1;
        }
      }
    }
    if (!plan.unavailable().empty()) {
      std::printf("\nUNAVAILABLE methods (their store could not be formatted; runs skipped):\n");
      for (const auto& [key, st] : plan.unavailable())
        std::printf("  %s: %s\n", key.c_str(), st.to_string().c_str());
    }
  }
  Status st;
  if (o.codec) {
    std::printf("\n== codec: page-differential encode/apply throughput ==\n");
    std::fflush(stdout);
    run_codec_bench(o.quick, &json);
  }
  if (o.mount) st = run_mount(o, &json);
  if (!o.json.empty()) {
    if (!write_json_array(o.json, json)) {
      std::fprintf(stderr, "pdl-bench: error: cannot write %s: %s\n", o.json.c_str(),
                   std::strerror(errno));
      return 1;
    }
    std::fprintf(stderr, "wrote %zu records to %s\n", json.size(), o.json.c_str());
  }
  std::printf("\ntotal wall time %.1f s\n", seconds_since(t0));
  if (!st.is_ok()) {
    std::fprintf(stderr, "pdl-bench: error: %s\n", st.to_string().c_str());
    return 1;
  }
  if (failed > 0) {
    std::fprintf(stderr, "pdl-bench: %d record(s) of failed runs (see 'error' fields)\n", failed);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace pdl::bench

int main(int argc, char** argv) {
  return pdl::guarded_main("pdl-bench", pdl::bench::main_impl, argc, argv, 1);
}
