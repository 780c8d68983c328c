// owner_cache.h — the Volume's owner map in RAM: a bounded cache of owner-map PAGES (the unit
// the owner map has on flash, docs/format.md §4), least recently used first out.
//
// The owner map on flash is the truth; the cache holds at most `capacity` of its pages, each
// either clean (equal to the page on flash, or never written: zeros) or dirty (changed since
// it was last written). This class does no I/O: the Volume loads a missing page from the store,
// and writes a dirty victim back before it drops it (volume_owners.cc), so a page leaves the
// cache only clean. RAM: capacity × (page + a few pointers), whatever the chip's size.
// Invariants: index_ names exactly the pages in lru_; size() <= capacity; lru_'s front is the
// most recently used page. Thread-safety: none (the Volume's mutex).
#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

#include "flash/volume/volume_format.h"

namespace pdl {

class OwnerCache {
 public:
  struct Page {
    uint32_t page = 0;            // owner-map page number (0 .. owner_pages - 1)
    bool dirty = false;           // changed since written to the store
    std::vector<Owner> entries;   // owners_per_page entries
  };

  OwnerCache(uint32_t capacity, uint32_t per_page)
      : capacity_(capacity ? capacity : 1), per_page_(per_page) {}

  // The page if resident (and now the most recently used), else nullptr.
  Page* find(uint32_t page) {
    auto it = index_.find(page);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return &*it->second;
  }
  // The page if resident, without touching the order (inspection).
  const Page* peek(uint32_t page) const {
    auto it = index_.find(page);
    return it == index_.end() ? nullptr : &*it->second;
  }
  bool full() const { return lru_.size() >= capacity_; }
  // The least recently used page. REQUIRES size() > 0.
  Page& victim() { return lru_.back(); }
  // Drop a resident page (the caller wrote it back if it was dirty).
  void erase(uint32_t page) {
    auto it = index_.find(page);
    if (it == index_.end()) return;
    lru_.erase(it->second);
    index_.erase(it);
  }
  // A new resident page of empty entries, most recently used. REQUIRES !full(), not resident.
  Page& insert(uint32_t page) {
    lru_.push_front(Page{page, false, std::vector<Owner>(per_page_)});
    index_.emplace(page, lru_.begin());
    return lru_.front();
  }
  // Forget every page, dirty ones too (the Volume's tables are being rebuilt from the store).
  void clear() {
    lru_.clear();
    index_.clear();
  }
  size_t size() const { return lru_.size(); }
  uint32_t capacity() const { return capacity_; }
  const std::list<Page>& pages() const { return lru_; }
  // RAM held now: the pages' entries and the list and index nodes (approximate node sizes).
  uint64_t table_bytes() const {
    return uint64_t(lru_.size()) * (sizeof(Page) + 2 * sizeof(void*) + per_page_ * sizeof(Owner) +
                                    sizeof(uint32_t) + 3 * sizeof(void*)) +
           index_.bucket_count() * sizeof(void*);
  }

 private:
  uint32_t capacity_, per_page_;
  std::list<Page> lru_;
  std::unordered_map<uint32_t, std::list<Page>::iterator> index_;
};

}  // namespace pdl
