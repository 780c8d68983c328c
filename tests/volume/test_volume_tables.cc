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

using namespace pdl;

namespace {

// Everything a user or the next operations can see of a Volume.
struct Snapshot {
  std::vector<FileInfo> files;
  std::map<std::string, std::vector<uint8_t>> bytes;
  std::map<std::string, std::vector<uint32_t>> lpns;
  std::vector<Owner> owners;
  uint32_t free_lpns = 0;
  std::string main_name;
};

// `live`: a volume that was not just opened keeps holes at the end of a chunk table that a
// truncate left (an open builds tables up to the last mapped chunk): compared without them.
Snapshot snapshot(Volume& v, bool live = false) {
  Snapshot s;
  s.files = v.list();
  for (const FileInfo& fi : s.files) {
    Volume::FileId id;
    REQUIRE(v.lookup(fi.name, &id).is_ok());
    std::vector<uint8_t> b(fi.size);
    size_t got = 0;
    REQUIRE(v.read(id, 0, b, &got).is_ok());
    REQUIRE(got == fi.size);
    s.bytes[fi.name] = b;
    std::vector<uint32_t>& lpns = s.lpns[fi.name];
    REQUIRE(v.chunk_lpns(fi.name, &lpns).is_ok());
    while (live && !lpns.empty() && lpns.back() == Volume::kNoLpn) lpns.pop_back();
  }
  const VolumeLayout& L = v.layout();
  for (uint32_t l = L.data_first; l < L.data_first + L.data_lpns; l++)
  {
    Owner o;
    REQUIRE(v.owner_of(l, &o).is_ok());
    s.owners.push_back(o);
  }
  s.free_lpns = v.stats().free_lpns;
  s.main_name = v.main_name();
  return s;
}

void require_equal(const Snapshot& a, const Snapshot& b, const char* what) {
  INFO(what);
  REQUIRE(a.files.size() == b.files.size());
  for (size_t i = 0; i < a.files.size(); i++) {
    INFO("file " << a.files[i].name);
    CHECK(a.files[i].id == b.files[i].id);
    CHECK(a.files[i].name == b.files[i].name);
    CHECK(a.files[i].size == b.files[i].size);
    CHECK(a.files[i].mtime_ns == b.files[i].mtime_ns);
    CHECK(a.files[i].chunks_mapped == b.files[i].chunks_mapped);
    CHECK(a.files[i].kind == b.files[i].kind);
  }
  CHECK(a.bytes == b.bytes);
  CHECK(a.lpns == b.lpns);
  REQUIRE(a.owners.size() == b.owners.size());
  for (size_t i = 0; i < a.owners.size(); i++) {
    INFO("data lpn index " << i);
    CHECK(a.owners[i].id == b.owners[i].id);
    CHECK(a.owners[i].chunk == b.owners[i].chunk);
    CHECK(a.owners[i].gen == b.owners[i].gen);
  }
  CHECK(a.free_lpns == b.free_lpns);
  CHECK(a.main_name == b.main_name);
}

// Random file work: creates, whole and partial writes (holes too), truncates down and up,
// renames (some replacing), removes, mtimes, syncs. Stays well within the chip.
void random_work(Volume& v, std::mt19937& rng, int ops) {
  const size_t chunk = v.layout().chunk;
  const uint64_t cap = std::min<uint64_t>(v.max_file_size() / 8, 12 * chunk);
  const char* names[] = {"db", "db-journal", "db-wal", "a", "b", "c"};
  for (int i = 0; i < ops; i++) {
    const std::string name = names[rng() % 6];
    Volume::FileId id;
    const bool exists = v.lookup(name, &id).is_ok();
    switch (rng() % 9) {
      case 0:
      case 1:
      case 2: {  // write somewhere (creating)
        REQUIRE(v.open_file(name, true, &id).is_ok());
        const uint64_t off = rng() % cap;
        const size_t len = 1 + rng() % (2 * chunk);
        std::vector<uint8_t> d(len, uint8_t(rng()));
        if (off + len <= cap) REQUIRE(v.write(id, off, d).is_ok());
        break;
      }
      case 3:
        if (exists) REQUIRE(v.truncate(id, rng() % cap).is_ok());
        break;
      case 4:
        if (exists) REQUIRE(v.rename(name, names[rng() % 6]).is_ok());
        break;
      case 5:
        if (exists && rng() % 2) REQUIRE(v.remove(name).is_ok());
        break;
      case 6:
        if (exists) REQUIRE(v.set_mtime(id, 1800000000000000000ull + rng()).is_ok());
        break;
      default:
        REQUIRE(v.sync().is_ok());
    }
  }
}

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
    if (!test::in_matrix_sample(i)) continue;
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
    if (!test::in_matrix_sample(i)) continue;
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
