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
// RAM images are lazily-zeroed anonymous memory (ram_media.cc), and image files keep erased
// pages as holes — a 2 GiB chip costs nothing until written (file_media.h: read and written
// through a shared mapping where that is safe, pread/pwrite elsewhere). Image file layout:
// docs/format.md §1. The NVM beside the chip (Geometry::nvm_bytes) is in RAM for a RAM chip;
// for an image, in its NVM area (format version 3, pread/pwrite) or in an NVM file of its own
// through libpmem (nvm_file.h), bound to the image by an identity in its header.
// Crash semantics of an image file (docs/reliability.md, "The image file and the host"): a
// simulated power cut behaves as described above; the host process killed (SIGKILL) leaves the
// image exactly as its last completed flash operation left it, or as the one in flight would
// have (each operation's final bytes go through the image's redo record, which the next open
// finishes); a host OS crash can lose anything written since the last flush(), in host pages,
// in any order; flush() is fsync, after which everything before it is durable on the host.
//
// The faults below are injected by a FaultInjector (fault_injector.h) that the emulator owns and
// consults at each read, program, erase and bad-block mark; the calls configuring them are
// kept here and forwarded to it.
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
// written for want of room; an erase needs no room (a block whose host space is not
// reserved is erased by punching a hole; file_media.h has the one exception). host_full_after() injects the same deterministically
// (host_full_fault.h), for RAM chips too. Nothing is counted as a program failure or marks a
// block: the engine must not retire a block for it either.
// Per-page program counts (for NOP) live in memory only; reopening an image resets them, which
// can only make the emulator more permissive, never wrong about data.
//
// Image files are locked (flock) while open: exclusively for a writer, shared for read-only
// openers; a conflicting opener gets Errc::kBusy.
// Thread-safety: none.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "flash/device/counting_nand.h"
#include "flash/device/fault_injector.h"
#include "flash/device/page_states.h"

namespace pdl {

// Where a new image file's NVM goes (Geometry::nvm_bytes > 0).
struct NvmPlacement {
  std::string path;  // "": in the image file's NVM area; else an NVM file (nvm_file.h)
  bool force = false;  // replace an existing file there whatever it is
  // The NVM identity of the image being reformatted: its NVM file may be replaced.
  std::optional<std::array<uint8_t, 16>> replaceable;
};

namespace detail {
class NandMedia;  // stored bytes of an emulated chip (RAM or image file)
class NvmMedia;   // stored bytes of the NVM beside it (nvm_media.h)
}

class EmulatedNand final : public CountingNand {
 public:
  ~EmulatedNand() override;

  // A fresh, fully erased chip in memory.
  static Status create_ram(const Geometry& g, std::unique_ptr<EmulatedNand>* out);
  // A fresh, fully erased chip in a new image file (an existing file is replaced). With NVM
  // (g.nvm_bytes > 0) the image is format version 3 and its NVM, zeroed, is in the image or,
  // with nvm.path, in an NVM file made there (nvm_file.h: an existing one is replaced only if
  // it is this store's, nvm.replaceable's, or with nvm.force; refused, the image made is
  // removed again); without, version 2.
  static Status create_file(const std::string& path, const Geometry& g,
                            std::unique_ptr<EmulatedNand>* out, const NvmPlacement& nvm = {});
  // An existing image file; geometry and timing come from its header. Read-only: the file is
  // opened O_RDONLY under a shared lock (several readers, no writer), and programs, erases and
  // bad-block marks fail with kReadOnly, touching nothing. A writable open of a file the host
  // will not let this process write (read-only mount, no write permission) fails with
  // kReadOnly, so that the caller can open it read-only instead.
  // An image whose NVM is in a file of its own needs `nvm_path` (checked: that file must be
  // this image's, of its size); one whose NVM is inside refuses a `nvm_path`, as does one
  // without NVM — each with an error naming the cause.
  static Status open_file(const std::string& path, std::unique_ptr<EmulatedNand>* out,
                          bool read_only = false, const std::string& nvm_path = "");
  // The NVM identity in the header of the image at `path` (version 3), or kNotFound.
  static Status nvm_identity(const std::string& path, std::array<uint8_t, 16>* id);
  // True if `path` starts with the image magic (reads 8 bytes; never modifies the file).
  static bool is_image_file(const std::string& path);
  // How an image file in directory `dir` is read and written by this process: "mapped (tmpfs)",
  // "mapped (ext4)", or "pread/pwrite (" the reason ")" (file_media.h) — for reports.
  static std::string host_io(const std::string& dir);

  const Geometry& geometry() const override { return geo_; }
  Status read(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare) override;
  Status program(Ppa ppa, std::span<const uint8_t> data, std::span<const uint8_t> spare,
                 uint32_t data_off = 0, uint32_t spare_off = 0) override;
  Status erase(uint32_t block) override;
  uint32_t erase_count(uint32_t block) const override;
  // The NVM beside the chip (Geometry::nvm_bytes; a RAM chip's is in RAM). A write counts as
  // a mutating operation for power cuts: the interrupted one keeps a random subset of its
  // 8-byte words (Tear::kNone: none; kPrefix: a prefix of them) and fails with kPowerCut.
  Status nvm_read(uint64_t off, std::span<uint8_t> out) override;
  Status nvm_write(uint64_t off, std::span<const uint8_t> in) override;
  std::string nvm_place() const override;

  // ---- fault injection (fault_injector.h; each call below is the injector's) ----
  void cut_power_after(uint64_t ops, Tear tear = Tear::kNone, uint64_t seed = 0) {
    faults_.cut_power_after(ops, tear, seed);
    clear_interrupted();
  }
  // The mutating operation the last power cut interrupted on this thread, on any emulated chip
  // (op kNone until one did; cut_power_after resets it), and the mutating operations this
  // thread asked of any emulated chip (programs, erases, NVM writes; the
  // interrupted one included, none while frozen): a crash campaign whose chips come and go
  // with its connections (pdl-crash) follows its cut through them and reports where it landed.
  struct Interrupted {
    enum class Op : uint8_t { kNone, kProgram, kErase, kNvmWrite };
    Op op = Op::kNone;
    uint64_t where = 0;          // the page (program), the block (erase), the offset (NVM)
    uint32_t spare_off = 0;      // a program's spare bytes, from this offset
    std::vector<uint8_t> spare;
  };
  static const Interrupted& thread_interrupted();
  static uint64_t thread_mutating_ops();
  void restore_power() { faults_.restore_power(); }
  bool frozen() const { return faults_.frozen(); }
  uint64_t mutating_ops() const { return faults_.mutating_ops(); }
  // A RAM copy of the current media (geometry, contents, erase counts); counters start at zero.
  std::unique_ptr<EmulatedNand> clone() const;
  // Flush an image file to the host (fsync: every earlier store, mapped or written, durable).
  // A no-op for RAM.
  Status flush() override;

  // ---- media faults (see the file comment) ----
  using BitFlips = FaultInjector::BitFlips;
  void set_bit_flips(const BitFlips& f) { faults_.set_bit_flips(f); }
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
  // The failures last until the object is destroyed; a reopened image keeps only what they
  // left on the media.
  void fail_at(uint64_t n, uint64_t seed = 0) { faults_.fail_at(n, seed); }
  using FailOn = FaultInjector::FailOn;
  void fail_block(uint32_t block, FailOn on = FailOn::kBoth) { faults_.fail_block(block, on); }
  void io_errors_at(uint64_t n, uint64_t count = 1) { faults_.io_errors_at(n, count); }
  void clear_io_errors() { faults_.clear_io_errors(); }
  uint64_t operations() const { return faults_.operations(); }
  void set_weak(uint32_t block, uint32_t flips) { faults_.set_weak(block, flips); }
  uint32_t ecc_strength() const override { return faults_.ecc_strength(); }
  uint32_t last_read_flips() const override { return faults_.last_read_flips(); }
  uint64_t io_errors_injected() const { return faults_.io_errors_injected(); }
  // Programs n, n+1, ... from now (0 = the next) fail with kHostFull, touching nothing, until
  // clear_host_full() (the host file system is full, then has room again).
  void host_full_after(uint64_t n) { faults_.host_full().fail_after(n); }
  void clear_host_full() { faults_.host_full().clear(); }
  uint64_t host_full_failures() const { return faults_.host_full().failures(); }

 private:
  EmulatedNand(const Geometry& g, std::unique_ptr<detail::NandMedia> media);

  Geometry geo_;
  std::unique_ptr<detail::NandMedia> media_;
  std::unique_ptr<detail::NvmMedia> nvm_;  // null when geo_.nvm_bytes == 0
  // Programs per page since its block's erase, and pages this process erased (or created
  // erased) and has not programmed since — a program need not read them first; unknown after
  // an image is reopened. Per touched block only (page_states.h).
  detail::PageStates pages_;
  std::vector<uint8_t> raw_scratch_;  // one raw page (data + spare) during a program or read
  bool read_only_ = false;
  static void clear_interrupted();
  // faults_.admit_mutation, counted in thread_mutating_ops.
  bool admit_mutation(bool* tear);
  FaultInjector faults_;  // (with counting off, its operation counts still count)
  std::string host_path_ = "the emulated chip's memory";  // the image file, for messages
};

}  // namespace pdl
