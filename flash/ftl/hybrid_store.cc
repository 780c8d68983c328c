// hybrid_store.cc — HybridStore (hybrid_store.h): format, read, write and trim (where a record
// goes: in place, BAST's log block, FAST's sequential or random log blocks), sync, scrub.
// Merges are in hybrid_merge.cc, recovery in hybrid_recovery.cc.
#include "flash/ftl/hybrid_store.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "flash/common/crc32c.h"
#include "flash/store/reread.h"

namespace pdl {

HybridStore::HybridStore(Nand& nand, const StoreParams& params, bool page_records)
    : StoreBase(nand, params),
      cur_(params.logical_pages, kNoPpa),
      mapped_(params.logical_pages, false),
      page_lpn_(page_records ? nand.geometry().total_pages() : 0, kNone),
      page_seq_(page_lpn_.size(), 0),
      page_aux_(page_lpn_.size(), 0),
      page_trim_(page_lpn_.size(), false),
      blocks_(nand.geometry().blocks),
      data_((params.logical_pages + nand.geometry().pages_per_block - 1) /
                nand.geometry().pages_per_block,
            kNone),
      log_(data_.size(), kNone),
      extras_(data_.size()),
      erased_(nand.geometry().blocks, false),
      retiring_(nand.geometry().blocks, false),
      page_buf_(nand.geometry().page_data),
      spare_buf_(nand.geometry().page_spare) {
  for (uint32_t b = 0; b < kSuperblockBlocks && b < blocks_.size(); b++)
    blocks_[b].role = Role::kReserved;
}

Status HybridStore::format(Nand& nand, const StoreParams& given,
                           std::unique_ptr<PageStore>* out) {
  StoreParams params = given;  // (resolving again changes nothing resolved, and fills the rest)
  PDL_TRY(resolve_params(&params, nand.geometry()));
  std::unique_ptr<HybridStore> s(new HybridStore(nand, params));
  for (uint32_t b = kSuperblockBlocks; b < s->geo_.blocks; b++) {
    if (nand.is_bad(b)) {
      s->blocks_[b].role = Role::kBad;
      s->bad_count_++;
      continue;
    }
    const Status st = erase_with_retries(nand, b);
    if (st.is(Errc::kBadBlock)) {
      PDL_TRY(s->retire(b));
      continue;
    }
    PDL_TRY(st);
    s->erased_[b] = true;
    s->free_.push_back(b);
  }
  s->ledger_.charge(s->ledger_.other());
  *out = std::move(s);
  return Status::ok();
}

uint32_t HybridStore::lpns_in(uint32_t lbn) const {
  return std::min<uint32_t>(ppb(), uint32_t(cur_.size()) - lbn * ppb());
}

// The FTL's own tables, as a device keeps them: a block map entry per logical block, and a
// page map (an entry per page) per log block.
size_t HybridStore::mapping_bytes_per_lpn() const {
  const size_t bytes = 4 * data_.size() + size_t(params_.log_blocks) * (4 + 4 * size_t(ppb()));
  return (bytes + cur_.size() - 1) / std::max<size_t>(1, cur_.size());
}

// ---- reading ----

Status HybridStore::read_record(Ppa p, Lpn lpn, SpareHeader* hdr) {
  SpareHeader h;
  bool passed;
  // A read changes nothing: a failed one does not poison the store (reread.h).
  PDL_TRY(read_with_retries(
      nand_, p, page_buf_, spare_buf_,
      [&] {
        if (spare_decode(spare_buf_, &h) != SpareState::kValid || h.logical_page() != lpn)
          return false;
        if (h.type == PageType::kFtlTrim) return true;
        return h.type == PageType::kBase &&
               crc32c(page_buf_.data(), page_buf_.size()) == h.data_crc;
      },
      &passed));
  if (!passed)
    return Status::error(Errc::kCorrupt, "page " + std::to_string(p) + " of logical page " +
                                             std::to_string(lpn) + " fails its checks");
  note_read(block_of(p));
  *hdr = h;
  return Status::ok();
}

Status HybridStore::read_page(Lpn lpn, std::span<uint8_t> page) {
  if (!mapped_[lpn]) {
    std::fill(page.begin(), page.end(), 0);
    return Status::error(Errc::kNotFound, "logical page " + std::to_string(lpn) + " unmapped");
  }
  SpareHeader h;
  PDL_TRY(read_record(cur_[lpn], lpn, &h));
  if (h.type != PageType::kBase)
    return Status::error(Errc::kCorrupt, "logical page " + std::to_string(lpn) +
                                             ": its current record is a trim record");
  std::memcpy(page.data(), page_buf_.data(), page.size());
  return Status::ok();
}

void HybridStore::note_read(uint32_t block) {
  if (retiring_[block] || !read_needs_scrub(nand_)) return;
  scrubbing_.insert(block);
}

// ---- writing ----

Status HybridStore::program_record(uint32_t block, uint32_t page_no, Lpn lpn,
                                   std::span<const uint8_t> data, uint64_t seq, uint32_t aux) {
  SpareHeader h;
  h.type = data.empty() ? PageType::kFtlTrim : PageType::kBase;
  h.set_logical_page(lpn);
  h.seq = seq;
  h.data_crc = data.empty() ? 0 : crc32c(data.data(), data.size());
  h.aux = aux;
  spare_encode(h, spare_buf_);
  const Ppa p = ppa(block, page_no);
  const Status st = as_program_status(nand_.program(p, data, spare_buf_));
  if (st.is(Errc::kHostFull)) return fail(st);  // nothing touched: the page stays erased
  blocks_[block].wp = std::max(blocks_[block].wp, page_no + 1);  // used, even by a failure
  if (st.is(Errc::kBadBlock)) {
    stats_.program_retries++;
    retiring_[block] = true;  // the caller writes the record elsewhere
    scrubbing_.erase(block);
    return st;
  }
  PDL_TRY(fail(st));
  page_lpn_[p] = lpn;
  page_seq_[p] = seq;
  page_aux_[p] = aux;
  page_trim_[p] = data.empty();
  return Status::ok();
}

void HybridStore::set_current(Lpn lpn, Ppa p, bool mapped) {
  if (cur_[lpn] != kNoPpa) {
    blocks_[block_of(cur_[lpn])].valid--;
    if (mapped_[lpn]) blocks_[block_of(cur_[lpn])].live--;
  }
  cur_[lpn] = p;
  blocks_[block_of(p)].valid++;
  if (mapped) blocks_[block_of(p)].live++;
  mapped_[lpn] = mapped;
}

Status HybridStore::log_target_bast(uint32_t lbn, uint32_t* block) {
  *block = kNone;
  const uint32_t l = log_[lbn];
  if (l != kNone) {
    if (writable(l)) {
      *block = l;
      return Status::ok();
    }
    return as_gc([&] { return merge_log(lbn, l); });  // full: merged, the caller starts over
  }
  while (bast_logs_.size() >= params_.log_blocks) {  // the least recently written log block
    uint32_t victim = bast_logs_[0];
    for (uint32_t b : bast_logs_)
      if (blocks_[b].last_use < blocks_[victim].last_use) victim = b;
    PDL_TRY(as_gc([&] { return merge_log(blocks_[victim].lbn, victim); }));
  }
  uint32_t nb;
  PDL_TRY(allocate_block(&nb));
  blocks_[nb].role = Role::kLog;
  blocks_[nb].lbn = lbn;
  log_[lbn] = nb;
  bast_logs_.push_back(nb);
  *block = nb;
  return Status::ok();
}

Status HybridStore::log_target_fast(uint32_t lbn, uint32_t off, uint32_t* block) {
  *block = kNone;
  if (off == 0) {  // the start of a block: a new sequential log block
    if (seq_block_ != kNone)
      return as_gc([&] { return merge_log(blocks_[seq_block_].lbn, seq_block_); });
    uint32_t nb;
    PDL_TRY(allocate_block(&nb));
    blocks_[nb].role = Role::kLog;
    blocks_[nb].lbn = lbn;
    seq_block_ = nb;
    *block = nb;
    return Status::ok();
  }
  if (seq_block_ != kNone && blocks_[seq_block_].lbn == lbn && writable(seq_block_) &&
      blocks_[seq_block_].wp == off) {  // its sequential continuation
    *block = seq_block_;
    return Status::ok();
  }
  if (!random_.empty() && writable(random_.back())) {
    *block = random_.back();
    return Status::ok();
  }
  while (random_.size() + 1 >= params_.log_blocks)  // all in use: the oldest is the victim
    PDL_TRY(as_gc([&] { return merge_random(random_.front()); }));
  uint32_t nb;
  PDL_TRY(allocate_block(&nb));
  blocks_[nb].role = Role::kRandom;
  random_.push_back(nb);
  *block = nb;
  return Status::ok();
}

// A record goes in place if its data block's page is still programmable, else to a log block.
// A program that fails closes its block and the record is written again (a fresh seq, so it
// outranks whatever the failed program left).
Status HybridStore::put(Lpn lpn, std::span<const uint8_t> page) {
  const uint32_t lbn = lbn_of(lpn), off = off_of(lpn);
  int failures = 0;
  for (int round = 0; round < 64; round++) {
    uint32_t d = data_[lbn];
    if (d == kNone && (fast() || log_[lbn] == kNone)) {  // the logical block's first page
      PDL_TRY(allocate_block(&d));
      blocks_[d].role = Role::kData;
      blocks_[d].lbn = lbn;
      data_[lbn] = d;
    }
    uint32_t target, page_no;
    if (d != kNone && !retiring_[d] && off >= blocks_[d].wp) {
      target = d;
      page_no = off;
    } else {
      PDL_TRY(fast() ? log_target_fast(lbn, off, &target) : log_target_bast(lbn, &target));
      if (target == kNone) continue;  // a merge changed the blocks: look again
      page_no = blocks_[target].wp;
    }
    const Status st = program_record(target, page_no, lpn, page, next_seq_++, 0);
    if (st.is(Errc::kBadBlock)) {
      if (++failures >= kProgramAttempts) break;
      continue;
    }
    PDL_TRY(st);
    set_current(lpn, ppa(target, page_no), !page.empty());
    if (blocks_[target].role == Role::kLog) blocks_[target].last_use = ++use_clock_;
    return Status::ok();
  }
  return fail(Status::error(Errc::kIoError, "logical page " + std::to_string(lpn) +
                                                ": no block took its record (programs failed)"));
}

Status HybridStore::settle() {
  if (unsettled_.empty() && (fast() || random_.empty())) return Status::ok();
  return as_gc([&]() -> Status {
    while (!unsettled_.empty()) PDL_TRY(full_merge(*unsettled_.begin()));
    if (!fast())
      while (!random_.empty()) PDL_TRY(merge_random(random_.front()));
    return Status::ok();
  });
}

// Moves the data of blocks found weak; a merge finding no room waits for a later change.
Status HybridStore::scrub_pending() {
  while (!scrubbing_.empty()) {
    const uint32_t b = *scrubbing_.begin();
    const Block& blk = blocks_[b];
    Status st;
    if (retiring_[b] || blk.valid == 0) {
      scrubbing_.erase(b);
      continue;
    }
    if (blk.role == Role::kRandom)
      st = as_gc([&] { return merge_random(b); });
    else if (blk.role == Role::kData || blk.role == Role::kLog || blk.role == Role::kExtra)
      st = as_gc([&] { return full_merge(blk.lbn); });
    if (st.is(Errc::kFull)) return Status::ok();
    PDL_TRY(st);
    if (scrubbing_.erase(b)) stats_.blocks_scrubbed++;
  }
  return Status::ok();
}

Status HybridStore::write(Lpn lpn, std::span<const uint8_t> page) {
  PDL_TRY(check_page(lpn, page.size()));
  PDL_TRY(changeable());
  CostLedger::Scope cost(ledger_, ledger_.bucket_of(lpn));
  stats_.writes++;
  PDL_TRY(settle());
  PDL_TRY(scrub_pending());
  PDL_TRY(put(lpn, page));
  stats_.base_pages_written++;
  ledger_.cls(lpn).base_pages++;
  return Status::ok();
}

Status HybridStore::trim(Lpn lpn) {
  PDL_TRY(check_lpn(lpn));
  PDL_TRY(changeable());
  CostLedger::Scope cost(ledger_, ledger_.bucket_of(lpn));
  stats_.trims++;
  if (!mapped_[lpn]) return Status::ok();  // its current record is a trim already, or none
  PDL_TRY(settle());
  PDL_TRY(scrub_pending());
  PDL_TRY(put(lpn, {}));
  stats_.tombstones++;
  return Status::ok();
}

// Every record is programmed when written: only the device has anything left to flush.
Status HybridStore::sync() {
  PDL_TRY(changeable());
  CostLedger::Scope cost(ledger_, ledger_.other());
  stats_.syncs++;
  return fail(nand_.flush());
}

}  // namespace pdl
