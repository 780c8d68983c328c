// checkpoint_info.h — what an open image says about its checkpoint (docs/design.md §17) and the
// RAM its tables take: the facts `pdl info` prints and PRAGMA pdl_stats' "checkpoint" and
// "ram" members hold, gathered in one place so both say the same.
//
// Reads one superblock copy (its format version; not counted in the flash counters, as pdl
// info's own superblock read); the checkpoint log was read by the mount (CheckpointedStore
// keeps it), the rest are the mount's report and the tables' sizes. Writes nothing. RAM is
// PageStore::table_bytes() — the bytes of RAM the store's tables take now (mapping, reverse
// map, per-block tables, buffers; 0 for an engine that does not count them) — plus the
// Volume's, per GiB of the chip's data bytes.
#pragma once

#include <cstdint>
#include <string>

#include "flash/common/json.h"
#include "flash/image/image.h"

namespace pdl {

struct CheckpointInfo {
  // The area: 0 blocks — the store has none (`superblock_format` says which format it is:
  // 1..5, formatted without one — checkpoint=off, an older pdl, a chip too small).
  uint32_t area_blocks = 0;
  uint64_t area_bytes = 0;         // area_blocks' data bytes
  uint32_t superblock_format = 0;  // as stored on flash (6 to 8 with an area; 8 new)
  // The checkpoint log's newest entry as the mount read it (only with an area).
  bool has_entry = false;
  bool entry_is_checkpoint = false;  // else "stale": the chip changed since checkpoint `gen`
  uint64_t entry_gen = 0;
  // Format 8: the area half the newest entry names and its root's first page (area pages from
  // the area's first page; docs/format.md §14).
  uint32_t entry_half = 0;
  uint32_t entry_root_page = 0;
  // Table pages the store loaded from the area since the mount (demand-loaded tables).
  uint64_t table_page_loads = 0;
  bool log_doubt = false;  // a page that fails to decode may hide a newer entry
  // This open's mount: from the checkpoint (gen, pages read) or by scan (why).
  bool from_checkpoint = false;
  uint64_t checkpoint_gen = 0;
  uint64_t checkpoint_pages = 0;
  // After a power cut (format 7): summary pages read, blocks re-read (replayed > 0: the
  // tables are the checkpoint's plus those blocks).
  uint64_t summary_pages = 0;
  uint64_t replayed_blocks = 0;
  std::string scan_reason;
  uint64_t mount_sim_us = 0;
  // The whole open (Image::open): the store's mount above plus the Volume's open — from its
  // tables (the checkpoint's client section) or by reading its directory and owner map, and
  // why offered tables were refused (empty: none offered, or used).
  uint64_t open_pages = 0;     // data-area and spare-only reads
  uint64_t open_programs = 0;  // a writable open's clean-up after a crash
  uint64_t open_sim_us = 0;
  double open_wall_s = 0;      // this machine's
  bool volume_from_tables = false;
  std::string volume_tables_refused;
  // RAM of the tables: the store's table_bytes() and the Volume's, and their sum per GiB of
  // the chip's data bytes.
  uint64_t store_table_bytes = 0;
  uint64_t volume_table_bytes = 0;
  // The Volume's owner-map cache (volume/owner_cache.h): capacity and pages held now, in pages
  // of the store's page size (part of volume_table_bytes).
  uint32_t owner_cache_pages = 0, owner_pages_cached = 0;
  // The store's demand-loaded tables (StoreStats::table_*; PDL, OPU, page FTL): clean pages
  // each table keeps at most, pages resident now, loads and evictions since reset_stats,
  // changed entries kept folded now (their pages dropped until the next checkpoint).
  uint64_t table_cache_pages = 0, table_pages_resident = 0, table_loads = 0,
           table_evictions = 0, table_entries_folded = 0;
  uint64_t chip_bytes = 0;
  uint64_t table_bytes() const { return store_table_bytes + volume_table_bytes; }
  double bytes_per_gib() const;
  // "none (superblock format N): mounts by scan", or "N blocks (B bytes)".
  std::string area_text() const;
  // "checkpoint gen G", "stale gen G" (+ ", in doubt"), or "empty".
  std::string log_text() const;
};

// Takes the Volume's lock (Volume::lock) for the store's part. REQUIRES: the caller does not
// hold it.
Status checkpoint_info(Image& image, CheckpointInfo* out);

// The "checkpoint" member of PRAGMA pdl_stats and `pdl info --json`: area_blocks, area_bytes,
// superblock_format, log {entry: "checkpoint"|"stale"|"none", gen, doubt}, mount ("checkpoint"
// or "scan"), checkpoint_gen, checkpoint_pages, summary_pages, replayed_blocks, scan_reason,
// open {pages, programs, sim_us, wall_s, volume: "tables"|"pages", volume_tables_refused}.
JsonObj checkpoint_json(const CheckpointInfo& c);
// The "ram" member: table_bytes, store_table_bytes, volume_table_bytes, owner_cache_pages,
// owner_pages_cached, table_cache_pages, table_pages_resident, table_loads, table_evictions,
// table_entries_folded, chip_bytes, ram_bytes_per_gib, ram_mib_per_gib.
JsonObj ram_json(const CheckpointInfo& c);

}  // namespace pdl
