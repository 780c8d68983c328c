// test_gc_rules.cc — PDL garbage collection's rules, each pinned by one deterministic case.
//
//   * GC keeps an lpn's flushed differential while a newer record of it waits in the write
//     buffer: that differential is still the synced version, and a power cut loses the buffer;
//   * greedy victims: the closed block with the fewest valid pages first (or, with
//     StoreParams::gc_victim = kOldest, JFFS's order: the block closed longest ago).
// Both are driven through the PageStore API only (writes make GC run; locate, block_info and
// the stats show what it did).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using Page = std::vector<uint8_t>;

// `page` with a few bytes changed: a small differential against it.
Page touched(Page page, uint8_t v) {
  for (size_t i = 0; i < 4; i++) page[17 + 31 * i] = v;
  return page;
}

}  // namespace

TEST_CASE("GC keeps a flushed differential that is still the synced version while a newer "
          "record waits in the write buffer",
          "[store][gc][powerloss]") {
  const ObsoleteMode mode = GENERATE(ObsoleteMode::kSpare, ObsoleteMode::kMemory);
  INFO("obsolete " << (mode == ObsoleteMode::kSpare ? "spare" : "memory"));
  const Geometry g = pdl::test::geometry(512, 32, 4, 16);
  auto emu = pdl::test::make_ram_nand(g);
  StoreParams p;
  p.max_differential = 64;
  p.obsolete = mode;
  p.logical_pages = 4 * g.total_pages();  // thin-provisioned: fresh lpns fill the chip
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*emu, p, &s).is_ok());
  auto rng = pdl::test::seeded_rng(0x6c5);
  const uint32_t psz = s->page_size();
  const Lpn L = 0;

  // Write: base page v0, then v1 as a differential, synced (flushed to differential page d).
  const Page v0 = pdl::test::random_page(rng, psz), v1 = touched(v0, 1), v2 = touched(v0, 2);
  REQUIRE(s->write(L, v0).is_ok());
  REQUIRE(s->sync().is_ok());
  REQUIRE(s->write(L, v1).is_ok());
  REQUIRE(s->sync().is_ok());
  const Ppa d = s->locate(L).diff;
  REQUIRE(d != kNoPpa);
  // Rewrite: v2's record waits in the write buffer; d still holds the synced version.
  REQUIRE(s->write(L, v2).is_ok());
  REQUIRE(s->locate(L).diff_in_buffer);
  REQUIRE(s->locate(L).diff == d);

  // GC: d's block holds L's base page, d and stale copies of lpn 1 (written until the block is
  // full, then once more): 2 valid pages. Whole-page writes of fresh lpns (new base pages; the
  // write buffer is left alone), every third one twice, fill the other blocks with 3 valid
  // pages each until a collection must take d's block, the emptiest, and erase it.
  const uint32_t block = d / g.pages_per_block;
  for (int i = 0; i < 4 && s->block_info(block).state != BlockInfo::kFull; i++)
    REQUIRE(s->write(1, pdl::test::random_page(rng, psz)).is_ok());
  REQUIRE(s->write(1, pdl::test::random_page(rng, psz)).is_ok());
  REQUIRE(s->block_info(block).state == BlockInfo::kFull);
  REQUIRE(s->block_info(block).valid_pages == 2);
  const uint32_t erases = emu->erase_count(block);
  for (Lpn l = 2; l < s->logical_pages() && emu->erase_count(block) == erases; l++)
    for (int k = 0; k < (l % 3 == 0 ? 2 : 1); k++)  // (every third twice: room to collect)
      REQUIRE(s->write(l, pdl::test::random_page(rng, psz)).is_ok());
  REQUIRE(emu->erase_count(block) > erases);
  REQUIRE(s->stats().gc_runs > 0);
  REQUIRE(s->locate(L).diff_in_buffer);  // v2 never reached flash
  CHECK(s->locate(L).diff != kNoPpa);    // d's record moved with the collection
  // Which version of L a read gives.
  auto version = [&] {
    Page got(psz);
    REQUIRE(s->read(L, got).is_ok());
    return std::string(got == v0 ? "v0" : got == v1 ? "v1" : got == v2 ? "v2" : "none");
  };
  REQUIRE(version() == "v2");

  // Cut: the write buffer is lost; the remount reads the synced version.
  emu->cut_power_after(0);
  s.reset();
  emu->restore_power();
  REQUIRE(mount_store(*emu, &s).is_ok());
  REQUIRE(s->check().is_ok());
  CHECK(version() == "v1");  // (v0: the base page alone, the synced differential dropped)
}

// A layout for the victim test: lpns rewritten in each of the first closed blocks (each
// holds four), and what the first write that needs GC must then have done.
struct VictimCase {
  GcVictim policy;
  std::vector<int> rewritten;   // per closed block, in the order they were filled
  std::vector<size_t> victims;  // the closed blocks erased (indices into the same order)
  uint64_t runs, moves;         // collections and base pages moved
};

TEST_CASE("GC takes closed blocks in order of fewest valid pages, or oldest first when asked",
          "[store][gc]") {
  // Greedy, valid pages 3, 1, 2: the emptiest block is neither the first nor the last filled,
  // so neither age nor position decides. The first collection (1 valid page) opens the GC head
  // and frees no block on balance; the second (2 valid pages) fills that head further and
  // frees one, which is what the write needed. With a wholly stale block (0 valid pages) that
  // one goes first, moving nothing, and is enough.
  // Oldest first (JFFS's order), the same blocks: the first filled goes first although it
  // holds the most valid pages (3 moved); that opens the GC head with one page to spare, and
  // the next oldest (1 valid page) fills it and frees a block.
  const VictimCase vc = GENERATE(values<VictimCase>({
      {GcVictim::kGreedy, {1, 3, 2}, {1, 2}, 2, 3},
      {GcVictim::kGreedy, {1, 3, 4, 2}, {2}, 1, 0},
      {GcVictim::kOldest, {1, 3, 2}, {0, 1}, 2, 4},
  }));
  const ObsoleteMode mode = GENERATE(ObsoleteMode::kSpare, ObsoleteMode::kMemory);
  INFO("policy " << (vc.policy == GcVictim::kOldest ? "oldest" : "greedy") << ", victims "
                 << vc.victims.size() << ", obsolete "
                 << (mode == ObsoleteMode::kSpare ? "spare" : "memory"));
  // OPU: every write is one base page, so a block's valid pages are exactly its lpns not
  // rewritten since. Thin-provisioned, so fresh lpns keep the chip filling until GC must run.
  const Geometry g = pdl::test::geometry(512, 32, 4, 16);
  auto emu = pdl::test::make_ram_nand(g);
  StoreParams p;
  p.method = Method::kOpu;
  p.obsolete = mode;
  p.gc_victim = vc.policy;
  p.logical_pages = 4 * g.total_pages();
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*emu, p, &s).is_ok());
  auto rng = pdl::test::seeded_rng(0x71c);
  const uint32_t psz = s->page_size(), ppb = g.pages_per_block;
  Lpn next = 0;
  auto write_fresh = [&] { REQUIRE(s->write(next++, pdl::test::random_page(rng, psz)).is_ok()); };

  // Five closed blocks of four lpns each, by the block their base pages landed in.
  for (int i = 0; i < 5 * int(ppb); i++) write_fresh();
  std::map<uint32_t, std::vector<Lpn>> lpns_of;
  for (Lpn l = 0; l < next; l++) lpns_of[s->locate(l).base / ppb].push_back(l);
  std::vector<uint32_t> closed;
  for (const auto& [b, ls] : lpns_of)
    if (s->block_info(b).state == BlockInfo::kFull) closed.push_back(b);
  REQUIRE(closed.size() >= vc.rewritten.size() + 1);
  for (size_t k = 0; k < vc.rewritten.size(); k++)
    for (int i = 0; i < vc.rewritten[k]; i++)
      REQUIRE(s->write(lpns_of[closed[k]][size_t(i)], pdl::test::random_page(rng, psz)).is_ok());
  auto victim = [&](size_t k) {
    return std::find(vc.victims.begin(), vc.victims.end(), k) != vc.victims.end();
  };
  std::vector<uint32_t> erases;
  std::map<Lpn, Ppa> still;  // the valid pages of the blocks GC must not take
  for (size_t k = 0; k < closed.size(); k++) {
    const uint32_t b = closed[k];
    REQUIRE(s->block_info(b).state == BlockInfo::kFull);
    REQUIRE(s->block_info(b).valid_pages ==
            ppb - (k < vc.rewritten.size() ? uint32_t(vc.rewritten[k]) : 0));
    erases.push_back(emu->erase_count(b));
    for (Lpn l : lpns_of[b])
      if (!victim(k) && s->locate(l).base / ppb == b) still[l] = s->locate(l).base;
  }
  REQUIRE(s->stats().gc_runs == 0);

  // Fill with fresh lpns until GC runs.
  for (int i = 0; i < 1000 && s->stats().gc_runs == 0; i++) write_fresh();
  REQUIRE(s->stats().gc_runs == vc.runs);
  CHECK(s->stats().gc_base_moves == vc.moves);
  for (size_t k = 0; k < closed.size(); k++) {
    INFO("block " << closed[k] << " with " << s->block_info(closed[k]).valid_pages
                  << " valid pages");
    CHECK(emu->erase_count(closed[k]) == erases[k] + (victim(k) ? 1 : 0));
  }
  for (const auto& [l, ppa] : still) {
    INFO("lpn " << l);
    CHECK(s->locate(l).base == ppa);
  }
  REQUIRE(s->check().is_ok());
}
