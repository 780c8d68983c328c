// test_volume_owner_cache.cc — the Volume's owner map paged through a bounded cache
// (volume/owner_cache.h, volume_owners.cc) and the checkpoint section without it
// (volume_tables.cc, version 2): the cache never holds more pages than asked, dirty pages
// written back to make room come back right after a remount, a mount from a clean close's
// tables reads no owner page (a reading mount reads them all), and a version 1 section is
// refused with the pages read instead. Over the store matrix, per page and atomic. (The
// Volume's other suites run with a one-page cache too: OWNER_CACHE=1 in tests/meson.build.)
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "flash/volume/volume.h"
#include "tests/support/store_matrix.h"
#include "tests/support/test_util.h"
#include "tests/support/volume_options.h"

using namespace pdl;

namespace {

VolumeOptions with_cache(uint32_t pages) {
  VolumeOptions o;
  o.logical_clock = true;
  o.owner_cache_pages = pages;
  return o;
}

Status open_volume(Nand& nand, CommitMode mode, const VolumeOptions& o,
                   std::span<const uint8_t> tables, std::unique_ptr<Volume>* out) {
  std::unique_ptr<PageStore> store;
  PDL_TRY(mount_store(nand, &store, nullptr, mode));
  return Volume::open(std::move(store), o, out, tables);
}

std::vector<uint8_t> read_file(Volume& v, const std::string& name) {
  Volume::FileId id;
  REQUIRE(v.lookup(name, &id).is_ok());
  uint64_t size = 0;
  REQUIRE(v.size(id, &size).is_ok());
  std::vector<uint8_t> b(size);
  size_t got = 0;
  REQUIRE(v.read(id, 0, b, &got).is_ok());
  REQUIRE(got == size);
  return b;
}

// Files whose chunks spread over many owner pages: `files` files written a chunk at a time in
// turn, so neighbouring lpns belong to different files, then every other one truncated.
std::map<std::string, std::vector<uint8_t>> spread_files(Volume& v, int files, int chunks) {
  const size_t chunk = v.layout().chunk;
  std::map<std::string, std::vector<uint8_t>> want;
  std::vector<Volume::FileId> ids(size_t(files), 0);
  for (int f = 0; f < files; f++)
    REQUIRE(v.create("f" + std::to_string(f), &ids[size_t(f)]).is_ok());
  for (int c = 0; c < chunks; c++)
    for (int f = 0; f < files; f++) {
      std::vector<uint8_t> d(chunk, uint8_t(f * 31 + c));
      REQUIRE(v.write(ids[size_t(f)], uint64_t(c) * chunk, d).is_ok());
      auto& w = want["f" + std::to_string(f)];
      w.insert(w.end(), d.begin(), d.end());
    }
  REQUIRE(v.sync().is_ok());
  for (int f = 0; f < files; f += 2) {
    REQUIRE(v.truncate(ids[size_t(f)], chunk * size_t(chunks / 2)).is_ok());
    want["f" + std::to_string(f)].resize(chunk * size_t(chunks / 2));
  }
  REQUIRE(v.sync().is_ok());
  return want;
}

}  // namespace

TEST_CASE("the owner map holds no more pages than its cache, and what it wrote back reads back",
          "[volume][owner_cache]") {
  const CommitMode mode = GENERATE(CommitMode::kPerPage, CommitMode::kGroup);
  const uint32_t cache = GENERATE(1u, 2u);
  const auto matrix = test::store_matrix();
  int spilled = 0;  // configurations whose changes outgrew the cache between two syncs
  for (size_t i = 0; i < matrix.size(); i++) {
    if (!test::in_matrix_sample(i, __LINE__)) continue;
    const test::StoreConfig& cfg = matrix[i];
    INFO(cfg.name << (mode == CommitMode::kGroup ? ", atomic" : ", per page") << ", cache "
                  << cache);
    auto nand = test::make_ram_nand(cfg.geo);
    std::unique_ptr<Volume> vol =
        test::fresh_volume(*nand, cfg.params, mode, 16, "db", with_cache(cache));
    const VolumeLayout L = vol->layout();
    // Enough chunks to cover more owner pages than the cache holds (within half the chip).
    const uint32_t per = L.owners_per_page();
    const int chunks = int(std::min<uint32_t>(L.data_lpns / 12, ((cache + 2) * per + 5) / 6));
    const bool spills = uint64_t(6) * uint32_t(chunks) > uint64_t(cache + 1) * per;
    INFO(chunks << " chunks per file, " << per << " owner entries per page");
    const auto want = spread_files(*vol, 6, chunks);
    const VolumeStats s = vol->stats();
    CHECK(s.owner_cache_pages == cache);
    CHECK(s.owner_cached <= cache);
    // More pages changed between two syncs than the cache holds: some were written back.
    if (spills) CHECK(s.owner_writebacks > 0);
    spilled += spills;
    for (const auto& [name, bytes] : want) CHECK(read_file(*vol, name) == bytes);
    REQUIRE(vol->check().is_ok());
    CHECK(vol->stats().owner_cached <= cache);
    REQUIRE(vol->close().is_ok());
    vol.reset();
    // A reading mount with the default cache finds exactly these files and chunks.
    REQUIRE(open_volume(*nand, mode, with_cache(kDefaultOwnerCachePages), {}, &vol).is_ok());
    REQUIRE(vol->check().is_ok());
    for (const auto& [name, bytes] : want) CHECK(read_file(*vol, name) == bytes);
    CHECK(vol->list().size() == want.size());
  }
  CHECK(spilled > 0);
}

TEST_CASE("a mount from a clean close's volume tables reads no owner page",
          "[volume][owner_cache][checkpoint]") {
  const CommitMode mode = GENERATE(CommitMode::kPerPage, CommitMode::kGroup);
  const auto matrix = test::store_matrix();
  for (size_t i = 0; i < matrix.size(); i++) {
    if (!test::in_matrix_sample(i, __LINE__)) continue;
    const test::StoreConfig& cfg = matrix[i];
    INFO(cfg.name << (mode == CommitMode::kGroup ? ", atomic" : ", per page"));
    auto nand = test::make_ram_nand(cfg.geo);
    std::unique_ptr<Volume> vol =
        test::fresh_volume(*nand, cfg.params, mode, 16, "db", with_cache(2));
    const VolumeLayout L = vol->layout();
    const int chunks = int(std::min<uint32_t>(L.data_lpns / 12, (4 * L.owners_per_page()) / 6));
    const auto want = spread_files(*vol, 6, chunks);
    REQUIRE(vol->close().is_ok());
    TableWriter w;
    const Status saved = vol->save_tables(w);
    INFO(saved.to_string());
    REQUIRE(saved.is_ok());
    const std::vector<uint8_t> tables = w.data();
    vol.reset();

    REQUIRE(open_volume(*nand, mode, with_cache(2), tables, &vol).is_ok());
    INFO("refused: " << vol->tables_refused());
    // (A StableBuffer may move a metadata page between close and mount: then refused.)
    if (vol->from_tables()) {
      CHECK(vol->stats().owner_loads == 0);
      for (const auto& [name, bytes] : want) CHECK(read_file(*vol, name) == bytes);
      CHECK(vol->stats().owner_loads == 0);  // reads need the chunk tables only
      REQUIRE(vol->check().is_ok());         // fsck reads every owner page
      CHECK(vol->stats().owner_loads >= L.owner_pages);
    }
    vol.reset();
    // A reading mount reads every owner page (and keeps at most the cache's).
    REQUIRE(open_volume(*nand, mode, with_cache(2), {}, &vol).is_ok());
    CHECK(vol->stats().owner_loads >= L.owner_pages);
    CHECK(vol->stats().owner_cached <= 2);
    for (const auto& [name, bytes] : want) CHECK(read_file(*vol, name) == bytes);
  }
}

TEST_CASE("a version 1 volume section is refused and the owner pages are read instead",
          "[volume][owner_cache][checkpoint]") {
  const auto matrix = test::store_matrix();
  const test::StoreConfig& cfg = matrix[0];
  INFO(cfg.name);
  auto nand = test::make_ram_nand(cfg.geo);
  std::unique_ptr<Volume> vol =
      test::fresh_volume(*nand, cfg.params, CommitMode::kGroup, 16, "db", with_cache(4));
  const auto want = spread_files(*vol, 3, 20);
  REQUIRE(vol->close().is_ok());
  TableWriter w;
  REQUIRE(vol->save_tables(w).is_ok());
  std::vector<uint8_t> old = w.data();
  vol.reset();
  // The section as a pdl of section version 1 would find it: the version field (offset 4)
  // says 1, sealed with a valid CRC.
  REQUIRE(old.size() > 12);
  REQUIRE(le::get32(old.data() + 4) == 3);
  le::put32(old.data() + 4, 1);
  le::put32(old.data() + old.size() - 4, crc32c(old.data(), old.size() - 4));
  REQUIRE(open_volume(*nand, CommitMode::kGroup, with_cache(4), old, &vol).is_ok());
  CHECK(!vol->from_tables());
  INFO(vol->tables_refused());
  CHECK(vol->tables_refused().find("version 1") != std::string::npos);
  CHECK(vol->stats().owner_loads >= vol->layout().owner_pages);
  for (const auto& [name, bytes] : want) CHECK(read_file(*vol, name) == bytes);
  REQUIRE(vol->check().is_ok());
}
