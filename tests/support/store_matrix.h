// store_matrix.h — the PageStore configurations every store suite runs over.
//
// Every page-update method × obsolete mode, with PDL at two Max_Differential_Sizes (a small one,
// like the paper's PDL(256B) relative to the page, and a whole page, like PDL(2KB)), over two
// small geometries so that garbage collection runs many times within a test. IPU and IPL have
// no obsolete marks: once per geometry; IPL with a two-page log region (2 log sectors per block
// on 512-byte pages, 8 on 2 KiB pages) so that merges are frequent; both at their full size.
// IPL again with 128-byte log sectors ([PDL]'s 128-byte log buffer as the flush unit), on a
// chip allowing page/128 programs per page (NOP 16 for 2 KiB pages). BAST and FAST devices
// (method ftl) with 4 log blocks, so that every kind of merge runs often. StableBuffer over the
// page-mapping FTL device at its default size.
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
    // Commodity FTL devices: BAST and FAST with 4 log blocks, at their default size.
    StoreParams bast;
    bast.method = Method::kFtl;
    bast.ftl = FtlKind::kBast;
    bast.log_blocks = 4;
    StoreParams fast = bast;
    fast.ftl = FtlKind::kFast;
    out.push_back({"BAST(4)/" + gname, g, bast});
    out.push_back({"FAST(4)/" + gname, g, fast});
    // StableBuffer in front of the page-mapping FTL device, at its default size (slots: two
    // erase blocks on these small chips).
    StoreParams sb;
    sb.method = Method::kStableBuffer;
    sb.ftl = FtlKind::kPage;
    out.push_back({"SB/FTL(page)/" + gname, g, sb});
  }
  return out;
}

inline std::vector<StoreConfig> store_matrix() {
  return store_matrix_for({geometry(512, 32, 8, 40),     // small pages, 40 blocks
                           geometry(2048, 64, 8, 24)});  // the paper's page, 24 blocks
}

}  // namespace pdl::test
