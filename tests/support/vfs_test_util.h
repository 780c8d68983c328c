// vfs_test_util.h — helpers shared by the VFS test suites (test_vfs_*.cc): opening connections
// through the "pdl" VFS, running SQL with clear failure messages, and a tiny JSON reader for
// PRAGMA pdl_stats. Header-only (the VFS suites include it; nothing else needs it).
//
// Invariants: use_pdl_vfs() registers the VFS once per process and, unless the environment says
// otherwise, silences the VFS's stderr messages (the tests read pdl::vfs::last_error()
// instead). Helpers that must succeed REQUIRE success with SQLite's message in the report.
#pragma once

#include <sqlite3.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "sql/sql.h"
#include "tests/support/test_util.h"
#include "vfs/pdl_vfs.h"

namespace pdl::test {

// Register the pdl VFS (idempotent) and quiet its stderr reports unless PDL_VFS_QUIET is set.
// PDL_SQLITE_LOG=1 prints SQLite's own error log (sqlite3_log) on stderr, for debugging.
inline void use_pdl_vfs() {
  static const bool logging = [] {
    const char* env = std::getenv("PDL_SQLITE_LOG");
    if (!env || !*env || *env == '0') return false;
    sqlite3_config(SQLITE_CONFIG_LOG, +[](void*, int code, const char* msg) {
      std::fprintf(stderr, "sqlite3_log(%d): %s\n", code, msg);
    }, nullptr);
    return true;
  }();
  (void)logging;
  setenv("PDL_VFS_QUIET", "1", 0);
  REQUIRE(pdl::vfs::register_vfs() == SQLITE_OK);
}

// Seed SQLite's process-wide PRNG (journal nonces, WAL salts): a replayed workload then
// writes the same bytes, so a dry run's operation count holds for the runs cut after it.
inline void seed_sqlite_prng() { sql::seed_prng(12345); }

// "file:<path>?vfs=pdl[&<params>]". `path` must be absolute (device_of() keys on it).
inline std::string pdl_uri(const std::string& path, const std::string& params = "") {
  return "file:" + path + "?vfs=pdl" + (params.empty() ? "" : "&" + params);
}

using sql::kOpenFlags;

// One SQLite connection (sql::Db), closed on destruction; its calls return SQLite's result
// codes, which the suites compare, and the must_* / rows helpers REQUIRE success.
class Conn {
 public:
  Conn() = default;
  explicit Conn(const std::string& uri, int flags = kOpenFlags) { must_open(uri, flags); }
  Conn(Conn&&) noexcept = default;

  // Open; returns SQLite's result code (the handle is released on failure).
  int open(const std::string& uri, int flags = kOpenFlags) {
    close();
    const Status st = db_.open(uri, flags);
    if (!st.is_ok()) last_open_error_ = std::string(st.message());
    return db_.rc();
  }
  void must_open(const std::string& uri, int flags = kOpenFlags) {
    const int rc = open(uri, flags);
    INFO("open " << uri << ": rc " << rc << " " << last_open_error_ << " / vfs: "
                 << pdl::vfs::last_error());
    REQUIRE(rc == SQLITE_OK);
  }
  // sqlite3_close_v2's result (SQLITE_OK when nothing was open).
  int close() {
    if (!db_) return SQLITE_OK;
    (void)db_.close();
    return db_.rc();
  }
  sqlite3* get() const { return db_.get(); }
  explicit operator bool() const { return bool(db_); }
  std::string errmsg() const { return db_.errmsg(); }

  // Run SQL; SQLite's result code (extended codes are masked to primary ones).
  int exec(const std::string& sql) {
    const Status st = db_.exec(sql);
    last_exec_error_ = st.is_ok() ? "" : db_.errmsg();
    return db_.rc() & 0xFF;
  }
  void must(const std::string& sql) {
    const int rc = exec(sql);
    INFO("SQL: " << sql << "\n-> rc " << rc << ": " << last_exec_error_
                  << " (extended code " << (db_ ? sqlite3_extended_errcode(db_.get()) : -1) << ")"
                  << (rc == SQLITE_CANTOPEN ? " / vfs: " + pdl::vfs::last_error() : ""));
    REQUIRE(rc == SQLITE_OK);
  }
  const std::string& exec_error() const { return last_exec_error_; }

  // Step `sql` (one statement, optional int64/blob/text parameters bound by the caller through
  // `bind`), calling `row` for each result row. Returns the final result code.
  int query(const std::string& sql, const std::function<void(sqlite3_stmt*)>& row,
            const std::function<void(sqlite3_stmt*)>& bind = nullptr) {
    sql::Stmt st;
    if (!st.prepare(db_.get(), sql, 0).is_ok()) return st.rc();
    if (bind) bind(st.get());
    for (bool more = true; more;) {
      if (!st.step(&more).is_ok()) return st.rc();
      if (more && row) row(st.get());
    }
    return SQLITE_OK;
  }
  // All rows as text (NULL -> "NULL"); REQUIREs success.
  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    std::vector<std::vector<std::string>> out;
    const int rc = query(sql, [&](sqlite3_stmt* st) {
      std::vector<std::string> r;
      for (int i = 0; i < sqlite3_column_count(st); i++) {
        const unsigned char* t = sqlite3_column_text(st, i);
        r.emplace_back(t ? reinterpret_cast<const char*>(t) : "NULL");
      }
      out.push_back(std::move(r));
    });
    INFO("SQL: " << sql << "\n-> rc " << rc << ": " << errmsg());
    REQUIRE(rc == SQLITE_OK);
    return out;
  }
  // The first column of the first row as text ("" if no row); REQUIREs success.
  std::string text(const std::string& sql) {
    auto r = rows(sql);
    return r.empty() || r[0].empty() ? std::string() : r[0][0];
  }
  int64_t integer(const std::string& sql) {
    const std::string t = text(sql);
    INFO("SQL: " << sql << " -> '" << t << "'");
    REQUIRE(!t.empty());
    return std::strtoll(t.c_str(), nullptr, 10);
  }

 private:
  sql::Db db_;
  std::string last_open_error_, last_exec_error_;
};

// PRAGMA journal_mode=<mode>; REQUIREs SQLite reports the mode back (lower case).
inline void set_journal_mode(Conn& c, const std::string& mode) {
  std::string want = mode;
  for (char& ch : want) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  REQUIRE(c.text("PRAGMA journal_mode=" + mode) == want);
}

// ---- a tiny JSON reader (enough for PRAGMA pdl_stats) ----

struct Json {
  enum Type { kNull, kBool, kNumber, kString, kArray, kObject } type = kNull;
  double num = 0;
  bool b = false;
  std::string str;
  std::vector<Json> arr;
  std::vector<std::pair<std::string, Json>> obj;

  // Member by dotted path ("flash.programs"); nullptr if absent.
  const Json* at(const std::string& path) const {
    const Json* cur = this;
    size_t i = 0;
    while (cur && i <= path.size()) {
      size_t j = path.find('.', i);
      if (j == std::string::npos) j = path.size();
      const std::string key = path.substr(i, j - i);
      const Json* next = nullptr;
      if (cur->type == kObject)
        for (const auto& [k, v] : cur->obj)
          if (k == key) next = &v;
      cur = next;
      i = j + 1;
    }
    return cur;
  }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& s) : s_(s) {}
  // Parse the whole text as one value; false (with *where set) on any syntax error.
  bool parse(Json* out, size_t* where) {
    const bool ok = value(out) && (ws(), i_ == s_.size());
    *where = i_;
    return ok;
  }

 private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n'))
      i_++;
  }
  bool lit(const char* w) {
    const size_t n = std::strlen(w);
    if (s_.compare(i_, n, w) != 0) return false;
    i_ += n;
    return true;
  }
  bool string(std::string* out) {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    i_++;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c == '\\') {
        if (i_ >= s_.size()) return false;
        c = s_[i_++];
        if (c == 'u') {
          if (i_ + 4 > s_.size()) return false;
          i_ += 4;
          c = '?';
        } else if (!std::strchr("\"\\/bfnrt", c)) {
          return false;
        }
      }
      out->push_back(c);
    }
    if (i_ >= s_.size()) return false;
    i_++;
    return true;
  }
  bool number(double* out) {
    const size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') i_++;
    const size_t digits = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) i_++;
    if (i_ == digits) return false;
    if (i_ < s_.size() && s_[i_] == '.') {
      i_++;
      const size_t frac = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) i_++;
      if (i_ == frac) return false;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      i_++;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) i_++;
      const size_t exp = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) i_++;
      if (i_ == exp) return false;
    }
    *out = std::strtod(s_.substr(start, i_ - start).c_str(), nullptr);
    return true;
  }
  bool value(Json* v) {
    if (++depth_ > 64) return false;
    ws();
    bool ok = false;
    if (i_ >= s_.size()) {
      ok = false;
    } else if (s_[i_] == '{') {
      v->type = Json::kObject;
      i_++;
      ws();
      if (i_ < s_.size() && s_[i_] == '}') {
        i_++;
        ok = true;
      } else {
        for (;;) {
          ws();
          std::pair<std::string, Json> m;
          if (!string(&m.first)) break;
          ws();
          if (!lit(":") || !value(&m.second)) break;
          v->obj.push_back(std::move(m));
          ws();
          if (lit(",")) continue;
          ok = lit("}");
          break;
        }
      }
    } else if (s_[i_] == '[') {
      v->type = Json::kArray;
      i_++;
      ws();
      if (i_ < s_.size() && s_[i_] == ']') {
        i_++;
        ok = true;
      } else {
        for (;;) {
          Json e;
          if (!value(&e)) break;
          v->arr.push_back(std::move(e));
          ws();
          if (lit(",")) continue;
          ok = lit("]");
          break;
        }
      }
    } else if (s_[i_] == '"') {
      v->type = Json::kString;
      ok = string(&v->str);
    } else if (lit("true") || lit("false")) {
      v->type = Json::kBool;
      v->b = s_[i_ - 1] == 'e' && s_[i_ - 2] == 'u';
      ok = true;
    } else if (lit("null")) {
      v->type = Json::kNull;
      ok = true;
    } else {
      v->type = Json::kNumber;
      ok = number(&v->num);
    }
    depth_--;
    return ok;
  }

  const std::string& s_;
  size_t i_ = 0;
  int depth_ = 0;
};

// Parse `text` as JSON; REQUIREs it is well formed.
inline Json parse_json(const std::string& text) {
  Json j;
  size_t where = 0;
  const bool ok = JsonParser(text).parse(&j, &where);
  INFO("JSON syntax error at offset " << where << " of: " << text.substr(0, 400));
  REQUIRE(ok);
  return j;
}

// A JSON number at `path`; REQUIREs it exists and is a number.
inline double json_number(const Json& j, const std::string& path) {
  const Json* v = j.at(path);
  INFO("JSON field " << path);
  REQUIRE(v != nullptr);
  REQUIRE(v->type == Json::kNumber);
  return v->num;
}

// A JSON string at `path`; REQUIREs it exists and is a string.
inline std::string json_string(const Json& j, const std::string& path) {
  const Json* v = j.at(path);
  INFO("JSON field " << path);
  REQUIRE(v != nullptr);
  REQUIRE(v->type == Json::kString);
  return v->str;
}

// ---- host files ----

inline bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

inline std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  REQUIRE(out.good());
}

}  // namespace pdl::test
