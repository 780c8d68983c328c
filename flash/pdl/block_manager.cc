// block_manager.cc — free queue, heads, valid counts and victim selection.
#include "flash/pdl/block_manager.h"
#include "flash/store/reread.h"

#include <algorithm>
#include <cassert>

namespace pdl {

BlockManager::BlockManager(const Geometry& g, uint32_t first_block, uint32_t reserve)
    : ppb_(g.pages_per_block),
      first_(first_block),
      reserve_(reserve),
      state_(g.blocks, kCollecting),
      valid_(g.blocks, 0),
      written_(g.blocks, 0),
      closed_at_(g.blocks, 0),
      erased_(g.blocks, 0),
      retiring_(g.blocks, 0),
      scrubbing_(g.blocks, 0),
      prev_(g.blocks, -1),
      next_(g.blocks, -1),
      bucket_(g.pages_per_block + 1, -1) {}

void BlockManager::add_free(uint32_t block, bool erased) {
  state_[block] = kFree;
  erased_[block] = erased;
  valid_[block] = 0;
  written_[block] = 0;
  free_.push_back(block);
}

void BlockManager::add_closed(uint32_t block, uint32_t valid) {
  valid_[block] = uint16_t(valid);
  written_[block] = uint16_t(ppb_);
  close(block);
}

void BlockManager::close(uint32_t block) {
  if (close_clock_ >= stamp_limit_) renumber_stamps();
  state_[block] = kClosed;
  closed_at_[block] = ++close_clock_;
  link(block);
}

void BlockManager::renumber_stamps() {
  std::vector<uint32_t> closed;
  for (uint32_t b = first_; b < state_.size(); b++)
    if (state_[b] == kClosed) closed.push_back(b);
  std::sort(closed.begin(), closed.end(),
            [&](uint32_t a, uint32_t b) { return closed_at_[a] < closed_at_[b]; });
  close_clock_ = 0;
  for (uint32_t b : closed) closed_at_[b] = ++close_clock_;
}

void BlockManager::add_open(Head h, uint32_t block, uint32_t written, uint32_t valid) {
  assert(head_[int(h)] < 0 && written < ppb_);
  state_[block] = kOpen;
  valid_[block] = uint16_t(valid);
  written_[block] = uint16_t(written);
  head_[int(h)] = block;
}

void BlockManager::add_bad(uint32_t block) {
  state_[block] = kBad;
  bad_++;
}

void BlockManager::link(uint32_t b) {
  const int32_t h = bucket_[valid_[b]];
  prev_[b] = -1;
  next_[b] = h;
  if (h >= 0) prev_[h] = int32_t(b);
  bucket_[valid_[b]] = int32_t(b);
}

void BlockManager::unlink(uint32_t b) {
  if (prev_[b] >= 0) next_[prev_[b]] = next_[b];
  else bucket_[valid_[b]] = next_[b];
  if (next_[b] >= 0) prev_[next_[b]] = prev_[b];
  prev_[b] = next_[b] = -1;
}

void BlockManager::change_valid(uint32_t b, int d) {
  assert(d > 0 || valid_[b] > 0);  // Invariant: valid counts never go negative
  if (state_[b] == kClosed) {
    unlink(b);
    valid_[b] = uint16_t(valid_[b] + d);
    link(b);
  } else {
    valid_[b] = uint16_t(valid_[b] + d);
  }
}

uint64_t BlockManager::user_pages_available() const {
  uint64_t n = free_.size() > reserve_ ? uint64_t(free_.size() - reserve_) * ppb_ : 0;
  if (head_[0] >= 0) n += ppb_ - written_[head_[0]];
  return n;
}

uint64_t BlockManager::gc_pages_available() const {
  uint64_t n = uint64_t(free_.size()) * ppb_;
  if (head_[1] >= 0) n += ppb_ - written_[head_[1]];
  if (head_[0] >= 0 && ppb_ - written_[head_[0]] > user_keep_)  // the last ones: the user's
    n += ppb_ - written_[head_[0]] - user_keep_;
  return n;
}

Status BlockManager::next_page(Head h, Nand& nand, Ppa* out, bool after_failure) {
  // GC with no free block left finishes in the user head's remaining pages (after repeated
  // crashes mid-GC the reserve can be used up, and GC must still be able to run) — all but the
  // last user_keep, which stay for the user: a sync must always find its pages.
  if (h == Head::kGc && head_[1] < 0 && free_.empty() && head_[0] >= 0 &&
      ppb_ - written_[head_[0]] > user_keep_)
    h = Head::kUser;
  int64_t& head = head_[int(h)];
  while (head < 0) {
    if (free_.empty() || (h == Head::kUser && !after_failure && free_.size() <= reserve_))
      return Status::error(Errc::kFull, "no free erase block");
    const size_t i = pick_free(h, nand);
    const uint32_t b = free_[i];
    free_.erase(free_.begin() + ptrdiff_t(i));
    if (!erased_[b]) {
      erase_epoch_++;
      const Status st = erase_with_retries(nand, b);
      if (st.is(Errc::kBadBlock)) {  // worn out or failing: never used again
        PDL_TRY(retire(b, nand));
        continue;
      }
      if (!st.is_ok()) {
        free_.insert(free_.begin() + ptrdiff_t(i), b);
        return st;
      }
    }
    erased_[b] = 0;
    state_[b] = kOpen;
    written_[b] = 0;
    head = b;
  }
  *out = Ppa(uint64_t(head) * ppb_ + written_[head]);
  if (++written_[head] == ppb_) {  // last page handed out: the block is closed
    close(uint32_t(head));
    head = -1;
  }
  return Status::ok();
}

size_t BlockManager::pick_free(Head h, const Nand& nand) const {
  if (wl_threshold_ == 0) return 0;  // FIFO
  size_t best = 0;
  uint32_t best_ec = nand.erase_count(free_[0]);
  for (size_t i = 1; i < free_.size(); i++) {
    const uint32_t ec = nand.erase_count(free_[i]);
    if (h == Head::kUser ? ec < best_ec : ec > best_ec) {
      best = i;
      best_ec = ec;
    }
  }
  return best;
}

int64_t BlockManager::wl_victim(const Nand& nand) {
  if (wl_threshold_ == 0 || free_.empty() || wl_checked_ == erase_epoch_) return -1;
  uint32_t worn = 0;
  for (uint32_t b : free_) worn = std::max(worn, nand.erase_count(b));
  int64_t young = -1;
  uint32_t young_ec = 0;
  for (uint32_t b = first_; b < state_.size(); b++) {
    if (state_[b] != kClosed || retiring_[b] || scrubbing_[b]) continue;
    const uint32_t ec = nand.erase_count(b);
    if (young < 0 || ec < young_ec) {
      young = b;
      young_ec = ec;
    }
  }
  wl_checked_ = erase_epoch_;  // (a move erases, so the next call looks again)
  if (young >= 0 && worn >= young_ec && worn - young_ec >= wl_threshold_) return young;
  return -1;
}

int64_t BlockManager::greedy_victim() const {
  for (uint32_t v = 0; v < ppb_; v++)
    if (bucket_[v] >= 0) return bucket_[v];
  return -1;
}

int64_t BlockManager::oldest_victim() const {
  int64_t best = -1;
  for (uint32_t b = first_; b < state_.size(); b++)
    if (state_[b] == kClosed && valid_[b] < ppb_ &&
        (best < 0 || closed_at_[b] < closed_at_[size_t(best)]))
      best = b;
  return best;
}

void BlockManager::take(uint32_t block) {
  assert(state_[block] == kClosed);
  unlink(block);
  state_[block] = kCollecting;
}

void BlockManager::victim_erased(uint32_t block) {
  assert(state_[block] == kCollecting);
  erase_epoch_++;
  if (scrubbing_[block]) {  // erased: its cells hold their charge again
    scrubbing_[block] = 0;
    scrubbing_n_--;
    scrubbed_++;
  }
  add_free(block, true);
}

void BlockManager::close_head(uint32_t block) {
  for (int64_t& head : head_)
    if (head == int64_t(block)) {
      written_[block] = uint16_t(ppb_);
      close(block);
      head = -1;
    }
}

void BlockManager::retire_later(uint32_t block) {
  if (!retiring_[block]) retiring_n_++;
  retiring_[block] = 1;
  close_head(block);  // no more programs here
}

void BlockManager::scrub_later(uint32_t block) {
  if (scrubbing_[block] || retiring_[block] ||
      (state_[block] != kOpen && state_[block] != kClosed))
    return;
  scrubbing_[block] = 1;
  scrubbing_n_++;  // (an open head fills first: closing it early could break the space
                   // the current write was promised)
}

int64_t BlockManager::pending_victim() const {
  if (retiring_n_ == 0 && scrubbing_n_ == 0) return -1;
  for (uint32_t b = first_; b < state_.size(); b++)
    if ((retiring_[b] || scrubbing_[b]) && state_[b] == kClosed) return b;
  return -1;
}

Status BlockManager::retire(uint32_t block, Nand& nand) {
  assert(state_[block] == kCollecting || state_[block] == kFree);
  state_[block] = kBad;
  if (retiring_[block]) retiring_n_--;
  retiring_[block] = 0;
  if (scrubbing_[block]) scrubbing_n_--;
  scrubbing_[block] = 0;
  valid_[block] = 0;
  bad_++;
  retired_++;
  return nand.mark_bad(block);
}

}  // namespace pdl
