// ipl_sector.h — IPL log sectors ([IPL] §3.2) and the log records inside them.
//
// A log sector is `log_sector` bytes of a log page (a store parameter: 128 .. 512, default
// kLogSector = 512, store_params.h), programmed on its own (one partial program, one NOP of the
// page). It holds part of the log of one write of one logical page — a write whose log needs k
// sectors programs k sectors sharing one sequence number, and counts only if all k are on flash
// (so a cut mid-write leaves the page old, whole). Layout
// (little-endian; docs/format.md §7):
//    0  u16  magic 0x4C49 ("IL")
//    2  u8   flags: 1 = reset (the page restarts from zeros before this write's records),
//                   2 = unmap (payload is a bitmap of data-page slots whose pages are trimmed),
//                   4 = commit (stores of superblock format 2: the sector's seq is a commit
//                       record — every seq up to it is committed; a sector of the commit log,
//                       or any sector a per-page store programs)
//    3  u8   format version (1)
//    4  u32  logical block (lbn) the sector belongs to; 0xFFFFFFFF = the commit log
//    8  u16  data-page slot within the logical block (0xFFFF for unmap sectors)
//   10  u8   index of this sector within its write, 0 .. count-1
//   11  u8   sectors in the write (count >= 1)
//   12  u64  sequence number of the write (one global counter with the data pages')
//   20  u16  payload bytes
//   22  u16  zero
//   24  u32  CRC-32C of bytes [0, 24) and the payload
//   28  payload: log records, then 0xFF to the end of the sector
// The header is the same for every sector size: a 512-byte sector carries 484 bytes of records,
// a 128-byte one 100.
// An erased sector is all 0xFF; anything else failing the checks is a torn program (garbage).
//
// Log records are physical runs `[offset u16][length u16][length bytes]` — the same run
// encoding as PDL's differential (differential.h) — but applied in order and allowed to overlap:
// a history of updates, as [IPL]'s log is, not a difference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "flash/common/status.h"

namespace pdl {

inline constexpr size_t kSectorHeader = 28;
inline constexpr uint16_t kUnmapSlot = 0xFFFF;
inline constexpr uint8_t kSectorReset = 1, kSectorUnmap = 2, kSectorCommit = 4;
// The lbn of commit-log sectors ([IPL] §5.1's transaction log): blocks of their own.
inline constexpr uint32_t kCommitLogLbn = 0xFFFFFFFFu;

struct SectorHeader {
  uint32_t lbn = 0;
  uint16_t slot = 0;
  uint8_t idx = 0, count = 1, flags = 0;
  uint64_t seq = 0;
  uint16_t len = 0;
};

enum class SectorState : uint8_t { kErased, kValid, kCorrupt };

// Encode header + payload into `sector` (one log sector: its size is the sector size; the rest
// is 0xFF). REQUIRES: payload.size() <= sector.size() - kSectorHeader.
void sector_encode(SectorHeader h, std::span<const uint8_t> payload, std::span<uint8_t> sector);
// Classify and decode one sector; on kValid *payload points into `sector`.
SectorState sector_decode(std::span<const uint8_t> sector, SectorHeader* h,
                          std::span<const uint8_t>* payload);
// True if no sector of a log page (its data area, sectors of `sector_size` bytes) is corrupt:
// each is erased or valid.
bool log_page_decodes(std::span<const uint8_t> page, size_t sector_size);

// Apply log records in order to `page`. Hostile input (truncated run, out of bounds, zero
// length) is Errc::kCorrupt.
Status log_apply(std::span<const uint8_t> records, std::span<uint8_t> page);

// One complete write found in a block's log region: its first sector's header and its
// payloads, in order.
using LogWriteFn =
    std::function<Status(const SectorHeader& h, std::span<const std::span<const uint8_t>>)>;
// Walks the first `used` sectors (of `sector_size` bytes) of `log` (a block's log pages back to
// back) in order and calls fn for every complete write — `count` consecutive valid sectors of
// one sequence number with indexes 0 .. count-1. Torn sectors and incomplete writes are
// skipped. A valid sector naming another logical block than `lbn` is Errc::kCorrupt.
Status walk_log(std::span<const uint8_t> log, size_t sector_size, uint32_t used, uint32_t lbn,
                const LogWriteFn& fn);
// True if an unmap sector's bitmap payload names `slot`.
inline bool unmap_has(std::span<const uint8_t> bitmap, uint32_t slot) {
  return slot / 8 < bitmap.size() && (bitmap[slot / 8] >> (slot % 8)) & 1;
}

// Cuts a stream of log records into sector payloads of at most `cap` bytes each (the in-memory
// log sector of [IPL], page_size / 16 in [PDL]'s experiments, at most a sector's payload): a
// record that does not fit the remaining room is split, the first part filling the payload.
class LogSplitter {
 public:
  explicit LogSplitter(size_t cap) : cap_(cap) {}
  void clear();
  void add(uint32_t offset, std::span<const uint8_t> bytes);
  // Adds every run of a differential (differential.h encoding, trusted: made by diff_encode).
  void add_runs(std::span<const uint8_t> runs);
  size_t payloads() const { return ends_.size(); }
  std::span<const uint8_t> payload(size_t i) const;
  uint64_t records() const { return records_; }
  uint64_t bytes() const { return buf_.size(); }

 private:
  size_t cap_;
  std::vector<uint8_t> buf_;   // all payloads back to back
  std::vector<size_t> ends_;   // end of payload i in buf_
  uint64_t records_ = 0;
};

}  // namespace pdl
