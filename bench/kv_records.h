// kv_records.h — [IPL-PCRAM] §4's workload on SQLite: small key-value records (40 to 50 bytes:
// an integer key and a 36-45-byte text) inserted in random order into an initially empty table
// kv(k INTEGER PRIMARY KEY, v TEXT) — SQLite's table B-tree, its leaves holding the records
// (the paper's B+-tree of Berkeley DB) — then retrieved again in another random order.
//
// No per-insert durability (the paper's trace has no log writes of its own): journal_mode=OFF,
// synchronous=OFF, one transaction per `batch` inserts; pages reach the store when SQLite's
// cache (the paper's buffer pool) evicts them or at a batch's commit. Retrievals run in read
// transactions of `batch` lookups, each value checked against what was inserted.
// Keys, values and both orders depend only on (records, seed): every store runs the same
// statements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flash/common/status.h"
#include "sql/sql.h"

namespace pdl::bench {

// The value stored under key k: 36..45 characters, a function of k alone.
std::string kv_value(int64_t k);

class KvRecords {
 public:
  KvRecords(uint64_t records, uint64_t batch, uint64_t seed);
  // Creates kv on `db` with SQLite pages of `db_page` bytes and a cache of `cache_pages`.
  // Statements are prepared; the KvRecords must be destroyed before `db` is closed.
  Status prepare(sql::Db& db, uint32_t db_page, int64_t cache_pages);
  // Every record, in the insertion order.
  Status insert_all();
  // Every record looked up in the retrieval order; kCorrupt naming the key if a value differs
  // or is missing.
  Status retrieve_all();

 private:
  sql::Db* db_ = nullptr;
  uint64_t batch_;
  std::vector<int64_t> insert_order_, retrieve_order_;
  sql::Stmt ins_, get_;
};

}  // namespace pdl::bench
