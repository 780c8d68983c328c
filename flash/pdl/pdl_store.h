// pdl_store.h — the PDL engine (seed 000 §4), and OPU as its page-based special case.
//
// Where the paper's figures live:
//   Fig. 4 PDL_Writing ............ PdlStore::write             (pdl_store.cc)
//   Fig. 5 writingDifferentialWriteBuffer / writingNewBasePage / decreaseValidDifferentialCount
//          ........................ flush_write_buffer / write_new_base / decrease_vdct
//   Fig. 6 PDL_Reading ............ PdlStore::read_page         (pdl_store.cc; read, peek)
//   Fig. 7 PDL_RecoveringfromCrash  PdlStore::mount             (pdl_recovery.cc)
//   §4.1 garbage collection ....... gc_once, gc_merge           (pdl_gc.cc)
// Also: PdlStore::check (pdl_check.cc) recomputes the tables; locate / block_info
// (pdl_inspect.cc) expose the ppmt entry and block states to tools, from RAM only.
//
// OPU (out-place update with page-level mapping) is what PDL becomes when every write takes
// Case 3 (seed 000 §4.1: "In this special case, PDL becomes the same as the page-based
// method"), minus the base-page read that only differentials need. Method::kOpu runs exactly
// that path, so both methods share allocation, GC, obsolete marking and recovery, and their
// comparison differs only in what the paper says differs. Trim tombstones use the write
// buffer in both methods.
//
// Crash model: a base page or differential page is durable once programmed; the write buffer
// is lost. Sequence numbers order everything (GC copies keep them), so recovery picks the
// newest base, and a differential only if newer than that base.
//
// Cost attribution (cost.h, cost_ledger.h): a PageStore call charges its own work to the lpn's
// class; ensure_user_space charges each gc_once to `gc`; flush_write_buffer splits its page's work
// over the classes of the records it holds; opening a block that mount left unclean charges that
// erase to `other`. So the buckets always sum to the counters since reset_stats().
//
// Invariants (checked by check(), by the tests through the PageStore API, and by asserts):
//   * ppmt[l].base != kNoPpa  =>  p2l[base] == l and the page is programmed;
//   * vdct[p] == number of lpns with ppmt.diff == p; a block's valid count == its current base
//     pages + its differential pages with vdct > 0;
//   * ppmt[l].in_dwb  <=>  the write buffer has a record for l.
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
#include <utility>
#include <vector>

#include "flash/pdl/block_manager.h"
#include "flash/pdl/ppmt.h"
#include "flash/pdl/write_buffer.h"
#include "flash/store/cost_ledger.h"
#include "flash/store/page_store.h"
#include "flash/store/spare.h"

namespace pdl {

class PdlStore final : public PageStore {
 public:
  // REQUIRES: params resolved for nand's geometry; the superblock is handled by the caller.
  static Status format(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out);
  static Status mount(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out,
                      MountReport* report);

  Status read(Lpn lpn, std::span<uint8_t> page) override;
  Status write(Lpn lpn, std::span<const uint8_t> page) override;
  Status trim(Lpn lpn) override;
  Status sync() override;

  bool is_mapped(Lpn lpn) const override {
    return lpn < ppmt_.size() && ppmt_[lpn].base != kNoPpa && !trim_pending(lpn);
  }
  uint32_t page_size() const override { return geo_.page_data; }
  uint32_t logical_pages() const override { return uint32_t(ppmt_.size()); }
  const StoreParams& params() const override { return params_; }
  const StoreStats& stats() const override {
    stats_.bad_blocks = blocks_.bad_blocks();
    stats_.blocks_retired = blocks_.retired() - retired_at_reset_;
    stats_.blocks_scrubbed = blocks_.scrubbed() - scrubbed_at_reset_;
    return stats_;
  }
  const CostBreakdown& costs() const override { return ledger_.costs(); }
  void set_classifier(LpnClassifier classifier) override {
    ledger_.set_classifier(std::move(classifier));
  }
  void reset_stats() override;
  Status peek(Lpn lpn, std::span<uint8_t> page) override;
  Nand& nand() override { return nand_; }
  uint32_t free_blocks() const override { return blocks_.free_blocks(); }
  size_t mapping_bytes_per_lpn() const override { return sizeof(PpmtEntry); }
  Status check() const override;  // pdl_check.cc
  LpnLocation locate(Lpn lpn) const override;            // pdl_inspect.cc
  BlockInfo block_info(uint32_t block) const override;  // pdl_inspect.cc

 private:
  PdlStore(Nand& nand, const StoreParams& params);

  // --- cost attribution (cost_ledger.h) ---
  FlashCost& bucket_of(Lpn lpn) { return ledger_.bucket_of(lpn); }

  // --- writing (pdl_store.cc) ---
  Status write_new_base(Lpn lpn, std::span<const uint8_t> page);
  Status flush_write_buffer();
  Status program_write_buffer();  // flush_write_buffer's page program and table updates
  Status put_record(const RecordView& r);  // Case 1 / Case 2 placement into the buffer
  Status decrease_vdct(Ppa dp);
  Status base_becomes_stale(Ppa bp);
  Status apply_trim(Lpn lpn);
  bool trim_pending(Lpn lpn) const;  // a tombstone for lpn waits in the write buffer
  // Programs ppa's obsolete mark; *marked false if the program failed on a bad block (the
  // block is then retired later).
  Status mark_obsolete(Ppa ppa, bool* marked);
  // Programs a page at head `h`'s next page; a program failure retires the block (later)
  // and the page is programmed at the next page instead.
  Status program_page(BlockManager::Head h, std::span<const uint8_t> data,
                      const SpareHeader& hdr, Ppa* out);
  Status read_checked(Ppa ppa, std::span<uint8_t> data, SpareHeader* hdr);
  Status find_differential(Lpn lpn, RecordView* r);
  Status check_read(Lpn lpn, std::span<const uint8_t> page) const;
  Status read_page(Lpn lpn, std::span<uint8_t> page);  // Fig. 6, shared by read and peek
  Status ensure_user_space(uint64_t pages);
  Status check(Lpn lpn) const;
  Status fail(Status st);  // poison the store with a device error
  static constexpr uint32_t kProgramAttempts = 4;  // a page, then 3 more blocks

  // --- garbage collection (pdl_gc.cc) ---
  // Collect one victim: `victim`, or the greedy choice if negative.
  Status gc_once(int64_t victim = -1);
  // Collect and retire the blocks a program failed in (pdl_store.cc).
  Status collect_pending(bool must);
  int64_t merge_victim();
  Status gc_flush_compaction();
  Status gc_merge(const RecordView& r, Ppa dp);

  Nand& nand_;
  const Geometry geo_;
  const StoreParams params_;
  std::vector<PpmtEntry> ppmt_;
  std::vector<uint32_t> p2l_;
  std::vector<uint16_t> vdct_;
  BlockManager blocks_;
  WriteBuffer dwb_;           // the differential write buffer
  WriteBuffer gc_buffer_;     // differential page under construction by GC compaction
  uint64_t next_seq_ = 1;
  int64_t gc_victim_ = -1;    // block being collected (its pages are not marked obsolete)
  Status poisoned_;
  mutable StoreStats stats_;  // the bad-block figures are filled in by stats()
  uint64_t retired_at_reset_ = 0;
  uint64_t scrubbed_at_reset_ = 0;
  CostLedger ledger_;
  std::vector<uint8_t> scratch_base_, scratch_diff_, scratch_runs_, scratch_spare_;
  std::vector<Lpn> gc_orphans_;  // lpns whose last copy on flash the current GC erases
};

}  // namespace pdl
