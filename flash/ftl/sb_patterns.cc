// sb_patterns.cc — on-demand and incremental write-pattern recognition (sb_patterns.h).
#include "flash/ftl/sb_patterns.h"

#include <algorithm>
#include <iterator>

namespace pdl {

SbRecognizer::SbRecognizer(SbRecognition mode, uint32_t pages_per_block, uint32_t focus_blocks)
    : mode_(mode), ppb_(pages_per_block), focus_blocks_(std::max<uint32_t>(1, focus_blocks)) {}

void SbRecognizer::count_block(uint32_t block, int delta) {
  uint32_t& c = count_[block];
  if (c) by_count_.erase({c, block});
  c = uint32_t(int64_t(c) + delta);
  if (c) by_count_.insert({c, block});
  else count_.erase(block);
}

void SbRecognizer::add_run(Lpn start, uint32_t len) {
  runs_[start] = len;
  by_len_.insert({len, start});
  if (len >= 2) run2_++, run2_pages_ += len;
}

void SbRecognizer::remove_run(Lpn start, uint32_t len) {
  runs_.erase(start);
  by_len_.erase({len, start});
  if (len >= 2) run2_--, run2_pages_ -= len;
}

void SbRecognizer::insert(Lpn d) {
  if (mode_ == SbRecognition::kOnDemand) {
    hashed_.insert(d);
    return;
  }
  staged_.insert(d);
  count_block(d / ppb_, +1);
  Lpn start = d;
  uint32_t len = 1;
  auto right = runs_.find(d + 1);
  if (d != ~Lpn(0) && right != runs_.end()) {
    const uint32_t rlen = right->second;
    remove_run(d + 1, rlen);
    len += rlen;
  }
  auto it = runs_.upper_bound(d);
  if (it != runs_.begin()) {
    --it;
    if (uint64_t(it->first) + it->second == d) {
      start = it->first;
      const uint32_t llen = it->second;
      remove_run(start, llen);
      len += llen;
    }
  }
  add_run(start, len);
}

void SbRecognizer::erase(Lpn d) {
  if (mode_ == SbRecognition::kOnDemand) {
    hashed_.erase(d);
    return;
  }
  if (!staged_.erase(d)) return;
  count_block(d / ppb_, -1);
  auto it = std::prev(runs_.upper_bound(d));
  const Lpn start = it->first;
  const uint32_t len = it->second;
  remove_run(start, len);
  if (d > start) add_run(start, d - start);
  if (uint64_t(start) + len > uint64_t(d) + 1) add_run(d + 1, uint32_t(start + len - d - 1));
}

SbRecognizer::Sizes SbRecognizer::sizes_on_demand(std::vector<Lpn>* sorted) const {
  Sizes s;
  sorted->assign(hashed_.begin(), hashed_.end());
  std::sort(sorted->begin(), sorted->end());
  const std::vector<Lpn>& v = *sorted;
  uint32_t runs2 = 0, pages2 = 0;
  for (size_t i = 0; i < v.size();) {
    size_t j = i + 1;
    while (j < v.size() && v[j] == v[j - 1] + 1) j++;
    const uint32_t len = uint32_t(j - i);
    if (len > s.size[int(SbPattern::kSequential)])
      s.size[int(SbPattern::kSequential)] = len, s.seq_start = v[i];
    if (len >= 2) runs2++, pages2 += len;
    i = j;
  }
  if (runs2 >= 2) s.size[int(SbPattern::kPartitioned)] = pages2;
  // Focused: the window of focus_blocks_ consecutive blocks holding the most (two pointers).
  for (size_t lo = 0, hi = 0; hi < v.size(); hi++) {
    while (uint64_t(v[hi] / ppb_) >= uint64_t(v[lo] / ppb_) + focus_blocks_) lo++;
    const uint32_t n = uint32_t(hi - lo + 1);
    if (n > s.size[int(SbPattern::kFocused)])
      s.size[int(SbPattern::kFocused)] = n, s.focus_first = v[lo] / ppb_;
  }
  return s;
}

SbRecognizer::Sizes SbRecognizer::sizes_incremental() const {
  Sizes s;
  if (!by_len_.empty()) {
    // The longest run; among equals the lowest start.
    const uint32_t len = by_len_.rbegin()->first;
    s.size[int(SbPattern::kSequential)] = len;
    s.seq_start = by_len_.lower_bound({len, 0})->second;
  }
  if (run2_ >= 2) s.size[int(SbPattern::kPartitioned)] = uint32_t(run2_pages_);
  if (!by_count_.empty()) {
    const uint32_t c = by_count_.rbegin()->first;
    s.size[int(SbPattern::kFocused)] = c;
    s.focus_first = by_count_.lower_bound({c, 0})->second;
  }
  return s;
}

std::optional<SbInstance> SbRecognizer::pick(const SbCostModel& model, bool qualified_only) const {
  if (size() == 0) return std::nullopt;
  std::vector<Lpn> sorted;
  const Sizes s = mode_ == SbRecognition::kOnDemand ? sizes_on_demand(&sorted)
                                                    : sizes_incremental();
  int best = -1;
  double best_score = 0;
  for (int x = 0; x < kSbPatterns; x++) {
    const uint32_t n = s.size[x];
    if (n == 0 || (qualified_only && n < model.theta[x])) continue;
    const double sc = model.score(SbPattern(x), n);
    if (best < 0 || sc > best_score) best = x, best_score = sc;
  }
  if (best < 0) return std::nullopt;
  SbInstance inst;
  inst.pattern = SbPattern(best);
  inst.pages.reserve(s.size[best]);
  switch (inst.pattern) {
    case SbPattern::kSequential:
      for (uint32_t i = 0; i < s.size[best]; i++) inst.pages.push_back(s.seq_start + i);
      break;
    case SbPattern::kPartitioned:
      if (mode_ == SbRecognition::kOnDemand) {
        for (size_t i = 0; i < sorted.size();) {
          size_t j = i + 1;
          while (j < sorted.size() && sorted[j] == sorted[j - 1] + 1) j++;
          if (j - i >= 2) inst.pages.insert(inst.pages.end(), sorted.begin() + i, sorted.begin() + j);
          i = j;
        }
      } else {
        for (const auto& [start, len] : runs_)
          if (len >= 2)
            for (uint32_t i = 0; i < len; i++) inst.pages.push_back(start + i);
      }
      break;
    case SbPattern::kFocused: {
      const uint64_t lo = s.focus_first * ppb_;
      const uint64_t span = mode_ == SbRecognition::kOnDemand ? focus_blocks_ : 1;
      const uint64_t hi = lo + span * ppb_;
      if (mode_ == SbRecognition::kOnDemand) {
        for (Lpn d : sorted)
          if (d >= lo && d < hi) inst.pages.push_back(d);
      } else {
        for (auto it = staged_.lower_bound(Lpn(lo)); it != staged_.end() && *it < hi; ++it)
          inst.pages.push_back(*it);
      }
      break;
    }
  }
  return inst;
}

uint64_t SbRecognizer::table_bytes() const {
  // Node sizes: an ordered container's entry is a red-black node (3 pointers, a colour) and
  // its value; an unordered one's a next pointer and its value, plus a bucket pointer.
  constexpr uint64_t kTree = 32, kHash = 8, kBucket = 8;
  return (kHash + 8) * hashed_.size() + kBucket * hashed_.bucket_count() +
         (kTree + 8) * staged_.size() + (kTree + 8) * runs_.size() + (kTree + 8) * by_len_.size() +
         (kHash + 8) * count_.size() + kBucket * count_.bucket_count() +
         (kTree + 8) * by_count_.size();
}

bool SbRecognizer::consistent() const {
  if (mode_ == SbRecognition::kOnDemand) return true;
  std::map<Lpn, uint32_t> runs;
  std::unordered_map<uint32_t, uint32_t> count;
  uint32_t run2 = 0;
  uint64_t pages2 = 0;
  for (auto it = staged_.begin(); it != staged_.end();) {
    const Lpn start = *it;
    uint32_t len = 1;
    auto next = std::next(it);
    while (next != staged_.end() && *next == start + len) ++next, ++len;
    runs[start] = len;
    if (len >= 2) run2++, pages2 += len;
    it = next;
  }
  for (Lpn d : staged_) count[d / ppb_]++;
  if (runs != runs_ || count != count_ || run2 != run2_ || pages2 != run2_pages_) return false;
  if (by_len_.size() != runs_.size() || by_count_.size() != count_.size()) return false;
  for (const auto& [len, start] : by_len_)
    if (runs_.count(start) == 0 || runs_.at(start) != len) return false;
  for (const auto& [c, b] : by_count_)
    if (count_.count(b) == 0 || count_.at(b) != c) return false;
  return true;
}

}  // namespace pdl
