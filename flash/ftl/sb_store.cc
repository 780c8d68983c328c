// sb_store.cc — the StableBuffer factory (sb_store.h): parameters of a stablebuffer store and of
// the FTL device under it, format and mount (StableBufferStore, sb_stable_buffer.h).
#include "flash/ftl/sb_store.h"

#include <algorithm>
#include <string>

#include "flash/ftl/sb_directory.h"
#include "flash/ftl/sb_stable_buffer.h"

namespace pdl {

namespace {

// The paper's default buffer: 4 MB on a 16 GB SSD, 2 MB on 8 GB USB sticks and SD cards — 1/4096
// of the device ([StableBuffer] §4). Small chips get at least two erase blocks' worth, so that
// instances the size of an erase block can form; and at most an eighth of the device.
uint32_t default_slots(uint64_t offered, const Geometry& g) {
  uint64_t s = std::max<uint64_t>(offered / 4096, 2ull * g.pages_per_block);
  s = std::min<uint64_t>(s, std::max<uint64_t>(1, offered / 8));
  return uint32_t(s);
}

}  // namespace

Status SbStore::resolve_params(StoreParams* p, const Geometry& g, ParamsResolver resolve_device) {
  auto bad = [](const std::string& m) { return Status::error(Errc::kInvalidArgument, m); };
  // What the FTL device offers when it holds nothing but the user's pages: its default size.
  StoreParams d = *p;
  d.method = Method::kFtl;
  d.sb_slots = 0;
  d.logical_pages = 0;
  PDL_TRY(resolve_device(&d, g));
  p->log_blocks = d.log_blocks;
  p->gc_reserve_blocks = d.gc_reserve_blocks;
  p->max_differential = d.max_differential;
  p->obsolete = d.obsolete;
  const uint64_t offered = d.logical_pages;
  const uint32_t per_page = SbLayout::entries_per_page(g.page_data);
  if (p->sb_slots == 0) p->sb_slots = default_slots(offered, g);
  const uint64_t overhead = p->sb_slots + 2ull * ((p->sb_slots + per_page - 1) / per_page);
  if (p->logical_pages == 0) {
    if (overhead >= offered)
      return bad("sb_slots: " + std::to_string(p->sb_slots) + " slots and their directory take " +
                 std::to_string(overhead) + " of the FTL device's " + std::to_string(offered) +
                 " pages, leaving none for the user's pages");
    p->logical_pages = uint32_t(offered - overhead);
  }
  // No thin provisioning: the staging area and the directory must stay writable whatever the
  // user has written (a commodity device's capacity is fixed too).
  if (overhead >= offered || p->logical_pages > offered - overhead)
    return bad("logical_pages: " + std::to_string(p->logical_pages) +
               " exceeds what a stablebuffer store offers here: at most " +
               std::to_string(overhead >= offered ? 0 : offered - overhead) +
               " (the FTL device's " + std::to_string(offered) + " pages less " +
               std::to_string(p->sb_slots) + " slots and " +
               std::to_string(overhead - p->sb_slots) + " directory pages)");
  // The device of exactly that size must be one the FTL accepts.
  StoreParams dev = device_params(*p, g);
  return resolve_device(&dev, g);
}

StoreParams SbStore::device_params(const StoreParams& p, const Geometry& g) {
  StoreParams d = p;
  d.method = Method::kFtl;
  d.sb_slots = 0;
  d.logical_pages = SbLayout::of(p.logical_pages, p.sb_slots, g.page_data).device_pages();
  return d;
}

Status SbStore::format(std::unique_ptr<PageStore> device, const StoreParams& p,
                       std::unique_ptr<PageStore>* out) {
  return StableBufferStore::open(std::move(device), p, true, out);
}

Status SbStore::mount(std::unique_ptr<PageStore> device, const StoreParams& p,
                      std::unique_ptr<PageStore>* out, MountReport* report) {
  // The device's mount filled `report`; the directory read adds its time (the staged pages
  // found are in sb_stats().recovered_slots).
  return StableBufferStore::open(std::move(device), p, false, out, report);
}

}  // namespace pdl
