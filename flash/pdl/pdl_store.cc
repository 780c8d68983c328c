// pdl_store.cc — PDL writing and reading: [PDL] Figures 4, 5 and 6.
#include "flash/pdl/pdl_store.h"

#include <algorithm>
#include <utility>
#include <cassert>
#include <cstring>

#include "flash/common/crc32c.h"
#include "flash/codec/differential.h"
#include "flash/store/reread.h"

namespace pdl {

namespace {
uint32_t table_cache_pages(const StoreParams& p) {
  return p.table_cache != 0 ? p.table_cache : StoreParams::kTableCacheDefault;
}
}  // namespace

PdlStore::PdlStore(Nand& nand, const StoreParams& params)
    : StoreBase(nand, params),
      ppmt_(kPpmtTable, params.logical_pages, PpmtEntry{}, nand.geometry().page_data,
            table_cache_pages(params)),
      p2l_(kP2lTable, nand.geometry().total_pages(), kP2lNone, nand.geometry().page_data,
           table_cache_pages(params)),
      vdct_(kVdctTable, nand.geometry().total_pages(), 0, nand.geometry().page_data,
            table_cache_pages(params)),
      blocks_(nand.geometry(), kSuperblockBlocks, params.gc_reserve_blocks),
      dwb_(buffer_bytes(params, nand.geometry())),
      gc_buffer_(nand.geometry().page_data),
      scratch_base_(nand.geometry().page_data),
      scratch_diff_(nand.geometry().page_data),
      scratch_runs_(nand.geometry().page_data),
      scratch_spare_(nand.geometry().page_spare),
      void_block_(nand.geometry().blocks, 0),
      committed_dwb_(buffer_bytes(params, nand.geometry())),
      stage_(nand.geometry().page_data) {
  blocks_.set_wear_level(params.wear_level);
  if (params.nvm_bytes != 0) nvm_ = std::make_unique<NvmLog>(params.nvm_bytes);
}

Status PdlStore::format(Nand& nand, const StoreParams& params, CommitMode mode,
                        std::unique_ptr<PageStore>* out) {
  std::unique_ptr<PdlStore> s(new PdlStore(nand, params));
  s->groups_ = mode == CommitMode::kGroup && has_atomic_commit(params.method);
  s->blocks_.set_user_keep(s->groups_ ? 2 : 1);
  // Erase every data block now: pages of an earlier format must never be recovered. Blocks
  // marked bad are skipped; one whose erase fails is marked bad.
  for (uint32_t b = kSuperblockBlocks; b < s->geo_.blocks; b++) {
    if (nand.is_bad(b)) {
      s->blocks_.add_bad(b);
      continue;
    }
    const Status st = erase_with_retries(nand, b);
    if (st.is(Errc::kBadBlock)) {
      PDL_TRY(s->blocks_.retire(b, nand));  // (a block not yet added counts as collecting)
      continue;
    }
    PDL_TRY(st);
    s->blocks_.add_free(b, true);
  }
  if (s->nvm_) PDL_TRY(s->nvm_->format(nand, 0));  // an empty buffer, committed
  s->ledger_.charge(s->ledger_.other());
  *out = std::move(s);
  return Status::ok();
}

void PdlStore::reset_stats() {
  StoreBase::reset_stats();
  retired_at_reset_ = blocks_.retired();
  scrubbed_at_reset_ = blocks_.scrubbed();
  const PagedTableStats t = paged_stats();
  table_loads_at_reset_ = t.loads;
  table_evictions_at_reset_ = t.evictions;
  table_folds_at_reset_ = t.folds;
}

Status PdlStore::read_checked(Ppa ppa, std::span<uint8_t> data, SpareHeader* hdr) {
  SpareHeader h;
  bool passed;
  Status st = read_with_retries(
      nand_, ppa, data, scratch_spare_,
      [&] {
        return spare_decode(scratch_spare_, &h) == SpareState::kValid &&
               h.data_crc == crc32c(data.data(), data.size());
      },
      &passed);
  if (!st.is_ok()) return st;  // a read changes nothing: no reason to poison (reread.h)
  if (!passed)
    return Status::error(Errc::kCorrupt, "page " + std::to_string(ppa) + " fails its checksum");
  const uint32_t block = ppa / geo_.pages_per_block;
  if (read_needs_scrub(nand_) && int64_t(block) != gc_victim_) blocks_.scrub_later(block);
  if (hdr) *hdr = h;
  return Status::ok();
}

Status PdlStore::program_page(BlockManager::Head head, std::span<const uint8_t> data,
                              const SpareHeader& hdr, Ppa* out) {
  SpareHeader h = hdr;
  h.data_crc = crc32c(data.data(), data.size());
  spare_encode(h, scratch_spare_);
  for (uint32_t attempt = 0;; attempt++) {
    Ppa q;
    const NandCounters before = nand_.counters();
    Status st = blocks_.next_page(head, nand_, &q, attempt > 0);
    if (nand_.counters().erases != before.erases) {
      // Opening a block that mount left unclean erased it: mount's work, not the caller's.
      // What was pending before stays pending (modular arithmetic: right even after a
      // counter reset).
      ledger_.charge_since(ledger_.other(), before);
    }
    if (!st.is_ok())
      return fail(st.is(Errc::kFull) ? Status::error(Errc::kIoError, "allocation failed after "
                                                                     "space was reserved")
                                     : st);
    st = as_program_status(nand_.program(q, data, scratch_spare_));
    if (st.is(Errc::kHostFull)) return fail(st);  // halts the store (fail)
    if (st.is_ok()) {
      programmed_ = true;
      *out = q;
      return Status::ok();
    }
    // A grown bad block: what the failed program left is garbage (its CRCs fail) and maps to
    // nothing; the block leaves service once its valid pages are moved (collect_pending).
    if (!st.is(Errc::kBadBlock) || attempt + 1 >= kProgramAttempts) return fail(st);
    stats_.program_retries++;
    blocks_.retire_later(q / geo_.pages_per_block);
  }
}

Status PdlStore::mark_obsolete(Ppa ppa, bool* marked) {
  static const uint8_t kMark[1] = {0x00};
  *marked = false;
  // A store that halted (or was poisoned) earlier in this change programs nothing more: the
  // page stays a copy on flash, and the caller's table update still completes.
  PDL_TRY(changeable());
  stats_.obsolete_marks++;
  const Status st = as_program_status(nand_.program(ppa, {}, kMark, 0, kSpareObsoleteAt));
  *marked = st.is_ok();
  if (st.is(Errc::kBadBlock)) {  // the page stays a recoverable copy until its block retires
    blocks_.retire_later(ppa / geo_.pages_per_block);
    return Status::ok();
  }
  // No room on the host for a mark after a commit record: the page is untouched, and stays a
  // copy, as with obsolete=memory (a commit that reached its record is not undone for a
  // missing mark). Per page, a mark is part of the change: the store halts (fail).
  if (st.is(Errc::kHostFull) && groups_) return Status::ok();
  return fail(st);
}

// decreaseValidDifferentialCount (Fig. 5).
Status PdlStore::decrease_vdct(Ppa dp) {
  assert((vdct_.get(dp) > 0) || !tables_status().is_ok());  // Invariant: vdct counts the lpns pointing at dp
  if (--vdct_.ref(dp) != 0) return Status::ok();
  if (dp != commit_ppa_) blocks_.valid_dec(dp);
  bool marked;  // an unmarked stale differential page is harmless (older than what replaced it)
  if (params_.obsolete == ObsoleteMode::kSpare && !group_page(dp) && dp != commit_ppa_ &&
      int64_t(dp / geo_.pages_per_block) != gc_victim_)
    return mark_obsolete(dp, &marked);
  return Status::ok();
}

// A base page is superseded: "Set bp to obsolete" (Fig. 5). A page the open group programmed
// is not marked: nothing could ever recover it in place of its replacement (recovery orders
// by seq), so the mark would only cost a program. The pinned commit page stays valid.
Status PdlStore::base_becomes_stale(Ppa bp) {
  if (bp != commit_ppa_) blocks_.valid_dec(bp);
  if (params_.obsolete != ObsoleteMode::kSpare || group_page(bp) || bp == commit_ppa_)
    return Status::ok();
  assert((p2l_.get(bp) < ppmt_.size()) || !tables_status().is_ok());  // Invariant: a current base page is in the reverse map
  PpmtEntry& e = ppmt_.ref(p2l_.get(bp));
  bool marked;
  PDL_TRY(mark_obsolete(bp, &marked));
  if (!marked) return Status::ok();  // still a copy on flash, as with obsolete=none
  // Marked obsolete on flash: it can never be recovered, so it no longer counts as a copy.
  e.copies = e.copies - 1;
  p2l_.ref(bp) = kP2lNone;
  return Status::ok();
}

// Collect the blocks a program failed in (GC moves their valid pages) and retire them, and the
// blocks a read found weak (scrub: moved, erased, reused). With `must`, a failed block that
// cannot be collected for lack of room is an error (kFull): sync() needs them gone, since an
// obsolete mark that failed there may be all that hides a trimmed page. A scrub can wait.
Status PdlStore::collect_pending(bool must) {
  for (int64_t b; (b = blocks_.pending_victim()) >= 0;) {
    const bool retiring = blocks_.retiring(uint32_t(b));
    ledger_.charge_current();
    const Status st = gc_once(b);
    ledger_.charge(ledger_.gc());
    if (st.is(Errc::kFull) && (!must || !retiring)) return Status::ok();
    PDL_TRY(fail(st));
  }
  return Status::ok();
}

// A wear-levelling move is a GC of the young block: the same order (every valid page copied
// before the erase), so the same crash safety. Its work is charged to `gc` in the cost ledger
// and counted in wl_* (not gc_*) in the stats.
Status PdlStore::wear_level() {
  const int64_t b = blocks_.wl_victim(nand_);
  if (b < 0) return Status::ok();
  const StoreStats before = stats_;
  const NandCounters nc = nand_.counters();
  ledger_.charge_current();
  const Status st = gc_once(b);
  ledger_.charge(ledger_.gc());
  const NandCounters done = nand_.counters() - nc;
  stats_.wl_page_moves += (stats_.gc_base_moves - before.gc_base_moves) +
                          (stats_.gc_diff_pages - before.gc_diff_pages) +
                          (stats_.gc_merges - before.gc_merges) +
                          (stats_.commit_markers - before.commit_markers);
  stats_.wl_erases += done.erases;
  stats_.wl_runs += stats_.gc_runs - before.gc_runs;
  stats_.gc_runs = before.gc_runs;
  stats_.gc_base_moves = before.gc_base_moves;
  stats_.gc_diff_moves = before.gc_diff_moves;
  stats_.gc_diff_pages = before.gc_diff_pages;
  stats_.gc_merges = before.gc_merges;
  stats_.commit_markers = before.commit_markers;
  if (st.is(Errc::kFull)) return Status::ok();  // no room to move it now: later
  return fail(st);
}

// Keep `pages` pages free for user writes, collecting garbage as needed (GC cost is thereby
// amortized into writes, as in the paper's experiments, but charged to `gc`, not the writer).
Status PdlStore::ensure_user_space(uint64_t pages) {
  // A discarded group's pages go before anything newer is programmed: kPerPage programs carry
  // commit records, and a group's commit record could otherwise cover them.
  if (void_blocks_ > 0) PDL_TRY(purge_void_blocks());
  PDL_TRY(collect_pending(false));
  PDL_TRY(wear_level());
  uint64_t rounds = 0;
  while (blocks_.user_pages_available() < pages) {
    if (++rounds > 2 * uint64_t(geo_.blocks))
      return Status::error(Errc::kFull, "flash full: garbage collection cannot free a block");
    ledger_.charge_current();
    Status st = gc_once();
    ledger_.charge(ledger_.gc());
    if (!st.is_ok()) return fail(st);
  }
  return Status::ok();
}

// writingNewBasePage (Fig. 5). With atomic groups the page is held in RAM (pending_) and
// programmed when the next base page comes or at the commit; the previous pending page, if
// any, is programmed now.
Status PdlStore::write_new_base(Lpn lpn, std::span<const uint8_t> page) {
  PpmtEntry& e = ppmt_.ref(lpn);
  if (!groups_) {  // programmed at once, a commit record of its own (kPerPage)
    SpareHeader h;
    h.type = PageType::kBase;
    h.set_logical_page(lpn);
    h.seq = next_seq_++;
    h.commit = true;
    Ppa q;
    PDL_TRY(program_page(BlockManager::Head::kUser, page, h, &q));
    stats_.base_pages_written++;
    ledger_.cls(lpn).base_pages++;
    p2l_.ref(q) = lpn;
    e.copies = e.copies + 1;
    blocks_.valid_inc(q);
    return install_base(lpn, q);
  }
  if (pending_.held) PDL_TRY(program_pending(false));
  pending_.held = true;
  pending_.lpn = lpn;
  pending_.seq = next_seq_++;
  pending_.data.assign(page.begin(), page.end());
  return install_base(lpn, kPendingPpa);
}

// lpn's base page becomes `q` (programmed, or kPendingPpa): its old base page and any
// differential of it — buffered or on flash — are superseded.
// Both table updates are made even if the first one's obsolete mark fails (a full host
// halts the store, and reads go on): a new base page under the old one's differential would
// read as neither version. The first error is returned.
Status PdlStore::install_base(Lpn lpn, Ppa q) {
  PpmtEntry& e = ppmt_.ref(lpn);
  const Ppa old_base = e.base, old_diff = e.diff;
  e.base = q;
  if (e.in_dwb) {
    dwb_.remove(lpn);
    e.in_dwb = 0;
  }
  const Status st = drop_current_base(lpn, old_base);
  const Status sd = old_diff != kNoPpa ? set_current_diff(lpn, kNoPpa) : Status::ok();
  return st.is_ok() ? sd : st;
}

// Apply a trim whose tombstone is (or need not be) on flash: the base page becomes stale.
// As install_base: both updates are made, the first error is returned.
Status PdlStore::apply_trim(Lpn lpn) {
  PpmtEntry& e = ppmt_.ref(lpn);
  const Ppa old_base = e.base;
  e.base = kNoPpa;
  const Status st = drop_current_base(lpn, old_base);
  const Status sd = set_current_diff(lpn, kNoPpa);
  return st.is_ok() ? sd : st;
}

// writingDifferentialWriteBuffer (Fig. 5). Trims take effect here, once their tombstones are
// programmed: until then the trimmed lpn's base page and differential stay valid on flash, so a
// crash before the sync recovers the synced version rather than an older copy. With `commit`
// the page is the open group's commit page (pdl_commit.cc).
// Costs: the caller's work so far is its own; the page's work (program, obsolete marks, vdct)
// is split over the classes of its records by their bytes, tombstones included.
Status PdlStore::flush_write_buffer(bool commit) {
  ledger_.charge_current();
  if (!groups_ && params_.obsolete == ObsoleteMode::kSpare) {
    // A tombstone whose only copy is the current base page is unnecessary: marking that page
    // obsolete makes the trim durable by itself. (Not with atomic groups: a mark cannot be
    // undone, and the group might not commit.)
    std::vector<Lpn> direct;
    dwb_.for_each([&](const RecordView& r) {
      // (With NVM a committed tombstone has taken effect already — base kNoPpa — and its
      // mark may have failed: it then goes to flash as a record.)
      if (r.tombstone && ppmt_.get(r.lpn).copies == 1 && ppmt_.get(r.lpn).base != kNoPpa)
        direct.push_back(r.lpn);
    });
    for (Lpn l : direct) {
      dwb_.remove(l);
      ppmt_.ref(l).in_dwb = 0;
      const Status st = apply_trim(l);
      ledger_.charge(bucket_of(l));  // the trim's own obsolete mark
      PDL_TRY(st);
    }
  }
  if (dwb_.empty()) return Status::ok();
  if (nvm_) {  // a large oldest record becomes a new base page instead (pdl_nvm.cc)
    bool merged = false;
    PDL_TRY(nvm_merge_oldest(&merged));
    if (merged) return Status::ok();
  }
  // With NVM the buffer holds several pages: one page of its oldest records goes to flash.
  WriteBuffer& src = nvm_ ? stage_ : dwb_;
  if (nvm_) stage_oldest_page();
  uint64_t bytes[kCostClasses] = {};
  src.for_each([&](const RecordView& r) { bytes[ledger_.class_of(r.lpn)] += r.size(); });
  const uint64_t pages = stats_.diff_pages_written;
  const Status st = program_write_buffer(commit, src);
  const NandCounters work = ledger_.take_uncharged();
  const bool programmed = stats_.diff_pages_written != pages;
  if (nvm_) {  // the staged records left the buffer if their page was programmed
    if (programmed) {
      std::vector<Lpn> gone;
      dwb_.for_each([&](const RecordView& r) {
        if (!ppmt_.get(r.lpn).in_dwb) gone.push_back(r.lpn);
      });
      for (Lpn l : gone) dwb_.remove(l);
    } else {
      stage_.for_each([&](const RecordView& r) { ppmt_.ref(r.lpn).in_dwb = 1; });
    }
    stage_.clear();
  }
  uint64_t total = 0;
  for (uint64_t b : bytes) total += b;
  for (unsigned c = 0; c < kCostClasses; c++) {
    if (bytes[c] == 0) continue;
    const double share = double(bytes[c]) / double(total);
    ClassCost& cc = ledger_.breakdown().cls[c];
    cc.flash.add(work, share);
    if (programmed) cc.diff_pages += share;
  }
  return st;
}

void PdlStore::stage_oldest_page() {
  stage_.clear();
  dwb_.for_each([&](const RecordView& r) {  // (in the buffer's order: oldest first)
    if (r.size() > stage_.free_space()) return;
    if (groups_) touch(r.lpn);  // its entry changes now: abort() must be able to restore it
    stage_.put(r);
  });
}

Status PdlStore::program_write_buffer(bool commit, WriteBuffer& src) {
  SpareHeader h;
  h.type = PageType::kDifferential;
  h.set_record_count(uint32_t(src.count()));
  h.aux = src.used();
  src.for_each([&](const RecordView& r) { h.seq = std::max(h.seq, r.seq); });
  if (commit || !groups_) {  // the commit record: every seq handed out so far (format.md §3)
    h.commit = true;
    h.seq = next_seq_ - 1;
  }
  Ppa q;
  PDL_TRY(program_page(BlockManager::Head::kUser, src.page(), h, &q));
  stats_.diff_pages_written++;
  p2l_.ref(q) = kP2lDifferential;
  if (groups_) note_group_page(q);
  if (commit) set_commit_page(q);
  // Every record's lpn now points at the programmed page, even once an obsolete mark failed
  // (a full host halts the store; reads go on and must find each record where the tables
  // say): the buffer is cleared below, so an lpn left behind would point into nothing. The
  // first error is returned.
  Status first;
  src.for_each([&](const RecordView& r) {
    PpmtEntry& e = ppmt_.ref(r.lpn);
    e.in_dwb = 0;
    if (r.tombstone) {
      const Status st = apply_trim(r.lpn);
      if (first.is_ok()) first = st;
      if (e.copies == 0) return;  // nothing left on flash to hide: the record is not needed
    }
    const Status st = set_current_diff(r.lpn, q);
    if (first.is_ok()) first = st;
  });
  src.clear();
  return first;
}

// Step 3 of Fig. 4: Case 1 (fits the buffer) or Case 2 (flush it first, then put).
// With NVM, a flush takes one page of the buffer: as many as needed are made.
Status PdlStore::put_record(const RecordView& r) {
  if (r.size() > dwb_.free_space()) {
    if (!r.tombstone) stats_.case2++;
    PDL_TRY(flush_write_buffer());
    // (A page of the oldest records may free less than r needs: each further page gets room
    // of its own, as the write's first one did.)
    while (r.size() > dwb_.free_space()) {
      PDL_TRY(ensure_user_space(kWritePages + blocks_.user_keep()));
      PDL_TRY(flush_write_buffer());
    }
  } else if (!r.tombstone) {
    stats_.case1++;
  }
  dwb_.put(r);
  ppmt_.ref(r.lpn).in_dwb = 1;
  if (nvm_) nvm_changed_.insert(r.lpn);
  return Status::ok();
}

// PDL_Writing (Fig. 4). For OPU every write is a new base page.
Status PdlStore::write_op(Lpn lpn, std::span<const uint8_t> page) {
  PDL_TRY(check_lpn(lpn));
  if (!halted_.is_ok()) return halted_;  // (a halted store refuses before the size is looked at)
  PDL_TRY(check_page(lpn, page.size()));
  CostLedger::Scope cost(ledger_, bucket_of(lpn));
  stats_.writes++;
  // The pages this write may program, plus what a sync needs afterwards (kPerPage: the buffer's
  // flush; atomic groups: the pending base page and the buffer's page).
  PDL_TRY(ensure_user_space(kWritePages + blocks_.user_keep()));
  if (groups_) touch(lpn);
  PpmtEntry& e = ppmt_.ref(lpn);
  if (e.base == kPendingPpa) {  // its newest version is the page held in RAM: replace it
    pending_.data.assign(page.begin(), page.end());
    return Status::ok();
  }
  if (!writes_differentials(params_.method) || e.base == kNoPpa) return write_new_base(lpn, page);

  // Step 1: read the base page.
  PDL_TRY(read_checked(e.base, scratch_base_, nullptr));
  // Step 2: create the differential, bounded by Max_Differential_Size.
  const size_t limit = params_.max_differential - kRecordHeader;
  const size_t n = diff_encode(scratch_base_, page, std::span(scratch_runs_).first(limit));
  if (n == kDiffTooBig) {  // Case 3: the page itself becomes the new base page
    stats_.case3++;
    return write_new_base(lpn, page);
  }
  // Step 3: replace any older differential of this lpn in the buffer. Only when the new one
  // will not fit without a flush is a copy of the older kept: if that flush fails, the older
  // goes back (below); a write that fits cannot fail after the removal.
  const bool buffered = e.in_dwb;
  older_.clear();
  if (e.in_dwb) {
    RecordView old;
    if (dwb_.find(lpn, &old) && kRecordHeader + n > dwb_.free_space() + old.size()) {
      older_.resize(old.size());
      record_encode(old, older_.data());
    }
    dwb_.remove(lpn);
    e.in_dwb = 0;
  }
  // Equal to its base: nothing to write — unless an older differential could come back (on
  // flash, or with NVM in the log: an empty record then says "equal to the base").
  if (n == 0 && e.diff == kNoPpa && !(nvm_ && buffered)) return Status::ok();
  RecordView r;
  r.lpn = lpn;
  r.seq = next_seq_++;
  r.runs = std::span<const uint8_t>(scratch_runs_.data(), n);
  stats_.diff_records++;
  stats_.diff_bytes += r.size();
  ClassCost& cc = ledger_.cls(lpn);
  cc.diff_records++;
  cc.diff_record_bytes += r.size();
  const Status st = put_record(r);
  if (!st.is_ok() && buffered && !e.in_dwb) {
    // The flush failed (a full host, a device gone): the buffer has the room the older record
    // had, so it goes back and reads find the lpn's last written version, not its flash one.
    RecordReader rr(older_);
    RecordView old;
    if (rr.next(&old) && old.size() <= dwb_.free_space()) {
      dwb_.put(old);
      e.in_dwb = 1;
      if (nvm_) nvm_changed_.insert(lpn);
    }
  }
  return st;
}

Status PdlStore::find_differential(Lpn lpn, RecordView* r) {
  const Ppa dp = ppmt_.get(lpn).diff;
  SpareHeader h;
  PDL_TRY(read_checked(dp, scratch_diff_, &h));
  if (h.type != PageType::kDifferential || h.aux > geo_.page_data)
    return Status::error(Errc::kCorrupt, "page " + std::to_string(dp) + " is no differential page");
  RecordReader rr(std::span<const uint8_t>(scratch_diff_).first(h.aux));
  while (rr.next(r))
    if (r->lpn == lpn) return Status::ok();
  PDL_TRY(rr.status());
  return Status::error(Errc::kCorrupt, "differential of page " + std::to_string(lpn) +
                                           " missing from page " + std::to_string(dp));
}

// PDL_Reading (Fig. 6): base page, then its differential from the buffer or from flash.
Status PdlStore::read_op(Lpn lpn, std::span<uint8_t> page) {
  const PpmtEntry e = ppmt_.get(lpn);
  if (e.base == kNoPpa || trim_pending(lpn)) {
    std::fill(page.begin(), page.end(), 0);
    return Status::error(Errc::kNotFound, "logical page " + std::to_string(lpn) + " unmapped");
  }
  if (e.base == kPendingPpa) {  // held in RAM until the next commit (no differential)
    std::copy(pending_.data.begin(), pending_.data.end(), page.begin());
    return Status::ok();
  }
  PDL_TRY(read_checked(e.base, page, nullptr));
  RecordView r;
  if (e.in_dwb) {
    [[maybe_unused]] bool found = dwb_.find(lpn, &r);
    assert(found);  // Invariant: in_dwb <=> the buffer holds a record
    if (nvm_) PDL_TRY(nvm_charge_read(lpn));  // its bytes are in RAM; the time is NVM's
  } else if (e.diff != kNoPpa) {
    PDL_TRY(find_differential(lpn, &r));
  } else {
    return Status::ok();
  }
  return diff_apply(r.runs, page);
}

bool PdlStore::trim_pending(Lpn lpn) const {
  RecordView r;
  return ppmt_.get(lpn).in_dwb && dwb_.find(lpn, &r) && r.tombstone;
}

// Trim = a tombstone record through the write buffer; it takes effect when flushed.
Status PdlStore::trim_op(Lpn lpn) {
  PDL_TRY(check_lpn(lpn));
  if (!halted_.is_ok()) return halted_;
  CostLedger::Scope cost(ledger_, bucket_of(lpn));
  stats_.trims++;
  if (ppmt_.get(lpn).base == kNoPpa || trim_pending(lpn)) return Status::ok();  // unmapped already
  PpmtEntry& e = ppmt_.ref(lpn);
  if (e.base == kPendingPpa && e.copies == 0) {  // nothing of it on flash: just dropped
    if (groups_) touch(lpn);
    pending_.held = false;
    e.base = kNoPpa;
    return Status::ok();
  }
  // Flush a full buffer before reserving room for the tombstone's own flush: the flushed
  // trims make pages stale that GC can then reclaim, so even a full store can be trimmed.
  if (dwb_.free_space() < kRecordHeader) {
    PDL_TRY(ensure_user_space(1 + (pending_.held ? 1 : 0)));
    PDL_TRY(flush_write_buffer());
  }
  PDL_TRY(ensure_user_space(commit_pages() + (dwb_.empty() ? 1 : 0)));
  if (groups_) touch(lpn);
  if (e.base == kPendingPpa) {  // dropped only once the tombstone has its room
    pending_.held = false;
    e.base = kNoPpa;
  }
  if (e.in_dwb) {
    dwb_.remove(lpn);
    e.in_dwb = 0;
  }
  RecordView r;
  r.lpn = lpn;
  r.seq = next_seq_++;
  r.tombstone = true;
  stats_.tombstones++;
  return put_record(r);
}

}  // namespace pdl
