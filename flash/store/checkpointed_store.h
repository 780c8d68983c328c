// checkpointed_store.h — the PageStore in front of an engine on a chip with a checkpoint area
// (superblock format 6, docs/design.md §17): it owns the checkpoint log, the view the engine
// runs on (checkpoint_view.h) and the engine, forwards every PageStore call to the engine, and
// writes checkpoints (write_checkpoint).
//
// Invariants:
//   * the engine sees only the view: its programs and erases pass the guard, so a checkpoint
//     the log calls newest is never older than the chip's contents;
//   * current() — the newest log entry is a checkpoint of exactly this store's tables (it was
//     mounted from it, or wrote it) and the guard has not fired since; write_checkpoint then
//     writes nothing;
//   * a checkpoint is written only when the engine is synced (not dirty, not halted); its area
//     pages are written before its log entry, so a cut anywhere leaves either the old newest
//     entry (whose stream no longer verifies if its area was overwritten: mount scans) or the
//     new checkpoint entry complete; with summary pages on flash after the old checkpoint, a
//     "stale" entry is appended before the area is touched (a cut erase could keep the old
//     stream and lose the summaries after it).
#pragma once

#include <memory>

#include "flash/store/checkpoint_log.h"
#include "flash/store/checkpoint_view.h"
#include "flash/store/page_store.h"
#include "flash/store/superblock.h"

namespace pdl {

class CheckpointedStore final : public PageStore {
 public:
  // `current`: the engine was mounted from the log's newest checkpoint.
  CheckpointedStore(const Superblock& sb, std::unique_ptr<CheckpointLog> log,
                    std::unique_ptr<CheckpointView> view, std::unique_ptr<PageStore> engine,
                    bool current, bool has_client = false, bool replayable = false);

  // The checkpoint write (see page_store.h). Errors: kBusy "not synced" if the engine is
  // dirty; the engine's save_tables error (kUnsupported: its method mounts by scan); the
  // area's or the log's (kFull: the area is too small). After an error the store is usable and
  // the next mount scans.
  // With summaries (format 7) a sync after which a periodic checkpoint is due (the view's
  // due()) writes one, without a client section (the client's own sync may write one with it
  // later; a mount from one without reads the client's pages): errors other than a power cut
  // or an I/O error leave the store as it was (the declarations go on, then "stale").
  Status write_checkpoint(std::span<const uint8_t> client) override;
  bool current() const { return current_ && !view_->fired(); }
  uint64_t periodic_checkpoints() const { return periodic_; }
  uint32_t area_blocks() const { return view_->area_blocks(); }
  const Superblock& superblock() const { return sb_; }
  const CheckpointLog& log() const { return *log_; }
  PageStore& engine() { return *engine_; }

  Status read(Lpn lpn, std::span<uint8_t> page) override { return engine_->read(lpn, page); }
  Status write(Lpn lpn, std::span<const uint8_t> page) override {
    return engine_->write(lpn, page);
  }
  Status trim(Lpn lpn) override { return engine_->trim(lpn); }
  Status sync() override;
  Status set_commit_mode(CommitMode mode) override { return engine_->set_commit_mode(mode); }
  bool atomic() const override { return engine_->atomic(); }
  Status abort() override { return engine_->abort(); }
  bool dirty() const override { return engine_->dirty(); }
  uint64_t uncommitted_pages() const override { return engine_->uncommitted_pages(); }
  void set_wear_level(uint32_t threshold) override { engine_->set_wear_level(threshold); }
  bool legacy_format() const override { return engine_->legacy_format(); }
  Status halted() const override { return engine_->halted(); }
  Status upgrade_format() override { return engine_->upgrade_format(); }
  uint64_t damaged_pages() const override { return engine_->damaged_pages(); }
  void note_update(Lpn lpn, uint32_t offset, uint32_t len) override {
    engine_->note_update(lpn, offset, len);
  }
  Status save_tables(TableWriter& w) const override { return engine_->save_tables(w); }
  uint64_t table_bytes() const override { return engine_->table_bytes(); }
  bool is_mapped(Lpn lpn) const override { return engine_->is_mapped(lpn); }
  uint32_t page_size() const override { return engine_->page_size(); }
  uint32_t logical_pages() const override { return engine_->logical_pages(); }
  const StoreParams& params() const override { return params_; }
  const StoreStats& stats() const override { return engine_->stats(); }
  const CostBreakdown& costs() const override { return engine_->costs(); }
  void set_classifier(LpnClassifier classifier) override {
    engine_->set_classifier(std::move(classifier));
  }
  void reset_stats() override { engine_->reset_stats(); }
  Status peek(Lpn lpn, std::span<uint8_t> page) override { return engine_->peek(lpn, page); }
  Nand& nand() override { return *view_; }
  uint32_t free_blocks() const override { return engine_->free_blocks(); }
  size_t mapping_bytes_per_lpn() const override { return engine_->mapping_bytes_per_lpn(); }
  Status check() const override { return engine_->check(); }
  PageStore& flash_store() override { return engine_->flash_store(); }
  LpnLocation locate(Lpn lpn) const override { return engine_->locate(lpn); }
  BlockInfo block_info(uint32_t block) const override { return engine_->block_info(block); }

 private:
  Superblock sb_;
  StoreParams params_;  // the engine's, with checkpoint and checkpoint_blocks set
  // Destroyed in reverse order: the engine (which uses the view) first, then the view (which
  // uses the log), then the log.
  std::unique_ptr<CheckpointLog> log_;
  std::unique_ptr<CheckpointView> view_;
  std::unique_ptr<PageStore> engine_;
  bool current_ = false;
  bool has_client_ = false;  // the current checkpoint has a client section
  // The engine replays declared blocks after a power cut (format 7): summaries after each
  // checkpoint; else the stale guard (a summary would be of no use to its mount).
  bool replayable_ = false;
  uint64_t periodic_ = 0;
};

}  // namespace pdl
