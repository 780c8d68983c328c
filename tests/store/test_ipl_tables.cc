// test_ipl_tables.cc — IPU and IPL's checkpointed tables (flash/ipl/ipl_tables.cc,
// docs/format.md §13.2) beyond the round trip test_store_tables runs over the store matrix:
//   * the void items a cut group leaves for purge() survive a sync, so they are in the tables
//     (IPLX), and the store mounted from them purges them before its first program;
//   * tables are refused while anything is unsynced: an open group, a pending trim;
//   * retired (worn-out) blocks, erase counts under wear levelling and the free queue's order
//     come back exactly, for IPU and IPL;
//   * with NVM, tables whose commit slot no longer fits the NVM's commit area (the NVM was
//     lost, or changed since the save) are refused as corrupt.
#include <catch2/catch.hpp>

#include <cstring>
#include <optional>

#include "flash/image/mount_tables.h"
#include "flash/image/open_store.h"
#include "flash/ipl/ipl_nvm.h"
#include "flash/store/page_store.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using Page = std::vector<uint8_t>;

StoreParams ipl_params(uint32_t page) {
  StoreParams p;
  p.method = Method::kIpl;
  p.log_region = 2 * page;
  return p;
}

// The stream's last section with no entries: "IPLX", P = 0, Q = 0.
bool purge_section_empty(const std::vector<uint8_t>& s) {
  static const uint8_t kEmpty[12] = {'I', 'P', 'L', 'X', 0, 0, 0, 0, 0, 0, 0, 0};
  return s.size() >= 12 && std::memcmp(s.data() + s.size() - 12, kEmpty, 12) == 0;
}

// Save, mount from the tables, and compare: the same page locations, block states, valid and
// erase counts, reads, and the same bytes saved again.
void require_round_trip(Nand& nand, PageStore& s, CommitMode mode) {
  TableWriter w;
  REQUIRE(s.save_tables(w).is_ok());
  TableReader r(w.data());
  std::unique_ptr<PageStore> t;
  const Status st = mount_store_tables(nand, s.params(), mode, r, &t);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  REQUIRE(t->check().is_ok());
  for (Lpn l = 0; l < s.logical_pages(); l++) {
    INFO("lpn " << l);
    const LpnLocation a = s.locate(l), b = t->locate(l);
    REQUIRE(a.base == b.base);
    REQUIRE(a.diff == b.diff);
    Page x(s.page_size()), y(s.page_size());
    const Status sx = s.read(l, x), sy = t->read(l, y);
    REQUIRE(sx.code() == sy.code());
    REQUIRE(x == y);
  }
  for (uint32_t blk = 0; blk < nand.geometry().blocks; blk++) {
    INFO("block " << blk);
    const BlockInfo a = s.block_info(blk), b = t->block_info(blk);
    REQUIRE(int(a.state) == int(b.state));
    REQUIRE(a.valid_pages == b.valid_pages);
    REQUIRE(a.erase_count == b.erase_count);
  }
  REQUIRE(t->stats().bad_blocks == s.stats().bad_blocks);
  TableWriter again;
  REQUIRE(t->save_tables(again).is_ok());
  REQUIRE(again.data() == w.data());
}

}  // namespace

TEST_CASE("IPU and IPL tables bring back retired blocks and wear-levelled free blocks",
          "[ipl][checkpoint][wear]") {
  for (const Method m : {Method::kIpu, Method::kIpl}) {
    INFO(method_name(m));
    Geometry g = test::geometry(512, 32, 8, 24);
    g.erase_limit = 14;
    auto nand = test::make_test_nand(g);
    auto rng = test::seeded_rng(0x1b17ae);
    StoreParams p = m == Method::kIpl ? ipl_params(g.page_data) : StoreParams{};
    p.method = m;
    p.wear_level = 2;
    const CommitMode mode = m == Method::kIpl ? CommitMode::kGroup : CommitMode::kPerPage;
    std::unique_ptr<PageStore> s;
    REQUIRE(format_store(*nand, p, &s, mode).is_ok());
    const Lpn n = s->logical_pages();
    // Small groups of writes (a hot logical block and random ones) until blocks wear out.
    for (int i = 0; i < 200000 && s->stats().bad_blocks < 2; i++) {
      const Lpn l = Lpn(i % 2 ? rng() % 8 : rng() % n);
      Page page = test::random_page(rng, g.page_data);
      Status st = s->write(l, page);
      if (st.is_ok()) st = s->sync();
      if (st.is(Errc::kFull)) break;
      REQUIRE(st.is_ok());
    }
    if (s->dirty() && !s->sync().is_ok()) REQUIRE(s->abort().is_ok());
    REQUIRE(s->stats().bad_blocks > 0);
    require_round_trip(*nand, *s, mode);
  }
}

TEST_CASE("IPL tables keep the void items of a cut group until the first program purges them",
          "[ipl][checkpoint]") {
  const Geometry g = test::geometry(512, 32, 8, 40);
  auto nand = test::make_test_nand(g);
  auto rng = test::seeded_rng(0x1b17ab);
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*nand, ipl_params(g.page_data), &s, CommitMode::kGroup).is_ok());
  const Lpn n = s->logical_pages();
  std::vector<std::optional<Page>> model(n);
  for (Lpn l = 0; l < n; l += 3) {
    model[l] = test::random_page(rng, g.page_data);
    REQUIRE(s->write(l, *model[l]).is_ok());
  }
  REQUIRE(s->sync().is_ok());
  // A group programs first writes and log sectors as it goes; the store is dropped before its
  // commit: a cut. Its items are void on the chip.
  for (Lpn l = 0; l < n; l += 2) {
    Page p = test::random_page(rng, g.page_data);
    REQUIRE(s->write(l, p).is_ok());
  }
  s.reset();
  REQUIRE(mount_store(*nand, &s, nullptr, CommitMode::kGroup).is_ok());
  REQUIRE(s->sync().is_ok());  // nothing to commit: the purge waits for the first program
  REQUIRE_FALSE(s->dirty());

  TableWriter w;
  REQUIRE(s->save_tables(w).is_ok());
  REQUIRE_FALSE(purge_section_empty(w.data()));
  std::unique_ptr<PageStore> restored;
  TableReader r(w.data());
  const uint64_t programs = nand->counters().programs;
  REQUIRE(mount_store_tables(*nand, s->params(), CommitMode::kGroup, r, &restored).is_ok());
  REQUIRE(nand->counters().programs == programs);
  REQUIRE(restored->check().is_ok());
  TableWriter again;
  REQUIRE(restored->save_tables(again).is_ok());
  REQUIRE(again.data() == w.data());
  s.reset();

  // The first program purges (the tables' lists are empty after it), and the committed state
  // reads back, then and after a scan.
  model[1] = test::random_page(rng, g.page_data);
  REQUIRE(restored->write(1, *model[1]).is_ok());
  REQUIRE(restored->sync().is_ok());
  TableWriter after;
  REQUIRE(restored->save_tables(after).is_ok());
  REQUIRE(purge_section_empty(after.data()));
  std::unique_ptr<PageStore> scanned;
  REQUIRE(mount_store(*nand, &scanned, nullptr, CommitMode::kGroup).is_ok());
  for (PageStore* x : {restored.get(), scanned.get()}) {
    Page got(g.page_data);
    for (Lpn l = 0; l < n; l++) {
      INFO("lpn " << l);
      const Status st = x->read(l, got);
      if (model[l]) {
        REQUIRE(st.is_ok());
        REQUIRE(got == *model[l]);
      } else {
        REQUIRE(st.is(Errc::kNotFound));
      }
    }
  }
}

TEST_CASE("IPU and IPL refuse to save tables with anything unsynced", "[ipl][checkpoint]") {
  const Geometry g = test::geometry(512, 32, 8, 40);
  auto rng = test::seeded_rng(0x1b17ac);
  const Page p = test::random_page(rng, g.page_data);
  SECTION("IPL: an open group") {
    auto nand = test::make_test_nand(g);
    std::unique_ptr<PageStore> s;
    REQUIRE(format_store(*nand, ipl_params(g.page_data), &s, CommitMode::kGroup).is_ok());
    REQUIRE(s->write(3, p).is_ok());
    TableWriter w;
    REQUIRE_FALSE(s->save_tables(w).is_ok());
    REQUIRE(s->sync().is_ok());
    REQUIRE(s->save_tables(w).is_ok());
  }
  SECTION("IPU: a pending trim") {
    auto nand = test::make_test_nand(g);
    StoreParams ipu;
    ipu.method = Method::kIpu;
    std::unique_ptr<PageStore> s;
    REQUIRE(format_store(*nand, ipu, &s, CommitMode::kPerPage).is_ok());
    REQUIRE(s->write(3, p).is_ok());
    REQUIRE(s->trim(3).is_ok());
    TableWriter w;
    REQUIRE_FALSE(s->save_tables(w).is_ok());
    REQUIRE(s->sync().is_ok());
    REQUIRE(s->save_tables(w).is_ok());
  }
}

TEST_CASE("IPL+NVM tables are refused when the NVM's commit area no longer fits them",
          "[ipl][checkpoint][nvm]") {
  Geometry g = test::geometry(2048, 64, 16, 12);
  g.partial_programs = 1;
  g.nvm_bytes = kNvmCommitArea + (g.blocks - kSuperblockBlocks) * 4 * 128;
  StoreParams params;
  params.method = Method::kIpl;
  params.nvm_bytes = g.nvm_bytes;
  params.log_sector = 128;
  auto nand = test::make_test_nand(g);
  auto rng = test::seeded_rng(0x1b17ad);
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*nand, params, &s, CommitMode::kGroup).is_ok());
  Page p = test::random_page(rng, g.page_data);
  REQUIRE(s->write(0, p).is_ok());
  p[5] ^= 1;
  REQUIRE(s->write(0, p).is_ok());  // a log sector in NVM
  REQUIRE(s->sync().is_ok());
  TableWriter w;
  REQUIRE(s->save_tables(w).is_ok());
  auto mount = [&] {
    TableReader r(w.data());
    std::unique_ptr<PageStore> out;
    return mount_store_tables(*nand, s->params(), CommitMode::kGroup, r, &out);
  };
  REQUIRE(mount().is_ok());

  SECTION("a later commit (the other slot holds a newer record)") {
    p[9] ^= 1;
    REQUIRE(s->write(0, p).is_ok());
    REQUIRE(s->sync().is_ok());
    const Status st = mount();
    INFO(st.to_string());
    REQUIRE(st.is(Errc::kCorrupt));
  }
  SECTION("a lost NVM (zeroed commit area)") {
    const std::vector<uint8_t> zeros(kNvmCommitArea, 0);
    REQUIRE(nand->nvm_write(0, zeros).is_ok());
    const Status st = mount();
    INFO(st.to_string());
    REQUIRE(st.is(Errc::kCorrupt));
  }
}
