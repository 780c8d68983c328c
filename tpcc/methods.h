// methods.h — the members pdl-tpcc compares: entries of the method catalogue
// (flash/image/methods.h: the paper's six, by short key: pdl, pdl2k, opu, ipu, ipl, ipl64k;
// the keys pdl256 and ipl18k name the same entries; and the FTL devices by key: ftl-page,
// bast16, bast32, fast16, fast32, sb-page, sb-bast16, sb-fast16; and the entries with NVM
// beside the chip: pdl-nvm, pdl2k-nvm, ipl-pcram, ipl-pcram512), each in one commit mode.
// Through the VFS, IPL derives its log records by comparing a page with its previous version
// (SQLite does not say what it changed); the paper's IPL ran inside the DBMS (docs/design.md
// §10).
// Commit modes (--commit): each method runs with commit=atomic (the rollback journal in
// memory, every commit one atomic commit of the store) and/or commit=journal (the journal on
// flash: the paper's setting). IPU has no atomic commit: it runs with the journal on flash
// whatever is asked. With both modes a member's key and label say which ("pdl-atomic",
// "PDL(256B) atomic").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flash/image/methods.h"

namespace pdl::tpcc {

struct MethodSpec {
  std::string key;     // "pdl" (the entry's short key), "pdl-atomic"
  std::string label;   // "PDL(256B)", "PDL(256B) atomic"
  MethodPreset preset;
  std::string commit;  // "atomic" or "journal" ("" before with_commits)
  // The URI parameters for flash pages of `page` bytes on a chip of `chip_bytes` (an NVM
  // entry's NVM follows the chip: MethodPreset::uri_params), commit=... once with_commits
  // chose.
  std::string uri_params(unsigned page, uint64_t chip_bytes) const;
};

// The default set: pdl, opu, ipu, ipl. All: pdl, pdl2k, opu, ipu, ipl, ipl64k.
std::vector<MethodSpec> default_methods();
std::vector<MethodSpec> all_methods();
// The FTL devices with and without StableBuffer (ftl-page, bast16, ..., sb-fast16): SQLite
// on a commodity FTL device, the journal on the device (no atomic commit).
std::vector<MethodSpec> ftl_members();
// The NVM comparison ([IPL-PCRAM]; docs/results.md, "NVM beside the chip"): pdl-nvm,
// pdl2k-nvm, pdl, opu, ipl, ipl-pcram.
std::vector<MethodSpec> nvm_members();
// "pdl,opu,...", "all" (the paper six), "ftl" (ftl_members()), "nvm" (nvm_members()) or a mix
// ("pdl,ftl"); false with *err naming an unknown key. Duplicates are dropped.
bool parse_methods(const std::string& list, std::vector<MethodSpec>* out, std::string* err);
// Each method once per commit mode it can run in (see above); keys and labels name the mode
// when `commits` has more than one.
std::vector<MethodSpec> with_commits(const std::vector<MethodSpec>& methods,
                                     const std::vector<std::string>& commits);

}  // namespace pdl::tpcc
