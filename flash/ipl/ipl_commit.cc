// ipl_commit.cc — IPL's atomic groups ([IPL] §5): the commit log, commit, abort, the selective
// and shadow merges, and the purge of void items (ipl_store.h explains the design).
//
// What makes a group atomic:
//   * every item the group programs — a first write's data page, a log write, an unmap record,
//     a selective merge's carried records, a shadow merge's group pages — has a seq at or above
//     group_start_, and counts at recovery only if a commit record's seq covers it;
//   * the commit record is appended to the commit log after every item of the group, with a
//     fresh seq above them all ([IPL] §5.2: a committing transaction's log sectors are on flash
//     before it is committed — here they were programmed at the pages' eviction);
//   * a merge never destroys a committed version before the commit: the selective merge copies
//     the committed versions into the new block's data pages (its pages carry no flag and
//     count whatever happens to the group), the shadow merge keeps the old block (kept_);
//   * no void item outlives the next commit record: abort() and mount hand purge() the blocks
//     holding void items, and purge() merges (or erases) them before the next group changes
//     anything — so before any later commit record;
//   * the newest commit record is never erased before a newer one is on flash (the commit
//     log's previous block is released only after the record in the new block).
// Invariant: outside a group (after commit or abort) kept_ and touched_ are empty, and every
// void item on flash is in a block purge() will merge or erase.
#include <algorithm>
#include <cassert>
#include <cstring>

#include "flash/ipl/ipl_store.h"
#include "flash/codec/differential.h"
#include "flash/store/reread.h"

namespace pdl {

uint32_t IplStore::usable_blocks() const {
  uint32_t n = 0;
  for (uint32_t b = kSuperblockBlocks; b < geo_.blocks; b++) n += bad_[b] ? 0 : 1;
  return n;
}

void IplStore::touch(uint32_t lbn) {
  if (!groups_) return;
  touched_.insert(lbn);
  group_dirty_ = true;
}

Status IplStore::set_commit_mode(CommitMode mode) {
  const bool groups = mode == CommitMode::kGroup && log_sectors_per_block() > 0;  // not IPU
  if (groups == groups_) return Status::ok();
  if (!groups) {
    if (dirty()) PDL_TRY(sync());
    groups_ = false;
    return Status::ok();
  }
  if (legacy_)
    return Status::error(Errc::kUnsupported,
                         "a store of superblock format 1 has no commit records: upgrade it "
                         "before using atomic groups");
  // Room: every logical block's erase block, the commit log's, and one for a merge (a merge and
  // a switch of the commit log's block never overlap). Without it — a store of format 1's size,
  // or one that lost blocks to wear — the store stays per-page (atomic() false), as IPU does.
  if (usable_blocks() < lblocks_.size() + 2) return Status::ok();
  groups_ = true;
  // Everything programmed per page so far committed itself — unless void items of a crashed
  // group still wait for their purge (nothing was programmed since the mount then).
  if (purge_blocks_.empty() && purge_lbns_.empty()) committed_seq_ = next_seq_ - 1;
  group_start_ = next_seq_;
  return Status::ok();
}

Status IplStore::upgrade_format() {
  if (!legacy_ || log_sectors_per_block() == 0) return Status::ok();  // (IPU stays format 1)
  if (!poisoned_.is_ok()) return poisoned_;
  PDL_TRY(sync());
  // Too few blocks for a commit log: the store stays format 1 (commit=journal only).
  if (usable_blocks() < lblocks_.size() + 2 || free_.size() < 2) return Status::ok();
  CostLedger::Scope cost(ledger_, ledger_.other());
  // A commit record covering everything format 1 wrote, before the superblock says format 2.
  const uint64_t seq = next_seq_ - 1;
  legacy_ = false;
  const Status st = append_commit(seq);
  if (!st.is_ok()) {
    legacy_ = true;
    return st;
  }
  committed_seq_ = seq;
  group_start_ = next_seq_;
  return fail(nand_.flush());
}

// The commit log: sectors of its own erase block (the log region's pages, like a logical
// block's), each a commit record. When the block is full, the next record opens another block
// and only then is the previous one released.
// With NVM the record goes to the NVM commit area instead (ipl_nvm_log.cc).
Status IplStore::append_commit(uint64_t seq) {
  if (nvm_) {
    return fail(write_nvm_commit(seq));
  }
  SectorHeader h;
  h.lbn = kCommitLogLbn;
  h.slot = kUnmapSlot;
  h.flags = kSectorCommit;
  h.seq = seq;
  sector_encode(h, {}, sector_buf_);
  uint32_t previous = kNoBlock;
  for (uint32_t attempt = 0;; attempt++) {
    if (commit_block_ == kNoBlock || commit_used_ >= log_sectors_per_block() ||
        retiring_[commit_block_]) {
      uint32_t nb;
      PDL_TRY(allocate_block(&nb));
      if (commit_block_ != kNoBlock) {
        if (previous != kNoBlock) PDL_TRY(release_block(commit_block_));  // a failed new one
        else previous = commit_block_;
      }
      commit_block_ = nb;
      commit_used_ = 0;
      owner_[nb] = kCommitOwner;
    }
    const uint32_t sec = commit_used_++;
    const Status st = as_program_status(nand_.program(
        log_ppa(commit_block_, sec), sector_buf_, {}, (sec % sectors_per_page_) * log_sector_));
    if (st.is(Errc::kBadBlock) && attempt + 1 < kProgramAttempts) {
      stats_.program_retries++;
      retiring_[commit_block_] = true;
      continue;
    }
    PDL_TRY(fail(st));
    stats_.log_sectors++;
    break;
  }
  // The newest record is on flash: the block holding the older ones may go.
  if (previous != kNoBlock) PDL_TRY(release_block(previous));
  return Status::ok();
}

Status IplStore::commit_group() {
  const uint64_t seq = next_seq_++;
  PDL_TRY(append_commit(seq));
  committed_seq_ = seq;
  group_start_ = next_seq_;
  // Committed: the blocks that held the replaced versions are stale now.
  for (auto& [lbn, k] : kept_) PDL_TRY(release_block(k.block));
  kept_.clear();
  touched_.clear();
  group_dirty_ = false;
  group_programs_ = 0;
  stats_.commits++;
  stats_.commit_markers++;
  return Status::ok();
}

Status IplStore::abort() {
  PDL_TRY(changeable());  // (halted: the Volume mounts the store again instead)
  if (!groups_)
    return Status::error(Errc::kUnsupported, "no atomic groups: every page counts once written");
  CostLedger::Scope cost(ledger_, ledger_.other());
  stats_.aborts++;
  // Half an abort leaves tables that are neither the group's nor the committed ones: the store
  // then stops (poisoned) until a remount, whose recovery finds the last commit.
  const Status st = abort_group();
  if (!st.is_ok() && poisoned_.is_ok())
    poisoned_ = Status::error(st.code(), "an abort failed: " + std::string(st.message()));
  return st;
}

Status IplStore::abort_group() {
  stats_.void_pages += group_programs_;
  // Everything handed out so far is void from now on.
  group_start_ = next_seq_;
  for (const uint32_t lbn : touched_) {
    const Lpn first = first_lpn(lbn);
    for (uint32_t s = 0; s < lpns_in(lbn); s++) lpns_[first + s].trim_pending = false;
    const auto k = kept_.find(lbn);
    if (k != kept_.end()) {  // the shadow merge's block goes; the committed block is back
      LBlock& lb = lblocks_[lbn];
      PDL_TRY(release_block(lb.block));
      lb.block = k->second.block;
      lb.used_sectors = k->second.used_sectors;
      lb.garbage = k->second.garbage;
      owner_[lb.block] = lbn;
      for (uint32_t s = 0; s < lpns_in(lbn); s++) lpns_[first + s].slot = k->second.slots[s];
    }
    PDL_TRY(rebuild(lbn));
    // Its void items go before anything else is programmed (purge; not now: a rollback on a
    // full chip must not need a free block).
    if (lblocks_[lbn].block != kNoBlock) purge_lbns_.insert(lbn);
  }
  trims_.clear();
  kept_.clear();
  touched_.clear();
  group_dirty_ = false;
  group_programs_ = 0;
  return Status::ok();
}

// The committed state of lbn's pages from its block on flash: reads only.
Status IplStore::rebuild(uint32_t lbn) {
  const LBlock& lb = lblocks_[lbn];
  const Lpn first = first_lpn(lbn);
  const uint32_t n = lpns_in(lbn);
  if (lb.block == kNoBlock) {
    for (uint32_t s = 0; s < n; s++) lpns_[first + s] = LpnState{};
    return Status::ok();
  }
  for (uint32_t s = 0; s < n; s++) {
    LpnState& st = lpns_[first + s];
    st.mapped = false;
    st.has_log = false;
    if (st.slot != Slot::kData) continue;
    SpareHeader h;
    PDL_TRY(read_data(lb.block, s, first + s, page_buf_, &h));
    if (h.seq <= committed_seq_ || (h.aux > 0 && !h.group)) st.mapped = true;
    else st.slot = Slot::kGarbage;  // a void first write
  }
  if (lb.used_sectors == 0) return Status::ok();
  PDL_TRY(read_log_pages(lbn));
  return walk_log(log_buf_, log_sector_, lb.used_sectors, lbn,
                  [&](const SectorHeader& h, std::span<const std::span<const uint8_t>> parts) {
                    if (h.seq > committed_seq_) return Status::ok();
                    for (uint32_t s = 0; s < n; s++) {
                      LpnState& st = lpns_[first + s];
                      if (h.flags & kSectorUnmap) {
                        if (!unmap_has(parts[0], s)) continue;
                        st.mapped = false;
                      } else if (h.slot != s) {
                        continue;
                      } else if (h.flags & kSectorReset) {
                        st.mapped = true;
                      }
                      st.has_log = true;
                      if (st.slot == Slot::kErased) st.slot = Slot::kGarbage;
                    }
                    return Status::ok();
                  });
}

// Called before the open group changes anything (write, trim, a sync with work): its merges
// rebuild logical blocks from their committed versions.
Status IplStore::purge() {
  if (purge_blocks_.empty() && purge_lbns_.empty()) return Status::ok();
  if (!poisoned_.is_ok()) return poisoned_;
  assert(touched_.empty() || !groups_);
  for (const uint32_t b : purge_blocks_) {
    if (owner_[b] != kNoBlock || bad_[b] || erased_[b]) continue;  // reused (erased) since
    const Status st = erase_with_retries(nand_, b);
    if (st.is(Errc::kBadBlock)) {
      free_.erase(std::find(free_.begin(), free_.end(), b));
      PDL_TRY(retire(b));
      continue;
    }
    PDL_TRY(fail(st));
    erased_[b] = true;
    stats_.purged_blocks++;
  }
  purge_blocks_.clear();
  while (!purge_lbns_.empty()) {
    const uint32_t lbn = *purge_lbns_.begin();
    // A merge of the committed versions, flagged neither commit nor group: it counts whatever
    // becomes of the group, and covers no seq (void items elsewhere wait for their turn).
    PDL_TRY(collect_committed(lbn));
    uint32_t nb;
    PDL_TRY(program_merge(lbn, commit_buf_, commit_live_, 0, nullptr, &nb));
    PDL_TRY(release_block(lblocks_[lbn].block));
    install_merge(lbn, nb, commit_live_, commit_live_,
                  std::vector<bool>(commit_live_.size(), false), 0);
    purge_lbns_.erase(lbn);
    stats_.merges++;
    stats_.purged_blocks++;
  }
  return Status::ok();
}

// The committed version of each page: a data page counts if a commit covers it or it is a
// neutral merge's (no group flag), then the committed log records. From the kept block when a
// shadow merge of the open group holds the logical block's place.
Status IplStore::collect_committed(uint32_t lbn) {
  const uint32_t n = lpns_in(lbn);
  const Lpn first = first_lpn(lbn);
  const LBlock& lb = lblocks_[lbn];
  const auto k = kept_.find(lbn);
  const uint32_t block = k != kept_.end() ? k->second.block : lb.block;
  const uint32_t used = k != kept_.end() ? k->second.used_sectors : lb.used_sectors;
  const std::vector<uint32_t>& garbage = k != kept_.end() ? k->second.garbage : lb.garbage;
  commit_buf_.resize(size_t(n) * geo_.page_data);
  commit_live_.assign(n, false);
  if (block == kNoBlock) return Status::ok();
  if (used > 0) PDL_TRY(read_log_pages_of(block, used, garbage));
  for (uint32_t s = 0; s < n; s++) {
    const std::span<uint8_t> p =
        std::span<uint8_t>(commit_buf_).subspan(size_t(s) * geo_.page_data, geo_.page_data);
    const Slot slot = k != kept_.end() ? k->second.slots[s] : lpns_[first + s].slot;
    bool mapped = false;
    if (slot == Slot::kData) {
      SpareHeader h;
      PDL_TRY(read_data(block, s, first + s, p, &h));
      mapped = h.seq <= committed_seq_ || (h.aux > 0 && !h.group);
    }
    if (!mapped) std::fill(p.begin(), p.end(), 0);
    if (used > 0) PDL_TRY(replay_used(lbn, used, s, p, &mapped, true));
    commit_live_[s] = mapped;
  }
  return Status::ok();
}

// A merge inside a group. Untouched by the group: a plain merge (its pages count whatever
// happens to the group). Otherwise the selective merge — committed versions as data pages, the
// group's changes carried over as one log write per changed page (its difference from the
// committed version) and one unmap record — if those fit the new log region; else the shadow
// merge — current versions as group pages, the committed block kept until the commit.
Status IplStore::merge_group(uint32_t lbn, Lpn lpn, std::span<const uint8_t> page) {
  const uint32_t n = lpns_in(lbn);
  const bool shadowed = kept_.count(lbn) != 0;
  if (lpn != kNoLpn) touch(lbn);
  uint32_t live, nb;
  PDL_TRY(collect_current(lbn, lpn, page, &live));
  const std::vector<bool> none(n, false);
  if (touched_.count(lbn) == 0) {  // nothing of the group here: a plain merge
    PDL_TRY(program_merge(lbn, merge_buf_, merge_live_, 0, nullptr, &nb));
    PDL_TRY(release_block(lblocks_[lbn].block));
    install_merge(lbn, nb, merge_live_, merge_live_, none, 0);
    stats_.merges++;
    stats_.merge_pages += live;
    return Status::ok();
  }
  PDL_TRY(collect_committed(lbn));

  // The group's changes, page by page.
  struct Carry {
    uint16_t slot;
    uint8_t flags;
    LogSplitter split;  // a log sector's payload each
  };
  std::vector<Carry> carries;
  std::vector<uint8_t> unmap((dpb_ + 7) / 8, 0);
  bool any_unmap = false;
  std::vector<bool> logged(n, false);
  uint32_t sectors = 0;
  bool fits = true;
  for (uint32_t s = 0; s < n && fits; s++) {
    const auto cur = std::span<const uint8_t>(merge_buf_).subspan(size_t(s) * geo_.page_data,
                                                                  geo_.page_data);
    const auto com = std::span<const uint8_t>(commit_buf_).subspan(size_t(s) * geo_.page_data,
                                                                   geo_.page_data);
    if (!merge_live_[s]) {
      if (commit_live_[s]) {
        unmap[s / 8] |= uint8_t(1u << (s % 8));
        any_unmap = true;
        logged[s] = true;
      }
      continue;
    }
    if (commit_live_[s] && std::equal(cur.begin(), cur.end(), com.begin())) continue;
    Carry c{uint16_t(s), uint8_t(commit_live_[s] ? 0 : kSectorReset),
            LogSplitter(log_sector_ - kSectorHeader)};
    if (!commit_live_[s]) std::fill(prev_buf_.begin(), prev_buf_.end(), 0);
    const size_t r = diff_encode(commit_live_[s] ? com : std::span<const uint8_t>(prev_buf_), cur,
                                 runs_buf_);
    if (r == kDiffTooBig) c.split.add(0, cur);
    else c.split.add_runs(std::span<const uint8_t>(runs_buf_).first(r));
    const uint32_t k = std::max<uint32_t>(1, uint32_t(c.split.payloads()));
    fits = k <= 255;
    sectors += k;
    logged[s] = true;
    carries.push_back(std::move(c));
  }
  sectors += any_unmap ? 1 : 0;
  fits = fits && sectors <= log_sectors_per_block();

  const uint32_t old = lblocks_[lbn].block;
  if (fits) {  // the selective merge
    uint32_t used = 0;
    auto carry = [&](uint32_t block) {
      used = 0;
      for (const Carry& c : carries)
        PDL_TRY(program_write(block, &used, lbn, c.slot, c.flags, c.split, {}));
      if (any_unmap)
        PDL_TRY(program_write(block, &used, lbn, kUnmapSlot, kSectorUnmap, carry_splitter_,
                              unmap));
      return Status::ok();
    };
    const std::vector<bool> data = commit_live_;
    PDL_TRY(program_merge(lbn, commit_buf_, data, 0, carry, &nb));
    PDL_TRY(release_block(old));
    if (shadowed) {
      PDL_TRY(release_block(kept_[lbn].block));
      kept_.erase(lbn);
    }
    install_merge(lbn, nb, data, merge_live_, logged, used);
    for (uint32_t s = 0; s < n; s++)  // a carried write over an erased slot: no first write
      if (logged[s] && !data[s]) lpns_[first_lpn(lbn) + s].slot = Slot::kGarbage;
    group_programs_ += sectors;
    stats_.merge_pages += uint32_t(std::count(data.begin(), data.end(), true));
  } else {  // the shadow merge
    // One block is taken until the commit; one must stay for a merge or the commit log.
    if (free_.size() < 2)
      return Status::error(Errc::kFull,
                           "the open transaction changed more of logical block " +
                               std::to_string(lbn) + " than its log region holds, and no erase "
                               "block is free to keep the committed version until the commit");
    PDL_TRY(program_merge(lbn, merge_buf_, merge_live_, kSpareFlagGroup, nullptr, &nb));
    if (shadowed) {
      PDL_TRY(release_block(old));  // the group's own earlier shadow
    } else {
      Kept kb;
      kb.block = old;
      kb.used_sectors = lblocks_[lbn].used_sectors;
      kb.garbage = lblocks_[lbn].garbage;
      for (uint32_t s = 0; s < n; s++) kb.slots.push_back(lpns_[first_lpn(lbn) + s].slot);
      kept_[lbn] = std::move(kb);
      owner_[old] = kKeptOwner;
    }
    install_merge(lbn, nb, merge_live_, merge_live_, none, 0);
    group_programs_ += std::max<uint32_t>(1, live);
    stats_.merge_pages += live;
  }
  if (lpn != kNoLpn) drop_hints(lpn);
  stats_.merges++;
  return Status::ok();
}

}  // namespace pdl
