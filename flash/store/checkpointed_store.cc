// checkpointed_store.cc — writing a checkpoint: the engine's table pages and the root (its small
// tables, the paged tables' directories, the client's section) into a half of the area through
// the area pager, then the log entry naming them (docs/design.md §19).
#include "flash/store/checkpointed_store.h"

#include "flash/store/checkpoint_area.h"

namespace pdl {

CheckpointedStore::CheckpointedStore(const Superblock& sb, std::unique_ptr<CheckpointLog> log,
                                     std::unique_ptr<CheckpointView> view,
                                     std::unique_ptr<PageStore> engine, bool current,
                                     bool has_client, bool replayable,
                                     std::unique_ptr<AreaPager> pager)
    : sb_(sb),
      params_(engine->params()),
      log_(std::move(log)),
      view_(std::move(view)),
      pager_(std::move(pager)),
      engine_(std::move(engine)),
      current_(current),
      has_client_(has_client),
      replayable_(replayable) {
  params_.checkpoint = true;
  params_.checkpoint_blocks = sb.checkpoint_blocks;
  if (!pager_) pager_ = std::make_unique<AreaPager>(view_->real(), view_->area_first(),
                                                    view_->area_blocks());
  // A table page that does not verify: the checkpoint naming it is not trusted again.
  CheckpointView* v = view_.get();
  pager_->set_on_load_error([v] { (void)v->make_stale(); });
}

// A full checkpoint goes to the half that holds neither the engine's homes nor the log's
// newest checkpoint (which a cut must leave whole).
uint32_t CheckpointedStore::full_target() const {
  if (pager_->placed()) return 1 - pager_->half();
  if (log_->has_entry() && log_->newest().half <= 1) return 1 - log_->newest().half;
  return 0;
}

Status CheckpointedStore::write_once(std::span<const uint8_t> client, uint64_t gen, bool full,
                                     LogEntry* e) {
  Nand& chip = view_->real();
  pager_->begin(gen, full ? full_target() : pager_->half(), full);
  TableWriter w;
  w.set_pager(pager_.get());
  PDL_TRY(engine_->save_tables(w));
  const std::vector<uint8_t> stream =
      encode_stream(stream_header_for(sb_, chip.geometry(), gen), w.data(), client);
  const uint64_t root_pages =
      std::max<uint64_t>(1, (stream.size() + chip.geometry().page_data - 1) /
                                chip.geometry().page_data);
  // An appended root leaves room for the summaries that follow it (else the next change
  // would find none and the checkpoint go stale at once); a full one takes what is left.
  const uint64_t reserve =
      sb_.summaries && replayable_
          ? replay_budget(params_.replay_blocks, chip.geometry(), uint32_t(root_pages))
          : 0;
  if (!full && pager_->pages_left() < root_pages + reserve)
    return Status::error(Errc::kFull, "checkpoint: the current half has no room for the root");
  PDL_TRY(pager_->write_root(stream, e));
  e->kind = LogKind::kCheckpoint;
  e->gen = gen;
  return log_->append(*e);
}

Status CheckpointedStore::write_checkpoint(std::span<const uint8_t> client) {
  if (!sb_.halves)
    return Status::error(Errc::kUnsupported,
                         "checkpoint: a store of superblock format 6 or 7 gets none from this "
                         "pdl (format 8 lays the area out in halves): it mounts by scan");
  if (engine_->dirty())
    return Status::error(Errc::kBusy,
                         "checkpoint: the store is not synced (written since the last sync)");
  PDL_TRY(engine_->halted());
  // The newest checkpoint is this state already (with the client's section, if one is given).
  if (current() && (client.empty() || has_client_)) return Status::ok();
  const uint64_t gen = log_->max_gen() + 1;
  const bool was_due = view_->due();  // (counted as periodic: by the store's sync or the client)
  // Incremental when the pager has a half with room left; else (and after an incremental
  // attempt that found no room or a failing page) full into the other half, again after a
  // block of it failed (marked bad: the next attempt skips it).
  bool full = !pager_->placed() || !pager_->cursor().usable;
  bool wrote_current = false;  // pages appended to the current half (its summaries end)
  Status st;
  LogEntry e;
  for (int attempt = 0; attempt < 4; attempt++) {
    e = LogEntry();
    st = write_once(client, gen, full, &e);
    if (st.is_ok()) break;
    engine_->tables_saved(false);
    if (!full && pager_->written()) wrote_current = true;
    pager_->finish(false);
    if (st.is(Errc::kPowerCut) || st.is(Errc::kIoError)) break;
    if (!full && (st.is(Errc::kFull) || st.is(Errc::kBadBlock))) {
      full = true;
      continue;
    }
    if (full && st.is(Errc::kBadBlock)) continue;
    break;
  }
  if (!st.is_ok()) {
    // Garbage after the summaries: none may follow it (the stale guard instead).
    if (wrote_current && view_->summaries()) view_->arm(true);
    return st;
  }
  engine_->tables_saved(true);
  pager_->finish(true);
  (full ? full_ : incremental_)++;
  current_ = true;
  has_client_ = !client.empty();
  if (was_due) periodic_++;
  if (sb_.summaries && replayable_)
    view_->start_summaries(e.gen, &pager_->cursor(), {},
                           replay_budget(params_.replay_blocks, view_->real().geometry(),
                                         e.pages));
  else
    view_->arm(true);
  return Status::ok();
}

Status CheckpointedStore::sync() {
  PDL_TRY(engine_->sync());
  if (!view_->due() || engine_->dirty()) return Status::ok();
  if (client_checkpoints_ && !view_->overdue()) return Status::ok();  // (the client's turn)
  const Status st = write_checkpoint({});
  if (st.is(Errc::kPowerCut) || st.is(Errc::kIoError)) return st;
  if (!st.is_ok()) view_->forget_lapse();  // (no new attempt at every sync)
  return Status::ok();
}

}  // namespace pdl
