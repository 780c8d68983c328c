// hybrid_store.cc — placeholder until the BAST/FAST engine lands (same change set).
#include "flash/ftl/hybrid_store.h"

namespace pdl {

Status HybridStore::resolve_params(StoreParams* p, const Geometry& g) {
  (void)p, (void)g;
  return Status::error(Errc::kUnsupported, "ftl: bast and fast are not built yet");
}
Status HybridStore::format(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out) {
  (void)nand, (void)params, (void)out;
  return Status::error(Errc::kUnsupported, "ftl: bast and fast are not built yet");
}
Status HybridStore::mount(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out,
                          MountReport* report) {
  (void)nand, (void)params, (void)out, (void)report;
  return Status::error(Errc::kUnsupported, "ftl: bast and fast are not built yet");
}

}  // namespace pdl
