// reread.h — reading through transient bit errors, and the engine's view of device errors.
//
// Read disturb and retention errors can exceed a chip's ECC on one read and not on the next
// (real NAND has read-retry for that), and an ECC can miscorrect, handing back wrong bytes as
// good ones — only the engine's CRCs catch those. So the engine reads a page again, up to
// kReadAttempts reads in all, while the device reports an uncorrectable error or the caller's
// check of the bytes fails. What never passes is reported: a run-time read fails with
// kCorrupt (never wrong bytes); at mount, a page the device keeps refusing fails the mount
// (it may hold the only copy of something), while one that reads but keeps failing its CRC is
// torn, as before. A torn page fails every attempt, so each one costs kReadAttempts - 1 extra
// reads at mount — only after a crash, and only for the few pages it tore.
//
// Device errors (kIoError: the bus, the controller or the host failed the operation) are
// treated by what the operation is. A read changes nothing: it is retried like an
// uncorrectable one, and a run-time read that never succeeds fails without poisoning the
// store. An erase is idempotent: retried (erase_with_retries); an erase that keeps failing
// so is the device's failure, not the block's — the error goes up and nothing is marked bad.
// A program that did not complete is a failed program (program_failed), as a NAND's
// program-status failure is (MTD reports both as EIO): what it left is garbage, the data
// goes elsewhere and the block leaves service once its valid pages are moved. A device that
// is gone fails every attempt, and the engine stops with the error (nothing is marked bad
// on the media while it cannot be written; a remount starts afresh).
// NVM beside the chip (Nand::nvm_read/nvm_write) has no pages to go elsewhere to: a read
// changes nothing and a write puts the same bytes at the same offset however often it runs
// (what an incomplete one left, the next overwrites), so both are retried while the device
// reports kIoError (nvm_read_with_retries, nvm_write_with_retries); one that keeps failing, or
// a device that is gone, goes up and the engine stops with it.
#pragma once

#include <span>

#include "flash/device/nand.h"

namespace pdl {

inline constexpr int kReadAttempts = 4;
inline constexpr int kEraseAttempts = 4;

// The device did not complete a program: its status failed (kBadBlock) or the operation was
// lost on the way (kIoError). Either way the page holds garbage and its block is suspect.
inline bool program_failed(const Status& st) {
  return st.is(Errc::kBadBlock) || st.is(Errc::kIoError);
}
// The same, as the status the engine's program paths act on: kBadBlock (the message kept).
inline Status as_program_status(Status st) {
  if (st.is(Errc::kIoError)) return Status::error(Errc::kBadBlock, st.message());
  return st;
}

// Scrub: the last read succeeded, but its ECC corrected at least 3/4 of what it can in one
// sector (MTD's default bitflip_threshold, where its reads return -EUCLEAN): the block's
// cells are losing charge, so its valid data should move before the errors outgrow the ECC.
inline bool read_needs_scrub(const Nand& nand) {
  const uint32_t t = nand.ecc_strength();
  return t > 0 && nand.last_read_flips() >= (3 * t + 3) / 4;
}

// Erase `block`, again while the device reports an I/O error (kBadBlock: the block failed).
inline Status erase_with_retries(Nand& nand, uint32_t block) {
  Status st;
  for (int i = 0; i < kEraseAttempts; i++) {
    st = nand.erase(block);
    if (!st.is(Errc::kIoError)) return st;
  }
  return st;
}

// Read `ppa` until `check()` (which looks at the caller's buffers) accepts it. Returns:
// Ok with *passed = true — accepted; Ok with *passed = false — read, but never accepted;
// kCorrupt or kIoError — the last attempt failed so; any other device error at once.
template <class Check>
Status read_with_retries(Nand& nand, Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare,
                         Check check, bool* passed) {
  *passed = false;
  Status st;
  for (int i = 0; i < kReadAttempts; i++) {
    st = nand.read(ppa, data, spare);
    if (st.is_ok() && check()) {
      *passed = true;
      return st;
    }
    if (!st.is_ok() && !st.is(Errc::kCorrupt) && !st.is(Errc::kIoError)) return st;
  }
  return st;
}

// Without a check: retries failed reads only.
inline Status read_with_retries(Nand& nand, Ppa ppa, std::span<uint8_t> data,
                                std::span<uint8_t> spare) {
  bool passed;
  return read_with_retries(nand, ppa, data, spare, [] { return true; }, &passed);
}

inline constexpr int kNvmAttempts = 4;

// Read NVM bytes [off, off + out.size()), again while the device reports an I/O error.
inline Status nvm_read_with_retries(Nand& nand, uint64_t off, std::span<uint8_t> out) {
  Status st;
  for (int i = 0; i < kNvmAttempts; i++) {
    st = nand.nvm_read(off, out);
    if (!st.is(Errc::kIoError)) return st;
  }
  return st;
}

// Write NVM bytes at `off`, again while the device reports an I/O error (idempotent).
inline Status nvm_write_with_retries(Nand& nand, uint64_t off, std::span<const uint8_t> in) {
  Status st;
  for (int i = 0; i < kNvmAttempts; i++) {
    st = nand.nvm_write(off, in);
    if (!st.is(Errc::kIoError)) return st;
  }
  return st;
}

}  // namespace pdl
