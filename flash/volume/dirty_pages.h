// dirty_pages.h — the Volume's metadata pages (directory, owner map) changed since the last
// commit, as a bitmap: next() skips 64 clean pages per word and any() is a counter, so a commit
// costs time in proportion to the pages that changed, not one test per page of the map (a
// 256 MiB chip has 1,024 owner-map pages; the commit of every SQLite transaction walked them).
// Invariant: count_ is the number of set bits; bits at n and above are never set.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace pdl {

class DirtyPages {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  explicit DirtyPages(uint32_t n) : words_((size_t(n) + 63) / 64, 0) {}

  void set(uint32_t p) {
    uint64_t& w = words_[p / 64];
    const uint64_t bit = uint64_t(1) << (p % 64);
    count_ += (w & bit) == 0;
    w |= bit;
  }
  void clear(uint32_t p) {
    uint64_t& w = words_[p / 64];
    const uint64_t bit = uint64_t(1) << (p % 64);
    count_ -= (w & bit) != 0;
    w &= ~bit;
  }
  void clear_all() {
    std::fill(words_.begin(), words_.end(), 0);
    count_ = 0;
  }
  bool any() const { return count_ != 0; }
  uint64_t table_bytes() const { return words_.capacity() * sizeof(uint64_t); }
  // The first dirty page at or after p, or kNone: walk with
  // `for (p = next(0); p != kNone; p = next(p + 1))`.
  uint32_t next(uint32_t p) const {
    size_t i = p / 64;
    if (i >= words_.size()) return kNone;
    uint64_t w = words_[i] & (~uint64_t(0) << (p % 64));
    while (w == 0) {
      if (++i == words_.size()) return kNone;
      w = words_[i];
    }
    return uint32_t(i * 64 + size_t(std::countr_zero(w)));
  }

 private:
  std::vector<uint64_t> words_;
  uint32_t count_ = 0;
};

}  // namespace pdl
