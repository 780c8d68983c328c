// test_ipl.cc — IPL and IPU behaviours the shared store suites do not pin down.
//
// The model, power-cut, full-device, cost and inspection suites run IPU and IPL through the
// PageStore API (store_matrix.h). This file checks what makes them IPL and IPU:
//   * a noted write costs ⌈log bytes / (page/16)⌉ sector programs and no flash read; the same
//     write without notes reads the previous version (data page + used log pages) first;
//   * reads cost the data page plus every used log page of the block, and only when the page
//     has log records;
//   * a full log region merges the block ([IPL] Alg. 1): one erase, the live pages
//     programmed once, the log region empty again;
//   * an IPU overwrite is D-1 reads, D programs and one erase;
//   * trims become one unmap sector at sync; a trimmed page written again starts from zeros;
//   * noted writes (update logs, possibly overlapping) read back exactly, across remounts;
//   * a write of several sectors cut after any of them leaves the old page, whole; a merge cut
//     at any operation leaves every synced page;
//   * log sectors of 256 and 128 bytes (log_sector, on a chip with enough NOP): a region holds
//     page / log_sector sectors per page, a sector carries log_sector - 28 bytes of records, and
//     the behaviours above hold for them too.
#include <catch2/catch.hpp>

#include <map>

#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using Page = std::vector<uint8_t>;

// 2 KiB pages, 16 pages per block, 12 blocks; IPL with a 4-page log region (16 sectors of 512
// bytes). NOP 16, so that 128-byte log sectors (16 per page) may be programmed.
Geometry ipl_geometry() {
  Geometry g = test::geometry(2048, 64, 16, 12);
  g.partial_programs = 16;
  return g;
}

std::unique_ptr<PageStore> make_store(EmulatedNand& nand, Method m, uint32_t log_pages = 4,
                                      uint32_t log_sector = 0) {
  StoreParams p;
  p.method = m;
  p.log_region = m == Method::kIpl ? log_pages * nand.geometry().page_data : 0;
  p.log_sector = log_sector;
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(nand, p, &s).is_ok());
  return s;
}

// Changes `len` bytes at `off` (each to a different value) and notes the update.
void change(PageStore& s, Lpn l, Page& p, uint32_t off, uint32_t len, bool note) {
  for (uint32_t i = 0; i < len; i++) p[off + i] = uint8_t(p[off + i] + 1 + i % 250);
  if (note) s.note_update(l, off, len);
}

NandCounters delta(const Nand& n, const NandCounters& before) { return n.counters() - before; }

}  // namespace

TEST_CASE("a noted IPL write programs one sector per log buffer and reads nothing",
          "[ipl]") {
  auto nand = test::make_ram_nand(ipl_geometry());
  auto s = make_store(*nand, Method::kIpl);
  auto rng = test::seeded_rng(0x1b1);
  Page p = test::random_page(rng, 2048);
  REQUIRE(s->write(0, p).is_ok());  // first write: the data page, no log
  // One run of 40 bytes: 4 + 40 = 44 log bytes, one 128-byte buffer, one sector.
  change(*s, 0, p, 100, 40, true);
  NandCounters c0 = nand->counters();
  REQUIRE(s->write(0, p).is_ok());
  NandCounters d = delta(*nand, c0);
  CHECK(d.page_reads == 0);
  CHECK(d.programs == 1);
  // Three runs of 60 bytes: 3 x 64 = 192 log bytes → 2 buffers → 2 sector programs.
  for (uint32_t k = 0; k < 3; k++) change(*s, 0, p, 300 + 100 * k, 60, true);
  c0 = nand->counters();
  REQUIRE(s->write(0, p).is_ok());
  d = delta(*nand, c0);
  CHECK(d.page_reads == 0);
  CHECK(d.programs == 2);
  CHECK(s->stats().hinted_writes == 2);
  CHECK(s->stats().log_sectors == 3);
  // Without notes the store diffs: it reads the data page and the one used log page first.
  change(*s, 0, p, 1000, 40, false);
  c0 = nand->counters();
  REQUIRE(s->write(0, p).is_ok());
  d = delta(*nand, c0);
  CHECK(d.page_reads == 2);
  CHECK(d.programs == 1);
  Page got(2048);
  c0 = nand->counters();
  REQUIRE(s->read(0, got).is_ok());
  CHECK(got == p);
  CHECK(delta(*nand, c0).page_reads == 2);  // data page + the block's one used log page
  // A page of the block without log records costs one read.
  REQUIRE(s->write(1, p).is_ok());
  c0 = nand->counters();
  REQUIRE(s->read(1, got).is_ok());
  CHECK(delta(*nand, c0).page_reads == 1);
}

TEST_CASE("a full IPL log region merges the block: one erase, live pages once, log empty",
          "[ipl]") {
  auto nand = test::make_ram_nand(ipl_geometry());
  auto s = make_store(*nand, Method::kIpl);  // 12 data pages, 4 log pages = 16 sectors
  auto rng = test::seeded_rng(0x1b2);
  std::map<Lpn, Page> model;
  for (Lpn l = 0; l < 12; l++) REQUIRE(s->write(l, model[l] = test::random_page(rng, 2048)).is_ok());
  REQUIRE(s->trim(11).is_ok());  // not live any more: the merge leaves it out
  model.erase(11);
  REQUIRE(s->sync().is_ok());  // the trim: one unmap sector
  for (int i = 0; i < 15; i++) {  // 15 more one-sector writes fill the 16 sectors
    const Lpn l = Lpn(i % 11);
    change(*s, l, model[l], uint32_t(8 * i), 8, true);
    REQUIRE(s->write(l, model[l]).is_ok());
  }
  CHECK(s->stats().merges == 0);
  change(*s, 3, model[3], 500, 8, true);
  const NandCounters c0 = nand->counters();
  REQUIRE(s->write(3, model[3]).is_ok());
  const NandCounters d = delta(*nand, c0);
  CHECK(s->stats().merges == 1);
  CHECK(s->stats().merge_pages == 11);
  CHECK(d.erases == 1);
  CHECK(d.programs == 11);                // the 11 live pages, the new page 3 among them
  CHECK(d.page_reads == 10 + 4);          // 10 other live data pages + 4 used log pages
  CHECK(s->costs().gc.erases == 1.0);     // IPL's merge is its garbage collection
  Page got(2048);
  for (Lpn l = 0; l < 12; l++) {
    const NandCounters r0 = nand->counters();
    const Status st = s->read(l, got);
    if (model.count(l)) {
      REQUIRE(st.is_ok());
      CHECK(got == model[l]);
      CHECK(delta(*nand, r0).page_reads == 1);  // merged: no log left
    } else {
      CHECK(st.is(Errc::kNotFound));
    }
  }
  REQUIRE(s->check().is_ok());
}

TEST_CASE("an IPU overwrite reads the block's other pages, programs them all, erases once",
          "[ipu]") {
  auto nand = test::make_ram_nand(ipl_geometry());
  auto s = make_store(*nand, Method::kIpu);  // 16 data pages per block
  auto rng = test::seeded_rng(0x1b3);
  std::map<Lpn, Page> model;
  for (Lpn l = 0; l < 16; l++) REQUIRE(s->write(l, model[l] = test::random_page(rng, 2048)).is_ok());
  NandCounters c0 = nand->counters();
  change(*s, 5, model[5], 0, 1, true);  // IPU ignores notes
  REQUIRE(s->write(5, model[5]).is_ok());
  NandCounters d = delta(*nand, c0);
  CHECK(d.page_reads == 15);
  CHECK(d.programs == 16);
  CHECK(d.erases == 1);
  CHECK(d.sim_us == 15 * 110 + 16 * 1010 + 1500);
  CHECK(s->costs().gc.erases == 0.0);  // the rewrite is the update: charged to the writer
  // A trim takes effect at sync: the block rewritten without the page.
  REQUIRE(s->trim(7).is_ok());
  c0 = nand->counters();
  REQUIRE(s->sync().is_ok());
  d = delta(*nand, c0);
  CHECK(d.programs == 15);
  CHECK(d.erases == 1);
  std::unique_ptr<PageStore> again;
  REQUIRE(mount_store(*nand, &again).is_ok());
  Page got(2048);
  for (Lpn l = 0; l < 16; l++) {
    const Status st = again->read(l, got);
    if (l == 7) {
      CHECK(st.is(Errc::kNotFound));
    } else {
      REQUIRE(st.is_ok());
      CHECK(got == model[l]);
    }
  }
}

TEST_CASE("IPL trims are one unmap sector at sync, and a trimmed page restarts from zeros",
          "[ipl]") {
  auto nand = test::make_ram_nand(ipl_geometry());
  auto s = make_store(*nand, Method::kIpl);
  auto rng = test::seeded_rng(0x1b4);
  for (Lpn l = 0; l < 6; l++) REQUIRE(s->write(l, test::random_page(rng, 2048)).is_ok());
  for (Lpn l : {1u, 2u, 4u}) REQUIRE(s->trim(l).is_ok());
  NandCounters c0 = nand->counters();
  REQUIRE(s->sync().is_ok());
  CHECK(delta(*nand, c0).programs == 1);
  CHECK(s->stats().tombstones == 1);
  // Page 2 written again: mostly zeros, so its log (runs against zeros, behind a reset) is short.
  Page p(2048, 0);
  p[10] = 7;
  p[2000] = 9;
  c0 = nand->counters();
  REQUIRE(s->write(2, p).is_ok());
  CHECK(delta(*nand, c0).programs == 1);
  CHECK(delta(*nand, c0).page_reads == 0);  // nothing to diff against: the page was trimmed
  std::unique_ptr<PageStore> again;
  REQUIRE(mount_store(*nand, &again).is_ok());
  Page got(2048);
  REQUIRE(again->read(2, got).is_ok());
  CHECK(got == p);
  CHECK(again->read(1, got).is(Errc::kNotFound));
  CHECK(again->read(4, got).is(Errc::kNotFound));
  REQUIRE(again->read(3, got).is_ok());
}

TEST_CASE("noted IPL writes, overlapping runs included, read back exactly across remounts",
          "[ipl]") {
  const uint32_t log_pages = GENERATE(1u, 4u, 12u);
  const uint32_t log_sector = GENERATE(512u, 256u, 128u);
  auto nand = test::make_ram_nand(ipl_geometry());
  auto s = make_store(*nand, Method::kIpl, log_pages, log_sector);
  INFO("log pages " << log_pages << ", log sectors of " << log_sector << " bytes");
  auto rng = test::seeded_rng(0x1b5 + log_pages);
  const Lpn n = s->logical_pages();
  std::vector<Page> model(n);
  uint64_t merges = 0;  // over the store's incarnations
  for (int op = 0; op < 3000; op++) {
    const Lpn l = Lpn(rng() % n);
    if (model[l].empty() || rng() % 20 == 0) {
      model[l] = test::random_page(rng, 2048);
    } else {
      const int updates = 1 + int(rng() % 8);  // N_updates_till_write, runs may overlap
      for (int u = 0; u < updates; u++) {
        const uint32_t len = 1 + uint32_t(rng() % (rng() % 4 == 0 ? 600 : 40));
        const uint32_t off = uint32_t(rng() % (2048 - len));
        change(*s, l, model[l], off, len, true);
      }
    }
    REQUIRE(s->write(l, model[l]).is_ok());
    if (op % 500 == 499) {
      REQUIRE(s->sync().is_ok());
      std::unique_ptr<PageStore> again;
      REQUIRE(mount_store(*nand, &again).is_ok());
      REQUIRE(again->check().is_ok());
      merges += s->stats().merges;
      s = std::move(again);
    }
  }
  CHECK(merges + s->stats().merges > 0);
  Page got(2048);
  for (Lpn l = 0; l < n; l++) {
    if (model[l].empty()) continue;
    REQUIRE(s->read(l, got).is_ok());
    REQUIRE(got == model[l]);
  }
}

TEST_CASE("an IPL write cut after any of its sectors, or a merge cut anywhere, keeps the old page",
          "[ipl][powerloss]") {
  const auto tear = GENERATE(Tear::kNone, Tear::kPrefix, Tear::kRandomBits);
  const uint32_t log_sector = GENERATE(512u, 128u);
  auto rng = test::seeded_rng(0x1b6 + uint64_t(tear));
  // A run of the same workload to count its operations, then a cut at every one of them.
  auto workload = [&](PageStore& s, std::vector<Page>* synced, std::vector<Page>* latest) {
    auto wr = test::seeded_rng(0x5eed);
    for (Lpn l = 0; l < 12; l++) {
      (*latest)[l] = test::random_page(wr, 2048);
      PDL_TRY(s.write(l, (*latest)[l]));
    }
    PDL_TRY(s.sync());
    *synced = *latest;
    for (int i = 0; i < 12; i++) {  // big changes: 700 bytes → 6 (or 8 small) sectors a write
      const Lpn l = Lpn(i % 5);
      Page p = (*latest)[l];
      for (uint32_t k = 0; k < 700; k++) p[300 + k] ^= uint8_t(1 + (k + i) % 255);
      (*latest)[l] = p;
      PDL_TRY(s.write(l, p));
      if (i % 4 == 3) {
        PDL_TRY(s.sync());
        *synced = *latest;
      }
    }
    return Status::ok();
  };
  uint64_t total = 0;
  {
    auto nand = test::make_ram_nand(ipl_geometry());
    auto s = make_store(*nand, Method::kIpl, 4, log_sector);
    std::vector<Page> synced(12), latest(12);
    const uint64_t base = nand->mutating_ops();
    REQUIRE(workload(*s, &synced, &latest).is_ok());
    total = nand->mutating_ops() - base;
    REQUIRE(s->stats().merges > 0);  // the 16 sectors filled: merges happened in the workload
  }
  for (uint64_t k = 0; k < total; k++) {
    INFO("cut after " << k << " of " << total << " operations, tear " << int(tear)
                       << ", log sectors of " << log_sector << " bytes");
    auto nand = test::make_ram_nand(ipl_geometry());
    auto s = make_store(*nand, Method::kIpl, 4, log_sector);
    std::vector<Page> synced(12), latest(12);
    // What each lpn held before each write that may be in flight: its synced value, or any
    // value written after the sync.
    nand->cut_power_after(k, tear, rng());
    const Status st = workload(*s, &synced, &latest);
    REQUIRE(st.is(Errc::kPowerCut));
    s.reset();
    nand->restore_power();
    std::unique_ptr<PageStore> m;
    REQUIRE(mount_store(*nand, &m).is_ok());
    REQUIRE(m->check().is_ok());
    Page got(2048);
    for (Lpn l = 0; l < 12; l++) {
      const Status r = m->read(l, got);
      if (synced[l].empty()) {
        CHECK((r.is(Errc::kNotFound) || (r.is_ok() && got == latest[l])));
      } else {
        REQUIRE(r.is_ok());
        CHECK((got == synced[l] || got == latest[l]));
      }
    }
  }
}

// [PDL]'s IPL: a 128-byte log buffer per 2 KiB page, one flush unit each; with 512-byte
// sectors a region of 4 log pages holds 16 flushes, with 128-byte ones 64 (on NOP 16).
TEST_CASE("an IPL log region holds page / log_sector one-sector writes per log page",
          "[ipl]") {
  const uint32_t log_sector = GENERATE(512u, 256u, 128u);
  INFO("log sectors of " << log_sector << " bytes");
  auto nand = test::make_ram_nand(ipl_geometry());
  auto s = make_store(*nand, Method::kIpl, 4, log_sector);
  CHECK(s->params().log_sector == log_sector);
  auto rng = test::seeded_rng(0x1b7);
  Page p = test::random_page(rng, 2048);
  REQUIRE(s->write(0, p).is_ok());
  const uint32_t sectors = 4 * 2048 / log_sector;
  for (uint32_t i = 0; i < sectors; i++) {  // one 8-byte run: one sector each
    change(*s, 0, p, 8 * i, 8, true);
    const NandCounters c0 = nand->counters();
    REQUIRE(s->write(0, p).is_ok());
    CHECK(delta(*nand, c0).programs == 1);
  }
  CHECK(s->stats().log_sectors == sectors);
  CHECK(s->stats().merges == 0);
  change(*s, 0, p, 1500, 8, true);
  REQUIRE(s->write(0, p).is_ok());  // the region is full: a merge
  CHECK(s->stats().merges == 1);
  Page got(2048);
  REQUIRE(s->read(0, got).is_ok());
  CHECK(got == p);
}

TEST_CASE("an IPL log sector carries log_sector - 28 bytes of records, at most page / 16",
          "[ipl]") {
  struct Case {
    uint32_t log_sector, run, sectors;
  };
  // A run of n bytes is n + 4 record bytes, split into buffers of min(128, log_sector - 28):
  // 128-byte buffers for 512 and 256; 100-byte ones for 128.
  const Case c = GENERATE(Case{512, 124, 1}, Case{512, 125, 2}, Case{256, 248, 2},
                          Case{128, 96, 1}, Case{128, 97, 2}, Case{128, 200, 3});
  INFO("log sectors of " << c.log_sector << " bytes, a run of " << c.run);
  auto nand = test::make_ram_nand(ipl_geometry());
  auto s = make_store(*nand, Method::kIpl, 4, c.log_sector);
  auto rng = test::seeded_rng(0x1b8);
  Page p = test::random_page(rng, 2048);
  REQUIRE(s->write(0, p).is_ok());
  change(*s, 0, p, 300, c.run, true);
  const NandCounters c0 = nand->counters();
  REQUIRE(s->write(0, p).is_ok());
  CHECK(delta(*nand, c0).programs == c.sectors);
  std::unique_ptr<PageStore> again;
  REQUIRE(mount_store(*nand, &again).is_ok());
  Page got(2048);
  REQUIRE(again->read(0, got).is_ok());
  CHECK(got == p);
}
