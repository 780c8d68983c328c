// write_buffer.h — the one-page differential write buffer ([PDL] §4.2, "dwb").
//
// Collects differential records in RAM until it is full or synced, then its bytes become one
// differential page. Holds at most one record per lpn: put() of an lpn already present is a
// caller error; the PDL write path removes the old record first (Fig. 4, Step 3).
// The same class serves GC compaction, which builds differential pages out of valid records.
//
// Invariant: used() == sum of record sizes <= capacity(); index_ lists records in byte order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flash/pdl/record.h"

namespace pdl {

class WriteBuffer {
 public:
  explicit WriteBuffer(uint32_t capacity) : bytes_(capacity, 0xFF) { index_.reserve(64); }

  uint32_t capacity() const { return uint32_t(bytes_.size()); }
  uint32_t used() const { return used_; }
  uint32_t free_space() const { return capacity() - used_; }
  bool empty() const { return index_.empty(); }
  size_t count() const { return index_.size(); }

  // REQUIRES: r.size() <= free_space() and no record for r.lpn is present.
  void put(const RecordView& r);
  // Remove lpn's record if present; returns whether one was.
  bool remove(uint32_t lpn);
  // Find lpn's record; false if absent.
  bool find(uint32_t lpn, RecordView* r) const;
  // The page image: used() bytes of records, then 0xFF to capacity().
  std::span<const uint8_t> page() const { return bytes_; }
  // Visit every record in order.
  template <typename F>
  void for_each(F&& f) const {
    for (const Entry& e : index_) f(view(e));
  }
  void clear();

 private:
  struct Entry {
    uint32_t lpn, offset, size;
  };
  RecordView view(const Entry& e) const;
  std::vector<uint8_t> bytes_;
  std::vector<Entry> index_;
  uint32_t used_ = 0;
};

}  // namespace pdl
