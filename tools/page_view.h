// page_view.h — one physical page read raw from the Nand and decoded for display (dump, fsck).
//
// The spare header is decoded (docs/format.md §3); for a programmed page the data area is read
// too and its CRC-32C compared with the header's. Reading goes straight to the device, below
// the store, and changes nothing. Counts as a page read in the Nand's counters.
#pragma once

#include <string>
#include <vector>

#include "flash/device/nand.h"
#include "flash/store/spare.h"

namespace pdl::tool {

struct PageView {
  SpareState state = SpareState::kErased;  // kCorrupt: torn or unknown header
  SpareHeader hdr;                          // meaningful when state == kValid
  bool data_crc_ok = false;                 // data area matches hdr.data_crc (kValid only)
  std::vector<uint8_t> data;                // the data area (kValid only)
};

// Read and decode page `ppa`. Device errors are returned as they come.
Status read_page_view(Nand& nand, Ppa ppa, PageView* out);

const char* page_type_name(PageType t);  // "superblock", "base", "differential", "0x.."
// "base, lpn 5, seq 7, data crc ok, live" / "erased" / "torn (header CRC or version)".
std::string describe_page(const PageView& v);

}  // namespace pdl::tool
