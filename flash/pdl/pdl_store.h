// pdl_store.h — the PDL engine ([PDL] §4), and OPU as its page-based special case.
//
// Where the paper's figures live:
//   Fig. 4 PDL_Writing ............ PdlStore::write             (pdl_store.cc)
//   Fig. 5 writingDifferentialWriteBuffer / writingNewBasePage / decreaseValidDifferentialCount
//          ........................ flush_write_buffer / write_new_base / decrease_vdct
//   Fig. 6 PDL_Reading ............ PdlStore::read_page         (pdl_store.cc; read and peek
//                                                              around it: store_base.cc)
//   Fig. 7 PDL_RecoveringfromCrash  PdlStore::mount             (pdl_recovery.cc)
//   §4.1 garbage collection ....... gc_once, gc_merge           (pdl_gc.cc)
//   §4.5 flush = commit ........... sync, abort                 (pdl_commit.cc)
// Also: PdlStore::check (pdl_check.cc) recomputes the tables; locate / block_info
// (pdl_inspect.cc) expose the ppmt entry and block states to tools, from RAM only.
//
// OPU (out-place update with page-level mapping) is what PDL becomes when every write takes
// Case 3 ([PDL] §4.1: "In this special case, PDL becomes the same as the page-based
// method"), minus the base-page read that only differentials need. Method::kOpu runs exactly
// that path, so both methods share allocation, GC, obsolete marking, commit and recovery, and
// their comparison differs only in what the paper says differs. Trim tombstones use the write
// buffer in both methods. Method::kFtl (ftl=page), the page-mapping FTL device, is OPU's path
// too, with obsolete marks in RAM and no atomic groups (docs/design.md §15).
//
// Commit modes (page_store.h). kPerPage is [PDL]'s engine: every page is durable once
// programmed, and carries a commit record covering itself (so one recovery serves both
// modes). kGroup — atomic groups (superblock format 2; pdl_commit.cc): every write and trim
// since the last sync belongs to the open *group*; sync() commits it, abort() discards it. PDL and OPU write
// out of place, so the committed version of every page the group changed is still on flash:
// `committed_` remembers its <base page, differential page> for each lpn the group touched, and
// those pages stay valid (GC moves them, nothing marks them obsolete) until the commit. The
// commit record is the seq of a *commit page*, flagged in its spare area — normally the
// differential write buffer's own page, programmed at the sync: a commit whose differentials
// fit one page costs one program. Recovery takes the largest commit record S and ignores
// every page and record with a larger seq (the crashed group's). Those *void* pages must be
// gone before any later commit could cover their seqs, so the blocks holding them are
// collected (purge_void_blocks) before the next commit record is programmed. The page
// holding the newest commit record is pinned (counted valid): GC that takes its block first
// programs a marker restating the record.
// The last base page a group writes (Case 3, OPU, a first write) is held in RAM (`pending_`)
// until the next base page or the commit: the commit record then rides on it when the buffer
// is empty (OPU), and rewrites of the same page in a group cost nothing.
//
// With NVM (StoreParams::nvm_bytes > 0; pdl_nvm.cc, nvm_log.h, docs/design.md §16) the write
// buffer holds several pages and is durable in an NVM log: sync() appends its changes and a
// commit entry there instead of programming a page, and a flush takes one page of its oldest
// records (or merges a large one into a new base page).
//
// Crash model: a page is durable once programmed; the write buffer (unless in NVM, as of its
// last commit) and the pending base page are lost. Sequence numbers order everything (GC copies keep them), so recovery picks the
// newest committed base, and a differential only if newer than that base.
//
// Cost attribution (cost.h, cost_ledger.h): a PageStore call charges its own work to the lpn's
// class; ensure_user_space charges each gc_once to `gc`; flush_write_buffer splits its page's
// work over the classes of the records it holds; a pending base page is charged to its own
// lpn's class when programmed; commit markers and void purges go to `other`. So the buckets
// always sum to the counters since reset_stats().
//
// Invariants (checked by check(), by the tests through the PageStore API, and by asserts):
//   * ppmt[l].base is kNoPpa, kPendingPpa (then pending_ holds l's page) or a page with
//     p2l[base] == l; the same for committed_[l].base;
//   * vdct[p] == lpns whose current differential is p, plus lpns whose committed differential
//     is p and current one is not; a block's valid count == its pages that are a current or
//     committed base page, a differential page with vdct > 0, or the pinned commit page;
//   * ppmt[l].in_dwb  <=>  the write buffer has a record for l; every lpn with a record or a
//     pending base page is in committed_ (it was touched by the open group).
// Bad blocks: factory-marked blocks are skipped at format and mount. A failed erase (the
// erase limit included) retires the block at once; a failed program closes its block, is
// redone on the next page, and the block is collected and retired (marked bad) before the
// next write or sync completes — GC moves its valid pages first, so nothing is lost. A failed
// obsolete mark leaves the page counted as a recoverable copy, as in obsolete=none mode.
// When retired blocks leave too little room, writes fail with kFull (SQLITE_FULL) and every
// page stays readable.
//
// Thread-safety: none.
#pragma once

#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "flash/pdl/block_manager.h"
#include "flash/pdl/nvm_log.h"
#include "flash/pdl/ppmt.h"
#include "flash/pdl/write_buffer.h"
#include "flash/store/spare.h"
#include "flash/store/store_base.h"

namespace pdl {

class PdlStore final : public StoreBase {
 public:
  // Fill the defaults of PDL or OPU parameters for `g` and check their ranges (pdl_params.cc).
  // REQUIRES: params->check_method() passed, method pdl or opu.
  static Status resolve_params(StoreParams* params, const Geometry& g);
  // REQUIRES: params resolved for nand's geometry; the superblock is handled by the caller.
  static Status format(Nand& nand, const StoreParams& params, CommitMode mode,
                       std::unique_ptr<PageStore>* out);
  // `legacy`: the superblock is format 1 — no commit records; every page on flash counts.
  // REQUIRES: !legacy for kGroup.
  static Status mount(Nand& nand, const StoreParams& params, bool legacy, CommitMode mode,
                      std::unique_ptr<PageStore>* out, MountReport* report);
  // The store that save_tables wrote, from its tables instead of a scan (pdl_tables.cc;
  // contract: flash/image/mount_tables.h; layout: docs/format.md §13.1). With NVM the log is
  // read again (as the scan mount does) and must hold the saved write buffer — unless
  // `moved` (the replay's call): the log is returned there as it is now, unchecked.
  static Status mount_tables(Nand& nand, const StoreParams& params, CommitMode mode,
                             TableReader& r, std::unique_ptr<PageStore>* out,
                             NvmLog::Recovered* moved = nullptr);
  // After a power cut (docs/design.md §17): the store of the checkpoint's tables `r`, then
  // the blocks `declared` since (and the checkpoint's write heads) re-derived from flash by
  // the scan's rules (pdl_replay.cc); with NVM, the write buffer rebuilt from its log.
  static Status replay(Nand& nand, const StoreParams& params, CommitMode mode, TableReader& r,
                       const std::vector<uint32_t>& declared, std::unique_ptr<PageStore>* out,
                       MountReport* report);
  Status save_tables(TableWriter& w) const override;  // pdl_tables.cc
  void tables_saved(bool durable) override;           // pdl_tables.cc
  uint64_t table_bytes() const override;              // pdl_tables.cc
  // The paged tables' counters summed (loads, evictions, resident pages...; pdl_tables.cc),
  // and the clean pages each keeps (StoreParams::table_cache resolved).
  PagedTableStats paged_stats() const;
  uint32_t table_cache() const { return ppmt_.capacity(); }

  // Each operation ends in guard(): a table page that failed to load halts the store.
  Status write(Lpn lpn, std::span<const uint8_t> page) override {
    return guard(write_op(lpn, page));
  }
  Status trim(Lpn lpn) override { return guard(trim_op(lpn)); }
  Status sync() override { return guard(sync_op()); }  // pdl_commit.cc

  Status set_commit_mode(CommitMode mode) override;  // pdl_commit.cc
  Status abort() override { return guard(abort_op()); }  // pdl_commit.cc
  bool dirty() const override;
  uint64_t uncommitted_pages() const override { return group_pages_.size(); }
  uint64_t damaged_pages() const override { return damaged_pages_; }
  void set_wear_level(uint32_t threshold) override {
    StoreBase::set_wear_level(threshold);
    blocks_.set_wear_level(threshold);
  }
  Status upgrade_format() override;  // pdl_commit.cc

  bool is_mapped(Lpn lpn) const override {
    return lpn < ppmt_.size() && ppmt_.get(lpn).base != kNoPpa && !trim_pending(lpn);
  }
  uint64_t mapped_pages() const override;  // pdl_inspect.cc
  uint32_t logical_pages() const override { return uint32_t(ppmt_.size()); }
  const StoreStats& stats() const override {
    stats_.bad_blocks = blocks_.bad_blocks();
    stats_.blocks_retired = blocks_.retired() - retired_at_reset_;
    stats_.blocks_scrubbed = blocks_.scrubbed() - scrubbed_at_reset_;
    const PagedTableStats t = paged_stats();
    stats_.table_loads = t.loads - table_loads_at_reset_;
    stats_.table_evictions = t.evictions - table_evictions_at_reset_;
    stats_.table_pages_resident = t.resident;
    stats_.table_cache_pages = table_cache();
    stats_.table_folds = t.folds - table_folds_at_reset_;
    stats_.table_entries_folded = t.folded_entries;
    return stats_;
  }
  void reset_stats() override;
  uint32_t free_blocks() const override { return blocks_.free_blocks(); }
  size_t mapping_bytes_per_lpn() const override { return sizeof(PpmtEntry); }
  Status check() const override;        // pdl_check.cc
  Status check_mount() const override;  // pdl_check.cc
  LpnLocation locate(Lpn lpn) const override;            // pdl_inspect.cc
  BlockInfo block_info(uint32_t block) const override;  // pdl_inspect.cc

 private:
  friend class PdlRecovery;  // mount: pdl_recovery.h
  PdlStore(Nand& nand, const StoreParams& params);

  // The committed <base, differential> of an lpn the open group changed.
  struct Refs {
    Ppa base = kNoPpa;
    Ppa diff = kNoPpa;
  };
  // The group's last base page, not yet programmed (ppmt.base == kPendingPpa for its lpn).
  struct Pending {
    bool held = false;
    Lpn lpn = 0;
    uint64_t seq = 0;
    std::vector<uint8_t> data;
  };

  // --- cost attribution (cost_ledger.h) ---
  FlashCost& bucket_of(Lpn lpn) { return ledger_.bucket_of(lpn); }

  // --- paged tables (pdl_tables.cc) ---
  // Table page loads made while it lives are not counted: an inspection (check, locate) is
  // no I/O of the store's.
  class UncountedReads {
   public:
    explicit UncountedReads(Nand& n) : n_(n) { n_.set_counting(false); }
    ~UncountedReads() { n_.set_counting(true); }
    UncountedReads(const UncountedReads&) = delete;
    UncountedReads& operator=(const UncountedReads&) = delete;

   private:
    Nand& n_;
  };
  // The first failed table page load (PagedTable::status()), or ok. (An assert on table
  // entries reads them first and asks this second: the read may load a page, and a load that
  // fails — the device gone at a power cut — is what makes the entries fill values.)
  Status tables_status() const;
  // `st`, unless a table page failed to load: then the store is poisoned with that error (as
  // by a device error: every later call returns it; reads never see the fill values a failed
  // load leaves) and it is returned.
  Status guard(Status st);
  // Fold the paged tables' sparse dirty pages (PagedTableBase::fold): where no reference
  // from ref() is held — at the end of each operation (guard) and between a replay's steps.
  void fold_tables() {
    ppmt_.fold();
    p2l_.fold();
    vdct_.fold();
  }

  // --- writing (pdl_store.cc) ---
  Status write_op(Lpn lpn, std::span<const uint8_t> page);
  Status trim_op(Lpn lpn);
  Status read_op(Lpn lpn, std::span<uint8_t> page);
  Status write_new_base(Lpn lpn, std::span<const uint8_t> page);
  Status install_base(Lpn lpn, Ppa q);  // the base page replaced: old base, differential go
  Status flush_write_buffer(bool commit = false);
  // flush_write_buffer's program and table updates, of `src` (the write buffer, or with NVM
  // the page of it being flushed); src is cleared once programmed.
  Status program_write_buffer(bool commit, WriteBuffer& src);
  // With NVM: the oldest records of the buffer that fill one page go to stage_.
  void stage_oldest_page();
  Status put_record(const RecordView& r);  // Case 1 / Case 2 placement into the buffer
  Status decrease_vdct(Ppa dp);
  Status base_becomes_stale(Ppa bp);
  Status apply_trim(Lpn lpn);
  bool trim_pending(Lpn lpn) const;  // a tombstone for lpn waits in the write buffer
  // Programs ppa's obsolete mark; *marked false if the program failed on a bad block (the
  // block is then retired later) or was not made: a store halted or poisoned earlier programs
  // no mark (the page stays a copy) and gets that status back, its caller's table update done.
  Status mark_obsolete(Ppa ppa, bool* marked);
  // Programs a page at head `h`'s next page; a program failure retires the block (later)
  // and the page is programmed at the next page instead.
  Status program_page(BlockManager::Head h, std::span<const uint8_t> data,
                      const SpareHeader& hdr, Ppa* out);
  Status read_checked(Ppa ppa, std::span<uint8_t> data, SpareHeader* hdr);
  Status find_differential(Lpn lpn, RecordView* r);
  Status read_page(Lpn lpn, std::span<uint8_t> page) override {  // Fig. 6
    return guard(read_op(lpn, page));
  }
  Status ensure_user_space(uint64_t pages);
  static constexpr uint32_t kProgramAttempts = 4;  // a page, then 3 more blocks

  // --- the open group (pdl_commit.cc) ---
  Status sync_op();
  Status abort_op();
  // Remember lpn's committed entry before the group first changes it.
  void touch(Lpn lpn);
  const Refs* committed_of(Lpn lpn) const {
    auto it = committed_.find(lpn);
    return it == committed_.end() ? nullptr : &it->second;
  }
  // Lpn's current base page `old` is replaced: stale unless it is still the committed one.
  Status drop_current_base(Lpn lpn, Ppa old);
  // Point lpn's current differential at `q` (kNoPpa: none), keeping vdct's count.
  Status set_current_diff(Lpn lpn, Ppa q);
  // A page the open group programmed: it holds the group's data (seq above committed_seq_).
  void note_group_page(Ppa ppa);
  bool group_page(Ppa ppa) const { return group_page_.count(ppa) != 0; }
  Status program_pending(bool commit);
  // A commit page without data whose record is `seq` (a commit, or GC restating the newest).
  Status program_marker(BlockManager::Head h, uint64_t seq);
  void set_commit_page(Ppa ppa);
  bool referenced(Ppa ppa) const;  // a current or committed base page, or vdct > 0
  void note_void_block(uint32_t block);
  Status purge_void_blocks();
  void end_group();  // clear the group's bookkeeping (after commit or abort)
  // Pages a sync may have to program now: the pending base page, the write buffer, or a
  // marker (kPerPage: the write buffer). Kept free for user programs, so sync() always can.
  uint64_t commit_pages() const;
  // Pages a write may program itself: the previous pending base page or a Case 2 flush.
  static constexpr uint64_t kWritePages = 1;
  static constexpr Ppa kPendingPpa = kNoPpa - 1;

  // --- the write buffer in NVM (pdl_nvm.cc) ---
  // The records changed since the last commit, then a commit entry for every seq handed out
  // (a fresh log in the other half when they do not fit). The buffer is then committed.
  Status nvm_commit();
  Status nvm_apply_trims();  // after a commit: committed tombstones take effect
  // A flush's alternative: if the buffer's oldest record is larger than an eighth of a page, its
  // page (base + record) is written as a new base page instead (*merged), resetting the lpn's
  // differential (design.md §16: what keeps cumulative differentials from dominating).
  Status nvm_merge_oldest(bool* merged);
  // A buffered record of lpn is read: the NVM read its committed copy costs (none if it
  // changed since the last commit: then it is in RAM only).
  Status nvm_charge_read(Lpn lpn);
  // Mount: the records recovery put back into the buffer are the committed buffer.
  void nvm_mounted(uint64_t commit_seq);
  static uint32_t buffer_bytes(const StoreParams& params, const Geometry& g);

  // --- garbage collection (pdl_gc.cc) ---
  // Collect one victim: `victim`, or the greedy choice if negative.
  Status gc_once(int64_t victim = -1);
  // Collect and retire the blocks a program failed in (pdl_store.cc).
  Status collect_pending(bool must);
  // Static wear levelling (block_manager.h): at most one move of a young block's data, counted
  // in the wl_* stats instead of the gc_* ones. Skipped (not an error) without room for it.
  Status wear_level();
  int64_t merge_victim();
  Status gc_flush_compaction();
  Status gc_merge(const RecordView& r, Ppa dp);

  // The paged tables (ppmt.h, paged_table.h): per lpn, and per physical page.
  PpmtTable ppmt_;
  P2lTable p2l_;
  VdctTable vdct_;
  BlockManager blocks_;
  WriteBuffer dwb_;           // the differential write buffer
  WriteBuffer gc_buffer_;     // differential page under construction by GC compaction
  std::vector<Ppa> gc_sources_;  // the victim page each gc_buffer_ record came from
  bool gc_buffer_group_ = false;  // gc_buffer_ holds a record of the open group
  uint64_t next_seq_ = 1;
  int64_t gc_victim_ = -1;    // block being collected (its pages are not marked obsolete)
  uint64_t damaged_pages_ = 0;  // MountReport::damaged_pages of the mount that made this store
  uint64_t retired_at_reset_ = 0;
  uint64_t scrubbed_at_reset_ = 0;
  uint64_t table_loads_at_reset_ = 0, table_evictions_at_reset_ = 0, table_folds_at_reset_ = 0;
  std::vector<uint8_t> scratch_base_, scratch_diff_, scratch_runs_, scratch_spare_;
  std::vector<uint8_t> older_;  // write(): the lpn's replaced buffered record, kept until the
                                // new one is in
  std::vector<Lpn> gc_orphans_;  // lpns whose last copy on flash the current GC erases

  // Atomic groups (pdl_commit.cc).
  bool programmed_ = false;      // a page was programmed since mount (commit_ppa_ unpinned)
  uint64_t committed_seq_ = 0;   // every seq <= this on flash is committed
  Ppa commit_ppa_ = kNoPpa;      // the page holding the newest commit record (pinned; groups)
  Ppa commit_candidate_ = kNoPpa;  // kPerPage: that page as mount found it (set_commit_mode)
  std::unordered_map<Lpn, Refs> committed_;
  std::unordered_set<Ppa> group_page_;  // programmed by the open group, with its data
  std::vector<Ppa> group_pages_;
  std::vector<uint8_t> void_block_;  // per block: holds pages or records of a discarded group
  uint32_t void_blocks_ = 0;
  Pending pending_;

  // The write buffer in NVM (StoreParams::nvm_bytes > 0; else nvm_ is null). dwb_ then holds
  // several pages' worth of records across commits; committed_dwb_ is dwb_ as of the last
  // commit (what the NVM log holds; abort() returns to it); nvm_changed_ the lpns whose record
  // was put since. Invariant: every lpn whose record a flush takes to flash during a group is
  // touched (committed_), so abort() restores its entry.
  std::unique_ptr<NvmLog> nvm_;
  WriteBuffer committed_dwb_;
  WriteBuffer stage_;
  std::unordered_set<Lpn> nvm_changed_;
  uint64_t nvm_commit_seq_ = 0;
};

}  // namespace pdl
