// fault_injector.cc — the emulator's injected faults (fault_injector.h).
#include "flash/device/fault_injector.h"

#include <algorithm>
#include <string>

namespace pdl {

bool FaultInjector::admit_mutation(bool* tear_this) {
  *tear_this = false;
  if (frozen_) return false;
  mutating_ops_++;
  if (fail_armed_ && mutating_ops_ == fail_at_) {
    fail_armed_ = false;
    fail_next_ = true;  // the caller's block_fails() picks it up
  }
  if (cut_armed_ && mutating_ops_ == cut_at_) {
    frozen_ = true;
    cut_armed_ = false;
    *tear_this = true;
    return false;
  }
  return true;
}

void FaultInjector::cut_power_after(uint64_t ops, Tear tear, uint64_t seed) {
  cut_armed_ = true;
  cut_at_ = mutating_ops_ + ops + 1;
  tear_ = tear;
  tear_rng_.seed(seed);
}

void FaultInjector::set_weak(uint32_t block, uint32_t flips) {
  if (block >= failing_.size()) return;
  if (weak_.empty()) weak_.assign(failing_.size(), 0);
  weak_[block] = flips;
}

void FaultInjector::io_errors_at(uint64_t n, uint64_t count) {
  io_error_start_ = ops_ + n + 1;
  io_error_end_ = count > UINT64_MAX - io_error_start_ ? UINT64_MAX : io_error_start_ + count;
}

bool FaultInjector::io_error_now() {
  ops_++;
  if (ops_ < io_error_start_ || ops_ >= io_error_end_) return false;
  io_errors_++;
  return true;
}

void FaultInjector::restore_power() {
  frozen_ = false;
  cut_armed_ = false;
}

void FaultInjector::fail_at(uint64_t n, uint64_t seed) {
  fail_armed_ = true;
  fail_at_ = mutating_ops_ + n + 1;
  fail_rng_.seed(seed);
}

void FaultInjector::fail_block(uint32_t block, FailOn on) {
  if (block < failing_.size()) failing_[block] = uint8_t(on);
}

bool FaultInjector::block_fails(uint32_t block, bool program) {
  if (fail_next_) {
    fail_next_ = false;
    failing_[block] = uint8_t(FailOn::kBoth);
  }
  const auto on = FailOn(failing_[block]);
  return failing_[block] != 0 && (on == FailOn::kBoth || (on == FailOn::kProgram) == program);
}

void FaultInjector::set_bit_flips(const BitFlips& f) {
  flips_ = f;
  if (flips_.sector_bytes == 0) flips_.sector_bytes = 512;
  if (flips_.max_flips < flips_.min_flips) flips_.max_flips = flips_.min_flips;
  flip_rng_.seed(f.seed);
}

// Draw the flips of one read, sector by sector (the data area in sector_bytes pieces, the
// spare as one more): corrected ones are only counted; a sector beyond the ECC's strength
// gets its flips in the returned bytes and fails the read (unless `miscorrect`).
void FaultInjector::flip_bits(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare,
                              Status* st, NandCounters* ctr) {
  std::uniform_real_distribution<double> chance(0.0, 1.0);
  std::uniform_int_distribution<uint32_t> count(flips_.min_flips, flips_.max_flips);
  auto sector = [&](std::span<uint8_t> bytes) {
    if (bytes.empty() || chance(flip_rng_) >= flips_.sector_rate) return;
    const uint32_t n = count(flip_rng_);
    if (n <= flips_.ecc_strength) {
      ctr->ecc_corrected_bits += n;
      last_read_flips_ = std::max(last_read_flips_, n);
      return;
    }
    for (uint32_t i = 0; i < n; i++) {
      const uint64_t bit = flip_rng_() % (uint64_t(bytes.size()) * 8);
      bytes[bit / 8] ^= uint8_t(1u << (bit % 8));
    }
    ctr->ecc_uncorrectable++;
    if (!flips_.miscorrect && st->is_ok())
      *st = Status::error(Errc::kCorrupt, "uncorrectable ECC error reading page " +
                                              std::to_string(ppa) + " (" + std::to_string(n) +
                                              " bit flips in a sector)");
  };
  for (size_t at = 0; at < data.size(); at += flips_.sector_bytes)
    sector(data.subspan(at, std::min<size_t>(flips_.sector_bytes, data.size() - at)));
  sector(spare);
}

Status FaultInjector::read_flips(Ppa ppa, uint32_t block, std::span<uint8_t> data,
                                 std::span<uint8_t> spare, bool counting, NandCounters* ctr) {
  Status st;
  last_read_flips_ = 0;
  if (flips_.sector_rate > 0) flip_bits(ppa, data, spare, &st, ctr);
  if (!weak_.empty() && weak_[block] > 0) {
    const uint32_t n = weak_[block];
    const uint64_t sectors = (data.size() + flips_.sector_bytes - 1) / flips_.sector_bytes +
                             (spare.empty() ? 0 : 1);
    if (n <= flips_.ecc_strength) {
      if (counting) ctr->ecc_corrected_bits += n * sectors;
      last_read_flips_ = std::max(last_read_flips_, n);
    } else if (st.is_ok()) {
      if (counting) ctr->ecc_uncorrectable++;
      st = Status::error(Errc::kCorrupt, "uncorrectable ECC error reading page " +
                                             std::to_string(ppa) + " (a weak block)");
    }
  }
  if (!st.is_ok()) last_read_flips_ = 0;
  return st;
}

}  // namespace pdl
