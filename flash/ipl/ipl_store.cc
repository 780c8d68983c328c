// ipl_store.cc — IplStore: format, read, write (direct program or log sectors), trim, sync.
// The merge ([IPL] Alg. 1) is in ipl_merge.cc, recovery in ipl_recovery.cc, atomic groups
// ([IPL] §5) in ipl_commit.cc.
#include "flash/ipl/ipl_store.h"

#include <algorithm>
#include <utility>
#include <cstring>
#include <string>

#include "flash/common/crc32c.h"
#include "flash/codec/differential.h"
#include "flash/store/reread.h"

namespace pdl {

IplStore::IplStore(Nand& nand, const StoreParams& params)
    : StoreBase(nand, params),
      nvm_(params.nvm_bytes != 0 && params.method == Method::kIpl),
      dpb_(params.data_pages_per_block(nand.geometry())),
      log_sector_(params.log_sector != 0 ? params.log_sector : kLogSector),
      sectors_per_page_(nand.geometry().page_data / log_sector_),
      log_sectors_(nvm_ ? params.log_region / log_sector_
                        : (nand.geometry().pages_per_block - dpb_) * sectors_per_page_),
      // [PDL] footnote 14: the log buffer of a page is page_size / 16 ([IPL]'s 512-byte
      // sector of an 8 KiB page), at most what one log sector carries. With NVM the
      // in-memory log sector is the sector ([IPL-PCRAM] §4: 128 or 512 bytes).
      log_buffer_(nvm_ ? log_sector_ - kSectorHeader
                       : std::clamp<size_t>(nand.geometry().page_data / 16, kRunHeader + 1,
                                            log_sector_ - kSectorHeader)),
      lpns_(params.logical_pages),
      lblocks_((params.logical_pages + dpb_ - 1) / dpb_),
      owner_(nand.geometry().blocks, kNoBlock),
      erased_(nand.geometry().blocks, false),
      bad_(nand.geometry().blocks, false),
      retiring_(nand.geometry().blocks, false),
      scrubbing_(nand.geometry().blocks, false),
      splitter_(log_buffer_),
      page_buf_(geo_.page_data),
      prev_buf_(geo_.page_data),
      log_buf_(nvm_ ? size_t(log_sectors_) * log_sector_
                    : size_t(geo_.pages_per_block - dpb_) * geo_.page_data),
      sector_buf_(log_sector_),
      spare_buf_(geo_.page_spare),
      runs_buf_(2 * size_t(geo_.page_data)),
      carry_splitter_(log_sector_ - kSectorHeader) {}

Status IplStore::format(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out) {
  std::unique_ptr<IplStore> s(new IplStore(nand, params));
  // IPU stores are format 1 (every page counts); IPL stores format 2, nothing committed yet.
  s->legacy_ = params.method == Method::kIpu;
  s->committed_seq_ = s->legacy_ ? UINT64_MAX : 0;
  for (uint32_t b = kSuperblockBlocks; b < s->geo_.blocks; b++) {
    if (nand.is_bad(b)) {
      s->bad_[b] = true;
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
  if (s->nvm_) PDL_TRY(s->clear_nvm());
  s->ledger_.charge(s->ledger_.other());
  *out = std::move(s);
  return Status::ok();
}

uint32_t IplStore::lpns_in(uint32_t lbn) const {
  return std::min<uint32_t>(dpb_, uint32_t(lpns_.size()) - first_lpn(lbn));
}

size_t IplStore::mapping_bytes_per_lpn() const {
  return sizeof(LpnState) + (sizeof(LBlock) + dpb_ - 1) / dpb_;
}

// ---- reading ----

Status IplStore::read_data(uint32_t block, uint32_t slot, Lpn lpn, std::span<uint8_t> page,
                           SpareHeader* hdr) {
  const Ppa ppa = data_ppa(block, slot);
  SpareHeader h;
  bool passed;
  // A read changes nothing: a failed one does not poison the store (reread.h).
  PDL_TRY(read_with_retries(
      nand_, ppa, page, spare_buf_,
      [&] {
        return spare_decode(spare_buf_, &h) == SpareState::kValid &&
               h.type == PageType::kIplData && h.logical_page() == lpn &&
               crc32c(page.data(), page.size()) == h.data_crc;
      },
      &passed));
  if (!passed)
    return Status::error(Errc::kCorrupt, "data page " + std::to_string(ppa) + " of logical page " +
                                             std::to_string(lpn) + " fails its checks");
  note_read(block);
  if (hdr) *hdr = h;
  return Status::ok();
}

// The data page, then the page's complete log writes from its block's used log pages.
Status IplStore::read_page(Lpn lpn, std::span<uint8_t> page) {
  const LpnState& st = lpns_[lpn];
  if (!st.mapped) {
    std::fill(page.begin(), page.end(), 0);
    return Status::error(Errc::kNotFound, "logical page " + std::to_string(lpn) + " unmapped");
  }
  const uint32_t lbn = lbn_of(lpn);
  if (st.slot == Slot::kData)
    PDL_TRY(read_data(lblocks_[lbn].block, slot_of(lpn), lpn, page));
  else
    std::fill(page.begin(), page.end(), 0);
  if (!st.has_log) return Status::ok();
  PDL_TRY(read_log_pages(lbn));
  bool mapped = st.slot == Slot::kData;
  PDL_TRY(replay(lbn, slot_of(lpn), page, &mapped));
  if (!mapped)
    return Status::error(Errc::kCorrupt, "log of logical page " + std::to_string(lpn) +
                                             " disagrees with the mapping (unmapped)");
  return Status::ok();
}

// ---- writing ----

Status IplStore::program_data(uint32_t block, uint32_t slot, Lpn lpn,
                              std::span<const uint8_t> page, uint64_t seq, uint32_t merge_count,
                              PageType type, uint8_t flag) {
  SpareHeader h;
  h.type = type;
  h.commit = flag & kSpareFlagCommit;
  h.group = flag & kSpareFlagGroup;
  h.set_logical_page(lpn);
  h.seq = seq;
  h.data_crc = crc32c(page.data(), page.size());
  h.aux = merge_count;
  spare_encode(h, spare_buf_);
  const Status st =
      as_program_status(nand_.program(data_ppa(block, slot), page, spare_buf_));
  if (st.is(Errc::kBadBlock)) {
    stats_.program_retries++;
    retiring_[block] = true;
    return st;  // the caller moves the data elsewhere
  }
  return fail(st);
}

void IplStore::note_update(Lpn lpn, uint32_t offset, uint32_t len) {
  if (log_sectors_per_block() == 0 || lpn >= lpns_.size() || len == 0 ||
      offset >= geo_.page_data)
    return;
  auto& v = hints_[lpn];
  if (v.size() >= geo_.page_data / 4) {  // absurdly many: forget them, diff at write time
    hints_.erase(lpn);
    no_hints_.insert(lpn);
    return;
  }
  if (no_hints_.count(lpn) == 0)
    v.emplace_back(offset, std::min(len, geo_.page_data - offset));
}

Status IplStore::write(Lpn lpn, std::span<const uint8_t> page) {
  PDL_TRY(check_page(lpn, page.size()));
  if (!halted_.is_ok()) return halted_;
  CostLedger::Scope cost(ledger_, ledger_.bucket_of(lpn));
  stats_.writes++;
  PDL_TRY(purge());          // no void item stays on flash once anything is programmed
  PDL_TRY(scrub_pending());  // (before the references below: a merge moves blocks)
  PDL_TRY(wear_level());
  const uint32_t lbn = lbn_of(lpn), slot = slot_of(lpn);
  LBlock& lb = lblocks_[lbn];
  LpnState& st = lpns_[lpn];
  if (lb.block == kNoBlock) {  // first page of this logical block
    uint32_t b;
    PDL_TRY(allocate_block(&b));
    lb.block = b;
    lb.used_sectors = 0;
    lb.garbage.clear();
    owner_[b] = lbn;
  }
  if (st.slot == Slot::kErased) {  // a first write: the slot takes the page, no erase
    drop_hints(lpn);
    touch(lbn);
    const Status ps = program_data(lb.block, slot, lpn, page, next_seq_++, 0, PageType::kIplData,
                                   self_commit() ? kSpareFlagCommit : 0);
    if (ps.is(Errc::kBadBlock)) {
      st.slot = Slot::kGarbage;  // what the failed program left
      return relocate(lbn, lpn, page);
    }
    PDL_TRY(ps);
    st = LpnState{Slot::kData, true, false, false};
    if (groups_) group_programs_++;
    stats_.base_pages_written++;
    ledger_.cls(lpn).base_pages++;
    return Status::ok();
  }
  if (log_sectors_per_block() == 0) {  // IPU: the block is rewritten with the new page
    drop_hints(lpn);
    return merge(lbn, lpn, page);
  }
  return write_log(lpn, page);
}

void IplStore::drop_hints(Lpn lpn) {
  if (!hints_.empty()) hints_.erase(lpn);
  if (!no_hints_.empty()) no_hints_.erase(lpn);
}

// The log of one write: noted ranges, or the difference from the previous version (which must
// be read: the DBMS-independent path), or — when the flash holds no base for this write (a
// trimmed or torn slot) — the page's runs against zeros behind a reset flag.
Status IplStore::write_log(Lpn lpn, std::span<const uint8_t> page) {
  const uint32_t lbn = lbn_of(lpn), slot = slot_of(lpn);
  LBlock& lb = lblocks_[lbn];
  LpnState& st = lpns_[lpn];
  splitter_.clear();
  uint8_t flags = 0;
  const auto hint = hints_.find(lpn);
  auto add_diff = [&](std::span<const uint8_t> base) {
    const size_t n = diff_encode(base, page, runs_buf_);
    if (n == kDiffTooBig)
      splitter_.add(0, page);
    else
      splitter_.add_runs(std::span<const uint8_t>(runs_buf_).first(n));
  };
  if (!st.mapped) {
    flags = kSectorReset;
    std::fill(prev_buf_.begin(), prev_buf_.end(), 0);
    add_diff(prev_buf_);
  } else if (hint != hints_.end() && !hint->second.empty()) {
    for (const auto& [off, len] : hint->second) splitter_.add(off, page.subspan(off, len));
    stats_.hinted_writes++;
  } else {
    PDL_TRY(read_page(lpn, prev_buf_));
    add_diff(prev_buf_);
    if (splitter_.payloads() == 0) {  // unchanged: nothing to log
      drop_hints(lpn);
      return Status::ok();
    }
  }
  drop_hints(lpn);
  touch(lbn);
  const uint32_t k = std::max<uint32_t>(1, uint32_t(splitter_.payloads()));
  if (k > 255 || lb.used_sectors + k > log_sectors_per_block()) {
    // No room in the log region: merge the block with the new page (garbage collection in IPL,
    // [PDL] footnote 12).
    ledger_.charge_current();
    PDL_TRY(merge(lbn, lpn, page));
    ledger_.charge(ledger_.gc());
    stats_.gc_runs++;
    return Status::ok();
  }
  const Status ps = program_sectors(lbn, uint16_t(slot), flags, {});
  if (ps.is(Errc::kBadBlock)) return relocate(lbn, lpn, page);
  if (groups_) group_programs_ += k;
  PDL_TRY(ps);
  st.mapped = true;
  st.has_log = true;
  st.trim_pending = false;
  stats_.log_records += splitter_.records();
  stats_.log_bytes += splitter_.bytes();
  return Status::ok();
}

// Programs the splitter's payloads (or `raw`, one sector) as one write of k sectors, with the
// commit flag of a per-page program.
Status IplStore::program_sectors(uint32_t lbn, uint16_t slot, uint8_t flags,
                                 std::span<const uint8_t> raw) {
  LBlock& lb = lblocks_[lbn];
  const Status st = program_write(lb.block, &lb.used_sectors, lbn, slot,
                                  uint8_t(flags | (self_commit() ? kSectorCommit : 0)), splitter_,
                                  raw);
  if (st.is(Errc::kBadBlock)) lb.garbage.push_back(lb.used_sectors - 1);
  return st;
}

Status IplStore::program_write(uint32_t block, uint32_t* used, uint32_t lbn, uint16_t slot,
                               uint8_t flags, const LogSplitter& split,
                               std::span<const uint8_t> raw) {
  const size_t parts = raw.empty() ? split.payloads() : 1;
  const uint32_t k = std::max<uint32_t>(1, uint32_t(parts));
  SectorHeader h;
  h.lbn = lbn;
  h.slot = slot;
  h.count = uint8_t(k);
  h.flags = flags;
  h.seq = next_seq_++;
  for (uint32_t i = 0; i < k; i++) {
    h.idx = uint8_t(i);
    const std::span<const uint8_t> payload =
        !raw.empty() ? raw : i < parts ? split.payload(i) : std::span<const uint8_t>();
    sector_encode(h, payload, sector_buf_);
    const uint32_t sec = *used;
    if (nvm_) {  // one whole sector into the block's NVM log area: durable once written
      PDL_TRY(fail(write_nvm_sector(block, sec)));
      ++*used;
      stats_.log_sectors++;
      continue;
    }
    const Status st = as_program_status(nand_.program(
        log_ppa(block, sec), sector_buf_, {}, (sec % sectors_per_page_) * log_sector_));
    if (st.is(Errc::kBadBlock)) {  // the write is incomplete: replay and recovery skip it
      ++*used;
      stats_.program_retries++;
      retiring_[block] = true;
      return st;
    }
    PDL_TRY(fail(st));
    ++*used;
    stats_.log_sectors++;
  }
  return Status::ok();
}

// ---- trim and sync ----

Status IplStore::trim(Lpn lpn) {
  PDL_TRY(changeable());
  if (lpn >= lpns_.size())
    return Status::error(Errc::kInvalidArgument, "trim of logical page " + std::to_string(lpn) +
                                                     " out of range");
  stats_.trims++;
  // Before the group changes anything: a purge merge rebuilds from the committed state.
  PDL_TRY(purge());
  drop_hints(lpn);
  LpnState& st = lpns_[lpn];
  if (!st.mapped) return Status::ok();
  st.mapped = false;
  st.trim_pending = true;  // the flash keeps the old page until sync() records the trim
  trims_.insert(lbn_of(lpn));
  touch(lbn_of(lpn));
  return Status::ok();
}

// Makes the trims of one logical block durable: one unmap sector naming their slots, or, with
// no room, a merge that leaves them out. Cost: the trimmed pages' classes share the work, except
// an IPL merge (a full log region: garbage collection, charged to gc). IPU has no log region: its
// trims always rewrite the block, which is the trims' own work, as its writes' rewrites are.
Status IplStore::flush_trims(uint32_t lbn) {
  std::vector<Lpn> trimmed;
  const Lpn first = first_lpn(lbn);
  for (uint32_t s = 0; s < lpns_in(lbn); s++)
    if (lpns_[first + s].trim_pending) trimmed.push_back(first + s);
  if (trimmed.empty()) return Status::ok();
  LBlock& lb = lblocks_[lbn];
  ledger_.charge_current();
  const bool ipl = log_sectors_per_block() > 0;
  if (lb.used_sectors < log_sectors_per_block()) {
    std::vector<uint8_t> bitmap((dpb_ + 7) / 8, 0);
    for (Lpn l : trimmed) bitmap[slot_of(l) / 8] |= uint8_t(1u << (slot_of(l) % 8));
    const Status ps = program_sectors(lbn, kUnmapSlot, kSectorUnmap, bitmap);
    if (ps.is(Errc::kBadBlock)) {  // the merge leaves the trimmed pages out
      PDL_TRY(relocate(lbn, kNoLpn, {}));
      const NandCounters work = ledger_.take_uncharged();
      for (Lpn l : trimmed) ledger_.bucket_of(l).add(work, 1.0 / double(trimmed.size()));
      return Status::ok();
    }
    PDL_TRY(ps);
    for (Lpn l : trimmed) {
      lpns_[l].trim_pending = false;
      lpns_[l].has_log = true;
    }
    if (groups_) group_programs_++;
    stats_.tombstones++;
  } else {
    PDL_TRY(merge(lbn, kNoLpn, {}));  // clears trim_pending: the merge leaves them out (or, in
    if (ipl) {                        // a group, carries them over as an unmap record)
      ledger_.charge(ledger_.gc());
      stats_.gc_runs++;
      return Status::ok();
    }
  }
  const NandCounters work = ledger_.take_uncharged();
  for (Lpn l : trimmed) ledger_.bucket_of(l).add(work, 1.0 / double(trimmed.size()));
  return Status::ok();
}

// Per page: makes the pending trims durable. With atomic groups: commits the open group —
// its trims' unmap records, then one commit record (ipl_commit.cc).
Status IplStore::sync() {
  PDL_TRY(changeable());
  CostLedger::Scope cost(ledger_, ledger_.other());
  stats_.syncs++;
  // (A sync with nothing to program purges nothing: a rollback on a full chip needs no room.)
  if (!trims_.empty() || group_dirty_ || scrubbing_n_ > 0) PDL_TRY(purge());
  for (uint32_t lbn : trims_) PDL_TRY(flush_trims(lbn));
  trims_.clear();
  PDL_TRY(scrub_pending());
  if (groups_ && group_dirty_) PDL_TRY(commit_group());
  return fail(nand_.flush());
}

}  // namespace pdl
