// superblock.h — method parameters and geometry echo, stored twice (blocks 0 and 1, page 0).
//
// Written once by format (both copies, last, so a cut format leaves no valid superblock); read by
// mount from block 0, falling back to block 1 if that copy is torn or corrupt. Layout:
// docs/format.md §2.
//
// Versions: 1 — every page on flash counts (no commit records); 2 — PDL, OPU and IPL stores
// whose sync can be an atomic commit (commit records in spare areas and IPL log sectors,
// docs/format.md §3, §7); 3 — version 2 for an IPL store whose log sectors are not 512 bytes:
// bytes 72..75 hold its log_sector (an IPL store of 512-byte sectors stays version 2, bytes
// 72..75 zero); 4 — an FTL device (method ftl or stablebuffer): bytes 80..95 hold an
// extension (ftl, log_blocks, sb_slots) under its own CRC; 5 — a PDL or IPL store that keeps
// part of its state in NVM: the extension holds nvm_bytes, bytes 72..75 IPL's log_sector
// (whatever its size). A store of version 1 is upgraded in place by the first writable open
// (upgrade_store, open_store.cc): its superblock is rewritten copy by copy, so a cut leaves one
// valid copy of either version. 6 — any of 1..5 (its "base" format, every byte as it has them)
// on a chip whose last blocks are a checkpoint area (flash/store/checkpoint_area.h): bytes
// 96..127 hold an extension {base version, area blocks} under its own CRC; the store runs on
// the first blocks - area blocks (flash/store/checkpoint_view.h). An older pdl refuses 6 as
// made by a newer pdl. 7 — 6 whose checkpoints may be followed by summary pages declaring
// the blocks changed since (docs/design.md §17): a pdl that knows only 6 would mount from the
// checkpoint and miss those changes, so it must refuse 7 (it does: "made by a newer pdl").
// 8 — 7 whose area is split into two halves holding table pages and a root (docs/design.md
// §19; log entries of format 2): a pdl that knows only 7 would misread the log and the area,
// so it refuses 8 ("made by a newer pdl"). This pdl mounts 6 and 7 by scan (their checkpoint
// ignored) and writes no checkpoint there.
#pragma once

#include <array>
#include <cstdint>

#include "flash/common/status.h"
#include "flash/device/nand.h"
#include "flash/store/store_params.h"

namespace pdl {

// Superblock format versions (docs/format.md §2).
inline constexpr uint32_t kSuperblockLegacy = 1;  // no atomic commit: every page counts
inline constexpr uint32_t kSuperblockAtomic = 2;  // PDL/OPU/IPL: commit records on flash
inline constexpr uint32_t kSuperblockLogSector = 3;  // 2 + IPL's log_sector in bytes 72..75
inline constexpr uint32_t kSuperblockFtl = 4;  // FTL devices: the extension in bytes 80..95
inline constexpr uint32_t kSuperblockNvm = 5;  // PDL/IPL with NVM: nvm_bytes in bytes 80..95
inline constexpr uint32_t kSuperblockCheckpoint = 6;  // 1..5 + a checkpoint area: bytes 96..127
inline constexpr uint32_t kSuperblockSummaries = 7;  // 6 + summary pages after a checkpoint
inline constexpr uint32_t kSuperblockHalves = 8;  // 7 + the area in halves, table pages, a root

// The version a new store of `params` (resolved) gets: 2 for PDL, OPU and IPL; 3 for IPL with
// log sectors other than kLogSector; 4 for the FTL devices; 1 for IPU, which has no place for a commit record (no log
// region) and keeps format 1.
uint32_t superblock_version_for(const StoreParams& params);

struct Superblock {
  // The base format (1..5): what the store's engine reads. On flash the version is 6
  // (kSuperblockCheckpoint) when checkpoint_blocks > 0, the base kept in the extension.
  uint32_t version = kSuperblockAtomic;
  // Blocks of the checkpoint area at the end of the chip (0 = none: the store mounts by scan).
  // The geometry the store runs on has blocks - checkpoint_blocks blocks (store_geometry).
  uint32_t checkpoint_blocks = 0;
  // Format 7: a checkpoint may be followed by summary pages (checkpoint_area.h); format 6
  // stores keep the "stale" entry on the first change (written by format_store for new stores).
  bool summaries = false;
  // Format 8: the area is two halves holding table pages and roots (area_pager.h), log entries
  // of format 2. Formats 6 and 7 (false) mount by scan here.
  bool halves = false;
  StoreParams params;
  std::array<uint8_t, 16> uuid{};
  uint64_t format_time = 0;  // seconds since the epoch
};

// The on-flash version of `sb`: 6 with a checkpoint area, else sb.version.
inline uint32_t superblock_stored_version(const Superblock& sb) {
  if (!sb.checkpoint_blocks) return sb.version;
  if (sb.halves) return kSuperblockHalves;
  return sb.summaries ? kSuperblockSummaries : kSuperblockCheckpoint;
}
// The geometry the store of a chip of geometry `g` runs on: its first g.blocks - area blocks.
inline Geometry store_geometry(const Geometry& g, uint32_t checkpoint_blocks) {
  Geometry s = g;
  s.blocks = g.blocks - checkpoint_blocks;
  return s;
}

// Program the superblock into page 0 of blocks 0..kSuperblockBlocks-1. Bytes 72..75 get
// params.log_sector in version 3, zero in the others.
// REQUIRES: those blocks are erased.
Status write_superblock(Nand& nand, const Superblock& sb);
// Read the newest valid copy; Errc::kCorrupt with a clear message if neither copy is valid or
// the geometry it records differs from the device's; kUnsupported for a version this build
// does not know (an image made by a newer pdl), naming it. `resolve` checks the stored
// parameters (resolve_store_params, flash/image/open_store.h): one it would refuse or change
// is kCorrupt, naming the field.
Status read_superblock(Nand& nand, ParamsResolver resolve, Superblock* sb);
// Program the superblock copy of block `block` (page 0) alone: the checkpoint log's block
// switch (checkpoint_log.h). REQUIRES: the block is erased. kBadBlock if the program failed
// (the block is then marked bad).
Status write_superblock_copy(Nand& nand, const Superblock& sb, uint32_t block);
// Replace both copies by `sb` (an upgrade): each block in turn is erased and programmed, so a
// cut leaves at least one valid copy, of the old or the new content.
Status rewrite_superblock(Nand& nand, const Superblock& sb);
// The block count a valid copy records (its page, spare and block shape must match the
// device's): a store may use fewer blocks than its device (MTD: the first `blocks`).
Status peek_superblock_blocks(Nand& nand, uint32_t* blocks);

}  // namespace pdl
