// hybrid_recovery.cc — HybridStore::mount: the FTL's tables rebuilt from the spare areas after a
// crash (hybrid_store.h, docs/format.md §9). Programs and erases nothing.
//
// Pass 1 (scan_block) reads every page of every good block into the page records (data and
// spare: a torn data page is told apart
// only by its data CRC). A page whose header decodes, of type kBase with its data CRC or of type
// kFtlTrim, naming a logical page in range, is a record; anything else programmed is torn and
// only counts as used (no program goes there again before an erase). For each logical page the
// record of highest seq wins. Ties (a merge's copies keep the seq): a copy in a complete full
// merge (its block holds as many of that merge's records as each says) wins, the newest
// generation first — so a completed full merge's old blocks hold nothing current, even if their
// erases were cut; otherwise the lowest generation — the original over a partial merge's
// copies or a cut full merge's, which then reads as not begun. Then (place_blocks) each block
// holding a current record gets its role; the others are free, erased before use, their stale
// records kept in the page records until then (the checkpoint's tables describe every page:
// the replay after a power cut, hybrid_replay.cc, runs pass 2 over them). Pass 2 and the
// placement (resolve_scan) read nothing: the replay runs them on its own page records.
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
  for (uint32_t b = kSuperblockBlocks; b < s->geo_.blocks; b++) PDL_TRY(s->scan_block(b, &rep));
  s->resolve_scan(&rep);
  s->ledger_.charge(s->ledger_.other());
  clock.finish(&rep);
  if (report) *report = rep;
  *out = std::move(s);
  return Status::ok();
}

Status HybridStore::scan_block(uint32_t b, MountReport* rep) {
  if (nand_.is_bad(b)) {  // factory-marked or retired: never read
    blocks_[b].role = Role::kBad;
    return Status::ok();
  }
  const uint32_t n = uint32_t(cur_.size());
  for (uint32_t i = 0; i < ppb(); i++) {
    const Ppa p = ppa(b, i);
    SpareHeader h;
    SpareState ss = SpareState::kErased;
    bool passed;
    PDL_TRY(read_with_retries(
        nand_, p, page_buf_, spare_buf_,
        [&] {
          ss = spare_decode(spare_buf_, &h);
          if (ss == SpareState::kErased) return all_ff(page_buf_);
          if (ss != SpareState::kValid) return false;
          if (h.type == PageType::kFtlTrim) return true;
          return h.type == PageType::kBase &&
                 crc32c(page_buf_.data(), page_buf_.size()) == h.data_crc;
        },
        &passed));
    rep->pages_scanned++;
    if (passed && ss == SpareState::kErased) continue;
    blocks_[b].wp = i + 1;
    if (!passed || (h.type != PageType::kBase && h.type != PageType::kFtlTrim) ||
        h.logical_page() >= n) {
      rep->torn_pages++;
      continue;
    }
    if (h.repaired) rep->spare_repairs++;
    page_lpn_[p] = h.logical_page();
    page_seq_[p] = h.seq;
    page_aux_[p] = h.aux;
    page_trim_[p] = h.type == PageType::kFtlTrim;
  }
  return Status::ok();
}

void HybridStore::resolve_scan(MountReport* rep) {
  const uint32_t n = uint32_t(cur_.size()), nblocks = uint32_t(blocks_.size());
  const size_t pages = page_lpn_.size();
  // Per block: the seqs it spans, and the full merge it holds, if any (a block holds one full
  // merge's copies at most: it was fresh for it).
  std::vector<uint32_t> merge_m(nblocks, 0), merge_n(nblocks, 0);
  std::vector<uint64_t> min_seq(nblocks, UINT64_MAX), max_seq(nblocks, 0);
  uint64_t top = 0;
  for (Ppa p = 0; p < pages; p++) {
    if (page_lpn_[p] == kNone) continue;
    const uint32_t b = block_of(p);
    top = std::max(top, page_seq_[p]);
    min_seq[b] = std::min(min_seq[b], page_seq_[p]);
    max_seq[b] = std::max(max_seq[b], page_seq_[p]);
    if (const uint32_t m = aux_merge_records(page_aux_[p]); m > 0) {
      merge_m[b] = m;
      merge_n[b]++;
    }
  }
  for (uint32_t b = 0; b < nblocks; b++) rep->bad_blocks += blocks_[b].role == Role::kBad;
  bad_count_ = uint32_t(rep->bad_blocks);
  // The current record of each lpn (see the file comment for the ties).
  auto rank = [&](Ppa p) -> int64_t {
    const uint32_t b = block_of(p), gen = aux_generation(page_aux_[p]);
    const bool complete = aux_merge_records(page_aux_[p]) > 0 && merge_n[b] == merge_m[b];
    return complete ? int64_t(1) << 20 | gen : -int64_t(gen);
  };
  for (Ppa p = 0; p < pages; p++) {
    const Lpn lpn = page_lpn_[p];
    if (lpn == kNone) continue;
    const Ppa c = cur_[lpn];
    if (c == kNoPpa || page_seq_[p] > page_seq_[c] ||
        (page_seq_[p] == page_seq_[c] && rank(p) > rank(c)))
      cur_[lpn] = p;
  }
  for (Lpn l = 0; l < n; l++) {
    if (cur_[l] == kNoPpa) continue;
    mapped_[l] = !page_trim_[cur_[l]];
    Block& blk = blocks_[block_of(cur_[l])];
    blk.valid++;
    if (mapped_[l]) {
      blk.live++;
      rep->live_lpns++;
    }
  }
  place_blocks(min_seq, max_seq);
  next_seq_ = top + 1;
  use_clock_ = top;
  rep->free_blocks = free_.size();
  rep->next_seq = next_seq_;
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
    if (blk.valid == 0) {  // nothing current: free, erased before use (its records kept)
      blk = Block{.wp = blk.wp};
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
