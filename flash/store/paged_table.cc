// paged_table.cc — PagedTableBase: the directory, the clean-page LRU, and the stream layout of
// a paged table (docs/format.md §15: section TPAG — inline entries, or a run-length directory
// of homes).
#include "flash/store/paged_table.h"

#include <string>

namespace pdl {

namespace {
// kDirectoryUncounted: the directory of format 1 (no count of counted entries), upgraded on load.
constexpr uint8_t kInline = 0, kDirectoryUncounted = 1, kDirectory = 2;
constexpr uint8_t kPageFill = 0, kPageData = 1;
}  // namespace

PagedTableBase::PagedTableBase(uint32_t table, uint64_t size, uint32_t entry_bytes,
                               uint32_t page_bytes, uint32_t capacity)
    : table_(table),
      size_(size),
      entry_bytes_(entry_bytes),
      page_bytes_(page_bytes),
      per_page_(page_bytes / entry_bytes),
      capacity_(capacity == 0 ? 1 : capacity),
      mark_words_((per_page_ + 63) / 64) {
  const uint64_t pages = per_page_ == 0 ? 0 : (size + per_page_ - 1) / per_page_;
  home_.assign(size_t(pages), kNoHome);
  slot_of_.assign(size_t(pages), -1);
  folded_.assign(size_t(pages), 0);
  fold_at_ = capacity_;
}

void PagedTableBase::set_capacity(uint32_t pages) {
  capacity_ = pages == 0 ? 1 : pages;
  fold_at_ = capacity_;
  evict_clean();
}

PagedTableStats PagedTableBase::stats() const {
  PagedTableStats s;
  s.loads = loads_;
  s.evictions = evictions_;
  s.saved_pages = saved_pages_;
  s.resident = uint64_t(clean_) + dirty_;
  s.dirty = dirty_;
  for (uint32_t h : home_) s.homed += h != kNoHome;
  s.folded_entries = folded_entries_;
  s.folded_pages = folded_pages_;
  s.folds = folds_;
  return s;
}

uint64_t PagedTableBase::ram_bytes() const {
  return (uint64_t(clean_) + dirty_) * per_page_ * entry_bytes_ +
         folded_entries_ * folded_entry_bytes() +
         home_.size() * (sizeof(uint32_t) + sizeof(int32_t) + sizeof(uint32_t)) +
         slots_.size() * (sizeof(Slot) + mark_words_ * sizeof(uint64_t));
}

void PagedTableBase::unlink(int32_t s) const {
  Slot& x = slots_[size_t(s)];
  if (x.prev >= 0) slots_[size_t(x.prev)].next = x.next; else head_ = x.next;
  if (x.next >= 0) slots_[size_t(x.next)].prev = x.prev; else tail_ = x.prev;
  x.prev = x.next = -1;
}

void PagedTableBase::link_head(int32_t s) const {
  Slot& x = slots_[size_t(s)];
  x.prev = -1;
  x.next = head_;
  if (head_ >= 0) slots_[size_t(head_)].prev = s; else tail_ = s;
  head_ = s;
}

void PagedTableBase::touch(int32_t s) const {
  if (head_ == s) return;
  unlink(s);
  link_head(s);
}

void PagedTableBase::make_dirty(int32_t s) {
  Slot& x = slots_[size_t(s)];
  if (x.dirty) return;
  unlink(s);
  clean_--;
  x.dirty = true;
  dirty_++;
}

void PagedTableBase::evict_clean() const {
  if (pager_ == nullptr) return;  // nothing could bring an evicted page back
  while (clean_ > capacity_ && tail_ >= 0) {
    const int32_t s = tail_;
    unlink(s);
    slot_of_[slots_[size_t(s)].page] = -1;
    release_slot(s);
    free_slots_.push_back(s);
    clean_--;
    evictions_++;
  }
}

int32_t PagedTableBase::new_slot(uint32_t p) const {
  int32_t s;
  if (!free_slots_.empty()) {
    s = free_slots_.back();
    free_slots_.pop_back();
  } else {
    s = int32_t(slots_.size());
    slots_.emplace_back();
  }
  slots_[size_t(s)] = Slot{p, false, -1, -1};
  marks_.resize(slots_.size() * mark_words_);
  home_marks_.resize(slots_.size() * mark_words_);
  std::fill_n(marks_.begin() + ptrdiff_t(size_t(s) * mark_words_), mark_words_, 0);
  alloc_slot(s);
  slot_of_[p] = s;
  return s;
}

int32_t PagedTableBase::fetch(uint32_t p) const {
  if (slot_of_[p] >= 0) return slot_of_[p];
  if (home_[p] != kNoHome && pager_ == nullptr) {
    if (st_.is_ok())
      st_ = Status::error(Errc::kInvalidArgument, "paged table " + std::to_string(table_) +
                                               ": a page has a home but the table no pager");
    return -1;
  }
  const int32_t s = new_slot(p);
  if (home_[p] == kNoHome) {
    fill_slot(s);
  } else {
    scratch_.assign(page_bytes_, 0);
    Status st = pager_->load(home_[p], table_, p, scratch_);
    if (!st.is_ok()) {
      if (st_.is_ok()) st_ = st;
      slot_of_[p] = -1;
      release_slot(s);
      free_slots_.push_back(s);
      return -1;
    }
    decode_slot(s, scratch_.data());
    loads_++;
  }
  link_head(s);
  clean_++;
  evict_clean();
  return s;
}

Status PagedTableBase::page_image(uint32_t p) const {
  std::fill(scratch_.begin(), scratch_.end(), 0);
  if (const int32_t s = slot_of_[p]; s >= 0) {
    encode_slot(s, scratch_.data());
  } else if (home_[p] == kNoHome) {
    encode_fill(scratch_.data());
  } else {
    PDL_TRY(pager_->load(home_[p], table_, p, scratch_));
    loads_++;
  }
  if (folded_[p] != 0) encode_folded(p, scratch_.data());
  return Status::ok();
}

void PagedTableBase::fold() {
  if (pager_ == nullptr || dirty_ <= fold_at_) return;
  // Sparse dirty pages, sparsest first: those whose marked entries take less RAM folded.
  const uint64_t page_ram = uint64_t(per_page_) * entry_bytes_;
  std::vector<std::pair<uint32_t, int32_t>> sparse;  // (marked entries, slot)
  for (size_t s = 0; s < slots_.size(); s++) {
    const Slot& x = slots_[s];
    if (!x.dirty || slot_of_[x.page] != int32_t(s)) continue;
    uint32_t n = 0;
    for (uint32_t w = 0; w < mark_words_; w++)
      n += uint32_t(__builtin_popcountll(marks_[s * mark_words_ + w]));
    if (n * folded_entry_bytes() < page_ram) sparse.push_back({n, int32_t(s)});
  }
  std::sort(sparse.begin(), sparse.end());
  // Down to half the bound, so that folds come in batches, not at every new dirty page.
  for (const auto& [n, s] : sparse) {
    if (dirty_ <= capacity_ / 2) break;
    const uint32_t p = slots_[size_t(s)].page;
    fold_slot(s, p);
    slots_[size_t(s)].dirty = false;
    dirty_--;
    slot_of_[p] = -1;
    release_slot(s);
    free_slots_.push_back(s);
    folds_++;
  }
  // Dense pages stay: the next pass waits until half as many again are dirty, so that a run of
  // dense dirty pages (a sequential load) costs a pass per geometric step, not per operation.
  const uint32_t left = std::max(capacity_, dirty_);
  fold_at_ = std::max(capacity_, dirty_ + std::max<uint32_t>(1, left / 2));
}

Status PagedTableBase::save(TableWriter& w) const {
  PDL_TRY(st_);
  TablePager* pager = w.pager();
  w.tag("TPAG");
  w.u32(table_);
  w.u64(size_);
  w.u32(entry_bytes_);
  w.u32(per_page_);
  w.u8(pager != nullptr ? kDirectory : kInline);
  if (pager != nullptr) w.u64(counted_entries());
  scratch_.assign(page_bytes_, 0);
  if (pager == nullptr) {
    // Inline: every page that is not fill, as bytes (a homed absent page read back first).
    for (uint32_t p = 0; p < pages(); p++) {
      const int32_t s = slot_of_[p];
      if (s < 0 && home_[p] == kNoHome && folded_[p] == 0) {
        w.u8(kPageFill);
        continue;
      }
      PDL_TRY(page_image(p));
      w.u8(kPageData);
      w.bytes(std::span(scratch_).first(size_t(per_page_) * entry_bytes_));
    }
    return Status::ok();
  }
  if (pager->page_bytes() != page_bytes_)
    return Status::error(Errc::kInvalidArgument, "paged table: the pager's page size differs");
  // Through the pager: dirty pages (and with relocate_all every homed page) get new homes.
  pending_home_ = home_;
  for (uint32_t p = 0; p < pages(); p++) {
    const int32_t s = slot_of_[p];
    const bool dirty = (s >= 0 && slots_[size_t(s)].dirty) || folded_[p] != 0;
    if (!dirty && !(home_[p] != kNoHome && pager->relocate_all())) continue;
    PDL_TRY(page_image(p));
    PDL_TRY(pager->store(table_, p, scratch_, &pending_home_[p]));
    saved_pages_++;
  }
  // The directory as runs of consecutive homes (kNoHome runs: fill pages).
  std::vector<std::pair<uint32_t, uint32_t>> runs;
  for (uint32_t p = 0; p < pages(); p++) {
    const uint32_t h = pending_home_[p];
    if (!runs.empty()) {
      auto& [first, count] = runs.back();
      const bool extends = first == kNoHome ? h == kNoHome
                                            : h != kNoHome && h == first + count;
      if (extends) {
        count++;
        continue;
      }
    }
    runs.push_back({h, 1});
  }
  w.u32(uint32_t(runs.size()));
  for (auto [first, count] : runs) {
    w.u32(first);
    w.u32(count);
  }
  pending_pager_ = pager;
  return Status::ok();
}

void PagedTableBase::saved(bool durable) {
  TablePager* pager = pending_pager_;
  pending_pager_ = nullptr;
  if (pager == nullptr) return;  // an inline save changes nothing
  if (!durable) {
    pending_home_.clear();
    return;
  }
  home_counted_ = counted_entries();  // (what the new homes hold: nothing changed since save)
  home_.swap(pending_home_);
  pending_home_.clear();
  pager_ = pager;
  for (size_t s = 0; s < slots_.size(); s++) {
    Slot& x = slots_[s];
    if (slot_of_[x.page] != int32_t(s)) continue;
    // A resident copy of a page with folded entries takes them: the new home holds them.
    if (folded_[x.page] != 0) merge_folded(int32_t(s), x.page);
    if (!x.dirty) continue;
    x.dirty = false;  // save() gave every dirty page (and every folded one) a home
    std::fill_n(marks_.begin() + ptrdiff_t(s * mark_words_), mark_words_, 0);
    dirty_--;
    link_head(int32_t(s));
    clean_++;
  }
  fold_at_ = capacity_;
  if (folded_entries_ != 0) {
    clear_folded();
    std::fill(folded_.begin(), folded_.end(), 0);
    folded_entries_ = folded_pages_ = 0;
  }
  evict_clean();
}

Status PagedTableBase::load(TableReader& r) {
  r.tag("TPAG");
  const uint32_t table = r.u32();
  const uint64_t size = r.u64();
  const uint32_t entry_bytes = r.u32();
  const uint32_t per_page = r.u32();
  const uint8_t mode = r.u8();
  PDL_TRY(r.status());
  const std::string name = "paged table " + std::to_string(table_);
  if (table != table_ || size != size_ || entry_bytes != entry_bytes_ || per_page != per_page_) {
    r.fail("checkpoint: " + name + ": saved as table " + std::to_string(table) + " of " +
           std::to_string(size) + " entries of " + std::to_string(entry_bytes) + " bytes, " +
           std::to_string(per_page) + " per page; this store's differs");
    return r.status();
  }
  if (mode == kInline) {
    for (uint32_t p = 0; p < pages(); p++) {
      const uint8_t flag = r.u8();
      if (!r.status().is_ok()) break;
      if (flag == kPageFill) continue;
      if (flag != kPageData) {
        r.fail("checkpoint: " + name + ": page flag " + std::to_string(flag));
        break;
      }
      auto bytes = r.bytes(size_t(per_page_) * entry_bytes_);
      if (bytes.empty()) break;
      const int32_t s = new_slot(p);
      decode_slot(s, bytes.data());
      slots_[size_t(s)].dirty = true;  // no home: only a save through a pager gives one
      for (uint32_t k = 0; k < per_page_; k++) {
        set_home_mark(s, k, fill_counted_);  // (its home is the fill)
        mark(s, k);
      }
      dirty_++;
    }
    return r.status();
  }
  if (mode != kDirectory && mode != kDirectoryUncounted) {
    r.fail("checkpoint: " + name + ": mode " + std::to_string(mode));
    return r.status();
  }
  if (r.pager() == nullptr) {
    r.fail("checkpoint: " + name + " is on flash pages, but no pager reads them");
    return r.status();
  }
  const uint64_t counted = mode == kDirectory ? r.u64() : 0;
  if (r.status().is_ok() && counted > size_) {
    r.fail("checkpoint: " + name + ": " + std::to_string(counted) + " counted entries of " +
           std::to_string(size_));
    return r.status();
  }
  const uint32_t runs = r.u32();
  if (!r.check_count(runs, 8, "paged table runs")) return r.status();
  uint64_t p = 0;
  for (uint32_t k = 0; k < runs; k++) {
    const uint32_t first = r.u32();
    const uint32_t count = r.u32();
    if (!r.status().is_ok()) break;
    if (count == 0 || count > pages() - p ||
        (first != kNoHome && uint64_t(first) + count > kNoHome)) {
      r.fail("checkpoint: " + name + ": directory run " + std::to_string(k) +
             " out of range");
      break;
    }
    for (uint32_t j = 0; j < count; j++)
      home_[size_t(p + j)] = first == kNoHome ? kNoHome : first + j;
    p += count;
  }
  if (r.status().is_ok() && p != pages())
    r.fail("checkpoint: " + name + ": the directory covers " + std::to_string(p) + " of " +
           std::to_string(pages()) + " pages");
  if (!r.status().is_ok()) return r.status();
  pager_ = r.pager();
  home_counted_ = counted;
  if (mode == kDirectoryUncounted && counts_) {
    // Saved before the directory carried its count: counted once here, each homed page read
    // (no page is resident yet), so that the next checkpoint writes the count.
    home_counted_ = 0;
    scratch_.assign(page_bytes_, 0);
    for (uint32_t q = 0; q < pages(); q++) {
      if (home_[q] == kNoHome) {
        const uint64_t in_page = std::min<uint64_t>(per_page_, size_ - uint64_t(q) * per_page_);
        home_counted_ += fill_counted_ ? in_page : 0;
        continue;
      }
      PDL_TRY(pager_->load(home_[q], table_, q, scratch_));
      loads_++;
      home_counted_ += count_page(q, scratch_.data());
    }
  }
  return Status::ok();
}

}  // namespace pdl
