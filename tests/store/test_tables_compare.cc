// test_tables_compare.cc — compare_tables (flash/image/tables_compare.h), the comparison pdl
// fsck and the checkpoint tests make between a store from a checkpoint and a scan: two mounts
// of one chip compare equal; a store that moved on since the other was mounted differs, and
// the first difference names the lpn whose base page moved (or, when only counts moved, the
// block); a trimmed page whose tombstone the run time still points at and a scan drops is
// not a difference, its differential page's count aside. For IPL and IPU the engine's own
// tables (compare_engine_tables, flash/ipl/ipl_compare.h): two scans agree in every field, and
// a store that moved on differs in the first field of its tables that moved, named.
#include <catch2/catch.hpp>

#include "flash/image/open_store.h"
#include "flash/image/tables_compare.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

StoreParams params_for(Method m) {
  StoreParams p;
  p.method = m;
  p.max_differential = 64;
  return p;
}

}  // namespace

TEST_CASE("tables compare equal across mounts of one chip and differ once a page moves",
          "[checkpoint][fsck]") {
  const Method method = GENERATE(Method::kPdl, Method::kOpu);
  INFO("method " << method_name(method));
  const Geometry g = pdl::test::geometry(512, 32, 8, 48);
  auto chip = pdl::test::make_test_nand(g);
  Nand& nand = *chip;
  auto rng = pdl::test::seeded_rng(0x7ab1e);
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(nand, params_for(method), &s, CommitMode::kGroup).is_ok());
  const Lpn lpns = std::min<Lpn>(s->logical_pages(), 40);
  for (int round = 0; round < 3; round++) {
    for (Lpn l = 0; l < lpns; l++) REQUIRE(s->write(l, pdl::test::random_page(rng, 512)).is_ok());
    REQUIRE(s->sync().is_ok());
  }
  // Trims: their tombstones may stay pointed at by the run time (the tolerated difference).
  for (Lpn l = 0; l < lpns; l += 7) REQUIRE(s->trim(l).is_ok());
  REQUIRE(s->sync().is_ok());
  std::unique_ptr<PageStore> a, b;
  REQUIRE(mount_store(nand, &a, nullptr, CommitMode::kGroup).is_ok());
  REQUIRE(mount_store(nand, &b, nullptr, CommitMode::kGroup).is_ok());
  const TablesDifference same = compare_tables(*a, *b, g.blocks, g.pages_per_block, true);
  CHECK(same.first == "");
  CHECK(same.lpns == 0);
  CHECK(same.blocks == 0);
  uint32_t kept_tombstones = 0;  // lpns the run time still points at a tombstone for
  for (Lpn l = 0; l < lpns; l++)
    kept_tombstones += s->locate(l).diff != a->locate(l).diff;
  CHECK(kept_tombstones > 0);  // (the trims' tombstones: the tolerated difference occurs)
  const TablesDifference run_time = compare_tables(*s, *a, g.blocks, g.pages_per_block);
  INFO("run time against a scan: " << run_time.first);
  CHECK(run_time.lpns == 0);
  CHECK(run_time.blocks == 0);

  // `a` moves on: lpn 3 gets a new base page (a whole new page: PDL writes a base page when
  // the differential would exceed max_differential), synced.
  s.reset();
  REQUIRE(a->write(3, pdl::test::random_page(rng, 512)).is_ok());
  REQUIRE(a->sync().is_ok());
  const TablesDifference moved = compare_tables(*a, *b, g.blocks, g.pages_per_block);
  CHECK(moved.lpns == 1);
  CHECK(moved.blocks >= 1);
  CHECK(moved.first.rfind("lpn 3: checkpoint says mapped base ppa ", 0) == 0);
}

TEST_CASE("ipl and ipu tables compare field by field: two scans agree, a store that moved on "
          "differs and the difference names the field",
          "[checkpoint][fsck][ipl]") {
  const Method method = GENERATE(Method::kIpl, Method::kIpu);
  INFO("method " << method_name(method));
  const Geometry g = pdl::test::geometry(512, 32, 8, 48);
  auto chip = pdl::test::make_test_nand(g);
  Nand& nand = *chip;
  auto rng = pdl::test::seeded_rng(0x1b1);
  const CommitMode mode = method == Method::kIpl ? CommitMode::kGroup : CommitMode::kPerPage;
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(nand, params_for(method), &s, mode).is_ok());
  const Lpn lpns = std::min<Lpn>(s->logical_pages(), 24);
  for (int round = 0; round < 2; round++) {
    for (Lpn l = 0; l < lpns; l++)
      REQUIRE(s->write(l, pdl::test::random_page(rng, 512)).is_ok());
    REQUIRE(s->sync().is_ok());
  }
  s.reset();
  std::unique_ptr<PageStore> a, b;
  REQUIRE(mount_store(nand, &a, nullptr, mode).is_ok());
  REQUIRE(mount_store(nand, &b, nullptr, mode).is_ok());
  CHECK(compare_engine_tables(*a, *b, true) == "");
  CHECK(compare_tables(*a, *b, g.blocks, g.pages_per_block, true).first == "");
  // `a` moves on: one page rewritten and synced — a fresh seq (IPL: a log write; IPU: a merge).
  REQUIRE(a->write(3, pdl::test::random_page(rng, 512)).is_ok());
  REQUIRE(a->sync().is_ok());
  const std::string moved = compare_engine_tables(*a, *b, true);
  INFO(moved);
  CHECK(moved.rfind("ipl tables differ: next seq: replay ", 0) == 0);
}
