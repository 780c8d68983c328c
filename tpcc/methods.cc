// methods.cc — see methods.h.
#include "tpcc/methods.h"

#include <algorithm>

namespace pdl::tpcc {

std::vector<MethodSpec> all_methods() {
  return {
      {"pdl", "PDL(256B)", "method=pdl&max_diff=256"},
      {"pdl2k", "PDL(2KB)", "method=pdl&max_diff=2048"},
      {"opu", "OPU", "method=opu"},
      {"ipu", "IPU", "method=ipu"},
      {"ipl", "IPL(18KB)", "method=ipl&log_region=18K"},
      {"ipl64k", "IPL(64KB)", "method=ipl&log_region=64K"},
  };
}

std::string MethodSpec::uri_params(unsigned page) const {
  return key == "pdl2k" ? "method=pdl&max_diff=" + std::to_string(page) : uri;
}

std::vector<MethodSpec> default_methods() {
  std::vector<MethodSpec> v;
  for (const MethodSpec& m : all_methods())
    if (m.key == "pdl" || m.key == "opu" || m.key == "ipu" || m.key == "ipl") v.push_back(m);
  return v;
}

bool parse_methods(const std::string& list, std::vector<MethodSpec>* out, std::string* err) {
  if (list == "all") {
    *out = all_methods();
    return true;
  }
  const std::vector<MethodSpec> all = all_methods();
  std::vector<MethodSpec> v;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string key = list.substr(pos, comma - pos);
    pos = comma + 1;
    if (key.empty()) continue;
    if (key == "pdl256") key = "pdl";
    if (key == "ipl18k") key = "ipl";
    auto it = std::find_if(all.begin(), all.end(), [&](const MethodSpec& m) { return m.key == key; });
    if (it == all.end()) {
      *err = "unknown method '" + key + "' (known: pdl, pdl2k, opu, ipu, ipl, ipl64k, all)";
      return false;
    }
    if (std::none_of(v.begin(), v.end(), [&](const MethodSpec& m) { return m.key == key; }))
      v.push_back(*it);
  }
  if (v.empty()) {
    *err = "no method given";
    return false;
  }
  *out = std::move(v);
  return true;
}

}  // namespace pdl::tpcc
