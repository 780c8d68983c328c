// store_params.cc — defaults, validation and names of the method parameters.
#include "flash/store/store_params.h"

#include "flash/pdl/record.h"

namespace pdl {

const char* method_name(Method m) {
  switch (m) {
    case Method::kPdl: return "pdl";
    case Method::kOpu: return "opu";
  }
  return "?";
}

const char* obsolete_name(ObsoleteMode m) {
  return m == ObsoleteMode::kMemory ? "memory" : "spare";
}

bool parse_method(const std::string& s, Method* m) {
  if (s == "pdl") *m = Method::kPdl;
  else if (s == "opu") *m = Method::kOpu;
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
  if (method != Method::kPdl && method != Method::kOpu) return bad("method: unknown method");
  if (obsolete != ObsoleteMode::kSpare && obsolete != ObsoleteMode::kMemory)
    return bad("obsolete: must be spare or memory");
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
  const uint32_t data_blocks = g.blocks - kSuperblockBlocks;
  if (gc_reserve_blocks == 0) gc_reserve_blocks = 2;
  if (gc_reserve_blocks < 2 || gc_reserve_blocks + 4 > data_blocks)
    return bad("gc_reserve: must be at least 2 and leave 4 blocks for data");
  // Two blocks may be open (user and GC heads) besides the reserve.
  const uint64_t usable = uint64_t(data_blocks - gc_reserve_blocks - 2) * g.pages_per_block;
  // Default size: 7/8 of the usable pages, less room for differentials with PDL — a page's
  // differential averages about half of Max_Differential_Size in steady state (seed 000,
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

std::string StoreParams::describe() const {
  std::string s = method_name(method);
  if (method == Method::kPdl) s += " max_diff=" + std::to_string(max_differential);
  s += std::string(" obsolete=") + obsolete_name(obsolete);
  s += " logical_pages=" + std::to_string(logical_pages);
  return s;
}

}  // namespace pdl
