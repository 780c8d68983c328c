// crc32c_x86.cc — CRC-32C by the SSE4.2 crc32 instruction: one chain, or three interleaved lanes.
//
// The crc32 instruction has a latency of about three cycles but can start one per cycle, so a
// single chain (each step needs the previous register) runs at a third of the instruction's
// throughput. The interleaved path cuts a block of 3·L bytes into lanes A, B, C, runs three
// independent chains (A from the incoming register, B and C from 0) and joins them.
//
// Why the join works. Bit-reflected as the instruction is, a 32-bit register r stands for
// the polynomial r(x) = sum r_i·x^(31-i) over GF(2), and feeding L bytes D into it gives
//   crc(r, D) = r·x^(8L) + crc(0, D)   (mod P, the Castagnoli polynomial),
// because the CRC is linear in (register, data) and zero data only shifts the register. So
//   crc(r, A B C) = crc(r, A)·x^(16L) + crc(0, B)·x^(8L) + crc(0, C)          (mod P).
// Multiplying a register by x^(8L) mod P: the carry-less product of two reflected 32-bit
// values a and k, read as a reflected 64-bit value, is x·a(x)·k(x); crc32 of a 64-bit word w
// from register 0 is w(x)·x^32 mod P. With k = x^(8L-33) mod P,
//   crc32_u64(0, clmul(a, k)) = a·x^(8L) mod P,
// and one crc32 reduces the XOR of both products (the reduction is linear). The constants
// x^(64·j-33) mod P for lane lengths of j words are computed at compile time (kShift below);
// the tests check the result against the table implementation, which shares nothing with it.
#include "flash/common/crc32c_paths.h"

#if defined(__x86_64__)

#include <algorithm>
#include <array>
#include <cstring>

#include <immintrin.h>

namespace pdl::detail {
namespace {

constexpr uint32_t kReflectedPoly = 0x82F63B78u;  // P without x^32, bit i = coefficient x^(31-i)

// A lane is at most kMaxLaneWords 8-byte words (longer inputs run block after block) and at
// least kMinLaneWords: below that the join costs more than the parallel lanes save, and the
// whole input runs as one chain.
constexpr size_t kMaxLaneWords = 256;  // 2 KiB lanes: a 4 KiB page is one block
constexpr size_t kMinLaneWords = 3;    // inputs of 72 bytes and more are split

// x86_crc32c_isal hands inputs of this many bytes and more to ISA-L (crc32c_isal.cc): from
// there its AVX-512 folding beats three lanes (`pdl-bench --exp codec`, docs/results.md).
constexpr size_t kIsalFrom = 256;

// kShift[j] = x^(64·j - 33) mod P, reflected, for j = 1 .. 2·kMaxLaneWords: the multiplier
// that shifts a register over j words (see the header comment). Built from x^31 by repeated
// multiplication by x (one step of the bitwise CRC: shift right, reduce by P on carry).
struct ShiftTable {
  std::array<uint32_t, 2 * kMaxLaneWords + 1> k{};
  constexpr ShiftTable() {
    uint32_t v = 1u;  // bit 0: x^31 = x^(64·1 - 33)
    k[1] = v;
    for (size_t j = 2; j < k.size(); j++) {
      for (int s = 0; s < 64; s++) v = (v & 1) ? (v >> 1) ^ kReflectedPoly : v >> 1;  // ·x
      k[j] = v;
    }
  }
};
constexpr ShiftTable kShift;

inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint16_t load16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// One chain over the raw register; the 0..7-byte tail in at most three steps (4, 2, 1 bytes).
__attribute__((target("sse4.2"))) inline uint32_t chain(const uint8_t* p, size_t n, uint32_t reg) {
  uint64_t c = reg;
  for (; n >= 8; p += 8, n -= 8) c = _mm_crc32_u64(c, load64(p));
  uint32_t r = uint32_t(c);
  if (n == 0) [[likely]]
    return r;
  if (n & 4) r = _mm_crc32_u32(r, load32(p)), p += 4;
  if (n & 2) r = _mm_crc32_u16(r, load16(p)), p += 2;
  if (n & 1) r = _mm_crc32_u8(r, *p);
  return r;
}

// reg·x^(64·words) mod P for words in [1, 2·kMaxLaneWords], as described in the header.
__attribute__((target("sse4.2,pclmul"))) inline __m128i shift_product(uint32_t reg,
                                                                        size_t words) {
  return _mm_clmulepi64_si128(_mm_cvtsi32_si128(int(reg)), _mm_cvtsi32_si128(int(kShift.k[words])),
                              0x00);
}

// Three lanes per block while the input is long enough, then one chain; raw register.
__attribute__((target("sse4.2,pclmul"))) inline uint32_t interleaved(const uint8_t* p, size_t n,
                                                                      uint32_t reg) {
  while (n >= 3 * 8 * kMinLaneWords) {
    const size_t words = std::min(n / 24, kMaxLaneWords);
    const size_t lane = 8 * words;
    const uint8_t* b = p + lane;
    const uint8_t* c = b + lane;
    uint64_t ra = reg, rb = 0, rc = 0;
    for (size_t i = 0; i < lane; i += 8) {
      ra = _mm_crc32_u64(ra, load64(p + i));
      rb = _mm_crc32_u64(rb, load64(b + i));
      rc = _mm_crc32_u64(rc, load64(c + i));
    }
    const __m128i joined =
        _mm_xor_si128(shift_product(uint32_t(ra), 2 * words), shift_product(uint32_t(rb), words));
    reg = uint32_t(rc) ^ uint32_t(_mm_crc32_u64(0, uint64_t(_mm_cvtsi128_si64(joined))));
    p += 3 * lane;
    n -= 3 * lane;
  }
  return chain(p, n, reg);
}

}  // namespace

bool x86_has_sse42() { return __builtin_cpu_supports("sse4.2"); }
bool x86_has_sse42_pclmul() {
  return __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul");
}

__attribute__((target("sse4.2"))) uint32_t x86_crc32c_chain(const uint8_t* p, size_t n,
                                                             uint32_t crc) {
  return ~chain(p, n, ~crc);
}

__attribute__((target("sse4.2,pclmul"))) uint32_t x86_crc32c_interleaved(const uint8_t* p,
                                                                           size_t n,
                                                                           uint32_t crc) {
  return ~interleaved(p, n, ~crc);
}

__attribute__((target("sse4.2,pclmul"))) uint32_t x86_crc32c_isal(const uint8_t* p, size_t n,
                                                                    uint32_t crc) {
  return n >= kIsalFrom ? isal_crc32c(p, n, crc) : ~interleaved(p, n, ~crc);
}

}  // namespace pdl::detail

#endif  // __x86_64__
