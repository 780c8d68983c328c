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
//   * a checkpoint is written only when the engine is synced (not dirty, not halted); its table
//     pages and root are written (by the area pager, area_pager.h: appended to the current half,
//     or the whole of the other half) before its log entry, and never over a page the durable
//     checkpoint references, so a cut anywhere leaves either the old newest entry with its
//     root, table pages and summaries intact, or the new checkpoint entry complete;
//   * the engine's tables_saved(true) only after the log entry is durable; tables_saved(false)
//     after any failure (the old homes stay valid);
//   * the pager outlives the engine (its paged tables load through it).
#pragma once

#include <memory>

#include "flash/store/area_pager.h"
#include "flash/store/checkpoint_log.h"
#include "flash/store/checkpoint_view.h"
#include "flash/store/page_store.h"
#include "flash/store/superblock.h"

namespace pdl {

class CheckpointedStore final : public PageStore {
 public:
  // `current`: the engine was mounted from the log's newest checkpoint.
  // `pager`: the one the engine's tables were mounted through (placed on the checkpoint's
  // half), or null (a format, a scan mount: a fresh one, unplaced).
  CheckpointedStore(const Superblock& sb, std::unique_ptr<CheckpointLog> log,
                    std::unique_ptr<CheckpointView> view, std::unique_ptr<PageStore> engine,
                    bool current, bool has_client = false, bool replayable = false,
                    std::unique_ptr<AreaPager> pager = nullptr);

  // The checkpoint write (see page_store.h). Errors: kBusy "not synced" if the engine is
  // dirty; the engine's save_tables error (kUnsupported: its method mounts by scan); the
  // area's or the log's (kFull: the area is too small). After an error the store is usable and
  // the next mount scans.
  // With summaries (format 7) a sync after which a periodic checkpoint is due (the view's
  // due()) writes one, without a client section (a mount from one without reads the
  // client's pages) — or, with set_client_checkpoints(true), only once overdue: until then
  // the client writes it, with its section, when its tables describe the flash. Errors other
  // than a power cut or an I/O error leave the store as it was (the declarations go on, then
  // "stale").
  Status write_checkpoint(std::span<const uint8_t> client) override;
  bool current() const { return current_ && !view_->fired(); }
  // A power cut now would mount from a checkpoint (the newest is this state, or summaries
  // declare what changed since); false: the guard fell back to "stale", the mount would scan.
  // Conservative where the chip says more than the store knows: false also after a mount
  // that replayed but found no room for more summaries (until the next change, a cut would
  // replay again), and after the stale entry itself failed (power cut, I/O error).
  bool cut_would_replay() const { return current() || view_->summaries(); }
  // Checkpoints written while one was due (by sync, or by the client).
  uint64_t periodic_checkpoints() const { return periodic_; }
  // Checkpoints written into the other half whole (full), and appended (incremental).
  uint64_t full_checkpoints() const { return full_; }
  uint64_t incremental_checkpoints() const { return incremental_; }
  AreaPager& pager() { return *pager_; }
  const AreaPager& pager() const { return *pager_; }
  uint32_t area_blocks() const { return view_->area_blocks(); }
  const Superblock& superblock() const { return sb_; }
  const CheckpointLog& log() const { return *log_; }
  PageStore& engine() { return *engine_; }
  const PageStore& engine() const { return *engine_; }

  Status read(Lpn lpn, std::span<uint8_t> page) override { return engine_->read(lpn, page); }
  Status write(Lpn lpn, std::span<const uint8_t> page) override {
    return engine_->write(lpn, page);
  }
  Status trim(Lpn lpn) override { return engine_->trim(lpn); }
  Status sync() override;
  bool checkpoint_due() const override { return view_->due() && !engine_->dirty(); }
  void set_client_checkpoints(bool on) override { client_checkpoints_ = on; }
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
  void tables_saved(bool durable) override { engine_->tables_saved(durable); }
  uint64_t table_bytes() const override { return engine_->table_bytes(); }
  bool is_mapped(Lpn lpn) const override { return engine_->is_mapped(lpn); }
  uint64_t mapped_pages() const override { return engine_->mapped_pages(); }
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
  std::unique_ptr<AreaPager> pager_;  // (after the engine: its tables load through it)
  std::unique_ptr<PageStore> engine_;
  bool current_ = false;
  bool has_client_ = false;  // the current checkpoint has a client section
  // The engine replays declared blocks after a power cut (format 7): summaries after each
  // checkpoint; else the stale guard (a summary would be of no use to its mount).
  bool replayable_ = false;
  uint64_t periodic_ = 0;
  bool client_checkpoints_ = false;  // the client writes the periodic ones (until overdue)
  uint64_t full_ = 0, incremental_ = 0;

  // One attempt: the tables and the root into `half` (full or appended), then the log entry.
  Status write_once(std::span<const uint8_t> client, uint64_t gen, bool full, LogEntry* e);
  uint32_t full_target() const;
};

}  // namespace pdl
