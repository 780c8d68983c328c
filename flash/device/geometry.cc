// geometry.cc — defaults and validation of the chip's geometry and timing.
#include "flash/device/geometry.h"

#include <cstdio>

namespace pdl {

Geometry Geometry::resolved() const {
  Geometry g = *this;
  if (!g.page_data) g.page_data = 2048;
  if (!g.page_spare) g.page_spare = g.page_data / 32 < 32 ? 32 : g.page_data / 32;
  if (!g.pages_per_block) g.pages_per_block = 64;
  if (!g.blocks) g.blocks = 1024;
  if (!g.partial_programs) g.partial_programs = 4;
  if (!g.read_us) g.read_us = 110;
  if (!g.program_us) g.program_us = 1010;
  if (!g.erase_us) g.erase_us = 1500;
  if (!g.nvm_latency_ns) g.nvm_latency_ns = 78;
  if (!g.nvm_read_ns) g.nvm_read_ns = 206;
  if (!g.nvm_write_ns) g.nvm_write_ns = 7100;
  return g;
}

Status Geometry::validate() const {
  auto bad = [](const char* what) { return Status::error(Errc::kInvalidArgument, what); };
  if (page_data < 512 || page_data > 32768 || (page_data & (page_data - 1)))
    return bad("page data size must be a power of two from 512 to 32768 bytes");
  if (page_spare < 32 || page_spare > 4096) return bad("page spare size must be 32..4096 bytes");
  if (pages_per_block < 2 || pages_per_block > 1024)
    return bad("pages per block must be 2..1024");
  if (blocks < 8) {
    // Name the real minimum for this geometry: the size it takes, in the units a user types.
    const uint64_t block = uint64_t(page_data) * pages_per_block, least = 8 * block;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "a chip needs at least 8 erase blocks: size %llu%s or more with %u-byte pages "
                  "and %u pages per block (this one has %u)",
                  (unsigned long long)(least % (1u << 20) ? least >> 10 : least >> 20),
                  least % (1u << 20) ? "K" : "M", page_data, pages_per_block, blocks);
    return Status::error(Errc::kInvalidArgument, buf);
  }
  if (total_pages() >= kNoPpa) return bad("chip has too many pages for 32-bit addresses");
  if (partial_programs < 1 || partial_programs > 255) return bad("NOP must be 1..255");
  if (nvm_bytes > kMaxNvmBytes || nvm_bytes % kNvmWord)
    return bad("nvm size must be a multiple of 8 bytes, at most 1 GiB");
  if (nvm_bytes && (nvm_read_ns <= nvm_latency_ns || nvm_write_ns <= nvm_latency_ns))
    return bad("nvm read and write times per 32 bytes must exceed the nvm latency");
  return Status::ok();
}

std::string Geometry::describe() const {
  char buf[160];
  double mib = double(data_bytes()) / (1024.0 * 1024.0);
  std::snprintf(buf, sizeof buf, "%u+%u B pages, %u pages/block, %u blocks (%.0f MiB)", page_data,
                page_spare, pages_per_block, blocks, mib);
  std::string s = buf;
  if (nvm_bytes) {
    std::snprintf(buf, sizeof buf, " + %u KiB NVM", nvm_bytes >> 10);
    if (nvm_bytes % 1024) std::snprintf(buf, sizeof buf, " + %u B NVM", nvm_bytes);
    s += buf;
  }
  return s;
}

}  // namespace pdl
