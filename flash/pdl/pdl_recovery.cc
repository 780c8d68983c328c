// pdl_recovery.cc — mount = crash recovery by one scan of the spare areas ([PDL] Fig. 7), run as
// PdlRecovery's phases scan, resolve, reopen (pdl_recovery.h).
//
// For every page the spare area is read (a read each: tR dominates). Per block, the headers are
// gathered first; the last programmed page of a block is the only one a power cut can have
// torn mid-program (pages are programmed in order), so if it is a base page its data is read
// and its CRC checked. Differential pages are read whole (Fig. 7, Case 2) and checked.
// Every base page and differential record found is an *item*; Fig. 7 then runs over the items:
//   base r:          newer than ppmt.base -> it becomes the base; if also newer than the current
//                    differential, that differential is dropped. Equal sequence numbers are the
//                    two copies a cut during GC leaves: the first one seen is kept, unless it
//                    is in a block ending in a torn page (the cut GC's head, never appended to).
//   differential d:  counts only if newer than both the base and the current differential
//                    (a copy with an equal seq: as for base pages). Commit records likewise.
// The rule is order-independent (newest wins), which the commit cut-off below relies on.
// Tombstones are differentials that unmap. Finally orphan differentials (no base) are dropped,
// vdct and block valid counts are computed, and the next sequence number is max seen + 1.
//
// Commit cut-off (superblock format 2): the largest commit record S (the seq of a page whose
// spare flags it as a commit page) ends the committed history; an item with a larger seq
// belongs to the group the crash interrupted and is *void*: ignored, and its block noted so
// that the next commit first erases it (pdl_commit.cc). S is known only once every page has
// been seen, so items above the largest record seen so far wait in a side list and are judged
// at the end — few in practice: only the interrupted group's pages come after every commit
// page. Format 1 has no commit records: every item counts.
//
// A header failing its checks is repaired if one or two bits flipped (spare.h); one still failing
// is torn if it is its block's last programmed page, and *damaged* (counted, data possibly lost:
// reads of owned but unmapped chunks then fail, volume.cc) if a later page is programmed.
// Blocks marked bad are skipped unread. Recovery writes nothing (not even obsolete marks): a crash
// during recovery is harmless and recovering twice gives the same tables (I4). Blocks with no
// programmed page go to the free queue as "not known erased" and are erased before use, because an
// interrupted program or erase may have left bits that a spare scan cannot see. The two partly
// programmed blocks holding the newest pages are reopened as the user and GC heads if they have no
// erased gaps and hold no void page (blocks holding a valid page first), and their remaining pages
// read back erased, so a store keeps the room it had across a remount (the pages reserved for a
// commit, in particular).
#include "flash/pdl/pdl_recovery.h"

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>
#include <unordered_map>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/store/reread.h"

namespace pdl {

PdlRecovery::PdlRecovery(PdlStore& s, Nand& nand, bool legacy)
    : s_(s), nand_(nand), g_(s.geo_), ppb_(g_.pages_per_block), lpns_(s.ppmt_.size()),
      legacy_(legacy), page_(ppb_), block_(g_.blocks), data_(g_.page_data),
      cutoff_(legacy ? std::numeric_limits<uint64_t>::max() : 0) {
  rep_.legacy = legacy;
}

// ---- scan ----
// In: a store with empty tables. Out: bad and free blocks handed to the block manager; per
// used block its BlockScan; p2l_ of differential pages; every item at or below the cut-off
// applied to ppmt_/p2l_/seqs_, the others in waiting_; the report's scan counts; max_seq_.
// Invariant: blocks are read in order, each block's pages in order, then the data the rules
// need (repaired headers, the last page if a base page, damaged or differential pages).
Status PdlRecovery::scan() {
  seqs_.assign(lpns_, LpnSeqs{});
  for (uint32_t b = kSuperblockBlocks; b < g_.blocks; b++) PDL_TRY(scan_block(b));
  return Status::ok();
}

Status PdlRecovery::scan_block(uint32_t b) {
  if (nand_.is_bad(b)) {  // factory-marked or retired: never read (a retired block's stale
    s_.blocks_.add_bad(b);  // pages must not come back)
    rep_.bad_blocks++;
    return Status::ok();
  }
  int last = -1;
  PDL_TRY(read_spares(b, &last));
  PDL_TRY(check_repaired(b));
  if (last < 0) {
    s_.blocks_.add_free(b, false);
    return Status::ok();
  }
  BlockScan& bs = block_[b];
  bs.used = true;
  bs.last_programmed = uint32_t(last);
  bs.gap_free = true;
  for (int p = 0; p < last; p++) bs.gap_free &= page_[p].state != SpareState::kErased;
  for (int p = 0; p <= last; p++)
    if (page_[p].state == SpareState::kValid) bs.newest = std::max(bs.newest, page_[p].hdr.seq);
  PDL_TRY(check_last_page(b, last));
  return collect_items(b, last);
}

// Every spare area of block b, decoded into page_; *last = the last programmed page (-1: none).
Status PdlRecovery::read_spares(uint32_t b, int* last) {
  const Ppa first = b * ppb_;
  for (uint32_t p = 0; p < ppb_; p++) {
    bool passed;
    PDL_TRY(read_with_retries(
        nand_, first + p, {}, s_.scratch_spare_,
        [&] {
          page_[p].state = spare_decode(s_.scratch_spare_, &page_[p].hdr);
          return page_[p].state != SpareState::kCorrupt;
        },
        &passed));
    if (page_[p].state != SpareState::kErased) *last = int(p);
    rep_.pages_scanned++;
  }
  return Status::ok();
}

// A repaired header counts only with its data: an erase cut part-way (a power cut, or the
// host process killed in the middle of the emulator's write of the block) can erase the
// data area and the first spare bytes of a page and leave a header one bit from valid
// (a differential page's type byte, 0xDF, erased to 0xFF) — a page that was never whole.
Status PdlRecovery::check_repaired(uint32_t b) {
  const Ppa first = b * ppb_;
  for (uint32_t p = 0; p < ppb_; p++) {
    if (page_[p].state != SpareState::kValid || !page_[p].hdr.repaired) continue;
    bool passed;
    PDL_TRY(read_with_retries(
        nand_, first + p, data_, {},
        [&] { return crc32c(data_.data(), data_.size()) == page_[p].hdr.data_crc; }, &passed));
    if (!passed) page_[p].state = SpareState::kCorrupt;
  }
  return Status::ok();
}

// The last programmed page may be torn: check its data (differential pages are read below).
// A block ending in a torn page is never appended to: at a later mount that page would no
// longer be the last one, and its data would go unchecked.
Status PdlRecovery::check_last_page(uint32_t b, int last) {
  PageScan& lp = page_[last];
  if (lp.state == SpareState::kValid && lp.hdr.type == PageType::kBase) {
    bool passed;
    PDL_TRY(read_with_retries(
        nand_, b * ppb_ + Ppa(last), data_, {},
        [&] { return crc32c(data_.data(), data_.size()) == lp.hdr.data_crc; }, &passed));
    if (!passed) lp.state = SpareState::kCorrupt;
  }
  if (lp.state != SpareState::kValid) {
    block_[b].gap_free = false;
    block_[b].torn = true;
  }
  return Status::ok();
}

// Pages 0..last of block b: torn and damaged pages counted, base pages and the records of
// differential pages taken as items, commit records noted.
Status PdlRecovery::collect_items(uint32_t b, int last) {
  const Ppa first = b * ppb_;
  for (int p = 0; p <= last; p++) {
    const Ppa r = first + Ppa(p);
    const SpareHeader& h = page_[p].hdr;
    const SpareState state = page_[p].state;
    if (state == SpareState::kErased) continue;
    if (state == SpareState::kCorrupt && p < last) {
      PDL_TRY(count_failed_page(r, p));
      continue;
    }
    if (state == SpareState::kCorrupt ||
        (h.type != PageType::kBase && h.type != PageType::kDifferential)) {
      rep_.torn_pages++;
      continue;
    }
    if (h.repaired) rep_.spare_repairs++;
    max_seq_ = std::max(max_seq_, h.seq);
    if (h.obsolete) {  // IS_OBSOLETE_PAGE(r) — its commit record still counts (the newest
      // is never marked; an older one is a lower bound): a mark only follows a whole program
      if (h.commit && !legacy_) note_commit(h.seq, r);
      continue;
    }
    if (h.type == PageType::kBase) {  // Case 1: r is a base page
      if (h.logical_page() >= lpns_) {
        rep_.torn_pages++;
        continue;
      }
      if (h.commit && !legacy_) note_commit(h.seq, r);
      take(Item{r, h.logical_page(), h.seq, Item::kBase});
      continue;
    }
    PDL_TRY(take_differential_page(r, h));  // Case 2: r is a differential page.
  }
  return Status::ok();
}

// Page p of a block (at r), failing its checks below the block's last programmed page.
Status PdlRecovery::count_failed_page(Ppa r, int p) {
  // Pages are programmed in order and a block ending in a torn page is never appended
  // to, so only the last programmed page can be torn: this one is damaged — unless an
  // erase of the block stopped part-way (a power cut, or the host process killed in the
  // middle of the emulator's write of the block): an erased page before this one, or
  // this page's data erased, says the block was being erased, and its pages were stale.
  bool erasing = false;
  for (int e = 0; e < p && !erasing; e++) erasing = page_[e].state == SpareState::kErased;
  if (!erasing) {
    bool data_erased = false;
    PDL_TRY(read_with_retries(nand_, r, data_, {}, [&] { return all_ff(data_); },
                              &data_erased));
    erasing = data_erased;
  }
  if (erasing) {
    rep_.torn_pages++;
  } else {
    rep_.damaged_pages++;
  }
  return Status::ok();
}

// Case 2: r, a differential page with header h, read whole and checked; its records are items.
Status PdlRecovery::take_differential_page(Ppa r, const SpareHeader& h) {
  bool passed;
  PDL_TRY(read_with_retries(
      nand_, r, data_, {}, [&] { return crc32c(data_.data(), data_.size()) == h.data_crc; },
      &passed));
  if (!passed || h.aux > g_.page_data) {
    rep_.torn_pages++;
    return Status::ok();
  }
  s_.p2l_.ref(r) = kP2lDifferential;
  if (h.commit && !legacy_) note_commit(h.seq, r);  // (its records are all older than h.seq)
  RecordReader rr(std::span<const uint8_t>(data_).first(h.aux));
  RecordView d;
  while (rr.next(&d)) {
    if (d.lpn >= lpns_) continue;
    max_seq_ = std::max(max_seq_, d.seq);
    take(Item{r, d.lpn, d.seq, d.tombstone ? Item::kTombstone : Item::kDiff});
  }
  if (!rr.status().is_ok()) rep_.torn_pages++;
  return Status::ok();
}

// Of two copies with equal seqs (a cut during GC), the one in a block ending in a torn page
// loses (and of two in blocks alike, the one in the lower block — the first in scan order —
// wins, whatever order they were judged in): that block is never appended to, and with no valid page GC erases it without
// moving anything — repeated cuts during GC would otherwise strand a block each, reserve
// and all, until GC had no room left to move their copies.
// A block whose erase or last program was cut: torn (it ends in a torn page) or with an erased
// page before a programmed one (NAND programs a block's pages in order, so only an erase cut
// part-way leaves that; and an erase cut in the middle of a page — a host process killed in the
// emulator's write of the block, a real chip's erase interrupted — can leave that page's data
// part-erased under an intact header). Everything in such a block was stale or moved before
// the erase began, so its copy loses a tie.
bool PdlRecovery::cut_block(uint32_t b) const { return block_[b].torn || !block_[b].gap_free; }

bool PdlRecovery::better_copy(Ppa cur, Ppa ppa) const {
  if (cur == kNoPpa) return false;
  const bool cur_cut = cut_block(cur / ppb_), ppa_cut = cut_block(ppa / ppb_);
  if (cur_cut && !ppa_cut) return true;
  // Copies met out of block order (an item that waited for the cut-off, or a kept entry in
  // a replay, pdl_replay.cc) end as copies met in order do: the first uncut copy in block
  // order wins, else the first one — so the outcome does not depend on when each was judged.
  return cur_cut == ppa_cut && ppa / ppb_ < cur / ppb_;
}

void PdlRecovery::apply(const Item& it) {
  PpmtEntry& e = s_.ppmt_.ref(it.lpn);
  LpnSeqs& q = seqs(it.lpn);
  if (it.kind == Item::kBase) {  // Case 1: r is a base page
    s_.p2l_.ref(it.ppa) = it.lpn;
    e.copies = e.copies + 1;
    if (it.seq > q.base_seq || (it.seq == q.base_seq && better_copy(e.base, it.ppa))) {
      e.base = it.ppa;
      q.base_seq = it.seq;
      if (it.seq > q.diff_seq) {
        e.diff = kNoPpa;
        q.tomb = 0;
      }
    }
    return;
  }
  // Case 2: a differential d of page r.
  if (it.seq > q.base_seq &&
      (it.seq > q.diff_seq || (it.seq == q.diff_seq && better_copy(e.diff, it.ppa)))) {
    e.diff = it.ppa;
    q.diff_seq = it.seq;
    q.tomb = it.kind == Item::kTombstone;
  }
}

void PdlRecovery::note_commit(uint64_t seq, Ppa r) {  // (a GC copy of the record: as for items)
  if (seq > cutoff_ || (seq == cutoff_ && better_copy(commit_ppa_, r))) {
    cutoff_ = seq;
    commit_ppa_ = r;
  }
}

void PdlRecovery::take(const Item& it) {
  if (collect_) collected_.push_back(it);
  else if (it.seq <= cutoff_) apply(it);
  else waiting_.push_back(it);
}

// ---- the write buffer in NVM ----
void PdlRecovery::nvm_commit(uint64_t seq, uint64_t max_seq) {
  if (!legacy_) cutoff_ = std::max(cutoff_, seq);
  max_seq_ = std::max(max_seq_, max_seq);
}

// In: the committed records of the NVM log, in log order (an lpn's newest last). Out: those
// that are their lpn's newest committed version are in the write buffer (in_dwb), on top of
// the base page (and any older flash differential, which stays referenced as at run time).
Status PdlRecovery::take_nvm_records(const std::vector<std::vector<uint8_t>>& records) {
  std::unordered_map<Lpn, size_t> newest;
  for (size_t i = 0; i < records.size(); i++) {
    const Lpn l = le::get32(records[i].data());
    auto it = newest.find(l);
    if (it == newest.end() || le::get64(records[it->second].data() + 8) <
                                  le::get64(records[i].data() + 8))
      newest[l] = i;
  }
  for (size_t i = 0; i < records.size(); i++) {
    RecordReader rr(records[i]);
    RecordView r;
    if (!rr.next(&r) || r.lpn >= lpns_) continue;
    if (newest[r.lpn] != i) continue;
    PpmtEntry& e = s_.ppmt_.ref(r.lpn);
    const LpnSeqs& q = seqs(r.lpn);
    if (r.seq <= q.base_seq || r.seq <= q.diff_seq) continue;
    // A replay's lpn whose trim had taken effect at the checkpoint (no base page, no
    // differential) keeps its tombstone while an older copy is on flash, as the scan does
    // (it finds that copy as the base page, then drops it for the tombstone).
    const bool spent_base = replay_ && r.tombstone && e.base == kNoPpa &&
                            e.diff == kNoPpa && e.copies > 0;
    if (e.base == kNoPpa && !spent_base) continue;
    if (r.size() > s_.dwb_.free_space())
      return Status::error(Errc::kCorrupt, "NVM log: the committed write buffer exceeds its " +
                                               std::to_string(s_.dwb_.capacity()) + " bytes");
    s_.dwb_.put(r);
    e.in_dwb = 1;
    if (r.tombstone && !spent_base) {  // a committed trim has taken effect (nvm_apply_trims)
      if (e.base != s_.commit_ppa_) block_[e.base / ppb_].valid--;  // (the pin stays valid)
      if (!replay_) rep_.live_lpns--;  // (a replay counts no live lpns)
      e.base = kNoPpa;
      if (e.diff != kNoPpa && --s_.vdct_.ref(e.diff) == 0 && e.diff != s_.commit_ppa_)
        block_[e.diff / ppb_].valid--;
      e.diff = kNoPpa;
    }
  }
  return Status::ok();
}

// ---- resolve ----
// In: scan's tables, the final cut-off. Out: ppmt_ as Fig. 7 leaves it with tombstones and
// orphans resolved; vdct_; per block its valid count and whether it holds a void item (noted
// for purging); the pinned commit record; committed_seq_. Reads nothing.
void PdlRecovery::resolve() {
  judge_waiting();
  resolve_lpns();
  pin_commit();
}

// The cut-off is final: what waited is committed or void.
void PdlRecovery::judge_waiting() {
  for (const Item& it : waiting_) {
    if (it.seq <= cutoff_) {
      apply(it);
      continue;
    }
    rep_.void_pages++;  // (counts items: a void differential page may hold several)
    block_[it.ppa / ppb_].holds_void = true;
  }
  for (uint32_t b = 0; b < g_.blocks; b++)
    if (block_[b].holds_void) s_.note_void_block(b);
}

// Resolve tombstones and orphans; rebuild vdct and block valid counts.
void PdlRecovery::resolve_lpns() {
  if (replay_) {
    for (size_t i = 0; i < touched_.size(); i++) {
      resolve_lpn(touched_[i]);
      if (i % 64 == 63) s_.fold_tables();
    }
    return;
  }
  for (size_t l = 0; l < lpns_; l++) {
    resolve_lpn(Lpn(l));
    if (s_.ppmt_.get(l).base != kNoPpa) rep_.live_lpns++;
  }
}

void PdlRecovery::resolve_lpn(Lpn l) {
  PpmtEntry& e = s_.ppmt_.ref(l);
  if (e.diff != kNoPpa) {
    if (seqs(l).tomb != 0) {
      e.base = kNoPpa;                    // trimmed after its last base page
      if (e.copies == 0) e.diff = kNoPpa;  // and nothing left to hide
    } else if (e.base == kNoPpa) {
      e.diff = kNoPpa;                    // a differential without a base page
    }
  }
  if (e.diff != kNoPpa && s_.vdct_.ref(e.diff)++ == 0) block_[e.diff / ppb_].valid++;
  if (e.base != kNoPpa) block_[e.base / ppb_].valid++;
}

// With atomic groups the newest commit record is pinned: its page counts as valid until a
// newer one exists (set_commit_mode pins it later if the store starts kPerPage).
void PdlRecovery::pin_commit() {
  if (s_.groups_) {
    s_.commit_ppa_ = commit_ppa_;
    if (commit_ppa_ != kNoPpa && !s_.referenced(commit_ppa_)) block_[commit_ppa_ / ppb_].valid++;
  } else {
    s_.commit_candidate_ = commit_ppa_;
  }
  s_.committed_seq_ = legacy_ ? 0 : cutoff_;
}

// ---- reopen ----
// In: resolve's valid counts. Out: every used block open (at most two: the user and GC heads)
// or closed in the block manager; next_seq_; the report's table counts. Reads only the
// remaining pages of head candidates.
Status PdlRecovery::reopen() {
  PDL_TRY(reopen_heads());
  for (uint32_t b = kSuperblockBlocks; b < g_.blocks; b++)
    if (block_[b].used) s_.blocks_.add_closed(b, block_[b].valid);
  if (!replay_)  // (a replay counts nothing it did not reconsider: these stay 0)
    for (Ppa p = 0; p < g_.total_pages(); p++)
      if (s_.vdct_.get(p)) rep_.valid_diff_pages++;

  s_.next_seq_ = max_seq_ + 1;
  rep_.next_seq = s_.next_seq_;
  rep_.committed_seq = s_.committed_seq_;
  rep_.free_blocks = s_.blocks_.free_blocks();
  return Status::ok();
}

// Reopen the partly programmed blocks holding the newest pages as the write heads — the
// newest as the user head, the next as the GC head — provided their pages 0..last were all
// programmed (a block with erased pages among programmed ones is a GC victim whose erase
// was cut, and is erased again before reuse), they hold no void page (they are collected
// before the next commit), and their remaining pages read back erased, data areas included,
// since a cut program may leave bits there while the spare stays blank.
// Without this, every cut during GC would strand the rest of a block until GC reached it,
// and repeated cuts could use up the reserve. Other blocks are closed. Blocks holding a valid
// page are reopened first: one with none (a victim whose erase was cut after its last
// pages) costs GC nothing to erase, while a closed block with valid pages strands its rest
// until GC can afford to move them.
Status PdlRecovery::reopen_heads() {
  std::vector<std::tuple<bool, uint64_t, uint32_t>> partly;  // (holds valid, newest seq, block)
  for (uint32_t b = kSuperblockBlocks; b < g_.blocks; b++) {
    const BlockScan& bs = block_[b];
    if (bs.used && bs.gap_free && !bs.holds_void && bs.last_programmed + 1 < ppb_)
      partly.push_back({bs.valid > 0, bs.newest, b});
  }
  std::sort(partly.rbegin(), partly.rend());
  int heads = 0;
  for (const auto& [holds_valid, seq, b] : partly) {
    if (heads == 2) break;
    BlockScan& bs = block_[b];
    bool erased = true;
    for (uint32_t p = bs.last_programmed + 1; p < ppb_ && erased; p++) {
      PDL_TRY(read_with_retries(nand_, b * ppb_ + p, data_, {}, [&] { return all_ff(data_); },
                                &erased));
    }
    if (!erased) continue;
    s_.blocks_.add_open(heads == 0 ? BlockManager::Head::kUser : BlockManager::Head::kGc, b,
                        bs.last_programmed + 1, bs.valid);
    bs.used = false;
    heads++;
  }
  return Status::ok();
}

Status PdlStore::mount(Nand& nand, const StoreParams& params, bool legacy, CommitMode mode,
                       std::unique_ptr<PageStore>* out, MountReport* report) {
  const MountClock clock(nand);
  std::unique_ptr<PdlStore> s(new PdlStore(nand, params));
  s->legacy_ = legacy;
  s->groups_ = mode == CommitMode::kGroup && !legacy && has_atomic_commit(params.method);
  s->blocks_.set_user_keep(s->groups_ ? 2 : 1);
  PdlRecovery recovery(*s, nand, legacy);
  NvmLog::Recovered nvm;
  if (s->nvm_) {
    PDL_TRY(s->nvm_->recover(nand, &nvm));
    if (!nvm.found)
      return Status::error(Errc::kCorrupt,
                           "NVM: no intact write-buffer log in the first " +
                               std::to_string(params.nvm_bytes) +
                               " bytes (the NVM was lost, or is not this store's): the "
                               "committed differentials it held cannot be recovered");
    recovery.nvm_commit(nvm.commit_seq, nvm.max_seq);
  }
  PDL_TRY(recovery.scan());
  recovery.resolve();
  if (s->nvm_) {
    PDL_TRY(recovery.take_nvm_records(nvm.records));
    s->nvm_mounted(nvm.commit_seq);
  }
  PDL_TRY(recovery.reopen());
  MountReport rep = recovery.report();
  clock.finish(&rep);
  if (report) *report = rep;
  s->stats_.void_pages = rep.void_pages;
  s->damaged_pages_ = rep.damaged_pages;
  s->ledger_.charge(s->ledger_.other());
  *out = std::move(s);
  return Status::ok();
}

}  // namespace pdl
