// pdl_page_inspector.h — PDL's and OPU's PageInspector: differential pages' records
// (record.h). OPU programs none; its inspector finds none.
#pragma once

#include "flash/store/page_inspector.h"

namespace pdl {

class PdlPageInspector final : public PageInspector {
 public:
  Status differential_records(std::span<const uint8_t> data, const SpareHeader& hdr,
                              std::vector<RecordInfo>* out) const override;
};

}  // namespace pdl
