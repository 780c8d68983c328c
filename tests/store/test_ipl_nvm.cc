// test_ipl_nvm.cc — IPL with its log areas in NVM ([IPL-PCRAM] §3.2; flash/ipl/ipl_nvm.h).
//
// The shared store suites run IPL+NVM through the PageStore API (store_matrix.h). This file
// pins down what makes it the paper's design:
//   * a log flush programs no flash page and writes exactly one log sector of NVM; a read of a
//     logged page reads its data page and its block's used log sectors (one NVM read);
//   * a merge happens when a block's NVM area is full, and the merged block's area holds no
//     sector of its current life; sectors left from a block's previous life are never applied,
//     at run time or after a remount;
//   * garbage in NVM never yields wrong data: in unused slots, areas of free blocks and the
//     older commit slot it changes nothing, in used slots a read fails rather than lie;
//   * a power cut at every mutating operation (programs, erases and NVM writes), each tear
//     mode, per page and in atomic groups: the remounted store holds the acknowledged state;
//   * a single I/O error at any operation, NVM reads and writes included, is retried away;
//   * an NVM lost (zeroed, garbage: no valid commit record, which format stamps) is refused;
//   * 128-byte sectors merge fewer times than 512-byte ones for small updates, same NVM;
//   * the page inspector finds a block's NVM log area and decodes its sectors (pdl dump);
//   * resolve_params: defaults and refusals (messages name nvm: or log_region:).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>

#include "flash/device/emulated_nand.h"
#include "flash/image/open_store.h"
#include "flash/ipl/ipl_nvm.h"
#include "flash/ipl/ipl_sector.h"
#include "flash/store/page_inspector.h"
#include "flash/store/page_store.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using Page = std::vector<uint8_t>;
using Value = std::optional<Page>;

// 2 KiB pages, 16 pages per block, 12 blocks (10 data blocks); `sectors` log sectors of
// `ls` bytes per block in NVM (plus the commit area). NOP 1: with its log in NVM, IPL programs
// no page partially (the MLC-friendly point of [IPL-PCRAM] §3.2).
Geometry nvm_geometry(uint32_t ls, uint32_t sectors) {
  Geometry g = test::geometry(2048, 64, 16, 12);
  g.partial_programs = 1;
  g.nvm_bytes = kNvmCommitArea + (g.blocks - kSuperblockBlocks) * sectors * ls;
  return g;
}

StoreParams nvm_params(const Geometry& g, uint32_t ls) {
  StoreParams p;
  p.method = Method::kIpl;
  p.nvm_bytes = g.nvm_bytes;
  p.log_sector = ls;
  return p;
}

std::unique_ptr<PageStore> make_store(EmulatedNand& nand, uint32_t ls,
                                      CommitMode mode = CommitMode::kPerPage) {
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(nand, nvm_params(nand.geometry(), ls), &s, mode).is_ok());
  return s;
}

// Changes `len` bytes of `p` from `off` (cut at the page's end).
void change(PageStore& s, Lpn l, Page& p, uint32_t off, uint32_t len) {
  len = std::min<uint32_t>(len, uint32_t(p.size()) - off);
  for (uint32_t i = 0; i < len; i++) p[off + i] = uint8_t(p[off + i] + 1 + i % 250);
  s.note_update(l, off, len);
}

Value read_value(PageStore& s, Lpn l) {
  Page p(s.page_size());
  const Status st = s.read(l, p);
  if (st.is(Errc::kNotFound)) return std::nullopt;
  REQUIRE(st.is_ok());
  return p;
}

uint32_t block_of(PageStore& s, Lpn l) {
  return uint32_t(s.locate(l).base / s.nand().geometry().pages_per_block);
}

// The valid sectors in `block`'s NVM area that name logical block `lbn`, with their seqs.
std::vector<uint64_t> area_sectors(Nand& nand, const StoreParams& p, uint32_t block,
                                   uint32_t lbn) {
  std::vector<uint8_t> area(p.log_region);
  REQUIRE(nand.nvm_read(nvm_area_offset(block, p.log_region), area).is_ok());
  std::vector<uint64_t> seqs;
  for (uint32_t i = 0; i < p.log_region / p.log_sector; i++) {
    SectorHeader h;
    std::span<const uint8_t> payload;
    if (sector_decode(std::span<const uint8_t>(area).subspan(size_t(i) * p.log_sector,
                                                             p.log_sector),
                      &h, &payload) == SectorState::kValid &&
        h.lbn == lbn)
      seqs.push_back(h.seq);
  }
  return seqs;
}

NandCounters delta(const Nand& n, const NandCounters& before) { return n.counters() - before; }

uint64_t mutations(const NandCounters& c) { return c.programs + c.erases + c.nvm_writes; }

}  // namespace

TEST_CASE("an NVM log flush programs no flash page and writes exactly one log sector of NVM",
          "[ipl][nvm]") {
  for (const uint32_t ls : {128u, 512u}) {
    INFO("log_sector " << ls);
    auto nand = test::make_ram_nand(nvm_geometry(ls, 4));
    auto s = make_store(*nand, ls);
    auto rng = test::seeded_rng(0x1e1);
    Page p = test::random_page(rng, 2048);
    REQUIRE(s->write(0, p).is_ok());  // a first write: the data page
    change(*s, 0, p, 100, 40);
    NandCounters c0 = nand->counters();
    REQUIRE(s->write(0, p).is_ok());
    NandCounters d = delta(*nand, c0);
    CHECK(d.programs == 0);
    CHECK(d.erases == 0);
    CHECK(d.page_reads == 0);
    CHECK(d.nvm_writes == 1);
    CHECK(d.nvm_bytes_written == ls);
    CHECK(d.nvm_ns == nand->geometry().nvm_write_cost_ns(ls));
    // A read: the data page from flash, the used log sectors in one NVM read.
    c0 = nand->counters();
    CHECK(read_value(*s, 0) == Value(p));
    d = delta(*nand, c0);
    CHECK(d.page_reads == 1);
    CHECK(d.nvm_reads == 1);
    CHECK(d.nvm_bytes_read == ls);
    // A page without log records: no NVM read.
    REQUIRE(s->write(1, p).is_ok());
    c0 = nand->counters();
    CHECK(read_value(*s, 1) == Value(p));
    CHECK(delta(*nand, c0).nvm_reads == 0);
    REQUIRE(s->check().is_ok());
  }
}

TEST_CASE("a full NVM log area merges its block, whose new area holds no sector",
          "[ipl][nvm]") {
  const uint32_t ls = 128, sectors = 4;
  auto nand = test::make_ram_nand(nvm_geometry(ls, sectors));
  auto s = make_store(*nand, ls);
  const StoreParams p = s->params();
  REQUIRE(p.log_region == sectors * ls);
  auto rng = test::seeded_rng(0x1e2);
  Page page = test::random_page(rng, 2048);
  REQUIRE(s->write(0, page).is_ok());
  const uint32_t first = block_of(*s, 0);
  for (uint32_t k = 0; k < sectors; k++) {  // each a one-sector flush: fills the area
    change(*s, 0, page, 64 * k, 30);
    REQUIRE(s->write(0, page).is_ok());
  }
  CHECK(s->stats().merges == 0);
  CHECK(area_sectors(*nand, p, first, 0).size() == sectors);
  change(*s, 0, page, 900, 30);
  const NandCounters c0 = nand->counters();
  REQUIRE(s->write(0, page).is_ok());  // no room: Alg. 1
  const NandCounters d = delta(*nand, c0);
  CHECK(s->stats().merges == 1);
  CHECK(d.erases == 1);
  CHECK(d.programs == 1);  // the one live page
  CHECK(d.nvm_writes == 0);
  const uint32_t merged = block_of(*s, 0);
  CHECK(merged != first);
  CHECK(s->locate(0).diff == kNoPpa);
  // The new block's area has no sector newer than its merge; a read needs no NVM.
  const NandCounters c1 = nand->counters();
  CHECK(read_value(*s, 0) == Value(page));
  CHECK(delta(*nand, c1).nvm_reads == 0);
  // After a remount too: nothing to replay, the next flush goes to the first slot.
  s.reset();
  REQUIRE(mount_store(*nand, &s).is_ok());
  REQUIRE(s->check().is_ok());
  CHECK(read_value(*s, 0) == Value(page));
  change(*s, 0, page, 10, 20);
  REQUIRE(s->write(0, page).is_ok());
  std::vector<uint8_t> slot0(ls);
  REQUIRE(nand->nvm_read(nvm_area_offset(merged, p.log_region), slot0).is_ok());
  SectorHeader h;
  std::span<const uint8_t> payload;
  REQUIRE(sector_decode(slot0, &h, &payload) == SectorState::kValid);
  CHECK(h.lbn == 0);
  CHECK(h.slot == 0);
}

TEST_CASE("sectors from a block's previous life are never applied", "[ipl][nvm]") {
  const uint32_t ls = 128, sectors = 4;
  // Old sectors (valid, of the same logical block, older than the block's merge) planted in
  // the merged block's area behind its current sector, or over the whole area.
  for (const bool over_current : {false, true}) {
    INFO("over the current sector: " << over_current);
    auto nand = test::make_ram_nand(nvm_geometry(ls, sectors));
    auto s = make_store(*nand, ls);
    const StoreParams p = s->params();
    auto rng = test::seeded_rng(0x1e3);
    Page page = test::random_page(rng, 2048);
    REQUIRE(s->write(0, page).is_ok());
    const uint32_t old_block = block_of(*s, 0);
    for (uint32_t k = 0; k < sectors; k++) {
      change(*s, 0, page, 64 * k, 30);
      REQUIRE(s->write(0, page).is_ok());
    }
    std::vector<uint8_t> old_area(p.log_region);
    REQUIRE(nand->nvm_read(nvm_area_offset(old_block, p.log_region), old_area).is_ok());
    // Over the old records' bytes: applied again, they would undo this change.
    change(*s, 0, page, 0, 260);
    REQUIRE(s->write(0, page).is_ok());  // the merge
    REQUIRE(s->stats().merges == 1);
    const Page merged_value = page;
    const uint32_t new_block = block_of(*s, 0);
    REQUIRE(new_block != old_block);
    change(*s, 0, page, 1200, 30);
    REQUIRE(s->write(0, page).is_ok());  // slot 0 of the new block's area
    const Page want = page;
    REQUIRE(area_sectors(*nand, p, new_block, 0).size() >= 1);
    std::vector<uint8_t> area(p.log_region);
    REQUIRE(nand->nvm_read(nvm_area_offset(new_block, p.log_region), area).is_ok());
    if (over_current)
      area = old_area;
    else
      std::copy(old_area.begin() + ls, old_area.end(), area.begin() + ls);
    REQUIRE(nand->nvm_write(nvm_area_offset(new_block, p.log_region), area).is_ok());
    s.reset();
    REQUIRE(mount_store(*nand, &s).is_ok());
    REQUIRE(s->check().is_ok());
    // Over the current sector the last write's record is gone (NVM damage): the merged
    // version, never one with the stale records applied.
    CHECK(read_value(*s, 0) == Value(over_current ? merged_value : want));
    // The store goes on: new records take the area's slots the stale sectors hold.
    Page next = *read_value(*s, 0);
    change(*s, 0, next, 700, 25);
    REQUIRE(s->write(0, next).is_ok());
    CHECK(read_value(*s, 0) == Value(next));
    s.reset();
    REQUIRE(mount_store(*nand, &s).is_ok());
    REQUIRE(s->check().is_ok());
    CHECK(read_value(*s, 0) == Value(next));
  }
}

TEST_CASE("garbage in NVM never yields wrong data", "[ipl][nvm]") {
  const uint32_t ls = 128, sectors = 4;
  auto nand = test::make_ram_nand(nvm_geometry(ls, sectors));
  auto s = make_store(*nand, ls, CommitMode::kGroup);
  const StoreParams p = s->params();
  auto rng = test::seeded_rng(0x1e4);
  std::map<Lpn, Page> model;
  for (Lpn l = 0; l < 40; l++) {
    Page v = test::random_page(rng, 2048);
    REQUIRE(s->write(l, v).is_ok());
    model[l] = v;
  }
  for (int round = 0; round < 60; round++) {
    const Lpn l = Lpn(rng() % 40);
    change(*s, l, model[l], uint32_t(rng() % 1900), 1 + uint32_t(rng() % 60));
    REQUIRE(s->write(l, model[l]).is_ok());
    if (round % 7 == 0) REQUIRE(s->sync().is_ok());
  }
  REQUIRE(s->sync().is_ok());
  // Which slots are in use: the blocks holding logical blocks, their sectors newer than the
  // block's data (as recovery reads them); everything else is fair game for garbage.
  std::vector<bool> owned(nand->geometry().blocks, false);
  for (uint32_t b = kSuperblockBlocks; b < nand->geometry().blocks; b++)
    owned[b] = s->block_info(b).state != BlockInfo::kFree;
  s.reset();
  auto garbage = [&](uint64_t off, size_t n) {
    std::vector<uint8_t> g = test::random_page(rng, n);
    REQUIRE(nand->nvm_write(off, g).is_ok());
  };
  for (uint32_t b = kSuperblockBlocks; b < nand->geometry().blocks; b++)
    if (!owned[b]) garbage(nvm_area_offset(b, p.log_region), p.log_region);
  // The older commit slot: the newer one is the one recovery reads back as committed.
  uint8_t commit[kNvmCommitArea];
  REQUIRE(nand->nvm_read(0, commit).is_ok());
  uint64_t seq0 = 0, seq1 = 0;
  const bool v0 = nvm_commit_decode(std::span<const uint8_t>(commit).first(32), &seq0);
  const bool v1 = nvm_commit_decode(std::span<const uint8_t>(commit).subspan(32), &seq1);
  REQUIRE((v0 || v1));
  garbage(!v1 || (v0 && seq0 > seq1) ? 32 : 0, 32);
  REQUIRE(mount_store(*nand, &s, nullptr, CommitMode::kGroup).is_ok());
  REQUIRE(s->check().is_ok());
  for (const auto& [l, v] : model) CHECK(read_value(*s, l) == Value(v));
  // Garbage over every used slot: reads fail or return the right page, never another one.
  for (uint32_t b = kSuperblockBlocks; b < nand->geometry().blocks; b++)
    if (s->block_info(b).state != BlockInfo::kFree)
      garbage(nvm_area_offset(b, p.log_region), p.log_region);
  uint32_t failed = 0;
  for (const auto& [l, v] : model) {
    Page got(2048);
    const Status st = s->read(l, got);
    if (!st.is_ok()) {
      CHECK(st.is(Errc::kCorrupt));
      failed++;
      continue;
    }
    CHECK(got == v);
  }
  CHECK(failed > 0);  // some pages had log records
  // fsck's check() sees the damage.
  CHECK(s->check().is(Errc::kCorrupt));
}

namespace {

// A scripted workload (small noted updates that fill areas and merge, whole pages, trims and
// syncs, per page or in groups), run until the chip's power fails. `acked` gets each lpn's
// acknowledged value: per page, every write or trim that returned (trims once synced); in
// groups, the state at the last sync that returned. `inflight` the other allowed value of an
// lpn the interrupted operation was changing (per page), or the open group's whole state.
struct Script {
  std::map<Lpn, Value> acked, inflight;
  std::map<Lpn, Value> cur;      // what the store should read now
  std::map<Lpn, Value> pending;  // per page: trims not yet synced
  bool group_mode = false;
  bool cut_in_sync = false;

  Status run(PageStore& s, uint64_t salt) {
    std::mt19937_64 rng(salt);
    const Lpn n = 24;  // logical blocks 0 and 1 (16 pages each)
    auto value = [&](Lpn l) -> Value { return cur.count(l) ? cur[l] : std::nullopt; };
    for (int op = 0; op < 70; op++) {
      const Lpn l = Lpn(rng() % n);
      const int kind = int(rng() % 10);
      Status st;
      if (kind < 6) {
        Page v = value(l) ? *value(l) : Page(2048, uint8_t(l));
        if (value(l) && kind < 5) {
          change(s, l, v, uint32_t(rng() % 1900), 1 + uint32_t(rng() % (kind < 3 ? 60 : 300)));
        } else {
          std::mt19937_64 r2(rng());
          v = test::random_page(r2, 2048);
        }
        if (!group_mode) inflight[l] = v;
        st = s.write(l, v);
        if (st.is_ok()) {
          cur[l] = v;
          if (!group_mode) acked[l] = v;
          pending.erase(l);
        }
      } else if (kind < 8) {
        if (!group_mode) inflight[l] = std::nullopt;
        st = s.trim(l);
        if (st.is_ok()) {
          cur[l] = std::nullopt;
          if (!group_mode) pending[l] = std::nullopt;
        }
      } else {
        cut_in_sync = true;
        if (!group_mode) inflight.insert(pending.begin(), pending.end());
        st = s.sync();
        if (st.is_ok()) {
          cut_in_sync = false;
          if (group_mode) acked = cur;
          for (const auto& [pl, pv] : pending) acked[pl] = pv;
          pending.clear();
        }
      }
      if (!st.is_ok()) return st;
      if (!group_mode) inflight.clear();
    }
    return Status::ok();
  }
};

void check_against(PageStore& s, const Script& sc, bool group_mode) {
  const Lpn n = 24;
  bool all_acked = true, all_cur = true;
  for (Lpn l = 0; l < n; l++) {
    const Value got = read_value(s, l);
    const Value want = sc.acked.count(l) ? sc.acked.at(l) : std::nullopt;
    const Value now = sc.cur.count(l) ? sc.cur.at(l) : std::nullopt;
    all_acked &= got == want;
    all_cur &= got == now;
    if (!group_mode) {
      INFO("lpn " << l);
      bool ok = got == want;
      if (sc.inflight.count(l)) ok |= got == sc.inflight.at(l);
      if (sc.pending.count(l)) ok |= got == sc.pending.at(l);  // an unsynced trim
      CHECK(ok);
    }
  }
  // Groups: the last committed state, or the in-flight sync's whole state.
  if (group_mode) CHECK((all_acked || (sc.cut_in_sync && all_cur)));
}

}  // namespace

TEST_CASE("a power cut at every flash and NVM operation keeps the acknowledged state",
          "[ipl][nvm][powerloss]") {
  for (const uint32_t ls : {128u, 512u}) {
    for (const CommitMode mode : {CommitMode::kPerPage, CommitMode::kGroup}) {
      const bool groups = mode == CommitMode::kGroup;
      const Geometry g = nvm_geometry(ls, ls == 128 ? 3 : 2);
      // Operations of the whole script without a cut.
      uint64_t total;
      {
        auto nand = test::make_ram_nand(g);
        auto s = make_store(*nand, ls, mode);
        Script sc;
        sc.group_mode = groups;
        const NandCounters c0 = nand->counters();
        REQUIRE(sc.run(*s, 0x5c1).is_ok());
        total = mutations(delta(*nand, c0));
        REQUIRE(delta(*nand, c0).nvm_writes > 0);
        REQUIRE(s->stats().merges > 0);
      }
      for (uint64_t k = 0; k <= total; k++) {
        for (const Tear tear : {Tear::kNone, Tear::kPrefix, Tear::kRandomBits}) {
          INFO("log_sector " << ls << (groups ? " groups" : " per page") << ", cut after "
                             << k << " of " << total << " operations, tear " << int(tear));
          auto nand = test::make_ram_nand(g);
          auto s = make_store(*nand, ls, mode);
          Script sc;
          sc.group_mode = groups;
          nand->cut_power_after(k, tear, k * 7 + uint64_t(tear));
          const Status st = sc.run(*s, 0x5c1);
          if (k < total) REQUIRE(st.is(Errc::kPowerCut));
          s.reset();
          nand->restore_power();
          REQUIRE(mount_store(*nand, &s, nullptr, mode).is_ok());
          REQUIRE(s->check().is_ok());
          check_against(*s, sc, groups);
          // A second mount finds the same.
          s.reset();
          REQUIRE(mount_store(*nand, &s, nullptr, mode).is_ok());
          check_against(*s, sc, groups);
        }
      }
    }
  }
}

TEST_CASE("a single I/O error at any device operation, NVM ones included, is retried away",
          "[ipl][nvm][ioerr]") {
  // A failed NVM read changes nothing and a failed NVM write is redone at the same place
  // (reread.h), as a failed flash read or erase is: the script runs through untouched.
  for (const CommitMode mode : {CommitMode::kPerPage, CommitMode::kGroup}) {
    const bool groups = mode == CommitMode::kGroup;
    const Geometry g = nvm_geometry(128, 3);
    for (uint64_t n = 0;; n++) {
      INFO((groups ? "groups" : "per page") << ", I/O error at operation " << n);
      auto nand = test::make_ram_nand(g);
      auto s = make_store(*nand, 128, mode);
      nand->io_errors_at(n, 1);
      Script sc;
      sc.group_mode = groups;
      const Status st = sc.run(*s, 0x5c1);
      INFO(st.to_string());
      REQUIRE(st.is_ok());
      REQUIRE(s->sync().is_ok());  // (the script may end with writes not synced yet)
      sc.acked = sc.cur;
      sc.pending.clear();
      if (nand->io_errors_injected() == 0) break;  // past the script's last operation
      check_against(*s, sc, groups);
      s.reset();
      REQUIRE(mount_store(*nand, &s, nullptr, mode).is_ok());
      REQUIRE(s->check().is_ok());
      check_against(*s, sc, groups);
    }
  }
}

TEST_CASE("an NVM lost (zeroed or garbage) is refused, naming the NVM, never read as no log",
          "[ipl][nvm]") {
  // Format stamps the commit area with a record (seq 0): an NVM whose commit area holds no
  // valid record was not this store's, or lost its bytes — its log sectors cannot be
  // recovered, and the flash's data pages alone are an older state nobody committed.
  for (const CommitMode mode : {CommitMode::kPerPage, CommitMode::kGroup}) {
    for (const bool zeros : {true, false}) {
      INFO((mode == CommitMode::kGroup ? "groups" : "per page") << (zeros ? ", zeroed" : ", garbage"));
      const Geometry g = nvm_geometry(128, 3);
      auto nand = test::make_ram_nand(g);
      auto s = make_store(*nand, 128, mode);
      Script sc;
      sc.group_mode = mode == CommitMode::kGroup;
      REQUIRE(sc.run(*s, 0x5c1).is_ok());
      REQUIRE(s->sync().is_ok());
      s.reset();
      REQUIRE(mount_store(*nand, &s, nullptr, mode).is_ok());  // as written: mounts
      s.reset();
      std::vector<uint8_t> lost(g.nvm_bytes, 0);
      auto rng = test::seeded_rng(0x105e);
      if (!zeros)
        for (auto& b : lost) b = uint8_t(rng());
      REQUIRE(nand->nvm_write(0, lost).is_ok());
      const Status st = mount_store(*nand, &s, nullptr, mode);
      INFO(st.to_string());
      REQUIRE(st.is(Errc::kCorrupt));
      REQUIRE(st.message().find("NVM") != std::string::npos);
    }
  }
}

TEST_CASE("128-byte NVM log sectors merge less than 512-byte ones for small updates",
          "[ipl][nvm]") {
  // Same NVM per block (1 KiB: 8 sectors of 128 bytes or 2 of 512), the same small updates
  // (10 .. 90 bytes of records, as [IPL-PCRAM] §4 observed 50 .. 150).
  uint64_t merges[2];
  for (const uint32_t ls : {128u, 512u}) {
    auto nand = test::make_ram_nand(nvm_geometry(ls, 1024 / ls));
    auto s = make_store(*nand, ls);
    auto rng = test::seeded_rng(0x1e5);
    std::map<Lpn, Page> model;
    for (Lpn l = 0; l < 64; l++) {
      model[l] = test::random_page(rng, 2048);
      REQUIRE(s->write(l, model[l]).is_ok());
    }
    for (int i = 0; i < 2000; i++) {
      const Lpn l = Lpn(rng() % 64);
      change(*s, l, model[l], uint32_t(rng() % 1900), 6 + uint32_t(rng() % 80));
      REQUIRE(s->write(l, model[l]).is_ok());
    }
    for (const auto& [l, v] : model) REQUIRE(read_value(*s, l) == Value(v));
    merges[ls == 128 ? 0 : 1] = s->stats().merges;
  }
  INFO("merges per 2000 small writes: 128B " << merges[0] << ", 512B " << merges[1]);
  CHECK(merges[0] > 0);
  // 4 times the slots, each update one sector either way: well under half the merges.
  CHECK(merges[0] * 2 < merges[1]);
}

TEST_CASE("the page inspector finds and decodes a block's NVM log area", "[ipl][nvm]") {
  auto nand = test::make_ram_nand(nvm_geometry(128, 4));
  auto s = make_store(*nand, 128);
  auto rng = test::seeded_rng(0x1e6);
  Page page = test::random_page(rng, 2048);
  REQUIRE(s->write(3, page).is_ok());
  change(*s, 3, page, 50, 20);
  REQUIRE(s->write(3, page).is_ok());
  const std::unique_ptr<PageInspector> in = page_inspector(s->params(), nand->geometry());
  const uint32_t b = block_of(*s, 3);
  CHECK_FALSE(in->is_log_page(Ppa(b) * nand->geometry().pages_per_block + 15));
  uint64_t off = 0;
  uint32_t bytes = 0;
  CHECK_FALSE(in->nvm_log_area(0, &off, &bytes));  // a superblock block
  REQUIRE(in->nvm_log_area(b, &off, &bytes));
  CHECK(off == nvm_area_offset(b, s->params().log_region));
  CHECK(bytes == 4 * 128);
  std::vector<uint8_t> area(bytes);
  REQUIRE(nand->nvm_read(off, area).is_ok());
  const std::vector<LogSectorInfo> sectors = in->log_sectors(area);
  REQUIRE(sectors.size() == 4);
  CHECK(sectors[0].kind == LogSectorInfo::kLog);
  CHECK(sectors[0].lpn == 3);
  CHECK(sectors[0].payload_bytes == 4 + 20);
  CHECK(sectors[1].kind == LogSectorInfo::kTorn);  // zeros since format: no sector
}

TEST_CASE("ipl with nvm: parameter defaults and refusals", "[ipl][nvm][params]") {
  Geometry g = nvm_geometry(128, 4);
  StoreParams p = nvm_params(g, 0);
  REQUIRE(resolve_store_params(&p, g).is_ok());
  CHECK(p.log_sector == kNvmLogSector);
  CHECK(p.log_region == 4 * 128);                // the NVM divided over the data blocks
  CHECK(p.data_pages_per_block(g) == g.pages_per_block);  // no log page on flash
  // An explicit area that fits, rounded down to whole sectors.
  p = nvm_params(g, 128);
  p.log_region = 300;
  REQUIRE(resolve_store_params(&p, g).is_ok());
  CHECK(p.log_region == 256);
  auto refused = [&](StoreParams q, const char* what) {
    const Status st = resolve_store_params(&q, g);
    INFO(st.to_string());
    CHECK(st.is(Errc::kInvalidArgument));
    CHECK(std::string(st.message()).find(what) != std::string::npos);
  };
  p = nvm_params(g, 128);
  p.log_region = 5 * 128;
  refused(p, "log_region:");
  p = nvm_params(g, 128);
  p.log_region = 100;
  refused(p, "log_region:");
  {
    const Geometry g3 = nvm_geometry(128, 3);  // 384 bytes per block: no 512-byte sector
    StoreParams q = nvm_params(g3, 512);
    const Status st = resolve_store_params(&q, g3);
    CHECK(st.is(Errc::kInvalidArgument));
    CHECK(std::string(st.message()).find("nvm:") != std::string::npos);
  }
  p = nvm_params(g, 128);
  p.nvm_bytes = g.nvm_bytes + 8;
  refused(p, "nvm:");
  p = nvm_params(g, 128);
  p.method = Method::kIpu;
  p.log_sector = 0;
  refused(p, "nvm:");
}
