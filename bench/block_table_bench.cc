// block_table_bench.cc — pdl-blkbench: the size of the block manager's checkpointed tables
// (section PBLK, docs/format.md §13.1) by chip size, the part of a checkpoint's root that grows
// with the chip (issue 23: a mount after a clean unmount reads the root whole).
//
// Per chip size (2 KiB pages, 64 pages per block, the superblock's two blocks first): a
// BlockManager as a format leaves it (every block free, not known erased), and the same after
// a page-mapped workload driven through it — every logical page of half the data area written
// once in order, then as many random updates (uniform; --updates K: K times as many), with greedy garbage collection moving
// valid pages to the GC head, as PdlStore does. Printed: PBLK's bytes now and in its version 1
// layout (computed from the same tables), bytes per block, and the 110 µs page reads the mount
// spends on it. Each saved stream is loaded into a fresh manager and saved again: the bytes
// must be the same (else the bench fails). The chip is a stand-in whose only operation is
// erase (nothing is programmed or read): a 64 GiB run takes ~200 MB of RAM (the workload's
// page maps) and seconds, not an image. Op counts and bytes only: machine-independent.
#include <cinttypes>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "flash/device/nand.h"
#include "flash/pdl/block_manager.h"

namespace {

using namespace pdl;

// A chip that only erases (counted); the block manager erases blocks as it opens them.
class EraseOnlyNand final : public Nand {
 public:
  explicit EraseOnlyNand(const Geometry& g) : g_(g) {}
  const Geometry& geometry() const override { return g_; }
  Status read(Ppa, std::span<uint8_t>, std::span<uint8_t>) override {
    return Status::error(Errc::kUnsupported, "erase-only chip");
  }
  Status program(Ppa, std::span<const uint8_t>, std::span<const uint8_t>, uint32_t,
                 uint32_t) override {
    return Status::error(Errc::kUnsupported, "erase-only chip");
  }
  Status erase(uint32_t) override {
    c_.erases++;
    return Status::ok();
  }
  const NandCounters& counters() const override { return c_; }
  void reset_counters() override { c_ = {}; }
  void set_counting(bool) override {}
  uint32_t erase_count(uint32_t) const override { return 0; }

 private:
  Geometry g_;
  NandCounters c_;
};

// PBLK's size in the version 1 layout (fixed-width fields per block and per list entry).
uint64_t v1_bytes(const BlockManager& bm, uint32_t blocks) {
  uint64_t n = 16 + 8 + 4 + 8 + 4 + 1;
  for (uint32_t b = bm.first_block(); b < blocks; b++) {
    n += 1;
    if (bm.is_free(b)) n += 4;                    // the free queue's entry
    else if (bm.is_closed(b)) n += 2 + 8 + 4;     // valid, stamp, closed list entry
    else if (!bm.is_bad(b)) n += 4;               // open: valid, written
  }
  return n;
}

struct Row {
  uint64_t bytes = 0, old_bytes = 0;
  uint32_t free = 0, closed = 0;
};

bool measure(const BlockManager& bm, const Geometry& g, Row* row) {
  TableWriter w;
  if (!bm.save_tables(w).is_ok()) return false;
  BlockManager again(g, bm.first_block(), 4);
  TableReader r(w.data());
  if (!again.load_tables(r).is_ok() || !r.finish().is_ok()) return false;
  TableWriter w2;
  if (!again.save_tables(w2).is_ok() || w2.data() != w.data()) return false;
  row->bytes = w.size();
  row->old_bytes = v1_bytes(bm, g.blocks);
  row->free = bm.free_blocks();
  for (uint32_t b = bm.first_block(); b < g.blocks; b++) row->closed += bm.is_closed(b);
  return true;
}

// Half the data area's pages written in order, then as many random updates.
bool run_workload(BlockManager& bm, EraseOnlyNand& nand, uint32_t first, uint64_t seed,
                  uint64_t rounds) {
  const Geometry& g = nand.geometry();
  const uint32_t ppb = g.pages_per_block;
  const uint64_t lpns = uint64_t(g.blocks - first) * ppb / 2;
  constexpr uint32_t kNone = 0xFFFFFFFFu;
  std::vector<uint32_t> map(lpns, kNone), p2l(g.total_pages(), kNone);
  std::mt19937_64 rng(seed);
  auto place = [&](uint32_t l, BlockManager::Head h) {
    Ppa p;
    if (!bm.next_page(h, nand, &p).is_ok()) return false;
    if (map[l] != kNone) {
      bm.valid_dec(map[l]);
      p2l[map[l]] = kNone;
    }
    map[l] = uint32_t(p);
    p2l[p] = l;
    bm.valid_inc(p);
    return true;
  };
  auto collect = [&] {
    while (bm.user_pages_available() < 1) {
      const int64_t v = bm.greedy_victim();
      if (v < 0) return false;
      bm.take(uint32_t(v));
      for (uint64_t p = uint64_t(v) * ppb; p < uint64_t(v + 1) * ppb; p++)
        if (p2l[p] != kNone && !place(p2l[p], BlockManager::Head::kGc)) return false;
      bm.victim_erased(uint32_t(v));
    }
    return true;
  };
  for (uint64_t i = 0; i < (1 + rounds) * lpns; i++) {
    const uint32_t l = uint32_t(i < lpns ? i : rng() % lpns);
    if (!collect() || !place(l, BlockManager::Head::kUser)) return false;
  }
  return true;
}

}  // namespace

// pdl-blkbench [--updates K] [MIB...]: chip sizes in MiB (default 256 MiB .. 64 GiB).
int main(int argc, char** argv) {
  std::vector<uint64_t> sizes = {256, 1024, 4096, 16384, 65536};
  uint64_t rounds = 1;
  int i = 1;
  if (argc > 2 && std::string(argv[1]) == "--updates") {
    rounds = std::stoull(argv[2]);
    i = 3;
  }
  if (i < argc) sizes.clear();
  for (; i < argc; i++) sizes.push_back(std::stoull(argv[i]));
  std::printf("PBLK (the block manager's checkpointed tables) by chip size; 2 KiB pages, 64 per "
              "block; reads at 2 KiB per 110 us page\n");
  std::printf("%-8s %8s | %-36s | half full, then %" PRIu64 " x as many random updates\n",
              "", "", "empty (as formatted)", rounds);
  std::printf("%-8s %8s | %10s %10s %6s %6s | %10s %10s %6s %6s %6s %7s\n", "chip", "blocks",
              "v1 bytes", "bytes", "B/blk", "reads", "v1 bytes", "bytes", "B/blk", "reads",
              "free", "closed");
  for (uint64_t mib : sizes) {
    Geometry g;
    g.page_data = 2048;
    g.page_spare = 64;
    g.pages_per_block = 64;
    g.blocks = uint32_t(mib * 1024 * 1024 / (uint64_t(g.page_data) * g.pages_per_block));
    constexpr uint32_t kFirst = 2;
    EraseOnlyNand nand(g);
    BlockManager bm(g, kFirst, 4);
    for (uint32_t b = kFirst; b < g.blocks; b++) bm.add_free(b, false);
    Row empty, full;
    if (!measure(bm, g, &empty)) {
      std::fprintf(stderr, "pdl-blkbench: %" PRIu64 " MiB empty: round trip failed\n", mib);
      return 1;
    }
    if (!run_workload(bm, nand, kFirst, 0xb10c + mib, rounds) || !measure(bm, g, &full)) {
      std::fprintf(stderr, "pdl-blkbench: %" PRIu64 " MiB half full: workload or round trip "
                   "failed\n", mib);
      return 1;
    }
    auto reads = [](uint64_t bytes) { return (bytes + 2047) / 2048; };
    const std::string chip = mib >= 1024 ? std::to_string(mib / 1024) + " GiB"
                                         : std::to_string(mib) + " MiB";
    std::printf("%-8s %8u | %10" PRIu64 " %10" PRIu64 " %6.2f %6" PRIu64 " | %10" PRIu64
                " %10" PRIu64 " %6.2f %6" PRIu64 " %6u %7u\n",
                chip.c_str(), g.blocks, empty.old_bytes, empty.bytes,
                double(empty.bytes) / g.blocks, reads(empty.bytes), full.old_bytes, full.bytes,
                double(full.bytes) / g.blocks, reads(full.bytes), full.free, full.closed);
    std::fflush(stdout);
  }
  return 0;
}
