// ipl_recovery.cc — IplStore::mount: rebuild the mapping from the chip after a crash.
//
// One read of every page of every data block (data and spare; a torn data page is told apart
// only by its data CRC, and a log page's sectors carry their own headers). Pass 1, per block:
//   * its logical block, from any valid data page, marker or log sector (two names: kCorrupt),
//     or the commit log (sectors naming kCommitLogLbn);
//   * per data slot its page's header; per complete log write its seq, slot, flags (and an
//     unmap record's bitmap);
//   * the commit records: commit-log sectors, and (format 2, per page) every commit-flagged
//     data page and log write.
// Pass 2 (no flash operation). committed = the newest commit record (format 1: everything). An
// item counts if its seq <= committed — except a merge's pages without the group flag, which
// count always (a plain or selective merge holds committed versions only). The rest is *void*:
// a group the crash (or an abort) left uncommitted. A block is a candidate if its merge counts
// and is complete (a merged block's data pages all carry the merge's seq and page count), or,
// without merge pages, if any of its items counts. Per logical block the candidate with the
// newest counting item wins — a merge's pages are newer than everything in the block it
// replaced, and the old block is erased (or, in a group, kept) only after the merge completed.
// The winner's slots and log are rebuilt from the counting items: valid data page → kData;
// erased → kErased; anything else → kGarbage; complete log writes replayed for mapped /
// has_log. Blocks holding void items are handed to purge() (erased if free, merged if a
// winner) before anything is programmed. Recovery itself writes nothing.
#include <algorithm>
#include <string>

#include "flash/common/crc32c.h"
#include "flash/ipl/ipl_store.h"
#include "flash/store/reread.h"

namespace pdl {
namespace {

struct SlotScan {
  bool programmed = false;  // not erased (a valid page, or a torn one)
  bool page = false;       // a valid data page or marker
  bool marker = false;     // the empty-merge marker
  bool group = false, commit = false;
  uint64_t seq = 0;
  uint32_t aux = 0;        // its merge's page count (0: a first write)
};

struct LogScan {
  uint64_t seq = 0;
  uint16_t slot = 0;
  uint8_t flags = 0;
  std::vector<uint8_t> bitmap;  // an unmap record's
};

struct BlockScan {
  bool any = false;         // holds at least one valid page or sector
  bool commit_log = false;  // a block of the commit log
  uint32_t lbn = 0;
  uint64_t max_seq = 0;     // of every valid item, counting or not
  uint64_t max_commit = 0;  // commit-log block: its newest record
  uint32_t used_sectors = 0;
  std::vector<uint32_t> invalid;  // sectors not valid, below the last used one
  std::vector<SlotScan> slots;
  std::vector<LogScan> writes;  // complete log writes, in log order
};

}  // namespace

Status IplStore::mount(Nand& nand, const StoreParams& params, bool legacy,
                       std::unique_ptr<PageStore>* out, MountReport* report) {
  const MountClock clock(nand);
  std::unique_ptr<IplStore> s(new IplStore(nand, params));
  const Geometry& g = s->geo_;
  const uint32_t ppb = g.pages_per_block, dpb = s->dpb_;
  const uint32_t lbns = uint32_t(s->lblocks_.size());
  MountReport rep;
  std::vector<uint8_t> block_buf(size_t(ppb) * g.page_data), spare(g.page_spare);
  std::vector<BlockScan> scans(g.blocks);
  uint64_t max_seq = 0, committed = 0;
  auto corrupt = [](const std::string& m) { return Status::error(Errc::kCorrupt, m); };

  // ---- pass 1: read every page ----
  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++) {
    if (nand.is_bad(b)) {  // factory-marked or retired: never read (a retired block's pages
      s->bad_[b] = true;   // must not come back)
      s->bad_count_++;
      rep.bad_blocks++;
      continue;
    }
    BlockScan& sc = scans[b];
    sc.slots.resize(dpb);
    bool have_lbn = false;
    auto claim = [&](uint32_t lbn) {
      if (have_lbn && lbn != sc.lbn)
        return corrupt("block " + std::to_string(b) + " holds pages of logical blocks " +
                       std::to_string(sc.lbn) + " and " + std::to_string(lbn));
      if (lbn >= lbns && lbn != kCommitLogLbn)
        return corrupt("block " + std::to_string(b) + " names logical block " +
                       std::to_string(lbn) + " beyond the store's " + std::to_string(lbns));
      have_lbn = true;
      sc.lbn = lbn;
      sc.any = true;
      return Status::ok();
    };
    for (uint32_t p = 0; p < ppb; p++) {
      const std::span<uint8_t> data =
          std::span<uint8_t>(block_buf).subspan(size_t(p) * g.page_data, g.page_data);
      SpareHeader h;
      SpareState ss;
      bool passed;  // an erased page, a log page, or a data page passing its CRC
      PDL_TRY(read_with_retries(
          nand, b * ppb + p, data, spare,
          [&] {
            ss = spare_decode(spare, &h);
            if (ss == SpareState::kErased) return all_ff(data) || p >= dpb;
            if (p >= dpb) return log_page_decodes(data);  // torn sectors fail every attempt
            return ss == SpareState::kValid && crc32c(data.data(), data.size()) == h.data_crc;
          },
          &passed));
      (void)passed;  // a page never passing is torn (below)
      rep.pages_scanned++;
      if (p >= dpb) continue;  // log page: its sectors are parsed below
      if (ss == SpareState::kErased && all_ff(data)) continue;
      SlotScan& slot = sc.slots[p];
      if (ss != SpareState::kValid ||
          (h.type != PageType::kIplData && h.type != PageType::kIplEmpty) ||
          crc32c(data.data(), data.size()) != h.data_crc) {
        rep.torn_pages++;
        slot.programmed = true;
        continue;
      }
      if (h.type == PageType::kIplEmpty) {
        PDL_TRY(claim(h.lpn));
        slot.marker = true;
        slot.aux = 1;  // a marker is a merge of itself
      } else {
        if (h.lpn >= s->lpns_.size() || h.lpn % dpb != p)
          return corrupt("data page " + std::to_string(b * ppb + p) + " names logical page " +
                         std::to_string(h.lpn) + ", which does not live there");
        PDL_TRY(claim(h.lpn / dpb));
        slot.aux = h.aux;
      }
      slot.programmed = slot.page = true;
      slot.seq = h.seq;
      slot.group = h.group;
      slot.commit = h.commit;
      max_seq = std::max(max_seq, h.seq);
      sc.max_seq = std::max(sc.max_seq, h.seq);
      if (h.commit) committed = std::max(committed, h.seq);
    }
    // Log region: used sectors and their claims, then the complete writes.
    const uint32_t sectors = s->log_sectors_per_block();
    const std::span<const uint8_t> log =
        std::span<const uint8_t>(block_buf).subspan(size_t(dpb) * g.page_data);
    for (uint32_t i = 0; i < sectors; i++) {
      SectorHeader h;
      std::span<const uint8_t> payload;
      const SectorState st =
          sector_decode(log.subspan(size_t(i) * kLogSector, kLogSector), &h, &payload);
      if (st != SectorState::kValid) sc.invalid.push_back(i);
      if (st == SectorState::kErased) continue;
      sc.used_sectors = i + 1;
      if (st == SectorState::kCorrupt) continue;
      PDL_TRY(claim(h.lbn));
      max_seq = std::max(max_seq, h.seq);
      sc.max_seq = std::max(sc.max_seq, h.seq);
      if (h.lbn == kCommitLogLbn && (h.flags & kSectorCommit)) {
        sc.commit_log = true;
        sc.max_commit = std::max(sc.max_commit, h.seq);
        committed = std::max(committed, h.seq);
      }
    }
    if (sc.commit_log) {
      for (const SlotScan& x : sc.slots)
        if (x.programmed)
          return corrupt("block " + std::to_string(b) + " mixes the commit log and data pages");
      continue;
    }
    if (!sc.any || sc.used_sectors == 0) continue;
    PDL_TRY(walk_log(log, sc.used_sectors, sc.lbn,
                     [&](const SectorHeader& h, std::span<const std::span<const uint8_t>> parts) {
                       if (!(h.flags & kSectorUnmap) && h.slot >= dpb)
                         return corrupt("log sector names data slot " + std::to_string(h.slot));
                       LogScan w;
                       w.seq = h.seq;
                       w.slot = h.slot;
                       w.flags = h.flags;
                       if (h.flags & kSectorUnmap) w.bitmap.assign(parts[0].begin(), parts[0].end());
                       if (h.flags & kSectorCommit) committed = std::max(committed, h.seq);
                       sc.writes.push_back(std::move(w));
                       return Status::ok();
                     }));
  }

  // ---- pass 2: what counts ----
  if (legacy) committed = UINT64_MAX;
  auto page_counts = [&](const SlotScan& x) {
    if (!x.page) return false;
    if (x.aux == 0) return x.seq <= committed;  // a first write
    return !x.group || x.seq <= committed;      // a merge's page
  };
  std::vector<uint64_t> key(g.blocks, 0);  // newest counting item; 0: no candidate
  std::vector<bool> has_void(g.blocks, false);
  std::vector<uint32_t> winner(lbns, kNoBlock);
  uint32_t commit_block = kNoBlock;
  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++) {
    const BlockScan& sc = scans[b];
    if (!sc.any) continue;
    if (sc.commit_log) {
      if (commit_block == kNoBlock || sc.max_commit > scans[commit_block].max_commit)
        commit_block = b;
      continue;
    }
    uint64_t merge_seq = 0, newest = 0;
    uint32_t merge_count = 0, merge_found = 0;
    bool merge_void = false;
    for (const SlotScan& x : sc.slots) {
      if (!x.page) continue;
      if (!page_counts(x)) {
        has_void[b] = true;
        rep.void_pages++;
        if (x.aux > 0) merge_void = true;
        continue;
      }
      newest = std::max(newest, x.seq);
      if (x.aux > 0) {
        if (merge_seq != 0 && (merge_seq != x.seq || merge_count != x.aux))
          return corrupt("block " + std::to_string(b) + " holds pages of two merges");
        merge_seq = x.seq;
        merge_count = x.aux;
        merge_found++;
      }
    }
    for (const LogScan& w : sc.writes) {
      if (w.seq > committed) {
        has_void[b] = true;
        rep.void_pages++;
        continue;
      }
      newest = std::max(newest, w.seq);
    }
    if (merge_void || (merge_count > 0 && merge_found != merge_count) || newest == 0) continue;
    key[b] = newest;
    uint32_t& w = winner[sc.lbn];
    if (w == kNoBlock || newest > key[w]) w = b;
  }

  for (uint32_t lbn = 0; lbn < lbns; lbn++) {
    const uint32_t b = winner[lbn];
    if (b == kNoBlock) continue;
    const BlockScan& sc = scans[b];
    LBlock& lb = s->lblocks_[lbn];
    lb.block = b;
    lb.used_sectors = sc.used_sectors;
    for (uint32_t i : sc.invalid)
      if (i < lb.used_sectors) lb.garbage.push_back(i);
    s->owner_[b] = lbn;
    if (has_void[b]) s->purge_lbns_.insert(lbn);
    if (lb.used_sectors > 0) rep.valid_diff_pages += s->used_log_pages(lb);
    // Per slot: 0 no log, 1 the log maps it (reset), 2 the log unmaps it.
    std::vector<uint8_t> log_mapped(dpb, 0);
    std::vector<bool> log_any(dpb, false);
    for (const LogScan& w : sc.writes) {  // in log order, which is sequence order
      if (w.seq > committed) continue;
      if (w.flags & kSectorUnmap) {
        for (uint32_t sl = 0; sl < dpb; sl++)
          if (unmap_has(w.bitmap, sl)) {
            log_mapped[sl] = 2;
            log_any[sl] = true;
          }
        continue;
      }
      if (w.flags & kSectorReset) log_mapped[w.slot] = 1;
      log_any[w.slot] = true;
    }
    for (uint32_t sl = 0; sl < s->lpns_in(lbn); sl++) {
      const SlotScan& x = sc.slots[sl];
      LpnState& st = s->lpns_[s->first_lpn(lbn) + sl];
      const bool data = page_counts(x) && !x.marker;
      st.slot = data ? Slot::kData : x.programmed ? Slot::kGarbage : Slot::kErased;
      st.mapped = data;
      if (log_mapped[sl] == 1) st.mapped = true;
      if (log_mapped[sl] == 2) st.mapped = false;
      st.has_log = log_any[sl];
      if (st.slot == Slot::kErased && st.has_log) st.slot = Slot::kGarbage;
    }
  }
  if (commit_block != kNoBlock) {
    s->commit_block_ = commit_block;
    s->commit_used_ = scans[commit_block].used_sectors;
    s->owner_[commit_block] = kCommitOwner;
  }
  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++) {
    if (s->owner_[b] != kNoBlock || s->bad_[b]) continue;
    s->erased_[b] = false;  // erased before use (allocate_block), as PDL's mount does
    s->free_.push_back(b);
    // Void items in a free block are erased before anything is programmed: no later commit
    // record may cover them.
    if (!legacy && scans[b].any && !scans[b].commit_log && scans[b].max_seq > committed)
      s->purge_blocks_.push_back(b);
  }
  for (const LpnState& st : s->lpns_) rep.live_lpns += st.mapped ? 1 : 0;
  s->legacy_ = legacy;
  s->next_seq_ = max_seq + 1;
  s->committed_seq_ = committed;
  s->group_start_ = s->next_seq_;  // everything newer than the last commit is void
  rep.free_blocks = s->free_.size();
  rep.next_seq = s->next_seq_;
  rep.legacy = legacy;
  rep.committed_seq = legacy ? 0 : committed;
  clock.finish(&rep);
  s->ledger_.charge(s->ledger_.other());
  if (report) *report = rep;
  *out = std::move(s);
  return Status::ok();
}

}  // namespace pdl
