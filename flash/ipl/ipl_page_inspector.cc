// ipl_page_inspector.cc — log pages and their sectors decoded for tools (ipl_sector.h).
#include "flash/ipl/ipl_page_inspector.h"

#include "flash/ipl/ipl_nvm.h"
#include "flash/ipl/ipl_sector.h"

namespace pdl {

bool IplPageInspector::is_log_page(Ppa ppa) const {
  return ppa / pages_per_block_ >= kSuperblockBlocks && ppa % pages_per_block_ >= data_pages_;
}

std::vector<LogSectorInfo> IplPageInspector::log_sectors(std::span<const uint8_t> data) const {
  std::vector<LogSectorInfo> out;
  for (uint32_t i = 0; i < data.size() / log_sector_; i++) {
    SectorHeader h;
    std::span<const uint8_t> payload;
    LogSectorInfo s;
    switch (sector_decode(data.subspan(size_t(i) * log_sector_, log_sector_), &h, &payload)) {
      case SectorState::kErased:
        s.kind = LogSectorInfo::kErased;
        break;
      case SectorState::kCorrupt:
        s.kind = LogSectorInfo::kTorn;
        break;
      case SectorState::kValid:
        s.kind = h.flags & kSectorUnmap ? LogSectorInfo::kUnmap : LogSectorInfo::kLog;
        s.lbn = h.lbn;
        s.slot = h.slot;
        s.lpn = h.lbn * data_pages_ + h.slot;
        s.seq = h.seq;
        s.index = h.idx;
        s.count = h.count;
        s.payload_bytes = h.len;
        s.reset = h.flags & kSectorReset;
        if (s.kind == LogSectorInfo::kUnmap)
          for (uint32_t sl = 0; sl < data_pages_; sl++)
            if (unmap_has(payload, sl)) s.unmapped_slots.push_back(sl);
        break;
    }
    out.push_back(std::move(s));
  }
  return out;
}

bool IplPageInspector::nvm_log_area(uint32_t block, uint64_t* offset, uint32_t* bytes) const {
  if (nvm_area_ == 0 || block < kSuperblockBlocks || block >= blocks_) return false;
  *offset = nvm_area_offset(block, nvm_area_);
  *bytes = nvm_area_;
  return true;
}

}  // namespace pdl
