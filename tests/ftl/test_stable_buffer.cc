// test_stable_buffer.cc — StableBuffer ([StableBuffer]) in front of an FTL device: reader and
// writer, pattern recognition (on-demand, incremental) and flushing (passive, proactive) in the
// recognised pattern's order, directory commits and recovery at a power cut at every program and
// erase, trim, the superblock, parameter errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include "flash/ftl/sb_directory.h"
#include "flash/ftl/sb_stable_buffer.h"
#include "flash/ftl/sb_store.h"
#include "flash/image/open_store.h"
#include "flash/pdl/pdl_store.h"
#include "tests/support/forwarding_store.h"
#include "tests/support/test_util.h"

using namespace pdl;
using pdl::test::geometry;
using pdl::test::make_ram_nand;
using Page = std::vector<uint8_t>;

namespace {

// An FTL device that records the logical pages written to it, in order (everything else is
// forwarded).
class RecordingDevice final : public test::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  std::vector<Lpn> writes;
  Status write(Lpn l, std::span<const uint8_t> p) override {
    writes.push_back(l);
    return inner().write(l, p);
  }
};

StoreParams sb_params(uint32_t slots = 0) {
  StoreParams p;
  p.method = Method::kStableBuffer;
  p.ftl = FtlKind::kPage;
  p.sb_slots = slots;
  return p;
}

// A StableBuffer over a page FTL device that records its writes (no superblock: the store
// layer only).
struct Rig {
  std::unique_ptr<EmulatedNand> nand;
  std::unique_ptr<PageStore> store;
  StableBufferStore* sb = nullptr;
  RecordingDevice* dev = nullptr;
  std::mt19937_64 rng{pdl::test::test_seed()};

  Rig(const Geometry& g, StoreParams p) {
    nand = make_ram_nand(g);
    REQUIRE(resolve_store_params(&p, nand->geometry()).is_ok());
    std::unique_ptr<PageStore> ftl;
    REQUIRE(PdlStore::format(*nand, SbStore::device_params(p, nand->geometry()),
                             CommitMode::kPerPage, &ftl)
                .is_ok());
    auto rec = std::make_unique<RecordingDevice>(std::move(ftl));
    dev = rec.get();
    REQUIRE(SbStore::format(std::move(rec), p, &store).is_ok());
    sb = dynamic_cast<StableBufferStore*>(store.get());
    REQUIRE(sb != nullptr);
  }
  Page page_for(Lpn l) {
    Page p(store->page_size());
    for (size_t i = 0; i < p.size(); i++) p[i] = uint8_t(l * 31 + i * 7 + (i >> 8));
    return p;
  }
  void write_all(std::vector<Lpn> lpns, bool shuffle = true) {
    if (shuffle) std::shuffle(lpns.begin(), lpns.end(), rng);
    for (Lpn l : lpns) REQUIRE(store->write(l, page_for(l)).is_ok());
  }
  // The destinations (user lpns) written to the device since `from`.
  std::vector<Lpn> destinations_since(size_t from) const {
    std::vector<Lpn> out;
    for (size_t i = from; i < dev->writes.size(); i++)
      if (dev->writes[i] < sb->logical_pages()) out.push_back(dev->writes[i]);
    return out;
  }
};

std::vector<Lpn> iota_lpns(Lpn first, uint32_t n, Lpn step = 1) {
  std::vector<Lpn> v;
  for (uint32_t i = 0; i < n; i++) v.push_back(first + i * step);
  return v;
}

// 512-byte pages, 32 pages per block: default buffer of 64 slots (two blocks).
const Geometry kPatternGeo = geometry(512, 32, 32, 80);

}  // namespace

TEST_CASE("StableBuffer: reads see staged writes, which stay off their destinations",
          "[ftl][sb]") {
  Rig r(kPatternGeo, sb_params());
  REQUIRE(r.sb->layout().slots == 64);
  const auto lpns = iota_lpns(5, 20, 37);
  r.write_all(lpns);
  Page got(r.store->page_size());
  for (Lpn l : lpns) {
    REQUIRE(r.store->read(l, got).is_ok());
    REQUIRE(got == r.page_for(l));
    REQUIRE(r.sb->slot_of(l) != kSbFree);
    REQUIRE_FALSE(r.sb->device().is_mapped(l));  // still only in its slot
  }
  REQUIRE(r.store->read(6, got).is(Errc::kNotFound));
  REQUIRE(r.sb->sb_stats().staged_writes == 20);
  REQUIRE(r.sb->sb_stats().slot_reads == 20);
  // A rewrite of a staged page stays in its slot.
  const uint32_t slot = r.sb->slot_of(lpns[3]);
  Page v2 = r.page_for(999);
  REQUIRE(r.store->write(lpns[3], v2).is_ok());
  REQUIRE(r.sb->slot_of(lpns[3]) == slot);
  REQUIRE(r.sb->sb_stats().restaged_writes == 1);
  REQUIRE(r.store->read(lpns[3], got).is_ok());
  REQUIRE(got == v2);
  REQUIRE(r.store->check().is_ok());
}

TEST_CASE("StableBuffer: a full buffer of one run flushes it as sequential, in ascending order",
          "[ftl][sb]") {
  const auto rec = GENERATE(SbRecognition::kOnDemand, SbRecognition::kIncremental);
  StoreParams p = sb_params();
  p.sb_recognition = rec;
  Rig r(kPatternGeo, p);
  r.write_all(iota_lpns(100, 64));
  REQUIRE(r.sb->sb_stats().flushes == 0);
  const size_t mark = r.dev->writes.size();
  REQUIRE(r.store->write(1500, r.page_for(1500)).is_ok());  // no free slot: passive flush
  const SbStats& s = r.sb->sb_stats();
  REQUIRE(s.passive_flushes == 1);
  REQUIRE(s.instances[int(SbPattern::kSequential)] == 1);
  REQUIRE(s.flushed_pages[int(SbPattern::kSequential)] == 64);
  REQUIRE(r.destinations_since(mark) == iota_lpns(100, 64));
  REQUIRE(s.directory_commits == 2);  // format's, and the flush's
  Page got(r.store->page_size());
  for (Lpn l = 100; l < 164; l++) {
    REQUIRE(r.sb->slot_of(l) == kSbFree);
    REQUIRE(r.store->read(l, got).is_ok());
    REQUIRE(got == r.page_for(l));
  }
  REQUIRE(r.store->check().is_ok());
}

TEST_CASE("StableBuffer: runs in distinct erase blocks flush as one partitioned instance, run "
          "after run",
          "[ftl][sb]") {
  const auto rec = GENERATE(SbRecognition::kOnDemand, SbRecognition::kIncremental);
  StoreParams p = sb_params();
  p.sb_recognition = rec;
  Rig r(kPatternGeo, p);
  std::vector<Lpn> runs;
  for (Lpn b = 0; b < 9; b++)
    for (Lpn i = 0; i < 7; i++) runs.push_back(b * 96 + 3 + i);  // 9 runs of 7, 3 blocks apart
  std::vector<Lpn> all = runs;
  all.push_back(1999);  // a lone page: in no run
  r.write_all(all);
  const size_t mark = r.dev->writes.size();
  REQUIRE(r.store->write(1500, r.page_for(1500)).is_ok());
  const SbStats& s = r.sb->sb_stats();
  REQUIRE(s.instances[int(SbPattern::kPartitioned)] == 1);
  REQUIRE(s.flushed_pages[int(SbPattern::kPartitioned)] == 63);
  REQUIRE(r.destinations_since(mark) == runs);  // ascending, run by run
  REQUIRE(r.sb->slot_of(1999) != kSbFree);
  REQUIRE(r.store->check().is_ok());
}

TEST_CASE("StableBuffer: scattered pages in a focused area flush as focused — on-demand over the "
          "window of F blocks, incremental over one block",
          "[ftl][sb]") {
  const auto rec = GENERATE(SbRecognition::kOnDemand, SbRecognition::kIncremental);
  StoreParams p = sb_params();
  p.sb_recognition = rec;
  Rig r(kPatternGeo, p);
  REQUIRE(r.sb->cost_model().focus_blocks == 2);
  const auto focused = iota_lpns(0, 32, 2);  // every other page of blocks 0 and 1
  std::vector<Lpn> all = focused;
  for (Lpn l : iota_lpns(130, 32, 60)) all.push_back(l);  // at most 2 per window of 2 blocks
  r.write_all(all);
  const size_t mark = r.dev->writes.size();
  REQUIRE(r.store->write(1, r.page_for(1)).is_ok());
  const SbStats& s = r.sb->sb_stats();
  REQUIRE(s.instances[int(SbPattern::kFocused)] == 1);
  if (rec == SbRecognition::kOnDemand) {
    REQUIRE(r.destinations_since(mark) == focused);
  } else {
    REQUIRE(r.destinations_since(mark) == iota_lpns(0, 16, 2));  // block 0 only
  }
  REQUIRE(r.store->check().is_ok());
}

TEST_CASE("StableBuffer: a passive flush frees an eighth of the buffer, best instances first, "
          "under one directory commit",
          "[ftl][sb]") {
  Rig r(kPatternGeo, sb_params(16));  // batch: 2 slots
  r.write_all(iota_lpns(7, 16, 40));  // one page per erase block: every instance is one page
  const uint64_t commits = r.sb->sb_stats().directory_commits;
  const size_t mark = r.dev->writes.size();
  REQUIRE(r.store->write(1900, r.page_for(1900)).is_ok());
  const SbStats& s = r.sb->sb_stats();
  REQUIRE(s.passive_flushes == 2);
  REQUIRE(s.directory_commits == commits + 1);
  REQUIRE(r.destinations_since(mark).size() == 2);
  REQUIRE(r.sb->staged_pages() == 15);
  REQUIRE(r.store->check().is_ok());
}

TEST_CASE("StableBuffer: proactive flushing flushes a run once it reaches θ_seq; passive waits "
          "for a full buffer",
          "[ftl][sb]") {
  const auto rec = GENERATE(SbRecognition::kOnDemand, SbRecognition::kIncremental);
  const auto flush = GENERATE(SbFlush::kPassive, SbFlush::kProactive);
  StoreParams p = sb_params();
  p.sb_recognition = rec;
  p.sb_flush = flush;
  Rig r(kPatternGeo, p);
  const SbCostModel& m = r.sb->cost_model();
  REQUIRE(m.theta[int(SbPattern::kSequential)] == 32);
  REQUIRE(m.theta[int(SbPattern::kPartitioned)] > 32);
  REQUIRE(m.theta[int(SbPattern::kFocused)] >= m.theta[int(SbPattern::kPartitioned)]);
  auto lpns = iota_lpns(300, 32);
  std::shuffle(lpns.begin(), lpns.end(), r.rng);
  for (size_t i = 0; i < lpns.size(); i++) {
    REQUIRE(r.store->write(lpns[i], r.page_for(lpns[i])).is_ok());
    if (i + 1 < lpns.size()) REQUIRE(r.sb->sb_stats().flushes == 0);
  }
  const SbStats& s = r.sb->sb_stats();
  if (flush == SbFlush::kProactive) {
    REQUIRE(s.proactive_flushes == 1);
    REQUIRE(s.flushed_pages[int(SbPattern::kSequential)] == 32);
    REQUIRE(r.sb->staged_pages() == 0);
  } else {
    REQUIRE(s.flushes == 0);
    REQUIRE(r.sb->staged_pages() == 32);
  }
  REQUIRE(r.store->check().is_ok());
}

TEST_CASE("StableBuffer's incremental recognizer keeps its runs and block counts through random "
          "inserts and erases, and finds the on-demand scan's sequential and partitioned instances",
          "[ftl][sb]") {
  const uint32_t ppb = 8;
  SbRecognizer on(SbRecognition::kOnDemand, ppb, 2), inc(SbRecognition::kIncremental, ppb, 2);
  SbCostModel seq_only, par_only;
  seq_only.t[0] = 1, seq_only.t[1] = 1e12, seq_only.t[2] = 1e12;
  par_only.t[0] = 1e12, par_only.t[1] = 1, par_only.t[2] = 1e12;
  std::mt19937_64 rng(pdl::test::test_seed());
  std::vector<bool> staged(200, false);
  for (int i = 0; i < 4000; i++) {
    const Lpn d = Lpn(rng() % 200);
    if (staged[d]) on.erase(d), inc.erase(d);
    else on.insert(d), inc.insert(d);
    staged[d] = !staged[d];
    REQUIRE(inc.consistent());
    REQUIRE(on.size() == inc.size());
    const auto a = on.pick(seq_only, false), b = inc.pick(seq_only, false);
    REQUIRE(a.has_value() == b.has_value());
    if (!a) continue;
    REQUIRE(a->pattern == SbPattern::kSequential);
    REQUIRE(a->pages == b->pages);
    const auto c = on.pick(par_only, false), e = inc.pick(par_only, false);
    // (Without a partitioned instance the two may differ: their focused candidates do.)
    REQUIRE((c->pattern == SbPattern::kPartitioned) == (e->pattern == SbPattern::kPartitioned));
    if (c->pattern == SbPattern::kPartitioned) REQUIRE(c->pages == e->pages);
    for (Lpn x : a->pages) REQUIRE(staged[x]);
    for (Lpn x : c->pages) REQUIRE(staged[x]);
  }
}

TEST_CASE("StableBuffer: the cost model ranks the patterns as the FTL's merges do", "[ftl][sb]") {
  const Geometry g = geometry(2048, 64, 64, 64).resolved();
  for (FtlKind k : {FtlKind::kPage, FtlKind::kBast, FtlKind::kFast}) {
    const SbCostModel m = SbCostModel::of(k, 16, g, 256);
    INFO(ftl_name(k));
    REQUIRE(m.t[0] > 0);
    REQUIRE(m.t[0] < m.t[1]);
    REQUIRE(m.t[1] <= m.t[2]);
    REQUIRE(m.theta[0] == 64);
    REQUIRE(m.theta[1] == uint32_t(std::ceil(64 * m.t[1] / m.t[0])));
  }
  // BAST's full merges make focused writes dearer than the page FTL's GC does, and dearer
  // still when the focused area is wider than the log blocks.
  REQUIRE(SbCostModel::of(FtlKind::kBast, 16, g, 256).t[2] >
          SbCostModel::of(FtlKind::kPage, 0, g, 256).t[2]);
  REQUIRE(SbCostModel::of(FtlKind::kBast, 2, g, 64 * 8).t[2] >
          SbCostModel::of(FtlKind::kBast, 16, g, 64 * 8).t[2]);
}

TEST_CASE("StableBuffer: trim unstages the page and trims its destination", "[ftl][sb]") {
  auto nand = make_ram_nand(kPatternGeo);
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, sb_params(), &store).is_ok());
  auto* sb = dynamic_cast<StableBufferStore*>(store.get());
  REQUIRE(sb);
  Page a(store->page_size(), 0xA1), b(store->page_size(), 0xB2);
  REQUIRE(store->write(10, a).is_ok());  // staged
  REQUIRE(store->write(11, b).is_ok());
  REQUIRE(sb->flush_passive().is_ok());       // 10, 11 at their destinations
  REQUIRE(store->write(10, b).is_ok());  // 10 staged again over its destination
  REQUIRE(store->trim(10).is_ok());
  REQUIRE(store->trim(11).is_ok());
  REQUIRE(sb->sb_stats().unstaged_trims == 1);
  REQUIRE(store->dirty());
  Page got(store->page_size());
  REQUIRE(store->read(10, got).is(Errc::kNotFound));
  REQUIRE(store->read(11, got).is(Errc::kNotFound));
  REQUIRE_FALSE(store->is_mapped(10));
  REQUIRE(store->sync().is_ok());
  REQUIRE_FALSE(store->dirty());
  store.reset();
  REQUIRE(mount_store(*nand, &store).is_ok());
  REQUIRE(store->read(10, got).is(Errc::kNotFound));
  REQUIRE(store->read(11, got).is(Errc::kNotFound));
  REQUIRE(store->check().is_ok());
}

TEST_CASE("StableBuffer: a trim of a staged page whose destination's trim finds the host full "
          "still reads the staged page, never the destination's older version",
          "[ftl][sb][host_full]") {
  auto nand = make_ram_nand(kPatternGeo);
  std::unique_ptr<PageStore> store;
  StoreParams p = sb_params();
  p.ftl = FtlKind::kBast;  // (a BAST trim programs its trim record at once)
  REQUIRE(format_store(*nand, p, &store).is_ok());
  auto* sb = dynamic_cast<StableBufferStore*>(store.get());
  REQUIRE(sb);
  Page a(store->page_size(), 0xA1), b(store->page_size(), 0xB2);
  REQUIRE(store->write(10, a).is_ok());
  REQUIRE(sb->flush_passive().is_ok());  // a at 10's destination
  REQUIRE(store->write(10, b).is_ok());  // b staged over it
  REQUIRE(store->sync().is_ok());
  REQUIRE(sb->slot_of(10) != kSbFree);
  nand->host_full_after(0);
  const Status st = store->trim(10);
  INFO(st.to_string());
  REQUIRE(st.is(Errc::kHostFull));
  REQUIRE(store->halted().is(Errc::kHostFull));
  REQUIRE(sb->slot_of(10) != kSbFree);  // still staged: the trim did not happen
  Page got(store->page_size());
  REQUIRE(store->read(10, got).is_ok());
  REQUIRE(got == b);
  REQUIRE(store->check().is_ok());
  REQUIRE(store->trim(10).is(Errc::kHostFull));  // halted until mounted again
  nand->clear_host_full();
  store.reset();
  REQUIRE(mount_store(*nand, &store).is_ok());
  REQUIRE(store->read(10, got).is_ok());  // the synced version, as a power cut would leave it
  REQUIRE(got == b);
  REQUIRE(store->trim(10).is_ok());
  REQUIRE(store->read(10, got).is(Errc::kNotFound));
  REQUIRE(store->check().is_ok());
}

TEST_CASE("StableBuffer: the superblock keeps method, ftl and sb_slots, and a remount rebuilds "
          "the SBTT from the slot directory",
          "[ftl][sb]") {
  auto nand = make_ram_nand(kPatternGeo);
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*nand, sb_params(40), &store).is_ok());
  const uint32_t user = store->logical_pages();
  std::vector<Page> pages;
  for (Lpn l = 0; l < 30; l++) {
    pages.push_back(Page(store->page_size(), uint8_t(l + 1)));
    REQUIRE(store->write(l * 3, pages.back()).is_ok());
  }
  REQUIRE(store->sync().is_ok());
  store.reset();
  MountReport rep;
  REQUIRE(mount_store(*nand, &store, &rep).is_ok());
  REQUIRE(store->params().method == Method::kStableBuffer);
  REQUIRE(store->params().ftl == FtlKind::kPage);
  REQUIRE(store->params().sb_slots == 40);
  REQUIRE(store->logical_pages() == user);
  auto* sb = dynamic_cast<StableBufferStore*>(store.get());
  REQUIRE(sb);
  REQUIRE(sb->sb_stats().recovered_slots == 30);
  Page got(store->page_size());
  for (Lpn l = 0; l < 30; l++) {
    REQUIRE(sb->slot_of(l * 3) != kSbFree);
    REQUIRE(store->read(l * 3, got).is_ok());
    REQUIRE(got == pages[l]);
  }
  REQUIRE(store->check().is_ok());
  REQUIRE_FALSE(store->atomic());
  REQUIRE(store->set_commit_mode(CommitMode::kGroup).is_ok());
  REQUIRE_FALSE(store->atomic());
}

TEST_CASE("StableBuffer: bad parameters are refused naming the parameter", "[ftl][sb]") {
  const Geometry g = kPatternGeo.resolved();
  StoreParams p = sb_params(100000);
  Status st = resolve_store_params(&p, g);
  REQUIRE(st.is(Errc::kInvalidArgument));
  REQUIRE(std::string(st.message()).rfind("sb_slots:", 0) == 0);
  StoreParams q = sb_params();
  q.ftl = FtlKind::kNone;
  st = resolve_store_params(&q, g);
  REQUIRE(std::string(st.message()).rfind("ftl:", 0) == 0);
  StoreParams r = sb_params();
  REQUIRE(resolve_store_params(&r, g).is_ok());
  REQUIRE(r.sb_slots == 64);  // two erase blocks on a small chip
  const StoreParams d = SbStore::device_params(r, g);
  REQUIRE(d.method == Method::kFtl);
  REQUIRE(d.sb_slots == 0);
  REQUIRE(d.logical_pages == r.logical_pages + 64 + 2 * 2);
}

TEST_CASE("StableBuffer: no thin provisioning, and a full-size store written over and over "
          "never runs out",
          "[ftl][sb]") {
  const Geometry g = geometry(512, 32, 8, 40);
  StoreParams p = sb_params();
  auto nand = make_ram_nand(g);
  std::unique_ptr<PageStore> store;
  StoreParams too_big = p;
  too_big.logical_pages = 4000;
  const Status refused = format_store(*nand, too_big, &store);
  REQUIRE(refused.is(Errc::kInvalidArgument));
  REQUIRE(std::string(refused.message()).rfind("logical_pages:", 0) == 0);
  REQUIRE(format_store(*nand, p, &store).is_ok());
  const uint32_t n = store->logical_pages();
  auto rng = pdl::test::seeded_rng(0x5B0F);
  std::vector<Page> model(n);
  for (int round = 0; round < 4; round++) {
    std::vector<Lpn> order(n);
    std::iota(order.begin(), order.end(), 0);
    if (round % 2) std::shuffle(order.begin(), order.end(), rng);
    for (Lpn l : order) {
      model[l] = pdl::test::random_page(rng, g.page_data);
      const Status st = store->write(l, model[l]);
      INFO("round " << round << " lpn " << l << ": " << st.to_string());
      REQUIRE(st.is_ok());
    }
    REQUIRE(store->sync().is_ok());
  }
  store.reset();
  REQUIRE(mount_store(*nand, &store).is_ok());
  Page got(g.page_data);
  for (Lpn l = 0; l < n; l++) {
    REQUIRE(store->read(l, got).is_ok());
    REQUIRE(got == model[l]);
  }
  REQUIRE(store->check().is_ok());
}

TEST_CASE("StableBuffer's slot directory: a copy counts only when complete, the newest complete "
          "copy wins, a destination named twice keeps its newest timestamp",
          "[ftl][sb]") {
  auto nand = make_ram_nand(geometry(512, 32, 8, 24));
  const SbLayout l = SbLayout::of(50, 40, 512);
  REQUIRE(l.dir_pages == 2);
  StoreParams dp;
  dp.method = Method::kFtl;
  dp.ftl = FtlKind::kPage;
  dp.logical_pages = l.device_pages();
  REQUIRE(resolve_store_params(&dp, nand->geometry()).is_ok());
  std::unique_ptr<PageStore> dev;
  REQUIRE(PdlStore::format(*nand, dp, CommitMode::kPerPage, &dev).is_ok());
  SbDirectory got;
  std::vector<uint32_t> stale;
  REQUIRE(load_directory(*dev, l, &got, &stale).is(Errc::kCorrupt));  // nothing written yet

  SbDirectory d1;
  d1.seq = 1;
  d1.next_ts = 11;
  d1.entries.assign(l.slots, SbSlotEntry{});
  d1.entries[0] = {5, 10};
  REQUIRE(write_directory(*dev, l, d1).is_ok());
  REQUIRE(load_directory(*dev, l, &got, &stale).is_ok());
  REQUIRE(got.seq == 1);
  REQUIRE(got.entries[0].dest == 5);

  // Commit 2 cut after its first page: copy 0 is incomplete, commit 1 stands.
  SbDirectory d2 = d1;
  d2.seq = 2;
  d2.entries[0] = {7, 11};
  Page page(512);
  encode_directory_page(l, d2, 0, page);
  REQUIRE(dev->write(l.dir_lpn(0, 0), page).is_ok());
  REQUIRE(load_directory(*dev, l, &got, &stale).is_ok());
  REQUIRE(got.seq == 1);
  REQUIRE(got.entries[0].dest == 5);
  encode_directory_page(l, d2, 1, page);
  REQUIRE(dev->write(l.dir_lpn(0, 1), page).is_ok());
  REQUIRE(load_directory(*dev, l, &got, &stale).is_ok());
  REQUIRE(got.seq == 2);
  REQUIRE(got.entries[0].dest == 7);

  // A page whose CRC fails makes its copy not count.
  SbDirectory d3 = d2;
  d3.seq = 3;
  d3.entries[0] = {9, 20};
  d3.entries[39] = {9, 30};  // (never written so; load keeps the newest)
  REQUIRE(write_directory(*dev, l, d3).is_ok());
  REQUIRE(load_directory(*dev, l, &got, &stale).is_ok());
  REQUIRE(got.seq == 3);
  REQUIRE(got.entries[39].dest == 9);
  REQUIRE(got.entries[0].dest == kSbFree);
  REQUIRE(stale == std::vector<uint32_t>{0});
  REQUIRE(got.next_ts >= 31);
  encode_directory_page(l, d3, 1, page);
  page[100] ^= 1;
  REQUIRE(dev->write(l.dir_lpn(1, 1), page).is_ok());
  REQUIRE(load_directory(*dev, l, &got, &stale).is_ok());
  REQUIRE(got.seq == 2);
}

namespace {

// What each lpn may read after a crash: its value at the last sync, or any written since.
struct Tracker {
  std::vector<std::optional<Page>> cur;
  std::vector<std::vector<std::optional<Page>>> allowed;
  explicit Tracker(size_t n) : cur(n), allowed(n, {std::nullopt}) {}
  void wrote(Lpn l, const Page& p) { cur[l] = p, allowed[l].push_back(p); }
  void trimmed(Lpn l) { cur[l].reset(), allowed[l].push_back(std::nullopt); }
  void synced() {
    for (size_t l = 0; l < cur.size(); l++) allowed[l] = {cur[l]};
  }
};

// Writes (random pages of a hot range, and sequential bursts), trims, reads and syncs over a
// small buffer, so that flushes of every pattern and directory commits come often. Every page's
// bytes carry its lpn, so a page read under the wrong lpn shows.
Status sb_workload(PageStore& store, uint64_t seed, Tracker& t, int ops) {
  std::mt19937_64 rng(seed);
  const uint32_t psz = store.page_size();
  Lpn seq = 0;
  for (int i = 0; i < ops; i++) {
    const unsigned r = unsigned(rng() % 100);
    const uint32_t n = store.logical_pages();
    Lpn l = rng() % 2 ? Lpn(rng() % std::min(48u, n / 2)) : Lpn(seq++ % std::min(96u, n));
    if (r < 65) {
      Page p = pdl::test::random_page(rng, psz);
      p[0] = uint8_t(l), p[1] = uint8_t(l >> 8);
      t.wrote(l, p);
      PDL_TRY(store.write(l, p));
    } else if (r < 75) {
      Page got(psz);
      const Status st = store.read(l, got);
      if (!st.is_ok() && !st.is(Errc::kNotFound)) return st;
      if (st.is_ok() != t.cur[l].has_value() || (t.cur[l] && got != *t.cur[l]))
        return Status::error(Errc::kCorrupt, "a read before the cut returned wrong data");
    } else if (r < 85) {
      t.trimmed(l);
      PDL_TRY(store.trim(l));
    } else {
      PDL_TRY(store.sync());
      t.synced();
    }
  }
  return store.sync();
}

}  // namespace

TEST_CASE("StableBuffer: a power cut at every program and erase leaves each page its last synced "
          "value or a later one, never another page's",
          "[ftl][sb][powerloss]") {
  const auto rec = GENERATE(SbRecognition::kOnDemand, SbRecognition::kIncremental);
  const auto flush = GENERATE(SbFlush::kPassive, SbFlush::kProactive);
  // 12 slots: one directory page per copy; 40 slots: two (a commit spans pages).
  const uint32_t slots = GENERATE(12u, 40u);
  const int ops = slots == 12 ? 220 : 600;
  const Geometry g = geometry(512, 32, 8, 24);
  StoreParams p = sb_params(slots);
  p.sb_recognition = rec;
  p.sb_flush = flush;
  const uint64_t seed = pdl::test::test_seed() * 3 + uint64_t(rec) * 2 + uint64_t(flush);
  uint64_t total = 0;
  SbStats uncut;
  {
    auto nand = make_ram_nand(g);
    std::unique_ptr<PageStore> store;
    REQUIRE(format_store(*nand, p, &store).is_ok());
    const uint64_t base = nand->mutating_ops();
    Tracker t(store->logical_pages());
    REQUIRE(sb_workload(*store, seed, t, ops).is_ok());
    REQUIRE(dynamic_cast<StableBufferStore&>(*store).layout().dir_pages == (slots == 12 ? 1 : 2));
    total = nand->mutating_ops() - base;
    uncut = dynamic_cast<StableBufferStore&>(*store).sb_stats();
  }
  INFO("slots " << slots << ", operations " << total << ", flushes " << uncut.flushes << ", commits "
                     << uncut.directory_commits);
  REQUIRE(uncut.flushes >= 5);
  if (flush == SbFlush::kPassive) REQUIRE(uncut.passive_flushes >= 5);
  else REQUIRE(uncut.proactive_flushes >= 1);
  REQUIRE(uncut.directory_commits >= 10);
  REQUIRE(uncut.unstaged_trims >= 1);
  // PDL_EXHAUSTIVE_STRIDE=s (the sanitizer run): every s-th operation only.
  const char* env = std::getenv("PDL_EXHAUSTIVE_STRIDE");
  const uint64_t stride = std::max<long>(1, env && *env ? std::atol(env) : 1);
  for (uint64_t k = 0; k < total; k += stride) {
    INFO("cut before operation " << k);
    auto nand = make_ram_nand(g);
    std::unique_ptr<PageStore> store;
    REQUIRE(format_store(*nand, p, &store).is_ok());
    Tracker t(store->logical_pages());
    nand->cut_power_after(k, k % 2 ? Tear::kPrefix : Tear::kNone, seed + k);
    const Status st = sb_workload(*store, seed, t, ops);
    REQUIRE_FALSE(st.is_ok());
    REQUIRE_FALSE(st.is(Errc::kCorrupt));
    store.reset();
    nand->restore_power();
    REQUIRE(mount_store(*nand, &store, nullptr, CommitMode::kPerPage, &p).is_ok());
    REQUIRE(store->check().is_ok());
    Page got(store->page_size());
    for (Lpn l = 0; l < store->logical_pages(); l++) {
      INFO("lpn " << l);
      const Status rs = store->read(l, got);
      REQUIRE((rs.is_ok() || rs.is(Errc::kNotFound)));
      std::optional<Page> v;
      if (rs.is_ok()) v = got;
      const auto& ok = t.allowed[l];
      REQUIRE(std::find(ok.begin(), ok.end(), v) != ok.end());
    }
    // It goes on working.
    Page fresh(store->page_size(), 0x5A);
    REQUIRE(store->write(7, fresh).is_ok());
    REQUIRE(store->sync().is_ok());
    store.reset();
    REQUIRE(mount_store(*nand, &store).is_ok());
    REQUIRE(store->read(7, got).is_ok());
    REQUIRE(got == fresh);
  }
}
