// test_vfs_errors.cc — the pdl VFS refuses what it must refuse, says why, and harms nothing.
//
//   * bad URI parameters (unknown key, bad value, out of range) fail the open with
//     SQLITE_CANTOPEN, name the parameter in pdl::vfs::last_error(), and create no file;
//   * parameters that contradict an existing image (closed, or open in this process) fail the
//     open naming the parameter; the image stays usable with matching parameters;
//   * a host file that is not a pdl image (a unix-VFS SQLite database, a text file, an empty
//     file) is refused, byte for byte and mtime unchanged, with no side files created;
//   * a missing image opened without SQLITE_OPEN_CREATE fails and creates nothing;
//   * a full chip: inserts end in SQLITE_FULL, the database stays intact with every committed
//     row, deleting rows makes room to insert again, before and after a reopen;
//   * a worn-out chip (erase_limit): the end of its life is SQLITE_FULL, every committed row
//     intact;
//   * a write or size beyond what the chip can ever hold is SQLITE_FULL, said on stderr, and
//     changes nothing (out of memory: vfs_out_of_memory.py, the stock shell under prlimit).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

#include "flash/volume/image.h"
#include "tests/vfs_test_util.h"

using namespace pdl::test;

namespace {

std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  REQUIRE(d != nullptr);
  while (dirent* e = readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      out.emplace_back(e->d_name);
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string dir_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

// Does `msg` name the parameter `key` — "key=…", "key: …" or "'key'" — rather than merely
// containing its letters (the image path, say)?
bool names_param(const std::string& msg, const std::string& key) {
  for (size_t at = msg.find(key); at != std::string::npos; at = msg.find(key, at + 1)) {
    const char before = at ? msg[at - 1] : ' ';
    const char after = at + key.size() < msg.size() ? msg[at + key.size()] : ' ';
    if ((before == ' ' || before == '\'' || before == '(' || before == ',') &&
        (after == '=' || after == ':' || after == '\''))
      return true;
  }
  return false;
}

// Open through pdl expecting failure; returns {rc, last_error()}.
std::pair<int, std::string> open_fails(const std::string& uri, int flags = kOpenFlags) {
  Conn c;
  const int rc = c.open(uri, flags);
  return {rc, pdl::vfs::last_error()};
}

}  // namespace

TEST_CASE("a bad URI parameter fails the open, names the parameter and creates no file",
          "[vfs][errors]") {
  use_pdl_vfs();
  struct Bad {
    const char* params;
    const char* names;  // the parameter the message must name
  };
  const Bad bad = GENERATE(values<Bad>({
      {"size=8M&foo=1", "foo"},
      {"size=8M&method=xyz", "method"},
      {"size=8M&page=1000", "page"},
      {"size=8M&page=256", "page"},
      {"size=8M&page=65536", "page"},
      {"size=abc", "size"},
      {"size=1K", "size"},
      {"size=8M&max_diff=40000", "max_diff"},
      {"size=8M&page=2048&max_diff=4096", "max_diff"},  // larger than a flash page
      {"size=8M&max_diff=4", "max_diff"},               // smaller than a record header
      {"size=8M&pages_per_block=1", "pages_per_block"},
      {"size=8M&nop=0", "nop"},
      {"size=8M&obsolete=maybe", "obsolete"},
      {"size=8M&nop=1&obsolete=spare", "obsolete"},     // spare marks need NOP >= 2
      {"size=8M&max_files=0", "max_files"},
      {"size=8M&cache_chunks=0", "cache_chunks"},
      {"size=8M&clock=monotonic", "clock"},
      {"size=8M&method=ipu&log_region=18K", "log_region"},       // ipu has none
      {"size=8M&method=pdl&log_region=18K", "log_region"},       // only ipl has one
      {"size=8M&method=ipl&log_region=128K", "log_region"},      // the whole 64-page block
      {"size=8M&method=ipl&log_region=lots", "log_region"},
      {"size=8M&method=ipl&page=8192", "nop"},                   // 16 sectors, NOP 4
  }));
  const std::string path = temp_path("bad.db");
  INFO("URI parameters: " << bad.params);
  auto [rc, msg] = open_fails(pdl_uri(path, bad.params));
  INFO("last_error: " << msg);
  CHECK(rc == SQLITE_CANTOPEN);
  CHECK(names_param(msg, bad.names));
  CHECK_FALSE(file_exists(path));
  CHECK(dir_entries(dir_of(path)).empty());
}

// Regression: a bad db= value used to be refused with check_name()'s bare message ("empty file
// name"), not naming the parameter.
TEST_CASE("a bad db= URI parameter is refused naming db", "[vfs][errors]") {
  use_pdl_vfs();
  const std::string value = GENERATE(as<std::string>(), "a/b", "");
  const std::string path = temp_path("bad.db");
  auto [rc, msg] = open_fails(pdl_uri(path, "size=8M&db=" + value));
  INFO("db='" << value << "' last_error: " << msg);
  CHECK(rc == SQLITE_CANTOPEN);
  CHECK_FALSE(file_exists(path));
  CHECK(names_param(msg, "db"));
}

TEST_CASE("a parameter contradicting an existing image fails the open and names it",
          "[vfs][errors]") {
  use_pdl_vfs();
  struct Clash {
    const char* created;
    const char* reopened;
    const char* names;
  };
  const Clash clash = GENERATE(values<Clash>({
      {"method=pdl", "method=opu", "method"},
      {"method=opu", "method=pdl", "method"},
      {"page=4096", "page=2048", "page"},
      {"page=2048", "page=4096", "page"},
      {"size=8M", "size=16M", "size"},
      {"pages_per_block=32", "pages_per_block=64", "pages_per_block"},
      {"method=pdl&max_diff=256", "max_diff=512", "max_diff"},
      {"obsolete=spare", "obsolete=memory", "obsolete"},
      {"nop=4", "nop=2", "nop"},
      {"method=ipl&log_region=18K", "log_region=64K", "log_region"},
      {"method=ipl", "method=ipu", "method"},
      {"method=ipu", "log_region=18K", "log_region"},
  }));
  const bool still_open = GENERATE(false, true);  // the image closed, or open in this process
  INFO("created with " << clash.created << ", reopened with " << clash.reopened
                       << (still_open ? " while open" : " after close"));
  const std::string path = temp_path("clash.db");
  const std::string create = std::string(clash.created) +
                             (std::strstr(clash.created, "size=") ? "" : "&size=8M");
  Conn first(pdl_uri(path, create));
  first.must("CREATE TABLE t(x); INSERT INTO t VALUES (42)");
  if (!still_open) REQUIRE(first.close() == SQLITE_OK);

  auto [rc, msg] = open_fails(pdl_uri(path, clash.reopened));
  INFO("last_error: " << msg);
  CHECK(rc == SQLITE_CANTOPEN);
  CHECK(names_param(msg, clash.names));
  CHECK(msg.find("contradicts") != std::string::npos);

  // The image is still fine with its own parameters (or none).
  Conn again(pdl_uri(path, create));
  CHECK(again.integer("SELECT x FROM t") == 42);
  Conn plain(pdl_uri(path));
  CHECK(plain.integer("SELECT count(*) FROM t") == 1);
}

TEST_CASE("a host file that is not a pdl image is refused and left byte-for-byte unchanged",
          "[vfs][errors]") {
  use_pdl_vfs();
  const std::string kind = GENERATE(as<std::string>(), "unix sqlite database", "text file",
                                    "empty file", "one byte");
  const std::string path = temp_path("other.db");
  if (kind == "unix sqlite database") {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                            "unix") == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES ('precious')", nullptr,
                         nullptr, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_close(db) == SQLITE_OK);
  } else if (kind == "text file") {
    write_file_bytes(path, "hello, I am not a NAND image\nsecond line\n");
  } else if (kind == "one byte") {
    write_file_bytes(path, "P");
  } else {
    write_file_bytes(path, "");
  }
  // Back-date the file so a rewrite within the same clock tick would still show.
  struct timespec times[2] = {{1000000000, 123456789}, {1000000000, 123456789}};
  REQUIRE(utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
  const std::string before = read_file_bytes(path);
  struct stat st0;
  REQUIRE(::stat(path.c_str(), &st0) == 0);
  const auto entries0 = dir_entries(dir_of(path));

  const std::string params = GENERATE(as<std::string>(), "", "size=8M&method=opu");
  const int flags = GENERATE(as<int>(), kOpenFlags, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
  INFO(kind << ", params '" << params << "', flags " << flags);
  auto [rc, msg] = open_fails(pdl_uri(path, params), flags);
  INFO("last_error: " << msg);
  CHECK(rc == SQLITE_CANTOPEN);
  CHECK(msg.find("not a pdl image") != std::string::npos);

  struct stat st1;
  REQUIRE(::stat(path.c_str(), &st1) == 0);
  CHECK(read_file_bytes(path) == before);
  CHECK(st1.st_size == st0.st_size);
  CHECK(st1.st_mtim.tv_sec == st0.st_mtim.tv_sec);
  CHECK(st1.st_mtim.tv_nsec == st0.st_mtim.tv_nsec);
  CHECK(st1.st_ino == st0.st_ino);
  CHECK(dir_entries(dir_of(path)) == entries0);

  if (kind == "unix sqlite database") {  // and it is still a working database
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, "unix") == SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, "SELECT x FROM t", -1, &s, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(s) == SQLITE_ROW);
    CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, 0))) == "precious");
    sqlite3_finalize(s);
    sqlite3_close(db);
  }
}

TEST_CASE("a missing image opened without SQLITE_OPEN_CREATE fails and creates nothing",
          "[vfs][errors]") {
  use_pdl_vfs();
  const int flags = GENERATE(as<int>(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
  const std::string params = GENERATE(as<std::string>(), "", "size=8M");
  const std::string path = temp_path("missing.db");
  auto [rc, msg] = open_fails(pdl_uri(path, params), flags);
  INFO("flags " << flags << " params '" << params << "' last_error: " << msg);
  CHECK(rc == SQLITE_CANTOPEN);
  CHECK(msg.find(path) != std::string::npos);
  CHECK_FALSE(file_exists(path));
  CHECK(dir_entries(dir_of(path)).empty());
}

namespace {

// The deterministic payload of row `id` (so any row can be checked without keeping it).
std::vector<uint8_t> payload(int64_t id, size_t n) {
  std::mt19937_64 rng(uint64_t(id) * 0x9E3779B97F4A7C15ull + 17);
  return random_page(rng, n);
}

// Insert row `id` in autocommit; SQLite's primary result code.
int insert_row(Conn& c, int64_t id, size_t n) {
  const auto p = payload(id, n);
  return c.query("INSERT INTO t(id, b) VALUES (?1, ?2)", nullptr, [&](sqlite3_stmt* st) {
           sqlite3_bind_int64(st, 1, id);
           sqlite3_bind_blob(st, 2, p.data(), int(p.size()), SQLITE_TRANSIENT);
         }) & 0xFF;
}

// Every row in `ids` is present with its payload, and no other row is.
void check_rows(Conn& c, const std::set<int64_t>& ids, size_t n) {
  std::set<int64_t> seen;
  int bad = 0;
  const int rc = c.query("SELECT id, b FROM t ORDER BY id", [&](sqlite3_stmt* st) {
    const int64_t id = sqlite3_column_int64(st, 0);
    seen.insert(id);
    const auto want = payload(id, n);
    const void* b = sqlite3_column_blob(st, 1);
    if (size_t(sqlite3_column_bytes(st, 1)) != n || std::memcmp(b, want.data(), n) != 0) bad++;
  });
  REQUIRE(rc == SQLITE_OK);
  CHECK(bad == 0);
  CHECK(seen == ids);
}

void check_healthy(Conn& c) {
  CHECK(c.text("PRAGMA integrity_check") == "ok");
  CHECK(c.text("PRAGMA pdl_check") == "ok");
}

// Every committed row, rescued the way a user would from an image SQLite cannot open: its files
// copied out (`pdl cat`), the database and its hot journal side by side on the host, where
// SQLite rolls the journal back.
void check_rows_rescued(const std::string& image, const std::set<int64_t>& ids, size_t n) {
  std::unique_ptr<pdl::Image> img;
  REQUIRE(pdl::open_image(image, pdl::ImageParams(), pdl::ImageMode::kOpen, true, "", &img)
              .is_ok());
  const std::string db = temp_path("rescued.db");
  std::string main_name = img->volume->main_name();
  for (const pdl::FileInfo& fi : img->volume->list()) {
    std::vector<uint8_t> bytes(fi.size);
    pdl::Volume::FileId id;
    size_t got = 0;
    REQUIRE(img->volume->lookup(fi.name, &id).is_ok());
    REQUIRE(img->volume->read(id, 0, bytes, &got).is_ok());
    REQUIRE(got == bytes.size());
    const std::string out = db + fi.name.substr(main_name.size());  // rescued.db[-journal]
    std::ofstream(out, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                               std::streamsize(bytes.size()));
  }
  img.reset();
  Conn c("file:" + db + "?vfs=unix");
  CHECK(c.text("PRAGMA integrity_check") == "ok");
  check_rows(c, ids, n);
}


// The smallest chips the Volume accepts are about 192K with 512-byte flash pages and 16-page
// blocks. max_files=8: the default 256-slot directory would take half of such a chip.
constexpr const char* kTinyChip = "size=256K&page=512&pages_per_block=16&max_files=8";

// Insert rows from `*next` on until one fails; the failing code. Committed ids join `committed`.
int fill(Conn& c, int64_t* next, size_t n, std::set<int64_t>* committed) {
  int rc = SQLITE_OK;
  for (int i = 0; i < 100000; i++, ++*next) {
    rc = insert_row(c, *next, n);
    if (rc != SQLITE_OK) break;
    committed->insert(*next);
  }
  return rc;
}

}  // namespace

TEST_CASE("a full chip refuses inserts with SQLITE_FULL and loses no committed row",
          "[vfs][errors][full]") {
  use_pdl_vfs();
  const std::string method = GENERATE(as<std::string>(), "pdl", "opu", "ipu", "ipl");
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "TRUNCATE", "PERSIST",
                                       "MEMORY");
  const size_t n = GENERATE(size_t(300), size_t(1500));
  INFO("method " << method << ", journal_mode " << journal << ", row bytes " << n);
  const std::string path = temp_path("full.db");
  const std::string uri = pdl_uri(path, std::string(kTinyChip) + "&method=" + method);
  std::set<int64_t> committed;
  int64_t next = 1;
  {
    Conn c(uri);
    c.must("PRAGMA page_size=1024");
    set_journal_mode(c, journal);
    c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)");
    const int rc = fill(c, &next, n, &committed);
    INFO("stopped at row " << next << ": " << c.errmsg());
    REQUIRE(rc == SQLITE_FULL);
    REQUIRE(committed.size() >= 5);
    check_healthy(c);
    check_rows(c, committed, n);

    // Still full: another insert fails the same way and changes nothing.
    CHECK(insert_row(c, next, n) == SQLITE_FULL);
    check_rows(c, committed, n);

    // A one-row delete in the same journal mode either works or (the journal needs flash
    // too: a rollback journal on a full chip has nowhere to go) fails with SQLITE_FULL and
    // changes nothing.
    const int64_t victim = *committed.begin();
    const int drc = c.exec("DELETE FROM t WHERE id = " + std::to_string(victim));
    INFO("one-row delete: rc " << drc << " " << c.exec_error());
    CHECK((drc == SQLITE_OK || drc == SQLITE_FULL));
    if (drc == SQLITE_OK) committed.erase(victim);
    check_rows(c, committed, n);

    // Making room. With atomic commit (the default) a transaction needs room for the pages it
    // replaces until it commits, so deleting half the rows at once on a full chip may fail
    // with SQLITE_FULL — changing nothing — while a row per transaction always fits; the
    // journal is in memory whatever the journal mode. The pages SQLite frees are reused by
    // later inserts. With the journal on flash (IPU, IPL), journal_mode=MEMORY spares the
    // journal's room for the delete, and VACUUM hands the pages back to the chip.
    // IPL's atomic commit keeps a rewritten erase block's committed version in a spare block
    // when the transaction's changes there outgrow its log region; this chip's regions hold
    // two sectors, and a full store has one spare block: it makes room with commit=journal.
    if (method == "ipl") {
      c.close();
      c.must_open(uri + "&commit=journal");
      set_journal_mode(c, journal);
    }
    const int64_t pages_full = c.integer("PRAGMA page_count");
    const bool atomic = method == "pdl" || method == "opu";
    if (!atomic) set_journal_mode(c, "MEMORY");
    const int64_t cut = *std::next(committed.begin(), std::ptrdiff_t(committed.size() / 2));
    const int brc = c.exec("DELETE FROM t WHERE id < " + std::to_string(cut)) & 0xFF;
    INFO("deleting half the rows at once: rc " << brc << " " << c.exec_error());
    CHECK((brc == SQLITE_OK || (atomic && brc == SQLITE_FULL)));
    if (brc == SQLITE_FULL) {
      check_healthy(c);
      check_rows(c, committed, n);
      while (*committed.begin() < cut) {
        const int64_t id = *committed.begin();
        c.must("DELETE FROM t WHERE id = " + std::to_string(id));
        committed.erase(id);
      }
    } else {
      committed.erase(committed.begin(), committed.find(cut));
    }
    const int vrc = c.exec("VACUUM") & 0xFF;
    INFO("VACUUM: rc " << vrc << " " << c.exec_error());
    // (atomic: VACUUM rewrites the whole database in one transaction — it may not fit)
    CHECK((vrc == SQLITE_OK || (atomic && vrc == SQLITE_FULL)));
    if (vrc == SQLITE_OK) CHECK(c.integer("PRAGMA page_count") < pages_full);
    check_rows(c, committed, n);
    if (!atomic) set_journal_mode(c, journal);
    for (int i = 0; i < 3; i++, next++) {
      INFO("insert after making room, row " << next << ": " << c.errmsg());
      REQUIRE(insert_row(c, next, n) == SQLITE_OK);
      committed.insert(next);
    }
    check_healthy(c);
    check_rows(c, committed, n);
  }
  // After a reopen too: intact, inserts work, and filling it again ends in SQLITE_FULL again.
  Conn c(uri);
  check_healthy(c);
  check_rows(c, committed, n);
  CHECK(fill(c, &next, n, &committed) == SQLITE_FULL);
  check_healthy(c);
  check_rows(c, committed, n);
  REQUIRE(c.close() == SQLITE_OK);
  Conn again(uri);
  check_healthy(again);
  check_rows(again, committed, n);
}

// Regression: a write that failed with kFull used to leave the file's chunk vector grown past
// its size (Volume::store_chunk resized it before taking an lpn), and pdl_check then reported
// "corrupt: file <db>-wal: chunks beyond its size" until the next mount.
TEST_CASE("pdl_check stays ok right after a write fails with SQLITE_FULL",
          "[vfs][errors][full]") {
  use_pdl_vfs();
  const std::string journal = GENERATE(as<std::string>(), "WAL", "DELETE");
  const std::string path = temp_path("full.db");
  Conn c(pdl_uri(path, kTinyChip));
  c.must("PRAGMA page_size=1024");
  set_journal_mode(c, journal);
  c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)");
  std::set<int64_t> committed;
  int64_t next = 1;
  REQUIRE(fill(c, &next, 1500, &committed) == SQLITE_FULL);
  INFO("journal_mode " << journal);
  CHECK(c.text("PRAGMA integrity_check") == "ok");
  CHECK(c.text("PRAGMA pdl_check") == "ok");
}

// In WAL mode a full chip keeps every committed row, readable before and after a reopen. Making
// room again in place is a known limit (docs/design.md §8): the WAL cannot be checkpointed while
// the database file needs lpns the WAL holds, so wal_checkpoint, leaving WAL mode, DELETE and
// VACUUM fail with SQLITE_FULL; the data can be read out (e.g. `pdl cat`).
TEST_CASE("a full chip in WAL mode keeps every committed row, before and after reopen",
          "[vfs][errors][full]") {
  use_pdl_vfs();
  const std::string path = temp_path("full.db");
  const std::string uri = pdl_uri(path, kTinyChip);
  std::set<int64_t> committed;
  int64_t next = 1;
  {
    Conn c(uri);
    c.must("PRAGMA page_size=1024");
    set_journal_mode(c, "WAL");
    c.must("PRAGMA wal_autocheckpoint=16");
    c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)");
    REQUIRE(fill(c, &next, 300, &committed) == SQLITE_FULL);
    CHECK(c.text("PRAGMA integrity_check") == "ok");
    check_rows(c, committed, 300);
  }
  Conn c(uri);
  CHECK(c.text("PRAGMA integrity_check") == "ok");
  check_rows(c, committed, 300);
}

// Wear-out (docs/reliability.md): on a chip whose blocks endure few erases, a churning workload
// (insert a row, delete the oldest) wears blocks out one after another; the engine retires
// each, and at the end of the chip's life a commit fails with SQLITE_FULL — never an I/O error
// or wrong data. Every committed row is then intact, before and after a reopen.
TEST_CASE("a chip worn out to the end of its life ends in SQLITE_FULL with every committed row "
          "intact", "[vfs][errors][full][wear]") {
  use_pdl_vfs();
  const std::string method = GENERATE(as<std::string>(), "pdl", "opu", "ipu", "ipl");
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "WAL");
  const bool checkpoints = GENERATE(true, false);
  if (journal == "DELETE" && !checkpoints) return;
  INFO("method " << method << ", journal_mode " << journal << ", checkpoints " << checkpoints);
  const std::string path = temp_path("worn.db");
  const std::string uri =
      pdl_uri(path, std::string(kTinyChip) + "&erase_limit=6&method=" + method);
  constexpr size_t kRow = 300;
  std::set<int64_t> committed;
  int64_t next = 1, txns = 0;
  int rc = SQLITE_OK;
  {
    Conn c(uri);
    c.must("PRAGMA page_size=1024");
    set_journal_mode(c, journal);
    // A WAL the tiny chip holds; or one that grows until it fills the chip.
    c.must("PRAGMA wal_autocheckpoint=" + std::string(checkpoints ? "16" : "0"));
    c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)");
    for (; txns < 200000 && rc == SQLITE_OK; txns++) {
      if (committed.size() >= 40) {
        const int64_t oldest = *committed.begin();
        rc = c.exec("DELETE FROM t WHERE id = " + std::to_string(oldest)) & 0xFF;
        if (rc == SQLITE_OK) committed.erase(oldest);
      }
      if (rc == SQLITE_OK) rc = insert_row(c, next, kRow);
      if (rc == SQLITE_OK) committed.insert(next++);
    }
    INFO("after " << txns << " transactions: rc " << rc << " " << c.errmsg() << " / "
                  << pdl::vfs::last_error());
    REQUIRE(rc == SQLITE_FULL);
    check_healthy(c);
    check_rows(c, committed, kRow);
    if (checkpoints)  // (otherwise the WAL fills the chip before anything wears out)
      CHECK(json_number(parse_json(c.text("PRAGMA pdl_stats")), "store.bad_blocks") > 0);
  }
  // Reopened: all there. With no room left for the mount's clean-up the image opens
  // read-only; a write then fails with SQLITE_READONLY or SQLITE_FULL and changes nothing.
  // The journal on flash (IPU, IPL): if the failed transaction's rollback could not make its
  // journal's removal durable (no room at all), the journal is hot again and SQLite cannot
  // open the database without room to roll it back; the rows are then rescued by copying the
  // files out.
  Conn c(uri);
  if ((method == "ipu" || method == "ipl") &&
      c.exec("PRAGMA integrity_check") == SQLITE_FULL) {
    c.close();
    check_rows_rescued(path, committed, kRow);
    return;
  }
  check_healthy(c);
  check_rows(c, committed, kRow);
  const int wrc = insert_row(c, next, kRow);
  INFO("insert after reopen: rc " << wrc << " " << c.errmsg());
  CHECK((wrc == SQLITE_OK || wrc == SQLITE_FULL || wrc == SQLITE_READONLY));
  if (wrc == SQLITE_OK) committed.insert(next);
  check_rows(c, committed, kRow);
}

// Regression: lpns released by a truncate return to the pool only after a sync makes the release
// durable, and Volume::store_chunk used to report kFull as soon as the pool was empty; after
// VACUUM shrank a database on a full chip (SQLite truncates after its last sync), the next
// transaction failed with SQLITE_FULL although most of the chip was free. The Volume now commits
// its metadata to bring released lpns back before giving up — with the journal on flash
// (commit=journal: a store committing page by page, where such a commit is harmless; with atomic
// commit the released lpns are reused in the open group instead: the next test).
TEST_CASE("after VACUUM shrinks a full database the next insert succeeds",
          "[vfs][errors][full]") {
  use_pdl_vfs();
  const std::string journal = GENERATE(as<std::string>(), "MEMORY", "OFF");
  INFO("journal_mode " << journal);
  const std::string path = temp_path("full.db");
  Conn c(pdl_uri(path, std::string(kTinyChip) + "&commit=journal"));
  c.must("PRAGMA page_size=1024");
  set_journal_mode(c, journal);
  c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)");
  std::set<int64_t> committed;
  int64_t next = 1;
  REQUIRE(fill(c, &next, 300, &committed) == SQLITE_FULL);
  c.must("DELETE FROM t WHERE id < " + std::to_string(next * 3 / 4));
  c.must("VACUUM");
  const int rc = insert_row(c, next, 8000);
  INFO("insert after VACUUM: " << c.errmsg());
  CHECK(rc == SQLITE_OK);
}

// Regression: pdl's Volume cache parameter used to be called "cache", which SQLite itself owns
// (cache=shared|private), so it could never be set. It is cache_chunks now.
TEST_CASE("the cache_chunks= URI parameter sets the Volume cache, and cache= stays SQLite's",
          "[vfs][errors]") {
  use_pdl_vfs();
  const std::string path = temp_path("cache.db");
  {
    Conn c;
    const int rc = c.open(pdl_uri(path, "size=8M&cache_chunks=64"));
    INFO("rc " << rc << " vfs: " << pdl::vfs::last_error());
    REQUIRE(rc == SQLITE_OK);
    c.must("CREATE TABLE t(x); INSERT INTO t VALUES (1)");
    CHECK(c.integer("SELECT x FROM t") == 1);
  }
  Conn shared(pdl_uri(path, "cache=private&cache_chunks=1"));
  CHECK(shared.integer("SELECT x FROM t") == 1);
  CHECK(shared.text("PRAGMA pdl_check") == "ok");
}

TEST_CASE("a write or size beyond what the chip can hold is SQLITE_FULL and changes nothing",
          "[vfs][errors]") {
  use_pdl_vfs();
  const std::string path = temp_path("cap.db");
  Conn c;
  REQUIRE(c.open(pdl_uri(path, "size=1M"), kOpenFlags) == SQLITE_OK);
  c.must("CREATE TABLE t(x); INSERT INTO t VALUES ('hello')");
  sqlite3_file* f = nullptr;
  REQUIRE(sqlite3_file_control(c.get(), "main", SQLITE_FCNTL_FILE_POINTER, &f) == SQLITE_OK);
  REQUIRE(f != nullptr);
  sqlite3_int64 before = 0;
  REQUIRE(f->pMethods->xFileSize(f, &before) == SQLITE_OK);
  const char byte = 1;
  // Far beyond a 1 MiB chip (a database of 2^41 bytes), and where the chunk index overflows.
  CHECK(f->pMethods->xTruncate(f, sqlite3_int64(1) << 41) == SQLITE_FULL);
  CHECK(pdl::vfs::last_error().find("largest file") != std::string::npos);
  CHECK(f->pMethods->xWrite(f, &byte, 1, sqlite3_int64(1) << 41) == SQLITE_FULL);
  CHECK(f->pMethods->xWrite(f, &byte, 1, sqlite3_int64(1) << 62) == SQLITE_FULL);
  sqlite3_int64 after = 0;
  REQUIRE(f->pMethods->xFileSize(f, &after) == SQLITE_OK);
  CHECK(after == before);
  CHECK(c.text("SELECT x FROM t") == "hello");
  CHECK(c.text("PRAGMA integrity_check") == "ok");
}
