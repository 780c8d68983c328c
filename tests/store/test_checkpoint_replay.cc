// test_checkpoint_replay.cc — mount after a power cut from the checkpoint plus the blocks the
// summary pages declared since (docs/design.md §17, superblock format 7): at every operation
// of a workload after a checkpoint (writes, trims, GC, syncs, summary pages, a periodic
// checkpoint, a clean checkpoint and the summaries of its generation) the power is cut, and
// the mount that replays is compared with a full scan of the same chip — same mapping, same
// block states, same contents, the last acknowledged sync's; for IPL and IPU also every field
// of the engine's own tables (seq counters, commit log, garbage log sectors, blocks to purge,
// free queue: flash/ipl/ipl_compare.h) — for PDL and OPU with atomic
// commit, the page FTL, IPL (atomic and per page) and IPU, IPL and IPU with a block going bad
// (retired: marked bad, a declared change) in the workload, StableBuffer over the page FTL,
// PDL with its write buffer in NVM (commits that program nothing: an empty summary page
// declares the NVM changed, and the replay rebuilds the buffer from the log), IPL with its
// log areas in NVM (log flushes that program nothing: the replay reads the sectors logged
// since into the areas of the checkpoint's blocks), BAST and FAST (with a block going bad
// too: a retiring block) and StableBuffer over FAST;
// a BAST or FAST chip mounted by a scan and checkpointed keeps the stale records of the
// blocks the scan freed, which can win a tie at the next replay as at a scan;
// a mount from the checkpoint programs nothing, and cutting it part-way leaves the chip as it
// was; damaged summary pages make the mount scan.
// The sanitizer run samples (PDL_MATRIX_STRIDE: configurations, PDL_EXHAUSTIVE_STRIDE: cuts).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "flash/device/emulated_nand.h"
#include "flash/image/open_store.h"
#include "flash/ipl/ipl_nvm.h"
#include "flash/ipl/ipl_store.h"
#include "flash/store/checkpoint_area.h"
#include "flash/store/spare.h"
#include "flash/store/checkpointed_store.h"
#include "flash/store/superblock.h"
#include "tests/support/checkpoint_rig.h"
#include "tests/support/nand_op_sequence.h"
#include "tests/support/same_tables.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using Page = pdl::test::CkPage;
using Model = pdl::test::CkModel;
using Config = pdl::test::CkConfig;
using pdl::test::kCkAreaBlocks;
using pdl::test::kCkBlocks;
constexpr uint32_t kBlocks = kCkBlocks, kAreaBlocks = kCkAreaBlocks;
// IPL with NVM: the commit area and `sectors` log sectors of 128 bytes per erase block.
constexpr uint32_t ipl_nvm(uint32_t sectors) {
  return kNvmCommitArea + (kBlocks - kSuperblockBlocks) * sectors * 128;
}

StoreParams params_of(const Config& c) { return pdl::test::ck_params(c); }
Status step(PageStore& s, Model* pending, std::mt19937_64& rng, int writes) {
  return pdl::test::ck_step(s, pending, rng, writes);
}
bool reads_as(PageStore& s, const Model& model) { return pdl::test::ck_reads_as(s, model); }

// The mount of `chip` (left untouched: it works on copies) from a checkpoint programs and
// erases nothing, and the device going away at operation `gone_at` of it (a power cut of a
// mount that writes nothing) leaves the chip byte for byte as it was, the next mount alike.
// False if the chip does not mount from a checkpoint.
bool mount_cut_changes_nothing(EmulatedNand& chip, CommitMode mode, uint64_t salt) {
  auto probe = chip.clone();
  probe->cut_power_after(0);  // any program or erase would freeze the chip
  const uint64_t ops0 = probe->operations();
  std::unique_ptr<PageStore> s;
  MountReport r;
  const Status st = mount_store(*probe, &s, &r, mode);
  s.reset();
  INFO(st.to_string() << " / " << r.scan_reason);
  if (!st.is_ok() || !r.from_checkpoint) return false;
  REQUIRE_FALSE(probe->frozen());  // not one mutating operation: no cut point in this mount
  const uint64_t reads = probe->operations() - ops0;
  REQUIRE(reads > 0);
  auto cut = chip.clone();
  cut->io_errors_at(salt % reads, UINT64_MAX / 2);
  cut->cut_power_after(0);
  (void)mount_store(*cut, &s, nullptr, mode);
  s.reset();
  cut->clear_io_errors();
  REQUIRE(pdl::test::media_difference(*cut, chip) == "");
  MountReport again;
  REQUIRE(mount_store(*cut, &s, &again, mode).is_ok());
  CHECK(again.from_checkpoint);
  CHECK(again.checkpoint_gen == r.checkpoint_gen);
  CHECK(again.replayed_blocks == r.replayed_blocks);
  return true;
}

// Both mounts are IPL or IPU engines behind the checkpoint area's store (so that
// require_same_engine_tables_after_replay compares their tables, not nothing).
void require_ipl_engines(const PageStore& a, const PageStore& b) {
  for (const PageStore* s : {&a, &b}) {
    const auto* cs = dynamic_cast<const CheckpointedStore*>(s);
    REQUIRE(cs != nullptr);
    REQUIRE(dynamic_cast<const IplStore*>(&cs->engine()) != nullptr);
  }
}

}  // namespace

TEST_CASE("a new store with a checkpoint area is superblock format 8, which an older pdl refuses",
          "[checkpoint][replay]") {
  auto chip = pdl::test::make_ram_nand(pdl::test::geometry(512, 32, 8, kBlocks));
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*chip, params_of({"pdl", Method::kPdl, FtlKind::kNone,
                                         CommitMode::kGroup}),
                       &s, CommitMode::kGroup)
              .is_ok());
  Superblock sb;
  REQUIRE(read_superblock(*chip, resolve_store_params, &sb).is_ok());
  CHECK(sb.summaries);
  CHECK(sb.halves);
  CHECK(superblock_stored_version(sb) == kSuperblockHalves);
}

TEST_CASE("a power cut anywhere after a checkpoint (summaries, checkpoint writes): the mount "
          "replays the declared blocks or scans, equals a scan, and programs nothing",
          "[checkpoint][replay]") {
  const Config configs[] = {
      {"pdl atomic", Method::kPdl, FtlKind::kNone, CommitMode::kGroup},
      {"opu atomic", Method::kOpu, FtlKind::kNone, CommitMode::kGroup},
      {"ftl page", Method::kFtl, FtlKind::kPage, CommitMode::kPerPage},
      {"ipl atomic", Method::kIpl, FtlKind::kNone, CommitMode::kGroup, 2},
      {"ipl per page", Method::kIpl, FtlKind::kNone, CommitMode::kPerPage, 2},
      {"ipu", Method::kIpu, FtlKind::kNone, CommitMode::kPerPage},
      {"ipl atomic, a grown bad block", Method::kIpl, FtlKind::kNone, CommitMode::kGroup, 2,
       41},
      {"ipu, a grown bad block", Method::kIpu, FtlKind::kNone, CommitMode::kPerPage, 0, 23},
      {"stablebuffer on the page ftl", Method::kStableBuffer, FtlKind::kPage,
       CommitMode::kPerPage},
      // (Per page, PDL and OPU checkpoint with their newest commit record unknown.)
      {"pdl per page", Method::kPdl, FtlKind::kNone, CommitMode::kPerPage},
      {"opu per page", Method::kOpu, FtlKind::kNone, CommitMode::kPerPage},
      // A one-page table cache: nearly every operation and every replay step folds dirty
      // pages into entries (PagedTableBase::fold), which saves then rebuild from their homes.
      {"pdl atomic, one-page table cache", Method::kPdl, FtlKind::kNone, CommitMode::kGroup, 0,
       0, 1},
      {"opu per page, one-page table cache", Method::kOpu, FtlKind::kNone,
       CommitMode::kPerPage, 0, 0, 1},
      // The write buffer in 8 KiB of NVM (three pages of records): commits write only NVM,
      // which an empty summary page declares; flushes, merges and the log's resets in the
      // workload; the replay rebuilds the buffer from the log.
      {"pdl atomic, write buffer in nvm", Method::kPdl, FtlKind::kNone, CommitMode::kGroup, 0, 0,
       0, 8192},
      {"pdl per page, write buffer in nvm", Method::kPdl, FtlKind::kNone, CommitMode::kPerPage, 0,
       0, 0, 8192},
      // IPL's log areas in NVM, four 128-byte sectors per erase block ([IPL-PCRAM]): log
      // flushes write only NVM (the replay reads what was logged since into the areas of the
      // checkpoint's blocks); a full area merges (programs and erases: declared blocks).
      {"ipl atomic, log areas in nvm", Method::kIpl, FtlKind::kNone, CommitMode::kGroup, 0, 0, 0,
       ipl_nvm(4)},
      {"ipl per page, log areas in nvm", Method::kIpl, FtlKind::kNone, CommitMode::kPerPage,
       0, 0, 0, ipl_nvm(4)},
      // The hybrid FTLs: the replay runs the scan's passes over the checkpoint's page records
      // and reads of the declared blocks (merges of every kind, FAST's victims, a program
      // failing: a retiring block, re-read since its failed page is not in the tables).
      {"bast", Method::kFtl, FtlKind::kBast, CommitMode::kPerPage},
      {"fast", Method::kFtl, FtlKind::kFast, CommitMode::kPerPage},
      {"bast, a grown bad block", Method::kFtl, FtlKind::kBast, CommitMode::kPerPage, 0, 31},
      {"fast, a grown bad block", Method::kFtl, FtlKind::kFast, CommitMode::kPerPage, 0, 17},
      {"stablebuffer on fast", Method::kStableBuffer, FtlKind::kFast, CommitMode::kPerPage},
  };
  const size_t which = size_t(GENERATE(range(0, 22)));
  if (!pdl::test::in_matrix_sample(which, __LINE__)) return;
  const Config c = configs[which];
  INFO("config " << c.name);
  auto rng = pdl::test::seeded_rng(0x5e + uint64_t(c.method) + (which == 4 ? 0x100 : 0));
  Model model;
  auto base = pdl::test::checkpointed_chip(c, &model, rng);
  StoreParams small_budget;
  // A periodic checkpoint within the workload (IPL with NVM declares only the blocks its flash
  // operations touch — merges, first writes into erased slots —, not its log flushes: a
  // smaller budget).
  small_budget.replay_blocks = c.method == Method::kIpl && c.nvm_bytes ? 4 : 12;
  small_budget.table_cache = c.table_cache;
  StoreParams after_cut;  // (the mount after the cut: the same table cache)
  after_cut.table_cache = c.table_cache;
  const uint64_t stride = pdl::test::exhaustive_stride();
  uint64_t replays = 0, periodic_seen = 0, cuts = 0, erases = 0, mounts_cut = 0, full_seen = 0,
           incr_seen = 0, bad_seen = 0, folded_replays = 0, buffered_replays = 0,
           logged_replays = 0;
  uint64_t in_clean = 0;  // cuts inside the clean checkpoint write
  for (uint64_t k = 0;; k += stride) {
    INFO("cut at operation " << k);
    auto chip = base->clone();
    std::unique_ptr<PageStore> t;
    MountReport r0;
    REQUIRE(mount_store(*chip, &t, &r0, c.mode, &small_budget).is_ok());
    REQUIRE(r0.from_checkpoint);
    auto store_erases = [&] {  // (the area's erases are the checkpoints')
      uint64_t n = 0;
      for (uint32_t b = 0; b < kBlocks - kAreaBlocks; b++) n += chip->erase_count(b);
      return n;
    };
    const uint64_t erases0 = store_erases();
    if (c.grown_bad) chip->fail_at(c.grown_bad - 1, k);  // (retired: marked bad, declared)
    chip->cut_power_after(k, k % 3 == 0 ? Tear::kNone : k % 3 == 1 ? Tear::kPrefix
                                                                     : Tear::kRandomBits, k);
    Model acked = model, pending = model;
    auto wr = pdl::test::seeded_rng(77);
    bool cut = false;
    for (int i = 0; i < 30 && !cut; i++) {
      pending = acked;
      if (step(*t, &pending, wr, 6).is_ok()) acked = pending;
      else cut = true;
      if (!cut && i == 14) {  // a clean checkpoint half-way (as a close): summaries of its gen
        pending = acked;      // follow
        const uint8_t client[] = {'v', 'o', 'l'};  // (a client section: never "current")
        if (!t->write_checkpoint(client).is_ok()) {
          cut = true;
          in_clean++;
        }
      }
    }
    const uint64_t periodic = static_cast<CheckpointedStore&>(*t).periodic_checkpoints();
    const uint64_t fulls = static_cast<CheckpointedStore&>(*t).full_checkpoints();
    const uint64_t incrs = static_cast<CheckpointedStore&>(*t).incremental_checkpoints();
    t.reset();
    chip->restore_power();
    auto copy = chip->clone();
    if (mount_cut_changes_nothing(*chip, c.mode, k * 7919 + 1)) mounts_cut++;
    MountReport r;
    {
      const Status st = mount_store(*chip, &t, &r, c.mode, &after_cut);
      INFO(st.to_string());
      REQUIRE(st.is_ok());
    }
    INFO("scan reason: " << r.scan_reason);
    // (The replay's own check of the checkpoint's counts against the replayed blocks never
    // refuses a chip a power cut left: design.md §18's argument, exhaustively.)
    CHECK(r.scan_reason.find("does not match the blocks declared") == std::string::npos);
    std::unique_ptr<PageStore> scanned;
    StoreParams scan;
    scan.scan_mount = true;
    MountReport rs;
    REQUIRE(mount_store(*copy, &scanned, &rs, c.mode, &scan).is_ok());
    REQUIRE_FALSE(rs.from_checkpoint);
    INFO("replayed blocks " << r.replayed_blocks << "; committed seq / next seq: replay "
                            << r.committed_seq << " / " << r.next_seq << ", scan "
                            << rs.committed_seq << " / " << rs.next_seq);
    REQUIRE(t->check().is_ok());
    // (Summary pages after the checkpoint: the mount replayed — with NVM, possibly no block
    // declared, only "the NVM changed".)
    const bool replayed = r.from_checkpoint && r.summary_pages > 0;
    if (replayed) {
      replays++;
      folded_replays += t->stats().table_entries_folded > 0;
      // (IPL: only the NVM declared, yet blocks re-derived: from what was logged since.)
      logged_replays += c.method == Method::kIpl && c.nvm_bytes && r.summary_pages == 1 &&
                        r.replayed_blocks > 0;
      for (Lpn l = 0; l < t->logical_pages() && c.nvm_bytes && c.method == Method::kPdl; l++)
        if (t->locate(l).diff_in_buffer) {
          buffered_replays++;  // (the write buffer rebuilt from the NVM log holds records)
          break;
        }
      CHECK(r.pages_scanned < rs.pages_scanned);
    }
    // (A mount from the checkpoint keeps the run-time tables, which may differ from a scan's
    // where reads cannot tell: a trimmed page's tombstone. A replay is that mount with the
    // lpns the replayed blocks touch resolved as a scan resolves them: equal but for those
    // tombstones of other lpns.)
    if (replayed) {
      // (On a mismatch, first say which copies and seqs the two mounts chose.)
      for (Lpn l = 0; l < t->logical_pages() && !in_page(c.method); l++) {
        const LpnLocation x = t->locate(l), y = scanned->locate(l);
        if (x.base == y.base) continue;
        Page d(512), sp(32);
        SpareHeader hx, hy;
        REQUIRE(copy->read(x.base, d, sp).is_ok());
        spare_decode(sp, &hx);
        REQUIRE(copy->read(y.base, d, sp).is_ok());
        spare_decode(sp, &hy);
        WARN("lpn " << l << " replay " << x.base << " seq " << hx.seq << " / scan " << y.base
                    << " seq " << hy.seq << "; ckpt-declared " << r.replayed_blocks);
        break;
      }
      pdl::test::require_same_tables_but_tombstones(*t, *scanned, kBlocks - kAreaBlocks,
                                                    chip->geometry().pages_per_block);
      // IPL and IPU: their own tables too, field by field — seq counters, commit log, garbage
      // log sectors, blocks to purge, free queue (flash/ipl/ipl_compare.h).
      if (in_page(c.method)) require_ipl_engines(*t, *scanned);
      pdl::test::require_same_engine_tables_after_replay(*t, *scanned);
    }
    // Contents: the last acknowledged sync's (or, atomic, the one the cut interrupted if its
    // commit record was durable; per page, any page of the interrupted step may be either).
    if (c.mode == CommitMode::kGroup) CHECK((reads_as(*t, acked) || reads_as(*t, pending)));
    CHECK(reads_as(*t, acked) == reads_as(*scanned, acked));
    CHECK(reads_as(*t, pending) == reads_as(*scanned, pending));
    if (!cut) {
      CHECK(reads_as(*t, acked));
      bad_seen = rs.bad_blocks;
      periodic_seen = periodic;
      full_seen = fulls;
      incr_seen = incrs;
      erases = store_erases() - erases0;
      break;
    }
    cuts++;
    REQUIRE(k < 20000);
  }
  WARN(c.name << ": " << cuts << " power cuts (" << in_clean
              << " inside the clean checkpoint write), " << replays << " mounts by replay, "
              << mounts_cut << " mounts from a checkpoint cut part-way (none programmed), "
              << periodic_seen << " periodic checkpoints and " << erases
              << " store block erases in the uncut workload (" << incr_seen
              << " checkpoints appended to their half, " << full_seen << " into the other), "
              << folded_replays << " replays left table entries folded, " << buffered_replays
              << " replays rebuilt a write buffer in NVM holding records, " << logged_replays
              << " replays re-derived blocks from NVM log sectors alone");
  CHECK(replays > 0);
  CHECK(periodic_seen > 0);
  CHECK(incr_seen > 0);  // cuts landed inside both kinds of checkpoint writes
  // (IPL's and IPU's checkpoints are small roots: their half never fills in this workload,
  // the paged tables' engines and the hybrid FTLs' page records fill it.)
  if (c.method != Method::kIpl && c.method != Method::kIpu) CHECK(full_seen > 0);
  if (c.table_cache) CHECK(folded_replays > 0);  // replays that folded table pages
  if (c.nvm_bytes && c.method == Method::kPdl) CHECK(buffered_replays > 0);
  // (About one replay in four re-derives blocks from the NVM alone: the sampled run of every
  // tenth cut may see none.)
  if (c.nvm_bytes && c.method == Method::kIpl && stride == 1) CHECK(logged_replays > 0);
  if (stride == 1) CHECK(in_clean > 0);
  CHECK(mounts_cut > 0);
  CHECK(erases > 0);  // garbage collection ran
  if (c.grown_bad) CHECK(bad_seen == 1);  // (the failing block was retired)
}

TEST_CASE("a hybrid ftl mounted by a scan keeps the stale records of the blocks the scan freed "
          "in its next checkpoint, so a replay after that checkpoint still equals a scan",
          "[checkpoint][replay]") {
  // A scan frees a block holding no current record without erasing it, and its records can
  // win a tie later: of two records of one seq, a complete full merge's copy outranks a partial
  // merge's. BAST with one log block: logical block 0 is full-merged twice (lpns 3, 1, then
  // 5, 2 out of order in its log block, merged as the LRU victim when another logical block
  // needs one); the power is cut anywhere in that, the chip mounted by a scan and checkpointed
  // at once. Cut in the erase of the first merge's block, that block is free but still holds
  // copies of lpns 3, 4, 6, 7. Then lpns 0, 1 in order into a log block, merged partially as
  // the victim (its copies of lpns 2..7 lose to those) and no close: the replay must find the
  // stale copies in the checkpoint, as the scan finds them on flash. The same for FAST.
  const Config configs[] = {{"bast", Method::kFtl, FtlKind::kBast, CommitMode::kPerPage},
                            {"fast", Method::kFtl, FtlKind::kFast, CommitMode::kPerPage}};
  const std::vector<Lpn> first = {3, 1, 10, 5, 2, 20}, then = {0, 1, 25};
  const uint64_t stride = pdl::test::exhaustive_stride();
  for (const Config& c : configs) {
    INFO("config " << c.name);
    StoreParams p = params_of(c);
    p.log_blocks = c.ftl == FtlKind::kBast ? 1 : 2;
    auto rng = pdl::test::seeded_rng(0x5ca);
    auto base = pdl::test::make_ram_nand(pdl::test::geometry(512, 32, 8, kBlocks));
    Model model;
    {
      std::unique_ptr<PageStore> t;
      REQUIRE(format_store(*base, p, &t, c.mode).is_ok());
      model.assign(t->logical_pages(), std::nullopt);
      for (Lpn l = 0; l < 48; l++) {  // logical blocks 0..5 in place
        model[l] = pdl::test::random_page(rng, 512);
        REQUIRE(t->write(l, *model[l]).is_ok());
      }
      REQUIRE(t->write_checkpoint({}).is_ok());
    }
    StoreParams scan;
    scan.scan_mount = true;
    auto write_all = [&](PageStore& t, const std::vector<Lpn>& lpns, Model* acked) {
      for (const Lpn l : lpns) {
        Model pending = *acked;
        pending[l] = pdl::test::random_page(rng, 512);
        if (!t.write(l, *pending[l]).is_ok() || !t.sync().is_ok()) return false;
        *acked = pending;
      }
      return true;
    };
    uint64_t cuts = 0, replays = 0, revived = 0;
    for (uint64_t k = 0;; k += stride) {
      INFO("cut at operation " << k);
      auto chip = base->clone();
      std::unique_ptr<PageStore> t;
      REQUIRE(mount_store(*chip, &t, nullptr, c.mode).is_ok());
      chip->cut_power_after(k);
      Model acked = model;
      const bool cut = !write_all(*t, first, &acked);
      t.reset();
      chip->restore_power();
      if (!cut) break;
      cuts++;
      MountReport r;
      REQUIRE(mount_store(*chip, &t, &r, c.mode, &scan).is_ok());
      REQUIRE_FALSE(r.from_checkpoint);
      REQUIRE(t->write_checkpoint({}).is_ok());
      std::vector<bool> was_free(kBlocks, false);
      std::vector<uint64_t> erases(kBlocks);
      for (uint32_t b = 0; b < kBlocks - kAreaBlocks; b++) {
        was_free[b] = t->block_info(b).state == BlockInfo::kFree;
        erases[b] = chip->erase_count(b);
      }
      REQUIRE(write_all(*t, then, &acked));
      t.reset();  // a power cut after the last acknowledged sync
      auto copy = chip->clone();
      REQUIRE(mount_store(*chip, &t, &r, c.mode).is_ok());
      REQUIRE(r.from_checkpoint);
      REQUIRE(r.replayed_blocks > 0);
      replays++;
      std::unique_ptr<PageStore> scanned;
      REQUIRE(mount_store(*copy, &scanned, nullptr, c.mode, &scan).is_ok());
      REQUIRE(t->check().is_ok());
      pdl::test::require_same_tables_but_tombstones(*t, *scanned, kBlocks - kAreaBlocks, 8);
      CHECK(reads_as(*t, acked));
      // (A block free at the checkpoint, not erased since, holding current records again.)
      for (uint32_t b = 0; b < kBlocks - kAreaBlocks; b++)
        revived += was_free[b] && chip->erase_count(b) == erases[b] &&
                   t->block_info(b).valid_pages > 0;
    }
    WARN(c.name << ": " << cuts << " power cuts, each mounted by a scan and checkpointed, then "
                << replays << " replays equal to a scan; " << revived
                << " blocks free at a checkpoint held current records again after a replay");
    CHECK(replays == cuts);
    // (Every cut: the one in the first merge's erase among them; the sampled run may miss it.)
    if (c.ftl == FtlKind::kBast && stride == 1) CHECK(revived > 0);
  }
}

TEST_CASE("a damaged summary page makes the mount scan, never replay without it",
          "[checkpoint][replay]") {
  const Config c{"pdl atomic", Method::kPdl, FtlKind::kNone, CommitMode::kGroup};
  auto rng = pdl::test::seeded_rng(9);
  Model model;
  auto chip = pdl::test::checkpointed_chip(c, &model, rng);
  std::unique_ptr<PageStore> t;
  REQUIRE(mount_store(*chip, &t, nullptr, c.mode).is_ok());
  Model acked = model;
  for (int i = 0; i < 3; i++) REQUIRE(step(*t, &acked, rng, 6).is_ok());
  t.reset();  // a power cut after three acknowledged syncs
  // The summary pages follow the stream in the area: find the first one.
  Superblock sb;
  REQUIRE(read_superblock(*chip, resolve_store_params, &sb).is_ok());
  CheckpointLog log(*chip, sb);
  REQUIRE(log.load().is_ok());
  REQUIRE(log.trusted_checkpoint());
  const uint32_t first = kBlocks - kAreaBlocks;
  const SummaryCursor at = summary_cursor_after(*chip, first, kAreaBlocks, log.newest());
  REQUIRE(at.usable);
  {
    auto copy = chip->clone();
    MountReport r;
    REQUIRE(mount_store(*copy, &t, &r, c.mode).is_ok());
    CHECK(r.replayed_blocks > 0);
    CHECK(reads_as(*t, acked));
  }
  const Ppa ppa = Ppa(uint64_t(at.block) * 8 + at.page);
  for (uint32_t i = 0; i < 64; i++) REQUIRE(chip->flip_stored_bit(ppa, i * 7, i % 8).is_ok());
  MountReport r;
  REQUIRE(mount_store(*chip, &t, &r, c.mode).is_ok());
  CHECK_FALSE(r.from_checkpoint);
  CHECK(r.scan_reason.find("summary") != std::string::npos);
  REQUIRE(t->check().is_ok());
  CHECK(reads_as(*t, acked));
}

TEST_CASE("with nvm, commits that program no page are declared by one empty summary page, and "
          "a power cut after them replays what the nvm holds (pdl's buffer, ipl's log sectors)",
          "[checkpoint][replay][nvm]") {
  // PDL's write buffer in NVM (records logged there); IPL's log areas in NVM (16 sectors per
  // erase block: these commits merge nothing).
  const Config configs[] = {{"pdl atomic, write buffer in nvm", Method::kPdl, FtlKind::kNone,
                             CommitMode::kGroup, 0, 0, 0, 64 * 1024},
                            {"pdl per page, write buffer in nvm", Method::kPdl, FtlKind::kNone,
                             CommitMode::kPerPage, 0, 0, 0, 64 * 1024},
                            {"ipl atomic, log areas in nvm", Method::kIpl, FtlKind::kNone,
                             CommitMode::kGroup, 0, 0, 0, ipl_nvm(16)},
                            {"ipl per page, log areas in nvm", Method::kIpl, FtlKind::kNone,
                             CommitMode::kPerPage, 0, 0, 0, ipl_nvm(16)}};
  for (const Config& c : configs) {
    INFO("config " << c.name);
    auto rng = pdl::test::seeded_rng(21);
    Model model;
    auto chip = pdl::test::checkpointed_chip(c, &model, rng);
    std::unique_ptr<PageStore> t;
    MountReport r0;
    REQUIRE(mount_store(*chip, &t, &r0, c.mode).is_ok());
    REQUIRE(r0.from_checkpoint);
    const NandCounters c0 = chip->counters();
    Model acked = model;
    std::vector<Lpn> pages;  // three mapped pages
    for (Lpn l = 0; l < acked.size() && pages.size() < 3; l++)
      if (acked[l]) pages.push_back(l);
    REQUIRE(pages.size() == 3);
    for (int i = 0; i < 6; i++) {  // small changes to a few pages: their records stay in NVM
      const Lpn l = pages[i % 3];
      Page p = *acked[l];
      p[8 * i] ^= 0x5A;
      REQUIRE(t->write(l, p).is_ok());
      REQUIRE(t->sync().is_ok());
      acked[l] = p;
    }
    const NandCounters c1 = chip->counters();
    CHECK(c1.nvm_writes > c0.nvm_writes);
    CHECK(c1.erases == c0.erases);
    t.reset();  // a power cut after six acknowledged commits
    auto copy = chip->clone();
    MountReport r;
    REQUIRE(mount_store(*chip, &t, &r, c.mode).is_ok());
    INFO("scan reason: " << r.scan_reason);
    CHECK(r.from_checkpoint);
    // The one program since the checkpoint: the empty summary page ("the NVM changed").
    CHECK(c1.programs - c0.programs == 1);
    CHECK(r.summary_pages == 1);
    // (PDL: the checkpoint's write heads; IPL: the blocks of the three pages, logged into.)
    CHECK(r.replayed_blocks > 0);
    if (c.method == Method::kIpl) CHECK(r.replayed_blocks <= 3);
    REQUIRE(t->check().is_ok());
    CHECK(reads_as(*t, acked));
    for (const Lpn l : pages)
      if (c.method == Method::kPdl) CHECK(t->locate(l).diff_in_buffer);
    std::unique_ptr<PageStore> scanned;
    StoreParams scan;
    scan.scan_mount = true;
    MountReport rs;
    REQUIRE(mount_store(*copy, &scanned, &rs, c.mode, &scan).is_ok());
    CHECK(r.pages_scanned * 10 < rs.pages_scanned);
    pdl::test::require_same_tables_but_tombstones(*t, *scanned, kBlocks - kAreaBlocks,
                                                  chip->geometry().pages_per_block);
    if (c.method == Method::kIpl) require_ipl_engines(*t, *scanned);
    pdl::test::require_same_engine_tables_after_replay(*t, *scanned);
    // Without the NVM read again the checkpoint's tables would read the old versions.
    CHECK_FALSE(reads_as(*t, model));
  }
}

TEST_CASE("more blocks declared between two syncs than twice the budget make the checkpoint "
          "stale, the store then says a power cut would scan, and the mount after one does; the "
          "next sync writes a new checkpoint, after which a power cut replays again",
          "[checkpoint][replay]") {
  const Config c = {"ftl page", Method::kFtl, FtlKind::kPage, CommitMode::kPerPage};
  auto rng = pdl::test::seeded_rng(31);
  Model model;
  auto chip = pdl::test::checkpointed_chip(c, &model, rng);
  StoreParams small_budget;
  small_budget.replay_blocks = 8;
  std::unique_ptr<PageStore> s;
  MountReport r;
  REQUIRE(mount_store(*chip, &s, &r, c.mode, &small_budget).is_ok());
  REQUIRE(r.from_checkpoint);
  auto& cs = static_cast<CheckpointedStore&>(*s);
  CHECK(cs.cut_would_replay());
  // Synced steps: each declares a few blocks (GC's too), a sync at the budget checkpoints.
  for (int i = 0; i < 6; i++) {
    REQUIRE(step(*s, &model, rng, 4).is_ok());
    CHECK(cs.cut_would_replay());
  }
  // Writes without a sync until past 2 x 8 declared blocks: "stale".
  const uint32_t per_block = chip->geometry().pages_per_block;
  Model written = model;
  for (uint32_t i = 0; i < 40 * per_block && cs.cut_would_replay(); i++) {
    const Lpn l = Lpn(rng() % s->logical_pages());
    const Page p = pdl::test::random_page(rng, s->page_size());
    REQUIRE(s->write(l, p).is_ok());
    written[l] = p;
  }
  CHECK_FALSE(cs.cut_would_replay());
  {
    auto cut = chip->clone();  // a power cut now: the mount scans
    std::unique_ptr<PageStore> t;
    REQUIRE(mount_store(*cut, &t, &r, c.mode).is_ok());
    CHECK_FALSE(r.from_checkpoint);
    CHECK(r.scan_reason == "changed since the checkpoint");
  }
  const uint64_t periodic = cs.periodic_checkpoints();
  REQUIRE(s->sync().is_ok());
  CHECK(cs.periodic_checkpoints() == periodic + 1);  // (the lapse made one due)
  CHECK(cs.cut_would_replay());
  REQUIRE(step(*s, &written, rng, 4).is_ok());
  s.reset();  // the power cut
  REQUIRE(mount_store(*chip, &s, &r, c.mode).is_ok());
  CHECK(r.from_checkpoint);
  CHECK(r.replayed_blocks > 0);
  CHECK(reads_as(*s, written));
}

TEST_CASE("ipl, what a power cut leaves for the mount after it to resolve (torn log sectors, "
          "void items to purge) stays in the next checkpoint, and a replay from it, cut "
          "anywhere, equals a scan in every field",
          "[checkpoint][replay][ipl]") {
  // A cut while logical block 0's updates program log sectors leaves torn sectors (a prefix, or
  // random bits) below the last used one — garbage (ipl_store.h, LBlock::garbage) — and, in
  // an atomic store, the interrupted group's void items, which purge() must merge or erase
  // before anything is programmed (IPLX). Neither shows through the PageStore interface. The
  // store mounted after the cut writes a checkpoint at once (garbage and purge lists in its
  // tables), then updates a page of another logical block (purge() first) and the power is cut
  // anywhere in that: the replay takes the blocks not declared since — logical block 0's with
  // its garbage, the blocks still to purge — from the checkpoint's tables and must equal the
  // scan in every field (flash/ipl/ipl_compare.h).
  const Config configs[] = {
      {"ipl per page", Method::kIpl, FtlKind::kNone, CommitMode::kPerPage, 2},
      {"ipl atomic", Method::kIpl, FtlKind::kNone, CommitMode::kGroup, 2}};
  const uint64_t stride = pdl::test::exhaustive_stride();
  for (const Config& c : configs) {
    INFO("config " << c.name);
    auto rng = pdl::test::seeded_rng(0x6a7b);
    Model model;
    auto base = pdl::test::checkpointed_chip(c, &model, rng);
    Lpn first = 0, last = Lpn(model.size() - 1);  // mapped pages far apart (two logical blocks)
    while (!model[first]) first++;
    while (!model[last]) last--;
    uint64_t cuts = 0, replays = 0, torn = 0;
    for (uint64_t k = 0;; k += stride) {
      INFO("first cut at operation " << k);
      auto chip = base->clone();
      std::unique_ptr<PageStore> t;
      REQUIRE(mount_store(*chip, &t, nullptr, c.mode).is_ok());
      chip->cut_power_after(k, k % 2 ? Tear::kPrefix : Tear::kRandomBits, k);
      Model acked = model;
      bool cut = false;
      for (int i = 0; i < 5 && !cut; i++) {  // small updates of `first`: log sectors, a merge
        Page p = *acked[first];
        p[16 * i] ^= 0x5A;
        if (t->write(first, p).is_ok() && t->sync().is_ok()) acked[first] = p;
        else cut = true;
      }
      t.reset();
      chip->restore_power();
      if (!cut) break;
      cuts++;
      MountReport r1;
      REQUIRE(mount_store(*chip, &t, &r1, c.mode).is_ok());
      {  // (the interrupted update of `first`: durable or not — per page its log sector may be
        // durable before the call failed; atomic, the commit record may be)
        Page got(t->page_size());
        REQUIRE(t->read(first, got).is_ok());
        if (got != *acked[first]) acked[first] = got;
      }
      REQUIRE(t->write_checkpoint({}).is_ok());
      t.reset();
      torn += r1.torn_pages > 0;  // (torn sectors in the checkpoint's tables)
      for (uint64_t j = 0;; j += stride) {  // the second cut: anywhere in purge() and a write
        INFO("second cut at operation " << j);
        auto cut2 = chip->clone();
        REQUIRE(mount_store(*cut2, &t, nullptr, c.mode).is_ok());
        cut2->cut_power_after(j, Tear::kPrefix, j);
        Model pending = acked;  // (a cut update of `last` may be durable all the same)
        Page p = *acked[last];
        p[3] ^= 0x3C;
        pending[last] = p;
        const bool done = t->write(last, p).is_ok() && t->sync().is_ok();
        t.reset();
        cut2->restore_power();
        auto copy = cut2->clone();
        MountReport r;
        REQUIRE(mount_store(*cut2, &t, &r, c.mode).is_ok());
        INFO("scan reason: " << r.scan_reason);
        std::unique_ptr<PageStore> scanned;
        StoreParams scan;
        scan.scan_mount = true;
        REQUIRE(mount_store(*copy, &scanned, nullptr, c.mode, &scan).is_ok());
        REQUIRE(t->check().is_ok());
        // (Else nothing was programmed — the checkpoint is current —, or the cut tore the log
        // entry the first program writes first: the mount scanned.)
        if (r.from_checkpoint && r.summary_pages > 0) {
          replays++;
          pdl::test::require_same_tables_but_tombstones(*t, *scanned, kBlocks - kAreaBlocks,
                                                        chip->geometry().pages_per_block);
          require_ipl_engines(*t, *scanned);
          pdl::test::require_same_engine_tables_after_replay(*t, *scanned);
        }
        CHECK((reads_as(*t, pending) || (!done && reads_as(*t, acked))));
        CHECK(reads_as(*t, pending) == reads_as(*scanned, pending));
        if (done) break;
        REQUIRE(j < 2000);
      }
      REQUIRE(k < 2000);
    }
    WARN(c.name << ": " << cuts << " power cuts while logging (" << torn << " left torn pages "
                << "in the checkpoint's tables), then " << replays << " replays equal to a scan");
    CHECK(replays > 0);
    if (stride == 1) CHECK(torn > 0);
  }
}
