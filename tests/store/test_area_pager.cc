// test_area_pager.cc — table pages in the checkpoint area (docs/design.md §19, format 8): the
// AreaPager's round trip through the chip (counted by its NAND counters), table pages that do
// not verify, checkpoints appended to the current half and moved whole to the other when it
// is full, a power cut at every operation of both kinds of checkpoint writes, a table page
// that fails at run time, and chips of formats 7 and older areas.
//
// A PagedEngine stands in for an engine with paged tables: a PDL store (mounted by scan) and a
// PagedTable holding, for every lpn, a CRC of its contents. Its reads check the table against
// the store, so a table mounted from a checkpoint is checked against the chip's scan.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/device/emulated_nand.h"
#include "flash/image/open_store.h"
#include "flash/pdl/pdl_store.h"
#include "flash/store/area_pager.h"
#include "flash/store/checkpoint_area.h"
#include "flash/store/checkpoint_log.h"
#include "flash/store/checkpoint_view.h"
#include "flash/store/checkpointed_store.h"
#include "flash/store/paged_table.h"
#include "flash/store/superblock.h"
#include "tests/support/forwarding_store.h"
#include "tests/support/tables_engine.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using Page = std::vector<uint8_t>;
using Model = std::vector<std::optional<Page>>;

// 512-byte pages, 8 per block, 64 blocks; the last 8 are the area (two halves of 4 blocks).
constexpr uint32_t kArea = 8, kBlocks = 64, kPpb = 8;
constexpr uint32_t kSpread = 8;  // table entries per lpn: the table spans many table pages
// (The chip and parameters of tables_engine.h: 64 blocks of 8 pages, an 8-block area.)
using pdl::test::area_params;
using pdl::test::chip_geometry;
static_assert(pdl::test::kArea == kArea);

uint32_t crc_entry(std::span<const uint8_t> p) { return crc32c(p.data(), p.size()) | 1u; }

class PagedEngine final : public pdl::test::ForwardingStore {
 public:
  explicit PagedEngine(std::unique_ptr<PageStore> s)
      : ForwardingStore(std::move(s)),
        s_(&inner()),
        t_(9, uint64_t(s_->logical_pages()) * kSpread, 0, 512, 3) {}
  // The table from the store's contents (after a scan): every page dirty.
  void rebuild() {
    Page buf(s_->page_size());
    for (Lpn l = 0; l < s_->logical_pages(); l++)
      if (s_->peek(l, buf).is_ok()) t_.set(uint64_t(l) * kSpread, crc_entry(buf));
  }
  Status load(TableReader& r) {
    r.tag("PGEN");
    PDL_TRY(t_.load(r));
    return r.finish();
  }
  const PagedTableBase& table() const { return t_; }
  uint32_t entry(Lpn l) const { return t_.get(uint64_t(l) * kSpread); }

  Status save_tables(TableWriter& w) const override {
    if (s_->dirty()) return Status::error(Errc::kBusy, "dirty");
    w.tag("PGEN");
    return t_.save(w);
  }
  void tables_saved(bool durable) override { t_.saved(durable); }
  Status read(Lpn l, std::span<uint8_t> p) override {
    PDL_TRY(halted_);
    const uint32_t want = t_.get(uint64_t(l) * kSpread);
    if (!t_.status().is_ok()) return halted_ = t_.status();
    const Status st = s_->read(l, p);
    if (st.is_ok() && want != crc_entry(p))
      return Status::error(Errc::kCorrupt, "table and store disagree at lpn " + std::to_string(l));
    if (st.is(Errc::kNotFound) && want != 0)
      return Status::error(Errc::kCorrupt, "table maps unmapped lpn " + std::to_string(l));
    return st;
  }
  Status write(Lpn l, std::span<const uint8_t> p) override {
    PDL_TRY(halted_);
    PDL_TRY(s_->write(l, p));
    t_.set(uint64_t(l) * kSpread, crc_entry(p));
    return t_.status();
  }
  Status trim(Lpn l) override {
    PDL_TRY(halted_);
    PDL_TRY(s_->trim(l));
    t_.set(uint64_t(l) * kSpread, 0);
    return t_.status();
  }
  Status halted() const override { return halted_.is_ok() ? s_->halted() : halted_; }

 private:
  PageStore* s_;  // the forwarded store (ForwardingStore owns it)
  PagedTable<U32Codec> t_;
  Status halted_ = Status::ok();
};

// What mount_store does for a format-8 chip, with PagedEngine in front of a scanned PDL store:
// the log's trusted checkpoint's root read from its half, the paged table mounted through the
// pager placed there; else the table rebuilt from the scan (no pager until a checkpoint).
// `summaries`: the guard declares blocks after a checkpoint instead of making it stale (as for
// an engine that replays; PagedEngine does not, so its table is then the checkpoint's, not the
// chip's); `why` says why the checkpoint was not used.
Status open_paged(Nand& chip, std::unique_ptr<PageStore>* out, bool* from,
                  bool summaries = false, std::string* why = nullptr) {
  Superblock sb;
  PDL_TRY(read_superblock(chip, resolve_store_params, &sb));
  auto log = std::make_unique<CheckpointLog>(chip, sb);
  sb.summaries = summaries;
  PDL_TRY(log->load());
  auto view = std::make_unique<CheckpointView>(chip, sb.checkpoint_blocks, *log);
  view->arm(log->may_be_current());
  auto pager = std::make_unique<AreaPager>(chip, view->area_first(), view->area_blocks());
  std::unique_ptr<PageStore> pdl;
  PDL_TRY(PdlStore::mount(*view, sb.params, false, CommitMode::kGroup, &pdl, nullptr));
  auto eng = std::make_unique<PagedEngine>(std::move(pdl));
  *from = false;
  std::string reason = "no trusted checkpoint";
  LogEntry e;
  std::vector<uint32_t> declared;
  SummaryCursor c;
  if (log->trusted_checkpoint()) {
    e = log->newest();
    std::vector<uint8_t> stream;
    uint64_t pages = 0, n = 0;
    std::span<const uint8_t> engine, client;
    Status st = read_area(chip, view->area_first(), view->area_blocks(), e, &stream, &pages);
    if (st.is_ok())
      st = decode_stream(stream, stream_header_for(sb, chip.geometry(), e.gen), &engine, &client);
    if (st.is_ok()) {
      st = read_summaries(chip, view->area_first(), view->area_blocks(), e, &declared, &c,
                          &pages, &n);
      if (!st.is_ok()) st = Status::error(st.code(), "summary: " + std::string(st.message()));
    }
    if (st.is_ok()) {
      pager->limit_gen(e.gen);
      TableReader r(engine, pager.get());
      st = eng->load(r);
    }
    if (st.is_ok()) {
      pager->place(e.half, c);
      *from = true;
    } else {
      reason = st.to_string();
      std::unique_ptr<PageStore> again;
      PDL_TRY(PdlStore::mount(*view, sb.params, false, CommitMode::kGroup, &again, nullptr));
      eng = std::make_unique<PagedEngine>(std::move(again));
      pager = std::make_unique<AreaPager>(chip, view->area_first(), view->area_blocks());
    }
  }
  if (why) *why = *from ? "" : reason;
  if (!*from) eng->rebuild();
  auto* v = view.get();
  auto cs = std::make_unique<CheckpointedStore>(sb, std::move(log), std::move(view),
                                                std::move(eng), *from, false, summaries,
                                                std::move(pager));
  if (*from && summaries && !c.later)
    v->start_summaries(e.gen, &cs->pager().cursor(), declared,
                       replay_budget(0, chip.geometry(), e.pages));
  *out = std::move(cs);
  return Status::ok();
}

std::unique_ptr<EmulatedNand> formatted_chip() {
  auto chip = pdl::test::make_ram_nand(chip_geometry());
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*chip, area_params(), &s, CommitMode::kGroup).is_ok());
  return chip;
}

// `n` random writes and a trim, then a sync; `pending` gets what the sync acknowledges.
Status step(PageStore& s, Model* pending, std::mt19937_64& rng, int n) {
  for (int i = 0; i < n; i++) {
    const Lpn l = Lpn(rng() % s.logical_pages());
    const Page p = pdl::test::random_page(rng, s.page_size());
    PDL_TRY(s.write(l, p));
    (*pending)[l] = p;
  }
  const Lpn t = Lpn(rng() % s.logical_pages());
  PDL_TRY(s.trim(t));
  (*pending)[t].reset();
  return s.sync();
}

// One checkpoint of table `t` through `pager` (gen, half, full or incremental): its pages
// saved, its root written, made durable. The entry, the root's bytes and the table pages the
// save programmed.
struct Saved {
  LogEntry e;
  std::vector<uint8_t> root;
  uint64_t written = 0;
};
Saved save_through(AreaPager& pager, PagedTableBase& t, uint64_t gen, uint32_t half, bool full) {
  Saved out;
  pager.begin(gen, half, full);
  CHECK(pager.relocate_all() == full);
  TableWriter w;
  w.set_pager(&pager);
  REQUIRE(t.save(w).is_ok());
  out.written = pager.written();
  REQUIRE(pager.write_root(w.data(), &out.e).is_ok());
  pager.finish(true);
  t.saved(true);
  out.root = w.data();
  return out;
}

// The cases' common start on `chip` (formatted): opened (with `summaries` or not), `n` random
// writes and a trim synced, a checkpoint written; *model the contents it acknowledged.
void checkpoint_after_step(EmulatedNand& chip, Model* model, std::mt19937_64& rng, int n,
                           bool summaries = false) {
  std::unique_ptr<PageStore> s;
  bool from = false;
  REQUIRE(open_paged(chip, &s, &from, summaries).is_ok());
  Model m(s->logical_pages(), std::nullopt);
  REQUIRE(step(*s, &m, rng, n).is_ok());
  *model = m;
  REQUIRE(s->write_checkpoint({}).is_ok());
}

// The cut campaigns' rounds, after the power cut is armed: up to 8 of a step (3 writes, 50
// every third round) and a checkpoint (`before` it, `written` once it is), until the power
// goes. *acked follows the acknowledged syncs, *pending the step the cut interrupted.
struct CutRounds {
  bool cut = false, in_checkpoint = false, was_full = false;
};
CutRounds checkpoint_rounds(PageStore& s, Model* acked, Model* pending, std::mt19937_64& wr,
                            const std::function<void()>& before = [] {},
                            const std::function<void()>& written = [] {}) {
  CutRounds run;
  for (int round = 0; round < 8 && !run.cut; round++) {
    *pending = *acked;
    if (!step(s, pending, wr, round % 3 == 2 ? 50 : 3).is_ok()) {
      run.cut = true;
      break;
    }
    *acked = *pending;
    auto& cs = static_cast<CheckpointedStore&>(s);
    before();
    const Status st = cs.write_checkpoint({});
    if (st.is_ok()) {
      written();
      continue;
    }
    REQUIRE(st.is(Errc::kPowerCut));
    run.cut = run.in_checkpoint = true;
    run.was_full = cs.pager().last_full();
  }
  return run;
}

// Every lpn reads as `model` (PagedEngine's reads also check its table against the store).
bool reads_as(PageStore& s, const Model& model) {
  Page got(s.page_size());
  for (Lpn l = 0; l < model.size(); l++) {
    const Status st = s.read(l, got);
    if (model[l] ? !st.is_ok() || got != *model[l] : !st.is(Errc::kNotFound)) return false;
  }
  return true;
}

void smash(EmulatedNand& chip, Ppa ppa) {
  for (uint32_t i = 0; i < 64; i++) REQUIRE(chip.flip_stored_bit(ppa, i * 7, i % 8).is_ok());
}

LogEntry newest_entry(Nand& chip) {
  Superblock sb;
  REQUIRE(read_superblock(chip, resolve_store_params, &sb).is_ok());
  CheckpointLog log(chip, sb);
  REQUIRE(log.load().is_ok());
  REQUIRE(log.has_entry());
  return log.newest();
}

// The area pages holding whole table pages.
std::vector<Ppa> table_pages(EmulatedNand& chip) {
  std::vector<Ppa> out;
  Page d(512), sp(32);
  for (uint32_t b = kBlocks - kArea; b < kBlocks; b++)
    for (uint32_t p = 0; p < kPpb; p++) {
      const Ppa ppa = Ppa(b * kPpb + p);
      uint64_t gen;
      uint32_t t, i;
      if (chip.read(ppa, d, sp).is_ok() && table_page_whole(d, sp, &gen, &t, &i))
        out.push_back(ppa);
    }
  return out;
}

}  // namespace

TEST_CASE("an area pager round-trips table pages and a root through the chip, which counts "
          "every load",
          "[area_pager]") {
  auto chip = pdl::test::make_ram_nand(chip_geometry());
  const uint32_t first = kBlocks - kArea;
  AreaPager pager(*chip, first, kArea);
  PagedTable<U32Codec> t(5, 1500, 0, 512, 2);  // 12 table pages
  for (uint64_t i = 0; i < t.size(); i++) t.set(i, uint32_t(i * 7 + 1));
  const NandCounters c0 = chip->counters();
  const Saved s1 = save_through(pager, t, 1, 0, true);
  LogEntry e = s1.e;
  const NandCounters c1 = chip->counters();
  CHECK(c1.programs - c0.programs == 12 + e.pages);
  CHECK(c1.erases - c0.erases == (12 + e.pages + kPpb - 1) / kPpb);
  CHECK(e.half == 0);
  CHECK(e.root_page == 12);
  CHECK(pager.placed());
  // The root reads back from where the entry says.
  std::vector<uint8_t> root;
  uint64_t pages = 0;
  e.kind = LogKind::kCheckpoint;
  e.gen = 1;
  REQUIRE(read_area(*chip, first, kArea, e, &root, &pages).is_ok());
  CHECK(root == s1.root);
  // An entry naming a place outside its half, or another half, is refused before any read.
  using Edit = void (*)(LogEntry*);
  for (Edit bad : std::initializer_list<Edit>{
           [](LogEntry* x) { x->half = 2; }, [](LogEntry* x) { x->half = 1; },
           [](LogEntry* x) { x->root_page = kArea * kPpb; },
           [](LogEntry* x) { x->pages = kArea * kPpb; }, [](LogEntry* x) { x->area_first = 0; },
           [](LogEntry* x) { x->stream_bytes += 512; }}) {
    LogEntry x = e;
    bad(&x);
    std::vector<uint8_t> got;
    CHECK(read_area(*chip, first, kArea, x, &got, &pages).code() == Errc::kCorrupt);
  }
  // A table mounted from it loads its pages on demand; every load is a page read of the chip.
  TableReader r(root, &pager);
  PagedTable<U32Codec> m(5, 1500, 0, 512, 2);
  REQUIRE(m.load(r).is_ok());
  const uint64_t reads0 = chip->counters().page_reads, loads0 = pager.loads();
  for (uint64_t i = 0; i < m.size(); i += 37) REQUIRE(m.get(i) == uint32_t(i * 7 + 1));
  CHECK(pager.loads() > loads0);
  CHECK(chip->counters().page_reads - reads0 == pager.loads() - loads0);
  // An incremental save appends after the root: only the dirty page, in the same half.
  m.set(3, 99);
  const Saved s2 = save_through(pager, m, 2, pager.half(), false);
  CHECK(s2.written == 1);
  CHECK(s2.e.half == 0);
  CHECK(s2.e.root_page == e.root_page + e.pages + 1);
  // A full save relocates every homed page into the other half.
  const Saved s3 = save_through(pager, m, 3, 1, true);
  CHECK(s3.written == 12);
  CHECK(s3.e.half == 1);
  CHECK(pager.half() == 1);
  for (uint64_t i = 0; i < m.size(); i += 11)
    REQUIRE(m.get(i) == (i == 3 ? 99u : uint32_t(i * 7 + 1)));
  REQUIRE(m.status().is_ok());
}

TEST_CASE("a table page that does not verify is an error naming it, never its bytes",
          "[area_pager]") {
  auto chip = pdl::test::make_ram_nand(chip_geometry());
  const uint32_t first = kBlocks - kArea;
  AreaPager pager(*chip, first, kArea);
  PagedTable<U32Codec> t(5, 400, 0, 512, 1);  // 4 table pages at area pages 0..3
  for (uint64_t i = 0; i < t.size(); i++) t.set(i, uint32_t(i + 1));
  pager.begin(1, 0, true);
  TableWriter w;
  w.set_pager(&pager);
  REQUIRE(t.save(w).is_ok());
  LogEntry e;
  REQUIRE(pager.write_root(w.data(), &e).is_ok());
  pager.finish(true);
  t.saved(true);
  Page out(512);
  REQUIRE(pager.load(2, 5, 2, out).is_ok());
  CHECK(le::get32(out.data()) == 2 * 128 + 1);
  int hooked = 0;
  pager.set_on_load_error([&] { hooked++; });
  SECTION("another table or index at the home") {
    CHECK(pager.load(2, 6, 2, out).code() == Errc::kCorrupt);
    const Status st = pager.load(2, 5, 1, out);
    CHECK(st.code() == Errc::kCorrupt);
    CHECK(std::string(st.message()).find("table page 5/1 at area page 2") != std::string::npos);
    CHECK(hooked == 2);
  }
  SECTION("a page of a later checkpoint than the root naming it") {
    pager.limit_gen(0);
    CHECK(pager.load(2, 5, 2, out).code() == Errc::kCorrupt);
  }
  SECTION("an erased page and a home outside the area") {
    CHECK(pager.load(7, 5, 0, out).code() == Errc::kCorrupt);
    CHECK(pager.load(kArea * kPpb, 5, 0, out).code() == Errc::kCorrupt);
  }
  SECTION("its data smashed beyond the ECC") {
    smash(*chip, Ppa(first * kPpb + 1));
    std::fill(out.begin(), out.end(), 0xAB);
    CHECK(pager.load(1, 5, 1, out).code() == Errc::kCorrupt);
    CHECK(out[0] == 0xAB);  // nothing handed out
    // Through the table: the fill value and the error, never the bytes.
    TableReader r(w.data(), &pager);
    PagedTable<U32Codec> m(5, 400, 0, 512, 1);
    REQUIRE(m.load(r).is_ok());
    CHECK(m.get(0) == 1);
    CHECK(m.get(128) == 0);
    CHECK(m.status().code() == Errc::kCorrupt);
  }
  SECTION("a page torn by a power cut while it was programmed") {
    PagedTable<U32Codec> u(8, 200, 0, 512, 1);
    u.set(0, 5);
    pager.begin(2, 0, false);
    TableWriter w2;
    w2.set_pager(&pager);
    chip->cut_power_after(0, Tear::kPrefix, 3);
    CHECK(u.save(w2).code() == Errc::kPowerCut);
    u.saved(false);
    pager.finish(false);
    chip->restore_power();
    CHECK(pager.load(e.root_page + e.pages, 8, 0, out).code() == Errc::kCorrupt);
  }
}

TEST_CASE("checkpoints append to their half until it is full, then move whole to the other, "
          "and every mount reads the tables the chip holds",
          "[area_pager]") {
  auto chip = formatted_chip();
  auto rng = pdl::test::seeded_rng(23);
  std::unique_ptr<PageStore> s;
  bool from = false;
  REQUIRE(open_paged(*chip, &s, &from).is_ok());
  CHECK_FALSE(from);
  Model model(s->logical_pages());
  int full = 0, appended = 0;
  LogEntry prev;
  for (int round = 0; round < 14; round++) {
    INFO("round " << round);
    Model m = model;
    REQUIRE(step(*s, &m, rng, round % 4 == 3 ? 60 : 4).is_ok());
    model = m;
    REQUIRE(s->write_checkpoint({}).is_ok());
    s.reset();
    const LogEntry e = newest_entry(*chip);
    REQUIRE(e.kind == LogKind::kCheckpoint);
    if (round > 0) (e.half == prev.half ? appended : full)++;
    if (round > 0 && e.half == prev.half) CHECK(e.root_page > prev.root_page);
    prev = e;
    REQUIRE(open_paged(*chip, &s, &from).is_ok());
    REQUIRE(from);
    CHECK(reads_as(*s, model));
    const PagedTableStats ts = static_cast<PagedEngine&>(
        static_cast<CheckpointedStore&>(*s).engine()).table().stats();
    CHECK(ts.resident <= 3 + ts.dirty);
  }
  WARN(appended << " checkpoints appended to their half, " << full << " into the other");
  CHECK(appended > 0);
  CHECK(full > 0);
}

TEST_CASE("a power cut at any operation of an incremental or a full checkpoint leaves the "
          "previous checkpoint whole or the new one complete",
          "[area_pager]") {
  auto base = formatted_chip();
  auto rng = pdl::test::seeded_rng(31);
  Model model;
  checkpoint_after_step(*base, &model, rng, 40);
  uint64_t cuts_in_full = 0, cuts_in_incremental = 0, cuts = 0;
  for (uint64_t k = 0;; k++) {
    INFO("cut at operation " << k);
    auto chip = base->clone();
    std::unique_ptr<PageStore> s;
    bool from = false;
    REQUIRE(open_paged(*chip, &s, &from).is_ok());
    REQUIRE(from);
    chip->cut_power_after(k, k % 3 == 0 ? Tear::kNone : k % 3 == 1 ? Tear::kPrefix
                                                                     : Tear::kRandomBits, k);
    Model acked = model, pending = model;
    auto wr = pdl::test::seeded_rng(5);
    const CutRounds run = checkpoint_rounds(*s, &acked, &pending, wr);
    const bool cut = run.cut, in_checkpoint = run.in_checkpoint, was_full = run.was_full;
    s.reset();
    chip->restore_power();
    if (!cut) break;
    cuts++;
    Superblock sb;
    REQUIRE(read_superblock(*chip, resolve_store_params, &sb).is_ok());
    CheckpointLog log(*chip, sb);
    REQUIRE(log.load().is_ok());
    REQUIRE(open_paged(*chip, &s, &from).is_ok());
    // A checkpoint the log trusts mounts: no write touched its root or its table pages (the
    // stale guard made it untrusted before the store changed; a cut checkpoint write leaves
    // it, or the new one once its entry is durable).
    if (log.trusted_checkpoint()) CHECK(from);
    if (in_checkpoint) (was_full ? cuts_in_full : cuts_in_incremental)++;
    // The table (from a checkpoint or rebuilt) agrees with the scanned store: reads check it;
    // contents: the last acknowledged sync's, or the cut one's if its commit was durable.
    CHECK((reads_as(*s, acked) || reads_as(*s, pending)));
    REQUIRE(k < 4000);
  }
  WARN(cuts << " power cuts, " << cuts_in_incremental << " inside incremental and "
            << cuts_in_full << " inside full checkpoint writes");
  CHECK(cuts_in_incremental > 0);
  CHECK(cuts_in_full > 0);
}

// The table a PagedEngine holds for contents `m`.
std::vector<uint32_t> table_of(const Model& m) {
  std::vector<uint32_t> t(m.size(), 0);
  for (size_t l = 0; l < m.size(); l++)
    if (m[l]) t[l] = crc_entry(*m[l]);
  return t;
}

TEST_CASE("with summaries, a power cut at any operation of a checkpoint write leaves the "
          "previous checkpoint and its summaries mountable, or the new one complete",
          "[area_pager]") {
  auto base = formatted_chip();
  auto rng = pdl::test::seeded_rng(37);
  Model model;
  checkpoint_after_step(*base, &model, rng, 40, true);
  const uint64_t gen0 = newest_entry(*base).gen;
  uint64_t cuts = 0, in_full = 0, in_incremental = 0, old_kept = 0, new_taken = 0;
  for (uint64_t k = 0;; k++) {
    INFO("cut at operation " << k);
    auto chip = base->clone();
    std::unique_ptr<PageStore> s;
    bool from = false;
    REQUIRE(open_paged(*chip, &s, &from, true).is_ok());
    REQUIRE(from);
    std::map<uint64_t, std::vector<uint32_t>> tables = {{gen0, table_of(model)}};
    uint64_t gen = gen0;
    chip->cut_power_after(k, k % 3 == 0 ? Tear::kNone : k % 3 == 1 ? Tear::kPrefix
                                                                     : Tear::kRandomBits, k);
    Model acked = model, pending;
    auto wr = pdl::test::seeded_rng(6);
    const CutRounds run = checkpoint_rounds(
        *s, &acked, &pending, wr,
        // (the new gen's table, in case its entry becomes durable just before a cut)
        [&] { tables[gen + 1] = table_of(acked); }, [&] { gen++; });
    const bool cut = run.cut, in_checkpoint = run.in_checkpoint, was_full = run.was_full;
    s.reset();
    chip->restore_power();
    if (!cut) break;
    cuts++;
    Superblock sb;
    REQUIRE(read_superblock(*chip, resolve_store_params, &sb).is_ok());
    CheckpointLog log(*chip, sb);
    REQUIRE(log.load().is_ok());
    std::string why;
    REQUIRE(open_paged(*chip, &s, &from, true, &why).is_ok());
    INFO(why);
    // Summaries keep the log trusting the checkpoint across changes: it mounts, unless the
    // page right after its summaries was torn (a torn summary and a decayed one look alike:
    // the reader refuses both, docs/design.md §17).
    if (log.trusted_checkpoint())
      CHECK((from || why.find("summary") != std::string::npos));
    if (from) {
      const uint64_t g = log.newest().gen;
      REQUIRE(tables.count(g));
      const auto& want = tables[g];
      auto& eng = static_cast<PagedEngine&>(static_cast<CheckpointedStore&>(*s).engine());
      bool same = true;
      for (Lpn l = 0; l < want.size() && same; l++) same = eng.entry(l) == want[l];
      CHECK(same);
      REQUIRE(eng.table().status().is_ok());
      if (in_checkpoint) (g == gen ? old_kept : new_taken)++;
    }
    if (in_checkpoint) (was_full ? in_full : in_incremental)++;
    REQUIRE(k < 4000);
  }
  WARN(cuts << " power cuts, " << in_incremental << " inside incremental and " << in_full
            << " inside full checkpoint writes; after them " << old_kept
            << " mounts from the previous checkpoint, " << new_taken << " from the new one");
  CHECK(in_incremental > 0);
  CHECK(in_full > 0);
  CHECK(old_kept > 0);
}

TEST_CASE("a failing page in the current half sends the checkpoint whole to the other half, "
          "which retires its own failing block; nothing referenced is marked bad",
          "[area_pager]") {
  auto chip = formatted_chip();
  auto rng = pdl::test::seeded_rng(53);
  std::unique_ptr<PageStore> s;
  bool from = false;
  REQUIRE(open_paged(*chip, &s, &from).is_ok());
  Model model(s->logical_pages());
  Model m = model;
  REQUIRE(step(*s, &m, rng, 6).is_ok());
  model = m;
  REQUIRE(s->write_checkpoint({}).is_ok());  // full into half 0, its first block
  s.reset();
  const LogEntry e1 = newest_entry(*chip);
  REQUIRE(e1.half == 0);
  const uint32_t cur = kBlocks - kArea + e1.root_page / kPpb;  // holds the root: referenced
  const uint32_t other = kBlocks - kArea + kArea / 2;         // half 1's first block
  REQUIRE(open_paged(*chip, &s, &from).is_ok());
  REQUIRE(from);
  chip->fail_block(cur, EmulatedNand::FailOn::kProgram);
  chip->fail_block(other, EmulatedNand::FailOn::kBoth);
  m = model;
  REQUIRE(step(*s, &m, rng, 6).is_ok());
  model = m;
  REQUIRE(s->write_checkpoint({}).is_ok());
  auto& cs = static_cast<CheckpointedStore&>(*s);
  CHECK(cs.full_checkpoints() == 1);
  s.reset();
  CHECK_FALSE(chip->is_bad(cur));  // the old checkpoint's block: left, not retired
  CHECK(chip->is_bad(other));      // a block of the half being written: retired
  const LogEntry e2 = newest_entry(*chip);
  CHECK(e2.half == 1);
  CHECK(e2.root_page / kPpb > kArea / 2);
  REQUIRE(open_paged(*chip, &s, &from).is_ok());
  CHECK(from);
  CHECK(reads_as(*s, model));
}

TEST_CASE("a table page that fails to load halts the engine with the error, and the next mount "
          "does not trust its checkpoint",
          "[area_pager]") {
  auto chip = formatted_chip();
  auto rng = pdl::test::seeded_rng(41);
  Model model;
  checkpoint_after_step(*chip, &model, rng, 80);
  for (Ppa p : table_pages(*chip)) smash(*chip, p);
  std::unique_ptr<PageStore> s;
  bool from = false;
  REQUIRE(open_paged(*chip, &s, &from).is_ok());
  REQUIRE(from);  // (the directory is in the root: no table page read yet)
  Page got(512);
  const Status st = s->read(0, got);
  CHECK(st.code() == Errc::kCorrupt);
  CHECK(std::string(st.message()).find("table page 9/") != std::string::npos);
  CHECK(s->halted().code() == Errc::kCorrupt);
  s.reset();
  CHECK(newest_entry(*chip).kind == LogKind::kStale);
  // A real mount scans, and every acknowledged page is there.
  MountReport r;
  REQUIRE(mount_store(*chip, &s, &r, CommitMode::kGroup).is_ok());
  CHECK_FALSE(r.from_checkpoint);
  CHECK(r.scan_reason == "changed since the checkpoint");
  CHECK(reads_as(*s, model));
}

TEST_CASE("every engine checkpoints through the root path: one without paged tables writes no "
          "table page, and each mounts from its checkpoint",
          "[area_pager]") {
  struct Case {
    const char* name;
    Method method;
    FtlKind ftl;
    CommitMode mode;
    bool paged_possible;  // (PDL's tables may be paged)
  };
  const Case cases[] = {{"pdl", Method::kPdl, FtlKind::kNone, CommitMode::kGroup, true},
                        {"ipl", Method::kIpl, FtlKind::kNone, CommitMode::kGroup, false},
                        {"stablebuffer", Method::kStableBuffer, FtlKind::kPage,
                         CommitMode::kPerPage, true},
                        {"bast", Method::kFtl, FtlKind::kBast, CommitMode::kPerPage, false}};
  for (const Case& c : cases) {
    INFO(c.name);
    auto chip = pdl::test::make_ram_nand(chip_geometry());
    StoreParams p = area_params();
    p.method = c.method;
    p.ftl = c.ftl;
    if (c.method != Method::kPdl) p.max_differential = 0;
    std::unique_ptr<PageStore> s;
    REQUIRE(format_store(*chip, p, &s, c.mode).is_ok());
    auto rng = pdl::test::seeded_rng(43);
    Model model(s->logical_pages());
    for (int i = 0; i < 3; i++) {
      Model m = model;
      REQUIRE(step(*s, &m, rng, 20).is_ok());
      model = m;
      REQUIRE(s->write_checkpoint({}).is_ok());
      s.reset();
      if (!c.paged_possible) CHECK(table_pages(*chip).empty());
      MountReport r;
      REQUIRE(mount_store(*chip, &s, &r, c.mode).is_ok());
      INFO(r.scan_reason);
      CHECK(r.from_checkpoint);
      CHECK(reads_as(*s, model));
    }
  }
}

TEST_CASE("a chip of superblock format 7 mounts by scan, writes no checkpoint, and its first "
          "change makes the old checkpoint unreadable to an older pdl",
          "[area_pager]") {
  auto chip = formatted_chip();
  Superblock sb;
  REQUIRE(read_superblock(*chip, resolve_store_params, &sb).is_ok());
  sb.halves = false;  // format 7, as an older pdl wrote it
  REQUIRE(rewrite_superblock(*chip, sb).is_ok());
  Superblock again;
  REQUIRE(read_superblock(*chip, resolve_store_params, &again).is_ok());
  CHECK(superblock_stored_version(again) == kSuperblockSummaries);
  std::unique_ptr<PageStore> s;
  MountReport r;
  REQUIRE(mount_store(*chip, &s, &r, CommitMode::kGroup).is_ok());
  CHECK_FALSE(r.from_checkpoint);
  CHECK(r.scan_reason.find("superblock format 7") == 0);
  const uint32_t first_area = kBlocks - kArea;
  const uint32_t erases = chip->erase_count(first_area);
  auto rng = pdl::test::seeded_rng(47);
  Model model(s->logical_pages());
  Model m = model;
  REQUIRE(step(*s, &m, rng, 5).is_ok());
  model = m;
  CHECK(chip->erase_count(first_area) == erases + 1);  // where a format-7 stream begins
  CHECK(s->write_checkpoint({}).code() == Errc::kUnsupported);
  s.reset();
  REQUIRE(mount_store(*chip, &s, &r, CommitMode::kGroup).is_ok());
  CHECK_FALSE(r.from_checkpoint);
  CHECK(reads_as(*s, model));
}

TEST_CASE("an area must be two halves of at least a block, and the default one holds every "
          "engine's tables",
          "[area_pager]") {
  StoreParams p = area_params();
  p.checkpoint_blocks = 1;
  uint32_t area = 0;
  CHECK(checkpoint_area_for(p, chip_geometry(), &area).code() == Errc::kInvalidArgument);
  // 1 GiB of 2 KiB pages, 64 per block: a half holds the paged tables at their table-page
  // size and the root bound, plus the summary reserve and bad blocks.
  Geometry g = pdl::test::geometry(2048, 64, 64, 8192);
  const uint64_t lpns = 8192ull * 64 * 9 / 10;
  const uint32_t half = checkpoint_half_blocks(g, lpns);
  const uint64_t paged_pages = (lpns + 169) / 170 + (8192ull * 64 + 511) / 512 +
                               (8192ull * 64 + 1023) / 1024;
  CHECK(uint64_t(half) * 64 >= paged_pages + (16 * lpns + 32 * 8192 + 131072) / 2048 + 32);
  CHECK(checkpoint_area_blocks(g, lpns) == 2 * half);
  WARN("1 GiB chip of 2 KiB pages: area " << 2 * half << " of 8192 blocks ("
                                           << 100.0 * 2 * half / 8192 << " %)");
}
