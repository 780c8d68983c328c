// methods.cc — see methods.h.
#include "tpcc/methods.h"

#include <algorithm>

#include "flash/common/split.h"

namespace pdl::tpcc {

std::vector<MethodSpec> all_methods() {
  return {
      {"pdl", "PDL(256B)", "method=pdl&max_diff=256", "pdl", ""},
      {"pdl2k", "PDL(2KB)", "method=pdl&max_diff=2048", "pdl2k", ""},
      {"opu", "OPU", "method=opu", "opu", ""},
      {"ipu", "IPU", "method=ipu", "ipu", ""},
      {"ipl", "IPL(18KB)", "method=ipl&log_region=18K", "ipl", ""},
      {"ipl64k", "IPL(64KB)", "method=ipl&log_region=64K", "ipl64k", ""},
  };
}

std::vector<MethodSpec> with_commits(const std::vector<MethodSpec>& methods,
                                     const std::vector<std::string>& commits) {
  std::vector<MethodSpec> out;
  const bool several = commits.size() > 1;
  for (const MethodSpec& m : methods) {
    bool journal_done = false;
    for (const std::string& c0 : commits) {
      const std::string c = m.atomic_capable() ? c0 : "journal";
      if (c == "journal" && journal_done) continue;
      journal_done = journal_done || c == "journal";
      MethodSpec v = m;
      v.commit = c;
      v.uri = m.uri + "&commit=" + c;
      if (several) {
        v.key = m.key + "-" + c;
        v.label = m.label + " " + c;
      }
      out.push_back(v);
    }
  }
  return out;
}

std::string MethodSpec::uri_params(unsigned page) const {
  if (method != "pdl2k") return uri;
  return "method=pdl&max_diff=" + std::to_string(page) +
         (commit.empty() ? "" : "&commit=" + commit);
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
  // Aliases: the pdl-bench names of the paper's two defaults.
  std::string keys;
  for (const std::string& k : split_list(list))
    keys += (keys.empty() ? "" : ",") + (k == "pdl256" ? "pdl" : k == "ipl18k" ? "ipl" : k);
  return pick_keys(keys, all_methods(), "method", "pdl, pdl2k, opu, ipu, ipl, ipl64k, all", out,
                   err);
}

}  // namespace pdl::tpcc
