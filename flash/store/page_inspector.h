// page_inspector.h — the inspection interface: the engine-specific parts of a page's data area
// (PDL's differential records, IPL's log sectors) decoded for tools (pdl dump, pdl fsck) by the
// engine that wrote them, so that no tool knows an engine's on-flash format.
//
// An inspector decodes bytes it is given: it reads no flash, changes nothing and counts
// nothing. The spare header every page carries (spare.h) is the store layer's own and needs
// none. Each engine provides one (PdlPageInspector, IplPageInspector); page_inspector() in
// the image layer (flash/image/open_store.h) picks the one of a store's method.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flash/common/status.h"
#include "flash/device/nand.h"
#include "flash/store/spare.h"

namespace pdl {

// One record of a differential page ([PDL] §4.2), as pdl dump shows it.
struct RecordInfo {
  uint32_t lpn = 0;
  uint64_t seq = 0;
  bool tombstone = false;
  size_t bytes = 0;         // header + runs: what Max_Differential_Size bounds
  size_t header_bytes = 0;  // the record header's part of `bytes`
  size_t runs = 0;          // runs of changed bytes (0 for a tombstone)
};

// One log sector of a log page ([IPL] §3.2), as pdl dump shows it.
struct LogSectorInfo {
  enum Kind : uint8_t {
    kErased,  // all 0xFF
    kTorn,    // fails its CRC, magic or bounds
    kLog,     // log records of one logical page
    kUnmap,   // trims of data-page slots of one logical block
  };
  Kind kind = kErased;
  uint32_t lbn = 0;   // logical block
  uint32_t slot = 0;  // data-page slot within it (kLog)
  uint32_t lpn = 0;   // the logical page of `slot` (kLog)
  uint64_t seq = 0;
  uint32_t index = 0, count = 0;  // this sector is index + 1 of `count` of one write
  uint32_t payload_bytes = 0;     // kLog
  bool reset = false;             // kLog: the page restarts from zeros before this write
  std::vector<uint32_t> unmapped_slots;  // kUnmap
};

class PageInspector {
 public:
  virtual ~PageInspector() = default;
  PageInspector() = default;
  PageInspector(const PageInspector&) = delete;
  PageInspector& operator=(const PageInspector&) = delete;

  // True if page `ppa` is a log page: its data area holds log sectors with their own CRCs and
  // its spare area stays erased. Only IPL has them.
  virtual bool is_log_page(Ppa ppa) const {
    (void)ppa;
    return false;
  }
  // The records, in order, of differential page data `data` whose spare header is `hdr`.
  // Malformed records: Errc::kCorrupt saying why, *out holding the records before them.
  virtual Status differential_records(std::span<const uint8_t> data, const SpareHeader& hdr,
                                      std::vector<RecordInfo>* out) const {
    (void)data, (void)hdr;
    out->clear();
    return Status::error(Errc::kUnsupported, "this method writes no differential pages");
  }
  // The log sectors of log page data `data`, in order (also an NVM log area's bytes).
  virtual std::vector<LogSectorInfo> log_sectors(std::span<const uint8_t> data) const {
    (void)data;
    return {};
  }
  // True if erase block `block` has a log area in NVM (IPL with NVM, [IPL-PCRAM]): *offset and
  // *bytes say where; its bytes decode with log_sectors().
  virtual bool nvm_log_area(uint32_t block, uint64_t* offset, uint32_t* bytes) const {
    (void)block, (void)offset, (void)bytes;
    return false;
  }
};

}  // namespace pdl
