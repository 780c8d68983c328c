// lpn_pool.h — the Volume's free data lpns: a bitmap handing out the lowest free lpn first.
//
// Lowest-first keeps the set of lpns a workload touches small and stable (a rollback journal
// deleted and re-created every transaction gets the same lpns back), which keeps owner-map
// pages unchanged between transactions.
// Thread-safety: none (the Volume's mutex).
#pragma once

#include <bit>
#include <cassert>
#include <cstdint>
#include <vector>

namespace pdl {

class LpnPool {
 public:
  // Lpns first .. first+count-1, all in use.
  LpnPool(uint32_t first, uint32_t count)
      : first_(first), count_(count), words_((count + 63) / 64, 0) {}

  // Take the lowest free lpn; false if none is free.
  bool take(uint32_t* lpn) {
    for (size_t w = hint_; w < words_.size(); w++) {
      if (words_[w] == 0) continue;
      const unsigned bit = unsigned(std::countr_zero(words_[w]));
      words_[w] &= words_[w] - 1;
      hint_ = w;
      free_--;
      *lpn = first_ + uint32_t(w * 64 + bit);
      return true;
    }
    hint_ = words_.size();
    return false;
  }
  void put(uint32_t lpn) {
    const uint32_t i = lpn - first_;
    assert(i < count_ && !is_free(lpn));  // Invariant: an lpn is freed once
    words_[i / 64] |= uint64_t(1) << (i % 64);
    if (i / 64 < hint_) hint_ = i / 64;
    free_++;
  }
  // Take this free lpn (a Volume brought up to date after a replay: volume_catch_up.cc).
  void remove(uint32_t lpn) {
    const uint32_t i = lpn - first_;
    assert(i < count_ && is_free(lpn));
    words_[i / 64] &= ~(uint64_t(1) << (i % 64));
    free_--;
  }
  bool is_free(uint32_t lpn) const {
    const uint32_t i = lpn - first_;
    return (words_[i / 64] >> (i % 64)) & 1;
  }
  uint32_t free_count() const { return free_; }
  uint32_t first() const { return first_; }
  uint64_t table_bytes() const { return words_.capacity() * sizeof(uint64_t); }
  uint32_t count() const { return count_; }

 private:
  uint32_t first_, count_;
  std::vector<uint64_t> words_;  // bit set = free
  size_t hint_ = 0;              // no free lpn below words_[hint_]
  uint32_t free_ = 0;
};

}  // namespace pdl
