// ipl_compare.cc — compare_ipl_tables (ipl_compare.h): RAM only, no flash operation. Fields in
// the order ipl_tables.cc saves them; the first difference is reported, named as the tables
// name it.
#include "flash/ipl/ipl_compare.h"

#include <algorithm>
#include <string>
#include <vector>

#include "flash/ipl/ipl_store.h"

namespace pdl {
namespace {

std::string text(uint64_t v) { return std::to_string(v); }
std::string text(bool v) { return v ? "yes" : "no"; }
template <typename C>
std::string text(const C& c) {  // a list of numbers
  std::string s = "{";
  for (const auto x : c) s += (s.size() > 1 ? " " : "") + std::to_string(x);
  return s + "}";
}
template <typename C>
std::vector<uint32_t> sorted(const C& c) {
  std::vector<uint32_t> v(c.begin(), c.end());
  std::sort(v.begin(), v.end());
  return v;
}

// The first difference found, in words.
class FirstDifference {
 public:
  explicit FirstDifference(IplTablesFrom from)
      : from_(from == IplTablesFrom::kReplay ? "replay" : "checkpoint") {}
  template <typename T>
  bool same(const std::string& field, const T& a, const T& b) {
    return holds(field, a == b, a, b);
  }
  template <typename T>
  bool holds(const std::string& field, bool ok, const T& a, const T& b) {
    if (ok) return true;
    if (first_.empty()) first_ = field + ": " + from_ + " " + text(a) + ", scan " + text(b);
    return false;
  }
  Status status() const {
    return first_.empty() ? Status::ok()
                          : Status::error(Errc::kCorrupt, "ipl tables differ: " + first_);
  }

 private:
  const std::string from_;
  std::string first_;
};

}  // namespace

Status compare_ipl_tables(const IplStore& a, const IplStore& b, IplTablesFrom from) {
  using Slot = IplStore::Slot;
  using LpnState = IplStore::LpnState;
  using LBlock = IplStore::LBlock;
  FirstDifference d(from);
  const bool replay = from == IplTablesFrom::kReplay;
  auto slot = [](Slot s) { return uint64_t(s); };
  // ---- the header (IPLH) and the counts derived on mount ----
  if (!d.same("method", uint64_t(a.params_.method), uint64_t(b.params_.method)) ||
      !d.same("erase blocks", uint64_t(a.geo_.blocks), uint64_t(b.geo_.blocks)) ||
      !d.same("data pages per block", uint64_t(a.dpb_), uint64_t(b.dpb_)) ||
      !d.same("log sectors per block", uint64_t(a.log_sectors_), uint64_t(b.log_sectors_)) ||
      !d.same("logical pages", uint64_t(a.lpns_.size()), uint64_t(b.lpns_.size())) ||
      !d.same("logs in nvm", a.nvm_, b.nvm_))
    return d.status();  // (nothing else is comparable)
  d.same("format 1", a.legacy_, b.legacy_);
  d.same("atomic groups", a.groups_, b.groups_);
  d.same("next seq", a.next_seq_, b.next_seq_);
  // (The scan's cut-off is the newest commit record on flash; a replay's may be newer, never
  // older: ipl_compare.h. Which items are void is compared below, as the blocks to purge.)
  if (replay)
    d.holds("committed seq (not older than the scan's)", a.committed_seq_ >= b.committed_seq_,
            a.committed_seq_, b.committed_seq_);
  d.same("open group's first seq", a.group_start_, b.group_start_);
  if (replay) {
    d.same("erase epoch", a.erase_epoch_, b.erase_epoch_);
    d.same("wear-levelling clock", a.wl_checked_, b.wl_checked_);
  }
  d.same("commit log block", uint64_t(a.commit_block_), uint64_t(b.commit_block_));
  d.same("commit log used sectors", uint64_t(a.commit_used_), uint64_t(b.commit_used_));
  d.same("nvm commit slot", uint64_t(a.nvm_commit_slot_), uint64_t(b.nvm_commit_slot_));
  d.same("bad blocks", uint64_t(a.bad_count_), uint64_t(b.bad_count_));
  if (replay) d.same("blocks to scrub", uint64_t(a.scrubbing_n_), uint64_t(b.scrubbing_n_));
  // ---- per logical page (IPLP) ----
  for (Lpn l = 0; l < a.lpns_.size(); l++) {
    const LpnState &x = a.lpns_[l], &y = b.lpns_[l];
    const std::string at = "lpn " + std::to_string(l) + " ";
    d.same(at + "slot state", slot(x.slot), slot(y.slot));
    d.same(at + "mapped", x.mapped, y.mapped);
    d.same(at + "has log records", x.has_log, y.has_log);
    d.same(at + "trim pending", x.trim_pending, y.trim_pending);
  }
  // ---- per logical block (IPLL) ----
  for (uint32_t lbn = 0; lbn < a.lblocks_.size(); lbn++) {
    const LBlock &x = a.lblocks_[lbn], &y = b.lblocks_[lbn];
    const std::string at = "logical block " + std::to_string(lbn) + " ";
    d.same(at + "erase block", uint64_t(x.block), uint64_t(y.block));
    d.same(at + "used log sectors", uint64_t(x.used_sectors), uint64_t(y.used_sectors));
    d.same(at + "garbage log sectors", sorted(x.garbage), sorted(y.garbage));
  }
  // ---- per erase block (IPLB, the owner map) ----
  for (uint32_t blk = 0; blk < a.geo_.blocks; blk++) {
    const std::string at = "block " + std::to_string(blk) + " ";
    d.same(at + "owner", uint64_t(a.owner_[blk]), uint64_t(b.owner_[blk]));
    d.same(at + "bad", bool(a.bad_[blk]), bool(b.bad_[blk]));
    d.same(at + "retiring", bool(a.retiring_[blk]), bool(b.retiring_[blk]));
    if (replay) {
      d.same(at + "known erased", bool(a.erased_[blk]), bool(b.erased_[blk]));
      d.same(at + "to scrub", bool(a.scrubbing_[blk]), bool(b.scrubbing_[blk]));
    }
  }
  // ---- the free queue (IPLF), the void items to purge (IPLX) ----
  if (replay)
    d.same("free queue", std::vector<uint32_t>(a.free_.begin(), a.free_.end()),
           std::vector<uint32_t>(b.free_.begin(), b.free_.end()));
  else
    d.same("free blocks", sorted(a.free_), sorted(b.free_));
  d.same("blocks to purge", sorted(a.purge_blocks_), sorted(b.purge_blocks_));
  d.same("logical blocks to purge", sorted(a.purge_lbns_), sorted(b.purge_lbns_));
  // ---- the open group and pending trims (none after a mount) ----
  d.same("logical blocks with pending trims", sorted(a.trims_), sorted(b.trims_));
  d.same("open group's logical blocks", sorted(a.touched_), sorted(b.touched_));
  std::vector<uint32_t> ka, kb;
  for (const auto& [lbn, k] : a.kept_) ka.push_back(lbn);
  for (const auto& [lbn, k] : b.kept_) kb.push_back(lbn);
  if (d.same("logical blocks with a kept block", ka, kb))
    for (const auto& [lbn, x] : a.kept_) {
      const IplStore::Kept& y = b.kept_.at(lbn);
      const std::string at = "logical block " + std::to_string(lbn) + " kept ";
      d.same(at + "block", uint64_t(x.block), uint64_t(y.block));
      d.same(at + "used log sectors", uint64_t(x.used_sectors), uint64_t(y.used_sectors));
      d.same(at + "garbage log sectors", sorted(x.garbage), sorted(y.garbage));
      std::vector<uint64_t> sx, sy;
      for (const Slot v : x.slots) sx.push_back(slot(v));
      for (const Slot v : y.slots) sy.push_back(slot(v));
      d.same(at + "slot states", sx, sy);
    }
  d.same("open group dirty", a.group_dirty_, b.group_dirty_);
  d.same("open group's programs", a.group_programs_, b.group_programs_);
  return d.status();
}

}  // namespace pdl
