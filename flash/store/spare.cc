// spare.cc — encode/decode of the spare-area header (layout in spare.h and docs/format.md).
#include "flash/store/spare.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"

namespace pdl {

namespace {
constexpr uint8_t kSpareVersion = 1;
}

bool all_ff(std::span<const uint8_t> bytes) {
  const uint8_t* p = bytes.data();
  size_t n = bytes.size();
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    if (v != ~uint64_t{0}) return false;
    p += 8;
    n -= 8;
  }
  while (n--)
    if (*p++ != 0xFF) return false;
  return true;
}

void spare_encode(const SpareHeader& h, std::span<uint8_t> spare) {
  std::fill(spare.begin(), spare.end(), 0xFF);
  uint8_t* s = spare.data();
  s[1] = uint8_t(h.type);
  s[2] = kSpareVersion;
  s[3] = uint8_t(~((h.commit ? kSpareFlagCommit : 0) | (h.group ? kSpareFlagGroup : 0) |
                   kSpareFlagMajorityMark));
  le::put32(s + 4, h.raw_word4());
  le::put64(s + 8, h.seq);
  le::put32(s + 16, h.data_crc);
  le::put32(s + 20, h.aux);
  le::put32(s + 28, crc32c(s + 1, 23));
}

bool obsolete_mark_set(uint8_t mark, bool majority) {
  if (!majority) return mark != 0xFF;  // pages of older pdl versions: any 0 bit
  return std::popcount(mark) <= 4;     // at least 4 of 8 bits programmed
}

namespace {

bool header_checks(const uint8_t* s) {
  if (le::get32(s + 28) != crc32c(s + 1, 23) || s[2] != kSpareVersion) return false;
  const uint8_t t = s[1];
  return t == uint8_t(PageType::kSuperblock) || t == uint8_t(PageType::kBase) ||
         t == uint8_t(PageType::kDifferential) || t == uint8_t(PageType::kIplData) ||
         t == uint8_t(PageType::kIplEmpty) || t == uint8_t(PageType::kFtlTrim);
}

// Error correction by syndrome. CRC-32C is affine: crc(m ^ e) = crc(m) ^ crc(e) ^ crc(0) for
// messages of one length, so flipping bit i of bytes [1, 24) changes the computed CRC by a
// fixed syndrome S_i, and flipping bit k of the stored CRC changes the stored one by 1 << k.
// The headers' 216 protected bits (184 + 32) lie within CRC-32C's Hamming distance 6, so the
// patterns of at most two flipped bits have distinct syndromes (checked in test_crc32c) and
// at most one matches.
constexpr int kHeaderBits = 23 * 8;

const std::array<uint32_t, kHeaderBits + 32>& syndromes() {
  static const std::array<uint32_t, kHeaderBits + 32> table = [] {
    std::array<uint32_t, kHeaderBits + 32> t{};
    uint8_t m[23] = {};
    const uint32_t zero = crc32c(m, 23);
    for (int i = 0; i < kHeaderBits; i++) {
      m[i / 8] ^= uint8_t(1u << (i % 8));
      t[size_t(i)] = crc32c(m, 23) ^ zero;
      m[i / 8] ^= uint8_t(1u << (i % 8));
    }
    for (int k = 0; k < 32; k++) t[size_t(kHeaderBits + k)] = 1u << k;
    return t;
  }();
  return table;
}

void flip_header_bit(uint8_t* s, int i) {  // i < kHeaderBits: byte 1 + i/8; else the CRC's
  if (i < kHeaderBits) s[1 + i / 8] ^= uint8_t(1u << (i % 8));
  else s[28 + (i - kHeaderBits) / 8] ^= uint8_t(1u << ((i - kHeaderBits) % 8));
}

// The unique change of at most `max_bits` (1 or 2) bits of [1, 24) and [28, 32) that makes the
// header check, applied to `s`; false (s unchanged) if there is none.
bool repair_bits(uint8_t* s, int max_bits) {
  const auto& t = syndromes();
  const uint32_t d = crc32c(s + 1, 23) ^ le::get32(s + 28);
  const int n = int(t.size());
  int fi = -1, fj = -1, found = 0;
  for (int i = 0; i < n; i++) {
    if (t[size_t(i)] == d) {
      fi = i, fj = -1, found++;
    }
    if (max_bits < 2) continue;
    for (int j = i + 1; j < n; j++)
      if ((t[size_t(i)] ^ t[size_t(j)]) == d) fi = i, fj = j, found++;
  }
  if (found != 1) return false;
  flip_header_bit(s, fi);
  if (fj >= 0) flip_header_bit(s, fj);
  if (header_checks(s)) return true;
  flip_header_bit(s, fi);
  if (fj >= 0) flip_header_bit(s, fj);
  return false;
}

}  // namespace

SpareState spare_decode(std::span<const uint8_t> spare, SpareHeader* h) {
  if (all_ff(spare.first(kSpareBytesUsed))) return SpareState::kErased;
  uint8_t s[kSpareBytesUsed];
  std::memcpy(s, spare.data(), kSpareBytesUsed);
  bool repaired = false;
  if (!header_checks(s)) {
    if (!repair_bits(s, 2)) return SpareState::kCorrupt;
    repaired = true;
  }
  h->type = PageType(s[1]);
  h->set_raw_word4(le::get32(s + 4));
  h->seq = le::get64(s + 8);
  h->data_crc = le::get32(s + 16);
  h->aux = le::get32(s + 20);
  h->commit = (~s[3]) & kSpareFlagCommit;
  h->group = (~s[3]) & kSpareFlagGroup;
  h->obsolete = obsolete_mark_set(s[kSpareObsoleteAt], (~s[3]) & kSpareFlagMajorityMark);
  h->repaired = repaired;
  return SpareState::kValid;
}

}  // namespace pdl
