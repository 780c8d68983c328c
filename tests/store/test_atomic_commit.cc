// test_atomic_commit.cc — the store's atomic groups (CommitMode::kGroup: PDL, OPU and IPL).
//
// The contract (page_store.h): the writes and trims between two syncs commit together, or not
// at all. Over the PDL, OPU and IPL part of the store matrix:
//   * a power cut at a random flash operation of a workload of groups — each ended by a sync or
//     an abort, with Case 2 flushes, Case 3 base pages, trims and GC inside groups — recovers
//     exactly the last committed state, or the one whose commit the cut interrupted; never a
//     mix (the whole state is compared, not page by page); a second mount agrees; work goes on;
//   * abort() brings back the committed state, in RAM and after a remount, also when the group
//     flushed pages and GC moved its data;
//   * a crashed group's pages are ignored by recovery and erased before a later commit record
//     could cover their sequence numbers;
//   * a sync with nothing pending programs nothing; a commit whose differentials fit a page is
//     one program; OPU's last base page carries the commit record;
//   * the newest commit record outlives a GC of its block;
//   * a group that outgrows the free space is refused with kFull and changes nothing;
//   * a store of superblock format 1 is upgraded in place, and a cut during the upgrade loses
//     nothing;
//   * IPL ([IPL] §5): a merge inside a transaction is selective (committed versions as data
//     pages, the changes carried over) or, when the changes outgrow the log region, a shadow
//     merge that keeps the committed block until the commit — a cut at every operation of
//     either recovers the last commit, and abort restores it; the commit log moves to a fresh
//     block as it fills without losing the newest record; a format-1 IPL store is upgraded
//     with a commit log, or stays format 1 (per page) when no block is free for one.
// And the FTL devices of the matrix (no atomic commit): asked for kGroup they stay per page,
// and a power cut recovers every page as synced or as one of its later writes — parts of a
// "group" survive, as on any block device.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <optional>

#include "tests/support/cut_at_nand.h"
#include "flash/image/open_store.h"
#include "flash/common/crc32c.h"
#include "flash/pdl/record.h"
#include "flash/store/page_store.h"
#include "flash/store/spare.h"
#include "flash/store/superblock.h"
#include "tests/support/store_matrix.h"
#include "tests/support/store_state.h"
#include "tests/support/test_util.h"

using namespace pdl;
using pdl::test::StoreConfig;

namespace {

using Page = std::vector<uint8_t>;
using State = pdl::test::StoreState;
using pdl::test::read_all;

// The PDL, OPU and IPL configurations of the store matrix (IPU has no atomic groups).
std::vector<StoreConfig> group_matrix() {
  std::vector<StoreConfig> out;
  for (const StoreConfig& c : pdl::test::store_matrix())
    if (has_atomic_commit(c.params.method)) out.push_back(c);
  return out;
}

// The row of group_matrix() this run of the test case takes (GENERATE runs the case once per
// row), as `cfg`, its index as `which`. A macro because GENERATE and INFO must sit in the test
// case itself.
#define GROUP_MATRIX_ROW(cfg, which)                                  \
  static const std::vector<StoreConfig> group_rows = group_matrix(); \
  const size_t which = GENERATE(range(size_t(0), group_rows.size())); \
  const StoreConfig& cfg = group_rows[which];                         \
  INFO("config " << cfg.name)

std::unique_ptr<PageStore> format_group(Nand& nand, const StoreParams& p) {
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(nand, p, &s, CommitMode::kGroup).is_ok());
  REQUIRE(s->atomic());
  return s;
}

std::unique_ptr<PageStore> mount_group(Nand& nand, MountReport* rep = nullptr) {
  std::unique_ptr<PageStore> s;
  const Status st = mount_store(nand, &s, rep, CommitMode::kGroup);
  INFO("mount: " << st.to_string());
  REQUIRE(st.is_ok());
  REQUIRE(s->check().is_ok());
  return s;
}

// The first lpn where `a` and `b` differ, for messages ("-" if none).
std::string first_difference(const State& a, const State& b) {
  for (size_t l = 0; l < a.size(); l++)
    if (a[l] != b[l]) return std::to_string(l);
  return "-";
}

void sparse_change(std::mt19937_64& rng, Page& p, int max_runs) {
  const int runs = 1 + int(rng() % uint64_t(max_runs));
  for (int k = 0; k < runs; k++) {
    const size_t len = 1 + rng() % 8, off = rng() % (p.size() - len);
    for (size_t j = 0; j < len; j++) p[off + j] = uint8_t(rng());
  }
}

// A workload of groups on `s`, the model kept alongside: `committed` is the state of the last
// commit, `current` the state reads must show, `in_flight` the state a sync is committing
// while it runs. Stops at the first error (a power cut) and returns it.
struct Model {
  State committed, current;
  std::optional<State> in_flight;
  explicit Model(size_t n) : committed(n), current(n) {}
};

Status run_groups(PageStore& s, uint64_t seed, Model& m, int groups) {
  std::mt19937_64 rng(seed);
  const uint32_t n = s.logical_pages(), psz = s.page_size();
  auto sync = [&]() -> Status {
    m.in_flight = m.current;
    const Status st = s.sync();
    if (st.is(Errc::kFull)) {  // the commit found no room (IPL's merges): the group is undone
      m.in_flight.reset();
      PDL_TRY(s.abort());
      m.current = m.committed;
      return Status::ok();
    }
    PDL_TRY(st);  // (a power cut: in_flight is what the sync was committing)
    m.committed = m.current;
    m.in_flight.reset();
    return Status::ok();
  };
  // Load half of the logical pages, a group per 16 pages (or fewer: a group that outgrows the
  // room — IPL keeping committed blocks for its shadow merges — commits early).
  for (Lpn l = 0; l < n / 2; l++) {
    Page p = pdl::test::random_page(rng, psz);
    Status st = s.write(l, p);
    if (st.is(Errc::kFull)) {
      PDL_TRY(sync());
      st = s.write(l, p);
    }
    PDL_TRY(st);
    m.current[l] = p;
    if (l % 16 == 15) PDL_TRY(sync());
  }
  PDL_TRY(sync());
  for (int g = 0; g < groups; g++) {
    const int ops = 1 + int(rng() % 24);
    for (int i = 0; i < ops; i++) {
      // A hot set of four pages half the time: their differentials grow to Case 3.
      const Lpn l = Lpn(rng() % 2 ? rng() % 4 : rng() % n);
      const unsigned r = unsigned(rng() % 100);
      if (r < 70) {
        Page p = m.current[l] ? *m.current[l] : pdl::test::random_page(rng, psz);
        if (m.current[l]) sparse_change(rng, p, r < 8 ? 60 : int(psz / 128));
        Status st = s.write(l, p);
        if (st.is(Errc::kFull)) break;  // the group outgrew the room: commit it (below)
        PDL_TRY(st);
        m.current[l] = p;
      } else if (r < 85) {
        Page got(psz);
        Status st = s.read(l, got);
        if (!st.is_ok() && !st.is(Errc::kNotFound)) return st;
        if (st.is_ok() != m.current[l].has_value() || (m.current[l] && got != *m.current[l]))
          return Status::error(Errc::kCorrupt, "a read in the open group returned wrong data");
      } else {
        Status st = s.trim(l);
        if (st.is(Errc::kFull)) break;
        PDL_TRY(st);
        m.current[l].reset();
      }
    }
    if (rng() % 10 == 0) {
      PDL_TRY(s.abort());
      m.current = m.committed;
    } else {
      PDL_TRY(sync());
    }
  }
  return Status::ok();
}

}  // namespace

TEST_CASE("a power cut at a random flash operation of atomic groups recovers exactly the last "
          "commit", "[store][atomic][powerloss]") {
  const auto matrix = group_matrix();
  const size_t which = GENERATE_COPY(range(size_t(0), matrix.size()));
  const auto tear = GENERATE(Tear::kNone, Tear::kPrefix, Tear::kRandomBits);
  if (!pdl::test::in_matrix_sample(which * 3 + size_t(tear), __LINE__)) return;
  const StoreConfig& cfg = matrix[which];
  INFO("config " << cfg.name << " tear " << int(tear));
  const uint64_t seed = pdl::test::test_seed() ^ (which * 0x9E3779B97F4A7C15ull) ^ 0xA70;
  constexpr int kGroups = 120;

  uint64_t total_ops = 0;
  {
    auto nand = pdl::test::make_ram_nand(cfg.geo);
    auto s = format_group(*nand, cfg.params);
    Model m(s->logical_pages());
    const uint64_t base = nand->mutating_ops();
    const Status st = run_groups(*s, seed, m, kGroups);
    INFO(st.to_string());
    REQUIRE(st.is_ok());
    total_ops = nand->mutating_ops() - base;
    INFO("gc runs " << s->stats().gc_runs << " aborts " << s->stats().aborts);
    REQUIRE(s->stats().gc_runs > 5);   // cuts land in GC too
    REQUIRE(s->stats().aborts > 3);
    REQUIRE(read_all(*s) == m.committed);
    auto again = mount_group(*nand);
    REQUIRE(read_all(*again) == m.committed);
  }

  auto rng = pdl::test::seeded_rng(0xA7C + which * 3 + uint64_t(tear));
  int in_flight_committed = 0;
  const int trials = pdl::test::crash_trials(30, 10);
  for (int trial = 0; trial < trials; trial++) {
    const uint64_t k = rng() % total_ops;
    INFO("trial " << trial << ": cut after " << k << " of " << total_ops << " operations");
    auto nand = pdl::test::make_ram_nand(cfg.geo);
    auto s = format_group(*nand, cfg.params);
    Model m(s->logical_pages());
    nand->cut_power_after(k, tear, rng());
    const Status st = run_groups(*s, seed, m, kGroups);
    REQUIRE(st.is(Errc::kPowerCut));
    s.reset();
    nand->restore_power();
    const uint64_t before = nand->mutating_ops();
    MountReport rep;
    auto first = mount_group(*nand, &rep);
    REQUIRE(nand->mutating_ops() == before);  // recovery writes nothing
    const State got = read_all(*first);
    const bool exact = got == m.committed;
    const bool landed = !exact && m.in_flight && got == *m.in_flight;
    in_flight_committed += landed;
    INFO("void pages " << rep.void_pages << "; differs from the last commit at lpn "
                       << first_difference(got, m.committed));
    REQUIRE((exact || landed));
    auto second = mount_group(*nand);
    REQUIRE(read_all(*second) == got);  // recovery is idempotent

    // The recovered store keeps working: groups commit, abort, and survive a remount.
    auto wrng = pdl::test::seeded_rng(trial);
    State expect = got;
    for (int g = 0; g < 6; g++) {
      State mine = expect;
      for (int i = 0; i < 5; i++) {
        const Lpn l = Lpn(wrng() % second->logical_pages());
        Page p = pdl::test::random_page(wrng, second->page_size());
        const Status ws = second->write(l, p);
        INFO("write after recovery: " << ws.to_string());
        if (ws.is(Errc::kFull) && i > 0) break;  // the group outgrew the room (IPL: see below)
        REQUIRE(ws.is_ok());
        mine[l] = p;
      }
      if (g % 3 == 2) {
        REQUIRE(second->abort().is_ok());
      } else {
        REQUIRE(second->sync().is_ok());
        expect = mine;
      }
      REQUIRE(read_all(*second) == expect);
    }
    auto third = mount_group(*nand);
    REQUIRE(read_all(*third) == expect);
  }
  INFO("trials whose interrupted commit had landed: " << in_flight_committed);
}

TEST_CASE("abort brings back the committed state, after flushes and GC inside the group too",
          "[store][atomic]") {
  GROUP_MATRIX_ROW(cfg, which);
  auto nand = pdl::test::make_ram_nand(cfg.geo);
  auto s = format_group(*nand, cfg.params);
  auto rng = pdl::test::seeded_rng(0xAB0 + which);
  const uint32_t n = s->logical_pages(), psz = s->page_size();
  State committed(n);
  for (Lpn l = 0; l < n / 3; l++) {
    committed[l] = pdl::test::random_page(rng, psz);
    REQUIRE(s->write(l, *committed[l]).is_ok());
  }
  REQUIRE(s->sync().is_ok());
  uint64_t gc_in_groups = 0, flushed = 0;
  for (int round = 0; round < 20; round++) {
    // A big group: every loaded page changed (Case 1/2 records, Case 3 pages), some trimmed,
    // a few new ones; GC runs in it on the small chips.
    const uint64_t gc0 = s->stats().gc_runs;
    State cur = committed;
    for (Lpn l = 0; l < n / 3; l++) {
      if (rng() % 8 == 0) {
        REQUIRE(s->trim(l).is_ok());
        cur[l].reset();
        continue;
      }
      Page p = cur[l] ? *cur[l] : pdl::test::random_page(rng, psz);
      sparse_change(rng, p, rng() % 4 ? 4 : int(psz / 16));
      Status st = s->write(l, p);
      if (st.is(Errc::kFull)) break;
      REQUIRE(st.is_ok());
      cur[l] = p;
    }
    gc_in_groups += s->stats().gc_runs - gc0;
    flushed += s->uncommitted_pages() > 0;
    REQUIRE(read_all(*s) == cur);
    REQUIRE(s->abort().is_ok());
    REQUIRE(s->check().is_ok());
    REQUIRE(read_all(*s) == committed);
    REQUIRE_FALSE(s->dirty());
    {  // a crash right after the abort finds the committed state too
      auto m = mount_group(*nand);
      REQUIRE(read_all(*m) == committed);
    }
    // The next commit first erases the aborted group's pages; then it is what recovery finds.
    const Lpn l = Lpn(rng() % (n / 3));
    committed[l] = pdl::test::random_page(rng, psz);
    REQUIRE(s->write(l, *committed[l]).is_ok());
    REQUIRE(s->sync().is_ok());
    auto m = mount_group(*nand);
    REQUIRE(read_all(*m) == committed);
  }
  INFO("GC runs inside groups " << gc_in_groups << ", groups with pages on flash " << flushed);
  CHECK(flushed > 5);
  CHECK(s->stats().purged_blocks > 0);
}

TEST_CASE("a crashed group's pages are ignored and erased before a later commit covers them",
          "[store][atomic]") {
  GROUP_MATRIX_ROW(cfg, which);
  auto nand = pdl::test::make_ram_nand(cfg.geo);
  auto rng = pdl::test::seeded_rng(0xC4A + which);
  State committed;
  {
    auto s = format_group(*nand, cfg.params);
    committed.resize(s->logical_pages());
    for (Lpn l = 0; l < 40; l++) {
      committed[l] = pdl::test::random_page(rng, s->page_size());
      REQUIRE(s->write(l, *committed[l]).is_ok());
    }
    REQUIRE(s->sync().is_ok());
  }
  for (int crash = 0; crash < 8; crash++) {
    MountReport rep;
    auto s = mount_group(*nand, &rep);
    REQUIRE(read_all(*s) == committed);
    // A group big enough to put pages on flash, then the process dies (no sync).
    for (Lpn l = 0; l < 40; l++) REQUIRE(s->write(l, pdl::test::random_page(rng, s->page_size())).is_ok());
    REQUIRE(s->uncommitted_pages() > 0);
    s.reset();
    auto r = mount_group(*nand, &rep);
    INFO("crash " << crash << ": void pages " << rep.void_pages);
    REQUIRE(rep.void_pages > 0);
    REQUIRE(read_all(*r) == committed);
    // A small commit now: its record's seq is above the void pages' seqs.
    const Lpn l = 40 + Lpn(crash);
    committed[l] = pdl::test::random_page(rng, r->page_size());
    REQUIRE(r->write(l, *committed[l]).is_ok());
    REQUIRE(r->sync().is_ok());
    MountReport after;
    auto again = mount_group(*nand, &after);
    REQUIRE(after.void_pages == 0);  // erased before the commit
    REQUIRE(read_all(*again) == committed);
  }
}

TEST_CASE("a sync with nothing pending programs nothing; a commit of small differentials is one "
          "program", "[store][atomic]") {
  auto nand = pdl::test::make_ram_nand(pdl::test::geometry(2048, 64, 16, 64));
  StoreParams p;
  p.method = Method::kPdl;
  p.max_differential = 256;
  p.obsolete = ObsoleteMode::kMemory;
  auto s = format_group(*nand, p);
  auto rng = pdl::test::seeded_rng(0x51);
  std::vector<Page> pages;
  for (Lpn l = 0; l < 8; l++) {
    pages.push_back(pdl::test::random_page(rng, 2048));
    REQUIRE(s->write(l, pages.back()).is_ok());
  }
  REQUIRE(s->sync().is_ok());
  const uint64_t programs = nand->counters().programs;
  REQUIRE(s->sync().is_ok());
  CHECK(nand->counters().programs == programs);  // nothing pending: nothing programmed
  REQUIRE(s->abort().is_ok());
  REQUIRE(s->sync().is_ok());
  CHECK(nand->counters().programs == programs);
  for (int round = 0; round < 5; round++) {
    const uint64_t before = nand->counters().programs, commits = s->stats().commits;
    for (Lpn l = 0; l < 8; l++) {  // a few bytes of each page: eight small differentials
      pages[l][100 + size_t(round)] ^= 0x5A;
      REQUIRE(s->write(l, pages[l]).is_ok());
    }
    CHECK(nand->counters().programs == before);  // all in the write buffer
    REQUIRE(s->sync().is_ok());
    CHECK(nand->counters().programs == before + 1);  // the buffer's page, commit record and all
    CHECK(s->stats().commits == commits + 1);
    CHECK(s->stats().commit_markers == 0);
  }
  MountReport rep;
  auto m = mount_group(*nand, &rep);
  for (Lpn l = 0; l < 8; l++) {
    Page got(2048);
    REQUIRE(m->read(l, got).is_ok());
    CHECK(got == pages[l]);
  }
}

TEST_CASE("OPU holds a group's last page in RAM, and the commit record rides on it",
          "[store][atomic]") {
  auto nand = pdl::test::make_ram_nand(pdl::test::geometry(2048, 64, 16, 64));
  StoreParams p;
  p.method = Method::kOpu;
  p.obsolete = ObsoleteMode::kMemory;
  auto s = format_group(*nand, p);
  auto rng = pdl::test::seeded_rng(0x52);
  const uint64_t p0 = nand->counters().programs;
  std::vector<Page> pages;
  for (Lpn l = 0; l < 3; l++) {
    pages.push_back(pdl::test::random_page(rng, 2048));
    REQUIRE(s->write(l, pages.back()).is_ok());
  }
  CHECK(nand->counters().programs == p0 + 2);  // each page programmed when the next came
  // Rewrites of the page held in RAM cost nothing.
  pages[2][0] ^= 1;
  REQUIRE(s->write(2, pages[2]).is_ok());
  CHECK(nand->counters().programs == p0 + 2);
  Page got(2048);
  REQUIRE(s->read(2, got).is_ok());
  CHECK(got == pages[2]);
  CHECK(s->locate(2).base_in_buffer);
  REQUIRE(s->sync().is_ok());
  CHECK(nand->counters().programs == p0 + 3);  // no page of its own for the commit record
  CHECK(s->stats().commit_markers == 0);
  auto m = mount_group(*nand);
  for (Lpn l = 0; l < 3; l++) {
    REQUIRE(m->read(l, got).is_ok());
    CHECK(got == pages[l]);
  }
}

TEST_CASE("the newest commit record outlives the garbage collection of its block",
          "[store][atomic]") {
  // Small blocks, most of the chip garbage from earlier groups; then one long group (never
  // committed) whose writes make GC collect block after block, the commit page's among them.
  const Geometry g = pdl::test::geometry(512, 32, 4, 40);
  const ObsoleteMode mode = GENERATE(ObsoleteMode::kSpare, ObsoleteMode::kMemory);
  const Method method = GENERATE(Method::kPdl, Method::kOpu);
  INFO("method " << method_name(method) << " obsolete " << obsolete_name(mode));
  StoreParams p;
  p.method = method;
  p.max_differential = 64;
  p.obsolete = mode;
  p.logical_pages = 40;
  auto emu = pdl::test::make_ram_nand(g);
  auto rng = pdl::test::seeded_rng(0x9C + int(mode) + int(method));
  State committed(p.logical_pages);
  auto s = format_group(*emu, p);
  for (int round = 0; round < 30; round++) {
    for (Lpn l = 0; l < 20; l++) {
      committed[l] = pdl::test::random_page(rng, 512);
      REQUIRE(s->write(l, *committed[l]).is_ok());
    }
    REQUIRE(s->sync().is_ok());
  }
  // Commits of one page each: their block ends up holding little but superseded commit pages,
  // so GC soon takes it — with the newest commit record in it.
  for (int i = 0; i < 3 * int(g.pages_per_block); i++) {
    (*committed[0])[size_t(i)] ^= 0x33;
    REQUIRE(s->write(0, *committed[0]).is_ok());
    REQUIRE(s->sync().is_ok());
  }
  // Where the newest commit record is now: the newest page flagged as a commit page.
  auto find_commit_page = [&]() {
    std::vector<uint8_t> sp(g.page_spare);
    Ppa best = kNoPpa;
    uint64_t best_seq = 0;
    for (Ppa q = kSuperblockBlocks * g.pages_per_block; q < g.total_pages(); q++) {
      REQUIRE(emu->read(q, {}, sp).is_ok());
      SpareHeader h;
      if (spare_decode(sp, &h) == SpareState::kValid && h.commit && h.seq >= best_seq) {
        best = q;
        best_seq = h.seq;
      }
    }
    return best;
  };
  const Ppa commit_page = find_commit_page();
  REQUIRE(commit_page != kNoPpa);
  const uint32_t block = commit_page / g.pages_per_block;
  const uint64_t erases_before = emu->erase_count(block);
  // An open group fills the rest of that block; then a read finds the block weak (most of the
  // ECC needed), which makes GC collect it at the next write (a scrub) — the group still open.
  Lpn l = 20;
  for (int i = 0; i < 64 && s->block_info(block).state == BlockInfo::kOpen; i++) {
    REQUIRE(s->write(l, pdl::test::random_page(rng, 512)).is_ok());
    l = l == 39 ? 20 : l + 1;
  }
  REQUIRE(s->block_info(block).state == BlockInfo::kFull);
  emu->set_weak(block, 3);
  Page got(512);
  REQUIRE(s->read(0, got).is_ok());  // lpn 0's newest version lives in the commit page
  REQUIRE(got == *committed[0]);
  for (int i = 0; i < 8 && emu->erase_count(block) == erases_before; i++) {
    REQUIRE(s->write(l, pdl::test::random_page(rng, 512)).is_ok());
    l = l == 39 ? 20 : l + 1;
  }
  REQUIRE(emu->erase_count(block) > erases_before);
  REQUIRE(s->check().is_ok());
  s.reset();  // the process dies without committing the group
  MountReport rep;
  auto m = mount_group(*emu, &rep);
  REQUIRE(read_all(*m) == committed);
}

TEST_CASE("a group that outgrows the free space is refused and changes nothing",
          "[store][atomic][full]") {
  GROUP_MATRIX_ROW(cfg, which);
  auto nand = pdl::test::make_ram_nand(cfg.geo);
  auto s = format_group(*nand, cfg.params);
  auto rng = pdl::test::seeded_rng(0xF0 + which);
  const uint32_t n = s->logical_pages(), psz = s->page_size();
  State committed(n);
  for (Lpn l = 0; l < n; l++) {
    committed[l] = pdl::test::random_page(rng, psz);
    REQUIRE(s->write(l, *committed[l]).is_ok());
    if (l % 8 == 7) REQUIRE(s->sync().is_ok());
  }
  REQUIRE(s->sync().is_ok());
  // Rewrite every page whole in one group: the old versions stay until the commit, so this
  // cannot fit.
  State cur = committed;
  Lpn refused = n;
  for (Lpn l = 0; l < n; l++) {
    Page p = pdl::test::random_page(rng, psz);
    const Status st = s->write(l, p);
    if (st.is(Errc::kFull)) {
      refused = l;
      break;
    }
    REQUIRE(st.is_ok());
    cur[l] = p;
  }
  REQUIRE(refused < n);
  REQUIRE(s->check().is_ok());
  REQUIRE(read_all(*s) == cur);  // the refused write changed nothing
  // Commit what fitted, then go on in groups that fit.
  REQUIRE(s->sync().is_ok());
  committed = cur;
  for (Lpn l = refused; l < n; l++) {
    committed[l] = pdl::test::random_page(rng, psz);
    Status st = s->write(l, *committed[l]);
    if (st.is(Errc::kFull)) {  // IPL: a group may rewrite one erase block beyond its log region
      REQUIRE(s->sync().is_ok());
      st = s->write(l, *committed[l]);
    }
    REQUIRE(st.is_ok());
    if (l % 4 == 3) REQUIRE(s->sync().is_ok());
  }
  REQUIRE(s->sync().is_ok());
  auto m = mount_group(*nand);
  REQUIRE(read_all(*m) == committed);
}

namespace {

// A store of superblock format 1 as pdl wrote it before commit records existed: base pages and
// differential pages without commit flags.
struct LegacyStore {
  std::unique_ptr<EmulatedNand> nand;
  State state;
};

LegacyStore make_legacy(const Geometry& g, uint64_t seed) {
  LegacyStore out;
  out.nand = pdl::test::make_ram_nand(g);
  StoreParams p;
  p.method = Method::kPdl;
  p.max_differential = 128;
  p.obsolete = ObsoleteMode::kMemory;
  p.logical_pages = 24;
  REQUIRE(resolve_store_params(&p, g).is_ok());
  Superblock sb;
  sb.version = kSuperblockLegacy;
  sb.params = p;
  REQUIRE(write_superblock(*out.nand, sb).is_ok());
  std::mt19937_64 rng(seed);
  out.state.resize(p.logical_pages);
  const uint32_t ppb = g.pages_per_block;
  Ppa next = kSuperblockBlocks * ppb;
  uint64_t seq = 1;
  std::vector<uint8_t> spare(g.page_spare);
  auto program = [&](std::span<const uint8_t> data, SpareHeader h) {
    h.data_crc = crc32c(data.data(), data.size());
    spare_encode(h, spare);
    REQUIRE(out.nand->program(next++, data, spare).is_ok());
  };
  // Base pages for lpns 0..15, then a differential page giving lpns 0..3 new bytes.
  for (Lpn l = 0; l < 16; l++) {
    out.state[l] = pdl::test::random_page(rng, g.page_data);
    SpareHeader h;
    h.type = PageType::kBase;
    h.set_logical_page(l);
    h.seq = seq++;
    program(*out.state[l], h);
  }
  std::vector<uint8_t> dpage(g.page_data, 0xFF);
  size_t used = 0;
  for (Lpn l = 0; l < 4; l++) {
    uint8_t runs[4 + 8];
    runs[0] = uint8_t(l * 10), runs[1] = 0, runs[2] = 8, runs[3] = 0;  // offset, length 8
    for (int i = 0; i < 8; i++) runs[4 + i] = uint8_t(rng());
    std::copy(runs + 4, runs + 12, out.state[l]->begin() + l * 10);
    RecordView r;
    r.lpn = l;
    r.seq = seq++;
    r.runs = std::span<const uint8_t>(runs, 12);
    record_encode(r, dpage.data() + used);
    used += r.size();
  }
  SpareHeader h;
  h.type = PageType::kDifferential;
  h.set_record_count(4);
  h.aux = uint32_t(used);
  h.seq = seq - 1;
  program(dpage, h);
  return out;
}

}  // namespace

TEST_CASE("a store of format 1 is upgraded in place, and a cut during the upgrade loses nothing",
          "[store][atomic][upgrade]") {
  const Geometry g = pdl::test::geometry(512, 32, 8, 24);
  // Format 1 cannot be mounted with atomic groups before the upgrade; per page it can.
  {
    LegacyStore ls = make_legacy(g, 1);
    std::unique_ptr<PageStore> s;
    CHECK(mount_store(*ls.nand, &s, nullptr, CommitMode::kGroup).is(Errc::kUnsupported));
    MountReport rep;
    REQUIRE(mount_store(*ls.nand, &s, &rep).is_ok());
    CHECK(rep.legacy);
    CHECK(s->legacy_format());
    CHECK(read_all(*s) == ls.state);
  }
  // The upgrade's operations, then a cut after each of them in turn.
  uint64_t ops = 0;
  {
    LegacyStore ls = make_legacy(g, 2);
    std::unique_ptr<PageStore> s;
    REQUIRE(mount_store(*ls.nand, &s).is_ok());
    const uint64_t before = ls.nand->mutating_ops();
    REQUIRE(upgrade_store(*ls.nand, *s).is_ok());
    ops = ls.nand->mutating_ops() - before;
    Superblock sb;
    REQUIRE(read_superblock(*ls.nand, resolve_store_params, &sb).is_ok());
    CHECK(sb.version == kSuperblockAtomic);
    auto m = mount_group(*ls.nand);
    CHECK_FALSE(m->legacy_format());
    CHECK(read_all(*m) == ls.state);
  }
  REQUIRE(ops >= 3);  // the marker, then two superblock copies (erase + program each)
  for (uint64_t k = 0; k < ops; k++) {
    for (const Tear tear : {Tear::kNone, Tear::kPrefix, Tear::kRandomBits}) {
      INFO("cut after " << k << " of " << ops << " operations, tear " << int(tear));
      LegacyStore ls = make_legacy(g, 3 + k);
      std::unique_ptr<PageStore> s;
      REQUIRE(mount_store(*ls.nand, &s).is_ok());
      ls.nand->cut_power_after(k, tear, k + 7);
      CHECK(upgrade_store(*ls.nand, *s).is(Errc::kPowerCut));
      s.reset();
      ls.nand->restore_power();
      // Either format mounts and shows the same pages; the next writable open finishes the job.
      MountReport rep;
      REQUIRE(mount_store(*ls.nand, &s, &rep).is_ok());
      CHECK(read_all(*s) == ls.state);
      REQUIRE(upgrade_store(*ls.nand, *s).is_ok());
      s.reset();
      auto m = mount_group(*ls.nand);
      CHECK(read_all(*m) == ls.state);
      // And it works as a format-2 store.
      auto rng = pdl::test::seeded_rng(k);
      ls.state[20] = pdl::test::random_page(rng, 512);
      REQUIRE(m->write(20, *ls.state[20]).is_ok());
      REQUIRE(m->sync().is_ok());
      m.reset();
      auto again = mount_group(*ls.nand);
      CHECK(read_all(*again) == ls.state);
    }
  }
}

// ---- IPL ([IPL] §5): the commit log, the selective and the shadow merge ----

namespace {

// IPL on 16 pages of 2 KiB per block, a 4-page log region (16 sectors), three logical blocks of
// 12 pages; NOP 4 (a sector per program).
struct IplRig {
  Geometry g = pdl::test::geometry(2048, 64, 16, 12);
  StoreParams p;
  IplRig() {
    g.partial_programs = 4;
    p.method = Method::kIpl;
    p.log_region = 4 * 2048;
    p.logical_pages = 36;
  }
};

// Writes a page, committing the group first if it found no room (the caller's model follows).
State load_ipl(PageStore& s, std::mt19937_64& rng) {
  State st(s.logical_pages());
  for (Lpn l = 0; l < s.logical_pages(); l++) {
    st[l] = pdl::test::random_page(rng, s.page_size());
    REQUIRE(s.write(l, *st[l]).is_ok());
    if (l % 12 == 11) REQUIRE(s.sync().is_ok());
  }
  REQUIRE(s.sync().is_ok());
  return st;
}

// One transaction on logical block `lbn` (pages lbn*12 .. +11) that outgrows its log region:
// `whole` rewrites every page whole (the changes cannot be carried over: a shadow merge),
// otherwise a few bytes of every page, several times (carried over: a selective merge).
Status ipl_transaction(PageStore& s, std::mt19937_64& rng, uint32_t lbn, bool whole, State& cur) {
  for (int round = 0; round < (whole ? 2 : 6); round++)
    for (Lpn l = lbn * 12; l < lbn * 12 + 12; l++) {
      Page p = whole ? pdl::test::random_page(rng, s.page_size()) : *cur[l];
      if (!whole) sparse_change(rng, p, 3);
      PDL_TRY(s.write(l, p));
      cur[l] = p;
    }
  return Status::ok();
}

}  // namespace

TEST_CASE("IPL merges inside a transaction keep the committed versions: selective when the "
          "changes fit the log region, shadow otherwise; a cut at every operation recovers the "
          "last commit", "[store][atomic][ipl]") {
  const bool whole = GENERATE(false, true);
  INFO((whole ? "shadow merge" : "selective merge"));
  IplRig rig;
  // The transaction's operations, counted on a run without cuts.
  uint64_t ops = 0;
  {
    auto nand = pdl::test::make_ram_nand(rig.g);
    auto s = format_group(*nand, rig.p);
    auto rng = pdl::test::seeded_rng(whole);
    const State committed = load_ipl(*s, rng);
    State cur = committed;
    const uint32_t free0 = s->free_blocks();
    const uint64_t merges0 = s->stats().merges, before = nand->mutating_ops();
    REQUIRE(ipl_transaction(*s, rng, 1, whole, cur).is_ok());
    CHECK(s->stats().merges > merges0);
    // A shadow merge keeps the committed block until the commit; a selective one erases it.
    CHECK(s->free_blocks() == (whole ? free0 - 1 : free0));
    CHECK(read_all(*s) == cur);
    REQUIRE(s->sync().is_ok());
    ops = nand->mutating_ops() - before;
    CHECK(s->free_blocks() == free0);
    // Abort of the same transaction: the committed versions again, in RAM and after a mount.
    State again = cur;
    REQUIRE(ipl_transaction(*s, rng, 1, whole, again).is_ok());
    REQUIRE(s->abort().is_ok());
    CHECK(read_all(*s) == cur);
    REQUIRE(s->check().is_ok());
    s.reset();
    auto m = mount_group(*nand);
    CHECK(read_all(*m) == cur);
  }
  REQUIRE(ops > 0);
  for (uint64_t k = 0; k < ops; k++) {
    const Tear tear = Tear(k % 3);
    INFO("cut after " << k << " of " << ops << " operations, tear " << int(tear));
    auto nand = pdl::test::make_ram_nand(rig.g);
    auto s = format_group(*nand, rig.p);
    auto rng = pdl::test::seeded_rng(whole);
    const State committed = load_ipl(*s, rng);
    State cur = committed;
    nand->cut_power_after(k, tear, k);
    Status st = ipl_transaction(*s, rng, 1, whole, cur);
    if (st.is_ok()) st = s->sync();
    REQUIRE(st.is(Errc::kPowerCut));
    s.reset();
    nand->restore_power();
    MountReport rep;
    auto m = mount_group(*nand, &rep);
    const State got = read_all(*m);
    CHECK((got == committed || got == cur));
    // Work goes on: the void items are purged before the next commit, which then holds.
    auto wrng = pdl::test::seeded_rng(100 + k);
    State next = got;
    REQUIRE(ipl_transaction(*m, wrng, 1, false, next).is_ok());
    REQUIRE(m->sync().is_ok());
    REQUIRE(m->check().is_ok());
    m.reset();
    auto m2 = mount_group(*nand);
    CHECK(read_all(*m2) == next);
  }
}

TEST_CASE("IPL's commit log moves to a fresh block as it fills, and a cut at any operation "
          "keeps the newest commit", "[store][atomic][ipl]") {
  IplRig rig;
  // Small commits: a few bytes of one page each, so a sector of the log region and a commit
  // record per transaction; 16 sectors per block, so the log moves every 16 commits.
  auto run = [&](PageStore& s, std::mt19937_64& rng, State& committed, State& cur, int n) {
    for (int t = 0; t < n; t++) {
      const Lpn l = Lpn(rng() % s.logical_pages());
      Page p = *cur[l];
      sparse_change(rng, p, 2);
      PDL_TRY(s.write(l, p));
      cur[l] = p;
      PDL_TRY(s.sync());
      committed = cur;
    }
    return Status::ok();
  };
  uint64_t ops = 0;
  {
    auto nand = pdl::test::make_ram_nand(rig.g);
    auto s = format_group(*nand, rig.p);
    auto rng = pdl::test::seeded_rng(7);
    State committed = load_ipl(*s, rng), cur = committed;
    const uint64_t commits0 = s->stats().commits, before = nand->mutating_ops();
    REQUIRE(run(*s, rng, committed, cur, 40).is_ok());
    CHECK(s->stats().commits == commits0 + 40);
    ops = nand->mutating_ops() - before;
  }
  for (uint64_t k = 0; k < ops; k += 3) {
    const Tear tear = Tear(k % 3);
    INFO("cut after " << k << " of " << ops << " operations, tear " << int(tear));
    auto nand = pdl::test::make_ram_nand(rig.g);
    auto s = format_group(*nand, rig.p);
    auto rng = pdl::test::seeded_rng(7);
    State committed = load_ipl(*s, rng), cur = committed;
    nand->cut_power_after(k, tear, k);
    REQUIRE(run(*s, rng, committed, cur, 40).is(Errc::kPowerCut));
    s.reset();
    nand->restore_power();
    auto m = mount_group(*nand);
    const State got = read_all(*m);
    CHECK((got == committed || got == cur));
  }
}

TEST_CASE("an IPL store of format 1 is upgraded with a commit log, or stays format 1 without "
          "room for one", "[store][atomic][ipl][upgrade]") {
  const bool room = GENERATE(true, false);
  INFO((room ? "room for a commit log" : "no room"));
  IplRig rig;
  if (!room) {
    rig.p.logical_pages = 0;  // the whole chip less one block for merges
    rig.p.gc_reserve_blocks = 1;
  }
  // A format-1 image: the superblock says 1, so nothing carries a commit flag.
  auto make = [&](std::unique_ptr<EmulatedNand>& nand, State& st) {
    nand = pdl::test::make_ram_nand(rig.g);
    std::unique_ptr<PageStore> s;
    REQUIRE(format_store(*nand, rig.p, &s).is_ok());
    Superblock sb;
    REQUIRE(read_superblock(*nand, resolve_store_params, &sb).is_ok());
    sb.version = kSuperblockLegacy;
    REQUIRE(rewrite_superblock(*nand, sb).is_ok());
    s.reset();
    REQUIRE(mount_store(*nand, &s).is_ok());
    REQUIRE(s->legacy_format());
    auto rng = pdl::test::seeded_rng(11);
    st = State(s->logical_pages());
    for (Lpn l = 0; l < 24; l++) {
      st[l] = pdl::test::random_page(rng, s->page_size());
      REQUIRE(s->write(l, *st[l]).is_ok());
    }
    for (Lpn l = 0; l < 24; l += 2) {  // log records, and merges of full regions
      sparse_change(rng, *st[l], 3);
      REQUIRE(s->write(l, *st[l]).is_ok());
    }
    REQUIRE(s->sync().is_ok());
  };
  std::unique_ptr<EmulatedNand> nand;
  State st;
  make(nand, st);
  std::unique_ptr<PageStore> s;
  REQUIRE(mount_store(*nand, &s).is_ok());
  const uint64_t before = nand->mutating_ops();
  REQUIRE(upgrade_store(*nand, *s).is_ok());
  const uint64_t ops = nand->mutating_ops() - before;
  Superblock sb;
  REQUIRE(read_superblock(*nand, resolve_store_params, &sb).is_ok());
  CHECK(sb.version == (room ? kSuperblockAtomic : kSuperblockLegacy));
  s.reset();
  if (!room) {  // per page, as before: the journal stays on flash above it
    REQUIRE(mount_store(*nand, &s, nullptr, CommitMode::kPerPage).is_ok());
    CHECK(s->legacy_format());
    CHECK(s->set_commit_mode(CommitMode::kGroup).is(Errc::kUnsupported));
    CHECK_FALSE(s->atomic());
    CHECK(read_all(*s) == st);
    return;
  }
  {
    auto m = mount_group(*nand);
    CHECK(m->atomic());
    CHECK(read_all(*m) == st);
  }
  for (uint64_t k = 0; k < ops; k++) {
    INFO("cut after " << k << " of " << ops << " upgrade operations");
    make(nand, st);
    REQUIRE(mount_store(*nand, &s).is_ok());
    nand->cut_power_after(k, Tear(k % 3), k);
    CHECK(upgrade_store(*nand, *s).is(Errc::kPowerCut));
    s.reset();
    nand->restore_power();
    REQUIRE(mount_store(*nand, &s).is_ok());
    CHECK(read_all(*s) == st);
    REQUIRE(upgrade_store(*nand, *s).is_ok());
    s.reset();
    auto m = mount_group(*nand);
    CHECK(read_all(*m) == st);
  }
}

// ---- FTL devices: a block device has no atomic groups ----

// The FTL devices of the store matrix (method ftl, stablebuffer): asked for kGroup they stay
// per page — SQLite keeps its journal on them.
std::vector<StoreConfig> ftl_device_matrix() {
  std::vector<StoreConfig> out;
  for (const StoreConfig& c : pdl::test::store_matrix())
    if (is_ftl_device(c.params.method)) out.push_back(c);
  return out;
}

TEST_CASE("an FTL device asked for atomic groups stays per page", "[store][atomic][ftl]") {
  static const std::vector<StoreConfig> rows = ftl_device_matrix();
  REQUIRE(!rows.empty());
  const StoreConfig& cfg = rows[GENERATE(range(size_t(0), rows.size()))];
  INFO("config " << cfg.name);
  REQUIRE_FALSE(has_atomic_commit(cfg.params.method));
  auto nand = pdl::test::make_ram_nand(cfg.geo);
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*nand, cfg.params, &s, CommitMode::kGroup).is_ok());
  CHECK_FALSE(s->atomic());
  CHECK(s->set_commit_mode(CommitMode::kGroup).is_ok());  // succeeds, and changes nothing
  CHECK_FALSE(s->atomic());
  // A page written to an FTL device is on flash without a sync: a remount finds it. (In front
  // of one, StableBuffer's slot table becomes durable at the next sync — a page may be lost
  // without it, as the contract allows — so it syncs first.)
  auto prng = pdl::test::seeded_rng(0xF70);
  const Page p = pdl::test::random_page(prng, s->page_size());
  REQUIRE(s->write(3, p).is_ok());
  CHECK(s->uncommitted_pages() == 0);
  if (cfg.params.method == Method::kStableBuffer) REQUIRE(s->sync().is_ok());
  s.reset();
  REQUIRE(mount_store(*nand, &s, nullptr, CommitMode::kGroup).is_ok());
  CHECK_FALSE(s->atomic());
  Page got(s->page_size());
  REQUIRE(s->read(3, got).is_ok());
  CHECK(got == p);
}

TEST_CASE("a power cut on an FTL device keeps per-page semantics: each page as synced or "
          "newer, writes after the last sync not rolled back", "[store][atomic][ftl][powerloss]") {
  static const std::vector<StoreConfig> rows = ftl_device_matrix();
  const size_t which = GENERATE(range(size_t(0), rows.size()));
  const auto tear = GENERATE(Tear::kNone, Tear::kPrefix);
  if (!pdl::test::in_matrix_sample(which * 2 + size_t(tear), __LINE__)) return;
  const StoreConfig& cfg = rows[which];
  INFO("config " << cfg.name << " tear " << int(tear));
  const uint64_t seed = pdl::test::test_seed() ^ (which * 0x9E3779B97F4A7C15ull) ^ 0xF71;

  // The workload: every page loaded and synced, then batches of 1..24 overwrites each ended by
  // a sync (what a per-page store makes of "groups"). `synced` is the state of the last sync;
  // `since[l]` the values written to l after it.
  struct Run {
    State synced, current;
    std::vector<std::vector<Page>> since;
  };
  auto run = [&](PageStore& s, Run& r) -> Status {
    std::mt19937_64 rng(seed);
    const uint32_t n = s.logical_pages();
    r.synced.assign(n, std::nullopt);
    r.current = r.synced;
    r.since.assign(n, {});
    auto sync = [&]() -> Status {
      PDL_TRY(s.sync());
      r.synced = r.current;
      for (auto& v : r.since) v.clear();
      return Status::ok();
    };
    for (Lpn l = 0; l < n; l++) {
      Page p = pdl::test::random_page(rng, s.page_size());
      r.since[l].push_back(p);  // (before the write: a cut write may have landed)
      PDL_TRY(s.write(l, p));
      r.current[l] = p;
    }
    PDL_TRY(sync());
    for (int batch = 0; batch < 160; batch++) {
      const int ops = 1 + int(rng() % 24);
      for (int i = 0; i < ops; i++) {
        const Lpn l = Lpn(rng() % 2 ? rng() % 8 : rng() % n);
        Page p = *r.current[l];
        sparse_change(rng, p, 8);
        r.since[l].push_back(p);
        PDL_TRY(s.write(l, p));
        r.current[l] = p;
      }
      PDL_TRY(sync());
    }
    return Status::ok();
  };

  uint64_t total_ops = 0;
  {
    auto nand = pdl::test::make_ram_nand(cfg.geo);
    std::unique_ptr<PageStore> s;
    REQUIRE(format_store(*nand, cfg.params, &s, CommitMode::kGroup).is_ok());
    Run r;
    const uint64_t base = nand->mutating_ops();
    REQUIRE(run(*s, r).is_ok());
    total_ops = nand->mutating_ops() - base;
    REQUIRE(s->stats().gc_runs > 0);  // cuts land in GC too
    REQUIRE(read_all(*s) == r.current);
  }

  auto rng = pdl::test::seeded_rng(0xF7C + which * 3 + uint64_t(tear));
  int kept_unsynced = 0;  // recoveries showing writes of a batch cut before its sync
  for (int trial = 0; trial < 30; trial++) {
    // Cut past the load (the first n programs), so that most cuts land inside a batch.
    const uint64_t load = rows[which].params.logical_pages;
    const uint64_t k = load + rng() % (total_ops - load);
    INFO("trial " << trial << ": cut after " << k << " of " << total_ops << " operations");
    auto nand = pdl::test::make_ram_nand(cfg.geo);
    std::unique_ptr<PageStore> s;
    REQUIRE(format_store(*nand, cfg.params, &s, CommitMode::kGroup).is_ok());
    Run r;
    nand->cut_power_after(k, tear, rng());
    REQUIRE(run(*s, r).is(Errc::kPowerCut));
    s.reset();
    nand->restore_power();
    std::unique_ptr<PageStore> again;
    const Status st = mount_store(*nand, &again, nullptr, CommitMode::kGroup);
    INFO("mount: " << st.to_string());
    REQUIRE(st.is_ok());
    REQUIRE(again->check().is_ok());
    CHECK_FALSE(again->atomic());
    const State got = read_all(*again);
    for (Lpn l = 0; l < got.size(); l++) {
      INFO("lpn " << l);
      const bool as_synced = got[l] == r.synced[l];
      const bool newer =
          got[l] && std::find(r.since[l].begin(), r.since[l].end(), *got[l]) != r.since[l].end();
      REQUIRE((as_synced || newer));
    }
    kept_unsynced += got != r.synced;
  }
  // A group store would roll every cut batch back to the last sync; a block device keeps the
  // writes that reached flash.
  INFO("recoveries keeping writes made after the last sync: " << kept_unsynced);
  CHECK(kept_unsynced > 0);
}
