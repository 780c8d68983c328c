// sb_patterns.h — StableBuffer's write-pattern recognition ([StableBuffer] §3.1) over the
// destinations staged in the buffer, in units of the FTL's erase block (P = pages_per_block
// logical pages: block b holds lpns bP .. bP+P-1).
//
// Instances, each flushed in the order given (ascending destinations, so each is one of the
// device's efficient patterns):
//   sequential  one maximal run of consecutive staged destinations (the longest);
//   partitioned every run of at least 2 pages, when there are at least 2 such runs: flushed run
//               after run (uFLIP's partitioned pattern: sequential streams in several areas);
//   focused     the staged destinations within a focused area: on-demand, the window of F
//               consecutive erase blocks holding the most; incremental, the one erase block
//               holding the most (it keeps per-block counts only: local information, which the
//               paper expects to find poorer instances than the on-demand scan).
// On-demand: a hash set of the staged destinations, sorted and scanned when an instance is asked
// for (O(n log n)). Incremental: an ordered set, the maximal runs (by start and by length) and
// per-block counts (by block and by count), kept up to date at every insert and erase
// (O(log n)); an instance is then read off them.
// Selection: the candidate with the best SbCostModel::score; with `qualified_only`, only
// candidates of at least θ_x pages (the proactive method).
// Invariants (incremental): runs_ partitions staged_ into maximal runs; by_len_ mirrors runs_;
// count_[b] = staged destinations in block b (no zero entries); by_count_ mirrors count_;
// run2_ = the number of runs of length >= 2 and run2_pages_ their pages.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "flash/ftl/sb_cost_model.h"
#include "flash/store/page_store.h"

namespace pdl {

struct SbInstance {
  SbPattern pattern = SbPattern::kSequential;
  std::vector<Lpn> pages;  // destinations in flush order
};

class SbRecognizer {
 public:
  SbRecognizer(SbRecognition mode, uint32_t pages_per_block, uint32_t focus_blocks);

  void insert(Lpn d);  // d becomes staged (not staged before)
  void erase(Lpn d);   // d is no longer staged (staged before)
  size_t size() const { return mode_ == SbRecognition::kOnDemand ? hashed_.size() : staged_.size(); }

  // The instance to flush, or nullopt (nothing staged; or, with qualified_only, no candidate
  // reaches its threshold).
  std::optional<SbInstance> pick(const SbCostModel& model, bool qualified_only) const;

  // Recompute the incremental structures from staged_ and compare (tests, check()).
  bool consistent() const;
  // RAM the structures take now (entries at a fair estimate per node; table_bytes()).
  uint64_t table_bytes() const;

 private:
  struct Sizes {
    uint32_t size[kSbPatterns] = {0, 0, 0};
    Lpn seq_start = 0;        // the sequential candidate's first page
    uint64_t focus_first = 0;  // the focused candidate's first block
  };
  Sizes sizes_on_demand(std::vector<Lpn>* sorted) const;
  Sizes sizes_incremental() const;
  void add_run(Lpn start, uint32_t len);
  void remove_run(Lpn start, uint32_t len);
  void count_block(uint32_t block, int delta);

  SbRecognition mode_;
  uint32_t ppb_;
  uint32_t focus_blocks_;
  std::unordered_set<Lpn> hashed_;  // on-demand: the SBTT's keys
  // incremental
  std::set<Lpn> staged_;
  std::map<Lpn, uint32_t> runs_;                   // start -> length
  std::set<std::pair<uint32_t, Lpn>> by_len_;      // (length, start)
  std::unordered_map<uint32_t, uint32_t> count_;   // block -> staged pages
  std::set<std::pair<uint32_t, uint32_t>> by_count_;  // (count, block)
  uint32_t run2_ = 0;
  uint64_t run2_pages_ = 0;
};

}  // namespace pdl
