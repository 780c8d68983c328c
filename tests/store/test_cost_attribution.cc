// test_cost_attribution.cc — PageStore::costs(): flash work charged to classes of lpns (cost.h).
//
// The invariant: the buckets (every class, gc, other) sum to the Nand's counters since the
// last reset_stats(), whatever the workload (GC, merges, trims, syncs, remounts). Then the
// attribution itself: a class that is not written is charged nothing, a differential page is
// split by record bytes (tombstones included), GC work lands in `gc` (erases never in a class),
// peek() is invisible, and reset_stats() zeroes the breakdown. Also Nand::set_counting().
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <optional>

#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "tests/support/store_matrix.h"
#include "tests/support/test_util.h"

using namespace pdl;
using pdl::test::StoreConfig;

namespace {

using Page = std::vector<uint8_t>;
using Model = std::vector<std::optional<Page>>;

// Sum of every bucket of `c`.
FlashCost total_of(const CostBreakdown& c) {
  FlashCost t;
  auto add = [&t](const FlashCost& f) {
    t.page_reads += f.page_reads;
    t.spare_reads += f.spare_reads;
    t.programs += f.programs;
    t.erases += f.erases;
    t.bytes_read += f.bytes_read;
    t.bytes_programmed += f.bytes_programmed;
    t.sim_us += f.sim_us;
  };
  for (const ClassCost& k : c.cls) add(k.flash);
  add(c.gc);
  add(c.other);
  return t;
}

bool close_to(double got, double want) {
  return std::abs(got - want) <= 1e-6 * std::max(1.0, std::abs(want));
}

// Every field of `got` equals `want` within 1e-6 relative.
void check_sums_to(const FlashCost& got, const NandCounters& want) {
  CHECK(close_to(got.page_reads, double(want.page_reads)));
  CHECK(close_to(got.spare_reads, double(want.spare_reads)));
  CHECK(close_to(got.programs, double(want.programs)));
  CHECK(close_to(got.erases, double(want.erases)));
  CHECK(close_to(got.bytes_read, double(want.bytes_read)));
  CHECK(close_to(got.bytes_programmed, double(want.bytes_programmed)));
  CHECK(close_to(got.sim_us, double(want.sim_us)));
}

// The buckets sum to the Nand's work since `since` (its counters at the last reset_stats()).
void check_invariant(const PageStore& store, const Nand& nand, const NandCounters& since) {
  check_sums_to(total_of(store.costs()), nand.counters() - since);
}

bool is_zero(const FlashCost& f) {
  return f.page_reads == 0 && f.spare_reads == 0 && f.programs == 0 && f.erases == 0 &&
         f.bytes_read == 0 && f.bytes_programmed == 0 && f.sim_us == 0;
}

bool is_zero(const CostBreakdown& c) {
  for (const ClassCost& k : c.cls)
    if (!is_zero(k.flash) || k.base_pages || k.diff_records || k.diff_record_bytes ||
        k.diff_pages != 0)
      return false;
  return is_zero(c.gc) && is_zero(c.other);
}

// Change a few short runs of `page` (a record update), leaving the rest as it was.
void sparse_change(std::mt19937_64& rng, Page& page, size_t max_run = 12) {
  const int runs = 1 + int(rng() % 6);
  for (int i = 0; i < runs; i++) {
    const size_t len = 1 + rng() % max_run, off = rng() % (page.size() - len);
    for (size_t k = 0; k < len; k++) page[off + k] = uint8_t(rng());
  }
}

// Random operations over every lpn, checked against a model: sparse and whole-page writes,
// reads, peeks, trims, syncs. The store is nearly full, so GC runs often.
class Workload {
 public:
  explicit Workload(std::mt19937_64& rng) : rng_(rng) {}
  // The store to work on: the first one, or the same media remounted.
  void set_store(PageStore& store) {
    store_ = &store;
    model_.resize(store.logical_pages());
  }

  // One random operation on an lpn `pick` chooses.
  template <typename Pick>
  void step(Pick&& pick) {
    const Lpn l = pick();
    const unsigned r = unsigned(rng_() % 100);
    if (r < 60) {
      write(l);
    } else if (r < 75) {
      expect(l, /*peek=*/false);
    } else if (r < 85) {
      expect(l, /*peek=*/true);
    } else if (r < 95) {
      trim(l);
    } else {
      REQUIRE(store_->sync().is_ok());
    }
  }
  void step() {
    step([this] { return Lpn(rng_() % model_.size()); });
  }

  void write(Lpn l) {
    Page p = model_[l] && rng_() % 10 < 8 ? *model_[l]
                                          : pdl::test::random_page(rng_, store_->page_size());
    if (model_[l]) sparse_change(rng_, p);
    const Status st = store_->write(l, p);
    INFO("write " << l << ": " << st.to_string());
    REQUIRE(st.is_ok());
    model_[l] = p;
  }

  void trim(Lpn l) {
    REQUIRE(store_->trim(l).is_ok());
    model_[l].reset();
  }

  void expect(Lpn l, bool peek) {
    Page got(store_->page_size(), 0xAB);
    const Status st = peek ? store_->peek(l, got) : store_->read(l, got);
    INFO((peek ? "peek " : "read ") << l << ": " << st.to_string());
    if (model_[l]) {
      REQUIRE(st.is_ok());
      REQUIRE(got == *model_[l]);
    } else {
      REQUIRE(st.is(Errc::kNotFound));
      REQUIRE(std::all_of(got.begin(), got.end(), [](uint8_t b) { return b == 0; }));
    }
  }

 private:
  PageStore* store_ = nullptr;
  std::mt19937_64& rng_;
  Model model_;
};

uint8_t by_three(uint32_t lpn) { return uint8_t(lpn % 3); }

// A freshly formatted store with every lpn written once and synced; `w` works on it.
// A PDL(512B) store on a 2 KiB-page chip whose lpns alternate between classes 0 and 1, with
// `n` random pages written and synced, and its stats reset.
struct TwoClasses {
  std::unique_ptr<EmulatedNand> nand;
  std::unique_ptr<PageStore> store;
  std::vector<Page> pages;
  NandCounters since;
  TwoClasses(std::mt19937_64& rng, ObsoleteMode ob, Lpn n)
      : nand(pdl::test::make_ram_nand(pdl::test::geometry(2048, 64, 8, 24))) {
    StoreParams p;
    p.method = Method::kPdl;
    p.max_differential = 512;
    p.obsolete = ob;
    REQUIRE(format_store(*nand, p, &store).is_ok());
    store->set_classifier([](uint32_t l) { return uint8_t(l & 1); });
    for (Lpn l = 0; l < n; l++) {
      pages.push_back(pdl::test::random_page(rng, store->page_size()));
      REQUIRE(store->write(l, pages.back()).is_ok());
    }
    REQUIRE(store->sync().is_ok());
    store->reset_stats();
    since = nand->counters();
  }
};

std::unique_ptr<PageStore> loaded_store(Nand& nand, const StoreParams& params, Workload& w) {
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(nand, params, &store).is_ok());
  w.set_store(*store);
  for (Lpn l = 0; l < store->logical_pages(); l++) w.write(l);
  REQUIRE(store->sync().is_ok());
  return store;
}

}  // namespace

TEST_CASE("cost buckets sum to the Nand's counters over random workloads with GC",
          "[store][cost]") {
  const auto matrix = pdl::test::store_matrix();
  const size_t which = GENERATE_COPY(range(size_t(0), matrix.size()));
  const StoreConfig& cfg = matrix[which];
  INFO("config " << cfg.name);
  auto rng = pdl::test::seeded_rng(0xc057 + which);
  auto nand = pdl::test::make_ram_nand(cfg.geo);
  const Geometry& g = nand->geometry();
  Workload w(rng);
  auto store = loaded_store(*nand, cfg.params, w);
  // Without reset_stats(), format's erases of the data blocks are `other`, and the load is
  // charged to the classes (all class 0: no classifier yet).
  CHECK(store->costs().other.erases == double(g.blocks - kSuperblockBlocks));
  CHECK(store->costs().cls[0].flash.programs >= double(store->logical_pages()));

  store->set_classifier(by_three);
  store->reset_stats();
  NandCounters since = nand->counters();
  for (int i = 0; i < 4000; i++) {
    w.step();
    if (i % 97 == 0) check_invariant(*store, *nand, since);
    if (i % 1000 == 999 && i < 3000) {  // remount: the scan is `other`; then a fresh window
      REQUIRE(store->sync().is_ok());
      std::unique_ptr<PageStore> again;
      MountReport rep;
      REQUIRE(mount_store(*nand, &again, &rep).is_ok());
      const CostBreakdown& m = again->costs();
      CHECK(is_zero(m.gc));
      for (const ClassCost& k : m.cls) CHECK(is_zero(k.flash));
      // PDL/OPU scan spare areas; IPU/IPL, BAST/FAST read every page whole (a torn data page
      // shows only in its data CRC).
      if (pdl::in_page(cfg.params.method) || cfg.params.ftl == FtlKind::kBast ||
          cfg.params.ftl == FtlKind::kFast)
        CHECK(m.other.page_reads == double(rep.pages_scanned));
      else
        CHECK(m.other.spare_reads == double(rep.pages_scanned));
      // The report covers the whole mount: also the superblock's read, which is no store's
      // work (a chip without a checkpoint area: one page).
      CHECK(m.other.sim_us + g.read_us == double(rep.sim_us));
      store = std::move(again);
      store->set_classifier(by_three);
      w.set_store(*store);
      store->reset_stats();
      since = nand->counters();
    }
  }
  REQUIRE(store->sync().is_ok());
  check_invariant(*store, *nand, since);

  // The per-class counts add up to the store's own.
  const CostBreakdown& c = store->costs();
  const StoreStats& s = store->stats();
  uint64_t base = 0, records = 0, record_bytes = 0;
  double dpages = 0;
  for (const ClassCost& k : c.cls) {
    base += k.base_pages;
    records += k.diff_records;
    record_bytes += k.diff_record_bytes;
    dpages += k.diff_pages;
  }
  CHECK(base == s.base_pages_written);
  CHECK(records == s.diff_records);
  CHECK(record_bytes == s.diff_bytes);
  CHECK(close_to(dpages, double(s.diff_pages_written)));
  for (unsigned k = 3; k < kCostClasses; k++) CHECK(is_zero(c.cls[k].flash));
  // The workload is only meaningful if GC (IPL: merges of full log regions; IPU: the rewrite of
  // every overwrite, charged to the writer) ran and every class did work.
  if (cfg.params.method == Method::kIpu) {
    CHECK(s.merges > 0);
    CHECK(is_zero(c.gc));
  } else {
    CHECK(s.gc_runs > 0);
    CHECK(c.gc.erases > 0);
  }
  for (unsigned k = 0; k < 3; k++) CHECK(c.cls[k].flash.programs > 0);
}

TEST_CASE("a class that is not written is charged nothing", "[store][cost]") {
  const ObsoleteMode ob = GENERATE(ObsoleteMode::kSpare, ObsoleteMode::kMemory);
  const Method method = GENERATE(Method::kPdl, Method::kOpu);
  auto rng = pdl::test::seeded_rng(0xc1a55 + unsigned(ob) * 2 + unsigned(method));
  auto nand = pdl::test::make_ram_nand(pdl::test::geometry(512, 32, 8, 40));
  StoreParams p;
  p.method = method;
  p.obsolete = ob;
  p.max_differential = 128;
  Workload w(rng);
  auto store = loaded_store(*nand, p, w);
  const Lpn n = store->logical_pages();
  store->set_classifier([n](uint32_t l) { return uint8_t(l < n / 2 ? 0 : 1); });
  store->reset_stats();
  const NandCounters since = nand->counters();
  for (int i = 0; i < 3000; i++) w.step([&] { return Lpn(n / 2 + rng() % (n - n / 2)); });
  REQUIRE(store->sync().is_ok());
  check_invariant(*store, *nand, since);
  const CostBreakdown& c = store->costs();
  CHECK(is_zero(c.cls[0].flash));
  CHECK(c.cls[0].base_pages == 0);
  CHECK(c.cls[0].diff_records == 0);
  CHECK(c.cls[0].diff_record_bytes == 0);
  CHECK(c.cls[0].diff_pages == 0);
  CHECK(c.cls[1].flash.programs > 0);
  if (method == Method::kOpu) CHECK(c.cls[1].base_pages > 0);
  else CHECK(c.cls[1].diff_records > 0);
  // Class 0's pages were moved by GC all the same: that is `gc`.
  CHECK(store->stats().gc_base_moves > 0);
  CHECK(c.gc.programs > 0);
}

TEST_CASE("a differential page is split over its records' classes by bytes", "[store][cost]") {
  auto rng = pdl::test::seeded_rng(0x5b117);
  const ObsoleteMode ob = GENERATE(ObsoleteMode::kSpare, ObsoleteMode::kMemory);
  INFO("obsolete " << obsolete_name(ob));
  TwoClasses t(rng, ob, 6);
  auto& [nand, store, pages, since] = t;

  // Small differentials of different sizes: class 0 (lpns 0, 2), class 1 (lpns 1, 3, 5).
  const size_t change[6] = {10, 30, 50, 70, 0, 90};
  for (Lpn l : {0u, 1u, 2u, 3u, 5u}) {
    for (size_t k = 0; k < change[l]; k++) pages[l][100 + 2 * k] ^= 0x5A;
    REQUIRE(store->write(l, pages[l]).is_ok());
  }
  const CostBreakdown before_sync = store->costs();
  CHECK(before_sync.cls[0].diff_records == 2);
  CHECK(before_sync.cls[1].diff_records == 3);
  // So far only the writes' base page reads, each to its own class.
  CHECK(before_sync.cls[0].flash.page_reads == 2);
  CHECK(before_sync.cls[1].flash.page_reads == 3);
  CHECK(before_sync.cls[0].flash.programs == 0);
  CHECK(before_sync.cls[0].diff_pages == 0);

  SECTION("records only") {
    REQUIRE(store->sync().is_ok());
    const CostBreakdown& c = store->costs();
    const double b0 = double(c.cls[0].diff_record_bytes), b1 = double(c.cls[1].diff_record_bytes);
    REQUIRE(b0 > 0);
    REQUIRE(b1 > b0);
    CHECK(close_to(c.cls[0].diff_pages, b0 / (b0 + b1)));
    CHECK(close_to(c.cls[1].diff_pages, b1 / (b0 + b1)));
    CHECK(close_to(c.cls[0].diff_pages + c.cls[1].diff_pages, 1.0));
    // The page's one program (fresh differentials: no obsolete mark) is split the same way.
    CHECK(close_to(c.cls[0].flash.programs, b0 / (b0 + b1)));
    CHECK(close_to(c.cls[1].flash.programs, b1 / (b0 + b1)));
    CHECK(close_to(c.cls[0].flash.bytes_programmed + c.cls[1].flash.bytes_programmed,
                   double(nand->geometry().page_data + nand->geometry().page_spare)));
    CHECK(is_zero(c.gc));
    CHECK(is_zero(c.other));
  }

  SECTION("a tombstone weighs its bytes for its class") {
    REQUIRE(store->trim(4).is_ok());  // class 0
    REQUIRE(store->sync().is_ok());
    const CostBreakdown& c = store->costs();
    const double b0 = double(c.cls[0].diff_record_bytes), b1 = double(c.cls[1].diff_record_bytes);
    if (ob == ObsoleteMode::kMemory) {
      // The 16-byte tombstone is in the page.
      const double t0 = b0 + 16;
      CHECK(close_to(c.cls[0].diff_pages, t0 / (t0 + b1)));
      CHECK(close_to(c.cls[1].diff_pages, b1 / (t0 + b1)));
      CHECK(close_to(c.cls[0].flash.programs, t0 / (t0 + b1)));
    } else {
      // lpn 4's only copy is its base page: marking it obsolete is the trim, all class 0's;
      // the page holds the differentials alone.
      CHECK(close_to(c.cls[0].diff_pages, b0 / (b0 + b1)));
      CHECK(close_to(c.cls[0].flash.programs, 1 + b0 / (b0 + b1)));
      CHECK(close_to(c.cls[1].flash.programs, b1 / (b0 + b1)));
    }
    CHECK(close_to(c.cls[0].diff_pages + c.cls[1].diff_pages, 1.0));
  }
  check_invariant(*store, *nand, since);
  CHECK(store->stats().gc_runs == 0);
}

TEST_CASE("a write that flushes others' records pays only its own work", "[store][cost]") {
  auto rng = pdl::test::seeded_rng(0xca5e2);
  const ObsoleteMode ob = GENERATE(ObsoleteMode::kSpare, ObsoleteMode::kMemory);
  INFO("obsolete " << obsolete_name(ob));
  TwoClasses t(rng, ob, 10);
  auto& [nand, store, pages, since] = t;
  // Five 400-byte records of class 0 fill the buffer; class 1's record then takes Case 2.
  for (Lpn l : {0u, 2u, 4u, 6u, 8u, 1u}) {
    for (size_t k = 0; k < 380; k++) pages[l][200 + k] ^= 0xA5;
    REQUIRE(store->write(l, pages[l]).is_ok());
  }
  REQUIRE(store->stats().case2 == 1);
  const CostBreakdown& c = store->costs();
  CHECK(c.cls[0].diff_record_bytes == 5 * 400);
  CHECK(c.cls[1].diff_record_bytes == 400);
  CHECK(c.cls[0].flash.page_reads == 5);  // their base page reads
  CHECK(c.cls[1].flash.page_reads == 1);  // its base page read, not a share of the flush's
  CHECK(c.cls[0].flash.programs == 1);    // the page of class 0's records
  CHECK(c.cls[1].flash.programs == 0);
  CHECK(c.cls[0].diff_pages == 1);
  CHECK(c.cls[1].diff_pages == 0);
  check_invariant(*store, *nand, since);
}

TEST_CASE("garbage collection is charged to gc, and erases never to a class", "[store][cost]") {
  const auto matrix = pdl::test::store_matrix();
  const size_t which = GENERATE_COPY(range(size_t(0), matrix.size()));
  const StoreConfig& cfg = matrix[which];
  INFO("config " << cfg.name);
  auto rng = pdl::test::seeded_rng(0x9c0 + which);
  auto nand = pdl::test::make_ram_nand(cfg.geo);
  Workload w(rng);
  auto store = loaded_store(*nand, cfg.params, w);
  uint64_t wl_runs = 0;
  for (int round = 0; round < 2; round++) {
    store->set_classifier(by_three);
    store->reset_stats();
    const NandCounters since = nand->counters();
    for (int i = 0; i < 1500; i++) w.step();
    REQUIRE(store->sync().is_ok());
    check_invariant(*store, *nand, since);
    const CostBreakdown& c = store->costs();
    const StoreStats& s = store->stats();
    if (cfg.params.method == Method::kIpu) {  // the rewrite is the update: the writer pays
      double class_erases = 0;
      for (const ClassCost& k : c.cls) class_erases += k.flash.erases;
      CHECK(close_to(class_erases, double(s.merges)));
      CHECK(is_zero(c.gc));
    } else {
      for (const ClassCost& k : c.cls) CHECK(k.flash.erases == 0);
      CHECK(s.gc_runs > 0);
      CHECK(c.gc.erases == double(s.gc_runs + s.wl_runs));  // wear levelling is GC's work
      wl_runs += s.wl_runs;
    }
    // One erase per victim collected; with obsolete=memory GC's programs are exactly its
    // copies (no marks), and a class's programs exclude them.
    // (BAST/FAST: a merge's copies are its merge_pages.)
    const bool hybrid = cfg.params.ftl == FtlKind::kBast || cfg.params.ftl == FtlKind::kFast;
    const double gc_copies =
        double(s.gc_base_moves + s.gc_diff_pages + s.gc_merges + s.wl_page_moves +
               (hybrid ? s.merge_pages : 0));
    if (cfg.params.obsolete == ObsoleteMode::kMemory) CHECK(c.gc.programs == gc_copies);
    else CHECK(c.gc.programs >= gc_copies);
    // After a remount, free blocks are not known erased: erasing them when opened is the
    // mount's (deferred) work, never the writer's. Right after format, there is none.
    if (round == 0) CHECK(c.other.erases == 0);
    else CHECK(c.other.erases > 0);
    // Remount for the second round.
    std::unique_ptr<PageStore> again;
    REQUIRE(mount_store(*nand, &again).is_ok());
    again->set_wear_level(cfg.params.wear_level);  // (a run-time choice, not on flash)
    store = std::move(again);
    w.set_store(*store);
  }
  // The matrix's low thresholds make wear levelling part of what this test attributes.
  if (cfg.params.wear_level > 0 && cfg.params.wear_level <= 4) CHECK(wl_runs > 0);
}

TEST_CASE("peek reads like read but leaves no trace", "[store][cost]") {
  const auto matrix = pdl::test::store_matrix();
  const size_t which = GENERATE_COPY(range(size_t(0), matrix.size()));
  const StoreConfig& cfg = matrix[which];
  INFO("config " << cfg.name);
  auto rng = pdl::test::seeded_rng(0x9eec + which);
  auto nand = pdl::test::make_ram_nand(cfg.geo);
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, cfg.params, &store).is_ok());
  store->set_classifier(by_three);
  store->reset_stats();
  const NandCounters since = nand->counters();
  Workload w(rng);
  w.set_store(*store);
  // Leave a mix behind: unmapped lpns, differentials on flash and in the write buffer, trims
  // pending in the buffer, base pages only.
  const Lpn n = store->logical_pages();
  for (int i = 0; i < 1500; i++) w.step([&] { return Lpn(rng() % (n - n / 4)); });
  for (Lpn l = 0; l < n / 8; l++) w.write(l);
  for (Lpn l = 0; l < n / 16; l++) w.trim(3 * l);
  Page got(store->page_size()), want(store->page_size());
  for (Lpn l = 0; l < n; l++) {
    const StoreStats s0 = store->stats();
    const CostBreakdown c0 = store->costs();
    const NandCounters n0 = nand->counters();
    std::fill(got.begin(), got.end(), 0xAB);
    const Status ps = store->peek(l, got);
    CHECK(std::memcmp(&s0, &store->stats(), sizeof s0) == 0);
    CHECK(std::memcmp(&c0, &store->costs(), sizeof c0) == 0);
    CHECK(std::memcmp(&n0, &nand->counters(), sizeof n0) == 0);
    const Status rs = store->read(l, want);
    INFO("lpn " << l << ": peek " << ps.to_string() << ", read " << rs.to_string());
    REQUIRE(ps.code() == rs.code());
    REQUIRE(got == want);
    if (!store->is_mapped(l)) {
      CHECK(ps.is(Errc::kNotFound));
      CHECK(std::all_of(got.begin(), got.end(), [](uint8_t b) { return b == 0; }));
    }
  }
  // Trimmed (pending) and never written lpns are both there.
  CHECK_FALSE(store->is_mapped(0));
  CHECK_FALSE(store->is_mapped(n - 1));
  Page small(10);
  CHECK(store->peek(n, got).is(Errc::kInvalidArgument));
  CHECK(store->peek(0, small).is(Errc::kInvalidArgument));
  // Counting is back on, and peeks did not disturb the accounting.
  const NandCounters n1 = nand->counters();
  for (int i = 0; i < 300; i++) w.step();
  REQUIRE(store->sync().is_ok());
  CHECK(nand->counters().page_reads > n1.page_reads);
  CHECK(nand->counters().programs > n1.programs);
  check_invariant(*store, *nand, since);
}

TEST_CASE("reset_stats zeroes the costs; a counter reset by others is survived",
          "[store][cost]") {
  auto rng = pdl::test::seeded_rng(0x2e5e7);
  auto nand = pdl::test::make_ram_nand(pdl::test::geometry(512, 32, 8, 40));
  StoreParams p;
  p.max_differential = 64;
  Workload w(rng);
  auto store = loaded_store(*nand, p, w);
  store->set_classifier(by_three);
  for (int i = 0; i < 1000; i++) w.step();
  REQUIRE_FALSE(is_zero(store->costs()));
  store->reset_stats();
  CHECK(is_zero(store->costs()));
  const StoreStats zero{};
  StoreStats after = store->stats();
  // (States, not counts of work, kept by reset_stats as bad_blocks is: the table cache.)
  CHECK(after.table_cache_pages == StoreParams::kTableCacheDefault);
  CHECK(after.table_pages_resident > 0);
  after.table_cache_pages = after.table_pages_resident = 0;
  CHECK(std::memcmp(&zero, &after, sizeof zero) == 0);

  // Someone resets the Nand's counters behind the store's back: no bucket goes negative or
  // wraps, and after the next reset_stats() the invariant holds again.
  for (int i = 0; i < 200; i++) w.step();
  nand->reset_counters();
  for (int i = 0; i < 200; i++) w.step();
  const FlashCost t = total_of(store->costs());
  CHECK(t.sim_us >= 0);
  CHECK(t.sim_us < 1e12);
  CHECK(t.bytes_read < 1e12);
  store->reset_stats();
  const NandCounters since = nand->counters();
  for (int i = 0; i < 500; i++) w.step();
  REQUIRE(store->sync().is_ok());
  check_invariant(*store, *nand, since);
}

TEST_CASE("a Nand with counting off works as usual but counts nothing", "[nand][cost]") {
  auto nand = pdl::test::make_ram_nand(pdl::test::small_geometry(8));
  const Geometry& g = nand->geometry();
  std::vector<uint8_t> data(g.page_data, 0x0F), back(g.page_data), spare(g.page_spare);
  nand->set_counting(false);
  REQUIRE(nand->program(4, data, {}).is_ok());
  REQUIRE(nand->read(4, back, spare).is_ok());
  CHECK(back == data);
  REQUIRE(nand->read(4, {}, spare).is_ok());
  // The rules still hold: a 0 bit cannot go back to 1.
  std::vector<uint8_t> ones(g.page_data, 0xFF);
  CHECK(nand->program(4, ones, {}).is(Errc::kNandRule));
  REQUIRE(nand->erase(1).is_ok());
  CHECK(nand->erase_count(1) == 1);  // wear is real, counted or not
  const NandCounters zero{};
  CHECK(std::memcmp(&zero, &nand->counters(), sizeof zero) == 0);
  nand->set_counting(true);
  REQUIRE(nand->read(4, back, {}).is_ok());
  REQUIRE(nand->program(5, data, {}).is_ok());
  REQUIRE(nand->erase(1).is_ok());
  CHECK(nand->counters().page_reads == 1);
  CHECK(nand->counters().programs == 1);
  CHECK(nand->counters().erases == 1);
  CHECK(nand->counters().sim_us == g.read_us + g.program_us + g.erase_us);
}
