// mtd_nand.cc — MtdNand: the Nand interface over a Linux MTD character device (mtd_nand.h).
#include "flash/device/mtd_nand.h"

#include <fcntl.h>
#include <mtd/mtd-user.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

namespace pdl {

namespace {

constexpr unsigned kMtdCharMajor = 90;  // Documentation/admin-guide/devices.txt

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// A sysfs attribute of the device (/sys/dev/char/MAJ:MIN/<attr>), or `fallback`.
uint64_t sysfs_number(dev_t dev, const char* attr, uint64_t fallback) {
  const std::string p = "/sys/dev/char/" + std::to_string(major(dev)) + ":" +
                        std::to_string(minor(dev)) + "/" + attr;
  std::ifstream in(p);
  unsigned long long v = 0;
  if (in >> v) return v;
  return fallback;
}

std::string sysfs_text(dev_t dev, const char* attr) {
  std::ifstream in("/sys/dev/char/" + std::to_string(major(dev)) + ":" +
                   std::to_string(minor(dev)) + "/" + attr);
  std::string s;
  std::getline(in, s);
  return s;
}

// True if environment variable `name` is set to `value` (the tests' switches).
bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, value) == 0;
}

const char* type_name(uint8_t t) {
  switch (t) {
    case MTD_ABSENT: return "absent";
    case MTD_RAM: return "RAM";
    case MTD_ROM: return "ROM";
    case MTD_NORFLASH: return "NOR flash";
    case MTD_NANDFLASH: return "SLC NAND";
    case MTD_DATAFLASH: return "DataFlash";
    case MTD_UBIVOLUME: return "UBI volume";
    case MTD_MLCNANDFLASH: return "MLC NAND";
    default: return "unknown";
  }
}

}  // namespace

bool MtdNand::is_mtd_path(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode) &&
         major(st.st_rdev) == kMtdCharMajor;
}

MtdNand::~MtdNand() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

Status MtdNand::open(const std::string& path, const MtdOptions& opts,
                     std::unique_ptr<MtdNand>* out) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return Status::error(errno == ENOENT ? Errc::kNotFound : Errc::kIoError,
                         "cannot access " + path + ": " + strerror(errno));
  if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != kMtdCharMajor)
    return Status::error(Errc::kInvalidArgument,
                         path + " is not an MTD character device (/dev/mtdN, major " +
                             std::to_string(kMtdCharMajor) + ")");
  std::unique_ptr<MtdNand> n(new MtdNand());
  n->read_only_ = opts.read_only;
  n->fd_ = ::open(path.c_str(), (opts.read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
  if (n->fd_ < 0)
    return Status::error(Errc::kIoError, "cannot open " + path + ": " + strerror(errno) +
                                             (errno == EACCES && !opts.read_only
                                                  ? " (a read-only mtdNro node, or no permission)"
                                                  : ""));
  if (::flock(n->fd_, (opts.read_only ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0)
    return Status::error(errno == EWOULDBLOCK ? Errc::kBusy : Errc::kIoError,
                         path + ": " + (errno == EWOULDBLOCK ? "locked by another process"
                                                             : std::string(strerror(errno))));
  mtd_info_user mi;
  std::memset(&mi, 0, sizeof mi);
  if (::ioctl(n->fd_, MEMGETINFO, &mi) != 0)
    return Status::error(Errc::kInvalidArgument,
                         path + " does not answer MEMGETINFO (" + strerror(errno) +
                             "): not an MTD device");
  MtdInfo& in = n->info_;
  in.path = path;
  in.type = mi.type;
  in.size = mi.size;
  in.erasesize = mi.erasesize;
  in.writesize = mi.writesize;
  in.oobsize = mi.oobsize;
  in.subpagesize = mi.writesize;
  // sysfs has what MEMGETINFO lacks (older kernels have less of it; PDL_MTD_SYSFS=off makes
  // the tests do without, as on a kernel before 3.5).
  if (!env_is("PDL_MTD_SYSFS", "off")) {
    in.name = sysfs_text(st.st_rdev, "name");
    in.size = sysfs_number(st.st_rdev, "size", mi.size);  // MEMGETINFO's is 32 bits
    in.oobavail = uint32_t(sysfs_number(st.st_rdev, "oobavail", 0));  // Linux 4.7
    in.subpagesize = uint32_t(sysfs_number(st.st_rdev, "subpagesize", mi.writesize));
    in.ecc_strength = uint32_t(sysfs_number(st.st_rdev, "ecc_strength", 0));  // 3.5
    in.ecc_step_size = uint32_t(sysfs_number(st.st_rdev, "ecc_step_size", 0));
    in.bitflip_threshold = uint32_t(sysfs_number(st.st_rdev, "bitflip_threshold", 0));
  }
  if (mi.type != MTD_NANDFLASH && mi.type != MTD_MLCNANDFLASH)
    return Status::error(Errc::kInvalidArgument,
                         path + " is " + type_name(mi.type) +
                             ", not NAND: pdl needs pages with a spare (OOB) area");
  if (!opts.read_only && !(mi.flags & MTD_WRITEABLE))
    return Status::error(Errc::kReadOnly, path + " is a read-only MTD device");
  if (in.oobavail == 0) {  // before Linux 4.7: the deprecated ECCGETLAYOUT knows
    nand_ecclayout_user l;
    std::memset(&l, 0, sizeof l);
    if (::ioctl(n->fd_, ECCGETLAYOUT, &l) == 0) in.oobavail = l.oobavail;
  }
  if (in.oobavail == 0)
    return Status::error(Errc::kInvalidArgument,
                         path + ": the kernel reports no free OOB bytes (neither sysfs "
                                "oobavail nor ECCGETLAYOUT) or the ECC leaves none");
  Geometry g;
  g.page_data = mi.writesize;
  g.page_spare = in.oobavail;
  g.pages_per_block = mi.writesize ? mi.erasesize / mi.writesize : 0;
  const uint64_t blocks = mi.erasesize ? in.size / mi.erasesize : 0;
  g.blocks = uint32_t(std::min<uint64_t>(blocks, 0xFFFFFFFFu));
  if (opts.max_blocks && opts.max_blocks < g.blocks) g.blocks = opts.max_blocks;
  g.partial_programs = opts.partial_programs;
  g = g.resolved();
  if (Status v = g.validate(); !v.is_ok())
    return Status::error(Errc::kInvalidArgument,
                         path + " has a geometry pdl cannot use (" + g.describe() + "): " +
                             std::string(v.message()));
  n->geo_ = g;
  n->programs_.assign(g.total_pages(), 0);
  n->erases_.assign(g.blocks, 0);
  n->page_buf_.resize(g.page_data);
  n->oob_buf_.resize(std::max(g.page_spare, in.oobsize));
  if (opts.pread_reads || env_is("PDL_MTD_READS", "pread")) PDL_TRY(n->use_pread_reads());
  if (!opts.read_only && (opts.pwrite_programs || env_is("PDL_MTD_WRITES", "pwrite")))
    PDL_TRY(n->use_pwrite_programs());
  *out = std::move(n);
  return Status::ok();
}

std::string MtdNand::device() const {
  std::string ecc;
  if (info_.ecc_strength)
    ecc = ", ECC " + std::to_string(info_.ecc_strength) + " bit" +
          (info_.ecc_strength == 1 ? "" : "s") + " per " + std::to_string(info_.ecc_step_size) +
          " B";
  return "mtd " + info_.path + " (" + (info_.name.empty() ? "" : info_.name + ", ") +
         type_name(info_.type) + ecc +
         "): reads " + (pread_reads_ ? "pread + MEMREADOOB64" : "MEMREAD") + ", programs " +
         (read_only_ ? "none (read-only)"
                     : pwrite_programs_ ? "pwrite + MEMWRITEOOB64" : "MEMWRITE");
}

bool MtdNand::limit_blocks(uint32_t blocks) {
  const uint64_t device_blocks = info_.erasesize ? info_.size / info_.erasesize : 0;
  if (blocks < 8 || blocks > device_blocks) return false;
  geo_.blocks = blocks;
  programs_.assign(geo_.total_pages(), 0);
  erases_.resize(blocks, 0);
  return true;
}

Status MtdNand::errno_status(const char* what, uint64_t offset, int err) const {
  return Status::error(Errc::kIoError, std::string(what) + " at offset " + std::to_string(offset) +
                                           " of " + info_.path + ": " + strerror(err));
}

void MtdNand::add_time(uint64_t t0_ns) {
  count_time((now_ns() - t0_ns + 500) / 1000);
}

// The free OOB bytes, in AUTO_OOB order, for the fallbacks (kernels without MEMREAD or
// MEMWRITE), which see the raw OOB area.
Status MtdNand::load_free_oob() {
  if (!free_oob_.empty()) return Status::ok();
  nand_ecclayout_user l;
  std::memset(&l, 0, sizeof l);
  if (::ioctl(fd_, ECCGETLAYOUT, &l) != 0)
    return Status::error(Errc::kUnsupported,
                         info_.path + ": the kernel lacks MEMREAD (Linux 6.1) or MEMWRITE (3.2), "
                                      "and ECCGETLAYOUT, which the fallback needs, failed (" +
                                      strerror(errno) + ")");
  std::vector<uint32_t> free_oob;
  for (const nand_oobfree& f : l.oobfree)
    for (uint32_t i = 0; i < f.length && f.offset + i < info_.oobsize; i++)
      free_oob.push_back(f.offset + i);
  if (free_oob.size() < geo_.page_spare)
    return Status::error(Errc::kUnsupported,
                         info_.path + ": ECCGETLAYOUT names " + std::to_string(free_oob.size()) +
                             " free OOB bytes, sysfs oobavail " +
                             std::to_string(geo_.page_spare));
  free_oob_ = std::move(free_oob);
  raw_oob_.resize(info_.oobsize);
  return Status::ok();
}

Status MtdNand::use_pread_reads() {
  PDL_TRY(load_free_oob());
  pread_reads_ = true;
  return Status::ok();
}

Status MtdNand::use_pwrite_programs() {
  PDL_TRY(load_free_oob());
  pwrite_programs_ = true;
  return Status::ok();
}

Status MtdNand::read_pread(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare) {
  const uint64_t off = uint64_t(ppa) * geo_.page_data;
  mtd_ecc_stats before, after;
  if (::ioctl(fd_, ECCGETSTATS, &before) != 0) return errno_status("ECCGETSTATS", off, errno);
  if (!data.empty()) {
    const ssize_t n = ::pread(fd_, data.data(), data.size(), off_t(off));
    if (n != ssize_t(data.size()))
      return errno_status("read", off, n < 0 ? errno : EIO);
  }
  if (!spare.empty()) {
    mtd_oob_buf64 ob;
    std::memset(&ob, 0, sizeof ob);
    ob.start = off;
    ob.length = info_.oobsize;
    ob.usr_ptr = uint64_t(uintptr_t(oob_buf_.data()));
    if (::ioctl(fd_, MEMREADOOB64, &ob) != 0) return errno_status("MEMREADOOB64", off, errno);
    for (size_t i = 0; i < spare.size(); i++) spare[i] = oob_buf_[free_oob_[i]];
  }
  if (::ioctl(fd_, ECCGETSTATS, &after) != 0) return errno_status("ECCGETSTATS", off, errno);
  if (after.failed != before.failed) return Status::error(Errc::kCorrupt, "");
  last_flips_ = after.corrected - before.corrected;
  if (counting_) ctr_.ecc_corrected_bits += last_flips_;
  return Status::ok();
}

Status MtdNand::read(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare) {
  PDL_TRY(check_ppa(ppa));
  if ((!data.empty() && data.size() != geo_.page_data) ||
      (!spare.empty() && spare.size() != geo_.page_spare))
    return Status::error(Errc::kNandRule, "read of a partial page or spare");
  if (pread_reads_) {
    const uint64_t t0 = now_ns();
    last_flips_ = 0;
    Status st = read_pread(ppa, data, spare);
    add_time(t0);
    count_read(data.size(), spare.size(), 0);
    if (st.is(Errc::kCorrupt)) {
      if (counting_) ctr_.ecc_uncorrectable++;
      return Status::error(Errc::kCorrupt, "uncorrectable ECC error reading page " +
                                               std::to_string(ppa) + " of " + info_.path);
    }
    return st;
  }
  const uint64_t off = uint64_t(ppa) * geo_.page_data;
  mtd_read_req req;
  std::memset(&req, 0, sizeof req);
  req.start = off;
  req.len = data.size();
  req.ooblen = spare.size();
  req.usr_data = uint64_t(uintptr_t(data.data()));
  req.usr_oob = uint64_t(uintptr_t(spare.data()));
  req.mode = MTD_OPS_AUTO_OOB;
  const uint64_t t0 = now_ns();
  const int rc = ::ioctl(fd_, MEMREAD, &req);
  const int err = errno;
  add_time(t0);
  last_flips_ = 0;
  count_read(data.size(), spare.size(), 0);
  if (rc != 0 && err == EBADMSG) {
    if (counting_) ctr_.ecc_uncorrectable++;
    return Status::error(Errc::kCorrupt, "uncorrectable ECC error reading page " +
                                             std::to_string(ppa) + " of " + info_.path);
  }
  if (rc != 0 && err != EUCLEAN) {
    if (err == ENOTTY) {  // a kernel before MEMREAD: pread + MEMREADOOB64 from now on
      PDL_TRY(use_pread_reads());
      if (counting_) {  // this attempt did nothing; the retry counts
        (data.empty() ? ctr_.spare_reads : ctr_.page_reads)--;
        ctr_.bytes_read -= data.size() + spare.size();
      }
      return read(ppa, data, spare);
    }
    return errno_status("read", off, err);
  }
  last_flips_ = req.ecc_stats.max_bitflips;
  if (counting_) ctr_.ecc_corrected_bits += req.ecc_stats.corrected_bitflips;
  return Status::ok();
}

// Kernels before MEMWRITE: the data with pwrite, then the spare with MEMWRITEOOB64 (raw OOB:
// the free bytes in place, 0xFF elsewhere, which programs nothing). Returns 0 or an errno;
// *chip_programs counts the programs the chip was sent.
int MtdNand::program_pwrite(uint64_t off, const uint8_t* data, const uint8_t* spare,
                            size_t spare_len, uint32_t* chip_programs) {
  *chip_programs = 0;
  if (data) {
    ++*chip_programs;
    const ssize_t n = ::pwrite(fd_, data, geo_.page_data, off_t(off));
    if (n != ssize_t(geo_.page_data)) return n < 0 ? errno : EIO;
  }
  if (spare) {
    std::fill(raw_oob_.begin(), raw_oob_.end(), 0xFF);
    for (size_t i = 0; i < spare_len; i++) raw_oob_[free_oob_[i]] = spare[i];
    mtd_oob_buf64 ob;
    std::memset(&ob, 0, sizeof ob);
    ob.start = off;
    ob.length = info_.oobsize;
    ob.usr_ptr = uint64_t(uintptr_t(raw_oob_.data()));
    ++*chip_programs;
    if (::ioctl(fd_, MEMWRITEOOB64, &ob) != 0) return errno;
  }
  return 0;
}

Status MtdNand::program(Ppa ppa, std::span<const uint8_t> data, std::span<const uint8_t> spare,
                        uint32_t data_off, uint32_t spare_off) {
  PDL_TRY(check_ppa(ppa));
  if (read_only_) return Status::error(Errc::kReadOnly, info_.path + " is open read-only");
  if ((!data.empty() && data_off + data.size() > geo_.page_data) ||
      (!spare.empty() && spare_off + spare.size() > geo_.page_spare))
    return Status::error(Errc::kNandRule, "program beyond the page");
  if (data.empty() && spare.empty()) return Status::ok();
  // Without MEMWRITE, data and spare are two programs of the chip.
  const uint32_t cost = pwrite_programs_ && !data.empty() && !spare.empty() ? 2 : 1;
  if (programs_[ppa] + cost > geo_.partial_programs)
    return Status::error(Errc::kNandRule,
                         "page " + std::to_string(ppa) + " programmed " +
                             std::to_string(programs_[ppa]) + " times since its erase (NOP " +
                             std::to_string(geo_.partial_programs) + ")" +
                             (cost == 2 ? ": without MEMWRITE its data and spare take 2 more"
                                        : ""));
  // MTD programs whole pages (and a spare from its first free byte): the rest is sent as 0xFF,
  // which programs nothing.
  const uint8_t* d = data.data();
  if (!data.empty() && (data_off != 0 || data.size() != geo_.page_data)) {
    std::fill(page_buf_.begin(), page_buf_.end(), 0xFF);
    std::memcpy(page_buf_.data() + data_off, data.data(), data.size());
    d = page_buf_.data();
  }
  const uint8_t* s = spare.data();
  size_t slen = spare.size();
  if (!spare.empty() && spare_off != 0) {
    std::fill(oob_buf_.begin(), oob_buf_.end(), 0xFF);
    std::memcpy(oob_buf_.data() + spare_off, spare.data(), spare.size());
    s = oob_buf_.data();
    slen = spare_off + spare.size();
  }
  if (data.empty()) d = nullptr;
  if (spare.empty()) s = nullptr;
  const uint64_t off = uint64_t(ppa) * geo_.page_data;
  const uint64_t t0 = now_ns();
  int err = 0;
  uint32_t chip_programs = 1;
  if (pwrite_programs_) {
    err = program_pwrite(off, d, s, slen, &chip_programs);
  } else {
    mtd_write_req req;
    std::memset(&req, 0, sizeof req);
    req.start = off;
    req.len = d ? geo_.page_data : 0;
    req.ooblen = slen;
    req.usr_data = uint64_t(uintptr_t(d));
    req.usr_oob = uint64_t(uintptr_t(s));
    req.mode = MTD_OPS_AUTO_OOB;
    if (::ioctl(fd_, MEMWRITE, &req) != 0) err = errno;
    if (err == ENOTTY) {  // a kernel before MEMWRITE: pwrite + MEMWRITEOOB64 from now on
      PDL_TRY(use_pwrite_programs());
      return program(ppa, data, spare, data_off, spare_off);
    }
  }
  add_time(t0);
  programs_[ppa] = uint8_t(programs_[ppa] + chip_programs);
  count_program(data.size() + spare.size(), 0);
  if (err == 0) return Status::ok();
  if (err == EIO) {
    if (counting_) ctr_.program_failures++;
    return Status::error(Errc::kBadBlock, "program of page " + std::to_string(ppa) + " of " +
                                              info_.path + " failed (EIO): bad block");
  }
  return errno_status("program", off, err);
}

Status MtdNand::erase(uint32_t block) {
  PDL_TRY(check_block(block));
  if (read_only_) return Status::error(Errc::kReadOnly, info_.path + " is open read-only");
  erase_info_user64 e64{uint64_t(block) * info_.erasesize, info_.erasesize};
  const uint64_t t0 = now_ns();
  int rc = ::ioctl(fd_, MEMERASE64, &e64);
  if (rc != 0 && errno == ENOTTY) {
    erase_info_user e32{uint32_t(e64.start), uint32_t(e64.length)};
    rc = ::ioctl(fd_, MEMERASE, &e32);
  }
  const int err = errno;
  add_time(t0);
  count_erase(0);
  std::fill_n(programs_.begin() + ptrdiff_t(uint64_t(block) * geo_.pages_per_block),
              geo_.pages_per_block, uint8_t(0));
  erases_[block]++;
  if (rc == 0) return Status::ok();
  if (err == EIO) {
    if (counting_) ctr_.erase_failures++;
    return Status::error(Errc::kBadBlock, "erase of block " + std::to_string(block) + " of " +
                                              info_.path + " failed (EIO): bad block");
  }
  return errno_status("erase", e64.start, err);
}

uint32_t MtdNand::erase_count(uint32_t block) const {
  return block < erases_.size() ? erases_[block] : 0;
}

Status MtdNand::mark_bad(uint32_t block) {
  PDL_TRY(check_block(block));
  if (read_only_) return Status::error(Errc::kReadOnly, info_.path + " is open read-only");
  loff_t off = loff_t(block) * info_.erasesize;
  if (::ioctl(fd_, MEMSETBADBLOCK, &off) != 0) return errno_status("MEMSETBADBLOCK", off, errno);
  return Status::ok();
}

bool MtdNand::is_bad(uint32_t block) {
  if (block >= geo_.blocks) return true;
  loff_t off = loff_t(block) * info_.erasesize;
  const int rc = ::ioctl(fd_, MEMGETBADBLOCK, &off);
  if (rc < 0) return errno != EOPNOTSUPP;  // no bad-block support: every block good
  return rc > 0;
}

void MtdNand::attach_nvm(std::unique_ptr<detail::NvmMedia> nvm) {
  const Geometry pcram = Geometry().resolved();  // the PCRAM timing model's defaults
  geo_.nvm_bytes = nvm ? uint32_t(nvm->size()) : 0;
  geo_.nvm_latency_ns = pcram.nvm_latency_ns;
  geo_.nvm_read_ns = pcram.nvm_read_ns;
  geo_.nvm_write_ns = pcram.nvm_write_ns;
  nvm_ = std::move(nvm);
}

Status MtdNand::nvm_read(uint64_t off, std::span<uint8_t> out) {
  PDL_TRY(check_nvm(off, out.size()));
  PDL_TRY(nvm_->read(off, out));
  count_nvm(false, out.size(), geo_.nvm_read_cost_ns(out.size()));
  return Status::ok();
}

Status MtdNand::nvm_write(uint64_t off, std::span<const uint8_t> in) {
  PDL_TRY(check_nvm(off, in.size()));
  if (read_only_) return Status::error(Errc::kReadOnly, info_.path + " is open read-only");
  PDL_TRY(nvm_->write(off, in));
  count_nvm(true, in.size(), geo_.nvm_write_cost_ns(in.size()));
  return Status::ok();
}

std::string MtdNand::nvm_place() const { return nvm_ ? nvm_->describe() : ""; }

Status MtdNand::flush() { return nvm_ ? nvm_->flush() : Status::ok(); }

}  // namespace pdl
