// cost.h — flash work attributed to classes of logical pages (the Volume's file kinds).
//
// The PageStore above a Volume serves several kinds of file at once (database, rollback
// journal, WAL, the Volume's own directory). Users must see what each kind costs on flash —
// the paper measured data pages only; with SQLite the journal is extra traffic. A classifier
// given by the layer above maps each lpn to a class (0 .. kCostClasses-1); the store then
// charges every flash operation it performs to one bucket:
//   * work done for a read/write/trim of lpn l (base page reads, base page programs, obsolete
//     marks of l's old pages) → class(l);
//   * a differential page programmed from the write buffer (Case 2 flush, sync, a trim's
//     flush) → split over the classes of the records it holds, in proportion to their encoded
//     bytes (so a page holding 3 database records and 1 journal record of equal size is
//     charged 3/4 to the database);
//   * obsolete marks caused by that flush → split the same way;
//   * garbage collection (victim reads, copies, compaction, merges, erases) → `gc`, reported
//     separately: it is shared work caused by the whole history of writes;
//   * anything else (format, the mount scan) → `other`.
// Every operation is charged exactly once, so the buckets sum to the Nand's counters since the
// last reset_stats() (floating-point rounding aside). Charging is pure accounting: it never
// changes what the store does on flash.
#pragma once

#include <cstdint>
#include <functional>

#include "flash/device/nand.h"

namespace pdl {

inline constexpr unsigned kCostClasses = 6;

// NandCounters with fractional counts (shared work is split proportionally).
struct FlashCost {
  double page_reads = 0, spare_reads = 0, programs = 0, erases = 0;
  double bytes_read = 0, bytes_programmed = 0, sim_us = 0;

  void add(const NandCounters& d, double weight = 1.0) {
    page_reads += weight * double(d.page_reads);
    spare_reads += weight * double(d.spare_reads);
    programs += weight * double(d.programs);
    erases += weight * double(d.erases);
    bytes_read += weight * double(d.bytes_read);
    bytes_programmed += weight * double(d.bytes_programmed);
    sim_us += weight * double(d.sim_us);
  }
};

struct ClassCost {
  FlashCost flash;                 // all flash work charged to this class
  uint64_t base_pages = 0;         // full (base) pages programmed for this class's writes
  uint64_t diff_records = 0;       // differentials put into the write buffer
  uint64_t diff_record_bytes = 0;  // their encoded bytes, headers included
  double diff_pages = 0;           // differential pages programmed, split by record bytes
};

struct CostBreakdown {
  ClassCost cls[kCostClasses];
  FlashCost gc;     // garbage collection: shared, reported on its own
  FlashCost other;  // format, mount scan, anything not caused by a read/write/trim/sync
};

// Maps an lpn to its class, 0 .. kCostClasses-1. Must be cheap (called per operation).
using LpnClassifier = std::function<uint8_t(uint32_t lpn)>;

}  // namespace pdl
