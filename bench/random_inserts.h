// random_inserts.h — [IPL-B+tree]'s random-insert workload on SQLite: N entries with keys
// 1..N in a random order (a seeded permutation) inserted into an initially empty indexed
// table t(k INTEGER PRIMARY KEY, v INTEGER) — SQLite's table B-tree keyed by k holds the
// entries in its leaves (a B+-tree), an entry about the paper's 16 bytes (key + value).
//
// Two durability settings:
//   paper    no per-insert durability, as the paper's B+-tree without a log: journal_mode=OFF,
//            synchronous=OFF, one transaction per `batch` inserts; pages reach the device when
//            SQLite's cache (the buffer frames) evicts them or at a batch's commit.
//   durable  what an application needing durability does: journal_mode=DELETE,
//            synchronous=FULL, one transaction (with its commit) per `batch` inserts.
// The key order and the values depend only on (keys, seed), so every store runs the same
// statements; the figures are the flash counters over the inserts (the table's creation
// excluded).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flash/common/status.h"
#include "sql/sql.h"

namespace pdl::bench {

struct InsertSetting {
  std::string name;        // "paper" or "durable"
  uint64_t batch = 10000;  // inserts per transaction
  std::string journal_mode() const { return name == "durable" ? "delete" : "off"; }
  std::string synchronous() const { return name == "durable" ? "full" : "off"; }
};

// The keys in insertion order: a permutation of 1..n from `seed`.
std::vector<int64_t> insert_order(uint64_t n, uint64_t seed);

// Creates t on `db` (journal mode and synchronous of `s`, cache of `cache_pages` pages).
Status prepare_inserts(sql::Db& db, const InsertSetting& s, int64_t cache_pages);
// Inserts `keys` in order, a transaction per s.batch inserts (the last one may be shorter).
Status run_inserts(sql::Db& db, const InsertSetting& s, const std::vector<int64_t>& keys);

}  // namespace pdl::bench
