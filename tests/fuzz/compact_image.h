// compact_image.h — the fuzz_image target's input format: a pdl image file (docs/format.md
// §1) without its padding, so that a fuzzer's mutations land on bytes that mean something.
//
//   byte 0        flags: kFixHeaderCrc — recompute the header's CRC; kFixPageCrcs — recompute
//                 every page's checksums (spare header and data CRCs, the superblock's own
//                 CRC, IPL log sectors' CRCs), so that mutations reach the decoders behind
//                 them instead of stopping at "torn page"
//   bytes 1-68    the image header's bytes [0, 68) (magic ... header CRC)
//   the rest      the page array from page 0, in flash polarity (erased = 0xFF; the file
//                 stores it inverted); pages beyond the input are erased; no redo record
//                 pending (format.md §1)
// expand() writes the image file (erase counts zero) — extended to the size its header
// declares when that is at most kMaxExpandedBytes, so hostile headers cannot make the harness
// itself allocate gigabytes; compact() turns a real image file into this form (flags 0).
// Harness code: it knows the on-flash layouts by their documentation, not by the engine's
// internals, so a layout change that the docs miss shows up here.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pdl::fuzz {

inline constexpr uint8_t kFixHeaderCrc = 1, kFixPageCrcs = 2;
inline constexpr size_t kHeaderInput = 68;
inline constexpr uint64_t kMaxExpandedBytes = 16u << 20;

// Write the image file `path` from compact input `in`. False if `in` is too short to hold a
// header (nothing written).
bool expand(std::span<const uint8_t> in, const std::string& path);
// The compact form of the image file at `path` (flags 0), trailing erased pages left out.
// Empty if the file cannot be read or is no image.
std::vector<uint8_t> compact(const std::string& path);
// Recompute the checksums of the pages of `pages` (flash polarity; whole pages of
// page_data + page_spare bytes, a partial last page ignored).
void fix_page_crcs(std::span<uint8_t> pages, uint32_t page_data, uint32_t page_spare);

}  // namespace pdl::fuzz
