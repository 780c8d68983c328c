// block_tables.cc — BlockManager's tables in a checkpoint (section PBLK; docs/format.md §13.1):
// what a scan mount would rebuild of the erase blocks, and what it could not (the free queue's
// order, the closed lists' order and close clocks, the erased and scrubbing flags, the
// wear-levelling check), so that a store mounted from a checkpoint picks the same victims and
// opens the same blocks as the one that saved it.
//
// Invariants the loader enforces (kCorrupt naming the table otherwise): every block from
// first_block on is free, open, closed or bad; the free queue lists every free block once, the
// closed order every closed block once; each open block is one of the two heads and each head
// an open block, with 1 .. ppb-1 pages written and no more valid pages than written; valid
// counts <= ppb; erased only on free blocks, retiring and scrubbing only on open or closed
// ones; close stamps not above the clock.
#include <algorithm>
#include <string>

#include "flash/pdl/block_manager.h"

namespace pdl {

namespace {

// Per-block byte: the state (low 3 bits) and its flags.
constexpr uint8_t kTFree = 0, kTOpen = 1, kTClosed = 2, kTBad = 3;
constexpr uint8_t kTErased = 0x10, kTRetiring = 0x20, kTScrubbing = 0x40;
constexpr uint32_t kNoBlock = 0xFFFFFFFFu;

}  // namespace

Status BlockManager::save_tables(TableWriter& w) const {
  w.tag("PBLK");
  const uint32_t blocks = uint32_t(state_.size());
  w.u32(blocks);
  w.u32(ppb_);
  w.u32(first_);
  for (uint32_t b = first_; b < blocks; b++) {
    uint8_t t;
    switch (state_[b]) {
      case kFree: t = kTFree; break;
      case kOpen: t = kTOpen; break;
      case kClosed: t = kTClosed; break;
      case kBad: t = kTBad; break;
      default:
        return Status::error(Errc::kInvalidArgument,
                             "checkpoint: block " + std::to_string(b) +
                                 " is being collected: the tables are mid-collection");
    }
    if (erased_[b]) t |= kTErased;
    if (retiring_[b]) t |= kTRetiring;
    if (scrubbing_[b]) t |= kTScrubbing;
    w.u8(t);
    if ((t & 7) == kTOpen || (t & 7) == kTClosed) w.u16(valid_[b]);
    if ((t & 7) == kTOpen) w.u16(written_[b]);
    if ((t & 7) == kTClosed) w.u64(closed_at_[b]);
  }
  w.u64(close_clock_);
  w.u32(uint32_t(free_.size()));
  for (uint32_t b : free_) w.u32(b);
  for (int64_t h : head_) w.u32(h < 0 ? kNoBlock : uint32_t(h));
  // The closed lists, bucket by bucket (valid count 0 .. ppb), each from its head.
  std::vector<uint32_t> closed;
  for (uint32_t v = 0; v <= ppb_; v++)
    for (int32_t b = bucket_[v]; b >= 0; b = next_[b]) closed.push_back(uint32_t(b));
  w.u32(uint32_t(closed.size()));
  for (uint32_t b : closed) w.u32(b);
  w.u8(wl_checked_ == erase_epoch_ ? 1 : 0);
  return Status::ok();
}

Status BlockManager::load_tables(TableReader& r) {
  r.tag("PBLK");
  const uint32_t blocks = uint32_t(state_.size());
  const uint32_t nb = r.u32(), ppb = r.u32(), first = r.u32();
  if (r.status().is_ok() && (nb != blocks || ppb != ppb_ || first != first_))
    r.fail("checkpoint: block tables of another geometry (" + std::to_string(nb) + " blocks of " +
           std::to_string(ppb) + " pages from " + std::to_string(first) + ")");
  uint32_t n_free = 0, n_open = 0, n_closed = 0;
  for (uint32_t b = first_; b < blocks && r.status().is_ok(); b++) {
    const uint8_t t = r.u8();
    const uint8_t st = t & 7;
    if (!r.check(st, kTBad + 1, "block state") || !r.check(t & ~0x77u, 1, "block flags"))
      break;
    if ((t & kTErased) && st != kTFree) r.fail("checkpoint: block tables: erased flag on a used block");
    if ((t & (kTRetiring | kTScrubbing)) && st != kTOpen && st != kTClosed)
      r.fail("checkpoint: block tables: retiring or scrubbing flag on a free or bad block");
    erased_[b] = (t & kTErased) != 0;
    retiring_[b] = (t & kTRetiring) != 0;
    scrubbing_[b] = (t & kTScrubbing) != 0;
    retiring_n_ += retiring_[b];
    scrubbing_n_ += scrubbing_[b];
    valid_[b] = 0;
    written_[b] = 0;
    if (st == kTOpen || st == kTClosed) {
      const uint16_t v = r.u16();
      if (!r.check(v, ppb_ + 1, "block valid count")) break;
      valid_[b] = v;
    }
    switch (st) {
      case kTFree:
        state_[b] = kFree;
        n_free++;
        break;
      case kTOpen: {
        const uint16_t wr = r.u16();
        if (!r.check(wr, ppb_, "open block's written pages")) break;
        if (wr == 0 || valid_[b] > wr) r.fail("checkpoint: block tables: open block " +
                                              std::to_string(b) + " written count");
        written_[b] = wr;
        state_[b] = kOpen;
        n_open++;
        break;
      }
      case kTClosed:
        written_[b] = uint16_t(ppb_);
        closed_at_[b] = r.u64();
        state_[b] = kClosed;
        n_closed++;
        break;
      default:
        state_[b] = kBad;
        bad_++;
    }
  }
  close_clock_ = r.u64();
  for (uint32_t b = first_; b < blocks && r.status().is_ok(); b++)
    if (state_[b] == kClosed && closed_at_[b] > close_clock_)
      r.fail("checkpoint: block tables: block " + std::to_string(b) + " closed after the clock");
  // The free queue, in order.
  const uint32_t nf = r.u32();
  if (r.status().is_ok() && nf != n_free)
    r.fail("checkpoint: free queue of " + std::to_string(nf) + " blocks, " +
           std::to_string(n_free) + " blocks free");
  std::vector<uint8_t> seen(blocks, 0);
  for (uint32_t i = 0; i < nf && r.status().is_ok(); i++) {
    const uint32_t b = r.u32();
    if (!r.check(b, blocks, "free queue block")) break;
    if (state_[b] != kFree || seen[b]) r.fail("checkpoint: free queue: block " +
                                              std::to_string(b) + " not free, or listed twice");
    seen[b] = 1;
    free_.push_back(b);
  }
  // The heads.
  uint32_t heads = 0;
  for (int64_t& h : head_) {
    const uint32_t b = r.u32();
    if (!r.status().is_ok() || b == kNoBlock) continue;
    if (!r.check(b, blocks, "write head block")) break;
    if (state_[b] != kOpen || (&h == &head_[1] && head_[0] == int64_t(b)))
      r.fail("checkpoint: write head on block " + std::to_string(b) + ", not an open block");
    h = b;
    heads++;
  }
  if (r.status().is_ok() && heads != n_open)
    r.fail("checkpoint: " + std::to_string(n_open) + " open blocks, " + std::to_string(heads) +
           " write heads");
  // The closed lists: linked from the last one back, so each bucket keeps the saved order.
  const uint32_t nc = r.u32();
  if (r.status().is_ok() && nc != n_closed)
    r.fail("checkpoint: closed list of " + std::to_string(nc) + " blocks, " +
           std::to_string(n_closed) + " blocks closed");
  std::vector<uint32_t> closed;
  std::fill(seen.begin(), seen.end(), 0);
  for (uint32_t i = 0; i < nc && r.status().is_ok(); i++) {
    const uint32_t b = r.u32();
    if (!r.check(b, blocks, "closed list block")) break;
    if (state_[b] != kClosed || seen[b]) r.fail("checkpoint: closed list: block " +
                                                std::to_string(b) + " not closed, or listed twice");
    seen[b] = 1;
    closed.push_back(b);
  }
  const uint8_t wl = r.u8();
  if (!r.check(wl, 2, "wear-levelling flag")) return r.status();
  for (size_t i = closed.size(); i-- > 0;) link(closed[i]);
  erase_epoch_ = 0;
  wl_checked_ = wl ? 0 : ~uint64_t{0};
  return Status::ok();
}

uint64_t BlockManager::table_bytes() const {
  return state_.capacity() * sizeof(State) + valid_.capacity() * sizeof(uint16_t) +
         written_.capacity() * sizeof(uint16_t) + closed_at_.capacity() * sizeof(uint64_t) +
         erased_.capacity() + retiring_.capacity() + scrubbing_.capacity() +
         (prev_.capacity() + next_.capacity() + bucket_.capacity()) * sizeof(int32_t) +
         free_.size() * sizeof(uint32_t);
}

}  // namespace pdl
