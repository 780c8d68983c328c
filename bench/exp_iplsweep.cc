// exp_iplsweep.cc — the IPL log-region sweep of [PDL] §5.2 Exp. 1 ("For IPL(y), we have varied
// y from 8 Kbytes to 64 Kbytes. Among them, we select IPL(18KB) and IPL(64KB) because they have
// the best and worst overall time"): Exp. 1's point (N_updates_till_write = 1,
// %ChangedByOneU_Op = 2, all updates) on the sweep chip, for log regions of 8, 12, 16, 18, 24,
// 32, 48 and 64 KB x log sectors of 512 and 128 bytes (the chip's NOP raised to fit the
// latter, run_chip), both placements unless --placement says which. Records: exp "iplsweep"
// with log_region and log_sector.
#include <cstdio>

#include "bench/experiments.h"

namespace pdl::bench {
namespace {

constexpr uint32_t kRegionsKb[] = {8, 12, 16, 18, 24, 32, 48, 64};
constexpr uint32_t kSectors[] = {512, 128};
constexpr double kChanged = 2;

std::vector<Placement> sweep_placements(const Options& o) {
  if (o.placement_set) return o.placements;
  return {Placement::kFields, Placement::kRun};
}

RunSpec sweep_spec(const Options& o, uint32_t kb, uint32_t sector, Placement p) {
  const Series s{ipl_preset(kb * 1024, sector), ObsoleteMode::kSpare, p};
  return series_spec(s, o.sweep_chip_blocks(), 1, kChanged);
}

}  // namespace

void plan_iplsweep(const Options& o, RunPlan& plan) {
  for (Placement p : sweep_placements(o))
    for (uint32_t sector : kSectors)
      for (uint32_t kb : kRegionsKb) plan.add(sweep_spec(o, kb, sector, p));
}

void report_iplsweep(const Options& o, RunPlan& plan, ExpOutput* out) {
  std::printf(
      "\n== IPL log-region sweep: time per update operation vs log region and log sector (PDL "
      "paper section 5.2, Exp. 1: IPL(y), y = 8 .. 64 KB) ==\n");
  print_setup_line(o, plan, o.sweep_chip_blocks());
  std::printf(
      "%%ChangedByOneU_Op=%g, N_updates_till_write=1, %%UpdateOps=100; a 128-byte log sector "
      "needs a NOP of page/128 = 16 partial programs per page (the chip gets it); simulated us "
      "per update operation.\n",
      kChanged);
  std::printf("\n%-9s %-6s %-9s %9s %9s %9s %9s %10s %9s %6s\n", "log_reg.", "sector",
              "placement", "read_us", "write_us", "total_us", "merge/op", "erases/op",
              "logsec/op", "nop");
  for (Placement p : sweep_placements(o))
    for (uint32_t sector : kSectors)
      for (uint32_t kb : kRegionsKb) {
        const size_t i = plan.add(sweep_spec(o, kb, sector, p));
        add_record("iplsweep", plan, i, 0, out);
        const RunResult& r = plan.result(i);
        std::printf("%-9s %-6u %-9s", (std::to_string(kb) + "KB").c_str(), sector,
                    placement_name(p));
        if (!r.status.is_ok()) {
          std::printf(" FAILED: %s\n", r.status.to_string().c_str());
          continue;
        }
        const Measurement& m = r.m[0];
        const double n = double(m.measure_ops);
        std::printf(" %9.1f %9.1f %9.1f %9.4f %10.4f %9.3f %6u\n", m.read_us, m.write_us,
                    m.total_us, double(m.stats.merges) / n, m.erases_per_op,
                    double(m.stats.log_sectors) / n, r.setup.geo.partial_programs);
      }
  std::fflush(stdout);
}

}  // namespace pdl::bench
