// methods.cc — see methods.h.
#include "tpcc/methods.h"

namespace pdl::tpcc {

namespace {

std::vector<MethodSpec> members(const std::vector<MethodPreset>& presets) {
  std::vector<MethodSpec> v;
  for (const MethodPreset& p : presets) v.push_back({p.tpcc_key(), p.label, p, ""});
  return v;
}

}  // namespace

std::vector<MethodSpec> all_methods() { return members(paper_methods()); }

std::vector<MethodSpec> with_commits(const std::vector<MethodSpec>& methods,
                                     const std::vector<std::string>& commits) {
  std::vector<MethodSpec> out;
  const bool several = commits.size() > 1;
  for (const MethodSpec& m : methods) {
    bool journal_done = false;
    for (const std::string& c0 : commits) {
      const std::string c = has_atomic_commit(m.preset.method) ? c0 : "journal";
      if (c == "journal" && journal_done) continue;
      journal_done = journal_done || c == "journal";
      MethodSpec v = m;
      v.commit = c;
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
  return preset.uri_params(page) + (commit.empty() ? "" : "&commit=" + commit);
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
  std::vector<MethodPreset> picked;
  if (!pdl::parse_methods(list, paper_methods(), method_keys(true) + ", all", &picked, err))
    return false;
  *out = members(picked);
  return true;
}

}  // namespace pdl::tpcc
