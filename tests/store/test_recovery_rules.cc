// test_recovery_rules.cc — PDL recovery's tie rule ([PDL] Fig. 7), pinned on pages programmed
// directly into the emulator.
//
// GC copies a page keeping its sequence number and erases the victim afterwards, so a cut in
// between leaves two copies with equal seqs. Recovery keeps one: the first one its scan sees
// (the lower block) — unless that one is in a block ending in a torn page (the head of a cut
// collection, never appended to), when the copy in the whole block wins. The same rule serves
// base pages and differentials. Each case formats an empty store, programs the copies (and a
// torn page) with their spare headers (docs/format.md §3) and asks the mounted store which
// copy it keeps (PageStore::locate).
#include <catch2/catch.hpp>

#include <vector>

#include "flash/codec/differential.h"
#include "flash/common/crc32c.h"
#include "flash/image/open_store.h"
#include "flash/pdl/record.h"
#include "flash/store/page_store.h"
#include "flash/store/spare.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using Page = std::vector<uint8_t>;

constexpr Lpn kLpn = 7;

struct Chip {
  Geometry g = pdl::test::geometry(512, 32, 4, 16);
  std::unique_ptr<EmulatedNand> emu = pdl::test::make_ram_nand(g);

  Chip() {
    std::unique_ptr<PageStore> s;
    REQUIRE(format_store(*emu, StoreParams{}, &s).is_ok());  // an empty PDL store
  }
  Ppa first_page(uint32_t block) const { return block * g.pages_per_block; }

  // A whole page with its header (a commit record of its own, as kPerPage programs them);
  // `stored`, if given, is what reaches the chip instead of `data` (the header still describes
  // `data`: a page damaged after its program).
  void program(Ppa ppa, const Page& data, SpareHeader h, const Page* stored = nullptr) {
    h.data_crc = crc32c(data.data(), data.size());
    h.commit = true;
    Page spare(g.page_spare);
    spare_encode(h, spare);
    REQUIRE(emu->program(ppa, stored ? *stored : data, spare).is_ok());
  }
  void base_page(Ppa ppa, const Page& data, uint64_t seq, Lpn lpn = kLpn,
                 const Page* stored = nullptr) {
    SpareHeader h;
    h.type = PageType::kBase;
    h.set_logical_page(lpn);
    h.seq = seq;
    program(ppa, data, h, stored);
  }
  // A differential page holding one record: `page` against `base`.
  void differential_page(Ppa ppa, const Page& base, const Page& page, uint64_t seq) {
    Page runs(g.page_data);
    const size_t n = diff_encode(base, page, runs);
    REQUIRE(n != kDiffTooBig);
    RecordView r;
    r.lpn = kLpn;
    r.seq = seq;
    r.runs = std::span<const uint8_t>(runs.data(), n);
    Page data(g.page_data, 0xFF);
    record_encode(r, data.data());
    SpareHeader h;
    h.type = PageType::kDifferential;
    h.set_record_count(1);
    h.seq = seq;
    h.aux = uint32_t(r.size());
    program(ppa, data, h);
  }
  // A page a cut tore: programmed, its header failing its CRC beyond repair.
  void torn_page(Ppa ppa) {
    Page spare(g.page_spare, 0xFF);
    for (uint32_t i = 1; i < kSpareBytesUsed; i++) spare[i] = 0;  // (byte 0: bad-block mark)
    REQUIRE(emu->program(ppa, Page(g.page_data, 0x5A), spare).is_ok());
  }
  std::unique_ptr<PageStore> mount() {
    std::unique_ptr<PageStore> s;
    REQUIRE(mount_store(*emu, &s).is_ok());
    REQUIRE(s->check().is_ok());
    return s;
  }
  Page read(PageStore& s) const {
    Page got(g.page_data);
    REQUIRE(s.read(kLpn, got).is_ok());
    return got;
  }
};

// `base` with a few bytes changed.
Page changed(Page base) {
  for (size_t i = 0; i < 5; i++) base[40 + 50 * i] ^= 0xA5;
  return base;
}

}  // namespace

TEST_CASE("of two base pages with equal sequence numbers, recovery keeps the one in the lower "
          "block",
          "[store][recovery]") {
  Chip c;
  auto rng = pdl::test::seeded_rng(0x7e1);
  const Page x = pdl::test::random_page(rng, c.g.page_data);
  c.base_page(c.first_page(3), x, 5);
  c.base_page(c.first_page(5), x, 5);
  auto s = c.mount();
  CHECK(s->locate(kLpn).base == c.first_page(3));
  CHECK((c.read(*s) == x));
}

TEST_CASE("of two base pages with equal sequence numbers, the one in a block ending in a torn "
          "page loses",
          "[store][recovery][powerloss]") {
  const bool torn_first = GENERATE(true, false);
  INFO("the torn block scanned " << (torn_first ? "first" : "last"));
  Chip c;
  auto rng = pdl::test::seeded_rng(0x7e2);
  const Page x = pdl::test::random_page(rng, c.g.page_data);
  const uint32_t torn = torn_first ? 3 : 5, whole = torn_first ? 5 : 3;
  c.base_page(c.first_page(torn), x, 5);
  c.torn_page(c.first_page(torn) + 1);
  c.base_page(c.first_page(whole), x, 5);
  auto s = c.mount();
  CHECK(s->locate(kLpn).base == c.first_page(whole));
  CHECK((c.read(*s) == x));
}

TEST_CASE("of two base pages with equal sequence numbers, the one in a block whose erase was cut "
          "part-way loses, even with an intact header over part-erased data",
          "[store][recovery][powerloss]") {
  // An erase interrupted in the middle of a page (a host process killed in the emulator's write
  // of the block; a real chip's erase cut) leaves the pages before it erased and that page's
  // data partly erased under its intact spare header.
  const bool cut_first = GENERATE(true, false);
  INFO("the part-erased block scanned " << (cut_first ? "first" : "last"));
  Chip c;
  auto rng = pdl::test::seeded_rng(0x7e4);
  const Page x = pdl::test::random_page(rng, c.g.page_data);
  const uint32_t cut = cut_first ? 3 : 5, whole = cut_first ? 5 : 3;
  // Page 0 of the cut block erased; page 1 the copy, its data's first half erased.
  Page part_erased = x;
  std::fill(part_erased.begin(), part_erased.begin() + part_erased.size() / 2, uint8_t(0xFF));
  c.base_page(c.first_page(cut) + 1, x, 5, kLpn, &part_erased);
  // The rest of the block still programmed (an older page of another lpn), so the copy is not
  // the block's last page, whose data recovery checks.
  c.base_page(c.first_page(cut) + 2, pdl::test::random_page(rng, c.g.page_data), 4, kLpn + 1);
  c.base_page(c.first_page(whole), x, 5);
  auto s = c.mount();
  CHECK(s->locate(kLpn).base == c.first_page(whole));
  CHECK((c.read(*s) == x));
}

TEST_CASE("of two differentials with equal sequence numbers, the one in a block ending in a "
          "torn page loses",
          "[store][recovery][powerloss]") {
  const bool torn_first = GENERATE(true, false);
  INFO("the torn block scanned " << (torn_first ? "first" : "last"));
  Chip c;
  auto rng = pdl::test::seeded_rng(0x7e3);
  const Page x = pdl::test::random_page(rng, c.g.page_data), y = changed(x);
  c.base_page(c.first_page(2), x, 5);
  const uint32_t torn = torn_first ? 3 : 5, whole = torn_first ? 5 : 3;
  c.differential_page(c.first_page(torn), x, y, 6);
  c.torn_page(c.first_page(torn) + 1);
  c.differential_page(c.first_page(whole), x, y, 6);
  auto s = c.mount();
  CHECK(s->locate(kLpn).base == c.first_page(2));
  CHECK(s->locate(kLpn).diff == c.first_page(whole));
  CHECK((c.read(*s) == y));
}
