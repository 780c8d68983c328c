// cut_site.h — where a power cut landed on a chip with a checkpoint area (pdl-crash's report
// of its coverage; docs/reliability.md): on the store's blocks (data), on a page of the
// checkpoint stream, on a summary page, on another kind of area page, on the erase of an area
// block, or on the checkpoint log (an entry, or a log block's switch).
//
// Told from the interrupted operation alone (EmulatedNand::thread_interrupted): its address
// against the superblock blocks and the area, and for an area program the spare's magic
// (docs/format.md §14: bytes 1..4, "CKPT" a stream page, "CKSM" a summary page).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "flash/device/emulated_nand.h"

namespace pdl::tpcc {

enum class CutSite : uint8_t { kData, kStream, kSummary, kAreaOther, kAreaErase, kLog, kCount };

// The report's name of a site ("data", "checkpoint stream", ...).
const char* cut_site_name(CutSite s);

// The site of `op` on a chip of geometry `g` whose last `area_blocks` blocks are the area (0:
// none). An operation that was not interrupted (op kNone) is data.
CutSite cut_site(const EmulatedNand::Interrupted& op, const Geometry& g, uint32_t area_blocks);

// Cuts per site.
using CutSites = std::array<uint64_t, size_t(CutSite::kCount)>;
// "data 12, checkpoint stream 3, ..." (sites with no cut left out; "none" if all are 0).
std::string describe(const CutSites& s);

}  // namespace pdl::tpcc
