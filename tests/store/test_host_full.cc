// test_host_full.cc — a full host file system under an emulated chip is no flash defect.
//
// An image file is sparse, so programs into never-written pages need host room; when the host
// file system has none, the emulator fails the program with kHostFull having touched nothing
// (emulated_nand.h; injected here with host_full_after). For every store configuration
// (store_matrix.h) and commit mode, at many points of a workload of writes, trims and syncs:
// the operation the fault hits fails with kHostFull (never kBadBlock, kIoError or a poisoned
// store); no block is retired or marked bad and no program failure is counted; operations
// retried while the host stays full fail the same way without wearing the chip (erase counts
// unchanged); check() is clean and every page reads as the model says (an atomic store after
// abort(): its last commit; a per-page store: every write that returned, the failed one
// either way); once the fault is cleared, writes and syncs succeed again on the same store
// object (a halted one after a remount, where a per-page store's pages changed since the last
// sync hold one of their versions since then, the others their synced one), and a remount
// finds the same pages.
// Two sequences pin down where PDL's obsolete mark is the program the host refuses, after the
// change's own page was programmed: the tables must still be whole (reads go on).
// The real thing — an image file on a full file system — is checked too: a file whose host
// write fails with ENOSPC (a tmpfs mount of a few blocks, when running as root) fails with
// kHostFull and the page is untouched.
#include <catch2/catch.hpp>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>

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

// The shared rig (its model: what reads return now), with the commit mode and the last commit.
struct Rig : test::StoreRig {
  CommitMode mode = CommitMode::kPerPage;
  std::vector<std::optional<Page>> committed;  // what the last sync left (atomic: committed)
  // Each lpn's versions since the last sync, in order (nullopt: trimmed); empty: untouched
  // since. (Not model != committed: a page written and then trimmed back to unmapped, or
  // written back to its synced content, has changed since the sync all the same, and a power
  // cut may leave it at any of those versions.)
  std::vector<std::vector<std::optional<Page>>> since_sync;
};

// Every page as the model says; lpn `either` may also hold `alt` (nullopt: unmapped).
void verify(Rig& r, std::optional<Lpn> either = std::nullopt,
            const std::optional<Page>& alt = std::nullopt, bool tables = true) {
  Page got(r.store->page_size());
  for (Lpn l = 0; l < r.model.size(); l++) {
    const Status st = r.store->read(l, got);
    INFO("lpn " << l << ": " << st.to_string());
    if (either == l && (alt ? st.is_ok() && got == *alt : st.is(Errc::kNotFound))) continue;
    if (r.model[l]) {
      REQUIRE(st.is_ok());
      REQUIRE(got == *r.model[l]);
    } else {
      REQUIRE(st.is(Errc::kNotFound));
    }
  }
  if (!tables) return;
  const Status ck = r.store->check();
  INFO(ck.to_string());
  REQUIRE(ck.is_ok());
}

std::vector<uint32_t> erase_counts(EmulatedNand& n) {
  std::vector<uint32_t> c(n.geometry().blocks);
  for (uint32_t b = 0; b < c.size(); b++) c[b] = n.erase_count(b);
  return c;
}

uint32_t marked_bad(EmulatedNand& n) {
  uint32_t k = 0;
  for (uint32_t b = 0; b < n.geometry().blocks; b++) k += n.marked_bad(b) ? 1 : 0;
  return k;
}

struct Op {
  enum Kind { kWrite, kTrim, kSync } kind;
  Lpn lpn = 0;
  Page page;
};

Op next_op(Rig& r, uint64_t i) {
  const Lpn n = r.store->logical_pages();
  if (i % 6 == 5) return {Op::kSync, 0, {}};
  const Lpn l = Lpn(r.rng() % n);
  if (r.rng() % 16 == 0) return {Op::kTrim, l, {}};
  return {Op::kWrite, l, next_version(r, l)};
}

Status apply(Rig& r, const Op& op) {
  switch (op.kind) {
    case Op::kWrite: return r.store->write(op.lpn, op.page);
    case Op::kTrim: return r.store->trim(op.lpn);
    case Op::kSync: return r.store->sync();
  }
  return Status::ok();
}

void applied(Rig& r, const Op& op) {
  if (op.kind == Op::kWrite) r.model[op.lpn] = op.page;
  if (op.kind == Op::kTrim) r.model[op.lpn] = std::nullopt;
  if (op.kind != Op::kSync) r.since_sync[op.lpn].push_back(r.model[op.lpn]);
  if (op.kind == Op::kSync) {
    r.committed = r.model;
    r.since_sync.assign(r.model.size(), {});
  }
}

struct Totals {
  uint64_t runs = 0, halted = 0, failed_writes = 0, failed_trims = 0, failed_syncs = 0;
};

// Format, fill every page, then run ops with the host full after `programs` programs.
void run(const StoreConfig& cfg, CommitMode mode, uint64_t programs, Totals* t) {
  INFO(cfg.name << (mode == CommitMode::kGroup ? " group" : " per-page") << ", host full after "
                << programs << " programs");
  Rig r;
  r.mode = mode;
  r.rng = test::seeded_rng(programs * 7 + uint64_t(mode));
  r.nand = test::make_ram_nand(cfg.geo);
  REQUIRE(format_store(*r.nand, cfg.params, &r.store, mode).is_ok());
  const Lpn n = r.store->logical_pages();
  r.model.assign(n, std::nullopt);
  r.since_sync.assign(n, {});
  for (Lpn l = 0; l < n; l++) {
    const Op op{Op::kWrite, l, next_version(r, l)};
    REQUIRE(apply(r, op).is_ok());
    applied(r, op);
    if (l % 8 == 7) REQUIRE(r.store->sync().is_ok());
  }
  REQUIRE(r.store->sync().is_ok());
  applied(r, {Op::kSync, 0, {}});

  r.nand->host_full_after(programs);
  const uint32_t bad_before = marked_bad(*r.nand);
  const uint64_t pfail_before = r.nand->counters().program_failures;
  Op failed{};
  Status st;
  for (uint64_t i = 0;; i++) {
    REQUIRE(i < 100000);  // the host fills up long before
    failed = next_op(r, i);
    st = apply(r, failed);
    if (!st.is_ok()) break;
    applied(r, failed);
  }
  INFO(st.to_string() << " (op kind " << int(failed.kind) << ")");
  REQUIRE(st.is(Errc::kHostFull));
  REQUIRE(st.message().find("is full") != std::string::npos);
  t->runs++;
  (failed.kind == Op::kWrite ? t->failed_writes
                             : failed.kind == Op::kTrim ? t->failed_trims : t->failed_syncs)++;

  // The same operation again while the host stays full: the same error, no wear.
  // (A per-page write may go to the write buffer this time, needing no program: then it is
  // done.)
  const std::vector<uint32_t> counts = erase_counts(*r.nand);
  bool done = false;
  for (int k = 0; k < 2 && !done; k++) {
    const Status again = apply(r, failed);
    INFO(again.to_string());
    REQUIRE((again.is(Errc::kHostFull) || (again.is_ok() && !r.store->atomic())));
    done = again.is_ok();
  }
  if (done) applied(r, failed);
  if (!done) REQUIRE(erase_counts(*r.nand) == counts);
  REQUIRE(marked_bad(*r.nand) == bad_before);
  REQUIRE(r.nand->counters().program_failures == pfail_before);
  REQUIRE(r.store->stats().blocks_retired == 0);

  // Reads go on while the host is full. A store the fault hit in the middle of a garbage
  // collection takes no change until mounted again (halted); the others go on as they are.
  std::optional<Lpn> either;
  std::optional<Page> alt;
  if (!done && failed.kind != Op::kSync) {
    either = failed.lpn;  // the failed write or trim may be what reads see (or not)
    if (failed.kind == Op::kWrite) alt = failed.page;
  }
  bool halted = false;
  if (r.store->atomic()) {
    const Status ab = r.store->abort();
    INFO(ab.to_string());
    REQUIRE((ab.is_ok() || ab.is(Errc::kHostFull)));
    halted = !ab.is_ok();
    if (!halted) {
      r.model = r.committed;
      either.reset();
    }
  }
  verify(r, either, alt, false);  // (the tables: once changes go on, below)
  if (either) failed = {Op::kWrite, *either, next_version(r, *either)};  // settles the lpn

  // Room again: the same store object takes writes and syncs (a halted one after a remount).
  r.nand->clear_host_full();
  Status s1 = either ? apply(r, failed) : r.store->sync();
  if (s1.is(Errc::kHostFull)) {
    halted = true;
    r.store.reset();
    const Status ms = mount_store(*r.nand, &r.store, nullptr, mode);
    INFO(ms.to_string());
    REQUIRE(ms.is_ok());
    // What a crash at the failure would have kept: the last commit.
    if (r.store->atomic()) r.model = r.committed;
    Page got(r.store->page_size());
    for (Lpn l = 0; l < n; l++) {
      const Status rs = r.store->read(l, got);
      INFO("lpn " << l << ": " << rs.to_string());
      // Per page: a page changed since the last sync holds its synced version or one of its
      // versions since then (the failed write's too), as after a power cut; verified from
      // here on. A page untouched since the sync must read as synced (verify, below).
      if (r.since_sync[l].empty() || r.store->atomic()) continue;
      std::vector<std::optional<Page>> may = r.since_sync[l];
      may.push_back(r.committed[l]);
      if (either == l) may.push_back(alt);
      std::optional<Page> now;
      if (rs.is_ok()) now = got;
      REQUIRE((rs.is_ok() || rs.is(Errc::kNotFound)));
      REQUIRE(std::find(may.begin(), may.end(), now) != may.end());
      r.model[l] = now;
    }
    verify(r, either, alt);
    s1 = either ? apply(r, failed) : r.store->sync();
  }
  INFO(s1.to_string());
  REQUIRE(s1.is_ok());
  if (either) applied(r, failed);
  for (uint64_t i = 0; i < 3 * uint64_t(n); i++) {
    const Op op = next_op(r, i);
    const Status s2 = apply(r, op);
    INFO("after the host has room, op " << i << ": " << s2.to_string());
    REQUIRE(s2.is_ok());
    applied(r, op);
  }
  if (halted) t->halted++;
  REQUIRE(r.store->sync().is_ok());
  applied(r, {Op::kSync, 0, {}});
  verify(r);
  REQUIRE(r.store->stats().blocks_retired == 0);
  REQUIRE(marked_bad(*r.nand) == bad_before);
  r.store.reset();
  const Status ms = mount_store(*r.nand, &r.store, nullptr, mode);
  INFO(ms.to_string());
  REQUIRE(ms.is_ok());
  verify(r);
}

}  // namespace

TEST_CASE("a full host file system fails the operation with kHostFull, retires no block, "
          "keeps reads and takes writes again once it has room", "[store][host_full]") {
  Totals t;
  const auto matrix = test::store_matrix();
  for (size_t i = 0; i < matrix.size(); i++) {
    if (!test::in_matrix_sample(i, __LINE__)) continue;
    const StoreConfig& cfg = matrix[i];
    std::vector<CommitMode> modes{CommitMode::kPerPage};
    // Groups where the engine has them (PDL, OPU): IPL's commit log and the FTL devices'
    // block interface run per page here.
    if (!pdl::in_page(cfg.params.method) && has_atomic_commit(cfg.params.method))
      modes.push_back(CommitMode::kGroup);
    for (CommitMode mode : modes)
      for (uint64_t programs : {0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233})
        run(cfg, mode, programs, &t);
  }
  WARN("host full: " << t.runs << " runs; the failing operation was a write "
                     << t.failed_writes << " times, a trim " << t.failed_trims
                     << " times, a sync " << t.failed_syncs << " times; 0 blocks retired");
}

namespace {

// A PDL store (per page, obsolete marks in the spare area, differentials up to page/8) on a
// fresh small chip, for the sequences below that make an obsolete mark the first program the
// host has no room for.
struct MarkRig {
  std::unique_ptr<EmulatedNand> nand = test::make_ram_nand(test::geometry(512, 32, 8, 40));
  std::unique_ptr<PageStore> store;
  std::mt19937_64 rng = test::seeded_rng(0x4F4D);
  MarkRig() {
    StoreParams p;
    p.method = Method::kPdl;
    p.logical_pages = 64;
    p.max_differential = 512 / 8;
    p.obsolete = ObsoleteMode::kSpare;
    REQUIRE(format_store(*nand, p, &store, CommitMode::kPerPage).is_ok());
  }
  Page random() { return test::random_page(rng, store->page_size()); }
  // `old` with a few bytes changed: a differential well within page/8.
  Page small_change(const Page& old) {
    Page p = old;
    for (int k = 0; k < 4; k++) p[rng() % p.size()] ^= uint8_t(1 + rng() % 255);
    return p;
  }
  Page read(Lpn l) {
    Page got(store->page_size());
    const Status st = store->read(l, got);
    INFO("lpn " << l << ": " << st.to_string());
    REQUIRE(st.is_ok());
    return got;
  }
  void remount() {
    nand->clear_host_full();
    store.reset();
    const Status ms = mount_store(*nand, &store, nullptr, CommitMode::kPerPage);
    INFO(ms.to_string());
    REQUIRE(ms.is_ok());
    const Status ck = store->check();
    INFO(ck.to_string());
    REQUIRE(ck.is_ok());
  }
};

}  // namespace

TEST_CASE("a new base page whose old base page's obsolete mark finds the host full reads as "
          "the old or the new version, never the new base under the old differential",
          "[store][host_full]") {
  MarkRig r;
  const Page v1 = r.random();
  REQUIRE(r.store->write(0, v1).is_ok());
  REQUIRE(r.store->sync().is_ok());
  const Page v2 = r.small_change(v1);  // a differential on flash over v1's base page
  REQUIRE(r.store->write(0, v2).is_ok());
  REQUIRE(r.store->sync().is_ok());
  REQUIRE(r.store->stats().diff_pages_written == 1);
  // Case 3: the new base page is programmed, then the old base page's mark is refused.
  const Page v3 = r.random();
  r.nand->host_full_after(1);
  const Status st = r.store->write(0, v3);
  INFO(st.to_string());
  REQUIRE(st.is(Errc::kHostFull));
  REQUIRE(r.store->stats().case3 == 1);
  REQUIRE(r.store->stats().base_pages_written == 2);  // v1's and v3's
  const Page now = r.read(0);
  REQUIRE((now == v3 || now == v2));
  r.remount();  // (a power cut here: the new base page carries its own commit record)
  const Page after = r.read(0);
  REQUIRE((after == v3 || after == v2));
  REQUIRE(r.store->write(0, v1).is_ok());
  REQUIRE(r.store->sync().is_ok());
  REQUIRE(r.read(0) == v1);
}

TEST_CASE("a write buffer flush whose first obsolete mark finds the host full leaves every "
          "flushed page readable at its newest version", "[store][host_full]") {
  MarkRig r;
  constexpr Lpn kPages = 4;
  std::vector<Page> v(kPages);
  for (Lpn l = 0; l < kPages; l++) {
    v[l] = r.random();
    REQUIRE(r.store->write(l, v[l]).is_ok());
  }
  REQUIRE(r.store->sync().is_ok());
  // Each page's differential on a differential page of its own...
  for (Lpn l = 0; l < kPages; l++) {
    v[l] = r.small_change(v[l]);
    REQUIRE(r.store->write(l, v[l]).is_ok());
    REQUIRE(r.store->sync().is_ok());
  }
  // ...then all of them again in one buffer: its flush supersedes every one of those pages,
  // and the first one's mark (after the flush's own program) is refused.
  for (Lpn l = 0; l < kPages; l++) {
    v[l] = r.small_change(v[l]);
    REQUIRE(r.store->write(l, v[l]).is_ok());
  }
  const uint64_t flushes = r.store->stats().diff_pages_written;
  r.nand->host_full_after(1);
  const Status st = r.store->sync();
  INFO(st.to_string());
  REQUIRE(st.is(Errc::kHostFull));
  REQUIRE(r.store->stats().diff_pages_written == flushes + 1);
  // Every write returned before the sync: reads give them (the store is halted, not lost).
  for (Lpn l = 0; l < kPages; l++) REQUIRE(r.read(l) == v[l]);
  REQUIRE(r.store->write(0, v[0]).is(Errc::kHostFull));  // halted until mounted again
  // The flushed page is on flash with its commit record: a remount finds every version.
  r.remount();
  for (Lpn l = 0; l < kPages; l++) REQUIRE(r.read(l) == v[l]);
}

TEST_CASE("an image file on a full host file system fails a program with kHostFull and "
          "leaves the page erased", "[nand][host_full]") {
  if (geteuid() != 0) {
    WARN("skipped: mounting a tmpfs needs root");
    return;
  }
  char dir[] = "/tmp/pdl-hostfull-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  if (mount("tmpfs", dir, "tmpfs", 0, "size=256k") != 0) {
    WARN("skipped: cannot mount a tmpfs: " << std::strerror(errno));
    rmdir(dir);
    return;
  }
  const std::string path = std::string(dir) + "/chip.img";
  {
    const Geometry g = test::geometry(2048, 64, 8, 512);  // 8.25 MiB, sparse
    std::unique_ptr<EmulatedNand> n;
    const Status cs = EmulatedNand::create_file(path, g, &n);
    INFO(cs.to_string());
    REQUIRE(cs.is_ok());
    Page data(g.page_data, 0x5A), spare(g.page_spare, 0xFF);
    Status st;
    Ppa p = 0;
    for (; p < g.total_pages(); p++) {
      st = n->program(p, data, spare);
      if (!st.is_ok()) break;
    }
    INFO(st.to_string());
    REQUIRE(st.is(Errc::kHostFull));
    REQUIRE(st.message().find(path) != std::string::npos);
    REQUIRE(n->counters().program_failures == 0);
    Page got(g.page_data), gs(g.page_spare);
    REQUIRE(n->read(p, got, gs).is_ok());
    REQUIRE(got == Page(g.page_data, 0xFF));  // erased: nothing of the failed program
    REQUIRE(n->read(p - 1, got, gs).is_ok());
    REQUIRE(got == data);
    // An erase needs no room, and a block's room once reserved is kept: its pages can be
    // programmed again while the host is full.
    REQUIRE(n->erase(0).is_ok());
    REQUIRE(n->program(0, data, spare).is_ok());
    REQUIRE(n->program(p, data, spare).is(Errc::kHostFull));
  }
  umount(dir);
  rmdir(dir);
}
