// test_pdl_tables.cc — PdlStore's checkpointed tables across commit modes (pdl_tables.cc).
// (test_store_tables covers the round trip in one mode and hostile streams.)
//
// The image mounts a store per page and then switches it to atomic groups, so tables saved by
// a store running groups are mounted per page, and the other way round. Over the store matrix's
// PDL and OPU configurations (NVM included), after a random workload with GC and a sync:
//   * saved with groups, mounted per page: check() passes, every lpn is located as before, and
//     every block's valid count is the saved one less the pinned commit page (per page nothing
//     is pinned; the last commit is a marker, valid only as the pin); switched to groups it is
//     the saved store's again, and works on;
//   * saved per page straight after such a mount (nothing programmed), mounted with groups: the
//     saved store's valid counts, the commit page pinned again;
//   * a per-page store that programmed saves its tables saying its newest commit record is
//     unknown: they mount per page (the same store, which then refuses to switch to groups,
//     as after writes) and are refused with groups (kUnsupported: that mount scans).
#include <catch2/catch.hpp>

#include "flash/image/mount_tables.h"
#include "flash/image/open_store.h"
#include "tests/support/store_matrix.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

// Random writes, trims and syncs over all but the last two lpns; ends synced.
void work(PageStore& store, std::mt19937_64& rng, int ops) {
  const Lpn lpns = store.logical_pages() - 2;
  for (int i = 0; i < ops; i++) {
    const Lpn l = Lpn(rng() % lpns);
    if (rng() % 8 == 0) {
      REQUIRE(store.trim(l).is_ok());
    } else {
      std::vector<uint8_t> p(store.page_size());
      if (store.read(l, p).is_ok() && rng() % 4 != 0) {
        p[rng() % p.size()] ^= uint8_t(1 + rng() % 255);
      } else {
        p = pdl::test::random_page(rng, store.page_size());
      }
      const Status st = store.write(l, p);
      INFO("write " << l << ": " << st.to_string());
      REQUIRE(st.is_ok());
    }
    if (rng() % 6 == 0) REQUIRE(store.sync().is_ok());
  }
  REQUIRE(store.sync().is_ok());
}

void require_same_map(const PageStore& a, const PageStore& b) {
  for (Lpn l = 0; l < a.logical_pages(); l++) {
    INFO("lpn " << l);
    const LpnLocation x = a.locate(l), y = b.locate(l);
    REQUIRE(x.base == y.base);
    REQUIRE(x.diff == y.diff);
    REQUIRE(x.diff_in_buffer == y.diff_in_buffer);
    REQUIRE(x.trim_pending == y.trim_pending);
  }
}

std::vector<uint32_t> valid_counts(const PageStore& s, uint32_t blocks) {
  std::vector<uint32_t> v;
  for (uint32_t b = 0; b < blocks; b++) v.push_back(s.block_info(b).valid_pages);
  return v;
}

}  // namespace

TEST_CASE("PDL tables saved in one commit mode mount in the other", "[store][checkpoint][pdl]") {
  const auto matrix = pdl::test::store_matrix();
  for (size_t which = 0; which < matrix.size(); which++) {
    const auto& cfg = matrix[which];
    if (cfg.params.method != Method::kPdl && cfg.params.method != Method::kOpu) continue;
    INFO("config " << cfg.name);
    auto rng = pdl::test::seeded_rng(0x9d17ab + which);
    auto nand = pdl::test::make_test_nand(cfg.geo);
    std::unique_ptr<PageStore> store;
    REQUIRE(format_store(*nand, cfg.params, &store, CommitMode::kGroup).is_ok());
    work(*store, rng, 1200);
    // The last commit a marker (an unreferenced page, valid only as the pin): a group whose
    // only page is a base page programmed before the newest seq, dropped again.
    const Lpn x = store->logical_pages() - 2, y = x + 1;
    REQUIRE(store->write(x, pdl::test::random_page(rng, store->page_size())).is_ok());
    REQUIRE(store->write(y, pdl::test::random_page(rng, store->page_size())).is_ok());
    REQUIRE(store->trim(y).is_ok());
    REQUIRE(store->sync().is_ok());
    const uint32_t blocks = cfg.geo.blocks;
    const std::vector<uint32_t> grouped = valid_counts(*store, blocks);
    TableWriter w;
    REQUIRE(store->save_tables(w).is_ok());

    // With groups -> per page: the pin leaves the valid counts (at most one block, by one).
    std::unique_ptr<PageStore> per_page;
    TableReader r(w.data());
    Status st = mount_store_tables(*nand, store->params(), CommitMode::kPerPage, r, &per_page);
    INFO("mount per page: " << st.to_string());
    REQUIRE(st.is_ok());
    REQUIRE(per_page->check().is_ok());
    REQUIRE_FALSE(per_page->atomic());
    require_same_map(*store, *per_page);
    const std::vector<uint32_t> unpinned = valid_counts(*per_page, blocks);
    uint32_t less = 0;
    for (uint32_t b = 0; b < blocks; b++) {
      REQUIRE(unpinned[b] <= grouped[b]);
      less += grouped[b] - unpinned[b];
    }
    // (With NVM a commit is an NVM entry: the pin is older, perhaps referenced.)
    if (cfg.params.nvm_bytes == 0) REQUIRE(less == 1);
    else REQUIRE(less <= 1);

    // Saved per page before any program, mounted with groups: the pin is back.
    TableWriter w2;
    REQUIRE(per_page->save_tables(w2).is_ok());
    std::unique_ptr<PageStore> regrouped;
    TableReader r2(w2.data());
    st = mount_store_tables(*nand, store->params(), CommitMode::kGroup, r2, &regrouped);
    INFO("mount with groups: " << st.to_string());
    REQUIRE(st.is_ok());
    REQUIRE(regrouped->check().is_ok());
    REQUIRE(regrouped->atomic());
    require_same_map(*store, *regrouped);
    REQUIRE(valid_counts(*regrouped, blocks) == grouped);

    // The per-page store switched to groups, as the image does after mounting: the same.
    REQUIRE(per_page->set_commit_mode(CommitMode::kGroup).is_ok());
    REQUIRE(per_page->check().is_ok());
    REQUIRE(valid_counts(*per_page, blocks) == grouped);
    regrouped.reset();
    store.reset();
    work(*per_page, rng, 300);
    REQUIRE(per_page->check().is_ok());

    // A per-page store that programmed does not know its newest commit record: its tables
    // say so, mount per page, and are refused with groups.
    REQUIRE(per_page->set_commit_mode(CommitMode::kPerPage).is_ok());
    work(*per_page, rng, 50);
    TableWriter w3;
    REQUIRE(per_page->save_tables(w3).is_ok());
    REQUIRE(w3.data()[4] == 3);  // PDLS version 3 (format.md §13.1)
    {
      TableReader r3(w3.data());
      std::unique_ptr<PageStore> grouped_again;
      st = mount_store_tables(*nand, per_page->params(), CommitMode::kGroup, r3, &grouped_again);
      INFO("record unknown, mount with groups: " << st.to_string());
      REQUIRE(st.is(Errc::kUnsupported));
    }
    TableReader r3(w3.data());
    std::unique_ptr<PageStore> again;
    st = mount_store_tables(*nand, per_page->params(), CommitMode::kPerPage, r3, &again);
    INFO("record unknown, mount per page: " << st.to_string());
    REQUIRE(st.is_ok());
    REQUIRE(again->check().is_ok());
    require_same_map(*per_page, *again);
    REQUIRE(valid_counts(*again, blocks) == valid_counts(*per_page, blocks));
    REQUIRE_FALSE(again->set_commit_mode(CommitMode::kGroup).is_ok());
  }
}
