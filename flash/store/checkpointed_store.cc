// checkpointed_store.cc — writing a checkpoint: the engine's tables and the client's into the
// area, then the log entry naming them.
#include "flash/store/checkpointed_store.h"

#include "flash/store/checkpoint_area.h"

namespace pdl {

CheckpointedStore::CheckpointedStore(const Superblock& sb, std::unique_ptr<CheckpointLog> log,
                                     std::unique_ptr<CheckpointView> view,
                                     std::unique_ptr<PageStore> engine, bool current,
                                     bool has_client, bool replayable)
    : sb_(sb),
      params_(engine->params()),
      log_(std::move(log)),
      view_(std::move(view)),
      engine_(std::move(engine)),
      current_(current),
      has_client_(has_client),
      replayable_(replayable) {
  params_.checkpoint = true;
  params_.checkpoint_blocks = sb.checkpoint_blocks;
}

Status CheckpointedStore::write_checkpoint(std::span<const uint8_t> client) {
  if (engine_->dirty())
    return Status::error(Errc::kBusy,
                         "checkpoint: the store is not synced (written since the last sync)");
  PDL_TRY(engine_->halted());
  // The newest checkpoint is this state already (with the client's section, if one is given).
  if (current() && (client.empty() || has_client_)) return Status::ok();
  TableWriter w;
  PDL_TRY(engine_->save_tables(w));
  Nand& chip = view_->real();
  LogEntry e;
  e.kind = LogKind::kCheckpoint;
  e.gen = log_->max_gen() + 1;
  const std::vector<uint8_t> stream =
      encode_stream(stream_header_for(sb_, chip.geometry(), e.gen), w.data(), client);
  // The area is the checkpoint layer's own: its erases and programs do not pass the guard.
  // Once they begin, the older checkpoint the log may name no longer verifies — unless a cut
  // erase leaves its stream pages and takes only summary pages after them (a torn erase clears
  // a random subset of pages): a mount would then read that checkpoint without the blocks
  // declared since. So with declarations on flash it is made stale first.
  if (view_->summaries() && view_->declared_blocks() > 0) PDL_TRY(log_->append_stale());
  Status st = write_area(chip, view_->area_first(), view_->area_blocks(), stream, &e);
  if (st.is_ok()) st = log_->append(e);
  if (!st.is_ok()) {
    // The area no longer holds the newest checkpoint whole: no summary may follow it.
    if (view_->summaries()) view_->arm(true);
    return st;
  }
  current_ = true;
  has_client_ = !client.empty();
  if (sb_.summaries && replayable_)
    view_->start_summaries(e.gen,
                           summary_cursor_after(chip, view_->area_first(), view_->area_blocks(), e),
                           {}, replay_budget(params_.replay_blocks, chip.geometry(), e.pages));
  else
    view_->arm(true);
  return Status::ok();
}

Status CheckpointedStore::sync() {
  PDL_TRY(engine_->sync());
  if (!view_->due() || engine_->dirty()) return Status::ok();
  const Status st = write_checkpoint({});
  if (st.is(Errc::kPowerCut) || st.is(Errc::kIoError)) return st;
  if (st.is_ok()) periodic_++;
  return Status::ok();
}

}  // namespace pdl
