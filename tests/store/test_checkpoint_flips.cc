// test_checkpoint_flips.cc — the bit-flip campaign over the checkpoint (docs/reliability.md,
// "The checkpoint at clean unmount"): stored bit flips (the media changed for good, below the
// ECC: EmulatedNand::flip_stored_bit) in every programmed page of the checkpoint log's blocks
// (superblock copies, log entries) and of the area (stream pages, summary pages, and any kind
// of page the area holds: the pages are found on the chip, not listed by kind), one page at a
// time: a single bit of the data, a single bit of the spare header, and several random bits
// (PDL_CKPT_FLIP_SEEDS seeds, default 16, of 2, 8 and 64 bits). Over PDL, OPU and the page FTL
// (replay) and IPL (stale + scan), on a chip after a clean checkpoint and on one cut after a
// periodic checkpoint and summaries. Every mount must read exactly the acknowledged contents — from
// the checkpoint, or by a scan whose report names why — or refuse with a message: never wrong
// data, never a crash. PDL_EXHAUSTIVE_STRIDE=s (the sanitizer run): every page, every s-th
// pattern.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "flash/device/emulated_nand.h"
#include "flash/image/open_store.h"
#include "flash/store/checkpoint_view.h"
#include "flash/store/checkpointed_store.h"
#include "tests/support/checkpoint_rig.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using pdl::test::CkModel;
using pdl::test::kCkAreaBlocks;

uint64_t flip_seeds() {
  const char* e = std::getenv("PDL_CKPT_FLIP_SEEDS");
  return e && *e ? std::strtoull(e, nullptr, 10) : 16;
}

struct Outcome {
  uint64_t mounts = 0, from_checkpoint = 0, scanned = 0, refused = 0;
  uint64_t table_halts = 0;  // mounted from the checkpoint, then a table page failed its load
  std::map<std::string, uint64_t> kinds;    // pages flipped, by what they hold (for the report)
  std::map<std::string, uint64_t> reasons;  // scan reasons and refusals, by their first words
};

// Mount `chip` (a copy with flips) and require the acknowledged contents or a refusal.
void mount_and_check(EmulatedNand& chip, CommitMode mode, const CkModel& acked, Outcome* o) {
  std::unique_ptr<PageStore> s;
  MountReport r;
  const Status st = mount_store(chip, &s, &r, mode);
  o->mounts++;
  if (!st.is_ok()) {  // refused: it says why, and it is not a crash of the harness
    INFO(st.to_string());
    REQUIRE_FALSE(std::string(st.message()).empty());
    o->refused++;
    o->reasons["refused: " + std::string(st.message()).substr(0, 40)]++;
    return;
  }
  INFO("scan reason: " << r.scan_reason);
  if (const Status cst = s->check(); r.from_checkpoint && !cst.is_ok()) {
    // A table page (design.md §18) is read at its first use, not at the mount: one that does
    // not verify halts the store with kCorrupt — every read gives its acknowledged page or
    // an error, never other bytes — and the next mount does not trust the checkpoint.
    INFO(cst.to_string());
    REQUIRE(cst.is(Errc::kCorrupt));
    pdl::test::CkPage got(s->page_size());
    for (Lpn l = 0; l < acked.size(); l++) {
      const Status rst = s->read(l, got);
      if (rst.is_ok()) REQUIRE((acked[l] && got == *acked[l]));
      else if (!rst.is(Errc::kNotFound) || acked[l]) REQUIRE(rst.is(Errc::kCorrupt));
    }
    s.reset();
    MountReport r2;
    REQUIRE(mount_store(chip, &s, &r2, mode).is_ok());
    INFO("after the halt, scan reason: " << r2.scan_reason);
    REQUIRE_FALSE(r2.from_checkpoint);
    REQUIRE(s->check().is_ok());
    REQUIRE(pdl::test::ck_reads_as(*s, acked));
    o->table_halts++;
    o->reasons["a table page failed its load; the next mount scanned"]++;
    return;
  } else {
    REQUIRE(cst.is_ok());
  }
  REQUIRE(pdl::test::ck_reads_as(*s, acked));
  if (r.from_checkpoint) {
    o->from_checkpoint++;
  } else {
    REQUIRE_FALSE(r.scan_reason.empty());
    o->scanned++;
    o->reasons[r.scan_reason.substr(0, r.scan_reason.find(':'))]++;
  }
}

// What a programmed page of the log's blocks or the area holds, for the report only (the
// campaign flips every programmed page whatever it is): docs/format.md §14.
std::string page_kind(EmulatedNand& chip, Ppa ppa) {
  const Geometry& g = chip.geometry();
  if (ppa / g.pages_per_block < kSuperblockBlocks)
    return ppa % g.pages_per_block == 0 ? "superblock copy" : "log entry";
  std::vector<uint8_t> data(g.page_data), spare(g.page_spare);
  if (!chip.read(ppa, data, spare).is_ok()) return "unreadable";
  if (std::memcmp(spare.data() + 1, "CKPT", 4) == 0) return "stream page";
  if (std::memcmp(spare.data() + 1, "CKSM", 4) == 0) return "summary page";
  if (std::memcmp(spare.data() + 1, "CKTP", 4) == 0) return "table page";
  return "other area page";
}

// Flip, one programmed checkpoint page at a time, and mount each copy.
void flip_campaign(EmulatedNand& base, CommitMode mode, const CkModel& acked, Outcome* o,
                   uint64_t* pages) {
  const Geometry& g = base.geometry();
  const uint64_t stride = pdl::test::exhaustive_stride();
  const std::vector<Ppa> targets = pdl::test::checkpoint_pages(base, kCkAreaBlocks);
  REQUIRE(targets.size() > 4);
  const uint32_t raw = g.page_data + g.page_spare;
  for (size_t i = 0; i < targets.size(); i++) {
    const Ppa ppa = targets[i];
    INFO("page " << ppa << " (block " << ppa / g.pages_per_block << ")");
    (*pages)++;
    o->kinds[page_kind(base, ppa)]++;
    std::mt19937_64 rng(0xf11b + ppa);
    // A single bit of the data, a single bit of the spare header (bytes 1..31: byte 0 is the
    // bad-block marker, read by majority elsewhere), then several random bits.
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> patterns;
    patterns.push_back({{uint32_t(rng() % g.page_data), uint32_t(rng() % 8)}});
    patterns.push_back({{g.page_data + 1 + uint32_t(rng() % 31), uint32_t(rng() % 8)}});
    for (uint64_t seed = 0; seed < flip_seeds(); seed++)
      for (const uint32_t n : {2u, 8u, 64u}) {
        std::vector<std::pair<uint32_t, uint32_t>> bits;
        for (uint32_t b = 0; b < n; b++)
          bits.push_back({uint32_t(rng() % raw), uint32_t(rng() % 8)});
        patterns.push_back(bits);
      }
    for (size_t p = 0; p < patterns.size(); p++) {
      if ((p + i) % stride) continue;  // (sampled: every page, a rotating share of patterns)
      INFO("pattern " << p << " (" << patterns[p].size() << " bits)");
      auto chip = base.clone();
      for (const auto& [byte, bit] : patterns[p])
        REQUIRE(chip->flip_stored_bit(ppa, byte, bit).is_ok());
      mount_and_check(*chip, mode, acked, o);
    }
  }
}

}  // namespace

TEST_CASE("stored bit flips in any checkpoint page never make a mount read wrong data",
          "[checkpoint][flips]") {
  const auto& configs = pdl::test::ck_configs();
  const pdl::test::CkConfig c = configs[GENERATE(range(size_t(0), pdl::test::ck_configs().size()))];
  INFO("config " << c.name);
  auto rng = pdl::test::seeded_rng(0xb17 + uint64_t(c.method));
  CkModel model;
  auto clean = pdl::test::checkpointed_chip(c, &model, rng);
  Outcome o;
  uint64_t pages = 0;
  {
    INFO("after a clean checkpoint");
    // Unflipped, the chip mounts from its checkpoint: the flips are what makes any scan.
    auto copy = clean->clone();
    std::unique_ptr<PageStore> s;
    MountReport r;
    REQUIRE(mount_store(*copy, &s, &r, c.mode).is_ok());
    REQUIRE(r.from_checkpoint);
    flip_campaign(*clean, c.mode, model, &o, &pages);
  }
  {
    INFO("after a periodic checkpoint, summaries and a power cut");
    auto chip = clean->clone();
    StoreParams small_budget;
    small_budget.replay_blocks = 12;
    std::unique_ptr<PageStore> s;
    REQUIRE(mount_store(*chip, &s, nullptr, c.mode, &small_budget).is_ok());
    CkModel acked = model;
    // Steps until a periodic checkpoint was written and blocks were declared after it.
    auto& cs = static_cast<CheckpointedStore&>(*s);
    auto& view = static_cast<CheckpointView&>(cs.nand());
    for (int i = 0; i < 60; i++) {
      REQUIRE(pdl::test::ck_step(*s, &acked, rng, 3).is_ok());
      if (cs.periodic_checkpoints() > 0 && view.summaries() && view.declared_blocks() > 0)
        break;
    }
    REQUIRE(cs.periodic_checkpoints() > 0);
    REQUIRE(view.summaries());
    s.reset();  // no close: a power cut after the last acknowledged sync
    MountReport r;
    {
      auto copy = chip->clone();
      REQUIRE(mount_store(*copy, &s, &r, c.mode).is_ok());
      CHECK(r.from_checkpoint);
      s.reset();
    }
    flip_campaign(*chip, c.mode, acked, &o, &pages);
  }
  std::string kinds, reasons;
  for (const auto& [kind, n] : o.kinds)
    kinds += (kinds.empty() ? "" : ", ") + kind + " " + std::to_string(n);
  for (const auto& [why, n] : o.reasons) reasons += "; " + why + ": " + std::to_string(n);
  WARN(c.name << ": " << pages << " checkpoint pages flipped (" << kinds << "), " << o.mounts
              << " mounts: " << o.from_checkpoint << " from the checkpoint, " << o.scanned
              << " by scan, " << o.table_halts
              << " from the checkpoint until a table page failed its load (halted; the next "
              << "mount scanned), " << o.refused << " refused, 0 wrong" << reasons);
  CHECK(o.scanned > 0);
  CHECK(o.kinds["stream page"] > 0);
  CHECK(o.kinds["log entry"] > 0);
  CHECK(o.kinds["summary page"] > 0);
}
