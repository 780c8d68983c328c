// table_stream.h — the byte streams a store's in-RAM tables are checkpointed through.
//
// A checkpoint (docs/design.md §17) holds a store's tables as one byte stream: each engine
// appends its own sections with TableWriter (save_tables) and reads them back with TableReader
// (its mount_tables), in the same order. Every value is little-endian (le.h). The stream's
// integrity (CRCs over every page and over the whole stream) is the checkpoint layer's job; a
// reader still treats the bytes as hostile: every read is bounds-checked, a read past the end
// or a value out of its range fails with Errc::kCorrupt naming the table, and the first
// failure sticks (later reads return zeros), so an engine may read a whole section and check
// status() once. Nothing here allocates more than the stream itself holds: a count read from
// the stream must be checked against remaining() (or a known bound) before it sizes a table.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "flash/common/le.h"
#include "flash/common/status.h"

namespace pdl {

class TablePager;  // paged_table.h

class TableWriter {
 public:
  // The pager a paged table saves its dirty pages through (paged_table.h); none: paged tables
  // write their entries into the stream itself.
  void set_pager(TablePager* p) { pager_ = p; }
  TablePager* pager() const { return pager_; }
  void u8(uint8_t v) { bytes_.push_back(v); }
  void u16(uint16_t v) { put(v, 2); }
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void bytes(std::span<const uint8_t> b) { bytes_.insert(bytes_.end(), b.begin(), b.end()); }
  // A section tag: four ASCII letters, checked by TableReader::tag (catches a reader and a
  // writer that disagree about the layout, and names the section in errors).
  void tag(const char (&t)[5]) { bytes(std::span(reinterpret_cast<const uint8_t*>(t), 4)); }
  const std::vector<uint8_t>& data() const { return bytes_; }
  std::vector<uint8_t>& data() { return bytes_; }
  size_t size() const { return bytes_.size(); }

 private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; i++) bytes_.push_back(uint8_t(v >> (8 * i)));
  }
  std::vector<uint8_t> bytes_;
  TablePager* pager_ = nullptr;
};

class TableReader {
 public:
  explicit TableReader(std::span<const uint8_t> bytes, TablePager* pager = nullptr)
      : b_(bytes), pager_(pager) {}
  // The pager a paged table's directory refers to (paged_table.h).
  TablePager* pager() const { return pager_; }

  uint8_t u8() { return uint8_t(get(1)); }
  uint16_t u16() { return uint16_t(get(2)); }
  uint32_t u32() { return uint32_t(get(4)); }
  uint64_t u64() { return get(8); }
  // `n` bytes, or an empty span (and the error) if fewer remain.
  std::span<const uint8_t> bytes(size_t n) {
    if (!take(n, "bytes")) return {};
    return b_.subspan(pos_ - n, n);
  }
  // Expect section tag `t`; a mismatch is kCorrupt naming both.
  void tag(const char (&t)[5]) {
    auto got = bytes(4);
    if (got.size() == 4 && std::memcmp(got.data(), t, 4) != 0)
      fail(std::string("checkpoint: expected section '") + t + "', found another");
  }
  // A value read from the stream is out of range: record kCorrupt naming `what` (first wins).
  void fail(const std::string& what) {
    if (st_.is_ok()) st_ = Status::error(Errc::kCorrupt, what);
  }
  // `v < bound`, or fail naming `what`; returns whether it held (and no earlier error).
  bool check(uint64_t v, uint64_t bound, const char* what) {
    if (v >= bound)
      fail(std::string("checkpoint: ") + what + " " + std::to_string(v) + " out of range (< " +
           std::to_string(bound) + ")");
    return st_.is_ok();
  }
  // A count of `each`-byte items about to be read: it must fit in what remains.
  bool check_count(uint64_t n, uint64_t each, const char* what) {
    if (each != 0 && n > remaining() / each)
      fail(std::string("checkpoint: ") + what + " count " + std::to_string(n) +
           " exceeds the stream");
    return st_.is_ok();
  }
  size_t remaining() const { return b_.size() - pos_; }
  bool at_end() const { return pos_ == b_.size(); }
  const Status& status() const { return st_; }
  // Ok only if every read succeeded and nothing is left over (a stream with trailing bytes
  // is not the one its writer made).
  Status finish() {
    if (st_.is_ok() && !at_end())
      fail("checkpoint: " + std::to_string(remaining()) + " bytes left over after the tables");
    return st_;
  }

 private:
  bool take(size_t n, const char* what) {
    if (!st_.is_ok()) return false;
    if (n > remaining()) {
      fail(std::string("checkpoint: stream ends inside ") + what);
      return false;
    }
    pos_ += n;
    return true;
  }
  uint64_t get(int n) {
    if (!take(size_t(n), "a value")) return 0;
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | b_[pos_ - size_t(n) + size_t(i)];
    return v;
  }
  std::span<const uint8_t> b_;
  TablePager* pager_ = nullptr;
  size_t pos_ = 0;
  Status st_ = Status::ok();
};

}  // namespace pdl
