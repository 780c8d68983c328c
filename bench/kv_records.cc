// kv_records.cc — see kv_records.h.
#include "bench/kv_records.h"

#include <algorithm>

#include "bench/random_inserts.h"

namespace pdl::bench {

std::string kv_value(int64_t k) {
  uint64_t h = uint64_t(k) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  const size_t len = 36 + size_t(h % 10);
  static const char kHex[] = "0123456789abcdef";
  std::string v;
  v.reserve(len);
  for (size_t i = 0; v.size() < len; i++) {
    v += kHex[(h >> ((i % 16) * 4)) & 15];
    if (i % 16 == 15) h = h * 6364136223846793005ull + 1442695040888963407ull;
  }
  return v;
}

KvRecords::KvRecords(uint64_t records, uint64_t batch, uint64_t seed)
    : batch_(std::max<uint64_t>(1, batch)),
      insert_order_(insert_order(records, seed)),
      retrieve_order_(insert_order(records, seed ^ 0x5EEDull)) {}

Status KvRecords::prepare(sql::Db& db, uint32_t db_page, int64_t cache_pages) {
  db_ = &db;
  PDL_TRY(db.exec("PRAGMA page_size=" + std::to_string(db_page)));
  std::string mode;
  PDL_TRY(db.query_text("PRAGMA journal_mode=off", &mode));
  if (mode != "off")
    return Status::error(Errc::kInvalidArgument, "journal_mode off refused (SQLite says " + mode + ")");
  PDL_TRY(db.exec("PRAGMA synchronous=off; PRAGMA cache_size=" +
                  std::to_string(std::max<int64_t>(1, cache_pages))));
  PDL_TRY(db.exec("CREATE TABLE kv(k INTEGER PRIMARY KEY, v TEXT)"));
  PDL_TRY(ins_.prepare(db.get(), "INSERT INTO kv(k, v) VALUES (?1, ?2)"));
  return get_.prepare(db.get(), "SELECT v FROM kv WHERE k = ?1");
}

Status KvRecords::insert_all() {
  const std::vector<int64_t>& keys = insert_order_;
  for (size_t i = 0; i < keys.size(); i++) {
    if (i % batch_ == 0) PDL_TRY(db_->exec("BEGIN"));
    PDL_TRY(ins_.bind(1, keys[i]).bind(2, kv_value(keys[i])).run());
    if ((i + 1) % batch_ == 0 || i + 1 == keys.size()) PDL_TRY(db_->exec("COMMIT"));
  }
  return Status::ok();
}

Status KvRecords::retrieve_all() {
  const std::vector<int64_t>& keys = retrieve_order_;
  for (size_t i = 0; i < keys.size(); i++) {
    if (i % batch_ == 0) PDL_TRY(db_->exec("BEGIN"));
    get_.bind(1, keys[i]);
    Status st = get_.row();
    if (st.is_ok() && get_.text(0) != kv_value(keys[i]))
      st = Status::error(Errc::kCorrupt, "key " + std::to_string(keys[i]) + ": wrong value");
    get_.reset();
    if (!st.is_ok()) {
      (void)db_->exec("ROLLBACK");
      return st.code() == Errc::kNotFound
                 ? Status::error(Errc::kCorrupt, "key " + std::to_string(keys[i]) + " missing")
                 : st;
    }
    if ((i + 1) % batch_ == 0 || i + 1 == keys.size()) PDL_TRY(db_->exec("COMMIT"));
  }
  return Status::ok();
}

}  // namespace pdl::bench
