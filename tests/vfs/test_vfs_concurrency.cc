// test_vfs_concurrency.cc — several connections, threads and processes on one pdl image.
//
//   * rollback journal: one writer at a time (a second BEGIN IMMEDIATE gets SQLITE_BUSY), a
//     reader sees only committed data and keeps a consistent snapshot while it reads, a reader
//     holding SHARED makes the writer's COMMIT busy until it finishes, a pending writer keeps new
//     readers out, and sqlite3_busy_timeout turns those waits into success;
//   * WAL: readers keep their snapshot while a writer commits; a checkpoint cannot pass a
//     reader's snapshot and completes (WAL truncated) once the reader ends;
//   * threads, each with its own connection, run transactions concurrently (with readers
//     checking snapshot consistency); the final counts are exact;
//   * another process cannot open an image this process holds: SQLITE_BUSY, and the VFS's
//     message names the holder's pid; after the holder closes, it can.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "flash/image/image.h"
#include "tests/support/vfs_test_util.h"

using namespace pdl::test;

namespace {

void check_healthy(Conn& c) {
  CHECK(c.text("PRAGMA integrity_check") == "ok");
  CHECK(c.text("PRAGMA pdl_check") == "ok");
}

// A file's size inside the image (0 if absent), from PRAGMA pdl_stats.
uint64_t volume_file_size(Conn& c, const std::string& name) {
  const Json j = parse_json(c.text("PRAGMA pdl_stats"));
  for (const Json& f : j.at("files")->arr)
    if (f.at("name")->str == name) return uint64_t(json_number(f, "size"));
  return 0;
}

}  // namespace

TEST_CASE("in rollback-journal mode one writer excludes another and readers see committed "
          "snapshots",
          "[vfs][concurrency]") {
  use_pdl_vfs();
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "TRUNCATE", "PERSIST");
  const std::string method = GENERATE(as<std::string>(), "pdl", "opu", "ipu", "ipl");
  INFO("journal_mode " << journal << ", method " << method);
  const std::string path = temp_path("rb.db");
  const std::string uri = pdl_uri(path, "size=8M&method=" + method);
  Conn a(uri), b(uri), r(uri), late(uri);
  for (Conn* c : {&a, &b, &r, &late}) set_journal_mode(*c, journal);
  a.must("CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT); INSERT INTO t VALUES (1, 'one')");
  CHECK(late.integer("SELECT count(*) FROM t") == 1);  // (late has read the schema)

  // A writes; B cannot start writing; R sees only the committed row.
  a.must("BEGIN IMMEDIATE; INSERT INTO t VALUES (2, 'two')");
  CHECK(b.exec("BEGIN IMMEDIATE") == SQLITE_BUSY);
  CHECK(r.integer("SELECT count(*) FROM t") == 1);

  // R holds a read transaction: A's commit is busy, and R's view does not change.
  r.must("BEGIN");
  CHECK(r.integer("SELECT count(*) FROM t") == 1);
  CHECK(a.exec("COMMIT") == SQLITE_BUSY);
  CHECK(r.integer("SELECT count(*) FROM t") == 1);
  CHECK(r.text("SELECT group_concat(s) FROM t") == "one");
  // A is now pending: a new reader is kept out.
  const int late_rc = late.exec("SELECT count(*) FROM t");
  INFO("new reader: " << late.exec_error());
  CHECK(late_rc == SQLITE_BUSY);
  r.must("COMMIT");
  a.must("COMMIT");
  CHECK(r.integer("SELECT count(*) FROM t") == 2);
  CHECK(late.integer("SELECT count(*) FROM t") == 2);

  // With a busy timeout the writer waits for the reader instead of failing.
  sqlite3_busy_timeout(a.get(), 10000);
  r.must("BEGIN");
  CHECK(r.integer("SELECT count(*) FROM t") == 2);
  std::atomic<bool> released{false};
  std::thread reader([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    released = true;
    r.exec("COMMIT");
  });
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = a.exec("BEGIN IMMEDIATE; INSERT INTO t VALUES (3, 'three'); COMMIT");
  const auto waited = std::chrono::steady_clock::now() - t0;
  reader.join();
  INFO("commit rc " << rc << ": " << a.exec_error());
  CHECK(rc == SQLITE_OK);
  CHECK(released);
  CHECK(waited >= std::chrono::milliseconds(100));

  // And a second writer waits for the first.
  sqlite3_busy_timeout(b.get(), 10000);
  a.must("BEGIN IMMEDIATE; INSERT INTO t VALUES (4, 'four')");
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    a.exec("COMMIT");
  });
  const int brc = b.exec("BEGIN IMMEDIATE; INSERT INTO t VALUES (5, 'five'); COMMIT");
  writer.join();
  CHECK(brc == SQLITE_OK);
  CHECK(late.text("SELECT group_concat(id) FROM (SELECT id FROM t ORDER BY id)") == "1,2,3,4,5");
  check_healthy(late);
}

TEST_CASE("in WAL mode readers keep their snapshot while a writer commits, and a checkpoint "
          "completes once they finish",
          "[vfs][concurrency][wal]") {
  use_pdl_vfs();
  const std::string method = GENERATE(as<std::string>(), "pdl", "opu", "ipu", "ipl");
  INFO("method " << method);
  const std::string path = temp_path("wal.db");
  const std::string uri = pdl_uri(path, "size=8M&method=" + method);
  {
    Conn w(uri);
    set_journal_mode(w, "WAL");
    w.must("PRAGMA wal_autocheckpoint=0");  // checkpoints only when asked
    w.must("CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT); INSERT INTO t VALUES (1, 'one')");
    Conn r1(uri), r2(uri);
    CHECK(r1.text("PRAGMA journal_mode") == "wal");

    r1.must("BEGIN");
    CHECK(r1.integer("SELECT count(*) FROM t") == 1);
    // The writer is not blocked by the reader.
    w.must("BEGIN");
    for (int i = 2; i <= 11; i++) w.must("INSERT INTO t VALUES (" + std::to_string(i) + ", 'x')");
    w.must("COMMIT");
    CHECK(r1.integer("SELECT count(*) FROM t") == 1);  // old snapshot
    CHECK(r2.integer("SELECT count(*) FROM t") == 11);  // new one

    // Still one writer at a time.
    w.must("BEGIN IMMEDIATE; UPDATE t SET s = 'y' WHERE id = 1");
    CHECK(r2.exec("BEGIN IMMEDIATE") == SQLITE_BUSY);
    w.must("COMMIT");
    CHECK(r1.text("SELECT s FROM t WHERE id = 1") == "one");
    CHECK(r2.text("SELECT s FROM t WHERE id = 1") == "y");

    // A checkpoint cannot pass r1's snapshot...
    auto ck = w.rows("PRAGMA wal_checkpoint(PASSIVE)");
    REQUIRE(ck.size() == 1);
    INFO("passive checkpoint busy|log|checkpointed: " << ck[0][0] << "|" << ck[0][1] << "|"
                                                      << ck[0][2]);
    CHECK(std::stoi(ck[0][1]) > 0);
    CHECK(std::stoi(ck[0][2]) < std::stoi(ck[0][1]));
    CHECK(w.rows("PRAGMA wal_checkpoint(TRUNCATE)")[0][0] == "1");  // busy
    CHECK(volume_file_size(w, "wal.db-wal") > 0);
    // ...and completes once r1 is done: the WAL is empty afterwards.
    r1.must("COMMIT");
    ck = w.rows("PRAGMA wal_checkpoint(TRUNCATE)");
    CHECK(ck[0] == std::vector<std::string>{"0", "0", "0"});
    CHECK(volume_file_size(w, "wal.db-wal") == 0);
    CHECK(r1.integer("SELECT count(*) FROM t") == 11);
    CHECK(r1.text("SELECT s FROM t WHERE id = 1") == "y");
    check_healthy(r1);
  }
  Conn c(uri);
  CHECK(c.text("PRAGMA journal_mode") == "wal");
  CHECK(c.integer("SELECT count(*) FROM t") == 11);
  check_healthy(c);
}

TEST_CASE("threads with their own connections commit concurrently and every commit counts "
          "exactly once",
          "[vfs][concurrency][threads]") {
  use_pdl_vfs();
  REQUIRE(sqlite3_threadsafe() != 0);
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "WAL");
  const std::string method = GENERATE(as<std::string>(), "pdl", "opu", "ipu", "ipl");
  INFO("journal_mode " << journal << ", method " << method);
  const std::string path = temp_path("threads.db");
  const std::string uri = pdl_uri(path, "size=8M&method=" + method);
  constexpr int kWriters = 4, kTxns = 100, kReaders = 2;
  {
    Conn setup(uri);
    set_journal_mode(setup, journal);
    setup.must("CREATE TABLE log(thread INTEGER, seq INTEGER, pad TEXT, PRIMARY KEY(thread, seq));"
               "CREATE TABLE counter(id INTEGER PRIMARY KEY, n INTEGER);"
               "INSERT INTO counter VALUES (1, 0)");
  }
  std::atomic<int> failures{0}, busy_retries{0}, snapshots{0};
  std::atomic<bool> writers_done{false};
  std::vector<std::string> errors(kWriters + kReaders);
  auto writer = [&](int t) {
    Conn c;
    if (c.open(uri) != SQLITE_OK) {
      errors[size_t(t)] = "open failed";
      failures++;
      return;
    }
    if (journal != "WAL") c.exec("PRAGMA journal_mode=" + journal);
    sqlite3_busy_timeout(c.get(), 20000);
    for (int s = 0; s < kTxns; s++) {
      const std::string sql = "BEGIN IMMEDIATE; INSERT INTO log VALUES (" + std::to_string(t) +
                              ", " + std::to_string(s) +
                              ", printf('%.*c', 200, 'p')); UPDATE counter SET n = n + 1; COMMIT";
      int rc;
      while ((rc = c.exec(sql)) == SQLITE_BUSY) {  // a timeout, not expected; retry cleanly
        busy_retries++;
        c.exec("ROLLBACK");
      }
      if (rc != SQLITE_OK) {
        errors[size_t(t)] = "txn " + std::to_string(s) + ": rc " + std::to_string(rc) + " " +
                            c.exec_error();
        failures++;
        c.exec("ROLLBACK");
        return;
      }
    }
  };
  auto reader = [&](int t) {
    Conn c;
    if (c.open(uri) != SQLITE_OK) {
      failures++;
      return;
    }
    sqlite3_busy_timeout(c.get(), 20000);
    while (!writers_done) {
      int64_t n = -1, count = -2;
      int rc = c.exec("BEGIN");
      if (rc == SQLITE_OK)
        rc = c.query("SELECT n FROM counter", [&](sqlite3_stmt* st) {
          n = sqlite3_column_int64(st, 0);
        });
      if (rc == SQLITE_OK)
        rc = c.query("SELECT count(*) FROM log", [&](sqlite3_stmt* st) {
          count = sqlite3_column_int64(st, 0);
        });
      c.exec("COMMIT");
      if (rc == SQLITE_BUSY) continue;
      if (rc != SQLITE_OK || n != count) {
        errors[size_t(t)] = "reader: rc " + std::to_string(rc) + " n " + std::to_string(n) +
                            " count " + std::to_string(count);
        failures++;
        return;
      }
      snapshots++;
    }
  };
  std::vector<std::thread> ts;
  for (int t = 0; t < kWriters; t++) ts.emplace_back(writer, t);
  std::vector<std::thread> rs;
  for (int t = 0; t < kReaders; t++) rs.emplace_back(reader, kWriters + t);
  for (auto& t : ts) t.join();
  writers_done = true;
  for (auto& t : rs) t.join();
  for (const auto& e : errors)
    if (!e.empty()) FAIL_CHECK(e);
  CHECK(failures == 0);
  INFO("busy retries " << busy_retries << ", consistent reader snapshots " << snapshots);
  Conn c(uri);
  CHECK(c.integer("SELECT count(*) FROM log") == kWriters * kTxns);
  CHECK(c.integer("SELECT n FROM counter") == kWriters * kTxns);
  for (int t = 0; t < kWriters; t++)
    CHECK(c.integer("SELECT count(DISTINCT seq) FROM log WHERE thread = " + std::to_string(t)) ==
          kTxns);
  check_healthy(c);
}

namespace {

// A forked child running `body` (after reading one byte from `start_fd`, if given); its
// result travels back through a pipe. The child leaves with _exit() (no Catch2, no static
// destructors). Fork from the main thread only, with no other thread running SQLite.
struct Child {
  pid_t pid = -1;
  int out = -1;
};

template <class Body>
Child spawn(Body body, int start_fd = -1) {
  int out[2];
  REQUIRE(pipe(out) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(out[0]);
    if (start_fd >= 0) {  // wait for the parent's go
      char ch;
      if (read(start_fd, &ch, 1) != 1) _exit(120);
    }
    const std::string msg = body();
    const ssize_t w = write(out[1], msg.data(), msg.size());
    (void)w;
    _exit(0);
  }
  close(out[1]);
  return {pid, out[0]};
}

// {exit status, what the child wrote}.
std::pair<int, std::string> collect(const Child& c) {
  std::string got;
  char buf[512];
  ssize_t n;
  while ((n = read(c.out, buf, sizeof buf)) > 0) got.append(buf, size_t(n));
  close(c.out);
  int status = 0;
  REQUIRE(waitpid(c.pid, &status, 0) == c.pid);
  REQUIRE(WIFEXITED(status));
  return {WEXITSTATUS(status), got};
}

// The child's open: "<rc>|<last_error>|<rows or -1>".
std::string child_open(const std::string& uri) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(uri.c_str(), &db, kOpenFlags, nullptr);
  std::string rows = "-1";
  if (rc == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      rows = std::to_string(sqlite3_column_int64(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close_v2(db);
  return std::to_string(rc) + "|" + pdl::vfs::last_error() + "|" + rows;
}

struct ChildResult {
  int rc = -1;
  std::string message;
  int64_t rows = -1;
};
ChildResult parse_child(const std::pair<int, std::string>& r) {
  INFO("child exit " << r.first << ", wrote '" << r.second << "'");
  REQUIRE(r.first == 0);
  const size_t a = r.second.find('|'), b = r.second.rfind('|');
  REQUIRE(a != std::string::npos);
  REQUIRE(b > a);
  return {std::stoi(r.second.substr(0, a)), r.second.substr(a + 1, b - a - 1),
          std::stoll(r.second.substr(b + 1))};
}

}  // namespace

TEST_CASE("another process cannot open an image this process holds and is told the holder's pid",
          "[vfs][concurrency][process]") {
  use_pdl_vfs();
  const std::string path = temp_path("proc.db");
  const std::string uri = pdl_uri(path, "size=8M");
  // The child is forked before this process opens the image, so it starts with no pdl state
  // of its own (see the fork-after-open case below), and opens once told to.
  int go[2];
  REQUIRE(pipe(go) == 0);
  const Child child = spawn([&] { return child_open(uri); }, go[0]);
  close(go[0]);
  Conn holder(uri);
  holder.must("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)");
  REQUIRE(write(go[1], "g", 1) == 1);
  close(go[1]);
  const ChildResult r = parse_child(collect(child));
  INFO("child: rc " << r.rc << ", message: " << r.message);
  CHECK(r.rc == SQLITE_BUSY);
  CHECK(r.message.find("in use") != std::string::npos);
  CHECK(r.message.find("pid " + std::to_string(getpid())) != std::string::npos);
  CHECK(holder.integer("SELECT count(*) FROM t") == 2);  // the holder is unaffected

  // Once the holder closes, another process can open it and sees the data.
  REQUIRE(holder.close() == SQLITE_OK);
  const ChildResult after = parse_child(collect(spawn([&] { return child_open(uri); })));
  INFO("child after close: rc " << after.rc << ", message: " << after.message);
  CHECK(after.rc == SQLITE_OK);
  CHECK(after.rows == 2);
  // And this process again afterwards (the child released it on exit).
  Conn again(uri);
  CHECK(again.integer("SELECT count(*) FROM t") == 2);
  check_healthy(again);
}

// Regression: fork() copies the VFS's registry of open images; a child used to find the parent's
// Image there and open the image "successfully", driving one chip from two processes. Entries
// made by another pid are now dropped (never closed) and the child gets SQLITE_BUSY.
TEST_CASE("a process forked while the image is open cannot open it either",
          "[vfs][concurrency][process]") {
  use_pdl_vfs();
  const std::string path = temp_path("fork.db");
  const std::string uri = pdl_uri(path, "size=8M");
  Conn holder(uri);
  holder.must("CREATE TABLE t(x); INSERT INTO t VALUES (1)");
  const ChildResult r = parse_child(collect(spawn([&] { return child_open(uri); })));
  INFO("child: rc " << r.rc << ", message: " << r.message);
  CHECK(r.rc == SQLITE_BUSY);
  CHECK(r.message.find("pid " + std::to_string(getpid())) != std::string::npos);
  CHECK(holder.integer("SELECT count(*) FROM t") == 1);
  check_healthy(holder);
}

// An image is identified by its file's device and inode, as os_unix.c identifies a database:
// a symlink or a hard link opens the image this process already holds, and every connection
// shares its locks, journal and WAL-index, whichever name it used.
TEST_CASE("one image opened under several names in one process is shared by every connection",
          "[vfs][concurrency]") {
  use_pdl_vfs();
  const std::string path = temp_path("name.db");
  const std::string dir = path.substr(0, path.rfind('/'));
  Conn a(pdl_uri(path, "size=8M"));
  a.must("CREATE TABLE t(x); INSERT INTO t VALUES (1)");
  // The same path spelled differently is normalized to the same image.
  REQUIRE(mkdir((dir + "/sub").c_str(), 0700) == 0);
  Conn b(pdl_uri(dir + "/./sub/../name.db"));
  CHECK(b.integer("SELECT count(*) FROM t") == 1);
  REQUIRE(symlink(path.c_str(), (dir + "/link.db").c_str()) == 0);
  REQUIRE(link(path.c_str(), (dir + "/hard.db").c_str()) == 0);
  Conn l(pdl_uri(dir + "/link.db"));
  Conn h(pdl_uri(dir + "/hard.db"));
  CHECK(pdl::vfs::image_of(dir + "/link.db") == pdl::vfs::image_of(path));
  CHECK(pdl::vfs::image_of(dir + "/hard.db") == pdl::vfs::image_of(path));
  CHECK(l.integer("SELECT count(*) FROM t") == 1);
  l.must("INSERT INTO t VALUES (2)");
  CHECK(h.integer("SELECT count(*) FROM t") == 2);
  CHECK(a.integer("SELECT count(*) FROM t") == 2);
  // One lock table: a writer under one name excludes a writer under another.
  l.must("BEGIN IMMEDIATE");
  CHECK(h.exec("BEGIN IMMEDIATE") == SQLITE_BUSY);
  l.must("INSERT INTO t VALUES (3)");
  CHECK(a.integer("SELECT count(*) FROM t") == 2);  // not yet committed
  l.must("COMMIT");
  h.must("INSERT INTO t VALUES (4)");
  // One WAL-index: WAL mode set under one name serves the others.
  h.must("PRAGMA journal_mode=WAL");
  a.must("INSERT INTO t VALUES (5)");
  CHECK(l.integer("SELECT count(*) FROM t") == 5);
  CHECK(h.integer("SELECT sum(x) FROM t") == 15);
  check_healthy(a);
  h.close();
  l.close();
  b.close();
  a.close();
  CHECK(pdl::vfs::device_of(path) == nullptr);  // the last close, under any name, releases it
  Conn via_link(pdl_uri(dir + "/link.db"));
  CHECK(via_link.integer("SELECT count(*) FROM t") == 5);
  Conn via_path(pdl_uri(path));
  CHECK(via_path.integer("SELECT count(*) FROM t") == 5);
}

// Read-only connections share an image this process holds read-write; a read-write open of an
// image held read-only because a connection asked (its device lock and mount are read-only)
// is refused, saying so, until those connections close.
TEST_CASE("read-only and read-write connections of one process share or refuse clearly",
          "[vfs][concurrency][readonly]") {
  use_pdl_vfs();
  const std::string path = temp_path("rorw.db");
  const int ro_flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
  {
    Conn w(pdl_uri(path, "size=8M"));
    w.must("CREATE TABLE t(x); INSERT INTO t VALUES (1)");
    Conn r(pdl_uri(path), ro_flags);
    CHECK(r.integer("SELECT count(*) FROM t") == 1);
    CHECK(r.exec("INSERT INTO t VALUES (2)") == SQLITE_READONLY);
    w.must("INSERT INTO t VALUES (2)");
    CHECK(r.integer("SELECT count(*) FROM t") == 2);
  }
  Conn r(pdl_uri(path, "mode=ro"), ro_flags);
  REQUIRE(pdl::vfs::image_of(path) != nullptr);
  CHECK(pdl::vfs::image_of(path)->volume->read_only());
  Conn w;
  CHECK(w.open(pdl_uri(path)) == SQLITE_CANTOPEN);
  const std::string msg = pdl::vfs::last_error();
  INFO(msg);
  CHECK(msg.find("open read-only in this process") != std::string::npos);
  Conn r2(pdl_uri(path, "immutable=1"));  // another reader is welcome
  CHECK(r2.integer("SELECT count(*) FROM t") == 2);
  r2.close();
  r.close();
  w.must_open(pdl_uri(path));
  w.must("INSERT INTO t VALUES (3)");
  CHECK(w.integer("SELECT count(*) FROM t") == 3);
}
