// test_max_differential.cc — the Max_Differential_Size boundary of PDL_Writing ([PDL] Fig. 4),
// exactly as the figure defines it:
//
//   * a differential whose record (header included) is exactly Max_Differential_Size bytes is
//     written as a differential (Case 1, or Case 2 when the write buffer must be flushed first);
//   * one byte more, and the page itself becomes the new base page (Case 3).
//
// Checked for several Max_Differential_Size values, the smallest allowed and a whole page
// included, in both obsolete modes and both commit modes. The change is one contiguous run of
// bytes that all differ from the base page, so the record is kRecordHeader + kRunHeaderBytes +
// the run's length: the size is known to the byte without asking the codec.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "flash/image/open_store.h"
#include "flash/pdl/record.h"
#include "flash/store/page_store.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using Page = std::vector<uint8_t>;

// `base` with `len` bytes from `offset` on changed (each to its complement).
Page with_run(Page base, size_t offset, size_t len) {
  for (size_t i = offset; i < offset + len; i++) base[i] = uint8_t(~base[i]);
  return base;
}

}  // namespace

TEST_CASE("a differential of exactly Max_Differential_Size bytes is written as a differential, "
          "one byte more makes a new base page",
          "[store][pdl]") {
  const Geometry g = pdl::test::geometry(2048, 64, 16, 32);
  const uint32_t max_diff =
      GENERATE(uint32_t(kRecordHeader + kRunHeaderBytes + 1), 64u, 256u, 1000u, 2047u, 2048u);
  const ObsoleteMode mode = GENERATE(ObsoleteMode::kSpare, ObsoleteMode::kMemory);
  const CommitMode commit = GENERATE(CommitMode::kPerPage, CommitMode::kGroup);
  INFO("max_diff " << max_diff << ", obsolete " << obsolete_name(mode) << ", commit "
                   << (commit == CommitMode::kGroup ? "group" : "per page"));
  auto emu = pdl::test::make_ram_nand(g);
  StoreParams p;
  p.max_differential = max_diff;
  p.obsolete = mode;
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*emu, p, &s, commit).is_ok());
  REQUIRE(s->params().max_differential == max_diff);
  auto rng = pdl::test::seeded_rng(max_diff);
  const size_t at_limit = max_diff - kRecordHeader - kRunHeaderBytes;  // run bytes
  const size_t offset = (g.page_data - at_limit - 1) / 2;

  const Page base = pdl::test::random_page(rng, g.page_data);
  for (Lpn lpn : {Lpn(0), Lpn(1)}) REQUIRE(s->write(lpn, base).is_ok());
  REQUIRE(s->sync().is_ok());
  const Ppa base0 = s->locate(0).base, base1 = s->locate(1).base;
  const StoreStats before = s->stats();

  // Exactly the limit: a differential (the buffer is empty after the sync: Case 1).
  const Page at = with_run(base, offset, at_limit);
  REQUIRE(s->write(0, at).is_ok());
  LpnLocation loc = s->locate(0);
  CHECK(loc.base == base0);
  CHECK(loc.diff_in_buffer);
  CHECK(loc.diff_bytes == max_diff);
  CHECK(s->stats().case1 + s->stats().case2 == before.case1 + before.case2 + 1);
  CHECK(s->stats().case3 == before.case3);

  // One byte more: Case 3, a new base page (an atomic store may hold it in RAM until the
  // commit) and no differential.
  const Page over = with_run(base, offset, at_limit + 1);
  REQUIRE(s->write(1, over).is_ok());
  loc = s->locate(1);
  CHECK((loc.base_in_buffer || (loc.base != base1 && loc.base != kNoPpa)));
  CHECK_FALSE(loc.diff_in_buffer);
  CHECK(loc.diff == kNoPpa);
  CHECK(s->stats().case3 == before.case3 + 1);
  CHECK(s->stats().case1 + s->stats().case2 == before.case1 + before.case2 + 1);

  // Both read back as written, before and after a sync.
  Page got(g.page_data);
  for (int round = 0; round < 2; round++) {
    REQUIRE(s->read(0, got).is_ok());
    CHECK(got == at);
    REQUIRE(s->read(1, got).is_ok());
    CHECK(got == over);
    REQUIRE(s->sync().is_ok());
  }
}
