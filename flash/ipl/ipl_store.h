// ipl_store.h — the in-page logging engine (IPL, [IPL]) and in-place update (IPU) as its
// log-less special case.
//
// Static mapping (both methods): logical page lpn belongs to logical block lbn = lpn / D and
// lives at data page slot = lpn % D of the erase block currently holding lbn, where D = the
// block's data pages (pages_per_block - log pages). IPL's remaining pages form the block's log
// region of log sectors (ipl_sector.h) of the store's log_sector bytes (512 unless chosen).
//
//   write(lpn)   slot still erased → program the data page there (no erase: a first write).
//                IPL: otherwise the write's log — one record per range noted through
//                note_update (the in-DBMS IPL of the paper), else the difference between the new
//                page and its previous version, which must be read for that (the DBMS-independent
//                path, docs/design.md §10) — is cut into in-memory log sectors of page_size / 16
//                bytes ([PDL] footnote 14; at most a log sector's payload, log_sector - 28),
//                each programmed into the next free log sector of
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
// Crash model (CommitMode::kPerPage): a data page, a complete write's log sectors and a complete
// merge are durable once programmed; recovery (ipl_recovery.cc) reads every page, groups
// blocks by logical block, takes the newest whose merge is complete, and rebuilds the slots
// and log state (after a power cut on a chip with a checkpoint: the checkpoint's tables plus
// only the blocks declared since it and, with NVM, the sectors logged since into the areas of
// its blocks, ipl_replay.cc). Writes are synchronous (the page
// "evicted" to the store is logged at once, as in [IPL]), so sync() only makes pending trims
// durable. In a store of superblock format 2 every page and sector programmed per page
// carries a commit flag covering itself.
//
// Atomic groups (CommitMode::kGroup, IPL of format 2; ipl_commit.cc) follow [IPL] §5: the
// writes and trims between two syncs are one transaction. Its log sectors and first-write data
// pages are programmed as they come (a page's eviction), and sync() commits by appending one
// sector to the commit log — [IPL] §5.1's transaction log, erase blocks of its own — whose seq
// says "every seq up to mine is committed". Recovery ignores every record and first write
// newer than the last commit record (void), so UNDO is implicit, as the paper has it. A merge
// during a group is the paper's *selective merge*: the new block's data pages get the
// committed versions, and the group's changes are carried over as log records (one per
// changed page: its difference from the committed version), void unless the group commits;
// the old block is erased at once. When those records do not fit the new log region, the merge
// is a *shadow merge* instead ([IPL] §5.3's overflow problem, solved without an overflow area):
// the data pages get the current versions flagged as group pages, and the old block is kept
// until the commit (kept_). Void items must never be covered by a later commit record: abort()
// and the first program after a mount merge (purge) the logical blocks holding them, and erase
// the free blocks holding them, first.
//
// Bad blocks: factory-marked blocks are skipped at format and mount. A block whose erase fails
// (the erase limit included) is retired (marked bad) and another taken. A failed program in a
// logical block's erase block (a first write, or a log sector) leaves the write undone and
// merges the logical block, with the write, into another block; the failing block is then
// retired instead of erased. A failed program into a merge's new block retires that block and
// redoes the merge elsewhere. With too few good blocks left, writes fail with kFull and every
// page stays readable.
//
// IPL with NVM ([IPL-PCRAM] §3.2; StoreParams::nvm_bytes > 0; ipl_nvm.h has the layout): every
// page of an erase block is a data page; the block's log area is `log_region` bytes of NVM at a
// place fixed by its block number, holding log sectors of log_sector bytes (128 by default);
// a log flush is one nvm_write of one whole sector into the next free slot — no flash program,
// no NOP limit. Reads take the data page from flash and the log sectors from NVM. A merge runs
// when the area is full, as on flash. Commit records (atomic groups) go to the NVM commit
// area's two alternating slots instead of a flash commit log. Everything else — merges,
// selective and shadow merges, purge, bad blocks — is the flash-only engine's.
//
// Invariants (check()): lbn → block and block → lbn are inverse; a block is owned, free, bad,
// or reserved; a mapped lpn's slot is not erased; a trim-pending lpn is unmapped.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flash/ipl/ipl_compare.h"
#include "flash/ipl/ipl_sector.h"
#include "flash/store/spare.h"
#include "flash/store/store_base.h"

namespace pdl {

class IplStore final : public StoreBase {
 public:
  // Fill the defaults of IPU or IPL parameters for `g` and check their ranges (ipl_params.cc).
  // REQUIRES: params->check_method() passed, method ipu or ipl.
  static Status resolve_params(StoreParams* params, const Geometry& g);
  // REQUIRES: params resolved for nand's geometry, method ipu or ipl.
  static Status format(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out);
  // `legacy`: superblock format 1 (no commit records: every page counts).
  static Status mount(Nand& nand, const StoreParams& params, bool legacy,
                      std::unique_ptr<PageStore>* out, MountReport* report);  // ipl_recovery.cc

  Status write(Lpn lpn, std::span<const uint8_t> page) override;
  Status trim(Lpn lpn) override;
  Status sync() override;
  void note_update(Lpn lpn, uint32_t offset, uint32_t len) override;

  // Atomic groups (ipl_commit.cc): IPL stores of format 2; IPU stays per-page.
  Status set_commit_mode(CommitMode mode) override;
  Status abort() override;
  bool dirty() const override { return groups_ && (group_dirty_ || !trims_.empty()); }
  uint64_t uncommitted_pages() const override { return groups_ ? group_programs_ : 0; }
  Status upgrade_format() override;

  bool is_mapped(Lpn lpn) const override { return lpn < lpns_.size() && lpns_[lpn].mapped; }
  uint32_t logical_pages() const override { return uint32_t(lpns_.size()); }
  const StoreStats& stats() const override {
    stats_.bad_blocks = bad_count_;
    return stats_;
  }
  uint32_t free_blocks() const override { return uint32_t(free_.size()); }
  size_t mapping_bytes_per_lpn() const override;
  // Checkpointed tables (ipl_tables.cc; docs/format.md §13.2): everything a scan mount
  // rebuilds, saved when synced, and the inverse, hostile-safe (flash/image/mount_tables.h).
  Status save_tables(TableWriter& w) const override;
  uint64_t table_bytes() const override;
  // With NVM the commit area is checked against the tables — unless `replaying` (the replay
  // after a power cut reads it as the scan does).
  static Status mount_tables(Nand& nand, const StoreParams& params, CommitMode mode,
                             TableReader& r, std::unique_ptr<PageStore>* out,
                             bool replaying = false);
  // After a power cut (docs/design.md §17): the store of the checkpoint's tables `r`, then the
  // erase blocks `declared` since re-derived from flash by the scan's own per-block code and
  // rules (ipl_replay.cc); with NVM, the log sectors written since into the areas of the
  // checkpoint's blocks are read back from the NVM (no flash read: those blocks did not change).
  static Status replay(Nand& nand, const StoreParams& params, CommitMode mode, TableReader& r,
                       const std::vector<uint32_t>& declared, std::unique_ptr<PageStore>* out,
                       MountReport* report);
  Status check() const override;                        // ipl_inspect.cc
  LpnLocation locate(Lpn lpn) const override;            // ipl_inspect.cc
  BlockInfo block_info(uint32_t block) const override;  // ipl_inspect.cc

 private:
  friend class IplRecovery;  // mount: ipl_recovery.h
  friend Status compare_ipl_tables(const IplStore& mounted, const IplStore& scan,
                                   IplTablesFrom from);  // ipl_compare.h
  IplStore(Nand& nand, const StoreParams& params);

  static constexpr uint32_t kNoBlock = 0xFFFFFFFFu;
  // owner_ of a block that is no logical block's current one but is not free either.
  static constexpr uint32_t kCommitOwner = 0xFFFFFFFEu;  // the commit log's current block
  static constexpr uint32_t kKeptOwner = 0xFFFFFFFDu;    // a committed block kept (kept_)
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
  uint32_t log_sectors_per_block() const { return log_sectors_; }
  // Flash log pages in use (none with NVM: the log sectors are in NVM).
  uint32_t used_log_pages(const LBlock& b) const {
    return nvm_ ? 0 : (b.used_sectors + sectors_per_page_ - 1) / sectors_per_page_;
  }
  // NVM offset of sector slot `sector` of `block`'s log area (nvm_ only).
  uint64_t nvm_sector_off(uint32_t block, uint32_t sector) const;

  // --- ipl_store.cc ---
  Status read_page(Lpn lpn, std::span<uint8_t> page) override;
  // The data page at (block, slot); *hdr (if given) gets its spare header.
  Status read_data(uint32_t block, uint32_t slot, Lpn lpn, std::span<uint8_t> page,
                   SpareHeader* hdr = nullptr);
  // `flag`: kSpareFlagCommit (per-page programs of format 2), kSpareFlagGroup (a shadow merge's
  // pages), or 0.
  Status program_data(uint32_t block, uint32_t slot, Lpn lpn, std::span<const uint8_t> page,
                      uint64_t seq, uint32_t merge_count, PageType type = PageType::kIplData,
                      uint8_t flag = 0);
  // The commit flag a per-page program carries: set in format 2, not in format 1 or in groups.
  bool self_commit() const { return !legacy_ && !groups_; }
  Status write_log(Lpn lpn, std::span<const uint8_t> page);
  // One write of k sectors into lbn's block: splitter_'s payloads, or `raw` as a single
  // sector's payload.
  Status program_sectors(uint32_t lbn, uint16_t slot, uint8_t flags, std::span<const uint8_t> raw);
  // The same into `block` from sector *used on (advanced), `split`'s payloads (or `raw`), with
  // a fresh seq. kBadBlock: the block is marked retiring and *used covers the failed sector.
  Status program_write(uint32_t block, uint32_t* used, uint32_t lbn, uint16_t slot,
                       uint8_t flags, const LogSplitter& split, std::span<const uint8_t> raw);
  Status flush_trims(uint32_t lbn);
  // A program in lbn's block failed: merge lbn (with `lpn`'s new version, if any) elsewhere;
  // the merge retires the failing block.
  Status relocate(uint32_t lbn, Lpn lpn, std::span<const uint8_t> page);
  // Take `block` out of service: marked bad on the chip (ipl_merge.cc).
  Status retire(uint32_t block);
  void drop_hints(Lpn lpn);

  // --- ipl_merge.cc ---
  Status read_log_pages(uint32_t lbn);  // used log pages of lbn's block into log_buf_
  // The same for any block with `used` sectors of which `garbage` were invalid at mount.
  Status read_log_pages_of(uint32_t block, uint32_t used, const std::vector<uint32_t>& garbage);
  // The same from block's NVM log area (ipl_nvm_log.cc): `garbage` slots read as erased.
  Status read_nvm_log(uint32_t block, uint32_t used, const std::vector<uint32_t>& garbage);
  // One log sector (sector_buf_) into slot `sector` of block's NVM log area.
  Status write_nvm_sector(uint32_t block, uint32_t sector);
  // The commit record `seq` into the NVM commit area's next slot.
  Status write_nvm_commit(uint64_t seq);
  // check()'s NVM part: every used slot of every current block decodes and names its block.
  Status check_nvm() const;
  // Format: the store's NVM zeroed (no sector or commit record of an earlier store counts).
  Status clear_nvm();
  // Applies the complete log writes in log_buf_ for `slot` to `page`; *mapped follows reset and
  // unmap records. Void writes (void_seq) are skipped; with `committed_only`, so are the open
  // group's. No flash operation.
  Status replay(uint32_t lbn, uint32_t slot, std::span<uint8_t> page, bool* mapped) const;
  Status replay_used(uint32_t lbn, uint32_t used, uint32_t slot, std::span<uint8_t> page,
                     bool* mapped, bool committed_only) const;
  Status allocate_block(uint32_t* block);
  // Erase `block` and queue it free, or retire it (a program failed there, or its erase fails).
  Status release_block(uint32_t block);
  // Alg. 1. `lpn`/`page`: a new version to merge in (lpn == kNoLpn: none). With atomic groups
  // the selective or shadow merge (ipl_commit.cc).
  Status merge(uint32_t lbn, Lpn lpn, std::span<const uint8_t> page);
  // The current version of every page of lbn (`lpn`'s new one if given) into merge_buf_ /
  // merge_live_; returns the live count.
  Status collect_current(uint32_t lbn, Lpn lpn, std::span<const uint8_t> page, uint32_t* live);
  // Program the `live` pages of `pages` (slot s at s * page size) into an erased block, all with
  // one fresh seq and the page count (a marker page if none is live), flag as program_data;
  // then `after(nb)` (more programs into the new block). A block failing a program is retired
  // and everything redone in the next one.
  Status program_merge(uint32_t lbn, std::span<const uint8_t> pages,
                       const std::vector<bool>& live, uint8_t flag,
                       const std::function<Status(uint32_t)>& after, uint32_t* nb);
  // lbn now lives in `nb`: `data` says which slots hold a data page, `mapped` which pages have
  // a value, `logged` which have log records; `used` log sectors.
  void install_merge(uint32_t lbn, uint32_t nb, const std::vector<bool>& data,
                     const std::vector<bool>& mapped, const std::vector<bool>& logged,
                     uint32_t used);
  // Scrub (reread.h): a read of `block` needed most of the ECC — remember it; at the next
  // write or sync its logical block is merged into a fresh block and it is erased.
  void note_read(uint32_t block);
  Status scrub_pending();
  // Static wear levelling (ipl_merge.cc): if the most-worn free block has endured
  // params_.wear_level erases more than the least-worn block holding a logical block, that
  // logical block is merged into the most-worn free block (as a scrub merges), at most once per
  // write and only after an erase since the last look. Counted in wl_*, not merges.
  Status wear_level();
  void scrub_done(uint32_t block, bool erased);

  // --- ipl_commit.cc: atomic groups ---
  // A seq the last crash or abort left uncommitted (never valid again).
  bool void_seq(uint64_t seq) const { return seq > committed_seq_ && seq < group_start_; }
  // The open group changes lbn.
  void touch(uint32_t lbn);
  uint32_t usable_blocks() const;  // data blocks not bad
  Status merge_group(uint32_t lbn, Lpn lpn, std::span<const uint8_t> page);
  // The committed version of every page of lbn into commit_buf_ / commit_live_ (from its kept
  // block if a shadow merge holds its place).
  Status collect_committed(uint32_t lbn);
  // Append a commit record with `seq` to the commit log.
  Status append_commit(uint64_t seq);
  // Before the first program after a mount or an abort: no void item may stay on flash.
  Status purge();
  // lbn's page states from its block's committed items (after an abort).
  Status rebuild(uint32_t lbn);
  Status abort_group();  // abort()'s work
  Status commit_group();

  static constexpr Lpn kNoLpn = 0xFFFFFFFFu;
  static constexpr uint32_t kProgramAttempts = 4;  // merge targets tried before giving up

  const bool nvm_;                   // the log areas are in NVM ([IPL-PCRAM])
  const uint32_t dpb_;               // data pages per block
  const uint32_t log_sector_;        // bytes of a log sector (params.log_sector; 0 = kLogSector)
  const uint32_t sectors_per_page_;  // log sectors per log page
  const uint32_t log_sectors_;       // log sectors per block (flash log pages or NVM area)
  // In-memory log sector payload: page / 16, at most log_sector_ - 28; with NVM a whole
  // sector's payload ([IPL-PCRAM]: the in-memory log sector is the NVM write unit).
  const size_t log_buffer_;
  std::vector<LpnState> lpns_;
  std::vector<LBlock> lblocks_;
  std::vector<uint32_t> owner_;      // block -> lbn, or kNoBlock
  std::vector<bool> erased_;         // block known erased (format, erase) — no erase before use
  std::vector<bool> bad_;            // block out of service (marked bad)
  std::vector<bool> retiring_;       // a program in the block failed: retire, never erase
  std::vector<bool> scrubbing_;      // a read of the block needed most of the ECC
  uint32_t scrubbing_n_ = 0;
  uint32_t bad_count_ = 0;
  std::deque<uint32_t> free_;        // free blocks: FIFO, or by erase count (allocate_block)
  bool wl_move_ = false;             // the merge under way is a wear-levelling move
  uint64_t erase_epoch_ = 0;         // erases done (merges' releases, erases before use)
  uint64_t wl_checked_ = ~uint64_t{0};  // erase_epoch_ at wear_level()'s last look
  std::set<uint32_t> trims_;         // logical blocks with trim-pending lpns
  std::unordered_map<Lpn, std::vector<std::pair<uint32_t, uint32_t>>> hints_;  // note_update
  std::set<Lpn> no_hints_;           // lpns whose noted ranges overflowed: diff at their write
  uint64_t next_seq_ = 1;
  LogSplitter splitter_;
  std::vector<uint8_t> page_buf_, prev_buf_, log_buf_, sector_buf_, spare_buf_, runs_buf_;
  std::vector<uint8_t> merge_buf_;   // a logical block's pages during a merge
  std::vector<bool> merge_live_;     // which of them the merge keeps

  // Atomic groups (ipl_commit.cc).
  struct Kept {                      // a committed block a shadow merge replaced
    uint32_t block = kNoBlock;
    uint32_t used_sectors = 0;
    std::vector<uint32_t> garbage;
    std::vector<Slot> slots;         // its data slots' states
  };
  uint64_t committed_seq_ = UINT64_MAX;  // the newest commit record (legacy: everything)
  uint64_t group_start_ = 1;         // the open group's first seq: (committed_seq_, this) is void
  bool group_dirty_ = false;         // the open group programmed or trimmed something
  uint64_t group_programs_ = 0;      // pages and sectors it programmed
  std::set<uint32_t> touched_;       // logical blocks it changed
  std::map<uint32_t, Kept> kept_;    // lbn -> its committed block, kept until the commit
  std::vector<uint32_t> purge_blocks_;  // free blocks holding void items (mount)
  std::set<uint32_t> purge_lbns_;       // logical blocks holding void items (mount, abort)
  uint32_t commit_block_ = kNoBlock;    // the commit log's current block
  uint32_t commit_used_ = 0;            // its used sectors
  uint32_t nvm_commit_slot_ = 0;        // NVM: the commit slot the next record goes to
  LogSplitter carry_splitter_;       // a selective merge's records (a sector's payload each)
  std::vector<uint8_t> commit_buf_;  // a logical block's committed pages (selective merge)
  std::vector<bool> commit_live_;
};

}  // namespace pdl
