// ipl_page_inspector.h — IPU's and IPL's PageInspector: the last log-region pages of each data
// block are log pages, whose log sectors (ipl_sector.h; the store's log_sector bytes) it
// decodes. IPU has no log region. IPL with NVM has no log page: each data block's log area is
// in NVM (nvm_log_area, ipl_nvm.h), its sectors decoded the same way.
#pragma once

#include "flash/device/geometry.h"
#include "flash/store/page_inspector.h"
#include "flash/store/store_params.h"

namespace pdl {

class IplPageInspector final : public PageInspector {
 public:
  // REQUIRES: params resolved for `g`, method ipu or ipl.
  IplPageInspector(const StoreParams& params, const Geometry& g)
      : pages_per_block_(g.pages_per_block),
        data_pages_(params.data_pages_per_block(g)),
        log_sector_(params.log_sector != 0 ? params.log_sector : kLogSector),
        nvm_area_(params.nvm_bytes != 0 && params.method == Method::kIpl ? params.log_region : 0),
        blocks_(g.blocks) {}

  bool is_log_page(Ppa ppa) const override;
  std::vector<LogSectorInfo> log_sectors(std::span<const uint8_t> data) const override;
  bool nvm_log_area(uint32_t block, uint64_t* offset, uint32_t* bytes) const override;

 private:
  uint32_t pages_per_block_;
  uint32_t data_pages_;  // data pages per block: the slots of a logical block
  uint32_t log_sector_;  // bytes of a log sector
  uint32_t nvm_area_;    // bytes of each block's NVM log area (0: the log is on flash)
  uint32_t blocks_;
};

}  // namespace pdl
