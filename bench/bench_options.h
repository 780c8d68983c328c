// bench_options.h — pdl-bench's command line: what to run, at which scale, with which methods.
//
// Scales (chip = erase blocks of 64 x (2048+64)-byte pages; data = --data-pct of its data pages):
//   default        Exp. 1 on a 256 MiB chip (2048 blocks); the sweeps (Exp. 2-6) on a 64 MiB
//                  chip (512 blocks). The per-operation figures depend on the data fraction and
//                  the GC rounds, not the chip size (docs: 256 MiB vs 2 GiB within 0.1 %);
//                  Exp. 2's N = 1 point repeats Exp. 1's and the report compares the two.
//   --quick        every experiment on a 32 MiB chip (256 blocks), 3 GC rounds of warm-up.
//   --paper-scale  every experiment on the paper's 2 GiB chip (16384 blocks, ~1 GB of data).
// Data: 49 % of the data pages by default, the same number of logical pages for every method:
// IPL(64KB) serves at most 32 data pages per 64-page block with one block kept for merges,
// (data blocks - 1) x 32 pages, just under 50 % of the chip.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/update_workload.h"
#include "flash/device/geometry.h"
#include "flash/image/methods.h"
#include "flash/store/store_params.h"

namespace pdl::bench {

struct Options {
  bool exp[7] = {};  // exp[1..6]: [PDL] Experiments 1-6
  bool iplsweep = false;  // IPL's log region 8-64 KB x log sector 512/128 at Exp. 1's point
  bool exp2_8k = false;   // Exp. 2 again with 8 KB logical pages ([PDL] §5.1)
  bool codec = false, mount = false;
  bool all = false;  // --exp all (its default placements: both)
  bool quick = false, paper = false;
  std::string json;        // --json FILE
  std::string csv_prefix;  // --csv PREFIX: PREFIX + "exp1.csv" ... "exp6.csv"
  // Obsolete modes for PDL and OPU (IPU/IPL run once with "none").
  std::vector<ObsoleteMode> exp1_modes{ObsoleteMode::kSpare, ObsoleteMode::kMemory};
  std::vector<ObsoleteMode> sweep_modes{ObsoleteMode::kSpare, ObsoleteMode::kMemory};
  std::vector<ObsoleteMode> mount_modes{ObsoleteMode::kSpare};  // --obsolete only
  // --exp mount (exp_mount.cc): chip sizes (bytes; empty = by scale: mount_chip_sizes()), the
  // largest chip also measured without a checkpoint area (0 = by scale), where the images go
  // ("" = a scratch directory removed after), and the test hook --mount-tamper (one expected
  // value changed before every probe: each mount must then be refused).
  std::vector<uint64_t> mount_sizes;
  uint64_t mount_scan_max = 0;
  double mount_fill_pct = 50;  // --mount-fill: % of the logical pages written (0: an empty chip)
  uint64_t mount_verify = 0;   // --mount-verify: written pages read after each mount (0: all)
  std::string work_dir;
  bool mount_tamper = false;
  std::vector<MethodPreset> methods;  // --methods; empty = per experiment default
  uint64_t seed = 1;
  GcVictim gc_victim = GcVictim::kGreedy;  // --gc-victim (PDL, OPU)
  uint32_t blocks = 0;        // Exp. 1 chip; 0 = by scale
  uint32_t sweep_blocks = 0;  // Exp. 2-6 chip; 0 = by scale (or --blocks if given)
  // Exp. 1's point (Table 2: %ChangedByOneU_Op = 2, N_updates_till_write = 1, all updates).
  double changed = 2;
  uint32_t n_updates = 1;
  double update_pct = 100;
  uint32_t change_run = 8;
  // Where a change's bytes go; --placement both = {fields, run}. Default: fields, both with
  // --exp all. With both, the sweeps (Exp. 2-4, 6) run `run` in obsolete=spare only.
  std::vector<Placement> placements{Placement::kFields};
  bool placement_set = false;  // --placement given (iplsweep runs both unless it is)
  uint32_t logical_page = 0;  // --logical-page: bytes, a multiple of the flash page; 0 = a page
  double data_pct = 49;
  double warm_rounds = -1, measure_rounds = -1;  // -1 = by scale
  uint64_t measure_ops = 0;
  unsigned jobs = 0;  // 0 = hardware threads
  bool verbose = false;

  bool any_update_exp() const {
    for (int i = 1; i <= 6; i++)
      if (exp[i]) return true;
    return iplsweep || exp2_8k;
  }
  uint32_t exp1_chip_blocks() const;
  // --mount-sizes, else 256M,1G,4G,16G,64G; --quick and --exp all: 256M,1G.
  std::vector<uint64_t> mount_chip_sizes() const;
  // --mount-scan-max, else 4G (--quick, --exp all: every size).
  uint64_t mount_scan_max_bytes() const;
  uint32_t sweep_chip_blocks() const;
  // Workload settings shared by every run (warm-up, window, seed, change runs).
  WorkloadConfig base_workload() const;
  // Methods for Exp. 1 (default: all, the /diff variants included) and for the sweeps
  // (default: the paper's six).
  std::vector<MethodPreset> exp1_methods() const;
  std::vector<MethodPreset> sweep_methods() const;
  // Obsolete modes of the sweeps' series with placement `p`: sweep_modes, or spare only for
  // `run` when both placements run (the paper's mode; keeps the default run affordable).
  std::vector<ObsoleteMode> sweep_modes_for(Placement p) const;
};

// Parses argv into *o. -1: go on; otherwise the exit code, after printing the help (0) or why
// the arguments are refused (2).
int parse_args(int argc, char** argv, Options* o);

// A Table 1 chip of `blocks` blocks; timings (us) replace Table 1's where non-zero.
Geometry chip(uint32_t blocks, uint32_t t_read = 0, uint32_t t_program = 0, uint32_t t_erase = 0);

}  // namespace pdl::bench
