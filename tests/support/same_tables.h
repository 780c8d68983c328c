// same_tables.h — two stores' tables compared entry by entry (header-only, tests only): the
// checkpoint, replay and table round-trip tests require a store mounted one way to equal the
// store mounted another way (or the one that saved the tables).
//
// require_same_tables: the same logical capacity; per lpn mapped alike and the same location
// (base, differential, in-buffer and uncommitted flags, pending trim, differential size); per
// block of the first `blocks` the same state, valid pages and erase count. REQUIRE, naming
// the lpn or block.
// require_same_tables_but_tombstones: compare_tables, strict (the engine's own tables too,
// as a checkpoint's); require_same_engine_tables_after_replay: those of a replay, every field.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>

#include "flash/image/tables_compare.h"
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

// require_same_tables_but_tombstones: as require_same_tables, except for the tombstones a
// store from a checkpoint (`a`) keeps and a scan (`b`) drops (flash/image/tables_compare.h).
inline void require_same_tables_but_tombstones(const PageStore& a, const PageStore& b,
                                               uint32_t blocks, uint32_t pages_per_block) {
  const TablesDifference d = compare_tables(a, b, blocks, pages_per_block, true);
  INFO(d.lpns << " lpns and " << d.blocks << " blocks differ");
  REQUIRE(d.first == "");
}

// require_same_engine_tables_after_replay: a store replayed after a power cut (`replayed`) and a
// scan of the same chip agree in the engine's own tables too, every field (IPL and IPU:
// flash/ipl/ipl_compare.h; other engines have none beyond the interface). REQUIRE, naming the
// first field that differs.
inline void require_same_engine_tables_after_replay(const PageStore& replayed,
                                                    const PageStore& scan) {
  REQUIRE(compare_engine_tables(replayed, scan, true) == "");
}

}  // namespace pdl::test
