// checkpoint_info.cc — the checkpoint and RAM facts of an open image (checkpoint_info.h).
#include "flash/image/checkpoint_info.h"

#include "flash/image/open_store.h"
#include "flash/store/checkpointed_store.h"
#include "flash/store/superblock.h"

namespace pdl {

double CheckpointInfo::bytes_per_gib() const {
  return chip_bytes ? double(table_bytes()) * double(1ull << 30) / double(chip_bytes) : 0.0;
}

std::string CheckpointInfo::area_text() const {
  if (area_blocks == 0)
    return "none (superblock format " + std::to_string(superblock_format) + "): mounts by scan";
  return std::to_string(area_blocks) + " blocks (" + std::to_string(area_bytes) + " bytes)";
}

std::string CheckpointInfo::log_text() const {
  std::string s = !has_entry ? std::string("empty")
                             : std::string(entry_is_checkpoint ? "checkpoint" : "stale") + " gen " +
                                   std::to_string(entry_gen);
  if (log_doubt) s += ", in doubt (a page that does not decode may be newer)";
  return s;
}

Status checkpoint_info(Image& image, CheckpointInfo* out) {
  CheckpointInfo c;
  Nand& nand = *image.nand;
  const Geometry& g = nand.geometry();
  c.chip_bytes = g.data_bytes();
  {
    auto guard = image.volume->lock();
    PageStore& store = image.volume->store();
    Superblock sb;
    if (const auto* cs = dynamic_cast<const CheckpointedStore*>(&store)) {
      sb = cs->superblock();  // (no read: PRAGMA pdl_stats costs the device nothing)
      const CheckpointLog& log = cs->log();
      c.has_entry = log.has_entry();
      c.entry_is_checkpoint = c.has_entry && log.newest().kind == LogKind::kCheckpoint;
      c.entry_gen = c.has_entry ? log.newest().gen : 0;
      c.entry_half = c.has_entry ? log.newest().half : 0;
      c.entry_root_page = c.has_entry ? log.newest().root_page : 0;
      c.table_page_loads = cs->pager().loads();
      c.log_doubt = log.doubt();
    } else {  // a format without a checkpoint area: its superblock says which
      nand.set_counting(false);  // ours, not the image's work
      const Status st = read_superblock(nand, resolve_store_params, &sb);
      nand.set_counting(true);
      PDL_TRY(st);
    }
    c.superblock_format = superblock_stored_version(sb);
    c.area_blocks = sb.checkpoint_blocks;
    c.area_bytes = uint64_t(c.area_blocks) * g.pages_per_block * g.page_data;
    c.store_table_bytes = store.table_bytes();
    const StoreStats& ss = store.stats();
    c.table_cache_pages = ss.table_cache_pages;
    c.table_pages_resident = ss.table_pages_resident;
    c.table_loads = ss.table_loads;
    c.table_evictions = ss.table_evictions;
    c.table_entries_folded = ss.table_entries_folded;
  }
  const MountReport& m = image.mount;
  c.from_checkpoint = m.from_checkpoint;
  c.checkpoint_gen = m.checkpoint_gen;
  c.checkpoint_pages = m.checkpoint_pages;
  c.summary_pages = m.summary_pages;
  c.replayed_blocks = m.replayed_blocks;
  c.scan_reason = m.scan_reason;
  c.mount_sim_us = m.sim_us;
  c.open_pages = image.open.page_reads + image.open.spare_reads;
  c.open_programs = image.open.programs;
  c.open_sim_us = image.open.sim_us;
  c.open_wall_s = image.open.wall_s;
  // (outside the Volume's lock: the Volume's table_bytes takes it)
  c.volume_table_bytes = image.volume ? image.volume->table_bytes() : 0;
  if (image.volume) {
    const VolumeStats vs = image.volume->stats();
    c.owner_cache_pages = vs.owner_cache_pages;
    c.owner_pages_cached = vs.owner_cached;
    c.volume_from_tables = image.volume->from_tables();
    c.volume_tables_refused = image.volume->tables_refused();
  }
  *out = c;
  return Status::ok();
}

JsonObj checkpoint_json(const CheckpointInfo& c) {
  return JsonObj()
      .u("area_blocks", c.area_blocks)
      .u("area_bytes", c.area_bytes)
      .u("superblock_format", c.superblock_format)
      .o("log", JsonObj()
                    .s("entry", !c.has_entry            ? "none"
                                : c.entry_is_checkpoint ? "checkpoint"
                                                        : "stale")
                    .u("gen", c.entry_gen)
                    .u("half", c.entry_half)
                    .u("root_page", c.entry_root_page)
                    .b("doubt", c.log_doubt))
      .s("mount", c.from_checkpoint ? "checkpoint" : "scan")
      .u("checkpoint_gen", c.checkpoint_gen)
      .u("checkpoint_pages", c.checkpoint_pages)
      .u("summary_pages", c.summary_pages)
      .u("replayed_blocks", c.replayed_blocks)
      .u("table_page_loads", c.table_page_loads)
      .s("scan_reason", c.scan_reason)
      .o("open", JsonObj()
                     .u("pages", c.open_pages)
                     .u("programs", c.open_programs)
                     .u("sim_us", c.open_sim_us)
                     .n("wall_s", c.open_wall_s)
                     .s("volume", c.volume_from_tables ? "tables" : "pages")
                     .s("volume_tables_refused", c.volume_tables_refused));
}

JsonObj ram_json(const CheckpointInfo& c) {
  return JsonObj()
      .u("table_bytes", c.table_bytes())
      .u("store_table_bytes", c.store_table_bytes)
      .u("volume_table_bytes", c.volume_table_bytes)
      .u("owner_cache_pages", c.owner_cache_pages)
      .u("owner_pages_cached", c.owner_pages_cached)
      .u("table_cache_pages", c.table_cache_pages)
      .u("table_pages_resident", c.table_pages_resident)
      .u("table_loads", c.table_loads)
      .u("table_evictions", c.table_evictions)
      .u("table_entries_folded", c.table_entries_folded)
      .u("chip_bytes", c.chip_bytes)
      .n("ram_bytes_per_gib", c.bytes_per_gib())
      .n("ram_mib_per_gib", c.bytes_per_gib() / double(1 << 20));
}

}  // namespace pdl
