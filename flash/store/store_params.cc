// store_params.cc — defaults, validation and names of the method parameters.
#include "flash/store/store_params.h"

#include <algorithm>

#include "flash/pdl/record.h"

namespace pdl {

const char* method_name(Method m) {
  switch (m) {
    case Method::kPdl: return "pdl";
    case Method::kOpu: return "opu";
    case Method::kIpu: return "ipu";
    case Method::kIpl: return "ipl";
  }
  return "?";
}

const char* obsolete_name(ObsoleteMode m) {
  return m == ObsoleteMode::kMemory ? "memory" : "spare";
}

bool parse_method(const std::string& s, Method* m) {
  if (s == "pdl") *m = Method::kPdl;
  else if (s == "opu") *m = Method::kOpu;
  else if (s == "ipu") *m = Method::kIpu;
  else if (s == "ipl") *m = Method::kIpl;
  else return false;
  return true;
}

bool parse_obsolete(const std::string& s, ObsoleteMode* m) {
  if (s == "spare") *m = ObsoleteMode::kSpare;
  else if (s == "memory") *m = ObsoleteMode::kMemory;
  else return false;
  return true;
}

Status StoreParams::resolve(const Geometry& g) {
  auto bad = [](const std::string& m) { return Status::error(Errc::kInvalidArgument, m); };
  if (method != Method::kPdl && method != Method::kOpu && method != Method::kIpu &&
      method != Method::kIpl)
    return bad("method: unknown method");
  if (obsolete != ObsoleteMode::kSpare && obsolete != ObsoleteMode::kMemory)
    return bad("obsolete: must be spare or memory");
  const uint32_t data_blocks = g.blocks - kSuperblockBlocks;
  if (in_page(method)) return resolve_in_page(g, data_blocks);
  if (log_region != 0) return bad("log_region: only the ipl method has a log region");
  if (method == Method::kOpu) {
    max_differential = 0;  // OPU never writes differentials
  } else {
    if (max_differential == 0) max_differential = g.page_data;
    if (max_differential > g.page_data)
      return bad("max_diff: " + std::to_string(max_differential) +
                 " exceeds the page data size " + std::to_string(g.page_data));
    if (max_differential < kRecordHeader + kRunHeaderBytes + 1)
      return bad("max_diff: must be at least " +
                 std::to_string(kRecordHeader + kRunHeaderBytes + 1) + " bytes");
  }
  if (obsolete == ObsoleteMode::kSpare && g.partial_programs < 2)
    return bad("obsolete: spare needs a chip that allows 2 programs per page (NOP >= 2); "
               "this one allows 1: use obsolete=memory");
  if (gc_reserve_blocks == 0) gc_reserve_blocks = 2;
  if (gc_reserve_blocks < 2 || uint64_t(gc_reserve_blocks) + 4 > data_blocks)
    return bad("gc_reserve: " + std::to_string(gc_reserve_blocks) + " blocks: must be 2 .. " +
               std::to_string(data_blocks - 4) + " (leave 4 of the " +
               std::to_string(data_blocks) + " data blocks for data)");
  // Two blocks may be open (user and GC heads) besides the reserve.
  const uint64_t usable = uint64_t(data_blocks - gc_reserve_blocks - 2) * g.pages_per_block;
  // Default size: 7/8 of the usable pages, less room for differentials with PDL — a page's
  // differential averages about half of Max_Differential_Size in steady state ([PDL],
  // footnote 17), so PDL keeps page / (page + max_diff / 2) of that (PDL(2KB): 2/3; PDL(256B)
  // on 2 KiB pages: 16/17). Overwrites of pages within the default size then always fit.
  if (logical_pages == 0)
    logical_pages = uint32_t(usable * 7 / 8 * g.page_data / (g.page_data + max_differential / 2));
  // Thin provisioning is allowed (writes then end in Errc::kFull), within reason for RAM.
  if (logical_pages == 0 || uint64_t(logical_pages) > 4 * g.total_pages() ||
      logical_pages >= 0xFFFFFFF0u)
    return bad("logical_pages: must be 1 .. 4 x the chip's pages");
  return Status::ok();
}

// IPU and IPL map logical pages statically: logical block lpn / data_pages_per_block lives in
// one physical erase block at a time, at page lpn % data_pages_per_block. So the size is bounded
// by the blocks left after the merge reserve, and there is no thin provisioning.
Status StoreParams::resolve_in_page(const Geometry& g, uint32_t data_blocks) {
  auto bad = [](const std::string& m) { return Status::error(Errc::kInvalidArgument, m); };
  max_differential = 0;
  if (method == Method::kIpu) {
    if (log_region != 0) return bad("log_region: ipu has no log region (use method=ipl)");
  } else {
    if (log_region == 0)
      log_region = std::max<uint32_t>(1, (g.pages_per_block * 9 + 32) / 64) * g.page_data;
    const uint32_t lp = log_pages(g);
    if (lp >= g.pages_per_block)
      return bad("log_region: " + std::to_string(log_region) + " bytes leave no data page in a " +
                 std::to_string(g.pages_per_block) + "-page erase block of " +
                 std::to_string(g.page_data) + "-byte pages");
    log_region = lp * g.page_data;  // whole pages
    const uint32_t sectors = g.page_data / kLogSector;
    if (sectors > g.partial_programs)
      return bad("log_region: a " + std::to_string(g.page_data) + "-byte page holds " +
                 std::to_string(sectors) + " log sectors of " + std::to_string(kLogSector) +
                 " bytes, each programmed on its own, but the chip allows " +
                 std::to_string(g.partial_programs) + " programs per page (nop=" +
                 std::to_string(g.partial_programs) + "): raise nop to " +
                 std::to_string(sectors) + " or use smaller pages");
  }
  // The reserve: one block for a merge's new copy. IPL keeps two more for atomic commit
  // ([IPL] §5): its commit log's, and one that lets a transaction keep a committed version
  // while it rewrites more of an erase block than the log region carries (a shadow merge), so
  // a store filled to its size still commits such transactions.
  if (gc_reserve_blocks == 0) gc_reserve_blocks = method == Method::kIpl ? 3 : 1;
  if (uint64_t(gc_reserve_blocks) + 1 > data_blocks)
    return bad("gc_reserve: " + std::to_string(gc_reserve_blocks) + " blocks: must be 1 .. " +
               std::to_string(data_blocks - 1) + " (leave a block for data)");
  const uint64_t capacity = uint64_t(data_blocks - gc_reserve_blocks) * data_pages_per_block(g);
  if (logical_pages == 0) logical_pages = uint32_t(std::min<uint64_t>(capacity, 0xFFFFFFEFu));
  if (logical_pages > capacity)
    return bad("logical_pages: " + std::string(method_name(method)) + " offers at most " +
               std::to_string(capacity) + " logical pages on this chip (" +
               std::to_string(data_blocks - gc_reserve_blocks) + " blocks of " +
               std::to_string(data_pages_per_block(g)) + " data pages), asked for " +
               std::to_string(logical_pages));
  return Status::ok();
}

std::string StoreParams::describe() const {
  std::string s = method_name(method);
  if (writes_differentials(method)) s += " max_diff=" + std::to_string(max_differential);
  if (has_log_region(method)) s += " log_region=" + std::to_string(log_region);
  if (has_obsolete_marks(method))
    s += std::string(" obsolete=") + obsolete_name(obsolete);
  s += " logical_pages=" + std::to_string(logical_pages);
  return s;
}

}  // namespace pdl
