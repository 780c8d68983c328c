// sb_stable_buffer.h — StableBufferStore: [StableBuffer] as a PageStore in front of an FTL
// device (any PageStore of method ftl: the page FTL, BAST, FAST).
//
// Writer: a write of a destination not staged goes to a free slot (the free-slot pointer walks
// the slots round-robin, so the slots are written as one focused area), and the SBTT records
// destination -> slot; a rewrite of a staged destination overwrites its slot (the paper's
// Algorithm 2; the FTL writes out of place anyway, and the slot only ever holds that
// destination's versions, so a crash leaves it old or new, never another page). Reader: a
// staged destination reads its slot, any other its destination. Flush manager: instances of the
// efficient write patterns (sb_patterns.h) written to their destinations in pattern order —
// passive (when no slot is free) or proactive (after a write, any instance past its threshold).
// Directory commits (sync, and a passive flush) make the SBTT durable (sb_directory.h). A
// passive flush frees at least 1/8 of the slots (the best instances first) so that its directory
// commit is shared by several instances.
//
// Invariants (docs/design.md §15, StableBuffer, "Recovery argument"):
//   * every slot is in exactly one of: staged (slots_[s].dest != kSbFree, sbtt_[dest] == s),
//     free_ (free in RAM and in the durable directory), pending_ (free in RAM, maybe still named
//     by the durable directory);
//   * a slot is written only when staged since the last commit or named by the durable
//     directory for the same destination — never while the durable directory names it for
//     another destination (pending_ slots wait for the next commit);
//   * each commit syncs the device before writing the directory (every slot and destination
//     it relies on is durable) and after (the commit is durable before a freed slot is reused);
//   * recognizer_ holds exactly the staged destinations.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "flash/ftl/sb_cost_model.h"
#include "flash/ftl/sb_directory.h"
#include "flash/ftl/sb_patterns.h"
#include "flash/store/store_base.h"

namespace pdl {

// StableBuffer's own work (the device's is in its stats and the Nand's counters).
struct SbStats {
  uint64_t staged_writes = 0;    // writes that took a free slot
  uint64_t restaged_writes = 0;  // rewrites of a staged destination in its slot
  uint64_t slot_reads = 0;       // reads served from a slot
  uint64_t direct_reads = 0;     // reads served from the destination
  uint64_t flushes = 0;          // instances flushed (passive + proactive)
  uint64_t passive_flushes = 0;
  uint64_t proactive_flushes = 0;
  uint64_t flushed_pages[kSbPatterns] = {0, 0, 0};  // pages flushed, by pattern
  uint64_t instances[kSbPatterns] = {0, 0, 0};      // instances flushed, by pattern
  uint64_t unstaged_trims = 0;   // trims of a staged destination
  uint64_t directory_commits = 0;
  uint64_t directory_pages = 0;  // device writes of directory pages
  uint64_t recovered_slots = 0;  // staged pages the mount found (not reset by reset_stats)
};

class StableBufferStore final : public StoreBase {
 public:
  // An empty buffer over freshly formatted `device` (`format`), or the buffer recovered from the
  // device's directory. `p`: the resolved stablebuffer parameters (run-time choices included).
  // The device's format or mount work stays in costs() as `other`, with the directory's;
  // `report` (may be null) gets the directory read's simulated and wall time added.
  static Status open(std::unique_ptr<PageStore> device, const StoreParams& p, bool format,
                     std::unique_ptr<PageStore>* out, MountReport* report = nullptr);
  // The buffer over `device` (mounted from its own tables) from the section save_tables wrote
  // after the device's (sb_tables.cc, docs/format.md §13.3); finishes `r`. kCorrupt for a
  // section not describing a buffer of `p`.
  static Status from_tables(std::unique_ptr<PageStore> device, const StoreParams& p,
                            TableReader& r, std::unique_ptr<PageStore>* out);
  // After a replay (SbStore::replay, sb_tables.cc): the user pages that may read differently
  // since the checkpoint, for take_replayed_lpns — the destinations among `device_lpns` (the
  // device's replay's list) and, if a slot or a directory page is among them, every
  // destination staged then (`staged_then`, the checkpoint's slot table) or now.
  void set_replayed(const std::vector<Lpn>& device_lpns, const std::vector<Lpn>& staged_then);
  // The device's tables, then the buffer's; REQUIRES synced (sb_tables.cc).
  Status save_tables(TableWriter& w) const override;
  // The device's paged tables (its save_tables ran through the same writer).
  void tables_saved(bool durable) override { device_->tables_saved(durable); }
  uint64_t table_bytes() const override;  // the device's and the buffer's

  Status write(Lpn lpn, std::span<const uint8_t> page) override;
  Status trim(Lpn lpn) override;
  Status sync() override;
  Status peek(Lpn lpn, std::span<uint8_t> page) override;
  Status halted() const override;
  void set_wear_level(uint32_t threshold) override;
  uint64_t damaged_pages() const override { return device_->damaged_pages(); }
  // Something a sync would make durable: a slot table change not committed, or the device's
  // own (a buffered page, a trim).
  bool dirty() const override { return dir_dirty_ || !pending_.empty() || device_->dirty(); }

  // Costs are the device's, its lpns classified as the user's: a destination by the user's
  // classifier, a slot as the page it stages (so a flush is charged to the flushed page's
  // class), a directory page as class 0. The device charges its GC to gc and its format and
  // mount to other, as any store does.
  const CostBreakdown& costs() const override { return device_->costs(); }
  void set_classifier(LpnClassifier classifier) override;

  bool is_mapped(Lpn lpn) const override;
  uint32_t logical_pages() const override { return layout_.user; }
  const StoreStats& stats() const override;
  void reset_stats() override;
  uint32_t free_blocks() const override { return device_->free_blocks(); }
  size_t mapping_bytes_per_lpn() const override;
  Status check() const override;
  Status check_mount() const override;  // the device's mount check, then the buffer's
  LpnLocation locate(Lpn lpn) const override;
  BlockInfo block_info(uint32_t block) const override { return device_->block_info(block); }

  const SbStats& sb_stats() const { return sb_; }
  PageStore& device() { return *device_; }
  PageStore& flash_store() override { return device_->flash_store(); }
  const PageStore& device() const { return *device_; }
  const SbLayout& layout() const { return layout_; }
  const SbCostModel& cost_model() const { return model_; }
  uint32_t staged_pages() const { return uint32_t(sbtt_.size()); }
  uint32_t free_slots() const { return uint32_t(free_.size()); }
  // The slot staging `lpn`, or kSbFree.
  uint32_t slot_of(Lpn lpn) const;
  // The passive method now (as when a write finds no free slot): flush the best instance, then
  // the next best until slots / kPassiveBatchDivisor slots are freed, and commit the directory.
  // With nothing staged, only a pending commit. For tests and tools.
  Status flush_passive();
  static constexpr uint32_t kPassiveBatchDivisor = 8;

 private:
  StableBufferStore(std::unique_ptr<PageStore> device, const StoreParams& p, const SbLayout& l);
  Status read_page(Lpn lpn, std::span<uint8_t> page) override;
  // Write inst's pages to their destinations in order, then free their slots (pending_).
  Status flush(const SbInstance& inst);
  // Directory commit: device sync, directory copy seq % 2, device sync; pending_ slots free.
  Status commit();
  // A free slot for a write: the passive method (flush the best instance, commit) when none.
  Status take_slot(uint32_t* slot);
  void unstage(Lpn lpn, uint32_t slot);

  Status check_buffer() const;  // the slots, the SBTT and the recognizer agree (per slot)
  std::unique_ptr<PageStore> device_;
  SbLayout layout_;
  SbCostModel model_;
  SbRecognizer recognizer_;
  std::vector<SbSlotEntry> slots_;           // RAM state of every slot
  std::unordered_map<Lpn, uint32_t> sbtt_;   // StableBuffer Translation Table: dest -> slot
  std::set<uint32_t> free_;
  std::vector<uint32_t> pending_;
  uint32_t cursor_ = 0;    // the free-slot pointer
  uint64_t seq_ = 0;       // last directory commit
  uint64_t next_ts_ = 1;
  bool dir_dirty_ = false; // the RAM directory differs from the last commit
  SbStats sb_;
  LpnClassifier classifier_;  // the user's (null: every lpn is class 0)
};

}  // namespace pdl
