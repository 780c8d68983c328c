// compact_image.cc — expand/compact the fuzz_image input format (compact_image.h).
#include "tests/fuzz/compact_image.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"

namespace pdl::fuzz {
namespace {

constexpr uint64_t kHeaderSize = 4096;  // docs/format.md §1
constexpr size_t kHeaderCrcAt = 64;
constexpr uint32_t kSector = 512;       // IPL log sector (docs/format.md §7)
constexpr uint32_t kSectorHeader = 28;
constexpr uint16_t kSectorMagic = 0x4C49;
constexpr uint8_t kSuperblockType = 0x5B;  // spare byte 1 (docs/format.md §3)
constexpr size_t kSuperblockCrcAt = 76;    // docs/format.md §2

uint64_t pages_offset(uint32_t blocks) {
  return (kHeaderSize + uint64_t(blocks) * 4 + 4095) / 4096 * 4096;
}

bool write_all(int fd, const uint8_t* p, size_t n, uint64_t off) {
  while (n > 0) {
    const ssize_t w = pwrite(fd, p, n, off_t(off));
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
    off += uint64_t(w);
  }
  return true;
}

}  // namespace

void fix_page_crcs(std::span<uint8_t> pages, uint32_t page_data, uint32_t page_spare) {
  const uint64_t raw = uint64_t(page_data) + page_spare;
  if (page_spare < 32 || page_data < kSuperblockCrcAt + 4 || raw == 0) return;
  for (uint64_t at = 0; at + raw <= pages.size(); at += raw) {
    uint8_t* data = pages.data() + at;
    uint8_t* spare = data + page_data;
    if (!std::all_of(spare, spare + 32, [](uint8_t b) { return b == 0xFF; })) {
      if (spare[1] == kSuperblockType)
        le::put32(data + kSuperblockCrcAt, crc32c(data, kSuperblockCrcAt));
      le::put32(spare + 16, crc32c(data, page_data));
      le::put32(spare + 28, crc32c(spare + 1, 23));
      continue;
    }
    for (uint32_t s = 0; s + kSector <= page_data; s += kSector) {  // IPL log page?
      uint8_t* sec = data + s;
      if (le::get16(sec) != kSectorMagic) continue;
      const uint32_t len = std::min<uint32_t>(le::get16(sec + 20), kSector - kSectorHeader);
      le::put32(sec + 24, crc32c(sec + kSectorHeader, len, crc32c(sec, 24)));
    }
  }
}

bool expand(std::span<const uint8_t> in, const std::string& path) {
  if (in.size() < 1 + kHeaderInput) return false;
  const uint8_t flags = in[0];
  std::vector<uint8_t> header(kHeaderSize, 0);
  std::memcpy(header.data(), in.data() + 1, kHeaderInput);
  if (flags & kFixHeaderCrc) le::put32(header.data() + kHeaderCrcAt,
                                       crc32c(header.data(), kHeaderCrcAt));
  const uint32_t page_data = le::get32(header.data() + 16);
  const uint32_t page_spare = le::get32(header.data() + 20);
  const uint32_t ppb = le::get32(header.data() + 24), blocks = le::get32(header.data() + 28);
  std::vector<uint8_t> pages(in.begin() + 1 + kHeaderInput, in.end());
  if (flags & kFixPageCrcs) fix_page_crcs(pages, page_data, page_spare);
  for (uint8_t& b : pages) b = uint8_t(~b);  // stored inverted

  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = write_all(fd, header.data(), header.size(), 0);
  // Blocks beyond what the harness may expand still get their erase table's place, so the
  // engine's own checks (not a short header read) decide.
  const uint64_t poff = pages_offset(std::min<uint32_t>(blocks, 1u << 20));
  if (ok && !pages.empty()) ok = write_all(fd, pages.data(), pages.size(), poff);
  const bool small = page_data && page_data <= (1u << 16) && page_spare <= (1u << 12) && ppb &&
                     ppb <= 4096 && blocks && blocks <= (1u << 16);  // (no overflow below)
  uint64_t full = small ? poff + (uint64_t(page_data) + page_spare) * ppb * blocks : UINT64_MAX;
  if (small && le::get32(header.data() + 8) >= 2)  // and the redo record area, nothing pending
    full = (full + 4095) / 4096 * 4096 + (32 + uint64_t(page_data) + page_spare + 4095) / 4096 * 4096;
  if (ok && full <= kMaxExpandedBytes && full > poff + pages.size())
    ok = ftruncate(fd, off_t(full)) == 0;
  close(fd);
  return ok;
}

std::vector<uint8_t> compact(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::vector<uint8_t> out(1 + kHeaderInput);
  std::vector<uint8_t> file;
  uint8_t buf[1 << 16];
  for (ssize_t r; (r = read(fd, buf, sizeof buf)) > 0;) file.insert(file.end(), buf, buf + r);
  close(fd);
  if (file.size() < kHeaderSize || std::memcmp(file.data(), "PDLNAND1", 8) != 0) return {};
  std::memcpy(out.data() + 1, file.data(), kHeaderInput);
  const uint32_t page_data = le::get32(file.data() + 16);
  const uint32_t page_spare = le::get32(file.data() + 20);
  const uint64_t raw = uint64_t(page_data) + page_spare;
  const uint64_t poff = le::get64(file.data() + 56);
  if (raw == 0 || poff > file.size()) return {};
  std::vector<uint8_t> pages(file.begin() + int64_t(poff), file.end());
  const uint64_t ppb = le::get32(file.data() + 24), blocks = le::get32(file.data() + 28);
  if (pages.size() > raw * ppb * blocks) pages.resize(raw * ppb * blocks);  // the record area
  for (uint8_t& b : pages) b = uint8_t(~b);
  pages.resize(pages.size() / raw * raw);
  while (!pages.empty() &&
         std::all_of(pages.end() - int64_t(raw), pages.end(),
                     [](uint8_t b) { return b == 0xFF; }))
    pages.resize(pages.size() - raw);
  out.insert(out.end(), pages.begin(), pages.end());
  return out;
}

}  // namespace pdl::fuzz
