// store_base.h — the plumbing every engine shares (PdlStore, IplStore): the Nand, the store
// parameters, stats and cost ledger, the poisoning and halting rules of page_store.h, the
// argument checks, read and peek around the engine's own read_page, and mount timing.
//
// An engine derives from StoreBase, implements read_page (its read path, [PDL] Fig. 6 or the
// IPL replay) and everything that differs, and routes every device error through fail().
// Invariants:
//   * poisoned_ is ok until the first device error, then that error for good (until the media
//     is mounted again, by a new store object); every call but the inspection ones returns it;
//   * halted_ is ok until a kHostFull stopped a change, then that status: reads go on, changes
//     return it;
//   * stats_ and ledger_ count from construction or the last reset_stats().
// Thread-safety: none; the Volume above serialises access.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "flash/store/cost_ledger.h"
#include "flash/store/page_store.h"

namespace pdl {

// The poisoning rule of page_store.h, for engines: returns `st`; if it is a device error (not
// ok, not corrupt data, not kFull, not kHostFull, not kNotFound) it becomes *poisoned unless
// one is there already.
inline Status poison_on_device_error(Status st, Status* poisoned) {
  if (st.is_ok() || st.is(Errc::kCorrupt) || st.is(Errc::kFull) || st.is(Errc::kNotFound) ||
      st.is(Errc::kHostFull))
    return st;
  if (poisoned->is_ok()) *poisoned = st;  // nothing more is trusted until remount
  return st;
}

class StoreBase : public PageStore {
 public:
  Status read(Lpn lpn, std::span<uint8_t> page) override;
  // Invisible to stats and counters, so to costs too: the ledger stays right since nothing
  // counts.
  Status peek(Lpn lpn, std::span<uint8_t> page) override;

  bool atomic() const override { return groups_; }
  bool legacy_format() const override { return legacy_; }
  Status halted() const override { return halted_; }
  void set_wear_level(uint32_t threshold) override { params_.wear_level = threshold; }
  uint32_t page_size() const override { return geo_.page_data; }
  const StoreParams& params() const override { return params_; }
  const CostBreakdown& costs() const override { return ledger_.costs(); }
  void set_classifier(LpnClassifier classifier) override {
    ledger_.set_classifier(std::move(classifier));
  }
  void reset_stats() override;
  Nand& nand() override { return nand_; }
  bool take_replayed_lpns(std::vector<Lpn>* out) override {
    if (!replayed_) return false;
    *out = std::move(replayed_lpns_);
    replayed_ = false;
    replayed_lpns_ = {};
    return true;
  }

 protected:
  StoreBase(Nand& nand, const StoreParams& params);

  // Read lpn (checked, in range, page_size() bytes) into `page`: the engine's read path,
  // shared by read() and peek(). Unmapped: zeros and kNotFound.
  virtual Status read_page(Lpn lpn, std::span<uint8_t> page) = 0;

  // The poisoning and halting rules (page_store.h) for a status from the device or from work
  // that programmed: a kHostFull halts the store, a device error poisons it. Returns `st`.
  Status fail(Status st);
  // The poisoned status, or a range error for lpn.
  Status check_lpn(Lpn lpn) const;
  // check_lpn, and a whole page (`size` == page_size()).
  Status check_page(Lpn lpn, size_t size) const;
  // Whether the store takes changes: the poisoned status, else the halted one.
  Status changeable() const {
    if (!poisoned_.is_ok()) return poisoned_;
    return halted_;
  }

  // Mount's simulated flash time and wall time (MountReport::sim_us, wall_s): started at
  // construction, written by finish().
  class MountClock {
   public:
    explicit MountClock(Nand& nand)
        : nand_(nand), t0_(std::chrono::steady_clock::now()), us0_(nand.counters().sim_us) {}
    void finish(MountReport* rep) const {
      rep->sim_us = nand_.counters().sim_us - us0_;
      rep->wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    }

   private:
    Nand& nand_;
    std::chrono::steady_clock::time_point t0_;
    uint64_t us0_;
  };

  Nand& nand_;
  const Geometry geo_;
  StoreParams params_;  // (wear_level may change: set_wear_level)
  Status poisoned_;
  // The host file system filled up in the middle of a change (kHostFull): the tables may be
  // half-way through it (a collection, a buffer flush), fine for reads — every copy they point
  // to is still on flash, and nothing was half programmed — but not to go on from. Changes
  // fail with this until the store is mounted again.
  Status halted_;
  mutable StoreStats stats_;  // the engine's stats() fills in the bad-block figures
  CostLedger ledger_;
  bool groups_ = false;  // CommitMode::kGroup
  bool legacy_ = false;  // superblock format 1: no commit records, every page counts
  // The lpns the replay that made this store reconsidered (its replay sets them), until
  // take_replayed_lpns.
  bool replayed_ = false;
  std::vector<Lpn> replayed_lpns_;
};

}  // namespace pdl
