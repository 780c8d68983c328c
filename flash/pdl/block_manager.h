// block_manager.h — erase blocks: free queue, write heads, valid counts, victim choice.
//
// Blocks [first_block, blocks) belong to the store. Each is in one state:
//   free    — erased or erasable; queued FIFO. A free block not known to be erased ("unclean":
//             found by format, or an unreadable state) is erased when it is opened. Erasing
//             lazily at open means a block is erased once per use, whatever its history.
//   open    — a write head is programming it page by page (pages in order, as NAND requires);
//   closed  — fully programmed (or found partly programmed at mount and not reopened);
//             kept in bucket lists by valid-page count so the greedy victim (fewest valid
//             pages) is found in O(pages per block). Greedy is this project's choice: [PDL]
//             §4.1 only says "we select one block", and its footnote 15 uses the collection of
//             Woodhouse's JFFS, which takes the log's head — the oldest block — whatever it
//             holds. That order (the oldest block with a page to reclaim: a wholly valid one
//             frees nothing here) is kept as an experiment switch (oldest_victim,
//             StoreParams::gc_victim) so the difference is measured (docs/results.md).
//   bad     — out of service for good: marked bad by the factory (found at format or mount),
//             or retired here (Nand::mark_bad) after an erase failed, the chip's erase limit
//             included, or after a program failed and its valid pages were moved away.
// A closed block may also be "retiring": a program in it failed ([IPL-B+tree]'s grown bad block).
// It stays readable and is collected like a GC victim as soon as there is room, then retired
// instead of erased. A write head whose program fails is closed at once: its remaining pages
// are never programmed.
// Two heads: kUser (writes, buffer flushes) and kGc (pages moved by garbage collection), so
// cold moved data does not mix with hot new data.
//
// Wear levelling (static, after UBI's wl.c). Erase counts are the chip's (Nand::erase_count:
// the emulator keeps them in its image file; MTD counts since open). With a threshold T > 0:
//   * a write head opening a block takes, of the free blocks, the least-worn for the user head
//     (hot data: it will be erased again soon) and the most-worn for the GC head (data that
//     survived a collection is colder: it wears its block least);
//   * wl_victim(): once an erase has happened, if the most-worn free block has endured T
//     erases more than the least-worn closed block, that young block is the victim of a
//     wear-levelling move — a GC of a block that may be wholly valid: its data goes to the GC
//     head (a worn block), and it is erased and returns to the pool, where hot data takes it.
// With T = 0 (off) free blocks come FIFO and data never moves for wear.
//
// Invariant: user allocations never take the last `reserve` free blocks; only GC may, so GC
// can always make progress. GC may also finish in the user head when no free block is left,
// but never takes its last `user_keep` pages: the user may need them to complete a sync (one
// page for the write buffer's flush; with atomic groups two, for the pending base page and
// the write buffer's page, pdl_commit.cc).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "flash/common/status.h"
#include "flash/device/nand.h"
#include "flash/store/table_stream.h"

namespace pdl {

class BlockManager {
 public:
  enum class Head : uint8_t { kUser = 0, kGc = 1 };

  BlockManager(const Geometry& g, uint32_t first_block, uint32_t reserve);
  void set_user_keep(uint32_t pages) { user_keep_ = pages; }
  // Wear-levelling threshold in erases; 0 = off.
  void set_wear_level(uint32_t threshold) { wl_threshold_ = threshold; }
  uint32_t user_keep() const { return user_keep_; }

  // ---- setup (format / mount) ----
  void add_free(uint32_t block, bool erased);
  void add_closed(uint32_t block, uint32_t valid);
  // A partly programmed block found at mount whose remaining pages are verified erased:
  // head `h` continues programming it at page `written`.
  void add_open(Head h, uint32_t block, uint32_t written, uint32_t valid);
  // A block marked bad (never used).
  void add_bad(uint32_t block);

  // Next page of head `h`, opening a new block (erasing it if needed) when the head is full. A
  // free block whose erase fails is retired and the next one tried. kUser REQUIRES
  // user_pages_available() >= 1, unless `after_failure` (the retry of a failed program, which
  // closed the head early and may take a reserve block).
  Status next_page(Head h, Nand& nand, Ppa* out, bool after_failure = false);
  // Pages user writes may still take without GC: the user head's rest plus free blocks above
  // the reserve.
  uint64_t user_pages_available() const;

  // Pages GC may still program: the GC head's rest, the user head's rest but user_keep, and
  // every free block (reserve included).
  uint64_t gc_pages_available() const;

  void valid_inc(Ppa ppa) { change_valid(ppa / ppb_, +1); }
  void valid_dec(Ppa ppa) { change_valid(ppa / ppb_, -1); }
  uint32_t valid(uint32_t block) const { return valid_[block]; }
  // Pages programmed in `block` (ppb for closed blocks).
  uint32_t written(uint32_t block) const { return written_[block]; }

  // Greedy victim: the closed block with the fewest valid pages, if it has any page to
  // reclaim; -1 if none.
  int64_t greedy_victim() const;
  // JFFS's order: the closed block closed longest ago that has a page to reclaim; -1 if none.
  // O(blocks). Blocks found closed at mount count as closed then, in block order.
  int64_t oldest_victim() const;
  // Wear levelling: the least-worn closed block, if the most-worn free block has endured at
  // least the threshold more erases; -1 if none, if WL is off, or if no block was erased since
  // the last call (the spread changes only with erases).
  int64_t wl_victim(const Nand& nand);
  // Closed blocks whose every page is valid (no page to reclaim by erasing alone).
  template <typename F>
  void for_each_full_block(F&& f) const {
    for (int32_t b = bucket_[ppb_]; b >= 0; b = next_[b]) f(uint32_t(b));
  }
  // Take a closed block as the victim: it leaves the closed lists (state "collecting").
  void take(uint32_t block);
  // A collected victim was erased: back to the free queue, known erased.
  void victim_erased(uint32_t block);
  // A write head on `block` takes no more pages (its block is closed, erased pages and all),
  // so that GC may take it (to purge a discarded group's pages).
  void close_head(uint32_t block);
  bool is_closed(uint32_t block) const { return state_[block] == kClosed; }

  // ---- bad blocks ----
  // A program in `block` failed: a write head on it is closed, and the block waits for
  // collection (retiring_victim) and retirement.
  void retire_later(uint32_t block);
  bool retiring(uint32_t block) const { return retiring_[block] != 0; }
  // A closed block waiting for retirement or a scrub, or -1.
  int64_t pending_victim() const;
  // Take `block` (a collected victim, a free block whose erase failed, or at format a block not
  // yet added) out of service:
  // marks it bad on the chip. The block is bad in RAM even if marking fails (the error is
  // returned: a power cut, or a device that cannot mark).
  Status retire(uint32_t block, Nand& nand);
  uint32_t bad_blocks() const { return bad_; }
  uint64_t retired() const { return retired_; }  // retirements since construction

  // ---- scrub (reread.h) ----
  // A read of `block` needed most of the ECC: once closed (a write head fills it first), the
  // block waits for collection (pending_victim): its valid pages move, it is erased and
  // reused. Nothing for a free, collecting, bad or retiring block.
  void scrub_later(uint32_t block);
  bool scrubbing(uint32_t block) const { return scrubbing_[block] != 0; }
  uint64_t scrubbed() const { return scrubbed_; }  // scrubbed blocks erased since construction

  // ---- checkpoint (block_tables.cc; byte layout: docs/format.md §13.1, section PBLK) ----
  // Append every block's state, valid count, erased / retiring / scrubbing flags, the heads
  // and their written counts, the close clocks, the free queue's and the closed lists' order
  // and the wear-levelling check. REQUIRES: no block being collected (else kInvalidArgument).
  Status save_tables(TableWriter& w) const;
  // The inverse, on a manager fresh from the constructor: the same manager as the one that
  // saved (erase_epoch_ restarts at 0; retired() and scrubbed() count from here). Hostile-safe:
  // a value out of range or contradicting another is kCorrupt naming the table.
  Status load_tables(TableReader& r);
  // RAM the block tables take (capacities of the per-block vectors, the free queue).
  uint64_t table_bytes() const;

  // The close clock's wrap point (default 2^32 - 1); a small one lets tests renumber often.
  void set_stamp_limit(uint32_t limit) { stamp_limit_ = limit; }

  uint32_t free_blocks() const { return uint32_t(free_.size()); }
  bool is_free(uint32_t block) const { return state_[block] == kFree; }
  bool is_bad(uint32_t block) const { return state_[block] == kBad; }
  uint32_t first_block() const { return first_; }
  uint32_t pages_per_block() const { return ppb_; }

 private:
  enum State : uint8_t { kFree, kOpen, kClosed, kCollecting, kBad };
  void change_valid(uint32_t block, int d);
  void link(uint32_t block);
  void unlink(uint32_t block);
  void close(uint32_t block);  // a block becomes closed: in its bucket, stamped
  // Index in free_ of the block head `h` opens next.
  size_t pick_free(Head h, const Nand& nand) const;

  uint32_t ppb_, first_, reserve_;
  uint32_t user_keep_ = 1;
  std::vector<State> state_;
  std::vector<uint16_t> valid_, written_;
  // close_clock_ when the block was last closed. Only their order counts (oldest_victim): when
  // the clock reaches stamp_limit_, the closed blocks' stamps are renumbered 1.. in that order
  // (renumber_stamps), so 32 bits suffice for any number of closes.
  std::vector<uint32_t> closed_at_;
  uint32_t close_clock_ = 0;
  uint32_t stamp_limit_ = 0xFFFFFFFFu;
  void renumber_stamps();
  std::vector<uint8_t> erased_;          // free block known to be erased
  std::vector<uint8_t> retiring_;        // a program in the block failed
  std::vector<uint8_t> scrubbing_;       // a read of the block needed most of the ECC
  std::vector<int32_t> prev_, next_;     // bucket lists of closed blocks
  std::vector<int32_t> bucket_;          // head of the list for each valid count 0..ppb
  std::deque<uint32_t> free_;
  int64_t head_[2] = {-1, -1};
  uint32_t bad_ = 0;
  uint32_t retiring_n_ = 0;  // blocks with retiring_ set
  uint32_t scrubbing_n_ = 0;  // blocks with scrubbing_ set
  uint64_t retired_ = 0;
  uint64_t scrubbed_ = 0;
  uint32_t wl_threshold_ = 0;
  uint64_t erase_epoch_ = 0;     // erases done through this manager (victims, opened blocks)
  uint64_t wl_checked_ = ~uint64_t{0};  // erase_epoch_ when wl_victim last found nothing
};

}  // namespace pdl
