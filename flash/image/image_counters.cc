// image_counters.cc — see image_counters.h.
#include "flash/image/image_counters.h"

#include <array>
#include <bit>

namespace pdl {
namespace {

// a - b for a struct made only of fields of type T (checked by size: no padding, no other
// field type fits the static_assert for the structs used below).
template <typename T, typename S>
S minus_fields(const S& a, const S& b) {
  static_assert(sizeof(S) % sizeof(T) == 0);
  using Arr = std::array<T, sizeof(S) / sizeof(T)>;
  Arr x = std::bit_cast<Arr>(a);
  const Arr y = std::bit_cast<Arr>(b);
  for (size_t i = 0; i < x.size(); i++) x[i] -= y[i];
  return std::bit_cast<S>(x);
}

}  // namespace

ImageCounters snapshot(Image& img) {
  ImageCounters c;
  c.volume = img.volume->stats();
  auto lock = img.volume->lock();
  PageStore& st = img.volume->store();
  c.nand = st.nand().counters();
  c.costs = st.costs();
  c.store = st.stats();
  c.free_blocks = st.free_blocks();
  return c;
}

ImageCounters operator-(const ImageCounters& after, const ImageCounters& before) {
  static_assert(sizeof(StoreStats) == 45 * sizeof(uint64_t), "StoreStats: update this file");
  static_assert(sizeof(KindStats) == 7 * sizeof(uint64_t), "KindStats: update this file");
  static_assert(sizeof(FlashCost) == 7 * sizeof(double), "FlashCost: update this file");
  ImageCounters d;
  d.nand = after.nand - before.nand;
  d.store = minus_fields<uint64_t>(after.store, before.store);
  d.store.bad_blocks = after.store.bad_blocks;  // a state, not work
  d.store.table_pages_resident = after.store.table_pages_resident;  // states too
  d.store.table_cache_pages = after.store.table_cache_pages;
  d.store.table_entries_folded = after.store.table_entries_folded;
  for (unsigned k = 0; k < kFileKinds; k++)
    d.volume.kind[k] = minus_fields<uint64_t>(after.volume.kind[k], before.volume.kind[k]);
  d.volume.syncs = after.volume.syncs - before.volume.syncs;
  d.volume.cache_hits = after.volume.cache_hits - before.volume.cache_hits;
  d.volume.cache_evictions = after.volume.cache_evictions - before.volume.cache_evictions;
  d.volume.trims = after.volume.trims - before.volume.trims;
  d.volume.free_lpns = after.volume.free_lpns;
  for (unsigned k = 0; k < kCostClasses; k++) {
    const ClassCost &a = after.costs.cls[k], &b = before.costs.cls[k];
    ClassCost& r = d.costs.cls[k];
    r.flash = minus_fields<double>(a.flash, b.flash);
    r.base_pages = a.base_pages - b.base_pages;
    r.diff_records = a.diff_records - b.diff_records;
    r.diff_record_bytes = a.diff_record_bytes - b.diff_record_bytes;
    r.diff_pages = a.diff_pages - b.diff_pages;
  }
  d.costs.gc = minus_fields<double>(after.costs.gc, before.costs.gc);
  d.costs.other = minus_fields<double>(after.costs.other, before.costs.other);
  d.free_blocks = after.free_blocks;
  return d;
}

}  // namespace pdl
