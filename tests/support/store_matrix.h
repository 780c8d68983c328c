// store_matrix.h — the PageStore configurations every store suite runs over.
//
// Every page-update method × obsolete mode, with PDL at two Max_Differential_Sizes (a small one,
// like the paper's PDL(256B) relative to the page, and a whole page, like PDL(2KB)), over two
// small geometries so that garbage collection runs many times within a test. IPU and IPL have
// no obsolete marks: once per geometry; IPL with a two-page log region (2 log sectors per block
// on 512-byte pages, 8 on 2 KiB pages) so that merges are frequent; both at their full size.
// IPL again with 128-byte log sectors ([PDL]'s 128-byte log buffer as the flush unit), on a
// chip allowing page/128 programs per page (NOP 16 for 2 KiB pages). The commodity FTL devices
// (method ftl) once per geometry: the page-mapping FTL, BAST and FAST with 4 log blocks (so that
// every kind of merge runs often) — block devices without atomic groups or obsolete marks on
// flash, so suites select by trait (has_atomic_commit, has_obsolete_marks, is_ftl_device) —
// and StableBuffer in front of each of them at its default size. IPL with its log areas in NVM
// ([IPL-PCRAM]) with 128- and 512-byte log sectors, a few per block. PDL with its write buffer in
// NVM at both Max_Differential_Sizes (one obsolete mode each), with a small NVM.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "flash/device/geometry.h"
#include "flash/store/store_params.h"
#include "tests/support/test_util.h"

namespace pdl::test {

struct StoreConfig {
  std::string name;
  Geometry geo;
  StoreParams params;
};

// The matrix over the given geometries (store_matrix: the two small ones below).
inline std::vector<StoreConfig> store_matrix_for(const std::vector<Geometry>& geometries) {
  std::vector<StoreConfig> out;
  for (const Geometry& g : geometries) {
    const std::string gname = std::to_string(g.page_data) + "B";
    // 7/8 of the usable pages (blocks less superblocks, GC reserve and two heads) for every
    // method: fuller than PDL's default, so GC moves, compacts and merges a lot.
    const uint32_t full = (g.blocks - 6) * g.pages_per_block * 7 / 8;
    for (ObsoleteMode ob : {ObsoleteMode::kSpare, ObsoleteMode::kMemory}) {
      const std::string oname = ob == ObsoleteMode::kSpare ? "spare" : "memory";
      StoreParams pdl_small;
      pdl_small.logical_pages = full;
      pdl_small.method = Method::kPdl;
      pdl_small.max_differential = g.page_data / 8;
      pdl_small.obsolete = ob;
      StoreParams pdl_page = pdl_small;
      pdl_page.max_differential = 0;  // a whole page
      StoreParams opu = pdl_small;
      opu.method = Method::kOpu;
      // With obsolete marks in RAM, wear levelling at a threshold low enough that young
      // blocks' data moves many times within a test (block_manager.h).
      std::string wl;
      if (ob == ObsoleteMode::kMemory) {
        pdl_page.wear_level = 4;
        opu.wear_level = 2;
        wl = "/wl";
      }
      out.push_back({"PDL(page/8)/" + oname + "/" + gname, g, pdl_small});
      out.push_back({"PDL(page)/" + oname + wl + "/" + gname, g, pdl_page});
      out.push_back({"OPU/" + oname + wl + "/" + gname, g, opu});
    }
    // PDL with its write buffer in NVM: 10 pages of NVM (a buffer of two pages) with
    // PDL(page/8), 6 pages (a buffer of one page) with PDL(page), so that the log (a half)
    // starts afresh every few commits and the buffer flushes often within a test.
    {
      Geometry gn = g;
      gn.nvm_bytes = 10 * g.page_data;
      Geometry gp = g;
      gp.nvm_bytes = 6 * g.page_data;
      StoreParams small;
      small.logical_pages = full;
      small.method = Method::kPdl;
      small.max_differential = g.page_data / 8;
      small.obsolete = ObsoleteMode::kSpare;
      small.nvm_bytes = gn.nvm_bytes;
      StoreParams page = small;
      page.nvm_bytes = gp.nvm_bytes;
      page.max_differential = 0;
      page.obsolete = ObsoleteMode::kMemory;
      page.wear_level = 4;
      out.push_back({"PDL(page/8)+NVM/spare/" + gname, gn, small});
      out.push_back({"PDL(page)+NVM/memory/wl/" + gname, gp, page});
    }
    StoreParams ipu;
    ipu.method = Method::kIpu;
    StoreParams ipl;
    ipl.method = Method::kIpl;
    ipl.log_region = 2 * g.page_data;
    out.push_back({"IPU/" + gname, g, ipu});
    out.push_back({"IPL(2p)/" + gname, g, ipl});
    StoreParams ipl128 = ipl;
    ipl128.log_sector = 128;
    Geometry g128 = g;
    g128.partial_programs = std::max(g.partial_programs, g.page_data / 128);
    out.push_back({"IPL(2p,128B sectors)/" + gname, g128, ipl128});
    // IPL with its log areas in NVM ([IPL-PCRAM]): 128-byte sectors, 3 per block, and 512-byte
    // ones, 2 per block (the NVM is the commit area plus that per data block), so that merges
    // are frequent.
    for (const uint32_t ls : {128u, 512u}) {
      const uint32_t sectors = ls == 128 ? 3 : 2;
      Geometry gn = g;
      gn.nvm_bytes = 64 + (g.blocks - kSuperblockBlocks) * sectors * ls;
      StoreParams ipln;
      ipln.method = Method::kIpl;
      ipln.log_sector = ls;
      ipln.nvm_bytes = gn.nvm_bytes;
      out.push_back({"IPL+NVM(" + std::to_string(ls) + "B)/" + gname, gn, ipln});
    }
    // The page-mapping FTL device (OPU's path, obsolete marks in RAM, no atomic groups) at
    // OPU's fullness.
    StoreParams ftl_page;
    ftl_page.method = Method::kFtl;
    ftl_page.ftl = FtlKind::kPage;
    ftl_page.logical_pages = full;
    out.push_back({"FTL(page)/" + gname, g, ftl_page});
    // Commodity FTL devices: BAST and FAST with 4 log blocks, at their default size.
    StoreParams bast;
    bast.method = Method::kFtl;
    bast.ftl = FtlKind::kBast;
    bast.log_blocks = 4;
    StoreParams fast = bast;
    fast.ftl = FtlKind::kFast;
    out.push_back({"BAST(4)/" + gname, g, bast});
    out.push_back({"FAST(4)/" + gname, g, fast});
    // StableBuffer in front of each FTL device, at its default size (slots: two erase blocks
    // on these small chips).
    for (const StoreParams* dev : {&ftl_page, &bast, &fast}) {
      StoreParams sb = *dev;
      sb.method = Method::kStableBuffer;
      sb.logical_pages = 0;
      const std::string dname = dev->ftl == FtlKind::kPage ? "FTL(page)"
                                : dev->ftl == FtlKind::kBast ? "BAST(4)" : "FAST(4)";
      out.push_back({"SB/" + dname + "/" + gname, g, sb});
    }
  }
  return out;
}

inline std::vector<StoreConfig> store_matrix() {
  return store_matrix_for({geometry(512, 32, 8, 40),     // small pages, 40 blocks
                           geometry(2048, 64, 8, 24)});  // the paper's page, 24 blocks
}

}  // namespace pdl::test
