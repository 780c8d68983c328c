// emulated_nand.cc — RAM and image-file NAND emulation with rule checks and counters; the
// faults it injects are fault_injector.cc's.
#include "flash/device/emulated_nand.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"

namespace pdl {
namespace {

constexpr char kImageMagic[8] = {'P', 'D', 'L', 'N', 'A', 'N', 'D', '1'};
constexpr uint32_t kImageVersion = 1;
constexpr uint32_t kHeaderSize = 4096;
constexpr size_t kHeaderCrcAt = 64;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

Status errno_status(const char* what, const std::string& path) {
  return Status::error(Errc::kIoError, std::string(what) + " " + path + ": " + std::strerror(errno));
}

// The host file system refused room for a write (errno `e`: ENOSPC or EDQUOT, or injected).
bool host_full_errno(int e) { return e == ENOSPC || e == EDQUOT; }
Status host_full(const std::string& path, const std::string& why) {
  return Status::error(Errc::kHostFull, "the host file system holding " + path +
                                            " is full (" + why +
                                            "): nothing was written; free space there and retry");
}

}  // namespace

namespace detail {

// The inverted page array (stored = ~flash, so erased = zero) and per-block erase counters.
class NandMedia {
 public:
  virtual ~NandMedia() = default;
  virtual Status read(uint64_t off, uint8_t* buf, size_t n) = 0;
  virtual Status write(uint64_t off, const uint8_t* buf, size_t n) = 0;
  virtual Status zero(uint64_t off, uint64_t n) = 0;  // erase: back to all flash 1s
  virtual uint32_t erase_count(uint32_t block) const = 0;
  virtual Status set_erase_count(uint32_t block, uint32_t count) = 0;
  virtual Status flush() { return Status::ok(); }
};

namespace {

// Lazily zeroed anonymous memory; erase returns whole host pages to the kernel.
class RamMedia final : public NandMedia {
 public:
  static Status create(uint64_t bytes, uint32_t blocks, std::unique_ptr<NandMedia>* out) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return Status::error(Errc::kIoError, "cannot map emulated chip memory");
    out->reset(new RamMedia(static_cast<uint8_t*>(p), bytes, blocks));
    return Status::ok();
  }
  ~RamMedia() override { munmap(base_, bytes_); }
  Status read(uint64_t off, uint8_t* buf, size_t n) override {
    std::memcpy(buf, base_ + off, n);
    return Status::ok();
  }
  Status write(uint64_t off, const uint8_t* buf, size_t n) override {
    std::memcpy(base_ + off, buf, n);
    return Status::ok();
  }
  Status zero(uint64_t off, uint64_t n) override {
    const uint64_t hp = uint64_t(sysconf(_SC_PAGESIZE));
    uint64_t a = align_up(off, hp), b = (off + n) / hp * hp;
    if (b <= a) {
      std::memset(base_ + off, 0, n);
      return Status::ok();
    }
    std::memset(base_ + off, 0, a - off);
    std::memset(base_ + b, 0, off + n - b);
    if (madvise(base_ + a, b - a, MADV_DONTNEED) != 0) std::memset(base_ + a, 0, b - a);
    return Status::ok();
  }
  uint32_t erase_count(uint32_t block) const override { return erase_counts_[block]; }
  Status set_erase_count(uint32_t block, uint32_t count) override {
    erase_counts_[block] = count;
    return Status::ok();
  }

 private:
  RamMedia(uint8_t* base, uint64_t bytes, uint32_t blocks)
      : base_(base), bytes_(bytes), erase_counts_(blocks, 0) {}
  uint8_t* base_;
  uint64_t bytes_;
  std::vector<uint32_t> erase_counts_;
};

// An image file: header, erase-count table, then the inverted page array (holes = erased).
// Reads and writes use pread/pwrite, so holes stay holes (a mapping of the file would allocate
// them on tmpfs) and a full host disk is an error status, never a SIGBUS. Host room for a
// block is reserved (fallocate, the file's size kept) before this process first writes into
// it, so a write never stops half-way for want of room: a full host file system fails the
// write with kHostFull before any byte changes (on a file system without fallocate the write
// is attempted as is, and a short one is a torn program, as after a power cut). A
// write-through cache of raw pages, direct-mapped by page index, serves most reads without a
// system call (PDL reads mostly pages it programmed shortly before); the process owns the file
// (flock), so the cache is never stale.
class FileMedia final : public NandMedia {
 public:
  FileMedia(int fd, std::string path, uint64_t pages_off, uint32_t raw_page,
            uint32_t pages_per_block, std::vector<uint32_t> counts)
      : fd_(fd),
        path_(std::move(path)),
        pages_off_(pages_off),
        raw_page_(raw_page),
        block_bytes_(uint64_t(raw_page) * pages_per_block),
        reserved_(counts.size(), 0),
        erase_counts_(std::move(counts)),
        cache_(size_t(kCachePages) * raw_page),
        cached_(kCachePages, kNone) {}
  ~FileMedia() override { close(fd_); }  // closing releases the flock
  Status read(uint64_t off, uint8_t* buf, size_t n) override {
    const uint64_t page = off / raw_page_;
    const uint64_t in = off % raw_page_;
    if (in + n > raw_page_) return full_io(false, pages_off_ + off, buf, n);
    uint8_t* slot = &cache_[size_t(page % kCachePages) * raw_page_];
    if (cached_[page % kCachePages] != page) {
      PDL_TRY(full_io(false, pages_off_ + page * raw_page_, slot, raw_page_));
      cached_[page % kCachePages] = page;
    }
    std::memcpy(buf, slot + in, n);
    return Status::ok();
  }
  Status write(uint64_t off, const uint8_t* buf, size_t n) override {
    PDL_TRY(reserve(off, n));
    forget(off, n);
    return full_io(true, pages_off_ + off, const_cast<uint8_t*>(buf), n);
  }
  // Erase writes zeros rather than punching a hole: a block once programmed keeps its host
  // storage, so programming it again does not allocate (on tmpfs, allocation per program cost
  // more than the whole rest of the emulation). Never-programmed blocks stay holes: erase()
  // skips blocks it knows to be erased. A block whose host room this process has not reserved
  // (perhaps partly holes) is erased by punching a hole instead, which needs no room: an erase
  // never fails on a full host file system.
  Status zero(uint64_t off, uint64_t n) override {
    forget(off, n);
    if (!no_fallocate_ && !all_reserved(off, n)) {
      if (fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(pages_off_ + off),
                    off_t(n)) == 0) {
        for (uint64_t b = off / block_bytes_; b <= (off + n - 1) / block_bytes_; b++)
          reserved_[b] = 0;  // holes again: reserved anew before the next write
        return Status::ok();
      }
      if (errno != EOPNOTSUPP && errno != ENOSYS) return errno_status("erase (punch hole)", path_);
    }
    std::vector<uint8_t> z(size_t(std::min<uint64_t>(n, 1 << 20)), 0);
    for (uint64_t done = 0; done < n; done += z.size())
      PDL_TRY(full_io(true, pages_off_ + off + done, z.data(), size_t(std::min<uint64_t>(z.size(), n - done))));
    return Status::ok();
  }
  uint32_t erase_count(uint32_t block) const override { return erase_counts_[block]; }
  Status set_erase_count(uint32_t block, uint32_t count) override {
    uint8_t b[4];
    le::put32(b, count);
    PDL_TRY(full_io(true, kHeaderSize + uint64_t(block) * 4, b, 4));
    erase_counts_[block] = count;
    return Status::ok();
  }
  Status flush() override {
    if (fsync(fd_) != 0) return errno_status("fsync", path_);
    return Status::ok();
  }

 private:
  Status full_io(bool wr, uint64_t off, uint8_t* buf, size_t n) {
    while (n) {
      ssize_t r = wr ? pwrite(fd_, buf, n, off_t(off)) : pread(fd_, buf, n, off_t(off));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && wr && host_full_errno(errno)) return host_full(path_, std::strerror(errno));
      if (r < 0) return errno_status(wr ? "write" : "read", path_);
      if (r == 0) {  // past end of file: reads as erased (stored zeros)
        if (wr) return Status::error(Errc::kIoError, "short write to " + path_);
        std::memset(buf, 0, n);
        return Status::ok();
      }
      buf += r;
      off += uint64_t(r);
      n -= size_t(r);
    }
    return Status::ok();
  }
  // Host room for every block [off, off + n) touches, reserved once per block and process.
  Status reserve(uint64_t off, uint64_t n) {
    if (no_fallocate_) return Status::ok();
    for (uint64_t b = off / block_bytes_; b <= (off + n - 1) / block_bytes_; b++) {
      if (reserved_[b]) continue;
      int r;
      do {
        r = fallocate(fd_, FALLOC_FL_KEEP_SIZE, off_t(pages_off_ + b * block_bytes_),
                      off_t(block_bytes_));
      } while (r != 0 && errno == EINTR);
      if (r != 0 && host_full_errno(errno)) return host_full(path_, std::strerror(errno));
      if (r != 0 && (errno == EOPNOTSUPP || errno == ENOSYS)) {
        no_fallocate_ = true;  // written as is (see the class comment)
        return Status::ok();
      }
      if (r != 0) return errno_status("reserve room for", path_);
      reserved_[b] = 1;
    }
    return Status::ok();
  }
  bool all_reserved(uint64_t off, uint64_t n) const {
    for (uint64_t b = off / block_bytes_; b <= (off + n - 1) / block_bytes_; b++)
      if (!reserved_[b]) return false;
    return true;
  }
  // Drop cached pages overlapping [off, off + n).
  void forget(uint64_t off, uint64_t n) {
    for (uint64_t p = off / raw_page_; p <= (off + n - 1) / raw_page_; p++) {
      if (cached_[p % kCachePages] == p) cached_[p % kCachePages] = kNone;
      if (p - off / raw_page_ >= kCachePages) break;  // every slot already checked
    }
  }
  static constexpr uint32_t kCachePages = 1024;
  static constexpr uint64_t kNone = ~uint64_t(0);
  int fd_;
  std::string path_;
  uint64_t pages_off_;
  uint32_t raw_page_;
  uint64_t block_bytes_;
  std::vector<uint8_t> reserved_;  // per block: host room reserved by this process
  bool no_fallocate_ = false;      // the host file system has no fallocate
  std::vector<uint32_t> erase_counts_;
  std::vector<uint8_t> cache_;    // kCachePages raw pages
  std::vector<uint64_t> cached_;  // page index held by each cache slot
};

void encode_header(const Geometry& g, uint64_t pages_off, uint8_t* h) {
  std::memset(h, 0, kHeaderSize);
  std::memcpy(h, kImageMagic, 8);
  const uint32_t f[] = {kImageVersion, kHeaderSize, g.page_data, g.page_spare,
                        g.pages_per_block, g.blocks, g.partial_programs, g.erase_limit,
                        g.read_us, g.program_us, g.erase_us, kHeaderSize};
  for (size_t i = 0; i < std::size(f); i++) le::put32(h + 8 + 4 * i, f[i]);
  le::put64(h + 56, pages_off);
  le::put32(h + kHeaderCrcAt, crc32c(h, kHeaderCrcAt));
}

uint64_t pages_offset(const Geometry& g) { return align_up(kHeaderSize + uint64_t(g.blocks) * 4, 4096); }

// Exclusive for a writer; shared for read-only openers, so several can inspect an image at
// once while none can while a writer holds it (and no writer can while they do).
Status lock_image(int fd, const std::string& path, bool shared = false) {
  if (flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0) return Status::ok();
  if (errno == EWOULDBLOCK)
    return Status::error(Errc::kBusy, "image " + path + " is in use by another process");
  return errno_status("lock", path);
}

}  // namespace
}  // namespace detail

using detail::NandMedia;

EmulatedNand::EmulatedNand(const Geometry& g, std::unique_ptr<NandMedia> media)
    : geo_(g),
      media_(std::move(media)),
      nop_used_(size_t(g.total_pages()), 0),
      known_erased_(size_t(g.total_pages()), 0),
      raw_scratch_(g.raw_page()),
      faults_(g.blocks) {}

EmulatedNand::~EmulatedNand() = default;

Status EmulatedNand::create_ram(const Geometry& g0, std::unique_ptr<EmulatedNand>* out) {
  Geometry g = g0.resolved();
  PDL_TRY(g.validate());
  std::unique_ptr<NandMedia> m;
  PDL_TRY(detail::RamMedia::create(g.total_pages() * g.raw_page(), g.blocks, &m));
  out->reset(new EmulatedNand(g, std::move(m)));
  std::fill((*out)->known_erased_.begin(), (*out)->known_erased_.end(), 1);
  return Status::ok();
}

Status EmulatedNand::create_file(const std::string& path, const Geometry& g0,
                                 std::unique_ptr<EmulatedNand>* out) {
  Geometry g = g0.resolved();
  PDL_TRY(g.validate());
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status("cannot create image", path);
  Status st = detail::lock_image(fd, path);
  uint64_t poff = detail::pages_offset(g);
  if (st.is_ok() && ftruncate(fd, 0) != 0) st = errno_status("truncate", path);
  if (st.is_ok() && ftruncate(fd, off_t(poff + g.total_pages() * g.raw_page())) != 0)
    st = errno_status("cannot size image", path);
  if (st.is_ok()) {
    std::vector<uint8_t> h(kHeaderSize);
    detail::encode_header(g, poff, h.data());
    if (pwrite(fd, h.data(), h.size(), 0) != ssize_t(h.size()))
      st = host_full_errno(errno) ? host_full(path, std::strerror(errno))
                                  : errno_status("write", path);
  }
  // Room for the erase-count table (an erase updates it), so that only programs need more.
  if (st.is_ok()) (void)fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, off_t(poff));
  if (!st.is_ok()) {
    close(fd);
    return st;
  }
  out->reset(new EmulatedNand(
      g, std::make_unique<detail::FileMedia>(fd, path, poff, g.raw_page(), g.pages_per_block,
                                             std::vector<uint32_t>(g.blocks, 0))));
  std::fill((*out)->known_erased_.begin(), (*out)->known_erased_.end(), 1);
  (*out)->host_path_ = path;
  return Status::ok();
}

bool EmulatedNand::is_image_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char m[8];
  bool yes = pread(fd, m, 8, 0) == 8 && std::memcmp(m, kImageMagic, 8) == 0;
  close(fd);
  return yes;
}

Status EmulatedNand::open_file(const std::string& path, std::unique_ptr<EmulatedNand>* out,
                               bool read_only) {
  int fd = ::open(path.c_str(), (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
  // Not writable here (read-only mount, no write permission): kReadOnly, and the caller may
  // open it read-only instead.
  if (fd < 0 && !read_only && (errno == EROFS || errno == EACCES))
    return Status::error(Errc::kReadOnly,
                         "cannot open image " + path + " for writing: " + std::strerror(errno));
  if (fd < 0) return errno_status("cannot open image", path);
  auto fail = [&](Status s) {
    close(fd);
    return s;
  };
  std::vector<uint8_t> h(kHeaderSize);
  ssize_t r = pread(fd, h.data(), h.size(), 0);
  if (r < ssize_t(kHeaderCrcAt + 4) || std::memcmp(h.data(), kImageMagic, 8) != 0)
    return fail(Status::error(Errc::kCorrupt, path + " is not a pdl NAND image (bad magic)"));
  if (le::get32(h.data() + kHeaderCrcAt) != crc32c(h.data(), kHeaderCrcAt))
    return fail(Status::error(Errc::kCorrupt, path + ": image header checksum mismatch"));
  if (le::get32(h.data() + 8) != kImageVersion)
    return fail(Status::error(Errc::kUnsupported, path + ": unknown image format version"));
  Geometry g;
  uint32_t* f[] = {&g.page_data, &g.page_spare, &g.pages_per_block, &g.blocks,
                   &g.partial_programs, &g.erase_limit, &g.read_us, &g.program_us, &g.erase_us};
  for (size_t i = 0; i < std::size(f); i++) *f[i] = le::get32(h.data() + 16 + 4 * i);
  Status v = g.validate();
  if (!v.is_ok()) return fail(Status::error(Errc::kCorrupt, path + ": " + std::string(v.message())));
  uint64_t poff = le::get64(h.data() + 56);
  if (poff != detail::pages_offset(g))
    return fail(Status::error(Errc::kCorrupt, path + ": image header layout mismatch"));
  if (Status lk = detail::lock_image(fd, path, read_only); !lk.is_ok()) return fail(lk);
  struct stat sb;
  if (fstat(fd, &sb) != 0) return fail(errno_status("stat", path));
  if (uint64_t(sb.st_size) < poff + g.total_pages() * g.raw_page())
    return fail(Status::error(Errc::kCorrupt, path + ": image file is truncated"));
  std::vector<uint8_t> counts_raw(size_t(g.blocks) * 4);
  if (pread(fd, counts_raw.data(), counts_raw.size(), kHeaderSize) != ssize_t(counts_raw.size()))
    return fail(errno_status("read erase counts", path));
  std::vector<uint32_t> counts(g.blocks);
  for (uint32_t b = 0; b < g.blocks; b++) counts[b] = le::get32(counts_raw.data() + 4 * b);
  if (!read_only) (void)fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, off_t(poff));  // as create_file
  out->reset(new EmulatedNand(
      g, std::make_unique<detail::FileMedia>(fd, path, poff, g.raw_page(), g.pages_per_block,
                                             std::move(counts))));
  (*out)->read_only_ = read_only;
  (*out)->host_path_ = path;
  return Status::ok();
}

Status EmulatedNand::mark_bad(uint32_t block) {
  PDL_TRY(check_block(block));
  if (read_only_) return Status::error(Errc::kReadOnly, "image opened read-only");
  if (faults_.frozen()) return Status::error(Errc::kPowerCut, "device frozen (power cut)");
  if (faults_.io_error_now())
    return Status::error(Errc::kIoError, "injected I/O error (mark bad)");
  const uint8_t marked = 0xFF;  // stored inverted: flash byte 0x00
  const Ppa first = block * geo_.pages_per_block;
  PDL_TRY(media_->write(uint64_t(first) * geo_.raw_page() + geo_.page_data, &marked, 1));
  known_erased_[first] = 0;
  faults_.fail_block(block);
  return Status::ok();
}

Status EmulatedNand::flip_stored_bit(Ppa ppa, uint32_t byte, uint32_t bit) {
  PDL_TRY(check_ppa(ppa));
  if (byte >= geo_.raw_page() || bit >= 8)
    return Status::error(Errc::kInvalidArgument, "no such bit in a raw page");
  if (read_only_) return Status::error(Errc::kReadOnly, "image opened read-only");
  const uint64_t off = uint64_t(ppa) * geo_.raw_page() + byte;
  uint8_t v = 0;
  PDL_TRY(media_->read(off, &v, 1));
  v ^= uint8_t(1u << bit);
  PDL_TRY(media_->write(off, &v, 1));
  known_erased_[ppa] = 0;
  return Status::ok();
}

bool EmulatedNand::is_bad(uint32_t block) {
  if (block >= geo_.blocks) return true;
  return marked_bad(block);
}

bool EmulatedNand::marked_bad(uint32_t block) {
  uint8_t stored = 0;
  const Ppa first = block * geo_.pages_per_block;
  if (!media_->read(uint64_t(first) * geo_.raw_page() + geo_.page_data, &stored, 1).is_ok())
    return true;
  // Marked iff at least 4 of the flash byte's 8 bits are 0 (the marker is programmed 0x00), so
  // one flipped bit neither retires a good block nor revives a bad one (docs/format.md §3).
  return std::popcount(uint8_t(~stored)) <= 4;
}

uint32_t EmulatedNand::erase_count(uint32_t block) const {
  return block < geo_.blocks ? media_->erase_count(block) : 0;
}

namespace {
// Word-at-a-time byte loops: the emulator's wall-clock cost is mostly these (a page is 2 KiB).
inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void store64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

void invert(uint8_t* p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) store64(p + i, ~load64(p + i));
  for (; i < n; i++) p[i] = uint8_t(~p[i]);
}

// Index of the first byte where programming `flash_new` over stored (inverted) bytes would
// turn a 0 bit back to 1, or n if none: flash_new & ~flash_old == flash_new & stored.
size_t first_violation(const uint8_t* stored, const uint8_t* flash_new, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    if (load64(stored + i) & load64(flash_new + i)) break;
  for (; i < n; i++)
    if (stored[i] & flash_new[i]) return i;
  return n;
}

// stored |= ~flash_new: programming ANDs flash bits, so it ORs the inverted stored bits.
void program_bits(uint8_t* stored, const uint8_t* flash_new, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) store64(stored + i, load64(stored + i) | ~load64(flash_new + i));
  for (; i < n; i++) stored[i] |= uint8_t(~flash_new[i]);
}
}  // namespace

Status EmulatedNand::read(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare) {
  PDL_TRY(check_ppa(ppa));
  if ((!data.empty() && data.size() != geo_.page_data) ||
      (!spare.empty() && spare.size() != geo_.page_spare))
    return Status::error(Errc::kInvalidArgument, "read buffer sizes must match the geometry");
  if (faults_.frozen()) return Status::error(Errc::kPowerCut, "device frozen (power cut)");
  if (faults_.io_error_now()) return Status::error(Errc::kIoError, "injected I/O error (read)");
  const uint64_t off = uint64_t(ppa) * geo_.raw_page();
  if (!data.empty() && !spare.empty()) {  // adjacent on the media: one host read
    uint8_t* raw = raw_scratch_.data();
    PDL_TRY(media_->read(off, raw, geo_.raw_page()));
    invert(raw, geo_.raw_page());
    std::memcpy(data.data(), raw, data.size());
    std::memcpy(spare.data(), raw + geo_.page_data, spare.size());
  } else if (!data.empty()) {
    PDL_TRY(media_->read(off, data.data(), data.size()));
    invert(data.data(), data.size());
  } else if (!spare.empty()) {
    PDL_TRY(media_->read(off + geo_.page_data, spare.data(), spare.size()));
    invert(spare.data(), spare.size());
  }
  const Status st =
      faults_.read_flips(ppa, ppa / geo_.pages_per_block, data, spare, counting_, &ctr_);
  count_read(data.size(), spare.size(), geo_.read_us);
  return st;
}

Status EmulatedNand::program(Ppa ppa, std::span<const uint8_t> data,
                             std::span<const uint8_t> spare, uint32_t data_off,
                             uint32_t spare_off) {
  PDL_TRY(check_ppa(ppa));
  if (read_only_) return Status::error(Errc::kReadOnly, "image opened read-only");
  if (data.empty() && spare.empty())
    return Status::error(Errc::kInvalidArgument, "program of nothing");
  if (data_off + data.size() > geo_.page_data || spare_off + spare.size() > geo_.page_spare)
    return Status::error(Errc::kNandRule, "program beyond the page at " + std::to_string(ppa));
  if (nop_used_[ppa] >= geo_.partial_programs)
    return Status::error(Errc::kNandRule, "page " + std::to_string(ppa) + " exceeded NOP (" +
                                              std::to_string(geo_.partial_programs) + " programs)");
  if (!faults_.frozen() && faults_.io_error_now())
    return Status::error(Errc::kIoError, "injected I/O error (program)");
  // Stored bytes are inverted: stored = ~flash. Programming ANDs flash bits, so it ORs stored.
  // Both parts live in one raw-page scratch buffer at their in-page positions, so a full-page
  // program (data to its end, spare from 0) is one contiguous host read and write.
  const uint64_t off = uint64_t(ppa) * geo_.raw_page();
  struct Part {
    uint32_t rel;  // position within the raw page (data area, then spare area)
    std::span<const uint8_t> src;
  } parts[2] = {{data_off, data}, {geo_.page_data + spare_off, spare}};
  uint8_t* raw = raw_scratch_.data();  // reused: no allocation per program
  const bool joined = !data.empty() && !spare.empty() &&
                      data_off + data.size() == geo_.page_data && spare_off == 0;
  auto media_io = [&](bool wr) -> Status {
    if (joined) {
      const size_t n = data.size() + spare.size();
      return wr ? media_->write(off + data_off, raw + data_off, n)
                : media_->read(off + data_off, raw + data_off, n);
    }
    for (const Part& p : parts) {
      if (p.src.empty()) continue;
      PDL_TRY(wr ? media_->write(off + p.rel, raw + p.rel, p.src.size())
                 : media_->read(off + p.rel, raw + p.rel, p.src.size()));
    }
    return Status::ok();
  };
  if (known_erased_[ppa]) {  // erased by this process and not programmed since: stored zeros
    for (const Part& p : parts) std::memset(raw + p.rel, 0, p.src.size());
  } else {
    PDL_TRY(media_io(false));
  }
  for (int i = 0; i < 2; i++) {
    const Part& p = parts[i];
    const size_t k = first_violation(raw + p.rel, p.src.data(), p.src.size());
    if (k != p.src.size())
      return Status::error(Errc::kNandRule,
                           "program of page " + std::to_string(ppa) +
                               " would turn programmed bits back to 1 (" +
                               (i == 0 ? "data" : "spare") + " offset " +
                               std::to_string((i == 0 ? data_off : spare_off) + k) + ")");
  }
  // Apply part of an interrupted or failed program: data and spare torn independently (a
  // prefix of each, or a random subset of each one's 1->0 bit changes).
  auto apply_part = [&](Tear how, std::mt19937_64& rng) {
    for (const Part& p : parts) {
      const size_t prefix = size_t(rng() % (p.src.size() + 1));
      for (size_t k = 0; k < p.src.size(); k++) {
        const uint8_t want = uint8_t(~p.src[k]);  // stored bits to set
        raw[p.rel + k] |= how == Tear::kPrefix ? (k < prefix ? want : 0) : want & uint8_t(rng());
      }
    }
    (void)media_io(true);
    known_erased_[ppa] = 0;
  };
  if (!faults_.frozen() && faults_.host_full().fails_now())
    return host_full(host_path_, "injected: " + std::string(std::strerror(ENOSPC)));
  bool tear = false;
  if (!faults_.admit_mutation(&tear)) {
    if (tear && faults_.tear() != Tear::kNone) apply_part(faults_.tear(), faults_.tear_rng());
    return Status::error(Errc::kPowerCut, "device frozen (power cut)");
  }
  const uint32_t block = ppa / geo_.pages_per_block;
  const bool marker_only = data.empty() && spare_off == 0 && spare.size() == 1;
  if (!marker_only && faults_.block_fails(block, true)) {
    apply_part(Tear::kRandomBits, faults_.fail_rng());
    nop_used_[ppa]++;
    ctr_.program_failures++;
    return Status::error(Errc::kBadBlock, "program of page " + std::to_string(ppa) +
                                              " failed (bad block " + std::to_string(block) + ")");
  }
  for (const Part& p : parts) program_bits(raw + p.rel, p.src.data(), p.src.size());
  PDL_TRY(media_io(true));
  known_erased_[ppa] = 0;
  nop_used_[ppa]++;
  count_program(data.size() + spare.size(), geo_.program_us);
  return Status::ok();
}

Status EmulatedNand::erase(uint32_t block) {
  PDL_TRY(check_block(block));
  if (read_only_) return Status::error(Errc::kReadOnly, "image opened read-only");
  if (!faults_.frozen() && faults_.io_error_now())
    return Status::error(Errc::kIoError, "injected I/O error (erase)");
  const uint32_t count = media_->erase_count(block);
  if (geo_.erase_limit && count >= geo_.erase_limit) {
    faults_.fail_block(block);
    ctr_.erase_failures++;
    return Status::error(Errc::kBadBlock, "block " + std::to_string(block) + " is worn out (" +
                                              std::to_string(count) + " erases)");
  }
  const uint64_t ppb = geo_.pages_per_block, raw = geo_.raw_page();
  const uint64_t off = uint64_t(block) * ppb * raw;
  auto erase_some = [&](std::mt19937_64& rng) {  // a random subset of the pages erased
    for (uint64_t p = 0; p < ppb; p++)
      if (rng() & 1) {
        (void)media_->zero(off + p * raw, raw);
        nop_used_[block * ppb + p] = 0;
        known_erased_[block * ppb + p] = 1;
      }
  };
  bool tear = false;
  if (!faults_.admit_mutation(&tear)) {
    if (tear && faults_.tear() != Tear::kNone) erase_some(faults_.tear_rng());  // interrupted
    return Status::error(Errc::kPowerCut, "device frozen (power cut)");
  }
  if (faults_.block_fails(block, false)) {
    erase_some(faults_.fail_rng());
    ctr_.erase_failures++;
    return Status::error(Errc::kBadBlock,
                         "erase of block " + std::to_string(block) + " failed (bad block)");
  }
  // The count first: if the host cannot store it, the block is left as it was.
  PDL_TRY(media_->set_erase_count(block, count + 1));
  const auto first = known_erased_.begin() + std::ptrdiff_t(block * ppb);
  if (!std::all_of(first, first + std::ptrdiff_t(ppb), [](uint8_t k) { return k != 0; }))
    PDL_TRY(media_->zero(off, ppb * raw));  // (an erased block is all zeros already)
  std::fill_n(nop_used_.begin() + std::ptrdiff_t(block * ppb), ppb, 0);
  std::fill_n(known_erased_.begin() + std::ptrdiff_t(block * ppb), ppb, 1);
  faults_.erased(block);  // rewritten cells hold their charge again
  count_erase(geo_.erase_us);
  return Status::ok();
}

std::unique_ptr<EmulatedNand> EmulatedNand::clone() const {
  std::unique_ptr<EmulatedNand> c;
  if (!create_ram(geo_, &c).is_ok()) return nullptr;
  const uint64_t bsz = uint64_t(geo_.pages_per_block) * geo_.raw_page();
  std::vector<uint8_t> buf(bsz);
  for (uint32_t b = 0; b < geo_.blocks; b++) {
    if (!media_->read(b * bsz, buf.data(), bsz).is_ok()) return nullptr;
    if (std::any_of(buf.begin(), buf.end(), [](uint8_t x) { return x != 0; }))
      (void)c->media_->write(b * bsz, buf.data(), bsz);
    (void)c->media_->set_erase_count(b, media_->erase_count(b));
  }
  c->nop_used_ = nop_used_;
  c->known_erased_ = known_erased_;
  return c;
}

Status EmulatedNand::flush() {
  if (faults_.frozen()) return Status::error(Errc::kPowerCut, "device frozen (power cut)");
  return media_->flush();
}

}  // namespace pdl
