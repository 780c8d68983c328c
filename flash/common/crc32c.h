// crc32c.h — CRC-32C (Castagnoli), the checksum of every data area and spare area on flash.
//
// Four implementations compute the same function; crc32c() picks the fastest the CPU has,
// once, at the first call:
//   kIsal         inputs of 256 bytes and more by ISA-L's crc32_iscsi (Debian libisal), which
//                 folds with AVX-512 VPCLMULQDQ; shorter ones as kInterleaved (CPUs with
//                 AVX-512 VPCLMULQDQ only; crc32c_isal.cc)
//   kInterleaved  SSE4.2 crc32 over three lanes at once, lanes joined by a carry-less multiply
//                 (PCLMULQDQ); short inputs and tails run as one chain (crc32c_x86.cc)
//   kChain        SSE4.2 crc32 as one dependency chain (CPUs with SSE4.2 but no PCLMULQDQ)
//   kPortable     slicing-by-8 tables (any CPU)
// Tests check every implementation the CPU has against the published vectors and each other.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pdl {

// CRC-32C of [data, data+n), continuing from a previous crc (0 to start):
// crc32c(b, n, crc32c(a, m)) == CRC-32C of a followed by b.
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);

// The portable table implementation, exposed for tests.
uint32_t crc32c_portable(const void* data, size_t n, uint32_t crc = 0);

// The implementations behind crc32c(), named so tests and the benchmark can check and time
// each one.
enum class Crc32cPath { kPortable, kChain, kInterleaved, kIsal };
const char* crc32c_path_name(Crc32cPath path);
// Whether this CPU can run `path` (kPortable always can).
bool crc32c_path_available(Crc32cPath path);
// The path crc32c() uses on this CPU.
Crc32cPath crc32c_selected_path();
// The function computing `path` (the portable one if the CPU cannot run `path`), as crc32c()
// calls it: for the benchmark to time without a look-up per call.
using Crc32cFn = uint32_t (*)(const uint8_t* data, size_t n, uint32_t crc);
Crc32cFn crc32c_function(Crc32cPath path);
// CRC-32C by `path`: crc32c_function(path) on `data`.
uint32_t crc32c_by(Crc32cPath path, const void* data, size_t n, uint32_t crc = 0);

}  // namespace pdl
