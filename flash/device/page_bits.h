// page_bits.h — the emulator's byte loops over stored (inverted: stored = ~flash) pages: a
// page read copies and inverts, a program checks the 1->0 rule and ORs the new bits in.
// These loops are most of the emulator's host time (a page is 2-4 KiB and a SQLite
// transaction reads and programs several), so they run 32 bytes at a time (GCC vector
// extensions, with an AVX2 clone picked at load time where the CPU has it).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pdl::detail {

// p[i] = ~p[i] for i < n.
void invert(uint8_t* p, size_t n);
// dst[i] = ~src[i] for i < n (dst == src, or ranges that do not overlap).
void invert_copy(uint8_t* dst, const uint8_t* src, size_t n);
// The index of the first byte where programming `flash_new` over `stored` would turn a 0 bit
// back to 1 (flash_new & stored != 0), or n if none.
size_t first_violation(const uint8_t* stored, const uint8_t* flash_new, size_t n);
// stored[i] |= ~flash_new[i]: programming ANDs flash bits, so it ORs the inverted stored bits.
void program_bits(uint8_t* stored, const uint8_t* flash_new, size_t n);

}  // namespace pdl::detail
