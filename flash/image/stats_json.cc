// stats_json.cc — renders an Image's counters as JSON (see stats_json.h).
#include "flash/image/stats_json.h"

#include <algorithm>

#include "flash/ftl/sb_stable_buffer.h"
#include "flash/image/checkpoint_info.h"
#include "flash/image/methods.h"

namespace pdl {

namespace {
JsonObj flash_json(const FlashCost& c) {
  return JsonObj()
      .n("page_reads", c.page_reads)
      .n("spare_reads", c.spare_reads)
      .n("programs", c.programs)
      .n("erases", c.erases)
      .n("bytes_read", c.bytes_read)
      .n("bytes_programmed", c.bytes_programmed)
      .n("sim_us", c.sim_us);
}
}  // namespace

JsonObj store_stats_json(const StoreStats& ss) {
  JsonObj o;
  o.u("reads", ss.reads)
      .u("writes", ss.writes)
      .u("trims", ss.trims)
      .u("syncs", ss.syncs)
      .u("base_pages_written", ss.base_pages_written)
      .u("diff_pages_written", ss.diff_pages_written)
      .u("diff_records", ss.diff_records)
      .u("diff_bytes", ss.diff_bytes)
      .n("avg_diff_bytes", ss.diff_records ? double(ss.diff_bytes) / double(ss.diff_records) : 0)
      .u("case1", ss.case1)
      .u("case2", ss.case2)
      .u("case3", ss.case3)
      .u("obsolete_marks", ss.obsolete_marks)
      .u("tombstones", ss.tombstones)
      .u("gc_runs", ss.gc_runs)
      .u("gc_base_moves", ss.gc_base_moves)
      .u("gc_diff_moves", ss.gc_diff_moves)
      .u("gc_diff_pages", ss.gc_diff_pages)
      .u("gc_merges", ss.gc_merges)
      .u("log_records", ss.log_records)
      .u("log_bytes", ss.log_bytes)
      .u("log_sectors", ss.log_sectors)
      .u("merges", ss.merges)
      .u("merge_pages", ss.merge_pages)
      .u("switch_merges", ss.switch_merges)
      .u("partial_merges", ss.partial_merges)
      .u("full_merges", ss.full_merges)
      .u("hinted_writes", ss.hinted_writes)
      .u("program_retries", ss.program_retries)
      .u("blocks_retired", ss.blocks_retired)
      .u("bad_blocks", ss.bad_blocks)
      .u("blocks_scrubbed", ss.blocks_scrubbed)
      .u("commits", ss.commits)
      .u("commit_markers", ss.commit_markers)
      .u("aborts", ss.aborts)
      .u("void_pages", ss.void_pages)
      .u("purged_blocks", ss.purged_blocks)
      .u("table_loads", ss.table_loads)
      .u("table_evictions", ss.table_evictions)
      .u("table_pages_resident", ss.table_pages_resident)
      .u("table_cache_pages", ss.table_cache_pages)
      .u("table_folds", ss.table_folds)
      .u("table_entries_folded", ss.table_entries_folded)
      .u("wl_runs", ss.wl_runs)
      .u("wl_page_moves", ss.wl_page_moves)
      .u("wl_erases", ss.wl_erases);
  return o;
}

WearFigures wear_figures(PageStore& store) {
  WearFigures w;
  uint64_t sum = 0;
  for (uint32_t b = 0; b < store.nand().geometry().blocks; b++) {
    const BlockInfo bi = store.block_info(b);
    if (bi.state == BlockInfo::kReserved || bi.state == BlockInfo::kBad) continue;
    if (w.blocks == 0 || bi.erase_count < w.min) w.min = bi.erase_count;
    w.max = std::max(w.max, bi.erase_count);
    sum += bi.erase_count;
    w.blocks++;
  }
  w.mean = w.blocks ? double(sum) / double(w.blocks) : 0;
  return w;
}

JsonObj wear_json(PageStore& store) {
  const StoreParams& sp = store.params();
  const WearFigures w = wear_figures(store);
  JsonObj o;
  if (sp.wear_level == 0) o.s("wear_level", "off");
  else o.u("wear_level", sp.wear_level);
  o.u("erase_count_min", w.min)
      .u("erase_count_max", w.max)
      .n("erase_count_mean", w.mean)
      .n("max_over_mean", w.mean > 0 ? double(w.max) / w.mean : 0);
  return o;
}

// StableBuffer's own work ([StableBuffer]: staging, flushes by pattern, directory commits) and
// its cost model; null for every other store.
std::string stable_buffer_json(const PageStore& store) {
  const auto* sb = dynamic_cast<const StableBufferStore*>(&store);
  if (!sb) return "null";
  const SbStats& st = sb->sb_stats();
  const SbCostModel& cm = sb->cost_model();
  JsonObj pages, instances, t_us, theta;
  for (int x = 0; x < kSbPatterns; x++) {
    const char* name = sb_pattern_name(SbPattern(x));
    pages.u(name, st.flushed_pages[x]);
    instances.u(name, st.instances[x]);
    t_us.n(name, cm.t[x]);
    theta.u(name, cm.theta[x]);
  }
  const StoreParams& sp = store.params();
  return JsonObj()
      .s("recognition", sb_recognition_name(sp.sb_recognition))
      .s("flush", sb_flush_name(sp.sb_flush))
      .u("staged_writes", st.staged_writes)
      .u("restaged_writes", st.restaged_writes)
      .u("slot_reads", st.slot_reads)
      .u("direct_reads", st.direct_reads)
      .u("flushes", st.flushes)
      .u("passive_flushes", st.passive_flushes)
      .u("proactive_flushes", st.proactive_flushes)
      .o("flushed_pages", pages)
      .o("instances", instances)
      .u("unstaged_trims", st.unstaged_trims)
      .u("directory_commits", st.directory_commits)
      .u("directory_pages", st.directory_pages)
      .u("recovered_slots", st.recovered_slots)
      .o("cost_model", JsonObj().o("t_us", t_us).o("theta_pages", theta))
      .str();
}

std::string image_stats_json(Image& image) {
  Volume& vol = *image.volume;
  const std::vector<FileInfo> files = vol.list();
  const VolumeStats vs = vol.stats();
  CheckpointInfo ck;  // null members if its superblock read fails (a chip that went away)
  const bool ck_ok = checkpoint_info(image, &ck).is_ok();  // (takes the lock itself)
  auto guard = vol.lock();
  PageStore& store = vol.store();
  const StoreParams& sp = store.params();
  const Geometry& g = image.nand->geometry();  // the chip (the store may run on part of it)
  const NandCounters& nc = store.nand().counters();
  const StoreStats& ss = store.stats();
  const CostBreakdown& cb = store.costs();

  std::vector<std::string> file_items;
  for (const FileInfo& f : files)
    file_items.push_back(JsonObj()
                             .s("name", f.name)
                             .u("size", f.size)
                             .s("kind", kind_name(f.kind))
                             .u("chunks", f.chunks_mapped)
                             .str());
  JsonObj by_kind;
  for (unsigned k = 0; k < kFileKinds; k++) {
    const KindStats& ks = vs.kind[k];
    const ClassCost& cc = cb.cls[k];
    const double diff_programmed = cc.diff_pages * g.page_data;
    by_kind.o(kind_name(FileKind(k)),
              JsonObj()
                  .u("writes", ks.writes)
                  .u("bytes_written", ks.bytes_written)
                  .raw("bytes_changed", vs.changes_tracked ? std::to_string(ks.bytes_changed)
                                                           : "null")
                  .u("chunks_written", ks.chunks_written)
                  .u("reads", ks.reads)
                  .u("bytes_read", ks.bytes_read)
                  .u("chunks_read", ks.chunks_read)
                  .u("base_pages", cc.base_pages)
                  .u("base_bytes", cc.base_pages * g.page_data)
                  .u("diff_records", cc.diff_records)
                  .u("diff_record_bytes", cc.diff_record_bytes)
                  .n("diff_pages", cc.diff_pages)
                  .n("diff_bytes_programmed", diff_programmed)
                  .n("write_amplification",
                     ks.bytes_written ? cc.flash.bytes_programmed / double(ks.bytes_written)
                                      : 0.0)
                  .o("flash", flash_json(cc.flash)));
  }
  return JsonObj()
      .s("method", method_name(sp.method))
      .u("max_diff", sp.max_differential)
      .s("obsolete", obsolete_label(sp.method, sp.obsolete))
      .u("log_region", sp.log_region)
      .u("log_sector", sp.log_sector)  // IPL: bytes of a log sector; 0 otherwise
      // FTL devices (method ftl, stablebuffer): the translation layer ("page", "bast",
      // "fast"), BAST/FAST's log blocks and StableBuffer's staging slots; "none", 0, 0 for the
      // raw-NAND methods.
      .s("ftl", ftl_name(sp.ftl))
      .u("log_blocks", sp.log_blocks)
      .u("sb_slots", sp.sb_slots)
      // How the store commits: "atomic" (every sync one atomic commit; the SQLite VFS keeps
      // the rollback journal in memory) or "journal" (page by page; the journal on flash —
      // always for IPU and the FTL devices, which have no atomic commit).
      .s("commit", store.atomic() ? "atomic" : "journal")
      .u("logical_pages", sp.logical_pages)
      .u("nvm_bytes", sp.nvm_bytes)  // the NVM the store uses (0: a flash-only store)
      .o("geometry", JsonObj()
                         .u("page_data", g.page_data)
                         .u("page_spare", g.page_spare)
                         .u("pages_per_block", g.pages_per_block)
                         .u("blocks", g.blocks)
                         .u("nop", g.partial_programs)
                         .u("size_bytes", g.data_bytes())
                         .u("read_us", g.read_us)
                         .u("program_us", g.program_us)
                         .u("erase_us", g.erase_us)
                         // The NVM beside the chip (0: none) and its PCRAM timing, ns.
                         .u("nvm_bytes", g.nvm_bytes)
                         .u("nvm_latency_ns", g.nvm_latency_ns)
                         .u("nvm_read_ns", g.nvm_read_ns)
                         .u("nvm_write_ns", g.nvm_write_ns))
      .s("device", store.nand().device())
      .s("nvm_place", store.nand().nvm_place())  // "" without NVM
      .a("files", file_items)
      .o("flash", JsonObj()
                      .u("page_reads", nc.page_reads)
                      .u("spare_reads", nc.spare_reads)
                      .u("programs", nc.programs)
                      .u("erases", nc.erases)
                      .u("bytes_read", nc.bytes_read)
                      .u("bytes_programmed", nc.bytes_programmed)
                      .u("nvm_reads", nc.nvm_reads)
                      .u("nvm_writes", nc.nvm_writes)
                      .u("nvm_bytes_read", nc.nvm_bytes_read)
                      .u("nvm_bytes_written", nc.nvm_bytes_written)
                      .u("nvm_ns", nc.nvm_ns)
                      .u("sim_us", nc.sim_us))  // NVM time included
      .o("store", store_stats_json(ss))
      .raw("stable_buffer", stable_buffer_json(store))
      .o("wear", wear_json(store))
      .u("free_blocks", store.free_blocks())
      .o("by_kind", by_kind)
      .o("gc", flash_json(cb.gc))
      .o("other", flash_json(cb.other))
      .o("volume", JsonObj()
                       .u("syncs", vs.syncs)
                       .u("cache_hits", vs.cache_hits)
                       .u("cache_evictions", vs.cache_evictions)
                       .u("trims", vs.trims)
                       .u("free_lpns", vs.free_lpns)
                       .u("owner_loads", vs.owner_loads)
                       .u("owner_writebacks", vs.owner_writebacks)
                       .u("owner_pages_cached", vs.owner_cached)
                       .u("owner_cache_pages", vs.owner_cache_pages)
                       .b("track_changes", vs.changes_tracked))
      .o("mount", mount_json(image.mount))
      .raw("checkpoint", ck_ok ? checkpoint_json(ck).str() : "null")
      .raw("ram", ck_ok ? ram_json(ck).str() : "null")
      .str();
}

JsonObj mount_json(const MountReport& m) {
  return JsonObj()
      .u("pages_scanned", m.pages_scanned)
      .u("torn_pages", m.torn_pages)
      .u("live_lpns", m.live_lpns)
      .u("valid_diff_pages", m.valid_diff_pages)
      .u("free_blocks", m.free_blocks)
      .u("next_seq", m.next_seq)
      .u("sim_us", m.sim_us)
      .n("wall_s", m.wall_s)
      .b("from_checkpoint", m.from_checkpoint)
      .u("checkpoint_gen", m.checkpoint_gen)
      .u("checkpoint_pages", m.checkpoint_pages)
      .u("summary_pages", m.summary_pages)
      .u("replayed_blocks", m.replayed_blocks)
      .s("scan_reason", m.scan_reason);
}

}  // namespace pdl
