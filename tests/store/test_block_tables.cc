// test_block_tables.cc — the block manager's checkpointed tables (block_tables.cc, section
// PBLK version 2) and the bit stream they are packed in (flash/common/bit_stream.h).
//
//   * bit fields and gamma codes read back as written, any 64-bit value included; a stream cut
//     short or a gamma code of more than 64 bits fails, never overflows;
//   * a manager driven through formats, writes, collections, scrubs and a retirement loads back
//     as the same manager: the same bytes saved again, and the same pages, victims and free
//     counts as the one that saved it from then on;
//   * close stamps renumbered whenever the clock reaches a (small) limit keep the oldest-first
//     order: the same victims as a manager that never renumbers, before and after a round trip;
//   * PBLK version 1 (an older checkpoint) is refused as kCorrupt naming the section version;
//   * every truncation of the section, and every single flipped bit in it, is refused as
//     kCorrupt or loads a manager that saves again — never a crash (the sanitizer build runs it).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "flash/common/bit_stream.h"
#include "flash/pdl/block_manager.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

Geometry small_geometry() {
  Geometry g;
  g.page_data = 512;
  g.page_spare = 32;
  g.pages_per_block = 16;
  g.blocks = 64;
  return g;
}

constexpr uint32_t kFirst = 2, kReserve = 3;

// A page-mapped workload through `bm` on `nand`: random writes of 300 lpns with greedy
// collection, a few scrubs, one retirement; leaves the user head open.
void drive(BlockManager& bm, Nand& nand, std::mt19937_64& rng, int writes) {
  const Geometry& g = nand.geometry();
  const uint32_t lpns = 300;
  constexpr uint32_t kNone = 0xFFFFFFFFu;
  std::vector<uint32_t> map(lpns, kNone), p2l(g.total_pages(), kNone);
  auto place = [&](uint32_t l, BlockManager::Head h) {
    Ppa p;
    REQUIRE(bm.next_page(h, nand, &p).is_ok());
    if (map[l] != kNone) {
      bm.valid_dec(map[l]);
      p2l[map[l]] = kNone;
    }
    map[l] = uint32_t(p);
    p2l[p] = l;
    bm.valid_inc(p);
  };
  bool retired = false;
  for (int i = 0; i < writes; i++) {
    while (bm.user_pages_available() < 1) {
      int64_t v = bm.pending_victim();
      if (v < 0) v = bm.greedy_victim();
      REQUIRE(v >= 0);
      bm.take(uint32_t(v));
      for (uint64_t p = uint64_t(v) * g.pages_per_block; p < uint64_t(v + 1) * g.pages_per_block;
           p++)
        if (p2l[p] != kNone) place(p2l[p], BlockManager::Head::kGc);
      if (bm.retiring(uint32_t(v))) {
        (void)bm.retire(uint32_t(v), nand);
      } else {
        REQUIRE(nand.erase(uint32_t(v)).is_ok());
        bm.victim_erased(uint32_t(v));
      }
    }
    place(uint32_t(rng() % lpns), BlockManager::Head::kUser);
    if (rng() % 97 == 0) bm.scrub_later(uint32_t(kFirst + rng() % (g.blocks - kFirst)));
    if (!retired && i > writes / 2 && rng() % 50 == 0) {
      const uint32_t b = uint32_t(kFirst + rng() % (g.blocks - kFirst));
      if (bm.is_closed(b)) {
        bm.retire_later(b);
        retired = true;
      }
    }
  }
}

std::vector<uint8_t> saved(const BlockManager& bm) {
  TableWriter w;
  REQUIRE(bm.save_tables(w).is_ok());
  return w.data();
}

Status load(std::span<const uint8_t> bytes, BlockManager* out) {
  TableReader r(bytes);
  PDL_TRY(out->load_tables(r));
  return r.finish();
}

}  // namespace

TEST_CASE("bit fields and gamma codes read back as written", "[checkpoint][bits]") {
  BitWriter w;
  const std::vector<uint64_t> values = {1, 2, 3, 4, 7, 8, 1000, uint64_t(1) << 40,
                                        std::numeric_limits<uint64_t>::max()};
  for (uint64_t v : values) {
    w.gamma(v);
    w.bits(v & 0x1FFFF, 17);
    w.bit(v & 1);
  }
  BitReader r(w.data());
  for (uint64_t v : values) {
    CHECK(r.gamma() == v);
    CHECK(r.bits(17) == (v & 0x1FFFF));
    CHECK(r.bit() == bool(v & 1));
  }
  CHECK(r.ok());
  CHECK(r.at_padding());
  CHECK(bits_for(1) == 1);
  CHECK(bits_for(2) == 1);
  CHECK(bits_for(3) == 2);
  CHECK(bits_for(524288) == 19);
  CHECK(bits_for(524289) == 20);

  // Cut short: fails, and stays failed.
  std::vector<uint8_t> cut(w.data().begin(), w.data().begin() + 3);
  BitReader c(cut);
  for (int i = 0; i < 20; i++) (void)c.gamma();
  CHECK_FALSE(c.ok());
  CHECK(c.gamma() == 0);

  // 64 leading zeros: no 64-bit value has so long a code.
  std::vector<uint8_t> zeros(16, 0);
  zeros.back() = 0xFF;
  BitReader z(zeros);
  CHECK(z.gamma() == 0);
  CHECK_FALSE(z.ok());
}

TEST_CASE("a block manager loaded from its tables is the one that saved them",
          "[checkpoint][pdl]") {
  const Geometry g = small_geometry();
  const int seed = GENERATE(1, 2, 3, 4);
  auto rng = pdl::test::seeded_rng(0xb10c0 + uint64_t(seed));
  auto nand = pdl::test::make_ram_nand(g);
  BlockManager bm(g, kFirst, kReserve);
  for (uint32_t b = kFirst; b < g.blocks; b++) bm.add_free(b, rng() % 3 == 0);
  {  // Fresh from a format (no block known erased): a few bytes.
    BlockManager formatted(g, kFirst, kReserve);
    for (uint32_t b = kFirst; b < g.blocks; b++) formatted.add_free(b, false);
    CHECK(saved(formatted).size() < 40);
  }
  drive(bm, *nand, rng, 400 * seed);

  const std::vector<uint8_t> bytes = saved(bm);
  BlockManager back(g, kFirst, kReserve);
  const Status st = load(bytes, &back);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  REQUIRE(saved(back) == bytes);
  for (uint32_t b = 0; b < g.blocks; b++) {
    INFO("block " << b);
    CHECK(back.valid(b) == bm.valid(b));
    if (!bm.is_bad(b)) CHECK(back.written(b) == bm.written(b));  // (a bad block's: moot)
    CHECK(back.is_free(b) == bm.is_free(b));
    CHECK(back.is_closed(b) == bm.is_closed(b));
    CHECK(back.is_bad(b) == bm.is_bad(b));
    CHECK(back.retiring(b) == bm.retiring(b));
    CHECK(back.scrubbing(b) == bm.scrubbing(b));
  }
  CHECK(back.free_blocks() == bm.free_blocks());
  CHECK(back.greedy_victim() == bm.greedy_victim());
  CHECK(back.oldest_victim() == bm.oldest_victim());
  CHECK(back.pending_victim() == bm.pending_victim());
  // From here on both take the same pages and victims (the free queue's and the lists' order).
  for (int i = 0; i < 200; i++) {
    Ppa a, b;
    if (bm.user_pages_available() < 1) {
      const int64_t v = bm.greedy_victim(), w = back.greedy_victim();
      REQUIRE(v == w);
      REQUIRE(bm.oldest_victim() == back.oldest_victim());
      if (v < 0) break;
      bm.take(uint32_t(v));
      back.take(uint32_t(v));
      bm.victim_erased(uint32_t(v));
      back.victim_erased(uint32_t(v));
    }
    REQUIRE(bm.next_page(BlockManager::Head::kUser, *nand, &a).is_ok());
    REQUIRE(back.next_page(BlockManager::Head::kUser, *nand, &b).is_ok());
    REQUIRE(a == b);
    bm.valid_inc(a);
    back.valid_inc(b);
  }
  REQUIRE(saved(back) == saved(bm));
}

TEST_CASE("close stamps renumbered at the clock's limit keep the oldest-first order",
          "[checkpoint][pdl]") {
  const Geometry g = small_geometry();
  auto nand_a = pdl::test::make_ram_nand(g), nand_b = pdl::test::make_ram_nand(g);
  BlockManager a(g, kFirst, kReserve), b(g, kFirst, kReserve);
  b.set_stamp_limit(70);  // renumbers every few closes once ~60 blocks are closed
  for (uint32_t blk = kFirst; blk < g.blocks; blk++) {
    a.add_free(blk, false);
    b.add_free(blk, false);
  }
  auto rng_a = pdl::test::seeded_rng(0x57a3), rng_b = pdl::test::seeded_rng(0x57a3);
  drive(a, *nand_a, rng_a, 1500);
  drive(b, *nand_b, rng_b, 1500);
  REQUIRE(saved(a) != saved(b));  // the stamps differ: b renumbered
  BlockManager c(g, kFirst, kReserve);  // b through its tables
  REQUIRE(load(saved(b), &c).is_ok());
  c.set_stamp_limit(70);
  for (int round = 0; round < 300; round++) {
    const int64_t v = a.oldest_victim();
    INFO("round " << round);
    REQUIRE(b.oldest_victim() == v);
    REQUIRE(c.oldest_victim() == v);
    if (v < 0) break;
    for (BlockManager* m : {&a, &b, &c}) {
      m->take(uint32_t(v));
      m->victim_erased(uint32_t(v));
    }
    // Fill pages until a block closes in each (the same pages: the same free queue).
    for (uint32_t k = 0; k < g.pages_per_block; k++) {
      Ppa pa, pb, pc;
      REQUIRE(a.next_page(BlockManager::Head::kUser, *nand_a, &pa, true).is_ok());
      REQUIRE(b.next_page(BlockManager::Head::kUser, *nand_b, &pb, true).is_ok());
      REQUIRE(c.next_page(BlockManager::Head::kUser, *nand_b, &pc, true).is_ok());
      REQUIRE((pa == pb && pb == pc));
    }
  }
}

TEST_CASE("block tables of version 1 are refused, naming the section version",
          "[checkpoint][pdl]") {
  const Geometry g = small_geometry();
  // Version 1's start: the tag, then B, P and the first block as u32.
  TableWriter w;
  w.tag("PBLK");
  w.u32(g.blocks);
  w.u32(g.pages_per_block);
  w.u32(kFirst);
  for (uint32_t b = kFirst; b < g.blocks; b++) w.u8(0);
  w.u64(0);
  w.u32(g.blocks - kFirst);
  for (uint32_t b = kFirst; b < g.blocks; b++) w.u32(b);
  w.u32(0xFFFFFFFFu);
  w.u32(0xFFFFFFFFu);
  w.u32(0);
  w.u8(0);
  BlockManager bm(g, kFirst, kReserve);
  const Status st = load(w.data(), &bm);
  CHECK(st.is(Errc::kCorrupt));
  CHECK(st.to_string().find("section version 1") != std::string::npos);
}

TEST_CASE("damaged block tables are refused as corrupt or load harmlessly", "[checkpoint][pdl]") {
  const Geometry g = small_geometry();
  auto rng = pdl::test::seeded_rng(0xb10cbad);
  auto nand = pdl::test::make_ram_nand(g);
  BlockManager bm(g, kFirst, kReserve);
  for (uint32_t b = kFirst; b < g.blocks; b++) bm.add_free(b, false);
  drive(bm, *nand, rng, 900);
  const std::vector<uint8_t> good = saved(bm);

  for (size_t n = 0; n < good.size(); n++) {
    INFO("truncated to " << n << " of " << good.size());
    std::vector<uint8_t> cut(good.begin(), good.begin() + std::ptrdiff_t(n));
    BlockManager out(g, kFirst, kReserve);
    CHECK(load(cut, &out).is(Errc::kCorrupt));
  }
  size_t loaded = 0;
  for (size_t bit = 0; bit < good.size() * 8; bit++) {
    std::vector<uint8_t> bad = good;
    bad[bit / 8] ^= uint8_t(1u << (bit % 8));
    BlockManager out(g, kFirst, kReserve);
    const Status st = load(bad, &out);
    INFO("bit " << bit << ": " << st.to_string());
    if (st.is_ok()) {
      loaded++;
      TableWriter again;
      CHECK(out.save_tables(again).is_ok());  // a manager whose tables hold together
    } else {
      CHECK(st.is(Errc::kCorrupt));
    }
  }
  // Most flips are caught by the section itself (the checkpoint's CRCs catch every one).
  CHECK(loaded < good.size() * 8 / 2);
}
