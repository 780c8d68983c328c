// hybrid_merge.cc — HybridStore's merges ([BAST], [FAST]: switch, partial, full, and FAST's
// victim merge of a random log block), block allocation, release and retirement.
//
// Crash safety (hybrid_store.h): a merge programs every copy first (same seq, the next copy
// generation; a full merge's copies also say how many it writes, so recovery can tell a
// complete one, which wins the ties, from a cut one, which loses them) and only then moves the
// maps and erases blocks that hold no current record, so a cut anywhere leaves every current
// record on flash.
#include <algorithm>
#include <set>
#include <string>

#include "flash/ftl/hybrid_store.h"
#include "flash/store/reread.h"

namespace pdl {

// Free blocks are taken first in, first out. One not known erased (every free block after a
// mount) is erased first, charged to `other` as the mount's deferred work; a block whose erase
// fails is retired and the next one taken.
Status HybridStore::allocate_block(uint32_t* block) {
  for (;;) {
    if (free_.empty())
      return Status::error(Errc::kFull, "no free erase block (" + std::to_string(bad_count_) +
                                            " blocks are bad)");
    const uint32_t b = free_.front();
    free_.pop_front();
    if (!erased_[b]) {
      const NandCounters before = nand_.counters();
      const Status st = erase_with_retries(nand_, b);
      ledger_.charge_since(ledger_.other(), before);
      if (st.is(Errc::kBadBlock)) {
        PDL_TRY(retire(b));
        continue;
      }
      if (!st.is_ok()) free_.push_front(b);
      PDL_TRY(fail(st));
    }
    erased_[b] = false;
    blocks_[b] = Block{};
    forget_pages(b);
    *block = b;
    return Status::ok();
  }
}

void HybridStore::forget_pages(uint32_t b) {
  const auto first = ptrdiff_t(ppa(b, 0)), end = ptrdiff_t(ppa(b + 1, 0));
  std::fill(page_lpn_.begin() + first, page_lpn_.begin() + end, kNone);
  std::fill(page_seq_.begin() + first, page_seq_.begin() + end, 0);
  std::fill(page_aux_.begin() + first, page_aux_.begin() + end, 0);
  std::fill(page_trim_.begin() + first, page_trim_.begin() + end, false);
}

Status HybridStore::retire(uint32_t block) {
  forget_pages(block);  // (never read again)
  blocks_[block] = Block{};
  blocks_[block].role = Role::kBad;
  retiring_[block] = false;
  erased_[block] = false;
  scrubbing_.erase(block);
  bad_count_++;
  stats_.blocks_retired++;
  return fail(nand_.mark_bad(block));
}

Status HybridStore::release_block(uint32_t block) {
  if (blocks_[block].valid != 0)
    return fail(Status::error(Errc::kCorrupt, "block " + std::to_string(block) + " released with " +
                                                  std::to_string(blocks_[block].valid) +
                                                  " current records"));
  forget_pages(block);
  blocks_[block] = Block{};
  if (retiring_[block]) return retire(block);
  stats_.gc_runs++;  // a block a merge collected
  const Status st = erase_with_retries(nand_, block);
  if (scrubbing_.erase(block) && st.is_ok()) stats_.blocks_scrubbed++;
  if (st.is(Errc::kBadBlock)) return retire(block);
  PDL_TRY(fail(st));
  erased_[block] = true;
  free_.push_back(block);
  return Status::ok();
}

void HybridStore::drop_bast_log(uint32_t lbn) {
  bast_logs_.erase(std::find(bast_logs_.begin(), bast_logs_.end(), log_[lbn]));
  log_[lbn] = kNone;
}

void HybridStore::count_merge(uint64_t* kind, uint64_t pages) {
  ++*kind;
  stats_.merges++;
  stats_.merge_pages += pages;
}

Status HybridStore::copy_record(Ppa from, Lpn lpn, uint32_t to_block, uint32_t page_no,
                                uint32_t merge_records) {
  SpareHeader h;
  PDL_TRY(read_record(from, lpn, &h));
  const std::span<const uint8_t> data = h.type == PageType::kFtlTrim
                                            ? std::span<const uint8_t>()
                                            : std::span<const uint8_t>(page_buf_);
  return program_record(to_block, page_no, lpn, data, h.seq,
                        make_aux(aux_generation(h.aux) + 1, merge_records));
}

// Switch when the log block holds every offset at its page (or neither has the page); partial
// when that holds for its programmed prefix: the rest is copied in; else a full merge.
Status HybridStore::merge_log(uint32_t lbn, uint32_t log) {
  const uint32_t n = lpns_in(lbn), first = lbn * ppb();
  const uint32_t k = blocks_[log].wp;
  bool sequential = !retiring_[log] && k <= n;
  for (uint32_t i = 0; sequential && i < k; i++) {
    const Ppa p = ppa(log, i);
    sequential = cur_[first + i] == p || (cur_[first + i] == kNoPpa && page_lpn_[p] == kNone);
  }
  if (sequential) {
    uint64_t copies = 0;
    Status st;
    const uint32_t old = data_[lbn];
    // Only the records the data block holds: FAST's in random log blocks stay there (they are
    // merged with their victim), and those originals would outrank copies at a mount.
    auto from_data = [&](uint32_t i) {
      return old != kNone && cur_[first + i] != kNoPpa && block_of(cur_[first + i]) == old;
    };
    for (uint32_t i = k; i < n && st.is_ok(); i++) {
      if (!from_data(i)) continue;
      st = copy_record(cur_[first + i], first + i, log, i, 0);
      if (st.is_ok()) copies++;
    }
    if (!st.is(Errc::kBadBlock)) {  // (a failed copy closed the log block: a full merge)
      PDL_TRY(st);
      for (uint32_t i = k; i < n; i++)
        if (from_data(i)) set_current(first + i, ppa(log, i), mapped_[first + i]);
      data_[lbn] = log;
      blocks_[log].role = Role::kData;
      blocks_[log].lbn = lbn;
      if (fast()) seq_block_ = kNone;
      else drop_bast_log(lbn);
      count_merge(copies == 0 ? &stats_.switch_merges : &stats_.partial_merges, copies);
      if (old != kNone && old != log) PDL_TRY(release_block(old));
      return Status::ok();
    }
  }
  return full_merge(lbn);
}

Status HybridStore::full_merge(uint32_t lbn) {
  const uint32_t n = lpns_in(lbn), first = lbn * ppb();
  uint32_t records = 0;
  for (uint32_t i = 0; i < n; i++) records += cur_[first + i] != kNoPpa;
  for (int attempt = 0; attempt < kProgramAttempts; attempt++) {
    uint32_t nb;
    PDL_TRY(allocate_block(&nb));
    blocks_[nb].role = Role::kExtra;  // (until installed)
    blocks_[nb].lbn = lbn;
    uint64_t copies = 0;
    Status st;
    for (uint32_t i = 0; i < n && st.is_ok(); i++) {
      if (cur_[first + i] == kNoPpa) continue;
      st = copy_record(cur_[first + i], first + i, nb, i, records);
      if (st.is_ok()) copies++;
    }
    if (st.is(Errc::kBadBlock)) {  // retire the new block (it holds no current record)
      PDL_TRY(release_block(nb));
      continue;
    }
    if (!st.is_ok()) {
      // Nothing installed: the new block goes back (a read failed; a device error poisoned).
      const Status rst = poisoned_.is_ok() ? release_block(nb) : Status::ok();
      PDL_TRY(rst);
      return st;
    }
    for (uint32_t i = 0; i < n; i++)
      if (cur_[first + i] != kNoPpa) set_current(first + i, ppa(nb, i), mapped_[first + i]);
    std::vector<uint32_t> old = extras_[lbn];
    extras_[lbn].clear();
    unsettled_.erase(lbn);
    if (data_[lbn] != kNone) old.push_back(data_[lbn]);
    data_[lbn] = nb;
    blocks_[nb].role = Role::kData;
    if (!fast() && log_[lbn] != kNone) {
      old.push_back(log_[lbn]);
      drop_bast_log(lbn);
    }
    if (fast() && seq_block_ != kNone && blocks_[seq_block_].lbn == lbn) {
      old.push_back(seq_block_);
      seq_block_ = kNone;
    }
    count_merge(&stats_.full_merges, copies);
    for (uint32_t b : old) PDL_TRY(release_block(b));
    return Status::ok();
  }
  return fail(Status::error(Errc::kIoError, "merge of logical block " + std::to_string(lbn) +
                                                ": programs failed in " +
                                                std::to_string(kProgramAttempts) + " blocks"));
}

Status HybridStore::merge_random(uint32_t block) {
  std::set<uint32_t> lbns;
  for (uint32_t i = 0; i < blocks_[block].wp; i++) {
    const Ppa p = ppa(block, i);
    const uint32_t l = page_lpn_[p];
    if (l != kNone && cur_[l] == p) lbns.insert(lbn_of(l));
  }
  for (uint32_t lbn : lbns) PDL_TRY(full_merge(lbn));
  for (auto it = random_.begin(); it != random_.end(); ++it)
    if (*it == block) {
      random_.erase(it);
      break;
    }
  return release_block(block);
}

}  // namespace pdl
