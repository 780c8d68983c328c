// bit_stream.h — a bit-packed byte stream for compact tables: fixed-width fields and Elias
// gamma codes, least significant bit first.
//
// BitWriter appends fields to a byte vector; the last byte's unused high bits are zero.
// BitReader reads them back from hostile bytes: every read is bounds-checked, the first failure
// sticks (later reads return 0) and is reported by ok(); a gamma code longer than 64 bits is a
// failure, never an overflow. Gamma codes (a value v >= 1: floor(log2 v) zero bits, then v's
// bits from its highest) take 1 bit for 1, 3 for 2..3, 2k+1 for values below 2^(k+1): small
// deltas and run lengths cost a few bits, any 64-bit value at most 127.
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <vector>

namespace pdl {

// Bits needed to write any value below `n` (at least 1).
inline unsigned bits_for(uint64_t n) {
  return n <= 2 ? 1u : unsigned(std::bit_width(n - 1));
}

class BitWriter {
 public:
  // The low `width` (0..64) bits of `v`.
  void bits(uint64_t v, unsigned width) {
    for (unsigned i = 0; i < width; i++) bit((v >> i) & 1);
  }
  void bit(bool b) {
    if (n_ % 8 == 0) bytes_.push_back(0);
    if (b) bytes_.back() = uint8_t(bytes_.back() | (1u << (n_ % 8)));
    n_++;
  }
  // REQUIRES v >= 1.
  void gamma(uint64_t v) {
    const unsigned k = unsigned(std::bit_width(v)) - 1;
    for (unsigned i = 0; i < k; i++) bit(false);
    for (unsigned i = k + 1; i-- > 0;) bit((v >> i) & 1);
  }
  const std::vector<uint8_t>& data() const { return bytes_; }
  uint64_t bit_count() const { return n_; }

 private:
  std::vector<uint8_t> bytes_;
  uint64_t n_ = 0;
};

class BitReader {
 public:
  explicit BitReader(std::span<const uint8_t> bytes) : b_(bytes) {}
  bool bit() {
    if (!ok_ || pos_ >= uint64_t(b_.size()) * 8) {
      ok_ = false;
      return false;
    }
    const bool v = (b_[pos_ / 8] >> (pos_ % 8)) & 1;
    pos_++;
    return v;
  }
  uint64_t bits(unsigned width) {
    if (!ok_ || width > remaining_bits()) {
      ok_ = false;
      return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < width; i++) v |= uint64_t(bit()) << i;
    return v;
  }
  // A gamma code: >= 1, or 0 after a failure.
  uint64_t gamma() {
    unsigned k = 0;
    while (ok_ && !bit()) {
      if (++k > 63) ok_ = false;
    }
    if (!ok_) return 0;
    uint64_t v = 1;
    for (unsigned i = 0; i < k; i++) v = (v << 1) | uint64_t(bit());
    return ok_ ? v : 0;
  }
  bool ok() const { return ok_; }
  uint64_t remaining_bits() const { return uint64_t(b_.size()) * 8 - pos_; }
  // The bits left are the last byte's padding, all zero (a well-formed stream's end).
  bool at_padding() const {
    if (!ok_ || remaining_bits() >= 8) return false;
    for (uint64_t p = pos_; p < uint64_t(b_.size()) * 8; p++)
      if ((b_[p / 8] >> (p % 8)) & 1) return false;
    return true;
  }

 private:
  std::span<const uint8_t> b_;
  uint64_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace pdl
