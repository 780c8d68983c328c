// random_inserts.cc — see random_inserts.h.
#include "bench/random_inserts.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace pdl::bench {

std::vector<int64_t> insert_order(uint64_t n, uint64_t seed) {
  std::vector<int64_t> keys(n);
  std::iota(keys.begin(), keys.end(), int64_t(1));
  std::mt19937_64 rng(seed);
  // Fisher-Yates with the generator's raw output: the same order on every platform.
  for (uint64_t i = n; i > 1; i--) std::swap(keys[i - 1], keys[rng() % i]);
  return keys;
}

Status prepare_inserts(sql::Db& db, const InsertSetting& s, int64_t cache_pages) {
  std::string mode;
  PDL_TRY(db.query_text("PRAGMA journal_mode=" + s.journal_mode(), &mode));
  if (mode != s.journal_mode())
    return Status::error(Errc::kInvalidArgument,
                         "journal_mode " + s.journal_mode() + " refused (SQLite says " + mode + ")");
  PDL_TRY(db.exec("PRAGMA synchronous=" + s.synchronous() +
                  "; PRAGMA cache_size=" + std::to_string(std::max<int64_t>(1, cache_pages))));
  return db.exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v INTEGER)");
}

Status run_inserts(sql::Db& db, const InsertSetting& s, const std::vector<int64_t>& keys) {
  sql::Stmt ins;
  PDL_TRY(ins.prepare(db.get(), "INSERT INTO t(k, v) VALUES (?1, ?2)"));
  const uint64_t batch = std::max<uint64_t>(1, s.batch);
  for (size_t i = 0; i < keys.size(); i++) {
    if (i % batch == 0 && batch > 1) PDL_TRY(db.exec("BEGIN"));
    // The value: the key scrambled, an 8-byte integer like the paper's pointer.
    ins.bind(1, keys[i]).bind(2, int64_t((uint64_t(keys[i]) * 0x9E3779B97F4A7C15ull) >> 1));
    PDL_TRY(ins.run());
    if (batch > 1 && ((i + 1) % batch == 0 || i + 1 == keys.size())) PDL_TRY(db.exec("COMMIT"));
  }
  return Status::ok();
}

}  // namespace pdl::bench
