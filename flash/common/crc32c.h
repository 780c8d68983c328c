// crc32c.h — CRC-32C (Castagnoli), the checksum of every data area and spare area on flash.
//
// Uses the SSE4.2 crc32 instruction when the CPU has it (checked once at run time), otherwise
// a slicing-by-8 table. Both give identical results; tests check them against known vectors.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pdl {

// CRC-32C of [data, data+n), continuing from a previous crc (0 to start).
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);

// The portable table implementation, exposed for tests.
uint32_t crc32c_portable(const void* data, size_t n, uint32_t crc = 0);

}  // namespace pdl
