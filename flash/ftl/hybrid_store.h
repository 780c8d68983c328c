// hybrid_store.h — BAST and FAST, the hybrid (log-block) FTLs of a commodity flash device
// ([BAST], [FAST]), as a PageStore: a block-level map of data blocks plus a few page-mapped log
// blocks that absorb overwrites, reclaimed by switch, partial and full merges.
//
// Mapping: logical page lpn belongs to logical block lbn = lpn / P at offset lpn % P (P = pages
// per erase block). Each logical block has at most one data block; a record (a page's data, or
// a trim record) is at the data block's page `offset` when it was written in place.
//
//   write(lpn)  no data block yet: take a free block as the data block. The data block's page
//               `offset` still erased and past its last programmed page (pages of a block are
//               programmed in order): program it there. Otherwise the record goes to a log block:
//     BAST      the logical block's own log block (one at most; at most log_blocks in use),
//               at its next free page. None: take a free block, first merging the least
//               recently written log block if log_blocks are in use. Full: merge it first.
//     FAST      offset 0 starts the sequential log block (the one in use is merged first);
//               the sequential continuation of the sequential log block's logical block goes on
//               in it; anything else goes to the newest of log_blocks - 1 random log blocks,
//               shared by every logical block and filled in order. When they are all full the
//               oldest is the victim: every logical block with a current record in it gets a
//               full merge, then it is erased and reused.
//   merge       of a log block L (BAST's, FAST's sequential one) of logical block lbn:
//               switch  — L holds offset i at its page i for every offset (or neither has the
//                         page): L becomes the data block, the old one is erased;
//               partial — the same for L's programmed prefix 0..k-1: the current records of
//                         offsets k.. held by the old data block are copied into L's pages
//                         k.. (FAST's in random log blocks stay there), then as a switch;
//               full    — the current record of every offset is copied into a fresh block at
//                         its offset, which becomes the data block; the old data block and the
//                         logical block's log block (BAST) or sequential log block (FAST) are
//                         erased.
//   trim(lpn)   a mapped page gets a trim record (spare only), placed as a write's record is.
//   sync()      records are programmed as they are written: sync only flushes the device.
//
// Records on flash (docs/format.md §9): spare header type kBase (data, CRC of the page) or
// kFtlTrim (spare only), logical_page = lpn, seq = one global counter at the write, aux = copy
// generation (0 as written; a merge's copy keeps seq and gets the next generation) and, for a
// full merge's copies, how many records that merge wrote. Crash recovery (hybrid_recovery.cc)
// reads every page: for each lpn the record of highest seq is current; among equal seqs (a
// record and its copies) a copy in a *complete* full merge (as many of its records on flash
// as it says) wins, the newest generation first; else the lowest generation (the original
// over a partial merge's or a cut merge's copies). Merges program every copy before erasing
// anything, and erase only blocks holding no current record; so after a cut anywhere the
// current records are those before the merge, or those after it, with the same content
// either way, and a completed full merge leaves its old blocks free even if their erases were
// cut. Blocks are then classified: holding no current record:
// free (erased before use); one logical block's records at their offsets: its data block (a
// second such block: BAST's log block, FAST's sequential one); anything else: BAST's log block
// of its logical block, or a FAST random log block (oldest first). Whatever does not fit
// (a third block of one logical block, a BAST block holding several) is merged by the first
// change after the mount. Mount programs and erases nothing.
// Checkpoint (hybrid_tables.cc, docs/format.md §13.3): save_tables writes the maps, every
// block's role and flags, every programmed page's record as the scan reads it (lpn, seq, aux,
// data or trim), and the queues in order; mount_tables rebuilds the very same store from them,
// without the scan. So the tables describe every page on flash: a block freed by a scan mount
// keeps its (stale) records until it is erased for use. After a power cut (hybrid_replay.cc)
// the scan's first pass is run over the checkpoint's records for the blocks unchanged since
// and over reads of the others (those the summary pages declared, and retiring blocks, whose
// failed page's contents the tables do not know), then the scan's own second pass and block
// placement: the store a scan would mount, by construction, reading only those blocks.
//
// Bad blocks: factory-marked blocks are skipped. A failed program closes its block (no further
// program in it: "retiring") and the record is written again elsewhere (a fresh seq); the
// block is marked bad instead of erased when a merge releases it. A merge's copy failing in
// its new block retires that block at once and the merge is redone in another. A failed erase
// retires the block. Scrub: a read needing most of the ECC (reread.h) gets its block's
// logical block fully merged (a random log block: merged as a victim) at the next change.
// Static wear levelling is not done (wear_level is ignored): free blocks are taken first in,
// first out, which rotates every block through log and data use.
//
// Invariants (check()): a block's role, logical block and current-record counts agree with the
// maps and lists (data, log, sequential, random, free); cur_[lpn] names a page whose recorded
// lpn is lpn, in a block holding data; a mapped lpn's current record is data. Not checked,
// kept by every change (a log block is taken only after merging down to the limit): at most
// log_blocks BAST log blocks, or 1 sequential + log_blocks - 1 random FAST log blocks, are in
// use — a mount may find more, which the next allocations merge away.
// Thread-safety: none.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "flash/device/nand.h"
#include "flash/store/page_store.h"
#include "flash/store/spare.h"
#include "flash/store/store_base.h"
#include "flash/store/store_params.h"

namespace pdl {

class HybridStore final : public StoreBase {
 public:
  // Defaults and ranges of an ftl=bast|fast store for `g` (log_blocks, gc_reserve_blocks,
  // logical_pages); messages name the parameter ("log_blocks: ..."). hybrid_params.cc.
  static Status resolve_params(StoreParams* p, const Geometry& g);
  // An empty store on `nand` (erases its data blocks; the superblock is the caller's).
  static Status format(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out);
  // Crash recovery from the spare areas (hybrid_recovery.cc).
  static Status mount(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out,
                      MountReport* report);
  // After a power cut: the store a scan would mount, from the checkpoint's tables in `r` and
  // reads of the blocks `declared` since (and of retiring ones) only (hybrid_replay.cc). A
  // declared block out of the store's range is kCorrupt (the caller then scans).
  static Status replay(Nand& nand, const StoreParams& params, TableReader& r,
                       const std::vector<uint32_t>& declared, std::unique_ptr<PageStore>* out,
                       MountReport* report);
  bool take_replayed_lpns(std::vector<Lpn>* out) override;  // hybrid_replay.cc
  // The store rebuilt from the tables save_tables wrote instead of a scan (hybrid_tables.cc,
  // docs/format.md §13.3; the contract is mount_tables.h's): no flash operation, every value
  // range-checked, a stream not describing a store of `params` on `nand` is kCorrupt.
  static Status mount_tables(Nand& nand, const StoreParams& params, CommitMode mode,
                             TableReader& r, std::unique_ptr<PageStore>* out);
  Status save_tables(TableWriter& w) const override;  // hybrid_tables.cc
  uint64_t table_bytes() const override;              // hybrid_tables.cc

  Status write(Lpn lpn, std::span<const uint8_t> page) override;
  Status trim(Lpn lpn) override;
  Status sync() override;

  bool is_mapped(Lpn lpn) const override { return lpn < mapped_.size() && mapped_[lpn]; }
  uint32_t logical_pages() const override { return uint32_t(cur_.size()); }
  const StoreStats& stats() const override {
    stats_.bad_blocks = bad_count_;
    return stats_;
  }
  uint32_t free_blocks() const override { return uint32_t(free_.size()); }
  size_t mapping_bytes_per_lpn() const override;
  Status check() const override;                        // hybrid_inspect.cc
  LpnLocation locate(Lpn lpn) const override;            // hybrid_inspect.cc
  BlockInfo block_info(uint32_t block) const override;  // hybrid_inspect.cc

 private:
  // `page_records`: allocate the page records (false: the replay moves the checkpoint's in).
  HybridStore(Nand& nand, const StoreParams& params, bool page_records = true);

  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  enum class Role : uint8_t {
    kFree,      // in free_: erased (erased_), or to be erased before use — then it may
                // still hold the stale records a scan mount found there (its pages)
    kData,      // lbn's data block
    kLog,       // BAST: lbn's log block; FAST: the sequential log block (of lbn)
    kRandom,    // FAST random log block (BAST: only after a mount, merged at the first change)
    kExtra,     // after a mount: one more block of lbn, merged at the first change
    kReserved,  // the superblock blocks
    kBad,       // out of service
  };
  struct Block {
    Role role = Role::kFree;
    uint32_t lbn = kNone;   // kData, kLog, kExtra
    uint32_t wp = 0;        // pages programmed (or torn, or failed): the next page to program
    uint32_t valid = 0;     // current records in the block (data and trim)
    uint32_t live = 0;      // current data records (block_info's valid pages)
    uint64_t last_use = 0;  // BAST log blocks: when last written (LRU victim)
  };

  static bool holds_data(Role r) {
    return r == Role::kData || r == Role::kLog || r == Role::kRandom || r == Role::kExtra;
  }
  bool fast() const { return params_.ftl == FtlKind::kFast; }
  uint32_t ppb() const { return geo_.pages_per_block; }
  uint32_t lbn_of(Lpn lpn) const { return lpn / ppb(); }
  uint32_t off_of(Lpn lpn) const { return lpn % ppb(); }
  uint32_t lpns_in(uint32_t lbn) const;  // ppb(), or fewer for the last logical block
  Ppa ppa(uint32_t block, uint32_t page) const { return block * ppb() + page; }
  uint32_t block_of(Ppa p) const { return p / ppb(); }
  // A block takes another program: not closed by a failure, pages left.
  bool writable(uint32_t b) const { return !retiring_[b] && blocks_[b].wp < ppb(); }

  // --- hybrid_store.cc ---
  Status read_page(Lpn lpn, std::span<uint8_t> page) override;
  // Read the record at `p` (must be lpn's) into page_buf_ / *hdr, with retries and checks.
  Status read_record(Ppa p, Lpn lpn, SpareHeader* hdr);
  // A new record for lpn (a page, or a trim if `page` is empty) wherever the FTL puts it.
  Status put(Lpn lpn, std::span<const uint8_t> page);
  // Program a record into `block`'s page `page_no` (>= its wp): `data` empty = trim record.
  // kBadBlock: the block is closed (retiring) and nothing recorded.
  Status program_record(uint32_t block, uint32_t page_no, Lpn lpn, std::span<const uint8_t> data,
                        uint64_t seq, uint32_t aux);
  // lpn's current record is now at `p` (mapped: data).
  void set_current(Lpn lpn, Ppa p, bool mapped);
  // Where a new record of lpn goes when its data block has no room (BAST: the log block).
  Status log_target_bast(uint32_t lbn, uint32_t* block);
  Status log_target_fast(uint32_t lbn, uint32_t off, uint32_t* block);
  // Before the first change after a mount: merge what the mount left outside the FTL's shape.
  Status settle();
  Status scrub_pending();
  void note_read(uint32_t block);

  // --- hybrid_merge.cc ---
  void drop_bast_log(uint32_t lbn);  // lbn's BAST log block is no longer a log block
  Status allocate_block(uint32_t* block);
  // Erase `block` and queue it free, or retire it (closed by a failure, or its erase fails).
  Status release_block(uint32_t block);
  Status retire(uint32_t block);
  // Merge log block `log` (BAST's, FAST's sequential) of lbn: switch, partial or full.
  Status merge_log(uint32_t lbn, uint32_t log);
  // Copy the current record of each of lbn's offsets into a fresh block, which becomes lbn's
  // data block; release lbn's old data block, its log / sequential log block and extras.
  Status full_merge(uint32_t lbn);
  // FAST victim (or a block the mount left mixed): full-merge every logical block with a
  // current record in `block`, then release it.
  Status merge_random(uint32_t block);
  // Copy the record at `from` (lpn's current) to `to_block` page `page_no`: same seq, the next
  // copy generation, and `merge_records` (a full merge: the records it writes; else 0).
  Status copy_record(Ppa from, Lpn lpn, uint32_t to_block, uint32_t page_no,
                     uint32_t merge_records);
  // --- hybrid_recovery.cc --- the scan, in the steps the replay shares:
  // Pass 1 for block b: every page read into the page records (page_lpn_, page_seq_, page_aux_,
  // page_trim_) and the write pointer; a bad block only gets its role. Counts into `rep`.
  Status scan_block(uint32_t b, MountReport* rep);
  // Pass 2 over the page records of every block: each lpn's current record, the counts, the
  // blocks' roles (place_blocks), the sequence counter. The store must be fresh otherwise.
  void resolve_scan(MountReport* rep);
  // Each block with a current record gets its role from what it holds (hybrid_store.h: crash
  // recovery); the others are free. `min_seq`, `max_seq`: per block.
  void place_blocks(const std::vector<uint64_t>& min_seq, const std::vector<uint64_t>& max_seq);
  // Block b's page records forgotten (erased, or about to be).
  void forget_pages(uint32_t b);

  // --- hybrid_tables.cc --- why a block entry of the tables cannot be, or "".
  std::string block_entry_error(uint32_t b, uint8_t role, uint8_t flags, uint32_t lbn,
                                uint32_t wp, uint64_t last_use) const;

  // Merge bookkeeping: a merge of `kind` programmed `pages`.
  void count_merge(uint64_t* kind, uint64_t pages);
  // Run merge work `f` charged to the gc cost bucket (at the top of a call's merges only).
  template <class F>
  Status as_gc(F f) {
    ledger_.charge_current();
    const Status st = f();
    ledger_.charge(ledger_.gc());
    return st;
  }

  static constexpr int kProgramAttempts = 4;
  // A record's aux word (docs/format.md §9): copy generation in the low 16 bits, the records
  // its full merge wrote in the high 16 (0: a host write or a partial merge's copy).
  static uint32_t aux_generation(uint32_t aux) { return aux & 0xFFFFu; }
  static uint32_t aux_merge_records(uint32_t aux) { return aux >> 16; }
  static uint32_t make_aux(uint32_t generation, uint32_t merge_records) {
    return std::min<uint32_t>(generation, 0xFFFFu) | (merge_records << 16);
  }

  std::vector<Ppa> cur_;          // lpn -> its current record (kNoPpa: never written)
  std::vector<bool> mapped_;      // lpn's current record is data
  // Per physical page, the record there as the scan reads it: lpn (or kNone: erased, torn or
  // a failed program), seq and aux (0 without a record), a trim record or data.
  std::vector<uint32_t> page_lpn_;
  std::vector<uint64_t> page_seq_;
  std::vector<uint32_t> page_aux_;
  std::vector<bool> page_trim_;
  std::vector<Block> blocks_;
  std::vector<uint32_t> data_;    // lbn -> data block
  std::vector<uint32_t> log_;     // lbn -> BAST log block
  std::vector<std::vector<uint32_t>> extras_;  // lbn -> blocks the mount could not place
  std::set<uint32_t> unsettled_;  // lbns with extras
  std::vector<uint32_t> bast_logs_;  // BAST log blocks in use (the LRU victim is among them)
  uint32_t seq_block_ = kNone;    // FAST sequential log block (its lbn in blocks_)
  std::deque<uint32_t> random_;   // FAST random log blocks, oldest first
  std::deque<uint32_t> free_;
  std::vector<bool> erased_;      // block known erased
  std::vector<bool> retiring_;    // a program failed in the block: no more programs, retire
  std::set<uint32_t> scrubbing_;  // blocks a read of which needed most of the ECC
  uint32_t bad_count_ = 0;
  uint64_t next_seq_ = 1;
  uint64_t use_clock_ = 0;
  bool replayed_ = false;           // mounted by replay: replayed_lpns_ not yet taken
  std::vector<Lpn> replayed_lpns_;  // (take_replayed_lpns)
  std::vector<uint8_t> page_buf_, spare_buf_;
};

}  // namespace pdl
