// checkpointed_store.cc — writing a checkpoint: the engine's tables and the client's into the
// area, then the log entry naming them.
#include "flash/store/checkpointed_store.h"

#include "flash/store/checkpoint_area.h"

namespace pdl {

CheckpointedStore::CheckpointedStore(const Superblock& sb, std::unique_ptr<CheckpointLog> log,
                                     std::unique_ptr<CheckpointView> view,
                                     std::unique_ptr<PageStore> engine, bool current)
    : sb_(sb),
      params_(engine->params()),
      log_(std::move(log)),
      view_(std::move(view)),
      engine_(std::move(engine)),
      current_(current) {
  params_.checkpoint = true;
  params_.checkpoint_blocks = sb.checkpoint_blocks;
}

Status CheckpointedStore::write_checkpoint(std::span<const uint8_t> client) {
  if (engine_->dirty())
    return Status::error(Errc::kBusy,
                         "checkpoint: the store is not synced (written since the last sync)");
  PDL_TRY(engine_->halted());
  if (current()) return Status::ok();  // the newest checkpoint is this state already
  TableWriter w;
  PDL_TRY(engine_->save_tables(w));
  Nand& chip = view_->real();
  LogEntry e;
  e.kind = LogKind::kCheckpoint;
  e.gen = log_->max_gen() + 1;
  const std::vector<uint8_t> stream =
      encode_stream(stream_header_for(sb_, chip.geometry(), e.gen), w.data(), client);
  // The area is the checkpoint layer's own: its erases and programs do not pass the guard.
  // Once they begin, the older checkpoint the log may name no longer verifies.
  PDL_TRY(write_area(chip, view_->area_first(), view_->area_blocks(), stream, &e));
  PDL_TRY(log_->append(e));
  current_ = true;
  view_->arm(true);
  return Status::ok();
}

}  // namespace pdl
