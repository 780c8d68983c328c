// test_sql.cc — the SQLite wrapper (sql/sql.h): SQLite's result codes become Status once, with
// the statement in the message, while rc() keeps SQLite's own code; statements bind, step and
// reset themselves.
#include <catch2/catch.hpp>

#include "sql/sql.h"

using namespace pdl;

TEST_CASE("a connection runs SQL and reads the first row", "[sql]") {
  sql::Db db;
  REQUIRE(db.open("file::memory:").is_ok());
  REQUIRE(db.exec("CREATE TABLE t(a INTEGER, b TEXT); INSERT INTO t VALUES (7, 'x')").is_ok());
  int64_t n = 0;
  REQUIRE(db.query_int("SELECT a FROM t", &n).is_ok());
  CHECK(n == 7);
  std::string s;
  REQUIRE(db.query_text("SELECT b FROM t WHERE a = 8", &s).is_ok());
  CHECK(s.empty());  // no row
  REQUIRE(db.close().is_ok());
  CHECK_FALSE(db);
}

TEST_CASE("a failing statement keeps SQLite's code and names the statement", "[sql]") {
  sql::Db db;
  REQUIRE(db.open("file::memory:").is_ok());
  const Status st = db.exec("SELECT * FROM missing");
  CHECK(st.is(Errc::kIoError));
  CHECK(db.rc() == SQLITE_ERROR);
  CHECK(std::string(st.message()).find("SELECT * FROM missing: no such table") !=
        std::string::npos);
  CHECK(sql::status(nullptr, SQLITE_FULL, "x").is(Errc::kFull));
  CHECK(sql::status(nullptr, SQLITE_BUSY, "x").is(Errc::kBusy));
  CHECK(sql::status(nullptr, SQLITE_LOCKED, "x").is(Errc::kBusy));
  CHECK(sql::status(nullptr, SQLITE_CORRUPT, "x").is(Errc::kCorrupt));
  CHECK(sql::status(nullptr, SQLITE_NOTADB, "x").is(Errc::kCorrupt));
  CHECK(sql::status(nullptr, SQLITE_DONE, "x").is_ok());
}

TEST_CASE("a failed open releases the handle and says why", "[sql]") {
  sql::Db db;
  const Status st = db.open("file:/nonexistent-dir/x.db", SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI);
  CHECK_FALSE(st.is_ok());
  CHECK(db.rc() == SQLITE_CANTOPEN);
  CHECK_FALSE(db);
  CHECK(std::string(st.message()).rfind("open file:/nonexistent-dir/x.db: ", 0) == 0);
}

TEST_CASE("a statement binds, steps and resets after its last row", "[sql]") {
  sql::Db db;
  REQUIRE(db.open("file::memory:").is_ok());
  REQUIRE(db.exec("CREATE TABLE t(a INTEGER, b REAL, c TEXT)").is_ok());
  sql::Stmt ins;
  REQUIRE(ins.prepare(db.get(), "INSERT INTO t VALUES (?1, ?2, ?3)").is_ok());
  REQUIRE(ins.bind(1, int64_t(1)).bind(2, 0.5).bind(3, std::string_view("one")).run().is_ok());
  REQUIRE(ins.bind(1, int64_t(2)).bind(2, 1.5).bind_null(3).run().is_ok());
  sql::Stmt sel;
  REQUIRE(sel.prepare(db.get(), "SELECT a, b, c FROM t ORDER BY a").is_ok());
  REQUIRE(sel.row().is_ok());
  CHECK(sel.columns() == 3);
  CHECK(sel.i64(0) == 1);
  CHECK(sel.f64(1) == 0.5);
  CHECK(sel.text(2) == "one");
  bool row = false;
  REQUIRE(sel.step(&row).is_ok());
  REQUIRE(row);
  CHECK(sel.is_null(2));
  REQUIRE(sel.step(&row).is_ok());
  CHECK_FALSE(row);
  CHECK(sel.rc() == SQLITE_DONE);
  REQUIRE(sel.row().is_ok());  // reset: the first row again
  CHECK(sel.i64(0) == 1);
  sel.reset();
  sql::Stmt none;
  REQUIRE(none.prepare(db.get(), "SELECT a FROM t WHERE a = 9").is_ok());
  const Status st = none.row();
  CHECK(st.is(Errc::kNotFound));
  CHECK(std::string(st.message()) == "no row: SELECT a FROM t WHERE a = 9");
}
