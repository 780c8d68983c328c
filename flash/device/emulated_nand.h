// emulated_nand.h — a NAND chip emulated in RAM or in an image file: the project's test oracle.
//
// Like LittleFS's emubd, the emulator enforces the NAND rules of nand.h (program only 1->0,
// NOP, addresses), counts every operation, and adds [PDL] Table 1 times to a simulated clock.
// It also injects power cuts: after k more mutating operations (programs and erases) the chip
// freezes, and every later operation fails with Errc::kPowerCut without touching the media —
// the interrupted operation itself may be torn (a prefix, or a random subset of its 1->0 bits,
// is applied; an erase leaves a random subset of pages erased). Tests then restore power and
// remount the same media, exactly as after a real cut.
//
// Storage: bytes are kept inverted (stored = ~flash), so an erased page is all zero bytes:
// RAM images are lazily-zeroed anonymous memory, and image files keep erased pages as holes —
// a 2 GiB chip costs nothing until written. Image file layout: docs/format.md §1.
//
// Media faults (docs/reliability.md's fault matrix; each off by default):
//   * bit flips on reads (set_bit_flips): each ECC sector read (the data area in sectors of
//     `sector_bytes`, the spare as one more) carries flips with a probability; up to the ECC
//     strength t they are corrected and counted, beyond it the read fails with kCorrupt — or,
//     with `miscorrect`, returns the wrong bytes as if fine (an ECC miscorrection: only the
//     engine's CRCs can catch it). Flips are transient: the media is never changed, so a
//     retry draws again (read disturb);
//   * stored bit flips (flip_stored_bit): a bit of the media changed for good, which the ECC
//     model above does not see (the spare area's own checks must);
//   * bad blocks: mark_bad() programs a block's bad-block marker (byte 0 of the spare of its
//     first page; read as set when at least 4 of its 8 bits are 0, so one flipped bit does
//     not change it), as a factory marks one, and makes the block fail; so do fail_block() and a
//     scheduled failure (fail_at: a "grown" bad block). Programs and erases of a failing block
//     fail with kBadBlock (except programming the marker itself): the program leaves a random
//     subset of its bits, the erase a random subset of pages erased. Failing is a property of
//     this object: a reopened image keeps the markers (the engine must honour them) but not
//     the failures — tests that reopen call fail_block() again;
//   * weak blocks (set_weak): every read of a page of the block has that many flips in each
//     ECC sector — retention errors that stay until the block is erased, the case scrubbing
//     is for (corrected up to t, and reported by last_read_flips(); beyond t uncorrectable);
//   * wear-out: Geometry::erase_limit, after which erases fail with kBadBlock;
//   * I/O errors (io_errors_at): the n-th operation from now of any kind (read, program,
//     erase, bad-block marking) and the count-1 after it fail with kIoError without touching
//     the media — a transient fault of the bus or controller (count 1), or a device that is
//     gone for a while (clear_io_errors() brings it back).
// Host faults (not the chip's): a program into an image file whose host file system is full
// (ENOSPC, EDQUOT) fails with Errc::kHostFull and touches nothing on the chip — host space for
// a block is reserved (fallocate) before the first write into it, so no page is ever half
// written for want of room; an erase never needs room (a block whose host space is not
// reserved is erased by punching a hole). host_full_after() injects the same deterministically
// (host_full_fault.h), for RAM chips too. Nothing is counted as a program failure or marks a
// block: the engine must not retire a block for it either.
// Per-page program counts (for NOP) live in memory only; reopening an image resets them, which
// can only make the emulator more permissive, never wrong about data.
//
// Image files are locked (flock) while open: exclusively for a writer, shared for read-only
// openers; a conflicting opener gets Errc::kBusy.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "flash/device/host_full_fault.h"
#include "flash/device/nand.h"

namespace pdl {

namespace detail {
class NandMedia;  // stored bytes of an emulated chip (RAM or image file)
}

enum class Tear : uint8_t {
  kNone,        // the interrupted operation leaves no trace
  kPrefix,      // a random prefix of the interrupted program's bytes is programmed
  kRandomBits,  // a random subset of the interrupted program's 1->0 bit changes happens
};

class EmulatedNand final : public Nand {
 public:
  ~EmulatedNand() override;

  // A fresh, fully erased chip in memory.
  static Status create_ram(const Geometry& g, std::unique_ptr<EmulatedNand>* out);
  // A fresh, fully erased chip in a new image file (an existing file is replaced).
  static Status create_file(const std::string& path, const Geometry& g,
                            std::unique_ptr<EmulatedNand>* out);
  // An existing image file; geometry and timing come from its header. Read-only: the file is
  // opened O_RDONLY under a shared lock (several readers, no writer), and programs, erases and
  // bad-block marks fail with kReadOnly, touching nothing. A writable open of a file the host
  // will not let this process write (read-only mount, no write permission) fails with
  // kReadOnly, so that the caller can open it read-only instead.
  static Status open_file(const std::string& path, std::unique_ptr<EmulatedNand>* out,
                          bool read_only = false);
  // True if `path` starts with the image magic (reads 8 bytes; never modifies the file).
  static bool is_image_file(const std::string& path);

  const Geometry& geometry() const override { return geo_; }
  Status read(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare) override;
  Status program(Ppa ppa, std::span<const uint8_t> data, std::span<const uint8_t> spare,
                 uint32_t data_off = 0, uint32_t spare_off = 0) override;
  Status erase(uint32_t block) override;
  const NandCounters& counters() const override { return ctr_; }
  void reset_counters() override { ctr_ = NandCounters{}; }
  void set_counting(bool on) override { counting_ = on; }
  uint32_t erase_count(uint32_t block) const override;

  // ---- fault injection ----
  // Freeze the chip after `ops` more mutating operations (programs + erases). The next one is
  // torn per `tear` (seeded by `seed`) and fails; all later operations fail untouched.
  void cut_power_after(uint64_t ops, Tear tear = Tear::kNone, uint64_t seed = 0);
  // Power back on: operations work again (the media keeps whatever the cut left).
  void restore_power();
  bool frozen() const { return frozen_; }
  // Programs + erases performed since the chip object was created.
  uint64_t mutating_ops() const { return mutating_ops_; }
  // A RAM copy of the current media (geometry, contents, erase counts); counters start at zero.
  std::unique_ptr<EmulatedNand> clone() const;
  // Flush an image file to the host (fsync). A no-op for RAM.
  Status flush() override;

  // ---- media faults (see the file comment) ----
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
  // Bad-block markers (nand.h): programming one bypasses NOP and the failure rules and is not
  // counted; is_bad() reads the marker only, as a real chip's would: a block failing but not
  // yet marked (grown bad, not yet noticed) is not bad until the engine marks it.
  Status mark_bad(uint32_t block) override;
  bool is_bad(uint32_t block) override;
  bool marked_bad(uint32_t block);  // the marker alone (reads one byte; not counted)
  // Flip one bit of the stored media for good (retention loss, a disturbed cell): `byte` is
  // an offset in the raw page (data area, then spare). Not an operation: nothing counts it,
  // power cuts and failures do not apply; later reads see the flipped bit every time.
  Status flip_stored_bit(Ppa ppa, uint32_t byte, uint32_t bit);
  // The `n`-th mutating operation from now (0 = the next) fails with kBadBlock, and its block
  // fails every later program and erase (until the object is destroyed; a reopened image
  // keeps only what the failure left on the media).
  void fail_at(uint64_t n, uint64_t seed = 0);
  // Make `block` fail every later program and erase from now on (a grown bad block), or only
  // its programs, or only its erases.
  enum class FailOn : uint8_t { kBoth = 1, kProgram = 2, kErase = 3 };
  void fail_block(uint32_t block, FailOn on = FailOn::kBoth);
  // Operations n..n+count-1 from now (0 = the next; reads, programs, erases and mark_bad all
  // count) fail with kIoError, touching nothing. clear_io_errors() ends the window early.
  void io_errors_at(uint64_t n, uint64_t count = 1);
  void clear_io_errors() { io_error_end_ = io_error_start_ = 0; }
  uint64_t operations() const { return ops_; }         // all operations since creation
  // Reads of `block` carry `flips` bit flips per ECC sector until the block is erased.
  void set_weak(uint32_t block, uint32_t flips);
  uint32_t ecc_strength() const override { return flips_.ecc_strength; }
  uint32_t last_read_flips() const override { return last_read_flips_; }
  uint64_t io_errors_injected() const { return io_errors_; }
  // Programs n, n+1, ... from now (0 = the next) fail with kHostFull, touching nothing, until
  // clear_host_full() (the host file system is full, then has room again).
  void host_full_after(uint64_t n) { host_full_.fail_after(n); }
  void clear_host_full() { host_full_.clear(); }
  uint64_t host_full_failures() const { return host_full_.failures(); }

 private:
  EmulatedNand(const Geometry& g, std::unique_ptr<detail::NandMedia> media);
  Status check_ppa(Ppa ppa) const;
  // Counts a mutating op; returns false if the chip is (now) frozen. `*tear_this` is set when
  // this very operation is the interrupted one.
  bool admit_mutation(bool* tear_this);

  Geometry geo_;
  std::unique_ptr<detail::NandMedia> media_;
  std::vector<uint8_t> nop_used_;  // programs per page since its block's last erase
  // Pages this process erased (or created erased) and has not programmed since: a program
  // need not read them first. Unknown (0) after an image is reopened.
  std::vector<uint8_t> known_erased_;
  std::vector<uint8_t> raw_scratch_;  // one raw page (data + spare) during a program or read
  NandCounters ctr_;
  bool read_only_ = false;
  bool counting_ = true;  // off: operations add nothing to ctr_ (mutating_ops_ still counts)
  uint64_t mutating_ops_ = 0;
  bool cut_armed_ = false;
  uint64_t cut_at_ = 0;  // mutating_ops_ value of the interrupted operation
  Tear tear_ = Tear::kNone;
  std::mt19937_64 tear_rng_;
  bool frozen_ = false;

  // Media faults.
  bool block_fails(uint32_t block, bool program);
  void flip_bits(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare, Status* st);
  BitFlips flips_;
  std::mt19937_64 flip_rng_;
  std::vector<uint8_t> failing_;  // per block: 0, or a FailOn (grown bad)
  bool fail_armed_ = false;
  bool fail_next_ = false;  // the operation being admitted is the scheduled failure
  uint64_t fail_at_ = 0;  // mutating_ops_ value of the scheduled failure
  std::mt19937_64 fail_rng_;
  // Counts an operation; true if it is to fail with an injected I/O error.
  bool io_error_now();
  uint64_t ops_ = 0;
  uint64_t io_error_start_ = 0, io_error_end_ = 0;  // ops_ values [start, end) fail
  uint64_t io_errors_ = 0;
  HostFullFault host_full_;
  std::string host_path_ = "the emulated chip's memory";  // the image file, for messages
  std::vector<uint32_t> weak_;    // per block: flips per sector of every read (0: none)
  uint32_t last_read_flips_ = 0;  // most flips corrected in one sector of the last read
};

}  // namespace pdl
