// ipl_nvm.h — IPL with its log areas in NVM ([IPL-PCRAM] §3.2, Fig. 1(b)): the NVM layout and
// the commit record (docs/format.md, "IPL's log areas in NVM").
//
// Layout of the store's NVM, offsets [0, nvm_bytes):
//    0   the commit area: two commit slots of kNvmCommitSlot bytes, written alternately, each a
//        commit record (below); the valid one with the larger seq is the newest commit. A torn
//        write hits only the slot being written, so the previous record survives.
//   64   the log areas: erase block b (b >= kSuperblockBlocks) owns `area` bytes at
//        64 + (b - kSuperblockBlocks) x area — a direct mapping from the block number — cut
//        into area / log_sector slots, each one log sector (ipl_sector.h, the same encoding as
//        on flash). A log flush writes one whole sector into the block's next free slot.
//   The rest (less than one area per block) is unused.
// A block's area is not cleared when the block is erased: a sector counts for the block's
// current life only if its seq is newer than the oldest valid data page in the block (every
// life starts with a data page or a merge's pages, and seqs only grow), so sectors from a
// previous life are never applied. Format zeroes the whole NVM (a sector of zeros is invalid).
//
// Commit record (32 bytes, little-endian):
//    0  u32  magic 0x4D4E4C49 ("ILNM")
//    4  u32  version (1)
//    8  u64  seq: every item with a seq up to it is committed ([IPL] §5.1's commit record)
//   16  12 bytes zero
//   28  u32  CRC-32C of bytes [0, 28)
#pragma once

#include <cstdint>
#include <span>

#include "flash/device/geometry.h"

namespace pdl {

// The default log sector with NVM: [IPL-PCRAM]'s "flash-PCRAM IPL (128B)" in-memory log sector.
inline constexpr uint32_t kNvmLogSector = 128;
inline constexpr uint32_t kNvmCommitSlot = 32;
inline constexpr uint32_t kNvmCommitArea = 2 * kNvmCommitSlot;

// The largest per-block log area (whole sectors of `log_sector` bytes) that `nvm_bytes` gives
// each data block of `g`; 0 if not even one sector fits.
uint32_t nvm_max_area(uint32_t nvm_bytes, const Geometry& g, uint32_t log_sector);
// NVM offset of the log area of erase block `block` (>= kSuperblockBlocks).
uint64_t nvm_area_offset(uint32_t block, uint32_t area);

void nvm_commit_encode(uint64_t seq, std::span<uint8_t> slot);  // slot: kNvmCommitSlot bytes
// True (and *seq) if `slot` holds a valid commit record.
bool nvm_commit_decode(std::span<const uint8_t> slot, uint64_t* seq);

}  // namespace pdl
