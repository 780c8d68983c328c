// ipl_merge.cc — reading a block's log region, replaying it, and the merge ([IPL] Alg. 1).
#include <algorithm>
#include <cstring>

#include "flash/ipl/ipl_store.h"
#include "flash/store/reread.h"

namespace pdl {

Status IplStore::read_log_pages(uint32_t lbn) {
  const LBlock& lb = lblocks_[lbn];
  return read_log_pages_of(lb.block, lb.used_sectors, lb.garbage);
}

Status IplStore::read_log_pages_of(uint32_t block, uint32_t used,
                                   const std::vector<uint32_t>& garbage) {
  if (nvm_) return read_nvm_log(block, used, garbage);
  const uint32_t pages = (used + sectors_per_page_ - 1) / sectors_per_page_;
  for (uint32_t p = 0; p < pages; p++) {
    const std::span<uint8_t> dst =
        std::span<uint8_t>(log_buf_).subspan(size_t(p) * geo_.page_data, geo_.page_data);
    const uint32_t first = p * sectors_per_page_;
    const uint32_t end = std::min(first + sectors_per_page_, used);
    bool passed;
    // A failed read does not poison the store (reread.h): the merge has changed nothing yet.
    PDL_TRY(read_with_retries(
        nand_, block * geo_.pages_per_block + dpb_ + p, dst, {},
        [&] {
          for (uint32_t i = first; i < end; i++) {
            if (std::find(garbage.begin(), garbage.end(), i) != garbage.end()) continue;
            SectorHeader h;
            std::span<const uint8_t> payload;
            if (sector_decode(dst.subspan(size_t(i - first) * log_sector_, log_sector_), &h,
                              &payload) != SectorState::kValid)
              return false;
          }
          return true;
        },
        &passed));
    if (!passed)
      return Status::error(Errc::kCorrupt, "log page " + std::to_string(p) + " of block " +
                                               std::to_string(block) + " fails its checks");
    note_read(block);
  }
  return Status::ok();
}

void IplStore::note_read(uint32_t block) {
  if (scrubbing_[block] || retiring_[block] || !read_needs_scrub(nand_)) return;
  scrubbing_[block] = true;
  scrubbing_n_++;
}

void IplStore::scrub_done(uint32_t block, bool erased) {
  if (!scrubbing_[block]) return;
  scrubbing_[block] = false;
  scrubbing_n_--;
  if (erased) stats_.blocks_scrubbed++;
}

// Merge the logical blocks of the blocks found weak; a merge that finds no room waits for a
// later write or sync (the data is still readable: the ECC corrects it).
Status IplStore::scrub_pending() {
  for (uint32_t b = 0; b < scrubbing_.size() && scrubbing_n_ > 0; b++) {
    if (!scrubbing_[b]) continue;
    // Freed meanwhile, leaving service, or no logical block's (the commit log's block is
    // replaced as it fills; a kept block is released at the commit).
    if (owner_[b] >= lblocks_.size() || retiring_[b]) {
      scrub_done(b, false);
      continue;
    }
    ledger_.charge_current();
    const Status st = merge(owner_[b], kNoLpn, {});
    ledger_.charge(ledger_.gc());
    if (st.is(Errc::kFull)) return Status::ok();
    PDL_TRY(st);
  }
  return Status::ok();
}

Status IplStore::wear_level() {
  if (params_.wear_level == 0 || free_.empty() || wl_checked_ == erase_epoch_)
    return Status::ok();
  wl_checked_ = erase_epoch_;
  uint32_t worn = 0;
  for (uint32_t b : free_) worn = std::max(worn, nand_.erase_count(b));
  int64_t young = -1;
  uint32_t young_ec = 0;
  for (uint32_t b = kSuperblockBlocks; b < owner_.size(); b++) {
    const uint32_t lbn = owner_[b];
    // A logical block's current block only; not one the open group changed (its committed
    // block is kept until the commit), nor one leaving service or waiting for a scrub.
    if (lbn >= lblocks_.size() || lblocks_[lbn].block != b || retiring_[b] || scrubbing_[b] ||
        bad_[b] || kept_.count(lbn) || touched_.count(lbn))
      continue;
    const uint32_t ec = nand_.erase_count(b);
    if (young < 0 || ec < young_ec) {
      young = b;
      young_ec = ec;
    }
  }
  if (young < 0 || worn < young_ec || worn - young_ec < params_.wear_level) return Status::ok();
  const uint64_t merges = stats_.merges, pages = stats_.merge_pages;
  const NandCounters before = nand_.counters();
  ledger_.charge_current();
  wl_move_ = true;
  const Status st = merge(owner_[uint32_t(young)], kNoLpn, {});
  wl_move_ = false;
  ledger_.charge(ledger_.gc());
  stats_.wl_runs += stats_.merges - merges;
  stats_.wl_page_moves += stats_.merge_pages - pages;
  stats_.wl_erases += (nand_.counters() - before).erases;
  stats_.merges = merges;
  stats_.merge_pages = pages;
  if (st.is(Errc::kFull)) return Status::ok();  // no room now: after the next erase
  return st;
}

Status IplStore::replay(uint32_t lbn, uint32_t slot, std::span<uint8_t> page, bool* mapped) const {
  return replay_used(lbn, lblocks_[lbn].used_sectors, slot, page, mapped, false);
}

Status IplStore::replay_used(uint32_t lbn, uint32_t used, uint32_t slot, std::span<uint8_t> page,
                             bool* mapped, bool committed_only) const {
  return walk_log(log_buf_, log_sector_, used, lbn,
                  [&](const SectorHeader& h, std::span<const std::span<const uint8_t>> parts) {
                    if (void_seq(h.seq) || (committed_only && h.seq > committed_seq_))
                      return Status::ok();
                    if (h.flags & kSectorUnmap) {
                      if (unmap_has(parts[0], slot)) {
                        std::fill(page.begin(), page.end(), 0);
                        *mapped = false;
                      }
                      return Status::ok();
                    }
                    if (h.slot != slot) return Status::ok();
                    if (h.flags & kSectorReset) {
                      std::fill(page.begin(), page.end(), 0);
                      *mapped = true;
                    }
                    for (const auto& p : parts) PDL_TRY(log_apply(p, page));
                    return Status::ok();
                  });
}

// Free blocks are reused first in, first out; one not known to be erased (every free block after
// a mount: an interrupted erase may leave marginal bits that read back as erased) is erased
// before use. That erase is the mount's deferred work, charged to `other`, as PDL does. A block
// whose erase fails is retired and the next one taken.
// With wear levelling on (params_.wear_level > 0) the free block is chosen by erase count
// instead: the least-worn for an ordinary merge (its logical block is being written: hot), the
// most-worn for a wear-levelling move (a cold logical block).
Status IplStore::allocate_block(uint32_t* block) {
  for (;;) {
    if (free_.empty())  // only once blocks went bad: owned <= logical blocks <= data - reserve
      return Status::error(Errc::kFull, "no free erase block for a merge");
    size_t i = 0;
    if (params_.wear_level > 0)
      for (size_t j = 1; j < free_.size(); j++) {
        const uint32_t ec = nand_.erase_count(free_[j]), best = nand_.erase_count(free_[i]);
        if (wl_move_ ? ec > best : ec < best) i = j;
      }
    const uint32_t b = free_[i];
    free_.erase(free_.begin() + ptrdiff_t(i));
    if (!erased_[b]) {
      erase_epoch_++;
      const NandCounters before = nand_.counters();
      const Status st = erase_with_retries(nand_, b);
      ledger_.charge_since(ledger_.other(), before);
      if (st.is(Errc::kBadBlock)) {
        PDL_TRY(retire(b));
        continue;
      }
      if (!st.is_ok()) free_.insert(free_.begin() + ptrdiff_t(i), b);
      PDL_TRY(fail(st));
    }
    erased_[b] = false;
    *block = b;
    return Status::ok();
  }
}

Status IplStore::retire(uint32_t block) {
  bad_[block] = true;
  retiring_[block] = false;
  erased_[block] = false;
  bad_count_++;
  stats_.blocks_retired++;
  return fail(nand_.mark_bad(block));
}

Status IplStore::release_block(uint32_t block) {
  erase_epoch_++;
  const Status est = retiring_[block] ? Status::error(Errc::kBadBlock, "retiring")
                                      : erase_with_retries(nand_, block);
  owner_[block] = kNoBlock;
  scrub_done(block, !est.is(Errc::kBadBlock) && est.is_ok());
  if (est.is(Errc::kBadBlock)) return retire(block);
  PDL_TRY(fail(est));
  erased_[block] = true;
  free_.push_back(block);
  return Status::ok();
}

Status IplStore::relocate(uint32_t lbn, Lpn lpn, std::span<const uint8_t> page) {
  ledger_.charge_current();
  const Status st = merge(lbn, lpn, page);
  ledger_.charge(ledger_.gc());
  return st;
}

// The current version of every page of the logical block: the data page plus its log records
// (`lpn`'s new version if given); trimmed pages are not live.
Status IplStore::collect_current(uint32_t lbn, Lpn lpn, std::span<const uint8_t> page,
                                 uint32_t* live) {
  const LBlock& lb = lblocks_[lbn];
  const uint32_t n = lpns_in(lbn);
  const Lpn first = first_lpn(lbn);
  merge_buf_.resize(size_t(n) * geo_.page_data);
  merge_live_.assign(n, false);
  bool logs = false;
  for (uint32_t s = 0; s < n; s++) logs |= lpns_[first + s].mapped && lpns_[first + s].has_log;
  if (logs) PDL_TRY(read_log_pages(lbn));
  *live = 0;
  for (uint32_t s = 0; s < n; s++) {
    const Lpn l = first + s;
    const LpnState& st = lpns_[l];
    const std::span<uint8_t> p =
        std::span<uint8_t>(merge_buf_).subspan(size_t(s) * geo_.page_data, geo_.page_data);
    if (l == lpn) {
      std::memcpy(p.data(), page.data(), p.size());
    } else {
      if (!st.mapped) continue;
      if (st.slot == Slot::kData)
        PDL_TRY(read_data(lb.block, s, l, p));
      else
        std::fill(p.begin(), p.end(), 0);
      bool mapped = st.slot == Slot::kData;
      if (st.has_log) PDL_TRY(replay(lbn, s, p, &mapped));
      if (!mapped) continue;
    }
    merge_live_[s] = true;
    ++*live;
  }
  return Status::ok();
}

Status IplStore::program_merge(uint32_t lbn, std::span<const uint8_t> pages,
                               const std::vector<bool>& live, uint8_t flag,
                               const std::function<Status(uint32_t)>& after, uint32_t* nb) {
  const uint32_t n = uint32_t(live.size());
  const Lpn first = first_lpn(lbn);
  const uint32_t count = uint32_t(std::count(live.begin(), live.end(), true));
  const uint64_t seq = next_seq_++;
  for (uint32_t attempt = 0;; attempt++) {
    PDL_TRY(allocate_block(nb));
    Status st;
    if (count == 0) {
      std::fill(page_buf_.begin(), page_buf_.end(), 0);
      st = program_data(*nb, 0, lbn, page_buf_, seq, 0, PageType::kIplEmpty, flag);
    }
    for (uint32_t s = 0; s < n && st.is_ok(); s++)
      if (live[s])
        st = program_data(*nb, s, first + s,
                          pages.subspan(size_t(s) * geo_.page_data, geo_.page_data), seq, count,
                          PageType::kIplData, flag);
    if (st.is_ok() && after) st = after(*nb);
    if (st.is_ok()) return Status::ok();
    if (!st.is(Errc::kBadBlock) || attempt + 1 >= kProgramAttempts) return fail(st);
    PDL_TRY(retire(*nb));
  }
}

void IplStore::install_merge(uint32_t lbn, uint32_t nb, const std::vector<bool>& data,
                             const std::vector<bool>& mapped, const std::vector<bool>& logged,
                             uint32_t used) {
  LBlock& lb = lblocks_[lbn];
  lb.block = nb;
  lb.used_sectors = used;
  lb.garbage.clear();
  owner_[nb] = lbn;
  const bool marker = std::find(data.begin(), data.end(), true) == data.end();
  for (uint32_t s = 0; s < data.size(); s++) {
    LpnState& st = lpns_[first_lpn(lbn) + s];
    st.slot = data[s] ? Slot::kData : (marker && s == 0) ? Slot::kGarbage : Slot::kErased;
    st.mapped = mapped[s];
    st.has_log = logged[s];
    st.trim_pending = false;
  }
}

// Alg. 1: the current version of every live page of the logical block (the data page plus its
// log records; `lpn`'s new version if given) goes to an erased block at the same slot, all with
// one sequence number and the merge's page count; then the old block is erased. Trimmed pages
// are left out. A merge that keeps no page writes a marker page, so the empty version outranks
// the old block at recovery even if the old block's erase is cut.
Status IplStore::merge(uint32_t lbn, Lpn lpn, std::span<const uint8_t> page) {
  if (groups_) return merge_group(lbn, lpn, page);
  uint32_t live, nb;
  PDL_TRY(collect_current(lbn, lpn, page, &live));
  PDL_TRY(program_merge(lbn, merge_buf_, merge_live_, self_commit() ? kSpareFlagCommit : 0,
                        nullptr, &nb));
  PDL_TRY(release_block(lblocks_[lbn].block));
  install_merge(lbn, nb, merge_live_, merge_live_, std::vector<bool>(merge_live_.size(), false),
                0);
  if (lpn != kNoLpn) drop_hints(lpn);
  stats_.merges++;
  stats_.merge_pages += live;
  return Status::ok();
}

}  // namespace pdl
