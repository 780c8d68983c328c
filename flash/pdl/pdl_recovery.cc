// pdl_recovery.cc — mount = crash recovery by one scan of the spare areas ([PDL] Fig. 7).
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
#include <algorithm>
#include <limits>
#include <tuple>

#include "flash/common/crc32c.h"
#include "flash/pdl/pdl_store.h"
#include "flash/store/reread.h"

namespace pdl {

namespace {

// A base page or a differential record, as the scan found it.
struct Item {
  Ppa ppa;
  Lpn lpn;
  uint64_t seq;
  uint8_t kind;  // kBase, kDiff, kTombstone
  static constexpr uint8_t kBase = 0, kDiff = 1, kTombstone = 2;
};

// Fig. 7 over items, in any order.
class Fig7 {
 public:
  Fig7(std::vector<PpmtEntry>& ppmt, std::vector<uint32_t>& p2l, const std::vector<uint8_t>& torn,
       uint32_t ppb)
      : ppmt_(ppmt), p2l_(p2l), torn_(torn), ppb_(ppb), base_seq_(ppmt.size(), 0),
        diff_seq_(ppmt.size(), 0), tomb_(ppmt.size(), 0) {}

  // Of two copies with equal seqs (a cut during GC), the one in a block ending in a torn page
  // loses: that block is never appended to, and with no valid page GC erases it without
  // moving anything — repeated cuts during GC would otherwise strand a block each, reserve
  // and all, until GC had no room left to move their copies.
  bool better_copy(Ppa cur, Ppa ppa) const {
    return cur != kNoPpa && torn_[cur / ppb_] && !torn_[ppa / ppb_];
  }

  void apply(const Item& it) {
    PpmtEntry& e = ppmt_[it.lpn];
    if (it.kind == Item::kBase) {  // Case 1: r is a base page
      p2l_[it.ppa] = it.lpn;
      e.copies = e.copies + 1;
      if (it.seq > base_seq_[it.lpn] ||
          (it.seq == base_seq_[it.lpn] && better_copy(e.base, it.ppa))) {
        e.base = it.ppa;
        base_seq_[it.lpn] = it.seq;
        if (it.seq > diff_seq_[it.lpn]) {
          e.diff = kNoPpa;
          tomb_[it.lpn] = 0;
        }
      }
      return;
    }
    // Case 2: a differential d of page r.
    if (it.seq > base_seq_[it.lpn] &&
        (it.seq > diff_seq_[it.lpn] ||
         (it.seq == diff_seq_[it.lpn] && better_copy(e.diff, it.ppa)))) {
      e.diff = it.ppa;
      diff_seq_[it.lpn] = it.seq;
      tomb_[it.lpn] = it.kind == Item::kTombstone;
    }
  }
  bool tombstone(Lpn l) const { return tomb_[l] != 0; }

 private:
  std::vector<PpmtEntry>& ppmt_;
  std::vector<uint32_t>& p2l_;
  const std::vector<uint8_t>& torn_;  // per block: its last programmed page is torn
  const uint32_t ppb_;
  std::vector<uint64_t> base_seq_, diff_seq_;
  std::vector<uint8_t> tomb_;
};

}  // namespace

Status PdlStore::mount(Nand& nand, const StoreParams& params, bool legacy, CommitMode mode,
                       std::unique_ptr<PageStore>* out, MountReport* report) {
  const MountClock clock(nand);
  std::unique_ptr<PdlStore> s(new PdlStore(nand, params));
  s->legacy_ = legacy;
  s->groups_ = mode == CommitMode::kGroup && !legacy;
  s->blocks_.set_user_keep(s->groups_ ? 2 : 1);
  const Geometry& g = s->geo_;
  const uint32_t ppb = g.pages_per_block;
  const size_t lpns = s->ppmt_.size();
  std::vector<uint8_t> torn(g.blocks, 0);
  Fig7 fig7(s->ppmt_, s->p2l_, torn, ppb);
  std::vector<SpareHeader> hdr(ppb);
  std::vector<SpareState> state(ppb);
  std::vector<uint8_t> data(g.page_data);
  std::vector<uint8_t> used(g.blocks, 0);
  std::vector<uint32_t> last_programmed(g.blocks, 0);
  std::vector<uint8_t> gap_free(g.blocks, 0);
  std::vector<uint64_t> newest(g.blocks, 0);
  MountReport rep;
  rep.legacy = legacy;
  uint64_t max_seq = 0;
  // The commit cut-off so far, and the page holding it (format 1: everything counts).
  uint64_t cutoff = legacy ? std::numeric_limits<uint64_t>::max() : 0;
  Ppa commit_ppa = kNoPpa;
  std::vector<Item> waiting;  // items above the cut-off seen so far
  auto note_commit = [&](uint64_t seq, Ppa r) {  // (a GC copy of the record: as for items)
    if (seq > cutoff || (seq == cutoff && fig7.better_copy(commit_ppa, r))) {
      cutoff = seq;
      commit_ppa = r;
    }
  };
  auto take = [&](const Item& it) {
    if (it.seq <= cutoff) fig7.apply(it);
    else waiting.push_back(it);
  };

  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++) {
    if (nand.is_bad(b)) {  // factory-marked or retired: never read (a retired block's stale
      s->blocks_.add_bad(b);  // pages must not come back)
      rep.bad_blocks++;
      continue;
    }
    const Ppa first = b * ppb;
    int last = -1;
    for (uint32_t p = 0; p < ppb; p++) {
      bool passed;
      PDL_TRY(read_with_retries(
          nand, first + p, {}, s->scratch_spare_,
          [&] {
            state[p] = spare_decode(s->scratch_spare_, &hdr[p]);
            return state[p] != SpareState::kCorrupt;
          },
          &passed));
      if (state[p] != SpareState::kErased) last = int(p);
      rep.pages_scanned++;
    }
    // A repaired header counts only with its data: an erase cut part-way (a power cut, or the
    // host process killed in the middle of the emulator's write of the block) can erase the
    // data area and the first spare bytes of a page and leave a header one bit from valid
    // (a differential page's type byte, 0xDF, erased to 0xFF) — a page that was never whole.
    for (uint32_t p = 0; p < ppb; p++) {
      if (state[p] != SpareState::kValid || !hdr[p].repaired) continue;
      bool passed;
      PDL_TRY(read_with_retries(
          nand, first + p, data, {},
          [&] { return crc32c(data.data(), data.size()) == hdr[p].data_crc; }, &passed));
      if (!passed) state[p] = SpareState::kCorrupt;
    }
    if (last < 0) {
      s->blocks_.add_free(b, false);
      continue;
    }
    used[b] = 1;
    last_programmed[b] = uint32_t(last);
    gap_free[b] = 1;
    for (int p = 0; p < last; p++) gap_free[b] &= state[p] != SpareState::kErased;
    for (int p = 0; p <= last; p++)
      if (state[p] == SpareState::kValid) newest[b] = std::max(newest[b], hdr[p].seq);
    // The last programmed page may be torn: check its data (differential pages are read below).
    if (state[last] == SpareState::kValid && hdr[last].type == PageType::kBase) {
      bool passed;
      PDL_TRY(read_with_retries(
          nand, first + Ppa(last), data, {},
          [&] { return crc32c(data.data(), data.size()) == hdr[last].data_crc; }, &passed));
      if (!passed) state[last] = SpareState::kCorrupt;
    }
    // A block ending in a torn page is never appended to: at a later mount that page would no
    // longer be the last one, and its data would go unchecked.
    if (state[last] != SpareState::kValid) {
      gap_free[b] = 0;
      torn[b] = 1;
    }
    for (int p = 0; p <= last; p++) {
      const Ppa r = first + Ppa(p);
      const SpareHeader& h = hdr[p];
      if (state[p] == SpareState::kErased) continue;
      if (state[p] == SpareState::kCorrupt && p < last) {
        // Pages are programmed in order and a block ending in a torn page is never appended
        // to, so only the last programmed page can be torn: this one is damaged — unless an
        // erase of the block stopped part-way (a power cut, or the host process killed in the
        // middle of the emulator's write of the block): an erased page before this one, or
        // this page's data erased, says the block was being erased, and its pages were stale.
        bool erasing = false;
        for (int e = 0; e < p && !erasing; e++) erasing = state[e] == SpareState::kErased;
        if (!erasing) {
          bool data_erased = false;
          PDL_TRY(read_with_retries(nand, r, data, {}, [&] { return all_ff(data); },
                                    &data_erased));
          erasing = data_erased;
        }
        if (erasing) {
          rep.torn_pages++;
        } else {
          rep.damaged_pages++;
        }
        continue;
      }
      if (state[p] == SpareState::kCorrupt ||
          (h.type != PageType::kBase && h.type != PageType::kDifferential)) {
        rep.torn_pages++;
        continue;
      }
      if (h.repaired) rep.spare_repairs++;
      max_seq = std::max(max_seq, h.seq);
      if (h.obsolete) {  // IS_OBSOLETE_PAGE(r) — its commit record still counts (the newest
        // is never marked; an older one is a lower bound): a mark only follows a whole program
        if (h.commit && !legacy) note_commit(h.seq, r);
        continue;
      }
      if (h.type == PageType::kBase) {  // Case 1: r is a base page
        if (h.lpn >= lpns) {
          rep.torn_pages++;
          continue;
        }
        if (h.commit && !legacy) note_commit(h.seq, r);
        take(Item{r, h.lpn, h.seq, Item::kBase});
        continue;
      }
      // Case 2: r is a differential page.
      bool passed;
      PDL_TRY(read_with_retries(
          nand, r, data, {}, [&] { return crc32c(data.data(), data.size()) == h.data_crc; },
          &passed));
      if (!passed || h.aux > g.page_data) {
        rep.torn_pages++;
        continue;
      }
      s->p2l_[r] = kP2lDifferential;
      if (h.commit && !legacy) note_commit(h.seq, r);  // (its records are all older than h.seq)
      RecordReader rr(std::span<const uint8_t>(data).first(h.aux));
      RecordView d;
      while (rr.next(&d)) {
        if (d.lpn >= lpns) continue;
        max_seq = std::max(max_seq, d.seq);
        take(Item{r, d.lpn, d.seq, d.tombstone ? Item::kTombstone : Item::kDiff});
      }
      if (!rr.status().is_ok()) rep.torn_pages++;
    }
  }
  // The cut-off is final: what waited is committed or void.
  std::vector<uint8_t> void_block(g.blocks, 0);
  for (const Item& it : waiting) {
    if (it.seq <= cutoff) {
      fig7.apply(it);
      continue;
    }
    rep.void_pages++;  // (counts items: a void differential page may hold several)
    void_block[it.ppa / ppb] = 1;
  }
  for (uint32_t b = 0; b < g.blocks; b++)
    if (void_block[b]) s->note_void_block(b);

  // Resolve tombstones and orphans; rebuild vdct and block valid counts.
  std::vector<uint32_t> valid(g.blocks, 0);
  for (size_t l = 0; l < lpns; l++) {
    PpmtEntry& e = s->ppmt_[l];
    if (e.diff != kNoPpa) {
      if (fig7.tombstone(Lpn(l))) {
        e.base = kNoPpa;                    // trimmed after its last base page
        if (e.copies == 0) e.diff = kNoPpa;  // and nothing left to hide
      } else if (e.base == kNoPpa) {
        e.diff = kNoPpa;                    // a differential without a base page
      }
    }
    if (e.diff != kNoPpa && s->vdct_[e.diff]++ == 0) valid[e.diff / ppb]++;
    if (e.base != kNoPpa) {
      valid[e.base / ppb]++;
      rep.live_lpns++;
    }
  }
  // With atomic groups the newest commit record is pinned: its page counts as valid until a
  // newer one exists (set_commit_mode pins it later if the store starts kPerPage).
  if (s->groups_) {
    s->commit_ppa_ = commit_ppa;
    if (commit_ppa != kNoPpa && !s->referenced(commit_ppa)) valid[commit_ppa / ppb]++;
  } else {
    s->commit_candidate_ = commit_ppa;
  }
  s->committed_seq_ = legacy ? 0 : cutoff;
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
  std::vector<std::tuple<bool, uint64_t, uint32_t>> partly;  // (holds valid, newest seq, block)
  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++)
    if (used[b] && gap_free[b] && !void_block[b] && last_programmed[b] + 1 < ppb)
      partly.push_back({valid[b] > 0, newest[b], b});
  std::sort(partly.rbegin(), partly.rend());
  int heads = 0;
  for (const auto& [holds_valid, seq, b] : partly) {
    if (heads == 2) break;
    bool erased = true;
    for (uint32_t p = last_programmed[b] + 1; p < ppb && erased; p++) {
      PDL_TRY(
          read_with_retries(nand, b * ppb + p, data, {}, [&] { return all_ff(data); }, &erased));
    }
    if (!erased) continue;
    s->blocks_.add_open(heads == 0 ? BlockManager::Head::kUser : BlockManager::Head::kGc, b,
                        last_programmed[b] + 1, valid[b]);
    used[b] = 0;
    heads++;
  }
  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++)
    if (used[b]) s->blocks_.add_closed(b, valid[b]);
  for (Ppa p = 0; p < g.total_pages(); p++)
    if (s->vdct_[p]) rep.valid_diff_pages++;

  s->next_seq_ = max_seq + 1;
  rep.next_seq = s->next_seq_;
  rep.committed_seq = s->committed_seq_;
  rep.free_blocks = s->blocks_.free_blocks();
  clock.finish(&rep);
  if (report) *report = rep;
  s->stats_.void_pages = rep.void_pages;
  s->damaged_pages_ = rep.damaged_pages;
  s->ledger_.charge(s->ledger_.other());
  *out = std::move(s);
  return Status::ok();
}

}  // namespace pdl
