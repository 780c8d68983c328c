// row_txns.h — the single-row transaction workload of pdl-sqlbench and pdl-hostbench, and the
// URI of a fresh pdl image for it.
//
// Table t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT). Phase 0 (insert): `rows` statements
// inserting row i with b a text of `row_bytes` bytes; phase 1 (update): `rows` statements
// updating rows chosen by a generator seeded with `seed`. Each statement is its own
// transaction (autocommit) unless the caller has begun one. The texts and the row choice
// depend only on (rows, row_bytes, seed): two databases given equal RowTxns run the same
// statements with the same values.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "flash/common/status.h"
#include "sql/sql.h"

namespace pdl::bench {

class RowTxns {
 public:
  RowTxns(int rows, int row_bytes, uint64_t seed);
  // Creates t on `db` (its journal mode already chosen) and prepares the statements; the
  // RowTxns must be destroyed before `db` is closed.
  Status prepare(sql::Db& db);
  // Runs phase 0 (insert) or 1 (update).
  Status run_phase(int phase);

 private:
  int rows_, row_bytes_;
  std::mt19937_64 rng_;
  std::string text_;
  sql::Stmt ins_, upd_;
};

// "file:PATH?vfs=pdl&method=M&size=S&clock=logical&commit=C" then "&obsolete=B" unless B is
// empty, then `extra` (more URI parameters, each starting with '&').
std::string pdl_uri(const std::string& path, const std::string& method, const std::string& size,
                    const std::string& commit, const std::string& obsolete,
                    const std::string& extra);

// Removes a unix-VFS database and its rollback journal, WAL and shm files.
void remove_unix_db(const std::string& path);

}  // namespace pdl::bench
