// pdl_params.cc — PdlStore::resolve_params: defaults and ranges of the PDL and OPU parameters
// (Max_Differential_Size, the GC reserve, the logical size, the NVM for the write buffer).
// Max_Differential_Size defaults to a page with NVM as without: a large differential in the
// buffer costs NVM bytes, not a flash program. The method and obsolete mode are
// already checked (StoreParams::check_method); messages name the parameter.
#include <string>

#include "flash/pdl/nvm_log.h"
#include "flash/pdl/pdl_store.h"
#include "flash/pdl/record.h"

namespace pdl {

Status PdlStore::resolve_params(StoreParams* p, const Geometry& g) {
  auto bad = [](const std::string& m) { return Status::error(Errc::kInvalidArgument, m); };
  const uint32_t data_blocks = g.blocks - kSuperblockBlocks;
  if (p->nvm_bytes != 0) {  // the write buffer in NVM (nvm_log.h)
    if (p->method != Method::kPdl)
      return bad("nvm: only the pdl method keeps its write buffer in NVM (not opu or ftl)");
    if (p->nvm_bytes % kNvmWord != 0)
      return bad("nvm: " + std::to_string(p->nvm_bytes) + " bytes is not a multiple of " +
                 std::to_string(kNvmWord));
    if (p->nvm_bytes > g.nvm_bytes)
      return bad("nvm: the store needs " + std::to_string(p->nvm_bytes) +
                 " bytes of NVM, the device has " + std::to_string(g.nvm_bytes));
    const uint32_t least = NvmLog::min_nvm_bytes(g.page_data);
    if (p->nvm_bytes < least)
      return bad("nvm: " + std::to_string(p->nvm_bytes) + " bytes cannot hold PDL's write buffer "
                 "log on " + std::to_string(g.page_data) + "-byte pages: at least " +
                 std::to_string(least) + " bytes (two halves, each a log of two pages' worth "
                 "of records and headers)");
  }
  if (p->log_region != 0) return bad("log_region: only the ipl method has a log region");
  if (p->log_sector != 0) return bad("log_sector: only the ipl method has log sectors");
  if (p->method == Method::kFtl && p->ftl != FtlKind::kPage)
    return bad("ftl: the page-mapping engine runs ftl=page only");
  if (p->method == Method::kFtl) {
    // The page-mapping FTL device: OPU's path, with its invalid-page bits in RAM as a device
    // FTL keeps them in its tables (no second program of a spare area).
    p->max_differential = 0;
    p->obsolete = ObsoleteMode::kMemory;
  } else if (p->method == Method::kOpu) {
    p->max_differential = 0;  // OPU never writes differentials
  } else {
    if (p->max_differential == 0) p->max_differential = g.page_data;
    if (p->max_differential > g.page_data)
      return bad("max_diff: " + std::to_string(p->max_differential) +
                 " exceeds the page data size " + std::to_string(g.page_data));
    if (p->max_differential < kRecordHeader + kRunHeaderBytes + 1)
      return bad("max_diff: must be at least " +
                 std::to_string(kRecordHeader + kRunHeaderBytes + 1) + " bytes");
  }
  if (p->obsolete == ObsoleteMode::kSpare && g.partial_programs < 2)
    return bad("obsolete: spare needs a chip that allows 2 programs per page (NOP >= 2); "
               "this one allows 1: use obsolete=memory");
  if (p->gc_reserve_blocks == 0) p->gc_reserve_blocks = 2;
  if (p->gc_reserve_blocks < 2 || uint64_t(p->gc_reserve_blocks) + 4 > data_blocks)
    return bad("gc_reserve: " + std::to_string(p->gc_reserve_blocks) + " blocks: must be 2 .. " +
               std::to_string(data_blocks - 4) + " (leave 4 of the " +
               std::to_string(data_blocks) + " data blocks for data)");
  // Two blocks may be open (user and GC heads) besides the reserve.
  const uint64_t usable = uint64_t(data_blocks - p->gc_reserve_blocks - 2) * g.pages_per_block;
  // Default size: 7/8 of the usable pages, less room for differentials with PDL — a page's
  // differential averages about half of Max_Differential_Size in steady state ([PDL],
  // footnote 17), so PDL keeps page / (page + max_diff / 2) of that (PDL(2KB): 2/3; PDL(256B)
  // on 2 KiB pages: 16/17). Overwrites of pages within the default size then always fit.
  if (p->logical_pages == 0)
    p->logical_pages =
        uint32_t(usable * 7 / 8 * g.page_data / (g.page_data + p->max_differential / 2));
  // Thin provisioning is allowed (writes then end in Errc::kFull), within reason for RAM.
  if (p->logical_pages == 0 || uint64_t(p->logical_pages) > 4 * g.total_pages() ||
      p->logical_pages >= 0xFFFFFFF0u)
    return bad("logical_pages: must be 1 .. 4 x the chip's pages");
  return Status::ok();
}

}  // namespace pdl
