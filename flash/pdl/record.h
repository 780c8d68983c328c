// record.h — differential records: how differentials sit in a differential page.
//
// A differential page's data area is a sequence of records followed by 0xFF padding; the
// spare header's `aux` says how many bytes are used. One record ([PDL] §4.2:
// <physical page ID, creation time stamp, [offset, length, changed data]+>):
//    0  u32  lpn
//    4  u16  runs_len — bytes of runs that follow
//    6  u16  flags    — bit 0: tombstone (the lpn was trimmed; runs_len is 0)
//    8  u64  seq      — creation sequence number
//   16  runs          — differential.h encoding
// Its size (header + runs) is what Max_Differential_Size bounds. A page holds at most one
// record per lpn (the write buffer replaces, GC compaction copies only the current one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "flash/common/status.h"

namespace pdl {

inline constexpr size_t kRecordHeader = 16;
inline constexpr size_t kRunHeaderBytes = 4;
inline constexpr uint16_t kRecordTombstone = 1;

struct RecordView {
  uint32_t lpn = 0;
  uint64_t seq = 0;
  bool tombstone = false;
  std::span<const uint8_t> runs;
  size_t size() const { return kRecordHeader + runs.size(); }
};

// Encode a record into `out` (which must hold kRecordHeader + runs.size() bytes).
void record_encode(const RecordView& r, uint8_t* out);

// Walks the records of `used` bytes of a page. Bounds are checked: malformed input ends the
// walk with Errc::kCorrupt, never an out-of-bounds read.
class RecordReader {
 public:
  explicit RecordReader(std::span<const uint8_t> used) : buf_(used) {}
  // Next record into *r; false at the end or on error (then status() says which).
  bool next(RecordView* r);
  const Status& status() const { return status_; }

 private:
  std::span<const uint8_t> buf_;
  size_t pos_ = 0;
  Status status_;
};

}  // namespace pdl
