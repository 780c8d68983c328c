// test_paged_store_tables.cc — PDL, OPU and the page FTL with their ppmt, reverse map and
// vdct demand-loaded (docs/design.md §18): the tables saved through a TablePager (a RAM one,
// tests/support/ram_pager.h) with a cache of one clean page per table, so that nearly every
// table access evicts a page and a later one loads it again.
//
// Over the store matrix's PDL, OPU and page-FTL configurations (NVM included), in both commit
// modes where the method has groups:
//   * the round trip through the pager: a store checkpointed through it works on (evictions
//     and reloads on every operation), checks, reads right; with groups (and the FTL) its
//     tables saved again through the pager mount to the same store (the stream holds only
//     directories) — per page a PDL/OPU store that programmed refuses to save, so there the
//     scan of the chip must agree instead;
//   * a whole workload (writes, trims, GC, syncs, aborts, periodic checkpoints, then a power
//     cut and a scan) with table_cache=1 (which also folds sparse dirty pages into entries
//     after every operation) is the same store as with an unbounded cache: the
//     same reads, the same flash operations (the pager's loads are RAM here), the same tables
//     after the scan;
//   * a table page that no longer verifies halts the store: the operation that needed it and
//     every later one fail with its error, and no read returns other bytes than written.
#include <catch2/catch.hpp>

#include <optional>

#include "flash/image/mount_tables.h"
#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "tests/support/ram_pager.h"
#include "tests/support/random_ops.h"
#include "tests/support/same_tables.h"
#include "tests/support/store_matrix.h"
#include "tests/support/test_util.h"

using namespace pdl;
using pdl::test::StoreConfig;

namespace {

using Page = std::vector<uint8_t>;
using Model = std::vector<std::optional<Page>>;

bool paged_engine(const StoreParams& p) {
  return p.method == Method::kPdl || p.method == Method::kOpu ||
         (p.method == Method::kFtl && p.ftl == FtlKind::kPage);
}

// The PDL/OPU/page-FTL configurations, each in every commit mode its method has.
struct Case {
  StoreConfig cfg;
  CommitMode mode;
  std::string name() const {
    return cfg.name + (mode == CommitMode::kGroup ? " groups" : " per page");
  }
};
std::vector<Case> cases() {
  std::vector<Case> out;
  for (const StoreConfig& c : pdl::test::store_matrix()) {
    if (!paged_engine(c.params)) continue;
    out.push_back({c, CommitMode::kPerPage});
    if (has_atomic_commit(c.params.method)) out.push_back({c, CommitMode::kGroup});
  }
  return out;
}

// Save the store's tables through `pager` and make them durable (the pager is attached from
// then on). false if the store refuses (a per-page PDL/OPU store that programmed).
bool checkpoint(PageStore& store, test::RamPager& pager, std::vector<uint8_t>* stream = nullptr) {
  TableWriter w;
  w.set_pager(&pager);
  const Status st = store.save_tables(w);
  if (!st.is_ok()) {
    store.tables_saved(false);
    INFO("save_tables: " << st.to_string());
    REQUIRE(st.is(Errc::kUnsupported));
    return false;
  }
  store.tables_saved(true);
  if (stream) *stream = w.data();
  return true;
}

void step(PageStore& store, Model& model, Model& committed, std::mt19937_64& rng) {
  pdl::test::random_op(store, model, committed, rng);
}

void sync_all(PageStore& store, Model& model, Model& committed) {
  pdl::test::sync_model(store, model, committed);
}

void check_reads(PageStore& store, const Model& model) { pdl::test::require_reads(store, model); }

// Whether the tables of a store on `g` span several table pages (the 2 KiB-page chip of the
// matrix has 192 pages: one table page each, always resident).
bool several_table_pages(const Geometry& g) { return g.total_pages() * 4 > 2 * g.page_data; }

StoreParams tiny_cache(StoreParams p) {
  p.table_cache = 1;
  return p;
}

// The store's count of mapped pages (what pdl info prints) equals asking every lpn.
uint64_t require_mapped_count(const PageStore& s) {
  const uint64_t n = s.mapped_pages();
  uint64_t asked = 0;
  for (Lpn l = 0; l < s.logical_pages(); l++) asked += s.is_mapped(l);
  REQUIRE(n == asked);
  return n;
}

}  // namespace

TEST_CASE("a store's tables round-trip through a table pager with a one-page cache",
          "[store][checkpoint][paged]") {
  const auto all = cases();
  const size_t which = GENERATE_COPY(range(size_t(0), all.size()));
  const Case& c = all[which];
  INFO("config " << c.name());
  auto rng = pdl::test::seeded_rng(0x9a9ed + which);
  auto nand = pdl::test::make_test_nand(c.cfg.geo);
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, tiny_cache(c.cfg.params), &store, c.mode).is_ok());
  test::RamPager pager(nand->geometry().page_data);
  // Every table page still fill: the first checkpoint programs none.
  REQUIRE(checkpoint(*store, pager));
  REQUIRE(pager.pages.empty());

  Model model(store->logical_pages()), committed = model;
  for (int i = 0; i < 1500; i++) {
    step(*store, model, committed, rng);
    if (i % 100 == 99) require_mapped_count(*store);  // (trims waiting in the buffer too)
  }
  sync_all(*store, model, committed);
  // Checkpointed (per page too: with its newest commit record unknown), so that the rest
  // runs on evicted pages.
  REQUIRE(checkpoint(*store, pager));
  INFO("after checkpoint: resident " << store->stats().table_pages_resident << ", homed "
                                     << pager.pages.size() << ", stores " << pager.stores);
  check_reads(*store, model);  // (every ppmt page loaded in turn: one stays)
  for (int i = 0; i < 1500; i++) step(*store, model, committed, rng);
  sync_all(*store, model, committed);
  REQUIRE(store->check().is_ok());
  check_reads(*store, model);
  if (several_table_pages(c.cfg.geo)) {
    REQUIRE(store->stats().table_loads > 0);
    REQUIRE(store->stats().table_evictions > 0);
    REQUIRE(store->stats().table_cache_pages == 1);
  }

  std::vector<uint8_t> stream;
  REQUIRE(checkpoint(*store, pager, &stream));
  const uint64_t programs = nand->counters().programs;
  std::unique_ptr<PageStore> restored;
  TableReader r(stream, &pager);
  const Status st = mount_store_tables(*nand, store->params(), c.mode, r, &restored);
  INFO("mount_store_tables: " << st.to_string());
  REQUIRE(st.is_ok());
  REQUIRE(nand->counters().programs == programs);
  // The mount read no table page: they load when used (with NVM: the ppmt entries of the
  // buffered records, checked against the buffer).
  if (c.cfg.params.nvm_bytes == 0) REQUIRE(restored->stats().table_loads == 0);
  // Nor does counting the mapped pages (the directory carries the ppmt's count).
  const uint64_t mapped = restored->mapped_pages();
  if (c.cfg.params.nvm_bytes == 0) REQUIRE(restored->stats().table_loads == 0);
  REQUIRE(mapped == require_mapped_count(*store));
  REQUIRE(restored->check().is_ok());
  pdl::test::require_same_tables(*store, *restored, c.cfg.geo.blocks);
  check_reads(*restored, model);
  // The restored store works on, through the same pager.
  store.reset();
  for (int i = 0; i < 800; i++) step(*restored, model, committed, rng);
  sync_all(*restored, model, committed);
  REQUIRE(checkpoint(*restored, pager));
  REQUIRE(restored->check().is_ok());
  check_reads(*restored, model);
  std::unique_ptr<PageStore> scanned;
  REQUIRE(mount_store(*nand, &scanned, nullptr, c.mode).is_ok());
  check_reads(*scanned, model);
}

TEST_CASE("a workload with a one-page table cache is the workload with an unbounded one",
          "[store][checkpoint][paged]") {
  const auto all = cases();
  const size_t which = GENERATE_COPY(range(size_t(0), all.size()));
  const Case& c = all[which];
  INFO("config " << c.name());
  const uint64_t seed = pdl::test::seeded_rng(0xcace + which)();
  auto big_nand = pdl::test::make_test_nand(c.cfg.geo);
  auto tiny_nand = pdl::test::make_test_nand(c.cfg.geo);
  StoreParams big_params = c.cfg.params;
  big_params.table_cache = 1u << 24;
  std::unique_ptr<PageStore> big, tiny;
  REQUIRE(format_store(*big_nand, big_params, &big, c.mode).is_ok());
  REQUIRE(format_store(*tiny_nand, tiny_cache(c.cfg.params), &tiny, c.mode).is_ok());
  test::RamPager big_pager(big_nand->geometry().page_data);
  test::RamPager tiny_pager(tiny_nand->geometry().page_data);
  REQUIRE(checkpoint(*big, big_pager));
  REQUIRE(checkpoint(*tiny, tiny_pager));
  big->reset_stats();
  tiny->reset_stats();

  std::mt19937_64 rng_big(seed), rng_tiny(seed);
  Model model_big(big->logical_pages()), committed_big = model_big;
  Model model_tiny = model_big, committed_tiny = model_big;
  for (int round = 0; round < 6; round++) {
    for (int i = 0; i < 500; i++) {
      step(*big, model_big, committed_big, rng_big);
      step(*tiny, model_tiny, committed_tiny, rng_tiny);
    }
    sync_all(*big, model_big, committed_big);
    sync_all(*tiny, model_tiny, committed_tiny);
    const bool a = checkpoint(*big, big_pager), b = checkpoint(*tiny, tiny_pager);
    REQUIRE(a == b);
  }
  REQUIRE(model_big == model_tiny);
  check_reads(*big, model_big);
  check_reads(*tiny, model_tiny);
  const NandCounters nb = big_nand->counters(), nt = tiny_nand->counters();
  REQUIRE(nb.page_reads == nt.page_reads);
  REQUIRE(nb.spare_reads == nt.spare_reads);
  REQUIRE(nb.programs == nt.programs);
  REQUIRE(nb.erases == nt.erases);
  const StoreStats sb = big->stats(), st = tiny->stats();
  REQUIRE(sb.gc_runs == st.gc_runs);
  REQUIRE(sb.base_pages_written == st.base_pages_written);
  REQUIRE(sb.diff_pages_written == st.diff_pages_written);
  REQUIRE(sb.table_evictions == 0);
  REQUIRE(sb.gc_runs > 0);  // the workload collected garbage
  if (tiny_pager.stores > 3 && several_table_pages(c.cfg.geo))
    REQUIRE(st.table_loads > sb.table_loads);
  // (The one-page cache is also the fold bound: sparse dirty pages were folded into entries
  // at the end of operations, and the checkpoints rebuilt them from their homes.)
  if (several_table_pages(c.cfg.geo)) CHECK(st.table_folds > 0);
  REQUIRE(sb.table_folds == 0);
  REQUIRE(big->check().is_ok());
  REQUIRE(tiny->check().is_ok());

  // A power cut in the middle of a group (or of per-page writes), then a scan of each chip.
  for (int i = 0; i < 200; i++) {
    step(*big, model_big, committed_big, rng_big);
    step(*tiny, model_tiny, committed_tiny, rng_tiny);
  }
  big.reset();
  tiny.reset();
  std::unique_ptr<PageStore> big_scan, tiny_scan;
  REQUIRE(mount_store(*big_nand, &big_scan, nullptr, c.mode).is_ok());
  REQUIRE(mount_store(*tiny_nand, &tiny_scan, nullptr, c.mode).is_ok());
  REQUIRE(tiny_scan->check().is_ok());
  pdl::test::require_same_tables(*big_scan, *tiny_scan, c.cfg.geo.blocks);
  Page x(big_scan->page_size()), y(x.size());
  for (Lpn l = 0; l < big_scan->logical_pages(); l++) {
    INFO("lpn " << l);
    const Status sx = big_scan->read(l, x), sy = tiny_scan->read(l, y);
    REQUIRE(sx.code() == sy.code());
    REQUIRE(x == y);
  }
}

TEST_CASE("a table page that does not verify halts the store; reads fail, never mislead",
          "[store][checkpoint][paged]") {
  const auto all = cases();
  const size_t which = GENERATE_COPY(range(size_t(0), all.size()));
  const Case& c = all[which];
  INFO("config " << c.name());
  if (c.mode == CommitMode::kPerPage && has_atomic_commit(c.cfg.params.method)) return;
  if (!several_table_pages(c.cfg.geo)) return;  // (every table page stays resident)
  auto rng = pdl::test::seeded_rng(0xc0de + which);
  auto nand = pdl::test::make_test_nand(c.cfg.geo);
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, tiny_cache(c.cfg.params), &store, c.mode).is_ok());
  test::RamPager pager(nand->geometry().page_data);
  Model model(store->logical_pages()), committed = model;
  for (int i = 0; i < 1200; i++) step(*store, model, committed, rng);
  sync_all(*store, model, committed);
  REQUIRE(checkpoint(*store, pager));
  REQUIRE(!pager.pages.empty());
  for (auto& p : pager.pages) p.bad = true;

  // Reads until one needs a table page that is not resident: from then on every call fails
  // with the pager's error (kCorrupt); a read that succeeds returns the written bytes.
  Page got(store->page_size());
  Status failed;
  for (Lpn l = 0; l < model.size(); l++) {
    const Status st = store->read(l, got);
    if (st.is_ok()) {
      REQUIRE(model[l]);
      REQUIRE(got == *model[l]);
    } else if (st.is(Errc::kNotFound) && failed.is_ok()) {
      REQUIRE(!model[l]);
    } else {
      INFO("read " << l << ": " << st.to_string());
      REQUIRE(st.is(Errc::kCorrupt));
      if (failed.is_ok()) failed = st;
    }
  }
  INFO("first failure: " << failed.to_string() << "; table loads " << store->stats().table_loads
                          << ", resident " << store->stats().table_pages_resident << ", homed "
                          << pager.pages.size());
  REQUIRE(failed.is(Errc::kCorrupt));
  REQUIRE(store->read(0, got).is(Errc::kCorrupt));
  REQUIRE(store->write(0, pdl::test::random_page(rng, store->page_size())).is(Errc::kCorrupt));
  REQUIRE(store->sync().is(Errc::kCorrupt));
  TableWriter w;
  REQUIRE(!store->save_tables(w).is_ok());
  // The chip is intact: a scan mounts it, with every synced page.
  store.reset();
  std::unique_ptr<PageStore> scanned;
  REQUIRE(mount_store(*nand, &scanned, nullptr, c.mode).is_ok());
  check_reads(*scanned, model);
}
