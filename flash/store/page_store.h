// page_store.h — the PageStore interface: logical pages over one Nand, whatever the method.
//
// Every page-update method (PDL, OPU, IPU, IPL) implements exactly this, and one correctness
// suite runs over all of them. A logical page (lpn) holds page_size() bytes
// (= the flash page's data area). lpns are dense: 0 .. logical_pages()-1.
//
// Durability contract:
//   * sync() returns only when every write/trim before it is on flash;
//   * after a crash, mount() gives each lpn its last synced value or a later written one —
//     never a mix of two versions' bytes (an lpn is old or new, whole);
//   * a write that returns Errc::kFull changed nothing.
// Stores mounted or formatted with CommitMode::kGroup whose atomic() is true (PDL and OPU of
// superblock format 2) promise more: the writes and trims between two syncs form one *group*,
// and sync() *commits* it atomically — after a crash, mount() gives exactly the state of the
// last sync that returned (or, if the crash came inside sync(), possibly of that sync), never
// a part of a group. abort() discards the open group. A sync with nothing written or trimmed
// since the last one programs nothing. A group needs room for the versions it replaces until
// it commits: a write that would overfill the chip fails with kFull (nothing changed), and
// the caller commits (or aborts) before going on.
// After any device error (I/O error, power cut) the store is poisoned: every later call
// returns that error; recover by mounting the media again.
// A full host file system under an emulated chip (kHostFull) is no device error: the failed
// program touched nothing on the chip and the chip is not at fault, so no block is retired and
// the store is not poisoned — reads go on. The change it stopped may be half-way in the
// tables (a collection, a buffer flush), so the store takes no more changes (halted()) until
// it is mounted again; the media then holds what a power cut at that instant would have left,
// with no torn page. An obsolete mark refused after a commit record is only left out.
//
// Inspection (locate, block_info) reads only the in-memory tables, for tools and tests.
//
// Thread-safety: none; the Volume above serialises access.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "flash/common/status.h"
#include "flash/device/nand.h"
#include "flash/store/cost.h"
#include "flash/store/store_params.h"
#include "flash/store/table_stream.h"

namespace pdl {

using Lpn = uint32_t;

// How a store's changes become durable (fixed for the store object's lifetime, not on flash):
//   kPerPage — every programmed page counts once it is on flash ([PDL]'s engine: writes
//              between syncs may survive a crash one page at a time); what pdl-bench measures;
//   kGroup   — atomic groups: sync() commits everything since the last sync, or nothing
//              (PDL and OPU; IPU and IPL stay kPerPage, see atomic()). What the Volume uses.
enum class CommitMode : uint8_t { kPerPage, kGroup };

// Work done by the store, by cause. Flash-level counts are in the Nand's counters.
struct StoreStats {
  uint64_t reads = 0, writes = 0, trims = 0, syncs = 0;  // PageStore calls
  uint64_t base_pages_written = 0;    // full pages programmed for writes (PDL Case 3, OPU)
  uint64_t diff_pages_written = 0;    // differential write buffer flushes
  uint64_t diff_records = 0;          // differentials put into the write buffer
  uint64_t diff_bytes = 0;            // their encoded size, headers included
  uint64_t case1 = 0, case2 = 0, case3 = 0;  // PDL_Writing cases ([PDL] Fig. 4)
  uint64_t obsolete_marks = 0;        // spare-area programs setting a page obsolete
  uint64_t gc_runs = 0;               // victims collected
  uint64_t gc_base_moves = 0;         // valid base pages copied by GC
  uint64_t gc_diff_moves = 0;         // valid differentials compacted by GC
  uint64_t gc_diff_pages = 0;         // differential pages written by GC compaction
  uint64_t gc_merges = 0;             // large differentials merged into new base pages by GC
  uint64_t tombstones = 0;            // trim records written
  // IPU / IPL (flash/ipl/)
  uint64_t log_records = 0;           // IPL log records written (one per changed run)
  uint64_t log_bytes = 0;             // their bytes, run headers included
  uint64_t log_sectors = 0;           // IPL log sectors programmed (partial programs)
  uint64_t merges = 0;                // blocks merged into a new block (IPL merge, IPU rewrite)
  uint64_t merge_pages = 0;           // data pages programmed by merges
  uint64_t hinted_writes = 0;         // writes whose log came from note_update, not a diff
  // BAST / FAST (flash/ftl/): log-block merges by kind ([BAST], [FAST]); each also counts one
  // in `merges`, and the pages it programmed in `merge_pages`; `gc_runs` counts the blocks
  // merges erased (their victims).
  uint64_t switch_merges = 0;         // a complete sequential log block became the data block
  uint64_t partial_merges = 0;        // a sequential prefix completed from the data block
  uint64_t full_merges = 0;           // every current page copied into a fresh block
  // Bad blocks (docs/reliability.md)
  uint64_t program_retries = 0;       // programs redone on another page after one failed
  uint64_t blocks_retired = 0;        // grown bad blocks taken out of service (a failed
                                      // program or erase, the erase limit reached)
  uint64_t bad_blocks = 0;            // not a count of work: blocks out of service now,
                                      // factory-marked and retired (kept by reset_stats)
  uint64_t blocks_scrubbed = 0;       // blocks whose data moved because a read needed most
                                      // of the ECC (reread.h), then erased and reused
  // Static wear levelling (block_manager.h, ipl_merge.cc). Not in the gc_* / merge counts.
  uint64_t wl_runs = 0;               // young blocks whose data moved to a worn block
  uint64_t wl_page_moves = 0;         // pages those moves programmed (PDL/OPU: bases,
                                      // differential pages, merges, commit markers; IPU/IPL:
                                      // the merges' data pages)
  uint64_t wl_erases = 0;             // erases those moves caused
  // Atomic commit (PDL/OPU, format 2)
  uint64_t commits = 0;               // syncs that committed a group (programmed a commit page)
  uint64_t commit_markers = 0;        // commit pages holding no data (a commit record alone)
  uint64_t aborts = 0;                // open groups discarded (abort())
  uint64_t void_pages = 0;            // programmed pages of discarded groups found (abort, mount)
  uint64_t purged_blocks = 0;         // blocks collected to erase discarded groups' pages
  // Demand-loaded tables (PDL/OPU/page FTL, docs/design.md §18): table pages read from flash
  // (each one page read, in the NAND counters and the cost ledger as the operation's own) and
  // clean pages dropped from the cache since reset_stats; not counts of work: the pages
  // resident now and the clean pages each table keeps at most (table_cache=). Folds: sparse
  // dirty pages whose changed entries were kept one by one instead (since reset_stats), and
  // the entries so kept now (until the next checkpoint).
  uint64_t table_loads = 0;
  uint64_t table_evictions = 0;
  uint64_t table_pages_resident = 0;
  uint64_t table_cache_pages = 0;
  uint64_t table_folds = 0;
  uint64_t table_entries_folded = 0;
};

// What mount() found and what it cost (simulated time is the Nand's; wall time is measured).
struct MountReport {
  uint64_t pages_scanned = 0;
  uint64_t torn_pages = 0;        // pages failing CRC (interrupted programs): ignored
  uint64_t damaged_pages = 0;     // headers failing CRC that no power cut explains (PDL, OPU:
                                  // later pages of the block are programmed): data may be lost
  uint64_t spare_repairs = 0;     // headers read right after correcting one flipped bit
  uint64_t live_lpns = 0;          // counted by a scan; 0 from a checkpoint (replay included:
  uint64_t valid_diff_pages = 0;   // it reconsiders only the lpns the replayed blocks touch)
  uint64_t free_blocks = 0;
  uint64_t bad_blocks = 0;        // blocks marked bad (skipped)
  uint64_t next_seq = 0;
  uint64_t committed_seq = 0;     // the last commit record (format 2): newer pages are discarded
  uint64_t void_pages = 0;        // pages (or parts) of a group the crash left uncommitted
  bool legacy = false;            // superblock format 1: no commit records, every page counts
  // Checkpoint (docs/design.md §17): whether the tables came from one instead of a scan, its
  // generation and the pages read for it; else why the scan ran ("no checkpoint", "changed
  // since the checkpoint", "checkpoint corrupt: ...", "format without a checkpoint area").
  bool from_checkpoint = false;
  uint64_t checkpoint_gen = 0;
  uint64_t checkpoint_pages = 0;
  // After a power cut (superblock format 7): summary pages read after the checkpoint, and the
  // blocks re-read because they were declared in them (or were the checkpoint's write heads;
  // IPL with NVM: or whose NVM log area was written since); replayed_blocks > 0 means the
  // tables came from the checkpoint plus those blocks.
  uint64_t summary_pages = 0;
  uint64_t replayed_blocks = 0;
  std::string scan_reason;
  uint64_t sim_us = 0;            // simulated flash time of the scan
  double wall_s = 0;
};

// Where a logical page lives right now (PageStore::locate). In the paper's terms: the ppmt
// entry <base page, differential page> of the lpn ([PDL] Fig. 3), plus the write buffer.
struct LpnLocation {
  Ppa base = kNoPpa;            // current base page; kNoPpa: unmapped (never written, trimmed),
                                // or a base page not yet programmed (base_in_buffer)
  bool base_in_buffer = false;  // the newest version is a whole page held in RAM until the
                                // next commit or base page write (atomic stores)
  bool uncommitted = false;     // written or trimmed since the last commit (atomic stores)
  // Differential page holding the lpn's newest differential *on flash*, or kNoPpa. When
  // diff_in_buffer, a newer differential waits in the write buffer and this one (if any) is
  // the on-flash one it will supersede at the next flush.
  Ppa diff = kNoPpa;
  bool diff_in_buffer = false;  // the newest differential is in the differential write buffer
  bool trim_pending = false;    // that buffered record is a tombstone: reads say unmapped
  uint32_t diff_bytes = 0;      // size of the newest differential record (header included)
                                // if known without a flash read (in the buffer), else 0
};

// An erase block as the store sees it (PageStore::block_info).
struct BlockInfo {
  enum State : uint8_t {
    kFree,      // in the free queue: erased, or erasable (erased when next opened)
    kOpen,      // a write head is programming it, page by page
    kFull,      // closed: fully programmed, or partly programmed at mount and not reopened
    kReserved,  // not the store's: the superblock blocks 0 .. kSuperblockBlocks-1
    kVictim,    // taken by garbage collection and not yet erased (seen only if a collection
                // stopped half-way: the store is then poisoned)
    kBad,       // out of service: marked bad by the factory, or retired after a failure
  };
  State state = kReserved;
  uint32_t valid_pages = 0;  // pages GC would have to keep: current base pages + differential
                             // pages with a valid differential (0 for free/reserved blocks)
  uint32_t erase_count = 0;  // erases the block has endured (Nand::erase_count)
};
// "free", "open", "full", "reserved", "victim", "bad".
inline const char* block_state_name(BlockInfo::State s) {
  switch (s) {
    case BlockInfo::kFree: return "free";
    case BlockInfo::kOpen: return "open";
    case BlockInfo::kFull: return "full";
    case BlockInfo::kReserved: return "reserved";
    case BlockInfo::kVictim: return "victim";
    case BlockInfo::kBad: return "bad";
  }
  return "?";
}

class PageStore {
 public:
  virtual ~PageStore() = default;
  PageStore() = default;
  PageStore(const PageStore&) = delete;
  PageStore& operator=(const PageStore&) = delete;

  // Read lpn into `page` (page_size() bytes). Unmapped: zeros and Errc::kNotFound.
  virtual Status read(Lpn lpn, std::span<uint8_t> page) = 0;
  // Write lpn's new contents (page_size() bytes).
  virtual Status write(Lpn lpn, std::span<const uint8_t> page) = 0;
  // Unmap lpn: later reads give kNotFound. Durable after the next sync().
  virtual Status trim(Lpn lpn) = 0;
  // Make everything before it durable (flush the differential write buffer); for an atomic()
  // store, commit the open group.
  virtual Status sync() = 0;

  // ---- atomic groups (see the contract above) ----
  // Switch to `mode`. kGroup is taken only by PDL and OPU stores of the current format (then
  // atomic() is true), and only before anything was written since the mount (other stores
  // stay per-page: atomic() false, and this succeeds).
  virtual Status set_commit_mode(CommitMode mode) {
    (void)mode;
    return Status::ok();
  }
  virtual bool atomic() const { return false; }
  // Discard every write and trim since the last sync: reads give the committed state again.
  virtual Status abort() {
    return Status::error(Errc::kUnsupported, "this store has no atomic groups to abort");
  }
  // Something was written or trimmed since the last sync.
  virtual bool dirty() const { return false; }
  // Pages the open group has programmed so far (its part on flash that a commit would make
  // durable and an abort or a crash discard).
  virtual uint64_t uncommitted_pages() const { return 0; }
  // Mounted from an older on-flash format that upgrade_format() brings up to date in place
  // (the caller then rewrites the superblock: upgrade_store).
  // The wear-levelling threshold (StoreParams::wear_level; 0 = off) for this store object.
  virtual void set_wear_level(uint32_t threshold) { (void)threshold; }
  virtual bool legacy_format() const { return false; }
  // Ok, or the kHostFull that stopped a change half-way (see above): the store then takes no
  // more changes until it is mounted again (reads go on).
  virtual Status halted() const { return Status::ok(); }
  virtual Status upgrade_format() { return Status::ok(); }
  // Pages mount found damaged: a header failing its checks (beyond a one-bit repair) where no
  // torn program can be (later pages of its block are programmed). Such a page may have held
  // the only copy of a logical page, so an unmapped lpn is no proof of "never written".
  virtual uint64_t damaged_pages() const { return 0; }

  // Optional update-log hook, for a caller that knows its changes as they happen (the in-DBMS
  // IPL the paper compared with, [PDL] §5.1). Says that one update changed bytes
  // [offset, offset + len) of lpn's page since lpn was last written. Contract: if any range was
  // noted for lpn, the ranges noted before the next write(lpn) cover every byte that write
  // changes. A store may use them instead of comparing with the previous version (IPL writes
  // one log record per noted range — the history, as [IPL] logs it); others ignore them.
  virtual void note_update(Lpn lpn, uint32_t offset, uint32_t len) {
    (void)lpn, (void)offset, (void)len;
  }

  // ---- checkpoint (docs/design.md §17, flash/store/checkpoint.h) ----
  // Append to `w` every table a mount by scanning would rebuild, so that the engine's
  // mount_tables (flash/image/mount_tables.h) gives back a store equal to this one: same
  // mapping, block states and counts, sequence numbers, buffers. RAM work only, no flash
  // operation. REQUIRES: nothing written or trimmed since the last sync (!dirty()), not halted
  // or poisoned (else an error naming why). kUnsupported: this store mounts by scanning only.
  virtual Status save_tables(TableWriter& w) const {
    (void)w;
    return Status::error(Errc::kUnsupported, "this method has no checkpoint: it mounts by scan");
  }
  // The checkpoint that save_tables wrote into (through w.pager(): an engine's paged tables,
  // flash/store/paged_table.h, programmed their dirty pages there) is durable (true: those
  // pages are now clean, their new homes in effect) or abandoned (false: nothing changes).
  // REQUIRES: nothing changed since that save_tables.
  virtual void tables_saved(bool durable) { (void)durable; }
  // Bytes of RAM the store's tables take now (mapping, reverse map, per-block tables, buffers,
  // the open group's bookkeeping): what `pdl info` and PRAGMA pdl_stats report per GiB of chip.
  virtual uint64_t table_bytes() const { return 0; }
  // Write a checkpoint of this store's tables and the caller's `client` tables (the Volume's),
  // so that the next mount reads them instead of scanning; the next change to the chip makes it
  // stale (and mount scans again). Implemented by the checkpoint layer in front of an engine
  // (flash/store/checkpoint.h); an engine alone, or a store whose format has no checkpoint
  // area, returns kUnsupported. REQUIRES: synced (as save_tables).
  virtual Status write_checkpoint(std::span<const uint8_t> client) {
    (void)client;
    return Status::error(Errc::kUnsupported, "this store has no checkpoint area");
  }

  virtual bool is_mapped(Lpn lpn) const = 0;
  // Logical pages mapped (is_mapped): by default asked of every lpn; a store whose mapping is
  // demand-loaded keeps the count so that no table page is read.
  virtual uint64_t mapped_pages() const {
    uint64_t n = 0;
    for (Lpn l = 0; l < logical_pages(); l++) n += is_mapped(l);
    return n;
  }
  virtual uint32_t page_size() const = 0;
  virtual uint32_t logical_pages() const = 0;
  virtual const StoreParams& params() const = 0;
  virtual const StoreStats& stats() const = 0;
  // Flash work by class of lpn (cost.h). reset_stats() resets it too.
  virtual const CostBreakdown& costs() const = 0;
  // Install the lpn -> class map used by costs(); default: every lpn is class 0.
  virtual void set_classifier(LpnClassifier classifier) = 0;
  virtual void reset_stats() = 0;
  // Restart every count: the Nand's counters (operations, simulated time), then reset_stats().
  void reset_counters() {
    nand().reset_counters();
    reset_stats();
  }
  // Read lpn like read(), but invisibly: no store stats, no Nand counters, no simulated time.
  // For instrumentation only (the Volume's "bytes actually changed" figure).
  virtual Status peek(Lpn lpn, std::span<uint8_t> page) = 0;
  virtual Nand& nand() = 0;
  // Blocks free (erased or erasable) right now, reserve included.
  virtual uint32_t free_blocks() const = 0;
  // Bytes of RAM the mapping tables take per logical page (ppmt) — a reported target.
  virtual size_t mapping_bytes_per_lpn() const = 0;
  // Recompute the in-memory tables' redundant parts from scratch and compare (mapping,
  // reference counts, per-block valid counts). Errc::kCorrupt names the first mismatch.
  // Costs RAM work only, no flash operation. For tests and fsck.
  virtual Status check() const = 0;
  // The check a mount from a checkpoint runs (flash/image/open_store.cc): what costs no more
  // than the stream and the per-block tables; an engine whose check() walks demand-loaded
  // tables (PDL, OPU, page FTL: every table page would be read) checks less here, and
  // check() stays the full one (pdl fsck, the tests).
  virtual Status check_mount() const { return check(); }
  // After a mount that replayed blocks past a checkpoint (docs/design.md §17): every lpn the
  // replay reconsidered — each one written, trimmed or moved since the checkpoint, and
  // possibly more — sorted, handed over once (the store keeps no copy). False if this store
  // was not replayed, or its engine does not say (the client then treats its tables of that
  // checkpoint as out of date).
  virtual bool take_replayed_lpns(std::vector<Lpn>* out) {
    (void)out;
    return false;
  }
  // Periodic checkpoints by the client (a store with a checkpoint area and summaries,
  // docs/design.md §17): with set_client_checkpoints(true), a sync after which one is due
  // (checkpoint_due()) leaves it to the client, who writes it with its own section
  // (write_checkpoint) once its tables describe what is on flash; the store writes one
  // without a client section itself only when overdue (half the budget of declared blocks
  // later, or the area's summary room low).
  virtual bool checkpoint_due() const { return false; }
  virtual void set_client_checkpoints(bool on) { (void)on; }

  // ---- inspection (pdl fsck / dump): RAM only, no flash operation, no stats ----
  // The store whose mapping names the chip's pages: this one, or, for a layer in front of
  // another store (StableBuffer in front of an FTL device), the store underneath — what a
  // check of the chip's pages against the mapping (pdl fsck) must use.
  virtual PageStore& flash_store() { return *this; }
  // Where lpn lives. An lpn >= logical_pages() gives an empty LpnLocation (all kNoPpa).
  virtual LpnLocation locate(Lpn lpn) const = 0;
  // State, valid-page count and erase count of erase block `block` (a block outside the chip
  // reads as kReserved with zero counts).
  virtual BlockInfo block_info(uint32_t block) const = 0;
};

}  // namespace pdl
