// test_vfs_sql.cc — SQL through the pdl VFS behaves like SQL anywhere else.
//
// Matrix: method {pdl, opu, ipu, ipl, ftl (the page-mapping FTL device: SQLite on an SD card,
// journal on the device)} x journal_mode {DELETE, TRUNCATE, PERSIST, MEMORY, WAL, OFF} x flash
// page {1024, 2048, 4096, 8192} (URI page=; IPU, IPL and ftl at 1024 and 8192), with
// SQLite's default 4096-byte pages and, for the flash pages other than 4096, also SQLite's
// page_size set equal to the flash page. Behaviours:
//   * random inserts / updates / deletes (single rows and ranges, committed and rolled back)
//     agree with an in-memory reference model, before and after close + reopen;
//   * PRAGMA integrity_check and PRAGMA pdl_check say "ok" throughout;
//   * a blob larger than a flash block (64-page blocks) round-trips, also after partial
//     overwrites (sqlite3_blob_write) and a reopen;
//   * VACUUM shrinks the database (pages, and the file inside the image) and keeps every row;
//   * PRAGMA pdl_stats is well-formed JSON describing the image; pdl_stats_reset zeroes it;
//     bytes_changed is measured (and not null) only with track_changes=on.
#include <map>
#include <optional>

#include "tests/support/vfs_test_util.h"

using namespace pdl::test;

namespace {

// IPL programs each 512-byte log sector on its own: pages over 2 KiB need nop = page / 512.
// On 1 KiB pages the log region is given explicitly (16 of 64 pages), elsewhere the default.
std::string method_extra(const std::string& method, uint32_t flash_page) {
  if (method != "ipl") return "";
  if (flash_page == 1024) return "&log_region=16K";
  if (flash_page > 2048) return "&nop=" + std::to_string(flash_page / 512);
  return "";
}

struct Config {
  std::string method;
  std::string journal;
  uint32_t flash_page = 0;
  uint32_t sqlite_page = 0;  // 0: SQLite's default (4096)

  std::string name() const {
    return "method=" + method + " journal_mode=" + journal + " page=" +
           std::to_string(flash_page) + " sqlite page_size=" +
           (sqlite_page ? std::to_string(sqlite_page) : std::string("default"));
  }
  std::string uri(const std::string& path) const {
    return pdl_uri(path, "size=16M&method=" + method + "&page=" + std::to_string(flash_page) +
                             method_extra(method, flash_page));
  }
  bool can_rollback() const { return journal != "OFF"; }  // OFF: ROLLBACK is undefined
};

const char* const kJournals[] = {"DELETE", "TRUNCATE", "PERSIST", "MEMORY", "WAL", "OFF"};
const uint32_t kFlashPages[] = {1024, 2048, 4096, 8192};

// The whole matrix; `sqlite_pages`: also the configurations with SQLite page_size = flash page.
std::vector<Config> matrix(bool sqlite_pages) {
  std::vector<Config> out;
  for (const std::string m : {"pdl", "opu", "ipu", "ipl", "ftl"})
    for (const char* j : kJournals)
      for (uint32_t p : kFlashPages) {
        // IPU/IPL at the extreme flash pages only (1 KiB: explicit log region; 8 KiB: nop=16),
        // to keep the suite's time (it runs twice in CI, once under sanitizers).
        if ((m[0] == 'i' || m == "ftl") && p != 1024 && p != 8192) continue;
        out.push_back({m, j, p, 0});
        if (sqlite_pages && p != 4096) out.push_back({m, j, p, p});
      }
  return out;
}

// Open (creating) and prepare a connection: page size first (it only counts before the first
// table), then the journal mode, then synchronous=FULL.
void setup(Conn& c, const Config& cfg) {
  if (cfg.sqlite_page) c.must("PRAGMA page_size=" + std::to_string(cfg.sqlite_page));
  set_journal_mode(c, cfg.journal);
  c.must("PRAGMA synchronous=FULL");
}

// After a reopen: WAL is persistent, the other modes are per connection.
void reopen_setup(Conn& c, const Config& cfg) {
  if (cfg.journal == "WAL")
    CHECK(c.text("PRAGMA journal_mode") == "wal");
  else
    set_journal_mode(c, cfg.journal);
  if (cfg.sqlite_page) CHECK(c.integer("PRAGMA page_size") == cfg.sqlite_page);
}

void check_healthy(Conn& c) {
  CHECK(c.text("PRAGMA integrity_check") == "ok");
  CHECK(c.text("PRAGMA pdl_check") == "ok");
}

// The pdl VFS registered, and the row of the configuration matrix (matrix(full)) this run of
// the test case takes: GENERATE runs the case once per row, and a row outside the sample
// (in_matrix_sample) returns at once. A macro because GENERATE, INFO and the return must sit in
// the test case itself.
#define SQL_MATRIX_ROW(cfg, full)                                      \
  use_pdl_vfs();                                                       \
  static const std::vector<Config> all_rows = matrix(full);            \
  const size_t row = GENERATE(range(size_t(0), all_rows.size()));      \
  if (!in_matrix_sample(row, __LINE__)) return;                      \
  const Config& cfg = all_rows[row];                                   \
  INFO(cfg.name())

// ---- the reference model ----

struct Row {
  std::string v;
  int64_t n = 0;
  bool operator==(const Row&) const = default;
};
using Model = std::map<int64_t, Row>;

std::string random_text(std::mt19937_64& rng) {
  // Mostly short values, some spanning overflow pages.
  const size_t len = rng() % 8 == 0 ? 1000 + rng() % 6000 : rng() % 200;
  std::string s(len, ' ');
  for (char& ch : s) ch = char('a' + rng() % 26);
  return s;
}

int bind_exec(Conn& c, const std::string& sql, const std::vector<int64_t>& ints,
              const std::string* text = nullptr) {
  return c.query(sql, nullptr, [&](sqlite3_stmt* st) {
    int i = 1;
    for (int64_t v : ints) sqlite3_bind_int64(st, i++, v);
    if (text) sqlite3_bind_text(st, i, text->data(), int(text->size()), SQLITE_TRANSIENT);
  });
}

// One random statement, applied to the database and to `m`.
void random_op(Conn& c, Model& m, std::mt19937_64& rng) {
  const int64_t key_space = 400;
  const unsigned op = unsigned(rng() % 10);
  auto any_key = [&]() -> std::optional<int64_t> {
    if (m.empty()) return std::nullopt;
    auto it = m.lower_bound(int64_t(rng() % key_space));
    return it == m.end() ? m.begin()->first : it->first;
  };
  if (op < 4 || m.empty()) {  // insert
    int64_t k = int64_t(rng() % key_space);
    while (m.count(k)) k = (k + 1) % key_space;
    if (m.size() >= size_t(key_space)) return;
    Row r{random_text(rng), int64_t(rng() % 1000)};
    REQUIRE(bind_exec(c, "INSERT INTO kv(k, n, v) VALUES (?1, ?2, ?3)", {k, r.n}, &r.v) ==
            SQLITE_OK);
    m[k] = r;
  } else if (op < 6) {  // update one value
    const int64_t k = *any_key();
    const std::string v = random_text(rng);
    REQUIRE(bind_exec(c, "UPDATE kv SET v = ?2 WHERE k = ?1", {k}, &v) == SQLITE_OK);
    m[k].v = v;
  } else if (op < 8) {  // update a range
    const int64_t a = int64_t(rng() % key_space), b = a + int64_t(rng() % 40);
    REQUIRE(bind_exec(c, "UPDATE kv SET n = n * 3 + 1 WHERE k BETWEEN ?1 AND ?2", {a, b}) ==
            SQLITE_OK);
    for (auto it = m.lower_bound(a); it != m.end() && it->first <= b; ++it)
      it->second.n = it->second.n * 3 + 1;
  } else if (op < 9) {  // delete one
    const int64_t k = *any_key();
    REQUIRE(bind_exec(c, "DELETE FROM kv WHERE k = ?1", {k}) == SQLITE_OK);
    m.erase(k);
  } else {  // delete a range
    const int64_t a = int64_t(rng() % key_space), b = a + int64_t(rng() % 15);
    REQUIRE(bind_exec(c, "DELETE FROM kv WHERE k BETWEEN ?1 AND ?2", {a, b}) == SQLITE_OK);
    m.erase(m.lower_bound(a), m.upper_bound(b));
  }
}

// Transactions of random statements; some autocommit, some rolled back.
void random_transactions(Conn& c, const Config& cfg, Model& m, std::mt19937_64& rng, int n) {
  for (int t = 0; t < n; t++) {
    const unsigned kind = unsigned(rng() % 5);
    if (kind == 0) {  // one autocommit statement
      random_op(c, m, rng);
      continue;
    }
    const bool rollback = kind == 1 && cfg.can_rollback();
    const Model before = rollback ? m : Model();
    c.must("BEGIN");
    const int ops = 1 + int(rng() % 12);
    for (int i = 0; i < ops; i++) random_op(c, m, rng);
    if (rollback) {
      c.must("ROLLBACK");
      m = before;
    } else {
      c.must("COMMIT");
    }
  }
}

void check_model(Conn& c, const Model& m) {
  Model got;
  const int rc = c.query("SELECT k, v, n FROM kv ORDER BY k", [&](sqlite3_stmt* st) {
    const unsigned char* v = sqlite3_column_text(st, 1);
    got[sqlite3_column_int64(st, 0)] =
        Row{v ? std::string(reinterpret_cast<const char*>(v), size_t(sqlite3_column_bytes(st, 1)))
              : std::string(),
            sqlite3_column_int64(st, 2)};
  });
  REQUIRE(rc == SQLITE_OK);
  CHECK(got.size() == m.size());
  auto a = got.begin();
  auto b = m.begin();
  for (; a != got.end() && b != m.end(); ++a, ++b) {
    if (a->first != b->first || !(a->second == b->second)) {
      FAIL_CHECK("first difference: database key " << a->first << " (n " << a->second.n
                                                   << ", " << a->second.v.size()
                                                   << " chars) vs model key " << b->first << " (n "
                                                   << b->second.n << ", " << b->second.v.size()
                                                   << " chars)");
      break;
    }
  }
}

// A file's size inside the image, from PRAGMA pdl_stats.
uint64_t volume_file_size(Conn& c, const std::string& name) {
  const Json j = parse_json(c.text("PRAGMA pdl_stats"));
  const Json* files = j.at("files");
  REQUIRE(files != nullptr);
  REQUIRE(files->type == Json::kArray);
  for (const Json& f : files->arr) {
    const Json* n = f.at("name");
    if (n && n->type == Json::kString && n->str == name) return uint64_t(json_number(f, "size"));
  }
  FAIL("no file " << name << " in pdl_stats");
  return 0;
}

}  // namespace

TEST_CASE("SQL statements agree with an in-memory model before and after reopen",
          "[vfs][sql]") {
  SQL_MATRIX_ROW(cfg, true);
  auto rng = seeded_rng(0x5A1 + row);
  const std::string path = temp_path("model.db");
  Model m;
  {
    Conn c(cfg.uri(path));
    setup(c, cfg);
    c.must("CREATE TABLE kv(k INTEGER PRIMARY KEY, v TEXT NOT NULL, n INTEGER NOT NULL)");
    c.must("CREATE INDEX kv_n ON kv(n)");
    random_transactions(c, cfg, m, rng, 40);
    check_model(c, m);
    check_healthy(c);
    CHECK(c.integer("SELECT count(*) FROM kv WHERE n >= 0") == int64_t(m.size()));  // the index
    REQUIRE(c.close() == SQLITE_OK);
  }
  {
    Conn c(cfg.uri(path));
    reopen_setup(c, cfg);
    check_model(c, m);
    check_healthy(c);
    random_transactions(c, cfg, m, rng, 15);
    check_model(c, m);
  }
  Conn c(pdl_uri(path));  // no parameters: the image knows them
  check_model(c, m);
  check_healthy(c);
}

// [PDL]'s IPL: a 128-byte log buffer per 2 KiB page is one log sector (16 per page, NOP 16).
TEST_CASE("an IPL image of 128-byte log sectors agrees with the model across reopen",
          "[vfs][sql]") {
  use_pdl_vfs();
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "WAL");
  const Config cfg{"ipl", journal, 2048, 0};
  INFO(cfg.name() << " log_sector=128");
  const std::string path = temp_path("ipl128.db");
  auto rng = seeded_rng(0x128);
  Model m;
  {
    Conn c(pdl_uri(path, "size=16M&method=ipl&log_sector=128&nop=16"));
    setup(c, cfg);
    c.must("CREATE TABLE kv(k INTEGER PRIMARY KEY, v TEXT NOT NULL, n INTEGER NOT NULL)");
    random_transactions(c, cfg, m, rng, 40);
    check_model(c, m);
    REQUIRE(c.close() == SQLITE_OK);
  }
  Conn c(pdl_uri(path));  // no parameters: the image knows them
  reopen_setup(c, cfg);
  check_model(c, m);
  random_transactions(c, cfg, m, rng, 15);
  check_model(c, m);
  check_healthy(c);
  const Json j = parse_json(c.text("PRAGMA pdl_stats"));
  CHECK(json_number(j, "log_sector") == 128);
  CHECK(json_number(j, "store.log_sectors") > 0);
}

TEST_CASE("a larger table stays exact through bulk updates, deletes and reopen", "[vfs][sql]") {
  use_pdl_vfs();
  const std::string method = GENERATE(as<std::string>(), "pdl", "opu", "ipu", "ipl", "ftl");
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "TRUNCATE", "PERSIST",
                                       "MEMORY", "WAL", "OFF");
  const Config cfg{method, journal, 2048, 0};
  static size_t config_index = 0;
  if (!in_matrix_sample(config_index++, __LINE__)) return;
  INFO(cfg.name());
  const std::string path = temp_path("bulk.db");
  constexpr int64_t kRows = 20000;
  auto rng = seeded_rng(0xB01C);
  Model m;
  auto check_sums = [&](Conn& c) {
    int64_t n_sum = 0, len_sum = 0;
    for (const auto& [k, r] : m) {
      n_sum += r.n;
      len_sum += int64_t(r.v.size());
    }
    const auto row = c.rows("SELECT count(*), total(n), total(length(v)), total(k) FROM kv")[0];
    CHECK(std::stoll(row[0]) == int64_t(m.size()));
    CHECK(std::stod(row[1]) == double(n_sum));
    CHECK(std::stod(row[2]) == double(len_sum));
  };
  {
    Conn c(cfg.uri(path));
    setup(c, cfg);
    c.must("CREATE TABLE kv(k INTEGER PRIMARY KEY, v TEXT NOT NULL, n INTEGER NOT NULL)");
    c.must("CREATE INDEX kv_n ON kv(n)");
    for (int64_t base = 0; base < kRows; base += 2000) {
      c.must("BEGIN");
      for (int64_t k = base; k < base + 2000; k++) {
        Row r{std::string(size_t(rng() % 60), char('a' + k % 26)), int64_t(rng() % 100000)};
        REQUIRE(bind_exec(c, "INSERT INTO kv(k, n, v) VALUES (?1, ?2, ?3)", {k, r.n}, &r.v) ==
                SQLITE_OK);
        m[k] = r;
      }
      c.must("COMMIT");
    }
    c.must("UPDATE kv SET n = n + 7 WHERE k % 3 = 0");
    for (auto& [k, r] : m)
      if (k % 3 == 0) r.n += 7;
    c.must("DELETE FROM kv WHERE k % 5 = 1");
    std::erase_if(m, [](const auto& e) { return e.first % 5 == 1; });
    check_sums(c);
    check_model(c, m);
  }
  Conn c(cfg.uri(path));
  reopen_setup(c, cfg);
  check_sums(c);
  check_model(c, m);
  CHECK(c.integer("SELECT count(*) FROM kv INDEXED BY kv_n WHERE n >= 0") == int64_t(m.size()));
  check_healthy(c);
}

TEST_CASE("a committed row survives close and reopen", "[vfs][sql]") {
  SQL_MATRIX_ROW(cfg, false);
  const std::string path = temp_path("persist.db");
  {
    Conn c(cfg.uri(path));
    setup(c, cfg);
    c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT)");
    c.must("INSERT INTO t VALUES (1, 'one')");
    c.must("BEGIN; INSERT INTO t VALUES (2, 'two'); COMMIT");
    if (cfg.can_rollback()) c.must("BEGIN; INSERT INTO t VALUES (3, 'three'); ROLLBACK");
  }
  for (int round = 0; round < 2; round++) {
    Conn c(cfg.uri(path));
    CHECK(c.text("SELECT group_concat(s, ',') FROM (SELECT s FROM t ORDER BY id)") ==
          (round == 0 ? "one,two" : "one,two,four"));
    if (round == 0) {
      reopen_setup(c, cfg);
      c.must("INSERT INTO t VALUES (4, 'four')");
    }
    check_healthy(c);
  }
}

TEST_CASE("a blob larger than a flash block round-trips, also after partial overwrites",
          "[vfs][sql][blob]") {
  SQL_MATRIX_ROW(cfg, false);
  const size_t block = size_t(cfg.flash_page) * 64;  // the default 64 pages per block
  const size_t size = std::max<size_t>(300 << 10, block * 3 / 2);
  auto rng = seeded_rng(0xB10B + row);
  std::vector<uint8_t> blob = random_page(rng, size);
  const std::string path = temp_path("blob.db");
  auto read_back = [&](Conn& c) {
    bool same = false;
    size_t got = 0;
    REQUIRE(c.query("SELECT b FROM blobs WHERE id = 1", [&](sqlite3_stmt* st) {
      got = size_t(sqlite3_column_bytes(st, 0));
      same = got == blob.size() && std::memcmp(sqlite3_column_blob(st, 0), blob.data(), got) == 0;
    }) == SQLITE_OK);
    CHECK(got == blob.size());
    CHECK(same);
  };
  {
    Conn c(cfg.uri(path));
    setup(c, cfg);
    c.must("CREATE TABLE blobs(id INTEGER PRIMARY KEY, b BLOB)");
    REQUIRE(c.query("INSERT INTO blobs VALUES (1, ?1)", nullptr, [&](sqlite3_stmt* st) {
      sqlite3_bind_blob(st, 1, blob.data(), int(blob.size()), SQLITE_STATIC);
    }) == SQLITE_OK);
    read_back(c);
    // Small in-place changes scattered over the blob (page differentials for PDL).
    sqlite3_blob* h = nullptr;
    REQUIRE(sqlite3_blob_open(c.get(), "main", "blobs", "b", 1, 1, &h) == SQLITE_OK);
    c.must("BEGIN");
    for (int i = 0; i < 20; i++) {
      const size_t off = size_t(rng() % (blob.size() - 64));
      const auto patch = random_page(rng, 1 + rng() % 64);
      REQUIRE(sqlite3_blob_write(h, patch.data(), int(patch.size()), int(off)) == SQLITE_OK);
      std::memcpy(blob.data() + off, patch.data(), patch.size());
    }
    sqlite3_blob_close(h);
    c.must("COMMIT");
    read_back(c);
    check_healthy(c);
  }
  {
    Conn c(cfg.uri(path));
    reopen_setup(c, cfg);
    read_back(c);
    check_healthy(c);
    c.must("DELETE FROM blobs");
    CHECK(c.integer("SELECT count(*) FROM blobs") == 0);
    check_healthy(c);
  }
}

TEST_CASE("VACUUM shrinks the database and keeps every row", "[vfs][sql][vacuum]") {
  SQL_MATRIX_ROW(cfg, false);
  const std::string path = temp_path("vac.db");
  const std::string db_name = "vac.db";
  auto rows_ok = [](Conn& c) {
    CHECK(c.integer("SELECT count(*) FROM t") == 100);
    CHECK(c.integer("SELECT sum(id) FROM t") == 100 * 101 / 2 * 3);
    CHECK(c.integer("SELECT count(*) FROM t WHERE length(s) = 400 + id % 7") == 100);
  };
  Conn c(cfg.uri(path));
  setup(c, cfg);
  c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT)");
  c.must("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) "
         "INSERT INTO t SELECT i, printf('%.*c', 400 + i % 7, 'x') FROM n");
  c.must("DELETE FROM t WHERE id % 3 != 0");
  auto checkpoint = [&] {
    if (cfg.journal == "WAL") CHECK(c.text("PRAGMA wal_checkpoint(TRUNCATE)") == "0");
  };
  checkpoint();
  const int64_t pages0 = c.integer("PRAGMA page_count");
  const uint64_t bytes0 = volume_file_size(c, db_name);
  CHECK(c.integer("PRAGMA freelist_count") > 0);
  c.must("VACUUM");
  checkpoint();
  const int64_t pages1 = c.integer("PRAGMA page_count");
  const uint64_t bytes1 = volume_file_size(c, db_name);
  INFO("pages " << pages0 << " -> " << pages1 << ", bytes " << bytes0 << " -> " << bytes1);
  CHECK(pages1 < pages0 * 2 / 3);
  CHECK(bytes1 < bytes0 * 2 / 3);
  CHECK(bytes1 == uint64_t(pages1 * c.integer("PRAGMA page_size")));
  CHECK(c.integer("PRAGMA freelist_count") == 0);
  c.must("UPDATE t SET id = id * 3 / 3");  // a write after VACUUM
  rows_ok(c);
  check_healthy(c);
  REQUIRE(c.close() == SQLITE_OK);
  Conn again(cfg.uri(path));
  rows_ok(again);
  check_healthy(again);
}

TEST_CASE("PRAGMA pdl_stats is JSON describing the image and pdl_stats_reset zeroes it",
          "[vfs][sql][stats]") {
  use_pdl_vfs();
  const std::string method = GENERATE(as<std::string>(), "pdl", "opu", "ipu", "ipl", "ftl");
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "WAL");
  const uint32_t page = GENERATE(1024u, 2048u, 4096u, 8192u);
  const Config cfg{method, journal, page, 0};
  INFO(cfg.name());
  const std::string path = temp_path("stats.db");
  Conn c(cfg.uri(path));
  setup(c, cfg);
  c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT)");
  for (int i = 0; i < 20; i++)
    c.must("INSERT INTO t(s) VALUES (printf('%.*c', 300, 'y'))");

  const Json j = parse_json(c.text("PRAGMA pdl_stats"));
  REQUIRE(j.type == Json::kObject);
  REQUIRE(j.at("method") != nullptr);
  CHECK(j.at("method")->str == method);
  CHECK(json_number(j, "geometry.page_data") == page);
  CHECK(json_number(j, "geometry.pages_per_block") == 64);
  CHECK(json_number(j, "geometry.size_bytes") == 16 << 20);
  if (method == "pdl") CHECK(json_number(j, "max_diff") > 0);
  if (method == "ipl") CHECK(json_number(j, "log_region") > 0);
  if (method == "ipl") CHECK(json_number(j, "store.log_sectors") > 0);
  if (method == "ipu" || method == "ipl" || method == "ftl")
    CHECK(j.at("obsolete")->str == "none");
  // The FTL device names its FTL and has no atomic commit; the raw-NAND methods have no FTL.
  CHECK(j.at("ftl")->str == (method == "ftl" ? "page" : "none"));
  CHECK(json_number(j, "log_blocks") == 0);
  CHECK(json_number(j, "sb_slots") == 0);
  if (method == "ftl" || method == "ipu") CHECK(j.at("commit")->str == "journal");
  else CHECK(j.at("commit")->str == "atomic");
  CHECK(json_number(j, "logical_pages") > 0);
  CHECK(json_number(j, "free_blocks") > 0);
  CHECK(json_number(j, "flash.programs") > 0);
  CHECK(json_number(j, "flash.erases") > 0);  // formatting erased the chip
  CHECK(json_number(j, "store.writes") > 0);
  CHECK(json_number(j, "volume.syncs") >= 20);
  CHECK(json_number(j, "by_kind.database.writes") > 0);
  CHECK(json_number(j, journal == "WAL" ? "by_kind.wal.writes" : "by_kind.journal.writes") > 0);
  CHECK(json_number(j, "by_kind.directory.chunks_written") > 0);
  (void)json_number(j, "mount.pages_scanned");
  (void)json_number(j, "gc.programs");
  const uint64_t db_size = volume_file_size(c, "stats.db");
  if (journal != "WAL") CHECK(db_size == uint64_t(c.integer("PRAGMA page_count") * 4096));

  CHECK(c.text("PRAGMA pdl_stats_reset") == "ok");
  const Json z = parse_json(c.text("PRAGMA pdl_stats"));
  for (const char* f : {"flash.programs", "flash.erases", "flash.bytes_programmed",
                        "store.writes", "store.syncs", "store.gc_runs", "volume.syncs",
                        "by_kind.database.writes", "by_kind.journal.writes",
                        "by_kind.wal.writes", "gc.programs"}) {
    INFO("after reset: " << f);
    CHECK(json_number(z, f) == 0);
  }
  // What describes the image is not a counter.
  CHECK(json_number(z, "geometry.page_data") == page);
  CHECK(volume_file_size(c, "stats.db") == db_size);

  c.must("INSERT INTO t(s) VALUES ('after reset')");
  const Json a = parse_json(c.text("PRAGMA pdl_stats"));
  CHECK(json_number(a, "flash.programs") > 0);
  CHECK(json_number(a, "volume.syncs") > 0);
  CHECK(json_number(a, journal == "WAL" ? "by_kind.wal.writes" : "by_kind.database.writes") > 0);
  check_healthy(c);
}

TEST_CASE("the tiny JSON reader accepts JSON and rejects junk", "[vfs][json]") {
  Json j;
  size_t where = 0;
  CHECK(JsonParser(R"({"a":{"b":[1,2.5e3,-0.5]},"s":"x\"y","t":true,"n":null})").parse(&j, &where));
  CHECK(j.at("a.b")->arr.size() == 3);
  CHECK(j.at("a.b")->arr[1].num == 2500);
  CHECK(j.at("s")->str == "x\"y");
  for (const char* bad : {"", "{", R"({"a":})", R"({"a":1,})", "[1 2]", "{} x", "nan", "01a"}) {
    Json k;
    INFO(bad);
    CHECK_FALSE(JsonParser(bad).parse(&k, &where));
  }
}

TEST_CASE("a transaction across two attached pdl images commits and rolls back as one",
          "[vfs][sql][attach]") {
  use_pdl_vfs();
  const std::string journal = GENERATE(as<std::string>(), "DELETE", "TRUNCATE", "PERSIST",
                                       "WAL");
  INFO("journal_mode " << journal);
  const std::string main_path = temp_path("main.db"), other_path = temp_path("other.db");
  auto totals = [](Conn& c) {
    return c.text("SELECT (SELECT total(v) FROM main.acct) || '/' || (SELECT total(v) FROM o.acct)");
  };
  {
    Conn c(pdl_uri(main_path, "size=8M"));
    c.must("ATTACH '" + pdl_uri(other_path, "size=8M&method=opu") + "' AS o");
    set_journal_mode(c, journal);  // both databases
    c.must("PRAGMA main.synchronous=FULL; PRAGMA o.synchronous=FULL");
    c.must("CREATE TABLE main.acct(id INTEGER PRIMARY KEY, v INTEGER);"
           "CREATE TABLE o.acct(id INTEGER PRIMARY KEY, v INTEGER);"
           "INSERT INTO main.acct VALUES (1, 100); INSERT INTO o.acct VALUES (1, 0)");
    // Move value from one image to the other in one transaction (a super-journal commit in
    // rollback modes).
    for (int i = 0; i < 10; i++)
      c.must("BEGIN; UPDATE main.acct SET v = v - 7; UPDATE o.acct SET v = v + 7; COMMIT");
    c.must("BEGIN; UPDATE main.acct SET v = 0; UPDATE o.acct SET v = 0; ROLLBACK");
    CHECK(totals(c) == "30.0/70.0");
    check_healthy(c);
    CHECK(c.text("PRAGMA o.integrity_check") == "ok");
  }
  Conn c(pdl_uri(main_path));
  c.must("ATTACH '" + pdl_uri(other_path) + "' AS o");
  CHECK(totals(c) == "30.0/70.0");
  CHECK(c.text("PRAGMA o.integrity_check") == "ok");
  // Each image holds only its own database and no leftover (super-)journal (PERSIST keeps its
  // journal file by design).
  for (const auto& [name, path] : {std::pair<std::string, std::string>{"main", main_path},
                                   {"other", other_path}}) {
    Conn one(pdl_uri(path));
    const Json j = parse_json(one.text("PRAGMA pdl_stats"));
    std::string files;
    for (const Json& f : j.at("files")->arr)
      if (json_number(f, "size") > 0 &&
          !(journal == "PERSIST" && f.at("name")->str == name + ".db-journal"))
        files += f.at("name")->str + " ";
    INFO(name << " image files with data: " << files);
    CHECK(files == name + ".db ");
  }
}

TEST_CASE("bytes_changed is in PRAGMA pdl_stats only when track_changes=on", "[vfs][sql][stats]") {
  use_pdl_vfs();
  const std::string method = GENERATE(as<std::string>(), "pdl", "opu", "ipu", "ipl");
  const bool track = GENERATE(false, true);
  INFO("method " << method << ", track_changes " << track);
  const std::string path = temp_path("changes.db");
  Conn c(pdl_uri(path, "size=16M&method=" + method + (track ? "&track_changes=on" : "")));
  c.must("CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT)");
  c.must("INSERT INTO t(s) VALUES (printf('%.*c', 300, 'y'))");
  c.must("PRAGMA pdl_stats_reset");
  c.must("UPDATE t SET s = printf('%.*c', 300, 'z')");
  const Json j = parse_json(c.text("PRAGMA pdl_stats"));
  REQUIRE(j.at("volume.track_changes") != nullptr);
  CHECK(j.at("volume.track_changes")->type == Json::kBool);
  const Json* changed = j.at("by_kind.database.bytes_changed");
  REQUIRE(changed != nullptr);
  if (!track) {
    CHECK(changed->type == Json::kNull);
  } else {
    // 300 'y' became 'z' (the record's other bytes may move too, but at least those).
    CHECK(json_number(j, "by_kind.database.bytes_changed") >= 300);
    CHECK(json_number(j, "by_kind.database.bytes_changed") <
          json_number(j, "by_kind.database.bytes_written"));
  }
}
