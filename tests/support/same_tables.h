// same_tables.h — two stores' tables compared entry by entry (header-only, tests only): the
// checkpoint, replay and table round-trip tests require a store mounted one way to equal the
// store mounted another way (or the one that saved the tables).
//
// require_same_tables: the same logical capacity; per lpn mapped alike and the same location
// (base, differential, in-buffer and uncommitted flags, pending trim, differential size); per
// block of the first `blocks` the same state, valid pages and erase count. REQUIRE, naming
// the lpn or block.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>

#include "flash/store/page_store.h"

namespace pdl::test {

inline void require_same_location(const LpnLocation& a, const LpnLocation& b) {
  REQUIRE(a.base == b.base);
  REQUIRE(a.base_in_buffer == b.base_in_buffer);
  REQUIRE(a.uncommitted == b.uncommitted);
  REQUIRE(a.diff == b.diff);
  REQUIRE(a.diff_in_buffer == b.diff_in_buffer);
  REQUIRE(a.trim_pending == b.trim_pending);
  REQUIRE(a.diff_bytes == b.diff_bytes);
}

inline void require_same_tables(const PageStore& a, const PageStore& b, uint32_t blocks) {
  REQUIRE(a.logical_pages() == b.logical_pages());
  for (Lpn l = 0; l < a.logical_pages(); l++) {
    INFO("lpn " << l);
    REQUIRE(a.is_mapped(l) == b.is_mapped(l));
    require_same_location(a.locate(l), b.locate(l));
  }
  for (uint32_t blk = 0; blk < blocks; blk++) {
    INFO("block " << blk);
    const BlockInfo x = a.block_info(blk), y = b.block_info(blk);
    REQUIRE(int(x.state) == int(y.state));
    REQUIRE(x.valid_pages == y.valid_pages);
    REQUIRE(x.erase_count == y.erase_count);
  }
}

// require_same_tables_but_tombstones: as require_same_tables, except where `a` keeps tables
// from a checkpoint that a scan (`b`) resolves differently without a read telling them apart:
// a trimmed page's tombstone the run time still points at (PDL and OPU keep it until GC drops
// it; a scan drops one with no base copy left to hide). Such an lpn is unmapped in both, with
// no base page; its differential page counts in `a`'s block valid counts, which may then
// exceed `b`'s by at most the number of those pages (`a`'s counts are exact for its tables:
// the caller runs a.check()).
inline void require_same_tables_but_tombstones(const PageStore& a, const PageStore& b,
                                               uint32_t blocks, uint32_t pages_per_block) {
  REQUIRE(a.logical_pages() == b.logical_pages());
  std::map<Ppa, uint32_t> ra, rb;  // lpns pointing at each differential page
  for (Lpn l = 0; l < a.logical_pages(); l++) {
    INFO("lpn " << l);
    REQUIRE(a.is_mapped(l) == b.is_mapped(l));
    LpnLocation x = a.locate(l);
    const LpnLocation y = b.locate(l);
    if (x.diff != kNoPpa) ra[x.diff]++;
    if (y.diff != kNoPpa) rb[y.diff]++;
    if (x.diff != y.diff && y.diff == kNoPpa && x.base == kNoPpa && y.base == kNoPpa &&
        !x.diff_in_buffer && !a.is_mapped(l))
      x.diff = kNoPpa;  // (a tombstone a scan has no copy for)
    require_same_location(x, y);
  }
  std::map<uint32_t, uint32_t> extra;  // per block: pages only `a` still counts
  for (const auto& [p, n] : ra)
    if (!rb.count(p)) extra[p / pages_per_block]++;
  for (uint32_t blk = 0; blk < blocks; blk++) {
    INFO("block " << blk);
    const BlockInfo x = a.block_info(blk), y = b.block_info(blk);
    REQUIRE(int(x.state) == int(y.state));
    REQUIRE(x.erase_count == y.erase_count);
    REQUIRE(x.valid_pages >= y.valid_pages);
    REQUIRE(x.valid_pages <= y.valid_pages + extra[blk]);
  }
}

}  // namespace pdl::test
