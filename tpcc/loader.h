// loader.h — populates an empty database with the initial TPC-C rows (TPC-C 5.11 §4.3.3).
//
// Deterministic: the rows depend only on the Scale and the seed (each table draws from its own
// Rng stream). Timestamps are logical (kLoadTime), not the host clock, so two loads with the
// same seed are identical byte for byte. The caller chooses page size and journal mode first;
// the loader creates the tables, inserts in large transactions, then creates the indexes.
#pragma once

#include <cstdint>
#include <functional>

#include "flash/common/status.h"
#include "sql/sql.h"
#include "tpcc/schema.h"

namespace pdl::tpcc {

// The logical clock: rows loaded "at" 2026-01-01 00:00:00 UTC; transaction i runs at
// kRunStart + i seconds.
inline constexpr int64_t kLoadTime = 1767225600;
inline constexpr int64_t kRunStart = kLoadTime + 86400;

// Called as rows are inserted: table, rows of it done, rows of it in all (an estimate for
// order_line, whose orders have 5..15 lines each).
using LoadProgress = std::function<void(const char* table, uint64_t done, uint64_t total)>;

Status load(sql::Db& db, const Scale& scale, uint64_t seed, const LoadProgress& progress = nullptr);

}  // namespace pdl::tpcc
