// hybrid_recovery.cc — HybridStore::mount: the FTL's tables rebuilt from the spare areas after a
// crash (hybrid_store.h, docs/format.md §9). Programs and erases nothing.
//
// Pass 1 reads every page of every good block (data and spare: a torn data page is told apart
// only by its data CRC). A page whose header decodes, of type kBase with its data CRC or of type
// kFtlTrim, naming a logical page in range, is a record; anything else programmed is torn and
// only counts as used (no program goes there again before an erase). For each logical page the
// record of highest seq wins. Ties (a merge's copies keep the seq): a copy in a complete full
// merge (its block holds as many of that merge's records as each says) wins, the newest
// generation first — so a completed full merge's old blocks hold nothing current, even if their
// erases were cut; otherwise the lowest generation — the original over a partial merge's
// copies or a cut full merge's, which then reads as not begun. Then (place_blocks) each block
// holding a current record gets its role; the others are free, erased before use.
#include <algorithm>
#include <map>
#include <string>

#include "flash/common/crc32c.h"
#include "flash/ftl/hybrid_store.h"
#include "flash/store/reread.h"

namespace pdl {

Status HybridStore::mount(Nand& nand, const StoreParams& given, std::unique_ptr<PageStore>* out,
                          MountReport* report) {
  StoreParams params = given;  // (resolving again changes nothing resolved, and fills the rest)
  PDL_TRY(resolve_params(&params, nand.geometry()));
  MountClock clock(nand);
  std::unique_ptr<HybridStore> s(new HybridStore(nand, params));
  MountReport rep;
  const Geometry& g = s->geo_;
  const uint32_t n = uint32_t(s->cur_.size());
  // Pass 1: every page's record (seq, aux), and per block the full merge it holds, if any.
  const size_t pages = size_t(g.blocks) * g.pages_per_block;
  std::vector<uint64_t> seq_of(pages, 0);
  std::vector<uint32_t> aux_of(pages, 0);
  std::vector<bool> is_data(pages, false);
  std::vector<uint32_t> merge_m(g.blocks, 0), merge_n(g.blocks, 0);
  std::vector<uint64_t> min_seq(g.blocks, UINT64_MAX), max_seq(g.blocks, 0);
  std::vector<uint8_t> data(g.page_data), spare(g.page_spare);
  uint64_t top = 0;
  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++) {
    if (nand.is_bad(b)) {  // factory-marked or retired: never read
      s->blocks_[b].role = Role::kBad;
      s->bad_count_++;
      rep.bad_blocks++;
      continue;
    }
    for (uint32_t i = 0; i < g.pages_per_block; i++) {
      const Ppa p = s->ppa(b, i);
      SpareHeader h;
      SpareState ss = SpareState::kErased;
      bool passed;
      PDL_TRY(read_with_retries(
          nand, p, data, spare,
          [&] {
            ss = spare_decode(spare, &h);
            if (ss == SpareState::kErased) return all_ff(data);
            if (ss != SpareState::kValid) return false;
            if (h.type == PageType::kFtlTrim) return true;
            return h.type == PageType::kBase && crc32c(data.data(), data.size()) == h.data_crc;
          },
          &passed));
      rep.pages_scanned++;
      if (passed && ss == SpareState::kErased) continue;
      s->blocks_[b].wp = i + 1;
      if (!passed || (h.type != PageType::kBase && h.type != PageType::kFtlTrim) ||
          h.logical_page() >= n) {
        rep.torn_pages++;
        continue;
      }
      if (h.repaired) rep.spare_repairs++;
      const Lpn lpn = h.logical_page();
      s->page_lpn_[p] = lpn;
      seq_of[p] = h.seq;
      aux_of[p] = h.aux;
      is_data[p] = h.type == PageType::kBase;
      top = std::max(top, h.seq);
      min_seq[b] = std::min(min_seq[b], h.seq);
      max_seq[b] = std::max(max_seq[b], h.seq);
      if (const uint32_t m = aux_merge_records(h.aux); m > 0) {
        merge_m[b] = m;  // (a block holds one full merge's copies: it was fresh for it)
        merge_n[b]++;
      }
    }
  }
  // Pass 2: the current record of each lpn (see the file comment for the ties).
  auto rank = [&](Ppa p) -> int64_t {
    const uint32_t b = s->block_of(p), gen = aux_generation(aux_of[p]);
    const bool complete = aux_merge_records(aux_of[p]) > 0 && merge_n[b] == merge_m[b];
    return complete ? int64_t(1) << 20 | gen : -int64_t(gen);
  };
  std::vector<uint64_t> best_seq(n, 0);
  for (Ppa p = 0; p < pages; p++) {
    const Lpn lpn = s->page_lpn_[p];
    if (lpn == kNone) continue;
    const Ppa c = s->cur_[lpn];
    if (c == kNoPpa || seq_of[p] > best_seq[lpn] ||
        (seq_of[p] == best_seq[lpn] && rank(p) > rank(c))) {
      s->cur_[lpn] = p;
      best_seq[lpn] = seq_of[p];
    }
  }
  for (Lpn l = 0; l < n; l++)
    if (s->cur_[l] != kNoPpa) s->mapped_[l] = is_data[s->cur_[l]];
  for (Lpn l = 0; l < n; l++) {
    if (s->cur_[l] == kNoPpa) continue;
    s->blocks_[s->block_of(s->cur_[l])].valid++;
    if (s->mapped_[l]) {
      s->blocks_[s->block_of(s->cur_[l])].live++;
      rep.live_lpns++;
    }
  }
  s->place_blocks(min_seq, max_seq);
  s->next_seq_ = top + 1;
  s->use_clock_ = top;
  rep.free_blocks = s->free_.size();
  rep.next_seq = s->next_seq_;
  s->ledger_.charge(s->ledger_.other());
  clock.finish(&rep);
  if (report) *report = rep;
  *out = std::move(s);
  return Status::ok();
}

void HybridStore::place_blocks(const std::vector<uint64_t>& min_seq,
                               const std::vector<uint64_t>& max_seq) {
  // Per logical block: its blocks holding only its records, at their offsets ("in place"), and
  // those holding only its records elsewhere; blocks of several logical blocks are random.
  std::map<uint32_t, std::vector<uint32_t>> in_place, own;
  std::vector<uint32_t> mixed;
  for (uint32_t b = kSuperblockBlocks; b < blocks_.size(); b++) {
    Block& blk = blocks_[b];
    if (blk.role == Role::kBad) continue;
    if (blk.valid == 0) {  // nothing current: free, erased before use
      std::fill(page_lpn_.begin() + ptrdiff_t(ppa(b, 0)),
                page_lpn_.begin() + ptrdiff_t(ppa(b + 1, 0)), kNone);
      blk = Block{};
      free_.push_back(b);
      continue;
    }
    uint32_t lbn = kNone;
    bool single = true, placed = true;
    for (uint32_t i = 0; i < blk.wp; i++) {
      const uint32_t l = page_lpn_[ppa(b, i)];
      if (l == kNone) continue;
      if (lbn == kNone) lbn = lbn_of(l);
      single = single && lbn_of(l) == lbn;
      placed = placed && off_of(l) == i;
    }
    blk.last_use = max_seq[b];
    if (!single) mixed.push_back(b);
    else if (placed) in_place[lbn].push_back(b);
    else own[lbn].push_back(b);
  }
  auto by_age = [&](uint32_t a, uint32_t b) { return min_seq[a] < min_seq[b]; };
  std::vector<uint32_t> randoms = mixed;
  auto assign = [&](uint32_t b, Role role, uint32_t lbn) {
    blocks_[b].role = role;
    blocks_[b].lbn = lbn;
  };
  std::set<uint32_t> lbns;
  for (const auto& [l, v] : in_place) lbns.insert(l);
  for (const auto& [l, v] : own) lbns.insert(l);
  for (uint32_t lbn : lbns) {
    std::vector<uint32_t> ip = in_place[lbn], ow = own[lbn];
    std::sort(ip.begin(), ip.end(), by_age);
    std::sort(ow.begin(), ow.end(), by_age);
    std::vector<uint32_t> rest;
    if (!ip.empty()) {  // the oldest in-place block is the data block
      data_[lbn] = ip[0];
      assign(ip[0], Role::kData, lbn);
      rest.assign(ip.begin() + 1, ip.end());
    }
    if (fast()) {
      // A second in-place block is the sequential log block (one in the store); the others are
      // random log blocks.
      for (uint32_t b : rest) {
        if (seq_block_ == kNone) {
          seq_block_ = b;
          assign(b, Role::kLog, lbn);
        } else {
          randoms.push_back(b);
        }
      }
      randoms.insert(randoms.end(), ow.begin(), ow.end());
      continue;
    }
    rest.insert(rest.end(), ow.begin(), ow.end());
    if (rest.empty()) continue;
    log_[lbn] = rest[0];
    assign(rest[0], Role::kLog, lbn);
    bast_logs_.push_back(rest[0]);
    for (size_t i = 1; i < rest.size(); i++) {  // more than BAST allows: merged at first change
      assign(rest[i], Role::kExtra, lbn);
      extras_[lbn].push_back(rest[i]);
      unsettled_.insert(lbn);
    }
  }
  std::sort(randoms.begin(), randoms.end(), by_age);
  for (uint32_t b : randoms) {
    assign(b, Role::kRandom, kNone);
    random_.push_back(b);
  }
}

}  // namespace pdl
