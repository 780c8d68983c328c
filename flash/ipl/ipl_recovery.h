// ipl_recovery.h — IplStore's crash recovery as an object in three phases (the rules are in
// ipl_recovery.cc's header comment). IplStore::mount runs, in this order:
//   scan()    pass 1: every page of every block read once, in order (data and spare); per block
//             a BlockScan: its logical block, its data slots, its complete log writes, and the
//             newest commit record seen.
//   resolve() pass 2, no flash operation: which items count (the commit cut-off), which blocks
//             are candidates, and per logical block the winner.
//   reopen()  the winners' slots and logs rebuilt, the commit log, the free list and the
//             blocks to purge, the sequence counter and the report.
// Recovery writes nothing. After a power cut on a chip with a checkpoint (ipl_replay.cc),
// IplStore::replay runs replay() instead of scan() — the declared blocks read by scan()'s own
// per-block code, every other block taken from the checkpoint's tables (with NVM, plus the
// sectors logged since into its area: read_nvm_tail) — then take_checkpoint()
// after resolve() (which of the checkpoint's blocks still win), then reopen().
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "flash/ipl/ipl_store.h"

namespace pdl {

class IplRecovery {
 public:
  // REQUIRES: `s` freshly constructed on `nand`.
  IplRecovery(IplStore& s, Nand& nand, bool legacy);
  Status scan();
  // Instead of scan(): the blocks `rescan` marks read as scan() reads them, bad blocks and the
  // cut-off and seq counters from the checkpoint's store `ck` (ipl_replay.cc). `ck` must
  // outlive reopen().
  Status replay(const IplStore& ck, const std::vector<uint8_t>& rescan);
  Status resolve();  // REQUIRES: scan() or replay() succeeded
  // After replay()'s resolve(): the checkpoint's blocks that still win (ipl_replay.cc).
  void take_checkpoint();
  // After replay() only, with NVM: block b was not re-read but log sectors were written into
  // its NVM area since the checkpoint (read by read_nvm_tail).
  bool logged_since(uint32_t b) const { return !rescan_[b] && scans_[b].any; }
  void reopen();     // REQUIRES: resolve() (and after replay(), take_checkpoint()) succeeded
  // pages_scanned .. committed_seq; the caller adds timing.
  const MountReport& report() const { return rep_; }

 private:
  struct SlotScan {
    bool programmed = false;  // not erased (a valid page, or a torn one)
    bool page = false;       // a valid data page or marker
    bool marker = false;     // the empty-merge marker
    bool group = false, commit = false;
    uint64_t seq = 0;
    uint32_t aux = 0;        // its merge's page count (0: a first write)
  };
  struct LogScan {
    uint64_t seq = 0;
    uint16_t slot = 0;
    uint8_t flags = 0;
    std::vector<uint8_t> bitmap;  // an unmap record's
  };
  struct BlockScan {
    bool any = false;         // holds at least one valid page or sector (its lbn is known)
    bool commit_log = false;  // a block of the commit log
    uint32_t lbn = 0;
    uint64_t max_seq = 0;     // of every valid item, counting or not
    uint64_t max_commit = 0;  // commit-log block: its newest record
    uint32_t used_sectors = 0;
    std::vector<uint32_t> invalid;  // sectors not valid, below the last used one
    std::vector<SlotScan> slots;
    std::vector<LogScan> writes;  // complete log writes, in log order
    // resolve():
    uint64_t key = 0;         // newest counting item; 0: not a candidate
    bool has_void = false;    // holds an item that does not count
  };

  static Status corrupt(const std::string& m) { return Status::error(Errc::kCorrupt, m); }
  // scan(), per block:
  Status scan_block(uint32_t b);
  Status claim(uint32_t b, uint32_t lbn);
  Status scan_data_pages(uint32_t b);
  Status scan_log_sectors(uint32_t b, std::span<const uint8_t> log);
  Status scan_log_writes(uint32_t b, std::span<const uint8_t> log);
  // NVM (ipl_nvm.h): block b's log area into nvm_area_, every slot that is not a sector of the
  // block's current life (stale, torn, zero) made to read as erased; the commit area.
  Status read_nvm_area(uint32_t b);
  Status scan_nvm_commit();
  // Replay with NVM (ipl_replay.cc): the sectors written since the checkpoint into the area of
  // its block b of logical block lbn, past the `from` sectors its tables hold.
  Status read_nvm_tail(uint32_t b, uint32_t lbn, uint32_t from);
  // resolve():
  bool page_counts(const SlotScan& x) const;
  Status choose_candidate(uint32_t b);
  // reopen():
  void rebuild_lblock(uint32_t lbn);
  // The counting log writes of `sc` applied to the slots of lbn in the store (rebuild: on
  // the slots' data pages; replay: on the checkpoint's state).
  void apply_log(const BlockScan& sc, uint32_t lbn, bool on_checkpoint);
  void list_free_blocks();
  // Replay (ipl_replay.cc): lbn's winner is the checkpoint's block, its state the tables'.
  void keep_lblock(uint32_t lbn);

  IplStore& s_;
  Nand& nand_;
  const Geometry& g_;
  const uint32_t ppb_, dpb_, lbns_;
  const bool legacy_;
  MountReport rep_;
  std::vector<uint8_t> block_buf_, spare_;
  std::vector<uint8_t> nvm_area_;  // NVM: one block's log area
  std::vector<BlockScan> scans_;  // per block
  std::vector<uint32_t> winner_;  // per logical block: its block, or kNoBlock
  uint32_t commit_block_ = IplStore::kNoBlock;
  uint64_t max_seq_ = 0, committed_ = 0;
  // Replay only: the checkpoint's store, the blocks re-read, the logical blocks whose winner is
  // the checkpoint's block, the free blocks the checkpoint's void items make purge, and the
  // commit log's used sectors when its block is the checkpoint's.
  const IplStore* ck_ = nullptr;
  std::vector<uint8_t> rescan_, kept_lbn_, purge_free_;
  uint32_t commit_used_ = 0;
};

}  // namespace pdl
