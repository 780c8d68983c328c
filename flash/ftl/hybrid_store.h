// hybrid_store.h — BAST and FAST, the hybrid (log-block) FTLs of a commodity flash device
// ([BAST], [FAST]), as a PageStore: a block-level map of data blocks plus a few page-mapped log
// blocks that absorb overwrites, reclaimed by switch, partial and full merges.
//
// (Interface of the layer's factory; the engine's classes and invariants are documented with
// them in this folder.)
#pragma once

#include <memory>

#include "flash/device/nand.h"
#include "flash/store/page_store.h"
#include "flash/store/store_params.h"

namespace pdl {

class HybridStore {
 public:
  // Defaults and ranges of an ftl=bast|fast store for `g` (log_blocks, gc_reserve_blocks,
  // logical_pages); messages name the parameter ("log_blocks: ...").
  static Status resolve_params(StoreParams* p, const Geometry& g);
  // An empty store on `nand` (erases its data blocks; the superblock is the caller's).
  static Status format(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out);
  // Crash recovery from the spare areas.
  static Status mount(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out,
                      MountReport* report);
};

}  // namespace pdl
