// hybrid_inspect.cc — HybridStore's inspection: check() (the tables recomputed and compared),
// locate() and block_info(). RAM only, no flash operation.
#include <string>

#include "flash/ftl/hybrid_store.h"

namespace pdl {

Status HybridStore::check() const {
  auto bad = [](const std::string& m) { return Status::error(Errc::kCorrupt, m); };
  std::vector<uint32_t> valid(blocks_.size(), 0), live(blocks_.size(), 0);
  for (Lpn l = 0; l < cur_.size(); l++) {
    if (cur_[l] == kNoPpa) {
      if (mapped_[l]) return bad("logical page " + std::to_string(l) + " mapped without a record");
      continue;
    }
    const uint32_t b = block_of(cur_[l]);
    if (b >= blocks_.size() || page_lpn_[cur_[l]] != l)
      return bad("logical page " + std::to_string(l) + ": page " + std::to_string(cur_[l]) +
                 " does not hold its record");
    const Role r = blocks_[b].role;
    if (r == Role::kFree || r == Role::kBad || r == Role::kReserved)
      return bad("logical page " + std::to_string(l) + " current in block " + std::to_string(b) +
                 ", which holds no data");
    if (r != Role::kRandom && blocks_[b].lbn != lbn_of(l))
      return bad("logical page " + std::to_string(l) + " current in block " + std::to_string(b) +
                 " of logical block " + std::to_string(blocks_[b].lbn));
    valid[b]++;
    live[b] += mapped_[l];
  }
  uint32_t free_n = 0, logs = 0, randoms = 0;
  for (uint32_t b = 0; b < blocks_.size(); b++) {
    const Block& blk = blocks_[b];
    if (blk.valid != valid[b] || blk.live != live[b])
      return bad("block " + std::to_string(b) + ": current records " + std::to_string(blk.valid) +
                 " (data " + std::to_string(blk.live) + "), recomputed " +
                 std::to_string(valid[b]) + " (" + std::to_string(live[b]) + ")");
    switch (blk.role) {
      case Role::kFree: free_n++; break;
      case Role::kData:
        if (blk.lbn >= data_.size() || data_[blk.lbn] != b)
          return bad("data block " + std::to_string(b) + " is not its logical block's");
        break;
      case Role::kLog:
        if (fast() ? seq_block_ != b : (blk.lbn >= log_.size() || log_[blk.lbn] != b))
          return bad("log block " + std::to_string(b) + " is not in the log map");
        logs++;
        break;
      case Role::kRandom: randoms++; break;
      case Role::kExtra:
        if (blk.lbn >= extras_.size() || !unsettled_.count(blk.lbn))
          return bad("block " + std::to_string(b) + " left by the mount is not to be merged");
        break;
      case Role::kReserved:
      case Role::kBad: break;
    }
  }
  for (uint32_t lbn = 0; lbn < data_.size(); lbn++) {
    if (data_[lbn] != kNone && (blocks_[data_[lbn]].role != Role::kData))
      return bad("logical block " + std::to_string(lbn) + ": data block has another role");
    if (log_[lbn] != kNone && (fast() || blocks_[log_[lbn]].role != Role::kLog))
      return bad("logical block " + std::to_string(lbn) + ": log block has another role");
  }
  if (free_n != free_.size())
    return bad("free queue holds " + std::to_string(free_.size()) + " blocks, " +
               std::to_string(free_n) + " are free");
  for (uint32_t b : free_)
    if (blocks_[b].role != Role::kFree) return bad("block " + std::to_string(b) + " queued free");
  if (randoms != random_.size()) return bad("random log list disagrees with the block roles");
  if (!fast() && logs != bast_logs_.size())
    return bad("log block count disagrees with the map");
  for (uint32_t b : bast_logs_)
    if (blocks_[b].role != Role::kLog)
      return bad("block " + std::to_string(b) + " listed as a log block");
  if (fast() && logs != (seq_block_ == kNone ? 0u : 1u))
    return bad("sequential log block disagrees with the block roles");
  return Status::ok();
}

LpnLocation HybridStore::locate(Lpn lpn) const {
  LpnLocation loc;
  if (lpn < cur_.size() && mapped_[lpn]) loc.base = cur_[lpn];
  return loc;
}

BlockInfo HybridStore::block_info(uint32_t block) const {
  BlockInfo bi;
  if (block >= blocks_.size()) return bi;
  const Block& blk = blocks_[block];
  switch (blk.role) {
    case Role::kFree: bi.state = BlockInfo::kFree; break;
    case Role::kReserved: bi.state = BlockInfo::kReserved; break;
    case Role::kBad: bi.state = BlockInfo::kBad; break;
    default: bi.state = writable(block) ? BlockInfo::kOpen : BlockInfo::kFull; break;
  }
  bi.valid_pages = blk.live;  // (trim records are kept by merges too, but hold no page)
  bi.erase_count = nand_.erase_count(block);
  return bi;
}

}  // namespace pdl
