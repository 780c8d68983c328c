// record.cc — encode and bounds-checked walk of differential records.
#include "flash/pdl/record.h"

#include <cstring>

#include "flash/common/le.h"

namespace pdl {

void record_encode(const RecordView& r, uint8_t* out) {
  le::put32(out, r.lpn);
  le::put16(out + 4, uint16_t(r.runs.size()));
  le::put16(out + 6, r.tombstone ? kRecordTombstone : 0);
  le::put64(out + 8, r.seq);
  if (!r.runs.empty()) std::memcpy(out + kRecordHeader, r.runs.data(), r.runs.size());
}

bool RecordReader::next(RecordView* r) {
  if (!status_.is_ok() || pos_ == buf_.size()) return false;
  if (buf_.size() - pos_ < kRecordHeader) {
    status_ = Status::error(Errc::kCorrupt, "truncated differential record header");
    return false;
  }
  const uint8_t* p = buf_.data() + pos_;
  const size_t len = le::get16(p + 4);
  const uint16_t flags = le::get16(p + 6);
  if (buf_.size() - pos_ - kRecordHeader < len || (flags & ~kRecordTombstone) ||
      ((flags & kRecordTombstone) && len != 0)) {
    status_ = Status::error(Errc::kCorrupt, "malformed differential record");
    return false;
  }
  r->lpn = le::get32(p);
  r->seq = le::get64(p + 8);
  r->tombstone = flags & kRecordTombstone;
  r->runs = buf_.subspan(pos_ + kRecordHeader, len);
  pos_ += kRecordHeader + len;
  return true;
}

}  // namespace pdl
