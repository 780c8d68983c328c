// ipl_params.cc — IplStore::resolve_params: defaults and ranges of the IPU and IPL parameters
// (the log region and its sector size, the merge reserve, the logical size). The method and
// obsolete mode are already checked (StoreParams::check_method); messages name the parameter.
// With NVM (nvm_bytes > 0, IPL only: [IPL-PCRAM]) log_region is each erase block's log area in
// NVM (ipl_nvm.h), every flash page a data page, log sectors of 128 bytes by default.
//
// IPU and IPL map logical pages statically: logical block lpn / data_pages_per_block lives in
// one physical erase block at a time, at page lpn % data_pages_per_block. So the size is bounded
// by the blocks left after the merge reserve, and there is no thin provisioning.
#include <algorithm>
#include <string>

#include "flash/ipl/ipl_nvm.h"
#include "flash/ipl/ipl_store.h"

namespace pdl {

Status IplStore::resolve_params(StoreParams* p, const Geometry& g) {
  auto bad = [](const std::string& m) { return Status::error(Errc::kInvalidArgument, m); };
  const uint32_t data_blocks = g.blocks - kSuperblockBlocks;
  p->max_differential = 0;
  if (p->method == Method::kIpu && p->nvm_bytes != 0)
    return bad("nvm: ipu has no log to keep in NVM (use method=ipl)");
  if (p->method == Method::kIpl && p->nvm_bytes != 0) {
    // [IPL-PCRAM] §3.2: every flash page a data page, each block's log area in NVM.
    if (p->log_sector == 0) p->log_sector = kNvmLogSector;
    const uint32_t ls = p->log_sector;
    if (ls < 128 || ls > 512 || (ls & (ls - 1)) != 0)
      return bad("log_sector: " + std::to_string(ls) +
                 " bytes: must be a power of two, 128 .. 512 (the 28-byte sector header is "
                 "part of it)");
    if (p->nvm_bytes > g.nvm_bytes)
      return bad("nvm: " + std::to_string(p->nvm_bytes) + " bytes asked, the device has " +
                 std::to_string(g.nvm_bytes));
    const uint32_t max_area = nvm_max_area(p->nvm_bytes, g, ls);
    if (max_area == 0)
      return bad("nvm: " + std::to_string(p->nvm_bytes) + " bytes leave each of the " +
                 std::to_string(g.blocks - kSuperblockBlocks) + " erase blocks less than one " +
                 std::to_string(ls) + "-byte log sector (after the " +
                 std::to_string(kNvmCommitArea) + "-byte commit area)");
    if (p->log_region == 0) p->log_region = max_area;
    if (p->log_region > max_area)
      return bad("log_region: " + std::to_string(p->log_region) + " bytes per erase block in "
                 "NVM, but nvm=" + std::to_string(p->nvm_bytes) + " gives each block at most " +
                 std::to_string(max_area));
    p->log_region = p->log_region / ls * ls;  // whole sectors
    if (p->log_region == 0)
      return bad("log_region: less than one " + std::to_string(ls) + "-byte log sector");
    if (p->log_region / ls > 65535)
      return bad("log_region: " + std::to_string(p->log_region / ls) +
                 " log sectors per erase block: at most 65535");
    if ((g.pages_per_block + 7) / 8 > ls - kSectorHeader)
      return bad("log_sector: a " + std::to_string(ls) + "-byte sector cannot name the " +
                 std::to_string(g.pages_per_block) + " data pages of an erase block");
  } else if (p->method == Method::kIpu) {
    if (p->log_region != 0) return bad("log_region: ipu has no log region (use method=ipl)");
    if (p->log_sector != 0) return bad("log_sector: ipu has no log sectors (use method=ipl)");
  } else {
    if (p->log_sector == 0) p->log_sector = kLogSector;
    const uint32_t ls = p->log_sector;
    if (ls < 128 || ls > 512 || (ls & (ls - 1)) != 0)
      return bad("log_sector: " + std::to_string(ls) +
                 " bytes: must be a power of two, 128 .. 512 (the 28-byte sector header is "
                 "part of it)");
    if (ls > g.page_data)
      return bad("log_sector: " + std::to_string(ls) + " bytes is larger than a " +
                 std::to_string(g.page_data) + "-byte page");
    if (p->log_region == 0)
      p->log_region = std::max<uint32_t>(1, (g.pages_per_block * 9 + 32) / 64) * g.page_data;
    const uint32_t lp = p->log_pages(g);
    if (lp >= g.pages_per_block)
      return bad("log_region: " + std::to_string(p->log_region) +
                 " bytes leave no data page in a " + std::to_string(g.pages_per_block) +
                 "-page erase block of " + std::to_string(g.page_data) + "-byte pages");
    p->log_region = lp * g.page_data;  // whole pages
    // An unmap sector's bitmap names every data slot of a block in one sector's payload.
    if ((p->data_pages_per_block(g) + 7) / 8 > ls - kSectorHeader)
      return bad("log_sector: a " + std::to_string(ls) + "-byte sector cannot name the " +
                 std::to_string(p->data_pages_per_block(g)) + " data pages of an erase block");
    const uint32_t sectors = g.page_data / ls;
    if (sectors > g.partial_programs)
      return bad(std::string(ls == kLogSector ? "log_region" : "log_sector") + ": a " +
                 std::to_string(g.page_data) + "-byte page holds " + std::to_string(sectors) +
                 " log sectors of " + std::to_string(ls) +
                 " bytes, each programmed on its own, but the chip allows " +
                 std::to_string(g.partial_programs) + " programs per page (nop=" +
                 std::to_string(g.partial_programs) + "): raise nop to " +
                 std::to_string(sectors) + " or use " +
                 (ls == kLogSector ? "smaller pages" : "larger log sectors"));
  }
  // The reserve: one block for a merge's new copy. IPL keeps two more for atomic commit
  // ([IPL] §5): its commit log's, and one that lets a transaction keep a committed version
  // while it rewrites more of an erase block than the log region carries (a shadow merge), so
  // a store filled to its size still commits such transactions.
  if (p->gc_reserve_blocks == 0) p->gc_reserve_blocks = p->method == Method::kIpl ? 3 : 1;
  if (uint64_t(p->gc_reserve_blocks) + 1 > data_blocks)
    return bad("gc_reserve: " + std::to_string(p->gc_reserve_blocks) + " blocks: must be 1 .. " +
               std::to_string(data_blocks - 1) + " (leave a block for data)");
  const uint64_t capacity =
      uint64_t(data_blocks - p->gc_reserve_blocks) * p->data_pages_per_block(g);
  if (p->logical_pages == 0)
    p->logical_pages = uint32_t(std::min<uint64_t>(capacity, 0xFFFFFFEFu));
  if (p->logical_pages > capacity)
    return bad("logical_pages: " + std::string(method_name(p->method)) + " offers at most " +
               std::to_string(capacity) + " logical pages on this chip (" +
               std::to_string(data_blocks - p->gc_reserve_blocks) + " blocks of " +
               std::to_string(p->data_pages_per_block(g)) + " data pages), asked for " +
               std::to_string(p->logical_pages));
  return Status::ok();
}

}  // namespace pdl
