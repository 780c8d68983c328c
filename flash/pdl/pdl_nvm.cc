// pdl_nvm.cc — PDL's differential write buffer in NVM (method=pdl&nvm=SIZE; docs/design.md
// §16): the commit as NVM writes, committed tombstones taking effect, large cold records
// merged into new base pages, reads of buffered records charged as NVM reads, the buffer's
// size. The log itself is nvm_log.h; the flush of one page of the buffer is
// flush_write_buffer (pdl_store.cc), recovery pdl_recovery.cc, abort pdl_commit.cc.
//
// Why it is correct: after a commit the NVM log holds, for every lpn with a buffered record,
// that record (the newest entry for the lpn up to the last commit entry), and a commit entry
// covering every seq handed out. A record that left the buffer since went to flash (a flushed
// differential page or a new base page, both with a larger or equal seq, committed by the same
// entry) or was dropped with the lpn's last base page (then recovery finds no base for it): so
// recovery's rule — an NVM record counts if newer than its lpn's base page and flash
// differential — rebuilds exactly the committed buffer.
#include <algorithm>
#include <cassert>

#include "flash/codec/differential.h"
#include "flash/pdl/pdl_store.h"
#include "flash/store/reread.h"

namespace pdl {

uint32_t PdlStore::buffer_bytes(const StoreParams& params, const Geometry& g) {
  if (params.nvm_bytes == 0) return g.page_data;
  return std::max(g.page_data, NvmLog::buffer_capacity(params.nvm_bytes, g.page_data));
}

Status PdlStore::nvm_commit() {
  const uint64_t s = next_seq_ - 1;
  // Tombstones hiding nothing any more (their lpn's base pages are gone from flash) leave.
  std::vector<Lpn> spent;
  dwb_.for_each([&](const RecordView& r) {
    if (r.tombstone && ppmt_.get(r.lpn).base == kNoPpa && ppmt_.get(r.lpn).copies == 0)
      spent.push_back(r.lpn);
  });
  for (Lpn l : spent) {
    dwb_.remove(l);
    ppmt_.ref(l).in_dwb = 0;
  }
  std::vector<RecordView> changed, all;
  uint64_t bytes = 0;
  uint64_t cls_bytes[kCostClasses] = {};
  dwb_.for_each([&](const RecordView& r) {
    all.push_back(r);
    if (!nvm_changed_.count(r.lpn)) return;
    changed.push_back(r);
    bytes += NvmLog::entry_bytes(r);
  });
  const bool fresh = !nvm_->fits(bytes);
  for (const RecordView& r : fresh ? all : changed)
    cls_bytes[ledger_.class_of(r.lpn)] += r.size();
  // The writes are split over the classes of the records written, by their bytes (a commit
  // entry alone is the caller's: `other` for sync).
  ledger_.charge_current();
  const Status st = fresh ? nvm_->commit_fresh(nand_, all, s) : nvm_->append(nand_, changed, s);
  uint64_t total = 0;
  for (uint64_t b : cls_bytes) total += b;
  if (total > 0) {
    const NandCounters work = ledger_.take_uncharged();
    for (unsigned c = 0; c < kCostClasses; c++)
      if (cls_bytes[c] > 0)
        ledger_.breakdown().cls[c].flash.add(work, double(cls_bytes[c]) / double(total));
  }
  PDL_TRY(fail(st));
  nvm_commit_seq_ = s;
  committed_dwb_ = dwb_;
  nvm_changed_.clear();
  return Status::ok();
}

// A committed tombstone is durable in NVM: its trim takes effect now (the base page becomes
// stale, GC may reclaim it), without a flash program. The tombstone stays in the buffer while
// a copy of the page is on flash (nvm_commit drops it after), as a flushed one would stay in
// its differential page.
Status PdlStore::nvm_apply_trims() {
  std::vector<Lpn> trims;
  dwb_.for_each([&](const RecordView& r) {
    if (r.tombstone && ppmt_.get(r.lpn).base != kNoPpa) trims.push_back(r.lpn);
  });
  Status first;
  for (Lpn l : trims) {
    ledger_.charge_current();
    const Status st = apply_trim(l);
    ledger_.charge(bucket_of(l));
    if (first.is_ok()) first = st;
  }
  return first;
}

// Cold records leave the buffer a page at a time; but a differential is cumulative (against
// its base page), so an lpn updated again after its record went to flash brings it back larger,
// and flushing a record of d bytes costs d / page of a program. A record above an eighth of a
// page is worth a new base page of its own instead: one program, and the lpn's differential
// starts again from nothing. The new base page goes the way of Case 3 (write_new_base: with
// atomic groups held until the next base page or the commit, the lpn touched first).
Status PdlStore::nvm_merge_oldest(bool* merged) {
  *merged = false;
  RecordView r;
  bool first = true;
  dwb_.for_each([&](const RecordView& v) {
    if (first) r = v;
    first = false;
  });
  if (first || r.tombstone || r.size() <= geo_.page_data / 8) return Status::ok();
  const Lpn lpn = r.lpn;
  const PpmtEntry e = ppmt_.get(lpn);
  assert((e.base != kNoPpa && e.base != kPendingPpa) || !tables_status().is_ok());  // a buffered record's base is on flash
  PDL_TRY(read_checked(e.base, scratch_base_, nullptr));
  PDL_TRY(diff_apply(r.runs, scratch_base_));
  ledger_.charge_current();
  if (groups_) touch(lpn);
  const Status st = write_new_base(lpn, scratch_base_);
  ledger_.charge(bucket_of(lpn));
  PDL_TRY(st);
  *merged = true;
  return Status::ok();
}

Status PdlStore::nvm_charge_read(Lpn lpn) {
  uint64_t off;
  uint32_t n;
  if (nvm_changed_.count(lpn) || !nvm_->where(lpn, &off, &n)) return Status::ok();
  return nvm_read_with_retries(nand_, off, std::span(scratch_diff_).first(n));
}

void PdlStore::nvm_mounted(uint64_t commit_seq) {
  nvm_commit_seq_ = commit_seq;
  committed_dwb_ = dwb_;
  nvm_changed_.clear();
}

}  // namespace pdl
