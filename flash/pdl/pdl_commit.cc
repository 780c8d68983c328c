// pdl_commit.cc — atomic groups: sync() as a commit, abort(), the pending base page, commit
// records, and the purge of discarded groups' pages (pdl_store.h explains the design).
//
// [PDL] §4.5 makes PDL's flush "writingDifferentialWriteBuffer" and relies on programs being
// atomic at the chip level. The commit extends that atomicity from one page to a group: the
// write buffer's page is also the commit record. What makes it work:
//   * every change of the group keeps the committed version valid (touch / committed_): no
//     obsolete mark, no GC erase can make committed data unreadable before the commit;
//   * the commit page is programmed last, and its spare says "every seq up to mine is
//     committed" (the header seq, flag bit in byte 3): recovery drops everything newer;
//   * seqs handed out after a crash or an abort never reuse a discarded one (next_seq_ stays
//     above them), and the discarded pages are erased (purge_void_blocks) before the next
//     commit record, whose seq is larger than theirs, is programmed;
//   * the newest commit record survives GC (the pinned page is moved or restated by a
//     marker before its block is erased).
// Invariant: after sync() returns, committed_, the write buffer, pending_ and group_pages_ are
// empty, and no void block remains.
#include <algorithm>
#include <cassert>

#include "flash/pdl/pdl_store.h"

namespace pdl {

bool PdlStore::dirty() const {
  // (With NVM the buffer outlives commits: only its changes since the last one are dirty.)
  return !committed_.empty() || (nvm_ ? !nvm_changed_.empty() : !dwb_.empty()) ||
         pending_.held || !group_pages_.empty();
}

void PdlStore::touch(Lpn lpn) {
  committed_.try_emplace(lpn, Refs{ppmt_.get(lpn).base, ppmt_.get(lpn).diff});
}

bool PdlStore::referenced(Ppa ppa) const {
  const uint32_t m = p2l_.get(ppa);
  if (m == kP2lDifferential) return vdct_.get(ppa) > 0;
  if (m >= ppmt_.size()) return false;
  if (ppmt_.get(m).base == ppa) return true;
  const Refs* c = committed_of(m);
  return c && c->base == ppa;
}

Status PdlStore::drop_current_base(Lpn lpn, Ppa old) {
  if (old == kNoPpa || old == kPendingPpa) return Status::ok();
  const Refs* c = committed_of(lpn);
  if (c && c->base == old) return Status::ok();  // the committed version: valid until commit
  return base_becomes_stale(old);
}

Status PdlStore::set_current_diff(Lpn lpn, Ppa q) {
  PpmtEntry& e = ppmt_.ref(lpn);
  const Ppa old = e.diff;
  if (old == q) return Status::ok();
  e.diff = q;
  const Refs* c = committed_of(lpn);
  // vdct counts an lpn once per page: its current differential, and its committed one if that
  // is another page.
  if (q != kNoPpa && !(c && c->diff == q) && vdct_.ref(q)++ == 0 && q != commit_ppa_)
    blocks_.valid_inc(q);
  if (old != kNoPpa && !(c && c->diff == old)) return decrease_vdct(old);
  return Status::ok();
}

void PdlStore::note_group_page(Ppa ppa) {
  if (!groups_ || !group_page_.insert(ppa).second) return;
  group_pages_.push_back(ppa);
}

void PdlStore::set_commit_page(Ppa ppa) {
  if (!groups_) {  // nothing is pinned in kPerPage mode (every page covers itself)
    commit_candidate_ = ppa;
    return;
  }
  const Ppa old = commit_ppa_;
  if (ppa == old) return;
  commit_ppa_ = ppa;  // (set first: referenced() ignores the pin, valid counts do not)
  if (ppa != kNoPpa && !referenced(ppa)) blocks_.valid_inc(ppa);
  if (old != kNoPpa && !referenced(old)) blocks_.valid_dec(old);
}

void PdlStore::note_void_block(uint32_t block) {
  if (void_block_[block]) return;
  void_block_[block] = 1;
  void_blocks_++;
}

uint64_t PdlStore::commit_pages() const {
  if (nvm_) return pending_.held ? 1 : 0;  // the commit record is in NVM
  if (!groups_) return dwb_.empty() ? 0 : 1;
  if (!dwb_.empty()) return pending_.held ? 2 : 1;
  if (pending_.held) return pending_.seq == next_seq_ - 1 ? 1 : 2;
  return group_pages_.empty() ? 0 : 1;
}

// The pending base page goes to flash (its lpn's class pays), as the commit page if asked.
Status PdlStore::program_pending(bool commit) {
  assert((pending_.held && ppmt_.get(pending_.lpn).base == kPendingPpa) || !tables_status().is_ok());
  const Lpn lpn = pending_.lpn;
  SpareHeader h;
  h.type = PageType::kBase;
  h.set_logical_page(lpn);
  h.seq = pending_.seq;
  h.commit = commit;
  ledger_.charge_current();
  Ppa q;
  const Status st = program_page(BlockManager::Head::kUser, pending_.data, h, &q);
  ledger_.charge(bucket_of(lpn));
  PDL_TRY(st);
  pending_.held = false;
  stats_.base_pages_written++;
  ledger_.cls(lpn).base_pages++;
  PpmtEntry& e = ppmt_.ref(lpn);
  p2l_.ref(q) = lpn;
  e.copies = e.copies + 1;
  e.base = q;
  blocks_.valid_inc(q);
  note_group_page(q);
  if (commit) set_commit_page(q);
  return Status::ok();
}

// A commit page without data (no records): the commit record alone. `seq` is the record.
Status PdlStore::program_marker(BlockManager::Head h, uint64_t seq) {
  SpareHeader hdr;
  hdr.type = PageType::kDifferential;
  hdr.seq = seq;
  hdr.commit = true;
  std::fill(scratch_diff_.begin(), scratch_diff_.end(), 0xFF);
  Ppa q;
  PDL_TRY(program_page(h, scratch_diff_, hdr, &q));
  p2l_.ref(q) = kP2lDifferential;
  stats_.commit_markers++;
  set_commit_page(q);
  return Status::ok();
}

void PdlStore::end_group() {
  group_page_.clear();
  group_pages_.clear();
  committed_.clear();
}

// Collect every block holding pages (or records) of a discarded group, so that no commit
// record can ever cover their seqs. Open heads among them are closed first.
Status PdlStore::purge_void_blocks() {
  for (uint32_t b = kSuperblockBlocks; b < geo_.blocks && void_blocks_ > 0; b++) {
    if (!void_block_[b]) continue;
    if (blocks_.is_free(b) || blocks_.is_bad(b)) {  // erased or retired since
      void_block_[b] = 0;
      void_blocks_--;
      continue;
    }
    blocks_.close_head(b);
    ledger_.charge_current();
    Status st = gc_once(int64_t(b));
    // No room to move the void block's valid pages: reclaim room first (greedy GC
    // programs no commit record that could cover a void seq), then retry.
    for (uint32_t round = 0; st.is(Errc::kFull) && void_block_[b] && round < 2 * geo_.blocks;
         round++) {
      st = gc_once();
      if (st.is_ok() && void_block_[b]) st = gc_once(int64_t(b));
    }
    ledger_.charge(ledger_.other());
    PDL_TRY(fail(st));
    stats_.purged_blocks++;
    assert(!void_block_[b]);  // gc_once erased (or retired) it
  }
  return Status::ok();
}

Status PdlStore::sync_op() {
  PDL_TRY(changeable());
  CostLedger::Scope cost(ledger_, ledger_.other());  // the flush charges its records' classes
  stats_.syncs++;
  if (!groups_ && nvm_) {  // kPerPage with NVM: the buffer's changes go to the NVM log
    if (!nvm_changed_.empty()) {
      if (void_blocks_ > 0) PDL_TRY(purge_void_blocks());
      PDL_TRY(nvm_commit());
      PDL_TRY(nvm_apply_trims());
    }
  } else if (!groups_) {  // kPerPage: every page already counts; flush what the buffer holds
    if (!dwb_.empty()) {
      PDL_TRY(ensure_user_space(1));
      PDL_TRY(flush_write_buffer());
    }
  } else if (dirty()) {
    PDL_TRY(ensure_user_space(commit_pages()));  // (discarded groups' pages are purged first)
    // The commit record: every seq handed out so far. It rides on the write buffer's page, or
    // on the pending base page if it is the group's newest, else on a marker of its own.
    const uint64_t s = next_seq_ - 1;
    const bool record = nvm_ || commit_pages() > 0;
    if (nvm_) {  // the pending base page to flash, then the commit entry to NVM
      if (pending_.held) PDL_TRY(program_pending(false));
      PDL_TRY(nvm_commit());
    } else if (!dwb_.empty()) {
      if (pending_.held) PDL_TRY(program_pending(false));
      PDL_TRY(flush_write_buffer(true));
    } else if (pending_.held) {
      const bool newest = pending_.seq == s;
      PDL_TRY(program_pending(newest));
      if (!newest) PDL_TRY(program_marker(BlockManager::Head::kUser, s));
    } else if (!group_pages_.empty()) {
      PDL_TRY(program_marker(BlockManager::Head::kUser, s));
    }
    if (record) {
      committed_seq_ = s;
      stats_.commits++;
    }
    // Committed now: the versions the group replaced are stale (in obsolete=spare mode they
    // are marked now — only now, so that a cut before the commit finds them unmarked).
    // Each lpn's marks are charged to its class, as a write's own marks are.
    ledger_.charge_current();
    for (auto& [l, c] : committed_) {
      const PpmtEntry e = ppmt_.get(l);
      Status st;
      if (c.base != kNoPpa && c.base != e.base) {
        const Ppa gone = c.base;
        c.base = kNoPpa;  // no longer a committed reference
        st = base_becomes_stale(gone);
      }
      if (st.is_ok() && c.diff != kNoPpa && c.diff != e.diff) {
        const Ppa gone = c.diff;
        c.diff = kNoPpa;
        st = decrease_vdct(gone);
      }
      ledger_.charge(bucket_of(l));
      PDL_TRY(st);
    }
    end_group();
    if (nvm_) PDL_TRY(nvm_apply_trims());
  }
  PDL_TRY(collect_pending(true));
  return fail(nand_.flush());
}

Status PdlStore::abort_op() {
  PDL_TRY(changeable());
  if (!groups_)
    return Status::error(Errc::kUnsupported, "no atomic groups: every page counts once written");
  CostLedger::Scope cost(ledger_, ledger_.other());
  stats_.aborts++;
  // What never reached flash is dropped; with NVM the buffer returns to its committed state.
  dwb_.for_each([&](const RecordView& r) { ppmt_.ref(r.lpn).in_dwb = 0; });
  dwb_.clear();
  if (nvm_) {
    dwb_ = committed_dwb_;
    dwb_.for_each([&](const RecordView& r) { ppmt_.ref(r.lpn).in_dwb = 1; });
    nvm_changed_.clear();
  }
  pending_.held = false;
  // Every touched lpn gets its committed entry back; the group's references go.
  for (const auto& [l, c] : committed_) {
    PpmtEntry& e = ppmt_.ref(l);
    if (e.base != kNoPpa && e.base != kPendingPpa && e.base != c.base && e.base != commit_ppa_)
      blocks_.valid_dec(e.base);
    if (e.diff != kNoPpa && e.diff != c.diff && --vdct_.ref(e.diff) == 0 && e.diff != commit_ppa_)
      blocks_.valid_dec(e.diff);
    e.base = c.base;
    e.diff = c.diff;
  }
  // The pages the group programmed are void: recovery ignores them (their seqs are above the
  // last commit record), and they are erased before any later commit record could cover them.
  const uint32_t ppb = geo_.pages_per_block;
  for (Ppa p : group_pages_) {
    if (group_page_.erase(p) == 0) continue;  // erased by GC since (or listed twice)
    const uint32_t m = p2l_.get(p);
    if (m < ppmt_.size()) {  // a base page: it can never be recovered, so it is no copy
      ppmt_.ref(m).copies = ppmt_.get(m).copies - 1;
      p2l_.ref(p) = kP2lNone;
    }
    note_void_block(p / ppb);
    stats_.void_pages++;
  }
  end_group();
  return Status::ok();
}

Status PdlStore::upgrade_format() {
  if (!legacy_) return Status::ok();
  if (!poisoned_.is_ok()) return poisoned_;
  PDL_TRY(sync());
  CostLedger::Scope cost(ledger_, ledger_.other());
  PDL_TRY(ensure_user_space(1));
  legacy_ = false;
  committed_seq_ = next_seq_ - 1;  // everything format 1 wrote counts
  PDL_TRY(program_marker(BlockManager::Head::kUser, committed_seq_));
  programmed_ = false;  // commit_ppa_ is the marker: set_commit_mode may pin it
  return fail(nand_.flush());
}

Status PdlStore::set_commit_mode(CommitMode mode) {
  const bool groups = mode == CommitMode::kGroup;
  if (groups == groups_) return Status::ok();
  if (!groups) {
    if (dirty()) PDL_TRY(sync());
    set_commit_page(kNoPpa);  // kPerPage: every page is a commit record of its own
    groups_ = false;
    commit_candidate_ = kNoPpa;
    blocks_.set_user_keep(1);
    return Status::ok();
  }
  // The page-mapping FTL device (Method::kFtl) runs this engine on OPU's path but offers a
  // block device's contract: no groups (page_store.h: other stores stay per-page, and this
  // succeeds).
  if (!has_atomic_commit(params_.method)) return Status::ok();
  if (legacy_)
    return Status::error(Errc::kUnsupported,
                         "a store of superblock format 1 has no commit records: upgrade it "
                         "before using atomic groups");
  if (programmed_ || dirty())
    return Status::error(Errc::kInvalidArgument,
                         "atomic groups must be switched on before the first write");
  // Recovery (or the upgrade) found the newest commit record, unpinned so far: pin it.
  groups_ = true;
  blocks_.set_user_keep(2);
  set_commit_page(commit_candidate_);
  return Status::ok();
}

}  // namespace pdl
