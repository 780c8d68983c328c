// checkpoint_view.cc — forwarding to the real chip within the store's blocks, and the guard.
#include "flash/store/checkpoint_view.h"

#include <algorithm>

#include "flash/store/reread.h"

namespace pdl {

CheckpointView::CheckpointView(Nand& real, uint32_t area_blocks, CheckpointLog& log)
    : real_(real), geo_(real.geometry()), log_(log) {
  geo_.blocks = real.geometry().blocks - area_blocks;
}

Status CheckpointView::in_range(uint64_t block, const char* op) const {
  if (block < geo_.blocks) return Status::ok();
  return Status::error(Errc::kNandRule, std::string(op) + " of block " + std::to_string(block) +
                                            ": beyond the store's " +
                                            std::to_string(geo_.blocks) +
                                            " blocks (the checkpoint area follows)");
}

void CheckpointView::start_summaries(uint64_t gen, SummaryCursor* cursor,
                                     const std::vector<uint32_t>& declared, uint32_t budget) {
  arm(true);
  summaries_ = true;
  gen_ = gen;
  cursor_ = cursor;
  budget_ = std::max<uint32_t>(1, budget);
  summary_pages_ = 0;
  for (uint32_t b : declared)
    if (b < geo_.blocks && !declared_[b]) {
      declared_[b] = 1;
      n_declared_++;
    }
}

bool CheckpointView::due() const {
  if (lapsed_) return true;  // (stale while summaries were on: a new checkpoint restarts them)
  if (!summaries_) return false;
  // Room: at least one summary page per block still allowed before the hard cap.
  return n_declared_ >= budget_ || !cursor_->usable;
}

bool CheckpointView::overdue() const {
  if (lapsed_) return true;
  if (!summaries_) return false;
  return n_declared_ >= budget_ + budget_ / 2 || !cursor_->usable;
}

// Before a change to `block`: declare it (summaries on), else the stale guard.
Status CheckpointView::guard_block(uint32_t block) {
  const uint32_t list[1] = {block};
  return declare(list, [&] { return declared_[block] != 0; }, [&] {
    declared_[block] = 1;
    n_declared_++;
  });
}

// With summaries on: nothing if `done()` (declared already), else a summary page listing
// `blocks` (none: the NVM changed), then `mark()`; when no page can be written, summaries end.
// Then, without summaries, the stale guard.
template <typename Done, typename Mark>
Status CheckpointView::declare(std::span<const uint32_t> blocks, Done done, Mark mark) {
  if (!armed_) return Status::ok();
  if (summaries_) {
    if (done()) {
      fired_ = true;
      return Status::ok();
    }
    if (n_declared_ < 2 * budget_) {
      const Status st = write_summary(real_, gen_, blocks, cursor_);
      if (st.is_ok()) {
        mark();
        summary_pages_++;
        fired_ = true;
        return Status::ok();
      }
      if (st.is(Errc::kPowerCut) || st.is(Errc::kIoError)) return st;
    }
    summaries_ = false;  // no declaration possible: the checkpoint becomes stale
    lapsed_ = true;
  }
  return guard();
}

Status CheckpointView::make_stale() { return guard(); }

Status CheckpointView::guard() {
  if (!armed_) return Status::ok();
  if (summaries_) lapsed_ = true;
  summaries_ = false;
  Status st = erase_only_ ? Status::error(Errc::kUnsupported, "checkpoint: format 6 or 7 area")
                          : log_.append_stale();
  if (!st.is_ok() && !st.is(Errc::kPowerCut) && !st.is(Errc::kIoError)) {
    // No room in the log: the checkpoint is made unreadable instead (the block holding its
    // root's first page erased; formats 6 and 7: the area's first good block, where their
    // stream begins). Table pages in that block are lost with it: an engine loading one
    // halts, and the next mount scans (docs/design.md §19).
    uint32_t b = geo_.blocks;
    const uint32_t end = real_.geometry().blocks;
    if (!erase_only_ && log_.has_entry() && log_.newest().kind == LogKind::kCheckpoint)
      b += log_.newest().root_page / geo_.pages_per_block;
    Status er = st;
    for (; b < end; b++) {
      if (real_.is_bad(b)) continue;
      er = erase_with_retries(real_, b);
      if (er.is(Errc::kBadBlock)) er = real_.mark_bad(b);  // the reader skips it: no root
      break;
    }
    if (er.is_ok()) st = er;
  }
  PDL_TRY(st);
  armed_ = false;
  fired_ = true;
  return Status::ok();
}

Status CheckpointView::read(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare) {
  PDL_TRY(in_range(uint64_t(ppa) / geo_.pages_per_block, "read"));
  return real_.read(ppa, data, spare);
}

Status CheckpointView::program(Ppa ppa, std::span<const uint8_t> data,
                               std::span<const uint8_t> spare, uint32_t data_off,
                               uint32_t spare_off) {
  PDL_TRY(in_range(uint64_t(ppa) / geo_.pages_per_block, "program"));
  PDL_TRY(guard_block(uint32_t(ppa / geo_.pages_per_block)));
  return real_.program(ppa, data, spare, data_off, spare_off);
}

Status CheckpointView::erase(uint32_t block) {
  PDL_TRY(in_range(block, "erase"));
  PDL_TRY(guard_block(block));
  return real_.erase(block);
}

Status CheckpointView::nvm_write(uint64_t off, std::span<const uint8_t> in) {
  if (replay_nvm_)
    PDL_TRY(declare({}, [this] { return nvm_declared_; }, [this] { nvm_declared_ = true; }));
  else
    PDL_TRY(guard());  // (summaries end: the engine's NVM state is not replayed)
  return real_.nvm_write(off, in);
}

Status CheckpointView::mark_bad(uint32_t block) {
  PDL_TRY(in_range(block, "mark_bad"));
  PDL_TRY(guard_block(block));
  return real_.mark_bad(block);
}

bool CheckpointView::is_bad(uint32_t block) {
  return block < geo_.blocks && real_.is_bad(block);
}

}  // namespace pdl
