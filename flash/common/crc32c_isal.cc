// crc32c_isal.cc — CRC-32C by ISA-L (Intel's storage library, Debian libisal), for long inputs.
//
// On CPUs with AVX-512 and VPCLMULQDQ, ISA-L's crc32_iscsi folds the input with 512-bit
// carry-less multiplies and outruns the crc32 instruction, which three interleaved lanes
// keep busy at 8 bytes a cycle at best: measured 86 ns against 146 ns for a 4 KiB page,
// 16 against 25 for 512 bytes. Below 256 bytes it is the slower one (20 ns against 14 for
// 224 bytes, 6.5 against 3.3 for 16), and on CPUs without those instructions its
// long-input code is no faster than ours. So x86_crc32c_isal (crc32c_x86.cc) hands it only
// inputs of 256 bytes and more, and crc32c() takes that path only on such CPUs
// (`pdl-bench --exp codec` prints these figures; docs/results.md).
//
// crc32_iscsi works on the raw register (no inversion) and takes an int length: it is called
// with the inverted value, in pieces of at most 1 GiB.
#include <algorithm>

#include <isa-l/crc.h>

#include "flash/common/crc32c_paths.h"

namespace pdl::detail {

#if defined(__x86_64__)
bool x86_has_isal_folding() {
  return x86_has_sse42_pclmul() && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("vpclmulqdq");
}
#endif

uint32_t isal_crc32c(const uint8_t* p, size_t n, uint32_t crc) {
  constexpr size_t kMaxCall = size_t(1) << 30;
  while (n > 0) {
    const size_t k = std::min(n, kMaxCall);
    // crc32_iscsi only reads the buffer; its prototype lacks the const.
    crc = ~crc32_iscsi(const_cast<uint8_t*>(p), int(k), ~crc);
    p += k;
    n -= k;
  }
  return crc;
}

}  // namespace pdl::detail
