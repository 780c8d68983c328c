// test_checkpoint_replay.cc — mount after a power cut from the checkpoint plus the blocks the
// summary pages declared since (docs/design.md §17, superblock format 7): at every operation
// of a workload after a checkpoint (writes, trims, GC, syncs, summary pages, a periodic
// checkpoint) the power is cut, and the mount that replays is compared with a full scan of the
// same chip — same mapping, same block states, same contents, the last acknowledged sync's —
// for PDL and OPU with atomic commit, the page FTL, IPL (atomic and per page) and IPU, and
// IPL and IPU with a block going bad (retired: marked bad, a declared change) in the workload,
// and StableBuffer over the page FTL;
// damaged summary pages make the mount scan; engines without replay scan and say why.
// The sanitizer run samples (PDL_MATRIX_STRIDE: configurations, PDL_EXHAUSTIVE_STRIDE: cuts).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>

#include "flash/device/emulated_nand.h"
#include "flash/image/open_store.h"
#include "flash/ipl/ipl_nvm.h"
#include "flash/store/checkpoint_area.h"
#include "flash/store/spare.h"
#include "flash/store/checkpointed_store.h"
#include "flash/store/superblock.h"
#include "tests/support/same_tables.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using Page = std::vector<uint8_t>;
using Model = std::vector<std::optional<Page>>;

constexpr uint32_t kBlocks = 96, kAreaBlocks = 24;  // halves of 12: appended checkpoints fit

struct Config {
  const char* name;
  Method method;
  FtlKind ftl;
  CommitMode mode;
  uint32_t log_pages = 0;  // IPL: its log region, in pages per erase block
  uint64_t grown_bad = 0;  // > 0: the workload's grown_bad-th flash operation fails its block
};

StoreParams params_of(const Config& c) {
  StoreParams p;
  p.method = c.method;
  p.ftl = c.ftl;
  if (c.method == Method::kIpl) p.log_region = c.log_pages * 512;
  else if (c.method != Method::kIpu) p.max_differential = 64;
  if (c.grown_bad) p.gc_reserve_blocks = 4;  // (room for a merge once a block is retired)
  p.checkpoint = true;
  p.checkpoint_blocks = kAreaBlocks;
  return p;
}

// One step of the workload: a few writes and a trim, then a sync; `pending` gets the contents
// the sync would acknowledge.
Status step(PageStore& s, Model* pending, std::mt19937_64& rng, int writes) {
  for (int i = 0; i < writes; i++) {
    const Lpn l = Lpn(rng() % s.logical_pages());
    const Page p = pdl::test::next_version(rng, (*pending)[l] ? &*(*pending)[l] : nullptr,
                                           s.page_size());
    PDL_TRY(s.write(l, p));
    (*pending)[l] = p;
  }
  const Lpn t = Lpn(rng() % s.logical_pages());
  PDL_TRY(s.trim(t));
  (*pending)[t].reset();
  return s.sync();
}

bool reads_as(PageStore& s, const Model& model) {
  Page got(s.page_size());
  for (Lpn l = 0; l < model.size(); l++) {
    const Status st = s.read(l, got);
    if (model[l] ? !st.is_ok() || got != *model[l] : !st.is(Errc::kNotFound)) return false;
  }
  return true;
}


// A chip with a checkpoint of some contents (`model`), written by a clean close.
std::unique_ptr<EmulatedNand> checkpointed_chip(const Config& c, Model* model,
                                                std::mt19937_64& rng) {
  auto chip = pdl::test::make_ram_nand(pdl::test::geometry(512, 32, 8, kBlocks));
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*chip, params_of(c), &s, c.mode).is_ok());
  model->assign(s->logical_pages(), std::nullopt);
  for (Lpn l = 0; l < s->logical_pages(); l++) {  // every page once: GC runs in the workload
    const Page p = pdl::test::random_page(rng, s->page_size());
    REQUIRE(s->write(l, p).is_ok());
    (*model)[l] = p;
    if (l % 16 == 15) REQUIRE(s->sync().is_ok());
  }
  REQUIRE(s->sync().is_ok());
  for (int i = 0; i < 20; i++) {
    Model m = *model;
    REQUIRE(step(*s, &m, rng, 8).is_ok());
    *model = m;
  }
  REQUIRE(s->write_checkpoint({}).is_ok());
  return chip;
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

TEST_CASE("a power cut anywhere after a checkpoint: the mount replays only the declared blocks "
          "and equals a full scan",
          "[checkpoint][replay]") {
  const Config configs[] = {
      {"pdl atomic", Method::kPdl, FtlKind::kNone, CommitMode::kGroup},
      {"opu atomic", Method::kOpu, FtlKind::kNone, CommitMode::kGroup},
      {"ftl page", Method::kFtl, FtlKind::kPage, CommitMode::kPerPage},
      {"ipl atomic", Method::kIpl, FtlKind::kNone, CommitMode::kGroup, 2},
      {"ipl per page", Method::kIpl, FtlKind::kNone, CommitMode::kPerPage, 2},
      {"ipu", Method::kIpu, FtlKind::kNone, CommitMode::kPerPage},
      {"ipl atomic, a grown bad block", Method::kIpl, FtlKind::kNone, CommitMode::kGroup, 2, 41},
      {"ipu, a grown bad block", Method::kIpu, FtlKind::kNone, CommitMode::kPerPage, 0, 23},
      {"stablebuffer on the page ftl", Method::kStableBuffer, FtlKind::kPage,
       CommitMode::kPerPage},
  };
  const size_t which = size_t(GENERATE(range(0, 9)));
  if (!pdl::test::in_matrix_sample(which)) return;
  const Config c = configs[which];
  INFO("config " << c.name);
  const char* env = std::getenv("PDL_EXHAUSTIVE_STRIDE");  // (the sanitizer run: every s-th cut)
  const uint64_t stride = uint64_t(std::max<long>(1, env && *env ? std::atol(env) : 1));
  auto rng = pdl::test::seeded_rng(0x5e + uint64_t(c.method) + (which == 4 ? 0x100 : 0));
  Model model;
  auto base = checkpointed_chip(c, &model, rng);
  StoreParams small_budget;
  small_budget.replay_blocks = 12;  // a periodic checkpoint within the workload
  uint64_t replays = 0, periodic_seen = 0, cuts = 0, erases = 0, full_seen = 0, incr_seen = 0,
           bad_seen = 0;
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
    }
    const uint64_t periodic = static_cast<CheckpointedStore&>(*t).periodic_checkpoints();
    const uint64_t fulls = static_cast<CheckpointedStore&>(*t).full_checkpoints();
    const uint64_t incrs = static_cast<CheckpointedStore&>(*t).incremental_checkpoints();
    t.reset();
    chip->restore_power();
    auto copy = chip->clone();
    MountReport r;
    {
      const Status st = mount_store(*chip, &t, &r, c.mode);
      INFO(st.to_string());
      REQUIRE(st.is_ok());
    }
    INFO("scan reason: " << r.scan_reason);
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
    if (r.replayed_blocks > 0) {
      replays++;
      CHECK(r.from_checkpoint);
      CHECK(r.summary_pages > 0);
      CHECK(r.pages_scanned < rs.pages_scanned);
    }
    // (A mount from the checkpoint alone keeps the run-time tables, which may differ from a
    // scan's where reads cannot tell: a trimmed page's tombstone. A replay resolves as a scan.)
    if (r.replayed_blocks > 0) {
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
      pdl::test::require_same_tables(*t, *scanned, kBlocks - kAreaBlocks);
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
    REQUIRE(k < 5000);
  }
  WARN(c.name << ": " << cuts << " power cuts, " << replays << " mounts by replay, "
              << periodic_seen << " periodic checkpoints and " << erases
              << " store block erases in the uncut workload (" << incr_seen
              << " checkpoints appended to their half, " << full_seen << " into the other)");
  CHECK(replays > 0);
  CHECK(periodic_seen > 0);
  CHECK(incr_seen > 0);  // cuts landed inside both kinds of checkpoint writes
  CHECK(full_seen > 0);
  CHECK(erases > 0);  // garbage collection ran
  if (c.grown_bad) CHECK(bad_seen == 1);  // (the failing block was retired)
}

TEST_CASE("a damaged summary page makes the mount scan, never replay without it",
          "[checkpoint][replay]") {
  const Config c{"pdl atomic", Method::kPdl, FtlKind::kNone, CommitMode::kGroup};
  auto rng = pdl::test::seeded_rng(9);
  Model model;
  auto chip = checkpointed_chip(c, &model, rng);
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

TEST_CASE("an engine without replay writes no summaries: the first change makes the checkpoint "
          "stale and the mount after a power cut scans",
          "[checkpoint][replay]") {
  // BAST; IPL with NVM (its log areas in NVM are written without declaring their blocks).
  for (const bool nvm : {false, true}) {
    const Config c = nvm ? Config{"ipl+nvm", Method::kIpl, FtlKind::kNone, CommitMode::kGroup}
                         : Config{"bast", Method::kFtl, FtlKind::kBast, CommitMode::kPerPage};
    INFO("config " << c.name);
    auto rng = pdl::test::seeded_rng(12);
    Model model;
    Geometry g = pdl::test::geometry(512, 32, 8, kBlocks);
    StoreParams params = params_of(c);
    if (nvm) {
      g.nvm_bytes = kNvmCommitArea + (kBlocks - kSuperblockBlocks) * 4 * 128;
      params.nvm_bytes = g.nvm_bytes;
      params.log_sector = 128;
      params.log_region = 0;
    }
    auto chip = pdl::test::make_ram_nand(g);
    std::unique_ptr<PageStore> s;
    REQUIRE(format_store(*chip, params, &s, c.mode).is_ok());
    model.assign(s->logical_pages(), std::nullopt);
    for (int i = 0; i < 10; i++) REQUIRE(step(*s, &model, rng, 4).is_ok());
    REQUIRE(s->write_checkpoint({}).is_ok());
    s.reset();
    REQUIRE(mount_store(*chip, &s, nullptr, c.mode).is_ok());
    REQUIRE(step(*s, &model, rng, 4).is_ok());
    s.reset();
    MountReport r;
    REQUIRE(mount_store(*chip, &s, &r, c.mode).is_ok());
    CHECK_FALSE(r.from_checkpoint);
    CHECK(r.scan_reason == "changed since the checkpoint");
    CHECK(reads_as(*s, model));
  }
}
