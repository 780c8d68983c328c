// cmd_info.cc — `pdl info IMAGE [--json]`: what an image is and holds.
//
// Geometry and timing, method parameters, the superblock's format uuid and time, the volume
// layout, files, space (logical pages mapped, data lpns free, blocks by state), the spread of
// erase counts over blocks, and what mounting the image found and cost. --json prints the same
// object as PRAGMA pdl_stats (image_stats_json) with one more member, "image", holding the
// extras above. Reads the image only (image_open.h); the superblock read is not counted in
// the flash counters, so they show exactly the mount's work.
#include <algorithm>

#include "flash/common/json.h"
#include "flash/image/checkpoint_info.h"
#include "flash/image/open_store.h"
#include "flash/store/superblock.h"
#include "flash/image/stats_json.h"
#include "tools/commands.h"
#include "tools/image_open.h"

namespace pdl::tool {
namespace {

struct Bucket {
  uint32_t lo = 0, hi = 0;  // erase counts lo..hi inclusive
  uint32_t blocks = 0;
};

struct InfoData {
  Geometry geo;
  StoreParams sp;
  Superblock sb;
  VolumeLayout layout;
  std::string main_name;
  std::vector<FileInfo> files;
  uint32_t mapped = 0;       // logical pages mapped in the store
  uint32_t free_lpns = 0;    // data lpns the volume has free
  uint32_t free_blocks = 0;  // the store's free blocks (reserve included)
  uint32_t state_count[6] = {};  // by BlockInfo::State
  uint32_t checkpoint_area = 0;   // blocks of the checkpoint area (not the store's)
  uint32_t ec_min = 0, ec_max = 0;
  double ec_mean = 0;
  std::vector<Bucket> histogram;
  CheckpointInfo ck;
};

std::string uuid_str(const std::array<uint8_t, 16>& u) {
  std::string s;
  for (size_t i = 0; i < u.size(); i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += strf("%02x", u[i]);
  }
  return s;
}

Status gather(Image& img, InfoData* d) {
  Volume& vol = *img.volume;
  d->files = vol.list();
  std::sort(d->files.begin(), d->files.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.name < b.name; });
  d->main_name = vol.main_name();
  d->layout = vol.layout();
  d->free_lpns = vol.stats().free_lpns;
  PDL_TRY(checkpoint_info(img, &d->ck));  // (takes the Volume's lock itself)
  auto guard = vol.lock();
  PageStore& store = vol.store();
  Nand& nand = *img.nand;
  d->geo = nand.geometry();
  d->sp = store.params();
  d->free_blocks = store.free_blocks();
  nand.set_counting(false);  // the superblock read is ours, not the image's work
  const Status st = read_superblock(nand, resolve_store_params, &d->sb);
  nand.set_counting(true);
  PDL_TRY(st);
  d->mapped = uint32_t(store.mapped_pages());  // (no table page read: the store keeps a count)
  std::vector<uint32_t> ec(d->geo.blocks);
  uint64_t sum = 0;
  const uint32_t store_blocks = store.nand().geometry().blocks;  // the area follows them
  for (uint32_t b = 0; b < d->geo.blocks; b++) {
    if (b >= store_blocks) {
      d->checkpoint_area++;
      ec[b] = nand.erase_count(b);
    } else {
      const BlockInfo bi = store.block_info(b);
      d->state_count[bi.state]++;
      ec[b] = bi.erase_count;
    }
    sum += ec[b];
  }
  d->ec_min = *std::min_element(ec.begin(), ec.end());
  d->ec_max = *std::max_element(ec.begin(), ec.end());
  d->ec_mean = double(sum) / double(ec.size());
  // At most 8 buckets of equal width over min..max.
  const uint32_t span = d->ec_max - d->ec_min + 1;
  const uint32_t width = (span + 7) / 8;
  for (uint32_t lo = d->ec_min; lo <= d->ec_max; lo += width) {
    Bucket bk;
    bk.lo = lo;
    bk.hi = std::min(d->ec_max, lo + width - 1);
    d->histogram.push_back(bk);
    if (bk.hi == d->ec_max) break;
  }
  for (uint32_t c : ec) d->histogram[(c - d->ec_min) / width].blocks++;
  return Status::ok();
}

const BlockInfo::State kStates[] = {BlockInfo::kFree, BlockInfo::kOpen, BlockInfo::kFull,
                                    BlockInfo::kReserved, BlockInfo::kVictim, BlockInfo::kBad};

void print_text(const std::string& path, const Image& img, const InfoData& d) {
  const Geometry& g = d.geo;
  const MountReport& m = img.mount;
  std::printf("image        %s\n", path.c_str());
  std::printf("geometry     %s, NOP %u%s\n", g.describe().c_str(), g.partial_programs,
              g.erase_limit ? strf(", erase limit %u", g.erase_limit).c_str() : "");
  const std::string device = img.nand->device();
  std::printf("device       %s\n", device.c_str());
  if (device == "emulated")
    std::printf("timing       read %u us, program %u us, erase %u us (simulated)\n", g.read_us,
                g.program_us, g.erase_us);
  else
    std::printf("timing       real: the time spent in the device's operations\n");
  if (g.nvm_bytes)
    std::printf("nvm          %s in %s; the store uses %s; PCRAM timing latency %u ns, "
                "read %u ns, write %u ns per 32 B (simulated)\n",
                format_size(g.nvm_bytes).c_str(), img.nand->nvm_place().c_str(),
                format_size(d.sp.nvm_bytes).c_str(), g.nvm_latency_ns, g.nvm_read_ns,
                g.nvm_write_ns);
  else
    std::printf("nvm          none\n");
  std::printf("method       %s", method_name(d.sp.method));
  if (writes_differentials(d.sp.method)) std::printf(", max_diff %u B", d.sp.max_differential);
  if (has_log_region(d.sp.method) && d.sp.nvm_bytes)  // [IPL-PCRAM]: every block's log in NVM
    std::printf(", log area %s of NVM per block (%u sectors of %u B), all %u pages per block hold "
                "data",
                format_size(d.sp.log_region).c_str(), d.sp.log_region / d.sp.log_sector,
                d.sp.log_sector, g.pages_per_block);
  else if (has_log_region(d.sp.method))
    std::printf(", log region %s (%u of %u pages per block), log sectors of %u B",
                format_size(d.sp.log_region).c_str(), d.sp.log_pages(g), g.pages_per_block,
                d.sp.log_sector);
  if (is_ftl_device(d.sp.method)) {
    std::printf(", ftl %s", ftl_name(d.sp.ftl));
    if (d.sp.log_blocks) std::printf(", %u log blocks", d.sp.log_blocks);
    if (d.sp.method == Method::kStableBuffer)
      std::printf(", %u staging slots", d.sp.sb_slots);
    std::printf(", %u logical pages, %u reserve block%s, no atomic commit (journal on the "
                "device)\n",
                d.sp.logical_pages, d.sp.gc_reserve_blocks, d.sp.gc_reserve_blocks == 1 ? "" : "s");
  } else if (has_obsolete_marks(d.sp.method)) {
    std::printf(", obsolete=%s, %u logical pages, GC reserve %u blocks\n",
                obsolete_name(d.sp.obsolete), d.sp.logical_pages, d.sp.gc_reserve_blocks);
  } else {
    std::printf(", %u logical pages, %u spare block%s for merges\n", d.sp.logical_pages,
                d.sp.gc_reserve_blocks, d.sp.gc_reserve_blocks == 1 ? "" : "s");
  }
  std::printf("format       uuid %s, %s\n", uuid_str(d.sb.uuid).c_str(),
              time_str(d.sb.format_time).c_str());
  const VolumeLayout& L = d.layout;
  std::printf("volume       lpn 0 header, %u directory page%s (%u file slots), %u owner-map "
              "page%s, data lpns %u..%u\n",
              L.dir_pages, L.dir_pages == 1 ? "" : "s", L.max_files(), L.owner_pages,
              L.owner_pages == 1 ? "" : "s", L.data_first, L.data_first + L.data_lpns - 1);
  std::printf("database     %s\n", d.main_name.empty() ? "(none recorded)" : d.main_name.c_str());
  std::printf("files        %zu\n", d.files.size());
  for (const FileInfo& f : d.files)
    std::printf("  %-32s %12llu B  %-9s %u chunk%s\n", f.name.c_str(),
                (unsigned long long)f.size, kind_name(f.kind), f.chunks_mapped,
                f.chunks_mapped == 1 ? "" : "s");
  std::printf("space        logical pages: %u mapped, %u unmapped (of %u)\n", d.mapped,
              d.sp.logical_pages - d.mapped, d.sp.logical_pages);
  std::printf("             data lpns: %u used, %u free (of %u)\n", L.data_lpns - d.free_lpns,
              d.free_lpns, L.data_lpns);
  std::string states;
  for (BlockInfo::State s : kStates)
    if (d.state_count[s] || (s != BlockInfo::kVictim && s != BlockInfo::kBad))
      states += strf("%s%u %s", states.empty() ? "" : ", ", d.state_count[s],
                     block_state_name(s));
  if (d.checkpoint_area) states += strf(", %u checkpoint area", d.checkpoint_area);
  std::printf("             blocks: %s (of %u; free includes the GC reserve of %u)\n",
              states.c_str(), g.blocks, d.sp.gc_reserve_blocks);
  std::printf("erase counts min %u, mean %.2f, max %u\n", d.ec_min, d.ec_mean, d.ec_max);
  uint32_t most = 1;
  for (const Bucket& b : d.histogram) most = std::max(most, b.blocks);
  for (const Bucket& b : d.histogram) {
    const std::string range = b.lo == b.hi ? strf("%u", b.lo) : strf("%u-%u", b.lo, b.hi);
    const size_t bar = b.blocks ? std::max<size_t>(1, size_t(b.blocks) * 40 / most) : 0;
    std::printf("  %11s  %-40s %u block%s\n", range.c_str(), std::string(bar, '#').c_str(),
                b.blocks, b.blocks == 1 ? "" : "s");
  }
  if (m.from_checkpoint && m.pages_scanned == 0)  // (the scan's counts were not taken)
    std::printf("mount        0 pages scanned: the tables came from the checkpoint\n");
  else if (m.from_checkpoint)  // a replay: it counts only what it reconsidered
    std::printf("mount        %llu pages scanned, %llu torn (the replayed blocks and the pages "
                "of the entries they touch), next seq %llu\n",
                (unsigned long long)m.pages_scanned, (unsigned long long)m.torn_pages,
                (unsigned long long)m.next_seq);
  else
    std::printf("mount        %llu pages scanned, %llu torn; %llu live lpns, %llu valid "
                "differential pages, next seq %llu\n",
                (unsigned long long)m.pages_scanned, (unsigned long long)m.torn_pages,
                (unsigned long long)m.live_lpns, (unsigned long long)m.valid_diff_pages,
                (unsigned long long)m.next_seq);
  std::printf("             simulated %.1f ms (wall %.1f ms)\n", double(m.sim_us) / 1000.0,
              m.wall_s * 1000.0);
  // The checkpoint area (docs/design.md §17), its log's newest entry, where this mount's
  // tables came from, and what the tables take in RAM.
  const CheckpointInfo& c = d.ck;
  std::printf("checkpoint   area %s\n", c.area_text().c_str());
  if (c.area_blocks) std::printf("             log: newest entry %s\n", c.log_text().c_str());
  if (c.from_checkpoint && c.replayed_blocks)
    std::printf("             this open mounted from checkpoint gen %llu after a power cut: "
                "%llu checkpoint and summary pages (%llu summaries), %llu blocks replayed "
                "(%llu pages read), simulated %.1f ms\n",
                (unsigned long long)c.checkpoint_gen, (unsigned long long)c.checkpoint_pages,
                (unsigned long long)c.summary_pages, (unsigned long long)c.replayed_blocks,
                (unsigned long long)m.pages_scanned, double(c.mount_sim_us) / 1000.0);
  else if (c.from_checkpoint)
    std::printf("             this open mounted from checkpoint gen %llu: %llu pages read, "
                "simulated %.1f ms\n",
                (unsigned long long)c.checkpoint_gen, (unsigned long long)c.checkpoint_pages,
                double(c.mount_sim_us) / 1000.0);
  else
    std::printf("             this open mounted by scan: %s\n", c.scan_reason.c_str());
  std::printf("open         %llu pages read, simulated %.1f ms (wall %.1f ms): the store's mount "
              "and the volume's open, %s%s\n",
              (unsigned long long)c.open_pages, double(c.open_sim_us) / 1000.0,
              c.open_wall_s * 1000.0,
              c.volume_from_tables ? "from its tables in the checkpoint"
                                   : "reading its directory and owner map",
              c.volume_tables_refused.empty()
                  ? ""
                  : (" (its tables were refused: " + c.volume_tables_refused + ")").c_str());
  std::printf("ram          tables %llu bytes (store %llu, volume %llu): %.0f bytes = %.2f MiB "
              "per GiB of chip\n",
              (unsigned long long)c.table_bytes(), (unsigned long long)c.store_table_bytes,
              (unsigned long long)c.volume_table_bytes, c.bytes_per_gib(),
              c.bytes_per_gib() / double(1 << 20));
  std::printf("             volume owner-map cache: %u of %u pages held (owner_cache=)\n",
              c.owner_pages_cached, c.owner_cache_pages);
  if (c.table_cache_pages)
    std::printf("             store table cache: %llu pages resident, %llu clean kept per table "
                "(table_cache=); %llu loads, %llu evictions; %llu changed entries folded\n",
                (unsigned long long)c.table_pages_resident,
                (unsigned long long)c.table_cache_pages, (unsigned long long)c.table_loads,
                (unsigned long long)c.table_evictions,
                (unsigned long long)c.table_entries_folded);
}

std::string extras_json(const std::string& path, const Image& img, const InfoData& d) {
  const MountReport& m = img.mount;
  const VolumeLayout& L = d.layout;
  JsonObj blocks;
  for (BlockInfo::State s : kStates) blocks.u(block_state_name(s), d.state_count[s]);
  blocks.u("checkpoint", d.checkpoint_area);
  std::vector<std::string> hist;
  for (const Bucket& b : d.histogram)
    hist.push_back(JsonObj().u("min", b.lo).u("max", b.hi).u("blocks", b.blocks).str());
  return JsonObj()
      .s("path", path)
      .o("format", JsonObj()
                       .s("uuid", uuid_str(d.sb.uuid))
                       .u("time", d.sb.format_time)
                       .s("time_local", time_str(d.sb.format_time)))
      .u("gc_reserve_blocks", d.sp.gc_reserve_blocks)
      .s("database", d.main_name)
      .o("layout", JsonObj()
                       .u("chunk", L.chunk)
                       .u("dir_pages", L.dir_pages)
                       .u("max_files", L.max_files())
                       .u("owner_pages", L.owner_pages)
                       .u("data_first", L.data_first)
                       .u("data_lpns", L.data_lpns))
      .o("space", JsonObj()
                      .u("logical_pages", d.sp.logical_pages)
                      .u("mapped", d.mapped)
                      .u("unmapped", d.sp.logical_pages - d.mapped)
                      .u("data_lpns_used", L.data_lpns - d.free_lpns)
                      .u("data_lpns_free", d.free_lpns)
                      .u("free_blocks", d.free_blocks)
                      .o("blocks", blocks))
      .o("erase_counts", JsonObj()
                             .u("min", d.ec_min)
                             .n("mean", d.ec_mean)
                             .u("max", d.ec_max)
                             .a("histogram", hist))
      .o("mount", mount_json(m))
      .str();
}

int run_info(const Command& cmd, const Args& a) {
  const std::string& path = a.pos[0];
  std::unique_ptr<Image> img;
  if (ImageParams probe; !owner_cache_option(a, &probe).is_ok())
    return usage_error(cmd, std::string(owner_cache_option(a, &probe).message()));
  if (Status st = open_read_only(path, a, &img); !st.is_ok()) return fail_status(cmd, st);
  InfoData d;
  if (Status st = gather(*img, &d); !st.is_ok()) return fail_status(cmd, st);
  if (a.has("json")) {
    std::string j = image_stats_json(*img);  // "{...}": append one member
    if (j.size() < 2 || j.back() != '}')
      return fail(cmd, kExitImage, "internal error: statistics are not a JSON object");
    j.pop_back();
    j += ",\"image\":" + extras_json(path, *img, d) + "}";
    std::printf("%s\n", j.c_str());
  } else {
    print_text(path, *img, d);
  }
  return kExitOk;
}

}  // namespace

const Command kInfoCommand = {
    "info",
    "IMAGE [--json]",
    "geometry, method, files, space, erase counts and mount report of an image",
    "--json prints the object PRAGMA pdl_stats gives (flash counters, store and volume\n"
    "statistics, costs by file kind) with one more member, \"image\": format uuid/time,\n"
    "volume layout, space, blocks by state, erase-count spread and the full mount report.\n"
    "The checkpoint lines: the area at the chip's end (none: the image mounts by scan),\n"
    "its log's newest entry (checkpoint or stale gen G), how this open mounted (from the\n"
    "checkpoint: its gen, pages read, simulated time; else by scan and why) and the RAM\n"
    "the tables take (PageStore::table_bytes, per GiB of chip). Writes nothing: an open\n"
    "by pdl info neither writes a checkpoint nor marks one stale.\n",
    {{"json", 0, nullptr, "one JSON object instead of text"},
     kNvmPathOption,
     kOwnerCacheOption,
     {"volume-pages", 0, nullptr,
      "the volume reads its directory and owner map instead of its tables in the checkpoint\n"
      "(the \"open\" line then shows what they save)"}},
    1,
    1,
    run_info,
};

}  // namespace pdl::tool
