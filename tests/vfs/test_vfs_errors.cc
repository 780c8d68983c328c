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
//   * an image whose NVM area was zeroed or overwritten with garbage (PDL and IPL with NVM)
//     fails to open naming the NVM, and opens with every committed row once its NVM is back.
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <random>
#include <set>

#include "flash/device/emulated_nand.h"
#include "flash/image/image.h"
#include "tests/support/vfs_test_util.h"

using namespace pdl::test;

namespace {

// The page-update methods the VFS suites run over, in matrix order (in_matrix_sample).
constexpr const char* kMethods[] = {"pdl", "opu", "ipu", "ipl"};

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
      {"size=8M&owner_cache=0", "owner_cache"},
      {"size=8M&owner_cache=lots", "owner_cache"},
      {"size=8M&clock=monotonic", "clock"},
      {"size=8M&track_changes=maybe", "track_changes"},
      {"size=8M&method=ipu&log_region=18K", "log_region"},       // ipu has none
      {"size=8M&method=pdl&log_region=18K", "log_region"},       // only ipl has one
      {"size=8M&method=ipl&log_region=128K", "log_region"},      // the whole 64-page block
      {"size=8M&method=ipl&log_region=lots", "log_region"},
      {"size=8M&method=ipl&page=8192", "nop"},                   // 16 sectors, NOP 4
      {"size=8M&method=ipl&log_sector=128", "log_sector"},       // 16 sectors, NOP 4
      {"size=8M&method=ipl&log_sector=200&nop=16", "log_sector"},  // not a power of two
      {"size=8M&method=ipl&log_sector=64&nop=16", "log_sector"},
      {"size=8M&method=ipu&log_sector=128", "log_sector"},       // ipu has none
      {"size=8M&method=pdl&log_sector=128", "log_sector"},       // only ipl has them
      {"size=8M&method=pdl&ftl=page", "ftl"},                    // only FTL devices have one
      {"size=8M&method=ipl&ftl=bast", "ftl"},
      {"size=8M&method=ftl&ftl=nand", "ftl"},                    // unknown FTL
      {"size=8M&method=ftl&ftl=page&log_blocks=16", "log_blocks"},  // the page FTL has none
      {"size=8M&method=ftl&log_blocks=16", "log_blocks"},       // (ftl=page by default)
      {"size=8M&method=ftl&log_blocks=0", "log_blocks"},
      {"size=8M&method=pdl&log_blocks=16", "log_blocks"},
      {"size=8M&method=ftl&sb_slots=8", "sb_slots"},            // only stablebuffer stages
      {"size=8M&method=opu&sb_slots=8", "sb_slots"},
      {"size=8M&method=stablebuffer&sb_slots=lots", "sb_slots"},
      {"size=8M&method=stablebuffer&sb_recognition=sometimes", "sb_recognition"},
      {"size=8M&method=stablebuffer&sb_flush=lazy", "sb_flush"},
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
      {"method=ipl&log_sector=128&nop=16", "log_sector=512", "log_sector"},
      {"method=ipl", "log_sector=128", "log_sector"},
      {"method=pdl", "log_sector=512", "log_sector"},
      {"method=ftl", "method=opu", "method"},
      {"method=opu", "method=ftl", "method"},
      {"method=ftl&ftl=page", "ftl=bast", "ftl"},
      {"method=pdl", "ftl=page", "ftl"},
      {"method=ftl", "log_blocks=16", "log_blocks"},
      {"method=ftl", "sb_slots=32", "sb_slots"},
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

// The table insert_row() fills, in a database of 1 KiB pages in journal mode `journal`.
void create_rows_table(Conn& c, const std::string& journal) {
  c.must("PRAGMA page_size=1024");
  set_journal_mode(c, journal);
  c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)");
}

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
    create_rows_table(c, journal);
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
  create_rows_table(c, journal);
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
  create_rows_table(c, journal);
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

// ---- read-only opens ----
//
// SQLite's read-only opens (SQLITE_OPEN_READONLY, mode=ro, immutable=1) open the image
// read-only: O_RDONLY under a shared lock (a tool may inspect it meanwhile), mounted in memory
// only — nothing is programmed or erased, even when the mount finds a power cut's leftovers —
// and a write fails with SQLITE_READONLY. The image file stays byte for byte and mtime
// unchanged.
namespace {

struct HostFile {
  std::string bytes;
  struct timespec mtime {};
};

HostFile snapshot(const std::string& path) {
  HostFile h;
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  h.mtime = st.st_mtim;
  h.bytes = read_file_bytes(path);
  return h;
}

void check_unchanged(const std::string& path, const HostFile& before) {
  const HostFile after = snapshot(path);
  CHECK(after.bytes.size() == before.bytes.size());
  CHECK((after.bytes == before.bytes));
  CHECK(after.mtime.tv_sec == before.mtime.tv_sec);
  CHECK(after.mtime.tv_nsec == before.mtime.tv_nsec);
}

struct ReadOnlyWay {
  const char* name;
  const char* uri_param;  // appended to the URI ("" = none)
  int flags;
};

const ReadOnlyWay kReadOnlyWays[] = {
    {"SQLITE_OPEN_READONLY", "", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI},
    {"mode=ro", "mode=ro", kOpenFlags},
    {"immutable=1", "immutable=1", kOpenFlags},
};

// Open `path` read-only the way `w` says; the image is then held read-only by this process.
void open_read_only(Conn& c, const std::string& path, const ReadOnlyWay& w) {
  c.must_open(pdl_uri(path, w.uri_param), w.flags);
  pdl::Image* img = pdl::vfs::image_of(path);
  REQUIRE(img != nullptr);
  CHECK(img->volume->read_only());
  // The device is open O_RDONLY under a shared lock: a read-only inspector (pdl info, fsck)
  // may open it meanwhile.
  std::unique_ptr<pdl::EmulatedNand> inspector;
  const pdl::Status st = pdl::EmulatedNand::open_file(path, &inspector, /*read_only=*/true);
  INFO("inspector open: " << st.to_string());
  CHECK(st.is_ok());
}

}  // namespace

TEST_CASE("an image opened read-only is read without a single write and refuses writes with "
          "SQLITE_READONLY",
          "[vfs][errors][readonly]") {
  use_pdl_vfs();
  const size_t m = GENERATE(range(size_t(0), std::size(kMethods)));
  const std::string method = kMethods[m];
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "WAL");
  if (!pdl::test::in_matrix_sample(m * 2 + (journal == "WAL"), __LINE__)) return;
  INFO("method=" << method << " journal_mode=" << journal);
  const std::string path = temp_path("ro.db");
  {
    Conn c(pdl_uri(path, "size=8M&method=" + method));
    c.must("PRAGMA journal_mode=" + journal);
    c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)");
    c.must("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 200) "
           "INSERT INTO t(v) SELECT 'row' || i FROM s");
  }
  const HostFile before = snapshot(path);
  for (const ReadOnlyWay& w : kReadOnlyWays) {
    INFO("read-only by " << w.name);
    Conn c;
    open_read_only(c, path, w);
    CHECK(c.integer("SELECT count(*) FROM t") == 200);
    CHECK(c.text("SELECT v FROM t WHERE id = 77") == "row77");
    CHECK(c.exec("INSERT INTO t(v) VALUES ('no')") == SQLITE_READONLY);
    CHECK(c.exec("CREATE TABLE u(x)") == SQLITE_READONLY);
    CHECK(c.text("PRAGMA integrity_check") == "ok");
    CHECK(c.text("PRAGMA pdl_check") == "ok");
    REQUIRE(c.close() == SQLITE_OK);
    check_unchanged(path, before);
  }
  // A read-write open afterwards finds everything as it was.
  Conn rw(pdl_uri(path));
  rw.must("INSERT INTO t(v) VALUES ('more')");
  CHECK(rw.integer("SELECT count(*) FROM t") == 201);
}

// The cut falls early in the commit, half-way, or at its very last program or erase. IPU keeps
// the rollback journal on flash: cut half-way, the journal is hot, SQLite will not read past
// it read-only (SQLITE_READONLY_ROLLBACK, as with unix) and immutable=1 is refused.
TEST_CASE("an image a power cut left needing recovery opens read-only at its last commit and "
          "stays unchanged",
          "[vfs][errors][readonly]") {
  use_pdl_vfs();
  const size_t m = GENERATE(range(size_t(0), std::size(kMethods)));
  const std::string method = kMethods[m];
  const int where = GENERATE(0, 1, 2);  // early, half-way, the last program of the commit
  // (The sanitizer run samples the 12 cases: PDL_MATRIX_STRIDE.)
  if (!pdl::test::in_matrix_sample(m * 3 + size_t(where), __LINE__)) return;
  // Commit 20 rows, then cut the power `cut` programs/erases into committing 60 more (<0:
  // no cut). Returns the programs/erases the commit took.
  auto run = [&](const std::string& path, int64_t cut) {
    seed_sqlite_prng();
    Conn c(pdl_uri(path, "size=8M&method=" + method));
    c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)");
    c.must("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 20) "
           "INSERT INTO t(b) SELECT zeroblob(500) FROM s");
    c.must("BEGIN");
    c.must("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 60) "
           "INSERT INTO t(b) SELECT randomblob(1500) FROM s");
    auto* nand = static_cast<pdl::EmulatedNand*>(pdl::vfs::device_of(path));
    REQUIRE(nand != nullptr);
    const uint64_t ops = nand->mutating_ops();
    if (cut >= 0) nand->cut_power_after(uint64_t(cut), pdl::Tear::kPrefix, 42);
    const int rc = c.exec("COMMIT");
    if (cut >= 0) {
      CHECK(rc != SQLITE_OK);  // the commit dies with the chip
      REQUIRE(nand->frozen());
    } else {
      REQUIRE(rc == SQLITE_OK);
    }
    const int64_t took = int64_t(nand->mutating_ops() - ops);
    c.close();
    REQUIRE(pdl::vfs::device_of(path) == nullptr);
    return took;
  };
  const int64_t commit_ops = run(temp_path("dry.db"), -1);
  REQUIRE(commit_ops > 4);
  const int64_t cut = where == 0 ? 2 : where == 1 ? commit_ops / 2 : commit_ops - 1;
  INFO("method=" << method << ", power cut after " << cut << " of the commit's " << commit_ops
                 << " programs/erases");
  const std::string path = temp_path("rocut.db");
  run(path, cut);
  const HostFile before = snapshot(path);
  bool hot_journal = false;
  int64_t seen = -1;  // the rows read-only opens see
  for (const ReadOnlyWay& w : kReadOnlyWays) {  // (immutable=1 last)
    INFO("read-only by " << w.name);
    Conn c;
    if (hot_journal && std::string(w.name) == "immutable=1") {
      // SQLite would read past the hot journal without looking: refused, saying why.
      CHECK(c.open(pdl_uri(path, w.uri_param), w.flags) == SQLITE_CANTOPEN);
      CHECK(pdl::vfs::last_error().find("hot rollback journal") != std::string::npos);
      check_unchanged(path, before);
      continue;
    }
    open_read_only(c, path, w);
    int64_t rows = -1;
    const int rc = c.query("SELECT count(*) FROM t",
                           [&](sqlite3_stmt* st) { rows = sqlite3_column_int64(st, 0); });
    if (sqlite3_extended_errcode(c.get()) == SQLITE_READONLY_ROLLBACK) {
      // A hot journal on flash: SQLite will not read past it read-only (as with unix).
      CHECK(method == "ipu");  // the others commit atomic groups: no journal on flash
      CHECK(pdl::vfs::last_error().find("hot rollback journal") != std::string::npos);
      hot_journal = true;
    } else {
      CHECK(rc == SQLITE_OK);
      // The last commit: the 20 rows, or all 80 if the cut came after the commit point.
      if (seen < 0) seen = rows;
      CHECK(rows == seen);
      CHECK((rows == 20 || rows == 80));
      CHECK(c.integer("SELECT sum(length(b)) FROM t") == 20 * 500 + (rows - 20) * 1500);
      CHECK(c.exec("DELETE FROM t") == SQLITE_READONLY);
      CHECK(c.text("PRAGMA integrity_check") == "ok");
    }
    REQUIRE(c.close() == SQLITE_OK);
    check_unchanged(path, before);
  }
  if (method == "ipu" && where == 1) CHECK(hot_journal);  // (the case is exercised)
  Conn rw(pdl_uri(path));  // the recovery read-only opens left to the first writer
  const int64_t recovered = rw.integer("SELECT count(*) FROM t");
  CHECK(recovered == (seen < 0 ? 20 : seen));  // (a hot journal rolls back to the 20)
  rw.must("INSERT INTO t(b) VALUES (x'01')");
  CHECK(rw.text("PRAGMA pdl_check") == "ok");
  rw.close();
  Conn ro(pdl_uri(path, "mode=ro"));  // recovered: read-only opens read it all again
  CHECK(ro.integer("SELECT count(*) FROM t") == recovered + 1);
}

// WAL: the WAL-index is process memory, so no -shm file is needed. A WAL checkpointed away at
// the last close reads as an empty WAL SQLite may not write; a WAL still holding commits (its
// last connection closed without a checkpoint) is read, never checkpointed.
TEST_CASE("a WAL database opens read-only, its WAL checkpointed away or still holding commits",
          "[vfs][errors][readonly]") {
  use_pdl_vfs();
  const size_t m = GENERATE(range(size_t(0), std::size(kMethods)));
  const std::string method = kMethods[m];
  if (!pdl::test::in_matrix_sample(m, __LINE__)) return;
  INFO("method=" << method);
  const std::string path = temp_path("rowal.db");
  const std::string insert50 =
      "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 50) "
      "INSERT INTO t(v) SELECT i FROM s";
  {
    Conn c(pdl_uri(path, "size=8M&method=" + method));
    c.must("PRAGMA journal_mode=WAL");
    c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER)");
    c.must(insert50);
  }
  HostFile before = snapshot(path);
  {
    Conn r;
    open_read_only(r, path, kReadOnlyWays[1]);
    CHECK(r.text("PRAGMA journal_mode") == "wal");
    CHECK(r.integer("SELECT count(*) FROM t") == 50);
    CHECK(r.exec("INSERT INTO t(v) VALUES (0)") == SQLITE_READONLY);
  }
  check_unchanged(path, before);
  {
    Conn c(pdl_uri(path));
    int on = 0;
    REQUIRE(sqlite3_db_config(c.get(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, &on) == SQLITE_OK);
    c.must(insert50);
  }
  before = snapshot(path);
  {
    Conn r;
    open_read_only(r, path, kReadOnlyWays[0]);
    CHECK(r.integer("SELECT count(*) FROM t") == 100);
    CHECK(r.integer("SELECT sum(v) FROM t") == 2 * (50 * 51 / 2));
    CHECK(r.exec("PRAGMA wal_checkpoint(TRUNCATE)") != SQLITE_OK);
    CHECK(r.exec("INSERT INTO t(v) VALUES (0)") == SQLITE_READONLY);
  }
  check_unchanged(path, before);
  Conn rw(pdl_uri(path));
  CHECK(rw.integer("SELECT count(*) FROM t") == 100);
  CHECK(rw.text("PRAGMA integrity_check") == "ok");
}

// A file this process may not write — a read-only mount (as root, in a private mount
// namespace), or one without write permission (not root) — opens read-only even when SQLite
// asks read-write, as the unix VFS does: reads work, writes fail with SQLITE_READONLY.
TEST_CASE("an image on media this process may not write opens read-only", "[vfs][errors][readonly]") {
  use_pdl_vfs();
  const std::string path = temp_path("romedia.db");
  const std::string dir = dir_of(path);
  {
    Conn c(pdl_uri(path, "size=8M"));
    c.must("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3)");
  }
  const HostFile before = snapshot(path);
  const bool root = geteuid() == 0;
  if (!root) REQUIRE(chmod(path.c_str(), 0444) == 0);
  int out[2];
  REQUIRE(pipe(out) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {  // child: no Catch assertions; one line of results through the pipe
    close(out[0]);
    std::string line;
    if (root && (unshare(CLONE_NEWNS) != 0 ||
                 mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
                 mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
                 mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY,
                       nullptr) != 0)) {
      line = std::string("skip ") + std::strerror(errno);
    } else {
      for (const char* params : {"", "mode=ro"}) {
        sqlite3* db = nullptr;
        const int orc = sqlite3_open_v2(pdl_uri(path, params).c_str(), &db, kOpenFlags, nullptr);
        int64_t n = -1;
        sqlite3_stmt* st = nullptr;
        if (orc == SQLITE_OK &&
            sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, nullptr) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
          n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        const int wrc = orc == SQLITE_OK
                            ? sqlite3_exec(db, "INSERT INTO t VALUES (4)", nullptr, nullptr, nullptr)
                            : -1;
        sqlite3_close_v2(db);
        line += std::to_string(orc) + " " + std::to_string(n) + " " + std::to_string(wrc & 0xFF) +
                " " + pdl::vfs::last_error() + "|";
      }
    }
    (void)!write(out[1], line.data(), line.size());
    _exit(0);
  }
  close(out[1]);
  std::string got;
  char buf[512];
  for (ssize_t r; (r = read(out[0], buf, sizeof buf)) > 0;) got.append(buf, size_t(r));
  close(out[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  if (!root) REQUIRE(chmod(path.c_str(), 0644) == 0);
  INFO("child: " << got);
  if (got.rfind("skip", 0) == 0) {
    WARN("no read-only bind mount here (" << got << "): case not run");
    return;
  }
  const std::string ok = std::to_string(SQLITE_OK) + " 3 " + std::to_string(SQLITE_READONLY);
  CHECK(got.rfind(ok + " ", 0) == 0);                                       // read-write asked
  CHECK(got.find("|" + ok + " ") != std::string::npos);                     // mode=ro
  check_unchanged(path, before);
}

// A full host file system under the image (injected: programs fail as on ENOSPC from some
// point on) is no flash defect: inserts end in SQLITE_FULL whose message names the image file,
// SELECT keeps working with every committed row, no block is marked bad, and once the host
// has room again inserts succeed on the same connection; every committed row survives a
// reopen.
TEST_CASE("a full host file system ends inserts in SQLITE_FULL naming the image, keeps "
          "SELECT working and loses no committed row", "[vfs][errors][host_full]") {
  use_pdl_vfs();
  const std::string method = GENERATE(as<std::string>(), "pdl", "opu", "ipu", "ipl");
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "WAL");
  const uint64_t after = GENERATE(uint64_t(0), uint64_t(3), uint64_t(17), uint64_t(60));
  INFO("method " << method << ", journal_mode " << journal << ", host full after " << after
                 << " programs");
  const std::string path = temp_path("hostfull.db");
  // (wear_level: a run-time setting, which the store mounted again keeps)
  const std::string uri =
      pdl_uri(path, "size=2M&page=512&pages_per_block=16&wear_level=5&method=" + method);
  const size_t n = 300;
  std::set<int64_t> committed;
  int64_t next = 1;
  {
    Conn c(uri);
    create_rows_table(c, journal);
    for (int i = 0; i < 20; i++, next++) {
      REQUIRE(insert_row(c, next, n) == SQLITE_OK);
      committed.insert(next);
    }
    auto* chip = static_cast<pdl::EmulatedNand*>(pdl::vfs::device_of(path));
    REQUIRE(chip != nullptr);
    uint32_t bad_before = 0;
    for (uint32_t b = 0; b < chip->geometry().blocks; b++) bad_before += chip->marked_bad(b);
    chip->host_full_after(after);
    const int rc = fill(c, &next, n, &committed);
    INFO("stopped at row " << next << ": " << c.errmsg() << " / " << pdl::vfs::last_error());
    REQUIRE(rc == SQLITE_FULL);
    CHECK(pdl::vfs::last_error().find(path) != std::string::npos);
    CHECK(pdl::vfs::last_error().find("is full") != std::string::npos);
    // SELECT works while the host is full — with atomic groups (PDL, OPU); a journal on flash
    // (IPU, IPL) must first be rolled back, which needs room, so there it works once the host
    // has room again.
    const bool atomic = method == "pdl" || method == "opu";
    if (atomic) {
      check_rows(c, committed, n);
      CHECK(insert_row(c, next, n) == SQLITE_FULL);
      check_rows(c, committed, n);
    }
    uint32_t bad_after = 0;
    for (uint32_t b = 0; b < chip->geometry().blocks; b++) bad_after += chip->marked_bad(b);
    CHECK(bad_after == bad_before);
    CHECK(chip->counters().program_failures == 0);

    // Room again: the same connection reads and inserts, without a reopen. (Where the store
    // stopped with changes not yet synced — WAL's frames, the journal's database writes — the
    // first sync after reports their loss once: one more SQLITE_FULL.)
    chip->clear_host_full();
    int arc = SQLITE_FULL;
    for (int attempt = 0; attempt < 3 && arc != SQLITE_OK; attempt++) {
      const int qrc = c.query("SELECT count(*) FROM t", nullptr) & 0xFF;
      INFO("SELECT once the host has room: " << c.errmsg() << " / " << pdl::vfs::last_error());
      CHECK((qrc == SQLITE_OK || (attempt == 0 && qrc == SQLITE_FULL)));
      arc = insert_row(c, next, n);
      INFO("insert once the host has room: " << c.errmsg());
      if (atomic && journal == "DELETE") REQUIRE(arc == SQLITE_OK);
    }
    INFO("insert once the host has room: " << c.errmsg() << " / " << pdl::vfs::last_error());
    REQUIRE(arc == SQLITE_OK);
    committed.insert(next++);
    REQUIRE(insert_row(c, next, n) == SQLITE_OK);
    committed.insert(next++);
    check_healthy(c);
    check_rows(c, committed, n);
    CHECK(c.text("PRAGMA pdl_stats").find("\"wear_level\":5,") != std::string::npos);
  }
  Conn c(uri);
  check_healthy(c);
  check_rows(c, committed, n);
  REQUIRE(insert_row(c, next, n) == SQLITE_OK);
  committed.insert(next++);
  check_rows(c, committed, n);
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

TEST_CASE("an image whose NVM area is zeroed or garbage is refused naming the NVM, and opens "
          "again with its NVM back", "[vfs][errors][nvm]") {
  // The NVM holds committed data (PDL's write buffer, IPL's log sectors): without it the
  // flash alone is an older state, so the open must fail rather than show it.
  use_pdl_vfs();
  const std::string method = GENERATE(as<std::string>(), "method=pdl&nvm=12K",
                                      "method=ipl&nvm=4K");
  const bool zeros = GENERATE(true, false);
  INFO(method << (zeros ? ", NVM zeroed" : ", NVM garbage"));
  const std::string path = temp_path("nvm.db");
  const std::string uri =
      pdl_uri(path, method + "&size=512K&page=2048&pages_per_block=16&max_files=8");
  {
    Conn c(uri);
    c.must("CREATE TABLE t(x)");
    for (int i = 0; i < 20; i++) c.must("INSERT INTO t VALUES (" + std::to_string(i) + ")");
  }
  // The NVM area: nvm_bytes at header byte 72, its offset in the file at 88 (format.md §1).
  const int fd = ::open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  uint8_t h[96];
  REQUIRE(::pread(fd, h, sizeof h, 0) == ssize_t(sizeof h));
  uint32_t nvm = 0;
  uint64_t off = 0;
  for (int i = 3; i >= 0; i--) nvm = nvm << 8 | h[72 + i];
  for (int i = 7; i >= 0; i--) off = off << 8 | h[88 + i];
  REQUIRE(nvm > 0);
  REQUIRE(off > 0);
  std::vector<uint8_t> saved(nvm), lost(nvm, 0);
  REQUIRE(::pread(fd, saved.data(), nvm, off_t(off)) == ssize_t(nvm));
  std::mt19937_64 rng(nvm);
  if (!zeros)
    for (auto& b : lost) b = uint8_t(rng());
  REQUIRE(::pwrite(fd, lost.data(), nvm, off_t(off)) == ssize_t(nvm));
  {
    Conn c;
    int rc = c.open(uri);
    if (rc == SQLITE_OK) rc = c.exec("SELECT count(*) FROM t");
    INFO("vfs: " << pdl::vfs::last_error());
    CHECK(rc != SQLITE_OK);
    CHECK(pdl::vfs::last_error().find("NVM") != std::string::npos);
  }
  REQUIRE(::pwrite(fd, saved.data(), nvm, off_t(off)) == ssize_t(nvm));
  ::close(fd);
  Conn c(uri);
  CHECK(c.integer("SELECT count(*) FROM t") == 20);
  CHECK(c.integer("SELECT sum(x) FROM t") == 190);
}
