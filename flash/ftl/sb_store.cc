// sb_store.cc — placeholder until StableBuffer lands (same change set).
#include "flash/ftl/sb_store.h"

namespace pdl {

Status SbStore::resolve_params(StoreParams* p, const Geometry& g, ParamsResolver resolve_device) {
  (void)p, (void)g, (void)resolve_device;
  return Status::error(Errc::kUnsupported, "method: stablebuffer is not built yet");
}
StoreParams SbStore::device_params(const StoreParams& p, const Geometry& g) {
  (void)g;
  StoreParams d = p;
  d.method = Method::kFtl;
  d.sb_slots = 0;
  return d;
}
Status SbStore::format(std::unique_ptr<PageStore> device, const StoreParams& p,
                       std::unique_ptr<PageStore>* out) {
  (void)device, (void)p, (void)out;
  return Status::error(Errc::kUnsupported, "method: stablebuffer is not built yet");
}
Status SbStore::mount(std::unique_ptr<PageStore> device, const StoreParams& p,
                      std::unique_ptr<PageStore>* out, MountReport* report) {
  (void)device, (void)p, (void)out, (void)report;
  return Status::error(Errc::kUnsupported, "method: stablebuffer is not built yet");
}

}  // namespace pdl
