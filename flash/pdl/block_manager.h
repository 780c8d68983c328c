// block_manager.h — erase blocks: free queue, write heads, valid counts, greedy victim choice.
//
// Blocks [first_block, blocks) belong to the store. Each is in one state:
//   free    — erased or erasable; queued FIFO. A free block not known to be erased ("unclean":
//             found by format, or an unreadable state) is erased when it is opened. Erasing
//             lazily at open means a block is erased once per use, whatever its history.
//   open    — a write head is programming it page by page (pages in order, as NAND requires);
//   closed  — fully programmed (or found partly programmed at mount and not reopened);
//             kept in bucket lists by valid-page count so the greedy victim (fewest valid pages,
//             seed 000 §4.1 / Woodhouse) is found in O(pages per block).
// Two heads: kUser (writes, buffer flushes) and kGc (pages moved by garbage collection), so
// cold moved data does not mix with hot new data.
//
// Invariant: user allocations never take the last `reserve` free blocks; only GC may, so GC
// can always make progress. GC may also finish in the user head when no free block is left.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "flash/common/status.h"
#include "flash/device/nand.h"

namespace pdl {

class BlockManager {
 public:
  enum class Head : uint8_t { kUser = 0, kGc = 1 };

  BlockManager(const Geometry& g, uint32_t first_block, uint32_t reserve);

  // ---- setup (format / mount) ----
  void add_free(uint32_t block, bool erased);
  void add_closed(uint32_t block, uint32_t valid);
  // A partly programmed block found at mount whose remaining pages are verified erased:
  // head `h` continues programming it at page `written`.
  void add_open(Head h, uint32_t block, uint32_t written, uint32_t valid);

  // Next page of head `h`, opening a new block (erasing it if needed) when the head is full.
  // kUser REQUIRES user_pages_available() >= 1.
  Status next_page(Head h, Nand& nand, Ppa* out);
  // Pages user writes may still take without GC: the user head's rest plus free blocks above
  // the reserve.
  uint64_t user_pages_available() const;

  // Pages GC may still program: the GC head's rest, the user head's rest but one, and every
  // free block (reserve included).
  uint64_t gc_pages_available() const;

  void valid_inc(Ppa ppa) { change_valid(ppa / ppb_, +1); }
  void valid_dec(Ppa ppa) { change_valid(ppa / ppb_, -1); }
  uint32_t valid(uint32_t block) const { return valid_[block]; }
  // Pages programmed in `block` (ppb for closed blocks).
  uint32_t written(uint32_t block) const { return written_[block]; }

  // Greedy victim: the closed block with the fewest valid pages, if it has any page to
  // reclaim; -1 if none.
  int64_t greedy_victim() const;
  // Closed blocks whose every page is valid (no page to reclaim by erasing alone).
  template <typename F>
  void for_each_full_block(F&& f) const {
    for (int32_t b = bucket_[ppb_]; b >= 0; b = next_[b]) f(uint32_t(b));
  }
  // Take a closed block as the victim: it leaves the closed lists (state "collecting").
  void take(uint32_t block);
  // A collected victim was erased: back to the free queue, known erased.
  void victim_erased(uint32_t block);

  uint32_t free_blocks() const { return uint32_t(free_.size()); }
  bool is_free(uint32_t block) const { return state_[block] == kFree; }
  uint32_t first_block() const { return first_; }
  uint32_t pages_per_block() const { return ppb_; }

 private:
  enum State : uint8_t { kFree, kOpen, kClosed, kCollecting };
  void change_valid(uint32_t block, int d);
  void link(uint32_t block);
  void unlink(uint32_t block);

  uint32_t ppb_, first_, reserve_;
  std::vector<State> state_;
  std::vector<uint16_t> valid_, written_;
  std::vector<uint8_t> erased_;          // free block known to be erased
  std::vector<int32_t> prev_, next_;     // bucket lists of closed blocks
  std::vector<int32_t> bucket_;          // head of the list for each valid count 0..ppb
  std::deque<uint32_t> free_;
  int64_t head_[2] = {-1, -1};
};

}  // namespace pdl
