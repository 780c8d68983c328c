// test_pdl_nvm.cc — PDL with its differential write buffer in NVM (method=pdl&nvm=SIZE;
// docs/design.md §16): commits without flash programs, power cuts at every flash and NVM
// operation (each torn three ways), the log's halves alternating under cuts, garbage and stale
// epochs in the NVM, a store refused without its NVM, multi-page buffer flushes, a single I/O
// error at any operation retried away, a write whose buffer flush fails keeping the lpn's
// buffered version.
// (The store matrix runs every store suite over the NVM rows too: store_matrix.h.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <random>

#include "flash/common/crc32c.h"
#include "flash/device/emulated_nand.h"
#include "flash/image/open_store.h"
#include "flash/pdl/nvm_log.h"
#include "flash/store/page_store.h"
#include "tests/support/store_state.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using Page = std::vector<uint8_t>;
using State = pdl::test::StoreState;
using pdl::test::read_all;

StoreParams nvm_params(uint32_t nvm, uint32_t logical, uint32_t max_diff = 0) {
  StoreParams p;
  p.method = Method::kPdl;
  p.nvm_bytes = nvm;
  p.logical_pages = logical;
  p.max_differential = max_diff;
  return p;
}

Geometry with_nvm(Geometry g, uint32_t nvm) {
  g.nvm_bytes = nvm;
  return g;
}

// A page with a few bytes changed: a small differential.
Page small_change(std::mt19937_64& rng, Page p, int runs = 2) {
  for (int k = 0; k < runs; k++) {
    const size_t off = rng() % (p.size() - 8);
    for (size_t j = 0; j < 8; j++) p[off + j] = uint8_t(rng());
  }
  return p;
}

// The workload of the power-cut tests: a load, then small updates, rewrites and trims with a
// sync every few operations. `acked` is the state of the last sync that returned; `syncing`
// the state a sync in progress commits.
struct Run {
  State cur, acked, syncing;
  std::vector<State> since;  // per lpn: its versions since the last acknowledged sync
  bool in_sync = false;
  bool allowed_per_page(Lpn l, const std::optional<Page>& v) const {
    if (v == acked[l] || (in_sync && v == syncing[l])) return true;
    return std::find(since[l].begin(), since[l].end(), v) != since[l].end();
  }
};

// `start`: the store's content before (none: a fresh store).
Status workload(PageStore& s, uint64_t seed, Run& r, const State* start = nullptr) {
  std::mt19937_64 rng(seed);
  const uint32_t n = s.logical_pages(), psz = s.page_size();
  r.cur.assign(n, std::nullopt);
  if (start) r.cur = *start;
  r.acked = r.cur;
  r.since.assign(n, {});
  auto sync = [&]() -> Status {
    r.in_sync = true;
    r.syncing = r.cur;
    PDL_TRY(s.sync());
    r.in_sync = false;
    r.acked = r.cur;
    r.since.assign(n, {});
    return Status::ok();
  };
  for (Lpn l = 0; l < n / 2; l++) {
    Page p = pdl::test::random_page(rng, psz);
    r.since[l].push_back(p);
    PDL_TRY(s.write(l, p));
    r.cur[l] = p;
  }
  PDL_TRY(sync());
  for (int i = 0; i < 140; i++) {
    const Lpn l = Lpn(rng() % 3 == 0 ? rng() % 3 : rng() % n);
    const unsigned k = unsigned(rng() % 20);
    if (k == 0) {
      r.since[l].push_back(std::nullopt);
      PDL_TRY(s.trim(l));
      r.cur[l].reset();
    } else {
      Page p = r.cur[l] && k > 5 ? small_change(rng, *r.cur[l], 1 + int(rng() % 6))
                                 : pdl::test::random_page(rng, psz);
      r.since[l].push_back(p);
      PDL_TRY(s.write(l, p));
      r.cur[l] = p;
    }
    if (i % 3 == 2) PDL_TRY(sync());
  }
  return sync();
}

}  // namespace

TEST_CASE("pdl+nvm: a commit programs no flash page but a pending base page",
          "[pdl][nvm]") {
  const uint32_t nvm = 64 * 1024;
  const Geometry g = with_nvm(pdl::test::geometry(2048, 64, 64, 48), nvm);
  auto nand = pdl::test::make_ram_nand(g);
  std::unique_ptr<PageStore> s;
  StoreParams params = nvm_params(nvm, 200);
  params.obsolete = ObsoleteMode::kMemory;  // (images' default: no obsolete-mark programs)
  REQUIRE(format_store(*nand, params, &s, CommitMode::kGroup).is_ok());
  auto rng = pdl::test::seeded_rng(0x4e564d);
  std::vector<Page> model(40);
  for (Lpn l = 0; l < model.size(); l++) {
    model[l] = pdl::test::random_page(rng, 2048);
    REQUIRE(s->write(l, model[l]).is_ok());
  }
  REQUIRE(s->sync().is_ok());
  // Single-page transactions changing ~32 bytes of one of 40 pages (a one-row UPDATE's leaf).
  const int txns = 400;
  uint64_t free_commits = 0, programs = 0;
  for (int t = 0; t < txns; t++) {
    const Lpn l = Lpn(rng() % model.size());
    model[l] = small_change(rng, model[l], 4);
    const NandCounters before = nand->counters();
    REQUIRE(s->write(l, model[l]).is_ok());
    const NandCounters mid = nand->counters();
    const uint64_t bases = s->stats().base_pages_written;
    REQUIRE(s->sync().is_ok());
    const NandCounters after = nand->counters();
    // The commit programs no differential page and no commit page: at most the base page a
    // write of the group left pending (a new base page: Case 3, or a large cold record's).
    REQUIRE(after.programs - mid.programs == s->stats().base_pages_written - bases);
    REQUIRE(after.programs - mid.programs <= 1);
    REQUIRE(after.nvm_writes > mid.nvm_writes);  // it writes NVM
    REQUIRE(after.sim_us >= mid.sim_us);
    if (mid.programs == before.programs) free_commits++;
    programs += after.programs - before.programs;
  }
  const double per_txn = double(programs) / txns;
  INFO("programs per transaction " << per_txn << ", commits without a program " << free_commits);
  WARN("programs per transaction " << per_txn);
  CHECK(per_txn <= 0.2);
  CHECK(free_commits > uint64_t(txns) * 3 / 4);
  CHECK(s->check().is_ok());
  for (Lpn l = 0; l < model.size(); l++) {
    Page got(2048);
    REQUIRE(s->read(l, got).is_ok());
    REQUIRE(got == model[l]);
  }
  std::unique_ptr<PageStore> again;
  s.reset();
  REQUIRE(mount_store(*nand, &again, nullptr, CommitMode::kGroup).is_ok());
  for (Lpn l = 0; l < model.size(); l++) {
    Page got(2048);
    REQUIRE(again->read(l, got).is_ok());
    REQUIRE(got == model[l]);
  }
}

TEST_CASE("pdl+nvm: a power cut at every flash and NVM operation leaves the last commit or "
          "the one in progress, never a mix",
          "[pdl][nvm][powercut]") {
  const auto per_page = GENERATE(false, true);
  const uint32_t psz = 512;
  const uint32_t nvm = NvmLog::min_nvm_bytes(psz);  // a one-page buffer: the log wraps often
  const Geometry g = with_nvm(pdl::test::geometry(psz, 32, 8, 10), nvm);
  const StoreParams params = nvm_params(nvm, 24, per_page ? 128 : 0);
  const CommitMode mode = CommitMode::kGroup;
  INFO((per_page ? "max_diff 128" : "max_diff page"));
  const uint64_t seed = pdl::test::test_seed() + (per_page ? 1 : 0);
  uint64_t total = 0;
  {
    auto nand = pdl::test::make_ram_nand(g);
    std::unique_ptr<PageStore> s;
    REQUIRE(format_store(*nand, params, &s, mode).is_ok());
    const uint64_t base = nand->mutating_ops();
    const NandCounters c0 = nand->counters();
    Run r;
    const Status st = workload(*s, seed, r);
    INFO(st.to_string());
    REQUIRE(st.is_ok());
    total = nand->mutating_ops() - base;
    // The log went round its halves several times, and the buffer reached flash.
    REQUIRE(nand->counters().nvm_bytes_written - c0.nvm_bytes_written > uint64_t(nvm));
    REQUIRE(s->stats().diff_pages_written > 0);
    REQUIRE(s->stats().gc_runs > 0);
  }
  uint64_t trials = 0, new_state = 0;
  for (const Tear tear : {Tear::kNone, Tear::kPrefix, Tear::kRandomBits}) {
    for (uint64_t k = 0; k < total; k++) {
      INFO("cut after " << k << " of " << total << " operations, tear " << int(tear));
      auto nand = pdl::test::make_ram_nand(g);
      std::unique_ptr<PageStore> s;
      REQUIRE(format_store(*nand, params, &s, mode).is_ok());
      nand->cut_power_after(k, tear, seed + k);
      Run r;
      const Status st = workload(*s, seed, r);
      REQUIRE(st.is(Errc::kPowerCut));
      s.reset();
      nand->restore_power();
      std::unique_ptr<PageStore> first, second;
      const uint64_t ops = nand->mutating_ops();
      const Status ms = mount_store(*nand, &first, nullptr, mode);
      INFO("mount: " << ms.to_string());
      REQUIRE(ms.is_ok());
      REQUIRE(nand->mutating_ops() == ops);  // recovery writes nothing
      const Status ck = first->check();
      INFO("check: " << ck.to_string());
      REQUIRE(ck.is_ok());
      const State got = read_all(*first);
      const bool old_state = got == r.acked;
      const bool new_one = r.in_sync && got == r.syncing;
      REQUIRE((old_state || new_one));
      new_state += new_one && !old_state;
      REQUIRE(mount_store(*nand, &second, nullptr, mode).is_ok());
      REQUIRE(read_all(*second) == got);  // recovery is idempotent
      // The recovered store goes on: a write and a commit survive a remount.
      Page p(second->page_size(), uint8_t(k));
      REQUIRE(second->write(Lpn(k % 24), p).is_ok());
      REQUIRE(second->sync().is_ok());
      std::unique_ptr<PageStore> third;
      second.reset();
      REQUIRE(mount_store(*nand, &third, nullptr, mode).is_ok());
      Page back(third->page_size());
      REQUIRE(third->read(Lpn(k % 24), back).is_ok());
      REQUIRE(back == p);
      REQUIRE(third->check().is_ok());
      trials++;
    }
  }
  INFO("trials " << trials << ", commits found done by the cut sync " << new_state);
  WARN("power cuts at " << total << " operations x 3 tears; " << new_state
                        << " found the cut sync committed");
  REQUIRE(trials == 3 * total);
  REQUIRE(new_state > 0);  // some cuts land after a commit entry became durable
}

TEST_CASE("pdl+nvm: a single I/O error at any device operation, NVM ones included, is retried "
          "away", "[pdl][nvm][ioerr]") {
  // A failed NVM read changes nothing and a failed NVM write is redone at the same place
  // (reread.h), as a failed flash read or erase is: the workload runs through untouched.
  const uint32_t psz = 512;
  const uint32_t nvm = NvmLog::min_nvm_bytes(psz);
  const Geometry g = with_nvm(pdl::test::geometry(psz, 32, 8, 10), nvm);
  const StoreParams params = nvm_params(nvm, 24);
  const uint64_t seed = pdl::test::test_seed();
  for (uint64_t n = 0;; n++) {
    INFO("I/O error at operation " << n);
    auto nand = pdl::test::make_ram_nand(g);
    std::unique_ptr<PageStore> s;
    REQUIRE(format_store(*nand, params, &s, CommitMode::kGroup).is_ok());
    nand->io_errors_at(n, 1);
    Run r;
    const Status st = workload(*s, seed, r);
    INFO(st.to_string());
    REQUIRE(st.is_ok());
    if (nand->io_errors_injected() == 0) break;  // past the workload's last operation
    REQUIRE(read_all(*s) == r.acked);
    s.reset();
    REQUIRE(mount_store(*nand, &s, nullptr, CommitMode::kGroup).is_ok());
    REQUIRE(s->check().is_ok());
    REQUIRE(read_all(*s) == r.acked);
  }
}

TEST_CASE("pdl+nvm: a store recovered from a cut commits, and recovers from a second cut",
          "[pdl][nvm][powercut]") {
  const uint32_t psz = 512;
  const uint32_t nvm = NvmLog::min_nvm_bytes(psz) + 512;
  const Geometry g = with_nvm(pdl::test::geometry(psz, 32, 8, 10), nvm);
  const StoreParams params = nvm_params(nvm, 24);
  const CommitMode mode = CommitMode::kGroup;
  auto rng = pdl::test::seeded_rng(0xdc07);
  const Tear tears[] = {Tear::kNone, Tear::kPrefix, Tear::kRandomBits};
  uint64_t second_cuts = 0;
  for (int trial = 0; trial < 150; trial++) {
    const uint64_t seed = rng();
    const uint64_t k1 = rng() % 160, k2 = rng() % 160;
    const Tear t1 = tears[rng() % 3], t2 = tears[rng() % 3];
    INFO("trial " << trial << ": cuts after " << k1 << " (tear " << int(t1) << ") and " << k2
                  << " (tear " << int(t2) << ")");
    auto nand = pdl::test::make_ram_nand(g);
    std::unique_ptr<PageStore> s;
    REQUIRE(format_store(*nand, params, &s, mode).is_ok());
    nand->cut_power_after(k1, t1, seed);
    Run r1;
    const Status st1 = workload(*s, seed, r1);
    s.reset();
    nand->restore_power();
    REQUIRE(mount_store(*nand, &s, nullptr, mode).is_ok());
    const State got1 = read_all(*s);
    REQUIRE((got1 == r1.acked || (r1.in_sync && got1 == r1.syncing) || st1.is_ok()));
    if (st1.is_ok()) REQUIRE(got1 == r1.acked);
    // Go on from what was recovered, and cut again.
    nand->cut_power_after(k2, t2, seed + 1);
    Run r2;
    const Status st2 = workload(*s, seed + 1, r2, &got1);
    second_cuts += st2.is(Errc::kPowerCut);
    s.reset();
    nand->restore_power();
    const Status ms = mount_store(*nand, &s, nullptr, mode);
    INFO("mount: " << ms.to_string());
    REQUIRE(ms.is_ok());
    const Status ck = s->check();
    INFO("check: " << ck.to_string());
    REQUIRE(ck.is_ok());
    const State got2 = read_all(*s);
    REQUIRE((got2 == r2.acked || (r2.in_sync && got2 == r2.syncing)));
  }
  REQUIRE(second_cuts > 100);
}

TEST_CASE("pdl+nvm: a per-page store keeps each synced page across cuts in its NVM writes",
          "[pdl][nvm][powercut]") {
  const uint32_t psz = 512;
  const uint32_t nvm = NvmLog::min_nvm_bytes(psz) + 1024;
  const Geometry g = with_nvm(pdl::test::geometry(psz, 32, 8, 14), nvm);
  const StoreParams params = nvm_params(nvm, 24);
  const uint64_t seed = pdl::test::test_seed() + 7;
  uint64_t total = 0;
  {
    auto nand = pdl::test::make_ram_nand(g);
    std::unique_ptr<PageStore> s;
    REQUIRE(format_store(*nand, params, &s).is_ok());
    const uint64_t base = nand->mutating_ops();
    Run r;
    REQUIRE(workload(*s, seed, r).is_ok());
    total = nand->mutating_ops() - base;
  }
  for (uint64_t k = 0; k < total; k += 2) {
    INFO("cut after " << k << " of " << total);
    auto nand = pdl::test::make_ram_nand(g);
    std::unique_ptr<PageStore> s;
    REQUIRE(format_store(*nand, params, &s).is_ok());
    nand->cut_power_after(k, Tear::kRandomBits, seed ^ k);
    Run r;
    REQUIRE(workload(*s, seed, r).is(Errc::kPowerCut));
    s.reset();
    nand->restore_power();
    std::unique_ptr<PageStore> m;
    REQUIRE(mount_store(*nand, &m).is_ok());
    REQUIRE(m->check().is_ok());
    const State got = read_all(*m);
    // Per page: its synced version, or one it had since.
    for (Lpn l = 0; l < got.size(); l++) {
      INFO("lpn " << l);
      REQUIRE(r.allowed_per_page(l, got[l]));
    }
  }
}

TEST_CASE("pdl+nvm: garbage and stale epochs in the NVM never yield wrong data", "[pdl][nvm]") {
  const uint32_t psz = 512;
  const uint32_t nvm = NvmLog::min_nvm_bytes(psz);
  const Geometry g = with_nvm(pdl::test::geometry(psz, 32, 8, 14), nvm);
  const StoreParams params = nvm_params(nvm, 24);
  auto nand = pdl::test::make_ram_nand(g);
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*nand, params, &s, CommitMode::kGroup).is_ok());
  auto rng = pdl::test::seeded_rng(0x57a1e);
  State model(24);
  auto step = [&](int n) {
    for (int i = 0; i < n; i++) {
      const Lpn l = Lpn(rng() % 24);
      Page p = model[l] ? small_change(rng, *model[l]) : pdl::test::random_page(rng, psz);
      REQUIRE(s->write(l, p).is_ok());
      model[l] = p;
      if (i % 3 == 2) REQUIRE(s->sync().is_ok());
    }
    REQUIRE(s->sync().is_ok());
  };
  step(30);
  std::vector<uint8_t> early(nvm);
  REQUIRE(nand->nvm_read(0, early).is_ok());
  step(60);
  s.reset();
  std::vector<uint8_t> now(nvm);
  REQUIRE(nand->nvm_read(0, now).is_ok());
  const uint32_t half = nvm / 2 / 8 * 8;
  auto epoch = [&](const std::vector<uint8_t>& b, uint32_t h) {
    uint64_t e = 0;
    for (int i = 7; i >= 0; i--) e = e << 8 | b[h * half + 8 + i];
    return e;
  };
  const uint32_t stale = epoch(now, 0) < epoch(now, 1) ? 0 : 1;
  REQUIRE(epoch(now, stale) < epoch(now, 1 - stale));
  auto mounts_to_model = [&](const char* what) {
    INFO(what);
    std::unique_ptr<PageStore> m;
    const Status st = mount_store(*nand, &m, nullptr, CommitMode::kGroup);
    INFO(st.to_string());
    REQUIRE(st.is_ok());
    REQUIRE(m->check().is_ok());
    REQUIRE(read_all(*m) == model);
  };
  mounts_to_model("as written");
  // The stale half as it was long ago (an older epoch, a valid log of its own).
  REQUIRE(nand->nvm_write(uint64_t(stale) * half,
                          std::span(early).subspan(size_t(stale) * half, half)).is_ok());
  mounts_to_model("the stale half from an older epoch");
  // Random bytes over the stale half.
  std::vector<uint8_t> junk(half);
  for (auto& b : junk) b = uint8_t(rng());
  REQUIRE(nand->nvm_write(uint64_t(stale) * half, junk).is_ok());
  mounts_to_model("random bytes in the stale half");
  // The stale half's old entries under a header with a larger epoch than the live one (its
  // CRC made right): every entry's CRC covers the epoch and its offset, so none is taken.
  std::vector<uint8_t> copy(early.begin() + stale * half, early.begin() + (stale + 1) * half);
  const uint64_t e = epoch(now, 1 - stale) + 5;
  for (int i = 0; i < 8; i++) copy[8 + i] = uint8_t(e >> (8 * i));
  const uint32_t hcrc = crc32c(copy.data(), 28);
  for (int i = 0; i < 4; i++) copy[28 + i] = uint8_t(hcrc >> (8 * i));
  REQUIRE(nand->nvm_write(uint64_t(stale) * half, copy).is_ok());
  mounts_to_model("old entries under a header with a larger epoch");
  // Random bytes everywhere: no log at all — the mount is refused, naming the NVM.
  std::vector<uint8_t> all(nvm);
  for (auto& b : all) b = uint8_t(rng());
  REQUIRE(nand->nvm_write(0, all).is_ok());
  std::unique_ptr<PageStore> m;
  const Status st = mount_store(*nand, &m, nullptr, CommitMode::kGroup);
  INFO(st.to_string());
  REQUIRE(st.is(Errc::kCorrupt));
  REQUIRE(st.message().find("NVM") != std::string::npos);
}

TEST_CASE("pdl+nvm: a store is refused on a device without its NVM, and bad sizes clearly",
          "[pdl][nvm][params]") {
  const uint32_t psz = 512;
  const uint32_t nvm = NvmLog::min_nvm_bytes(psz);
  const Geometry g = with_nvm(pdl::test::geometry(psz, 32, 8, 14), nvm);
  auto nand = pdl::test::make_ram_nand(g);
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*nand, nvm_params(nvm, 24), &s).is_ok());
  REQUIRE(s->write(3, Page(psz, 0x33)).is_ok());
  REQUIRE(s->sync().is_ok());
  s.reset();
  // The same flash on a device with less NVM: every programmed page copied over.
  for (const uint32_t smaller : {0u, nvm - 8}) {
    INFO("device NVM " << smaller);
    auto other = pdl::test::make_ram_nand(with_nvm(g, smaller));
    Page data(g.page_data), spare(g.page_spare);
    for (Ppa p = 0; p < g.total_pages(); p++) {
      REQUIRE(nand->read(p, data, spare).is_ok());
      bool erased = true;
      for (uint8_t b : data) erased &= b == 0xFF;
      for (uint8_t b : spare) erased &= b == 0xFF;
      if (!erased) REQUIRE(other->program(p, data, spare).is_ok());
    }
    std::unique_ptr<PageStore> m;
    const Status st = mount_store(*other, &m);
    INFO(st.to_string());
    REQUIRE_FALSE(st.is_ok());
    REQUIRE(st.message().find("NVM") != std::string::npos);
  }
  // Too little NVM for a write buffer log, not a word multiple, more than the device has, or
  // a method that keeps no write buffer in NVM.
  auto refused = [&](StoreParams p, const char* word) {
    auto n2 = pdl::test::make_ram_nand(with_nvm(g, 1 << 16));
    std::unique_ptr<PageStore> x;
    const Status st = format_store(*n2, p, &x);
    INFO(st.to_string());
    REQUIRE(st.is(Errc::kInvalidArgument));
    REQUIRE(st.message().find(word) != std::string::npos);
  };
  refused(nvm_params(NvmLog::min_nvm_bytes(psz) - 8, 24), "at least");
  refused(nvm_params(4100, 24), "multiple");
  refused(nvm_params(1 << 17, 24), "device has");
  StoreParams opu = nvm_params(nvm, 24);
  opu.method = Method::kOpu;
  refused(opu, "nvm");
}

TEST_CASE("pdl+nvm: a write buffer of several pages flushes a page at a time, reads stay right",
          "[pdl][nvm]") {
  const uint32_t psz = 2048, nvm = 40 * 1024;
  const Geometry g = with_nvm(pdl::test::geometry(psz, 64, 32, 24), nvm);
  REQUIRE(NvmLog::buffer_capacity(nvm, psz) >= 4 * psz);
  const auto mode = GENERATE(CommitMode::kGroup, CommitMode::kPerPage);
  INFO("atomic " << (mode == CommitMode::kGroup));
  auto nand = pdl::test::make_ram_nand(g);
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*nand, nvm_params(nvm, 300), &s, mode).is_ok());
  auto rng = pdl::test::seeded_rng(0xf1a5);
  State model(300);
  for (Lpn l = 0; l < 300; l++) {
    model[l] = pdl::test::random_page(rng, psz);
    REQUIRE(s->write(l, *model[l]).is_ok());
    if (l % 16 == 15) REQUIRE(s->sync().is_ok());
  }
  REQUIRE(s->sync().is_ok());
  const uint64_t pages0 = s->stats().diff_pages_written;
  uint64_t trims = 0;
  for (int i = 0; i < 3000; i++) {
    const Lpn l = Lpn(rng() % 300);
    if (rng() % 50 == 0) {
      trims++;
      REQUIRE(s->trim(l).is_ok());
      model[l].reset();
    } else {
      Page p = model[l] ? small_change(rng, *model[l], 1 + int(rng() % 20))
                        : pdl::test::random_page(rng, psz);
      REQUIRE(s->write(l, p).is_ok());
      model[l] = p;
    }
    if (i % 5 == 4) REQUIRE(s->sync().is_ok());
    if (i % 500 == 0) {
      REQUIRE(read_all(*s) == model);
      REQUIRE(s->check().is_ok());
    }
  }
  REQUIRE(s->sync().is_ok());
  CHECK(s->stats().case2 > 10);  // the buffer filled and flushed many times
  // Large cold records became new base pages (beyond the load, Case 3 and rewrites of trimmed
  // pages, at most one per trim).
  INFO("base pages " << s->stats().base_pages_written << ", case 3 " << s->stats().case3
                     << ", trims " << trims);
  CHECK(s->stats().base_pages_written > 300 + s->stats().case3 + trims);
  CHECK(s->stats().diff_pages_written - pages0 > 10);
  REQUIRE(read_all(*s) == model);
  REQUIRE(s->check().is_ok());
  s.reset();
  std::unique_ptr<PageStore> m;
  REQUIRE(mount_store(*nand, &m, nullptr, mode).is_ok());
  REQUIRE(m->check().is_ok());
  REQUIRE(read_all(*m) == model);
}


TEST_CASE("pdl+nvm: a write whose buffer flush fails keeps the lpn's buffered version",
          "[pdl][nvm][hostfull]") {
  // The write takes the lpn's older record out of the buffer to put the new one; when the
  // flush that makes room fails (here: the host file system is full), the older record goes
  // back, so the lpn reads its last written version, not its flash one.
  const uint32_t psz = 2048;
  const uint32_t nvm = 10 * psz;
  const Geometry g = with_nvm(pdl::test::geometry(psz, 64, 8, 24), nvm);
  const CommitMode mode = CommitMode::kPerPage;  // (atomic groups: abort(), test_host_full)
  {
    for (uint64_t programs = 0; programs < 120; programs++) {
      INFO("host full after " << programs << " programs");
      auto nand = pdl::test::make_ram_nand(g);
      std::unique_ptr<PageStore> s;
      REQUIRE(format_store(*nand, nvm_params(nvm, 60, psz / 8), &s, mode).is_ok());
      auto rng = pdl::test::seeded_rng(programs + 1);
      State model(60);
      for (Lpn l = 0; l < model.size(); l++) {
        model[l] = pdl::test::random_page(rng, psz);
        REQUIRE(s->write(l, *model[l]).is_ok());
      }
      REQUIRE(s->sync().is_ok());
      nand->host_full_after(programs);
      Lpn failed = 0;
      Page tried;
      for (int i = 0;; i++) {
        REQUIRE(i < 100000);
        const Lpn l = Lpn(rng() % (i % 2 ? 4 : model.size()));  // (some lpns written often)
        tried = small_change(rng, *model[l], 1 + int(rng() % 6));
        const Status st = s->write(l, tried);
        if (!st.is_ok()) {
          INFO(st.to_string());
          REQUIRE(st.is(Errc::kHostFull));
          failed = l;
          break;
        }
        model[l] = tried;
        if (i % 7 == 6 && !s->sync().is_ok()) break;
      }
      Page got(psz);
      for (Lpn l = 0; l < model.size(); l++) {
        INFO("lpn " << l << (l == failed ? " (its write failed)" : ""));
        REQUIRE(s->read(l, got).is_ok());
        REQUIRE((got == *model[l] || (l == failed && got == tried)));
      }
    }
  }
}
