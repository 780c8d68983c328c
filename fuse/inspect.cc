// inspect.cc — the texts of /.pdl/ (see inspect.h).
#include "fuse/inspect.h"

#include <algorithm>

#include "flash/image/image_params.h"
#include "flash/image/stats_json.h"

namespace pdl::fuse {

namespace {

void line(std::string* out, const char* key, const std::string& value) {
  *out += key;
  *out += '=';
  *out += value;
  *out += '\n';
}
void line(std::string* out, const char* key, uint64_t value) {
  line(out, key, std::to_string(value));
}

std::string ppa_text(Ppa p) { return p == kNoPpa ? "-" : std::to_string(p); }

std::string config_text(Image& img, bool read_only) {
  Volume& vol = *img.volume;
  const VolumeLayout L = vol.layout();
  auto guard = vol.lock();
  PageStore& store = vol.store();
  const Geometry& g = img.nand->geometry();
  const StoreParams& sp = store.params();
  std::string s;
  line(&s, "method", method_name(sp.method));
  if (writes_differentials(sp.method)) line(&s, "max_diff", sp.max_differential);
  if (has_obsolete_marks(sp.method))
    line(&s, "obsolete", obsolete_name(sp.obsolete));
  if (has_log_region(sp.method)) line(&s, "log_region", format_size(sp.log_region));
  if (has_log_region(sp.method)) line(&s, "log_sector", sp.log_sector);
  if (is_ftl_device(sp.method)) {
    line(&s, "ftl", ftl_name(sp.ftl));
    if (sp.log_blocks) line(&s, "log_blocks", sp.log_blocks);
    if (sp.method == Method::kStableBuffer) {
      line(&s, "sb_slots", sp.sb_slots);
      line(&s, "sb_recognition", sb_recognition_name(sp.sb_recognition));
      line(&s, "sb_flush", sb_flush_name(sp.sb_flush));
    }
  }
  line(&s, "page", g.page_data);
  line(&s, "pages_per_block", g.pages_per_block);
  line(&s, "size", format_size(uint64_t(g.page_data) * g.pages_per_block * g.blocks));
  line(&s, "nop", g.partial_programs);
  line(&s, "max_files", L.max_files());
  line(&s, "spare", g.page_spare);
  line(&s, "blocks", g.blocks);
  line(&s, "erase_limit", g.erase_limit);
  line(&s, "read_us", g.read_us);
  line(&s, "program_us", g.program_us);
  line(&s, "erase_us", g.erase_us);
  if (g.nvm_bytes) {  // the NVM beside the chip: its size, what the store uses, where it is
    line(&s, "nvm", format_size(sp.nvm_bytes));
    line(&s, "nvm_device", format_size(g.nvm_bytes));
    line(&s, "nvm_place", img.nand->nvm_place());
  }
  line(&s, "logical_pages", sp.logical_pages);
  line(&s, "gc_reserve_blocks", sp.gc_reserve_blocks);
  line(&s, "chunk", L.chunk);
  line(&s, "data_lpns", L.data_lpns);
  line(&s, "read_only", read_only ? 1 : 0);
  line(&s, "image", img.path);
  return s;
}

std::string blocks_text(Image& img) {
  Volume& vol = *img.volume;
  auto guard = vol.lock();
  PageStore& store = vol.store();
  const uint32_t blocks = img.nand->geometry().blocks;
  std::string s = "# block state valid_pages erase_count\n";
  s.reserve(s.size() + size_t(blocks) * 20);
  for (uint32_t b = 0; b < blocks; b++) {
    const BlockInfo bi = store.block_info(b);
    s += std::to_string(b) + ' ' + block_state_name(bi.state) + ' ' +
         std::to_string(bi.valid_pages) + ' ' + std::to_string(bi.erase_count) + '\n';
  }
  return s;
}

std::string map_text(Image& img) {
  Volume& vol = *img.volume;
  std::vector<FileInfo> files = vol.list();
  std::sort(files.begin(), files.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.name < b.name; });
  std::string s = "# lpn chunk base_ppa diff_ppa diff_in_buffer file\n";
  for (const FileInfo& f : files) {
    std::vector<uint32_t> lpns;
    if (!vol.chunk_lpns(f.name, &lpns).is_ok()) continue;  // removed meanwhile
    auto guard = vol.lock();
    PageStore& store = vol.store();
    for (size_t c = 0; c < lpns.size(); c++) {
      if (lpns[c] == Volume::kNoLpn) continue;  // a hole
      const LpnLocation loc = store.locate(lpns[c]);
      s += std::to_string(lpns[c]) + ' ' + std::to_string(c) + ' ' + ppa_text(loc.base) + ' ' +
           ppa_text(loc.diff) + ' ' + (loc.diff_in_buffer ? "yes " : "no ") + f.name + '\n';
    }
  }
  return s;
}

}  // namespace

bool is_inspect_file(std::string_view name) {
  return std::any_of(std::begin(kInspectFiles), std::end(kInspectFiles),
                     [&](const char* f) { return name == f; });
}

std::string inspect_text(Image& image, std::string_view name, bool read_only) {
  if (name == "stats.json") return image_stats_json(image) + "\n";
  if (name == "config") return config_text(image, read_only);
  if (name == "blocks") return blocks_text(image);
  if (name == "map") return map_text(image);
  return "";
}

}  // namespace pdl::fuse
