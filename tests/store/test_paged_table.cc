// test_paged_table.cc — PagedTable: demand loading, the clean-page bound, dirty pages held
// until a durable save or folded into entries, the directory and inline stream layouts, and
// hostile streams.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "flash/store/paged_table.h"
#include "tests/support/ram_pager.h"

namespace pdl {
namespace {

using Table = PagedTable<U32Codec>;
constexpr uint32_t kPage = 64;  // 16 entries per table page
constexpr uint32_t kFill = 0xFFFFFFFFu;

// Save `t` through `pager` (or inline if null) and make the save durable.
std::vector<uint8_t> save_durable(Table& t, TablePager* pager) {
  TableWriter w;
  w.set_pager(pager);
  REQUIRE(t.save(w).is_ok());
  t.saved(true);
  return w.data();
}

TEST_CASE("a paged table reads its fill value without loading or holding pages") {
  test::RamPager pager(kPage);
  Table t(7, 1000, kFill, kPage, 4);
  CHECK(t.per_page() == 16);
  CHECK(t.pages() == 63);
  for (uint64_t i = 0; i < t.size(); i++) CHECK(t.get(i) == kFill);
  CHECK(t.stats().resident == 0);
  CHECK(pager.loads == 0);
}

TEST_CASE("dirty pages stay resident until a durable save, then only capacity clean pages do") {
  test::RamPager pager(kPage);
  Table t(7, 1000, kFill, kPage, 4);
  for (uint64_t i = 0; i < t.size(); i++) t.set(i, uint32_t(i * 3));
  CHECK(t.stats().dirty == 63);
  save_durable(t, &pager);
  CHECK(pager.stores == 63);
  CHECK(t.stats().dirty == 0);
  CHECK(t.stats().resident == 4);
  CHECK(t.stats().homed == 63);
  // Every entry reads back through loads; never more than 4 clean pages resident.
  for (uint64_t i = 0; i < t.size(); i++) {
    REQUIRE(t.get(i) == uint32_t(i * 3));
    REQUIRE(t.stats().resident <= 4);
  }
  CHECK(pager.loads >= 59);
  REQUIRE(t.status().is_ok());
}

TEST_CASE("an abandoned save keeps the pages dirty and the old homes") {
  test::RamPager pager(kPage);
  Table t(7, 100, kFill, kPage, 2);
  for (uint64_t i = 0; i < 100; i++) t.set(i, uint32_t(i));
  save_durable(t, &pager);
  t.set(5, 555);
  TableWriter w;
  w.set_pager(&pager);
  REQUIRE(t.save(w).is_ok());
  t.saved(false);
  CHECK(t.stats().dirty == 1);
  // Evictions cannot drop the dirty page: its change survives heavy use of the others.
  for (int round = 0; round < 3; round++)
    for (uint64_t i = 0; i < 100; i++) t.get(i);
  CHECK(t.get(5) == 555);
  CHECK(t.get(6) == 6);
}

TEST_CASE("a failing pager store leaves the table as it was") {
  test::RamPager pager(kPage);
  Table t(7, 100, kFill, kPage, 2);
  for (uint64_t i = 0; i < 100; i++) t.set(i, uint32_t(i));
  pager.fail_after = 3;
  TableWriter w;
  w.set_pager(&pager);
  CHECK(t.save(w).code() == Errc::kFull);
  t.saved(false);
  CHECK(t.stats().dirty == 7);
  for (uint64_t i = 0; i < 100; i++) CHECK(t.get(i) == uint32_t(i));
}

TEST_CASE("a directory stream mounts a table that loads its pages on demand") {
  test::RamPager pager(kPage);
  Table t(3, 5000, 0, kPage, 8);
  std::mt19937 rng(11);
  std::vector<uint32_t> want(5000, 0);
  for (int k = 0; k < 3000; k++) {
    const uint64_t i = rng() % 5000;
    want[i] = rng();
    t.set(i, want[i]);
  }
  save_durable(t, &pager);
  // A second, incremental save writes only the pages changed since.
  const uint64_t before = pager.stores;
  t.set(17, 1);
  want[17] = 1;
  t.set(4999, 2);
  want[4999] = 2;
  auto stream = save_durable(t, &pager);
  CHECK(pager.stores - before == 2);

  TableReader r(stream, &pager);
  Table m(3, 5000, 0, kPage, 8);
  REQUIRE(m.load(r).is_ok());
  REQUIRE(r.finish().is_ok());
  CHECK(m.stats().resident == 0);
  for (int k = 0; k < 20000; k++) {
    const uint64_t i = rng() % 5000;
    REQUIRE(m.get(i) == want[i]);
  }
  CHECK(m.stats().resident <= 8);
}

TEST_CASE("relocate_all rewrites every homed page and the directory becomes one run") {
  test::RamPager pager(kPage);
  Table t(3, 320, 0, kPage, 2);
  for (uint64_t i = 0; i < 320; i += 16) t.set(i, uint32_t(i + 1));
  save_durable(t, &pager);
  t.set(33, 9);  // page 2 dirty: the next incremental save breaks the run
  pager.relocate = true;
  const uint64_t before = pager.stores;
  auto stream = save_durable(t, &pager);
  CHECK(pager.stores - before == 20);
  TableReader r(stream, &pager);
  r.tag("TPAG");
  r.u32();
  r.u64();
  r.u32();
  r.u32();
  CHECK(r.u8() == 2);     // a directory
  CHECK(r.u64() == 0);    // of a table whose codec counts nothing
  CHECK(r.u32() == 1);  // one run of 20 consecutive homes
}

TEST_CASE("an inline stream round-trips without a pager") {
  Table t(3, 100, 7, kPage, 2);
  t.set(0, 1);
  t.set(99, 2);
  auto stream = save_durable(t, nullptr);
  TableReader r(stream);
  Table m(3, 100, 7, kPage, 2);
  REQUIRE(m.load(r).is_ok());
  REQUIRE(r.finish().is_ok());
  CHECK(m.get(0) == 1);
  CHECK(m.get(50) == 7);
  CHECK(m.get(99) == 2);
  CHECK(t.stats().dirty == 2);  // an inline save gives no home: the pages stay dirty
}

TEST_CASE("a page that fails its check is an error, never its bytes") {
  test::RamPager pager(kPage);
  Table t(3, 100, 0, kPage, 1);
  for (uint64_t i = 0; i < 100; i++) t.set(i, uint32_t(i + 100));
  auto stream = save_durable(t, &pager);
  pager.pages[2].bad = true;
  TableReader r(stream, &pager);
  Table m(3, 100, 0, kPage, 1);
  REQUIRE(m.load(r).is_ok());
  CHECK(m.get(1) == 101);
  CHECK(m.get(2 * 16) == 0);  // the fill value, with the error
  CHECK(m.status().code() == Errc::kCorrupt);
  uint32_t& junk = m.ref(2 * 16 + 1);
  junk = 5;
  CHECK(m.get(2 * 16 + 1) == 0);
}

TEST_CASE("hostile table streams are refused naming the table") {
  test::RamPager pager(kPage);
  Table t(3, 100, 0, kPage, 1);
  for (uint64_t i = 0; i < 100; i++) t.set(i, uint32_t(i));
  auto stream = save_durable(t, &pager);
  SECTION("another table's section") {
    TableReader r(stream, &pager);
    Table m(4, 100, 0, kPage, 1);
    CHECK(m.load(r).code() == Errc::kCorrupt);
  }
  SECTION("no pager for a directory") {
    TableReader r(stream);
    Table m(3, 100, 0, kPage, 1);
    CHECK(m.load(r).code() == Errc::kCorrupt);
  }
  SECTION("every truncation") {
    for (size_t n = 0; n < stream.size(); n++) {
      std::vector<uint8_t> cut(stream.begin(), stream.begin() + long(n));
      TableReader r(cut, &pager);
      Table m(3, 100, 0, kPage, 1);
      Status st = m.load(r);
      if (st.is_ok()) st = r.finish();
      REQUIRE(st.code() == Errc::kCorrupt);
    }
  }
  SECTION("every byte flipped: an error or a table whose pages all verify or fail cleanly") {
    for (size_t n = 0; n < stream.size(); n++) {
      auto bad = stream;
      bad[n] ^= 0x5A;
      TableReader r(bad, &pager);
      Table m(3, 100, 0, kPage, 1);
      Status st = m.load(r);
      if (st.is_ok()) st = r.finish();
      if (!st.is_ok()) continue;
      for (uint64_t i = 0; i < 100; i++) {
        const uint32_t v = m.get(i);
        if (m.status().is_ok()) REQUIRE((v == uint32_t(i) || v == 0));
      }
    }
  }
}

// Folding: 2 KiB table pages of u32 (512 entries), so that a page with a few changed entries
// is sparse (its entries cost less RAM one by one than the page).
constexpr uint32_t kBigPage = 2048;

// Every entry i set to i, then saved durably: every page homed and clean.
void home_identity(Table& t, TablePager& pager) {
  for (uint64_t i = 0; i < t.size(); i++) t.set(i, uint32_t(i));
  save_durable(t, &pager);
}

TEST_CASE("fold keeps a sparse dirty page's changed entries and drops the page; a dense page "
          "stays") {
  test::RamPager pager(kBigPage);
  Table t(5, 512 * 8, kFill, kBigPage, 2);
  home_identity(t, pager);
  // Eight dirty pages: six with two changed entries, two with every entry changed.
  for (uint32_t p = 0; p < 6; p++) {
    t.set(p * 512 + 1, 1000 + p);
    t.ref(p * 512 + 7) += 1;
  }
  for (uint64_t i = 6 * 512; i < t.size(); i++) t.set(i, uint32_t(i * 2));
  CHECK(t.stats().dirty == 8);
  t.fold();
  const PagedTableStats st = t.stats();
  CHECK(st.dirty == 2);  // the dense pages (no sparse one left to fold)
  CHECK(st.folds == 6);
  CHECK(st.folded_entries == 12);
  CHECK(st.folded_pages == 6);
  CHECK(t.ram_bytes() < 4 * 512 * 4 + 6 * 512 * 4);
  // Reads see the folded entries, with or without their page resident again.
  for (uint32_t p = 0; p < 6; p++) {
    CHECK(t.get(p * 512 + 1) == 1000 + p);
    CHECK(t.get(p * 512 + 7) == p * 512 + 8);
    CHECK(t.get(p * 512 + 2) == p * 512 + 2);  // (loads the page's home)
    CHECK(t.get(p * 512 + 1) == 1000 + p);
  }
  // A folded entry's reference is the map's: writes through it stick.
  t.ref(1) = 77;
  CHECK(t.get(1) == 77);
  // The save rebuilds each folded page from its home; a fresh table mounted from the stream
  // reads the same, and the folded entries are gone.
  auto stream = save_durable(t, &pager);
  CHECK(t.stats().folded_entries == 0);
  CHECK(t.stats().dirty == 0);
  TableReader r(stream, &pager);
  Table m(5, 512 * 8, kFill, kBigPage, 2);
  REQUIRE(m.load(r).is_ok());
  for (uint64_t i = 0; i < t.size(); i++) {
    uint32_t want = i >= 6 * 512 ? uint32_t(i * 2) : uint32_t(i);
    if (i % 512 == 1 && i < 6 * 512) want = 1000 + uint32_t(i / 512);
    if (i % 512 == 7 && i < 6 * 512) want = uint32_t(i + 1);
    if (i == 1) want = 77;
    REQUIRE(t.get(i) == want);
    REQUIRE(m.get(i) == want);
  }
}

TEST_CASE("dense dirty pages a fold left defer the next pass until half as many again are "
          "dirty") {
  test::RamPager pager(kBigPage);
  Table t(5, 512 * 12, kFill, kBigPage, 2);
  home_identity(t, pager);
  auto dense = [&](uint32_t p) {
    for (uint32_t k = 0; k < 512; k++) t.set(p * 512 + k, 7);
  };
  for (uint32_t p = 0; p < 4; p++) dense(p);
  t.fold();  // four dense pages: nothing to fold; the next pass waits for 4 + 2 dirty pages
  CHECK(t.stats().folds == 0);
  CHECK(t.stats().dirty == 4);
  t.set(4 * 512, 1);
  t.fold();
  t.set(5 * 512, 1);
  t.fold();
  CHECK(t.stats().folds == 0);  // 6 dirty: not past the deferred bound
  t.set(6 * 512, 1);
  t.fold();  // 7: a pass folds the three sparse pages
  CHECK(t.stats().folds == 3);
  CHECK(t.stats().dirty == 4);
  CHECK(t.get(5 * 512) == 1);
  CHECK(t.get(3 * 512 + 9) == 7);
  // A durable save makes everything clean and the bound the cache's again.
  save_durable(t, &pager);
  for (uint32_t p = 7; p < 10; p++) t.set(p * 512, 2);
  t.fold();
  CHECK(t.stats().folds == 5);  // 3 dirty > 2: folded down to 1
  CHECK(t.stats().dirty == 1);
  for (uint32_t p = 7; p < 10; p++) CHECK(t.get(p * 512) == 2);
}

TEST_CASE("fold without a pager keeps every dirty page (nothing could bring it back)") {
  Table t(5, 512 * 4, kFill, kBigPage, 1);
  for (uint32_t p = 0; p < 4; p++) t.set(p * 512, p);
  t.fold();
  CHECK(t.stats().dirty == 4);
  CHECK(t.stats().folds == 0);
}

// Codecs that count entries (PagedTable's counted entries): one as the ppmt does (everything but
// the fill), one that also counts the fill value (0xFFFFFFFF is a multiple of 3).
struct NotFillCodec : U32Codec {
  static bool counted(uint32_t v) { return v != kFill; }
};
struct ThirdsCodec : U32Codec {
  static bool counted(uint32_t v) { return v % 3 == 0; }
};

template <class Codec>
uint64_t model_count(const std::vector<uint32_t>& model) {
  uint64_t c = 0;
  if constexpr (PagedTable<Codec>::kCounts)
    for (uint32_t v : model) c += Codec::counted(v);
  return c;
}

// A directory stream as format 1 wrote it: mode 1, no count (the u64 after the mode removed).
std::vector<uint8_t> without_count(std::vector<uint8_t> stream) {
  const uint8_t tag[4] = {'T', 'P', 'A', 'G'};
  const auto at = std::search(stream.begin(), stream.end(), tag, tag + 4);
  REQUIRE(at != stream.end());
  const auto mode = at + 24;
  REQUIRE(*mode == 2);
  *mode = 1;
  stream.erase(mode + 1, mode + 9);
  return stream;
}

// The model check: random sets, increments through references, reads, folds, durable,
// abandoned and failing saves, over a table of fill pages and homed pages with a two-page
// cache; after every durable save a table mounted from its stream (and from that stream as
// format 1 wrote it, without the count) reads the model. At every step the counted entries
// equal the model's, with no page read — for a codec that counts nothing, one that counts
// what the ppmt does, and one that counts the fill.
TEMPLATE_TEST_CASE("a table that folds reads, saves and counts exactly what a plain array holds",
                   "", U32Codec, NotFillCodec, ThirdsCodec) {
  using Counted = PagedTable<TestType>;
  for (uint64_t seed = 1; seed <= 12; seed++) {
    INFO("seed " << seed);
    std::mt19937_64 rng(seed);
    test::RamPager pager(kBigPage);
    const uint64_t n = 512 * 12 + 100;
    Counted t(9, n, kFill, kBigPage, 2);
    std::vector<uint32_t> model(n, kFill);
    REQUIRE(t.counted_entries() == model_count<TestType>(model));
    auto value = [&] { return rng() % 4 == 0 ? kFill : uint32_t(rng() % 1000); };
    // Half the pages homed first.
    for (uint64_t i = 0; i < n / 2; i++) t.set(i, model[i] = value());
    {
      TableWriter w;
      w.set_pager(&pager);
      REQUIRE(t.save(w).is_ok());
      t.saved(true);
    }
    uint64_t folds = 0, folded_saves = 0, upgrades = 0;
    for (int step = 0; step < 3000; step++) {
      const uint64_t i = rng() % n;
      switch (rng() % 10) {
        case 0: case 1: case 2:
          t.set(i, model[i] = value());
          break;
        case 3:
          t.ref(i) += 3;
          model[i] += 3;
          break;
        case 4: case 5: case 6:
          REQUIRE(t.get(i) == model[i]);
          break;
        case 7:
          t.fold();
          folds = t.stats().folds;
          break;
        case 8: {
          if (rng() % 4 != 0) break;
          folded_saves += t.stats().folded_entries != 0;
          const bool fail = rng() % 3 == 0;
          pager.fail_after = fail ? int64_t(pager.stores + rng() % 3) : -1;
          TableWriter w;
          w.set_pager(&pager);
          const Status st = t.save(w);
          pager.fail_after = -1;
          const bool durable = st.is_ok() && rng() % 3 != 0;
          t.saved(durable);
          if (!durable) break;
          REQUIRE(t.stats().folded_entries == 0);
          // The count comes from the directory (no load), then the entries from their pages.
          const uint64_t loads = pager.loads;
          TableReader r(w.data(), &pager);
          Counted m(9, n, kFill, kBigPage, 2);
          REQUIRE(m.load(r).is_ok());
          REQUIRE(pager.loads == loads);
          REQUIRE(m.counted_entries() == model_count<TestType>(model));
          for (uint64_t k = 0; k < n; k++) REQUIRE(m.get(k) == model[k]);
          // Format 1's directory: counted at load from the pages, then counting on.
          const auto old = without_count(w.data());
          TableReader r1(old, &pager);
          Counted u(9, n, kFill, kBigPage, 2);
          REQUIRE(u.load(r1).is_ok());
          REQUIRE(r1.finish().is_ok());
          REQUIRE(u.counted_entries() == model_count<TestType>(model));
          upgrades++;
          break;
        }
        default:
          for (uint64_t k = i; k < std::min(n, i + 40); k++) REQUIRE(t.get(k) == model[k]);
      }
      REQUIRE(t.status().is_ok());
      const uint64_t loads = pager.loads;
      REQUIRE(t.counted_entries() == model_count<TestType>(model));
      REQUIRE(pager.loads == loads);
    }
    for (uint64_t k = 0; k < n; k++) REQUIRE(t.get(k) == model[k]);
    CHECK(folds > 0);
    CHECK(folded_saves > 0);
    CHECK(upgrades > 0);
    // Inline (no pager): the mounted pages are dirty, their home the fill.
    TableWriter w;
    REQUIRE(t.save(w).is_ok());
    TableReader r(w.data());
    Counted m(9, n, kFill, kBigPage, 2);
    REQUIRE(m.load(r).is_ok());
    REQUIRE(m.counted_entries() == model_count<TestType>(model));
    for (uint64_t k = 0; k < n; k += 7) m.set(k, model[k] = value());
    REQUIRE(m.counted_entries() == model_count<TestType>(model));
  }
}

}  // namespace
}  // namespace pdl
