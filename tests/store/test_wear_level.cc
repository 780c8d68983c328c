// test_wear_level.cc — static wear levelling of the stores (PDL, OPU: block_manager.h; IPU,
// IPL: ipl_merge.cc).
//
// A static set of pages plus one hot page rewritten many times: without wear levelling the
// blocks holding the static pages are never erased while the rest wear out; with it the
// erase-count spread stays near the threshold, the moves are counted apart from GC's, and a
// power cut at any operation of a wear-levelling move loses nothing synced.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <optional>

#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "flash/image/image_params.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using Page = std::vector<uint8_t>;

// max - min erase count over the store's good data blocks.
uint32_t spread(Nand& nand) {
  uint32_t lo = ~0u, hi = 0;
  for (uint32_t b = kSuperblockBlocks; b < nand.geometry().blocks; b++) {
    if (nand.is_bad(b)) continue;
    lo = std::min(lo, nand.erase_count(b));
    hi = std::max(hi, nand.erase_count(b));
  }
  return hi - lo;
}

// Half the logical pages written once (static), then `hot_writes` rewrites of one more page,
// each synced. `after` runs after every hot write. Tracks what a crash may leave in `allowed`.
struct Run {
  std::vector<std::optional<Page>> cur;
  std::vector<std::vector<std::optional<Page>>> allowed;
};

Status static_plus_hot(PageStore& store, int hot_writes, Run& t,
                       const std::function<void()>& after = [] {}) {
  std::mt19937_64 rng(pdl::test::test_seed() ^ 0x3EA7);
  const uint32_t n = store.logical_pages(), psz = store.page_size();
  t.cur.assign(n, std::nullopt);
  t.allowed.assign(n, {std::nullopt});
  auto wrote = [&](Lpn l, const Page& p) {
    t.cur[l] = p;
    t.allowed[l].push_back(p);
  };
  auto synced = [&] {
    for (Lpn l = 0; l < n; l++) t.allowed[l] = {t.cur[l]};
  };
  const Lpn statics = n / 2;
  for (Lpn l = 0; l < statics; l++) {
    Page p = pdl::test::random_page(rng, psz);
    wrote(l, p);
    PDL_TRY(store.write(l, p));
  }
  PDL_TRY(store.sync());
  synced();
  Page hot = pdl::test::random_page(rng, psz);
  for (int i = 0; i < hot_writes; i++) {
    for (int k = 0; k < 8; k++) hot[rng() % psz] = uint8_t(rng());
    wrote(statics, hot);
    PDL_TRY(store.write(statics, hot));
    PDL_TRY(store.sync());
    synced();
    after();
  }
  return Status::ok();
}

}  // namespace

TEST_CASE("static wear levelling keeps the erase-count spread of static data near its threshold",
          "[store][wear]") {
  const Method method =
      GENERATE(Method::kPdl, Method::kOpu, Method::kIpu, Method::kIpl, Method::kFtl);
  const CommitMode mode = GENERATE(CommitMode::kPerPage, CommitMode::kGroup);
  // IPU and the FTL devices have no groups: their kGroup run would repeat the per-page one.
  if (!has_atomic_commit(method) && mode == CommitMode::kGroup) return;
  const uint32_t threshold = 8;
  const bool on = GENERATE(true, false);
  INFO(method_name(method) << (mode == CommitMode::kGroup ? " atomic" : " per page")
                           << " wear_level=" << (on ? threshold : 0));
  const Geometry g = pdl::test::geometry(512, 32, 8, 32);
  auto nand = pdl::test::make_ram_nand(g);
  StoreParams p;
  p.method = method;
  if (method == Method::kFtl) p.ftl = FtlKind::kPage;  // the page-mapping FTL device
  if (method == Method::kIpl) p.log_region = 2 * g.page_data;
  p.wear_level = on ? threshold : 0;
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, p, &store, mode).is_ok());
  Run t;
  REQUIRE(static_plus_hot(*store, method == Method::kIpu ? 1500 : 4000, t).is_ok());
  const StoreStats& ss = store->stats();
  uint32_t hi = 0;
  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++) hi = std::max(hi, nand->erase_count(b));
  INFO("spread " << spread(*nand) << ", max " << hi << ", wl runs " << ss.wl_runs << ", wl pages "
                 << ss.wl_page_moves << ", wl erases " << ss.wl_erases << ", gc runs "
                 << ss.gc_runs);
  REQUIRE(hi > 2 * threshold);  // the workload wears the hot blocks well past the threshold
  if (on) {
    CHECK(spread(*nand) <= threshold + 2);
    CHECK(ss.wl_runs > 0);
    CHECK(ss.wl_page_moves > 0);
    CHECK(ss.wl_erases >= ss.wl_runs);
  } else {
    CHECK(spread(*nand) > 4 * threshold);  // the static blocks were erased once, at format
    CHECK(ss.wl_runs == 0);
    CHECK(ss.wl_page_moves == 0);
    CHECK(ss.wl_erases == 0);
  }
  // Everything reads back, and a remount (which knows the erase counts) agrees.
  Page got(store->page_size());
  for (Lpn l = 0; l < store->logical_pages(); l++) {
    const Status st = store->read(l, got);
    REQUIRE(st.is_ok() == t.cur[l].has_value());
    if (t.cur[l]) REQUIRE(got == *t.cur[l]);
  }
  REQUIRE(store->check().is_ok());
  store.reset();
  REQUIRE(mount_store(*nand, &store, nullptr, mode).is_ok());
  REQUIRE(store->check().is_ok());
}

TEST_CASE("a power cut at any operation of a wear-levelling move loses nothing synced",
          "[store][wear][powerloss]") {
  const Method method =
      GENERATE(Method::kPdl, Method::kOpu, Method::kIpu, Method::kIpl, Method::kFtl);
  const CommitMode mode = GENERATE(CommitMode::kPerPage, CommitMode::kGroup);
  // IPU and the FTL devices have no groups: their kGroup run would repeat the per-page one.
  if (!has_atomic_commit(method) && mode == CommitMode::kGroup) return;
  INFO(method_name(method) << (mode == CommitMode::kGroup ? " atomic" : " per page"));
  const Geometry g = pdl::test::geometry(512, 32, 8, 24);
  StoreParams p;
  p.method = method;
  if (method == Method::kFtl) p.ftl = FtlKind::kPage;  // the page-mapping FTL device
  if (method == Method::kIpl) p.log_region = 2 * g.page_data;
  p.obsolete = method == Method::kPdl ? ObsoleteMode::kSpare : ObsoleteMode::kMemory;
  p.wear_level = 3;
  const int hot_writes = 700;

  // The operations of every wear-levelling move of the uncut run (up to 600 of them).
  std::vector<uint64_t> window;
  {
    auto nand = pdl::test::make_ram_nand(g);
    std::unique_ptr<PageStore> store;
    REQUIRE(format_store(*nand, p, &store, mode).is_ok());
    Run t;
    const uint64_t base = nand->mutating_ops();
    uint64_t runs = 0, before = base;
    REQUIRE(static_plus_hot(*store, hot_writes, t, [&] {
              if (store->stats().wl_runs != runs && window.size() < 600)
                for (uint64_t k = before; k < nand->mutating_ops(); k++) window.push_back(k - base);
              runs = store->stats().wl_runs;
              before = nand->mutating_ops();
            }).is_ok());
    INFO("wl runs " << store->stats().wl_runs);
    REQUIRE(store->stats().wl_runs >= 4);
  }
  REQUIRE(!window.empty());
  // (Every other operation; the sanitizer run a tenth of those: PDL_EXHAUSTIVE_STRIDE.)
  const size_t stride = size_t(pdl::test::exhaustive_stride());
  for (size_t i = 0; i < window.size(); i += (1 + i % 2) * stride) {
    const uint64_t k = window[i];
    const Tear tear = Tear(i % 3);
    INFO("cut after " << k << " operations, tear " << int(tear));
    auto nand = pdl::test::make_ram_nand(g);
    std::unique_ptr<PageStore> store;
    REQUIRE(format_store(*nand, p, &store, mode).is_ok());
    Run t;
    nand->cut_power_after(k, tear, k);
    REQUIRE(static_plus_hot(*store, hot_writes, t).is(Errc::kPowerCut));
    store.reset();
    nand->restore_power();
    REQUIRE(mount_store(*nand, &store, nullptr, mode).is_ok());
    REQUIRE(store->check().is_ok());
    Page got(store->page_size());
    for (Lpn l = 0; l < store->logical_pages(); l++) {
      INFO("lpn " << l);
      const Status st = store->read(l, got);
      REQUIRE((st.is_ok() || st.is(Errc::kNotFound)));
      std::optional<Page> v;
      if (st.is_ok()) v = got;
      const auto& ok = t.allowed[l];
      REQUIRE(std::find(ok.begin(), ok.end(), v) != ok.end());
    }
  }
}

TEST_CASE("wear_level is a URI parameter: a threshold in erases, or off", "[store][wear]") {
  ImageParams ip;
  REQUIRE(ip.set("wear_level", "off").is_ok());
  CHECK(ip.store_params().wear_level == 0);
  REQUIRE(ip.set("wear_level", "64").is_ok());
  CHECK(ip.store_params().wear_level == 64);
  CHECK(ip.set("wear_level", "0").is(Errc::kInvalidArgument));
  const Status bad = ip.set("wear_level", "lots");
  CHECK(bad.is(Errc::kInvalidArgument));
  CHECK(std::string(bad.message()).find("wear_level=lots: must be a number of erases") !=
        std::string::npos);
  CHECK(ImageParams().store_params().wear_level == StoreParams::kWearLevelDefault);
}
