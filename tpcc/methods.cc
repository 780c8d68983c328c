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

std::string MethodSpec::uri_params(unsigned page, uint64_t chip_bytes) const {
  return preset.uri_params(page, chip_bytes) + (commit.empty() ? "" : "&commit=" + commit);
}

std::vector<MethodSpec> default_methods() {
  std::vector<MethodSpec> v;
  for (const MethodSpec& m : all_methods())
    if (m.key == "pdl" || m.key == "opu" || m.key == "ipu" || m.key == "ipl") v.push_back(m);
  return v;
}

std::vector<MethodSpec> ftl_members() { return members(ftl_methods()); }

namespace {

const char kNvmGroup[] = "pdl-nvm,pdl2k-nvm,pdl,opu,ipl,ipl-pcram";

}  // namespace

std::vector<MethodSpec> nvm_members() {
  std::vector<MethodSpec> v;
  std::string err;
  (void)parse_methods(kNvmGroup, &v, &err);  // catalogue keys: always parse
  return v;
}

bool parse_methods(const std::string& list, std::vector<MethodSpec>* out, std::string* err) {
  if (list == "all") {
    *out = all_methods();
    return true;
  }
  // The groups expand in place; the rest are keys of the paper six or of the FTL devices.
  std::string expanded;
  for (size_t pos = 0; pos <= list.size();) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(pos, comma - pos);
    if (item == "ftl") {
      item.clear();
      for (const MethodPreset& p : ftl_methods()) item += (item.empty() ? "" : ",") + p.key;
    } else if (item == "nvm") {
      item = kNvmGroup;
    } else if (item == "all") {
      item.clear();
      for (const MethodPreset& p : paper_methods())
        item += (item.empty() ? "" : ",") + p.tpcc_key();
    }
    if (!item.empty()) expanded += (expanded.empty() ? "" : ",") + item;
    pos = comma + 1;
  }
  std::vector<MethodPreset> among = paper_methods();
  std::string known = method_keys(true);
  for (const std::vector<MethodPreset>& group : {ftl_methods(), nvm_methods()})
    for (const MethodPreset& p : group) {
      among.push_back(p);
      known += ", " + p.key;
    }
  std::vector<MethodPreset> picked;
  if (!pdl::parse_methods(expanded, among, known + ", all, ftl, nvm", &picked, err))
    return false;
  *out = members(picked);
  return true;
}

}  // namespace pdl::tpcc
