// test_vfs_checkpoint.cc — the checkpoint at clean unmount (docs/design.md §17) seen from
// SQLite: what a clean close, a crash and a power cut during the close's checkpoint write leave
// for the next open, through the pdl VFS, for every method and commit mode (PDL and OPU
// committing page by page included: their checkpoints say the newest commit record is not
// known, docs/format.md §13.1, and mount per page).
//
// For each method {pdl, opu, ipu, ipl, the FTL devices} and commit mode {atomic, journal; IPU
// and the FTL devices have only journal}, on a 2M chip of 16-page blocks with checkpoint=on
// (the power-cut campaign also on a 16M one):
//   * a database written and closed (the last connection closes the image: its checkpoint is
//     written) reopens from the checkpoint — PRAGMA pdl_stats says checkpoint.mount
//     "checkpoint", no page scanned — passes integrity_check and pdl_check and holds the same
//     rows;
//   * a change committed and then a crash (the chip frozen, EmulatedNand::cut_power_after(0),
//     before the connections close: nothing of the close reaches the chip) reopens from the
//     checkpoint by replaying the blocks the summary pages declared since, holding every
//     acknowledged commit;
//   * a power cut at every mutating operation of the close after a change (the Volume's close,
//     then the checkpoint: area erases, area pages, the log entry), each reopened: intact,
//     holding the last commit, mounted by scan until the cut falls after the log entry —
//     exhaustive over that close (the trial whose cut the close never reaches ends the loop:
//     its reopen mounts from the new checkpoint);
//   * a read-only open (SQLITE_OPEN_READONLY) writes nothing: the image file is byte-identical
//     after it, whether the checkpoint was current or stale.
#include <filesystem>

#include "flash/device/emulated_nand.h"
#include "tests/support/vfs_test_util.h"

using namespace pdl::test;

namespace {

const char* const kChip =
    "size=2M&page=2048&pages_per_block=16&max_files=8&checkpoint=on";
// The power-cut campaign also runs on a larger chip, whose checkpoint spans more area pages.
const char* const kLargeChip =
    "size=16M&page=2048&pages_per_block=16&max_files=8&checkpoint=on";

struct Config {
  std::string method;  // URI value of method= with its parameters
  std::string commit;  // "atomic" or "journal"
};

std::vector<Config> configs() {
  std::vector<Config> out;
  for (const char* m : {"pdl", "opu", "ipl"})
    for (const char* c : {"atomic", "journal"}) out.push_back({m, c});
  for (const char* m : {"ipu", "ftl", "ftl&ftl=bast&log_blocks=4", "ftl&ftl=fast&log_blocks=4",
                        "stablebuffer&ftl=fast&log_blocks=4&sb_slots=8"})
    out.push_back({m, "journal"});
  return out;
}

std::string uri(const Config& c, const std::string& path, const char* chip = kChip) {
  return pdl_uri(path, std::string(chip) + "&method=" + c.method + "&commit=" + c.commit);
}

// Transaction `i` (1-based): a few rows carrying i, an update of an older row, a delete.
void txn(Conn& db, int i) {
  db.must("BEGIN");
  for (int r = 0; r < 4; r++)
    db.must("INSERT INTO t(txn, v) VALUES (" + std::to_string(i) + ", hex(randomblob(" +
            std::to_string(80 + 37 * r) + ")))");
  db.must("UPDATE t SET v = v || '" + std::to_string(i) + "' WHERE id = " +
          std::to_string(1 + (i * 7) % (4 * i)));
  if (i % 3 == 0) db.must("DELETE FROM t WHERE txn = " + std::to_string(i - 2));
  db.must("COMMIT");
}

// Every row, in id order: the database's content.
std::string content(Conn& db) {
  return db.text("SELECT group_concat(id || ':' || txn || ':' || v, ',') FROM "
                 "(SELECT * FROM t ORDER BY id)");
}

Json stats(Conn& db) { return parse_json(db.text("PRAGMA pdl_stats")); }

void check_intact(Conn& db) {
  REQUIRE(db.text("PRAGMA integrity_check") == "ok");
  REQUIRE(db.text("PRAGMA pdl_check") == "ok");
}

// Create the image at `path` with transactions 1..n and close it (a checkpoint written).
// Returns the content.
std::string create(const Config& c, const std::string& path, int n, const char* chip = kChip) {
  Conn db(uri(c, path, chip));
  set_journal_mode(db, "DELETE");
  db.must("CREATE TABLE t(id INTEGER PRIMARY KEY, txn INTEGER, v TEXT)");
  for (int i = 1; i <= n; i++) txn(db, i);
  const std::string s = content(db);
  db.close();
  REQUIRE(pdl::vfs::device_of(path) == nullptr);  // the last connection closed the image
  return s;
}

// Freeze the chip of the image open at `path` now: what the connections do from here on (their
// close, the checkpoint) never reaches it, as if the process were killed.
void crash_now(const std::string& path) {
  auto* nand = dynamic_cast<pdl::EmulatedNand*>(pdl::vfs::device_of(path));
  REQUIRE(nand != nullptr);
  nand->cut_power_after(0);
}

}  // namespace

TEST_CASE("a clean close leaves a checkpoint the next open mounts from; a crash after a change "
          "makes it replay the declared blocks, keeping every commit",
          "[vfs][checkpoint]") {
  use_pdl_vfs();
  seed_sqlite_prng();
  for (const Config& c : configs()) {
    INFO("method " << c.method << ", commit=" << c.commit);
    const ScopedTempPath scratch("ck.db");
    const std::string& path = scratch.str();
    const std::string before = create(c, path, 6);
    std::string after;
    {
      Conn db(uri(c, path));
      const Json j = stats(db);
      CHECK(json_number(j, "checkpoint.area_blocks") >= 1);
      CHECK(json_string(j, "checkpoint.mount") == "checkpoint");
      CHECK(json_string(j, "checkpoint.scan_reason").empty());
      CHECK(json_number(j, "checkpoint.checkpoint_gen") >= 1);
      CHECK(json_number(j, "checkpoint.checkpoint_pages") >= 1);
      CHECK(json_number(j, "mount.pages_scanned") == 0);
      // The Volume's section carries no owner map: its pages stay on flash, unread.
      CHECK(json_number(j, "volume.owner_loads") == 0);
      CHECK(json_number(j, "ram.owner_pages_cached") == 0);
      CHECK(json_number(j, "ram.table_bytes") > 0);
      CHECK(json_number(j, "ram.ram_bytes_per_gib") ==
            Approx(json_number(j, "ram.table_bytes") * 512));  // a 2 MiB chip
      check_intact(db);
      REQUIRE(content(db) == before);
      txn(db, 7);  // acknowledged
      after = content(db);
      crash_now(path);
    }
    REQUIRE(pdl::vfs::device_of(path) == nullptr);
    Conn db(uri(c, path));
    const Json j = stats(db);
    // Every engine declared the changes after the checkpoint in summary pages (the log still
    // names the checkpoint) and re-read only the declared blocks.
    CHECK(json_string(j, "checkpoint.log.entry") == "checkpoint");
    CHECK(json_number(j, "checkpoint.summary_pages") >= 1);
    CHECK(json_string(j, "checkpoint.mount") == "checkpoint");
    CHECK(json_number(j, "checkpoint.replayed_blocks") >= 1);
    CHECK(json_number(j, "mount.pages_scanned") <
          json_number(j, "checkpoint.replayed_blocks") * 64 + 64);
    CHECK(json_number(j, "mount.pages_scanned") > 0);
    check_intact(db);
    REQUIRE(content(db) == after);
  }
}

TEST_CASE("a power cut at every operation of a close's checkpoint write: the next open scans "
          "and holds the last commit, until the checkpoint is complete",
          "[vfs][checkpoint][exhaustive]") {
  use_pdl_vfs();
  uint64_t total = 0;
  std::string summary;
  for (const std::string& chip_uri : {std::string(kChip), std::string(kLargeChip)})
  for (const Config& c : configs()) {
    // (No periodic checkpoint in the template's sessions — IPU declares two blocks per page
    // written — so that the close is what writes the next checkpoint.)
    const std::string chip_s = chip_uri + "&replay_blocks=1000";
    const char* const chip = chip_s.c_str();
    INFO("method " << c.method << ", commit=" << c.commit << ", chip " << chip);
    // The template: transactions 1..4 closed cleanly (checkpoint gen 1), then 5 committed and
    // a crash (summaries, or a stale entry): a close from here writes a new checkpoint.
    const ScopedTempPath tmpl_path("ck-template.db");
    const std::string& tmpl = tmpl_path.str();
    seed_sqlite_prng();
    create(c, tmpl, 4, chip);
    std::string last;
    {
      Conn db(uri(c, tmpl, chip));
      txn(db, 5);
      crash_now(tmpl);
    }
    {
      Conn db(uri(c, tmpl, chip), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
      last = content(db);  // (a read-only open: the template stays as the crash left it)
    }
    bool completed = false;
    uint64_t cuts = 0;
    for (uint64_t k = 0; !completed && k < 5000; k++) {
      INFO("cut after " << k << " operations of the close");
      const ScopedTempPath scratch("ck-cut.db");
      const std::string& path = scratch.str();
      std::filesystem::copy_file(tmpl, path);
      {
        Conn db(uri(c, path, chip));
        REQUIRE(content(db) == last);
        auto* nand = dynamic_cast<pdl::EmulatedNand*>(pdl::vfs::device_of(path));
        REQUIRE(nand != nullptr);
        nand->cut_power_after(k, pdl::Tear(k % 3), k + 1);
      }  // the close, cut after k of its mutating operations
      Conn db(uri(c, path, chip));
      const Json j = stats(db);
      // (A cut close leaves the old checkpoint plus its summaries, replayed, or a scan.)
      completed = json_string(j, "checkpoint.mount") == "checkpoint" &&
                  json_number(j, "checkpoint.replayed_blocks") == 0;
      if (!completed) {
        cuts++;
        CHECK(json_number(j, "mount.pages_scanned") > 0);
      }
      check_intact(db);
      REQUIRE(content(db) == last);
    }
    INFO(cuts << " cuts");
    REQUIRE(completed);  // the close's operations were all cut in turn
    REQUIRE(cuts > 0);
    total += cuts;
    summary += " " + c.method + "/" + c.commit + "/" + std::string(chip).substr(5, std::string(chip).find('&') - 5) + ":" +
               std::to_string(cuts);
  }
  WARN("checkpoint-write campaign: " << total << " power cuts (cuts per close:" << summary
                                     << ")");
}

TEST_CASE("a read-only open writes nothing: no checkpoint, no stale entry", "[vfs][checkpoint]") {
  use_pdl_vfs();
  seed_sqlite_prng();
  for (const Config& c : configs()) {
    INFO("method " << c.method << ", commit=" << c.commit);
    const ScopedTempPath scratch("ck-ro.db");
    const std::string& path = scratch.str();
    const std::string rows = create(c, path, 3);
    for (int round = 0; round < 2; round++) {
      INFO((round == 0 ? "checkpoint current" : "a crash after a change: a replay"));
      const std::string bytes = read_file_bytes(path);
      {
        Conn db(uri(c, path), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
        const Json j = stats(db);
        // (After the crash the mount replays the blocks the summaries declared.)
        CHECK(json_string(j, "checkpoint.mount") == "checkpoint");
        if (round == 1) CHECK(json_number(j, "checkpoint.replayed_blocks") >= 1);
        check_intact(db);
        if (round == 0) REQUIRE(content(db) == rows);
      }
      REQUIRE(read_file_bytes(path) == bytes);
      if (round == 0) {
        Conn db(uri(c, path));
        txn(db, 4);
        crash_now(path);
      }
    }
  }
}

TEST_CASE("owner_cache= bounds the Volume's owner-map pages in RAM; the database stays whole",
          "[vfs][checkpoint]") {
  use_pdl_vfs();
  seed_sqlite_prng();
  const Config c = configs().front();
  INFO("method " << c.method << ", commit=" << c.commit);
  const ScopedTempPath scratch("oc.db");
  const std::string& path = scratch.str();
  const std::string before = create(c, path, 12);
  Conn db(uri(c, path) + "&owner_cache=1");
  check_intact(db);  // (pdl_check reads every owner page, through the one-page cache)
  REQUIRE(content(db) == before);
  for (int i = 13; i <= 20; i++) txn(db, i);
  check_intact(db);
  const Json j = stats(db);
  CHECK(json_number(j, "ram.owner_cache_pages") == 1);
  CHECK(json_number(j, "ram.owner_pages_cached") <= 1);
  CHECK(json_number(j, "volume.owner_cache_pages") == 1);
  CHECK(json_number(j, "volume.owner_loads") >= 1);
}

TEST_CASE("table_cache= sets the clean table pages PDL keeps; PRAGMA pdl_stats reports it",
          "[vfs][checkpoint]") {
  use_pdl_vfs();
  seed_sqlite_prng();
  const Config c = configs().front();  // pdl
  INFO("method " << c.method << ", commit=" << c.commit);
  const ScopedTempPath scratch("tc.db");
  const std::string& path = scratch.str();
  const std::string before = create(c, path, 12);
  Conn db(uri(c, path) + "&table_cache=3");
  REQUIRE(content(db) == before);
  for (int i = 13; i <= 20; i++) txn(db, i);
  check_intact(db);
  const Json j = stats(db);
  CHECK(json_number(j, "ram.table_cache_pages") == 3);
  CHECK(json_number(j, "store.table_cache_pages") == 3);
  CHECK(json_number(j, "ram.table_pages_resident") >= 1);
}
