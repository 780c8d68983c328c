// test_volume_trims.cc — a removed file's lpns are trimmed in the store (volume.h, crash rules):
// after the sync that makes the removal durable they read unmapped, and after the next one
// they stay unmapped across a remount — over every method of the store matrix.
#include <catch2/catch.hpp>

#include <vector>

#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "flash/volume/volume.h"
#include "tests/support/store_matrix.h"
#include "tests/support/test_util.h"
#include "tests/support/volume_options.h"

using namespace pdl;

TEST_CASE("a removed file's lpns are unmapped in the store after remove and sync",
          "[volume][trim]") {
  const CommitMode mode = GENERATE(CommitMode::kPerPage, CommitMode::kGroup);
  const auto matrix = test::store_matrix();
  for (size_t i = 0; i < matrix.size(); i++) {
    if (!test::in_matrix_sample(i, __LINE__)) continue;
    const test::StoreConfig& cfg = matrix[i];
    INFO(cfg.name << (mode == CommitMode::kGroup ? ", atomic" : ", per page"));
    auto nand = test::make_ram_nand(cfg.geo);
    std::unique_ptr<Volume> vol =
        test::fresh_volume(*nand, cfg.params, mode, 32, "", test::volume_options());
    const size_t chunk = cfg.geo.page_data;
    Volume::FileId a, b;
    REQUIRE(vol->create("a", &a).is_ok());
    REQUIRE(vol->write(a, 0, std::vector<uint8_t>(5 * chunk, 0x11)).is_ok());
    REQUIRE(vol->create("b", &b).is_ok());
    REQUIRE(vol->write(b, 0, std::vector<uint8_t>(2 * chunk, 0x22)).is_ok());
    REQUIRE(vol->sync().is_ok());
    std::vector<uint32_t> released, kept;
    REQUIRE(vol->chunk_lpns("a", &released).is_ok());
    REQUIRE(vol->chunk_lpns("b", &kept).is_ok());
    REQUIRE(released.size() == 5);
    for (uint32_t l : released) REQUIRE(vol->store().is_mapped(l));

    REQUIRE(vol->remove("a").is_ok());
    REQUIRE(vol->sync().is_ok());
    for (uint32_t l : released) {
      INFO("released lpn " << l);
      CHECK(!vol->store().is_mapped(l));
    }
    for (uint32_t l : kept) CHECK(vol->store().is_mapped(l));

    // The next sync makes the trims durable: a remounted store reads them unmapped.
    REQUIRE(vol->sync().is_ok());
    vol.reset();
    std::unique_ptr<PageStore> store;
    REQUIRE(mount_store(*nand, &store).is_ok());
    std::vector<uint8_t> page(store->page_size());
    for (uint32_t l : released) {
      INFO("released lpn " << l << " after a remount");
      CHECK(!store->is_mapped(l));
      CHECK(store->read(l, page).is(Errc::kNotFound));
    }
    for (uint32_t l : kept) CHECK(store->read(l, page).is_ok());
  }
}
