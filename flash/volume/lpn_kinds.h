// lpn_kinds.h — the file kind of every lpn, 2 bits each: the store's cost classifier
// (PageStore::set_classifier) asks it for each page it programs, reads or moves.
//
// Why not derived from the owner map (which names each data lpn's file, hence its kind): the
// store calls the classifier from inside its own operations — a program, a garbage-collection
// move, a merge — where the Volume cannot read an owner page from that same store, and the
// owner map is now a bounded cache (owner_cache.h) whose pages may not be resident. So the
// kinds stay in RAM, packed: 4 lpns per byte (kFileKinds = 4), 128 KiB per GiB of 2 KiB pages.
// Invariant: bits past `n` lpns are zero. Thread-safety: none (the Volume's mutex).
#pragma once

#include <cstdint>
#include <vector>

namespace pdl {

class LpnKinds {
 public:
  explicit LpnKinds(uint32_t n) : n_(n), bytes_((size_t(n) + 3) / 4, 0) {}

  uint8_t get(uint32_t lpn) const { return (bytes_[lpn / 4] >> (2 * (lpn % 4))) & 3; }
  void set(uint32_t lpn, uint8_t kind) {
    uint8_t& b = bytes_[lpn / 4];
    const unsigned shift = 2 * (lpn % 4);
    b = uint8_t((b & ~(3u << shift)) | (unsigned(kind & 3) << shift));
  }
  // Lpns [first, last) get `kind`.
  void fill(uint32_t first, uint32_t last, uint8_t kind) {
    for (uint32_t l = first; l < last; l++) set(l, kind);
  }
  uint32_t size() const { return n_; }
  uint64_t table_bytes() const { return bytes_.capacity(); }

 private:
  uint32_t n_;
  std::vector<uint8_t> bytes_;
};

}  // namespace pdl
