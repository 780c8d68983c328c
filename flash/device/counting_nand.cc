// counting_nand.cc — the address rules every NAND driver checks (counting_nand.h).
#include "flash/device/counting_nand.h"

#include <string>

namespace pdl {

Status CountingNand::check_ppa(Ppa ppa) const {
  if (ppa >= geometry().total_pages())
    return Status::error(Errc::kNandRule, "page address " + std::to_string(ppa) + " out of range");
  return Status::ok();
}

Status CountingNand::check_block(uint32_t block) const {
  if (block >= geometry().blocks)
    return Status::error(Errc::kNandRule, "block " + std::to_string(block) + " out of range");
  return Status::ok();
}

Status CountingNand::check_nvm(uint64_t off, size_t n) const {
  const uint64_t size = geometry().nvm_bytes;
  if (size == 0) return Status::error(Errc::kUnsupported, "this device has no NVM (nvm=0)");
  if (off > size || n > size - off)
    return Status::error(Errc::kNandRule, "NVM range [" + std::to_string(off) + ", " +
                                              std::to_string(off + n) + ") outside its " +
                                              std::to_string(size) + " bytes");
  return Status::ok();
}

}  // namespace pdl
