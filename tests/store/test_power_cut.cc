// test_power_cut.cc — power cuts at random flash operations, with torn programs and erases.
//
// A seeded workload (load, then random writes / trims / reads / syncs) runs once uncut to count
// its mutating flash operations T; then each trial replays it with the chip frozen after k < T
// operations (k random: cuts land in loads, buffer flushes, GC moves, compaction and erases),
// the interrupted operation torn per one of three patterns. After restoring power:
//   * mount succeeds and writes nothing (a cut during recovery is therefore harmless);
//   * every lpn reads as its last synced value or a value written after that sync — never a
//     mix of two versions' bytes (I1);
//   * a second recovery gives exactly the same contents (I4);
//   * the recovered store keeps working: new writes survive a sync and a remount.
#include <catch2/catch.hpp>

#include <functional>
#include <optional>

#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "tests/support/store_matrix.h"
#include "tests/support/store_state.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using Page = std::vector<uint8_t>;
using pdl::test::read_all;

struct Tracker {
  std::vector<std::optional<Page>> cur;
  std::vector<std::vector<std::optional<Page>>> allowed;  // acceptable after a crash
  explicit Tracker(size_t n) : cur(n), allowed(n, std::vector<std::optional<Page>>{std::nullopt}) {}
  void wrote(Lpn l, const Page& p) {
    cur[l] = p;
    allowed[l].push_back(p);
  }
  void trimmed(Lpn l) {
    cur[l].reset();
    allowed[l].push_back(std::nullopt);
  }
  void synced() {
    for (size_t l = 0; l < cur.size(); l++) allowed[l] = {cur[l]};
  }
};

// Runs the workload until it ends or an operation fails; returns that status. With `load`,
// three quarters of the logical pages are written and synced first. Writes go to a hot set of
// four pages 40% of the time, so their differentials grow until Case 3 or a GC merge.
Status run_workload(PageStore& store, uint64_t seed, Tracker& t, bool load = true,
                    const std::function<void()>& after_write = [] {}) {
  std::mt19937_64 rng(seed);
  const uint32_t n = store.logical_pages(), psz = store.page_size();
  if (load) {
    for (Lpn l = 0; l < n * 3 / 4; l++) {
      Page p = pdl::test::random_page(rng, psz);
      t.wrote(l, p);
      PDL_TRY(store.write(l, p));
    }
    PDL_TRY(store.sync());
    t.synced();
  }
  for (int i = 0; i < 900; i++) {
    const Lpn l = Lpn(rng() % 10 < 4 ? rng() % 4 : rng() % n);
    const unsigned r = unsigned(rng() % 100);
    if (r < 65) {
      Page p = t.cur[l] ? *t.cur[l] : pdl::test::random_page(rng, psz);
      if (t.cur[l]) {
        // A few fields per 512 bytes; sometimes a change too big for a differential.
        const int runs = 1 + int(rng() % (r < 5 ? 40 : psz / 128));
        for (int k = 0; k < runs; k++) {
          const size_t len = 1 + rng() % 8, off = rng() % (psz - len);
          for (size_t j = 0; j < len; j++) p[off + j] = uint8_t(rng());
        }
      }
      t.wrote(l, p);
      PDL_TRY(store.write(l, p));
      after_write();
    } else if (r < 80) {
      Page got(psz);
      Status st = store.read(l, got);
      if (!st.is_ok() && !st.is(Errc::kNotFound)) return st;
      if (st.is_ok() != t.cur[l].has_value() || (t.cur[l] && got != *t.cur[l]))
        return Status::error(Errc::kCorrupt, "read before the cut returned wrong data");
    } else if (r < 90) {
      t.trimmed(l);
      PDL_TRY(store.trim(l));
    } else {
      PDL_TRY(store.sync());
      t.synced();
    }
  }
  return Status::ok();
}

// Every lpn of `got` is one of the versions the tracker allows after a crash (I1).
void require_allowed(const std::vector<std::optional<Page>>& got, const Tracker& t) {
  for (Lpn l = 0; l < got.size(); l++) {
    INFO("lpn " << l);
    const auto& ok = t.allowed[l];
    REQUIRE(std::find(ok.begin(), ok.end(), got[l]) != ok.end());
  }
}

}  // namespace

TEST_CASE("power cut at a random flash operation recovers the last synced or a later state",
          "[store][powerloss]") {
  const auto matrix = pdl::test::store_matrix();
  const size_t which = GENERATE_COPY(range(size_t(0), matrix.size()));
  const auto tear = GENERATE(Tear::kNone, Tear::kPrefix, Tear::kRandomBits);
  if (!pdl::test::in_matrix_sample(which * 3 + size_t(tear), __LINE__)) return;
  const auto& cfg = matrix[which];
  INFO("config " << cfg.name << " tear " << int(tear));
  const uint64_t seed = pdl::test::test_seed() ^ (which * 0x9E3779B97F4A7C15ull);

  // Uncut run: count the workload's mutating operations, and note where GC merges happen
  // (they are rare, so half of the cuts are aimed at them). IPU/IPL: their block merges.
  // Methods whose reclaiming is a block merge (IPU, IPL, BAST, FAST) count merges, not GC runs.
  const bool in_page = pdl::in_page(cfg.params.method) || cfg.params.ftl == FtlKind::kBast ||
                       cfg.params.ftl == FtlKind::kFast;
  uint64_t total_ops = 0;
  std::vector<uint64_t> merge_ops;
  {
    auto nand = pdl::test::make_ram_nand(cfg.geo);
    std::unique_ptr<PageStore> store;
    REQUIRE(format_store(*nand, cfg.params, &store).is_ok());
    const uint64_t base = nand->mutating_ops();
    Tracker t(store->logical_pages());
    uint64_t merges = 0, ops_before = base;
    auto merge_count = [&] {
      return in_page ? store->stats().merges : store->stats().gc_merges;
    };
    Status st = run_workload(*store, seed, t, true, [&] {
      if (merge_count() != merges) {
        for (uint64_t k = ops_before; k < nand->mutating_ops(); k++) merge_ops.push_back(k - base);
        merges = merge_count();
      }
      ops_before = nand->mutating_ops();
    });
    INFO(st.to_string());
    REQUIRE(st.is_ok());
    total_ops = nand->mutating_ops() - base;
    REQUIRE(total_ops > 100);
    // The cuts below must be able to land in every kind of GC work.
    INFO("gc runs " << store->stats().gc_runs << " merges " << merge_count());
    REQUIRE((in_page ? merge_count() : store->stats().gc_runs) > 10);
    // (Not with the write buffer in NVM: the hot pages' differentials stay in the buffer,
    // and GC merges only differentials on flash.)
    if (cfg.params.method == Method::kPdl && cfg.params.max_differential == 0 &&
        cfg.geo.page_data == 512 && cfg.params.nvm_bytes == 0)  // PDL(page); 2 KB: see below
      REQUIRE(store->stats().gc_merges > 0);
  }

  auto rng = pdl::test::seeded_rng(0xC07 + which * 3 + uint64_t(tear));
  const int trials = pdl::test::crash_trials(30, 10);
  for (int trial = 0; trial < trials; trial++) {
    const uint64_t k = trial % 2 && !merge_ops.empty() ? merge_ops[rng() % merge_ops.size()]
                                                       : rng() % total_ops;
    INFO("cut after " << k << " of " << total_ops << " operations");
    auto nand = pdl::test::make_ram_nand(cfg.geo);
    std::unique_ptr<PageStore> store;
    REQUIRE(format_store(*nand, cfg.params, &store).is_ok());
    Tracker t(store->logical_pages());
    nand->cut_power_after(k, tear, rng());
    Status st = run_workload(*store, seed, t);
    REQUIRE(st.is(Errc::kPowerCut));
    store.reset();
    nand->restore_power();

    std::unique_ptr<PageStore> first, second;
    const uint64_t before = nand->mutating_ops();
    MountReport rep;
    st = mount_store(*nand, &first, &rep);
    INFO("mount: " << st.to_string());
    REQUIRE(st.is_ok());
    REQUIRE(nand->mutating_ops() == before);  // recovery writes nothing
    Status consistent = first->check();
    INFO("tables: " << consistent.to_string());
    REQUIRE(consistent.is_ok());
    const auto got = read_all(*first);
    require_allowed(got, t);
    REQUIRE(mount_store(*nand, &second).is_ok());
    REQUIRE(read_all(*second) == got);  // recovery is idempotent

    // The recovered store keeps working.
    auto wrng = pdl::test::seeded_rng(trial);
    auto expect = got;
    for (int i = 0; i < 60; i++) {
      const Lpn l = Lpn(wrng() % second->logical_pages());
      Page p = pdl::test::random_page(wrng, second->page_size());
      Status ws = second->write(l, p);
      INFO("write after recovery: " << ws.to_string() << ", free blocks " << second->free_blocks());
      REQUIRE(ws.is_ok());
      expect[l] = p;
    }
    REQUIRE(second->sync().is_ok());
    REQUIRE(second->check().is_ok());
    std::unique_ptr<PageStore> third;
    REQUIRE(mount_store(*nand, &third).is_ok());
    REQUIRE(read_all(*third) == expect);
  }
}

TEST_CASE("repeated power cuts, each followed by recovery and more work, lose nothing synced",
          "[store][powerloss]") {
  const auto matrix = pdl::test::store_matrix();
  const size_t which = GENERATE_COPY(range(size_t(0), matrix.size()));
  if (!pdl::test::in_matrix_sample(which, __LINE__)) return;
  const auto& cfg = matrix[which];
  INFO("config " << cfg.name);
  auto rng = pdl::test::seeded_rng(0xC4A1 + which);
  for (int chain = 0; chain < 4; chain++) {
    auto nand = pdl::test::make_ram_nand(cfg.geo);
    std::unique_ptr<PageStore> store;
    REQUIRE(format_store(*nand, cfg.params, &store).is_ok());
    Tracker t(store->logical_pages());
    bool load = true;
    for (int cut = 0; cut < 6; cut++) {
      const Tear tear = Tear(rng() % 3);
      const uint64_t k = rng() % (load ? 1500 : 400);
      INFO("chain " << chain << " cut " << cut << " after " << k << " ops, tear " << int(tear));
      nand->cut_power_after(k, tear, rng());
      Status st = run_workload(*store, rng(), t, load);
      INFO("workload: " << st.to_string());
      REQUIRE((st.is_ok() || st.is(Errc::kPowerCut)));
      store.reset();
      nand->restore_power();
      st = mount_store(*nand, &store);
      INFO("mount: " << st.to_string());
      REQUIRE(st.is_ok());
      REQUIRE(store->check().is_ok());
      store->set_wear_level(cfg.params.wear_level);  // (a run-time choice, not on flash)
      const auto got = read_all(*store);
      require_allowed(got, t);
      t.cur = got;  // the next round starts from what was recovered
      t.synced();
      load = false;
    }
  }
}

TEST_CASE("a power cut at any operation of a GC merge loses nothing synced", "[store][powerloss]") {
  // Pages with differentials larger than half a page sit in old blocks; rewriting other pages
  // whole forces GC through those blocks, which merges them. Every operation of the window
  // that contains merges is cut in turn.
  const Geometry g = pdl::test::geometry(2048, 64, 8, 24);
  StoreParams p;
  p.method = Method::kPdl;
  p.max_differential = 0;  // a whole page
  p.obsolete = GENERATE(ObsoleteMode::kSpare, ObsoleteMode::kMemory);
  p.logical_pages = (24 - 6) * 8 * 7 / 8;  // fuller than PDL's default, so GC works hard
  const uint64_t seed = pdl::test::test_seed() ^ 0x3E46E;
  auto workload = [&](PageStore& store, Tracker& t, const std::function<void()>& after) {
    std::mt19937_64 rng(seed);
    const uint32_t n = store.logical_pages(), psz = store.page_size();
    for (Lpn l = 0; l < n; l++) {
      Page pg = pdl::test::random_page(rng, psz);
      t.wrote(l, pg);
      PDL_TRY(store.write(l, pg));
    }
    for (Lpn l = 0; l < 16; l++) {  // differentials of 16 + 128 x (4 + 4) = 1040 bytes
      Page pg = *t.cur[l];
      for (size_t off = 0; off < psz; off += 16)
        for (size_t j = 0; j < 4; j++) pg[off + j] = uint8_t(pg[off + j] + 1 + rng() % 200);
      t.wrote(l, pg);
      PDL_TRY(store.write(l, pg));
    }
    PDL_TRY(store.sync());
    t.synced();
    for (int i = 0; i < 300; i++) {  // whole-page rewrites of the other pages: GC pressure
      const Lpn l = Lpn(16 + rng() % (n - 16));
      Page pg = pdl::test::random_page(rng, psz);
      t.wrote(l, pg);
      PDL_TRY(store.write(l, pg));
      after();
      if (i % 25 == 0) {
        PDL_TRY(store.sync());
        t.synced();
      }
    }
    return Status::ok();
  };

  std::vector<uint64_t> window;
  {
    auto nand = pdl::test::make_ram_nand(g);
    std::unique_ptr<PageStore> store;
    REQUIRE(format_store(*nand, p, &store).is_ok());
    Tracker t(store->logical_pages());
    const uint64_t base = nand->mutating_ops();
    uint64_t merges = 0, before = base;
    REQUIRE(workload(*store, t, [&] {
              if (store->stats().gc_merges != merges && window.size() < 400)
                for (uint64_t k = before; k < nand->mutating_ops(); k++) window.push_back(k - base);
              merges = store->stats().gc_merges;
              before = nand->mutating_ops();
            }).is_ok());
    INFO("merges " << store->stats().gc_merges);
    REQUIRE(store->stats().gc_merges >= 8);
  }
  REQUIRE(!window.empty());
  for (size_t i = 0; i < window.size(); i++) {
    const uint64_t k = window[i];
    const Tear tear = Tear(i % 3);
    INFO("cut after " << k << " operations, tear " << int(tear));
    auto nand = pdl::test::make_ram_nand(g);
    std::unique_ptr<PageStore> store;
    REQUIRE(format_store(*nand, p, &store).is_ok());
    Tracker t(store->logical_pages());
    nand->cut_power_after(k, tear, k);
    REQUIRE(workload(*store, t, [] {}).is(Errc::kPowerCut));
    store.reset();
    nand->restore_power();
    REQUIRE(mount_store(*nand, &store).is_ok());
    REQUIRE(store->check().is_ok());
    require_allowed(read_all(*store), t);
  }
}
