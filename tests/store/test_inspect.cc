// test_inspect.cc — PageStore::locate and PageStore::block_info tell the truth and cost nothing.
//
// Over every store configuration (store_matrix.h), a random workload of small updates (PDL
// differentials), whole-page rewrites (Case 3 / OPU), trims and syncs runs long enough for
// garbage collection to run many times. Periodically, every lpn and every block is inspected:
//   * locate agrees with is_mapped (mapped <=> a base page and no pending trim), buffered
//     differentials report their size and on-flash ones report 0;
//   * each base page's spare header names its lpn (read back through the Nand);
//   * block_info's valid count equals a recount from locate (current base pages + differential
//     pages some lpn points at), superblock blocks are kReserved, the number of kFree blocks is
//     free_blocks(), at most two blocks are kOpen (the write heads), none is a kVictim, and the
//     erase count is the Nand's;
//   * a sweep over every lpn and block changes no Nand counter (no flash operation);
// and after sync + remount the mapped lpns keep their base and differential pages.
// IPU/IPL (in_page): the base is the data page at the lpn's slot (a page rewritten from zeros
// after a trim lives in the log only: mapped without a base), the "differential" page is the
// newest used log page of the block, valid counts add the used log pages, and any block with free
// slots or log sectors is open.
#include <catch2/catch.hpp>

#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "flash/store/spare.h"
#include "tests/support/store_matrix.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

void inspect_all(PageStore& store) {
  const bool in_page = pdl::in_page(store.params().method);
  // StableBuffer: locate gives the FTL device's page of a staged lpn's slot, and the device's
  // blocks hold slots and the slot directory too, which locate does not enumerate.
  const bool staging = store.params().method == Method::kStableBuffer;
  Nand& nand = store.nand();
  const Geometry& g = nand.geometry();
  const NandCounters before = nand.counters();
  std::vector<uint32_t> valid(g.blocks, 0);
  std::vector<uint8_t> diff_seen(size_t(g.total_pages()), 0);
  std::vector<LpnLocation> locs(store.logical_pages());
  for (Lpn l = 0; l < store.logical_pages(); l++) {
    const LpnLocation loc = store.locate(l);
    locs[l] = loc;
    INFO("lpn " << l);
    CHECK((loc.diff_in_buffer ? loc.diff_bytes >= 16 : loc.diff_bytes == 0));
    if (in_page) {
      CHECK(store.is_mapped(l) == (loc.base != kNoPpa || loc.diff != kNoPpa));
      if (loc.trim_pending) CHECK_FALSE(store.is_mapped(l));
    } else {
      CHECK(store.is_mapped(l) == (loc.base != kNoPpa && !loc.trim_pending));
      if (loc.trim_pending) CHECK(loc.diff_in_buffer);
    }
    if (loc.base != kNoPpa) {
      REQUIRE(loc.base < g.total_pages());
      CHECK(loc.base / g.pages_per_block >= kSuperblockBlocks);
      valid[loc.base / g.pages_per_block]++;
    }
    if (loc.diff != kNoPpa && !in_page) {
      REQUIRE(loc.diff < g.total_pages());
      if (!diff_seen[loc.diff]++) valid[loc.diff / g.pages_per_block]++;
    }
  }
  uint32_t free = 0, open = 0;
  for (uint32_t b = 0; b < g.blocks; b++) {
    const BlockInfo bi = store.block_info(b);
    INFO("block " << b << " " << block_state_name(bi.state));
    CHECK(bi.erase_count == nand.erase_count(b));
    CHECK(bi.state != BlockInfo::kVictim);
    if (b < kSuperblockBlocks) {
      CHECK(bi.state == BlockInfo::kReserved);
      continue;
    }
    CHECK(bi.state != BlockInfo::kReserved);
    if (in_page) {  // + the used log pages, which locate does not enumerate
      CHECK(bi.valid_pages >= valid[b]);
      CHECK(bi.valid_pages <= valid[b] + store.params().log_pages(g));
    } else if (staging) {
      CHECK(bi.valid_pages >= valid[b]);
    } else {
      CHECK(bi.valid_pages == valid[b]);
    }
    free += bi.state == BlockInfo::kFree;
    open += bi.state == BlockInfo::kOpen;
    if (bi.state == BlockInfo::kFree) CHECK(bi.valid_pages == 0);
  }
  CHECK(free == store.free_blocks());
  // (BAST and FAST program their data blocks in place and several log blocks at once.)
  if (!in_page && store.params().ftl != FtlKind::kBast && store.params().ftl != FtlKind::kFast)
    CHECK(open <= 2);
  const NandCounters after = nand.counters();
  CHECK(after.page_reads == before.page_reads);
  CHECK(after.spare_reads == before.spare_reads);
  CHECK(after.programs == before.programs);
  CHECK(after.erases == before.erases);
  CHECK(after.sim_us == before.sim_us);
  // Base pages really hold their lpn (reading costs flash operations: after the sweep).
  std::vector<uint8_t> spare(g.page_spare);
  for (Lpn l = 0; l < locs.size(); l++) {
    if (locs[l].base == kNoPpa) continue;
    REQUIRE(nand.read(locs[l].base, {}, spare).is_ok());
    SpareHeader h;
    REQUIRE(spare_decode(spare, &h) == SpareState::kValid);
    CHECK(h.type == (in_page ? PageType::kIplData : PageType::kBase));
    if (staging && h.logical_page() >= store.logical_pages()) continue;  // a slot
    CHECK(h.logical_page() == l);
  }
}

}  // namespace

TEST_CASE("locate and block_info agree with the store and cost nothing", "[inspect]") {
  for (const test::StoreConfig& cfg : test::store_matrix()) {
    SECTION(cfg.name) {
      auto rng = test::seeded_rng(0x1a5bec7);
      auto nand = test::make_ram_nand(cfg.geo);
      std::unique_ptr<PageStore> store;
      REQUIRE(format_store(*nand, cfg.params, &store).is_ok());
      const uint32_t n = store->logical_pages();
      const uint32_t page = store->page_size();
      std::vector<std::vector<uint8_t>> model(n);
      inspect_all(*store);
      for (int op = 0; op < 4000; op++) {
        const Lpn l = Lpn(rng() % n);
        const unsigned what = unsigned(rng() % 100);
        if (what < 70 && !model[l].empty()) {  // small change: a differential (PDL)
          for (int k = 0; k < 3; k++) model[l][rng() % page] = uint8_t(rng());
          REQUIRE(store->write(l, model[l]).is_ok());
        } else if (what < 90) {  // a whole new page
          model[l] = test::random_page(rng, page);
          REQUIRE(store->write(l, model[l]).is_ok());
        } else if (what < 96) {
          REQUIRE(store->trim(l).is_ok());
          model[l].clear();
        } else {
          REQUIRE(store->sync().is_ok());
        }
        if (op % 500 == 0) inspect_all(*store);
      }
      inspect_all(*store);
      CHECK(store->stats().gc_runs + store->stats().merges > 0);
      REQUIRE(store->sync().is_ok());
      std::vector<LpnLocation> before(n);
      for (Lpn l = 0; l < n; l++) before[l] = store->locate(l);
      store.reset();
      REQUIRE(mount_store(*nand, &store).is_ok());
      inspect_all(*store);
      for (Lpn l = 0; l < n; l++) {
        INFO("lpn " << l);
        const LpnLocation loc = store->locate(l);
        CHECK(loc.base == before[l].base);
        if (loc.base != kNoPpa) CHECK(loc.diff == before[l].diff);
        CHECK(store->is_mapped(l) == !model[l].empty());
      }
    }
  }
}

TEST_CASE("locate reports buffered differentials and pending trims", "[inspect]") {
  auto nand = test::make_ram_nand(test::geometry(2048, 64, 8, 24));
  StoreParams p;
  p.method = Method::kPdl;
  p.max_differential = 256;
  p.logical_pages = 16;
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, p, &store).is_ok());
  CHECK(store->locate(3).base == kNoPpa);
  CHECK(store->locate(1000).base == kNoPpa);  // beyond logical_pages: empty
  std::vector<uint8_t> pg(2048, 0x11);
  REQUIRE(store->write(3, pg).is_ok());
  LpnLocation loc = store->locate(3);
  REQUIRE(loc.base != kNoPpa);
  CHECK(loc.diff == kNoPpa);
  CHECK_FALSE(loc.diff_in_buffer);
  CHECK(store->block_info(loc.base / 8).state == BlockInfo::kOpen);
  pg[100] = 0x22;  // one changed byte: a 16 + 4 + 1 byte record in the buffer
  REQUIRE(store->write(3, pg).is_ok());
  loc = store->locate(3);
  CHECK(loc.diff_in_buffer);
  CHECK_FALSE(loc.trim_pending);
  CHECK(loc.diff_bytes == 21);
  CHECK(loc.diff == kNoPpa);
  REQUIRE(store->sync().is_ok());
  loc = store->locate(3);
  CHECK_FALSE(loc.diff_in_buffer);
  CHECK(loc.diff_bytes == 0);
  CHECK(loc.diff != kNoPpa);
  REQUIRE(store->trim(3).is_ok());
  loc = store->locate(3);
  CHECK(loc.trim_pending);
  CHECK(loc.diff_in_buffer);
  CHECK(loc.base != kNoPpa);  // the trim takes effect at the flush
  CHECK_FALSE(store->is_mapped(3));
  REQUIRE(store->sync().is_ok());
  loc = store->locate(3);
  CHECK(loc.base == kNoPpa);
  CHECK_FALSE(loc.trim_pending);
  CHECK(store->block_info(0).state == BlockInfo::kReserved);
  CHECK(store->block_info(1).state == BlockInfo::kReserved);
}

TEST_CASE("each engine's page inspector decodes the data areas it wrote", "[inspect]") {
  const Geometry g = test::geometry(2048, 64, 8, 24);
  std::vector<uint8_t> data(g.page_data), spare(g.page_spare);
  SECTION("pdl: the records of a differential page; malformed records are corrupt") {
    auto nand = test::make_ram_nand(g);
    StoreParams p;
    p.method = Method::kPdl;
    p.logical_pages = 16;
    std::unique_ptr<PageStore> store;
    REQUIRE(format_store(*nand, p, &store).is_ok());
    std::vector<uint8_t> pg(2048, 0x11);
    REQUIRE(store->write(3, pg).is_ok());
    pg[100] = 0x22;  // one changed byte: a 16 + 4 + 1 byte record
    REQUIRE(store->write(3, pg).is_ok());
    REQUIRE(store->sync().is_ok());
    const LpnLocation loc = store->locate(3);
    REQUIRE(loc.diff != kNoPpa);
    const auto inspector = page_inspector(store->params(), g);
    for (Ppa q = 0; q < g.total_pages(); q++) CHECK_FALSE(inspector->is_log_page(q));
    REQUIRE(nand->read(loc.diff, data, spare).is_ok());
    SpareHeader h;
    REQUIRE(spare_decode(spare, &h) == SpareState::kValid);
    std::vector<RecordInfo> records;
    REQUIRE(inspector->differential_records(data, h, &records).is_ok());
    REQUIRE(records.size() == 1);
    CHECK(records[0].lpn == 3);
    CHECK(records[0].bytes == 21);
    CHECK(records[0].header_bytes == 16);
    CHECK(records[0].runs == 1);
    CHECK_FALSE(records[0].tombstone);
    data[6] = 0x80;  // an unknown record flag
    CHECK(inspector->differential_records(data, h, &records).is(Errc::kCorrupt));
    CHECK(records.empty());
  }
  SECTION("ipl: log pages and their sectors, of 512 and of 128 bytes") {
    for (const uint32_t ls : {512u, 128u}) {
      INFO("log sectors of " << ls << " bytes");
      Geometry g16 = g;
      g16.partial_programs = 16;
      auto nand = test::make_ram_nand(g16);
      StoreParams p;
      p.method = Method::kIpl;
      p.log_sector = ls;
      std::unique_ptr<PageStore> store;
      REQUIRE(format_store(*nand, p, &store).is_ok());
      const uint32_t dpb = store->params().data_pages_per_block(g);
      REQUIRE(dpb < g.pages_per_block);
      std::vector<uint8_t> pg(2048, 0x11);
      const Lpn l = dpb + 2;  // slot 2 of logical block 1
      REQUIRE(store->write(l, pg).is_ok());
      pg[100] = 0x22;
      REQUIRE(store->write(l, pg).is_ok());
      REQUIRE(store->sync().is_ok());
      const LpnLocation loc = store->locate(l);
      REQUIRE(loc.base != kNoPpa);
      REQUIRE(loc.diff != kNoPpa);
      const auto inspector = page_inspector(store->params(), g);
      CHECK(inspector->is_log_page(loc.diff));
      CHECK_FALSE(inspector->is_log_page(loc.base));
      CHECK_FALSE(inspector->is_log_page(g.pages_per_block - 1));  // a superblock block
      REQUIRE(nand->read(loc.diff, data, {}).is_ok());
      const std::vector<LogSectorInfo> sectors = inspector->log_sectors(data);
      REQUIRE(sectors.size() == g.page_data / ls);
      CHECK(sectors[0].kind == LogSectorInfo::kLog);
      CHECK(sectors[0].lbn == 1);
      CHECK(sectors[0].slot == 2);
      CHECK(sectors[0].lpn == l);
      CHECK(sectors[0].index == 0);
      CHECK(sectors[0].count == 1);
      CHECK(sectors.back().kind == LogSectorInfo::kErased);
      data[8] ^= 1;  // a flipped bit in the header: the sector fails its CRC
      CHECK(inspector->log_sectors(data)[0].kind == LogSectorInfo::kTorn);
    }
  }
}
