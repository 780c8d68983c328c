// cut_site.cc — where a power cut landed (cut_site.h).
#include "tpcc/cut_site.h"

#include <cstring>

#include "flash/store/superblock.h"

namespace pdl::tpcc {

const char* cut_site_name(CutSite s) {
  switch (s) {
    case CutSite::kData:
      return "data";
    case CutSite::kStream:
      return "checkpoint stream";
    case CutSite::kSummary:
      return "summary";
    case CutSite::kAreaOther:
      return "other area page";
    case CutSite::kAreaErase:
      return "area erase";
    case CutSite::kLog:
      return "log";
    case CutSite::kCount:
      break;
  }
  return "?";
}

CutSite cut_site(const EmulatedNand::Interrupted& op, const Geometry& g, uint32_t area_blocks) {
  using Op = EmulatedNand::Interrupted::Op;
  if (op.op == Op::kNone || op.op == Op::kNvmWrite) return CutSite::kData;
  const uint64_t block = op.op == Op::kErase ? op.where : op.where / g.pages_per_block;
  if (block < kSuperblockBlocks) return area_blocks ? CutSite::kLog : CutSite::kData;
  if (area_blocks == 0 || block < g.blocks - area_blocks) return CutSite::kData;
  if (op.op == Op::kErase) return CutSite::kAreaErase;
  // The spare's magic at bytes 1..4 (the program's spare bytes start at op.spare_off).
  char magic[4] = {};
  for (uint32_t i = 0; i < 4; i++) {
    const uint32_t at = 1 + i;
    if (at < op.spare_off || at - op.spare_off >= op.spare.size()) return CutSite::kAreaOther;
    magic[i] = char(op.spare[at - op.spare_off]);
  }
  if (std::memcmp(magic, "CKPT", 4) == 0) return CutSite::kStream;
  if (std::memcmp(magic, "CKSM", 4) == 0) return CutSite::kSummary;
  return CutSite::kAreaOther;
}

std::string describe(const CutSites& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (!s[i]) continue;
    if (!out.empty()) out += ", ";
    out += std::string(cut_site_name(CutSite(i))) + " " + std::to_string(s[i]);
  }
  return out.empty() ? "none" : out;
}

}  // namespace pdl::tpcc
