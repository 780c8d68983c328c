// ipl_store.h — the in-page logging engine (IPL, [IPL]) and in-place update (IPU) as its
// log-less special case.
//
// Static mapping (both methods): logical page lpn belongs to logical block lbn = lpn / D and
// lives at data page slot = lpn % D of the erase block currently holding lbn, where D = the
// block's data pages (pages_per_block - log pages). IPL's remaining pages form the block's log
// region of 512-byte log sectors (ipl_sector.h).
//
//   write(lpn)   slot still erased → program the data page there (no erase: a first write).
//                IPL: otherwise the write's log — one record per range noted through
//                note_update (the in-DBMS IPL of the paper), else the difference between the new
//                page and its previous version, which must be read for that (the DBMS-independent
//                path, docs/design.md §10) — is cut into in-memory log sectors of page_size / 16
//                bytes ([PDL] footnote 14), each programmed into the next free log sector of
//                the block; if the region lacks room, the block is merged ([IPL] Alg. 1) with
//                the new version of the page.
//                IPU: otherwise the block is merged with the new page: read its other pages,
//                program them all, erase — [PDL] §3's in-place update (see below).
//   read(lpn)    the data page, then, if the page has log records, every used log page of its
//                block ([PDL] §3: "IPL reads the original page and only the log pages in the
//                same block"), applying complete writes in sequence order.
//   trim(lpn)    in RAM until sync(); sync() writes one unmap sector per logical block with
//                trims (or merges the block without them if its log region is full; IPU always
//                merges).
//   merge(lbn)   Alg. 1: read the block's live data pages and used log pages, program each live
//                page's current version into an erased block (all at the same sequence number,
//                each page's spare saying how many pages the merge wrote), then erase the old
//                block. A merge that writes no page programs a marker page instead, so that the
//                new, empty version always outranks the old block.
//
// In-place update, crash-safe: [PDL] §3's IPU reads the block's other pages, erases the block
// and programs every page back. A cut after the erase would lose pages that were synced long
// ago, so IPU here programs the pages into an erased block and then erases the old one: the
// same reads, programs and erase per update, only the physical address changes.
//
// Crash model: a data page, a complete write's log sectors and a complete merge are durable once
// programmed; recovery (ipl_recovery.cc) reads every page, groups blocks by logical block, takes
// the newest whose merge is complete, and rebuilds the slots and log state. Writes are
// synchronous (the page "evicted" to the store is logged at once, as in [IPL]), so sync()
// only makes pending trims durable.
//
// Bad blocks: factory-marked blocks are skipped at format and mount. A block whose erase fails
// (the erase limit included) is retired (marked bad) and another taken. A failed program in a
// logical block's erase block (a first write, or a log sector) leaves the write undone and
// merges the logical block, with the write, into another block; the failing block is then
// retired instead of erased. A failed program into a merge's new block retires that block and
// redoes the merge elsewhere. With too few good blocks left, writes fail with kFull and every
// page stays readable.
//
// Invariants (check()): lbn → block and block → lbn are inverse; a block is owned, free, bad,
// or reserved; a mapped lpn's slot is not erased; a trim-pending lpn is unmapped.
// Thread-safety: none.
#pragma once

#include <deque>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flash/ipl/ipl_sector.h"
#include "flash/store/cost_ledger.h"
#include "flash/store/page_store.h"
#include "flash/store/spare.h"

namespace pdl {

class IplStore final : public PageStore {
 public:
  // REQUIRES: params resolved for nand's geometry, method ipu or ipl.
  static Status format(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out);
  static Status mount(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out,
                      MountReport* report);  // ipl_recovery.cc

  Status read(Lpn lpn, std::span<uint8_t> page) override;
  Status write(Lpn lpn, std::span<const uint8_t> page) override;
  Status trim(Lpn lpn) override;
  Status sync() override;
  void note_update(Lpn lpn, uint32_t offset, uint32_t len) override;

  bool is_mapped(Lpn lpn) const override { return lpn < lpns_.size() && lpns_[lpn].mapped; }
  uint32_t page_size() const override { return geo_.page_data; }
  uint32_t logical_pages() const override { return uint32_t(lpns_.size()); }
  const StoreParams& params() const override { return params_; }
  const StoreStats& stats() const override {
    stats_.bad_blocks = bad_count_;
    return stats_;
  }
  const CostBreakdown& costs() const override { return ledger_.costs(); }
  void set_classifier(LpnClassifier c) override { ledger_.set_classifier(std::move(c)); }
  void reset_stats() override;
  Status peek(Lpn lpn, std::span<uint8_t> page) override;
  Nand& nand() override { return nand_; }
  uint32_t free_blocks() const override { return uint32_t(free_.size()); }
  size_t mapping_bytes_per_lpn() const override;
  Status check() const override;                        // ipl_inspect.cc
  LpnLocation locate(Lpn lpn) const override;            // ipl_inspect.cc
  BlockInfo block_info(uint32_t block) const override;  // ipl_inspect.cc

 private:
  IplStore(Nand& nand, const StoreParams& params);

  static constexpr uint32_t kNoBlock = 0xFFFFFFFFu;
  enum class Slot : uint8_t {
    kErased,   // never programmed since the block was erased: a write programs it directly
    kData,     // a valid data page (direct or merged)
    kGarbage,  // programmed but not a page of this lpn: torn program, or the empty-merge marker
  };
  struct LpnState {
    Slot slot = Slot::kErased;
    bool mapped = false;        // the page has a value (reads return it)
    bool has_log = false;       // complete log writes for this slot exist in the block
    bool trim_pending = false;  // trimmed in RAM; the flash still has the old value until sync
  };
  struct LBlock {
    uint32_t block = kNoBlock;  // erase block holding this logical block
    uint32_t used_sectors = 0;  // log sectors used (programmed or torn), in order
    // Sectors below used_sectors that were not valid at mount (torn, or left erased by a cut):
    // every other used sector must decode, so a read that cannot decode one is retried and
    // then fails instead of silently skipping a write (a miscorrected read; reread.h).
    std::vector<uint32_t> garbage;
  };

  uint32_t lbn_of(Lpn lpn) const { return lpn / dpb_; }
  uint32_t slot_of(Lpn lpn) const { return lpn % dpb_; }
  Lpn first_lpn(uint32_t lbn) const { return lbn * dpb_; }
  uint32_t lpns_in(uint32_t lbn) const;  // dpb_, or fewer for the last logical block
  Ppa data_ppa(uint32_t block, uint32_t slot) const { return block * geo_.pages_per_block + slot; }
  Ppa log_ppa(uint32_t block, uint32_t sector) const {
    return block * geo_.pages_per_block + dpb_ + sector / sectors_per_page_;
  }
  uint32_t log_sectors_per_block() const { return (geo_.pages_per_block - dpb_) * sectors_per_page_; }
  uint32_t used_log_pages(const LBlock& b) const {
    return (b.used_sectors + sectors_per_page_ - 1) / sectors_per_page_;
  }

  // --- ipl_store.cc ---
  Status check_args(Lpn lpn, size_t size) const;
  Status read_page(Lpn lpn, std::span<uint8_t> page);
  Status read_data(uint32_t block, uint32_t slot, Lpn lpn, std::span<uint8_t> page);
  Status program_data(uint32_t block, uint32_t slot, Lpn lpn, std::span<const uint8_t> page,
                      uint64_t seq, uint32_t merge_count, PageType type = PageType::kIplData);
  Status write_log(Lpn lpn, std::span<const uint8_t> page);
  // One write of k sectors: splitter_'s payloads, or `raw` as a single sector's payload.
  Status program_sectors(uint32_t lbn, uint16_t slot, uint8_t flags, std::span<const uint8_t> raw);
  Status flush_trims(uint32_t lbn);
  // A program in lbn's block failed: merge lbn (with `lpn`'s new version, if any) elsewhere;
  // the merge retires the failing block.
  Status relocate(uint32_t lbn, Lpn lpn, std::span<const uint8_t> page);
  // Take `block` out of service: marked bad on the chip (ipl_merge.cc).
  Status retire(uint32_t block);
  void drop_hints(Lpn lpn);
  Status fail(Status st);

  // --- ipl_merge.cc ---
  Status read_log_pages(uint32_t lbn);  // used log pages of lbn's block into log_buf_
  // Applies the complete log writes in log_buf_ for `slot` to `page`; *mapped follows reset and
  // unmap records. No flash operation.
  Status replay(uint32_t lbn, uint32_t slot, std::span<uint8_t> page, bool* mapped) const;
  Status allocate_block(uint32_t* block);
  // Alg. 1. `lpn`/`page`: a new version to merge in (lpn == kNoLpn: none).
  Status merge(uint32_t lbn, Lpn lpn, std::span<const uint8_t> page);
  // Scrub (reread.h): a read of `block` needed most of the ECC — remember it; at the next
  // write or sync its logical block is merged into a fresh block and it is erased.
  void note_read(uint32_t block);
  Status scrub_pending();
  void scrub_done(uint32_t block, bool erased);

  static constexpr Lpn kNoLpn = 0xFFFFFFFFu;
  static constexpr uint32_t kProgramAttempts = 4;  // merge targets tried before giving up

  Nand& nand_;
  const Geometry geo_;
  const StoreParams params_;
  const uint32_t dpb_;               // data pages per block
  const uint32_t sectors_per_page_;  // log sectors per log page
  const size_t log_buffer_;          // in-memory log sector payload: page / 16, capped
  std::vector<LpnState> lpns_;
  std::vector<LBlock> lblocks_;
  std::vector<uint32_t> owner_;      // block -> lbn, or kNoBlock
  std::vector<bool> erased_;         // block known erased (format, erase) — no erase before use
  std::vector<bool> bad_;            // block out of service (marked bad)
  std::vector<bool> retiring_;       // a program in the block failed: retire, never erase
  std::vector<bool> scrubbing_;      // a read of the block needed most of the ECC
  uint32_t scrubbing_n_ = 0;
  uint32_t bad_count_ = 0;
  std::deque<uint32_t> free_;        // free blocks, FIFO
  std::set<uint32_t> trims_;         // logical blocks with trim-pending lpns
  std::unordered_map<Lpn, std::vector<std::pair<uint32_t, uint32_t>>> hints_;  // note_update
  std::set<Lpn> no_hints_;           // lpns whose noted ranges overflowed: diff at their write
  uint64_t next_seq_ = 1;
  Status poisoned_;
  mutable StoreStats stats_;  // bad_blocks is filled in by stats()
  CostLedger ledger_;
  LogSplitter splitter_;
  std::vector<uint8_t> page_buf_, prev_buf_, log_buf_, sector_buf_, spare_buf_, runs_buf_;
  std::vector<uint8_t> merge_buf_;   // a logical block's pages during a merge
  std::vector<bool> merge_live_;     // which of them the merge keeps
};

}  // namespace pdl
