// ipl_recovery.cc — IplStore::mount: rebuild the mapping from the chip after a crash, run as
// IplRecovery's phases scan (pass 1), resolve (pass 2), reopen (ipl_recovery.h).
//
// One read of every page of every data block (data and spare; a torn data page is told apart
// only by its data CRC, and a log page's sectors carry their own headers). Pass 1, per block:
//   * its logical block, from any valid data page, marker or log sector (two names: kCorrupt),
//     or the commit log (sectors naming kCommitLogLbn);
//   * per data slot its page's header; per complete log write its seq, slot, flags (and an
//     unmap record's bitmap);
//   * the commit records: commit-log sectors, and (format 2, per page) every commit-flagged
//     data page and log write.
// Pass 2 (no flash operation). committed = the newest commit record (format 1: everything). An
// item counts if its seq <= committed — except a merge's pages without the group flag, which
// count always (a plain or selective merge holds committed versions only). The rest is *void*:
// a group the crash (or an abort) left uncommitted. A block is a candidate if its merge counts
// and is complete (a merged block's data pages all carry the merge's seq and page count), or,
// without merge pages, if any of its items counts. Per logical block the candidate with the
// newest counting item wins — a merge's pages are newer than everything in the block it
// replaced, and the old block is erased (or, in a group, kept) only after the merge completed.
// The winner's slots and log are rebuilt from the counting items: valid data page → kData;
// erased → kErased; anything else → kGarbage; complete log writes replayed for mapped /
// has_log. Blocks holding void items are handed to purge() (erased if free, merged if a
// winner) before anything is programmed. Recovery itself writes nothing.
#include "flash/ipl/ipl_recovery.h"

#include <algorithm>
#include <string>

#include "flash/common/crc32c.h"
#include "flash/ipl/ipl_nvm.h"
#include "flash/store/reread.h"

namespace pdl {

IplRecovery::IplRecovery(IplStore& s, Nand& nand, bool legacy)
    : s_(s), nand_(nand), g_(s.geo_), ppb_(g_.pages_per_block), dpb_(s.dpb_),
      lbns_(uint32_t(s.lblocks_.size())), legacy_(legacy),
      block_buf_(size_t(ppb_) * g_.page_data), spare_(g_.page_spare), scans_(g_.blocks),
      winner_(lbns_, IplStore::kNoBlock) {}

// ---- scan (pass 1: read every page) ----
// In: a store with empty tables. Out: bad blocks noted in the store; scans_ per block;
// max_seq_; committed_ = the newest commit record seen (commit-log sectors, commit-flagged data
// pages and log writes); the report's scan counts. Fails (kCorrupt) on a block naming two
// logical blocks or one out of range, a data page out of its slot, a commit-log block holding
// data pages. Invariant: blocks in order, each block's pages in order, one read per page.
Status IplRecovery::scan() {
  if (s_.nvm_) PDL_TRY(scan_nvm_commit());
  for (uint32_t b = kSuperblockBlocks; b < g_.blocks; b++) PDL_TRY(scan_block(b));
  return Status::ok();
}

Status IplRecovery::scan_block(uint32_t b) {
  if (nand_.is_bad(b)) {  // factory-marked or retired: never read (a retired block's pages
    s_.bad_[b] = true;    // must not come back)
    s_.bad_count_++;
    rep_.bad_blocks++;
    return Status::ok();
  }
  BlockScan& sc = scans_[b];
  sc.slots.resize(dpb_);
  PDL_TRY(scan_data_pages(b));
  // Log region: used sectors and their claims, then the complete writes. With NVM: the
  // block's log area, its current life's sectors only.
  if (s_.nvm_) PDL_TRY(read_nvm_area(b));
  const std::span<const uint8_t> log =
      s_.nvm_ ? std::span<const uint8_t>(nvm_area_)
              : std::span<const uint8_t>(block_buf_).subspan(size_t(dpb_) * g_.page_data);
  PDL_TRY(scan_log_sectors(b, log));
  if (sc.commit_log) {
    for (const SlotScan& x : sc.slots)
      if (x.programmed)
        return corrupt("block " + std::to_string(b) + " mixes the commit log and data pages");
    return Status::ok();
  }
  if (!sc.any || sc.used_sectors == 0) return Status::ok();
  return scan_log_writes(b, log);
}

// Block b holds logical block lbn (the first claim names it; sc.any says one was made).
Status IplRecovery::claim(uint32_t b, uint32_t lbn) {
  BlockScan& sc = scans_[b];
  if (sc.any && lbn != sc.lbn)
    return corrupt("block " + std::to_string(b) + " holds pages of logical blocks " +
                   std::to_string(sc.lbn) + " and " + std::to_string(lbn));
  if (lbn >= lbns_ && lbn != kCommitLogLbn)
    return corrupt("block " + std::to_string(b) + " names logical block " +
                   std::to_string(lbn) + " beyond the store's " + std::to_string(lbns_));
  sc.lbn = lbn;
  sc.any = true;
  return Status::ok();
}

// Every page of block b read into block_buf_; the data slots decoded into sc.slots.
Status IplRecovery::scan_data_pages(uint32_t b) {
  BlockScan& sc = scans_[b];
  for (uint32_t p = 0; p < ppb_; p++) {
    const std::span<uint8_t> data =
        std::span<uint8_t>(block_buf_).subspan(size_t(p) * g_.page_data, g_.page_data);
    SpareHeader h;
    SpareState ss;
    bool passed;  // an erased page, a log page, or a data page passing its CRC
    PDL_TRY(read_with_retries(
        nand_, b * ppb_ + p, data, spare_,
        [&] {
          ss = spare_decode(spare_, &h);
          if (ss == SpareState::kErased) return all_ff(data) || p >= dpb_;
          if (p >= dpb_) return log_page_decodes(data, s_.log_sector_);  // torn: every attempt
          return ss == SpareState::kValid && crc32c(data.data(), data.size()) == h.data_crc;
        },
        &passed));
    (void)passed;  // a page never passing is torn (below)
    rep_.pages_scanned++;
    if (p >= dpb_) continue;  // log page: its sectors are parsed below
    if (ss == SpareState::kErased && all_ff(data)) continue;
    SlotScan& slot = sc.slots[p];
    if (ss != SpareState::kValid ||
        (h.type != PageType::kIplData && h.type != PageType::kIplEmpty) ||
        crc32c(data.data(), data.size()) != h.data_crc) {
      rep_.torn_pages++;
      slot.programmed = true;
      continue;
    }
    if (h.type == PageType::kIplEmpty) {
      PDL_TRY(claim(b, h.logical_block()));
      slot.marker = true;
      slot.aux = 1;  // a marker is a merge of itself
    } else {
      if (h.logical_page() >= s_.lpns_.size() || h.logical_page() % dpb_ != p)
        return corrupt("data page " + std::to_string(b * ppb_ + p) + " names logical page " +
                       std::to_string(h.logical_page()) + ", which does not live there");
      PDL_TRY(claim(b, h.logical_page() / dpb_));
      slot.aux = h.aux;
    }
    slot.programmed = slot.page = true;
    slot.seq = h.seq;
    slot.group = h.group;
    slot.commit = h.commit;
    max_seq_ = std::max(max_seq_, h.seq);
    sc.max_seq = std::max(sc.max_seq, h.seq);
    if (h.commit) committed_ = std::max(committed_, h.seq);
  }
  return Status::ok();
}

// The log region's sectors: which are used, their claims, the commit log's records.
Status IplRecovery::scan_log_sectors(uint32_t b, std::span<const uint8_t> log) {
  BlockScan& sc = scans_[b];
  const uint32_t sectors = s_.log_sectors_per_block();
  for (uint32_t i = 0; i < sectors; i++) {
    SectorHeader h;
    std::span<const uint8_t> payload;
    const SectorState st =
        sector_decode(log.subspan(size_t(i) * s_.log_sector_, s_.log_sector_), &h, &payload);
    if (st != SectorState::kValid) sc.invalid.push_back(i);
    if (st == SectorState::kErased) continue;
    sc.used_sectors = i + 1;
    if (st == SectorState::kCorrupt) continue;
    PDL_TRY(claim(b, h.lbn));
    max_seq_ = std::max(max_seq_, h.seq);
    sc.max_seq = std::max(sc.max_seq, h.seq);
    if (h.lbn == kCommitLogLbn && (h.flags & kSectorCommit)) {
      sc.commit_log = true;
      sc.max_commit = std::max(sc.max_commit, h.seq);
      committed_ = std::max(committed_, h.seq);
    }
  }
  return Status::ok();
}

// The NVM commit area: the newest valid record of the two slots; the next goes to the other.
// None valid: kCorrupt (the NVM is not the one format stamped).
Status IplRecovery::scan_nvm_commit() {
  uint8_t area[kNvmCommitArea];
  PDL_TRY(nvm_read_with_retries(nand_, 0, area));
  uint64_t best = 0;
  int newest = -1;
  for (int i = 0; i < 2; i++) {
    uint64_t seq;
    if (!nvm_commit_decode(std::span<const uint8_t>(area).subspan(i * kNvmCommitSlot,
                                                                  kNvmCommitSlot), &seq))
      continue;
    if (newest < 0 || seq > best) {
      best = seq;
      newest = i;
    }
  }
  // Format writes a record (seq 0) and every later one goes to the slot not holding the
  // newest: an NVM with none lost its bytes or is not this store's, and without its sectors
  // the data pages are an older state than the one committed.
  if (newest < 0)
    return Status::error(Errc::kCorrupt,
                         "NVM: no intact commit record in the first " +
                             std::to_string(kNvmCommitArea) + " bytes (the NVM was lost or "
                             "zeroed, or is not this store's): the log sectors it held cannot "
                             "be recovered");
  committed_ = std::max(committed_, best);
  max_seq_ = std::max(max_seq_, best);
  s_.nvm_commit_slot_ = uint32_t(newest ^ 1);
  return Status::ok();
}

// A sector in block b's area counts for the block's current life only if it names the block's
// logical block and is newer than the block's oldest valid data page: every life begins with a
// data page (a first write, a merge's pages or its marker) and seqs only grow, so anything
// older is left from an earlier life. Every valid sector's seq still counts for max_seq_, so
// the next life's seqs are newer than all of them.
Status IplRecovery::read_nvm_area(uint32_t b) {
  BlockScan& sc = scans_[b];
  nvm_area_.resize(size_t(s_.log_sectors_) * s_.log_sector_);
  PDL_TRY(nvm_read_with_retries(nand_, s_.nvm_sector_off(b, 0), nvm_area_));
  uint64_t birth = UINT64_MAX;
  for (const SlotScan& x : sc.slots)
    if (x.page) birth = std::min(birth, x.seq);
  for (uint32_t i = 0; i < s_.log_sectors_; i++) {
    const std::span<uint8_t> sec =
        std::span<uint8_t>(nvm_area_).subspan(size_t(i) * s_.log_sector_, s_.log_sector_);
    SectorHeader h;
    std::span<const uint8_t> payload;
    const SectorState st = sector_decode(sec, &h, &payload);
    if (st == SectorState::kValid) max_seq_ = std::max(max_seq_, h.seq);
    const bool current = st == SectorState::kValid && sc.any && birth != UINT64_MAX &&
                         h.seq > birth && h.lbn == sc.lbn;
    if (!current) std::fill(sec.begin(), sec.end(), 0xFF);
  }
  return Status::ok();
}

// The complete log writes of a data block, in log order.
Status IplRecovery::scan_log_writes(uint32_t b, std::span<const uint8_t> log) {
  BlockScan& sc = scans_[b];
  return walk_log(
      log, s_.log_sector_, sc.used_sectors, sc.lbn,
      [&](const SectorHeader& h, std::span<const std::span<const uint8_t>> parts) {
        if (!(h.flags & kSectorUnmap) && h.slot >= dpb_)
          return corrupt("log sector names data slot " + std::to_string(h.slot));
        LogScan w;
        w.seq = h.seq;
        w.slot = h.slot;
        w.flags = h.flags;
        if (h.flags & kSectorUnmap) w.bitmap.assign(parts[0].begin(), parts[0].end());
        if (h.flags & kSectorCommit) committed_ = std::max(committed_, h.seq);
        sc.writes.push_back(std::move(w));
        return Status::ok();
      });
}

// ---- resolve (pass 2: what counts) ----
// In: scans_, committed_ (final). Out: committed_ (format 1: everything); per block its key and
// whether it holds void items (the report counts them); winner_ per logical block; the newest
// commit-log block. Fails (kCorrupt) on a block holding pages of two merges. No flash op.
Status IplRecovery::resolve() {
  if (legacy_) committed_ = UINT64_MAX;
  for (uint32_t b = kSuperblockBlocks; b < g_.blocks; b++) PDL_TRY(choose_candidate(b));
  return Status::ok();
}

bool IplRecovery::page_counts(const SlotScan& x) const {
  if (!x.page) return false;
  if (x.aux == 0) return x.seq <= committed_;  // a first write
  return !x.group || x.seq <= committed_;      // a merge's page
}

// Block b: the commit log's newest block, or a candidate for its logical block (a complete,
// counting merge, or counting items without one), which wins if its newest item is newer.
Status IplRecovery::choose_candidate(uint32_t b) {
  BlockScan& sc = scans_[b];
  if (!sc.any) return Status::ok();
  if (sc.commit_log) {
    if (commit_block_ == IplStore::kNoBlock || sc.max_commit > scans_[commit_block_].max_commit)
      commit_block_ = b;
    return Status::ok();
  }
  uint64_t merge_seq = 0, newest = 0;
  uint32_t merge_count = 0, merge_found = 0;
  bool merge_void = false;
  for (const SlotScan& x : sc.slots) {
    if (!x.page) continue;
    if (!page_counts(x)) {
      sc.has_void = true;
      rep_.void_pages++;
      if (x.aux > 0) merge_void = true;
      continue;
    }
    newest = std::max(newest, x.seq);
    if (x.aux > 0) {
      if (merge_seq != 0 && (merge_seq != x.seq || merge_count != x.aux))
        return corrupt("block " + std::to_string(b) + " holds pages of two merges");
      merge_seq = x.seq;
      merge_count = x.aux;
      merge_found++;
    }
  }
  for (const LogScan& w : sc.writes) {
    if (w.seq > committed_) {
      sc.has_void = true;
      rep_.void_pages++;
      continue;
    }
    newest = std::max(newest, w.seq);
  }
  if (merge_void || (merge_count > 0 && merge_found != merge_count) || newest == 0)
    return Status::ok();
  sc.key = newest;
  uint32_t& w = winner_[sc.lbn];
  if (w == IplStore::kNoBlock || newest > scans_[w].key) w = b;
  return Status::ok();
}

// ---- reopen ----
// In: resolve's winners and cut-off (after a replay, take_checkpoint's too). Out: lblocks_,
// owner_, lpns_ of every winner; the commit log's block; the free list (every block neither
// owned nor bad, not known erased) and the blocks to purge; the sequence counters; the
// report's table counts. No flash op.
void IplRecovery::reopen() {
  for (uint32_t lbn = 0; lbn < lbns_; lbn++) {
    if (ck_ && kept_lbn_[lbn]) keep_lblock(lbn);  // (replay: the checkpoint's block)
    else rebuild_lblock(lbn);
  }
  if (commit_block_ != IplStore::kNoBlock) {
    s_.commit_block_ = commit_block_;
    s_.commit_used_ =
        ck_ && !rescan_[commit_block_] ? commit_used_ : scans_[commit_block_].used_sectors;
    s_.owner_[commit_block_] = IplStore::kCommitOwner;
  }
  list_free_blocks();
  for (const IplStore::LpnState& st : s_.lpns_) rep_.live_lpns += st.mapped ? 1 : 0;
  s_.legacy_ = legacy_;
  s_.next_seq_ = max_seq_ + 1;
  s_.committed_seq_ = committed_;
  s_.group_start_ = s_.next_seq_;  // everything newer than the last commit is void
  rep_.free_blocks = s_.free_.size();
  rep_.next_seq = s_.next_seq_;
  rep_.legacy = legacy_;
  rep_.committed_seq = legacy_ ? 0 : committed_;
}

// The winner of logical block lbn: its slots and log rebuilt from the counting items.
void IplRecovery::rebuild_lblock(uint32_t lbn) {
  const uint32_t b = winner_[lbn];
  if (b == IplStore::kNoBlock) return;
  const BlockScan& sc = scans_[b];
  IplStore::LBlock& lb = s_.lblocks_[lbn];
  lb.block = b;
  lb.used_sectors = sc.used_sectors;
  for (uint32_t i : sc.invalid)
    if (i < lb.used_sectors) lb.garbage.push_back(i);
  s_.owner_[b] = lbn;
  if (sc.has_void) s_.purge_lbns_.insert(lbn);
  if (lb.used_sectors > 0) rep_.valid_diff_pages += s_.used_log_pages(lb);
  apply_log(sc, lbn, false);
}

void IplRecovery::apply_log(const BlockScan& sc, uint32_t lbn, bool on_checkpoint) {
  using Slot = IplStore::Slot;
  // Per slot: 0 no log, 1 the log maps it (reset), 2 the log unmaps it.
  std::vector<uint8_t> log_mapped(dpb_, 0);
  std::vector<bool> log_any(dpb_, false);
  for (const LogScan& w : sc.writes) {  // in log order, which is sequence order
    if (w.seq > committed_) continue;
    if (w.flags & kSectorUnmap) {
      for (uint32_t sl = 0; sl < dpb_; sl++)
        if (unmap_has(w.bitmap, sl)) {
          log_mapped[sl] = 2;
          log_any[sl] = true;
        }
      continue;
    }
    if (w.flags & kSectorReset) log_mapped[w.slot] = 1;
    log_any[w.slot] = true;
  }
  for (uint32_t sl = 0; sl < s_.lpns_in(lbn); sl++) {
    IplStore::LpnState& st = s_.lpns_[s_.first_lpn(lbn) + sl];
    if (!on_checkpoint) {
      const SlotScan& x = sc.slots[sl];
      const bool data = page_counts(x) && !x.marker;
      st.slot = data ? Slot::kData : x.programmed ? Slot::kGarbage : Slot::kErased;
      st.mapped = data;
      st.has_log = false;
    }
    if (log_mapped[sl] == 1) st.mapped = true;
    if (log_mapped[sl] == 2) st.mapped = false;
    st.has_log = st.has_log || log_any[sl];
    if (st.slot == Slot::kErased && st.has_log) st.slot = Slot::kGarbage;
  }
}

// Every block neither owned nor bad is free, erased before use; void items in it are purged.
void IplRecovery::list_free_blocks() {
  for (uint32_t b = kSuperblockBlocks; b < g_.blocks; b++) {
    if (s_.owner_[b] != IplStore::kNoBlock || s_.bad_[b]) continue;
    s_.erased_[b] = false;  // erased before use (allocate_block), as PDL's mount does
    s_.free_.push_back(b);
    // Void items in a free block are erased before anything is programmed: no later commit
    // record may cover them.
    if (!legacy_ && ((scans_[b].any && !scans_[b].commit_log && scans_[b].max_seq > committed_) ||
                     (ck_ && purge_free_[b])))
      s_.purge_blocks_.push_back(b);
  }
}

Status IplStore::mount(Nand& nand, const StoreParams& params, bool legacy,
                       std::unique_ptr<PageStore>* out, MountReport* report) {
  const MountClock clock(nand);
  std::unique_ptr<IplStore> s(new IplStore(nand, params));
  IplRecovery recovery(*s, nand, legacy);
  PDL_TRY(recovery.scan());
  PDL_TRY(recovery.resolve());
  recovery.reopen();
  MountReport rep = recovery.report();
  clock.finish(&rep);
  s->ledger_.charge(s->ledger_.other());
  if (report) *report = rep;
  *out = std::move(s);
  return Status::ok();
}

}  // namespace pdl
