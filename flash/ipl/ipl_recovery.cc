// ipl_recovery.cc — IplStore::mount: rebuild the mapping from the chip after a crash.
//
// One read of every page of every data block (data and spare; a torn data page is told apart
// only by its data CRC, and a log page's sectors carry their own headers). Per block:
//   * its logical block, from any valid data page, marker or log sector (two names: kCorrupt);
//   * its newest sequence number, and whether its merge is complete: a merged block's data pages
//     all carry the merge's sequence number and page count, and the merge counts only if that
//     many are valid. A block without merge pages (first writes only) is complete.
// Per logical block the complete block with the newest sequence number wins — a merge's pages
// are newer than everything in the block it replaced, and the old block is erased only after the
// merge completed. Every other block is free and is erased before reuse.
// The winner's slots and log are rebuilt: valid data page → kData; erased → kErased; anything
// else → kGarbage; complete log writes replayed for mapped / has_log. Recovery writes nothing.
#include <algorithm>
#include <chrono>
#include <string>

#include "flash/common/crc32c.h"
#include "flash/ipl/ipl_store.h"
#include "flash/store/reread.h"

namespace pdl {
namespace {

struct BlockScan {
  bool any_valid = false;   // holds at least one valid page or sector
  uint32_t lbn = 0;
  uint64_t max_seq = 0;
  uint64_t merge_seq = 0;   // sequence number of its merge pages (0: none)
  uint32_t merge_count = 0, merge_found = 0;
  uint32_t used_sectors = 0;
  std::vector<uint32_t> invalid;  // sectors not valid, below the last used one
};

}  // namespace

Status IplStore::mount(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out,
                       MountReport* report) {
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t sim0 = nand.counters().sim_us;
  std::unique_ptr<IplStore> s(new IplStore(nand, params));
  const Geometry& g = s->geo_;
  const uint32_t ppb = g.pages_per_block, dpb = s->dpb_;
  const uint32_t lbns = uint32_t(s->lblocks_.size());
  MountReport rep;
  std::vector<uint8_t> block_buf(size_t(ppb) * g.page_data), spare(g.page_spare);
  // Per block: slot states of its data pages, and per slot what its log says.
  std::vector<Slot> slots(size_t(g.blocks) * dpb, Slot::kErased);
  std::vector<uint8_t> log_mapped(size_t(g.blocks) * dpb, 0);  // 0 none, 1 mapped, 2 unmapped
  std::vector<bool> log_any(size_t(g.blocks) * dpb, false);
  std::vector<BlockScan> scans(g.blocks);
  std::vector<uint32_t> winner(lbns, kNoBlock);
  uint64_t max_seq = 0;
  auto corrupt = [](const std::string& m) { return Status::error(Errc::kCorrupt, m); };

  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++) {
    if (nand.is_bad(b)) {  // factory-marked or retired: never read (a retired block's pages
      s->bad_[b] = true;   // must not come back)
      s->bad_count_++;
      rep.bad_blocks++;
      continue;
    }
    BlockScan& sc = scans[b];
    bool have_lbn = false;
    auto claim = [&](uint32_t lbn) {
      if (have_lbn && lbn != sc.lbn)
        return corrupt("block " + std::to_string(b) + " holds pages of logical blocks " +
                       std::to_string(sc.lbn) + " and " + std::to_string(lbn));
      if (lbn >= lbns)
        return corrupt("block " + std::to_string(b) + " names logical block " +
                       std::to_string(lbn) + " beyond the store's " + std::to_string(lbns));
      have_lbn = true;
      sc.lbn = lbn;
      sc.any_valid = true;
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
      const bool data_ff = all_ff(data);
      if (ss == SpareState::kErased && data_ff) continue;
      if (p >= dpb) continue;  // log page: its sectors are parsed below
      Slot& slot = slots[size_t(b) * dpb + p];
      slot = Slot::kGarbage;
      if (ss != SpareState::kValid ||
          (h.type != PageType::kIplData && h.type != PageType::kIplEmpty) ||
          crc32c(data.data(), data.size()) != h.data_crc) {
        rep.torn_pages++;
        continue;
      }
      max_seq = std::max(max_seq, h.seq);
      sc.max_seq = std::max(sc.max_seq, h.seq);
      uint32_t merge_count = h.aux;
      if (h.type == PageType::kIplEmpty) {
        PDL_TRY(claim(h.lpn));
        merge_count = 1;  // a marker is a merge of itself
      } else {
        if (h.lpn >= s->lpns_.size() || h.lpn % dpb != p)
          return corrupt("data page " + std::to_string(b * ppb + p) + " names logical page " +
                         std::to_string(h.lpn) + ", which does not live there");
        PDL_TRY(claim(h.lpn / dpb));
        slot = Slot::kData;
      }
      if (merge_count > 0) {
        if (sc.merge_seq != 0 && (sc.merge_seq != h.seq || sc.merge_count != merge_count))
          return corrupt("block " + std::to_string(b) + " holds pages of two merges");
        sc.merge_seq = h.seq;
        sc.merge_count = merge_count;
        sc.merge_found++;
      }
    }
    // Log region: used sectors, their claims, then the complete writes' effect per slot.
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
    }
    if (!sc.any_valid || sc.used_sectors == 0) continue;
    const size_t base = size_t(b) * dpb;
    PDL_TRY(walk_log(log, sc.used_sectors, sc.lbn,
                     [&](const SectorHeader& h, std::span<const std::span<const uint8_t>> parts) {
                       if (h.flags & kSectorUnmap) {
                         for (uint32_t sl = 0; sl < dpb; sl++)
                           if (unmap_has(parts[0], sl)) {
                             log_mapped[base + sl] = 2;
                             log_any[base + sl] = true;
                           }
                         return Status::ok();
                       }
                       if (h.slot >= dpb)
                         return corrupt("log sector names data slot " + std::to_string(h.slot));
                       if (h.flags & kSectorReset) log_mapped[base + h.slot] = 1;
                       log_any[base + h.slot] = true;
                       return Status::ok();
                     }));
  }

  // Winners: the newest complete block of each logical block.
  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++) {
    const BlockScan& sc = scans[b];
    if (!sc.any_valid || (sc.merge_count > 0 && sc.merge_found != sc.merge_count)) continue;
    uint32_t& w = winner[sc.lbn];
    if (w == kNoBlock || sc.max_seq > scans[w].max_seq) w = b;
  }
  for (uint32_t lbn = 0; lbn < lbns; lbn++) {
    const uint32_t b = winner[lbn];
    if (b == kNoBlock) continue;
    LBlock& lb = s->lblocks_[lbn];
    lb.block = b;
    lb.used_sectors = scans[b].used_sectors;
    for (uint32_t i : scans[b].invalid)
      if (i < lb.used_sectors) lb.garbage.push_back(i);
    s->owner_[b] = lbn;
    if (lb.used_sectors > 0) rep.valid_diff_pages += s->used_log_pages(lb);
    for (uint32_t sl = 0; sl < s->lpns_in(lbn); sl++) {
      const size_t i = size_t(b) * dpb + sl;
      LpnState& st = s->lpns_[s->first_lpn(lbn) + sl];
      st.slot = slots[i];
      st.mapped = slots[i] == Slot::kData;
      // The log's last reset or unmap decides (the walk visits writes in sequence order).
      if (log_mapped[i] == 1) st.mapped = true;
      if (log_mapped[i] == 2) st.mapped = false;
      st.has_log = log_any[i];
      if (st.slot == Slot::kErased && st.has_log) st.slot = Slot::kGarbage;
    }
  }
  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++) {
    if (s->owner_[b] != kNoBlock || s->bad_[b]) continue;
    s->erased_[b] = false;  // erased before use (allocate_block), as PDL's mount does
    s->free_.push_back(b);
  }
  for (const LpnState& st : s->lpns_) rep.live_lpns += st.mapped ? 1 : 0;
  s->next_seq_ = max_seq + 1;
  rep.free_blocks = s->free_.size();
  rep.next_seq = s->next_seq_;
  rep.sim_us = nand.counters().sim_us - sim0;
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s->ledger_.charge(s->ledger_.other());
  if (report) *report = rep;
  *out = std::move(s);
  return Status::ok();
}

}  // namespace pdl
