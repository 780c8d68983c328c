// sb_cost_model.cc — T_x and θ_x of StableBuffer's write patterns on an FTL (sb_cost_model.h).
#include "flash/ftl/sb_cost_model.h"

#include <algorithm>
#include <cmath>

namespace pdl {

const char* sb_pattern_name(SbPattern x) {
  switch (x) {
    case SbPattern::kSequential: return "sequential";
    case SbPattern::kPartitioned: return "partitioned";
    case SbPattern::kFocused: return "focused";
  }
  return "?";
}

SbCostModel SbCostModel::of(FtlKind ftl, uint32_t log_blocks, const Geometry& g, uint32_t slots) {
  SbCostModel m;
  const double r = g.read_us, w = g.program_us, e = g.erase_us, P = g.pages_per_block;
  m.focus_blocks = std::max<uint32_t>(1, slots / g.pages_per_block);
  const double F = m.focus_blocks;
  const double seq = w + e / P;                // switch merge / whole-block invalidation
  const double partial = w + (r + w) + 2 * e / P;  // half a block copied per half-block run
  double focus = partial;
  if (ftl == FtlKind::kBast) {
    // A full merge (P copies, 2 erases) per P/2 pages of a block while the focused area fits
    // the log blocks; beyond, a log block is taken back after L/F of that.
    const double L = std::max<uint32_t>(1, log_blocks);
    const double per_merge = std::max(1.0, P / 2 * std::min(1.0, L / F));
    focus = w + (P * (r + w) + 2 * e) / per_merge;
  } else if (ftl == FtlKind::kFast) {
    const double d = std::min(F, P);  // data blocks one random log block's merge touches
    focus = w + (d * (P * (r + w) + e) + e) / P;
  }
  m.t[int(SbPattern::kSequential)] = seq;
  m.t[int(SbPattern::kPartitioned)] = partial;
  m.t[int(SbPattern::kFocused)] = std::max(focus, seq);
  const uint32_t theta_seq =
      std::max<uint32_t>(1, std::min<uint32_t>(g.pages_per_block, slots / 2));
  for (int x = 0; x < kSbPatterns; x++)
    m.theta[x] = std::max<uint32_t>(
        theta_seq, uint32_t(std::ceil(theta_seq * m.t[x] / m.t[int(SbPattern::kSequential)])));
  return m;
}

}  // namespace pdl
