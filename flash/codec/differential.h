// differential.h — the page-differential codec ([PDL] §4.1–4.2): pure functions.
//
// A differential is the difference between a base page and the up-to-date page, encoded as
// runs:  [offset u16][length u16][length changed bytes]  repeated, little-endian.
// Runs are sorted, non-overlapping and non-adjacent; two changed stretches closer than one run
// header (4 bytes) are merged into one run, because a separate header would cost more than the
// unchanged bytes between them. Identical pages give the empty differential (zero bytes).
//
// Framing (logical page number, sequence number) is the record layer's business (record.h);
// this file only turns page pairs into runs and back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "flash/common/status.h"

namespace pdl {

inline constexpr size_t kRunHeader = 4;           // offset u16 + length u16
inline constexpr size_t kDiffTooBig = SIZE_MAX;   // encode result: the runs exceed the limit

// Encode the runs turning `base` into `page` (same size, <= 65535 bytes) into `out`.
// Returns the encoded size, or kDiffTooBig if it would exceed out.size() (out is then
// unspecified). Never writes past out.size().
size_t diff_encode(std::span<const uint8_t> base, std::span<const uint8_t> page,
                   std::span<uint8_t> out);

// Apply encoded runs to `page` in place (page holds the base on entry, the result on exit).
// Hostile input is rejected with Errc::kCorrupt: runs out of bounds, overlapping or unsorted
// runs, zero-length runs, truncated headers. `page` may be partly modified on error.
Status diff_apply(std::span<const uint8_t> runs, std::span<uint8_t> page);

}  // namespace pdl
