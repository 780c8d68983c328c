// spare.cc — encode/decode of the spare-area header (layout in spare.h and docs/format.md).
#include "flash/store/spare.h"

#include <algorithm>
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
  s[3] = uint8_t(~((h.commit ? kSpareFlagCommit : 0) | (h.group ? kSpareFlagGroup : 0)));
  le::put32(s + 4, h.lpn);
  le::put64(s + 8, h.seq);
  le::put32(s + 16, h.data_crc);
  le::put32(s + 20, h.aux);
  le::put32(s + 28, crc32c(s + 1, 23));
}

SpareState spare_decode(std::span<const uint8_t> spare, SpareHeader* h) {
  const uint8_t* s = spare.data();
  if (all_ff(spare.first(kSpareBytesUsed))) return SpareState::kErased;
  if (le::get32(s + 28) != crc32c(s + 1, 23) || s[2] != kSpareVersion) return SpareState::kCorrupt;
  const uint8_t t = s[1];
  if (t != uint8_t(PageType::kSuperblock) && t != uint8_t(PageType::kBase) &&
      t != uint8_t(PageType::kDifferential) && t != uint8_t(PageType::kIplData) &&
      t != uint8_t(PageType::kIplEmpty))
    return SpareState::kCorrupt;
  h->type = PageType(t);
  h->lpn = le::get32(s + 4);
  h->seq = le::get64(s + 8);
  h->data_crc = le::get32(s + 16);
  h->aux = le::get32(s + 20);
  h->commit = (~s[3]) & kSpareFlagCommit;
  h->group = (~s[3]) & kSpareFlagGroup;
  h->obsolete = s[kSpareObsoleteAt] != 0xFF;
  return SpareState::kValid;
}

}  // namespace pdl
