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
      Bad{"superblock field method = 4 is invalid", Errc::kCorrupt, put(8, 4)},
      Bad{"extension (bytes 80..95) checksum mismatch", Errc::kCorrupt,
          both(put(8, 5), put(72, 128))},  // format 5 without its extension
      Bad{"made by a newer pdl", Errc::kUnsupported, both(put(8, 9), put(72, 128))});
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

// ---- Superblock format 4: FTL devices (docs/format.md §2, bytes 80..95) ----

namespace {

// Accepts any stored parameters unchanged: lets format 4's encoding be read back for FTLs whose
// engines a test does not need (the field checks against the engines are the cases below).
Status accept_params(StoreParams* p, const Geometry& g) {
  (void)g;
  return p->check_method();
}

// A page-FTL store (method ftl, ftl=page) on a small chip: format 4.
std::unique_ptr<Nand> ftl_page_chip() {
  auto nand = pdl::test::make_ram_nand(pdl::test::small_geometry(16));
  StoreParams p;
  p.method = Method::kFtl;
  p.ftl = FtlKind::kPage;
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, p, &store).is_ok());
  return nand;
}

// Like patch_superblock, and makes the extension's CRC (bytes 92..95) hold again too.
void patch_extension(Nand& nand, const std::function<void(uint8_t*)>& edit) {
  patch_superblock(nand, [&](uint8_t* d) {
    edit(d);
    le::put32(d + 92, crc32c(d + 80, 12));
  });
}

}  // namespace

TEST_CASE("a page ftl store is superblock format 4 with its ftl in byte 80", "[superblock]") {
  auto nand = ftl_page_chip();
  const Geometry& g = nand->geometry();
  std::vector<uint8_t> data(g.page_data), spare(g.page_spare);
  REQUIRE(nand->read(0, data, spare).is_ok());
  CHECK(le::get32(data.data() + 8) == kSuperblockFtl);
  CHECK(data[12] == uint8_t(Method::kFtl));
  CHECK(data[80] == uint8_t(FtlKind::kPage));
  CHECK(data[81] == 0);
  CHECK(data[82] == 0);
  CHECK(data[83] == 0);
  CHECK(le::get32(data.data() + 84) == 0u);  // log_blocks: the page FTL has none
  CHECK(le::get32(data.data() + 88) == 0u);  // sb_slots: no StableBuffer
  CHECK(le::get32(data.data() + 92) == crc32c(data.data() + 80, 12));
  CHECK(data[96] == 0xFF);  // the rest of the page stays erased
  std::unique_ptr<PageStore> again;
  REQUIRE(mount_store(*nand, &again).is_ok());
  CHECK(again->params().method == Method::kFtl);
  CHECK(again->params().ftl == FtlKind::kPage);
  CHECK(again->params().log_blocks == 0u);
  CHECK(again->params().sb_slots == 0u);
  CHECK_FALSE(again->atomic());
}

TEST_CASE("superblock format 4 round-trips ftl, log_blocks and sb_slots", "[superblock]") {
  struct Case {
    Method method;
    FtlKind ftl;
    uint32_t log_blocks, sb_slots;
  };
  const Case c = GENERATE(Case{Method::kFtl, FtlKind::kPage, 0, 0},
                          Case{Method::kFtl, FtlKind::kBast, 16, 0},
                          Case{Method::kFtl, FtlKind::kFast, 32, 0},
                          Case{Method::kStableBuffer, FtlKind::kPage, 0, 77},
                          Case{Method::kStableBuffer, FtlKind::kBast, 24, 0x01020304},
                          Case{Method::kStableBuffer, FtlKind::kFast, 0xA0B0C0D0, 5});
  auto nand = ftl_page_chip();
  Superblock sb;
  REQUIRE(read_superblock(*nand, resolve_store_params, &sb).is_ok());
  sb.params.method = c.method;
  sb.params.ftl = c.ftl;
  sb.params.log_blocks = c.log_blocks;
  sb.params.sb_slots = c.sb_slots;
  REQUIRE(rewrite_superblock(*nand, sb).is_ok());
  std::vector<uint8_t> data(nand->geometry().page_data), spare(nand->geometry().page_spare);
  REQUIRE(nand->read(0, data, spare).is_ok());
  CHECK(data[80] == uint8_t(c.ftl));
  CHECK(le::get32(data.data() + 84) == c.log_blocks);
  CHECK(le::get32(data.data() + 88) == c.sb_slots);
  Superblock got;
  REQUIRE(read_superblock(*nand, accept_params, &got).is_ok());
  CHECK(got.version == kSuperblockFtl);
  CHECK(got.params.method == c.method);
  CHECK(got.params.ftl == c.ftl);
  CHECK(got.params.log_blocks == c.log_blocks);
  CHECK(got.params.sb_slots == c.sb_slots);
  CHECK(got.uuid == sb.uuid);
  CHECK(got.params.logical_pages == sb.params.logical_pages);
}

TEST_CASE("mount refuses a format 4 field a pdl would not write, naming it", "[superblock]") {
  struct Bad {
    const char* message;
    std::function<void(uint8_t*)> edit;
    bool fix_extension_crc;
  };
  const Bad bad = GENERATE(
      Bad{"superblock extension (bytes 80..95) checksum mismatch",
          [](uint8_t* d) { le::put32(d + 84, 16); }, false},
      Bad{"superblock extension (bytes 80..95) checksum mismatch",
          [](uint8_t* d) { d[95] ^= 1; }, false},
      Bad{"superblock field ftl = 4 is invalid", [](uint8_t* d) { d[80] = 4; }, true},
      Bad{"superblock field ftl = 0 is invalid", [](uint8_t* d) { d[80] = 0; }, true},
      Bad{"superblock field ftl = 255 is invalid", [](uint8_t* d) { d[80] = 0xFF; }, true},
      Bad{"superblock field bytes 81..83 = 1 is invalid", [](uint8_t* d) { d[81] = 1; }, true},
      Bad{"superblock field bytes 81..83 = 65536 is invalid", [](uint8_t* d) { d[83] = 1; },
          true},
      Bad{"superblock field log_blocks = 16 is invalid", [](uint8_t* d) { le::put32(d + 84, 16); },
          true},
      Bad{"superblock field sb_slots = 8 is invalid", [](uint8_t* d) { le::put32(d + 88, 8); },
          true},
      Bad{"superblock field method = 5 is invalid",  // an FTL device claiming format 2
          [](uint8_t* d) { le::put32(d + 8, kSuperblockAtomic); }, false},
      Bad{"superblock field method = 2 is invalid",  // an OPU store claiming format 4
          [](uint8_t* d) { d[12] = uint8_t(Method::kOpu); }, true});
  auto nand = ftl_page_chip();
  if (bad.fix_extension_crc) patch_extension(*nand, bad.edit);
  else patch_superblock(*nand, bad.edit);
  Superblock sb;
  const Status st = read_superblock(*nand, resolve_store_params, &sb);
  INFO(st.to_string());
  CHECK(st.is(Errc::kCorrupt));
  CHECK(std::string(st.message()).find(bad.message) != std::string::npos);
  std::unique_ptr<PageStore> again;
  CHECK(!mount_store(*nand, &again).is_ok());
}

TEST_CASE("stores of the raw-NAND methods never write format 4", "[superblock]") {
  const Method m = GENERATE(Method::kPdl, Method::kOpu, Method::kIpu, Method::kIpl);
  auto nand = pdl::test::make_ram_nand(pdl::test::small_geometry(16));
  StoreParams p;
  p.method = m;
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, p, &store).is_ok());
  std::vector<uint8_t> data(nand->geometry().page_data), spare(nand->geometry().page_spare);
  REQUIRE(nand->read(0, data, spare).is_ok());
  CHECK(le::get32(data.data() + 8) != kSuperblockFtl);
  for (size_t i = 80; i < 96; i++) CHECK(data[i] == 0xFF);  // no extension
}

TEST_CASE("format refuses FTL parameters on the wrong method, naming them", "[superblock]") {
  struct Bad {
    Method method;
    FtlKind ftl;
    uint32_t log_blocks, sb_slots;
    const char* message;
  };
  const Bad bad = GENERATE(
      Bad{Method::kPdl, FtlKind::kPage, 0, 0, "ftl: only the ftl and stablebuffer methods"},
      Bad{Method::kFtl, FtlKind::kNone, 0, 0, "ftl: an ftl or stablebuffer store needs"},
      Bad{Method::kFtl, FtlKind::kPage, 16, 0, "log_blocks: only the bast and fast FTLs"},
      Bad{Method::kFtl, FtlKind::kPage, 0, 8, "sb_slots: only the stablebuffer method"},
      Bad{Method::kOpu, FtlKind::kNone, 0, 8, "sb_slots: only the stablebuffer method"},
      Bad{Method::kIpl, FtlKind::kNone, 16, 0, "log_blocks: only the bast and fast FTLs"});
  auto nand = pdl::test::make_ram_nand(pdl::test::small_geometry(16));
  StoreParams p;
  p.method = bad.method;
  p.ftl = bad.ftl;
  p.log_blocks = bad.log_blocks;
  p.sb_slots = bad.sb_slots;
  std::unique_ptr<PageStore> store;
  const Status st = format_store(*nand, p, &store);
  INFO(st.to_string());
  CHECK(st.is(Errc::kInvalidArgument));
  CHECK(std::string(st.message()).find(bad.message) != std::string::npos);
}
