// sql.h — a thin RAII layer over the SQLite C API for pdl-tpcc, speaking pdl's Status.
//
// SQLite result codes are translated here, once, into Status (SQLITE_FULL → kFull,
// SQLITE_BUSY/LOCKED → kBusy, SQLITE_CORRUPT/NOTADB → kCorrupt, anything else → kIoError), with
// SQLite's message and the statement or call that failed. Nothing here throws.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "flash/common/status.h"

namespace pdl::tpcc {

// Status for SQLite result `rc` on `db` (may be null); `what` names the call or statement.
Status sql_status(sqlite3* db, int rc, std::string_view what);

// Seed SQLite's process-wide PRNG (it draws journal nonces, WAL salts and temp file names):
// two identical runs then write identical bytes to flash, so flash figures and power-cut
// positions repeat exactly. No effect on correctness.
void seed_sqlite_prng(uint32_t seed);

// One connection, closed by the destructor.
class Db {
 public:
  Db() = default;
  ~Db() { (void)close(); }
  Db(Db&& o) noexcept : db_(o.db_) { o.db_ = nullptr; }
  Db& operator=(Db&& o) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // sqlite3_open_v2(uri, READWRITE | CREATE | URI). On failure also reports the pdl VFS's
  // detail (pdl::vfs::last_error()).
  Status open(const std::string& uri);
  Status close();
  sqlite3* get() const { return db_; }
  explicit operator bool() const { return db_ != nullptr; }

  // Runs every statement of `sql`, discarding rows.
  Status exec(std::string_view sql);
  // The first column of the first row of `sql` as an integer / text (0 / "" if no row).
  Status query_int(std::string_view sql, int64_t* out);
  Status query_text(std::string_view sql, std::string* out);

 private:
  sqlite3* db_ = nullptr;
};

// One prepared statement, reset after every run, finalized by the destructor.
class Stmt {
 public:
  Stmt() = default;
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Status prepare(sqlite3* db, std::string_view sql);

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

  int64_t i64(int col) const { return sqlite3_column_int64(st_, col); }
  double f64(int col) const { return sqlite3_column_double(st_, col); }
  std::string text(int col) const;
  bool is_null(int col) const { return sqlite3_column_type(st_, col) == SQLITE_NULL; }
  sqlite3_stmt* get() const { return st_; }

 private:
  sqlite3_stmt* st_ = nullptr;
  sqlite3* db_ = nullptr;
};

}  // namespace pdl::tpcc
