// mtd_nand.h — a raw NAND chip through Linux MTD (/dev/mtdN): the Nand interface on real flash.
//
// The device tells its shape (MEMGETINFO, and sysfs for what that lacks: the spare bytes free
// of ECC, the ECC strength); the engine then runs on it exactly as on the emulator:
//   * geometry: page_data = writesize, pages_per_block = erasesize / writesize, blocks = the
//     device's (or fewer: MtdOptions::max_blocks), page_spare = the OOB bytes the ECC leaves
//     free (sysfs `oobavail`): every spare access is MTD_OPS_AUTO_OOB, so the engine's spare
//     bytes are the free ones and the kernel keeps the ECC bytes;
//   * read = MEMREAD (data and spare in one operation, with the read's ECC statistics): flips
//     the ECC corrected are counted and reported (last_read_flips: the most in one ECC step,
//     MTD's max_bitflips); an uncorrectable read (EBADMSG) is kCorrupt. Kernels before 6.1
//     have no MEMREAD: then (or with MtdOptions::pread_reads) the data is read with pread and
//     the spare with MEMREADOOB64, which returns the raw OOB — the free bytes are picked out
//     by the layout ECCGETLAYOUT gives — and the ECC outcome is the change of ECCGETSTATS
//     across the read (pread itself returns data even when it is uncorrectable); the
//     corrected flips of the page stand for last_read_flips (an upper bound: scrubs early);
//   * program = MEMWRITE (data and spare in one operation). MTD programs whole pages: a
//     partial program (data at an offset, or the spare alone) sends 0xFF everywhere else,
//     which leaves those bits as they are — and, with an ECC whose code of erased bytes is all
//     ones (Linux's software Hamming and BCH are), their ECC bytes too. A failed program (EIO:
//     the chip's status said fail) is kBadBlock. Kernels before 3.2 have no MEMWRITE: then (or
//     with MtdOptions::pwrite_programs) the data is programmed with pwrite and the spare with
//     MEMWRITEOOB64 (raw OOB: the free bytes placed by ECCGETLAYOUT, 0xFF elsewhere), data
//     first — two programs of the page when a program has both, each counted against the
//     NOP (pdl's methods use at most 3 of a page's 4 that way: PDL and OPU a page then its
//     obsolete mark, IPL 4 spare-less log sectors). A cut between the two leaves data with a
//     blank spare, a tear the engine's recovery already reads as garbage;
//   * erase = MEMERASE64 (MEMERASE on kernels without it); EIO is kBadBlock;
//   * bad blocks = MEMGETBADBLOCK / MEMSETBADBLOCK (the kernel's own marker and table).
// The NAND rules of nand.h are checked where that costs no I/O: addresses, and programs per
// page between erases (the chip's programs, counted in memory since open; the counters count
// the engine's programs, as the emulator does). "Only 1 -> 0" is the chip's physics;
// a program breaking it leaves wrong bytes that the engine's CRCs catch.
// Time: `sim_us` holds the real time spent in the device's ioctls (there is nothing to
// simulate); erase counts are the ones since open (MTD keeps none).
// NVM: a raw chip has none of its own; attach_nvm() gives it one in an NVM file through
// libpmem (nvm_file.h, URI key nvm_path=). Its accesses are checked and counted as the
// emulator's are (check_nvm, count_nvm), timed by Geometry's PCRAM model ([IPL-PCRAM] Table 1),
// since the file has no PCRAM timing of its own.
//
// The device is locked (flock) while open: exclusively, or shared when read-only; a
// conflicting opener gets kBusy. Thread-safety: none.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flash/device/counting_nand.h"
#include "flash/device/nvm_media.h"

namespace pdl {

struct MtdOptions {
  bool read_only = false;         // O_RDONLY, shared lock; programs and erases fail (kReadOnly)
  uint32_t max_blocks = 0;        // use only the first N erase blocks (0 = all)
  uint32_t partial_programs = 0;  // NOP the engine may rely on (0 = 4: MTD cannot tell)
  bool pread_reads = false;       // read as on kernels without MEMREAD (tests; also by env
                                  // PDL_MTD_READS=pread)
  bool pwrite_programs = false;   // program as on kernels without MEMWRITE (tests; also by
                                  // env PDL_MTD_WRITES=pwrite)
};

// What the device reports, for `pdl info` and the tests.
struct MtdInfo {
  std::string path;
  std::string name;             // sysfs name ("NAND simulator partition 0")
  uint8_t type = 0;             // MTD_NANDFLASH, MTD_MLCNANDFLASH
  uint64_t size = 0;            // bytes of data area in the whole device
  uint32_t erasesize = 0, writesize = 0, oobsize = 0, oobavail = 0, subpagesize = 0;
  uint32_t ecc_strength = 0, ecc_step_size = 0, bitflip_threshold = 0;
};

class MtdNand final : public CountingNand {
 public:
  ~MtdNand() override;

  // Open `path` (a /dev/mtdN character device). Clear errors: not a character device, not an
  // MTD device, not NAND (NOR, RAM, ...), a geometry the engine cannot use (kInvalidArgument),
  // locked by another process (kBusy), no permission (kIoError naming errno).
  static Status open(const std::string& path, const MtdOptions& opts,
                     std::unique_ptr<MtdNand>* out);
  // True if `path` names an MTD character device (stat only; nothing is opened).
  static bool is_mtd_path(const std::string& path);

  const MtdInfo& info() const { return info_; }
  // Use only the first `blocks` erase blocks from now on (8 .. the device's); false if not.
  bool limit_blocks(uint32_t blocks);
  const Geometry& geometry() const override { return geo_; }
  // "mtd /dev/mtd0 (NAND simulator partition 0, SLC NAND, ECC 1 bit per 256 B): reads
  // MEMREAD, programs MEMWRITE" — the interface in use, fallbacks included.
  std::string device() const override;
  Status read(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare) override;
  Status program(Ppa ppa, std::span<const uint8_t> data, std::span<const uint8_t> spare,
                 uint32_t data_off = 0, uint32_t spare_off = 0) override;
  Status erase(uint32_t block) override;
  uint32_t erase_count(uint32_t block) const override;
  Status mark_bad(uint32_t block) override;
  bool is_bad(uint32_t block) override;
  uint32_t ecc_strength() const override { return info_.ecc_strength; }
  uint32_t last_read_flips() const override { return last_flips_; }
  // Use `nvm` (its whole size: Geometry::nvm_bytes) as the NVM beside the chip.
  void attach_nvm(std::unique_ptr<detail::NvmMedia> nvm);
  Status nvm_read(uint64_t off, std::span<uint8_t> out) override;
  Status nvm_write(uint64_t off, std::span<const uint8_t> in) override;
  std::string nvm_place() const override;
  Status flush() override;

 private:
  MtdNand() = default;
  Status read_pread(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare);
  Status load_free_oob();
  Status use_pread_reads();
  Status use_pwrite_programs();
  int program_pwrite(uint64_t off, const uint8_t* data, const uint8_t* spare, size_t spare_len,
                     uint32_t* chip_programs);
  Status errno_status(const char* what, uint64_t offset, int err) const;
  void add_time(uint64_t t0_ns);

  int fd_ = -1;
  bool read_only_ = false;
  MtdInfo info_;
  Geometry geo_;
  uint32_t last_flips_ = 0;
  std::vector<uint8_t> programs_;   // the chip's, per page since its last erase (NOP)
  std::vector<uint32_t> erases_;    // per block since open
  std::vector<uint8_t> page_buf_, oob_buf_;
  bool pread_reads_ = false;
  bool pwrite_programs_ = false;
  std::vector<uint32_t> free_oob_;  // the fallbacks: raw OOB offset of each spare byte
  std::vector<uint8_t> raw_oob_;    // a raw OOB area (oobsize bytes), for MEMWRITEOOB64
  std::unique_ptr<detail::NvmMedia> nvm_;  // null without NVM
};

}  // namespace pdl
