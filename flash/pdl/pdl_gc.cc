// pdl_gc.cc — garbage collection (seed 000 §4.1): greedy victim, move valid base pages,
// compact valid differentials, erase — or retire the victim if it is a grown bad block.
//
// Large differentials are merged with their base page instead of being copied (gc_merge).
//
// Order matters for crash safety: every valid page or differential of the victim is programmed
// elsewhere (keeping its sequence number) before the victim is erased. A cut between the two
// leaves two identical copies; recovery keeps one (equal sequence numbers, same bytes). An
// interrupted erase may leave any subset of the victim's pages, so nothing that hides them
// (a tombstone) is dropped, and no page elsewhere is marked obsolete on their account, until
// the erase has completed.
// GC never touches the user's differential write buffer: compaction has its own buffer,
// flushed before the erase, so buffered (unsynced) differentials are never made durable by GC
// out of order with respect to their base pages.
#include <algorithm>
#include <cassert>

#include "flash/pdl/differential.h"

#include "flash/pdl/pdl_store.h"
#include "flash/store/reread.h"

namespace pdl {

Status PdlStore::gc_flush_compaction() {
  if (gc_buffer_.empty()) return Status::ok();
  SpareHeader h;
  h.type = PageType::kDifferential;
  h.lpn = uint32_t(gc_buffer_.count());
  h.aux = gc_buffer_.used();
  gc_buffer_.for_each([&](const RecordView& r) { h.seq = std::max(h.seq, r.seq); });
  Ppa q;
  PDL_TRY(program_page(BlockManager::Head::kGc, gc_buffer_.page(), h, &q));
  stats_.gc_diff_pages++;
  p2l_[q] = kP2lDifferential;
  gc_buffer_.for_each([&](const RecordView& r) {
    PpmtEntry& e = ppmt_[r.lpn];
    assert(vdct_[e.diff] > 0);  // the record's old page is in the victim
    vdct_[e.diff]--;
    e.diff = q;
    if (vdct_[q]++ == 0) blocks_.valid_inc(q);
  });
  gc_buffer_.clear();
  return Status::ok();
}

// When every closed block is wholly valid, erasing alone frees nothing, but merging still
// can. Pick the full block with the most differential pages (then the fewest valid
// differentials).
int64_t PdlStore::merge_victim() {
  int64_t best = -1;
  uint32_t best_pages = 0, best_records = 0;  // one differential page already gains a page
  blocks_.for_each_full_block([&](uint32_t b) {
    uint32_t pages = 0, records = 0;
    for (Ppa p = b * geo_.pages_per_block; p < (b + 1) * geo_.pages_per_block; p++)
      if (p2l_[p] == kP2lDifferential && vdct_[p] > 0) {
        pages++;
        records += vdct_[p];
      }
    if (pages > best_pages || (pages == best_pages && best >= 0 && records < best_records)) {
      best = b;
      best_pages = pages;
      best_records = records;
    }
  });
  return best;
}

// Merge instead of compaction (also used for every differential of a victim when no block
// has an invalid page). A differential larger than half a page would fill most of a
// differential page on its own, so GC writes base + differential as a new base page instead
// (one program either way) and the old base page becomes garbage. Without this, PDL with a
// large Max_Differential_Size has no steady state: differentials only grow until Case 3,
// and the chip fills with half-empty differential pages that compaction cannot shrink.
// The merged page takes the differential's sequence number, so recovery prefers it to the old
// base and ignores the differential if both survive a cut. Not done while a newer differential
// of the page waits in the write buffer: that one was computed against the old base.
Status PdlStore::gc_merge(const RecordView& r, Ppa dp) {
  PpmtEntry& e = ppmt_[r.lpn];
  Status st = read_checked(e.base, scratch_base_, nullptr);
  if (st.is_ok()) st = diff_apply(r.runs, scratch_base_);
  if (!st.is_ok()) return fail(Status::error(Errc::kIoError, std::string(st.message())));
  SpareHeader h;
  h.type = PageType::kBase;
  h.lpn = r.lpn;
  h.seq = r.seq;
  Ppa q;
  PDL_TRY(program_page(BlockManager::Head::kGc, scratch_base_, h, &q));
  stats_.gc_merges++;
  p2l_[q] = r.lpn;
  e.copies = e.copies + 1;
  blocks_.valid_inc(q);
  const Ppa old_base = e.base;
  e.base = q;
  e.diff = kNoPpa;
  vdct_[dp]--;
  return base_becomes_stale(old_base);
}

Status PdlStore::gc_once(int64_t victim) {
  if (victim < 0) victim = blocks_.greedy_victim();
  // With no invalid page anywhere, only merging frees space: each merge of a differential
  // into a new base page makes the old base page garbage, so every differential of the victim
  // is merged, whatever its size (as far as the room allows).
  const bool merge_all = victim < 0;
  if (victim < 0) victim = merge_victim();
  if (victim < 0) return Status::error(Errc::kFull, "flash full: no block has space to reclaim");
  const Ppa first = Ppa(uint64_t(victim) * geo_.pages_per_block);
  const Ppa end = first + geo_.pages_per_block;

  // Never start a collection that could not finish. Moving the victim costs one page per
  // current base page; compacting k differential pages costs at most k pages (each page's
  // records fit one page, so each page after the first causes at most one flush into a
  // buffer the previous ones started, plus the last flush). Merges are extra and are only done
  // while that bound still fits (below). A victim with nothing valid needs no room at all, so
  // it can always be erased.
  uint64_t bases = 0, dpages = 0;
  for (Ppa ppa = first; ppa < end; ppa++) {
    const uint32_t m = p2l_[ppa];
    if (m == kP2lDifferential) dpages += vdct_[ppa] > 0;
    else if (m != kP2lNone && ppmt_[m].base == ppa) bases++;
  }
  if (blocks_.gc_pages_available() < bases + dpages)
    return Status::error(Errc::kFull, "flash full: no room left for garbage collection");
  blocks_.take(uint32_t(victim));
  gc_victim_ = victim;
  stats_.gc_runs++;
  gc_orphans_.clear();

  // Pass 1: base pages. Move the current ones; every copy in the victim stops counting.
  for (Ppa ppa = first; ppa < end; ppa++) {
    const uint32_t m = p2l_[ppa];
    if (m == kP2lNone || m == kP2lDifferential) continue;
    PpmtEntry& e = ppmt_[m];
    if (e.base == ppa) {
      SpareHeader h;
      Status st = read_checked(ppa, scratch_base_, &h);
      if (!st.is_ok()) return fail(st.is(Errc::kCorrupt) ? Status::error(Errc::kIoError,
                                                               std::string(st.message()))
                                                         : st);
      h.obsolete = false;
      Ppa q;
      PDL_TRY(program_page(BlockManager::Head::kGc, scratch_base_, h, &q));  // same seq
      p2l_[q] = m;
      e.copies = e.copies + 1;
      e.base = q;
      blocks_.valid_inc(q);
      stats_.gc_base_moves++;
    }
    e.copies = e.copies - 1;
    p2l_[ppa] = kP2lNone;
    if (e.copies == 0 && e.base == kNoPpa) gc_orphans_.push_back(m);
  }

  // Pass 2: differential pages. Compact the valid differentials, keeping their seqs, or merge
  // them. Tombstones are always carried over, even those whose last hidden copy this GC is
  // erasing: until that erase has completed, the copy may survive a cut (pass 3 drops them).
  for (Ppa ppa = first; ppa < end; ppa++) {
    if (p2l_[ppa] != kP2lDifferential) continue;
    p2l_[ppa] = kP2lNone;
    if (vdct_[ppa] == 0) continue;
    SpareHeader h;
    Status st = read_checked(ppa, scratch_diff_, &h);
    if (st.is_ok() && (h.type != PageType::kDifferential || h.aux > geo_.page_data))
      st = Status::error(Errc::kCorrupt, "bad differential page");
    if (!st.is_ok()) return fail(Status::error(Errc::kIoError, std::string(st.message())));
    RecordReader rr(std::span<const uint8_t>(scratch_diff_).first(h.aux));
    RecordView r;
    while (rr.next(&r)) {
      if (r.lpn >= ppmt_.size()) continue;
      PpmtEntry& e = ppmt_[r.lpn];
      if (e.diff != ppa) continue;  // superseded record
      // Room for this merge and for compacting what is left (see the bound above).
      const bool room =
          blocks_.gc_pages_available() >= 1 + dpages + (gc_buffer_.empty() ? 0 : 1);
      if (!r.tombstone && (merge_all || r.size() > geo_.page_data / 2) && !e.in_dwb && room) {
        PDL_TRY(gc_merge(r, ppa));
        continue;
      }
      if (r.size() > gc_buffer_.free_space()) PDL_TRY(gc_flush_compaction());
      gc_buffer_.put(r);
      stats_.gc_diff_moves++;
    }
    if (!rr.status().is_ok()) return fail(Status::error(Errc::kIoError, "corrupt differential page"));
    dpages--;
  }
  PDL_TRY(gc_flush_compaction());

  for (Ppa ppa = first; ppa < end; ppa++) assert(vdct_[ppa] == 0);  // Invariant: victim empty
  // A victim a program failed in, or whose erase fails, is retired: marked bad, so that no
  // mount ever scans it again (its stale pages stay).
  const Status st = blocks_.retiring(uint32_t(victim))
                        ? Status::error(Errc::kBadBlock, "retiring")
                        : erase_with_retries(nand_, uint32_t(victim));
  if (st.is(Errc::kBadBlock)) {
    PDL_TRY(fail(blocks_.retire(uint32_t(victim), nand_)));
  } else {
    PDL_TRY(fail(st));
    blocks_.victim_erased(uint32_t(victim));
  }
  gc_victim_ = -1;

  // Pass 3, only now that the erase is complete: tombstones whose last hidden copy was in the
  // victim protect nothing any more.
  for (Lpn l : gc_orphans_) {
    PpmtEntry& e = ppmt_[l];
    if (e.copies == 0 && e.base == kNoPpa && e.diff != kNoPpa) {
      const Ppa dp = e.diff;
      e.diff = kNoPpa;
      PDL_TRY(decrease_vdct(dp));
    }
  }
  return Status::ok();
}

}  // namespace pdl
