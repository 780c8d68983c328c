// stats_json.h — the statistics of an open image as one JSON object: `PRAGMA pdl_stats`, the
// `pdl info --json` tool and pdl-fuse's /.pdl/stats.json print exactly this.
//
// Fields (docs/design.md §"Statistics" explains each and the attribution rule):
//   method, max_diff, obsolete, logical_pages, geometry{…}, files[{name,size,kind,chunks}],
//   flash{page_reads,spare_reads,programs,erases,bytes_read,bytes_programmed,sim_us},
//   store{reads,writes,…,gc_runs,…}, free_blocks, by_kind{database,journal,wal,directory:
//   {writes,bytes_written,bytes_changed (null unless track_changes=on),chunks_written,reads,
//    bytes_read,chunks_read,
//    base_pages,base_bytes,diff_records,diff_record_bytes,diff_pages,diff_bytes_programmed,
//    write_amplification,flash{…}}}, gc{…}, other{…}, volume{…}, mount{…},
//   wear{wear_level ("off" or the threshold), erase_count_min,
//        erase_count_max, erase_count_mean, max_over_mean},
//   checkpoint{area_blocks,area_bytes,superblock_format,log{entry,gen,doubt},mount
//              ("checkpoint"|"scan"),checkpoint_gen,checkpoint_pages,scan_reason},
//   ram{table_bytes,store_table_bytes,volume_table_bytes,owner_cache_pages,owner_pages_cached,
//       chip_bytes,ram_bytes_per_gib,ram_mib_per_gib} (checkpoint_info.h).
#pragma once

#include <string>

#include "flash/common/json.h"
#include "flash/image/image.h"

namespace pdl {

std::string image_stats_json(Image& image);
// The "store" member: the PageStore's counters (StoreStats), also used by pdl-tpcc's reports.
JsonObj store_stats_json(const StoreStats& s);
// Erase counts over the store's good blocks (the superblock blocks and bad blocks left out).
struct WearFigures {
  uint32_t min = 0, max = 0;
  double mean = 0;
  uint32_t blocks = 0;
};
WearFigures wear_figures(PageStore& store);
// The "wear" member: the wear-levelling threshold and `wear_figures`.
JsonObj wear_json(PageStore& store);
// The "mount" member: what mounting the store found and cost.
JsonObj mount_json(const MountReport& m);

}  // namespace pdl
