// row_txns.cc — see row_txns.h.
#include "bench/row_txns.h"

#include <unistd.h>

#include <cstdio>

namespace pdl::bench {

RowTxns::RowTxns(int rows, int row_bytes, uint64_t seed)
    : rows_(rows), row_bytes_(row_bytes), rng_(seed) {}

Status RowTxns::prepare(sql::Db& db) {
  PDL_TRY(db.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT)"));
  PDL_TRY(ins_.prepare(db.get(), "INSERT INTO t(a, b) VALUES (?1, ?2)", 0));
  return upd_.prepare(db.get(), "UPDATE t SET a = a + 1, b = ?2 WHERE id = ?1", 0);
}

Status RowTxns::run_phase(int phase) {
  sql::Stmt& s = phase == 0 ? ins_ : upd_;
  for (int i = 0; i < rows_; i++) {
    // "row I phase P <hex>" padded with letters to row_bytes.
    char head[64];
    std::snprintf(head, sizeof head, "row %d phase %d %016llx ", i, phase,
                  (unsigned long long)rng_());
    text_ = head;
    while (text_.size() < size_t(row_bytes_)) text_ += char('a' + text_.size() % 26);
    text_.resize(size_t(row_bytes_));
    s.bind(1, int64_t(phase == 0 ? i : 1 + int64_t(rng_() % uint64_t(rows_)))).bind(2, text_);
    PDL_TRY(s.run());
  }
  return Status::ok();
}

std::string pdl_uri(const std::string& path, const std::string& method, const std::string& size,
                    const std::string& commit, const std::string& obsolete,
                    const std::string& extra) {
  return "file:" + path + "?vfs=pdl&method=" + method + "&size=" + size +
         "&clock=logical&commit=" + commit + (obsolete.empty() ? "" : "&obsolete=" + obsolete) +
         extra;
}

void remove_unix_db(const std::string& path) {
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) unlink((path + suffix).c_str());
}

}  // namespace pdl::bench
