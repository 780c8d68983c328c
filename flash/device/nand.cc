// nand.cc — the Nand interface's default bad-block marker access (nand.h): byte 0 of the
// spare of a block's first page, 0xFF on a good block. Devices with their own mechanism
// (EmulatedNand: uncounted; MTD: MEMSETBADBLOCK/MEMGETBADBLOCK) override both.
#include "flash/device/nand.h"

#include <vector>

namespace pdl {

Status Nand::mark_bad(uint32_t block) {
  const Geometry& g = geometry();
  if (block >= g.blocks)
    return Status::error(Errc::kNandRule, "block " + std::to_string(block) + " out of range");
  const uint8_t marker = 0x00;
  return program(Ppa(block) * g.pages_per_block, {}, std::span<const uint8_t>(&marker, 1), 0, 0);
}

bool Nand::is_bad(uint32_t block) {
  const Geometry& g = geometry();
  if (block >= g.blocks) return true;
  std::vector<uint8_t> spare(g.page_spare);
  if (!read(Ppa(block) * g.pages_per_block, {}, spare).is_ok()) return true;
  return spare[0] != 0xFF;
}

Status Nand::nvm_read(uint64_t, std::span<uint8_t>) {
  return Status::error(Errc::kUnsupported, "this device has no NVM (nvm=0)");
}

Status Nand::nvm_write(uint64_t, std::span<const uint8_t>) {
  return Status::error(Errc::kUnsupported, "this device has no NVM (nvm=0)");
}

}  // namespace pdl
