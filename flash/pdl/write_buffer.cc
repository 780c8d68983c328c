// write_buffer.cc — the differential write buffer's record bookkeeping.
#include "flash/pdl/write_buffer.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "flash/common/le.h"

namespace pdl {

void WriteBuffer::put(const RecordView& r) {
  assert(r.size() <= free_space());
  record_encode(r, bytes_.data() + used_);
  index_.push_back({r.lpn, used_, uint32_t(r.size())});
  used_ += uint32_t(r.size());
}

bool WriteBuffer::remove(uint32_t lpn) {
  auto it = std::find_if(index_.begin(), index_.end(), [&](const Entry& e) { return e.lpn == lpn; });
  if (it == index_.end()) return false;
  const uint32_t off = it->offset, size = it->size;
  std::memmove(bytes_.data() + off, bytes_.data() + off + size, used_ - off - size);
  used_ -= size;
  std::memset(bytes_.data() + used_, 0xFF, size);
  it = index_.erase(it);
  for (; it != index_.end(); ++it) it->offset -= size;
  return true;
}

bool WriteBuffer::find(uint32_t lpn, RecordView* r) const {
  for (const Entry& e : index_)
    if (e.lpn == lpn) {
      *r = view(e);
      return true;
    }
  return false;
}

RecordView WriteBuffer::view(const Entry& e) const {
  const uint8_t* p = bytes_.data() + e.offset;
  RecordView r;
  r.lpn = e.lpn;
  r.seq = le::get64(p + 8);
  r.tombstone = le::get16(p + 6) & kRecordTombstone;
  r.runs = std::span<const uint8_t>(p + kRecordHeader, e.size - kRecordHeader);
  return r;
}

void WriteBuffer::clear() {
  std::memset(bytes_.data(), 0xFF, used_);
  used_ = 0;
  index_.clear();
}

}  // namespace pdl
