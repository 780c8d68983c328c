// test_checkpoint.cc — the checkpoint area, log and guard (docs/design.md §17): what a format
// with an area looks like, when a checkpoint is written and when it is not, the guard making it
// stale before the chip changes, power cuts inside a checkpoint write, a stale entry and a log
// block switch, and damaged log entries and area pages — after any of them, mount never takes
// a checkpoint that is not the chip's state (it scans instead) and the contents are the last
// synced ones.
//
// The checkpoint mechanics do not depend on what the engine's tables are: most cases here run
// a PDL store behind a test engine (TablesEngine, tests/support/tables_engine.h, with the
// cases' common set-up TablesChip) whose save_tables writes a digest of the store's contents,
// so that a stream can be checked against the state it claims to be.
#include <catch2/catch.hpp>

#include <cstring>
#include <optional>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/device/emulated_nand.h"
#include "flash/image/open_store.h"
#include "flash/pdl/pdl_store.h"
#include "flash/store/checkpoint_area.h"
#include "flash/store/checkpoint_log.h"
#include "flash/store/checkpoint_view.h"
#include "flash/store/checkpointed_store.h"
#include "flash/store/superblock.h"
#include "tests/support/random_ops.h"
#include "tests/support/same_tables.h"
#include "tests/support/tables_engine.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using Page = std::vector<uint8_t>;
using Model = std::vector<std::optional<Page>>;

using pdl::test::area_params;
using pdl::test::chip_geometry;
using pdl::test::kArea;
using pdl::test::open_tables;
using pdl::test::TablesChip;

struct LogState {
  bool has = false, doubt = false, trusted = false;
  LogEntry newest;
};
LogState log_state(Nand& chip) {
  Superblock sb;
  REQUIRE(read_superblock(chip, resolve_store_params, &sb).is_ok());
  CheckpointLog log(chip, sb);
  REQUIRE(log.load().is_ok());
  return {log.has_entry(), log.doubt(), log.trusted_checkpoint(), log.newest()};
}

// The engine and client sections of the checkpoint the log trusts; false if none verifies.
bool read_checkpoint(Nand& chip, std::vector<uint8_t>* engine, std::vector<uint8_t>* client) {
  Superblock sb;
  REQUIRE(read_superblock(chip, resolve_store_params, &sb).is_ok());
  CheckpointLog log(chip, sb);
  REQUIRE(log.load().is_ok());
  if (!log.trusted_checkpoint()) return false;
  const uint32_t first = chip.geometry().blocks - sb.checkpoint_blocks;
  std::vector<uint8_t> stream;
  uint64_t pages;
  if (!read_area(chip, first, sb.checkpoint_blocks, log.newest(), &stream, &pages).is_ok())
    return false;
  std::span<const uint8_t> e, c;
  if (!decode_stream(stream, stream_header_for(sb, chip.geometry(), log.newest().gen), &e, &c)
           .is_ok())
    return false;
  engine->assign(e.begin(), e.end());
  client->assign(c.begin(), c.end());
  return true;
}

// The tables TablesEngine writes for contents `model` (as read back by a scan).
std::vector<uint8_t> tables_of(Nand& chip) {
  std::unique_ptr<PageStore> s;
  REQUIRE(open_tables(chip, &s).is_ok());
  TableWriter w;
  REQUIRE(s->save_tables(w).is_ok());
  return w.data();
}

void write_some(PageStore& s, Model& model, std::mt19937_64& rng, int n) {
  for (int i = 0; i < n; i++) {
    const Lpn l = Lpn(rng() % s.logical_pages());
    const Page p = pdl::test::next_version(rng, model[l] ? &*model[l] : nullptr, s.page_size());
    const Status st = s.write(l, p);
    INFO("write lpn " << l << ": " << st.to_string());
    REQUIRE(st.is_ok());
    model[l] = p;
  }
  REQUIRE(s.sync().is_ok());
}

// A scan mount of `chip` reads exactly `model`.
void require_contents(Nand& chip, const Model& model) {
  std::unique_ptr<PageStore> s;
  MountReport r;
  const Status st = mount_store(chip, &s, &r, CommitMode::kGroup);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  REQUIRE(s->check().is_ok());
  Page buf(s->page_size());
  for (Lpn l = 0; l < model.size(); l++) {
    const Status rs = s->read(l, buf);
    INFO("lpn " << l);
    if (model[l]) {
      REQUIRE(rs.is_ok());
      REQUIRE(buf == *model[l]);
    } else {
      REQUIRE(rs.is(Errc::kNotFound));
    }
  }
}

const std::vector<uint8_t> kClient = {'v', 'o', 'l', 'u', 'm', 'e'};

// No checkpoint of `chip` verifies: the mount scans ("checkpoint corrupt: ...") and reads
// exactly `model`.
void require_corrupt_checkpoint(EmulatedNand& chip, const Model& model) {
  std::vector<uint8_t> eng, cl;
  CHECK_FALSE(read_checkpoint(chip, &eng, &cl));
  std::unique_ptr<PageStore> m;
  MountReport r;
  REQUIRE(mount_store(chip, &m, &r, CommitMode::kGroup).is_ok());
  CHECK_FALSE(r.from_checkpoint);
  CHECK(r.scan_reason.find("checkpoint corrupt") == 0);
  m.reset();
  require_contents(chip, model);
}


// Flip enough bits of page `ppa`'s data that no ECC corrects them.
void smash(EmulatedNand& chip, Ppa ppa) {
  for (uint32_t i = 0; i < 64; i++) REQUIRE(chip.flip_stored_bit(ppa, i * 7, i % 8).is_ok());
}

}  // namespace

TEST_CASE("a store formatted with a checkpoint area runs on the blocks before it",
          "[checkpoint]") {
  auto chip = pdl::test::make_ram_nand(chip_geometry());
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*chip, area_params(), &s, CommitMode::kGroup).is_ok());
  CHECK(s->nand().geometry().blocks == 64 - kArea);
  CHECK(s->params().checkpoint);
  CHECK(s->params().checkpoint_blocks == kArea);
  // Superblock format 6 on flash, the base format (2) in its extension.
  Page data(512);
  REQUIRE(chip->read(0, data, {}).is_ok());
  CHECK(le::get32(data.data() + 8) == kSuperblockHalves);
  CHECK(le::get32(data.data() + 96) == kSuperblockAtomic);
  CHECK(le::get32(data.data() + 100) == kArea);
  Superblock sb;
  REQUIRE(read_superblock(*chip, resolve_store_params, &sb).is_ok());
  CHECK(sb.version == kSuperblockAtomic);
  CHECK(sb.checkpoint_blocks == kArea);

  auto rng = pdl::test::seeded_rng(1);
  Model model(s->logical_pages());
  for (int i = 0; i < 20; i++) write_some(*s, model, rng, 40);  // GC runs several times
  CHECK(s->stats().gc_runs > 0);
  for (uint32_t b = 64 - kArea; b < 64; b++) CHECK(chip->erase_count(b) == 0);
  s.reset();
  std::unique_ptr<PageStore> m;
  MountReport r;
  REQUIRE(mount_store(*chip, &m, &r, CommitMode::kGroup).is_ok());
  CHECK_FALSE(r.from_checkpoint);
  CHECK(r.scan_reason == "no checkpoint");
  m.reset();
  require_contents(*chip, model);

  // Without an area: format 2 as before, and the report says why it scanned.
  auto plain = pdl::test::make_ram_nand(chip_geometry());
  StoreParams p = area_params();
  p.checkpoint = false;
  REQUIRE(format_store(*plain, p, &s, CommitMode::kGroup).is_ok());
  CHECK(s->nand().geometry().blocks == 64);
  CHECK(s->write_checkpoint(kClient).is(Errc::kUnsupported));
  s.reset();
  REQUIRE(mount_store(*plain, &m, &r, CommitMode::kGroup).is_ok());
  CHECK(r.scan_reason == "format without a checkpoint area");
}

TEST_CASE("an area that does not fit the chip is refused at format, naming why",
          "[checkpoint]") {
  auto chip = pdl::test::make_ram_nand(chip_geometry());
  StoreParams p = area_params();
  p.checkpoint_blocks = 40;
  std::unique_ptr<PageStore> s;
  const Status st = format_store(*chip, p, &s, CommitMode::kGroup);
  CHECK(st.is(Errc::kInvalidArgument));
  CHECK(std::string(st.message()).find("does not fit") != std::string::npos);
  // The bound: engine and client tables plus margins, a few blocks for a 64-block chip.
  uint32_t area = 0;
  p.checkpoint_blocks = 0;
  p.obsolete = ObsoleteMode::kMemory;
  const Geometry big = pdl::test::geometry(2048, 64, 64, 1024);  // 128 MiB
  const Status fits = checkpoint_area_for(p, big, &area);
  INFO(fits.to_string());
  REQUIRE(fits.is_ok());
  CHECK(area >= 3);
  CHECK(area <= 1024 / 8);
}

TEST_CASE("write_checkpoint needs a synced store and writes nothing when nothing changed",
          "[checkpoint]") {
  TablesChip rig(2);
  auto& [chip, s, rng, model] = rig;
  write_some(*s, model, rng, 30);
  REQUIRE(s->write(3, pdl::test::random_page(rng, 512)).is_ok());
  const uint64_t programs = chip->counters().programs;
  const Status busy = s->write_checkpoint(kClient);
  CHECK(busy.is(Errc::kBusy));
  CHECK(std::string(busy.message()).find("not synced") != std::string::npos);
  CHECK(chip->counters().programs == programs);
  REQUIRE(s->abort().is_ok());

  REQUIRE(s->write_checkpoint(kClient).is_ok());
  LogState ls = log_state(*chip);
  CHECK(ls.trusted);
  CHECK(ls.newest.gen == 1);
  std::vector<uint8_t> eng, cl;
  REQUIRE(read_checkpoint(*chip, &eng, &cl));
  CHECK(cl == kClient);
  CHECK(eng == tables_of(*chip));
  // Again with nothing changed: not a single operation.
  const NandCounters before = chip->counters();
  REQUIRE(s->write_checkpoint(kClient).is_ok());
  CHECK(chip->counters().programs == before.programs);
  CHECK(chip->counters().erases == before.erases);
  // A change: the guard writes "stale" first; the next checkpoint is gen 2.
  write_some(*s, model, rng, 5);
  ls = log_state(*chip);
  CHECK(ls.newest.kind == LogKind::kStale);
  CHECK(ls.newest.gen == 1);
  REQUIRE(s->write_checkpoint(kClient).is_ok());
  ls = log_state(*chip);
  CHECK(ls.trusted);
  CHECK(ls.newest.gen == 2);
  REQUIRE(read_checkpoint(*chip, &eng, &cl));
  s.reset();
  CHECK(eng == tables_of(*chip));
  require_contents(*chip, model);
}

TEST_CASE("the guard's stale entry is durable before the chip's first change",
          "[checkpoint]") {
  TablesChip rig(3);
  auto& [base, s, rng, model] = rig;
  write_some(*s, model, rng, 30);
  REQUIRE(s->write_checkpoint(kClient).is_ok());
  s.reset();
  const auto tables = tables_of(*base);
  // Cut at every operation of the next change (the stale entry first, then the engine's).
  for (uint64_t k = 0;; k++) {
    INFO("cut at operation " << k);
    auto chip = base->clone();
    std::unique_ptr<PageStore> t;
    REQUIRE(open_tables(*chip, &t).is_ok());
    Model after = model;
    chip->cut_power_after(k, k % 2 ? Tear::kRandomBits : Tear::kNone, k);
    auto r2 = pdl::test::seeded_rng(30);
    bool cut = false;
    for (int i = 0; i < 10 && !cut; i++) {
      const Lpn l = Lpn(r2() % t->logical_pages());
      const Page p = pdl::test::random_page(r2, 512);
      if (!t->write(l, p).is_ok()) cut = true;
      else after[l] = p;
    }
    if (!cut && !t->sync().is_ok()) cut = true;
    t.reset();
    chip->restore_power();
    const LogState ls = log_state(*chip);
    if (ls.trusted) {  // the checkpoint still names the chip's state
      std::vector<uint8_t> eng, cl;
      REQUIRE(read_checkpoint(*chip, &eng, &cl));
      CHECK(eng == tables);
      CHECK(tables_of(*chip) == tables);
    } else {
      CHECK(ls.newest.kind == LogKind::kStale);
    }
    if (!cut) {
      CHECK_FALSE(ls.trusted);
      require_contents(*chip, after);
      break;
    }
    REQUIRE(k < 200);
  }
}

TEST_CASE("a power cut anywhere in a checkpoint write never leaves a checkpoint that is not "
          "the chip's state",
          "[checkpoint]") {
  for (const bool earlier : {false, true}) {
    DYNAMIC_SECTION((earlier ? "over a stale checkpoint" : "the first checkpoint")) {
      TablesChip rig(4);
      auto& [base, s, rng, model] = rig;
      write_some(*s, model, rng, 40);
      if (earlier) {
        REQUIRE(s->write_checkpoint(kClient).is_ok());
        write_some(*s, model, rng, 10);  // stale
      }
      s.reset();
      const auto tables = tables_of(*base);
      const LogState before = log_state(*base);
      for (uint64_t k = 0;; k++) {
        INFO("cut at operation " << k);
        auto chip = base->clone();
        std::unique_ptr<PageStore> t;
        REQUIRE(open_tables(*chip, &t).is_ok());
        chip->cut_power_after(k, k % 3 == 1 ? Tear::kPrefix : Tear::kRandomBits, k);
        const Status st = t->write_checkpoint(kClient);
        t.reset();
        chip->restore_power();
        const LogState ls = log_state(*chip);
        std::vector<uint8_t> eng, cl;
        if (ls.trusted) {
          // Only the new checkpoint can be trusted, and it is whole.
          CHECK(ls.newest.gen == before.newest.gen + 1);
          REQUIRE(read_checkpoint(*chip, &eng, &cl));
          CHECK(eng == tables);
          CHECK(cl == kClient);
        } else {
          CHECK((!ls.has || (ls.newest.gen == before.newest.gen &&
                             ls.newest.kind == before.newest.kind) ||
                 ls.doubt));
        }
        require_contents(*chip, model);
        if (st.is_ok()) {
          CHECK(ls.trusted);
          break;
        }
        REQUIRE(k < 200);
      }
    }
  }
}

TEST_CASE("the log switches blocks when one is full, and a cut anywhere in a stale entry or a "
          "switch keeps a superblock and the right newest entry",
          "[checkpoint]") {
  TablesChip rig(5, false);
  auto& [base, s, rng, model] = rig;
  // 7 entry pages per block: 12 rounds of checkpoint + stale cross both blocks three times.
  for (int round = 0; round < 12; round++) {
    INFO("round " << round);
    std::unique_ptr<PageStore> t;
    REQUIRE(open_tables(*base, &t).is_ok());
    if (model.empty()) model.resize(t->logical_pages());
    write_some(*t, model, rng, 8);
    REQUIRE(t->write_checkpoint(kClient).is_ok());
    t.reset();
    const auto tables = tables_of(*base);
    const uint64_t gen = log_state(*base).newest.gen;
    // Cut at every operation of the next change: the stale entry (with a switch when the
    // block is full), then the engine's first program.
    for (uint64_t k = 0; k < 6; k++) {
      INFO("cut at operation " << k);
      auto chip = base->clone();
      REQUIRE(open_tables(*chip, &t).is_ok());
      chip->cut_power_after(k, k % 2 ? Tear::kPrefix : Tear::kNone, k);
      const Status st = t->write(Lpn(k), pdl::test::random_page(rng, 512));
      t.reset();
      chip->restore_power();
      Superblock sb;
      REQUIRE(read_superblock(*chip, resolve_store_params, &sb).is_ok());
      const LogState ls = log_state(*chip);
      REQUIRE(ls.has);
      CHECK(ls.newest.gen == gen);
      if (ls.trusted) CHECK(tables_of(*chip) == tables);
      require_contents(*chip, model);
      if (st.is_ok()) break;
    }
    // The real change, through a store that sees the whole chip.
    REQUIRE(open_tables(*base, &t).is_ok());
    write_some(*t, model, rng, 3);
    CHECK(log_state(*base).newest.kind == LogKind::kStale);
  }
  // The log switched blocks several times (each switch erases one), and both superblock
  // copies are intact.
  CHECK(base->erase_count(0) + base->erase_count(1) >= 4);
  Page data(512), spare(32);
  for (uint32_t b = 0; b < kSuperblockBlocks; b++) {
    REQUIRE(base->read(b * 8, data, spare).is_ok());
    CHECK(le::get32(data.data() + 8) == kSuperblockHalves);
  }
}

TEST_CASE("damaged log entries and area pages make mount scan, never trust them",
          "[checkpoint]") {
  TablesChip rig(6);
  auto& [base, s, rng, model] = rig;
  write_some(*s, model, rng, 40);
  REQUIRE(s->write_checkpoint(kClient).is_ok());
  write_some(*s, model, rng, 5);  // stale 1 (log page 2)
  REQUIRE(s->write_checkpoint(kClient).is_ok());  // checkpoint 2 (log page 3)
  s.reset();
  const LogState good = log_state(*base);
  REQUIRE(good.trusted);
  REQUIRE(good.newest.gen == 2);

  SECTION("each area page") {
    for (uint32_t i = 0; i < good.newest.pages; i++) {
      INFO("area page " << i);
      auto chip = base->clone();
      smash(*chip, (64 - kArea) * 8 + good.newest.root_page + i);
      require_corrupt_checkpoint(*chip, model);
    }
  }
  SECTION("the newest log entry") {
    auto chip = base->clone();
    smash(*chip, 3);
    const LogState ls = log_state(*chip);
    CHECK(ls.doubt);
    CHECK_FALSE(ls.trusted);
    std::unique_ptr<PageStore> m;
    MountReport r;
    REQUIRE(mount_store(*chip, &m, &r, CommitMode::kGroup).is_ok());
    CHECK(r.scan_reason.find("checkpoint log in doubt") == 0);
  }
  SECTION("a stale entry after a checkpoint: the checkpoint is not trusted") {
    auto chip = base->clone();
    std::unique_ptr<PageStore> t;
    REQUIRE(open_tables(*chip, &t).is_ok());
    write_some(*t, model, rng, 2);  // stale 2 (log page 4)
    t.reset();
    smash(*chip, 4);
    const LogState ls = log_state(*chip);
    CHECK(ls.newest.kind == LogKind::kCheckpoint);  // the older entry is the newest valid one
    CHECK(ls.doubt);
    CHECK_FALSE(ls.trusted);
    require_contents(*chip, model);
  }
  SECTION("garbage programmed over erased log pages") {
    auto chip = base->clone();
    Page junk = pdl::test::random_page(rng, 512);
    REQUIRE(chip->program(4, junk, {}).is_ok());  // after the newest entry: it may be newer
    REQUIRE(chip->program(6, junk, {}).is_ok());  // beyond an erased page: never an entry
    CHECK_FALSE(log_state(*chip).trusted);
    // The next entry follows the garbage and ends the doubt.
    std::unique_ptr<PageStore> t;
    REQUIRE(open_tables(*chip, &t).is_ok());
    write_some(*t, model, rng, 2);
    REQUIRE(t->write_checkpoint(kClient).is_ok());
    t.reset();
    CHECK(log_state(*chip).trusted);
  }
}

TEST_CASE("an area that could not be read at mount is made stale by the next change all the "
          "same",
          "[checkpoint]") {
  TablesChip rig(7);
  auto& [chip, s, rng, model] = rig;
  write_some(*s, model, rng, 30);
  REQUIRE(s->write_checkpoint(kClient).is_ok());
  s.reset();
  const LogEntry ck = log_state(*chip).newest;
  REQUIRE(ck.kind == LogKind::kCheckpoint);
  // An area page unreadable at this mount (smashed: more flips than the ECC corrects): the
  // mount scans.
  const Ppa first_page = (64 - kArea) * 8;
  smash(*chip, first_page);
  std::unique_ptr<PageStore> m;
  MountReport r;
  REQUIRE(mount_store(*chip, &m, &r, CommitMode::kGroup).is_ok());
  CHECK_FALSE(r.from_checkpoint);
  CHECK(r.scan_reason.find("checkpoint corrupt") == 0);
  // A change through this store: the guard writes stale although the mount did not use it.
  write_some(*m, model, rng, 3);
  m.reset();
  CHECK(log_state(*chip).newest.kind == LogKind::kStale);
  // The page reads again (the same bits flipped back): the checkpoint is still never used.
  smash(*chip, first_page);
  std::vector<uint8_t> stream;
  uint64_t pages;
  CHECK(read_area(*chip, 64 - kArea, kArea, ck, &stream, &pages).is_ok());  // readable again
  MountReport again;
  REQUIRE(mount_store(*chip, &m, &again, CommitMode::kGroup).is_ok());
  CHECK_FALSE(again.from_checkpoint);
  CHECK(again.scan_reason == "changed since the checkpoint");
  m.reset();
  require_contents(*chip, model);
}

TEST_CASE("the replay budget is 16 blocks per block of stream pages, at least 4096 pages' worth "
          "of blocks on a chip of 16 times as many, a sixteenth of a smaller chip's, never under "
          "16, and replay_blocks when given",
          "[checkpoint]") {
  auto chip = [](uint32_t blocks, uint32_t pages_per_block) {
    Geometry g;
    g.blocks = blocks;
    g.pages_per_block = pages_per_block;
    return g;
  };
  CHECK(replay_budget(0, chip(2048, 64), 5) == 64);    // 4096 / 64
  CHECK(replay_budget(0, chip(512, 64), 5) == 32);     // 512 / 16
  CHECK(replay_budget(0, chip(128, 64), 5) == 16);     // 128 / 16 = 8: never under 16
  CHECK(replay_budget(0, chip(2048, 64), 418) == 105);  // 16 x 418 / 64, rounded up
  CHECK(replay_budget(0, chip(8192, 96), 5) == 43);    // 4096 / 96, rounded up
  CHECK(replay_budget(0, chip(131072, 64), 5) == 64);  // (not a sixteenth of a large chip)
  CHECK(replay_budget(7, chip(2048, 64), 418) == 7);
}

TEST_CASE("the stream's header must match the superblock and the log entry", "[checkpoint]") {
  Superblock sb;
  sb.params.method = Method::kPdl;
  sb.checkpoint_blocks = kArea;
  sb.uuid[0] = 7;
  const StreamHeader h = stream_header_for(sb, chip_geometry(), 5);
  const std::vector<uint8_t> eng = {1, 2, 3}, cl = {4, 5};
  const auto stream = encode_stream(h, eng, cl);
  std::span<const uint8_t> e, c;
  REQUIRE(decode_stream(stream, h, &e, &c).is_ok());
  CHECK(std::vector<uint8_t>(e.begin(), e.end()) == eng);
  CHECK(std::vector<uint8_t>(c.begin(), c.end()) == cl);
  StreamHeader other = h;
  other.gen = 6;
  CHECK(decode_stream(stream, other, &e, &c).is(Errc::kCorrupt));
  other = h;
  other.uuid[0] = 8;
  CHECK(decode_stream(stream, other, &e, &c).is(Errc::kCorrupt));
  other = h;
  other.store_geometry.blocks--;
  CHECK(decode_stream(stream, other, &e, &c).is(Errc::kCorrupt));
  other = h;
  other.method = Method::kOpu;
  CHECK(decode_stream(stream, other, &e, &c).is(Errc::kCorrupt));
  for (size_t cut = 0; cut < stream.size(); cut++)
    CHECK(decode_stream(std::span(stream).first(cut), h, &e, &c).is(Errc::kCorrupt));
}

TEST_CASE("a failed area block is retired and the stream continues in the next one",
          "[checkpoint]") {
  TablesChip rig(8, false);
  auto& [chip, s, rng, model] = rig;
  chip->fail_block(64 - kArea, EmulatedNand::FailOn::kBoth);
  REQUIRE(open_tables(*chip, &s).is_ok());
  write_some(*s, model, rng, 30);
  REQUIRE(s->write_checkpoint(kClient).is_ok());
  s.reset();
  CHECK(chip->is_bad(64 - kArea));
  std::vector<uint8_t> eng, cl;
  REQUIRE(read_checkpoint(*chip, &eng, &cl));
  CHECK(eng == tables_of(*chip));
}

// ---- the whole path, over the store matrix: format with an area, a workload, a clean unmount
// (write_checkpoint), and the next mount_store reading the checkpoint instead of scanning.

#include "tests/support/store_matrix.h"

namespace {

CommitMode mode_of(const StoreParams& p) {
  return has_atomic_commit(p.method) ? CommitMode::kGroup : CommitMode::kPerPage;
}


void require_reads(PageStore& store, const Model& model) { pdl::test::require_reads(store, model); }

}  // namespace

TEST_CASE("a clean unmount's checkpoint is what the next mount reads instead of scanning",
          "[checkpoint][store]") {
  // The matrix's configurations on a larger chip (96 blocks), 12 of them the area; capacities
  // set for the 84 blocks the store runs on.
  constexpr uint32_t kBlocks = 96, kAreaBlocks = 12;
  const auto matrix = pdl::test::store_matrix_for({pdl::test::geometry(512, 32, 8, kBlocks)});
  const size_t which = GENERATE_COPY(range(size_t(0), matrix.size()));
  pdl::test::StoreConfig cfg = matrix[which];
  INFO("config " << cfg.name);
  if (cfg.geo.nvm_bytes && cfg.params.method == Method::kIpl)  // NVM sized per block
    cfg.geo.nvm_bytes = 64 + (kBlocks - kAreaBlocks - kSuperblockBlocks) *
                                 (cfg.params.log_sector == 128 ? 3 : 2) * cfg.params.log_sector;
  if (cfg.params.nvm_bytes) cfg.params.nvm_bytes = cfg.geo.nvm_bytes;
  if (cfg.params.logical_pages)
    cfg.params.logical_pages = (kBlocks - kAreaBlocks - 6) * cfg.geo.pages_per_block * 7 / 8;
  cfg.params.checkpoint = true;
  cfg.params.checkpoint_blocks = kAreaBlocks;
  const CommitMode mode = mode_of(cfg.params);
  auto chip = pdl::test::make_ram_nand(cfg.geo);
  std::unique_ptr<PageStore> s;
  {
    const Status f = format_store(*chip, cfg.params, &s, mode);
    INFO(f.to_string());
    REQUIRE(f.is_ok());
  }
  auto rng = pdl::test::seeded_rng(0xc0 + which);
  Model model(s->logical_pages());
  const int group = in_page(cfg.params.method) ? 1 : 4;  // (an IPL group fits a log region)
  for (int i = 0; i < 600 / group; i++) write_some(*s, model, rng, group);
  const Status w = s->write_checkpoint(kClient);
  s.reset();
  std::unique_ptr<PageStore> m;
  MountReport r;
  if (w.is(Errc::kUnsupported)) {  // an engine without tables (yet): mount scans, saying so
    REQUIRE(mount_store(*chip, &m, &r, mode).is_ok());
    CHECK_FALSE(r.from_checkpoint);
    CHECK(r.scan_reason == "no checkpoint");
    require_reads(*m, model);
    return;
  }
  INFO("write_checkpoint: " << w.to_string());
  REQUIRE(w.is_ok());

  // The mount reads the checkpoint: no program, no erase, a few pages of a chip of 768.
  const NandCounters c0 = chip->counters();
  ClientTables client;
  {
    const Status st = mount_store(*chip, &m, &r, mode, nullptr, &client);
    INFO(st.to_string() << " / " << r.scan_reason);
    REQUIRE(st.is_ok());
  }
  const NandCounters c1 = chip->counters();
  INFO("scan reason: " << r.scan_reason);
  REQUIRE(r.from_checkpoint);
  CHECK(r.checkpoint_gen == 1);
  CHECK(r.checkpoint_pages > 0);
  CHECK(client.section == kClient);
  CHECK(!client.replayed);
  CHECK(c1.programs == c0.programs);
  CHECK(c1.erases == c0.erases);
  CHECK(c1.page_reads + c1.spare_reads - c0.page_reads - c0.spare_reads <
        r.checkpoint_pages + 40);
  CHECK(r.sim_us == c1.sim_us - c0.sim_us);
  REQUIRE(m->check().is_ok());
  require_reads(*m, model);
  // Equal to a scan's tables (the log put in doubt on a copy: garbage after its entry).
  {
    auto copy = chip->clone();
    REQUIRE(copy->program(2, pdl::test::random_page(rng, 512), {}).is_ok());
    std::unique_ptr<PageStore> scanned;
    MountReport rs;
    REQUIRE(mount_store(*copy, &scanned, &rs, mode).is_ok());
    REQUIRE_FALSE(rs.from_checkpoint);
    pdl::test::require_same_tables(*m, *scanned, kBlocks - kAreaBlocks);
  }
  // Nothing changed: closing again writes nothing.
  const NandCounters c2 = chip->counters();
  REQUIRE(m->write_checkpoint(kClient).is_ok());
  CHECK(chip->counters().programs == c2.programs);
  CHECK(chip->counters().erases == c2.erases);
  // A cut at the first change: the chip did not change, so the checkpoint still holds.
  {
    auto copy = chip->clone();
    std::unique_ptr<PageStore> t;
    REQUIRE(mount_store(*copy, &t, nullptr, mode).is_ok());
    copy->cut_power_after(0);
    Status ws = t->write(0, pdl::test::random_page(rng, 512));
    if (ws.is_ok()) ws = t->sync();
    CHECK_FALSE(ws.is_ok());
    t.reset();
    copy->restore_power();
    MountReport again;
    REQUIRE(mount_store(*copy, &t, &again, mode).is_ok());
    CHECK(again.from_checkpoint);
    require_reads(*t, model);
  }
  // One change after the mount, then no clean close (a power cut): the change was declared in
  // a summary page, and every engine replays the blocks declared (PDL and IPL with NVM too:
  // their NVM writes are declared).
  write_some(*m, model, rng, 1);
  m.reset();
  REQUIRE(mount_store(*chip, &m, &r, mode).is_ok());
  CHECK(r.from_checkpoint);
  CHECK(r.summary_pages > 0);
  CHECK(r.replayed_blocks > 0);
  require_reads(*m, model);
  // And a new checkpoint of the changed state is read back by the next mount.
  REQUIRE(m->write_checkpoint(kClient).is_ok());
  m.reset();
  REQUIRE(mount_store(*chip, &m, &r, mode).is_ok());
  CHECK(r.from_checkpoint);
  CHECK(r.checkpoint_gen == 2);
  require_reads(*m, model);
}

// ---- images: the checkpoint written by Image::close, read by the next open.

#include "flash/image/image.h"

TEST_CASE("an image closed cleanly opens from its checkpoint; a read-only open writes none",
          "[checkpoint][image]") {
  const std::string path = pdl::test::temp_path("ckpt.img");
  ImageParams p;
  REQUIRE(p.set("size", "8M").is_ok());
  REQUIRE(p.set("pages_per_block", "16").is_ok());
  std::unique_ptr<Image> img;
  REQUIRE(open_image(path, p, ImageMode::kCreate, false, "main.db", &img).is_ok());
  {
    auto g = img->volume->lock();
    CHECK(img->volume->store().params().checkpoint);  // on by default where it fits
  }
  auto rng = pdl::test::seeded_rng(9);
  const Page bytes = pdl::test::random_page(rng, 100000);
  Volume::FileId id;
  REQUIRE(img->volume->create("main.db", &id).is_ok());
  REQUIRE(img->volume->write(id, 0, bytes).is_ok());
  REQUIRE(img->close().is_ok());
  const Status ck = img->checkpoint;
  INFO("checkpoint at close: " << ck.to_string());
  CHECK((ck.is_ok() || ck.is(Errc::kUnsupported)));
  img.reset();

  auto read_back = [&](Image& im) {
    Volume::FileId f;
    REQUIRE(im.volume->lookup("main.db", &f).is_ok());
    Page got(bytes.size());
    size_t n = 0;
    REQUIRE(im.volume->read(f, 0, got, &n).is_ok());
    CHECK(n == bytes.size());
    CHECK(got == bytes);
  };
  // Read-only: from the checkpoint if one was written, and nothing written at close.
  REQUIRE(open_image(path, ImageParams(), ImageMode::kOpen, true, "", &img).is_ok());
  CHECK(img->mount.from_checkpoint == ck.is_ok());
  if (!ck.is_ok()) CHECK(img->mount.scan_reason == "no checkpoint");
  read_back(*img);
  REQUIRE(img->close().is_ok());
  CHECK(img->checkpoint.is(Errc::kUnsupported));
  img.reset();
  // Writable, nothing changed: still from the checkpoint; a change makes the next one scan
  // until the close writes a new checkpoint.
  REQUIRE(open_image(path, ImageParams(), ImageMode::kOpen, false, "", &img).is_ok());
  CHECK(img->mount.from_checkpoint == ck.is_ok());
  read_back(*img);
  {
    const NandCounters before = img->nand->counters();
    REQUIRE(img->close().is_ok());
    CHECK(img->checkpoint.is_ok() == ck.is_ok());
    CHECK(img->nand->counters().programs == before.programs);  // nothing changed, nothing
    CHECK(img->nand->counters().erases == before.erases);      // written
  }
  img.reset();
  REQUIRE(open_image(path, ImageParams(), ImageMode::kOpen, false, "", &img).is_ok());
  CHECK(img->mount.from_checkpoint == ck.is_ok());
  if (ck.is_ok()) CHECK(img->mount.checkpoint_gen == 1);
  {
    Volume::FileId f;
    REQUIRE(img->volume->lookup("main.db", &f).is_ok());
    REQUIRE(img->volume->write(f, 5, std::vector<uint8_t>(10, 0xAB)).is_ok());
    REQUIRE(img->volume->sync().is_ok());
  }
  img.reset();  // no close: a crash after a change
  REQUIRE(open_image(path, ImageParams(), ImageMode::kOpen, false, "", &img).is_ok());
  // The change was declared in a summary page: the mount replays the blocks declared.
  CHECK(img->mount.from_checkpoint == ck.is_ok());
  if (ck.is_ok()) CHECK(img->mount.replayed_blocks > 0);
  {
    Volume::FileId f;
    REQUIRE(img->volume->lookup("main.db", &f).is_ok());
    std::vector<uint8_t> got(10);
    size_t n = 0;
    REQUIRE(img->volume->read(f, 5, got, &n).is_ok());
    CHECK(n == 10);
    CHECK(got == std::vector<uint8_t>(10, 0xAB));
  }
  img.reset();

  // checkpoint=off: format without an area; a chip too small for one: off, said why.
  ImageParams off = p;
  REQUIRE(off.set("checkpoint", "off").is_ok());
  StoreParams sp;
  std::string why;
  REQUIRE(image_store_params(off, off.geometry(), &sp, &why).is_ok());
  CHECK_FALSE(sp.checkpoint);
  CHECK(why == "checkpoint=off");
  ImageParams tiny;
  REQUIRE(tiny.set("size", "1M").is_ok());
  REQUIRE(image_store_params(tiny, tiny.geometry(), &sp, &why).is_ok());
  CHECK_FALSE(sp.checkpoint);
  INFO(why);
  CHECK((why.find("too small") != std::string::npos ||
         why.find("does not fit") != std::string::npos));
  REQUIRE(tiny.set("checkpoint", "on").is_ok());
  CHECK_FALSE(image_store_params(tiny, tiny.geometry(), &sp, &why).is_ok());
  pdl::test::remove_temp(path);
}

TEST_CASE("with one superblock block bad the log fills up, and a change then makes the last "
          "checkpoint unreadable instead",
          "[checkpoint]") {
  auto chip = pdl::test::make_ram_nand(chip_geometry());
  REQUIRE(chip->mark_bad(1).is_ok());
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*chip, area_params(), &s, CommitMode::kGroup).is_ok());
  s.reset();
  REQUIRE(open_tables(*chip, &s).is_ok());
  auto rng = pdl::test::seeded_rng(10);
  Model model(s->logical_pages());
  // 7 entry pages: checkpoint, stale, ... the 4th checkpoint takes the last one.
  Status st;
  int written = 0;
  for (int i = 0; i < 10; i++) {
    write_some(*s, model, rng, 4);
    st = s->write_checkpoint(kClient);
    if (!st.is_ok()) break;
    written++;
  }
  INFO(st.to_string());
  CHECK(written == 4);
  CHECK(st.is(Errc::kFull));
  // The log's last page holds checkpoint 4, stale 3 before it; the next change cannot write
  // "stale 4" (the last write_some above could not either): the area was erased instead.
  s.reset();
  const LogState ls = log_state(*chip);
  CHECK(ls.newest.kind == LogKind::kCheckpoint);
  CHECK(ls.newest.gen == 4);
  require_corrupt_checkpoint(*chip, model);
}

TEST_CASE("a power cut anywhere in a PDL store's checkpoint write: the next mount reads the "
          "whole new checkpoint or scans, and the contents are the synced ones",
          "[checkpoint]") {
  auto base = pdl::test::make_ram_nand(chip_geometry());
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*base, area_params(), &s, CommitMode::kGroup).is_ok());
  auto rng = pdl::test::seeded_rng(11);
  Model model(s->logical_pages());
  for (int i = 0; i < 20; i++) write_some(*s, model, rng, 10);
  {
    TableWriter probe;
    if (s->save_tables(probe).is(Errc::kUnsupported)) return;  // PDL without tables (yet)
  }
  s.reset();
  for (uint64_t k = 0;; k++) {
    INFO("cut at operation " << k);
    auto chip = base->clone();
    std::unique_ptr<PageStore> t;
    REQUIRE(mount_store(*chip, &t, nullptr, CommitMode::kGroup).is_ok());
    chip->cut_power_after(k, k % 2 ? Tear::kRandomBits : Tear::kPrefix, k);
    const Status st = t->write_checkpoint(kClient);
    t.reset();
    chip->restore_power();
    MountReport r;
    ClientTables client;
    REQUIRE(mount_store(*chip, &t, &r, CommitMode::kGroup, nullptr, &client).is_ok());
    INFO("scan reason: " << r.scan_reason);
    if (st.is_ok()) CHECK(r.from_checkpoint);
    if (r.from_checkpoint) CHECK(client.section == kClient);
    REQUIRE(t->check().is_ok());
    require_reads(*t, model);
    t.reset();
    if (st.is_ok()) break;
    REQUIRE(k < 400);
  }
}
