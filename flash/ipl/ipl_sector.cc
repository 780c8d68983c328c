// ipl_sector.cc — encoding, decoding and applying IPL log sectors and records.
#include "flash/ipl/ipl_sector.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/store/store_params.h"

namespace pdl {
namespace {

constexpr uint16_t kMagic = 0x4C49;
constexpr uint8_t kVersion = 1;
constexpr size_t kCrcAt = 24;
constexpr size_t kRun = 4;  // offset u16 + length u16

uint32_t sector_crc(const uint8_t* s, std::span<const uint8_t> payload) {
  return crc32c(payload.data(), payload.size(), crc32c(s, kCrcAt));
}

}  // namespace

void sector_encode(SectorHeader h, std::span<const uint8_t> payload, std::span<uint8_t> sector) {
  std::fill(sector.begin(), sector.end(), 0xFF);
  uint8_t* s = sector.data();
  h.len = uint16_t(payload.size());
  le::put16(s, kMagic);
  s[2] = h.flags;
  s[3] = kVersion;
  le::put32(s + 4, h.lbn);
  le::put16(s + 8, h.slot);
  s[10] = h.idx;
  s[11] = h.count;
  le::put64(s + 12, h.seq);
  le::put16(s + 20, h.len);
  le::put16(s + 22, 0);
  if (!payload.empty()) std::memcpy(s + kSectorHeader, payload.data(), payload.size());
  le::put32(s + kCrcAt, sector_crc(s, payload));
}

SectorState sector_decode(std::span<const uint8_t> sector, SectorHeader* h,
                          std::span<const uint8_t>* payload) {
  const uint8_t* s = sector.data();
  if (std::all_of(sector.begin(), sector.end(), [](uint8_t b) { return b == 0xFF; }))
    return SectorState::kErased;
  if (le::get16(s) != kMagic || s[3] != kVersion) return SectorState::kCorrupt;
  const uint16_t len = le::get16(s + 20);
  if (len > sector.size() - kSectorHeader) return SectorState::kCorrupt;
  const std::span<const uint8_t> p = sector.subspan(kSectorHeader, len);
  if (le::get32(s + kCrcAt) != sector_crc(s, p)) return SectorState::kCorrupt;
  h->flags = s[2];
  h->lbn = le::get32(s + 4);
  h->slot = le::get16(s + 8);
  h->idx = s[10];
  h->count = s[11];
  h->seq = le::get64(s + 12);
  h->len = len;
  if (h->count == 0 || h->idx >= h->count) return SectorState::kCorrupt;
  *payload = p;
  return SectorState::kValid;
}

Status log_apply(std::span<const uint8_t> records, std::span<uint8_t> page) {
  size_t i = 0;
  while (i < records.size()) {
    if (records.size() - i < kRun)
      return Status::error(Errc::kCorrupt, "log record: truncated run header");
    const size_t off = le::get16(records.data() + i), len = le::get16(records.data() + i + 2);
    i += kRun;
    if (len == 0 || len > records.size() - i || off + len > page.size())
      return Status::error(Errc::kCorrupt, "log record: run at " + std::to_string(off) +
                                               " of " + std::to_string(len) + " bytes is invalid");
    std::memcpy(page.data() + off, records.data() + i, len);
    i += len;
  }
  return Status::ok();
}

bool log_page_decodes(std::span<const uint8_t> page, size_t sector_size) {
  for (size_t at = 0; at + sector_size <= page.size(); at += sector_size) {
    SectorHeader h;
    std::span<const uint8_t> payload;
    if (sector_decode(page.subspan(at, sector_size), &h, &payload) == SectorState::kCorrupt)
      return false;
  }
  return true;
}

Status walk_log(std::span<const uint8_t> log, size_t sector_size, uint32_t used, uint32_t lbn,
                const LogWriteFn& fn) {
  auto sector = [&](uint32_t i) { return log.subspan(size_t(i) * sector_size, sector_size); };
  std::span<const uint8_t> parts[256];
  uint32_t i = 0;
  while (i < used) {
    SectorHeader h;
    if (sector_decode(sector(i), &h, &parts[0]) != SectorState::kValid) {
      i++;
      continue;
    }
    if (h.lbn != lbn)
      return Status::error(Errc::kCorrupt, "log sector of logical block " + std::to_string(lbn) +
                                               " names logical block " + std::to_string(h.lbn));
    bool complete = h.idx == 0 && i + h.count <= used;
    for (uint32_t j = 1; complete && j < h.count; j++) {
      SectorHeader n;
      complete = sector_decode(sector(i + j), &n, &parts[j]) == SectorState::kValid &&
                 n.seq == h.seq && n.idx == j && n.count == h.count && n.lbn == h.lbn &&
                 n.slot == h.slot && n.flags == h.flags;
    }
    if (!complete) {
      i++;
      continue;
    }
    PDL_TRY(fn(h, std::span<const std::span<const uint8_t>>(parts, h.count)));
    i += h.count;
  }
  return Status::ok();
}

void LogSplitter::clear() {
  buf_.clear();
  ends_.clear();
  records_ = 0;
}

void LogSplitter::add(uint32_t offset, std::span<const uint8_t> bytes) {
  records_++;
  while (!bytes.empty()) {
    const size_t start = ends_.size() < 2 ? 0 : ends_[ends_.size() - 2];  // the open payload's
    size_t room = ends_.empty() ? 0 : cap_ - (buf_.size() - start);
    if (room < kRun + 1) {  // open a new payload
      ends_.push_back(buf_.size());
      room = cap_;
    }
    const size_t n = std::min(bytes.size(), room - kRun);
    uint8_t hdr[kRun];
    le::put16(hdr, uint16_t(offset));
    le::put16(hdr + 2, uint16_t(n));
    buf_.insert(buf_.end(), hdr, hdr + kRun);
    buf_.insert(buf_.end(), bytes.begin(), bytes.begin() + ptrdiff_t(n));
    ends_.back() = buf_.size();
    offset += uint32_t(n);
    bytes = bytes.subspan(n);
  }
}

void LogSplitter::add_runs(std::span<const uint8_t> runs) {
  size_t i = 0;
  while (i + kRun <= runs.size()) {
    const uint32_t off = le::get16(runs.data() + i), len = le::get16(runs.data() + i + 2);
    add(off, runs.subspan(i + kRun, len));
    i += kRun + len;
  }
}

std::span<const uint8_t> LogSplitter::payload(size_t i) const {
  const size_t start = i == 0 ? 0 : ends_[i - 1];
  return std::span<const uint8_t>(buf_).subspan(start, ends_[i] - start);
}

}  // namespace pdl
