// geometry.h — the shape and timing of a NAND chip: one documented config struct.
//
// Like LittleFS's lfs_config, zero means "default" for every field; resolve() fills the
// defaults and validate() checks the constraints. Defaults are [PDL] Table 1 (Samsung
// K9L8G08U0M MLC): 2048+64-byte pages, 64 pages per block, read 110 us, program 1010 us,
// erase 1500 us. Times are simulated: the emulator adds them to a counter, it never sleeps.
#pragma once

#include <cstdint>
#include <string>

#include "flash/common/status.h"

namespace pdl {

struct Geometry {
  uint32_t page_data = 0;        // bytes in a page's data area; default 2048; 512..32768, power of 2
  uint32_t page_spare = 0;       // bytes in a page's spare (OOB) area; default page_data/32; >= 32
  uint32_t pages_per_block = 0;  // pages in an erase block; default 64; 2..1024
  uint32_t blocks = 0;           // erase blocks in the chip; default 1024 (128 MiB); >= 8
  uint32_t partial_programs = 0; // NOP: programs allowed per page between erases; default 4
  uint32_t erase_limit = 0;      // erases a block endures (0 = unlimited)

  // Simulated operation times, microseconds ([PDL] Table 1 defaults).
  uint32_t read_us = 0;          // read one page (or only its spare): default 110
  uint32_t program_us = 0;       // program one page, or part of one: default 1010
  uint32_t erase_us = 0;         // erase one block: default 1500

  // Byte-addressable non-volatile memory beside the chip (PCRAM, MRAM, battery-backed SRAM): a
  // hybrid device as in [IPL-PCRAM] Fig. 1(b). 0 = none. The NVM is read and written through
  // Nand::nvm_read / nvm_write; its content persists with the chip (the image, or a companion
  // file). At most kMaxNvmBytes, a multiple of kNvmWord.
  uint32_t nvm_bytes = 0;
  // Simulated NVM times, nanoseconds ([IPL-PCRAM] Table 1, Samsung 90 nm PRAM): an access of n
  // bytes costs nvm_latency_ns + ceil(n / 32) x (per-32-byte time - nvm_latency_ns), so a
  // 32-byte read costs nvm_read_ns (default 206) and a 32-byte write nvm_write_ns (default
  // 7100); the initial latency defaults to 78.
  uint32_t nvm_latency_ns = 0;
  uint32_t nvm_read_ns = 0;
  uint32_t nvm_write_ns = 0;

  // Fill zero fields with defaults.
  Geometry resolved() const;
  // Check a resolved geometry; the message names the offending field.
  Status validate() const;

  // Simulated nanoseconds of an NVM read or write of `n` bytes (resolved geometry).
  uint64_t nvm_read_cost_ns(uint64_t n) const { return nvm_cost(n, nvm_read_ns); }
  uint64_t nvm_write_cost_ns(uint64_t n) const { return nvm_cost(n, nvm_write_ns); }

  uint32_t raw_page() const { return page_data + page_spare; }
  uint64_t total_pages() const { return uint64_t(blocks) * pages_per_block; }
  uint64_t data_bytes() const { return total_pages() * page_data; }
  std::string describe() const;  // "2048+64 B pages, 64 pages/block, 1024 blocks (128 MiB)"

 private:
  uint64_t nvm_cost(uint64_t n, uint32_t per32) const {
    return nvm_latency_ns + (n + 31) / 32 * (per32 - nvm_latency_ns);
  }
};

// NVM is written and torn (at a power cut) in 8-byte words; its size is a multiple of them.
inline constexpr uint32_t kNvmWord = 8;
inline constexpr uint32_t kMaxNvmBytes = 1u << 30;

// Physical page address: block * pages_per_block + page index. 32 bits cover 4 Gi pages.
using Ppa = uint32_t;
inline constexpr Ppa kNoPpa = 0xFFFFFFFFu;

}  // namespace pdl
