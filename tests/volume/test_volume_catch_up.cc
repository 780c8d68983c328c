// test_volume_catch_up.cc — the Volume after a power cut, from the tables of the last
// checkpoint brought up to date by the lpns the store's replay names (volume_catch_up.cc): at
// random cuts in random file work — periodic checkpoints written by the Volume's syncs, some
// sessions closed cleanly and reopened from their checkpoint — the open that catches up equals,
// on a copy of the same chip, the open that reads every metadata page (files, bytes, chunk
// tables, owner entries, free lpns), both check clean, and the caught-up open's clean-up is
// durable (a reading open after its close finds the same). PDL and OPU, atomic and per page,
// IPL atomic, IPU, StableBuffer on the page FTL, PDL with its write buffer in NVM and IPL with
// its log areas in NVM (the engines whose replay lists the lpns it reconsidered).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "flash/device/emulated_nand.h"
#include "flash/image/open_store.h"
#include "flash/ipl/ipl_nvm.h"
#include "flash/store/checkpointed_store.h"
#include "flash/volume/volume.h"
#include "tests/support/test_util.h"
#include "tests/support/volume_options.h"
#include "tests/support/volume_snapshot.h"

using namespace pdl;

namespace {

struct Config {
  const char* name;
  Method method;
  CommitMode mode;
  uint32_t nvm_bytes = 0;  // > 0: PDL's write buffer, or IPL's log areas, in that much NVM
};

StoreParams params_of(const Config& c) {
  StoreParams p;
  p.method = c.method;
  // (IPL: two log pages per erase block, or with NVM 1 KiB of it: eight 128-byte sectors.)
  if (c.method == Method::kIpl) p.log_region = 2 * 512;
  else if (c.method == Method::kStableBuffer) p.ftl = FtlKind::kPage;
  else if (c.method != Method::kIpu && c.nvm_bytes == 0) p.max_differential = 64;
  p.nvm_bytes = c.nvm_bytes;
  p.checkpoint = true;
  p.replay_blocks = 8;  // periodic checkpoints every few blocks: many in each session
  return p;
}

Geometry geometry(const Config& c) {
  Geometry g;
  g.page_data = 512;
  g.pages_per_block = 16;
  g.blocks = 256;
  g.nvm_bytes = c.nvm_bytes;
  return g;
}

// Image::close's checkpoint: the Volume closed, its tables with the store's.
void close_with_checkpoint(Volume& v) {
  REQUIRE(v.close().is_ok());
  TableWriter w;
  REQUIRE(v.save_tables(w).is_ok());
  REQUIRE(v.store().write_checkpoint(w.data()).is_ok());
}

// The open an image does: the store mounted (from its checkpoint, replaying what was declared
// since), then the Volume from the checkpoint's tables — caught up if the store was replayed.
Status open_from_checkpoint(Nand& chip, const Config& c, std::unique_ptr<Volume>* out,
                            MountReport* r = nullptr) {
  std::unique_ptr<PageStore> s;
  ClientTables client;
  const StoreParams run_time = params_of(c);  // (replay_blocks: a run-time choice)
  PDL_TRY(mount_store(chip, &s, r, c.mode, &run_time, &client));
  return Volume::open(std::move(s), test::volume_options(), out, client.section,
                      client.replayed ? &client.touched : nullptr);
}

Status open_reading(Nand& chip, const Config& c, std::unique_ptr<Volume>* out) {
  std::unique_ptr<PageStore> s;
  const StoreParams run_time = params_of(c);
  PDL_TRY(mount_store(chip, &s, nullptr, c.mode, &run_time));
  return Volume::open(std::move(s), test::volume_options(), out);
}

}  // namespace

TEST_CASE("after a power cut, a volume caught up from its checkpoint equals one that read its "
          "metadata pages",
          "[volume][checkpoint][crash]") {
  const Config configs[] = {{"pdl atomic", Method::kPdl, CommitMode::kGroup},
                            {"pdl per page", Method::kPdl, CommitMode::kPerPage},
                            {"opu atomic", Method::kOpu, CommitMode::kGroup},
                            {"ipl atomic", Method::kIpl, CommitMode::kGroup},
                            {"ipu", Method::kIpu, CommitMode::kPerPage},
                            {"stablebuffer on the page ftl", Method::kStableBuffer,
                             CommitMode::kPerPage},
                            {"pdl atomic, write buffer in nvm", Method::kPdl,
                             CommitMode::kGroup, 8192},
                            {"ipl atomic, log areas in nvm", Method::kIpl, CommitMode::kGroup,
                             kNvmCommitArea + (256 - kSuperblockBlocks) * 2 * 512}};
  // PDL_CRASH_TRIALS scales the 200 cuts per configuration, as the SQLite crash campaigns'
  // 100, but never below 40 (the sanitizer run): the counts checked below are sums over the
  // opens that caught up, and with a handful of those IPL's and IPU's (a few in 3) can tie.
  // PDL_TEST_SEED moves the seeds.
  const char* e = std::getenv("PDL_CRASH_TRIALS");
  const int trials = e ? std::max(40, std::atoi(e) * 2) : 200;
  for (const Config& cfg : configs) {
    INFO(cfg.name);
    int caught_up = 0, periodic = 0;
    uint64_t reads_caught_up = 0, reads_reading = 0;
    for (int t = 0; t < trials; t++) {
      INFO("trial " << t);
      std::mt19937 rng(uint32_t(test::test_seed() * 100003 + 7000 + uint64_t(t)));
      auto chip = test::make_ram_nand(geometry(cfg));
      std::unique_ptr<Volume> v =
          test::fresh_volume(*chip, params_of(cfg), cfg.mode, 16, "db", test::volume_options());
      close_with_checkpoint(*v);  // (as a new image's first close: summaries from here)
      for (int i = 0; i < 150; i++) REQUIRE(test::random_op(*v, rng, 64).is_ok());
      if (t % 3 == 0) {  // a clean close, and a session from its checkpoint
        close_with_checkpoint(*v);
        v.reset();
        REQUIRE(open_from_checkpoint(*chip, cfg, &v).is_ok());
        REQUIRE(v->from_tables());
      }
      for (int i = 0; i < int(rng() % 150); i++) REQUIRE(test::random_op(*v, rng, 64).is_ok());
      periodic += v->stats().checkpoints > 0;
      chip->cut_power_after(rng() % 300, t % 2 ? Tear::kRandomBits : Tear::kPrefix, t);
      Status st;
      for (int i = 0; i < 3000 && st.is_ok(); i++) st = test::random_op(*v, rng, 64);
      v.reset();
      chip->restore_power();

      auto a = chip->clone(), b = chip->clone();
      std::unique_ptr<Volume> va, vb;
      const NandCounters a0 = a->counters(), b0 = b->counters();
      MountReport r;
      REQUIRE(open_from_checkpoint(*a, cfg, &va, &r).is_ok());
      // (Caught up only after a replay; else from the tables as they are, or by reading.)
      if (va->caught_up()) CHECK(r.replayed_blocks > 0);
      REQUIRE(open_reading(*b, cfg, &vb).is_ok());
      INFO("caught up: " << va->caught_up() << ", refused: " << va->tables_refused());
      CHECK(va->tables_refused().empty());
      if (va->caught_up()) {
        caught_up++;
        reads_caught_up += a->counters().page_reads - a0.page_reads;
        reads_reading += b->counters().page_reads - b0.page_reads;
      }
      const test::Snapshot want = test::snapshot(*vb);
      test::require_equal(test::snapshot(*va), want, "caught up vs read");
      REQUIRE(va->check().is_ok());
      REQUIRE(vb->check().is_ok());
      // The caught-up open's clean-up is on flash as the reading open's: closed (the trims
      // the clean-up issued made durable) and read again, the two chips hold the same.
      REQUIRE(va->close().is_ok());
      REQUIRE(vb->close().is_ok());
      va.reset();
      vb.reset();
      REQUIRE(open_reading(*a, cfg, &va).is_ok());
      REQUIRE(open_reading(*b, cfg, &vb).is_ok());
      test::require_equal(test::snapshot(*va), test::snapshot(*vb), "read again after close");
    }
    WARN(cfg.name << ": " << caught_up << " of " << trials << " opens caught up; " << periodic
                   << " sessions wrote periodic checkpoints; pages read " << reads_caught_up
                   << " (caught up, whole mount) vs " << reads_reading << " (reading)");
    // (With NVM most commits program nothing: fewer blocks declared, fewer periodic
    // checkpoints; and the lpns the replay lists include every one the NVM log names — on
    // this small volume, its hot owner pages — so catching up reads what reading reads.)
    CHECK(periodic > (cfg.nvm_bytes ? 0 : trials / 2));
    // (PDL and OPU catch up about 9 times in 10; IPL and IPU, which declare a block per
    // logical block they touch, go stale past the small budget more often and scan.)
    CHECK(caught_up * 5 > trials);
    if (cfg.nvm_bytes) CHECK(reads_caught_up <= reads_reading);
    else CHECK(reads_caught_up < reads_reading);
  }
}
