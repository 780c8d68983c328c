// tables_compare.cc — compare_tables (tables_compare.h).
#include "flash/image/tables_compare.h"

#include <map>

#include "flash/ipl/ipl_compare.h"
#include "flash/ipl/ipl_store.h"
#include "flash/store/checkpointed_store.h"

namespace pdl {

namespace {

std::string ppa_text(Ppa p, uint32_t ppb) {
  if (p == kNoPpa) return "none";
  return "ppa " + std::to_string(p) + " (block " + std::to_string(p / ppb) + ", page " +
         std::to_string(p % ppb) + ")";
}

bool same_location(const LpnLocation& a, const LpnLocation& b, bool strict) {
  if (a.base != b.base || a.diff != b.diff) return false;
  return !strict || (a.base_in_buffer == b.base_in_buffer && a.uncommitted == b.uncommitted &&
                     a.diff_in_buffer == b.diff_in_buffer && a.trim_pending == b.trim_pending &&
                     a.diff_bytes == b.diff_bytes);
}

// The engine behind a CheckpointedStore, else the store itself.
const PageStore& engine_of(const PageStore& s) {
  const auto* cs = dynamic_cast<const CheckpointedStore*>(&s);
  return cs ? cs->engine() : s;
}

}  // namespace

std::string compare_engine_tables(const PageStore& mounted, const PageStore& scan,
                                  bool replayed) {
  const auto* a = dynamic_cast<const IplStore*>(&engine_of(mounted));
  const auto* b = dynamic_cast<const IplStore*>(&engine_of(scan));
  if (!a || !b) return "";
  const Status st = compare_ipl_tables(
      *a, *b, replayed ? IplTablesFrom::kReplay : IplTablesFrom::kCheckpoint);
  return st.is_ok() ? "" : std::string(st.message());
}

TablesDifference compare_tables(const PageStore& ck, const PageStore& scan, uint32_t blocks,
                                uint32_t ppb, bool strict) {
  TablesDifference d;
  const Lpn lpns = scan.logical_pages();
  if (ck.logical_pages() != lpns) {
    d.lpns = 1;
    d.first = std::to_string(ck.logical_pages()) + " logical pages, the scan " +
              std::to_string(lpns);
    return d;
  }
  std::map<Ppa, uint32_t> only_ck;  // differential pages only kept tombstones point at
  std::map<Ppa, bool> scan_refs;    // differential pages some lpn of the scan points at
  for (Lpn l = 0; l < lpns; l++) {
    const LpnLocation y = scan.locate(l);
    if (y.diff != kNoPpa) scan_refs[y.diff] = true;
  }
  for (Lpn l = 0; l < lpns; l++) {
    LpnLocation x = ck.locate(l);
    const LpnLocation y = scan.locate(l);
    const bool mx = ck.is_mapped(l), my = scan.is_mapped(l);
    if (x.diff != kNoPpa && !scan_refs.count(x.diff)) only_ck[x.diff]++;
    if (!mx && !my && x.base == kNoPpa && y.base == kNoPpa && x.diff != kNoPpa &&
        y.diff == kNoPpa && !x.diff_in_buffer)
      x.diff = kNoPpa;  // a tombstone the scan has no copy for
    if (mx == my && same_location(x, y, strict)) continue;
    if (d.lpns++ == 0)
      d.first = "lpn " + std::to_string(l) + ": checkpoint says " +
                (mx ? "mapped" : "unmapped") + " base " + ppa_text(x.base, ppb) + " diff " +
                ppa_text(x.diff, ppb) + ", the scan " + (my ? "mapped" : "unmapped") +
                " base " + ppa_text(y.base, ppb) + " diff " + ppa_text(y.diff, ppb);
  }
  std::map<uint32_t, uint32_t> extra;  // per block: pages only the checkpoint counts
  for (const auto& [p, n] : only_ck) extra[p / ppb]++;
  for (uint32_t blk = 0; blk < blocks; blk++) {
    const BlockInfo a = ck.block_info(blk), b = scan.block_info(blk);
    const bool bad_a = a.state == BlockInfo::kBad, bad_b = b.state == BlockInfo::kBad;
    const bool valid_ok = a.valid_pages >= b.valid_pages &&
                          a.valid_pages <= b.valid_pages + extra[blk];
    if (valid_ok && bad_a == bad_b &&
        (!strict || (a.state == b.state && a.erase_count == b.erase_count)))
      continue;
    if (d.blocks++ == 0 && d.first.empty())
      d.first = "block " + std::to_string(blk) + ": checkpoint says " +
                std::to_string(a.valid_pages) + " valid pages" + (bad_a ? " (bad)" : "") +
                " state " + std::to_string(int(a.state)) + ", the scan " +
                std::to_string(b.valid_pages) + (bad_b ? " (bad)" : "") + " state " +
                std::to_string(int(b.state));
  }
  if (d.first.empty()) {
    d.first = compare_engine_tables(ck, scan, false);
    d.engine = !d.first.empty();
  }
  return d;
}

}  // namespace pdl
