// test_ftl_tables.cc — the checkpointed tables of BAST, FAST (flash/ftl/hybrid_tables.cc) and
// StableBuffer over them (flash/ftl/sb_tables.cc) in the states the store matrix's round trip
// (tests/store/test_store_tables.cc) does not reach: grown bad blocks and blocks retiring after
// a failed program, blocks a weak read marked for scrubbing, blocks a scan mount could not place
// (merged by the first change), a StableBuffer recovered by a scan with pages staged.
//
// Each state is built twice, on twin chips, by the same deterministic history; one twin's store
// is replaced by the one its own tables give back, and both then take the same operations: they
// must answer alike, program and erase alike, and save the same tables at every sync — the
// restored store is the saved one, not just one mapping the same pages.
// Also: a save before the StableBuffer's directory is committed, or by a halted store, is
// refused; tables of another configuration, or of the older format 1, are corrupt, not
// misread.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "flash/common/crc32c.h"
#include "flash/image/mount_tables.h"
#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "flash/store/spare.h"
#include "tests/support/test_util.h"

using namespace pdl;

namespace {

using Page = std::vector<uint8_t>;

const Geometry kGeo = pdl::test::geometry(512, 32, 8, 40);

StoreParams hybrid(FtlKind k) {
  StoreParams p;
  p.method = Method::kFtl;
  p.ftl = k;
  p.log_blocks = 4;
  return p;
}

StoreParams stablebuffer(FtlKind k) {
  StoreParams p = hybrid(k);
  p.method = Method::kStableBuffer;
  return p;
}

const char* kind_name(FtlKind k) { return k == FtlKind::kBast ? "BAST" : "FAST"; }

std::vector<uint8_t> tables(const PageStore& s) {
  TableWriter w;
  const Status st = s.save_tables(w);
  INFO("save_tables: " << st.to_string());
  REQUIRE(st.is_ok());
  return w.data();
}

// The store `s`'s tables give back on `nand` (s is dropped): checked and saving the same bytes.
std::unique_ptr<PageStore> restore(Nand& nand, std::unique_ptr<PageStore> s) {
  const std::vector<uint8_t> saved = tables(*s);
  const StoreParams params = s->params();
  s.reset();
  TableReader r(saved);
  std::unique_ptr<PageStore> out;
  const Status st = mount_store_tables(nand, params, CommitMode::kPerPage, r, &out);
  INFO("mount_store_tables: " << st.to_string());
  REQUIRE(st.is_ok());
  const Status ck = out->check();
  INFO("check: " << ck.to_string());
  REQUIRE(ck.is_ok());
  REQUIRE(tables(*out) == saved);
  return out;
}

// A random workload (writes of fresh pages, trims, reads, syncs) from `seed`; ends synced.
// Every status, and every read's bytes, goes to *log (what the twins compare).
void workload(PageStore& s, uint64_t seed, int ops, std::vector<std::string>* log) {
  std::mt19937_64 rng(seed);
  const Lpn n = s.logical_pages();
  Page got(s.page_size());
  for (int i = 0; i < ops; i++) {
    const Lpn l = Lpn(rng() % n);
    const unsigned r = unsigned(rng() % 100);
    Status st;
    if (r < 60) {
      st = s.write(l, pdl::test::random_page(rng, s.page_size()));
    } else if (r < 70) {
      st = s.trim(l);
    } else if (r < 95) {
      st = s.read(l, got);
      if (st.is_ok()) log->push_back(std::to_string(crc32c(got.data(), got.size())));
    } else {
      st = s.sync();
    }
    INFO("op " << i << ": " << st.to_string());
    REQUIRE((st.is_ok() || st.is(Errc::kNotFound)));
    log->push_back(st.to_string());
  }
  REQUIRE(s.sync().is_ok());
}

// Build a state twice (`build` on twin chips), restore one twin from its tables, run the same
// workload on both in rounds: same answers, same flash work, same tables after each round.
void twins(const std::function<void(EmulatedNand&, std::unique_ptr<PageStore>*)>& build,
           uint64_t seed) {
  auto na = pdl::test::make_ram_nand(kGeo), nb = pdl::test::make_ram_nand(kGeo);
  std::unique_ptr<PageStore> a, b;
  build(*na, &a);
  build(*nb, &b);
  REQUIRE(tables(*a) == tables(*b));  // (the twins are alike)
  b = restore(*nb, std::move(b));
  for (int round = 0; round < 4; round++) {
    INFO("round " << round);
    std::vector<std::string> la, lb;
    workload(*a, seed + uint64_t(round), 300, &la);
    workload(*b, seed + uint64_t(round), 300, &lb);
    REQUIRE(la == lb);
    REQUIRE(na->counters().programs == nb->counters().programs);
    REQUIRE(na->counters().erases == nb->counters().erases);
    REQUIRE(tables(*a) == tables(*b));
    REQUIRE(b->check().is_ok());
  }
}

void format(Nand& nand, const StoreParams& p, std::unique_ptr<PageStore>* out) {
  const Status st = format_store(nand, p, out);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
}

void scan_mount(Nand& nand, std::unique_ptr<PageStore>* out) {
  out->reset();
  const Status st = mount_store(nand, out);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
}

// Program a data record of lpn at ppa, as the hybrid engine does (docs/format.md §9).
void program_record(Nand& nand, Ppa ppa, Lpn lpn, uint64_t seq) {
  const Geometry& g = nand.geometry();
  const Page data(g.page_data, uint8_t(lpn));
  SpareHeader h;
  h.type = PageType::kBase;
  h.set_logical_page(lpn);
  h.seq = seq;
  h.data_crc = crc32c(data.data(), data.size());
  std::vector<uint8_t> spare(g.page_spare);
  spare_encode(h, spare);
  REQUIRE(nand.program(ppa, data, spare).is_ok());
}

}  // namespace

TEST_CASE("FTL tables: retired, retiring and scrubbing blocks come back as they were",
          "[ftl][checkpoint]") {
  for (FtlKind k : {FtlKind::kBast, FtlKind::kFast}) {
    for (const uint64_t at : {150u, 420u, 777u}) {
      DYNAMIC_SECTION(kind_name(k) << ", a block fails at operation " << at) {
        uint64_t retired = 0;
        twins(
            [&](EmulatedNand& nand, std::unique_ptr<PageStore>* s) {
              StoreParams p = hybrid(k);
              p.logical_pages = (kGeo.blocks - 10) * kGeo.pages_per_block;  // room for bad ones
              format(nand, p, s);
              nand.fail_at(at, at);
              std::vector<std::string> log;
              workload(**s, 0x7ab + at, 1200, &log);
              retired = (*s)->stats().blocks_retired;
              // A program failing now: its block is left retiring (no more programs, retired
              // when a merge releases it) — at a save, unless a merge released it already.
              for (uint64_t i = 0; i < 20; i++) {
                const uint64_t retries = (*s)->stats().program_retries;
                nand.fail_at(0, at + i);
                const Lpn l = Lpn((at * 7 + i * 13) % (*s)->logical_pages());
                REQUIRE((*s)->write(l, Page((*s)->page_size(), uint8_t(i))).is_ok());
                if ((*s)->stats().program_retries > retries) break;
              }
              REQUIRE((*s)->sync().is_ok());
              // A weak block: a read of it needs most of the ECC, so the block is to be
              // scrubbed at the next change (a read after the sync: still synced).
              Lpn l = 0;
              while (l < (*s)->logical_pages() && !(*s)->is_mapped(l)) l++;
              REQUIRE(l < (*s)->logical_pages());
              const uint32_t block = (*s)->locate(l).base / kGeo.pages_per_block;
              nand.set_weak(block, 3);
              Page got((*s)->page_size());
              REQUIRE((*s)->read(l, got).is_ok());
              REQUIRE((*s)->stats().blocks_scrubbed == 0);
            },
            0x5c4b + at);
        CHECK(retired >= 1);
      }
    }
  }
}

TEST_CASE("FTL tables: blocks a scan mount could not place come back, merged by the next change",
          "[ftl][checkpoint]") {
  for (FtlKind k : {FtlKind::kBast, FtlKind::kFast}) {
    DYNAMIC_SECTION(kind_name(k)) {
      twins(
          [&](EmulatedNand& nand, std::unique_ptr<PageStore>* s) {
            format(nand, hybrid(k), s);
            const Page page((*s)->page_size(), 1);
            for (Lpn l = 0; l < 32; l++) REQUIRE((*s)->write(l, page).is_ok());
            REQUIRE((*s)->write(29, page).is_ok());  // logical block 3 gets a log block
            REQUIRE((*s)->sync().is_ok());
            std::vector<uint32_t> free_blocks;
            for (uint32_t b = 0; b < kGeo.blocks; b++)
              if ((*s)->block_info(b).state == BlockInfo::kFree) free_blocks.push_back(b);
            REQUIRE(free_blocks.size() >= 2);
            s->reset();
            // Blocks no FTL writes: one mixing logical blocks 0 and 2, a third block of
            // logical block 3 (records off their offsets); all newer than the rest.
            const uint32_t P = kGeo.pages_per_block, mixed = free_blocks[0],
                           third = free_blocks[1];
            uint64_t seq = 1u << 20;
            const Lpn in_mixed[] = {0, 17, 1, 18};
            for (uint32_t i = 0; i < 4; i++) program_record(nand, mixed * P + i, in_mixed[i], seq++);
            const Lpn in_third[] = {31, 24};
            for (uint32_t i = 0; i < 2; i++) program_record(nand, third * P + i, in_third[i], seq++);
            scan_mount(nand, s);
            REQUIRE((*s)->stats().full_merges == 0);  // (nothing merged yet)
          },
          0xe97a);
    }
  }
}

TEST_CASE("FTL tables: StableBuffer's slots come back, formatted or recovered by a scan",
          "[ftl][checkpoint]") {
  for (FtlKind k : {FtlKind::kBast, FtlKind::kFast}) {
    for (const bool scanned : {false, true}) {
      DYNAMIC_SECTION("SB over " << kind_name(k) << (scanned ? ", scan-mounted" : "")) {
        twins(
            [&](EmulatedNand& nand, std::unique_ptr<PageStore>* s) {
              format(nand, stablebuffer(k), s);
              std::vector<std::string> log;
              workload(**s, 0x5b + scanned, 700, &log);
              if (scanned) scan_mount(nand, s);
            },
            0x5bb + scanned);
      }
    }
  }
}

TEST_CASE("FTL tables: a store not synced, or halted, saves nothing", "[ftl][checkpoint]") {
  for (FtlKind k : {FtlKind::kBast, FtlKind::kFast}) {
    DYNAMIC_SECTION(kind_name(k)) {
      auto nand = pdl::test::make_ram_nand(kGeo);
      std::unique_ptr<PageStore> s;
      format(*nand, stablebuffer(k), &s);
      const Page page(s->page_size(), 7);
      REQUIRE(s->write(3, page).is_ok());
      TableWriter w;
      const Status st = s->save_tables(w);
      INFO(st.to_string());
      REQUIRE(st.is(Errc::kInvalidArgument));
      REQUIRE(std::string(st.message()).find("sync") != std::string::npos);
      REQUIRE(s->sync().is_ok());
      REQUIRE(s->save_tables(w).is_ok());

      format(*nand, hybrid(k), &s);
      nand->host_full_after(0);
      REQUIRE(s->write(0, page).is(Errc::kHostFull));
      nand->clear_host_full();
      TableWriter h;
      REQUIRE(s->save_tables(h).is(Errc::kHostFull));
    }
  }
}

TEST_CASE("FTL tables: tables of another configuration are corrupt, not misread",
          "[ftl][checkpoint]") {
  auto nand = pdl::test::make_ram_nand(kGeo);
  std::unique_ptr<PageStore> s;
  format(*nand, hybrid(FtlKind::kBast), &s);
  std::vector<std::string> log;
  workload(*s, 0xc0f, 200, &log);
  const std::vector<uint8_t> saved = tables(*s);
  auto mount_as = [&](StoreParams p, const std::vector<uint8_t>& bytes) {
    REQUIRE(resolve_store_params(&p, kGeo).is_ok());
    TableReader r(bytes);
    std::unique_ptr<PageStore> out;
    const Status st = mount_store_tables(*nand, p, CommitMode::kPerPage, r, &out);
    INFO(st.to_string());
    REQUIRE(st.is(Errc::kCorrupt));
    return std::string(st.message());
  };
  CHECK(mount_as(hybrid(FtlKind::kFast), saved).find("not this store's") != std::string::npos);
  StoreParams fewer = hybrid(FtlKind::kBast);
  fewer.log_blocks = 3;
  CHECK(mount_as(fewer, saved).find("not this store's") != std::string::npos);
  // The device's tables where a StableBuffer's are expected: its section is missing.
  CHECK(mount_as(stablebuffer(FtlKind::kBast), saved).find("SBDV") != std::string::npos);
  // Format 1 (tag HYBR: no seq and aux per page, which a replay needs) is refused by name.
  std::vector<uint8_t> older = saved;
  std::copy_n("HYBR", 4, older.begin());
  CHECK(mount_as(hybrid(FtlKind::kBast), older).find("format 1") != std::string::npos);
}
