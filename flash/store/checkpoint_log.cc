// checkpoint_log.cc — reading, appending and switching blocks of the checkpoint log (layout:
// docs/format.md §14).
#include "flash/store/checkpoint_log.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/store/reread.h"
#include "flash/store/spare.h"

namespace pdl {
namespace {

// Entry format 2 ("PDLCKLG2"); format 1's "PDLCKLOG" entries (superblock formats 6, 7) do not
// decode.
constexpr char kLogMagic[8] = {'P', 'D', 'L', 'C', 'K', 'L', 'G', '2'};
constexpr size_t kLogCrcAt = 64;

// (gen, kind) order: for one gen, stale is newer than the checkpoint it invalidates.
bool newer(const LogEntry& a, const LogEntry& b) {
  if (a.gen != b.gen) return a.gen > b.gen;
  return a.kind == LogKind::kStale && b.kind == LogKind::kCheckpoint;
}

}  // namespace

void CheckpointLog::encode(const LogEntry& e, std::span<uint8_t> d) const {
  std::fill(d.begin(), d.end(), 0xFF);
  uint8_t* p = d.data();
  std::memcpy(p, kLogMagic, 8);
  le::put32(p + 8, uint32_t(e.kind));
  le::put64(p + 12, e.gen);
  std::memcpy(p + 20, sb_.uuid.data(), 16);
  le::put32(p + 36, e.area_first);
  le::put32(p + 40, e.half);
  le::put32(p + 44, e.root_page);
  le::put32(p + 48, e.pages);
  le::put64(p + 52, e.stream_bytes);
  le::put32(p + 60, e.stream_crc);
  le::put32(p + kLogCrcAt, crc32c(p, kLogCrcAt));
}

bool CheckpointLog::decode(std::span<const uint8_t> d, LogEntry* e) const {
  const uint8_t* p = d.data();
  if (std::memcmp(p, kLogMagic, 8) != 0 || le::get32(p + kLogCrcAt) != crc32c(p, kLogCrcAt)) return false;
  const uint32_t kind = le::get32(p + 8);
  if (kind != uint32_t(LogKind::kCheckpoint) && kind != uint32_t(LogKind::kStale)) return false;
  if (std::memcmp(p + 20, sb_.uuid.data(), 16) != 0) return false;  // another format's
  if (!all_ff(d.subspan(kLogEntryBytes))) return false;
  e->kind = LogKind(kind);
  e->gen = le::get64(p + 12);
  std::memcpy(e->uuid.data(), p + 20, 16);
  e->area_first = le::get32(p + 36);
  e->half = le::get32(p + 40);
  e->root_page = le::get32(p + 44);
  e->pages = le::get32(p + 48);
  e->stream_bytes = le::get64(p + 52);
  e->stream_crc = le::get32(p + 60);
  return true;
}

Status CheckpointLog::page_state(uint32_t block, uint32_t page, PageState* st, LogEntry* e) {
  const Geometry& g = nand_.geometry();
  std::vector<uint8_t> data(g.page_data);
  bool valid = false, erased = false, passed = false;
  const Status s = read_with_retries(
      nand_, block * g.pages_per_block + page, data, {},
      [&] {
        valid = decode(data, e);
        erased = !valid && all_ff(data);
        return valid || erased;
      },
      &passed);
  pages_read_++;
  if (!s.is_ok() && !s.is(Errc::kCorrupt) && !s.is(Errc::kIoError)) return s;
  *st = !passed ? PageState::kInvalid : valid ? PageState::kValid : PageState::kErased;
  return Status::ok();
}

Status CheckpointLog::scan_block(uint32_t block, BlockScan* out) {
  *out = BlockScan();
  if (nand_.is_bad(block)) return Status::ok();
  out->good = true;
  const uint32_t ppb = nand_.geometry().pages_per_block;
  std::map<uint32_t, std::pair<PageState, LogEntry>> seen;
  auto state = [&](uint32_t page, PageState* st) -> Status {
    auto it = seen.find(page);
    if (it == seen.end()) {
      LogEntry e;
      PDL_TRY(page_state(block, page, st, &e));
      seen[page] = {*st, e};
    } else {
      *st = it->second.first;
    }
    return Status::ok();
  };
  // The last programmed page: entry pages are programmed in order, so they are a prefix.
  uint32_t lo = 0, hi = ppb;
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    PageState st;
    PDL_TRY(state(mid, &st));
    if (st != PageState::kErased) lo = mid;
    else hi = mid;
  }
  out->last = lo;
  for (uint32_t p = lo; p >= 1; p--) {
    PageState st;
    PDL_TRY(state(p, &st));
    if (st == PageState::kValid) {
      out->has_valid = true;
      out->valid_at = p;
      out->valid = seen[p].second;
      break;
    }
  }
  out->invalid_tail = out->last > 0 && (!out->has_valid || out->valid_at < out->last);
  return Status::ok();
}

void CheckpointLog::settle() {
  has_newest_ = false;
  doubt_ = false;
  doubt_why_.clear();
  cur_ = kSuperblockBlocks;
  for (uint32_t b = 0; b < kSuperblockBlocks; b++) {
    const BlockScan& s = scans_[b];
    if (!s.good) continue;
    if (cur_ == kSuperblockBlocks) cur_ = b;
    if (s.has_valid && (!has_newest_ || newer(s.valid, newest_))) {
      newest_ = s.valid;
      has_newest_ = true;
      cur_ = b;
    }
    if (s.invalid_tail) {
      doubt_ = true;
      doubt_why_ = "checkpoint log page " + std::to_string(s.last) + " of block " +
                   std::to_string(b) + " is programmed but does not decode";
    }
  }
  if (cur_ == kSuperblockBlocks) cur_ = 0;  // no good block: appends fail
  max_gen_ = has_newest_ ? newest_.gen : 0;
}

Status CheckpointLog::load() {
  for (uint32_t b = 0; b < kSuperblockBlocks; b++) PDL_TRY(scan_block(b, &scans_[b]));
  settle();
  return Status::ok();
}

void CheckpointLog::set_empty() {
  for (uint32_t b = 0; b < kSuperblockBlocks; b++) {
    scans_[b] = BlockScan();
    scans_[b].good = !nand_.is_bad(b);
  }
  settle();
}

// Erase `block`, program its superblock copy and continue the log there. A block that fails
// is marked bad (a copy fewer) and the log stays where it was: the caller looks again.
Status CheckpointLog::switch_to(uint32_t block) {
  const Status st = erase_with_retries(nand_, block);
  scans_[block] = BlockScan();
  if (st.is(Errc::kBadBlock)) return nand_.mark_bad(block);
  PDL_TRY(st);
  const Status w = write_superblock_copy(nand_, sb_, block);
  if (w.is(Errc::kBadBlock)) return Status::ok();  // marked bad by the copy's program
  PDL_TRY(w);
  scans_[block].good = true;
  cur_ = block;
  return Status::ok();
}

Status CheckpointLog::append(LogEntry e) {
  e.uuid = sb_.uuid;
  const Geometry& g = nand_.geometry();
  std::vector<uint8_t> data(g.page_data);
  encode(e, data);
  for (uint32_t attempt = 0; attempt < 2 * g.pages_per_block; attempt++) {
    if (!scans_[cur_].good)
      return Status::error(Errc::kBadBlock, "checkpoint log: no good superblock block");
    const uint32_t other = 1 - cur_;
    const bool can_switch = scans_[other].good;
    // A doubtful tail in the other block is erased away (nothing there is newer than what
    // this entry supersedes); a full block continues in the other.
    if (can_switch && scans_[other].invalid_tail) {
      PDL_TRY(switch_to(other));
      continue;
    }
    if (scans_[cur_].last + 1 >= g.pages_per_block) {
      if (!can_switch)
        return Status::error(Errc::kFull,
                             "checkpoint log: block " + std::to_string(cur_) +
                                 " is full and the other superblock block is bad");
      PDL_TRY(switch_to(other));
      continue;
    }
    BlockScan& s = scans_[cur_];
    const uint32_t page = s.last + 1;
    s.last = page;
    // Only an erased page takes the entry (pages beyond the last programmed one are erased
    // unless something other than this log programmed them): one read.
    PageState was;
    LogEntry ignored;
    PDL_TRY(page_state(cur_, page, &was, &ignored));
    if (was != PageState::kErased) {
      s.invalid_tail = true;
      continue;
    }
    Status st = as_program_status(nand_.program(cur_ * g.pages_per_block + page, data, {}));
    if (st.is(Errc::kNandRule)) st = Status::error(Errc::kBadBlock, st.message());
    if (st.is(Errc::kBadBlock)) {  // garbage left behind; the entry goes to the next page
      s.invalid_tail = true;
      continue;
    }
    if (!st.is_ok()) {
      s.invalid_tail = true;
      settle();
      return st;
    }
    s.has_valid = true;
    s.valid_at = page;
    s.valid = e;
    s.invalid_tail = false;
    settle();
    return Status::ok();
  }
  return Status::error(Errc::kBadBlock, "checkpoint log: every program failed");
}

Status CheckpointLog::append_stale() {
  LogEntry e;
  e.kind = LogKind::kStale;
  e.gen = max_gen_;
  if (has_newest_) e.half = newest_.half;  // the half of the checkpoint it makes stale
  return append(e);
}

}  // namespace pdl
