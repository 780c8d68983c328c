// host_full_fault.h — a full host file system, as a fault the emulator can inject.
//
// An emulated chip kept in an image file is sparse: a program into a page never written
// before needs new host blocks, and a host file system without room refuses them (ENOSPC,
// EDQUOT). The emulator reports that as Errc::kHostFull, having touched nothing on the chip
// (emulated_nand.h). This injector makes the same thing happen deterministically, for RAM
// chips as for image files: after `n` more programs succeed, every program fails so — a full
// disk stays full — until clear() (space was freed). Erases keep working (they free space).
//
// Invariant: fails_now() is consulted once per program, before it touches anything.
#pragma once

#include <cstdint>

namespace pdl {

class HostFullFault {
 public:
  // Programs n, n+1, ... from now (0 = the next) fail, until clear().
  void fail_after(uint64_t n) {
    armed_ = true;
    left_ = n;
  }
  void clear() { armed_ = false; }
  bool armed() const { return armed_; }
  // Counts one program; true if it is to fail with kHostFull.
  bool fails_now() {
    if (!armed_) return false;
    if (left_ > 0) {
      left_--;
      return false;
    }
    failures_++;
    return true;
  }
  uint64_t failures() const { return failures_; }  // programs refused so far

 private:
  bool armed_ = false;
  uint64_t left_ = 0;
  uint64_t failures_ = 0;
};

}  // namespace pdl
