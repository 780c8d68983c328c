// methods.h — the catalogue of page-update method configurations the programs compare
// ([PDL] §5.1, Fig. 8 legends): one table of presets, each with its keys, the label figures and
// tables print, and the StoreParams it stands for. pdl-bench and pdl-tpcc (and their tests)
// name methods through it only.
//
//   key          short key  label           preset
//   pdl256       pdl        PDL(256B)       method=pdl, Max_Differential_Size = 256 bytes
//   pdl2k                   PDL(2KB)        method=pdl, Max_Differential_Size = a page
//   opu                     OPU             out-place update with page-level mapping
//   ipu                     IPU             in-place update (a block rewritten per page write)
//   ipl18k       ipl        IPL(18KB)       in-page logging, 18 KiB (9 of 64 pages) for logs
//   ipl64k                  IPL(64KB)       64 KiB (32 of 64 pages) for logs
//   ipl18k-diff             IPL(18KB)/diff  IPL without the update-log hook — the store derives
//   ipl64k-diff             IPL(64KB)/diff  its log records by comparing with the previous
//                                           version (the DBMS-independent path)
//   ipl18k-s128             IPL(18KB)/128B  IPL with 128-byte log sectors ([PDL] §5.1: a
//   ipl64k-s128             IPL(64KB)/128B  128-byte log buffer per page) instead of 512
//   pdl2k-nomerge           PDL(2KB)/no-merge  PDL(2KB) without GC's merge of differentials
//                                           larger than half a page (StoreParams::gc_merge)
//   ftl-page                FTL(page)       SQLite on a commodity FTL device (method=ftl): a
//   bast16, bast32          BAST(16)        page-mapping FTL, BAST or FAST with 16 or 32 log
//   fast16, fast32          FAST(16)        blocks; the journal on the device, no atomic commit
//   sb-page, sb-bast16,     SB/FTL(page)    StableBuffer in front of that device
//   sb-fast16               SB/BAST(16) ...
//   pdl-nvm                 PDL(256B)+NVM(64KB)  PDL with its differential write buffer in
//   pdl2k-nvm               PDL(2KB)+NVM(64KB)   64 KiB of NVM beside the chip; Max_Differential_
//                                           Size 256 bytes (what method=pdl&nvm=64K gives) or
//                                           a page
//   ipl-pcram               IPL+PCRAM(128B) IPL with every block's log area in PCRAM
//   ipl-pcram512            IPL+PCRAM(512B) ([IPL-PCRAM] §3.2), 128- or 512-byte log sectors;
//                                           the per-block area is IPL(18KB)'s 18 KiB, so the
//                                           NVM is 18 KiB x the chip's blocks and flash-only
//                                           and PCRAM IPL have the same log capacity
// The ipl*-s128 and no-merge entries are pdl-bench's fidelity experiments, not among the
// paper's six; the FTL devices are the baselines of [BAST], [FAST] and [StableBuffer]
// (ftl_methods()); the NVM entries need NVM beside the chip (nvm_methods(): the device's
// Geometry::nvm_bytes must be set by whoever creates the chip, to nvm_bytes(blocks)).
// The plain IPL entries get every changed run through PageStore::note_update, as the paper's
// in-DBMS IPL did; through the VFS (pdl-tpcc) IPL always compares, since SQLite does not say
// what it changed, and only the six paper entries run.
//
// Keys: pdl-bench names an entry by its key, pdl-tpcc by its short key (the key when it has
// none); a lookup accepts either. Traits (obsolete marks, in-page, atomic commit) are those of
// the entry's Method (flash/store/store_params.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flash/store/store_params.h"

namespace pdl {

struct MethodPreset {
  std::string key;        // "pdl256"
  std::string short_key;  // "pdl"; "" = the key
  std::string label;      // "PDL(256B)", "IPL(18KB)/diff"
  Method method = Method::kPdl;
  uint32_t max_differential = 0;  // PDL: bytes, 0 = a page
  uint32_t log_region = 0;        // IPL: bytes
  bool note_updates = true;       // false: the /diff variant
  uint32_t log_sector = 0;        // IPL: bytes per log sector, 0 = the engine's default
  bool gc_merge = true;           // PDL: GC merges large differentials (StoreParams::gc_merge)
  FtlKind ftl = FtlKind::kNone;   // FTL devices: which FTL
  uint32_t log_blocks = 0;        // BAST/FAST: log blocks
  uint32_t nvm = 0;               // PDL+NVM: bytes of NVM the store uses (0: none)
  uint32_t nvm_per_block = 0;     // IPL+PCRAM: NVM log area per erase block (0: none)
  // One of [PDL] §5.2's six (not a /diff, log-sector or no-merge variant, not an FTL device):
  // the set pdl-tpcc runs by default.
  bool paper() const {
    return note_updates && log_sector == 0 && gc_merge && !is_ftl_device(method) && !uses_nvm();
  }
  // Keeps part of its state in NVM beside the chip (StoreParams::nvm_bytes > 0).
  bool uses_nvm() const { return nvm != 0 || nvm_per_block != 0; }
  // The NVM the store uses (and the device must have) on a chip of `blocks` erase blocks:
  // `nvm`, or nvm_per_block x blocks (the superblocks' share left for the engine's own NVM
  // records); 0 for a flash-only entry.
  uint32_t nvm_bytes(uint32_t blocks) const {
    return nvm ? nvm : uint32_t(std::min<uint64_t>(uint64_t(nvm_per_block) * blocks, 1u << 30));
  }
  const std::string& tpcc_key() const { return short_key.empty() ? key : short_key; }
  bool has_obsolete_modes() const { return has_obsolete_marks(method); }
  // StoreParams for this preset with `logical_pages` and obsolete mode `mode`, on a chip of
  // `blocks` erase blocks (needed only by the per-block NVM entries: nvm_bytes(blocks)).
  StoreParams params(uint32_t logical_pages, ObsoleteMode mode, uint32_t blocks = 0) const;
  // As pdl VFS URI parameters for flash pages of `page` bytes: "method=pdl&max_diff=256",
  // "method=ipl&log_region=18K" (without page size and chip size). An NVM entry adds
  // "&nvm=SIZE" (which gives the device that NVM too) for a chip of `chip_bytes` bytes of
  // `pages_per_block`-page blocks; a per-block NVM entry without `chip_bytes` yields
  // "nvm=per-block", which the image refuses (not a size) rather than running flash-only.
  std::string uri_params(uint32_t page, uint64_t chip_bytes = 0,
                         uint32_t pages_per_block = 64) const;
};

// Every entry, in the order of the paper's Fig. 8 legends, then the fidelity variants.
const std::vector<MethodPreset>& method_catalogue();
// IPL with a log region of `log_region` bytes and log sectors of `log_sector` bytes (0 or 512:
// the engine's default), update-log hook on: the catalogue's entry if it has one, else one
// keyed "ipl<KiB>k" / "ipl<KiB>k-s<bytes>" and labelled as method_label labels it.
MethodPreset ipl_preset(uint32_t log_region, uint32_t log_sector);
// The six of [PDL] §5.2: pdl256, pdl2k, opu, ipu, ipl18k, ipl64k.
std::vector<MethodPreset> paper_methods();
// The FTL devices, with and without StableBuffer: ftl-page, bast16, ..., sb-fast16.
std::vector<MethodPreset> ftl_methods();
// Every flash-only entry but the FTL devices: the page-update methods on raw NAND ([PDL]'s
// experiments; pdl-bench's Exp. 1 default).
std::vector<MethodPreset> raw_nand_methods();
// The entries with NVM beside the chip: pdl-nvm, pdl2k-nvm, ipl-pcram, ipl-pcram512.
std::vector<MethodPreset> nvm_methods();
// The entry a key or short key names; nullptr if none.
const MethodPreset* find_method(std::string_view key);
// "pdl256, pdl2k, ..." (every key) or, with `short_keys`, "pdl, pdl2k, ..." (the paper six by
// short key), for usage text and error messages.
std::string method_keys(bool short_keys = false);
// Parses "pdl256,opu,..." (keys or short keys of entries of `among`) into those entries, in
// the order given, duplicates dropped; false with *err = "unknown method 'x' (known: <known>)"
// or "no method given".
bool parse_methods(const std::string& list, const std::vector<MethodPreset>& among,
                   const std::string& known, std::vector<MethodPreset>* out, std::string* err);

// "spare" / "memory" for methods with obsolete marks, "none" for IPU and IPL.
std::string obsolete_label(Method m, ObsoleteMode mode);
// Display name of any configuration, resolved: "PDL(256B)", "PDL(2KB)", "OPU", "IPU",
// "IPL(18KB)" — the catalogue's labels for its presets on 2 KiB pages; an IPL whose log sector
// is not 512 bytes gets "/<bytes>B" ("IPL(18KB)/128B"), a PDL without the GC merge
// "/no-merge"; an FTL device "FTL(page)", "BAST(16)", "FAST(32)", with StableBuffer in front
// "SB/BAST(16)"; with NVM (StoreParams::nvm_bytes) PDL is "PDL(<max diff>)+NVM(<nvm>)"
// ("PDL(256B)+NVM(64KB)") and IPL "IPL+PCRAM(<log sector>)" ("IPL(8KB)+PCRAM(128B)" when its
// per-block area is not 18 KiB; a log sector of 0 is the NVM default, 128 bytes).
std::string method_label(const StoreParams& p, uint32_t page_size);

}  // namespace pdl
