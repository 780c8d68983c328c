// differential.cc — the page-differential codec: bitmap scan for changes, inline-copy apply.
//
// Encoding (see differential.h): runs [offset u16][length u16][bytes], little-endian, sorted.
// The encoder emits the canonical form, which is also the smallest one for this format:
//   * every run starts and ends on a changed byte (unchanged bytes appear only inside a run);
//   * two changed stretches separated by fewer than kRunHeader (0..3) equal bytes share one
//     run (the gap bytes cost less than a header); a gap of kRunHeader or more starts a new run,
//     so consecutive runs are always >= kRunHeader bytes apart (never overlapping or adjacent).
// It never writes at or past out.size(): a run is written only after checking that its header
// and bytes fit. Pages of different sizes or over 65535 bytes (a broken precondition) assert,
// and without asserts return kDiffTooBig rather than touch memory out of bounds.
//
// The decoder accepts any run list that is in bounds and sorted: a run must start at or after
// the end of the previous one. Adjacent runs (offset == previous end), which the encoder never
// produces, are accepted — the result is still well defined. Rejected with Errc::kCorrupt:
// a truncated header or payload, a zero-length run, a run past the page end, and a run that
// starts before the previous run's end (unsorted or overlapping). It reads only inside `runs`
// and writes only inside `page`.
//
// Speed (the target is encode + apply >= 4 GB/s of page bytes at ~2 % changed bytes):
//   1. a bitmap of changed bytes is built 32 bytes a step (AVX2 compare + movemask; SSE2 16
//      bytes a step, or a portable 8-byte SWAR step, where AVX2 is missing);
//   2. run membership (run_bits: changed, or inside a gap of < kRunHeader bytes) is computed
//      for 64 bytes per 64-bit word with shifts, four words a step under AVX2;
//   3. run boundaries (the transitions of run membership) are extracted with
//      count-trailing-zeros and emitted in pairs; short copies (the usual run is a few bytes)
//      use overlapping fixed-size moves instead of a memcpy call. apply is one such copy a run.
// On x86-64 the encoder is compiled twice, generic and for AVX2+BMI+POPCNT, and picked once at
// run time (__builtin_cpu_supports). Define PDL_DIFF_GENERIC_ONLY to build only the generic one.
// Stack use of encode: ~10 KB (the bitmap of a 64 KiB page).
#include "flash/codec/differential.h"

#include <bit>
#include <cassert>
#include <cstddef>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(PDL_DIFF_GENERIC_ONLY)
#define PDL_DIFF_X86_DISPATCH 1
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "flash/common/le.h"

namespace pdl {
namespace {

constexpr size_t kMaxPage = 0xFFFF;  // offsets and lengths are u16
// Change bitmap layout: m[0] = 0 (the word "before" the page), m[1 + w] = page word w, then
// kMapPad zero words (room for the last end boundary and for 4-word vector reads).
constexpr size_t kMapPad = 8;
constexpr size_t kMapWords = 1 + (kMaxPage + 63) / 64 + kMapPad;
constexpr size_t kBlock = 8;  // map words per boundary-extraction block (a multiple of 4)

template <typename T>
inline T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
inline void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// memcpy for the typical few-byte run: two overlapping fixed-size moves, no call.
inline void copy_run(uint8_t* dst, const uint8_t* src, size_t n) {
  if (n >= 16) {
    std::memcpy(dst, src, n);
  } else if (n >= 8) {
    const uint64_t x = load<uint64_t>(src), y = load<uint64_t>(src + n - 8);
    store(dst, x);
    store(dst + n - 8, y);
  } else if (n >= 4) {
    const uint32_t x = load<uint32_t>(src), y = load<uint32_t>(src + n - 4);
    store(dst, x);
    store(dst + n - 4, y);
  } else if (n >= 2) {
    const uint16_t x = load<uint16_t>(src), y = load<uint16_t>(src + n - 2);
    store(dst, x);
    store(dst + n - 2, y);
  } else if (n == 1) {
    *dst = *src;
  }
}

// Builds words [0, n / 64) of the change map: bit j of map[w] <- a[64w + j] != b[64w + j].
inline void map_full_words(const uint8_t* a, const uint8_t* b, size_t n, uint64_t* map) {
  for (size_t w = 0; w < n / 64; w++) {
    const uint8_t* pa = a + 64 * w;
    const uint8_t* pb = b + 64 * w;
#if defined(__SSE2__)
    auto eq16 = [&](int k) {  // bit j <- byte 16k + j equal
      const __m128i va = _mm_loadu_si128(reinterpret_cast<const __m128i*>(pa + 16 * k));
      const __m128i vb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(pb + 16 * k));
      return uint64_t(uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(va, vb))));
    };
    map[w] = ~(eq16(0) | eq16(1) << 16 | eq16(2) << 32 | eq16(3) << 48);
#else
    uint64_t m = 0;
    for (int k = 0; k < 8; k++) {
      // High bit of each byte <- byte nonzero (no carry crosses bytes); then the multiply
      // gathers the 8 high bits into the top byte, byte j's flag at bit j.
      const uint64_t x = le::get64(pa + 8 * k) ^ le::get64(pb + 8 * k);
      const uint64_t lo7 = 0x7F7F7F7F7F7F7F7Full;
      const uint64_t flags = (((x & lo7) + lo7) | x) & ~lo7;
      m |= (((flags >> 7) * 0x0102040810204080ull) >> 56) << (8 * k);
    }
    map[w] = m;
#endif
  }
}

#if PDL_DIFF_X86_DISPATCH
__attribute__((target("avx2"))) void map_full_words_avx2(const uint8_t* a, const uint8_t* b,
                                                         size_t n, uint64_t* map) {
  for (size_t w = 0; w < n / 64; w++) {
    const uint8_t* pa = a + 64 * w;
    const uint8_t* pb = b + 64 * w;
    auto eq32 = [&](int k) __attribute__((target("avx2"))) {
      const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pa + 32 * k));
      const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pb + 32 * k));
      return uint64_t(uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(va, vb))));
    };
    map[w] = ~(eq32(0) | eq32(1) << 32);
  }
}
#endif

// Completes the map after its full words: the tail word (bits past n clear) and the zero
// padding. Returns the number of words covering the page.
inline size_t map_finish(const uint8_t* a, const uint8_t* b, size_t n, uint64_t* map) {
  size_t words = n / 64;
  if (n % 64) {
    uint64_t m = 0;
    for (size_t i = 64 * words; i < n; i++) m |= uint64_t(a[i] != b[i]) << (i % 64);
    map[words++] = m;
  }
  for (size_t k = 0; k < kMapPad; k++) map[words + k] = 0;
  return words;
}

// Bit p <- byte p is inside a run: changed, or in a gap of < kRunHeader unchanged bytes
// between two changed ones (the gap is filled when its nearest changes are j before and
// k after with j + k <= kRunHeader). c: the map word; p, n: the words before and after.
inline uint64_t run_bits(uint64_t p, uint64_t c, uint64_t n) {
  static_assert(kRunHeader == 4);
  const uint64_t l1 = c << 1 | p >> 63, l2 = c << 2 | p >> 62, l3 = c << 3 | p >> 61;
  const uint64_t r1 = c >> 1 | n << 63, r2 = c >> 2 | n << 62, r3 = c >> 3 | n << 61;
  return c | (l1 & (r1 | r2 | r3)) | (l2 & (r1 | r2)) | (l3 & r1);
}

// r[i] <- run_bits of map word i, for i < count (<= kBlock); map[-1] and map[count] exist.
inline void run_words(const uint64_t* map, size_t count, uint64_t* r) {
  for (size_t i = 0; i < count; i++) r[i] = run_bits(map[i - 1], map[i], map[i + 1]);
}

#if PDL_DIFF_X86_DISPATCH
// The same, four words a step; may compute (and read) up to 3 words past count.
__attribute__((target("avx2"))) void run_words_avx2(const uint64_t* map, size_t count,
                                                   uint64_t* r) {
  for (size_t i = 0; i < count; i += 4) {
    auto ld = [&](std::ptrdiff_t d) __attribute__((target("avx2"))) {
      return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(map + i + d));
    };
    const __m256i p = ld(-1), c = ld(0), n = ld(1);
    auto shl = [&](int k) __attribute__((target("avx2"))) {  // c << k | p >> (64 - k)
      return _mm256_or_si256(_mm256_sll_epi64(c, _mm_cvtsi32_si128(k)),
                             _mm256_srl_epi64(p, _mm_cvtsi32_si128(64 - k)));
    };
    auto shr = [&](int k) __attribute__((target("avx2"))) {  // c >> k | n << (64 - k)
      return _mm256_or_si256(_mm256_srl_epi64(c, _mm_cvtsi32_si128(k)),
                             _mm256_sll_epi64(n, _mm_cvtsi32_si128(64 - k)));
    };
    const __m256i l1 = shl(1), l2 = shl(2), l3 = shl(3);
    const __m256i r1 = shr(1), r2 = shr(2), r3 = shr(3);
    const __m256i r12 = _mm256_or_si256(r1, r2);
    __m256i v = _mm256_or_si256(c, _mm256_and_si256(l1, _mm256_or_si256(r12, r3)));
    v = _mm256_or_si256(v, _mm256_and_si256(l2, r12));
    v = _mm256_or_si256(v, _mm256_and_si256(l3, r1));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(r + i), v);
  }
}
#endif

// Appends the positions of x's set bits to ev; returns the new count. The first four slots
// are written whatever the count (junk past it: ev needs 4 spare slots); measured faster than
// a loop per bit, mostly at 10 % and more changed bytes.
inline size_t extract_bits(uint64_t x, uint32_t base, uint32_t* ev, size_t ne) {
  const size_t cnt = size_t(std::popcount(x));
  uint32_t* e = ev + ne;
  e[0] = base + uint32_t(std::countr_zero(x));  // countr_zero(0) is 64: defined junk
  x &= x - 1;
  e[1] = base + uint32_t(std::countr_zero(x));
  x &= x - 1;
  e[2] = base + uint32_t(std::countr_zero(x));
  x &= x - 1;
  e[3] = base + uint32_t(std::countr_zero(x));
  x &= x - 1;
  for (size_t k = 4; k < cnt; k++) {
    e[k] = base + uint32_t(std::countr_zero(x));
    x &= x - 1;
  }
  return ne + cnt;
}

// Emits the runs of a finished change map (layout above) into o[0, cap); returns the size or
// kDiffTooBig. Run boundaries are the transitions of run membership: a start where a run
// begins, an end (one past its last byte) where it stops. They alternate start, end, start,
// ... through the page; they are gathered a block of words at a time, then emitted in pairs.
template <void (*kRunWords)(const uint64_t*, size_t, uint64_t*)>
[[gnu::always_inline]] inline size_t emit_runs(const uint64_t* m, size_t words,
                                               const uint8_t* page, uint8_t* o, size_t cap) {
  const uint64_t* map = m + 1;
  uint32_t ev[kBlock * 64 + 1 + 4];  // boundaries (+1 carried start, +4 junk slots)
  uint64_t r[kBlock];
  size_t ne = 0;
  size_t used = 0;
  uint64_t prev_top = 0;  // run bit of the byte before the current word
  for (size_t w0 = 0; w0 <= words; w0 += kBlock) {  // map[words] may hold the last end
    const size_t count = w0 + kBlock <= words + 1 ? kBlock : words + 1 - w0;
    uint64_t any = prev_top;
    for (size_t i = 0; i < count; i++) any |= map[w0 + i];
    if (any == 0) continue;  // nothing changed here and no run open: no boundaries
    kRunWords(map + w0, count, r);
    for (size_t i = 0; i < count; i++) {
      ne = extract_bits(r[i] ^ (r[i] << 1 | prev_top), uint32_t(64 * (w0 + i)), ev, ne);
      prev_top = r[i] >> 63;
    }
    size_t k = 0;
    for (; k + 1 < ne; k += 2) {
      const size_t start = ev[k], len = ev[k + 1] - start;
      if (cap - used < kRunHeader || cap - used - kRunHeader < len) return kDiffTooBig;
      le::put16(o + used, uint16_t(start));
      le::put16(o + used + 2, uint16_t(len));
      copy_run(o + used + kRunHeader, page + start, len);
      used += kRunHeader + len;
    }
    if (k < ne) ev[0] = ev[k];  // a run still open: carry its start
    ne -= k;
  }
  return used;
}

using EncodeFn = size_t (*)(const uint8_t*, const uint8_t*, size_t, uint8_t*, size_t);

size_t encode_generic(const uint8_t* a, const uint8_t* b, size_t n, uint8_t* o, size_t cap) {
  uint64_t m[kMapWords];
  m[0] = 0;
  map_full_words(a, b, n, m + 1);
  const size_t words = map_finish(a, b, n, m + 1);
  return emit_runs<run_words>(m, words, b, o, cap);
}

#if PDL_DIFF_X86_DISPATCH
__attribute__((target("avx2,bmi,bmi2,popcnt,lzcnt"))) size_t encode_x86v3(
    const uint8_t* a, const uint8_t* b, size_t n, uint8_t* o, size_t cap) {
  uint64_t m[kMapWords];
  m[0] = 0;
  map_full_words_avx2(a, b, n, m + 1);
  const size_t words = map_finish(a, b, n, m + 1);
  return emit_runs<run_words_avx2>(m, words, b, o, cap);
}
#endif

EncodeFn pick_encoder() {
#if PDL_DIFF_X86_DISPATCH
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
      __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt"))
    return encode_x86v3;
#endif
  return encode_generic;
}

}  // namespace

size_t diff_encode(std::span<const uint8_t> base, std::span<const uint8_t> page,
                   std::span<uint8_t> out) {
  // Preconditions (differential.h); checked even without asserts, since breaking them would
  // overrun the change bitmap or `base`.
  assert(base.size() == page.size() && page.size() <= kMaxPage);
  if (base.size() != page.size() || page.size() > kMaxPage) return kDiffTooBig;
  static const EncodeFn encode = pick_encoder();
  return encode(base.data(), page.data(), page.size(), out.data(), out.size());
}

Status diff_apply(std::span<const uint8_t> runs, std::span<uint8_t> page) {
  const uint8_t* r = runs.data();
  const size_t rn = runs.size();
  const size_t n = page.size();
  size_t pos = 0;
  size_t prev_end = 0;  // end of the previous run; the first run may start at 0
  while (pos < rn) {
    if (rn - pos < kRunHeader)
      return Status::error(Errc::kCorrupt, "differential: truncated run header");
    const size_t off = le::get16(r + pos);
    const size_t len = le::get16(r + pos + 2);
    pos += kRunHeader;
    if (len == 0) return Status::error(Errc::kCorrupt, "differential: zero-length run");
    if (off < prev_end)
      return Status::error(Errc::kCorrupt, "differential: runs unsorted or overlapping");
    if (off > n || len > n - off)
      return Status::error(Errc::kCorrupt, "differential: run past the end of the page");
    if (len > rn - pos) return Status::error(Errc::kCorrupt, "differential: truncated run");
    copy_run(page.data() + off, r + pos, len);
    pos += len;
    prev_end = off + len;
  }
  return Status::ok();
}

}  // namespace pdl
