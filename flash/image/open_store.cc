// open_store.cc — resolve_store_params / format_store / mount_store: the method decides which
// engine runs (for a mount, the superblock's).
//
// Format order makes a cut format harmless: the old superblock copies are erased first (the
// chip is then "not formatted"), then every data block, and the new superblock is programmed
// last. A chip is a store only once its superblock is complete.
// page_inspector picks the engine's PageInspector the same way.
// upgrade_store brings a PDL, OPU or IPL store of superblock format 1 (no commit records) to
// format 2 (an IPL store without room for a commit log stays format 1).
#include <ctime>
#include <optional>
#include <random>

#include "flash/image/open_store.h"
#include "flash/ftl/hybrid_store.h"
#include "flash/ftl/sb_store.h"
#include "flash/ipl/ipl_page_inspector.h"
#include "flash/ipl/ipl_store.h"
#include "flash/pdl/pdl_page_inspector.h"
#include "flash/pdl/pdl_store.h"
#include "flash/store/page_store.h"
#include "flash/store/superblock.h"
#include "flash/store/reread.h"

namespace pdl {

Status resolve_store_params(StoreParams* params, const Geometry& g) {
  PDL_TRY(params->check_method());
  if (params->method == Method::kIpu || params->method == Method::kIpl)
    return IplStore::resolve_params(params, g);
  if (params->method == Method::kStableBuffer)
    return SbStore::resolve_params(params, g, resolve_store_params);
  if (params->method == Method::kFtl && params->ftl != FtlKind::kPage)
    return HybridStore::resolve_params(params, g);
  return PdlStore::resolve_params(params, g);
}

namespace {

// An FTL device (method=ftl) of resolved `params`: formatted empty, or mounted.
Status format_ftl_device(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out) {
  if (params.ftl == FtlKind::kPage)
    return PdlStore::format(nand, params, CommitMode::kPerPage, out);
  return HybridStore::format(nand, params, out);
}

Status mount_ftl_device(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out,
                        MountReport* report) {
  if (params.ftl == FtlKind::kPage)
    return PdlStore::mount(nand, params, false, CommitMode::kPerPage, out, report);
  return HybridStore::mount(nand, params, out, report);
}

// The run-time choices of `run_time` (not stored in the superblock) applied to `params`.
void apply_run_time(const StoreParams* run_time, StoreParams* params) {
  if (!run_time) return;
  params->sb_recognition = run_time->sb_recognition;
  params->sb_flush = run_time->sb_flush;
}

}  // namespace

Status format_store(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out,
                    CommitMode mode) {
  Superblock sb;
  sb.params = params;
  PDL_TRY(resolve_store_params(&sb.params, nand.geometry()));
  sb.version = superblock_version_for(sb.params);
  std::random_device rd;
  for (auto& b : sb.uuid) b = uint8_t(rd());
  sb.format_time = uint64_t(std::time(nullptr));
  for (uint32_t b = 0; b < kSuperblockBlocks; b++) {
    if (nand.is_bad(b)) continue;
    const Status st = erase_with_retries(nand, b);
    if (st.is(Errc::kBadBlock)) PDL_TRY(nand.mark_bad(b));  // write_superblock skips it
    else PDL_TRY(st);
  }
  std::unique_ptr<PageStore> store;
  if (in_page(sb.params.method)) {
    PDL_TRY(IplStore::format(nand, sb.params, &store));  // erases the data blocks
  } else if (sb.params.method == Method::kFtl) {
    PDL_TRY(format_ftl_device(nand, sb.params, &store));  // (no atomic groups)
  } else if (sb.params.method == Method::kStableBuffer) {
    std::unique_ptr<PageStore> device;
    PDL_TRY(format_ftl_device(nand, SbStore::device_params(sb.params, nand.geometry()), &device));
    PDL_TRY(SbStore::format(std::move(device), sb.params, &store));
  } else {
    PDL_TRY(PdlStore::format(nand, sb.params, mode, &store));
  }
  PDL_TRY(write_superblock(nand, sb));
  if (in_page(sb.params.method))
    PDL_TRY(store->set_commit_mode(mode));  // (IPU stays per-page)
  *out = std::move(store);
  return Status::ok();
}

Status mount_store(Nand& nand, std::unique_ptr<PageStore>* out, MountReport* report,
                   CommitMode mode, const StoreParams* run_time) {
  Superblock sb;
  PDL_TRY(read_superblock(nand, resolve_store_params, &sb));
  apply_run_time(run_time, &sb.params);
  switch (sb.params.method) {
    case Method::kFtl:  // a block device: no atomic groups, whatever `mode` asks
      return mount_ftl_device(nand, sb.params, out, report);
    case Method::kStableBuffer: {
      std::unique_ptr<PageStore> device;
      PDL_TRY(mount_ftl_device(nand, SbStore::device_params(sb.params, nand.geometry()), &device,
                               report));
      return SbStore::mount(std::move(device), sb.params, out, report);
    }
    case Method::kPdl:
    case Method::kOpu:
      if (sb.version == kSuperblockLegacy && mode == CommitMode::kGroup)
        return Status::error(Errc::kUnsupported,
                             "a store of superblock format 1 has no commit records: upgrade it "
                             "(a writable open does) before using atomic groups");
      return PdlStore::mount(nand, sb.params, sb.version == kSuperblockLegacy, mode, out, report);
    case Method::kIpu:
    case Method::kIpl: {
      const bool legacy = sb.version == kSuperblockLegacy;
      if (legacy && mode == CommitMode::kGroup && sb.params.method == Method::kIpl)
        return Status::error(Errc::kUnsupported,
                             "a store of superblock format 1 has no commit records: upgrade it "
                             "(a writable open does) before using atomic groups");
      PDL_TRY(IplStore::mount(nand, sb.params, legacy, out, report));
      return (*out)->set_commit_mode(mode);  // (IPU stays per-page)
    }
  }
  return Status::error(Errc::kUnsupported, "unknown page-update method in superblock");
}

std::unique_ptr<PageInspector> page_inspector(const StoreParams& params, const Geometry& g) {
  if (params.method == Method::kIpu || params.method == Method::kIpl)
    return std::make_unique<IplPageInspector>(params, g);
  return std::make_unique<PdlPageInspector>();
}

Status upgrade_store(Nand& nand, PageStore& store) {
  if (!store.legacy_format()) return Status::ok();
  // First a commit record covering every page on flash (format 1 counted them all), then the
  // superblock: cut in between, the store mounts as format 1 again and is upgraded again.
  PDL_TRY(store.upgrade_format());
  if (store.legacy_format()) return Status::ok();  // IPU, or an IPL store with no room
  Superblock sb;
  PDL_TRY(read_superblock(nand, resolve_store_params, &sb));
  sb.version = superblock_version_for(sb.params);  // (a format 1 store's sectors are 512)
  return rewrite_superblock(nand, sb);
}

StoreOpener remount_opener(Nand& nand, const StoreParams* run_time) {
  std::optional<StoreParams> choices;
  if (run_time) choices = *run_time;
  return [&nand, choices](CommitMode mode, std::unique_ptr<PageStore>* out) {
    return mount_store(nand, out, nullptr, mode, choices ? &*choices : nullptr);
  };
}

}  // namespace pdl
