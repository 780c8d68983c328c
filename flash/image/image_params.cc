// image_params.cc — parsing and defaults of ImageParams.
#include "flash/image/image_params.h"

#include <charconv>

namespace pdl {

const char* const ImageParams::kKeys[] = {
    "method", "max_diff", "obsolete", "log_region", "log_sector", "ftl", "log_blocks",
    "sb_slots", "sb_recognition", "sb_flush", "nvm", "nvm_path", "page", "pages_per_block",
    "spare", "size", "nop", "erase_limit", "max_files", "cache_chunks", "owner_cache", "clock",
    "mtd", "commit", "wear_level", "track_changes", "checkpoint", "replay_blocks", "table_cache", nullptr};

bool parse_size(std::string_view s, uint64_t* out) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return false;
  std::string_view unit(end, size_t(s.data() + s.size() - end));
  int shift = 0;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "K" || unit == "KiB" || unit == "k") shift = 10;
  else if (unit == "M" || unit == "MiB") shift = 20;
  else if (unit == "G" || unit == "GiB") shift = 30;
  else if (unit == "T" || unit == "TiB") shift = 40;
  else return false;
  if (shift && v > (UINT64_MAX >> shift)) return false;
  *out = v << shift;
  return true;
}

std::string format_size(uint64_t b) {
  if (b && b % (1ull << 30) == 0) return std::to_string(b >> 30) + "G";
  if (b && b % (1ull << 20) == 0) return std::to_string(b >> 20) + "M";
  if (b && b % (1ull << 10) == 0) return std::to_string(b >> 10) + "K";
  return std::to_string(b);
}

Status ImageParams::set(std::string_view key, std::string_view value) {
  auto bad = [&](const std::string& why) {
    return Status::error(Errc::kInvalidArgument,
                         std::string(key) + "=" + std::string(value) + ": " + why);
  };
  auto u32 = [&](std::optional<uint32_t>* field, uint64_t lo, uint64_t hi) {
    uint64_t v;
    if (!parse_size(value, &v)) return bad("not a number");
    if (v < lo || v > hi)
      return bad("must be " + std::to_string(lo) + " .. " + std::to_string(hi));
    *field = uint32_t(v);
    return Status::ok();
  };
  if (key == "method") {
    Method m;
    if (!parse_method(std::string(value), &m))
      return bad("unknown method (pdl, opu, ipu, ipl, ftl, stablebuffer)");
    method = m;
  } else if (key == "ftl") {
    FtlKind k;
    if (!parse_ftl(std::string(value), &k)) return bad("must be page, bast or fast");
    ftl = k;
  } else if (key == "log_blocks") {
    return u32(&log_blocks, 1, 1u << 20);
  } else if (key == "sb_slots") {
    return u32(&sb_slots, 1, 1u << 24);
  } else if (key == "sb_recognition") {
    SbRecognition r;
    if (!parse_sb_recognition(std::string(value), &r)) return bad("must be ondemand or incremental");
    sb_recognition = r;
  } else if (key == "sb_flush") {
    SbFlush f;
    if (!parse_sb_flush(std::string(value), &f)) return bad("must be passive or proactive");
    sb_flush = f;
  } else if (key == "nvm") {  // 0 = none
    uint64_t v;
    if (!parse_size(value, &v)) return bad("not a size (e.g. 64K)");
    if (v > kMaxNvmBytes || v % kNvmWord)
      return bad("must be a multiple of 8 bytes, at most 1G");
    nvm = uint32_t(v);
  } else if (key == "nvm_path") {
    if (value.empty()) return bad("the path of the NVM's file (a DAX file for real persistent memory)");
    nvm_path = std::string(value);
  } else if (key == "obsolete") {
    ObsoleteMode m;
    if (!parse_obsolete(std::string(value), &m)) return bad("must be spare or memory");
    obsolete = m;
  } else if (key == "max_diff") {
    return u32(&max_diff, 1, 32768);
  } else if (key == "log_region") {
    return u32(&log_region, 1, 1u << 30);
  } else if (key == "log_sector") {  // the engine checks the rest (a power of two, nop)
    return u32(&log_sector, 128, 512);
  } else if (key == "page") {
    PDL_TRY(u32(&page, 512, 32768));
    if ((*page & (*page - 1)) != 0) return bad("must be a power of two");
  } else if (key == "pages_per_block") {
    return u32(&pages_per_block, 2, 1024);
  } else if (key == "spare") {
    return u32(&spare, 32, 4096);
  } else if (key == "mtd") {
    if (value.empty()) return bad("the path of an MTD device (/dev/mtdN)");
    mtd = std::string(value);
  } else if (key == "nop") {
    return u32(&nop, 1, 255);
  } else if (key == "erase_limit") {
    return u32(&erase_limit, 1, 1000000000);
  } else if (key == "max_files") {
    return u32(&max_files, 1, 65536);
  } else if (key == "cache_chunks") {  // ("cache" is SQLite's own URI key)
    return u32(&cache_chunks, 1, 4096);
  } else if (key == "owner_cache") {  // owner-map pages the Volume keeps in RAM
    return u32(&owner_cache, 1, 1u << 20);
  } else if (key == "commit") {
    if (value == "atomic") atomic_commit = true;
    else if (value == "journal") atomic_commit = false;
    else return bad("atomic or journal");
  } else if (key == "wear_level") {
    uint64_t v;
    if (value == "off") wear_level = 0;
    else if (!parse_size(value, &v) || v < 1 || v > 1000000000)
      return bad("must be a number of erases, 1 .. 1000000000, or off");
    else wear_level = uint32_t(v);
  } else if (key == "track_changes") {
    if (value == "on") track_changes = true;
    else if (value == "off") track_changes = false;
    else return bad("on or off");
  } else if (key == "checkpoint") {
    if (value == "on") checkpoint = true;
    else if (value == "off") checkpoint = false;
    else return bad("on or off");
  } else if (key == "replay_blocks") {
    return u32(&replay_blocks, 1, 1000000);
  } else if (key == "table_cache") {  // clean table pages per paged table (PDL, OPU, page FTL)
    return u32(&table_cache, 1, 1u << 24);
  } else if (key == "clock") {
    if (value == "wall") logical_clock = false;
    else if (value == "logical") logical_clock = true;
    else return bad("wall or logical");
  } else if (key == "size") {
    uint64_t v;
    if (!parse_size(value, &v)) return bad("not a size (e.g. 256M, 2G; at most 256G)");
    if (v > kMaxChipBytes) return bad("larger than the maximum chip size, 256G");
    // The real minimum, 8 erase blocks, depends on the geometry: Geometry::validate says it.
    if (v < kMinChipBytes) return bad("smaller than the smallest chip, 8K (8 erase blocks of "
                                      "2 pages of 512 bytes; 1M with the default geometry)");
    size = v;
  } else {
    return Status::error(Errc::kNotFound, "unknown parameter " + std::string(key));
  }
  return Status::ok();
}

Geometry ImageParams::geometry() const {
  Geometry g;
  if (page) g.page_data = *page;
  if (pages_per_block) g.pages_per_block = *pages_per_block;
  if (spare) g.page_spare = *spare;
  if (nop) g.partial_programs = *nop;
  if (erase_limit) g.erase_limit = *erase_limit;
  if (nvm) g.nvm_bytes = *nvm;
  g = g.resolved();
  const uint64_t bytes = size.value_or(256ull << 20);
  g.blocks = uint32_t(bytes / (uint64_t(g.page_data) * g.pages_per_block));
  return g;
}

StoreParams ImageParams::store_params() const {
  StoreParams p;
  if (method) p.method = *method;
  if (max_diff) p.max_differential = *max_diff;
  // With its write buffer in NVM, PDL's differentials may grow to a page: a large one costs NVM
  // bytes, not programs, until it goes cold (docs/design.md §16, "PDL's write buffer in NVM").
  else if (nvm.value_or(0) != 0) p.max_differential = 0;
  p.obsolete = obsolete.value_or(ObsoleteMode::kMemory);
  if (log_region) p.log_region = *log_region;
  if (log_sector) p.log_sector = *log_sector;
  if (wear_level) p.wear_level = *wear_level;
  // An FTL device names its FTL; the page-mapping one when only the method is given.
  if (ftl) p.ftl = *ftl;
  else if (is_ftl_device(p.method)) p.ftl = FtlKind::kPage;
  if (log_blocks) p.log_blocks = *log_blocks;
  if (sb_slots) p.sb_slots = *sb_slots;
  if (nvm) p.nvm_bytes = *nvm;  // the store uses all of the device's NVM
  const StoreParams rt = run_time();
  p.sb_recognition = rt.sb_recognition;
  p.replay_blocks = rt.replay_blocks;
  p.table_cache = rt.table_cache;
  p.sb_flush = rt.sb_flush;
  return p;
}

StoreParams ImageParams::run_time() const {
  StoreParams p;
  if (sb_recognition) p.sb_recognition = *sb_recognition;
  if (sb_flush) p.sb_flush = *sb_flush;
  p.scan_mount = scan_mount;
  if (replay_blocks) p.replay_blocks = *replay_blocks;
  if (table_cache) p.table_cache = *table_cache;
  return p;
}

}  // namespace pdl
