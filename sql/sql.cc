// sql.cc — see sql.h.
#include "sql/sql.h"

namespace pdl::sql {

namespace {

std::string (*open_detail)() = nullptr;

}  // namespace

void seed_prng(uint32_t seed) {
  sqlite3_test_control(SQLITE_TESTCTRL_PRNG_SEED, int(seed | 1), nullptr);
}

void set_open_detail(std::string (*detail)()) { open_detail = detail; }

Status status(sqlite3* db, int rc, std::string_view what) {
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
    rc_ = o.rc_;
    o.db_ = nullptr;
  }
  return *this;
}

Status Db::open(const std::string& uri, int flags) {
  PDL_TRY(close());
  rc_ = sqlite3_open_v2(uri.c_str(), &db_, flags, nullptr);
  if (rc_ == SQLITE_OK) return Status::ok();
  std::string what = "open " + uri;
  const std::string detail = open_detail ? open_detail() : std::string();
  if (!detail.empty()) what += " (" + detail + ")";
  Status st = status(db_, rc_, what);
  sqlite3_close_v2(db_);
  db_ = nullptr;
  return st;
}

Status Db::close() {
  if (!db_) return Status::ok();
  rc_ = sqlite3_close_v2(db_);
  if (rc_ != SQLITE_OK) return status(db_, rc_, "close");
  db_ = nullptr;
  return Status::ok();
}

Status Db::exec(std::string_view sql) {
  const std::string s(sql);
  rc_ = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, nullptr);
  if (rc_ == SQLITE_OK) return Status::ok();
  return status(db_, rc_, s.size() > 80 ? s.substr(0, 77) + "..." : s);
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

Status Stmt::prepare(sqlite3* db, std::string_view sql, unsigned flags) {
  sqlite3_finalize(st_);
  st_ = nullptr;
  db_ = db;
  rc_ = sqlite3_prepare_v3(db, sql.data(), int(sql.size()), flags, &st_, nullptr);
  return status(db, rc_, "prepare " + std::string(sql));
}

Status Stmt::step(bool* row) {
  rc_ = sqlite3_step(st_);
  if (rc_ == SQLITE_ROW) {
    *row = true;
    return Status::ok();
  }
  *row = false;
  const char* sql = sqlite3_sql(st_);
  Status st = status(db_, rc_, sql ? sql : "step");
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

}  // namespace pdl::sql
