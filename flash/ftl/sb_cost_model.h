// sb_cost_model.h — StableBuffer's write patterns and what each costs on the FTL device under it
// ([StableBuffer] §3.2): T_x, the expected device time to write one page in pattern x, and the
// proactive flushing thresholds θ_x derived from them.
//
// The paper reads T_seq, T_par and T_focus off uFLIP measurements of a black-box device; here
// the device is one of our FTLs on a chip of known timing, so T_x comes from the FTL's merge
// costs (docs/ftl-sb-notes.md, "Thresholds"). Page = one logical page of the device; P = pages
// per erase block; r, w, e = the chip's read, program and erase times.
//   sequential  a whole block written in order          all FTLs: w + e/P (switch merge, or a
//                                                        block invalidated whole)
//   partitioned runs of P/2 pages in distinct blocks     page FTL: GC victims half valid;
//                                                        BAST/FAST: a partial merge per run:
//                                                        w + (r+w) + 2e/P
//   focused     random pages within the focused area     page FTL: as partitioned; BAST: a full
//               (F erase blocks, F = slots / P)          merge per P/2 pages of a block:
//                                                        w + 2(r+w) + 4e/P (F <= L log blocks;
//                                                        per P/2 · L/F pages beyond); FAST: a random log
//                                                        block's merge touches min(F, P) data
//                                                        blocks: w + (d(P(r+w)+e) + e)/P
// Thresholds: θ_seq = the granularity at which the FTL's random-write cost is stable — one
// erase block (P pages), at most half the buffer so that a proactive flush can fire before the
// buffer is full; θ_x = θ_seq · T_x / T_seq (the paper's rule).
// Invariants: 0 < T_seq <= T_par, T_focus; 1 <= θ_seq <= θ_par, θ_focus.
#pragma once

#include <cstdint>

#include "flash/device/geometry.h"
#include "flash/store/store_params.h"

namespace pdl {

// The three efficient write patterns of [StableBuffer] §1 (uFLIP's names).
enum class SbPattern : uint8_t { kSequential = 0, kPartitioned = 1, kFocused = 2 };
inline constexpr int kSbPatterns = 3;
const char* sb_pattern_name(SbPattern x);  // "sequential", "partitioned", "focused"

struct SbCostModel {
  double t[kSbPatterns] = {1, 1, 1};    // T_x, simulated microseconds per page
  uint32_t theta[kSbPatterns] = {1, 1, 1};  // θ_x, pages
  uint32_t focus_blocks = 1;            // F: erase blocks of the focused area

  // The model of FTL `ftl` (log_blocks log blocks for BAST/FAST) on chip `g` (resolved) with a
  // buffer of `slots` slots.
  static SbCostModel of(FtlKind ftl, uint32_t log_blocks, const Geometry& g, uint32_t slots);
  // The selection criterion of the passive method: an instance of `pages` pages of pattern x is
  // worth pages / T_x (space reclaimed per unit of per-page write time).
  double score(SbPattern x, uint32_t pages) const { return pages / t[int(x)]; }
};

}  // namespace pdl
