// sb_directory.cc — encoding, writing and loading StableBuffer's slot directory (sb_directory.h,
// docs/format.md §10).
#include "flash/ftl/sb_directory.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"

namespace pdl {

namespace {

// Byte offsets in a directory page (docs/format.md §10).
constexpr uint32_t kMagicAt = 0, kVersionAt = 4, kCopyAt = 6, kSeqAt = 8, kIndexAt = 16,
                   kCountAt = 20, kSlotsAt = 24, kFirstAt = 28, kEntriesAt = 32, kUserAt = 36,
                   kNextTsAt = 40;
constexpr uint16_t kVersion = 1;

// Page `index` of a copy as read: its seq and next_ts, its entries into `dir`; false if it is
// not a complete, well-formed page of this layout and copy.
bool decode_page(const SbLayout& l, uint32_t copy, uint32_t index, std::span<const uint8_t> pg,
                 uint64_t* seq, uint64_t* next_ts, std::vector<SbSlotEntry>* entries) {
  const uint8_t* p = pg.data();
  const size_t n = pg.size();
  if (le::get32(p + n - 4) != crc32c(p, n - 4)) return false;
  if (le::get32(p + kMagicAt) != kSbDirMagic || le::get16(p + kVersionAt) != kVersion ||
      p[kCopyAt] != copy || le::get32(p + kIndexAt) != index ||
      le::get32(p + kCountAt) != l.dir_pages || le::get32(p + kSlotsAt) != l.slots ||
      le::get32(p + kUserAt) != l.user || le::get32(p + kFirstAt) != index * l.per_page)
    return false;
  const uint32_t first = index * l.per_page;
  const uint32_t count = le::get32(p + kEntriesAt);
  if (count != std::min(l.per_page, l.slots - first)) return false;
  *seq = le::get64(p + kSeqAt);
  *next_ts = le::get64(p + kNextTsAt);
  if (*seq % 2 != copy) return false;
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t* e = p + kSbDirHeader + i * kSbDirEntry;
    SbSlotEntry en{le::get32(e), le::get64(e + 4)};
    if (en.dest != kSbFree && en.dest >= l.user) return false;
    (*entries)[first + i] = en;
  }
  return true;
}

}  // namespace

void encode_directory_page(const SbLayout& l, const SbDirectory& dir, uint32_t index,
                           std::span<uint8_t> page) {
  std::fill(page.begin(), page.end(), 0);
  uint8_t* p = page.data();
  const uint32_t first = index * l.per_page;
  const uint32_t count = std::min(l.per_page, l.slots - first);
  le::put32(p + kMagicAt, kSbDirMagic);
  le::put16(p + kVersionAt, kVersion);
  p[kCopyAt] = uint8_t(dir.seq % 2);
  le::put64(p + kSeqAt, dir.seq);
  le::put32(p + kIndexAt, index);
  le::put32(p + kCountAt, l.dir_pages);
  le::put32(p + kSlotsAt, l.slots);
  le::put32(p + kFirstAt, first);
  le::put32(p + kEntriesAt, count);
  le::put32(p + kUserAt, l.user);
  le::put64(p + kNextTsAt, dir.next_ts);
  for (uint32_t i = 0; i < count; i++) {
    uint8_t* e = p + kSbDirHeader + i * kSbDirEntry;
    le::put32(e, dir.entries[first + i].dest);
    le::put64(e + 4, dir.entries[first + i].ts);
  }
  le::put32(p + page.size() - 4, crc32c(p, page.size() - 4));
}

Status write_directory(PageStore& device, const SbLayout& l, const SbDirectory& dir) {
  std::vector<uint8_t> page(device.page_size());
  for (uint32_t i = 0; i < l.dir_pages; i++) {
    encode_directory_page(l, dir, i, page);
    PDL_TRY(device.write(l.dir_lpn(uint32_t(dir.seq % 2), i), page));
  }
  return Status::ok();
}

Status load_directory(PageStore& device, const SbLayout& l, SbDirectory* out,
                      std::vector<uint32_t>* stale) {
  std::vector<uint8_t> page(device.page_size());
  bool found = false;
  for (uint32_t copy = 0; copy < 2; copy++) {
    SbDirectory d;
    d.entries.assign(l.slots, SbSlotEntry{});
    bool complete = true;
    uint64_t seq0 = 0;
    for (uint32_t i = 0; i < l.dir_pages && complete; i++) {
      // peek: the device's mount scan is the mount's cost; these few page reads would
      // otherwise be charged to a class of the user's (cost.h has no class for them).
      const Status st = device.peek(l.dir_lpn(copy, i), page);
      if (st.is(Errc::kNotFound) || st.is(Errc::kCorrupt)) {
        complete = false;  // never written, or torn: this copy does not count
        break;
      }
      PDL_TRY(st);
      uint64_t seq = 0, next_ts = 0;
      if (!decode_page(l, copy, i, page, &seq, &next_ts, &d.entries) ||
          (i > 0 && seq != seq0)) {
        complete = false;
        break;
      }
      seq0 = seq;
      d.seq = seq;
      d.next_ts = next_ts;
    }
    if (complete && (!found || d.seq > out->seq)) {
      *out = std::move(d);
      found = true;
    }
  }
  if (!found)
    return Status::error(Errc::kCorrupt,
                         "stablebuffer: no complete copy of the slot directory on the device "
                         "(device pages " + std::to_string(l.dir_lpn(0, 0)) + ".." +
                             std::to_string(l.dir_lpn(1, l.dir_pages - 1)) + ")");
  // At most one slot per destination: the newest timestamp wins.
  std::unordered_map<Lpn, uint32_t> owner;
  stale->clear();
  for (uint32_t s = 0; s < l.slots; s++) {
    SbSlotEntry& e = out->entries[s];
    if (e.dest == kSbFree) continue;
    out->next_ts = std::max(out->next_ts, e.ts + 1);
    auto [it, fresh] = owner.try_emplace(e.dest, s);
    if (fresh) continue;
    SbSlotEntry& other = out->entries[it->second];
    const uint32_t loser = other.ts < e.ts ? it->second : s;
    if (loser == it->second) it->second = s;
    out->entries[loser] = SbSlotEntry{};
    stale->push_back(loser);
  }
  return Status::ok();
}

}  // namespace pdl
