// methods.h — the page-update methods pdl-tpcc compares, as pdl VFS URI parameters.
//
//   key      label       URI parameters                 paper ([PDL] §5)
//   pdl      PDL(256B)   method=pdl&max_diff=256         PDL(256B)
//   pdl2k    PDL(2KB)    method=pdl&max_diff=<page>      PDL(2KB): Max_Differential_Size = a page
//   opu      OPU         method=opu                      OPU
//   ipu      IPU         method=ipu                      IPU
//   ipl      IPL(18KB)   method=ipl&log_region=18K       IPL(18KB)
//   ipl64k   IPL(64KB)   method=ipl&log_region=64K       IPL(64KB)
// Aliases: pdl256 = pdl, ipl18k = ipl. Through the VFS, IPL derives its log records by
// comparing a page with its previous version (SQLite does not say what it changed); the
// paper's IPL ran inside the DBMS (docs/design.md §10).
// Commit modes (--commit): each method runs with commit=atomic (the rollback journal in
// memory, every commit one atomic commit of the store) and/or commit=journal (the journal on
// flash: the paper's setting). IPU has no atomic commit: it runs with the journal on flash
// whatever is asked. With both modes a member's key and label say which ("pdl-atomic",
// "PDL(256B) atomic").
#pragma once

#include <string>
#include <vector>

namespace pdl::tpcc {

struct MethodSpec {
  std::string key;    // "pdl"
  std::string label;  // "PDL(256B)"
  std::string uri;    // "method=pdl&max_diff=256" (without page size and chip size)
  std::string method;  // "pdl" (the key without a commit suffix)
  std::string commit;  // "atomic" or "journal" ("" before with_commits)
  bool atomic_capable() const { return method != "ipu"; }
  // The URI parameters for flash pages of `page` bytes (PDL(2KB)'s max_diff is a page).
  std::string uri_params(unsigned page) const;
};

// The default set: pdl, opu, ipu, ipl. All: pdl, pdl2k, opu, ipu, ipl, ipl64k.
std::vector<MethodSpec> default_methods();
std::vector<MethodSpec> all_methods();
// "pdl,opu,..." or "all"; false with *err naming an unknown key. Duplicates are dropped.
bool parse_methods(const std::string& list, std::vector<MethodSpec>* out, std::string* err);
// Each method once per commit mode it can run in (see above), commit=... in its URI; keys and
// labels name the mode when `commits` has more than one.
std::vector<MethodSpec> with_commits(const std::vector<MethodSpec>& methods,
                                     const std::vector<std::string>& commits);

}  // namespace pdl::tpcc
