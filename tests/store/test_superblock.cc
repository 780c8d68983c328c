// test_superblock.cc — format parameters persist, bad parameters and foreign chips are refused.
#include <catch2/catch.hpp>

#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "flash/store/superblock.h"
#include "tests/support/test_util.h"

using namespace pdl;

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
