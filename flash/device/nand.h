// nand.h — the NAND device interface: read / program / erase with a spare area, plus counters.
//
// Everything above this layer speaks NAND verbs only; "write" exists only above the PageStore.
// Implementations: EmulatedNand (RAM or image file, the test oracle) and MtdNand (raw NAND
// through Linux MTD, docs/mtd.md).
//
// Rules every implementation enforces (violations return Errc::kNandRule, never silently):
//   * program may only change bits 1 -> 0 between erases;
//   * at most Geometry::partial_programs programs per page between erases (data and spare
//     programs each count one; a program touching both counts one);
//   * addresses must be in range.
// (MtdNand checks NOP and addresses; "only 1 -> 0" is the real chip's physics there, and a
// program breaking it leaves bytes the engine's CRCs reject.)
// Reads return what was programmed, or an error: bit flips within the ECC's strength are
// corrected (and counted), more make the read fail with Errc::kCorrupt ("uncorrectable"; a
// retry may succeed: read disturb is transient). A program or erase the chip reports as failed
// returns Errc::kBadBlock: the block is unreliable and must be retired (its spare byte 0, the
// bad-block marker, is the only thing still worth programming). Byte 0 of the spare of a
// block's first page is 0xFF on a good block; anything else marks it bad (factory or grown).
//
// Thread-safety: none. One owner drives a device.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flash/common/status.h"
#include "flash/device/geometry.h"

namespace pdl {

// Operation counters. Reading them costs nothing; they are the project's performance truth.
struct NandCounters {
  uint64_t page_reads = 0;        // reads that returned the data area (with or without spare)
  uint64_t spare_reads = 0;       // reads of the spare area alone
  uint64_t programs = 0;          // program operations (full or partial)
  uint64_t erases = 0;            // block erases
  uint64_t bytes_read = 0;        // data + spare bytes returned
  uint64_t bytes_programmed = 0;  // data + spare bytes handed to program
  uint64_t sim_us = 0;            // simulated device time, microseconds (NVM time included)
  // NVM beside the chip (Geometry::nvm_bytes): accesses, bytes, and their simulated time in ns
  // (sim_us includes it: whole microseconds of the running total are added as they accrue).
  uint64_t nvm_reads = 0;
  uint64_t nvm_writes = 0;
  uint64_t nvm_bytes_read = 0;
  uint64_t nvm_bytes_written = 0;
  uint64_t nvm_ns = 0;
  // Media faults (reliability, not cost: no simulated time of their own).
  uint64_t ecc_corrected_bits = 0;  // bit flips the ECC corrected in reads
  uint64_t ecc_uncorrectable = 0;   // reads that failed with more flips than the ECC corrects
  uint64_t program_failures = 0;    // programs the chip reported as failed (bad block)
  uint64_t erase_failures = 0;      // erases the chip reported as failed (bad or worn block)

  NandCounters operator-(const NandCounters& o) const {
    return {page_reads - o.page_reads,
            spare_reads - o.spare_reads,
            programs - o.programs,
            erases - o.erases,
            bytes_read - o.bytes_read,
            bytes_programmed - o.bytes_programmed,
            sim_us - o.sim_us,
            nvm_reads - o.nvm_reads,
            nvm_writes - o.nvm_writes,
            nvm_bytes_read - o.nvm_bytes_read,
            nvm_bytes_written - o.nvm_bytes_written,
            nvm_ns - o.nvm_ns,
            ecc_corrected_bits - o.ecc_corrected_bits,
            ecc_uncorrectable - o.ecc_uncorrectable,
            program_failures - o.program_failures,
            erase_failures - o.erase_failures};
  }
};

class Nand {
 public:
  virtual ~Nand() = default;
  Nand() = default;
  Nand(const Nand&) = delete;
  Nand& operator=(const Nand&) = delete;

  virtual const Geometry& geometry() const = 0;
  // What the chip is, for reports (PRAGMA pdl_stats "device", `pdl info`).
  virtual std::string device() const { return "emulated"; }

  // Read page `ppa`. `data` is empty or exactly page_data bytes; `spare` is empty or exactly
  // page_spare bytes. An empty data span reads only the spare (costs one read all the same:
  // tR dominates).
  virtual Status read(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare) = 0;

  // Program part of page `ppa`: `data` goes to data-area offset `data_off`, `spare` to spare
  // offset `spare_off`; either may be empty. One call = one program operation (one NOP; on
  // Linux MTD without MEMWRITE, one with both data and spare costs the chip two: mtd_nand.h).
  virtual Status program(Ppa ppa, std::span<const uint8_t> data, std::span<const uint8_t> spare,
                         uint32_t data_off = 0, uint32_t spare_off = 0) = 0;

  // Erase block `block`: every bit of its pages becomes 1.
  virtual Status erase(uint32_t block) = 0;

  // NVM beside the chip (Geometry::nvm_bytes; [IPL-PCRAM] Fig. 1(b)): byte-addressable and
  // persistent, no erase. nvm_write is durable when it returns; a power cut during it leaves
  // any subset of its 8-byte words written (the rest as they were) and fails with kPowerCut.
  // An access outside [0, nvm_bytes) is kNandRule; a device without NVM returns kUnsupported.
  // Counted in NandCounters::nvm_* and sim_us.
  virtual Status nvm_read(uint64_t off, std::span<uint8_t> out);
  virtual Status nvm_write(uint64_t off, std::span<const uint8_t> in);
  // Where the NVM's bytes are, for reports ("RAM", "image file PATH", "file PATH (persistent
  // memory, libpmem)"); "" without NVM.
  virtual std::string nvm_place() const { return ""; }

  // Make everything programmed so far durable on the host medium (fsync of an image file).
  // Devices that program synchronously do nothing. Costs no simulated time.
  virtual Status flush() { return Status::ok(); }

  virtual const NandCounters& counters() const = 0;
  virtual void reset_counters() = 0;
  // While off, operations work as usual but add nothing to counters() (instrumentation reads).
  virtual void set_counting(bool on) = 0;
  // Erases block `block` has endured over the chip's life (persisted by image files).
  virtual uint32_t erase_count(uint32_t block) const = 0;

  // Bad blocks (MTD: MEMSETBADBLOCK / MEMGETBADBLOCK). The default programs and reads the
  // marker through program()/read(): byte 0 of the spare of the block's first page.
  virtual Status mark_bad(uint32_t block);
  virtual bool is_bad(uint32_t block);

  // ECC (MTD: mtd_info.ecc_strength, and the max_bitflips of a read): the bit flips per ECC
  // sector the device corrects, and the most it corrected in one sector of the last read that
  // succeeded. A read near the strength is the sign to move a block's data before its errors
  // outgrow the ECC (scrub; reread.h). 0 if the device cannot tell.
  virtual uint32_t ecc_strength() const { return 0; }
  virtual uint32_t last_read_flips() const { return 0; }
};

}  // namespace pdl
