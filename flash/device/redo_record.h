// redo_record.h — the image file's redo record (docs/format.md §1): the one mutation of the
// page array being applied, kept so that a reopened image can finish it if the host process
// died half-way through.
//
// Layout (little-endian; the record area follows the page array):
//   0 u32 sequence — nonzero while the mutation is pending (written last, cleared after);
//   4 u32 kind (kProgram, kErase); 8 u64 program: page-array offset, erase: block;
//   16 u32 program: payload bytes, erase: pages in the block (bits of the payload);
//   20 u32 erase: the block's new erase count (program: 0);
//   24 u32 CRC-32C of bytes [0, 24) then the payload; 28 u32 zero;
//   32 payload: program: the stored (inverted) bytes that end up at the offset; erase: a
//      bitmap, bit p (byte p / 8, bit p % 8) set if page p is zeroed.
// Redoing a record is idempotent: it stores final bytes, it does not combine with old ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace pdl::detail {

struct RedoRecord {
  enum Kind : uint32_t { kProgram = 1, kErase = 2 };
  static constexpr size_t kHeaderBytes = 32;
  static constexpr size_t kCrcAt = 24;

  uint32_t sequence = 0;  // 0: no record pending
  uint32_t kind = 0;
  uint64_t where = 0;  // program: page-array offset; erase: block
  uint32_t length = 0;  // program: payload bytes; erase: pages in the block
  uint32_t count = 0;   // erase: new erase count
  std::vector<uint8_t> payload;

  // Bytes of the record area for raw pages of `raw_page` bytes (whole host pages).
  static uint64_t area_bytes(uint32_t raw_page);
  static size_t payload_bytes(uint32_t kind, uint32_t length) {
    return kind == kErase ? (length + 7) / 8 : length;
  }
  // The 32 header bytes for a record whose payload is `payload` (CRC included).
  static void encode_header(uint8_t* h, uint32_t sequence, uint32_t kind, uint64_t where,
                            uint32_t length, uint32_t count, std::span<const uint8_t> payload);
  // A pending, intact record from the area's first bytes; sequence 0 if none (cleared, never
  // written, torn or otherwise failing its CRC, or longer than `max_payload`).
  static RedoRecord decode(std::span<const uint8_t> area, size_t max_payload);
};

}  // namespace pdl::detail
