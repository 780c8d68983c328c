// test_volume_tables.cc — the Volume's tables in a checkpoint (volume_tables.cc): a Volume
// opened from the tables saved at a clean close equals one that read its directory and owner
// map — files, names, sizes, mtimes, chunk tables, owner entries, free pool order, next ids and
// versions — and goes on equal; damaged, hostile or stale sections are refused (the open reads
// the pages instead, with the right contents). Over the store matrix, per page and atomic.
#include <catch2/catch.hpp>

#include <map>
#include <random>
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
#include "tests/support/volume_snapshot.h"

using namespace pdl;
using pdl::test::random_work;
using pdl::test::require_equal;
using pdl::test::snapshot;
using pdl::test::Snapshot;

namespace {

// Modification times from the logical clock: two chips given the same work hold the same bytes.
VolumeOptions options() {
  VolumeOptions o = test::volume_options();
  o.logical_clock = true;
  return o;
}

Status open_volume(Nand& nand, CommitMode mode, std::span<const uint8_t> tables,
                   std::unique_ptr<Volume>* out) {
  std::unique_ptr<PageStore> store;
  PDL_TRY(mount_store(nand, &store, nullptr, mode));
  return Volume::open(std::move(store), options(), out, tables);
}

std::vector<uint8_t> saved_tables(Volume& v) {
  REQUIRE(v.close().is_ok());
  TableWriter w;
  const Status st = v.save_tables(w);
  INFO(st.message());
  REQUIRE(st.is_ok());
  return w.data();
}

}  // namespace

TEST_CASE("a volume opened from its saved tables equals one that read its metadata pages",
          "[volume][checkpoint]") {
  const CommitMode mode = GENERATE(CommitMode::kPerPage, CommitMode::kGroup);
  const auto matrix = test::store_matrix();
  for (size_t i = 0; i < matrix.size(); i++) {
    if (!test::in_matrix_sample(i, __LINE__)) continue;
    const test::StoreConfig& cfg = matrix[i];
    INFO(cfg.name << (mode == CommitMode::kGroup ? ", atomic" : ", per page"));
    auto nand = test::make_ram_nand(cfg.geo);
    std::unique_ptr<Volume> vol =
        test::fresh_volume(*nand, cfg.params, mode, 16, "db", options());
    std::mt19937 rng(uint32_t(1000 + i));
    random_work(*vol, rng, 120);
    const std::vector<uint8_t> tables = saved_tables(*vol);
    const Snapshot before = snapshot(*vol, true);
    CHECK(vol->table_bytes() > 0);
    CHECK(tables.size() <= Volume::max_table_bytes(vol->layout()));
    vol.reset();

    // Restored and read, on the same chip: equal, and they save the same section.
    REQUIRE(open_volume(*nand, mode, tables, &vol).is_ok());
    INFO("refused: " << vol->tables_refused());
    if (cfg.params.method == Method::kStableBuffer && !vol->from_tables()) {
      // A StableBuffer mounted by scanning may stage the pages in other slots than before
      // (locate differs): the location check refuses, and the open reads the pages. (Its
      // checkpointed tables, restored exactly, locate them where they were.)
      CHECK(vol->tables_refused().find("moved in the store") != std::string::npos);
    } else {
      REQUIRE(vol->from_tables());
    }
    const bool restored_ok = vol->from_tables();
    // The restore read one page, the header; a reading open reads the directory and the
    // owner map too.
    const uint64_t restore_reads = vol->store().stats().reads;
    if (restored_ok) CHECK(restore_reads == 1);
    const Snapshot restored = snapshot(*vol);
    REQUIRE(vol->check().is_ok());
    if (restored_ok) CHECK(saved_tables(*vol) == tables);  // (SB: the locations differ)
    vol.reset();
    REQUIRE(open_volume(*nand, mode, {}, &vol).is_ok());
    REQUIRE(!vol->from_tables());
    CHECK(vol->tables_refused().empty());
    CHECK(vol->store().stats().reads >= 1 + vol->layout().dir_pages + vol->layout().owner_pages);
    const Snapshot read = snapshot(*vol);
    if (restored_ok) CHECK(saved_tables(*vol) == tables);  // (SB: the locations differ)
    require_equal(before, read, "comparison 1");
    require_equal(restored, read, "comparison 2");
    vol.reset();

    // The same work on both goes on alike (next ids, versions, the pool's order): the same
    // lpns, owner entries and bytes.
    std::mt19937 rng2(uint32_t(77 + i));
    REQUIRE(open_volume(*nand, mode, tables, &vol).is_ok());
    REQUIRE(vol->from_tables() == restored_ok);
    {
      std::mt19937 r = rng2;
      random_work(*vol, r, 60);
    }
    const std::vector<uint8_t> after_restored = saved_tables(*vol);
    const Snapshot worked_restored = snapshot(*vol, true);
    vol.reset();
    // The restored volume's work is on flash: a reading open finds it.
    REQUIRE(open_volume(*nand, mode, {}, &vol).is_ok());
    require_equal(worked_restored, snapshot(*vol), "comparison 3");
    REQUIRE(vol->check().is_ok());
    vol.reset();

    // A second chip that took the same history, but opened by reading, does the same work.
    auto nand2 = test::make_ram_nand(cfg.geo);
    vol = test::fresh_volume(*nand2, cfg.params, mode, 16, "db", options());
    std::mt19937 rng1(uint32_t(1000 + i));
    random_work(*vol, rng1, 120);
    REQUIRE(vol->close().is_ok());
    vol.reset();
    REQUIRE(open_volume(*nand2, mode, {}, &vol).is_ok());
    {
      std::mt19937 r = rng2;
      random_work(*vol, r, 60);
    }
    CHECK(saved_tables(*vol) == after_restored);
    require_equal(worked_restored, snapshot(*vol, true), "comparison 4");
  }
}

TEST_CASE("damaged, hostile and stale volume tables are refused and the pages are read",
          "[volume][checkpoint]") {
  const CommitMode mode = GENERATE(CommitMode::kPerPage, CommitMode::kGroup);
  const auto matrix = test::store_matrix();
  for (size_t i = 0; i < matrix.size(); i++) {
    if (!test::in_matrix_sample(i, __LINE__)) continue;
    const test::StoreConfig& cfg = matrix[i];
    INFO(cfg.name << (mode == CommitMode::kGroup ? ", atomic" : ", per page"));
    auto nand = test::make_ram_nand(cfg.geo);
    std::unique_ptr<Volume> vol =
        test::fresh_volume(*nand, cfg.params, mode, 16, "db", options());
    std::mt19937 rng(uint32_t(500 + i));
    random_work(*vol, rng, 80);
    const std::vector<uint8_t> tables = saved_tables(*vol);
    const Snapshot want = snapshot(*vol, true);
    vol.reset();
    REQUIRE(open_volume(*nand, mode, tables, &vol).is_ok());
    REQUIRE(vol->from_tables());
    vol.reset();

    auto refused = [&](std::span<const uint8_t> bad, const char* what) {
      INFO(what);
      REQUIRE(open_volume(*nand, mode, bad, &vol).is_ok());
      CHECK(!vol->from_tables());
      CHECK(!vol->tables_refused().empty());
      require_equal(want, snapshot(*vol), "comparison 5");
      vol.reset();
    };
    // Truncated sections, and one bit flipped in each byte (the section's CRC).
    for (size_t n : {size_t(1), size_t(7), size_t(8), tables.size() / 2, tables.size() - 1})
      refused(std::span(tables).first(n), "truncated");
    for (size_t b = 0; b < tables.size(); b += 1 + tables.size() / 40) {
      std::vector<uint8_t> bad = tables;
      bad[b] ^= uint8_t(1u << (b % 8));
      refused(bad, "a bit flipped");
    }
    // Hostile: mutated and re-sealed with a valid CRC. Never a crash; accepted only if
    // consistent, and then the volume checks clean — or, the owner map being on flash only
    // (section version 2), check() (fsck) finds the chunk tables disagreeing with the owner
    // pages, which the open does not read; refused ones read the right contents.
    std::mt19937 frng(uint32_t(9 + i));
    for (int k = 0; k < 60; k++) {
      std::vector<uint8_t> bad(tables.begin(), tables.end() - 4);
      const int edits = 1 + int(frng() % 3);
      for (int e = 0; e < edits; e++) {
        const size_t at = frng() % bad.size();
        switch (frng() % 3) {
          case 0:
            bad[at] = uint8_t(frng());
            break;
          case 1:
            bad[at] ^= uint8_t(1u << (frng() % 8));
            break;
          default:
            bad.resize(at);
            break;  // cut short (a count then overruns the stream)
        }
        if (bad.empty()) bad.push_back(0);
      }
      uint8_t c[4];
      le::put32(c, crc32c(bad.data(), bad.size()));
      bad.insert(bad.end(), c, c + 4);
      REQUIRE(open_volume(*nand, mode, bad, &vol).is_ok());
      if (vol->from_tables()) {
        const Status st = vol->check();
        INFO(st.to_string());
        CHECK((st.is_ok() || (st.is(Errc::kCorrupt) &&
                              st.message().find("owner map disagrees") != std::string::npos)));
      } else {
        require_equal(want, snapshot(*vol), "comparison 6");
      }
      vol.reset();
    }

    // Stale: the volume changed after the tables were saved. Growing a file maps free lpns
    // (refused on every store); a rename alone rewrites only a directory page (refused where
    // the store moves a rewritten page, as every out-of-place method does).
    REQUIRE(open_volume(*nand, mode, {}, &vol).is_ok());
    Volume::FileId id;
    REQUIRE(vol->open_file("grown", true, &id).is_ok());
    REQUIRE(vol->write(id, 0, std::vector<uint8_t>(3 * cfg.geo.page_data, 0x5A)).is_ok());
    const std::vector<uint8_t> grown = saved_tables(*vol);
    const Snapshot want_grown = snapshot(*vol, true);
    vol.reset();
    REQUIRE(open_volume(*nand, mode, tables, &vol).is_ok());
    INFO("grown: " << vol->tables_refused());
    CHECK(!vol->from_tables());
    require_equal(want_grown, snapshot(*vol), "comparison 7");
    REQUIRE(vol->rename("grown", "moved").is_ok());
    REQUIRE(vol->close().is_ok());
    const Snapshot want_moved = snapshot(*vol, true);
    vol.reset();
    REQUIRE(open_volume(*nand, mode, grown, &vol).is_ok());
    // (Not seen where the directory page's new version need not move on flash: in place
    // (IPU, IPL's log region) or in a differential write buffer in NVM.)
    const bool unmoved = cfg.params.method == Method::kIpu || cfg.params.method == Method::kIpl ||
                         cfg.params.nvm_bytes > 0;
    INFO("rename only: " << vol->tables_refused());
    if (!unmoved) CHECK(!vol->from_tables());
    if (!vol->from_tables()) require_equal(want_moved, snapshot(*vol), "comparison 8");
    vol.reset();
  }
}

namespace {

// The same section in version 2's bytes (docs/format.md §13.4: a generation per owner page, a
// chunk table without lpn runs), re-sealed: what an older pdl wrote at its clean close.
std::vector<uint8_t> as_version_2(const std::vector<uint8_t>& v3) {
  size_t at = 0;
  std::vector<uint8_t> out;
  auto copy = [&](size_t n) {
    REQUIRE(at + n <= v3.size() - 4);
    out.insert(out.end(), v3.begin() + long(at), v3.begin() + long(at + n));
    at += n;
  };
  auto u32 = [&](size_t off) { return le::get32(v3.data() + off); };
  auto put32 = [&](uint32_t v) {
    uint8_t b[4];
    le::put32(b, v);
    out.insert(out.end(), b, b + 4);
  };
  copy(4);
  REQUIRE(u32(at) == 3);
  put32(2);
  at += 4;
  copy(24);
  copy(2 + le::get16(v3.data() + at));
  copy(4 + 4 + 4 + 8);
  const uint32_t runs = u32(at);
  at += 4;
  for (uint32_t k = 0; k < runs; k++, at += 12)
    for (uint32_t j = 0; j < u32(at + 8); j++) out.insert(out.end(), v3.begin() + long(at),
                                                          v3.begin() + long(at + 8));
  const uint32_t files = u32(at);
  copy(4);
  for (uint32_t f = 0; f < files; f++) {
    copy(4 + 4 + 8 + 8 + 8);
    copy(1 + v3[at]);
    const uint32_t n = u32(at);
    copy(4);
    for (uint32_t c = 0; c < n;) {
      const uint32_t x = u32(at);
      if (x == 0xFFFFFFFFu) {
        c += u32(at + 4);
        copy(8);
      } else if (x == 0xFFFFFFFEu) {
        for (uint32_t k = 0; k < u32(at + 8); k++) put32(u32(at + 4) + k);
        c += u32(at + 8);
        at += 12;
      } else {
        copy(4);
        c++;
      }
    }
  }
  REQUIRE(at == v3.size() - 4);
  put32(crc32c(out.data(), out.size()));
  return out;
}

}  // namespace

TEST_CASE("chunk tables of consecutive lpns are saved as runs, mixed with single lpns and holes",
          "[volume][checkpoint]") {
  const CommitMode mode = GENERATE(CommitMode::kPerPage, CommitMode::kGroup);
  test::StoreConfig cfg = test::store_matrix().front();
  cfg.geo.blocks *= 4;  // (room for a run worth the name)
  cfg.params.logical_pages = (cfg.geo.blocks - 6) * cfg.geo.pages_per_block * 7 / 8;
  INFO(cfg.name << (mode == CommitMode::kGroup ? ", atomic" : ", per page"));
  auto nand = test::make_ram_nand(cfg.geo);
  std::unique_ptr<Volume> vol = test::fresh_volume(*nand, cfg.params, mode, 16, "db", options());
  const size_t chunk = vol->layout().chunk;
  const size_t n = std::min<size_t>(vol->layout().data_lpns / 4, 400);
  REQUIRE(n >= 40);
  std::vector<uint8_t> d(chunk);
  auto put = [&](const char* name, size_t c) {
    Volume::FileId id;
    REQUIRE(vol->open_file(name, true, &id).is_ok());
    std::fill(d.begin(), d.end(), uint8_t(c * 7 + name[0]));
    REQUIRE(vol->write(id, uint64_t(c) * chunk, d).is_ok());
  };
  std::vector<uint8_t> empty;
  {
    // Only the header's fixed part and the empty file "db": the baseline size.
    REQUIRE(vol->sync().is_ok());
    empty = saved_tables(*vol);
  }
  // "db": n chunks written in order (one run of lpns); "a" and "b": written alternately (their
  // lpns interleave: single lpns), "b" with a hole in the middle; then "db" grows by a chunk
  // far past its end (a hole run, then one lpn).
  for (size_t c = 0; c < n; c++) put("db", c);
  for (size_t c = 0; c < 12; c++) {
    put("a", c);
    if (c != 5 && c != 6) put("b", c);
  }
  put("db", n + 30);
  REQUIRE(vol->sync().is_ok());
  const std::vector<uint8_t> tables = saved_tables(*vol);
  const Snapshot want = snapshot(*vol, true);
  std::vector<uint32_t> lpns;
  REQUIRE(vol->chunk_lpns("db", &lpns).is_ok());
  REQUIRE(lpns.size() == n + 31);
  for (size_t c = 1; c < n; c++) REQUIRE(lpns[c] == lpns[0] + c);  // (the premise: one run)
  // A run costs 12 bytes where single lpns cost 4 each: everything written adds less than a
  // byte per chunk of "db" (two more files' slots, "a" and "b" at 4 bytes per chunk, a hole
  // run, and a 12-byte generation run per owner page written), where 4 bytes per chunk and
  // 8 per owner page were the cost before runs.
  const size_t owner_pages = (n + 31 + 24) / vol->layout().owners_per_page() + 2;
  // (Three slots at most — "db" may be new — a run, two hole runs, a lone lpn, "a" and "b".)
  const size_t bound =
      3 * (4 + 4 + 8 + 8 + 8 + 1 + 2 + 4) + 12 + 2 * 8 + 4 + 22 * 4 + 12 * owner_pages;
  INFO("empty " << empty.size() << " bytes, now " << tables.size() << ", n " << n);
  CHECK(tables.size() - empty.size() <= bound);
  CHECK(bound < 4 * (n + 23));  // (the premise: runs save)
  vol.reset();
  REQUIRE(open_volume(*nand, mode, tables, &vol).is_ok());
  INFO("refused: " << vol->tables_refused());
  REQUIRE(vol->from_tables());
  require_equal(want, snapshot(*vol), "restored");
  REQUIRE(vol->check().is_ok());
  CHECK(saved_tables(*vol) == tables);
  vol.reset();
  REQUIRE(open_volume(*nand, mode, {}, &vol).is_ok());
  require_equal(want, snapshot(*vol), "read");
  vol.reset();
  // An older pdl's section (version 2) is read alike; the next save writes version 3.
  const std::vector<uint8_t> v2 = as_version_2(tables);
  CHECK(v2.size() > tables.size() + 4 * (n - 4));
  REQUIRE(open_volume(*nand, mode, v2, &vol).is_ok());
  INFO("refused: " << vol->tables_refused());
  REQUIRE(vol->from_tables());
  require_equal(want, snapshot(*vol), "restored from version 2");
  CHECK(saved_tables(*vol) == tables);

  // A run that overlaps lpns another file owns, or runs past the chunk table or the data
  // area, is refused (re-sealed with a valid CRC: the decoder's own checks).
  vol.reset();
  size_t at = 0;
  for (size_t i = 0; i + 12 <= tables.size(); i++)
    if (le::get32(tables.data() + i) == 0xFFFFFFFEu && le::get32(tables.data() + i + 4) == lpns[0] &&
        le::get32(tables.data() + i + 8) == n) {
      at = i;
      break;
    }
  REQUIRE(at != 0);
  for (uint32_t count : {uint32_t(0), uint32_t(n + 1), uint32_t(n + 40), 0xFFFFFFFFu}) {
    std::vector<uint8_t> bad(tables.begin(), tables.end() - 4);
    le::put32(bad.data() + at + 8, count);
    uint8_t c[4];
    le::put32(c, crc32c(bad.data(), bad.size()));
    bad.insert(bad.end(), c, c + 4);
    INFO("run count " << count);
    REQUIRE(open_volume(*nand, mode, bad, &vol).is_ok());
    CHECK(!vol->from_tables());
    CHECK(!vol->tables_refused().empty());
    require_equal(want, snapshot(*vol), "refused run");
    vol.reset();
  }
}

TEST_CASE("a volume with work pending refuses to save its tables, naming it",
          "[volume][checkpoint]") {
  const auto cfg = test::store_matrix().front();
  auto nand = test::make_ram_nand(cfg.geo);
  std::unique_ptr<Volume> vol =
      test::fresh_volume(*nand, cfg.params, CommitMode::kPerPage, 16, "db", options());
  Volume::FileId id;
  REQUIRE(vol->create("db", &id).is_ok());
  REQUIRE(vol->write(id, 0, std::vector<uint8_t>(100, 1)).is_ok());
  TableWriter w;
  Status st = vol->save_tables(w);
  CHECK(st.is(Errc::kInvalidArgument));
  CHECK(std::string(st.message()).find("not synced") != std::string::npos);
  REQUIRE(vol->sync().is_ok());
  REQUIRE(vol->write(id, 0, std::vector<uint8_t>(10, 2)).is_ok());  // a lazy mtime
  REQUIRE(vol->sync().is_ok());
  st = vol->save_tables(w);
  CHECK(std::string(st.message()).find("mtime") != std::string::npos);
  REQUIRE(vol->remove("db").is_ok());
  REQUIRE(vol->sync().is_ok());  // the release is durable; its trim and clearing not yet
  st = vol->save_tables(w);
  CHECK(st.is(Errc::kInvalidArgument));
  CHECK(!st.message().empty());
  REQUIRE(vol->close().is_ok());
  CHECK(vol->save_tables(w).is_ok());
  CHECK(w.size() > 0);
}

TEST_CASE("volume tables open read-only alike, and another volume's tables are refused",
          "[volume][checkpoint]") {
  const auto cfg = test::store_matrix().front();
  auto make = [&](uint32_t max_files, const char* main, std::unique_ptr<EmulatedNand>* nand,
                  std::vector<uint8_t>* tables) {
    *nand = test::make_ram_nand(cfg.geo);
    std::unique_ptr<PageStore> store;
    REQUIRE(format_store(**nand, cfg.params, &store, CommitMode::kGroup).is_ok());
    std::unique_ptr<Volume> vol;
    REQUIRE(Volume::format(std::move(store), max_files, main, options(), &vol).is_ok());
    std::mt19937 rng(max_files);
    random_work(*vol, rng, 50);
    *tables = saved_tables(*vol);
  };
  std::unique_ptr<EmulatedNand> a, b, c;
  std::vector<uint8_t> ta, tb, tc;
  make(16, "db", &a, &ta);
  make(32, "db", &b, &tb);
  make(16, "other", &c, &tc);

  std::unique_ptr<PageStore> store;
  REQUIRE(mount_store(*a, &store, nullptr, CommitMode::kGroup).is_ok());
  std::unique_ptr<Volume> vol;
  VolumeOptions ro = options();
  ro.read_only = true;
  REQUIRE(Volume::open(std::move(store), ro, &vol, ta).is_ok());
  REQUIRE(vol->from_tables());
  const Snapshot restored = snapshot(*vol);
  TableWriter w;
  CHECK(vol->save_tables(w).is(Errc::kInvalidArgument));  // read-only: no clean-up was done
  vol.reset();
  REQUIRE(open_volume(*a, CommitMode::kGroup, {}, &vol).is_ok());
  require_equal(restored, snapshot(*vol), "read-only restore");
  vol.reset();

  // b's tables on a: another layout; c's: another main name (and other files).
  for (const auto* other : {&tb, &tc}) {
    REQUIRE(open_volume(*a, CommitMode::kGroup, *other, &vol).is_ok());
    CHECK(!vol->from_tables());
    CHECK(vol->tables_refused().find("differs from the volume header") != std::string::npos);
    require_equal(restored, snapshot(*vol), "another volume's tables");
    vol.reset();
  }
}
