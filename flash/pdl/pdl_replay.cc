// pdl_replay.cc — PdlStore's mount after a power cut from a checkpoint plus the blocks declared
// since it (docs/design.md §17, §18): PdlStore::replay and PdlRecovery::replay.
//
// The scan's rules ([PDL] Fig. 7, pdl_recovery.cc) are "newest seq wins" over items, in any
// order. A block no summary declared has not been programmed, erased or marked bad since the
// checkpoint, so its items are exactly those the checkpoint's tables were derived from; the
// checkpoint's ppmt is the fold of all of them. The replayed store is the checkpoint's own
// (its tables demand-loaded, mount_tables), changed only where the rescanned blocks R — the
// declared ones and the checkpoint's write heads — change it:
//   * R's blocks are scanned by scan()'s own per-block code; their items are collected;
//   * the touched lpns are those the items name and those whose base pages the checkpoint's
//     reverse map places in R. No other lpn's entry can point into R: an entry pointing at a
//     differential page in R was either found there again (its record is an item), or the
//     page was superseded, marked obsolete or erased after the checkpoint — a newer item of
//     the lpn was written first (the write that superseded it, or GC's move before the erase),
//     in a block programmed after the checkpoint, so in R; and an lpn left with no item at
//     all had its tombstone dropped, which GC does only once no base page of it is left, so
//     its base pages were in R. The checkpoint's counts in R are checked against that: after
//     the touched lpns' entries are taken out, every page's vdct and block's valid count in R
//     must be zero (else kCorrupt, and the mount scans);
//   * each touched lpn's entry keeps only its parts outside R, its copies those outside R; the
//     sequence numbers of those parts are read back (the base page's spare; the differential
//     page's records) so that the items compete with them exactly as in a scan — for an lpn
//     with an item older than the checkpoint (a GC copy, a page of the checkpoint's heads);
//     against items newer than the checkpoint every kept part loses whatever its seq;
//   * the items are applied under the final commit cut-off (the checkpoint's committed seq or
//     a newer record found in R), then resolve() and reopen() as the scan does, but over the
//     touched lpns only. The block manager is rebuilt as the scan builds it (O(blocks)): R's
//     blocks as scanned, the others free, bad or closed as the checkpoint had them, with the
//     valid counts adjusted.
// With the write buffer in NVM (method=pdl&nvm=SIZE) commits write only NVM, which the view
// declares with one empty summary page per checkpoint generation (so a replay runs even with
// no block declared). The replay then does what the scan mount does with the NVM log: its
// last commit raises the cut-off, and after resolve() each lpn's newest committed record goes
// back into the buffer if newer than the lpn's base page and flash differential
// (take_nvm_records). The checkpoint's buffer is dropped first and its lpns and the log's are
// touched, their kept parts' seqs ordered against the records (touch_write_buffer); the log
// holds at most the NVM's bytes, so this is bounded by the NVM, not the chip.
// So a replay reads R, one spare or page per kept part of an lpn with an older item, and the
// table pages the touched lpns and R's pages live in — nothing proportional to the chip — and
// the table pages it changes stay dirty in RAM until the next checkpoint appends them.
// Differences from a scan (none changes what a read returns): a closed block left partly
// programmed by an older crash is not a head candidate (the checkpoint keeps no per-page
// state of closed blocks), of two copies with one seq (a GC move the cut stopped before the
// victim's erase) the first uncut one in block order wins (better_copy), a kept copy's block
// taken as whole — both copies hold the same bytes — and the report's live_lpns and
// valid_diff_pages stay 0 (a replay does not count what it did not reconsider).
#include <algorithm>
#include <limits>
#include <unordered_map>

#include "flash/common/crc32c.h"
#include "flash/pdl/pdl_recovery.h"
#include "flash/pdl/record.h"
#include "flash/store/reread.h"

namespace pdl {

namespace {
Status inconsistent(const std::string& what) {
  return Status::error(Errc::kCorrupt, "replay: " + what +
                                           " (the checkpoint does not match the blocks "
                                           "declared since it)");
}
}  // namespace

Status PdlRecovery::diff_page_records(Ppa r) {
  if (diff_records_.count(r)) return Status::ok();
  auto& recs = diff_records_[r];
  std::vector<uint8_t> spare(g_.page_spare);
  SpareHeader h;
  bool passed;
  PDL_TRY(read_with_retries(
      nand_, r, data_, spare,
      [&] {
        return spare_decode(spare, &h) == SpareState::kValid &&
               crc32c(data_.data(), data_.size()) == h.data_crc;
      },
      &passed));
  rep_.pages_scanned++;
  if (!passed || h.aux > g_.page_data)
    return Status::error(Errc::kCorrupt, "replay: the checkpoint's differential page " +
                                             std::to_string(r) + " does not read back");
  RecordReader rr(std::span<const uint8_t>(data_).first(h.aux));
  RecordView d;
  while (rr.next(&d)) {
    auto& v = recs[d.lpn];
    if (d.seq >= v.first) v = {d.seq, d.tombstone};
  }
  return Status::ok();
}

// The seqs Fig. 7 would hold for lpn l before the rescanned items: those of the checkpoint's
// kept parts of its entry c (a trimmed lpn's tombstone: its seq, base seq 0 — only its order
// to the tombstone matters for a differential, and a base page's own test is against the
// tombstone).
Status PdlRecovery::seed_seqs(Lpn l, const PpmtEntry& c, const std::vector<uint8_t>& rescan) {
  LpnSeqs& q = seqs(l);
  if (c.base != kNoPpa && !rescan[c.base / ppb_]) {
    std::vector<uint8_t> spare(g_.page_spare);
    SpareHeader h;
    bool passed;
    PDL_TRY(read_with_retries(
        nand_, c.base, {}, spare, [&] { return spare_decode(spare, &h) == SpareState::kValid; },
        &passed));
    rep_.pages_scanned++;
    if (!passed || h.logical_page() != l)
      return Status::error(Errc::kCorrupt, "replay: the checkpoint's base page " +
                                               std::to_string(c.base) + " of page " +
                                               std::to_string(l) + " does not read back");
    q.base_seq = h.seq;
  }
  if (c.diff != kNoPpa && !rescan[c.diff / ppb_]) {
    PDL_TRY(diff_page_records(c.diff));
    const auto& recs = diff_records_[c.diff];
    auto it = recs.find(l);
    if (it == recs.end())
      return Status::error(Errc::kCorrupt, "replay: the checkpoint's differential page " +
                                               std::to_string(c.diff) + " holds no record of " +
                                               std::to_string(l));
    q.diff_seq = it->second.first;
    q.tomb = it->second.second ? 1 : 0;
  }
  return Status::ok();
}

Status PdlRecovery::replay(const std::vector<uint8_t>& rescan,
                           const std::vector<std::vector<uint8_t>>* nvm_records) {
  replay_ = true;
  // The checkpoint's commit record, if outside R (else R's scan finds it or a newer one).
  const Ppa ck_commit = s_.groups_ ? s_.commit_ppa_ : s_.commit_candidate_;
  if (ck_commit != kNoPpa && !rescan[ck_commit / ppb_]) {
    cutoff_ = std::max(cutoff_, s_.committed_seq_);  // (the NVM log's commit may be newer)
    commit_ppa_ = ck_commit;
  }
  const uint64_t ck_committed = s_.committed_seq_, ck_next = s_.next_seq_;
  // Per block: the checkpoint's state and valid count (the pinned commit page's count out).
  enum : uint8_t { kCkUsed, kCkFree, kCkBad };
  std::vector<uint8_t> ck_state(g_.blocks, kCkUsed);
  for (uint32_t b = kSuperblockBlocks; b < g_.blocks; b++) {
    ck_state[b] = s_.blocks_.is_bad(b) ? kCkBad : s_.blocks_.is_free(b) ? kCkFree : kCkUsed;
    block_[b].valid = s_.blocks_.valid(b);
  }
  if (s_.groups_ && s_.commit_ppa_ != kNoPpa && !s_.referenced(s_.commit_ppa_)) {
    if (block_[s_.commit_ppa_ / ppb_].valid == 0)
      return inconsistent("the pinned commit page's block counts no valid page");
    block_[s_.commit_ppa_ / ppb_].valid--;
  }
  // R's pages: the checkpoint's reverse map (base pages name touched lpns) and vdct, then
  // cleared — the scan of R sets what it finds. R's blocks' void marks are the scan's too.
  std::unordered_map<Ppa, uint16_t> rescan_vdct;
  std::unordered_map<Lpn, uint32_t> rescan_copies;
  for (uint32_t b = kSuperblockBlocks; b < g_.blocks; b++) {
    if (!rescan[b]) continue;
    for (Ppa p = Ppa(uint64_t(b) * ppb_); p < Ppa(uint64_t(b + 1) * ppb_); p++) {
      const uint32_t m = s_.p2l_.get(p);
      if (m < lpns_) {
        rescan_copies[m]++;
        touched_.push_back(m);
      }
      if (m != kP2lNone) s_.p2l_.ref(p) = kP2lNone;
      if (const uint16_t v = s_.vdct_.get(p)) {
        rescan_vdct[p] = v;
        s_.vdct_.ref(p) = 0;
      }
    }
    if (s_.void_block_[b]) {
      s_.void_block_[b] = 0;
      s_.void_blocks_--;
    }
  }
  PDL_TRY(s_.tables_status());
  if (nvm_records) touch_write_buffer(*nvm_records);

  // Blocks in order, as the scan hands them to a fresh block manager: R's blocks scanned,
  // the others as the checkpoint had them (closed blocks never head candidates).
  {
    BlockManager fresh(g_, kSuperblockBlocks, s_.params_.gc_reserve_blocks);
    fresh.set_user_keep(s_.blocks_.user_keep());
    fresh.set_wear_level(s_.params_.wear_level);
    s_.blocks_ = std::move(fresh);
  }
  collect_ = true;
  for (uint32_t b = kSuperblockBlocks; b < g_.blocks; b++) {
    if (rescan[b]) {
      PDL_TRY(scan_block(b));
      continue;
    }
    if (ck_state[b] == kCkBad) {
      s_.blocks_.add_bad(b);
      rep_.bad_blocks++;
      continue;
    }
    if (ck_state[b] == kCkFree) {
      s_.blocks_.add_free(b, false);  // (as the scan: not known erased)
      continue;
    }
    BlockScan& bs = block_[b];
    bs.used = true;
    bs.gap_free = true;
    bs.last_programmed = ppb_ - 1;  // closed: never a head candidate
    bs.holds_void = s_.void_block_[b] != 0;
  }
  collect_ = false;
  cutoff_ = std::max(cutoff_, ck_committed);
  max_seq_ = std::max(max_seq_, ck_next - 1);

  for (const Item& it : collected_) touched_.push_back(it.lpn);
  std::sort(touched_.begin(), touched_.end());
  touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
  PDL_TRY(forget_checkpoint_entries(rescan, rescan_vdct, rescan_copies, ck_next));
  // The rescanned items compete under the final cut-off (the scan's order: block by block;
  // against a kept entry of one seq, the scan's tie rule: the first uncut copy in block order).
  for (size_t i = 0; i < collected_.size(); i++) {
    take(collected_[i]);
    if (i % 64 == 63) s_.fold_tables();  // (the replay's dirty table pages stay bounded)
  }
  std::vector<Item>().swap(collected_);  // (freed: the mounted store's RAM is its tables)
  diff_records_.clear();
  return s_.tables_status();
}

// With the write buffer in NVM: the buffer is rebuilt from the log after resolve()
// (take_nvm_records, as the scan mount does), so the checkpoint's buffer is emptied and its
// lpns touched (their records may have left since: flushed or merged into R, or a spent
// tombstone dropped at a commit, which programs nothing), and so is every lpn the log's
// records name. The rule "a record counts if newer than the lpn's base page and flash
// differential" needs seqs for the kept parts that order them against the record:
//   * a newest logged record newer than the checkpoint beats any kept part (ck_next - 1);
//   * one the checkpoint's buffer held (same seq) was newer than its lpn's base page and flash
//     differential then, which are the kept parts: seq - 1 stands in for them;
//   * any other older one had left the buffer by the checkpoint (a log not reset since still
//     holds it), for a base page or a differential at least as new: the kept parts' real seqs
//     are read back, as for an lpn with an older item (seed_seqs: a spare read for the base
//     page, a read of the differential page) — exact whatever happened to them since, at one
//     or two reads per such lpn, bounded by the log's size.
void PdlRecovery::touch_write_buffer(const std::vector<std::vector<uint8_t>>& records) {
  std::unordered_map<Lpn, uint64_t> buffered;  // the checkpoint's buffer: lpn -> its seq
  s_.dwb_.for_each([&](const RecordView& v) {
    touched_.push_back(v.lpn);
    buffered[v.lpn] = v.seq;
  });
  s_.dwb_.clear();
  std::unordered_map<Lpn, uint64_t> newest;
  for (const auto& rec : records) {
    RecordReader rr(rec);
    RecordView v;
    if (!rr.next(&v) || v.lpn >= lpns_) continue;
    auto [it, fresh] = newest.emplace(v.lpn, v.seq);
    if (!fresh) it->second = std::max(it->second, v.seq);
  }
  for (const auto& [l, seq] : newest) {
    touched_.push_back(l);
    auto b = buffered.find(l);
    nvm_newest_.push_back({l, seq, b != buffered.end() && b->second == seq});
  }
}

// The touched lpns' checkpoint entries leave the counts (vdct, block valid counts), R's counts
// must then be zero; each entry keeps its parts outside R and its copies outside R. The seqs
// of the kept parts are read back only for an lpn with an item older than the checkpoint (a
// GC copy, or a page of the checkpoint's write heads): an item of seq >= ck_next is newer
// than anything the checkpoint holds, so against it any stand-in of the kept parts' seqs
// below ck_next decides alike (ck_next - 1 is used; a kept differential without a base page
// is a trim's tombstone, as the scan's resolve sees it).
Status PdlRecovery::forget_checkpoint_entries(
    const std::vector<uint8_t>& rescan, const std::unordered_map<Ppa, uint16_t>& rescan_vdct,
    const std::unordered_map<Lpn, uint32_t>& rescan_copies, uint64_t ck_next) {
  replay_seqs_.assign(touched_.size(), LpnSeqs{});
  std::vector<uint8_t> older_item(touched_.size(), 0);  // an item of seq < ck_next names it
  for (const Item& it : collected_)
    if (it.seq < ck_next) older_item[touched_index(it.lpn)] = 1;
  // The seq standing in for kept parts (the checkpoint's buffered records: just below theirs).
  std::unordered_map<size_t, uint64_t> below_buffered;
  for (const NvmNewest& n : nvm_newest_) {
    if (n.seq >= ck_next) continue;
    if (n.buffered && n.seq > 0) below_buffered[touched_index(n.lpn)] = n.seq - 1;
    else older_item[touched_index(n.lpn)] = 1;
  }
  std::vector<NvmNewest>().swap(nvm_newest_);
  std::unordered_map<Ppa, uint32_t> drops;  // differential page -> touched lpns pointing at it
  std::vector<PpmtEntry> ck(touched_.size());
  for (size_t i = 0; i < touched_.size(); i++) {
    const PpmtEntry c = ck[i] = s_.ppmt_.get(touched_[i]);
    if (c.in_dwb && !s_.nvm_)
      return inconsistent("a buffered record at a checkpoint without NVM");
    if (c.base != kNoPpa) {
      if (block_[c.base / ppb_].valid == 0)
        return inconsistent("block " + std::to_string(c.base / ppb_) + "'s valid count");
      block_[c.base / ppb_].valid--;
    }
    if (c.diff != kNoPpa) drops[c.diff]++;
  }
  size_t rescan_drops = 0;
  for (const auto& [p, n] : drops) {
    const uint32_t b = p / ppb_;
    uint32_t had;
    if (rescan[b]) {
      auto it = rescan_vdct.find(p);
      had = it == rescan_vdct.end() ? 0 : it->second;
      rescan_drops++;
    } else {
      had = s_.vdct_.get(p);
    }
    if (had < n || (had == n && block_[b].valid == 0))
      return inconsistent("differential page " + std::to_string(p) + "'s count");
    if (!rescan[b]) s_.vdct_.ref(p) = uint16_t(had - n);
    if (had == n) block_[b].valid--;
  }
  if (rescan_drops != rescan_vdct.size() ||
      std::any_of(rescan_vdct.begin(), rescan_vdct.end(),
                  [&](const auto& pv) { return drops[pv.first] != pv.second; }))
    return inconsistent("a differential page of a replayed block counts other pages");
  for (uint32_t b = kSuperblockBlocks; b < g_.blocks; b++)
    if (rescan[b] && block_[b].valid != 0)
      return inconsistent("replayed block " + std::to_string(b) + " counts " +
                          std::to_string(block_[b].valid) + " valid pages no lpn explains");

  for (size_t i = 0; i < touched_.size(); i++) {
    if (i % 64 == 63) s_.fold_tables();
    const Lpn l = touched_[i];
    const PpmtEntry& c = ck[i];
    auto rc = rescan_copies.find(l);
    const uint32_t gone = rc == rescan_copies.end() ? 0 : rc->second;
    if (c.copies < gone) return inconsistent("page " + std::to_string(l) + "'s copies");
    PpmtEntry& e = s_.ppmt_.ref(l);
    e.base = c.base != kNoPpa && !rescan[c.base / ppb_] ? c.base : kNoPpa;
    e.diff = c.diff != kNoPpa && !rescan[c.diff / ppb_] ? c.diff : kNoPpa;
    e.copies = c.copies - gone;
    e.in_dwb = 0;
    if (older_item[i]) {
      PDL_TRY(seed_seqs(l, c, rescan));
      continue;
    }
    LpnSeqs& q = seqs(l);
    auto bb = below_buffered.find(i);
    const uint64_t kept = bb == below_buffered.end() ? ck_next - 1 : bb->second;
    q.base_seq = e.base != kNoPpa ? kept : 0;
    q.diff_seq = e.diff != kNoPpa ? kept : 0;
    q.tomb = c.base == kNoPpa && e.diff != kNoPpa ? 1 : 0;
  }
  return s_.tables_status();
}

Status PdlStore::replay(Nand& nand, const StoreParams& params, CommitMode mode, TableReader& r,
                        const std::vector<uint32_t>& declared, std::unique_ptr<PageStore>* out,
                        MountReport* report) {
  const MountClock clock(nand);
  std::unique_ptr<PageStore> ck_store;
  NvmLog::Recovered nvm;  // (with NVM: its log as it is now, read by mount_tables)
  PDL_TRY(mount_tables(nand, params, mode, r, &ck_store, params.nvm_bytes ? &nvm : nullptr));
  std::unique_ptr<PdlStore> s(static_cast<PdlStore*>(ck_store.release()));
  const Geometry& g = s->geo_;
  std::vector<uint8_t> rescan(g.blocks, 0);
  for (uint32_t b : declared) {
    if (b >= g.blocks || b < kSuperblockBlocks)
      return Status::error(Errc::kCorrupt, "replay: declared block " + std::to_string(b) +
                                               " is not the store's");
    rescan[b] = 1;
  }
  uint64_t replayed = 0;
  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++) {
    if (!s->blocks_.is_free(b) && !s->blocks_.is_bad(b) && !s->blocks_.is_closed(b))
      rescan[b] = 1;  // a write head of the checkpoint
    replayed += rescan[b];
  }
  PdlRecovery recovery(*s, nand, false);
  if (s->nvm_) recovery.nvm_commit(nvm.commit_seq, nvm.max_seq);
  PDL_TRY(recovery.replay(rescan, s->nvm_ ? &nvm.records : nullptr));
  recovery.resolve();
  if (s->nvm_) {
    PDL_TRY(recovery.take_nvm_records(nvm.records));
    s->nvm_mounted(nvm.commit_seq);
  }
  PDL_TRY(recovery.reopen());
  PDL_TRY(s->tables_status());  // (a table page that failed to load: never a replayed store)
  MountReport rep = recovery.report();
  clock.finish(&rep);
  rep.replayed_blocks = replayed;
  if (report) *report = rep;
  s->stats_.void_pages = rep.void_pages;
  s->damaged_pages_ = std::max(s->damaged_pages_, rep.damaged_pages);
  s->ledger_.charge(s->ledger_.other());
  s->replayed_ = true;
  s->replayed_lpns_ = recovery.take_touched();
  *out = std::move(s);
  return Status::ok();
}

}  // namespace pdl
