// superblock.h — method parameters and geometry echo, stored twice (blocks 0 and 1, page 0).
//
// Written once by format (both copies, last, so a cut format leaves no valid superblock); read by mount from block 0,
// falling back to block 1 if that copy is torn or corrupt. Layout: docs/format.md §2.
#pragma once

#include <array>
#include <cstdint>

#include "flash/common/status.h"
#include "flash/device/nand.h"
#include "flash/store/store_params.h"

namespace pdl {

struct Superblock {
  StoreParams params;
  std::array<uint8_t, 16> uuid{};
  uint64_t format_time = 0;  // seconds since the epoch
};

// Program the superblock into page 0 of blocks 0..kSuperblockBlocks-1.
// REQUIRES: those blocks are erased.
Status write_superblock(Nand& nand, const Superblock& sb);
// Read the newest valid copy; Errc::kCorrupt with a clear message if neither copy is valid or
// the geometry it records differs from the device's.
Status read_superblock(Nand& nand, Superblock* sb);
// The block count a valid copy records (its page, spare and block shape must match the
// device's): a store may use fewer blocks than its device (MTD: the first `blocks`).
Status peek_superblock_blocks(Nand& nand, uint32_t* blocks);

}  // namespace pdl
