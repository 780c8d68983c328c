// exp_mount.cc — pdl-bench --exp mount: the cost of mounting (the recovery scan of [PDL]
// Fig. 7) a chip holding data written by PDL(256B), checked page by page after the mount.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <random>

#include "bench/experiments.h"
#include "bench/wall_clock.h"
#include "flash/image/open_store.h"
#include "flash/common/crc32c.h"
#include "flash/common/json.h"
#include "flash/device/emulated_nand.h"

namespace pdl::bench {
namespace {

std::string mib(uint64_t bytes) {
  char buf[32];
  const double m = double(bytes) / (1024.0 * 1024.0);
  if (m >= 1024)
    std::snprintf(buf, sizeof buf, "%.2f GiB", m / 1024);
  else
    std::snprintf(buf, sizeof buf, "%.0f MiB", m);
  return buf;
}

}  // namespace

Status run_mount(const Options& o, std::vector<std::string>* json) {
  const uint32_t blocks = o.blocks ? o.blocks : o.quick ? 2048 : 16384;
  const Geometry g = chip(blocks);
  PDL_TRY(g.validate());
  const uint64_t data_pages = uint64_t(g.blocks - kSuperblockBlocks) * g.pages_per_block;
  const uint32_t lpns =
      uint32_t(std::max<uint64_t>(1, uint64_t(double(data_pages) * o.data_pct / 100.0)));
  std::printf("\n== mount: recovery scan (PDL paper Fig. 7) of a chip holding data ==\n");
  std::printf(
      "chip %s; data %u logical pages = %s written by PDL(256B), then %u updates "
      "(%%Changed=%g), sync, then mount_store on the same chip.\n",
      g.describe().c_str(), lpns, mib(uint64_t(lpns) * g.page_data).c_str(), lpns / 2, o.changed);
  std::fflush(stdout);

  for (ObsoleteMode mode : o.mount_modes) {
    const auto t_all = Clock::now();
    std::fprintf(stderr, "mount (%s): fill ...\n", obsolete_name(mode));
    std::unique_ptr<EmulatedNand> nand;
    PDL_TRY(EmulatedNand::create_ram(g, &nand));
    StoreParams p;
    p.method = Method::kPdl;
    p.max_differential = 256;
    p.obsolete = mode;
    p.logical_pages = lpns;
    std::unique_ptr<PageStore> store;
    PDL_TRY(format_store(*nand, p, &store));
    const size_t ppmt_bytes = store->mapping_bytes_per_lpn();

    // Fill, remembering a checksum of every page's last written value.
    std::mt19937_64 rng(o.seed);
    std::vector<uint32_t> sums(lpns);
    std::vector<uint8_t> page(g.page_data);
    auto t0 = Clock::now();
    for (Lpn l = 0; l < lpns; l++) {
      random_fill(page, rng);
      sums[l] = crc32c(page.data(), page.size());
      PDL_TRY(store->write(l, page));
    }
    PageChanger changer(g.page_data, o.changed, o.change_run);
    std::uniform_int_distribution<uint32_t> pick(0, lpns - 1);
    for (uint32_t i = 0; i < lpns / 2; i++) {
      const Lpn l = pick(rng);
      PDL_TRY(store->read(l, page));
      changer.change(page, rng);
      sums[l] = crc32c(page.data(), page.size());
      PDL_TRY(store->write(l, page));
    }
    PDL_TRY(store->sync());
    const double fill_s = seconds_since(t0);
    const StoreStats fs = store->stats();
    store.reset();  // "power off": only the chip remains

    std::fprintf(stderr, "mount (%s): scan ...\n", obsolete_name(mode));
    MountReport rep;
    t0 = Clock::now();
    PDL_TRY(mount_store(*nand, &store, &rep));
    const double mount_wall = seconds_since(t0);

    // Every page must read back as last written.
    t0 = Clock::now();
    uint64_t bad = 0;
    for (Lpn l = 0; l < lpns; l++) {
      PDL_TRY(store->read(l, page));
      if (crc32c(page.data(), page.size()) != sums[l]) bad++;
    }
    const double verify_s = seconds_since(t0);
    if (bad)
      return Status::error(Errc::kCorrupt, std::to_string(bad) + " of " + std::to_string(lpns) +
                                               " pages read back wrong after mount");

    const double sim_s = double(rep.sim_us) / 1e6;
    const double chip_gib = double(g.data_bytes()) / double(1ull << 30);
    std::printf("mount %-6s  pages scanned %" PRIu64
                "  simulated %.2f s (%.1f s per GiB of chip)"
                "  wall %.3f s (report %.3f s)  live lpns %" PRIu64 "  valid diff pages %" PRIu64
                "  torn %" PRIu64 "  free blocks %" PRIu64 "\n",
                obsolete_name(mode), rep.pages_scanned, sim_s, sim_s / chip_gib, mount_wall,
                rep.wall_s, rep.live_lpns, rep.valid_diff_pages, rep.torn_pages, rep.free_blocks);
    std::printf("      fill %.2f s wall (%" PRIu64 " diff pages, %" PRIu64
                " base pages written); "
                "all %u pages verified after mount in %.2f s; total %.1f s\n",
                fill_s, fs.diff_pages_written, fs.base_pages_written, lpns, verify_s,
                seconds_since(t_all));
    std::printf(
        "      ppmt: %zu bytes of RAM per logical page (PageStore::mapping_bytes_per_lpn)\n",
        ppmt_bytes);
    std::fflush(stdout);
    json->push_back(JsonObj()
                        .s("exp", "mount")
                        .s("method", "PDL(256B)")
                        .s("obsolete", obsolete_name(mode))
                        .u("blocks", g.blocks)
                        .u("chip_bytes", g.data_bytes())
                        .u("logical_pages", lpns)
                        .u("data_bytes", uint64_t(lpns) * g.page_data)
                        .u("updates", lpns / 2)
                        .u("pages_scanned", rep.pages_scanned)
                        .n("sim_s", sim_s)
                        .n("sim_s_per_gib", sim_s / chip_gib)
                        .n("wall_s", mount_wall)
                        .n("report_wall_s", rep.wall_s)
                        .u("live_lpns", rep.live_lpns)
                        .u("valid_diff_pages", rep.valid_diff_pages)
                        .u("torn_pages", rep.torn_pages)
                        .u("free_blocks", rep.free_blocks)
                        .u("ppmt_bytes_per_lpn", ppmt_bytes)
                        .n("fill_wall_s", fill_s)
                        .u("verified_pages", lpns)
                        .str());
  }
  return Status::ok();
}

}  // namespace pdl::bench
