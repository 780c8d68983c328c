// test_bad_blocks.cc — every page-update method over bad blocks and a worn-out chip
// (docs/reliability.md: bad blocks, wear-out).
//
// For each store configuration on the small-page geometry (store_matrix.h) and each block index
// b of the chip in turn:
//   * factory: b is marked bad before the format — the store never programs or erases it (its
//     erase count stays 0), and a format with b = 0 or 1 keeps one superblock copy;
//   * program failure: b fails every program from just after the format (a grown bad block);
//   * erase failure: b fails every erase from just after the format;
// then a workload (every logical page written, then updates, a sync every 8 writes; enough to
// cycle garbage collection or merges through the whole chip) runs without an error, every page
// reads back as written, check() passes, a block that failed is retired — marked bad on the chip,
// state "bad" — by the next sync, and a remount gives the same pages.
// Wear-out: on a chip with a small erase limit, writes (each synced) run until the first error,
// which must be kFull (SQLITE_FULL above); every page written before reads back, before and after
// a remount, and the retired blocks are reported. The totals are printed (docs/reliability.md).
#include <optional>

#include <catch2/catch.hpp>

#include "flash/image/open_store.h"
#include "flash/device/emulated_nand.h"
#include "flash/store/page_store.h"
#include "tests/support/store_matrix.h"
#include "tests/support/store_rig.h"
#include "tests/support/test_util.h"

using namespace pdl;
using pdl::test::StoreConfig;

namespace {

using Page = std::vector<uint8_t>;

using Rig = test::StoreRig;

// Every page as the model says; `either` (if set) may also hold `alt` (a write not synced).
void verify(Rig& r, std::optional<Lpn> either = std::nullopt, const Page& alt = {}) {
  Page got(r.store->page_size());
  for (Lpn l = 0; l < r.model.size(); l++) {
    const Status st = r.store->read(l, got);
    INFO("lpn " << l << ": " << st.to_string());
    if (either == l && st.is_ok() && got == alt) continue;
    if (r.model[l]) {
      REQUIRE(st.is_ok());
      REQUIRE(got == *r.model[l]);
    } else {
      REQUIRE(st.is(Errc::kNotFound));
    }
  }
  const Status ck = r.store->check();
  INFO(ck.to_string());
  REQUIRE(ck.is_ok());
}

void remount(Rig& r, std::optional<Lpn> either = std::nullopt, const Page& alt = {}) {
  r.store.reset();
  const Status st = mount_store(*r.nand, &r.store);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  verify(r, either, alt);
}

// Every logical page written, then two rounds updating half of them; a sync every 8 writes.
void workload(Rig& r) {
  const Lpn n = r.store->logical_pages();
  r.model.assign(n, std::nullopt);
  uint64_t writes = 0;
  auto write = [&](Lpn l) {
    const Page p = next_version(r, l);
    const Status st = r.store->write(l, p);
    INFO("write " << writes << " of lpn " << l << ": " << st.to_string());
    REQUIRE(st.is_ok());
    r.model[l] = p;
    if (++writes % 8 == 0) REQUIRE(r.store->sync().is_ok());
  };
  for (Lpn l = 0; l < n; l++) write(l);
  for (int round = 0; round < 2; round++)
    for (Lpn l = 0; l < n; l++)
      if (r.rng() % 2) write(l);
  const Status st = r.store->sync();
  INFO(st.to_string());
  REQUIRE(st.is_ok());
}

Rig make(const StoreConfig& cfg, uint64_t salt) {
  Rig r;
  r.rng = test::seeded_rng(salt);
  r.nand = test::make_ram_nand(cfg.geo);
  return r;
}

// IPU, IPL, BAST and FAST use every block but the merge reserve (1 by default) (and BAST/FAST's
// log blocks) for data, so a full store tolerates reserve - 1 bad blocks before a merge finds
// no block (kFull): one more here.
std::vector<StoreConfig> small_page_configs() {
  std::vector<StoreConfig> out;
  for (StoreConfig c : test::store_matrix())
    if (c.geo.page_data == 512) {
      if (pdl::in_page(c.params.method) || c.params.ftl == FtlKind::kBast ||
          c.params.ftl == FtlKind::kFast)
        c.params.gc_reserve_blocks = 2;
      out.push_back(c);
    }
  return out;
}

enum class Fault { kFactory, kProgram, kErase };

struct Totals {
  uint64_t runs = 0, used = 0, program_failures = 0, erase_failures = 0, retired = 0;
};

// One block made bad in one way under one configuration; returns whether the store met the
// fault (the failing block was programmed or erased; always for a factory mark).
void run_one(const StoreConfig& cfg, uint32_t b, Fault fault, Totals* t) {
  INFO(cfg.name << ", block " << b << ", fault " << int(fault));
  Rig r = make(cfg, 0xBAD0 + b * 3 + uint64_t(fault));
  if (fault == Fault::kFactory) REQUIRE(r.nand->mark_bad(b).is_ok());
  const Status fs = format_store(*r.nand, cfg.params, &r.store);
  INFO(fs.to_string());
  REQUIRE(fs.is_ok());
  if (fault != Fault::kFactory)
    r.nand->fail_block(b, fault == Fault::kProgram ? EmulatedNand::FailOn::kProgram
                                                   : EmulatedNand::FailOn::kErase);
  workload(r);
  verify(r);
  const NandCounters& c = r.nand->counters();
  const bool met = fault == Fault::kFactory || c.program_failures + c.erase_failures > 0;
  t->runs++;
  t->used += met;
  t->program_failures += c.program_failures;
  t->erase_failures += c.erase_failures;
  t->retired += r.store->stats().blocks_retired;
  if (fault == Fault::kFactory) {
    CHECK(r.nand->erase_count(b) == 0);
    CHECK(c.program_failures + c.erase_failures == 0);
  }
  if (met) {
    CHECK(r.nand->marked_bad(b));
    if (b >= kSuperblockBlocks) CHECK(r.store->block_info(b).state == BlockInfo::kBad);
    if (fault != Fault::kFactory && b >= kSuperblockBlocks) {
      CHECK(r.store->stats().blocks_retired == 1);
      CHECK(r.store->stats().bad_blocks == 1);
    }
  }
  remount(r);
}

}  // namespace

TEST_CASE("each block made bad in turn — factory mark, failing programs, failing erases — "
          "loses nothing and is retired", "[store][bad_blocks]") {
  Totals t;
  uint32_t configs = 0;
  for (const StoreConfig& cfg : small_page_configs()) {
    configs++;
    for (uint32_t b = 0; b < cfg.geo.blocks; b++)
      for (Fault f : {Fault::kFactory, Fault::kProgram, Fault::kErase})
        if (test::in_matrix_sample(b * 3 + size_t(f), __LINE__)) run_one(cfg, b, f, &t);
  }
  WARN("bad blocks: " << t.runs << " runs (" << configs << " configurations x every block x "
                      << "3 faults), " << t.used << " met the bad block, "
                      << t.program_failures << " program failures, " << t.erase_failures
                      << " erase failures, " << t.retired << " blocks retired, 0 pages lost");
}

TEST_CASE("a format with both superblock blocks bad fails with a clear error",
          "[store][bad_blocks]") {
  auto nand = test::make_ram_nand(test::small_geometry());
  REQUIRE(nand->mark_bad(0).is_ok());
  REQUIRE(nand->mark_bad(1).is_ok());
  StoreParams p;
  std::unique_ptr<PageStore> store;
  const Status st = format_store(*nand, p, &store);
  INFO(st.to_string());
  CHECK(st.is(Errc::kBadBlock));
  CHECK(st.to_string().find("superblock") != std::string::npos);
}

TEST_CASE("a chip worn out to the end of its life refuses writes with kFull and keeps every "
          "page readable", "[store][bad_blocks][wear]") {
  uint64_t total_writes = 0, total_retired = 0;
  uint32_t configs = 0;
  for (StoreConfig cfg : small_page_configs()) {
    configs++;
    INFO(cfg.name);
    cfg.geo.erase_limit = 12;
    Rig r = make(cfg, 0x3EA2);
    REQUIRE(format_store(*r.nand, cfg.params, &r.store).is_ok());
    const Lpn n = r.store->logical_pages();
    r.model.assign(n, std::nullopt);
    Status st;
    uint64_t writes = 0;
    std::optional<Lpn> unsynced;  // written, but its sync failed: old or new after a remount
    Page unsynced_page;
    while (writes < 2000000) {
      const Lpn l = writes < n ? Lpn(writes) : Lpn(r.rng() % n);
      const Page p = next_version(r, l);
      st = r.store->write(l, p);
      if (!st.is_ok()) break;
      st = r.store->sync();
      if (!st.is_ok()) {
        unsynced = l;
        unsynced_page = p;
        break;
      }
      r.model[l] = p;  // written and synced
      writes++;
    }
    INFO("after " << writes << " writes: " << st.to_string());
    REQUIRE(st.is(Errc::kFull));
    CHECK(r.store->stats().bad_blocks > 0);
    total_writes += writes;
    total_retired += r.store->stats().bad_blocks;
    // The write that failed changed nothing; every synced page reads back, now and after a
    // remount, and the store still refuses to write.
    verify(r, unsynced, unsynced_page);
    remount(r, unsynced, unsynced_page);
    const Lpn l = 0;
    const Status again = r.store->write(l, next_version(r, l));
    INFO(again.to_string());
    CHECK((again.is(Errc::kFull) || again.is_ok()));
  }
  WARN("wear-out: " << configs << " configurations run to the end of life (erase limit 12): "
                    << total_writes << " synced writes, " << total_retired
                    << " blocks worn out and retired, first error kFull, 0 pages lost");
}
