// ppmt.h — the physical page mapping table entry ([PDL] §4.2, Fig. 3) and the reverse map.
//
// ppmt[lpn] = <base page, differential page> plus two things the paper leaves implicit:
//   * copies — how many base pages of this lpn are on flash and not marked obsolete (current or
//     stale). A trimmed lpn needs its tombstone only while copies > 0: otherwise nothing could
//     resurrect it after a crash, and GC may drop the tombstone.
//   * in_dwb — the lpn's newest differential is in the differential write buffer (Fig. 6's
//     "resides in the buffer" test without searching it).
// 12 bytes per logical page (target: <= 16), in RAM and in a table page (PpmtCodec).
//
// p2l[ppa] (4 bytes per physical page) tells GC what a page is without reading it: the lpn of
// a base page counted in `copies`, kP2lDifferential, or kP2lNone (free, garbage, superblock).
// vdct[ppa] (2 bytes per physical page) is the valid differential count table.
// All three are PagedTables (flash/store/paged_table.h, docs/design.md §18): table pages loaded
// on demand, ids kPpmtTable, kP2lTable, kVdctTable.
#pragma once

#include <cstdint>

#include "flash/device/geometry.h"
#include "flash/store/paged_table.h"

namespace pdl {

struct PpmtEntry {
  Ppa base = kNoPpa;          // base page, or kNoPpa (never written, or trimmed)
  Ppa diff = kNoPpa;          // differential page holding the current differential/tombstone
  uint32_t copies : 31 = 0;   // base pages of this lpn on flash not marked obsolete
  uint32_t in_dwb : 1 = 0;    // newest differential is in the write buffer
};
static_assert(sizeof(PpmtEntry) == 12, "ppmt entry must stay small (target <= 16 bytes)");

inline constexpr uint32_t kP2lNone = 0xFFFFFFFFu;
inline constexpr uint32_t kP2lDifferential = 0xFFFFFFFEu;

// A ppmt entry in a table page: base u32, diff u32, copies | in_dwb << 31 u32, little-endian.
struct PpmtCodec {
  using Value = PpmtEntry;
  static constexpr uint32_t kBytes = 12;
  static void put(uint8_t* o, const Value& e) {
    U32Codec::put(o, e.base);
    U32Codec::put(o + 4, e.diff);
    U32Codec::put(o + 8, uint32_t(e.copies) | uint32_t(e.in_dwb) << 31);
  }
  // The lpn has a base page (on flash, or pending): PagedTable counts these (mapped_pages()).
  static bool counted(const Value& e) { return e.base != kNoPpa; }
  static Value get(const uint8_t* b) {
    Value e;
    e.base = U32Codec::get(b);
    e.diff = U32Codec::get(b + 4);
    const uint32_t c = U32Codec::get(b + 8);
    e.copies = c & 0x7FFFFFFFu;
    e.in_dwb = c >> 31;
    return e;
  }
};

// Table ids of PdlStore's paged tables (each table page's check names its table).
inline constexpr uint32_t kPpmtTable = 1, kP2lTable = 2, kVdctTable = 3;
using PpmtTable = PagedTable<PpmtCodec>;
using P2lTable = PagedTable<U32Codec>;
using VdctTable = PagedTable<U16Codec>;

}  // namespace pdl
