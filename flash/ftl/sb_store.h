// sb_store.h — StableBuffer ([StableBuffer]) as a PageStore in front of an FTL device: page
// writes staged in a pre-allocated area of the same device (slots after the user's pages) and
// flushed to their destinations in the FTL's efficient write patterns.
//
// Checkpoint (sb_tables.cc, docs/format.md §13.3): the device's tables nested first, then the
// buffer's slot table; mount_tables rebuilds the device through the image layer's dispatch.
//
// (Interface of the layer's factory; the classes and invariants are documented with them in
// this folder.)
#pragma once

#include <memory>
#include <vector>

#include "flash/store/page_store.h"
#include "flash/store/store_params.h"
#include "flash/store/table_stream.h"

namespace pdl {

// How the FTL device under a stablebuffer store is mounted from its tables (mount_store_tables
// in the image layer, which knows the engines).
using TablesMounter = Status (*)(Nand& nand, const StoreParams& params, CommitMode mode,
                                 TableReader& r, std::unique_ptr<PageStore>* out);
// How the FTL device is replayed after a power cut from its tables and the blocks declared
// since (the image layer's dispatch; docs/design.md §17).
using DeviceReplayer = Status (*)(Nand& nand, const StoreParams& params, CommitMode mode,
                                  TableReader& r, const std::vector<uint32_t>& declared,
                                  std::unique_ptr<PageStore>* out, MountReport* report);

class SbStore {
 public:
  // Defaults and ranges of a method=stablebuffer store for `g` (sb_slots, logical_pages = the
  // pages offered to the user); `resolve_device` resolves the FTL device under it
  // (resolve_store_params). Messages name the parameter ("sb_slots: ...").
  static Status resolve_params(StoreParams* p, const Geometry& g, ParamsResolver resolve_device);
  // The parameters of the FTL device under a resolved stablebuffer store `p`: method=ftl, the
  // same ftl and log_blocks, room for the user's pages, the slots and their directory.
  static StoreParams device_params(const StoreParams& p, const Geometry& g);
  // An empty store over a freshly formatted `device` (of device_params(p)).
  static Status format(std::unique_ptr<PageStore> device, const StoreParams& p,
                       std::unique_ptr<PageStore>* out);
  // Recovery over a mounted `device`: the staging area's translation table rebuilt from the
  // slots' destinations and timestamps ([StableBuffer]'s slot scan). Run-time choices
  // (sb_recognition, sb_flush) come in `p`.
  static Status mount(std::unique_ptr<PageStore> device, const StoreParams& p,
                      std::unique_ptr<PageStore>* out, MountReport* report);
  // The store from the tables StableBufferStore::save_tables wrote (sb_tables.cc): the device
  // first, by `mount_device` with device_params(p) over its length-prefixed sub-stream, then
  // the buffer's section; finishes `r`. No flash operation.
  static Status mount_tables(Nand& nand, const StoreParams& p, TableReader& r,
                             TablesMounter mount_device, std::unique_ptr<PageStore>* out);
  // After a power cut (sb_tables.cc): the device replayed by `replay_device` from its tables
  // and the blocks `declared` since the checkpoint, then the buffer recovered by mount()'s
  // slot scan over it — as a scan mount does over a scanned device (the buffer's slot table
  // in `r` is the checkpoint's, older than the slots written since). Errors: the device's.
  static Status replay(Nand& nand, const StoreParams& p, TableReader& r,
                       const std::vector<uint32_t>& declared, DeviceReplayer replay_device,
                       std::unique_ptr<PageStore>* out, MountReport* report);

 private:
  static TableReader device_section(TableReader& r);  // sb_tables.cc
};

}  // namespace pdl
