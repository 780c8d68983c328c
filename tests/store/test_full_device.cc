// test_full_device.cc — running out of flash gives Errc::kFull and loses nothing.
//
// The store is thin-provisioned (more logical pages than the chip holds), so distinct pages are
// written until the chip is full. The failing write must change nothing: every earlier page
// still reads back, after a sync and a remount too; trimming pages frees space so writing can
// continue.
#include <catch2/catch.hpp>

#include <optional>

#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "tests/support/store_matrix.h"
#include "tests/support/test_util.h"

using namespace pdl;

TEST_CASE("a full device refuses writes with kFull and keeps every written page",
          "[store][full]") {
  const auto matrix = pdl::test::store_matrix();
  const size_t which = GENERATE_COPY(range(size_t(0), matrix.size()));
  auto cfg = matrix[which];
  INFO("config " << cfg.name);
  if (pdl::in_page(cfg.params.method) || cfg.params.ftl == FtlKind::kBast ||
      cfg.params.ftl == FtlKind::kFast)
    return;  // no thin provisioning: the next test
  // StableBuffer refuses thin provisioning (its staging area must stay writable):
  // test_stable_buffer checks the refusal and a full-size store written over and over.
  if (cfg.params.method == Method::kStableBuffer) return;
  const Geometry g = cfg.geo.resolved();
  cfg.params.logical_pages = g.blocks * g.pages_per_block * 2;  // more than the chip holds
  auto nand = pdl::test::make_ram_nand(cfg.geo);
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, cfg.params, &store).is_ok());
  auto rng = pdl::test::seeded_rng(0xF011 + which);
  std::vector<std::optional<std::vector<uint8_t>>> model(store->logical_pages());

  Lpn next = 0;
  Status st;
  while (next < store->logical_pages()) {
    auto p = pdl::test::random_page(rng, store->page_size());
    st = store->write(next, p);
    if (!st.is_ok()) break;
    model[next++] = p;
    if (next % 7 == 0) REQUIRE(store->sync().is_ok());
  }
  INFO("stopped after " << next << " pages: " << st.to_string());
  REQUIRE(st.is(Errc::kFull));
  REQUIRE(store->check().is_ok());  // a refused write left the tables consistent
  REQUIRE(next > g.blocks * g.pages_per_block / 2);  // the chip was really used
  REQUIRE_FALSE(store->is_mapped(next));
  REQUIRE(store->sync().is_ok());

  auto verify = [&](PageStore& s) {
    std::vector<uint8_t> got(s.page_size());
    for (Lpn l = 0; l <= next; l++) {
      Status r = s.read(l, got);
      if (model[l]) {
        REQUIRE(r.is_ok());
        REQUIRE(got == *model[l]);
      } else {
        REQUIRE(r.is(Errc::kNotFound));
      }
    }
  };
  verify(*store);
  std::unique_ptr<PageStore> again;
  REQUIRE(mount_store(*nand, &again).is_ok());
  verify(*again);

  // Free a third of the pages; writing works again (trims become durable with the sync).
  for (Lpn l = 0; l < next; l += 3) {
    REQUIRE(again->trim(l).is_ok());
    model[l].reset();
  }
  REQUIRE(again->sync().is_ok());
  for (Lpn l = 0; l < next; l += 3) {
    auto p = pdl::test::random_page(rng, again->page_size());
    st = again->write(l + 1, p);
    INFO("rewrite " << l + 1 << ": " << st.to_string());
    REQUIRE(st.is_ok());
    model[l + 1] = p;
  }
  REQUIRE(again->sync().is_ok());
  verify(*again);
  std::unique_ptr<PageStore> last;
  REQUIRE(mount_store(*nand, &last).is_ok());
  verify(*last);
}

// IPU and IPL map statically: lpn / data pages per block names the logical block, and one erase
// block is kept back for merges (IPL: three, for its commit log and a shadow merge). So a size
// beyond that is refused at format, naming the limit, and a store of full size never runs out:
// every page written again and again fits. BAST and FAST likewise: a data block per logical
// block, plus their log blocks and one merge reserve.
TEST_CASE("IPU, IPL, BAST and FAST refuse more pages than their blocks hold and never fill up "
          "at full size",
          "[store][full]") {
  const auto matrix = pdl::test::store_matrix();
  const size_t which = GENERATE_COPY(range(size_t(0), matrix.size()));
  auto cfg = matrix[which];
  const bool hybrid = cfg.params.ftl == FtlKind::kBast || cfg.params.ftl == FtlKind::kFast;
  if (!pdl::in_page(cfg.params.method) && !hybrid) return;
  INFO("config " << cfg.name);
  const Geometry g = cfg.geo.resolved();
  const uint32_t dpb = g.pages_per_block - cfg.params.log_region / g.page_data;
  const uint32_t reserve = cfg.params.method == pdl::Method::kIpl ? 3 : 1;
  const uint32_t capacity =
      (g.blocks - kSuperblockBlocks - reserve - cfg.params.log_blocks) * dpb;
  auto nand = pdl::test::make_ram_nand(cfg.geo);
  std::unique_ptr<PageStore> store;
  StoreParams too_big = cfg.params;
  too_big.logical_pages = capacity + 1;
  const Status refused = format_store(*nand, too_big, &store);
  CHECK(refused.is(Errc::kInvalidArgument));
  CHECK(refused.message().find("at most " + std::to_string(capacity)) != std::string_view::npos);

  REQUIRE(format_store(*nand, cfg.params, &store).is_ok());
  REQUIRE(store->logical_pages() == capacity);
  auto rng = pdl::test::seeded_rng(0xF012 + which);
  std::vector<std::vector<uint8_t>> model(capacity);
  for (int round = 0; round < 3; round++) {
    for (Lpn l = 0; l < capacity; l++) {
      model[l] = pdl::test::random_page(rng, g.page_data);
      const Status st = store->write(l, model[l]);
      INFO("round " << round << " lpn " << l << ": " << st.to_string());
      REQUIRE(st.is_ok());
    }
    REQUIRE(store->sync().is_ok());
    REQUIRE(store->free_blocks() >= 1);
  }
  std::unique_ptr<PageStore> again;
  REQUIRE(mount_store(*nand, &again).is_ok());
  std::vector<uint8_t> got(g.page_data);
  for (Lpn l = 0; l < capacity; l++) {
    REQUIRE(again->read(l, got).is_ok());
    REQUIRE(got == model[l]);
  }
}
