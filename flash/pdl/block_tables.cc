// block_tables.cc — BlockManager's tables in a checkpoint (section PBLK, version 2;
// docs/format.md §13.1): what a scan mount would rebuild of the erase blocks, and what it could
// not (the free queue's order, the closed lists' order and close stamps, the erased and
// scrubbing flags, the wear-levelling check), so that a store mounted from a checkpoint picks
// the same victims and opens the same blocks as the one that saved it.
//
// Compact, because the mount reads it whole (it is the part of the checkpoint's root that grows
// with the chip): a bit-packed body (bit_stream.h) of runs — the blocks' states and flags as
// runs of equal ones, each list of blocks as runs of consecutive numbers (a freshly formatted
// chip's free queue is one run), valid counts of closed blocks implied by the bucket they are
// listed in, close stamps as gamma-coded gaps in close order. An empty 64 GiB chip takes a few
// bytes; a block listed alone costs its number's bits plus one.
//
// Invariants the loader enforces (kCorrupt naming the table otherwise): the section's version is
// this one's (an older checkpoint is refused: the mount scans); every block from first_block on
// is free, open, closed or bad; the free queue lists every free block once, the bucket lists
// and the close order every closed block once; each open block is one of the two heads and each
// head an open block, with 1 .. ppb-1 pages written and no more valid pages than written; erased
// only on free blocks, retiring and scrubbing only on open or closed ones; close stamps strictly
// increasing in close order and not above the clock; nothing but zero padding after the body.
#include <algorithm>
#include <string>

#include "flash/common/bit_stream.h"
#include "flash/pdl/block_manager.h"

namespace pdl {

namespace {

constexpr uint32_t kPblkVersion = 2;
// The u32 after the tag: bit 31 and the version. Version 1 had B there (< 2^31: block links
// are int32_t), so an old section reads as version 1.
constexpr uint32_t kVersioned = 0x80000000u;

// A run symbol: the state in bits 0-1, then the flags.
constexpr uint32_t kTFree = 0, kTOpen = 1, kTClosed = 2, kTBad = 3;
constexpr uint32_t kTErased = 4, kTRetiring = 8, kTScrubbing = 16;
constexpr unsigned kSymbolBits = 5;

// A list of block numbers as runs: the first block (`width` bits), the run's length (gamma),
// and for a run longer than one its direction (0 ascending, 1 descending).
void put_list(BitWriter& bw, const std::vector<uint32_t>& list, unsigned width) {
  for (size_t i = 0; i < list.size();) {
    size_t j = i + 1;
    int dir = 0;
    if (j < list.size() && (list[j] == list[i] + 1 || list[j] + 1 == list[i])) {
      dir = list[j] == list[i] + 1 ? 1 : -1;
      while (j < list.size() && int64_t(list[j]) - int64_t(list[j - 1]) == dir) j++;
    }
    bw.bits(list[i], width);
    bw.gamma(j - i);
    if (j - i > 1) bw.bit(dir < 0);
    i = j;
  }
}

// The inverse: `n` blocks, each in [lo, hi); false (the reader failed or a run leaves the range)
// on bad input. `out` is reserved up to n: n is known from the states, never read.
bool get_list(BitReader& br, uint32_t n, unsigned width, uint32_t lo, uint32_t hi,
              std::vector<uint32_t>* out) {
  out->clear();
  out->reserve(n);
  while (out->size() < n) {
    const uint64_t start = br.bits(width);
    const uint64_t len = br.gamma();
    if (!br.ok() || len > n - out->size()) return false;
    const bool down = len > 1 && br.bit();
    if (!br.ok() || start < lo || start >= hi) return false;
    if (down ? start - lo < len - 1 : hi - start < len) return false;
    for (uint64_t k = 0; k < len; k++) out->push_back(uint32_t(down ? start - k : start + k));
  }
  return true;
}

}  // namespace

Status BlockManager::save_tables(TableWriter& w) const {
  const uint32_t blocks = uint32_t(state_.size());
  const unsigned width = bits_for(blocks);
  BitWriter bw;
  // The states, as runs.
  std::vector<uint32_t> sym(blocks, 0), closed_by_stamp;
  for (uint32_t b = first_; b < blocks; b++) {
    switch (state_[b]) {
      case kFree: sym[b] = kTFree; break;
      case kOpen: sym[b] = kTOpen; break;
      case kClosed: sym[b] = kTClosed; closed_by_stamp.push_back(b); break;
      case kBad: sym[b] = kTBad; break;
      default:
        return Status::error(Errc::kInvalidArgument,
                             "checkpoint: block " + std::to_string(b) +
                                 " is being collected: the tables are mid-collection");
    }
    if (erased_[b]) sym[b] |= kTErased;
    if (retiring_[b]) sym[b] |= kTRetiring;
    if (scrubbing_[b]) sym[b] |= kTScrubbing;
  }
  for (uint32_t b = first_, e; b < blocks; b = e) {
    for (e = b + 1; e < blocks && sym[e] == sym[b];) e++;
    bw.bits(sym[b], kSymbolBits);
    bw.gamma(e - b);
  }
  // The heads.
  for (int64_t h : head_) {
    bw.bit(h >= 0);
    if (h < 0) continue;
    bw.bits(uint64_t(h), width);
    bw.gamma(written_[h]);
    bw.gamma(uint64_t(valid_[h]) + 1);
  }
  // The free queue, in order.
  put_list(bw, std::vector<uint32_t>(free_.begin(), free_.end()), width);
  // The closed lists, bucket by bucket (valid count 0 .. ppb), each from its head: the counts,
  // then the blocks.
  std::vector<uint32_t> closed;
  for (uint32_t v = 0; v <= ppb_; v++) {
    const size_t before = closed.size();
    for (int32_t b = bucket_[v]; b >= 0; b = next_[b]) closed.push_back(uint32_t(b));
    bw.gamma(closed.size() - before + 1);
  }
  put_list(bw, closed, width);
  // The close order and stamps.
  std::sort(closed_by_stamp.begin(), closed_by_stamp.end(),
            [&](uint32_t a, uint32_t b) { return closed_at_[a] < closed_at_[b]; });
  put_list(bw, closed_by_stamp, width);
  uint64_t prev = 0;
  for (uint32_t b : closed_by_stamp) {
    bw.gamma(closed_at_[b] - prev);
    prev = closed_at_[b];
  }
  bw.bit(wl_checked_ == erase_epoch_);

  w.tag("PBLK");
  w.u32(kVersioned | kPblkVersion);
  w.u32(blocks);
  w.u32(ppb_);
  w.u32(first_);
  w.u64(close_clock_);
  w.u32(uint32_t(bw.data().size()));
  w.bytes(bw.data());
  return Status::ok();
}

Status BlockManager::load_tables(TableReader& r) {
  r.tag("PBLK");
  const uint32_t version = r.u32();
  if (r.status().is_ok() && version != (kVersioned | kPblkVersion))
    r.fail("checkpoint: block tables (PBLK) section version " +
           std::to_string(version & kVersioned ? version & ~kVersioned : 1) +
           ", this pdl reads version " + std::to_string(kPblkVersion));
  const uint32_t blocks = uint32_t(state_.size());
  const uint32_t nb = r.u32(), ppb = r.u32(), first = r.u32();
  if (r.status().is_ok() && (nb != blocks || ppb != ppb_ || first != first_))
    r.fail("checkpoint: block tables of another geometry (" + std::to_string(nb) + " blocks of " +
           std::to_string(ppb) + " pages from " + std::to_string(first) + ")");
  const uint64_t clock = r.u64();
  if (r.status().is_ok() && clock > 0xFFFFFFFFu)
    r.fail("checkpoint: block tables: close clock " + std::to_string(clock) +
           " beyond 32 bits (a store renumbers before)");
  const uint32_t body_bytes = r.u32();
  if (!r.check_count(body_bytes, 1, "block tables body byte")) return r.status();
  BitReader br(r.bytes(body_bytes));
  const unsigned width = bits_for(blocks);
  auto bad = [&](const std::string& what) {
    r.fail("checkpoint: block tables: " + what);
    return r.status();
  };

  // The states.
  uint32_t n_free = 0, n_open = 0, n_closed = 0;
  for (uint32_t b = first_; b < blocks;) {
    const uint32_t t = uint32_t(br.bits(kSymbolBits));
    const uint64_t len = br.gamma();
    if (!br.ok() || len > blocks - b) return bad("block states cut short or overrunning");
    const uint32_t st = t & 3;
    if ((t & kTErased) && st != kTFree) return bad("erased flag on a used block");
    if ((t & (kTRetiring | kTScrubbing)) && st != kTOpen && st != kTClosed)
      return bad("retiring or scrubbing flag on a free or bad block");
    for (uint32_t e = b; e < b + len; e++) {
      erased_[e] = (t & kTErased) != 0;
      retiring_[e] = (t & kTRetiring) != 0;
      scrubbing_[e] = (t & kTScrubbing) != 0;
      retiring_n_ += retiring_[e];
      scrubbing_n_ += scrubbing_[e];
      valid_[e] = 0;
      written_[e] = 0;
      switch (st) {
        case kTFree: state_[e] = kFree; n_free++; break;
        case kTOpen: state_[e] = kOpen; n_open++; break;
        case kTClosed:
          state_[e] = kClosed;
          written_[e] = uint16_t(ppb_);
          n_closed++;
          break;
        default: state_[e] = kBad; bad_++;
      }
    }
    b += uint32_t(len);
  }
  // The heads.
  uint32_t heads = 0;
  for (int64_t& h : head_) {
    if (!br.bit()) continue;
    const uint64_t b = br.bits(width);
    const uint64_t wr = br.gamma(), v1 = br.gamma();
    if (!br.ok()) return bad("write heads cut short");
    if (b < first_ || b >= blocks || state_[b] != kOpen ||
        (&h == &head_[1] && head_[0] == int64_t(b)))
      return bad("write head on block " + std::to_string(b) + ", not an open block");
    if (wr >= ppb_ || v1 - 1 > wr)
      return bad("open block " + std::to_string(b) + " written or valid count");
    written_[b] = uint16_t(wr);
    valid_[b] = uint16_t(v1 - 1);
    h = int64_t(b);
    heads++;
  }
  if (heads != n_open)
    return bad(std::to_string(n_open) + " open blocks, " + std::to_string(heads) +
               " write heads");
  // The free queue, in order.
  std::vector<uint32_t> list;
  std::vector<uint8_t> seen(blocks, 0);
  if (!get_list(br, n_free, width, first_, blocks, &list)) return bad("free queue cut short or out of range");
  for (uint32_t b : list) {
    if (state_[b] != kFree || seen[b])
      return bad("free queue: block " + std::to_string(b) + " not free, or listed twice");
    seen[b] = 1;
  }
  free_.assign(list.begin(), list.end());
  // The closed lists: the bucket sizes, then the blocks, linked from the last one back so that
  // each bucket keeps the saved order.
  std::vector<uint32_t> bucket_size(ppb_ + 1);
  uint64_t listed = 0;
  for (uint32_t v = 0; v <= ppb_; v++) {
    const uint64_t n = br.gamma() - 1;
    if (!br.ok() || n > n_closed - listed) return bad("closed list bucket sizes");
    bucket_size[v] = uint32_t(n);
    listed += n;
  }
  if (listed != n_closed)
    return bad("closed lists of " + std::to_string(listed) + " blocks, " +
               std::to_string(n_closed) + " blocks closed");
  std::vector<uint32_t> closed;
  if (!get_list(br, n_closed, width, first_, blocks, &closed))
    return bad("closed lists cut short or out of range");
  std::fill(seen.begin(), seen.end(), 0);
  for (uint32_t v = 0, i = 0; v <= ppb_; v++)
    for (uint32_t k = 0; k < bucket_size[v]; k++, i++) {
      const uint32_t b = closed[i];
      if (state_[b] != kClosed || seen[b])
        return bad("closed list: block " + std::to_string(b) + " not closed, or listed twice");
      seen[b] = 1;
      valid_[b] = uint16_t(v);
    }
  // The close order and stamps.
  if (!get_list(br, n_closed, width, first_, blocks, &list))
    return bad("close order cut short or out of range");
  uint64_t stamp = 0;
  for (uint32_t b : list) {
    if (state_[b] != kClosed || seen[b] != 1)
      return bad("close order: block " + std::to_string(b) + " not closed, or listed twice");
    seen[b] = 2;
    const uint64_t d = br.gamma();
    if (!br.ok() || d > clock - stamp)
      return bad("close stamp of block " + std::to_string(b) + " missing or after the clock");
    stamp += d;
    closed_at_[b] = uint32_t(stamp);
  }
  close_clock_ = uint32_t(clock);
  const bool wl = br.bit();
  if (!br.at_padding()) return bad("stream cut short, or bytes after the body");
  if (!r.status().is_ok()) return r.status();
  for (size_t i = closed.size(); i-- > 0;) link(closed[i]);
  erase_epoch_ = 0;
  wl_checked_ = wl ? 0 : ~uint64_t{0};
  return Status::ok();
}

uint64_t BlockManager::table_bytes() const {
  return state_.capacity() * sizeof(State) + valid_.capacity() * sizeof(uint16_t) +
         written_.capacity() * sizeof(uint16_t) + closed_at_.capacity() * sizeof(uint32_t) +
         erased_.capacity() + retiring_.capacity() + scrubbing_.capacity() +
         (prev_.capacity() + next_.capacity() + bucket_.capacity()) * sizeof(int32_t) +
         free_.size() * sizeof(uint32_t);
}

}  // namespace pdl
