// volume_owners.cc — the Volume's owner map through its bounded cache of owner pages
// (owner_cache.h): what loads a page from the store and writes a dirty one back.
//
// A page missing from the cache is read from the store (never written: zeros, every entry
// empty). To make room the least recently used page leaves; if dirty it is written back first
// (a store write of the owner-map page, counted like a commit's), and if that write fails the
// page stays resident and dirty, and nothing else changed.
// Why an early write-back keeps the crash rules of volume.h: between two syncs the store may
// make any of the writes it took durable in any order, so every rule is already stated per
// owner entry at the moment the entry is set in RAM — a new allocation's entry is set after
// its bytes were written and only on an lpn whose trim is durable; a release's clearing after
// the release is durable. A write-back makes durable, earlier, entries that were set under
// those rules; the commit writes each page again if it changed since (owner_dirty_).
// Invariants: a page is dirty in the cache iff its bit is set in owner_dirty_; a dirty page is
// always resident.
#include <algorithm>
#include <cassert>

#include "flash/volume/volume.h"

namespace pdl {

Status Volume::write_owner_page(OwnerCache::Page& pg) {
  std::fill(owner_io_.begin(), owner_io_.end(), 0);
  uint64_t gen = 0;
  for (size_t i = 0; i < pg.entries.size(); i++) {
    encode_owner(pg.entries[i], owner_io_.data() + i * kOwnerBytes);
    gen = std::max(gen, pg.entries[i].gen);
  }
  PDL_TRY(write_meta_page(hdr_.layout.owner_first() + pg.page, owner_io_));
  pg.dirty = false;
  owner_dirty_.clear(pg.page);
  page_gen_[pg.page] = gen;
  return Status::ok();
}

Status Volume::owner_page(uint32_t p, OwnerCache::Page** out) {
  if ((*out = owners_.find(p)) != nullptr) return Status::ok();
  while (owners_.full()) {
    OwnerCache::Page& victim = owners_.victim();
    if (victim.dirty) {
      PDL_TRY(write_owner_page(victim));
      stats_.owner_writebacks++;
    }
    owners_.erase(victim.page);
  }
  Status st = store_->read(hdr_.layout.owner_first() + p, owner_io_);
  if (st.is(Errc::kNotFound)) std::fill(owner_io_.begin(), owner_io_.end(), 0);  // never written
  else PDL_TRY(st);
  stats_.owner_loads++;
  OwnerCache::Page& pg = owners_.insert(p);
  // (The last page may cover entries past the data area: they stay empty, as on flash.)
  uint64_t gen = 0;
  for (size_t i = 0; i < pg.entries.size(); i++) {
    pg.entries[i] = decode_owner(owner_io_.data() + i * kOwnerBytes);
    gen = std::max(gen, pg.entries[i].gen);
  }
  page_gen_[p] = gen;
  *out = &pg;
  return Status::ok();
}

Status Volume::get_owner(uint32_t lpn, Owner* out) {
  OwnerCache::Page* pg;
  PDL_TRY(owner_page(owner_page_of(lpn), &pg));
  *out = pg->entries[(lpn - hdr_.layout.data_first) % hdr_.layout.owners_per_page()];
  return Status::ok();
}

Status Volume::set_owner(uint32_t lpn, Owner o) {
  OwnerCache::Page* pg;
  PDL_TRY(owner_page(owner_page_of(lpn), &pg));
  set_resident_owner(lpn, o);
  return Status::ok();
}

void Volume::set_resident_owner(uint32_t lpn, Owner o) {
  const uint32_t p = owner_page_of(lpn);
  OwnerCache::Page* pg = owners_.find(p);
  assert(pg != nullptr);  // REQUIRES: owner_page(p) with no cache call since
  pg->entries[(lpn - hdr_.layout.data_first) % hdr_.layout.owners_per_page()] = o;
  pg->dirty = true;
  owner_dirty_.set(p);
  page_gen_[p] = std::max(page_gen_[p], o.gen);
}

Status Volume::owner_of(uint32_t lpn, Owner* out) {
  std::lock_guard<std::mutex> g(mu_);
  *out = Owner{};
  if (lpn < hdr_.layout.data_first || lpn - hdr_.layout.data_first >= hdr_.layout.data_lpns)
    return Status::ok();
  return get_owner(lpn, out);
}

}  // namespace pdl
