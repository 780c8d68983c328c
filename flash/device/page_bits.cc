// page_bits.cc — the byte loops of page_bits.h, 32 bytes a step (two 16-byte vectors, which
// the AVX2 clone may fuse), then 8, then 1.
#include "flash/device/page_bits.h"

#include <cstring>

namespace pdl::detail {
namespace {

typedef uint64_t V __attribute__((vector_size(16)));  // 16 bytes: an SSE2 register, no ABI question

inline V loadv(const uint8_t* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storev(uint8_t* p, V v) { std::memcpy(p, &v, sizeof v); }
inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void store64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__)
#define PDL_PAGE_BITS_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PDL_PAGE_BITS_CLONES
#endif

PDL_PAGE_BITS_CLONES void invert_copy(uint8_t* dst, const uint8_t* src, size_t n) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const V a = loadv(src + i), b = loadv(src + i + 16);
    storev(dst + i, ~a);
    storev(dst + i + 16, ~b);
  }
  for (; i + 8 <= n; i += 8) store64(dst + i, ~load64(src + i));
  for (; i < n; i++) dst[i] = uint8_t(~src[i]);
}

void invert(uint8_t* p, size_t n) { invert_copy(p, p, n); }

PDL_PAGE_BITS_CLONES size_t first_violation(const uint8_t* stored, const uint8_t* flash_new,
                                             size_t n) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const V x = (loadv(stored + i) & loadv(flash_new + i)) |
                (loadv(stored + i + 16) & loadv(flash_new + i + 16));
    if ((x[0] | x[1]) != 0) break;
  }
  for (; i < n; i++)
    if (stored[i] & flash_new[i]) return i;
  return n;
}

PDL_PAGE_BITS_CLONES void program_bits(uint8_t* stored, const uint8_t* flash_new, size_t n) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const V a = loadv(stored + i) | ~loadv(flash_new + i);
    const V b = loadv(stored + i + 16) | ~loadv(flash_new + i + 16);
    storev(stored + i, a);
    storev(stored + i + 16, b);
  }
  for (; i + 8 <= n; i += 8) store64(stored + i, load64(stored + i) | ~load64(flash_new + i));
  for (; i < n; i++) stored[i] |= uint8_t(~flash_new[i]);
}

}  // namespace pdl::detail
