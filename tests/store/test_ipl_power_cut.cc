// test_ipl_power_cut.cc — the IPU / IPL engine (flash/ipl/) cut at its most fragile steps.
//
// The review of the engine (with tests/fuzz/ipl_crash_fuzz.cc) found no case where the current
// code breaks the PageStore contract; these deterministic tests pin the cases the review found
// most fragile, so that a later change reopening them fails here at once rather than in a rare
// fuzz seed. Each names the mechanism it guards:
//   * the marker page of an empty merge: without it, a cut at the erase of the old block (a
//     random subset of its pages erased) lets the remains win — an IPL page showing its data
//     page without the log records that were on the erased log page (a version older than the
//     synced one), or, under IPU, an older stale block of the logical block coming back;
//   * a log write of k sectors cut after j < k: the page stays old, and writes appended after
//     the remount (same block, fresh sequence numbers) are not mistaken for its missing part;
//   * a torn (garbage) data slot: later writes of its page go to the log (IPL, with a reset) or
//     through a merge (IPU), never onto the torn page.
#include <catch2/catch.hpp>

#include <functional>
#include <optional>

#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "tests/support/cut_at_nand.h"
#include "tests/support/test_util.h"

using namespace pdl;
using pdl::test::CutAt;

namespace {

using Page = std::vector<uint8_t>;
using Value = std::optional<Page>;


// A tear seed whose interrupted erase erases exactly the pages `erased` names (the emulator
// erases page p when the p-th draw of mt19937_64(seed) is odd).
uint64_t erase_pattern_seed(const std::vector<bool>& erased) {
  for (uint64_t seed = 1;; seed++) {
    std::mt19937_64 r(seed);
    bool match = true;
    for (bool e : erased) match = match && (((r() & 1) != 0) == e);
    if (match) return seed;
  }
}

// The block holding lpn's data page now (RAM tables, no flash operation).
uint32_t block_of(PageStore& s, Lpn lpn) {
  return s.locate(lpn).base / s.nand().geometry().pages_per_block;
}

Value read_value(PageStore& s, Lpn l) {
  Page got(s.page_size());
  const Status st = s.read(l, got);
  INFO("lpn " << l << ": " << st.to_string());
  REQUIRE((st.is_ok() || st.is(Errc::kNotFound)));
  return st.is_ok() ? Value(got) : Value();
}

Page filled(uint32_t size, uint8_t v) { return Page(size, v); }

}  // namespace

TEST_CASE("IPL: an empty merge's marker outranks the old block when its erase is cut",
          "[store][ipl][powerloss][regression]") {
  // 512-byte pages, 4 pages per block, one log page: one log sector per block, 3 data pages.
  std::unique_ptr<EmulatedNand> emu = pdl::test::make_ram_nand(pdl::test::geometry(512, 32, 4, 12));
  CutAt nand(*emu);
  StoreParams p;
  p.method = Method::kIpl;
  p.log_region = 512;
  p.logical_pages = 6;
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(nand, p, &s).is_ok());
  const uint32_t psz = s->page_size();
  // Logical block 0: three first writes (data pages), then a change of lpn 0 (the only log
  // sector), synced: lpn 0's synced value lives in data page + log page together.
  REQUIRE(s->write(0, filled(psz, 0x11)).is_ok());
  REQUIRE(s->write(1, filled(psz, 0x22)).is_ok());
  REQUIRE(s->write(2, filled(psz, 0x33)).is_ok());
  Page v2 = filled(psz, 0x11);
  v2[100] = 0x99;
  REQUIRE(s->write(0, v2).is_ok());
  REQUIRE(s->stats().log_sectors == 1);
  REQUIRE(s->sync().is_ok());
  // Trim the whole logical block; the sync finds the log region full and merges the block
  // with nothing left in it. Cut the old block's erase so that it keeps its data pages and
  // loses its log page.
  const uint32_t old = block_of(*s, 0);
  for (Lpn l = 0; l < 3; l++) REQUIRE(s->trim(l).is_ok());
  nand.tear = Tear::kRandomBits;
  nand.tear_seed = erase_pattern_seed({false, false, false, true});
  nand.when = [&](bool erase, bool, uint32_t b) { return erase && b == old; };
  REQUIRE(s->sync().is(Errc::kPowerCut));
  REQUIRE(nand.fired);
  s.reset();
  emu->restore_power();
  REQUIRE(mount_store(nand, &s).is_ok());
  REQUIRE(s->check().is_ok());
  // Allowed: the synced values, or unmapped (the trims were being synced). Never 0x11 alone:
  // that version of lpn 0 was overwritten before the sync.
  const Value v0 = read_value(*s, 0);
  CHECK((!v0 || *v0 == v2));
  CHECK(v0 != Value(filled(psz, 0x11)));
  for (Lpn l = 1; l < 3; l++) {
    const Value v = read_value(*s, l);
    CHECK((!v || *v == filled(psz, uint8_t(0x11 * (l + 1)))));
  }
}

TEST_CASE("IPU: an empty merge's marker keeps an older stale block from coming back",
          "[store][ipu][powerloss][regression]") {
  std::unique_ptr<EmulatedNand> emu = pdl::test::make_ram_nand(pdl::test::geometry(512, 32, 4, 12));
  CutAt nand(*emu);
  StoreParams p;
  p.method = Method::kIpu;
  p.logical_pages = 4;  // one logical block
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(nand, p, &s).is_ok());
  const uint32_t psz = s->page_size();
  auto remount = [&] {
    s.reset();
    emu->restore_power();
    REQUIRE(mount_store(nand, &s).is_ok());
    REQUIRE(s->check().is_ok());
  };
  // A few rewrites first, so that the logical block's blocks sit behind free ones in the FIFO
  // and the stale block made below is not the next one erased for reuse.
  REQUIRE(s->write(0, filled(psz, 0x01)).is_ok());
  for (uint8_t v = 2; v < 5; v++) REQUIRE(s->write(0, filled(psz, v)).is_ok());
  REQUIRE(s->write(1, filled(psz, 0x10)).is_ok());
  REQUIRE(s->sync().is_ok());
  // Rewrite lpn 0 (a merge) and cut the old block's erase leaving all its pages: a stale,
  // complete older version of the logical block stays on flash.
  const uint32_t stale = block_of(*s, 0);
  nand.tear = Tear::kRandomBits;
  nand.tear_seed = erase_pattern_seed({false, false, false, false});
  nand.when = [&](bool erase, bool, uint32_t b) { return erase && b == stale; };
  REQUIRE(s->write(0, filled(psz, 0x05)).is(Errc::kPowerCut));
  REQUIRE(nand.fired);
  remount();
  REQUIRE(read_value(*s, 0) == Value(filled(psz, 0x05)));
  // Trim everything and sync: an empty merge (marker), and the current block is erased whole.
  REQUIRE(s->trim(0).is_ok());
  REQUIRE(s->trim(1).is_ok());
  REQUIRE(s->sync().is_ok());
  remount();
  CHECK(read_value(*s, 0) == Value());
  CHECK(read_value(*s, 1) == Value());
}

TEST_CASE("IPL: a log write cut after j of its k sectors leaves the page old",
          "[store][ipl][powerloss][regression]") {
  // 4 KiB pages: a log sector carries 256 bytes of records (100 in 128-byte sectors), so a
  // page's worth of changes takes many sectors; 8 sectors per log page (32 of 128 bytes, on a
  // chip allowing as many programs per page), 2 log pages.
  const uint32_t j = GENERATE(1u, 2u, 5u);
  const Tear tear = GENERATE(Tear::kNone, Tear::kPrefix, Tear::kRandomBits);
  const uint32_t log_sector = GENERATE(512u, 128u);
  INFO("cut at sector " << j << " tear " << int(tear) << ", log sectors of " << log_sector);
  Geometry g = pdl::test::geometry(4096, 128, 8, 10);
  g.partial_programs = 4096 / log_sector;
  std::unique_ptr<EmulatedNand> emu = pdl::test::make_ram_nand(g);
  CutAt nand(*emu);
  StoreParams p;
  p.method = Method::kIpl;
  p.log_region = 2 * 4096;
  p.log_sector = log_sector;
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(nand, p, &s).is_ok());
  auto rng = pdl::test::seeded_rng(0x1b1 + j);
  const uint32_t psz = s->page_size();
  const Page v1 = pdl::test::random_page(rng, psz);
  REQUIRE(s->write(0, v1).is_ok());
  REQUIRE(s->write(1, pdl::test::random_page(rng, psz)).is_ok());
  REQUIRE(s->sync().is_ok());
  // Eight changed runs of 200 bytes: about seven sectors of log (seventeen small ones; more
  // than j + 1), within the region's sixteen (sixty-four).
  Page v2 = v1;
  for (uint32_t c = 0; c < 8; c++)
    for (uint32_t i = 0; i < 200; i++) v2[c * 500 + i] ^= 0x5A;
  const uint64_t before = s->stats().log_sectors;
  uint32_t programs = 0;
  nand.tear = tear;
  nand.tear_seed = 7 + j;
  nand.when = [&](bool erase, bool, uint32_t) { return !erase && programs++ == j; };
  REQUIRE(s->write(0, v2).is(Errc::kPowerCut));
  REQUIRE(s->stats().log_sectors == before + j);
  s.reset();
  emu->restore_power();
  MountReport rep;
  REQUIRE(mount_store(nand, &s, &rep).is_ok());
  REQUIRE(s->check().is_ok());
  const Value got = read_value(*s, 0);
  // Old, whole (the write returned an error: the new version is allowed only if all of it got
  // through — a prefix tear of the last sector cannot complete a write of more sectors).
  REQUIRE(got == Value(v1));
  // Appending after the torn write: first a write of lpn 0 of the same shape (as many sectors,
  // same slot and flags — only its sequence number and sector indexes tell it from the torn
  // write's missing part), then small changes of lpns 0 and 1; each reads back exactly, also
  // after another remount.
  Page v3 = v1, w = *read_value(*s, 1);
  for (uint32_t c = 0; c < 8; c++)
    for (uint32_t i = 0; i < 200; i++) v3[c * 500 + i] ^= 0xA5;
  REQUIRE(s->write(0, v3).is_ok());
  REQUIRE(read_value(*s, 0) == Value(v3));
  for (int round = 0; round < 4; round++) {
    v3[rng() % psz] ^= 0xFF;
    w[rng() % psz] ^= 0xFF;
    REQUIRE(s->write(0, v3).is_ok());
    REQUIRE(s->write(1, w).is_ok());
    REQUIRE(read_value(*s, 0) == Value(v3));
    REQUIRE(read_value(*s, 1) == Value(w));
  }
  s.reset();
  REQUIRE(mount_store(nand, &s).is_ok());
  REQUIRE(s->check().is_ok());
  CHECK(read_value(*s, 0) == Value(v3));
  CHECK(read_value(*s, 1) == Value(w));
}

TEST_CASE("IPU and IPL: writes to a torn data slot never program the torn page again",
          "[store][ipl][ipu][powerloss][regression]") {
  const Method method = GENERATE(Method::kIpu, Method::kIpl);
  const Tear tear = GENERATE(Tear::kPrefix, Tear::kRandomBits);
  INFO("method " << int(method) << " tear " << int(tear));
  std::unique_ptr<EmulatedNand> emu = pdl::test::make_ram_nand(pdl::test::geometry(512, 32, 4, 12));
  CutAt nand(*emu);
  StoreParams p;
  p.method = method;
  if (method == Method::kIpl) p.log_region = 512;
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(nand, p, &s).is_ok());
  auto rng = pdl::test::seeded_rng(0x70e + int(tear));
  const uint32_t psz = s->page_size();
  const Page a = pdl::test::random_page(rng, psz);
  REQUIRE(s->write(0, a).is_ok());
  REQUIRE(s->sync().is_ok());
  // The first write of lpn 1 (slot 1 of the same block) is torn.
  nand.tear = tear;
  nand.tear_seed = 3;
  nand.when = [&](bool erase, bool, uint32_t) { return !erase; };
  REQUIRE(s->write(1, pdl::test::random_page(rng, psz)).is(Errc::kPowerCut));
  s.reset();
  emu->restore_power();
  MountReport rep;
  REQUIRE(mount_store(nand, &s, &rep).is_ok());
  REQUIRE(s->check().is_ok());
  const Value torn = read_value(*s, 1);
  if (rep.torn_pages == 0) SUCCEED("the tear left the page erased or whole this time");
  // Rewrite lpn 1 a few times (small and whole changes), with remounts; reads stay exact.
  Page b = torn ? *torn : pdl::test::random_page(rng, psz);
  for (int round = 0; round < 4; round++) {
    b[rng() % psz] ^= 0x3C;
    REQUIRE(s->write(1, b).is_ok());
    REQUIRE(read_value(*s, 1) == Value(b));
    REQUIRE(read_value(*s, 0) == Value(a));
    s.reset();
    REQUIRE(mount_store(nand, &s).is_ok());
    REQUIRE(s->check().is_ok());
    REQUIRE(read_value(*s, 1) == Value(b));
  }
}
