// pdl_recovery.h — PdlStore's crash recovery as an object in three phases ([PDL] Fig. 7; the
// rules are in pdl_recovery.cc's header comment). PdlStore::mount runs, in this order:
//   scan()    every block in order: its spare areas, then the data it must check, decoded into
//             one record per page and per block; every base page and differential record found
//             is an item, judged by Fig. 7 at once if it is at or below the commit cut-off seen
//             so far, else kept waiting.
//   resolve() the cut-off is final: waiting items are judged or void; tombstones and orphans
//             resolved; vdct, block valid counts and the pinned commit record set. No flash op.
//   reopen()  the write heads found and checked erased, other blocks closed, the sequence
//             counter and the report filled in.
// The order of flash operations is that of a single scan (the mount's reads are figures, and
// fault-injection tests cut at the n-th operation). Recovery writes nothing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flash/pdl/pdl_store.h"

namespace pdl {

class PdlRecovery {
 public:
  // REQUIRES: `s` freshly constructed on `nand`, legacy_/groups_/user keep set.
  PdlRecovery(PdlStore& s, Nand& nand, bool legacy);
  // With the write buffer in NVM: the NVM log's commit entry is a commit record too (before
  // scan()); after resolve(), its records newer than their lpn's base page and flash
  // differential go back into the write buffer.
  void nvm_commit(uint64_t seq, uint64_t max_seq);
  Status take_nvm_records(const std::vector<std::vector<uint8_t>>& records);
  Status scan();
  // Instead of scan() (pdl_replay.cc): the store is the checkpoint's (mount_tables, its tables
  // demand-loaded), and only what the blocks in `rescan` change is re-derived, by scan()'s
  // rules: the lpns their items or the checkpoint's entries name. kCorrupt if the
  // checkpoint's counts in those blocks are not all explained by those lpns (the caller then
  // scans). With NVM, `nvm_records` are its log's committed records (nvm_commit() called
  // first, take_nvm_records() after resolve(), as for scan()). REQUIRES: the store mounted on
  // this chip from tables saved after a sync.
  Status replay(const std::vector<uint8_t>& rescan,
                const std::vector<std::vector<uint8_t>>* nvm_records = nullptr);
  void resolve();  // REQUIRES: scan() or replay() succeeded
  // After replay(): the lpns it reconsidered (sorted), moved out.
  std::vector<Lpn> take_touched() { return std::move(touched_); }
  Status reopen();  // REQUIRES: resolve() ran
  // pages_scanned .. next_seq; the caller adds timing.
  const MountReport& report() const { return rep_; }

 private:
  // A base page or a differential record, as the scan found it.
  struct Item {
    Ppa ppa;
    Lpn lpn;
    uint64_t seq;
    uint8_t kind;  // kBase, kDiff, kTombstone
    static constexpr uint8_t kBase = 0, kDiff = 1, kTombstone = 2;
  };
  // One page of the block being scanned: its spare header as decoded (kCorrupt once a check of
  // its data fails).
  struct PageScan {
    SpareHeader hdr;
    SpareState state = SpareState::kErased;
  };
  // One block, as scan found it and resolve counted it.
  struct BlockScan {
    bool used = false;          // holds a programmed page (not bad, not free)
    bool gap_free = false;      // pages 0..last_programmed all programmed, the last one whole
    bool torn = false;          // its last programmed page is torn
    bool holds_void = false;    // holds an item above the final cut-off
    uint32_t last_programmed = 0;
    uint64_t newest = 0;        // newest seq of a valid header
    uint32_t valid = 0;         // valid pages (resolve)
  };
  // Fig. 7's per-lpn sequence numbers: of the current base page and differential.
  struct LpnSeqs {
    uint64_t base_seq = 0, diff_seq = 0;
    uint8_t tomb = 0;  // the current differential is a tombstone
  };

  // scan(), per block:
  Status scan_block(uint32_t b);
  Status read_spares(uint32_t b, int* last);
  Status check_repaired(uint32_t b);
  Status check_last_page(uint32_t b, int last);
  Status collect_items(uint32_t b, int last);
  Status count_failed_page(Ppa r, int p);
  Status take_differential_page(Ppa r, const SpareHeader& h);
  // Fig. 7 over items, in any order. Of two copies with one seq (a GC move keeps the seq), the
  // first in block order stays unless its block was cut (cut_block) and the other's was not.
  bool cut_block(uint32_t b) const;
  bool better_copy(Ppa cur, Ppa ppa) const;
  void apply(const Item& it);
  void note_commit(uint64_t seq, Ppa r);
  void take(const Item& it);
  // Fig. 7's seqs of lpn l: per lpn in a scan, of the touched lpns only in a replay.
  LpnSeqs& seqs(Lpn l) { return replay_ ? replay_seqs_[touched_index(l)] : seqs_[l]; }
  // REQUIRES: l in touched_ (sorted).
  size_t touched_index(Lpn l) const {
    return size_t(std::lower_bound(touched_.begin(), touched_.end(), l) - touched_.begin());
  }
  // replay() (pdl_replay.cc): the checkpoint's counts of the touched lpns taken out, and
  // their entries reset to what lies outside the rescanned blocks.
  Status forget_checkpoint_entries(const std::vector<uint8_t>& rescan,
                                   const std::unordered_map<Ppa, uint16_t>& rescan_vdct,
                                   const std::unordered_map<Lpn, uint32_t>& rescan_copies,
                                   uint64_t ck_next);
  // With NVM: the checkpoint's write buffer emptied, its lpns and the log's touched.
  void touch_write_buffer(const std::vector<std::vector<uint8_t>>& records);
  // The checkpoint's per-lpn sequence numbers read back from its pages (entry c).
  Status seed_seqs(Lpn l, const PpmtEntry& c, const std::vector<uint8_t>& rescan);
  Status diff_page_records(Ppa r);
  // resolve():
  void judge_waiting();
  void resolve_lpns();  // every lpn (scan), the touched ones (replay)
  void resolve_lpn(Lpn l);  // its tombstone or orphan resolved; vdct and valid counts
  void pin_commit();
  // reopen():
  Status reopen_heads();

  PdlStore& s_;
  Nand& nand_;
  const Geometry& g_;
  const uint32_t ppb_;
  const size_t lpns_;
  const bool legacy_;
  std::vector<PageScan> page_;    // per page of the block being scanned
  std::vector<BlockScan> block_;  // per block
  std::vector<LpnSeqs> seqs_;     // per lpn (scan; allocated by scan())
  std::vector<uint8_t> data_;
  MountReport rep_;
  uint64_t max_seq_ = 0;
  // The commit cut-off so far, and the page holding it (format 1: everything counts).
  uint64_t cutoff_;
  Ppa commit_ppa_ = kNoPpa;
  std::vector<Item> waiting_;  // items above the cut-off seen so far
  // replay(): items of rescanned blocks are collected here first (collect_), and the
  // records of the checkpoint's differential pages read for their seqs, per page. The
  // touched lpns (sorted) are the only ones resolve() reconsiders.
  bool replay_ = false;
  bool collect_ = false;
  std::vector<Item> collected_;
  std::vector<Lpn> touched_;
  std::vector<LpnSeqs> replay_seqs_;  // parallel to touched_ (no per-lpn node: RAM at mount)
  // With NVM: each lpn the log names, its newest record's seq, and whether the checkpoint's
  // write buffer held that record (touch_write_buffer; used by forget_checkpoint_entries).
  struct NvmNewest {
    Lpn lpn;
    uint64_t seq;
    bool buffered;
  };
  std::vector<NvmNewest> nvm_newest_;
  std::unordered_map<Ppa, std::unordered_map<Lpn, std::pair<uint64_t, bool>>> diff_records_;
};

}  // namespace pdl
