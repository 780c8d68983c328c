// open_store.h — the store factory: format, mount and upgrade a store, the superblock deciding
// which page-update method runs. It is the only place that knows every engine (flash/pdl,
// flash/ipl); everything below the image layer sees a PageStore.
#pragma once

#include <memory>
#include <vector>

#include "flash/device/nand.h"
#include "flash/store/page_inspector.h"
#include "flash/store/page_store.h"
#include "flash/volume/volume.h"

namespace pdl {

// Fill the defaults of `params` for `g` and check their ranges: the checks every method shares,
// then its engine's (PdlStore::resolve_params, IplStore::resolve_params). Messages name the
// parameter ("max_diff: ..."). A ParamsResolver (store_params.h).
Status resolve_store_params(StoreParams* params, const Geometry& g);

// Write a superblock for `params` and return an empty store. Destroys what the chip held.
// params.checkpoint: the chip's last blocks become a checkpoint area (checkpoint_area_for) and
// the store runs on the others.
Status format_store(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out,
                    CommitMode mode = CommitMode::kPerPage);
// Recover the store on `nand` by scanning it (crash recovery, [PDL] Fig. 7). kGroup on a
// store of superblock format 1 fails with kUnsupported: mount it kPerPage, upgrade_store, then
// set_commit_mode(kGroup). An FTL device (method ftl, stablebuffer) has no groups: it mounts
// per page whatever `mode` says. `run_time`, if given, supplies the run-time choices the
// superblock does not keep (sb_recognition, sb_flush).
//
// A chip with a checkpoint area (superblock format 6, docs/design.md §17): the store runs on
// its first blocks - area blocks (CheckpointedStore in front of the engine). If the checkpoint
// log's newest entry is a checkpoint nothing could be newer than, the engine's tables come from
// it (read only: the area, the log, no page of the store) and the client's section goes to
// `client`; any doubt or failure — no checkpoint, changed since, corrupt, a method without
// checkpoint support — and the engine scans as above (`client` empty). `report` says which
// (from_checkpoint, checkpoint_gen, checkpoint_pages, scan_reason) and the simulated time of
// the whole mount (sim_us).
// After a power cut the engine replays the blocks declared since the checkpoint; the client's
// section of that checkpoint is then handed over only with the lpns the replay reconsidered
// (ClientTables::replayed, touched: PageStore::take_replayed_lpns), from which the client
// brings its tables up to date — an engine that does not list them: no section.
struct ClientTables {
  std::vector<uint8_t> section;  // the client's section of the checkpoint (empty: none)
  bool replayed = false;         // the store is that checkpoint plus blocks replayed since
  std::vector<uint32_t> touched;  // then: every lpn changed since it, and maybe more (sorted)
  void clear() { *this = ClientTables(); }
};
Status mount_store(Nand& nand, std::unique_ptr<PageStore>* out, MountReport* report = nullptr,
                   CommitMode mode = CommitMode::kPerPage,
                   const StoreParams* run_time = nullptr, ClientTables* client = nullptr);
// The checkpoint area a format of `params` on `g` gets: 0 unless params.checkpoint; else
// params.checkpoint_blocks, or checkpoint_area_blocks' bound when 0. kInvalidArgument naming
// why if it does not fit (more than half the chip, or the parameters do not resolve on the
// remaining blocks).
Status checkpoint_area_for(const StoreParams& params, const Geometry& g, uint32_t* area);
// The inspector of the engine that runs `params` (resolved for `g`): decodes its pages' data
// areas for tools (page_inspector.h).
std::unique_ptr<PageInspector> page_inspector(const StoreParams& params, const Geometry& g);

// A store mounted from an older format (legacy_format()) brought up to date, superblock
// included; nothing for a current one. For writable opens only.
Status upgrade_store(Nand& nand, PageStore& store);

// What a Volume on `nand` is handed to mount its store again after the store halted (a full
// host file system): mount_store on the same chip, with the same run-time choices (copied).
// `nand` must outlive the Volume.
StoreOpener remount_opener(Nand& nand, const StoreParams* run_time = nullptr);

}  // namespace pdl
