// sb_directory.h — StableBuffer's staging area on the FTL device and its slot directory: the
// device's logical pages, and the (destination, timestamp) pair of every slot kept on the device
// (docs/format.md §10).
//
// Device lpns: [0, user) the user's pages at their destinations; [user, user + slots) the slots;
// then two copies of the slot directory, dir_pages pages each. [StableBuffer] embeds a staged
// page's destination and timestamp in the DBMS page header; SQLite's pages have no room, so the
// pairs live in the directory instead, written whole at each directory commit to the copy
// seq % 2 (seq = the commit's number, from 1 at format). A copy counts only when every one of
// its pages carries the same seq and passes its CRC; recovery takes the counting copy with the
// highest seq, so a commit is atomic even though the device keeps only single pages whole.
// Invariants: entries.size() == slots; an entry is free (dest == kSbFree) or names a
// destination < user; no two entries name the same destination (writers keep it; load() keeps
// the newest timestamp and reports the others as stale).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flash/common/status.h"
#include "flash/store/page_store.h"

namespace pdl {

inline constexpr Lpn kSbFree = 0xFFFFFFFFu;
inline constexpr uint32_t kSbDirMagic = 0x52444253;  // "SBDR"
inline constexpr uint32_t kSbDirHeader = 48;         // bytes before the entries
inline constexpr uint32_t kSbDirEntry = 12;          // destination u32, timestamp u64

struct SbLayout {
  uint32_t user = 0;       // the user's logical pages
  uint32_t slots = 0;      // staging slots
  uint32_t dir_pages = 0;  // pages of one directory copy
  uint32_t per_page = 0;   // directory entries per page

  static uint32_t entries_per_page(uint32_t page_data) {
    return (page_data - kSbDirHeader - 4) / kSbDirEntry;
  }
  static SbLayout of(uint32_t user, uint32_t slots, uint32_t page_data) {
    SbLayout l;
    l.user = user;
    l.slots = slots;
    l.per_page = entries_per_page(page_data);
    l.dir_pages = (slots + l.per_page - 1) / l.per_page;
    return l;
  }
  Lpn slot_lpn(uint32_t s) const { return user + s; }
  Lpn dir_lpn(uint32_t copy, uint32_t i) const { return user + slots + copy * dir_pages + i; }
  uint32_t overhead() const { return slots + 2 * dir_pages; }  // device pages not the user's
  uint32_t device_pages() const { return user + overhead(); }
};

struct SbSlotEntry {
  Lpn dest = kSbFree;
  uint64_t ts = 0;  // the write that staged it (StableBuffer's timestamp)
};

// One directory commit's contents.
struct SbDirectory {
  uint64_t seq = 0;      // commit number (>= 1)
  uint64_t next_ts = 1;  // the next timestamp the writer hands out
  std::vector<SbSlotEntry> entries;
};

// Encode page `index` of `dir` (copy dir.seq % 2) into `page` (page_data bytes).
void encode_directory_page(const SbLayout& l, const SbDirectory& dir, uint32_t index,
                           std::span<uint8_t> page);
// Write all pages of `dir` to copy dir.seq % 2 on `device` (not synced: the caller syncs).
Status write_directory(PageStore& device, const SbLayout& l, const SbDirectory& dir);
// The committed directory: the complete copy with the highest seq. Slots named twice keep the
// newest timestamp; the others come back in *stale (their slots hold nothing current but must
// not be reused before the next commit). kCorrupt if neither copy is complete. Reads with
// peek: uncounted (2 x dir_pages page reads; the device's own mount scan is the mount's cost).
Status load_directory(PageStore& device, const SbLayout& l, SbDirectory* out,
                      std::vector<uint32_t>* stale);

}  // namespace pdl
