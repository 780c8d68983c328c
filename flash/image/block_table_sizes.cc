// block_table_sizes.cc — PBLK's size as formatted and after a page-mapped workload
// (block_table_sizes.h).
#include "flash/image/block_table_sizes.h"

#include <random>
#include <vector>

#include "flash/device/nand.h"
#include "flash/pdl/block_manager.h"

namespace pdl {

namespace {

constexpr uint32_t kSizesFirst = 2, kSizesReserve = 4;

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

bool measure_tables(const BlockManager& bm, const Geometry& g, BlockTableSize* row) {
  TableWriter w;
  if (!bm.save_tables(w).is_ok()) return false;
  BlockManager again(g, bm.first_block(), kSizesReserve);
  TableReader r(w.data());
  if (!again.load_tables(r).is_ok() || !r.finish().is_ok()) return false;
  TableWriter w2;
  if (!again.save_tables(w2).is_ok() || w2.data() != w.data()) return false;
  row->bytes = w.size();
  row->v1_bytes = v1_bytes(bm, g.blocks);
  row->free = bm.free_blocks();
  for (uint32_t b = bm.first_block(); b < g.blocks; b++) row->closed += bm.is_closed(b);
  return true;
}

// Half the data area's pages written in order, then as many random updates.
bool run_table_workload(BlockManager& bm, EraseOnlyNand& nand, uint32_t first, uint64_t seed,
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

Status block_table_sizes(const Geometry& g, uint64_t rounds, uint64_t seed,
                         BlockTableSize* formatted, BlockTableSize* worked) {
  EraseOnlyNand nand(g);
  BlockManager bm(g, kSizesFirst, kSizesReserve);
  for (uint32_t b = kSizesFirst; b < g.blocks; b++) bm.add_free(b, false);
  if (!measure_tables(bm, g, formatted))
    return Status::error(Errc::kCorrupt, "block tables: a formatted chip's round trip differs");
  if (!run_table_workload(bm, nand, kSizesFirst, seed, rounds))
    return Status::error(Errc::kFull, "block tables: the workload ran out of blocks");
  if (!measure_tables(bm, g, worked))
    return Status::error(Errc::kCorrupt, "block tables: a worked chip's round trip differs");
  return Status::ok();
}

}  // namespace pdl
