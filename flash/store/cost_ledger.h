// cost_ledger.h — the bookkeeping behind PageStore::costs() (cost.h), shared by every engine.
//
// `charged_` is the Nand's counters when work was last charged to a bucket. Every boundary where
// the bucket changes charges what happened since, so the buckets always sum to the counters
// since reset(). A Scope spans one PageStore call: on entry it charges leftovers to `other` and
// makes the call's bucket current; on exit (early returns included) it charges the call's work.
// Inside a call an engine may charge part of the work elsewhere (garbage collection to gc(), a
// shared page split over classes) with charge() / take_uncharged().
// Counters reset by someone else (Nand::reset_counters) are tolerated: the interval is dropped.
#pragma once

#include <algorithm>
#include <utility>

#include "flash/device/nand.h"
#include "flash/store/cost.h"

namespace pdl {

class CostLedger {
 public:
  explicit CostLedger(Nand& nand) : nand_(nand), charged_(nand.counters()) {}

  const CostBreakdown& costs() const { return costs_; }
  CostBreakdown& breakdown() { return costs_; }
  void set_classifier(LpnClassifier c) { classifier_ = std::move(c); }
  unsigned class_of(uint32_t lpn) const {
    return classifier_ ? std::min<unsigned>(classifier_(lpn), kCostClasses - 1) : 0;
  }
  ClassCost& cls(uint32_t lpn) { return costs_.cls[class_of(lpn)]; }
  FlashCost& bucket_of(uint32_t lpn) { return cls(lpn).flash; }
  FlashCost& gc() { return costs_.gc; }
  FlashCost& other() { return costs_.other; }
  FlashCost& current() { return *current_; }

  // Counters since the last charge; advances the mark.
  NandCounters take_uncharged() {
    const NandCounters now = nand_.counters();
    const NandCounters& c = charged_;
    const bool reset_by_others =
        now.page_reads < c.page_reads || now.spare_reads < c.spare_reads ||
        now.programs < c.programs || now.erases < c.erases || now.bytes_read < c.bytes_read ||
        now.bytes_programmed < c.bytes_programmed || now.sim_us < c.sim_us;
    const NandCounters d = reset_by_others ? NandCounters{} : now - charged_;
    charged_ = now;
    return d;
  }
  void charge(FlashCost& bucket) { bucket.add(take_uncharged()); }
  // Charges only the work since `before` (the Nand's counters taken inside the current
  // interval) to `bucket`; what was pending before it stays pending for whoever charges next.
  // Modular arithmetic: right even across a counter reset by others.
  void charge_since(FlashCost& bucket, const NandCounters& before) {
    bucket.add(nand_.counters() - before);
    charged_ = nand_.counters() - (before - charged_);
  }
  void charge_current() { charge(*current_); }
  // Forget work that happened while counting was paused elsewhere: re-mark without charging.
  void remark() { charged_ = nand_.counters(); }
  void reset() {
    costs_ = CostBreakdown{};
    charged_ = nand_.counters();
  }

  class Scope {
   public:
    Scope(CostLedger& l, FlashCost& bucket) : l_(l) {
      l_.charge(l_.costs_.other);
      l_.current_ = &bucket;
    }
    ~Scope() {
      l_.charge(*l_.current_);
      l_.current_ = &l_.costs_.other;
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    CostLedger& l_;
  };

 private:
  Nand& nand_;
  CostBreakdown costs_;
  LpnClassifier classifier_;  // null: every lpn is class 0
  NandCounters charged_;
  FlashCost* current_ = &costs_.other;
};

}  // namespace pdl
