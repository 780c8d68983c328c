// bench_methods.h — the page-update method configurations pdl-bench compares ([PDL] §5.1).
//
// Keys (for --methods) and what they run:
//   pdl256       PDL(256B): page-differential logging, Max_Differential_Size = 256 bytes
//   pdl2k        PDL(2KB):  Max_Differential_Size = 2048 bytes (a page)
//   opu          OPU: out-place update with page-level mapping
//   ipu          IPU: in-place update (a block rewritten for every page write)
//   ipl18k       IPL(18KB): in-page logging, 18 KiB (9 of 64 pages) of each block for logs
//   ipl64k       IPL(64KB): 64 KiB (32 of 64 pages) for logs
//   ipl18k-diff  IPL(18KB)/diff: IPL without the update-log hook — the store derives its log
//   ipl64k-diff  IPL(64KB)/diff  records by comparing with the previous version (the
//                DBMS-independent path); the plain IPL keys get every changed run through
//                PageStore::note_update, as the paper's in-DBMS IPL did.
// PDL and OPU have the two obsolete modes (spare = the paper's, memory = §6); IPU and IPL mark
// nothing obsolete and run once, with obsolete mode "none".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flash/store/store_params.h"

namespace pdl::bench {

struct MethodSpec {
  std::string key;    // "pdl256"
  std::string label;  // "PDL(256B)", "IPL(18KB)/diff"
  Method method = Method::kPdl;
  uint32_t max_differential = 0;  // PDL
  uint32_t log_region = 0;        // IPL, bytes
  bool note_updates = true;       // false: the /diff variant
  bool has_obsolete_modes() const { return method == Method::kPdl || method == Method::kOpu; }
  // StoreParams for this method with `logical_pages` and obsolete mode `mode`.
  StoreParams params(uint32_t logical_pages, ObsoleteMode mode) const;
};

// Every known method, in the paper's order of Fig. 8 legends.
const std::vector<MethodSpec>& all_methods();
// The six of [PDL] §5.2: pdl256, pdl2k, opu, ipu, ipl18k, ipl64k.
std::vector<MethodSpec> paper_methods();
// Parses "pdl256,opu,..." into specs (in the order given, duplicates dropped); false with
// *err naming the unknown key.
bool parse_methods(const std::string& list, std::vector<MethodSpec>* out, std::string* err);
// "pdl256, pdl2k, ..." for usage text.
std::string method_keys();

// "spare" / "memory" for PDL and OPU, "none" for IPU and IPL.
std::string obsolete_label(const MethodSpec& m, ObsoleteMode mode);

}  // namespace pdl::bench
