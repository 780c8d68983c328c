// sql.cc — see sql.h.
#include "tpcc/sql.h"

#include "vfs/pdl_vfs.h"

namespace pdl::tpcc {

void seed_sqlite_prng(uint32_t seed) {
  sqlite3_test_control(SQLITE_TESTCTRL_PRNG_SEED, int(seed | 1), nullptr);
}

Status sql_status(sqlite3* db, int rc, std::string_view what) {
  if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return Status::ok();
  Errc code = Errc::kIoError;
  switch (rc & 0xff) {
    case SQLITE_FULL: code = Errc::kFull; break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED: code = Errc::kBusy; break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: code = Errc::kCorrupt; break;
    default: break;
  }
  std::string msg(what);
  msg += ": ";
  msg += db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return Status::error(code, msg);
}

Db& Db::operator=(Db&& o) noexcept {
  if (this != &o) {
    (void)close();
    db_ = o.db_;
    o.db_ = nullptr;
  }
  return *this;
}

Status Db::open(const std::string& uri) {
  PDL_TRY(close());
  const int rc = sqlite3_open_v2(uri.c_str(), &db_,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                                 nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_extended_result_codes(db_, 1);
    return Status::ok();
  }
  std::string what = "open " + uri;
  const std::string detail = pdl::vfs::last_error();
  if (!detail.empty()) what += " (" + detail + ")";
  Status st = sql_status(db_, rc, what);
  sqlite3_close(db_);
  db_ = nullptr;
  return st;
}

Status Db::close() {
  if (!db_) return Status::ok();
  const int rc = sqlite3_close(db_);
  if (rc != SQLITE_OK) return sql_status(db_, rc, "close");
  db_ = nullptr;
  return Status::ok();
}

Status Db::exec(std::string_view sql) {
  char* err = nullptr;
  const std::string s(sql);
  const int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::ok();
  std::string what = s.size() > 80 ? s.substr(0, 77) + "..." : s;
  Status st = sql_status(db_, rc, what);
  sqlite3_free(err);
  return st;
}

namespace {

// Runs `sql` and calls read(stmt) on its first row, if any.
template <typename Read>
Status first_row(sqlite3* db, std::string_view sql, Read read) {
  Stmt s;
  PDL_TRY(s.prepare(db, sql));
  bool row = false;
  PDL_TRY(s.step(&row));
  if (row) read(s);
  s.reset();
  return Status::ok();
}

}  // namespace

Status Db::query_int(std::string_view sql, int64_t* out) {
  *out = 0;
  return first_row(db_, sql, [&](const Stmt& s) { *out = s.i64(0); });
}

Status Db::query_text(std::string_view sql, std::string* out) {
  out->clear();
  return first_row(db_, sql, [&](const Stmt& s) { *out = s.text(0); });
}

Status Stmt::prepare(sqlite3* db, std::string_view sql) {
  sqlite3_finalize(st_);
  st_ = nullptr;
  db_ = db;
  const int rc = sqlite3_prepare_v3(db, sql.data(), int(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                    &st_, nullptr);
  return sql_status(db, rc, "prepare " + std::string(sql));
}

Status Stmt::step(bool* row) {
  const int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) {
    *row = true;
    return Status::ok();
  }
  *row = false;
  Status st = sql_status(db_, rc, sqlite3_sql(st_));
  reset();
  return st;
}

Status Stmt::run() {
  bool row = true;
  while (row) PDL_TRY(step(&row));
  return Status::ok();
}

Status Stmt::row() {
  bool row = false;
  PDL_TRY(step(&row));
  if (!row)
    return Status::error(Errc::kNotFound, std::string("no row: ") + sqlite3_sql(st_));
  return Status::ok();
}

std::string Stmt::text(int col) const {
  const unsigned char* p = sqlite3_column_text(st_, col);
  return p ? std::string(reinterpret_cast<const char*>(p), size_t(sqlite3_column_bytes(st_, col)))
           : std::string();
}

}  // namespace pdl::tpcc
