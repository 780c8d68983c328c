// spare.cc — encode/decode of the spare-area header (layout in spare.h and docs/format.md).
#include "flash/store/spare.h"

#include <algorithm>
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
  le::put32(s + 4, h.lpn);
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
         t == uint8_t(PageType::kIplEmpty);
}

// The unique single-bit change of bytes [1, 24) and [28, 32) that makes the header check, applied
// to `s`; false (s unchanged) if there is none or more than one.
bool repair_one_bit(uint8_t* s) {
  int found = -1;
  for (int byte = 1; byte < 32; byte++) {
    if (byte == 24) byte = 28;
    for (int bit = 0; bit < 8; bit++) {
      s[byte] ^= uint8_t(1u << bit);
      const bool ok = header_checks(s);
      s[byte] ^= uint8_t(1u << bit);
      if (!ok) continue;
      if (found >= 0) return false;
      found = byte * 8 + bit;
    }
  }
  if (found < 0) return false;
  s[found / 8] ^= uint8_t(1u << (found % 8));
  return true;
}

}  // namespace

SpareState spare_decode(std::span<const uint8_t> spare, SpareHeader* h) {
  if (all_ff(spare.first(kSpareBytesUsed))) return SpareState::kErased;
  uint8_t s[kSpareBytesUsed];
  std::memcpy(s, spare.data(), kSpareBytesUsed);
  bool repaired = false;
  if (!header_checks(s)) {
    if (!repair_one_bit(s)) return SpareState::kCorrupt;
    repaired = true;
  }
  h->type = PageType(s[1]);
  h->lpn = le::get32(s + 4);
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
