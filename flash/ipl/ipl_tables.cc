// ipl_tables.cc — IplStore's checkpointed tables (docs/format.md §13.2): save_tables writes
// every table IplRecovery would rebuild from a scan, mount_tables reads them back (hostile-safe,
// flash/image/mount_tables.h), table_bytes reports their RAM.
//
// Saved (sections in this order): IPLH the counters and flags (sequence numbers, commit cut-off
// and the open group's start, wear-levelling clocks, the commit log's block, the NVM commit
// slot) with a geometry echo; IPLP one byte per logical page (slot state, mapped, has_log);
// IPLL per logical block its erase block, used log sectors and the sectors left garbage;
// IPLB one byte per erase block (erased, bad, retiring, scrubbing); IPLF the free queue in
// order; IPLX the blocks and logical blocks purge() must still handle (void items a crash or an
// abort left, kept across syncs until the next program). The owner map (block -> logical
// block), the bad and scrub counts are derived on mount, every entry cross-checked.
//
// Not saved, verified empty instead (a synced store has none): pending trims, the open group
// (touched, kept blocks, its dirty flag and program count). Not saved because a scan does not
// rebuild them either: note_update hints (a write without them diffs against the old page),
// stats, and the I/O buffers. Nothing else lives in RAM: IPL's log sectors are read from flash
// or NVM when needed, so with NVM only the commit slot's turn is a table; mount_tables re-reads
// the NVM's 64-byte commit area to confirm it (a lost or foreign NVM fails here, as its scan
// mount would, instead of at the first read of a log sector).
//
// Invariants mount_tables establishes before handing the store out (so no later operation
// indexes out of range): every block number in range and in the data area, each block at most
// one of {a logical block's, the commit log's, free, bad} and every data block one of them;
// used sectors within the log region, garbage sectors below them; page states valid for their
// logical block (none without an erase block; mapped never over an erased slot; log records
// only in a used region); purge entries naming free blocks and logical blocks with a block.
#include <algorithm>
#include <string>

#include "flash/ipl/ipl_nvm.h"
#include "flash/ipl/ipl_store.h"
#include "flash/store/reread.h"

namespace pdl {
namespace {

constexpr uint32_t kNone = 0xFFFFFFFFu;
constexpr uint64_t kWlNever = ~uint64_t{0};

// IPLH flags.
constexpr uint8_t kFlagLegacy = 1, kFlagGroups = 2, kFlagNvm = 4;
// IPLP: bits 0-1 the slot (0 erased, 1 data, 2 garbage), bit 2 mapped, bit 3 has_log.
constexpr uint8_t kPageMapped = 4, kPageLog = 8;
// IPLB.
constexpr uint8_t kBlockErased = 1, kBlockBad = 2, kBlockRetiring = 4, kBlockScrubbing = 8;

}  // namespace

Status IplStore::save_tables(TableWriter& w) const {
  auto refuse = [](const std::string& why) {
    return Status::error(Errc::kInvalidArgument, "ipl save_tables: " + why);
  };
  PDL_TRY(changeable());
  if (dirty() || !trims_.empty()) return refuse("trims or an open group not synced");
  if (!touched_.empty() || !kept_.empty() || group_dirty_ || group_programs_ != 0)
    return refuse("the open group's bookkeeping is not empty (not synced)");
  for (const LpnState& st : lpns_)
    if (st.trim_pending) return refuse("a trim is pending (not synced)");

  w.tag("IPLH");
  w.u8(uint8_t(params_.method));
  w.u8(uint8_t((legacy_ ? kFlagLegacy : 0) | (groups_ ? kFlagGroups : 0) |
               (nvm_ ? kFlagNvm : 0)));
  w.u32(geo_.blocks);
  w.u32(geo_.pages_per_block);
  w.u32(dpb_);
  w.u32(log_sectors_);
  w.u32(uint32_t(lpns_.size()));
  w.u64(next_seq_);
  w.u64(committed_seq_);
  w.u64(group_start_);
  w.u64(erase_epoch_);
  w.u64(wl_checked_);
  w.u32(commit_block_);
  w.u32(commit_used_);
  w.u8(uint8_t(nvm_commit_slot_));

  w.tag("IPLP");
  for (const LpnState& st : lpns_)
    w.u8(uint8_t(uint8_t(st.slot) | (st.mapped ? kPageMapped : 0) | (st.has_log ? kPageLog : 0)));

  w.tag("IPLL");
  for (const LBlock& lb : lblocks_) {
    w.u32(lb.block);
    w.u32(lb.used_sectors);
    w.u32(uint32_t(lb.garbage.size()));
    for (const uint32_t g : lb.garbage) w.u32(g);
  }

  w.tag("IPLB");
  for (uint32_t b = 0; b < geo_.blocks; b++)
    w.u8(uint8_t((erased_[b] ? kBlockErased : 0) | (bad_[b] ? kBlockBad : 0) |
                 (retiring_[b] ? kBlockRetiring : 0) | (scrubbing_[b] ? kBlockScrubbing : 0)));

  w.tag("IPLF");
  w.u32(uint32_t(free_.size()));
  for (const uint32_t b : free_) w.u32(b);

  w.tag("IPLX");
  w.u32(uint32_t(purge_blocks_.size()));
  for (const uint32_t b : purge_blocks_) w.u32(b);
  w.u32(uint32_t(purge_lbns_.size()));
  for (const uint32_t lbn : purge_lbns_) w.u32(lbn);
  return Status::ok();
}

uint64_t IplStore::table_bytes() const {
  // A std::set / unordered_map node: the value plus about 32 bytes (links, colour or hash).
  constexpr uint64_t kNode = 32;
  auto bits = [](const std::vector<bool>& v) { return uint64_t(v.capacity() + 7) / 8; };
  uint64_t n = lpns_.capacity() * sizeof(LpnState) + lblocks_.capacity() * sizeof(LBlock) +
               owner_.capacity() * sizeof(uint32_t) + bits(erased_) + bits(bad_) +
               bits(retiring_) + bits(scrubbing_) + free_.size() * sizeof(uint32_t);
  for (const LBlock& lb : lblocks_) n += lb.garbage.capacity() * sizeof(uint32_t);
  n += (trims_.size() + no_hints_.size() + touched_.size() + purge_lbns_.size()) *
       (sizeof(uint32_t) + kNode);
  for (const auto& [lpn, ranges] : hints_)
    n += sizeof(lpn) + sizeof(ranges) + kNode + ranges.capacity() * sizeof(ranges[0]);
  for (const auto& [lbn, k] : kept_)
    n += sizeof(lbn) + sizeof(k) + kNode + k.garbage.capacity() * sizeof(uint32_t) +
         k.slots.capacity() * sizeof(Slot);
  n += purge_blocks_.capacity() * sizeof(uint32_t);
  // The I/O buffers: a page, a log region, a merge's logical block.
  n += page_buf_.capacity() + prev_buf_.capacity() + log_buf_.capacity() +
       sector_buf_.capacity() + spare_buf_.capacity() + runs_buf_.capacity() +
       merge_buf_.capacity() + commit_buf_.capacity() + bits(merge_live_) + bits(commit_live_);
  return n;
}

Status IplStore::mount_tables(Nand& nand, const StoreParams& params, CommitMode mode,
                              TableReader& r, std::unique_ptr<PageStore>* out, bool replaying) {
  if (params.method != Method::kIpu && params.method != Method::kIpl)
    return Status::error(Errc::kInvalidArgument, "ipl mount_tables: not an IPU or IPL store");
  std::unique_ptr<IplStore> s(new IplStore(nand, params));
  IplStore& st = *s;
  const Geometry& g = st.geo_;
  const uint32_t lbns = uint32_t(st.lblocks_.size());
  auto corrupt = [&r](const std::string& what) {
    r.fail("checkpoint: ipl " + what);
    return r.status();
  };

  // ---- IPLH ----
  r.tag("IPLH");
  const uint8_t method = r.u8(), flags = r.u8();
  const uint32_t blocks = r.u32(), ppb = r.u32(), dpb = r.u32(), log_sectors = r.u32(),
                 lpns = r.u32();
  st.next_seq_ = r.u64();
  st.committed_seq_ = r.u64();
  st.group_start_ = r.u64();
  st.erase_epoch_ = r.u64();
  st.wl_checked_ = r.u64();
  st.commit_block_ = r.u32();
  st.commit_used_ = r.u32();
  st.nvm_commit_slot_ = r.u8();
  PDL_TRY(r.status());
  if (method != uint8_t(params.method) || blocks != g.blocks || ppb != g.pages_per_block ||
      dpb != st.dpb_ || log_sectors != st.log_sectors_ || lpns != st.lpns_.size())
    return corrupt("header: method or geometry differs from the store's (IPLH)");
  if ((flags & ~(kFlagLegacy | kFlagGroups | kFlagNvm)) != 0 ||
      bool(flags & kFlagNvm) != st.nvm_)
    return corrupt("header: bad flags (IPLH)");
  st.legacy_ = flags & kFlagLegacy;
  st.groups_ = flags & kFlagGroups;
  // Checkpoints exist from superblock format 6 on, where IPU is per page (format 1's rules)
  // and IPL has commit records (upgrade_store leaves format 1 only once upgrade_format did).
  if (st.legacy_ != (params.method == Method::kIpu))
    return corrupt("header: the format-1 flag does not fit the method (IPLH)");
  if (st.groups_ && (st.legacy_ || st.log_sectors_ == 0))
    return corrupt("header: atomic groups without commit records (IPLH)");
  if (st.next_seq_ == 0 || st.group_start_ == 0 || st.group_start_ > st.next_seq_ ||
      (st.legacy_ ? st.committed_seq_ != UINT64_MAX : st.committed_seq_ >= st.next_seq_))
    return corrupt("header: sequence numbers out of order (IPLH)");
  if (st.wl_checked_ != kWlNever && st.wl_checked_ > st.erase_epoch_)
    return corrupt("header: wear-levelling clock ahead of the erases (IPLH)");
  if (st.nvm_commit_slot_ > 1 || (!st.nvm_ && st.nvm_commit_slot_ != 0))
    return corrupt("header: NVM commit slot out of range (IPLH)");
  if (st.commit_block_ == kNone) {
    if (st.commit_used_ != 0) return corrupt("header: commit log sectors without a block (IPLH)");
  } else if (st.nvm_ || st.legacy_ || st.log_sectors_ == 0 ||
             !r.check(st.commit_block_, g.blocks, "ipl commit-log block (IPLH)") ||
             st.commit_block_ < kSuperblockBlocks || st.commit_used_ > st.log_sectors_) {
    return corrupt("header: commit log block or its sectors out of range (IPLH)");
  }
  if (st.commit_block_ != kNone) st.owner_[st.commit_block_] = kCommitOwner;

  // ---- IPLP ----
  r.tag("IPLP");
  if (!r.check_count(st.lpns_.size(), 1, "ipl logical pages (IPLP)")) return r.status();
  for (LpnState& p : st.lpns_) {
    const uint8_t v = r.u8();
    if ((v & 3) > 2 || (v & ~uint8_t(3 | kPageMapped | kPageLog)) != 0)
      return corrupt("page state byte " + std::to_string(v) + " (IPLP)");
    p.slot = Slot(v & 3);
    p.mapped = v & kPageMapped;
    p.has_log = v & kPageLog;
    if (p.mapped && p.slot == Slot::kErased)
      return corrupt("a page mapped over an erased slot (IPLP)");
  }

  // ---- IPLL ----
  r.tag("IPLL");
  if (!r.check_count(lbns, 12, "ipl logical blocks (IPLL)")) return r.status();
  for (uint32_t lbn = 0; lbn < lbns; lbn++) {
    LBlock& lb = st.lblocks_[lbn];
    lb.block = r.u32();
    lb.used_sectors = r.u32();
    const uint32_t n = r.u32();
    if (!r.check_count(n, 4, "ipl garbage sectors (IPLL)")) return r.status();
    if (lb.used_sectors > st.log_sectors_ || n > lb.used_sectors)
      return corrupt("logical block " + std::to_string(lbn) + ": used or garbage log sectors "
                     "beyond its log region (IPLL)");
    lb.garbage.resize(n);
    for (uint32_t& x : lb.garbage) {
      x = r.u32();
      if (!r.check(x, lb.used_sectors, "ipl garbage sector (IPLL)")) return r.status();
    }
    const Lpn first = st.first_lpn(lbn);
    if (lb.block == kNone) {
      if (lb.used_sectors != 0) return corrupt("log sectors without an erase block (IPLL)");
      for (uint32_t k = 0; k < st.lpns_in(lbn); k++) {
        const LpnState& p = st.lpns_[first + k];
        if (p.mapped || p.has_log || p.slot != Slot::kErased)
          return corrupt("page state in a logical block without an erase block (IPLL)");
      }
      continue;
    }
    if (!r.check(lb.block, g.blocks, "ipl erase block (IPLL)")) return r.status();
    if (lb.block < kSuperblockBlocks || st.owner_[lb.block] != kNone)
      return corrupt("erase block " + std::to_string(lb.block) +
                     " reserved or held twice (IPLL)");
    st.owner_[lb.block] = lbn;
    for (uint32_t k = 0; k < st.lpns_in(lbn); k++)
      if (st.lpns_[first + k].has_log && lb.used_sectors == 0)
        return corrupt("log records in an empty log region (IPLL)");
  }
  PDL_TRY(r.status());

  // ---- IPLB ----
  r.tag("IPLB");
  if (!r.check_count(g.blocks, 1, "ipl erase blocks (IPLB)")) return r.status();
  for (uint32_t b = 0; b < g.blocks; b++) {
    const uint8_t v = r.u8();
    if ((v & ~(kBlockErased | kBlockBad | kBlockRetiring | kBlockScrubbing)) != 0 ||
        (b < kSuperblockBlocks && v != 0))
      return corrupt("block state byte " + std::to_string(v) + " of block " + std::to_string(b) +
                     " (IPLB)");
    st.erased_[b] = v & kBlockErased;
    st.bad_[b] = v & kBlockBad;
    st.retiring_[b] = v & kBlockRetiring;
    st.scrubbing_[b] = v & kBlockScrubbing;
    if (st.bad_[b] && st.owner_[b] != kNone)
      return corrupt("bad block " + std::to_string(b) + " in use (IPLB)");
    if (st.erased_[b] && st.owner_[b] != kNone)
      return corrupt("block " + std::to_string(b) + " in use and erased (IPLB)");
    st.bad_count_ += st.bad_[b] ? 1 : 0;
    st.scrubbing_n_ += st.scrubbing_[b] ? 1 : 0;
  }

  // ---- IPLF ----
  r.tag("IPLF");
  const uint32_t nfree = r.u32();
  if (!r.check_count(nfree, 4, "ipl free blocks (IPLF)")) return r.status();
  std::vector<bool> is_free(g.blocks, false);
  for (uint32_t i = 0; i < nfree; i++) {
    const uint32_t b = r.u32();
    if (!r.check(b, g.blocks, "ipl free block (IPLF)")) return r.status();
    if (b < kSuperblockBlocks || is_free[b] || st.owner_[b] != kNone || st.bad_[b])
      return corrupt("free block " + std::to_string(b) + " reserved, listed twice, bad or in "
                     "use (IPLF)");
    is_free[b] = true;
    st.free_.push_back(b);
  }
  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++)
    if (!is_free[b] && !st.bad_[b] && st.owner_[b] == kNone)
      return corrupt("block " + std::to_string(b) + " neither free, bad nor in use (IPLF)");
  for (uint32_t b = 0; b < g.blocks; b++)
    if (st.erased_[b] && !is_free[b])
      return corrupt("block " + std::to_string(b) + " erased but not free (IPLF)");

  // ---- IPLX ----
  r.tag("IPLX");
  const uint32_t npb = r.u32();
  if (!r.check_count(npb, 4, "ipl blocks to purge (IPLX)")) return r.status();
  std::vector<bool> listed(g.blocks, false);
  for (uint32_t i = 0; i < npb; i++) {
    const uint32_t b = r.u32();
    if (!r.check(b, g.blocks, "ipl block to purge (IPLX)")) return r.status();
    // purge() erases them and, should the erase fail, takes them off the free queue.
    if (!is_free[b] || listed[b])
      return corrupt("block to purge " + std::to_string(b) + " not free or listed twice (IPLX)");
    listed[b] = true;
    st.purge_blocks_.push_back(b);
  }
  const uint32_t npl = r.u32();
  if (!r.check_count(npl, 4, "ipl logical blocks to purge (IPLX)")) return r.status();
  for (uint32_t i = 0; i < npl; i++) {
    const uint32_t lbn = r.u32();
    if (!r.check(lbn, lbns, "ipl logical block to purge (IPLX)")) return r.status();
    if (st.lblocks_[lbn].block == kNone || !st.purge_lbns_.insert(lbn).second)
      return corrupt("logical block to purge " + std::to_string(lbn) +
                     " without an erase block or listed twice (IPLX)");
  }
  if ((!st.purge_blocks_.empty() || !st.purge_lbns_.empty()) && st.legacy_)
    return corrupt("void items to purge in a format-1 store (IPLX)");
  PDL_TRY(r.finish());

  // The NVM's commit area: a valid record in the slot before the next one's turn (the scan
  // mount's test of the NVM being this store's), no newer than the commit cut-off. (A replay
  // reads it itself: commits since the checkpoint moved it on.)
  if (st.nvm_ && !replaying) {
    uint8_t area[kNvmCommitArea];
    PDL_TRY(nvm_read_with_retries(nand, 0, area));
    uint64_t seq[2] = {0, 0};
    bool ok[2] = {false, false};
    for (int i = 0; i < 2; i++)
      ok[i] = nvm_commit_decode(std::span<const uint8_t>(area).subspan(size_t(i) * kNvmCommitSlot,
                                                                       kNvmCommitSlot),
                                &seq[i]);
    const uint32_t last = st.nvm_commit_slot_ ^ 1;
    if (!ok[last] || (ok[last ^ 1] && seq[last ^ 1] > seq[last]) ||
        seq[last] > st.committed_seq_)
      return Status::error(Errc::kCorrupt,
                           "checkpoint: ipl NVM commit area disagrees with the tables (the NVM "
                           "was lost, replaced or changed since)");
  }

  PDL_TRY(st.set_commit_mode(mode));  // as mount_store does (IPU stays per-page)
  st.ledger_.charge(st.ledger_.other());
  *out = std::move(s);
  return Status::ok();
}

}  // namespace pdl
