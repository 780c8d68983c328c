// pdl_page_inspector.cc — a differential page's records decoded for tools (record.h): the
// used bytes are the spare header's `aux`, the runs counted by their headers (differential.h).
#include "flash/pdl/pdl_page_inspector.h"

#include <algorithm>

#include "flash/pdl/record.h"

namespace pdl {

Status PdlPageInspector::differential_records(std::span<const uint8_t> data,
                                              const SpareHeader& hdr,
                                              std::vector<RecordInfo>* out) const {
  out->clear();
  RecordReader rr(data.first(std::min<size_t>(hdr.aux, data.size())));
  RecordView r;
  while (rr.next(&r)) {
    RecordInfo info;
    info.lpn = r.lpn;
    info.seq = r.seq;
    info.tombstone = r.tombstone;
    info.bytes = r.size();
    info.header_bytes = kRecordHeader;
    for (size_t at = 0; at + kRunHeaderBytes <= r.runs.size(); info.runs++)
      at += kRunHeaderBytes + (size_t(r.runs[at + 2]) | size_t(r.runs[at + 3]) << 8);
    out->push_back(info);
  }
  return rr.status();
}

}  // namespace pdl
