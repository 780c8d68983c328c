// fault_injector.h — the faults an emulated chip injects (emulated_nand.h lists them), as one
// object the emulator consults at every read, program, erase and bad-block mark.
//
// The emulator owns the media, the NAND rules and the counters; this object owns only the
// fault state and decides, per operation, whether and how it fails:
//   * power cuts: after k more mutating operations (programs and erases) the chip freezes;
//     the interrupted operation may be torn (admit_mutation, tear, tear_rng);
//   * failing blocks: grown bad blocks (fail_block, a scheduled failure fail_at, a marked or
//     worn-out block), whose programs and erases fail (block_fails, fail_rng);
//   * I/O errors: a window of operations that fail touching nothing (io_error_now);
//   * bit flips on reads: transient flips per ECC sector and weak blocks (read_flips);
//   * a full host file system (host_full().fails_now(); host_full_fault.h).
// Each is off by default. Invariant: every query that counts an operation (io_error_now,
// admit_mutation, host_full().fails_now()) is made once per operation of its kind, before the
// operation touches the media; the emulator skips the I/O-error and host-full queries while
// frozen.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "flash/common/status.h"
#include "flash/device/host_full_fault.h"
#include "flash/device/nand.h"

namespace pdl {

enum class Tear : uint8_t {
  kNone,        // the interrupted operation leaves no trace
  kPrefix,      // a random prefix of the interrupted program's bytes is programmed
  kRandomBits,  // a random subset of the interrupted program's 1->0 bit changes happens
};

class FaultInjector {
 public:
  explicit FaultInjector(uint32_t blocks) : failing_(blocks, 0) {}

  // ---- power cuts ----
  // Freeze the chip after `ops` more mutating operations (programs + erases). The next one is
  // torn per `tear` (seeded by `seed`) and fails; all later operations fail untouched.
  void cut_power_after(uint64_t ops, Tear tear = Tear::kNone, uint64_t seed = 0);
  // Power back on: operations work again (the media keeps whatever the cut left).
  void restore_power();
  bool frozen() const { return frozen_; }
  // Programs + erases performed since the chip object was created.
  uint64_t mutating_ops() const { return mutating_ops_; }
  // Counts a mutating op; returns false if the chip is (now) frozen. `*tear_this` is set when
  // this very operation is the interrupted one: it is then torn per tear(), drawing from
  // tear_rng().
  bool admit_mutation(bool* tear_this);
  Tear tear() const { return tear_; }
  std::mt19937_64& tear_rng() { return tear_rng_; }

  // ---- failing blocks (grown bad) ----
  // The `n`-th mutating operation from now (0 = the next) fails with kBadBlock, and its block
  // fails every later program and erase.
  void fail_at(uint64_t n, uint64_t seed = 0);
  enum class FailOn : uint8_t { kBoth = 1, kProgram = 2, kErase = 3 };
  // Make `block` fail every later program and erase from now on, or only its programs, or
  // only its erases (a block out of range is ignored).
  void fail_block(uint32_t block, FailOn on = FailOn::kBoth);
  // Whether a program (or an erase) of `block` fails now; a failure leaves a random part of
  // the operation, drawn from fail_rng().
  bool block_fails(uint32_t block, bool program);
  std::mt19937_64& fail_rng() { return fail_rng_; }

  // ---- I/O errors ----
  // Operations n..n+count-1 from now (0 = the next; reads, programs, erases and mark_bad all
  // count) fail with kIoError, touching nothing. clear_io_errors() ends the window early.
  void io_errors_at(uint64_t n, uint64_t count = 1);
  void clear_io_errors() { io_error_end_ = io_error_start_ = 0; }
  // Counts an operation; true if it is to fail with an injected I/O error.
  bool io_error_now();
  uint64_t operations() const { return ops_; }  // all operations since creation
  uint64_t io_errors_injected() const { return io_errors_; }

  // ---- bit flips on reads ----
  struct BitFlips {
    double sector_rate = 0;     // probability that one ECC sector of a read carries flips
    uint32_t min_flips = 1;     // flips in such a sector, uniform in [min_flips, max_flips]
    uint32_t max_flips = 1;
    uint32_t ecc_strength = 4;  // t: flips per sector the ECC corrects
    uint32_t sector_bytes = 512;
    bool miscorrect = false;    // beyond t: wrong bytes and Ok instead of kCorrupt
    uint64_t seed = 1;
  };
  void set_bit_flips(const BitFlips& f);
  // Reads of `block` carry `flips` bit flips per ECC sector until the block is erased.
  void set_weak(uint32_t block, uint32_t flips);
  // The flips of one read of page `ppa` in `block` (data and spare as read): corrected ones
  // are counted in *ctr (weak-block ones only while `counting`), uncorrectable ones flip the
  // returned bytes and give kCorrupt (unless miscorrecting). Sets last_read_flips().
  Status read_flips(Ppa ppa, uint32_t block, std::span<uint8_t> data, std::span<uint8_t> spare,
                    bool counting, NandCounters* ctr);
  // `block` was erased: a weak block's cells hold their charge again.
  void erased(uint32_t block) {
    if (!weak_.empty()) weak_[block] = 0;
  }
  uint32_t ecc_strength() const { return flips_.ecc_strength; }
  uint32_t last_read_flips() const { return last_read_flips_; }

  // ---- a full host file system ----
  HostFullFault& host_full() { return host_full_; }
  const HostFullFault& host_full() const { return host_full_; }

 private:
  void flip_bits(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare, Status* st,
                 NandCounters* ctr);

  uint64_t mutating_ops_ = 0;
  bool cut_armed_ = false;
  uint64_t cut_at_ = 0;  // mutating_ops_ value of the interrupted operation
  Tear tear_ = Tear::kNone;
  std::mt19937_64 tear_rng_;
  bool frozen_ = false;

  BitFlips flips_;
  std::mt19937_64 flip_rng_;
  std::vector<uint8_t> failing_;  // per block: 0, or a FailOn (grown bad)
  bool fail_armed_ = false;
  bool fail_next_ = false;  // the operation being admitted is the scheduled failure
  uint64_t fail_at_ = 0;  // mutating_ops_ value of the scheduled failure
  std::mt19937_64 fail_rng_;
  uint64_t ops_ = 0;
  uint64_t io_error_start_ = 0, io_error_end_ = 0;  // ops_ values [start, end) fail
  uint64_t io_errors_ = 0;
  HostFullFault host_full_;
  std::vector<uint32_t> weak_;    // per block: flips per sector of every read (0: none)
  uint32_t last_read_flips_ = 0;  // most flips corrected in one sector of the last read
};

}  // namespace pdl
