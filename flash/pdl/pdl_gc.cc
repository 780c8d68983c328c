// pdl_gc.cc — garbage collection ([PDL] §4.1): greedy victim (or, as an experiment, the
// oldest: StoreParams::gc_victim), move valid base pages, compact valid differentials, erase —
// or retire the victim if it is a grown bad block.
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
// Atomic groups (pdl_commit.cc): a page is valid if it is an lpn's current *or committed*
// version, so GC moves the committed versions an open group replaced along with the group's
// own pages. Copies keep their seqs: a moved page of the group stays uncommitted (a crash
// discards it, a commit covers it), and a copy holding group data is itself a page of the
// group. Merges are done only for lpns the open group has not touched. If the victim holds the
// page with the newest commit record, the record is restated (moved with its base page, or a
// marker) before the victim is erased. In kPerPage mode every page GC programs is a commit
// record covering itself (all data on flash is committed there), so nothing is pinned.
#include <algorithm>
#include <cassert>

#include "flash/codec/differential.h"

#include "flash/pdl/pdl_store.h"
#include "flash/store/reread.h"

namespace pdl {

Status PdlStore::gc_flush_compaction() {
  if (gc_buffer_.empty()) return Status::ok();
  SpareHeader h;
  h.type = PageType::kDifferential;
  h.set_record_count(uint32_t(gc_buffer_.count()));
  h.aux = gc_buffer_.used();
  gc_buffer_.for_each([&](const RecordView& r) { h.seq = std::max(h.seq, r.seq); });
  h.commit = !groups_;  // kPerPage: every page is a commit record covering itself
  Ppa q;
  PDL_TRY(program_page(BlockManager::Head::kGc, gc_buffer_.page(), h, &q));
  stats_.gc_diff_pages++;
  p2l_.ref(q) = kP2lDifferential;
  if (gc_buffer_group_) note_group_page(q);
  size_t i = 0;
  gc_buffer_.for_each([&](const RecordView& r) {
    const Ppa src = gc_sources_[i++];  // the victim's page the record came from
    PpmtEntry& e = ppmt_.ref(r.lpn);
    auto c = committed_.find(r.lpn);
    assert((vdct_.get(src) > 0) || !tables_status().is_ok());  // (the victim's own valid count no longer matters)
    vdct_.ref(src)--;
    if (e.diff == src) e.diff = q;
    if (c != committed_.end() && c->second.diff == src) c->second.diff = q;
    if (vdct_.ref(q)++ == 0) blocks_.valid_inc(q);
  });
  gc_buffer_.clear();
  gc_sources_.clear();
  gc_buffer_group_ = false;
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
      if (p2l_.get(p) == kP2lDifferential && vdct_.get(p) > 0) {
        pages++;
        records += vdct_.get(p);
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
  PpmtEntry& e = ppmt_.ref(r.lpn);
  assert(committed_of(r.lpn) == nullptr);  // only lpns the open group has not touched
  Status st = read_checked(e.base, scratch_base_, nullptr);
  if (st.is_ok()) st = diff_apply(r.runs, scratch_base_);
  if (!st.is_ok()) return fail(Status::error(Errc::kIoError, std::string(st.message())));
  SpareHeader h;
  h.type = PageType::kBase;
  h.set_logical_page(r.lpn);
  h.seq = r.seq;
  h.commit = !groups_;
  Ppa q;
  PDL_TRY(program_page(BlockManager::Head::kGc, scratch_base_, h, &q));
  stats_.gc_merges++;
  p2l_.ref(q) = r.lpn;
  e.copies = e.copies + 1;
  blocks_.valid_inc(q);
  const Ppa old_base = e.base;
  e.base = q;
  e.diff = kNoPpa;
  vdct_.ref(dp)--;
  return base_becomes_stale(old_base);
}

Status PdlStore::gc_once(int64_t victim) {
  if (victim < 0)
    victim = params_.gc_victim == GcVictim::kOldest ? blocks_.oldest_victim()
                                                    : blocks_.greedy_victim();
  // With no invalid page anywhere, only merging frees space: each merge of a differential
  // into a new base page makes the old base page garbage, so every differential of the victim
  // is merged, whatever its size (as far as the room allows).
  const bool merge_all = victim < 0;
  if (victim < 0) victim = merge_victim();
  if (victim < 0) return Status::error(Errc::kFull, "flash full: no block has space to reclaim");
  const Ppa first = Ppa(uint64_t(victim) * geo_.pages_per_block);
  const Ppa end = first + geo_.pages_per_block;
  auto group_seq = [&](uint64_t seq) { return !legacy_ && seq > committed_seq_; };

  // Never start a collection that could not finish. Moving the victim costs one page per
  // current or committed base page; compacting k differential pages costs at most k pages
  // (each page's records fit one page, so each page after the first causes at most one flush
  // into a buffer the previous ones started, plus the last flush); restating the newest
  // commit record costs one more. Merges are extra and are only done while that bound still
  // fits (below). A victim with nothing valid needs no room at all, so it can always be erased.
  uint64_t bases = 0, dpages = 0;
  for (Ppa ppa = first; ppa < end; ppa++) {
    const uint32_t m = p2l_.get(ppa);
    if (m == kP2lDifferential) dpages += vdct_.get(ppa) > 0;
    else if (m != kP2lNone && referenced(ppa)) bases++;
  }
  const bool holds_commit = commit_ppa_ >= first && commit_ppa_ < end;
  const uint64_t marker = holds_commit ? 1 : 0;
  if (blocks_.gc_pages_available() < bases + dpages + marker)
    return Status::error(Errc::kFull, "flash full: no room left for garbage collection");
  blocks_.take(uint32_t(victim));
  gc_victim_ = victim;
  stats_.gc_runs++;
  gc_orphans_.clear();
  Ppa moved_commit = kNoPpa;  // the copy of the commit page, if it is a base page moved

  // Pass 1: base pages. Move the current and committed ones; every copy in the victim stops
  // counting.
  for (Ppa ppa = first; ppa < end; ppa++) {
    const uint32_t m = p2l_.get(ppa);
    if (m == kP2lNone || m == kP2lDifferential) continue;
    PpmtEntry& e = ppmt_.ref(m);
    auto c = committed_.find(m);
    const bool cur = e.base == ppa, com = c != committed_.end() && c->second.base == ppa;
    if (cur || com) {
      SpareHeader h;
      Status st = read_checked(ppa, scratch_base_, &h);
      if (!st.is_ok()) return fail(st.is(Errc::kCorrupt) ? Status::error(Errc::kIoError,
                                                               std::string(st.message()))
                                                         : st);
      h.obsolete = false;
      if (!groups_) h.commit = true;
      Ppa q;
      PDL_TRY(program_page(BlockManager::Head::kGc, scratch_base_, h, &q));  // same seq, flags
      p2l_.ref(q) = m;
      e.copies = e.copies + 1;
      if (cur) e.base = q;
      if (com) c->second.base = q;
      blocks_.valid_inc(q);
      if (group_seq(h.seq)) note_group_page(q);
      if (ppa == commit_ppa_ && h.commit && h.seq == committed_seq_) moved_commit = q;
      stats_.gc_base_moves++;
    }
    e.copies = e.copies - 1;
    p2l_.ref(ppa) = kP2lNone;
    if (e.copies == 0 && e.base == kNoPpa) gc_orphans_.push_back(m);
  }

  // Pass 2: differential pages. Compact the valid differentials, keeping their seqs, or merge
  // them. Tombstones are always carried over, even those whose last hidden copy this GC is
  // erasing: until that erase has completed, the copy may survive a cut (pass 3 drops them).
  for (Ppa ppa = first; ppa < end; ppa++) {
    if (p2l_.get(ppa) != kP2lDifferential) continue;
    p2l_.ref(ppa) = kP2lNone;
    if (vdct_.get(ppa) == 0) continue;
    SpareHeader h;
    Status st = read_checked(ppa, scratch_diff_, &h);
    if (st.is_ok() && (h.type != PageType::kDifferential || h.aux > geo_.page_data))
      st = Status::error(Errc::kCorrupt, "bad differential page");
    if (!st.is_ok()) return fail(Status::error(Errc::kIoError, std::string(st.message())));
    RecordReader rr(std::span<const uint8_t>(scratch_diff_).first(h.aux));
    RecordView r;
    while (rr.next(&r)) {
      if (r.lpn >= ppmt_.size()) continue;
      PpmtEntry& e = ppmt_.ref(r.lpn);
      const Refs* c = committed_of(r.lpn);
      if (e.diff != ppa && !(c && c->diff == ppa)) continue;  // superseded record
      // Room for this merge and for compacting what is left (see the bound above).
      const bool room =
          blocks_.gc_pages_available() >= 1 + dpages + marker + (gc_buffer_.empty() ? 0 : 1);
      const bool large = params_.gc_merge && r.size() > geo_.page_data / 2;
      if (!r.tombstone && !c && (merge_all || large) && !e.in_dwb && room) {
        PDL_TRY(gc_merge(r, ppa));
        continue;
      }
      // One record per lpn and page: an lpn's current and committed differentials may both be
      // in the victim.
      RecordView dup;
      if (r.size() > gc_buffer_.free_space() || gc_buffer_.find(r.lpn, &dup))
        PDL_TRY(gc_flush_compaction());
      gc_buffer_.put(r);
      gc_sources_.push_back(ppa);
      if (group_seq(r.seq)) gc_buffer_group_ = true;
      stats_.gc_diff_moves++;
    }
    if (!rr.status().is_ok()) return fail(Status::error(Errc::kIoError, "corrupt differential page"));
    dpages--;
  }
  PDL_TRY(gc_flush_compaction());
  // The newest commit record must outlive its page.
  if (holds_commit) {
    if (moved_commit != kNoPpa) set_commit_page(moved_commit);
    else PDL_TRY(program_marker(BlockManager::Head::kGc, committed_seq_));
  }

  for (Ppa ppa = first; ppa < end; ppa++) assert((vdct_.get(ppa) == 0) || !tables_status().is_ok());  // Invariant: victim empty
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
  // Nothing of the victim is on flash any more: not the open group's pages, not a discarded
  // group's (the purge's aim).
  if (!group_page_.empty())
    for (Ppa ppa = first; ppa < end; ppa++) group_page_.erase(ppa);
  if (void_block_[victim]) {
    void_block_[victim] = 0;
    void_blocks_--;
  }

  // Pass 3, only now that the erase is complete: tombstones whose last hidden copy was in the
  // victim protect nothing any more (unless the open group still needs its committed entry).
  // Every one is dropped even once a mark is refused (a full host halts the store; the tables
  // stay whole for reads); the first error is returned.
  Status dropped;
  for (Lpn l : gc_orphans_) {
    PpmtEntry& e = ppmt_.ref(l);
    if (e.copies == 0 && e.base == kNoPpa && e.diff != kNoPpa && !committed_of(l)) {
      const Ppa dp = e.diff;
      e.diff = kNoPpa;
      const Status st = decrease_vdct(dp);
      if (dropped.is_ok()) dropped = st;
    }
  }
  return dropped;
}

}  // namespace pdl
