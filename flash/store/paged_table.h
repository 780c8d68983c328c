// paged_table.h — a table of fixed-size entries kept in TABLE PAGES that are loaded from flash
// on demand and cached in RAM: the demand-loaded mapping of [DFTL] (its translation pages and
// cached mapping table), used for a store's per-page tables (docs/design.md §18).
//
// A PagedTable<Codec> has size() entries of Codec::Value, each Codec::kBytes on flash
// (little-endian, Codec::put / Codec::get); per_page() = page_bytes / kBytes entries share a
// table page. Every table page is, on flash:
//   * FILL  — never saved: every entry is the table's fill value (nothing on flash), or
//   * HOMED — its bytes are a page the TablePager wrote at an earlier checkpoint (its *home*),
// and, in RAM, absent, RESIDENT CLEAN (equal to its home / fill) or RESIDENT DIRTY (changed
// since). The home directory (one u32 per table page: [DFTL]'s global translation directory)
// is always in RAM; it is what a checkpoint's stream holds instead of the entries.
//
// FOLDED ENTRIES. A dirty page holds a whole page of entries in RAM for perhaps a few changed
// ones (a replay after a power cut changes a few entries in each of a thousand pages). fold(),
// which the owner calls only where it holds no reference from ref(), moves the changed entries
// of sparse dirty pages (those whose changed entries take less RAM one by one than the page)
// into an entry map — the entry-level cache of [DFTL]'s cached mapping table — and drops the
// pages, until at most `capacity` dirty pages stay resident. A folded entry overrides its page
// (resident or not, homed or fill) for get() and ref(); a checkpoint's save rebuilds the page
// from its home (one read) with its folded entries on top; a durable save empties the map.
//
// Invariants:
//   * a dirty page is resident and is evicted only by fold(), never by a get() or ref(); only
//     a durable checkpoint (save, then saved(true)) makes it clean — so a reference from ref()
//     stays valid until the next fold() or durable save;
//   * a folded entry and its page's resident copy of it never both change: ref() of an entry
//     in the map returns the map's (the slot's copy is stale and never read); a resident slot
//     marks the entries ref() handed out, the only ones fold() moves;
//   * with a pager, at most `capacity` clean pages stay resident (least recently used first
//     out); without one (a store with no checkpoint area, or not checkpointed yet) nothing is
//     ever evicted: pages become resident on first use and stay;
//   * a load reads exactly one flash page (the pager's); get() of an absent FILL page loads
//     nothing and reads nothing.
// COUNTED ENTRIES. A codec may define `static bool counted(const Value&)` (the ppmt: "this lpn
// has a base page"); the table then knows how many entries are counted without reading a page:
// counted_entries() = the count over the homes (saved with the directory, format.md §15) plus,
// for every entry changed since (a marked entry of a dirty page, a folded entry), whether it is
// counted now minus whether its home value was — remembered when ref() first hands it out, the
// moment its slot still holds the home value. O(resident entries + folded entries), no read.
//
// Errors: a load that fails (the pager's read, or its check of the page) is remembered in
// status() (the first one sticks) and get() returns the fill value; the owner checks status()
// after its operation and halts — the table never hands out bytes that did not verify.
//
// Thread-safety: none (the store's).
#pragma once

#include <cstdint>
#include <algorithm>
#include <concepts>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "flash/common/status.h"
#include "flash/store/table_stream.h"

namespace pdl {

inline constexpr uint32_t kNoHome = 0xFFFFFFFFu;

// Where table pages live between checkpoints: implemented by the checkpoint layer over its
// area (and by tests over RAM). Homes are opaque u32 addresses other than kNoHome.
class TablePager {
 public:
  virtual ~TablePager() = default;
  // Bytes of a table page (at most the chip's page data).
  virtual uint32_t page_bytes() const = 0;
  // Read the page at `home` into `out` (page_bytes()), checking that it is page `index` of
  // table `table` (kCorrupt naming it otherwise; the device's error if the read fails).
  virtual Status load(uint32_t home, uint32_t table, uint32_t index,
                      std::span<uint8_t> out) = 0;
  // During a checkpoint's save: program `data` (page_bytes()) as page `index` of table
  // `table` at a free place; *home its address. kFull if no place is left.
  virtual Status store(uint32_t table, uint32_t index, std::span<const uint8_t> data,
                       uint32_t* home) = 0;
  // This save must rewrite every homed page, not only the dirty ones (the pager is moving
  // the checkpoint to fresh space; docs/design.md §19).
  virtual bool relocate_all() const = 0;
};

// Counters a store reports (PRAGMA pdl_stats, pdl info).
struct PagedTableStats {
  uint64_t loads = 0;          // table pages read from flash
  uint64_t evictions = 0;      // clean pages dropped from RAM
  uint64_t saved_pages = 0;    // table pages programmed by saves (durable or not)
  uint64_t resident = 0;       // pages in RAM now
  uint64_t dirty = 0;          // of which dirty
  uint64_t homed = 0;          // pages with a home on flash
  uint64_t folded_entries = 0;  // changed entries kept one by one (their pages dropped)
  uint64_t folded_pages = 0;    // table pages with folded entries
  uint64_t folds = 0;           // dirty pages folded
};

// The non-template part: the directory, the cache's bookkeeping and the stream layout.
class PagedTableBase {
 public:
  // `table`: the id written into every page's check (unique within the store); `size`
  // entries of `entry_bytes`; `page_bytes` per table page; `capacity` clean pages at most.
  PagedTableBase(uint32_t table, uint64_t size, uint32_t entry_bytes, uint32_t page_bytes,
                 uint32_t capacity);
  virtual ~PagedTableBase() = default;
  PagedTableBase(const PagedTableBase&) = delete;
  PagedTableBase& operator=(const PagedTableBase&) = delete;

  uint64_t size() const { return size_; }
  uint32_t per_page() const { return per_page_; }
  uint32_t pages() const { return uint32_t(home_.size()); }
  uint32_t table_id() const { return table_; }
  const Status& status() const { return st_; }
  TablePager* pager() const { return pager_; }
  // Entries the codec counts (above; 0 if it counts none). No flash read.
  uint64_t counted_entries() const { return home_counted_ + uint64_t(count_delta()); }
  // Clean pages kept at most (with a pager); 0 means 1.
  void set_capacity(uint32_t pages);
  uint32_t capacity() const { return capacity_; }
  PagedTableStats stats() const;
  // RAM held: resident pages' entries, folded entries, the directory.
  uint64_t ram_bytes() const;
  // Fold sparse dirty pages (above) until at most capacity() dirty pages are resident; a no-op
  // without a pager (nothing could bring a dropped page back), and while the dense dirty pages
  // a pass left have not grown by half (so a pass costs O(1) per new dirty page, amortized).
  // REQUIRES: no reference from ref() is held.
  void fold();

  // Write this table into a checkpoint stream. With w.pager(): every dirty page (every homed
  // page too if the pager relocates) is programmed through it, and the stream gets the
  // directory of the new homes — which take effect only at saved(true). Without a pager, the
  // entries themselves go into the stream (small stores, tests).
  Status save(TableWriter& w) const;
  // After the checkpoint that save() wrote into is durable (true) or abandoned (false).
  // REQUIRES: no entry changed since that save().
  void saved(bool durable);
  // The inverse of save, on a table fresh from its constructor (same id, size, entry and
  // page bytes): a directory stream needs r.pager() (kCorrupt if none), which the table then
  // keeps for its loads; an inline one makes every saved page resident and dirty.
  Status load(TableReader& r);
  // A pager for a table that has none yet (it was built by a scan or a format): from now on
  // clean pages may be evicted. Its pages keep their state (all dirty or fill).
  void attach(TablePager* pager) { pager_ = pager; }

 protected:
  // A resident page: its entries encoded as the derived table keeps them.
  struct Slot {
    uint32_t page = 0;
    bool dirty = false;
    int32_t prev = -1, next = -1;  // clean LRU list (most recent at head_)
  };
  // Make page `p` resident (loading it if homed); returns its slot, or -1 after a load error
  // (status() set).
  int32_t fetch(uint32_t p) const;
  void touch(int32_t s) const;       // most recently used
  // Page p's bytes into scratch_: its resident entries encoded, else read from its home (or
  // the fill value's), with its folded entries on top.
  Status page_image(uint32_t p) const;
  void make_dirty(int32_t s);
  bool marked(int32_t s, uint32_t k) const {
    return marks_[size_t(s) * mark_words_ + k / 64] >> (k % 64) & 1;
  }
  void mark(int32_t s, uint32_t k) { marks_[size_t(s) * mark_words_ + k / 64] |= 1ull << (k % 64); }
  // Entry k of slot s was counted at its home (set with its first mark).
  bool home_mark(int32_t s, uint32_t k) const {
    return home_marks_[size_t(s) * mark_words_ + k / 64] >> (k % 64) & 1;
  }
  void set_home_mark(int32_t s, uint32_t k, bool counted) {
    uint64_t& w = home_marks_[size_t(s) * mark_words_ + k / 64];
    w = (w & ~(1ull << (k % 64))) | uint64_t(counted) << (k % 64);
  }
  template <class F>  // f(k) for every marked entry k of slot s
  void each_marked(int32_t s, F&& f) const {
    for (uint32_t w = 0; w < mark_words_; w++)
      for (uint64_t bits = marks_[size_t(s) * mark_words_ + w]; bits != 0; bits &= bits - 1)
        f(w * 64 + uint32_t(__builtin_ctzll(bits)));
  }
  // Derived: slot storage.
  virtual void alloc_slot(int32_t s) const = 0;        // storage for slot s exists
  virtual void release_slot(int32_t s) const = 0;      // its storage freed (evicted)
  virtual void fill_slot(int32_t s) const = 0;         // every entry = fill
  virtual void decode_slot(int32_t s, const uint8_t* bytes) const = 0;
  virtual void encode_slot(int32_t s, uint8_t* bytes) const = 0;
  virtual void encode_fill(uint8_t* bytes) const = 0;  // a page of fill entries
  // Folded entries: move slot s's marked entries (of page p) into the map; write page p's
  // into `bytes` (its page image); copy them into slot s (p's resident copy); empty the map.
  virtual void fold_slot(int32_t s, uint32_t p) = 0;
  virtual void encode_folded(uint32_t p, uint8_t* bytes) const = 0;
  virtual void merge_folded(int32_t s, uint32_t p) const = 0;
  virtual void clear_folded() = 0;
  // RAM of one folded entry (the map's node and bucket, estimated).
  virtual uint64_t folded_entry_bytes() const = 0;
  // Counted entries: now minus at their homes, over the marked and the folded entries; and
  // the counted entries of a table page's bytes (a directory without counts, on load).
  virtual int64_t count_delta() const = 0;
  virtual uint32_t count_page(uint32_t p, const uint8_t* bytes) const = 0;

  uint32_t table_;
  uint64_t size_;
  uint32_t entry_bytes_, page_bytes_, per_page_;
  uint32_t capacity_;
  TablePager* pager_ = nullptr;
  std::vector<uint32_t> home_;               // per table page: kNoHome = fill
  mutable std::vector<int32_t> slot_of_;     // per table page: resident slot or -1
  mutable std::vector<Slot> slots_;
  mutable std::vector<int32_t> free_slots_;
  mutable int32_t head_ = -1, tail_ = -1;    // clean LRU list
  mutable uint32_t clean_ = 0, dirty_ = 0;
  mutable Status st_ = Status::ok();
  mutable uint64_t loads_ = 0, evictions_ = 0, saved_pages_ = 0;
  mutable std::vector<uint32_t> pending_home_;  // save()'s new directory until saved()
  mutable TablePager* pending_pager_ = nullptr;  // the pager save() wrote through
  mutable std::vector<uint8_t> scratch_;
  uint32_t mark_words_;                      // u64 words of marks per slot
  mutable std::vector<uint64_t> marks_;      // per slot: entries ref() handed out since clean
  mutable std::vector<uint64_t> home_marks_;  // per slot: of those, the ones counted at home
  bool counts_ = false;                      // the codec counts entries
  bool fill_counted_ = false;                // it counts the fill value
  uint64_t home_counted_ = 0;                // counted entries over every page's home / fill
  std::vector<uint32_t> folded_;             // per table page: its folded entries
  uint64_t folded_entries_ = 0, folded_pages_ = 0, folds_ = 0;
  uint32_t fold_at_;                         // fold() passes while more pages than this are dirty

 private:
  void unlink(int32_t s) const;
  void link_head(int32_t s) const;
  void evict_clean() const;  // down to capacity_
  int32_t new_slot(uint32_t p) const;
};

// Codec: struct { using Value = ...; static constexpr uint32_t kBytes;
//                 static void put(uint8_t* out, const Value&); static Value get(const uint8_t*); }
template <class Codec>
class PagedTable final : public PagedTableBase {
 public:
  using Value = typename Codec::Value;

  static constexpr bool kCounts = requires(const Value& v) {
    { Codec::counted(v) } -> std::convertible_to<bool>;
  };

  PagedTable(uint32_t table, uint64_t size, Value fill, uint32_t page_bytes, uint32_t capacity)
      : PagedTableBase(table, size, Codec::kBytes, page_bytes, capacity), fill_(fill) {
    counts_ = kCounts;
    fill_counted_ = counted(fill_);
    home_counted_ = fill_counted_ ? size : 0;
  }

  // Entry i (the fill value after a load error: check status()). REQUIRES: i < size().
  Value get(uint64_t i) const {
    const uint32_t p = uint32_t(i / per_page_);
    if (folded_[p] != 0)
      if (auto it = map_.find(i); it != map_.end()) return it->second.value;
    int32_t s = slot_of_[p];
    if (s < 0) {
      if (home_[p] == kNoHome) return fill_;
      s = fetch(p);
      if (s < 0) return fill_;
    } else if (!slots_[size_t(s)].dirty) {
      touch(s);
    }
    return data_[size_t(s)][i % per_page_];
  }
  // A writable reference to entry i: a folded entry's, or its page's, which becomes dirty
  // (and stays resident until fold() or a durable save), so the reference is valid until
  // then. After a load error: a scratch entry (status() set) whose changes go nowhere.
  Value& ref(uint64_t i) {
    const uint32_t p = uint32_t(i / per_page_);
    if (folded_[p] != 0)
      if (auto it = map_.find(i); it != map_.end()) return it->second.value;
    int32_t s = slot_of_[p];
    if (s < 0) s = fetch(p);
    if (s < 0) {
      junk_ = fill_;
      return junk_;
    }
    make_dirty(s);
    const uint32_t k = uint32_t(i % per_page_);
    Value& v = data_[size_t(s)][k];
    if (!marked(s, k)) set_home_mark(s, k, counted(v));  // (unmarked: still its home value)
    mark(s, k);
    return v;
  }
  void set(uint64_t i, const Value& v) { ref(i) = v; }
  const Value& fill() const { return fill_; }

 private:
  void alloc_slot(int32_t s) const override {
    if (data_.size() <= size_t(s)) data_.resize(size_t(s) + 1);
    data_[size_t(s)].resize(per_page_);
  }
  void release_slot(int32_t s) const override { std::vector<Value>().swap(data_[size_t(s)]); }
  void fill_slot(int32_t s) const override {
    std::fill(data_[size_t(s)].begin(), data_[size_t(s)].end(), fill_);
  }
  void decode_slot(int32_t s, const uint8_t* bytes) const override {
    auto& d = data_[size_t(s)];
    for (uint32_t k = 0; k < per_page_; k++) d[k] = Codec::get(bytes + size_t(k) * Codec::kBytes);
  }
  void encode_slot(int32_t s, uint8_t* bytes) const override {
    const auto& d = data_[size_t(s)];
    for (uint32_t k = 0; k < per_page_; k++) Codec::put(bytes + size_t(k) * Codec::kBytes, d[k]);
  }
  void encode_fill(uint8_t* bytes) const override {
    for (uint32_t k = 0; k < per_page_; k++) Codec::put(bytes + size_t(k) * Codec::kBytes, fill_);
  }
  static bool counted(const Value& v) {
    if constexpr (kCounts) return Codec::counted(v);
    else return (void)v, false;
  }
  void fold_slot(int32_t s, uint32_t p) override {
    const auto& d = data_[size_t(s)];
    const uint64_t first = uint64_t(p) * per_page_;
    uint32_t n = 0;
    each_marked(s, [&](uint32_t k) {
      // (A folded entry is never marked: ref() hands out the map's. So each is new here.)
      const auto [it, fresh] = map_.try_emplace(first + k, Folded{d[k], home_mark(s, k)});
      if (!fresh) it->second.value = d[k];
      n += fresh ? 1 : 0;
    });
    if (folded_[p] == 0 && n != 0) folded_pages_++;
    folded_[p] += n;
    folded_entries_ += n;
  }
  template <class F>
  void each_folded(uint32_t p, F&& f) const {
    const uint64_t first = uint64_t(p) * per_page_;
    const uint64_t end = std::min<uint64_t>(first + per_page_, size_);
    for (uint64_t i = first; i < end; i++)
      if (auto it = map_.find(i); it != map_.end()) f(uint32_t(i - first), it->second.value);
  }
  void encode_folded(uint32_t p, uint8_t* bytes) const override {
    each_folded(p, [&](uint32_t k, const Value& v) { Codec::put(bytes + size_t(k) * Codec::kBytes, v); });
  }
  void merge_folded(int32_t s, uint32_t p) const override {
    auto& d = data_[size_t(s)];
    each_folded(p, [&](uint32_t k, const Value& v) { d[k] = v; });
  }
  void clear_folded() override { decltype(map_)().swap(map_); }
  uint64_t folded_entry_bytes() const override {
    // key, value, link, bucket, malloc
    return sizeof(uint64_t) + sizeof(Folded) + 3 * sizeof(void*);
  }
  int64_t count_delta() const override {
    if constexpr (!kCounts) {
      return 0;
    } else {
      int64_t d = 0;
      for (size_t s = 0; s < slots_.size(); s++) {
        const Slot& x = slots_[s];
        if (!x.dirty || slot_of_[x.page] != int32_t(s)) continue;
        each_marked(int32_t(s), [&](uint32_t k) {
          d += int64_t(counted(data_[s][k])) - int64_t(home_mark(int32_t(s), k));
        });
      }
      for (const auto& [i, f] : map_) d += int64_t(counted(f.value)) - int64_t(f.home_counted);
      return d;
    }
  }
  uint32_t count_page(uint32_t p, const uint8_t* bytes) const override {
    const uint64_t in_page = std::min<uint64_t>(per_page_, size_ - uint64_t(p) * per_page_);
    uint32_t n = 0;
    for (uint32_t k = 0; k < in_page && kCounts; k++)
      n += counted(Codec::get(bytes + size_t(k) * Codec::kBytes));
    return n;
  }

  // A folded entry, and whether its home value was counted.
  struct Folded {
    Value value;
    bool home_counted = false;
  };
  Value fill_;
  Value junk_{};
  mutable std::vector<std::vector<Value>> data_;  // per slot
  std::unordered_map<uint64_t, Folded> map_;      // folded entries by index
};

// Codecs for plain little-endian integers.
struct U16Codec {
  using Value = uint16_t;
  static constexpr uint32_t kBytes = 2;
  static void put(uint8_t* o, Value v) { o[0] = uint8_t(v); o[1] = uint8_t(v >> 8); }
  static Value get(const uint8_t* b) { return Value(b[0] | (b[1] << 8)); }
};
struct U32Codec {
  using Value = uint32_t;
  static constexpr uint32_t kBytes = 4;
  static void put(uint8_t* o, Value v) {
    for (int k = 0; k < 4; k++) o[k] = uint8_t(v >> (8 * k));
  }
  static Value get(const uint8_t* b) {
    return Value(b[0]) | Value(b[1]) << 8 | Value(b[2]) << 16 | Value(b[3]) << 24;
  }
};

}  // namespace pdl
