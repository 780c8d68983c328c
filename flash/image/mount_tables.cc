// mount_tables.cc — mount_store_tables: the method decides which engine's mount_tables runs
// (as in mount_store for the scans).
#include "flash/image/mount_tables.h"

#include "flash/ftl/hybrid_store.h"
#include "flash/ftl/sb_store.h"
#include "flash/ipl/ipl_store.h"
#include "flash/pdl/pdl_store.h"

namespace pdl {

Status mount_store_tables(Nand& nand, const StoreParams& params, CommitMode mode,
                          TableReader& r, std::unique_ptr<PageStore>* out) {
  switch (params.method) {
    case Method::kPdl:
    case Method::kOpu:
      return PdlStore::mount_tables(nand, params, mode, r, out);
    case Method::kFtl:
      if (params.ftl == FtlKind::kPage)
        return PdlStore::mount_tables(nand, params, CommitMode::kPerPage, r, out);
      if (params.ftl == FtlKind::kBast || params.ftl == FtlKind::kFast)
        return HybridStore::mount_tables(nand, params, mode, r, out);
      break;
    case Method::kStableBuffer:  // the FTL device's tables first, through this dispatch
      return SbStore::mount_tables(nand, params, r, mount_store_tables, out);
    case Method::kIpu:
    case Method::kIpl:
      return IplStore::mount_tables(nand, params, mode, r, out);
  }
  return Status::error(Errc::kUnsupported, std::string("method ") + method_name(params.method) +
                                               " has no checkpoint: it mounts by scan");
}

}  // namespace pdl
