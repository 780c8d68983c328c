// ipl_inspect.cc — IplStore::check, locate, block_info: RAM only, no flash operation.
#include <string>

#include "flash/ipl/ipl_store.h"

namespace pdl {

Status IplStore::check() const {
  auto bad = [](const std::string& m) { return Status::error(Errc::kCorrupt, "ipl check: " + m); };
  const uint32_t data_blocks = geo_.blocks - kSuperblockBlocks;
  uint32_t owned = 0;
  for (uint32_t lbn = 0; lbn < lblocks_.size(); lbn++) {
    const LBlock& lb = lblocks_[lbn];
    if (lb.block == kNoBlock) {
      if (lb.used_sectors != 0) return bad("logical block " + std::to_string(lbn) + " has no block but used sectors");
      for (uint32_t s = 0; s < lpns_in(lbn); s++) {
        const LpnState& st = lpns_[first_lpn(lbn) + s];
        if (st.mapped || st.slot != Slot::kErased || st.has_log)
          return bad("logical page " + std::to_string(first_lpn(lbn) + s) +
                     " has state but its logical block has no erase block");
      }
      continue;
    }
    owned++;
    if (lb.block < kSuperblockBlocks || lb.block >= geo_.blocks || owner_[lb.block] != lbn)
      return bad("logical block " + std::to_string(lbn) + " -> block " +
                 std::to_string(lb.block) + " is not mirrored by the owner map");
    if (lb.used_sectors > log_sectors_per_block())
      return bad("logical block " + std::to_string(lbn) + " uses more log sectors than exist");
    for (uint32_t s = 0; s < lpns_in(lbn); s++) {
      const Lpn l = first_lpn(lbn) + s;
      const LpnState& st = lpns_[l];
      if (st.mapped && st.slot == Slot::kErased)
        return bad("logical page " + std::to_string(l) + " is mapped over an erased slot");
      if (st.trim_pending && (st.mapped || trims_.count(lbn) == 0))
        return bad("logical page " + std::to_string(l) + " has an inconsistent pending trim");
      if (st.has_log && lb.used_sectors == 0)
        return bad("logical page " + std::to_string(l) + " has log records in an empty region");
    }
  }
  uint32_t special = 0;  // the commit log's block and the kept blocks
  for (uint32_t b = 0; b < geo_.blocks; b++) {
    if (owner_[b] == kCommitOwner) {
      if (b != commit_block_)
        return bad("block " + std::to_string(b) + " is a stray commit-log block");
      special++;
    } else if (owner_[b] == kKeptOwner) {
      bool found = false;
      for (const auto& [lbn, k] : kept_) found |= k.block == b;
      if (!found) return bad("block " + std::to_string(b) + " is kept for no logical block");
      special++;
    }
  }
  if (commit_block_ != kNoBlock && owner_[commit_block_] != kCommitOwner)
    return bad("the commit log's block " + std::to_string(commit_block_) + " is not marked");
  for (const auto& [lbn, k] : kept_)
    if (owner_[k.block] != kKeptOwner || lblocks_[lbn].block == k.block)
      return bad("kept block " + std::to_string(k.block) + " of logical block " +
                 std::to_string(lbn) + " is not marked kept or is still current");
  if (!groups_ && (!kept_.empty() || !touched_.empty()))
    return bad("group state outside atomic groups");
  std::vector<bool> seen(geo_.blocks, false);
  for (uint32_t b : free_) {
    if (b < kSuperblockBlocks || b >= geo_.blocks || seen[b] || owner_[b] != kNoBlock)
      return bad("free block " + std::to_string(b) + " is reserved, listed twice or owned");
    seen[b] = true;
  }
  for (uint32_t b = 0; b < geo_.blocks; b++)
    if (owner_[b] != kNoBlock && owner_[b] != kCommitOwner && owner_[b] != kKeptOwner &&
        (owner_[b] >= lblocks_.size() || lblocks_[owner_[b]].block != b))
      return bad("block " + std::to_string(b) + " claims logical block " +
                 std::to_string(owner_[b]) + ", which lives elsewhere");
  uint32_t bad_blocks = 0;
  for (uint32_t b = 0; b < geo_.blocks; b++) {
    if (!bad_[b]) continue;
    bad_blocks++;
    if (seen[b] || owner_[b] != kNoBlock)
      return bad("bad block " + std::to_string(b) + " is free or owned");
  }
  if (bad_blocks != bad_count_) return bad("bad block count disagrees with the block table");
  if (nvm_) PDL_TRY(check_nvm());
  if (owned + special + free_.size() + bad_blocks != data_blocks)
    return bad(std::to_string(owned) + " owned + " + std::to_string(special) +
               " commit-log and kept + " + std::to_string(free_.size()) + " free + " +
               std::to_string(bad_blocks) + " bad blocks != " + std::to_string(data_blocks) +
               " data blocks");
  return Status::ok();
}

// base: the data page if valid; diff: the newest used log page of the block if the page has log
// records (which of the block's log pages hold them takes reading them to tell).
LpnLocation IplStore::locate(Lpn lpn) const {
  LpnLocation loc;
  if (lpn >= lpns_.size()) return loc;
  const LpnState& st = lpns_[lpn];
  const LBlock& lb = lblocks_[lbn_of(lpn)];
  loc.trim_pending = st.trim_pending;
  if (!st.mapped || lb.block == kNoBlock) return loc;
  if (st.slot == Slot::kData) loc.base = data_ppa(lb.block, slot_of(lpn));
  // (With NVM the log sectors are in no flash page.)
  if (st.has_log && lb.used_sectors > 0 && !nvm_)
    loc.diff = log_ppa(lb.block, lb.used_sectors - 1);
  return loc;
}

BlockInfo IplStore::block_info(uint32_t block) const {
  BlockInfo bi;
  if (block >= geo_.blocks) return bi;
  bi.erase_count = nand_.erase_count(block);
  if (block < kSuperblockBlocks) return bi;
  const uint32_t lbn = owner_[block];
  if (lbn == kNoBlock) {
    bi.state = bad_[block] ? BlockInfo::kBad : BlockInfo::kFree;
    return bi;
  }
  if (lbn == kCommitOwner) {  // the commit log: its newest record is the one that counts
    bi.state = commit_used_ < log_sectors_per_block() ? BlockInfo::kOpen : BlockInfo::kFull;
    bi.valid_pages = 1;
    return bi;
  }
  if (lbn == kKeptOwner) {  // a committed version kept until the open group commits
    bi.state = BlockInfo::kFull;
    for (const auto& [l, k] : kept_)
      if (k.block == block)
        for (const Slot s : k.slots) bi.valid_pages += s == Slot::kData ? 1 : 0;
    return bi;
  }
  const LBlock& lb = lblocks_[lbn];
  // Open while a first write or a log sector can still be programmed into it.
  bi.state = lb.used_sectors < log_sectors_per_block() ? BlockInfo::kOpen : BlockInfo::kFull;
  for (uint32_t s = 0; s < lpns_in(lbn); s++) {
    const LpnState& st = lpns_[first_lpn(lbn) + s];
    if (st.slot == Slot::kData && st.mapped) bi.valid_pages++;
    if (st.slot == Slot::kErased && log_sectors_per_block() == 0) bi.state = BlockInfo::kOpen;
  }
  bi.valid_pages += used_log_pages(lb);
  return bi;
}

}  // namespace pdl
