// test_store_tables.cc — every engine's checkpointed tables: save_tables then mount_tables gives
// back the same store, and a hostile stream never crashes or misleads.
//
// Over the store matrix (every method, both geometries), after a random workload with GC and a
// sync:
//   * the round trip is exact: the restored store's check() passes, every lpn's locate() and
//     every block's block_info() equal the saved store's, every page reads the same, and saving
//     the restored store gives the very same bytes (a table left out of the stream would show);
//   * it agrees with a scan: a mount by scanning the same chip maps the same lpns and reads the
//     same bytes;
//   * the restored store works on: more random work, a sync, and a scan mount reading it all;
//   * a truncated stream and streams with flipped bytes either fail (kCorrupt, never another
//     error) or give a store whose check() passes — never a crash (the sanitizer build runs it);
//     in the block manager's section (PBLK, bit-packed: format.md §13.1) every bit in turn.
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>

#include "flash/image/mount_tables.h"
#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "tests/support/random_ops.h"
#include "tests/support/store_matrix.h"
#include "tests/support/same_tables.h"
#include "tests/support/test_util.h"

using namespace pdl;
using pdl::test::StoreConfig;

namespace {

using Page = std::vector<uint8_t>;
using Model = std::vector<std::optional<Page>>;

CommitMode mode_of(const StoreParams& p) {
  return has_atomic_commit(p.method) ? CommitMode::kGroup : CommitMode::kPerPage;
}

// Random writes (sparse changes and whole pages), trims and syncs (random_ops.h); ends synced.
void workload(PageStore& store, Model& model, std::mt19937_64& rng, int ops) {
  Model committed = model;
  const pdl::test::OpMix mix{70, 85, 95, false};
  for (int i = 0; i < ops; i++) pdl::test::random_op(store, model, committed, rng, mix);
  pdl::test::sync_model(store, model, committed);
  REQUIRE(!store.dirty());
}

void check_reads(PageStore& store, const Model& model) { pdl::test::require_reads(store, model); }


}  // namespace

TEST_CASE("a store mounted from its saved tables is the store that saved them",
          "[store][checkpoint]") {
  const auto matrix = pdl::test::store_matrix();
  const size_t which = GENERATE_COPY(range(size_t(0), matrix.size()));
  const StoreConfig& cfg = matrix[which];
  INFO("config " << cfg.name);
  auto rng = pdl::test::seeded_rng(0x7ab1e5 + which);
  auto nand = pdl::test::make_test_nand(cfg.geo);
  const CommitMode mode = mode_of(cfg.params);
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, cfg.params, &store, mode).is_ok());
  Model model(store->logical_pages());
  workload(*store, model, rng, 3000);
  REQUIRE(store->check().is_ok());

  TableWriter w;
  Status saved = store->save_tables(w);
  INFO("save_tables: " << saved.to_string());
  REQUIRE(saved.is_ok());
  REQUIRE(w.size() > 0);

  const uint64_t programs = nand->counters().programs, erases = nand->counters().erases;
  std::unique_ptr<PageStore> restored;
  TableReader r(w.data());
  Status st = mount_store_tables(*nand, store->params(), mode, r, &restored);
  INFO("mount_store_tables: " << st.to_string());
  REQUIRE(st.is_ok());
  REQUIRE(r.at_end());
  // Restoring touches nothing on the chip.
  REQUIRE(nand->counters().programs == programs);
  REQUIRE(nand->counters().erases == erases);
  Status consistent = restored->check();
  INFO("check: " << consistent.to_string());
  REQUIRE(consistent.is_ok());
  pdl::test::require_same_tables(*store, *restored, cfg.geo.blocks);
  REQUIRE(restored->dirty() == false);

  // Saving the restored store gives the same bytes: nothing was left out of the stream.
  TableWriter again;
  REQUIRE(restored->save_tables(again).is_ok());
  REQUIRE(again.data() == w.data());
  check_reads(*restored, model);

  // A scan of the same chip agrees.
  {
    std::unique_ptr<PageStore> scanned;
    REQUIRE(mount_store(*nand, &scanned, nullptr, mode).is_ok());
    for (Lpn l = 0; l < scanned->logical_pages(); l++) {
      INFO("lpn " << l);
      REQUIRE(scanned->is_mapped(l) == restored->is_mapped(l));
    }
    check_reads(*scanned, model);
  }

  // The restored store works on.
  store.reset();
  workload(*restored, model, rng, 1500);
  REQUIRE(restored->check().is_ok());
  std::unique_ptr<PageStore> last;
  REQUIRE(mount_store(*nand, &last, nullptr, mode).is_ok());
  check_reads(*last, model);
}

TEST_CASE("a damaged table stream is refused or harmless, never a crash", "[store][checkpoint]") {
  const auto matrix = pdl::test::store_matrix();
  const size_t which = GENERATE_COPY(range(size_t(0), matrix.size()));
  const StoreConfig& cfg = matrix[which];
  INFO("config " << cfg.name);
  auto rng = pdl::test::seeded_rng(0xbad7ab + which);
  auto nand = pdl::test::make_test_nand(cfg.geo);
  const CommitMode mode = mode_of(cfg.params);
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, cfg.params, &store, mode).is_ok());
  Model model(store->logical_pages());
  workload(*store, model, rng, 800);
  TableWriter w;
  REQUIRE(store->save_tables(w).is_ok());
  const std::vector<uint8_t> good = w.data();

  // Every truncation point in a sample (a stream cut short never mounts).
  const size_t step = std::max<size_t>(1, good.size() / 97);
  for (size_t n = 0; n < good.size(); n += step) {
    INFO("truncated to " << n << " of " << good.size());
    std::vector<uint8_t> cut(good.begin(), good.begin() + std::ptrdiff_t(n));
    TableReader r(cut);
    std::unique_ptr<PageStore> out;
    Status st = mount_store_tables(*nand, store->params(), mode, r, &out);
    REQUIRE(st.is(Errc::kCorrupt));
  }
  // Each bit of the block manager's section flipped in turn (PDL, OPU and the page FTL).
  static constexpr uint8_t kPblk[] = {'P', 'B', 'L', 'K'};
  const auto at = std::search(good.begin(), good.end(), std::begin(kPblk), std::end(kPblk));
  if (at != good.end()) {
    const size_t from = size_t(at - good.begin());
    // The section ends where the next one's tag starts (PDWB follows it).
    static constexpr uint8_t kNext[] = {'P', 'D', 'W', 'B'};
    const auto next = std::search(at, good.end(), std::begin(kNext), std::end(kNext));
    const size_t to = next == good.end() ? good.size() : size_t(next - good.begin());
    for (size_t bit = from * 8; bit < to * 8; bit++) {
      std::vector<uint8_t> bad = good;
      bad[bit / 8] ^= uint8_t(1u << (bit % 8));
      TableReader r(bad);
      std::unique_ptr<PageStore> out;
      Status st = mount_store_tables(*nand, store->params(), mode, r, &out);
      INFO("PBLK bit " << bit - from * 8 << ": " << st.to_string());
      if (st.is_ok()) {
        (void)out->check();
      } else {
        REQUIRE(st.is(Errc::kCorrupt));
      }
    }
  }
  // Flipped bytes: refused as corrupt, or a self-consistent store.
  for (int trial = 0; trial < 200; trial++) {
    std::vector<uint8_t> bad = good;
    const int flips = 1 + int(rng() % 4);
    for (int f = 0; f < flips; f++) bad[rng() % bad.size()] ^= uint8_t(1u << (rng() % 8));
    TableReader r(bad);
    std::unique_ptr<PageStore> out;
    Status st = mount_store_tables(*nand, store->params(), mode, r, &out);
    INFO("trial " << trial << ": " << st.to_string());
    if (st.is_ok()) {
      (void)out->check();  // may find the damage; must not crash
    } else {
      REQUIRE(st.is(Errc::kCorrupt));
    }
  }
}
