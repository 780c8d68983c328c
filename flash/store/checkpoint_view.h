// checkpoint_view.h — the Nand a store runs on when its chip has a checkpoint area, and the
// guard that makes a checkpoint stale before the chip changes (docs/design.md §17).
//
// The view shows the first blocks - area blocks of the real chip (its geometry says so; an
// address beyond is kNandRule), so the engine, its scans and its tools never see the area.
// Everything else is forwarded: counters, erase counts, bad blocks, NVM, ECC, device name.
//
// GUARD: while armed (the log's newest entry is, or may be, a checkpoint), the first mutating
// call (program, erase, mark_bad, nvm_write) first appends "stale" to the log and waits for it;
// if that cannot be done (the log has no room and cannot switch blocks), it erases the area
// block holding the stream's first page instead, so that checkpoint can never be read again.
// If neither succeeds, the call fails with that error and nothing on the chip changed. A cut
// before the stale entry is durable leaves the data unchanged: the checkpoint is still right.
//
// SUMMARIES (superblock format 7): while summaries are on (start_summaries), the guard
// instead DECLARES: before the first program, erase or mark_bad of a block not yet declared
// since checkpoint G, it programs a summary page listing that block (checkpoint_area.h) and
// waits for it; a mount after a power cut then re-reads only the declared blocks. When a
// declaration cannot be made (the area is full, a summary page failed, more than
// 2 x budget blocks declared), summaries end and the stale guard above runs. NVM: for an
// engine whose replay reads its NVM again (replay_nvm: PDL's write buffer log, IPL's commit
// and log areas), the first NVM write since checkpoint G — or since the view was armed by a
// mount that replayed — programs an empty summary page, "the NVM changed", so that the mount
// after a power cut replays even if no block was declared; for any other engine an NVM write
// ends summaries as a failed declaration does. due(): budget blocks are declared, or the
// area's room is low, or summaries lapsed (a declaration could not be made: the checkpoint
// went stale while they were on) — the store writes a new checkpoint at its next sync, so a
// power cut after that sync replays again.
#pragma once

#include <vector>

#include "flash/device/nand.h"
#include "flash/store/checkpoint_area.h"
#include "flash/store/checkpoint_log.h"

namespace pdl {

class CheckpointView final : public Nand {
 public:
  // `real`: the whole chip; the area is its last `area_blocks` blocks; `log` on the same chip.
  // Both must outlive the view.
  CheckpointView(Nand& real, uint32_t area_blocks, CheckpointLog& log);

  // Arm the guard (the newest entry may be a checkpoint) or disarm it.
  void arm(bool on) {
    armed_ = on;
    fired_ = false;
    summaries_ = false;
    lapsed_ = false;
    declared_.assign(geo_.blocks, 0);
    n_declared_ = 0;
    nvm_declared_ = false;
  }
  // The engine's replay reads the NVM again: NVM writes are declared (an empty summary page),
  // not made stale. Set once, after construction.
  void replay_nvm(bool on) { replay_nvm_ = on; }
  // Summaries after checkpoint `gen`: `declared` already (read at mount), the next summary
  // page at `*cursor` (the area pager's: table pages and roots go after the summaries; it must
  // outlive the view's use of it); a periodic checkpoint is due at `budget` declared blocks.
  void start_summaries(uint64_t gen, SummaryCursor* cursor,
                       const std::vector<uint32_t>& declared, uint32_t budget);
  // The checkpoint must not be trusted any more (a table page failed to load): the stale
  // guard runs now if it is armed (summaries end).
  Status make_stale();
  // Superblock formats 6 and 7 (this pdl writes no checkpoint there): before the first change,
  // the area block holding the old checkpoint's first page is erased, so that an older pdl
  // can no longer mount from it.
  void arm_erase_only() {
    arm(true);
    erase_only_ = true;
  }
  bool summaries() const { return summaries_; }
  // Blocks declared since the checkpoint (while summaries are on).
  uint32_t declared_blocks() const { return n_declared_; }
  uint64_t summary_pages() const { return summary_pages_; }
  bool due() const;
  // A checkpoint due because summaries lapsed could not be written: not due again for that
  // (the next clean close writes one).
  void forget_lapse() { lapsed_ = false; }
  // Due for half the budget again (or the summary room low): the store writes the periodic
  // checkpoint itself, though a client that writes them (set_client_checkpoints) has not.
  bool overdue() const;
  bool armed() const { return armed_; }
  // The guard ran since the last arm(): the chip changed since the checkpoint.
  bool fired() const { return fired_; }
  Nand& real() { return real_; }
  uint32_t area_first() const { return geo_.blocks; }
  uint32_t area_blocks() const { return real_.geometry().blocks - geo_.blocks; }

  const Geometry& geometry() const override { return geo_; }
  std::string device() const override { return real_.device(); }
  Status read(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare) override;
  Status program(Ppa ppa, std::span<const uint8_t> data, std::span<const uint8_t> spare,
                 uint32_t data_off = 0, uint32_t spare_off = 0) override;
  Status erase(uint32_t block) override;
  Status nvm_read(uint64_t off, std::span<uint8_t> out) override {
    return real_.nvm_read(off, out);
  }
  Status nvm_write(uint64_t off, std::span<const uint8_t> in) override;
  std::string nvm_place() const override { return real_.nvm_place(); }
  Status flush() override { return real_.flush(); }
  const NandCounters& counters() const override { return real_.counters(); }
  void reset_counters() override { real_.reset_counters(); }
  void set_counting(bool on) override { real_.set_counting(on); }
  uint32_t erase_count(uint32_t block) const override { return real_.erase_count(block); }
  Status mark_bad(uint32_t block) override;
  bool is_bad(uint32_t block) override;
  uint32_t ecc_strength() const override { return real_.ecc_strength(); }
  uint32_t last_read_flips() const override { return real_.last_read_flips(); }

 private:
  Status guard();
  Status guard_block(uint32_t block);
  template <typename Done, typename Mark>
  Status declare(std::span<const uint32_t> blocks, Done done, Mark mark);
  Status in_range(uint64_t block, const char* op) const;

  Nand& real_;
  Geometry geo_;
  CheckpointLog& log_;
  bool armed_ = false;
  bool fired_ = false;
  bool summaries_ = false;
  bool lapsed_ = false;  // summaries ended by the stale guard since start_summaries
  uint64_t gen_ = 0;
  SummaryCursor* cursor_ = nullptr;
  bool erase_only_ = false;
  std::vector<uint8_t> declared_;  // per store block
  uint32_t n_declared_ = 0;
  bool replay_nvm_ = false;
  bool nvm_declared_ = false;  // the empty summary page of this generation is written
  uint32_t budget_ = 0;
  uint64_t summary_pages_ = 0;  // written since start_summaries
};

}  // namespace pdl
