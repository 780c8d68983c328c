// hybrid_tables.cc — HybridStore's checkpointed tables (docs/format.md §13.3): save_tables,
// table_bytes and mount_tables, the inverse of save_tables that rebuilds the store without the
// scan of hybrid_recovery.cc.
//
// What is saved is what a scan rebuilds plus what it cannot: every block's role, logical block,
// write pointer, LRU clock (BAST) and erased / retiring / scrubbing flags; every programmed
// page's record as the scan reads it — lpn, seq, aux, data or trim (stale records too: a
// merge's sequential test reads their lpns, and the replay after a power cut runs the scan's
// second pass over them, hybrid_replay.cc) — and whether it is its lpn's current record:
// cur_ and mapped_ follow from those states, so the per-lpn map costs no bytes of its own; the
// free queue, FAST's random log blocks and BAST's log blocks in their order; the blocks a scan
// mount could not place (extras) per logical block; the sequence counter and the LRU clock.
// Derived, not saved: the data / log maps, FAST's sequential log block, per-block record
// counts, the bad-block count, the unsettled set.
// Invariants kept by every change and relied on here (verified when saving): a page at or past
// its block's write pointer holds no record; a record's seq is below the sequence counter;
// only free, erased blocks are marked erased; only a block holding data (data, log, random,
// extra) has a logical block, an LRU clock, current records, or is retiring or scrubbing; a
// free block not erased may have pages (the stale records a scan mount found there).
// Format 2 (tag HYB2); format 1 (HYBR, without the pages' seq and aux) is refused: the mount
// scans, and the next checkpoint writes format 2.
// Nothing on flash is read: the tables are the whole state (the engine keeps nothing in NVM).
#include <algorithm>
#include <cstring>
#include <string>

#include "flash/ftl/hybrid_store.h"

namespace pdl {

namespace {

// A block's flags byte (docs/format.md §13.3).
constexpr uint8_t kFlagErased = 1, kFlagRetiring = 2, kFlagScrubbing = 4;
// A page's 2-bit state: not current (a data record, or none), its lpn's current data or trim
// record, a trim record not current.
constexpr uint8_t kPageStale = 0, kPageData = 1, kPageTrim = 2, kPageStaleTrim = 3;
constexpr uint8_t kRoles = 7;  // Role values 0..6
// Memory an ordered-set entry takes (red-black node: 3 pointers and a colour, the value).
constexpr uint64_t kTreeNode = 40;

}  // namespace

// Why block `b`'s entry (role, flags, logical block, write pointer, clock) cannot be, or "":
// the rules both save_tables and mount_tables apply (docs/format.md §13.3).
std::string HybridStore::block_entry_error(uint32_t b, uint8_t role, uint8_t flags, uint32_t lbn,
                                           uint32_t wp, uint64_t last_use) const {
  const std::string r = "role " + std::to_string(role);
  if (role >= kRoles) return "role " + std::to_string(role) + " unknown";
  const Role ro = Role(role);
  const bool holds = holds_data(ro);
  if ((b < kSuperblockBlocks) != (ro == Role::kReserved))
    return r + " (the superblock blocks, and only they, are reserved)";
  if ((flags & ~(kFlagErased | kFlagRetiring | kFlagScrubbing)) != 0 ||
      ((flags & kFlagErased) && ro != Role::kFree) ||
      ((flags & (kFlagRetiring | kFlagScrubbing)) && !holds))
    return "flags " + std::to_string(flags) + " do not fit " + r;
  const bool has_lbn = holds && ro != Role::kRandom;
  if (has_lbn ? lbn >= data_.size() : lbn != kNone)
    return "logical block " + std::to_string(lbn) + " does not fit " + r;
  const bool may_have_pages = holds || (ro == Role::kFree && !(flags & kFlagErased));
  if ((!may_have_pages && wp != 0) || (!holds && last_use != 0))
    return r + " holds no data but has pages or a clock";
  if (wp > ppb()) return "write pointer " + std::to_string(wp) + " past the block";
  return "";
}

Status HybridStore::save_tables(TableWriter& w) const {
  if (!poisoned_.is_ok()) return poisoned_;
  if (!halted_.is_ok()) return halted_;
  auto broken = [](const std::string& m) {
    return Status::error(Errc::kCorrupt, "hybrid tables: " + m);
  };
  const uint32_t nblocks = uint32_t(blocks_.size());
  w.tag("HYB2");
  w.u8(uint8_t(params_.ftl));
  w.u32(nblocks);
  w.u32(ppb());
  w.u32(uint32_t(cur_.size()));
  w.u32(params_.log_blocks);
  w.u64(next_seq_);
  w.u64(use_clock_);
  w.tag("HBLK");
  uint64_t current = 0;
  for (uint32_t b = 0; b < nblocks; b++) {
    const Block& blk = blocks_[b];
    const uint8_t flags = uint8_t((erased_[b] ? kFlagErased : 0) |
                                  (retiring_[b] ? kFlagRetiring : 0) |
                                  (scrubbing_.count(b) ? kFlagScrubbing : 0));
    for (uint32_t i = blk.wp; i < ppb(); i++)
      if (page_lpn_[ppa(b, i)] != kNone)
        return broken("block " + std::to_string(b) + " page " + std::to_string(i) +
                      " holds a record past the block's write pointer");
    const std::string e =
        block_entry_error(b, uint8_t(blk.role), flags, blk.lbn, blk.wp, blk.last_use);
    if (!e.empty()) return broken("block " + std::to_string(b) + ": " + e);
    w.u8(uint8_t(blk.role));
    w.u8(flags);
    w.u32(blk.lbn);
    w.u32(blk.wp);
    w.u64(blk.last_use);
    std::vector<uint8_t> states((blk.wp + 3) / 4, 0);
    for (uint32_t i = 0; i < blk.wp; i++) {
      const Ppa p = ppa(b, i);
      const uint32_t l = page_lpn_[p];
      if (l != kNone && (page_seq_[p] == 0 || page_seq_[p] >= next_seq_))
        return broken("block " + std::to_string(b) + " page " + std::to_string(i) + ": seq " +
                      std::to_string(page_seq_[p]) + " (next " + std::to_string(next_seq_) + ")");
      w.u32(l);
      w.u64(page_seq_[p]);
      w.u32(page_aux_[p]);
      uint8_t st = l != kNone && page_trim_[p] ? kPageStaleTrim : kPageStale;
      if (l != kNone && l < cur_.size() && cur_[l] == p) {
        if (mapped_[l] == page_trim_[p])
          return broken("logical page " + std::to_string(l) + ": mapped " +
                        std::to_string(mapped_[l]) + " at a " +
                        (page_trim_[p] ? "trim" : "data") + " record");
        st = mapped_[l] ? kPageData : kPageTrim;
        current++;
      }
      states[i / 4] |= uint8_t(st << (2 * (i % 4)));
    }
    w.bytes(states);
  }
  const uint64_t recorded = uint64_t(std::count_if(cur_.begin(), cur_.end(),
                                                   [](Ppa p) { return p != kNoPpa; }));
  if (current != recorded)
    return broken(std::to_string(recorded) + " logical pages have a current record, " +
                  std::to_string(current) + " pages hold one");
  w.tag("HLST");
  w.u32(uint32_t(free_.size()));
  for (uint32_t b : free_) w.u32(b);
  w.u32(uint32_t(random_.size()));
  for (uint32_t b : random_) w.u32(b);
  w.u32(uint32_t(bast_logs_.size()));
  for (uint32_t b : bast_logs_) w.u32(b);
  uint32_t with_extras = 0;
  for (const auto& e : extras_) with_extras += !e.empty();
  w.u32(with_extras);
  for (uint32_t lbn = 0; lbn < extras_.size(); lbn++) {
    if (extras_[lbn].empty()) continue;
    w.u32(lbn);
    w.u32(uint32_t(extras_[lbn].size()));
    for (uint32_t b : extras_[lbn]) w.u32(b);
  }
  return Status::ok();
}

uint64_t HybridStore::table_bytes() const {
  uint64_t n = 4 * uint64_t(cur_.capacity()) + mapped_.capacity() / 8 +
               4 * uint64_t(page_lpn_.capacity()) + 8 * uint64_t(page_seq_.capacity()) +
               4 * uint64_t(page_aux_.capacity()) + page_trim_.capacity() / 8 +
               sizeof(Block) * uint64_t(blocks_.capacity()) +
               4 * uint64_t(data_.capacity() + log_.capacity()) +
               sizeof(std::vector<uint32_t>) * uint64_t(extras_.capacity()) +
               kTreeNode * (unsettled_.size() + scrubbing_.size()) +
               4 * uint64_t(bast_logs_.capacity() + random_.size() + free_.size()) +
               (erased_.capacity() + retiring_.capacity()) / 8 + page_buf_.capacity() +
               spare_buf_.capacity();
  for (const auto& e : extras_) n += 4 * uint64_t(e.capacity());
  return n;
}

Status HybridStore::mount_tables(Nand& nand, const StoreParams& given, CommitMode mode,
                                 TableReader& r, std::unique_ptr<PageStore>* out) {
  (void)mode;  // a block device: no atomic groups
  StoreParams params = given;  // (resolving again changes nothing resolved, and fills the rest)
  PDL_TRY(resolve_params(&params, nand.geometry()));
  std::unique_ptr<HybridStore> s(new HybridStore(nand, params));
  const uint32_t nblocks = uint32_t(s->blocks_.size()), P = s->ppb();
  const uint32_t nlpns = uint32_t(s->cur_.size()), nlbns = uint32_t(s->data_.size());
  auto done = [&]() { return r.status().is_ok(); };

  if (const auto t = r.bytes(4); t.size() == 4 && std::memcmp(t.data(), "HYBR", 4) == 0)
    r.fail("checkpoint: hybrid tables of format 1 (without the pages' sequence numbers, which "
           "a replay needs): the mount scans");
  else if (t.size() == 4 && std::memcmp(t.data(), "HYB2", 4) != 0)
    r.fail("checkpoint: expected section 'HYB2', found another");
  const uint8_t ftl = r.u8();
  const uint32_t blocks = r.u32(), ppb = r.u32(), lpns = r.u32(), logs = r.u32();
  if (done() && (ftl != uint8_t(params.ftl) || blocks != nblocks || ppb != P || lpns != nlpns ||
                 logs != params.log_blocks))
    r.fail("checkpoint: hybrid header (ftl " + std::to_string(ftl) + ", " +
           std::to_string(blocks) + " blocks of " + std::to_string(ppb) + " pages, " +
           std::to_string(lpns) + " logical pages, " + std::to_string(logs) +
           " log blocks) is not this store's");
  s->next_seq_ = r.u64();
  s->use_clock_ = r.u64();
  if (done() && s->next_seq_ == 0) r.fail("checkpoint: hybrid sequence counter 0");

  r.tag("HBLK");
  std::vector<uint32_t> role_count(kRoles, 0);
  for (uint32_t b = 0; b < nblocks && done(); b++) {
    Block& blk = s->blocks_[b];
    const uint8_t role = r.u8(), flags = r.u8();
    blk.lbn = r.u32();
    blk.wp = r.u32();
    blk.last_use = r.u64();
    if (!done()) break;
    const std::string where = "checkpoint: hybrid block " + std::to_string(b);
    const std::string e = s->block_entry_error(b, role, flags, blk.lbn, blk.wp, blk.last_use);
    if (!e.empty()) {
      r.fail(where + ": " + e);
      break;
    }
    blk.role = Role(role);
    s->erased_[b] = flags & kFlagErased;
    s->retiring_[b] = flags & kFlagRetiring;
    if (flags & kFlagScrubbing) s->scrubbing_.insert(b);
    role_count[role]++;
    switch (blk.role) {
      case Role::kData:
        if (s->data_[blk.lbn] != kNone) r.fail(where + ": a second data block of its logical block");
        s->data_[blk.lbn] = b;
        break;
      case Role::kLog:
        if (s->fast() ? s->seq_block_ != kNone : s->log_[blk.lbn] != kNone)
          r.fail(where + ": a second log block");
        if (s->fast()) s->seq_block_ = b;
        else s->log_[blk.lbn] = b;
        break;
      case Role::kBad: s->bad_count_++; break;
      default: break;
    }
    // The pages' records, then their states.
    if (!r.check_count(blk.wp, 16, "hybrid page")) break;
    for (uint32_t i = 0; i < blk.wp; i++) {
      const Ppa p = s->ppa(b, i);
      const uint32_t l = r.u32();
      const uint64_t seq = r.u64();
      const uint32_t aux = r.u32();
      if (l != kNone && !r.check(l, nlpns, "hybrid page's logical page")) break;
      if (!done()) break;
      if (l == kNone ? seq != 0 || aux != 0
                     : seq == 0 || seq >= s->next_seq_ || aux_merge_records(aux) > P) {
        r.fail(where + " page " + std::to_string(i) + ": record (seq " + std::to_string(seq) +
               ", aux " + std::to_string(aux) + ") out of range");
        break;
      }
      s->page_lpn_[p] = l;
      s->page_seq_[p] = seq;
      s->page_aux_[p] = aux;
    }
    const auto states = r.bytes((blk.wp + 3) / 4);
    for (uint32_t i = 0; i < blk.wp && done(); i++) {
      const Ppa p = s->ppa(b, i);
      const uint8_t st = (states[i / 4] >> (2 * (i % 4))) & 3;
      const uint32_t l = s->page_lpn_[p];
      s->page_trim_[p] = st == kPageTrim || st == kPageStaleTrim;
      if (l == kNone && st != kPageStale) {
        r.fail(where + " page " + std::to_string(i) + ": state " + std::to_string(st) +
               ", but holds no record");
      } else if (st != kPageData && st != kPageTrim) {
        continue;
      } else if (!holds_data(blk.role)) {
        r.fail(where + " page " + std::to_string(i) + ": current in a block holding no data");
      } else if (s->cur_[l] != kNoPpa) {
        r.fail("checkpoint: hybrid logical page " + std::to_string(l) + " has two current records");
      } else {
        s->set_current(l, p, st == kPageData);
      }
    }
    if (done() && blk.wp % 4 != 0 && (states.back() >> (2 * (blk.wp % 4))) != 0)
      r.fail(where + ": page state padding not zero");
  }

  r.tag("HLST");
  // A list of blocks of `role`: each once, every block of that role in it.
  std::vector<bool> listed(nblocks, false);
  auto read_list = [&](Role role, const char* what, auto&& add) {
    const uint32_t n = r.u32();
    if (!done()) return;
    if (n != role_count[uint8_t(role)]) {
      r.fail(std::string("checkpoint: hybrid ") + what + " holds " + std::to_string(n) +
             " blocks, " + std::to_string(role_count[uint8_t(role)]) + " have that role");
      return;
    }
    if (!r.check_count(n, 4, what)) return;
    for (uint32_t i = 0; i < n; i++) {
      const uint32_t b = r.u32();
      if (!r.check(b, nblocks, what)) return;
      if (s->blocks_[b].role != role || listed[b]) {
        r.fail(std::string("checkpoint: hybrid ") + what + " lists block " + std::to_string(b) +
               " (another role, or twice)");
        return;
      }
      listed[b] = true;
      add(b);
    }
  };
  read_list(Role::kFree, "free queue", [&](uint32_t b) { s->free_.push_back(b); });
  read_list(Role::kRandom, "random log blocks", [&](uint32_t b) { s->random_.push_back(b); });
  const uint32_t bast_logs = s->fast() ? 0 : role_count[uint8_t(Role::kLog)];
  {
    const uint32_t n = r.u32();
    if (done() && n != bast_logs)
      r.fail("checkpoint: hybrid log block list holds " + std::to_string(n) + " blocks, " +
             std::to_string(bast_logs) + " expected");
    if (done() && r.check_count(n, 4, "hybrid log block list"))
      for (uint32_t i = 0; i < n && done(); i++) {
        const uint32_t b = r.u32();
        if (!r.check(b, nblocks, "hybrid log block")) break;
        if (s->blocks_[b].role != Role::kLog || listed[b])
          r.fail("checkpoint: hybrid log block list names block " + std::to_string(b) +
                 " (not a log block, or twice)");
        listed[b] = true;
        s->bast_logs_.push_back(b);
      }
  }
  {
    const uint32_t n = r.u32();
    uint32_t extras = 0, last = 0;
    if (done() && r.check_count(n, 12, "hybrid extras"))
      for (uint32_t k = 0; k < n && done(); k++) {
        const uint32_t lbn = r.u32(), m = r.u32();
        if (!r.check(lbn, nlbns, "hybrid extras' logical block")) break;
        if ((k > 0 && lbn <= last) || m == 0 || !r.check_count(m, 4, "hybrid extra blocks")) {
          r.fail("checkpoint: hybrid extras of logical block " + std::to_string(lbn) +
                 " out of order or empty");
          break;
        }
        last = lbn;
        for (uint32_t i = 0; i < m && done(); i++) {
          const uint32_t b = r.u32();
          if (!r.check(b, nblocks, "hybrid extra block")) break;
          if (s->blocks_[b].role != Role::kExtra || s->blocks_[b].lbn != lbn || listed[b])
            r.fail("checkpoint: hybrid extras of logical block " + std::to_string(lbn) +
                   " name block " + std::to_string(b) + " (not its extra block, or twice)");
          listed[b] = true;
          s->extras_[lbn].push_back(b);
          extras++;
        }
        s->unsettled_.insert(lbn);
      }
    if (done() && extras != role_count[uint8_t(Role::kExtra)])
      r.fail("checkpoint: hybrid extras list " + std::to_string(extras) + " blocks, " +
             std::to_string(role_count[uint8_t(Role::kExtra)]) + " have that role");
  }
  PDL_TRY(r.finish());
  *out = std::move(s);
  return Status::ok();
}

}  // namespace pdl
