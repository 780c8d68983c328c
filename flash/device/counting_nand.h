// counting_nand.h — what every NAND driver shares: the operation counters (nand.h's
// NandCounters), switching them off for instrumentation reads, and the address rules.
//
// A driver derives from CountingNand, calls count_read / count_program / count_erase once per
// operation it performed (and count_time for the device time it took), and adds its fault
// counts (ecc_*, *_failures) to ctr_ directly.
// Invariant: while counting is off (set_counting(false)) count_* add nothing; the counters
// change only through them, the driver's fault counts and reset_counters().
// Thread-safety: none (nand.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "flash/device/nand.h"

namespace pdl {

class CountingNand : public Nand {
 public:
  const NandCounters& counters() const final { return ctr_; }
  void reset_counters() final { ctr_ = NandCounters{}; }
  void set_counting(bool on) final { counting_ = on; }

 protected:
  // A read that returned `data` bytes of the data area (0: a spare-only read) and `spare`.
  void count_read(size_t data, size_t spare, uint64_t us) {
    if (!counting_) return;
    if (data == 0) ctr_.spare_reads++; else ctr_.page_reads++;
    ctr_.bytes_read += data + spare;
    ctr_.sim_us += us;
  }
  void count_program(size_t bytes, uint64_t us) {
    if (!counting_) return;
    ctr_.programs++;
    ctr_.bytes_programmed += bytes;
    ctr_.sim_us += us;
  }
  void count_erase(uint64_t us) {
    if (!counting_) return;
    ctr_.erases++;
    ctr_.sim_us += us;
  }
  // An NVM access of `bytes` that took `ns` simulated nanoseconds: sim_us grows by the whole
  // microseconds the running NVM total crosses, so sums over many small accesses stay exact.
  void count_nvm(bool write, size_t bytes, uint64_t ns) {
    if (!counting_) return;
    if (write) {
      ctr_.nvm_writes++;
      ctr_.nvm_bytes_written += bytes;
    } else {
      ctr_.nvm_reads++;
      ctr_.nvm_bytes_read += bytes;
    }
    ctr_.sim_us += (nvm_ns_total_ + ns) / 1000 - nvm_ns_total_ / 1000;
    nvm_ns_total_ += ns;
    ctr_.nvm_ns += ns;
  }
  // The NVM range [off, off + n) lies within geometry().nvm_bytes (kNandRule naming it if not;
  // kUnsupported if the device has no NVM).
  Status check_nvm(uint64_t off, size_t n) const;
  void count_time(uint64_t us) {
    if (counting_) ctr_.sim_us += us;
  }
  // Addresses (nand.h): kNandRule naming the page or block.
  Status check_ppa(Ppa ppa) const;
  Status check_block(uint32_t block) const;

  NandCounters ctr_;
  bool counting_ = true;  // off: operations add nothing to ctr_
  uint64_t nvm_ns_total_ = 0;  // NVM ns counted since creation (count_nvm's carry)
};

}  // namespace pdl
