// sql.h — a small RAII layer over the SQLite C API, speaking pdl's Status: one connection (Db)
// and one prepared statement (Stmt). pdl-tpcc, pdl-crash, pdl-sqlbench and the test suites use
// it; the VFS extension itself (vfs/) does not.
//
// SQLite result codes are translated here, once, into Status (SQLITE_FULL → kFull,
// SQLITE_BUSY/LOCKED → kBusy, SQLITE_CORRUPT/NOTADB → kCorrupt, anything else → kIoError), with
// SQLite's message and the statement or call that failed. Callers that must tell SQLite's
// codes apart (the VFS tests) read the code itself: rc() of the last call. Nothing here throws.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "flash/common/status.h"

namespace pdl::sql {

inline constexpr int kOpenFlags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI;

// Status for SQLite result `rc` on `db` (may be null); `what` names the call or statement.
Status status(sqlite3* db, int rc, std::string_view what);

// Seed SQLite's process-wide PRNG (it draws journal nonces, WAL salts and temp file names):
// two identical runs then write identical bytes to flash, so flash figures and power-cut
// positions repeat exactly. No effect on correctness. SQLite uses `seed | 1`.
void seed_prng(uint32_t seed);

// A function naming why a VFS refused the last open (the pdl VFS: pdl::vfs::last_error); a
// failed Db::open adds what it says, when it says something, to its message. Process-wide;
// none by default.
void set_open_detail(std::string (*detail)());

// One connection, closed by the destructor (sqlite3_close_v2: statements still open keep it
// until they are finalized).
class Db {
 public:
  Db() = default;
  ~Db() { (void)close(); }
  Db(Db&& o) noexcept : db_(o.db_), rc_(o.rc_) { o.db_ = nullptr; }
  Db& operator=(Db&& o) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // sqlite3_open_v2(uri, flags); the handle is released on failure.
  Status open(const std::string& uri, int flags = kOpenFlags);
  Status close();
  sqlite3* get() const { return db_; }
  explicit operator bool() const { return db_ != nullptr; }
  // SQLite's result code of the last open, exec or close; its message for this connection.
  int rc() const { return rc_; }
  std::string errmsg() const { return db_ ? sqlite3_errmsg(db_) : "closed"; }

  // Runs every statement of `sql`, discarding rows.
  Status exec(std::string_view sql);
  // The first column of the first row of `sql` as an integer / text (0 / "" if no row).
  Status query_int(std::string_view sql, int64_t* out);
  Status query_text(std::string_view sql, std::string* out);

 private:
  sqlite3* db_ = nullptr;
  int rc_ = SQLITE_OK;
};

// One prepared statement, reset after every run, finalized by the destructor.
class Stmt {
 public:
  Stmt() = default;
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // sqlite3_prepare_v3 of the first statement of `sql` (SQLITE_PREPARE_* `flags`: persistent
  // by default, for statements run many times).
  Status prepare(sqlite3* db, std::string_view sql, unsigned flags = SQLITE_PREPARE_PERSISTENT);

  // Bind helpers return *this so a call chains: s.bind(1, w).bind(2, d).
  Stmt& bind(int i, int64_t v) { sqlite3_bind_int64(st_, i, v); return *this; }
  Stmt& bind(int i, double v) { sqlite3_bind_double(st_, i, v); return *this; }
  Stmt& bind(int i, std::string_view v) {
    sqlite3_bind_text(st_, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind_null(int i) { sqlite3_bind_null(st_, i); return *this; }

  // Next row: *row true if there is one. After the last row the statement is reset and its
  // bindings cleared.
  Status step(bool* row);
  // Runs a statement that returns no rows to completion.
  Status run();
  // Runs a statement expected to return a row: kNotFound (message naming the statement) if
  // there is none. The row stays readable until the next call.
  Status row();
  void reset() {
    sqlite3_reset(st_);
    sqlite3_clear_bindings(st_);
  }
  // SQLite's result code of the last prepare or step (SQLITE_ROW, SQLITE_DONE, an error).
  int rc() const { return rc_; }

  int columns() const { return sqlite3_column_count(st_); }
  int64_t i64(int col) const { return sqlite3_column_int64(st_, col); }
  double f64(int col) const { return sqlite3_column_double(st_, col); }
  std::string text(int col) const;
  bool is_null(int col) const { return sqlite3_column_type(st_, col) == SQLITE_NULL; }
  sqlite3_stmt* get() const { return st_; }

 private:
  sqlite3_stmt* st_ = nullptr;
  sqlite3* db_ = nullptr;
  int rc_ = SQLITE_OK;
};

}  // namespace pdl::sql
