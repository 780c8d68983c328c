// bench_methods.cc — the method configurations of pdl-bench and their --methods keys.
#include "bench/bench_methods.h"

#include <algorithm>

#include "flash/common/split.h"

namespace pdl::bench {

StoreParams MethodSpec::params(uint32_t logical_pages, ObsoleteMode mode) const {
  StoreParams p;
  p.method = method;
  p.max_differential = method == Method::kPdl ? max_differential : 0;
  p.log_region = method == Method::kIpl ? log_region : 0;
  p.obsolete = mode;
  p.logical_pages = logical_pages;
  return p;
}

const std::vector<MethodSpec>& all_methods() {
  static const std::vector<MethodSpec> methods = [] {
    std::vector<MethodSpec> v;
    auto add = [&](std::string key, std::string label, Method m, uint32_t md, uint32_t lr,
                   bool note) {
      MethodSpec s;
      s.key = std::move(key);
      s.label = std::move(label);
      s.method = m;
      s.max_differential = md;
      s.log_region = lr;
      s.note_updates = note;
      v.push_back(std::move(s));
    };
    add("pdl256", "PDL(256B)", Method::kPdl, 256, 0, true);
    add("pdl2k", "PDL(2KB)", Method::kPdl, 2048, 0, true);
    add("opu", "OPU", Method::kOpu, 0, 0, true);
    add("ipu", "IPU", Method::kIpu, 0, 0, true);
    add("ipl18k", "IPL(18KB)", Method::kIpl, 0, 18 * 1024, true);
    add("ipl64k", "IPL(64KB)", Method::kIpl, 0, 64 * 1024, true);
    add("ipl18k-diff", "IPL(18KB)/diff", Method::kIpl, 0, 18 * 1024, false);
    add("ipl64k-diff", "IPL(64KB)/diff", Method::kIpl, 0, 64 * 1024, false);
    return v;
  }();
  return methods;
}

std::vector<MethodSpec> paper_methods() {
  std::vector<MethodSpec> v;
  for (const MethodSpec& m : all_methods())
    if (m.note_updates) v.push_back(m);
  return v;
}

bool parse_methods(const std::string& list, std::vector<MethodSpec>* out, std::string* err) {
  return pick_keys(list, all_methods(), "method", method_keys(), out, err);
}

std::string method_keys() {
  std::string s;
  for (const MethodSpec& m : all_methods()) s += (s.empty() ? "" : ", ") + m.key;
  return s;
}

std::string obsolete_label(const MethodSpec& m, ObsoleteMode mode) {
  return m.has_obsolete_modes() ? obsolete_name(mode) : "none";
}

}  // namespace pdl::bench
