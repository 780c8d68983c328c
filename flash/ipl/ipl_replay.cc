// ipl_replay.cc — IplStore's mount after a power cut from a checkpoint plus the erase blocks
// declared since it (docs/design.md §17): IplStore::replay and IplRecovery's replay phases.
//
// The scan (ipl_recovery.cc) judges each erase block by its own contents, then per logical
// block lets the candidate with the newest counting item win, under one commit cut-off. A block
// no summary declared has not been programmed, erased or marked bad since checkpoint G, so its
// contents are those G's tables were derived from. Replay therefore:
//   * reads every declared block with the scan's own per-block code (scan_block), and takes the
//     bad blocks of the others from G's tables;
//   * the cut-off is the newer of G's and any commit record found in a declared block; the seq
//     counter the newer of G's and every item found. Why an undeclared item counts under the
//     final cut-off exactly when it counted at G: an item void at G (newer than G's cut-off)
//     sits in a block purge() merges or erases before anything is programmed — declared — and
//     every newer commit record is programmed after it ([IPL] §5: no void item outlives the
//     next commit record);
//   * resolve() as the scan does, over the declared blocks;
//   * take_checkpoint(): per logical block, G's block wins if it was not declared and no
//     declared candidate holds an item newer than G (seq >= G's next seq): every block that
//     competed with it at G lost to it then, and still holds what it held; an item newer than
//     G is newer than everything G's block holds. Its slots and log come from G's tables. The
//     commit log's block likewise. G's blocks to purge stay listed while free and undeclared,
//     as does G's block of a logical block G listed for purge once a newer merge replaced it
//     (the purge's merge was cut before its erase);
//   * reopen() as the scan does: winners' slots and logs, the commit log, every block neither
//     owned nor bad free (not known erased), the blocks to purge.
// With NVM ([IPL-PCRAM]: each block's log area in NVM, the commit record in NVM's commit area)
// a log flush writes only NVM: the view declares "the NVM changed" once (an empty summary
// page), not the block, so logging costs no summary page and no replay budget. The replay
// reads the commit area as the scan does, and for every logical block whose checkpoint block
// b was not re-read, the sectors written since into b's area (read_nvm_tail): G's tables
// hold the area's first used_sectors sectors; a sector written since is valid, names the
// logical block and is newer than G (seq >= G's next seq), and b's flash pages are G's. Those
// sectors make b a candidate as the scan sees it — its newest counting write newer than
// anything G's part of b holds — so resolve() lets it compete with the re-read blocks under
// the scan's own rule, and if b wins, keep_lblock applies them to G's state of its pages
// (apply_log, the rebuild's own rule); their void writes make the logical block purge. One
// sector read per such block when nothing was written (0.6 us simulated), the rest of the
// area only when something was.
// The result equals a full scan's: every page's slot, mapping and log state, every block's
// owner and state (compare_ipl_tables, ipl_compare.h, checks every field in the tests). The
// free queue is in block order, as a scan's, not G's. Differences no read sees: the commit
// cut-off may be newer than the scan's (G's handed-out seqs, when G had nothing to purge;
// the seqs between are held only by items that count under either cut-off); an undeclared
// block G listed for purge stays listed.
#include <algorithm>
#include <string>

#include "flash/ipl/ipl_recovery.h"
#include "flash/ipl/ipl_sector.h"
#include "flash/store/reread.h"

namespace pdl {

Status IplRecovery::replay(const IplStore& ck, const std::vector<uint8_t>& rescan) {
  ck_ = &ck;
  rescan_ = rescan;
  kept_lbn_.assign(lbns_, 0);
  purge_free_.assign(g_.blocks, 0);
  if (s_.nvm_) PDL_TRY(scan_nvm_commit());  // (as scan(): the commit cut-off, the slot's turn)
  for (uint32_t b = kSuperblockBlocks; b < g_.blocks; b++) {
    if (rescan_[b]) {
      PDL_TRY(scan_block(b));
    } else if (ck.bad_[b]) {  // (as scan_block: skipped, counted)
      s_.bad_[b] = true;
      s_.bad_count_++;
      rep_.bad_blocks++;
    }
  }
  for (uint32_t lbn = 0; lbn < lbns_ && s_.nvm_; lbn++) {
    const IplStore::LBlock& lb = ck.lblocks_[lbn];
    if (lb.block != IplStore::kNoBlock && !rescan_[lb.block])
      PDL_TRY(read_nvm_tail(lb.block, lbn, lb.used_sectors));
  }
  // G's cut-off: with nothing left to purge, no item on flash is void (ipl_commit.cc's
  // invariant), so every seq G handed out counts — its committed_seq_ may be older (per page,
  // each program commits itself without moving it). Else G's store programmed nothing since
  // its mount (purge() runs first) or since an abort: its committed_seq_ is the newest record.
  if (!legacy_)
    committed_ = std::max(committed_, ck.purge_blocks_.empty() && ck.purge_lbns_.empty()
                                          ? ck.next_seq_ - 1
                                          : ck.committed_seq_);
  max_seq_ = std::max(max_seq_, ck.next_seq_ - 1);
  return Status::ok();
}

Status IplRecovery::read_nvm_tail(uint32_t b, uint32_t lbn, uint32_t from) {
  const uint32_t sectors = s_.log_sectors_per_block(), size = s_.log_sector_;
  if (from >= sectors) return Status::ok();
  const uint64_t fresh = ck_->next_seq_;
  nvm_area_.assign(size_t(sectors) * size, 0xFF);  // (the first `from`: G's, not read)
  const std::span<uint8_t> area(nvm_area_);
  auto since = [&](std::span<uint8_t> sec) {  // valid; written since G (else stale or torn)
    SectorHeader h;
    std::span<const uint8_t> payload;
    if (sector_decode(sec, &h, &payload) != SectorState::kValid) return false;
    max_seq_ = std::max(max_seq_, h.seq);  // (as read_nvm_area: every valid sector's seq)
    return h.lbn == lbn && h.seq >= fresh;
  };
  const std::span<uint8_t> first = area.subspan(size_t(from) * size, size);
  PDL_TRY(nvm_read_with_retries(nand_, s_.nvm_sector_off(b, from), first));
  if (!since(first)) return Status::ok();
  if (from + 1 < sectors)  // (the rest of the area, if there is any)
    PDL_TRY(nvm_read_with_retries(nand_, s_.nvm_sector_off(b, from + 1),
                                  area.subspan(size_t(from + 1) * size)));
  for (uint32_t i = from + 1; i < sectors; i++) {
    const std::span<uint8_t> sec = area.subspan(size_t(i) * size, size);
    if (!since(sec)) std::fill(sec.begin(), sec.end(), 0xFF);
  }
  // The scan's per-block code over the area, G's sectors left out: b's claim (lbn), its used
  // sectors, the slots not valid below the last used one, the complete writes.
  BlockScan& sc = scans_[b];
  PDL_TRY(scan_log_sectors(b, area));
  std::erase_if(sc.invalid, [&](uint32_t i) { return i < from; });
  return scan_log_writes(b, area);
}

void IplRecovery::take_checkpoint() {
  const IplStore& ck = *ck_;
  const uint64_t fresh = ck.next_seq_;  // every item programmed since G has a seq >= fresh
  auto newer = [&](uint32_t b) { return b != IplStore::kNoBlock && scans_[b].key >= fresh; };
  for (uint32_t lbn = 0; lbn < lbns_; lbn++) {
    const uint32_t b = ck.lblocks_[lbn].block;
    if (b == IplStore::kNoBlock || rescan_[b]) continue;
    if (winner_[lbn] == b || !newer(winner_[lbn])) {  // (b itself: sectors logged since G)
      winner_[lbn] = b;
      kept_lbn_[lbn] = 1;
    } else if (ck.purge_lbns_.count(lbn)) {
      purge_free_[b] = 1;  // its void items: erased before anything is programmed
    }
  }
  const uint32_t cb = ck.commit_block_;
  if (cb != IplStore::kNoBlock && !rescan_[cb] &&
      (commit_block_ == IplStore::kNoBlock || scans_[commit_block_].max_commit < fresh)) {
    commit_block_ = cb;
    commit_used_ = ck.commit_used_;
  }
  for (const uint32_t b : ck.purge_blocks_)
    if (!rescan_[b]) purge_free_[b] = 1;
}

// G's block of lbn and the tables' state of its pages (no pending trim: G was synced).
void IplRecovery::keep_lblock(uint32_t lbn) {
  const IplStore& ck = *ck_;
  const IplStore::LBlock& from = ck.lblocks_[lbn];
  IplStore::LBlock& lb = s_.lblocks_[lbn];
  lb.block = from.block;
  lb.used_sectors = from.used_sectors;
  lb.garbage = from.garbage;
  const BlockScan& since = scans_[lb.block];  // (with NVM: the sectors logged since G)
  if (since.any) {
    lb.used_sectors = since.used_sectors;
    for (const uint32_t i : since.invalid)
      if (i < lb.used_sectors) lb.garbage.push_back(i);
  }
  s_.owner_[lb.block] = lbn;
  if (ck.purge_lbns_.count(lbn) || since.has_void) s_.purge_lbns_.insert(lbn);
  if (lb.used_sectors > 0) rep_.valid_diff_pages += s_.used_log_pages(lb);
  const Lpn first = s_.first_lpn(lbn);
  for (uint32_t sl = 0; sl < s_.lpns_in(lbn); sl++) {
    IplStore::LpnState st = ck.lpns_[first + sl];
    st.trim_pending = false;
    s_.lpns_[first + sl] = st;
  }
  if (since.any) apply_log(since, lbn, true);
}

Status IplStore::replay(Nand& nand, const StoreParams& params, CommitMode mode, TableReader& r,
                        const std::vector<uint32_t>& declared, std::unique_ptr<PageStore>* out,
                        MountReport* report) {
  const MountClock clock(nand);
  std::unique_ptr<PageStore> ck_store;
  PDL_TRY(mount_tables(nand, params, mode, r, &ck_store, true));
  const IplStore& ck = static_cast<const IplStore&>(*ck_store);
  const Geometry& g = ck.geo_;
  std::vector<uint8_t> rescan(g.blocks, 0);
  for (const uint32_t b : declared) {
    if (b >= g.blocks || b < kSuperblockBlocks)
      return Status::error(Errc::kCorrupt, "replay: declared block " + std::to_string(b) +
                                               " is not the store's");
    rescan[b] = 1;
  }
  std::unique_ptr<IplStore> s(new IplStore(nand, params));
  IplRecovery recovery(*s, nand, ck.legacy_);
  PDL_TRY(recovery.replay(ck, rescan));
  uint64_t replayed = 0;  // (re-read, or with NVM logged into since)
  for (uint32_t b = 0; b < g.blocks; b++) replayed += rescan[b] || recovery.logged_since(b);
  PDL_TRY(recovery.resolve());
  recovery.take_checkpoint();
  recovery.reopen();
  MountReport rep = recovery.report();
  clock.finish(&rep);
  rep.replayed_blocks = replayed;
  s->ledger_.charge(s->ledger_.other());
  // The lpns that may have changed since the checkpoint (take_replayed_lpns): every lpn of a
  // logical block whose erase block, then or now, was re-read — a write, an unmap or a merge
  // since the checkpoint programs the block its logical block is in (declared), and a merge
  // moves it to another — or, with NVM, was logged into since.
  s->replayed_ = true;
  for (uint32_t lbn = 0; lbn < s->lblocks_.size(); lbn++) {
    const uint32_t now = s->lblocks_[lbn].block, then = ck.lblocks_[lbn].block;
    if (now == then && (now == kNoBlock || (!rescan[now] && !recovery.logged_since(now))))
      continue;
    for (Lpn l = s->first_lpn(lbn); l < s->first_lpn(lbn) + s->lpns_in(lbn); l++)
      s->replayed_lpns_.push_back(l);
  }
  if (report) *report = rep;
  *out = std::move(s);
  return Status::ok();
}

}  // namespace pdl
