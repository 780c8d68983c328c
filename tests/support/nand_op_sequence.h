// nand_op_sequence.h — a seeded sequence of valid flash operations (full and partial
// programs, erases) over a chip, and byte-for-byte comparison of two chips (header-only, tests
// only). The device tests run one sequence on image files and replay it on RAM chips.
//
// Programs only turn bits 1->0 (their bytes are random bits of the page's current contents)
// and respect NOP: a page programmed NOP times is erased (its block) instead.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "flash/device/emulated_nand.h"

namespace pdl::test {

struct NandOp {
  bool erase = false;
  uint32_t block = 0;
  Ppa ppa = 0;
  uint32_t data_off = 0, spare_off = 0;
  std::vector<uint8_t> data, spare;

  Status apply(Nand& n) const {
    return erase ? n.erase(block) : n.program(ppa, data, spare, data_off, spare_off);
  }
};

// The first `count` operations of sequence `seed` on a fresh chip of geometry g.
inline std::vector<NandOp> nand_op_sequence(const Geometry& g0, uint64_t seed, size_t count) {
  const Geometry g = g0.resolved();
  std::mt19937_64 rng(seed);
  std::unique_ptr<EmulatedNand> ref;
  (void)EmulatedNand::create_ram(g, &ref);
  std::vector<uint32_t> nop(g.total_pages(), 0);
  std::vector<uint8_t> data(g.page_data), spare(g.page_spare);
  std::vector<NandOp> ops;
  while (ops.size() < count) {
    NandOp op;
    op.block = uint32_t(rng() % g.blocks);
    op.ppa = op.block * g.pages_per_block + uint32_t(rng() % g.pages_per_block);
    if (rng() % 12 == 0 || nop[op.ppa] >= g.partial_programs) {
      op.erase = true;
      std::fill_n(nop.begin() + op.block * g.pages_per_block, g.pages_per_block, 0);
    } else {
      (void)ref->read(op.ppa, data, spare);
      const uint32_t shape = uint32_t(rng() % 3);  // full page; data run; data and spare runs
      uint32_t dn = g.page_data, sn = g.page_spare;
      if (shape != 0) {
        op.data_off = uint32_t(rng() % g.page_data);
        dn = 1 + uint32_t(rng() % (g.page_data - op.data_off));
        sn = 0;
      }
      if (shape == 2) {
        op.spare_off = uint32_t(rng() % g.page_spare);
        sn = 1 + uint32_t(rng() % (g.page_spare - op.spare_off));
      }
      for (uint32_t i = 0; i < dn; i++) op.data.push_back(uint8_t(rng()) & data[op.data_off + i]);
      for (uint32_t i = 0; i < sn; i++) op.spare.push_back(uint8_t(rng()) & spare[op.spare_off + i]);
      nop[op.ppa]++;
    }
    (void)op.apply(*ref);
    ops.push_back(std::move(op));
  }
  return ops;
}

// "" if a and b hold the same bytes in every page and the same erase counts; else the first
// difference.
inline std::string media_difference(EmulatedNand& a, EmulatedNand& b) {
  const Geometry& g = a.geometry();
  std::vector<uint8_t> ad(g.page_data), as(g.page_spare), bd(g.page_data), bs(g.page_spare);
  for (Ppa p = 0; p < g.total_pages(); p++) {
    const Status sa = a.read(p, ad, as), sb = b.read(p, bd, bs);
    if (!sa.is_ok() || !sb.is_ok()) return "page " + std::to_string(p) + " unreadable";
    if (ad != bd || as != bs) return "page " + std::to_string(p) + " differs";
  }
  for (uint32_t blk = 0; blk < g.blocks; blk++)
    if (a.erase_count(blk) != b.erase_count(blk))
      return "erase count of block " + std::to_string(blk) + " differs";
  return "";
}

}  // namespace pdl::test
