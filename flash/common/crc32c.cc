// crc32c.cc — CRC-32C: the portable slicing-by-8 tables, and the choice of implementation.
//
// The choice is made once (the first call) from what the CPU reports; the x86 paths are in
// crc32c_x86.cc and crc32c_isal.cc. Every path computes the same function: the on-flash checksums never depend
// on the machine that wrote them.
#include "flash/common/crc32c.h"

#include <array>
#include <atomic>
#include <cstring>

#include "flash/common/crc32c_paths.h"

namespace pdl {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  constexpr Tables() {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
      for (int s = 1; s < 8; s++) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
};
constexpr Tables kTables;

uint32_t portable(const uint8_t* p, size_t n, uint32_t crc) {
  uint32_t c = ~crc;
  const auto& t = kTables.t;
  while (n >= 8) {
    uint32_t lo = c ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
                       uint32_t(p[3]) << 24);
    c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
        t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xFF];
  return ~c;
}

using Impl = Crc32cFn;

// The function computing `path`, which the CPU must be able to run.
Impl impl_of(Crc32cPath path) {
  switch (path) {
    case Crc32cPath::kPortable: break;
#if defined(__x86_64__)
    case Crc32cPath::kChain: return detail::x86_crc32c_chain;
    case Crc32cPath::kInterleaved: return detail::x86_crc32c_interleaved;
    case Crc32cPath::kIsal: return detail::x86_crc32c_isal;
#else
    case Crc32cPath::kChain:
    case Crc32cPath::kInterleaved:
    case Crc32cPath::kIsal: break;
#endif
  }
  return portable;
}

// crc32c() calls through g_impl: first first_call, which chooses once and stores its choice
// (a race between two first calls stores the same function twice).
uint32_t first_call(const uint8_t* p, size_t n, uint32_t crc);
constinit std::atomic<Impl> g_impl{first_call};

uint32_t first_call(const uint8_t* p, size_t n, uint32_t crc) {
  const Impl f = impl_of(crc32c_selected_path());
  g_impl.store(f, std::memory_order_relaxed);
  return f(p, n, crc);
}

}  // namespace

const char* crc32c_path_name(Crc32cPath path) {
  switch (path) {
    case Crc32cPath::kPortable: return "portable";
    case Crc32cPath::kChain: return "sse4.2-chain";
    case Crc32cPath::kInterleaved: return "sse4.2-interleaved";
    case Crc32cPath::kIsal: return "isa-l";
  }
  return "?";
}

bool crc32c_path_available(Crc32cPath path) {
  switch (path) {
    case Crc32cPath::kPortable: return true;
#if defined(__x86_64__)
    case Crc32cPath::kChain: return detail::x86_has_sse42();
    case Crc32cPath::kInterleaved: return detail::x86_has_sse42_pclmul();
    case Crc32cPath::kIsal: return detail::x86_has_isal_folding();
#else
    case Crc32cPath::kChain:
    case Crc32cPath::kInterleaved:
    case Crc32cPath::kIsal: return false;
#endif
  }
  return false;
}

Crc32cPath crc32c_selected_path() {
  for (Crc32cPath p : {Crc32cPath::kIsal, Crc32cPath::kInterleaved, Crc32cPath::kChain})
    if (crc32c_path_available(p)) return p;
  return Crc32cPath::kPortable;
}

uint32_t crc32c_portable(const void* data, size_t n, uint32_t crc) {
  return portable(static_cast<const uint8_t*>(data), n, crc);
}

Crc32cFn crc32c_function(Crc32cPath path) {
  return impl_of(crc32c_path_available(path) ? path : Crc32cPath::kPortable);
}

uint32_t crc32c_by(Crc32cPath path, const void* data, size_t n, uint32_t crc) {
  return crc32c_function(path)(static_cast<const uint8_t*>(data), n, crc);
}

uint32_t crc32c(const void* data, size_t n, uint32_t crc) {
  return g_impl.load(std::memory_order_relaxed)(static_cast<const uint8_t*>(data), n, crc);
}

}  // namespace pdl
