// test_bit_flips.cc — every page-update method reading through bit flips (docs/reliability.md's
// I5: a read returns the right bytes or an error, never wrong bytes).
//
// For each store configuration (store_matrix.h), a store filled with random pages and updates
// (so that base pages, differentials, log sectors and GC copies all exist) is read with the
// emulator's bit flips on (emulated_nand.h):
//   1. flips within the ECC strength t, on half of all sectors read, during reads and further
//      writes, syncs and garbage collection: every read right, nothing reported;
//   2. flips beyond t, reported as uncorrectable, on 5 % of sectors: every read right or
//      kCorrupt (retried reads make most succeed), the store never poisoned, never wrong bytes;
//   3. the same flips miscorrected (wrong bytes handed back as good — only the engine's CRCs
//      can tell): again right or kCorrupt, never wrong;
//   4. a mount (crash recovery's full scan) with rare miscorrections: every page intact.
// Reads per configuration in phase 1: PDL_FLIP_READS (default 20,000; phases 2 and 3 read a
// quarter as many). The totals are printed (docs/reliability.md).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include <catch2/catch.hpp>

#include "flash/image/open_store.h"
#include "flash/device/emulated_nand.h"
#include "flash/store/page_store.h"
#include "flash/store/spare.h"
#include "tests/support/store_matrix.h"
#include "tests/support/store_rig.h"
#include "tests/support/test_util.h"

using namespace pdl;
using pdl::test::StoreConfig;

namespace {

using Page = std::vector<uint8_t>;

uint64_t reads_per_config() {
  const char* e = std::getenv("PDL_FLIP_READS");
  return e ? std::strtoull(e, nullptr, 10) : 20000;
}

struct Totals {
  uint64_t reads = 0, failed = 0, corrected_bits = 0, uncorrectable = 0;
};
Totals g_within, g_reported, g_miscorrected;

using Rig = test::StoreRig;

// Change a few runs of a page (differentials, log records) or replace it whole.
void update(Rig& r, Lpn lpn) {
  Page p = r.model[lpn] ? *r.model[lpn] : Page(r.store->page_size(), 0);
  if (r.rng() % 4 == 0) {
    p = test::random_page(r.rng, p.size());
  } else {
    for (int k = 0; k < 3; k++) {
      const size_t at = r.rng() % (p.size() - 16);
      for (size_t i = 0; i < 16; i++) p[at + i] = uint8_t(r.rng());
    }
  }
  const Status st = r.store->write(lpn, p);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  r.model[lpn] = p;
}

Rig make(const StoreConfig& cfg) {
  Rig r;
  r.rng.seed(0xF11B + cfg.geo.page_data + uint64_t(cfg.params.method) * 7 +
             uint64_t(cfg.params.obsolete) * 31 + cfg.params.max_differential);
  r.nand = test::make_ram_nand(cfg.geo);
  REQUIRE(format_store(*r.nand, cfg.params, &r.store).is_ok());
  r.model.resize(r.store->logical_pages());
  const Lpn n = Lpn(std::min<size_t>(r.model.size(), 64));
  for (int round = 0; round < 6; round++) {
    for (Lpn l = 0; l < n; l++)
      if (round == 0 || r.rng() % 3 == 0) update(r, l);
    REQUIRE(r.store->sync().is_ok());
  }
  return r;
}

// Read `count` random mapped pages; each must be right, or (if `may_fail`) kCorrupt.
void read_phase(Rig& r, uint64_t count, bool may_fail, bool with_writes, Totals* t,
                const char* phase) {
  INFO(phase);
  const NandCounters c0 = r.nand->counters();
  std::vector<Lpn> mapped;
  for (Lpn l = 0; l < r.model.size(); l++)
    if (r.model[l]) mapped.push_back(l);
  Page got(r.store->page_size());
  for (uint64_t i = 0; i < count; i++) {
    const Lpn l = mapped[r.rng() % mapped.size()];
    const Status st = r.store->read(l, got);
    t->reads++;
    if (st.is_ok()) {
      REQUIRE(got == *r.model[l]);
    } else {
      INFO(st.to_string());
      REQUIRE(may_fail);
      REQUIRE(st.is(Errc::kCorrupt));
      t->failed++;
    }
    if (with_writes && i % 50 == 0) {
      update(r, mapped[r.rng() % mapped.size()]);
      if (i % 500 == 0) REQUIRE(r.store->sync().is_ok());
    }
  }
  const NandCounters d = r.nand->counters() - c0;
  t->corrected_bits += d.ecc_corrected_bits;
  t->uncorrectable += d.ecc_uncorrectable;
}

}  // namespace

TEST_CASE("reads through bit flips are right or an error, never wrong bytes", "[flips]") {
  const uint64_t n = reads_per_config();
  for (const StoreConfig& cfg : test::store_matrix()) {
    INFO(cfg.name);
    Rig r = make(cfg);

    EmulatedNand::BitFlips f;
    f.ecc_strength = 4;
    f.sector_rate = 0.5;
    f.min_flips = 1;
    f.max_flips = 4;
    f.seed = r.rng();
    r.nand->set_bit_flips(f);
    read_phase(r, n, false, true, &g_within, "within t");
    REQUIRE(r.store->sync().is_ok());
    REQUIRE(r.store->check().is_ok());

    f.sector_rate = 0.05;
    f.min_flips = 5;
    f.max_flips = 8;
    r.nand->set_bit_flips(f);
    read_phase(r, n / 4, true, false, &g_reported, "beyond t, reported");
    REQUIRE(r.store->check().is_ok());  // not poisoned: kCorrupt is a per-read error

    f.miscorrect = true;
    r.nand->set_bit_flips(f);
    read_phase(r, n / 4, true, false, &g_miscorrected, "beyond t, miscorrected");

    // Crash recovery reads every spare: rare miscorrections must not lose a page.
    f.sector_rate = 0.002;
    r.nand->set_bit_flips(f);
    r.store.reset();
    const Status st = mount_store(*r.nand, &r.store);
    INFO(st.to_string());
    REQUIRE(st.is_ok());
    r.nand->set_bit_flips({});
    REQUIRE(r.store->check().is_ok());
    Page got(r.store->page_size());
    for (Lpn l = 0; l < r.model.size(); l++) {
      if (!r.model[l]) continue;
      REQUIRE(r.store->read(l, got).is_ok());
      REQUIRE(got == *r.model[l]);
    }
  }
  std::printf("bit flips over %zu store configurations:\n", test::store_matrix().size());
  std::printf("  within t=4:            %llu reads, %llu bits corrected, 0 wrong\n",
              (unsigned long long)g_within.reads, (unsigned long long)g_within.corrected_bits);
  std::printf("  beyond t, reported:    %llu reads, %llu uncorrectable sector reads, "
              "%llu reads failed (kCorrupt), 0 wrong\n",
              (unsigned long long)g_reported.reads, (unsigned long long)g_reported.uncorrectable,
              (unsigned long long)g_reported.failed);
  std::printf("  beyond t, miscorrected: %llu reads, %llu miscorrected sector reads, "
              "%llu reads failed (kCorrupt), 0 wrong\n",
              (unsigned long long)g_miscorrected.reads,
              (unsigned long long)g_miscorrected.uncorrectable,
              (unsigned long long)g_miscorrected.failed);
}

// Scrub (reread.h): retention errors that stay until a block is erased (EmulatedNand::set_weak).
// Every data block is made weak; reads still return the right bytes (the ECC corrects), and
// at or above 3/4 of the ECC strength each block read is moved and erased at the next write
// or sync, until no read needs correcting any more. Below the threshold nothing moves.
TEST_CASE("blocks whose reads need most of the ECC are scrubbed: data moved, block erased, "
          "nothing lost", "[flips][scrub]") {
  uint64_t scrubbed_total = 0, configs = 0;
  for (const StoreConfig& cfg : test::store_matrix()) {
    for (const uint32_t flips : {2u, 3u}) {  // t = 4 (the default): threshold 3
      INFO(cfg.name << ", " << flips << " flips per sector in every data block");
      Rig r = make(cfg);
      const uint32_t blocks = cfg.geo.blocks;
      for (uint32_t b = 2; b < blocks; b++) r.nand->set_weak(b, flips);
      Page got(r.store->page_size());
      uint64_t corrected = 1;
      int round = 0;
      for (; round < 40 && corrected > 0; round++) {
        const NandCounters c0 = r.nand->counters();
        for (Lpn l = 0; l < r.model.size(); l++) {
          if (!r.model[l]) continue;
          const Status st = r.store->read(l, got);
          INFO("lpn " << l << ": " << st.to_string());
          REQUIRE(st.is_ok());
          REQUIRE(got == *r.model[l]);
        }
        corrected = (r.nand->counters() - c0).ecc_corrected_bits;
        if (flips < 3) break;
        update(r, Lpn(r.rng() % 64));  // scrubs run at writes and syncs
        REQUIRE(r.store->sync().is_ok());
      }
      const uint64_t scrubbed = r.store->stats().blocks_scrubbed;
      if (flips < 3) {
        CHECK(scrubbed == 0);
        CHECK(corrected > 0);
      } else {
        INFO("rounds " << round << ", blocks scrubbed " << scrubbed);
        CHECK(corrected == 0);  // every block read since was rewritten
        CHECK(scrubbed > 0);
        scrubbed_total += scrubbed;
        configs++;
      }
      REQUIRE(r.store->check().is_ok());
      r.store.reset();
      REQUIRE(mount_store(*r.nand, &r.store).is_ok());
      for (Lpn l = 0; l < r.model.size(); l++) {
        if (!r.model[l]) continue;
        REQUIRE(r.store->read(l, got).is_ok());
        REQUIRE(got == *r.model[l]);
      }
    }
  }
  WARN("scrub: " << scrubbed_total << " blocks scrubbed over " << configs
                 << " store configurations, every page intact");
}

// Stored bit flips in spare areas (EmulatedNand::flip_stored_bit): changes of the media itself,
// which the ECC model does not see — the spare header's own protection must (docs/format.md §3:
// a header one or two bits from valid is repaired by its CRC-32C; the obsolete mark and the
// bad-block marker are read by majority). For each configuration, a store as above and, per
// trial, a copy of its chip with k bits flipped in the first 32 spare bytes of one programmed
// page (byte 0 of a block's first page is its bad-block marker, flipped only alone; superblock
// pages included), then mounted. k = 1 and k = 2: every page reads back right. k = 3 (beyond
// the model): the outcomes are counted. Trials per configuration and k: PDL_SPARE_FLIPS
// (default 200).
TEST_CASE("one or two flipped bits in a spare area or bad-block marker change no page read "
          "after mount", "[flips][spare]") {
  const char* e = std::getenv("PDL_SPARE_FLIPS");
  const uint64_t trials = e ? std::strtoull(e, nullptr, 10) : 200;
  uint64_t mounts[4] = {}, marker = 0, repaired = 0, reads = 0;
  uint64_t three_right = 0, three_error = 0, three_lost_reported = 0, three_lost_torn = 0,
           three_wrong = 0;
  for (const StoreConfig& cfg : test::store_matrix()) {
    INFO(cfg.name);
    Rig r = make(cfg);
    r.store.reset();  // everything synced; the chip is what a mount sees
    const Geometry& g = cfg.geo;
    std::vector<Ppa> programmed;
    Page data(g.page_data), spare(g.page_spare);
    for (Ppa p = 0; p < g.total_pages(); p++) {
      REQUIRE(r.nand->read(p, data, spare).is_ok());
      if (!all_ff(std::span<const uint8_t>(spare).first(kSpareBytesUsed)))
        programmed.push_back(p);
    }
    for (uint32_t k = 1; k <= 3; k++) {
      for (uint64_t t = 0; t < trials; t++) {
        std::unique_ptr<EmulatedNand> c = r.nand->clone();
        Ppa p = programmed[r.rng() % programmed.size()];
        std::vector<uint32_t> bits;  // byte * 8 + bit within the spare
        while (bits.size() < k) {
          const uint32_t b = uint32_t(r.rng() % (kSpareBytesUsed * 8));
          if (k > 1 && b < 8) continue;  // the marker: alone
          if (std::find(bits.begin(), bits.end(), b) == bits.end()) bits.push_back(b);
        }
        if (bits[0] < 8) {
          p -= p % g.pages_per_block;  // the marker lives in the block's first page
          marker++;
        }
        std::string what = "page " + std::to_string(p) + ", spare bits";
        for (uint32_t b : bits) {
          REQUIRE(c->flip_stored_bit(p, g.page_data + b / 8, b % 8).is_ok());
          what += " " + std::to_string(b / 8) + "." + std::to_string(b % 8);
        }
        INFO(what);
        std::unique_ptr<PageStore> s;
        MountReport rep;
        const Status st = mount_store(*c, &s, &rep);
        INFO(st.to_string());
        mounts[k]++;
        if (k == 3 && !st.is_ok()) {  // a superblock copy, or an IPL block's claims
          REQUIRE(st.is(Errc::kCorrupt));
          three_error++;
          continue;
        }
        REQUIRE(st.is_ok());
        repaired += rep.spare_repairs;
        bool any_error = false, any_lost_reported = false, any_lost_torn = false,
             any_wrong = false;
        Page got(s->page_size());
        for (Lpn l = 0; l < r.model.size(); l++) {
          if (!r.model[l]) continue;
          const Status rs = s->read(l, got);
          reads++;
          INFO("lpn " << l << ": " << rs.to_string());
          if (k < 3) {
            REQUIRE(rs.is_ok());
            REQUIRE(got == *r.model[l]);
            continue;
          }
          if (rs.is_ok() && got == *r.model[l]) continue;
          if (rs.is(Errc::kCorrupt)) any_error = true;
          else if (rs.is(Errc::kNotFound) && s->damaged_pages() > 0) any_lost_reported = true;
          else if (rs.is(Errc::kNotFound) && rep.torn_pages > 0) any_lost_torn = true;
          else any_wrong = true;
        }
        if (k < 3) continue;
        if (any_wrong) three_wrong++;
        else if (any_lost_torn) three_lost_torn++;
        else if (any_lost_reported) three_lost_reported++;
        else if (any_error) three_error++;
        else three_right++;
      }
    }
  }
  std::printf("stored spare-area flips over %zu store configurations (%llu page reads):\n",
              test::store_matrix().size(), (unsigned long long)reads);
  std::printf("  one bit:  %llu mounts (%llu of a bad-block marker), two bits in one header: "
              "%llu mounts; %llu headers repaired, every page right\n",
              (unsigned long long)mounts[1], (unsigned long long)marker,
              (unsigned long long)mounts[2], (unsigned long long)repaired);
  std::printf("  three bits in one header (beyond the model): %llu mounts: %llu every page "
              "right, %llu an error (read or mount), %llu a page lost with the damage counted, "
              "%llu a page lost as a torn last page, %llu a page of an older version or "
              "unmapped unreported\n",
              (unsigned long long)mounts[3], (unsigned long long)three_right,
              (unsigned long long)three_error, (unsigned long long)three_lost_reported,
              (unsigned long long)three_lost_torn, (unsigned long long)three_wrong);
}
