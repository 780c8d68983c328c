// test_update_workload.cc — pdl-bench's [PDL] §5.1 update workload (bench/update_workload.h):
// where a change's bytes go (8-byte fields at random places, or one contiguous run), and a
// logical page of several flash pages read, changed and written as one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "bench/update_workload.h"
#include "flash/device/emulated_nand.h"
#include "flash/image/methods.h"
#include "flash/image/open_store.h"

using namespace pdl;
using namespace pdl::bench;

namespace {

// Positions where `a` and `b` differ.
std::vector<size_t> changed_bytes(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  std::vector<size_t> v;
  for (size_t i = 0; i < a.size(); i++)
    if (a[i] != b[i]) v.push_back(i);
  return v;
}

// The small chip these tests use: Table 1 pages, 32 blocks.
Geometry small_chip() {
  Geometry g;
  g.blocks = 32;
  return g.resolved();
}

// A fresh RAM chip of `g` and a store of catalogue method `key` (400 logical pages) on it.
void ram_store(const Geometry& g, const char* key, std::unique_ptr<EmulatedNand>* nand,
               std::unique_ptr<PageStore>* store) {
  REQUIRE(EmulatedNand::create_ram(g, nand).is_ok());
  REQUIRE(format_store(**nand, find_method(key)->params(400, ObsoleteMode::kSpare), store)
              .is_ok());
}

}  // namespace

TEST_CASE("placement run changes one contiguous run of exactly the change's size, in bounds",
          "[workload]") {
  std::mt19937_64 rng(7);
  for (const size_t page : {size_t(2048), size_t(8192)})
    for (const double pct : {0.1, 2.0, 10.0, 50.0, 100.0}) {
      PageChanger ch(page, pct, 8, Placement::kRun);
      const size_t want = std::max<size_t>(1, size_t(std::llround(pct / 100.0 * double(page))));
      REQUIRE(ch.bytes_per_change() == want);
      for (int t = 0; t < 50; t++) {
        std::vector<uint8_t> before(page), after;
        random_fill(before, rng);
        after = before;
        std::vector<ChangeRun> runs;
        ch.change(after, rng, &runs);
        INFO("page " << page << " pct " << pct);
        REQUIRE(runs.size() == 1);
        CHECK(runs[0].len == want);
        CHECK(size_t(runs[0].offset) + runs[0].len <= page);
        const std::vector<size_t> diff = changed_bytes(before, after);
        REQUIRE(diff.size() == want);  // every byte of the run changed, none outside it
        CHECK(diff.front() == runs[0].offset);
        CHECK(diff.back() == size_t(runs[0].offset) + want - 1);
      }
    }
}

TEST_CASE("placement run puts the run at many different offsets", "[workload]") {
  std::mt19937_64 rng(3);
  PageChanger ch(2048, 2, 8, Placement::kRun);
  std::vector<uint8_t> page(2048);
  std::vector<uint32_t> offsets;
  for (int t = 0; t < 200; t++) {
    std::vector<ChangeRun> runs;
    ch.change(page, rng, &runs);
    offsets.push_back(runs.at(0).offset);
  }
  std::sort(offsets.begin(), offsets.end());
  CHECK(std::unique(offsets.begin(), offsets.end()) - offsets.begin() > 100);
}

TEST_CASE("placement fields changes 8-byte fields at distinct places, the total exact",
          "[workload]") {
  std::mt19937_64 rng(5);
  PageChanger ch(2048, 2, 8, Placement::kFields);
  REQUIRE(ch.bytes_per_change() == 41);
  std::vector<uint8_t> before(2048), after;
  random_fill(before, rng);
  after = before;
  std::vector<ChangeRun> runs;
  ch.change(after, rng, &runs);
  CHECK(runs.size() == 6);  // 5 fields of 8 bytes and one of 1
  for (const ChangeRun& r : runs) CHECK(r.offset % 8 == 0);
  CHECK(changed_bytes(before, after).size() == 41);
}

TEST_CASE("a logical page of k flash pages: an update changes exactly pct of k pages and "
          "writes all k",
          "[workload]") {
  const Geometry g = small_chip();
  std::unique_ptr<EmulatedNand> nand;
  std::unique_ptr<PageStore> store;
  ram_store(g, "opu", &nand, &store);
  std::mt19937_64 rng(11);
  REQUIRE(load_store(*store, rng).is_ok());
  // Snapshot every store page, run one update, find what changed.
  auto snapshot = [&] {
    std::vector<std::vector<uint8_t>> v(store->logical_pages(),
                                        std::vector<uint8_t>(store->page_size()));
    for (Lpn l = 0; l < store->logical_pages(); l++) REQUIRE(store->read(l, v[l]).is_ok());
    return v;
  };
  for (const Placement pl : {Placement::kFields, Placement::kRun}) {
    WorkloadConfig cfg;
    cfg.changed_pct = 2;
    cfg.logical_page = 4 * 2048;
    cfg.placement = pl;
    OpRunner runner(*store, *nand, cfg, rng);
    runner.set_update_pct(100);
    for (int t = 0; t < 20; t++) {
      const auto before = snapshot();
      OpCost cost;
      REQUIRE(runner.run_one(&cost).is_ok());
      const auto after = snapshot();
      size_t bytes = 0;
      std::vector<Lpn> pages;
      for (Lpn l = 0; l < before.size(); l++) {
        const size_t d = changed_bytes(before[l], after[l]).size();
        bytes += d;
        if (d) pages.push_back(l);
      }
      INFO("placement " << placement_name(pl));
      CHECK(bytes == 164);  // round(2 % of 8192)
      REQUIRE(!pages.empty());
      CHECK(pages.front() / 4 == pages.back() / 4);  // within one logical page
      CHECK(cost.read.page_reads == 4);              // its 4 flash pages read
      CHECK(cost.write.programs >= 4);               // and written back (OPU: 4 programs)
    }
  }
}

TEST_CASE("a logical page that is not a whole number of flash pages is refused", "[workload]") {
  Geometry g;
  g.blocks = 32;
  WorkloadConfig cfg;
  cfg.logical_page = 3000;
  cfg.warm_rounds = 0;
  std::unique_ptr<UpdateBench> b;
  const Status st =
      UpdateBench::create(g, find_method("opu")->params(400, ObsoleteMode::kSpare), cfg, &b);
  CHECK(st.code() == Errc::kInvalidArgument);
}

TEST_CASE("IPL told each run through note_update, per flash page of a k-page logical page, "
          "stores what a whole-page store stores",
          "[workload]") {
  // The same workload (same seeds) on OPU, which writes whole pages, and on IPL, which logs only
  // the ranges note_update names once a page has any: a range cut short, or placed at the wrong
  // offset of its flash page, leaves IPL's pages different from OPU's. (A page given no range
  // at all is diffed by IPL, so a range sent to the wrong page costs reads, not content.)
  const Geometry g = small_chip();
  for (const Placement pl : {Placement::kFields, Placement::kRun}) {
    INFO("placement " << placement_name(pl));
    std::vector<std::vector<std::vector<uint8_t>>> images;
    for (const char* key : {"opu", "ipl18k"}) {
      std::unique_ptr<EmulatedNand> nand;
      std::unique_ptr<PageStore> store;
      ram_store(g, key, &nand, &store);
      std::mt19937_64 rng(5);
      REQUIRE(load_store(*store, rng).is_ok());
      WorkloadConfig cfg;
      cfg.changed_pct = 2;
      cfg.n_updates = 3;  // later changes overlap earlier ones
      cfg.logical_page = 4 * 2048;
      cfg.placement = pl;
      OpRunner runner(*store, *nand, cfg, rng);
      runner.set_update_pct(100);
      OpCost cost;
      for (int t = 0; t < 200; t++) REQUIRE(runner.run_one(&cost).is_ok());
      std::vector<std::vector<uint8_t>> v(400, std::vector<uint8_t>(store->page_size()));
      for (Lpn l = 0; l < 400; l++) REQUIRE(store->read(l, v[l]).is_ok());
      images.push_back(std::move(v));
    }
    size_t differing = 0;
    for (Lpn l = 0; l < 400; l++) differing += images[0][l] != images[1][l];
    CHECK(differing == 0);
  }
}
