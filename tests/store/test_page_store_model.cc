// test_page_store_model.cc — every PageStore against a reference map, with remounts.
//
// Thousands of random writes (sparse changes that make differentials, whole new pages,
// unchanged rewrites), reads, trims and syncs on a small chip so that GC runs many times.
// After every sync the media is remounted (crash recovery, Fig. 7) and the recovered store
// must reproduce the synced state exactly; work then continues on the recovered store.
#include <catch2/catch.hpp>

#include <optional>

#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "tests/support/store_matrix.h"
#include "tests/support/test_util.h"

using namespace pdl;
using pdl::test::StoreConfig;

namespace {

using Page = std::vector<uint8_t>;
using Model = std::vector<std::optional<Page>>;

// Change a few short runs of `page` (a record update), leaving the rest as it was.
void sparse_change(std::mt19937_64& rng, Page& page) {
  const int runs = 1 + int(rng() % 6);
  for (int i = 0; i < runs; i++) {
    const size_t len = 1 + rng() % 12, off = rng() % (page.size() - len);
    for (size_t k = 0; k < len; k++) page[off + k] = uint8_t(rng());
  }
}

void check_all(PageStore& store, const Model& model) {
  Page got(store.page_size());
  for (Lpn l = 0; l < model.size(); l++) {
    Status st = store.read(l, got);
    if (model[l]) {
      INFO("lpn " << l << ": " << st.to_string());
      REQUIRE(st.is_ok());
      REQUIRE(got == *model[l]);
      REQUIRE(store.is_mapped(l));
    } else {
      INFO("lpn " << l);
      REQUIRE(st.is(Errc::kNotFound));
      REQUIRE(std::all_of(got.begin(), got.end(), [](uint8_t b) { return b == 0; }));
      REQUIRE_FALSE(store.is_mapped(l));
    }
  }
}

}  // namespace

// Under PDL_TEST_MTD (./run test-mtd) the chip is 12 blocks of raw NAND: the device's
// geometry (64 pages per block on nandsim) in place of the two small ones.
TEST_CASE("every page store matches a reference map across GC and remounts", "[store][model]") {
  const auto mtd = pdl::test::mtd_test_geometry(12);
  const auto matrix = mtd ? pdl::test::store_matrix_for({*mtd}) : pdl::test::store_matrix();
  const size_t which = GENERATE_COPY(range(size_t(0), matrix.size()));
  if (!pdl::test::in_matrix_sample(which, __LINE__)) return;
  const StoreConfig& cfg = matrix[which];
  INFO("config " << cfg.name);
  auto rng = pdl::test::seeded_rng(0x30de1 + which);
  auto nand = pdl::test::make_test_nand(cfg.geo);
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, cfg.params, &store).is_ok());
  // Use most of the logical space so GC has real work.
  const Lpn lpns = store->logical_pages();
  Model model(lpns), synced(lpns);
  const Geometry& g = nand->geometry();
  const int ops = 6000;
  int remounts = 0;
  for (int i = 0; i < ops; i++) {
    // The engine's redundant tables agree with each other after every operation.
    Status consistent = store->check();
    INFO("after op " << i << ": " << consistent.to_string());
    REQUIRE(consistent.is_ok());
    const Lpn l = Lpn(rng() % lpns);
    const unsigned r = unsigned(rng() % 100);
    if (r < 50) {
      Page p = model[l] && rng() % 10 < 7 ? *model[l] : pdl::test::random_page(rng, g.page_data);
      if (model[l] && rng() % 10 < 8) sparse_change(rng, p);
      Status st = store->write(l, p);
      INFO("write " << l << ": " << st.to_string());
      REQUIRE(st.is_ok());
      model[l] = p;
    } else if (r < 75) {
      Page got(g.page_data);
      Status st = store->read(l, got);
      if (model[l]) {
        REQUIRE(st.is_ok());
        REQUIRE(got == *model[l]);
      } else {
        REQUIRE(st.is(Errc::kNotFound));
      }
    } else if (r < 85) {
      REQUIRE(store->trim(l).is_ok());
      model[l].reset();
    } else if (r < 88) {
      REQUIRE(store->sync().is_ok());
      synced = model;
      // Remount from the same media: the recovered state is exactly the synced one.
      std::unique_ptr<PageStore> again;
      MountReport rep;
      Status st = mount_store(*nand, &again, &rep);
      INFO("mount: " << st.to_string());
      REQUIRE(st.is_ok());
      REQUIRE(rep.torn_pages == 0);
      REQUIRE(again->check().is_ok());
      check_all(*again, synced);
      store = std::move(again);
      remounts++;
    }
  }
  REQUIRE(store->sync().is_ok());
  check_all(*store, model);
  std::unique_ptr<PageStore> last;
  REQUIRE(mount_store(*nand, &last).is_ok());
  check_all(*last, model);
  // The test is only meaningful if garbage collection ran many times over the chip.
  INFO("erases " << nand->counters().erases << " remounts " << remounts);
  CHECK(nand->counters().erases >= 4 * uint64_t(g.blocks));
  CHECK(remounts > 50);
}

TEST_CASE("an unchanged rewrite costs no flash program under PDL", "[store][pdl]") {
  auto nand = pdl::test::make_ram_nand(pdl::test::small_geometry(16));
  StoreParams p;
  p.method = Method::kPdl;
  p.max_differential = 128;
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, p, &store).is_ok());
  auto rng = pdl::test::seeded_rng(7);
  Page page = pdl::test::random_page(rng, store->page_size());
  REQUIRE(store->write(3, page).is_ok());
  REQUIRE(store->sync().is_ok());
  const uint64_t programs = nand->counters().programs;
  REQUIRE(store->write(3, page).is_ok());
  REQUIRE(store->sync().is_ok());
  CHECK(nand->counters().programs == programs);
}

TEST_CASE("a read needs at most two flash reads under PDL", "[store][pdl]") {
  auto nand = pdl::test::make_ram_nand(pdl::test::small_geometry(64));
  StoreParams p;
  p.method = Method::kPdl;
  p.max_differential = 128;
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, p, &store).is_ok());
  auto rng = pdl::test::seeded_rng(8);
  const uint32_t n = store->logical_pages();
  Model model(n);
  for (int i = 0; i < 400; i++) {
    const Lpn l = Lpn(rng() % n);
    Page pg = model[l] ? *model[l] : pdl::test::random_page(rng, store->page_size());
    if (model[l]) sparse_change(rng, pg);
    Status st = store->write(l, pg);
    INFO("write " << l << ": " << st.to_string());
    REQUIRE(st.is_ok());
    model[l] = pg;
  }
  REQUIRE(store->sync().is_ok());
  Page got(store->page_size());
  for (Lpn l = 0; l < n; l++) {
    const uint64_t before = nand->counters().page_reads + nand->counters().spare_reads;
    Status st = store->read(l, got);
    const uint64_t reads = nand->counters().page_reads + nand->counters().spare_reads - before;
    CHECK(reads <= 2);
    if (model[l]) REQUIRE(got == *model[l]);
    else REQUIRE(st.is(Errc::kNotFound));
  }
  CHECK(store->stats().diff_pages_written > 0);
}

TEST_CASE("writes out of range or of the wrong size are refused", "[store]") {
  auto nand = pdl::test::make_ram_nand(pdl::test::small_geometry(16));
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, StoreParams{}, &store).is_ok());
  Page page(store->page_size(), 1), small(10, 1);
  CHECK(store->write(store->logical_pages(), page).is(Errc::kInvalidArgument));
  CHECK(store->write(0, small).is(Errc::kInvalidArgument));
  CHECK(store->read(store->logical_pages(), page).is(Errc::kInvalidArgument));
  CHECK(store->mapping_bytes_per_lpn() <= 16);
}
