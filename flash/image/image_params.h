// image_params.h — the parameters a user may give when creating or opening an image, parsed
// from "key=value" strings (SQLite URI parameters, tool flags) in one place.
//
// Every field is optional: unset fields take defaults when an image is created, and are not
// checked when an existing image is opened. A set field that contradicts an existing image is
// an error naming the parameter (image.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "flash/common/status.h"
#include "flash/device/geometry.h"
#include "flash/store/store_params.h"

namespace pdl {

struct ImageParams {
  std::optional<Method> method;
  std::optional<uint32_t> max_diff;         // Max_Differential_Size, bytes
  std::optional<ObsoleteMode> obsolete;
  std::optional<uint32_t> log_region;       // IPL: log region per erase block, bytes
  std::optional<uint32_t> log_sector;       // IPL: bytes of a log sector (128, 256 or 512)
  std::optional<FtlKind> ftl;               // FTL devices: page, bast or fast
  std::optional<uint32_t> log_blocks;       // BAST/FAST: log blocks
  std::optional<uint32_t> sb_slots;         // StableBuffer: staging-area pages
  // StableBuffer's run-time choices (not stored): URI keys sb_recognition=ondemand|incremental,
  // sb_flush=passive|proactive.
  std::optional<SbRecognition> sb_recognition;
  std::optional<SbFlush> sb_flush;
  // NVM beside the chip, bytes (Geometry::nvm_bytes; the store uses all of it:
  // StoreParams::nvm_bytes; stored). URI key nvm=SIZE, 0 = none.
  std::optional<uint32_t> nvm;
  // Where the NVM's bytes live (not stored): a file, mapped through libpmem (a DAX file on real
  // persistent memory; msync on an ordinary one). Default: inside the image file; required for
  // an MTD device. URI key nvm_path=PATH.
  std::optional<std::string> nvm_path;
  std::optional<uint32_t> page;             // page data bytes
  std::optional<uint32_t> pages_per_block;
  std::optional<uint32_t> spare;            // page spare bytes (default page/32, at least 32)
  std::optional<uint64_t> size;             // chip size, bytes (data areas)
  std::optional<uint32_t> nop;              // partial programs per page
  std::optional<uint32_t> erase_limit;      // erases a block endures (emulated wear-out)
  std::optional<uint32_t> max_files;        // directory slots
  std::optional<uint32_t> cache_chunks;     // Volume write-back cache, chunks (not stored)
  // Owner-map pages the Volume keeps in RAM (VolumeOptions::owner_cache_pages; not stored).
  std::optional<uint32_t> owner_cache;
  std::optional<bool> logical_clock;        // mtimes from a counter, not the wall (not stored)
  // Measure bytes_changed (VolumeOptions::track_changes; not stored; default off): URI key
  // track_changes=on|off.
  std::optional<bool> track_changes;
  std::optional<std::string> mtd;           // the image is this MTD device (/dev/mtdN)
  // How the store commits (not stored; default true): true = atomic groups, each Volume sync
  // one atomic commit (the SQLite VFS then keeps the rollback journal in memory); false =
  // every page counts once programmed, [PDL]'s engine (the VFS keeps the journal on
  // flash). URI key commit=atomic|journal.
  std::optional<bool> atomic_commit;
  // Static wear levelling threshold in erases (not stored; StoreParams::wear_level): URI key
  // wear_level=N|off, off = 0.
  std::optional<uint32_t> wear_level;
  // A checkpoint area (StoreParams::checkpoint; stored: superblock format 6): URI key
  // checkpoint=on|off, `pdl format --checkpoint on|off`. Unset: on where the area fits (at
  // most 1/8 of the chip's blocks, and the parameters still resolve on the rest), else off
  // (image_store_params says why).
  std::optional<bool> checkpoint;
  // Blocks a mount after a power cut may have to re-read before a periodic checkpoint is
  // written (StoreParams::replay_blocks; run-time): URI key replay_blocks=N.
  std::optional<uint32_t> replay_blocks;
  // Clean table pages each paged table of PDL/OPU/page FTL keeps in RAM (StoreParams::
  // table_cache; run-time): URI key table_cache=PAGES.
  std::optional<uint32_t> table_cache;
  // Mount by scanning even when a checkpoint is current (StoreParams::scan_mount; a run-time
  // choice for tools, pdl fsck: no URI key).
  bool scan_mount = false;
  // The Volume takes its tables from the checkpoint (clean close, or periodic and caught up
  // after a power cut) when it can; false: it reads its directory and owner map instead (a
  // run-time choice for tools, pdl info --volume-pages, to measure or cross-check what the
  // tables save: no URI key).
  bool volume_tables = true;

  // Set one parameter from its text form. Unknown key: kNotFound (callers decide whether
  // foreign keys are allowed). Bad value: kInvalidArgument "<key>=<value>: <why>".
  Status set(std::string_view key, std::string_view value);
  // Keys set(), in documentation order.
  static const char* const kKeys[];

  Geometry geometry() const;      // for a new image: defaults for unset fields
  // For a new image: defaults for unset fields. Unlike a bare StoreParams ([PDL]'s engine,
  // obsolete marks in the spare area as in its experiments), an image keeps obsolete marks in
  // RAM unless told otherwise ([PDL] §6; docs/design.md, "Obsolete marks").
  StoreParams store_params() const;
  // The run-time choices set (the rest at their defaults), for mount_store's `run_time`.
  StoreParams run_time() const;
};

// Chip sizes a user may ask for (size=): at most 256 GiB; at least 8 erase blocks
// (Geometry::validate), of which the smallest geometry (2 pages of 512 bytes) makes 8 KiB.
inline constexpr uint64_t kMaxChipBytes = 256ull << 30;
inline constexpr uint64_t kMinChipBytes = 8ull << 10;

// "256M", "2G", "1T", "4096", "64K" (binary multiples). false on junk or overflow.
bool parse_size(std::string_view s, uint64_t* out);
std::string format_size(uint64_t bytes);  // "256M" when exact, else bytes

}  // namespace pdl
