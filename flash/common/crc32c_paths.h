// crc32c_paths.h — the implementations behind crc32c() (internal to flash/common).
//
// Each takes and returns a CRC-32C value exactly as crc32c() does (the register inverted), so
// any of them may continue what another began. Call one only when crc32c_path_available()
// says the CPU can run its path.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pdl::detail {

#if defined(__x86_64__)
bool x86_has_sse42();
bool x86_has_sse42_pclmul();

// SSE4.2 crc32, one dependency chain: 8 bytes per instruction latency (needs SSE4.2).
uint32_t x86_crc32c_chain(const uint8_t* p, size_t n, uint32_t crc);

// SSE4.2 crc32 over three lanes at once, joined by a carry-less multiply; inputs too short
// to split run as one chain (needs SSE4.2 and PCLMULQDQ).
uint32_t x86_crc32c_interleaved(const uint8_t* p, size_t n, uint32_t crc);

// Inputs of 256 bytes and more by isal_crc32c, shorter ones as x86_crc32c_interleaved (needs
// what x86_has_isal_folding() checks: SSE4.2, PCLMULQDQ, and the AVX-512 VPCLMULQDQ with which
// ISA-L outruns the crc32 instruction; crc32c_isal.cc).
bool x86_has_isal_folding();
uint32_t x86_crc32c_isal(const uint8_t* p, size_t n, uint32_t crc);
#endif

// ISA-L's crc32_iscsi (Debian libisal), any length (crc32c_isal.cc).
uint32_t isal_crc32c(const uint8_t* p, size_t n, uint32_t crc);

}  // namespace pdl::detail
