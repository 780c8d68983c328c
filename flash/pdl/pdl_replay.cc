// pdl_replay.cc — PdlStore's mount after a power cut from a checkpoint plus the blocks declared
// since it (docs/design.md §17): PdlStore::replay and PdlRecovery::replay.
//
// The scan's rules ([PDL] Fig. 7, pdl_recovery.cc) are "newest seq wins" over items, in any
// order. A block no summary declared has not been programmed, erased or marked bad since the
// checkpoint, so its items are exactly those the checkpoint's tables were derived from; the
// checkpoint's ppmt is the fold of all of them. Replay therefore:
//   * rescans, by scan()'s own per-block code, every declared block and the checkpoint's write
//     heads (so that which blocks reopen as heads comes out as the scan's): their items are
//     collected;
//   * drops the checkpoint's ppmt entries that point into a rescanned block (it may have been
//     erased) and keeps the others, with their reverse-map entries (copies) and void marks;
//   * for each lpn a rescanned item names, reads back the sequence numbers of the checkpoint's
//     entries still kept (the base page's spare; the differential page's records) so that the
//     items compete with them exactly as in a scan; other lpns need no seq;
//   * applies the items under the final commit cut-off (the checkpoint's committed seq or a
//     newer record found in a rescanned block), then resolve() and reopen() as the scan does.
// The checkpoint's tables are demand-loaded (docs/design.md §18): the walk below reads every
// table page of the checkpoint (a load that fails fails the replay, and the mount scans), and
// the replayed store's tables are built in RAM, as a scan's, until its first checkpoint.
// Differences from a scan (none changes what a read returns): a closed block left partly
// programmed by an older crash is not a head candidate (the checkpoint keeps no per-page
// state of closed blocks), and of two copies with one seq (a GC move the cut stopped before
// the victim's erase) the first uncut one in block order wins (better_copy), a kept copy's
// block taken as whole — both copies hold the same bytes.
#include <algorithm>
#include <limits>

#include "flash/common/crc32c.h"
#include "flash/pdl/pdl_recovery.h"
#include "flash/pdl/record.h"
#include "flash/store/reread.h"

namespace pdl {

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
// kept entries (a trimmed lpn's tombstone: its seq, base seq 0 — only its order to the
// tombstone matters for a differential, and a base page's own test is against the tombstone).
Status PdlRecovery::seed_seqs(const PdlStore& ck, Lpn l, const std::vector<uint8_t>& rescan) {
  const PpmtEntry c = ck.ppmt_.get(l);
  LpnSeqs& q = seqs_[l];
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

Status PdlRecovery::replay(const PdlStore& ck, const std::vector<uint8_t>& rescan) {
  const Ppa ck_commit = ck.groups_ ? ck.commit_ppa_ : ck.commit_candidate_;
  const bool commit_kept = ck_commit != kNoPpa && !rescan[ck_commit / ppb_];
  if (commit_kept) {
    cutoff_ = ck.committed_seq_;
    commit_ppa_ = ck_commit;
  }
  // Blocks in order: rescanned ones read as scan() reads them, the others from the tables.
  collect_ = true;
  for (uint32_t b = kSuperblockBlocks; b < g_.blocks; b++) {
    if (rescan[b]) {
      PDL_TRY(scan_block(b));
      continue;
    }
    if (ck.blocks_.is_bad(b)) {
      s_.blocks_.add_bad(b);
      rep_.bad_blocks++;
      continue;
    }
    if (ck.blocks_.is_free(b)) {
      s_.blocks_.add_free(b, false);  // (as the scan: not known erased)
      continue;
    }
    BlockScan& bs = block_[b];
    bs.used = true;
    bs.gap_free = true;
    bs.last_programmed = ppb_ - 1;  // closed: never a head candidate
    bs.holds_void = ck.void_block_[b] != 0;
    const Ppa first = Ppa(uint64_t(b) * ppb_);
    for (Ppa p = first; p < first + ppb_; p++) {
      const uint32_t m = ck.p2l_.get(p);
      s_.p2l_.ref(p) = m;
      if (m < lpns_) s_.ppmt_.ref(m).copies = s_.ppmt_.get(m).copies + 1;
    }
  }
  collect_ = false;
  cutoff_ = std::max(cutoff_, ck.committed_seq_);
  max_seq_ = std::max(max_seq_, ck.next_seq_ - 1);

  // The checkpoint's entries outside the rescanned blocks.
  std::vector<uint8_t> touched(lpns_, 0);
  for (const Item& it : collected_) touched[it.lpn] = 1;
  for (size_t l = 0; l < lpns_; l++) {
    const PpmtEntry c = ck.ppmt_.get(l);
    PpmtEntry& e = s_.ppmt_.ref(l);
    if (c.base != kNoPpa && !rescan[c.base / ppb_]) e.base = c.base;
    if (c.diff != kNoPpa && !rescan[c.diff / ppb_]) e.diff = c.diff;
    if (touched[l]) {
      PDL_TRY(seed_seqs(ck, Lpn(l), rescan));
    } else {
      // Untouched: both entries are kept (an entry in a rescanned block is found there again,
      // or was superseded by an item found there). A differential without a base page is a
      // trim's tombstone, as the scan's resolve sees it.
      seqs_[l].tomb = (e.base == kNoPpa && e.diff != kNoPpa) ? 1 : 0;
    }
  }
  // The rescanned items compete under the final cut-off (the scan's order: block by block;
  // against a kept entry of one seq, the scan's tie rule: the first uncut copy in block order).
  for (const Item& it : collected_) take(it);
  collected_.clear();
  return Status::ok();
}

Status PdlStore::replay(Nand& nand, const StoreParams& params, CommitMode mode, TableReader& r,
                        const std::vector<uint32_t>& declared, std::unique_ptr<PageStore>* out,
                        MountReport* report) {
  if (params.nvm_bytes)
    return Status::error(Errc::kUnsupported,
                         "power cut: pdl with nvm cannot replay (its NVM log is not replayed)");
  const MountClock clock(nand);
  std::unique_ptr<PageStore> ck_store;
  PDL_TRY(mount_tables(nand, params, mode, r, &ck_store));
  const PdlStore& ck = static_cast<const PdlStore&>(*ck_store);
  const Geometry& g = ck.geo_;
  std::vector<uint8_t> rescan(g.blocks, 0);
  for (uint32_t b : declared) {
    if (b >= g.blocks || b < kSuperblockBlocks)
      return Status::error(Errc::kCorrupt, "replay: declared block " + std::to_string(b) +
                                               " is not the store's");
    rescan[b] = 1;
  }
  uint64_t replayed = 0;
  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++) {
    if (!ck.blocks_.is_free(b) && !ck.blocks_.is_bad(b) && !ck.blocks_.is_closed(b))
      rescan[b] = 1;  // a write head of the checkpoint
    replayed += rescan[b];
  }
  std::unique_ptr<PdlStore> s(new PdlStore(nand, params));
  s->legacy_ = false;
  s->groups_ = mode == CommitMode::kGroup && has_atomic_commit(params.method);
  s->blocks_.set_user_keep(s->groups_ ? 2 : 1);
  PdlRecovery recovery(*s, nand, false);
  PDL_TRY(recovery.replay(ck, rescan));
  PDL_TRY(ck.tables_status());  // (a checkpoint table page that failed to load: never replayed)
  recovery.resolve();
  PDL_TRY(recovery.reopen());
  MountReport rep = recovery.report();
  clock.finish(&rep);
  rep.replayed_blocks = replayed;
  if (report) *report = rep;
  s->stats_.void_pages = rep.void_pages;
  s->damaged_pages_ = std::max(ck.damaged_pages_, rep.damaged_pages);
  s->ledger_.charge(s->ledger_.other());
  *out = std::move(s);
  return Status::ok();
}

}  // namespace pdl
