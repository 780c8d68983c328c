// store_params.h — parameters of a page-update method, fixed at format time (kept in the
// superblock, docs/format.md §2).
#pragma once

#include <cstdint>
#include <string>

#include "flash/common/status.h"
#include "flash/device/geometry.h"

namespace pdl {

enum class Method : uint8_t {
  kPdl = 1,  // page-differential logging ([PDL])
  kOpu = 2,  // out-place update, page-level mapping ([PDL] §3)
  kIpu = 3,  // in-place update: a block is rewritten whole for each overwrite ([PDL] §3)
  kIpl = 4,  // in-page logging: log sectors in each erase block, merge when full ([IPL])
  // A commodity FTL device (eMMC, SD card) on the same chip: SQLite writes whole pages in
  // place through a flash translation layer (StoreParams::ftl picks which), and its journal
  // lives on the device too. No atomic commit: what such a user has (docs/design.md §15).
  kFtl = 5,
  // StableBuffer ([StableBuffer]) in front of an FTL device: page writes staged in a small
  // pre-allocated area of the same device, flushed in the FTL's efficient write patterns.
  kStableBuffer = 6,
};

// The flash translation layer of an FTL device (Method::kFtl, kStableBuffer).
enum class FtlKind : uint8_t {
  kNone = 0,  // not an FTL device
  kPage = 1,  // page-level mapping, greedy GC (the page-mapping FTL: PdlStore on OPU's path)
  kBast = 2,  // block-associative log blocks, switch/partial/full merges ([BAST])
  kFast = 3,  // fully-associative random log blocks + one sequential log block ([FAST])
};

// StableBuffer's write-pattern recognition and flushing ([StableBuffer] §3): run-time choices
// (not stored; URI keys sb_recognition, sb_flush).
enum class SbRecognition : uint8_t { kOnDemand = 0, kIncremental = 1 };
enum class SbFlush : uint8_t { kPassive = 0, kProactive = 1 };

// What a method does, asked of the method rather than re-derived from its name. PDL and OPU
// map pages through a ppmt and mark the old copies obsolete; IPU and IPL keep every logical
// page in one erase block (static mapping, updates within the block, merges instead of GC).
constexpr bool in_page(Method m) { return m == Method::kIpu || m == Method::kIpl; }
constexpr bool has_obsolete_marks(Method m) { return m == Method::kPdl || m == Method::kOpu; }
// Max_Differential_Size applies (PDL only); a log region in each erase block (IPL only).
constexpr bool writes_differentials(Method m) { return m == Method::kPdl; }
constexpr bool has_log_region(Method m) { return m == Method::kIpl; }
// An FTL device (with or without StableBuffer): superblock format 4, parameters ftl,
// log_blocks and sb_slots.
constexpr bool is_ftl_device(Method m) { return m == Method::kFtl || m == Method::kStableBuffer; }
// Atomic commit of a group of writes: every method but IPU, which rewrites blocks in place, and
// the FTL devices, whose block interface has no commit (SQLite keeps its journal on them).
constexpr bool has_atomic_commit(Method m) { return m != Method::kIpu && !is_ftl_device(m); }
// May keep part of its state in the NVM beside the chip (StoreParams::nvm_bytes): PDL its
// differential write buffer, IPL its log areas ([IPL-PCRAM]).
constexpr bool can_use_nvm(Method m) { return m == Method::kPdl || m == Method::kIpl; }

// Which closed block PDL/OPU garbage collection takes (StoreParams::gc_victim).
enum class GcVictim : uint8_t {
  kGreedy = 0,  // the fewest valid pages (default)
  kOldest = 1,  // the longest closed: the head of JFFS's log, the collection [PDL] cites
};

enum class ObsoleteMode : uint8_t {
  kSpare = 1,   // the paper's experiments: program the spare area a second time
  kMemory = 2,  // [PDL] §6 enhancement: obsolete bits in RAM, rebuilt from sequence numbers
};

struct StoreParams {
  Method method = Method::kPdl;
  // Max_Differential_Size ([PDL] §4.3), bytes, record header included. 0 = a page.
  uint32_t max_differential = 256;
  ObsoleteMode obsolete = ObsoleteMode::kSpare;
  // Logical pages offered; 0 = every page of the data area minus the GC reserve.
  uint32_t logical_pages = 0;
  // Free blocks kept back so garbage collection can always run (PDL, OPU: >= 2; default 2),
  // or so a merge always finds an erased block (IPU, IPL: >= 1; default 1 for IPU, 3 for IPL:
  // its commit log's block and a shadow merge's, docs/design.md §13).
  uint32_t gc_reserve_blocks = 0;
  // IPL: bytes of each erase block given to the log region ([IPL] §3.2), rounded up to whole
  // pages; 0 = the default, 9/64 of the block (IPL(18KB) on 64 x 2 KiB pages). IPU: always 0.
  // IPL with NVM (nvm_bytes > 0): the bytes of each erase block's log area in NVM, whole log
  // sectors ([IPL-PCRAM] §3.2); 0 = nvm_bytes divided over the blocks (flash/ipl/ipl_nvm.h).
  uint32_t log_region = 0;
  // IPL: bytes of one log sector, the unit a log-buffer flush programs ([IPL] §3.2: 512;
  // [PDL]'s experiments: a 128-byte log buffer per page). A power of two, 128 .. 512; a page
  // holds page_data / log_sector of them, each a partial program, so the chip's NOP must be at
  // least that. 0 = kLogSector. Stored in the superblock (docs/format.md §2: format 3, only when
  // not 512, so default stores keep format 2). Others: 0.
  uint32_t log_sector = 0;
  // Static wear levelling (a run-time choice, not stored in the superblock: URI key
  // wear_level). When the most-worn free block has endured `wear_level` erases more than the
  // least-worn block holding data, that block's data moves to worn blocks (PDL, OPU: as a GC
  // move, block_manager.h; IPU, IPL: as a merge, ipl_merge.cc) and it returns to the pool.
  // 0 = off: free blocks are then taken in FIFO order and cold data never moves.
  uint32_t wear_level = kWearLevelDefault;
  static constexpr uint32_t kWearLevelDefault = 1024;
  // PDL garbage collection merges a valid differential larger than half a page with its base
  // page into a new base page instead of copying it (pdl_gc.cc, docs/design.md). A run-time
  // switch for experiments only (not stored, no URI key): without the merge PDL(page) has no
  // steady state (docs/results.md, "The GC merge"), so no user should turn it off.
  bool gc_merge = true;
  // PDL/OPU garbage collection's victim: greedy, or JFFS's oldest-first ([PDL] footnote 15
  // names Woodhouse's JFFS). An experiment switch like gc_merge (not stored, no URI key).
  GcVictim gc_victim = GcVictim::kGreedy;
  // FTL devices (Method::kFtl, kStableBuffer; kNone for the others). Stored (format 4).
  FtlKind ftl = FtlKind::kNone;
  // BAST/FAST: log blocks of the FTL ([BAST], [FAST]); 0 = kLogBlocksDefault. Page FTL,
  // other methods: 0. Stored (format 4).
  uint32_t log_blocks = 0;
  static constexpr uint32_t kLogBlocksDefault = 16;
  // StableBuffer: pages of the staging area (slots) on the device; 0 = the default the engine
  // derives ([StableBuffer] §4). Others: 0. Stored (format 4).
  uint32_t sb_slots = 0;
  // NVM (the device's Geometry::nvm_bytes) the store uses, from offset 0: PDL keeps its
  // differential write buffer there, IPL every block's log area ([IPL-PCRAM] §3.2). 0 = none:
  // the flash-only engine. Only for can_use_nvm methods; at most the device's NVM. Stored
  // (superblock format 5), so a store is never mounted without the NVM that holds part of it.
  uint32_t nvm_bytes = 0;
  // Checkpoint area (docs/design.md §17; superblock format 6): the chip's last blocks hold
  // a checkpoint of the store's tables written at clean unmount, so that the next mount reads
  // it instead of scanning every page. At format (format_store): `checkpoint` asks for an
  // area of `checkpoint_blocks` blocks (0 = the size checkpoint_area_blocks gives); the store
  // then runs on the first blocks - area blocks, and its defaults (logical_pages...) follow
  // from those. Off by default at this level (the store suites keep their capacities); images
  // turn it on where it fits (ImageParams::checkpoint). On a mounted store: what its
  // superblock has.
  bool checkpoint = false;
  uint32_t checkpoint_blocks = 0;
  // Mount by scanning even when the checkpoint is current (a run-time choice, not stored; no
  // URI key): pdl fsck, which checks what is on flash, not what a checkpoint says.
  bool scan_mount = false;
  // Power-cut mount budget (superblock format 7, docs/design.md §17; a run-time choice, not
  // stored; URI key replay_blocks): after a checkpoint, the blocks changed since are declared
  // in summary pages and a mount after a power cut re-reads only them. Once this many are
  // declared, the next sync writes a new checkpoint (a periodic one); a block beyond twice
  // this many makes the checkpoint stale instead (mount then scans). Larger: fewer periodic
  // checkpoints (their pages cost programs), a longer mount after a power cut (every page's
  // spare area of each declared block is read). 0 = the default, replay_blocks_default.
  uint32_t replay_blocks = 0;
  // Demand-loaded tables (docs/design.md §18; a run-time choice, not stored; URI key
  // table_cache): clean table pages each of PDL/OPU's paged tables (ppmt, reverse map, vdct)
  // keeps in RAM once a checkpoint gave its pages homes on flash; dirty pages stay until the
  // next checkpoint. 0 = kTableCacheDefault.
  uint32_t table_cache = 0;
  static constexpr uint32_t kTableCacheDefault = 256;
  // StableBuffer run-time choices (not stored).
  SbRecognition sb_recognition = SbRecognition::kOnDemand;
  SbFlush sb_flush = SbFlush::kPassive;

  // The checks every method shares: a known method and obsolete mode. The engine of the
  // method fills the other defaults for a geometry and checks their ranges
  // (PdlStore::resolve_params, IplStore::resolve_params); resolve_store_params
  // (flash/image/open_store.h) runs both. Messages name the parameter.
  Status check_method() const;
  std::string describe() const;  // "pdl max_diff=256 obsolete=spare"

  // Derived, for IPU/IPL (valid after resolve_store_params): pages of each erase block
  // holding log sectors, and data pages per block (the logical pages one block serves).
  // IPL with NVM keeps its log areas in NVM: no log page on flash.
  uint32_t log_pages(const Geometry& g) const {
    if (nvm_bytes != 0) return 0;
    return (log_region + g.page_data - 1) / g.page_data;
  }
  uint32_t data_pages_per_block(const Geometry& g) const {
    return g.pages_per_block - log_pages(g);
  }
};

// IPL log sectors ([IPL] §3.2): 512 bytes, each programmed on its own (a partial program).
inline constexpr uint32_t kLogSector = 512;

const char* method_name(Method m);
const char* obsolete_name(ObsoleteMode m);
const char* ftl_name(FtlKind k);                 // "none", "page", "bast", "fast"
const char* sb_recognition_name(SbRecognition r);  // "ondemand", "incremental"
const char* sb_flush_name(SbFlush f);              // "passive", "proactive"
// Parse "pdl"/"opu"/"ipu"/"ipl"/"ftl"/"stablebuffer" and "spare"/"memory"; false if unknown.
bool parse_method(const std::string& s, Method* m);
bool parse_obsolete(const std::string& s, ObsoleteMode* m);
bool parse_ftl(const std::string& s, FtlKind* k);  // "page", "bast", "fast"
bool parse_sb_recognition(const std::string& s, SbRecognition* r);
bool parse_sb_flush(const std::string& s, SbFlush* f);

// Fills the defaults of `params` for geometry `g` and checks their ranges (every method's rules:
// resolve_store_params in the image layer, which knows the engines). Handed to the store layer
// where it checks parameters read from flash (read_superblock).
using ParamsResolver = Status (*)(StoreParams* params, const Geometry& g);

// Blocks at the start of the chip that hold the two superblock copies.
inline constexpr uint32_t kSuperblockBlocks = 2;

}  // namespace pdl
