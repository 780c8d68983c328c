// test_superblock.cc — format parameters persist, bad parameters and foreign chips are refused.
#include <catch2/catch.hpp>

#include <functional>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "flash/store/spare.h"
#include "flash/store/superblock.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

// 2 KiB pages, 16 pages per block, NOP 16: IPL may use 128-byte log sectors (16 per page).
Geometry nop16_geometry() {
  Geometry g = pdl::test::geometry(2048, 64, 16, 16);
  g.partial_programs = 16;
  return g;
}

// Changes both superblock copies byte by byte (`edit` gets the data area) and makes their
// checksums hold again: a superblock that a pdl could have written, with other contents.
void patch_superblock(Nand& nand, const std::function<void(uint8_t*)>& edit) {
  const Geometry& g = nand.geometry();
  for (uint32_t b = 0; b < kSuperblockBlocks; b++) {
    std::vector<uint8_t> data(g.page_data), spare(g.page_spare);
    REQUIRE(nand.read(b * g.pages_per_block, data, spare).is_ok());
    edit(data.data());
    le::put32(data.data() + 76, crc32c(data.data(), 76));
    SpareHeader h;
    REQUIRE(spare_decode(spare, &h) == SpareState::kValid);
    h.data_crc = crc32c(data.data(), data.size());
    spare_encode(h, spare);
    REQUIRE(nand.erase(b).is_ok());
    REQUIRE(nand.program(b * g.pages_per_block, data, spare).is_ok());
  }
}

}  // namespace

TEST_CASE("mount restores the method parameters chosen at format", "[superblock]") {
  auto nand = pdl::test::make_ram_nand(pdl::test::small_geometry(32));
  StoreParams p;
  p.method = GENERATE(Method::kPdl, Method::kOpu);
  p.obsolete = GENERATE(ObsoleteMode::kSpare, ObsoleteMode::kMemory);
  p.max_differential = 200;
  p.logical_pages = 50;
  p.gc_reserve_blocks = 3;
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, p, &store).is_ok());
  std::unique_ptr<PageStore> again;
  REQUIRE(mount_store(*nand, &again).is_ok());
  CHECK(again->params().method == p.method);
  CHECK(again->params().obsolete == p.obsolete);
  CHECK(again->params().max_differential == (p.method == Method::kOpu ? 0u : 200u));
  CHECK(again->logical_pages() == 50);
  CHECK(again->params().gc_reserve_blocks == 3);
}

TEST_CASE("mount of a blank chip says it is not formatted", "[superblock]") {
  auto nand = pdl::test::make_ram_nand(pdl::test::small_geometry(16));
  std::unique_ptr<PageStore> store;
  Status st = mount_store(*nand, &store);
  CHECK(st.is(Errc::kCorrupt));
  CHECK(std::string(st.message()).find("not a formatted") != std::string::npos);
}

TEST_CASE("mount survives a lost superblock copy", "[superblock]") {
  auto nand = pdl::test::make_ram_nand(pdl::test::small_geometry(16));
  StoreParams p;
  p.max_differential = 100;
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, p, &store).is_ok());
  std::vector<uint8_t> page(store->page_size(), 0x5A);
  REQUIRE(store->write(1, page).is_ok());
  REQUIRE(store->sync().is_ok());
  store.reset();
  REQUIRE(nand->erase(0).is_ok());  // first copy gone
  std::unique_ptr<PageStore> again;
  REQUIRE(mount_store(*nand, &again).is_ok());
  CHECK(again->params().max_differential == 100);
  std::vector<uint8_t> got(page.size());
  REQUIRE(again->read(1, got).is_ok());
  CHECK(got == page);
}

TEST_CASE("format refuses invalid parameters with a message naming them", "[superblock]") {
  auto nand = pdl::test::make_ram_nand(pdl::test::small_geometry(16));
  std::unique_ptr<PageStore> store;
  StoreParams p;
  p.max_differential = 100000;
  Status st = format_store(*nand, p, &store);
  CHECK(st.is(Errc::kInvalidArgument));
  CHECK(std::string(st.message()).find("max_diff") != std::string::npos);
  p = StoreParams{};
  p.gc_reserve_blocks = 1;
  st = format_store(*nand, p, &store);
  CHECK(st.is(Errc::kInvalidArgument));
  CHECK(std::string(st.message()).find("gc_reserve") != std::string::npos);
}

TEST_CASE("a reformatted chip forgets the earlier store's pages", "[superblock]") {
  auto nand = pdl::test::make_ram_nand(pdl::test::small_geometry(16));
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, StoreParams{}, &store).is_ok());
  std::vector<uint8_t> page(store->page_size(), 0x11);
  for (Lpn l = 0; l < 10; l++) REQUIRE(store->write(l, page).is_ok());
  REQUIRE(store->sync().is_ok());
  REQUIRE(format_store(*nand, StoreParams{}, &store).is_ok());
  std::unique_ptr<PageStore> again;
  REQUIRE(mount_store(*nand, &again).is_ok());
  for (Lpn l = 0; l < 10; l++) CHECK_FALSE(again->is_mapped(l));
}

// A superblock whose checksums hold but whose fields do not fit the geometry is refused, naming
// the field and its value (an unchecked gc_reserve_blocks of 0xFFFFFFFF once overflowed the
// range check and made every write "full").
TEST_CASE("mount refuses a superblock field outside the geometry and names it", "[superblock]") {
  struct Bad {
    const char* field;
    void (*apply)(StoreParams*);
  };
  const Bad bad = GENERATE(
      Bad{"gc_reserve_blocks = 4294967295", [](StoreParams* p) { p->gc_reserve_blocks = ~0u; }},
      Bad{"gc_reserve_blocks = 1", [](StoreParams* p) { p->gc_reserve_blocks = 1; }},
      Bad{"logical_pages = 4294967295", [](StoreParams* p) { p->logical_pages = ~0u; }},
      Bad{"max_differential = 99999", [](StoreParams* p) { p->max_differential = 99999; }},
      Bad{"log_region = 2048", [](StoreParams* p) { p->log_region = 2048; }},
      Bad{"method = 9", [](StoreParams* p) { p->method = Method(9); }},
      Bad{"obsolete = 7", [](StoreParams* p) { p->obsolete = ObsoleteMode(7); }});
  auto nand = pdl::test::make_ram_nand(pdl::test::small_geometry(16));
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, StoreParams(), &store).is_ok());
  Superblock sb;
  REQUIRE(read_superblock(*nand, resolve_store_params, &sb).is_ok());
  store.reset();
  bad.apply(&sb.params);
  REQUIRE(rewrite_superblock(*nand, sb).is_ok());  // encodes without checking, CRCs valid
  Superblock got;
  const Status st = read_superblock(*nand, resolve_store_params, &got);
  INFO(st.to_string());
  CHECK(st.is(Errc::kCorrupt));
  CHECK(std::string(st.message()).find(std::string("superblock field ") + bad.field +
                                       " is invalid") != std::string::npos);
  std::unique_ptr<PageStore> again;
  CHECK(!mount_store(*nand, &again).is_ok());
}

TEST_CASE("an ipl store records its log sector size in format 3 only when it is not 512",
          "[superblock]") {
  const uint32_t ls = GENERATE(0u, 512u, 256u, 128u);
  auto nand = pdl::test::make_ram_nand(nop16_geometry());
  StoreParams p;
  p.method = Method::kIpl;
  p.log_sector = ls;
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, p, &store).is_ok());
  store.reset();
  const bool custom = ls != 0 && ls != kLogSector;
  std::vector<uint8_t> data(2048), spare(64);
  REQUIRE(nand->read(0, data, spare).is_ok());
  CHECK(le::get32(data.data() + 8) == (custom ? 3u : 2u));
  CHECK(le::get32(data.data() + 72) == (custom ? ls : 0u));
  Superblock sb;
  REQUIRE(read_superblock(*nand, resolve_store_params, &sb).is_ok());
  CHECK(sb.version == (custom ? kSuperblockLogSector : kSuperblockAtomic));
  std::unique_ptr<PageStore> again;
  REQUIRE(mount_store(*nand, &again).is_ok());
  CHECK(again->params().log_sector == (custom ? ls : kLogSector));
}

TEST_CASE("stores of other methods keep superblock format 2 with bytes 72..75 zero",
          "[superblock]") {
  auto nand = pdl::test::make_ram_nand(nop16_geometry());
  StoreParams p;
  p.method = GENERATE(Method::kPdl, Method::kOpu);
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, p, &store).is_ok());
  std::vector<uint8_t> data(2048), spare(64);
  REQUIRE(nand->read(0, data, spare).is_ok());
  CHECK(le::get32(data.data() + 8) == 2u);
  CHECK(le::get32(data.data() + 72) == 0u);
  CHECK(store->params().log_sector == 0u);
}

TEST_CASE("mount refuses a log sector field a pdl would not write, naming it", "[superblock]") {
  struct Bad {
    const char* message;
    Errc errc;
    std::function<void(uint8_t*)> edit;
  };
  auto put = [](uint32_t at, uint32_t v) { return [=](uint8_t* d) { le::put32(d + at, v); }; };
  auto both = [](std::function<void(uint8_t*)> a, std::function<void(uint8_t*)> b) {
    return [=](uint8_t* d) {
      a(d);
      b(d);
    };
  };
  const Bad bad = GENERATE_COPY(
      Bad{"superblock field log_sector = 512 is invalid", Errc::kCorrupt,
          both(put(8, 3), put(72, 512))},
      Bad{"superblock field log_sector = 96 is invalid", Errc::kCorrupt,
          both(put(8, 3), put(72, 96))},
      Bad{"superblock field log_sector = 1024 is invalid", Errc::kCorrupt,
          both(put(8, 3), put(72, 1024))},
      Bad{"superblock field log_sector = 0 is invalid", Errc::kCorrupt, put(8, 3)},
      Bad{"superblock field method = 1 is invalid", Errc::kCorrupt,
          [=](uint8_t* d) {  // a pdl store claiming format 3
            d[12] = 1;
            put(8, 3)(d);
            put(72, 128)(d);
            put(68, 0)(d);
          }},
      Bad{"superblock field bytes 72..75 = 128 is invalid", Errc::kCorrupt, put(72, 128)},
      Bad{"made by a newer pdl", Errc::kUnsupported, both(put(8, 4), put(72, 128))});
  auto nand = pdl::test::make_ram_nand(nop16_geometry());
  StoreParams p;
  p.method = Method::kIpl;
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, p, &store).is_ok());
  store.reset();
  patch_superblock(*nand, bad.edit);
  Superblock sb;
  const Status st = read_superblock(*nand, resolve_store_params, &sb);
  INFO(st.to_string());
  CHECK(st.is(bad.errc));
  CHECK(std::string(st.message()).find(bad.message) != std::string::npos);
  std::unique_ptr<PageStore> again;
  CHECK(!mount_store(*nand, &again).is_ok());
}

TEST_CASE("format refuses a log sector size the chip or the method cannot take, naming it",
          "[superblock]") {
  struct Bad {
    Method method;
    uint32_t log_sector, nop;
    const char* message;
  };
  const Bad bad = GENERATE(
      Bad{Method::kIpl, 200, 16, "log_sector: 200 bytes: must be a power of two, 128 .. 512"},
      Bad{Method::kIpl, 64, 16, "log_sector: 64 bytes: must be a power of two, 128 .. 512"},
      Bad{Method::kIpl, 1024, 16, "log_sector: 1024 bytes: must be a power of two, 128 .. 512"},
      Bad{Method::kIpl, 128, 4, "raise nop to 16"},
      Bad{Method::kIpl, 256, 4, "raise nop to 8"},
      Bad{Method::kIpu, 128, 16, "log_sector: ipu has no log sectors"},
      Bad{Method::kPdl, 128, 16, "log_sector: only the ipl method"});
  Geometry g = nop16_geometry();
  g.partial_programs = bad.nop;
  auto nand = pdl::test::make_ram_nand(g);
  StoreParams p;
  p.method = bad.method;
  p.log_sector = bad.log_sector;
  std::unique_ptr<PageStore> store;
  const Status st = format_store(*nand, p, &store);
  INFO(st.to_string());
  CHECK(st.is(Errc::kInvalidArgument));
  CHECK(std::string(st.message()).find(bad.message) != std::string::npos);
  CHECK(std::string(st.message()).rfind("log_sector:", 0) == 0);
}
