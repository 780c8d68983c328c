// test_vfs_atomic.cc — atomic commit through the stock SQLite: the rollback journal in memory,
// SQLite's semantics intact (vfs/journal.cc).
//
//   * in every rollback journal mode the journal never reaches flash and each transaction is
//     one commit of the store; a small transaction costs about one program;
//   * ROLLBACK after the cache spilled pages into the database file, savepoints, statement
//     rollbacks, journal_mode switches and VACUUM give exactly what the unix VFS gives for the
//     same SQL;
//   * a transaction larger than the free space fails with SQLITE_FULL, loses nothing, and the
//     next one works;
//   * a hot journal left on flash by commit=journal is rolled back under commit=atomic;
//   * another connection of the process never sees a transaction's pages before its commit;
//   * commit= contradicting an open image is refused; IPU and IPL keep the journal on flash
//     and say so;
//   * the journal of an ATTACHed unix database is served by the default VFS: after a process
//     is killed mid-commit over a pdl image and a unix database, both reopen consistent.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "flash/device/emulated_nand.h"
#include "flash/image/image.h"
#include "tests/support/vfs_test_util.h"

using namespace pdl::test;

namespace {

constexpr const char* kChip = "size=4M&page=2048&pages_per_block=16&max_files=8&clock=logical";

// A digest of every table's rows, in key order (equal content <=> equal text).
std::string content(Conn& c) {
  return c.text(
      "SELECT count(*) || ':' || ifnull(sum(length(b)), 0) || ':' || "
      "ifnull((SELECT group_concat(h, ',') FROM (SELECT id || '=' || hex(substr(b, 1, 8)) || "
      "length(b) AS h FROM t ORDER BY id)), '') FROM t");
}

// The same SQL on the unix VFS and on pdl; the contents after each step must agree.
struct Pair {
  Conn unix_db, pdl_db;
  Pair(const std::string& params, const std::string& setup) {
    unix_db.must_open("file:" + temp_path("ref.db") + "?vfs=unix");
    pdl_db.must_open(pdl_uri(temp_path("atomic.db"), std::string(kChip) + params));
    for (Conn* c : {&unix_db, &pdl_db}) c->must(setup);
  }
  // Run `sql` on both; the result codes agree and the contents too.
  void step(const std::string& sql) {
    const int a = unix_db.exec(sql), b = pdl_db.exec(sql);
    INFO("SQL: " << sql << "\nunix: rc " << a << " " << unix_db.exec_error() << "\npdl:  rc " << b
                 << " " << pdl_db.exec_error());
    REQUIRE(a == b);
    REQUIRE(content(unix_db) == content(pdl_db));
  }
};

Json stats(Conn& c) { return parse_json(c.text("PRAGMA pdl_stats")); }

}  // namespace

TEST_CASE("with atomic commit the journal never reaches flash and a transaction is one commit",
          "[vfs][atomic]") {
  use_pdl_vfs();
  const std::string method = GENERATE(as<std::string>(), "pdl", "opu", "ipl");
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "TRUNCATE", "PERSIST",
                                       "MEMORY", "OFF");
  const std::string sync = GENERATE(as<std::string>(), "FULL", "NORMAL", "OFF");
  INFO("method " << method << ", journal_mode " << journal << ", synchronous " << sync);
  const std::string path = temp_path("j.db");
  Conn c(pdl_uri(path, std::string(kChip) + "&method=" + method));
  set_journal_mode(c, journal);
  c.must("PRAGMA synchronous=" + sync);
  c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)");
  c.must("PRAGMA pdl_stats_reset");
  constexpr int kTxns = 60;
  for (int i = 0; i < kTxns; i++)
    c.must("INSERT INTO t(b) VALUES (randomblob(100))");
  const Json j = stats(c);
  CHECK(json_string(j, "commit") == "atomic");
  // Not a byte of journal on flash, and no journal file in the image.
  CHECK(json_number(j, "by_kind.journal.flash.programs") == 0);
  for (const Json& f : j.at("files")->arr) CHECK(f.at("kind")->str != "journal");
  // SQLite did write its journal — to memory — in the modes that have one.
  if (journal != "MEMORY" && journal != "OFF") CHECK(json_number(j, "by_kind.journal.writes") > 0);
  // One commit of the store per transaction — where SQLite tells the VFS that a transaction
  // ended durably: an xSync of the database, or the journal's finalization. MEMORY and OFF
  // with synchronous=OFF give neither: the store then commits at the end of a transaction
  // that left pages on flash, whole transactions at a time (journal.cc).
  const bool batched = (journal == "MEMORY" || journal == "OFF") && sync == "OFF";
  if (batched) {
    CHECK(json_number(j, "store.commits") >= 1);
    CHECK(json_number(j, "store.commits") <= kTxns);
  } else {
    CHECK(json_number(j, "store.commits") == kTxns);
  }
  // PDL: about one flash program per transaction (the write buffer's page; sometimes a base
  // page). OPU: the changed leaf and page 1, each a 4 KiB SQLite page of two 2 KiB flash pages.
  // IPL: a log sector per 128 bytes of change (its in-memory log sector) of each changed flash
  // page, and the commit log's sector.
  const double programs = json_number(j, "flash.programs") / kTxns;
  INFO("programs per transaction " << programs);
  CHECK(programs <= (method == "pdl" ? 1.6 : method == "opu" ? 4.5 : 8.0));
  CHECK(c.text("PRAGMA integrity_check") == "ok");
  REQUIRE(c.close() == SQLITE_OK);
  Conn again(pdl_uri(path));
  CHECK(again.integer("SELECT count(*) FROM t") == kTxns);
}

TEST_CASE("ROLLBACK after the cache spilled into the database file restores it exactly",
          "[vfs][atomic]") {
  use_pdl_vfs();
  const std::string method = GENERATE(as<std::string>(), "pdl", "opu", "ipl");
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "TRUNCATE", "PERSIST",
                                       "MEMORY");
  INFO("method " << method << ", journal_mode " << journal);
  Pair p("&method=" + method, "PRAGMA journal_mode=" + journal + "; PRAGMA cache_size=8; "
             "CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB); "
             "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200) "
             "INSERT INTO t(b) SELECT zeroblob(700) FROM c");
  const uint64_t aborts0 =
      uint64_t(json_number(stats(p.pdl_db), "store.aborts"));
  p.step("BEGIN");
  p.step("UPDATE t SET b = zeroblob(900) WHERE id % 2 = 0");  // many pages: the cache spills
  p.step("INSERT INTO t(b) SELECT b FROM t WHERE id < 50");
  p.step("ROLLBACK");
  // The spilled pages were in the store's open group: discarded at the rollback.
  if (journal != "MEMORY")  // (SQLite's own MEMORY journal is not ours to watch)
    CHECK(json_number(stats(p.pdl_db), "store.aborts") > double(aborts0));
  p.step("INSERT INTO t(b) VALUES (x'0102')");
  CHECK(p.pdl_db.text("PRAGMA integrity_check") == "ok");
  CHECK(p.pdl_db.text("PRAGMA pdl_check") == "ok");
}

TEST_CASE("savepoints, statement rollbacks, journal mode switches and VACUUM give what the unix "
          "VFS gives", "[vfs][atomic]") {
  use_pdl_vfs();
  const std::string method = GENERATE(as<std::string>(), "pdl", "opu", "ipl");
  INFO("method " << method);
  Pair p("&method=" + method,
         "PRAGMA cache_size=10; CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB UNIQUE); "
         "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 150) "
         "INSERT INTO t(b) SELECT zeroblob(i * 7) FROM c");
  for (const char* sql : {
           // savepoints, with spills
           "BEGIN", "SAVEPOINT a", "UPDATE t SET b = b || x'01' WHERE id % 3 = 0",
           "SAVEPOINT b", "DELETE FROM t WHERE id > 100", "ROLLBACK TO b",
           "UPDATE t SET b = b || x'02' WHERE id % 5 = 0", "RELEASE b", "ROLLBACK TO a",
           "UPDATE t SET b = b || x'03' WHERE id % 7 = 0", "COMMIT",
           // a statement that fails half-way (UNIQUE) is undone alone; the transaction goes on
           "BEGIN", "INSERT INTO t(b) VALUES (x'AA')",
           "INSERT INTO t(b) SELECT b || x'EE' FROM t WHERE id < 140 UNION ALL SELECT x'AA'",
           "INSERT INTO t(b) VALUES (x'BB')", "COMMIT",
           // a savepoint as the transaction itself
           "SAVEPOINT outer_sp", "DELETE FROM t WHERE id % 4 = 1", "ROLLBACK TO outer_sp",
           "DELETE FROM t WHERE id % 6 = 1", "RELEASE outer_sp",
           // journal modes back and forth, with transactions in each
           "PRAGMA journal_mode=WAL", "UPDATE t SET b = b || x'04' WHERE id % 9 = 0",
           "PRAGMA journal_mode=DELETE", "UPDATE t SET b = b || x'05' WHERE id % 8 = 0",
           "PRAGMA journal_mode=MEMORY", "DELETE FROM t WHERE id % 10 = 3",
           "PRAGMA journal_mode=PERSIST", "UPDATE t SET b = b || x'06' WHERE id % 11 = 0",
           "PRAGMA journal_mode=TRUNCATE", "INSERT INTO t(b) SELECT b || x'07' FROM t WHERE id < 30",
           "PRAGMA journal_mode=OFF", "UPDATE t SET b = b || x'08' WHERE id % 12 = 0",
           "PRAGMA journal_mode=DELETE",
           // VACUUM rewrites and shrinks the file; a rolled back transaction after it
           "DELETE FROM t WHERE id % 2 = 0", "VACUUM", "BEGIN",
           "UPDATE t SET b = zeroblob(1500)", "ROLLBACK", "PRAGMA integrity_check"})
    p.step(sql);
  CHECK(p.pdl_db.text("PRAGMA pdl_check") == "ok");
}

TEST_CASE("a transaction larger than the free space fails with SQLITE_FULL, loses nothing, and "
          "the next one works", "[vfs][atomic][full]") {
  // (With a small cache: the big transaction spills into the database file, so its failure
  // and rollback happen with pages of it in the store's open group.)
  use_pdl_vfs();
  const std::string method = GENERATE(as<std::string>(), "pdl", "opu", "ipl");
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "PERSIST", "MEMORY", "WAL");
  INFO("method " << method << ", journal_mode " << journal);
  const std::string path = temp_path("full.db");
  const std::string uri =
      pdl_uri(path, "size=1M&page=2048&pages_per_block=16&max_files=8&clock=logical&method=" +
                        method);
  std::string before;
  {
    Conn c(uri);
    set_journal_mode(c, journal);
    c.must("PRAGMA cache_size=8");
    c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)");
    for (int i = 0; i < 40; i++) c.must("INSERT INTO t(b) VALUES (randomblob(1000))");
    before = content(c);
    // One transaction of far more than the chip holds.
    int rc = c.exec("BEGIN");
    for (int i = 0; i < 2000 && rc == SQLITE_OK; i++)
      rc = c.exec("INSERT INTO t(b) VALUES (randomblob(1500))");
    if (rc == SQLITE_OK) rc = c.exec("COMMIT");
    INFO("the big transaction: rc " << rc << " " << c.exec_error());
    REQUIRE(rc == SQLITE_FULL);
    c.exec("ROLLBACK");  // (SQLite may have rolled back already)
    CHECK(content(c) == before);
    CHECK(c.text("PRAGMA integrity_check") == "ok");
    CHECK(c.text("PRAGMA pdl_check") == "ok");
    // The next transaction works — in the rollback journal modes. In WAL mode the failed
    // transaction's frames stay in the WAL, which a checkpoint could only empty by growing the
    // database into room the WAL holds: a full chip stays full there (design.md §8), with
    // nothing lost.
    if (journal != "WAL") {
      c.must("INSERT INTO t(b) VALUES (randomblob(500))");
      before = content(c);
    }
  }
  Conn c(uri);
  CHECK(content(c) == before);
  CHECK(c.text("PRAGMA integrity_check") == "ok");
}

TEST_CASE("a hot journal left on flash by commit=journal is rolled back under commit=atomic",
          "[vfs][atomic]") {
  use_pdl_vfs();
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "TRUNCATE", "PERSIST");
  INFO("journal_mode " << journal);
  const std::string path = temp_path("legacy.db");
  const std::string uri = pdl_uri(path, std::string(kChip) + "&commit=journal");
  std::string before;
  {
    Conn c(uri);
    set_journal_mode(c, journal);
    c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)");
    c.must("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300) "
           "INSERT INTO t(b) SELECT randomblob(300) FROM c");
    before = content(c);
    c.must("PRAGMA cache_size=8");
    c.must("BEGIN");
    c.must("UPDATE t SET b = randomblob(400)");  // spills: journal synced, database written
    // Power fails before the commit: the journal on flash is hot.
    static_cast<pdl::EmulatedNand*>(pdl::vfs::device_of(path))->cut_power_after(0);
    c.exec("COMMIT");
  }
  {  // the image holds a hot journal (read-only look, as pdl ls would)
    std::unique_ptr<pdl::Image> img;
    REQUIRE(pdl::open_image(path, pdl::ImageParams(), pdl::ImageMode::kOpen, true, "", &img)
                .is_ok());
    pdl::FileInfo fi;
    REQUIRE(img->volume->stat("legacy.db-journal", &fi).is_ok());
    CHECK(fi.size > 0);
  }
  Conn c(pdl_uri(path, "commit=atomic"));
  CHECK(content(c) == before);
  CHECK(c.text("PRAGMA integrity_check") == "ok");
  const Json j = stats(c);
  CHECK(json_string(j, "commit") == "atomic");
  for (const Json& f : j.at("files")->arr) CHECK(f.at("kind")->str != "journal");  // removed
  c.must("INSERT INTO t(b) VALUES (x'01')");
}

// An FTL device (eMMC/SD-like: method=ftl, stablebuffer) has no atomic commit: whatever
// commit= asks, SQLite's rollback journal is a file on the device, written and synced like the
// database, and a crash mid-transaction is rolled back by SQLite itself from that hot journal.
TEST_CASE("an FTL device keeps SQLite's journal on the device whatever commit= asks, and its "
          "hot journal rolls a cut transaction back", "[vfs][atomic][ftl]") {
  use_pdl_vfs();
  const std::string commit = GENERATE(as<std::string>(), "atomic", "journal", "");
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "TRUNCATE", "PERSIST");
  INFO("commit=" << commit << ", journal_mode " << journal);
  const std::string path = temp_path("sd.db");
  const std::string uri = pdl_uri(
      path, std::string(kChip) + "&method=ftl" + (commit.empty() ? "" : "&commit=" + commit));
  std::string before;
  {
    Conn c(uri);
    set_journal_mode(c, journal);
    c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)");
    c.must("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300) "
           "INSERT INTO t(b) SELECT randomblob(300) FROM c");
    Json j = stats(c);
    CHECK(json_string(j, "method") == "ftl");
    CHECK(json_string(j, "ftl") == "page");
    CHECK(json_string(j, "commit") == "journal");
    CHECK(json_number(j, "by_kind.journal.flash.programs") > 0);  // the journal was on flash
    before = content(c);
    c.must("PRAGMA cache_size=8");
    c.must("BEGIN");
    c.must("UPDATE t SET b = randomblob(400)");  // spills: journal synced, database written
    // Mid-transaction, the journal is a file of the image.
    j = stats(c);
    bool journal_file = false;
    for (const Json& f : j.at("files")->arr)
      journal_file |= f.at("name")->str == "sd.db-journal" && f.at("kind")->str == "journal";
    CHECK(journal_file);
    // Power fails before the commit: the journal on flash is hot.
    static_cast<pdl::EmulatedNand*>(pdl::vfs::device_of(path))->cut_power_after(0);
    c.exec("COMMIT");
  }
  {  // the image holds the hot journal (read-only look, as pdl ls would)
    std::unique_ptr<pdl::Image> img;
    REQUIRE(pdl::open_image(path, pdl::ImageParams(), pdl::ImageMode::kOpen, true, "", &img)
                .is_ok());
    pdl::FileInfo fi;
    REQUIRE(img->volume->stat("sd.db-journal", &fi).is_ok());
    CHECK(fi.size > 0);
  }
  Conn c(uri);  // SQLite finds the hot journal and rolls the transaction back
  CHECK(content(c) == before);
  CHECK(c.text("PRAGMA integrity_check") == "ok");
  CHECK(c.text("PRAGMA pdl_check") == "ok");
  CHECK(json_string(stats(c), "commit") == "journal");
  c.must("INSERT INTO t(b) VALUES (x'01')");
}

TEST_CASE("another connection never sees a transaction's pages before its commit",
          "[vfs][atomic]") {
  use_pdl_vfs();
  const std::string path = temp_path("two.db");
  Conn w(pdl_uri(path, kChip)), r(pdl_uri(path));
  w.must("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)");
  w.must("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200) "
         "INSERT INTO t(b) SELECT zeroblob(500) FROM c");
  const std::string before = content(r);
  w.must("PRAGMA cache_size=8");
  w.must("BEGIN");
  w.must("UPDATE t SET b = randomblob(600)");  // spills: the writer holds EXCLUSIVE
  const int rc = r.exec("SELECT count(*) FROM t");
  CHECK((rc == SQLITE_BUSY || (rc == SQLITE_OK && content(r) == before)));
  w.must("ROLLBACK");
  CHECK(content(r) == before);
  w.must("UPDATE t SET b = x'05' WHERE id = 7");
  CHECK(r.text("SELECT hex(b) FROM t WHERE id = 7") == "05");
}

TEST_CASE("commit= contradicting the open image is refused; IPU keeps the journal on flash, "
          "IPL commits atomically", "[vfs][atomic]") {
  use_pdl_vfs();
  const std::string path = temp_path("c.db");
  Conn a(pdl_uri(path, std::string(kChip) + "&commit=journal"));
  a.must("CREATE TABLE t(x)");
  CHECK(json_string(stats(a), "commit") == "journal");
  Conn b;
  CHECK(b.open(pdl_uri(path, "commit=atomic")) == SQLITE_CANTOPEN);
  CHECK(pdl::vfs::last_error().find("commit=atomic contradicts") != std::string::npos);
  CHECK(b.open(pdl_uri(path, "commit=sometimes")) == SQLITE_CANTOPEN);
  CHECK(pdl::vfs::last_error().find("commit=sometimes") != std::string::npos);
  for (const std::string method : {"ipu", "ipl"}) {
    INFO("method " << method);
    const std::string path2 = temp_path((method + ".db").c_str());
    Conn c(pdl_uri(path2, std::string(kChip) + "&method=" + method));
    c.must("CREATE TABLE t(x); INSERT INTO t VALUES (1)");
    const Json j = stats(c);
    const bool atomic = method == "ipl";  // IPU has no log region for a commit record
    CHECK(json_string(j, "commit") == (atomic ? "atomic" : "journal"));
    CHECK((json_number(j, "by_kind.journal.flash.programs") > 0) == !atomic);
  }
}

namespace {

// The child of a fork: commit transactions over a pdl image (main) and a unix database
// (attached) forever — each moves one unit and logs its number in both — until killed.
[[noreturn]] void commit_forever(const std::string& img, const std::string& unix_db) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(pdl_uri(img).c_str(), &db, kOpenFlags, nullptr);
  auto run = [&](const std::string& sql) {
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  };
  run("ATTACH 'file:" + unix_db + "?vfs=unix' AS u");
  for (int64_t i = 1; rc == SQLITE_OK; i++) {
    const std::string n = std::to_string(i);
    run("BEGIN; UPDATE main.acct SET v = v - 1; UPDATE u.acct SET v = v + 1; "
        "INSERT INTO main.log VALUES (" + n + ", randomblob(900)); "
        "INSERT INTO u.log VALUES (" + n + ", randomblob(500)); COMMIT");
  }
  _exit(3);  // (killed before this in the test)
}

}  // namespace

TEST_CASE("after a process is killed mid-commit over a pdl image and a unix database both "
          "reopen at the same commit", "[vfs][atomic][attach]") {
  use_pdl_vfs();
  const std::string commit = GENERATE(as<std::string>(), "atomic", "journal");
  INFO("commit=" << commit);
  auto rng = seeded_rng(0x5161 + commit.size());
  int opened_first_time = 0;
  constexpr int kKills = 12;
  for (int kill_no = 0; kill_no < kKills; kill_no++) {
    const std::string img = temp_path("a.img"), udb = temp_path("b.db");
    {
      Conn c(pdl_uri(img, std::string(kChip) + "&commit=" + commit));
      c.must("ATTACH 'file:" + udb + "?vfs=unix' AS u");
      c.must("CREATE TABLE main.acct(v); INSERT INTO main.acct VALUES (1000000);"
             "CREATE TABLE u.acct(v); INSERT INTO u.acct VALUES (0);"
             "CREATE TABLE main.log(id INTEGER PRIMARY KEY, pad); "
             "CREATE TABLE u.log(id INTEGER PRIMARY KEY, pad)");
    }
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) commit_forever(img, udb);
    usleep(useconds_t(20000 + rng() % 150000));
    kill(child, SIGKILL);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(WIFSIGNALED(status));
    // Reopen the pdl image first (its hot journal, if any, names the super-journal), then
    // attach the unix database: both at the same commit.
    Conn c;
    const int orc = c.open(pdl_uri(img, "commit=" + commit));
    INFO("kill " << kill_no << ": reopen rc " << orc << " " << pdl::vfs::last_error());
    REQUIRE(orc == SQLITE_OK);
    int rc = c.exec("SELECT count(*) FROM main.log");
    INFO("first read: rc " << rc << " " << c.exec_error());
    REQUIRE(rc == SQLITE_OK);
    opened_first_time++;
    c.must("ATTACH 'file:" + udb + "?vfs=unix' AS u");
    const int64_t n_main = c.integer("SELECT count(*) FROM main.log");
    const int64_t n_u = c.integer("SELECT count(*) FROM u.log");
    INFO("main log " << n_main << ", unix log " << n_u);
    CHECK(n_main == n_u);
    CHECK(c.integer("SELECT v FROM main.acct") + c.integer("SELECT v FROM u.acct") == 1000000);
    CHECK(c.integer("SELECT v FROM u.acct") == n_u);
    CHECK(c.text("PRAGMA main.integrity_check") == "ok");
    CHECK(c.text("PRAGMA u.integrity_check") == "ok");
  }
  CHECK(opened_first_time == kKills);
}
