// ipl_nvm_log.cc — IplStore's log areas and commit records in NVM ([IPL-PCRAM] §3.2; the
// layout is in ipl_nvm.h): writing a log sector, reading a block's used sectors, the commit
// record, format's clearing, and check()'s verification of the areas against RAM.
//
// Invariant: the slots below a logical block's used_sectors that are not in its garbage list
// were written in its block's current life and decode as sectors of that logical block; a
// garbage slot (not valid at mount: torn, or a stale sector of an earlier life) is never
// decoded — it reads as an erased sector.
#include <algorithm>
#include <string>

#include "flash/ipl/ipl_nvm.h"
#include "flash/ipl/ipl_store.h"
#include "flash/store/reread.h"

namespace pdl {

uint64_t IplStore::nvm_sector_off(uint32_t block, uint32_t sector) const {
  return nvm_area_offset(block, params_.log_region) + uint64_t(sector) * log_sector_;
}

Status IplStore::write_nvm_sector(uint32_t block, uint32_t sector) {
  return nvm_write_with_retries(nand_, nvm_sector_off(block, sector), sector_buf_);
}

// The two slots alternate, so a torn record leaves the previous one whole.
Status IplStore::write_nvm_commit(uint64_t seq) {
  uint8_t rec[kNvmCommitSlot];
  nvm_commit_encode(seq, rec);
  const uint32_t slot = nvm_commit_slot_;
  PDL_TRY(nvm_write_with_retries(nand_, uint64_t(slot) * kNvmCommitSlot, rec));
  nvm_commit_slot_ = slot ^ 1;
  return Status::ok();
}

// One read of the used part of the area (the paper: fetched while the data page is read).
// A used slot outside `garbage` that does not decode as this block's sector is NVM damage the
// store did not make: kCorrupt rather than a silently skipped write.
Status IplStore::read_nvm_log(uint32_t block, uint32_t used, const std::vector<uint32_t>& garbage) {
  if (used == 0) return Status::ok();
  const std::span<uint8_t> dst = std::span<uint8_t>(log_buf_).first(size_t(used) * log_sector_);
  PDL_TRY(nvm_read_with_retries(nand_, nvm_sector_off(block, 0), dst));
  const uint32_t lbn = owner_[block] < lblocks_.size() ? owner_[block] : kNoBlock;
  for (uint32_t i = 0; i < used; i++) {
    const std::span<uint8_t> sec = dst.subspan(size_t(i) * log_sector_, log_sector_);
    if (std::find(garbage.begin(), garbage.end(), i) != garbage.end()) {
      std::fill(sec.begin(), sec.end(), 0xFF);
      continue;
    }
    SectorHeader h;
    std::span<const uint8_t> payload;
    if (sector_decode(sec, &h, &payload) != SectorState::kValid ||
        (lbn != kNoBlock && h.lbn != lbn))
      return Status::error(Errc::kCorrupt, "NVM log sector " + std::to_string(i) + " of block " +
                                               std::to_string(block) + " fails its checks");
  }
  return Status::ok();
}

Status IplStore::clear_nvm() {
  std::vector<uint8_t> zeros(std::min<uint32_t>(params_.nvm_bytes, 64 * 1024), 0);
  for (uint64_t off = 0; off < params_.nvm_bytes; off += zeros.size()) {
    const size_t n = size_t(std::min<uint64_t>(zeros.size(), params_.nvm_bytes - off));
    PDL_TRY(nvm_write_with_retries(nand_, off, std::span<const uint8_t>(zeros).first(n)));
  }
  nvm_commit_slot_ = 0;
  // The NVM's stamp, in either commit mode: a mount refuses an NVM without a valid record.
  return write_nvm_commit(0);
}

Status IplStore::check_nvm() const {
  std::vector<uint8_t> area(size_t(log_sectors_) * log_sector_);
  for (uint32_t lbn = 0; lbn < lblocks_.size(); lbn++) {
    const LBlock& lb = lblocks_[lbn];
    if (lb.block == kNoBlock || lb.used_sectors == 0) continue;
    const std::span<uint8_t> dst = std::span<uint8_t>(area).first(size_t(lb.used_sectors) * log_sector_);
    PDL_TRY(nvm_read_with_retries(nand_, nvm_sector_off(lb.block, 0), dst));
    for (uint32_t i = 0; i < lb.used_sectors; i++) {
      if (std::find(lb.garbage.begin(), lb.garbage.end(), i) != lb.garbage.end()) continue;
      SectorHeader h;
      std::span<const uint8_t> payload;
      if (sector_decode(dst.subspan(size_t(i) * log_sector_, log_sector_), &h, &payload) !=
              SectorState::kValid ||
          h.lbn != lbn)
        return Status::error(Errc::kCorrupt,
                             "ipl check: NVM log sector " + std::to_string(i) + " of block " +
                                 std::to_string(lb.block) + " (logical block " +
                                 std::to_string(lbn) + ") is not a valid sector of it");
    }
  }
  return Status::ok();
}

}  // namespace pdl
