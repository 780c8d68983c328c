// emulated_nand.h — a NAND chip emulated in RAM or in an image file: the project's test oracle.
//
// Like LittleFS's emubd, the emulator enforces the NAND rules of nand.h (program only 1->0,
// NOP, addresses), counts every operation, and adds seed 000 Table 1 times to a simulated clock.
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
  // opened O_RDONLY under a shared lock (several readers, no writer), and programs and erases
  // fail with kIoError.
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
};

}  // namespace pdl
