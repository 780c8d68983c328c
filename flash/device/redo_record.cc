// redo_record.cc — encoding and checking of the image file's redo record (redo_record.h).
#include "flash/device/redo_record.h"

#include <cstring>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"

namespace pdl::detail {

uint64_t RedoRecord::area_bytes(uint32_t raw_page) {
  return (kHeaderBytes + raw_page + 4095) / 4096 * 4096;
}

void RedoRecord::encode_header(uint8_t* h, uint32_t sequence, uint32_t kind, uint64_t where,
                               uint32_t length, uint32_t count, std::span<const uint8_t> payload) {
  std::memset(h, 0, kHeaderBytes);
  le::put32(h, sequence);
  le::put32(h + 4, kind);
  le::put64(h + 8, where);
  le::put32(h + 16, length);
  le::put32(h + 20, count);
  le::put32(h + kCrcAt, crc32c(payload.data(), payload.size(), crc32c(h, kCrcAt)));
}

RedoRecord RedoRecord::decode(std::span<const uint8_t> area, size_t max_payload) {
  RedoRecord r;
  if (area.size() < kHeaderBytes) return r;
  const uint8_t* h = area.data();
  const uint32_t seq = le::get32(h), kind = le::get32(h + 4), length = le::get32(h + 16);
  if (seq == 0 || (kind != kProgram && kind != kErase)) return r;
  const size_t n = payload_bytes(kind, length);
  if (n > max_payload || kHeaderBytes + n > area.size()) return r;
  if (le::get32(h + kCrcAt) != crc32c(h + kHeaderBytes, n, crc32c(h, kCrcAt))) return r;
  r.sequence = seq;
  r.kind = kind;
  r.where = le::get64(h + 8);
  r.length = length;
  r.count = le::get32(h + 20);
  r.payload.assign(h + kHeaderBytes, h + kHeaderBytes + n);
  return r;
}

}  // namespace pdl::detail
