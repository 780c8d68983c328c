// ipl_nvm.cc — the NVM layout and commit records of IPL with NVM (ipl_nvm.h).
#include "flash/ipl/ipl_nvm.h"

#include <algorithm>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/store/store_params.h"

namespace pdl {
namespace {

constexpr uint32_t kMagic = 0x4D4E4C49;  // "ILNM"
constexpr uint32_t kVersion = 1;
constexpr size_t kCrcAt = 28;

}  // namespace

uint32_t nvm_max_area(uint32_t nvm_bytes, const Geometry& g, uint32_t log_sector) {
  if (nvm_bytes <= kNvmCommitArea || g.blocks <= kSuperblockBlocks || log_sector == 0) return 0;
  const uint64_t per = (uint64_t(nvm_bytes) - kNvmCommitArea) / (g.blocks - kSuperblockBlocks);
  return uint32_t(per / log_sector * log_sector);
}

uint64_t nvm_area_offset(uint32_t block, uint32_t area) {
  return kNvmCommitArea + uint64_t(block - kSuperblockBlocks) * area;
}

void nvm_commit_encode(uint64_t seq, std::span<uint8_t> slot) {
  std::fill(slot.begin(), slot.end(), 0);
  le::put32(slot.data(), kMagic);
  le::put32(slot.data() + 4, kVersion);
  le::put64(slot.data() + 8, seq);
  le::put32(slot.data() + kCrcAt, crc32c(slot.data(), kCrcAt));
}

bool nvm_commit_decode(std::span<const uint8_t> slot, uint64_t* seq) {
  if (slot.size() < kNvmCommitSlot || le::get32(slot.data()) != kMagic ||
      le::get32(slot.data() + 4) != kVersion ||
      le::get32(slot.data() + kCrcAt) != crc32c(slot.data(), kCrcAt))
    return false;
  *seq = le::get64(slot.data() + 8);
  return true;
}

}  // namespace pdl
