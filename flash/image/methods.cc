// methods.cc — the method catalogue (see methods.h).
#include "flash/image/methods.h"

#include <algorithm>

#include "flash/common/split.h"
#include "flash/image/image_params.h"

namespace pdl {

StoreParams MethodPreset::params(uint32_t logical_pages, ObsoleteMode mode,
                                 uint32_t blocks) const {
  StoreParams p;
  p.method = method;
  p.max_differential = writes_differentials(method) ? max_differential : 0;
  p.log_region = has_log_region(method) ? log_region : 0;
  p.log_sector = has_log_region(method) ? log_sector : 0;
  p.gc_merge = gc_merge;
  p.ftl = ftl;
  p.log_blocks = log_blocks;
  p.obsolete = mode;
  p.logical_pages = logical_pages;
  p.nvm_bytes = nvm_bytes(blocks);
  return p;
}

std::string MethodPreset::uri_params(uint32_t page, uint64_t chip_bytes,
                                     uint32_t pages_per_block) const {
  std::string s = std::string("method=") + method_name(method);
  if (writes_differentials(method))
    s += "&max_diff=" + std::to_string(max_differential ? max_differential : page);
  if (has_log_region(method)) s += "&log_region=" + format_size(log_region);
  if (has_log_region(method) && uses_nvm() && log_sector)
    s += "&log_sector=" + std::to_string(log_sector);
  if (nvm) s += "&nvm=" + format_size(nvm);
  if (nvm_per_block) {
    const uint64_t block = uint64_t(page) * pages_per_block;
    s += "&nvm=" + (chip_bytes && block ? format_size(nvm_bytes(uint32_t(chip_bytes / block)))
                                        : std::string("per-block"));
  }
  if (is_ftl_device(method)) s += std::string("&ftl=") + ftl_name(ftl);
  if (log_blocks) s += "&log_blocks=" + std::to_string(log_blocks);
  return s;
}

const std::vector<MethodPreset>& method_catalogue() {
  static const std::vector<MethodPreset> methods = {
      {"pdl256", "pdl", "PDL(256B)", Method::kPdl, 256, 0, true},
      {"pdl2k", "", "PDL(2KB)", Method::kPdl, 0, 0, true},
      {"opu", "", "OPU", Method::kOpu, 0, 0, true},
      {"ipu", "", "IPU", Method::kIpu, 0, 0, true},
      {"ipl18k", "ipl", "IPL(18KB)", Method::kIpl, 0, 18 * 1024, true},
      {"ipl64k", "", "IPL(64KB)", Method::kIpl, 0, 64 * 1024, true},
      {"ipl18k-diff", "", "IPL(18KB)/diff", Method::kIpl, 0, 18 * 1024, false},
      {"ipl64k-diff", "", "IPL(64KB)/diff", Method::kIpl, 0, 64 * 1024, false},
      {"ipl18k-s128", "", "IPL(18KB)/128B", Method::kIpl, 0, 18 * 1024, true, 128},
      {"ipl64k-s128", "", "IPL(64KB)/128B", Method::kIpl, 0, 64 * 1024, true, 128},
      {"pdl2k-nomerge", "", "PDL(2KB)/no-merge", Method::kPdl, 0, 0, true, 0, false},
      {"ftl-page", "", "FTL(page)", Method::kFtl, 0, 0, true, 0, true, FtlKind::kPage, 0},
      {"bast16", "", "BAST(16)", Method::kFtl, 0, 0, true, 0, true, FtlKind::kBast, 16},
      {"bast32", "", "BAST(32)", Method::kFtl, 0, 0, true, 0, true, FtlKind::kBast, 32},
      {"fast16", "", "FAST(16)", Method::kFtl, 0, 0, true, 0, true, FtlKind::kFast, 16},
      {"fast32", "", "FAST(32)", Method::kFtl, 0, 0, true, 0, true, FtlKind::kFast, 32},
      {"sb-page", "", "SB/FTL(page)", Method::kStableBuffer, 0, 0, true, 0, true, FtlKind::kPage,
       0},
      {"sb-bast16", "", "SB/BAST(16)", Method::kStableBuffer, 0, 0, true, 0, true,
       FtlKind::kBast, 16},
      {"sb-fast16", "", "SB/FAST(16)", Method::kStableBuffer, 0, 0, true, 0, true,
       FtlKind::kFast, 16},
      {"pdl-nvm", "", "PDL(256B)+NVM(64KB)", Method::kPdl, 256, 0, true, 0, true, FtlKind::kNone,
       0, 64 * 1024, 0},
      {"pdl2k-nvm", "", "PDL(2KB)+NVM(64KB)", Method::kPdl, 0, 0, true, 0, true, FtlKind::kNone,
       0, 64 * 1024, 0},
      {"ipl-pcram", "", "IPL+PCRAM(128B)", Method::kIpl, 0, 18 * 1024, true, 128, true,
       FtlKind::kNone, 0, 0, 18 * 1024},
      {"ipl-pcram512", "", "IPL+PCRAM(512B)", Method::kIpl, 0, 18 * 1024, true, 512, true,
       FtlKind::kNone, 0, 0, 18 * 1024},
  };
  return methods;
}

MethodPreset ipl_preset(uint32_t log_region, uint32_t log_sector) {
  if (log_sector == 512) log_sector = 0;
  for (const MethodPreset& m : method_catalogue())
    if (m.method == Method::kIpl && m.note_updates && !m.uses_nvm() &&
        m.log_region == log_region && m.log_sector == log_sector)
      return m;
  MethodPreset m;
  m.key = "ipl" + std::to_string(log_region / 1024) + "k" +
          (log_sector ? "-s" + std::to_string(log_sector) : "");
  m.method = Method::kIpl;
  m.log_region = log_region;
  m.log_sector = log_sector;
  StoreParams p = m.params(0, ObsoleteMode::kSpare);
  m.label = method_label(p, 2048);
  return m;
}

std::vector<MethodPreset> paper_methods() {
  std::vector<MethodPreset> v;
  for (const MethodPreset& m : method_catalogue())
    if (m.paper()) v.push_back(m);
  return v;
}

std::vector<MethodPreset> ftl_methods() {
  std::vector<MethodPreset> v;
  for (const MethodPreset& m : method_catalogue())
    if (is_ftl_device(m.method)) v.push_back(m);
  return v;
}

std::vector<MethodPreset> raw_nand_methods() {
  std::vector<MethodPreset> v;
  for (const MethodPreset& m : method_catalogue())
    if (!is_ftl_device(m.method) && !m.uses_nvm()) v.push_back(m);
  return v;
}

std::vector<MethodPreset> nvm_methods() {
  std::vector<MethodPreset> v;
  for (const MethodPreset& m : method_catalogue())
    if (m.uses_nvm()) v.push_back(m);
  return v;
}

namespace {

bool named(const MethodPreset& m, std::string_view key) {
  return m.key == key || (!m.short_key.empty() && m.short_key == key);
}

}  // namespace

const MethodPreset* find_method(std::string_view key) {
  for (const MethodPreset& m : method_catalogue())
    if (named(m, key)) return &m;
  return nullptr;
}

std::string method_keys(bool short_keys) {
  std::string s;
  for (const MethodPreset& m : short_keys ? paper_methods() : method_catalogue())
    s += (s.empty() ? "" : ", ") + (short_keys ? m.tpcc_key() : m.key);
  return s;
}

bool parse_methods(const std::string& list, const std::vector<MethodPreset>& among,
                   const std::string& known, std::vector<MethodPreset>* out, std::string* err) {
  std::vector<MethodPreset> v;
  for (const std::string& key : split_list(list)) {
    auto it = std::find_if(among.begin(), among.end(),
                           [&](const MethodPreset& m) { return named(m, key); });
    if (it == among.end()) {
      *err = "unknown method '" + key + "' (known: " + known + ")";
      return false;
    }
    if (std::none_of(v.begin(), v.end(), [&](const MethodPreset& m) { return m.key == it->key; }))
      v.push_back(*it);
  }
  if (v.empty()) {
    *err = "no method given";
    return false;
  }
  *out = std::move(v);
  return true;
}

std::string obsolete_label(Method m, ObsoleteMode mode) {
  return has_obsolete_marks(m) ? obsolete_name(mode) : "none";
}

std::string method_label(const StoreParams& p, uint32_t page_size) {
  auto size = [](uint32_t bytes) {
    if (bytes % 1024 == 0) return std::to_string(bytes / 1024) + "KB";
    return std::to_string(bytes) + "B";
  };
  auto ftl = [&p] {
    switch (p.ftl) {
      case FtlKind::kBast: return "BAST(" + std::to_string(p.log_blocks) + ")";
      case FtlKind::kFast: return "FAST(" + std::to_string(p.log_blocks) + ")";
      default: return std::string("FTL(page)");
    }
  };
  switch (p.method) {
    case Method::kFtl: return ftl();
    case Method::kStableBuffer: return "SB/" + ftl();
    case Method::kOpu: return "OPU";
    case Method::kIpu: return "IPU";
    case Method::kIpl:
      if (p.nvm_bytes)
        return (p.log_region == 18 * 1024 ? std::string("IPL")
                                          : "IPL(" + size(p.log_region) + ")") +
               "+PCRAM(" + size(p.log_sector ? p.log_sector : 128) + ")";
      return "IPL(" + size(p.log_region) + ")" +
             (p.log_sector && p.log_sector != 512 ? "/" + size(p.log_sector) : "");
    case Method::kPdl: break;
  }
  const uint32_t md = p.max_differential == 0 ? page_size : p.max_differential;
  if (p.nvm_bytes)
    return "PDL(" + size(md) + ")+NVM(" + size(p.nvm_bytes) + ")" +
           (p.gc_merge ? "" : "/no-merge");
  return "PDL(" + size(md) + ")" + (p.gc_merge ? "" : "/no-merge");
}

}  // namespace pdl
