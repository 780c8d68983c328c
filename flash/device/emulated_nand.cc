// emulated_nand.cc — RAM and image-file NAND emulation with rule checks and counters; the
// faults it injects are fault_injector.cc's.
#include "flash/device/emulated_nand.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/device/file_media.h"
#include "flash/device/host_file.h"
#include "flash/device/nand_media.h"
#include "flash/device/nvm_file.h"
#include "flash/device/nvm_media.h"
#include "flash/device/page_bits.h"
#include "flash/device/redo_record.h"

namespace pdl {

using detail::errno_status;
using detail::host_full;
using detail::host_full_errno;
namespace {

constexpr char kImageMagic[8] = {'P', 'D', 'L', 'N', 'A', 'N', 'D', '1'};
// 2: a redo record area after the page array (docs/format.md §1). Version 1 (none) is
// upgraded to 2 by a writable open and read as it is by a read-only one.
// 3: version 2 plus the NVM beside the chip (Geometry::nvm_bytes > 0): its size, timings and
// identity in the header, its bytes in an NVM area after the record area or in an NVM file of
// their own (nvm_file.h). An image without NVM is written as version 2, readable by older
// builds.
constexpr uint32_t kImageVersion = 3;  // the newest this build reads and writes
constexpr uint32_t kNoNvmVersion = 2;  // what an image without NVM is written as
constexpr uint32_t kHeaderSize = 4096;
constexpr size_t kHeaderCrcAt = 64;
// Version 3's NVM fields, under their own CRC-32C (docs/format.md §1).
constexpr size_t kNvmBytesAt = 72, kNvmLatencyAt = 76, kNvmReadAt = 80, kNvmWriteAt = 84,
                 kNvmOffAt = 88, kNvmIdAt = 96, kNvmCrcAt = 112;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

namespace detail {
namespace {

// `nvm_off`: the NVM area's offset in the image, 0 if the NVM is in a file of its own.
void encode_header(const Geometry& g, uint64_t pages_off, uint8_t* h, uint64_t nvm_off = 0,
                   const std::array<uint8_t, 16>& nvm_id = {}) {
  std::memset(h, 0, kHeaderSize);
  std::memcpy(h, kImageMagic, 8);
  const uint32_t version = g.nvm_bytes ? kImageVersion : kNoNvmVersion;
  const uint32_t f[] = {version, kHeaderSize, g.page_data, g.page_spare,
                        g.pages_per_block, g.blocks, g.partial_programs, g.erase_limit,
                        g.read_us, g.program_us, g.erase_us, kHeaderSize};
  for (size_t i = 0; i < std::size(f); i++) le::put32(h + 8 + 4 * i, f[i]);
  le::put64(h + 56, pages_off);
  le::put32(h + kHeaderCrcAt, crc32c(h, kHeaderCrcAt));
  if (version < 3) return;
  le::put32(h + kNvmBytesAt, g.nvm_bytes);
  le::put32(h + kNvmLatencyAt, g.nvm_latency_ns);
  le::put32(h + kNvmReadAt, g.nvm_read_ns);
  le::put32(h + kNvmWriteAt, g.nvm_write_ns);
  le::put64(h + kNvmOffAt, nvm_off);
  std::memcpy(h + kNvmIdAt, nvm_id.data(), 16);
  le::put32(h + kNvmCrcAt, crc32c(h + kHeaderCrcAt + 4, kNvmCrcAt - kHeaderCrcAt - 4));
}

uint64_t pages_offset(const Geometry& g) { return align_up(kHeaderSize + uint64_t(g.blocks) * 4, 4096); }

// The parts of an image of geometry g and format `version` (docs/format.md §1); `nvm_inside`:
// the NVM's bytes are in the image (version 3).
ImageLayout layout_of(const Geometry& g, uint32_t version, bool nvm_inside = false) {
  ImageLayout l;
  l.pages_off = pages_offset(g);
  l.pages_bytes = g.total_pages() * g.raw_page();
  l.counts_off = kHeaderSize;
  l.raw_page = g.raw_page();
  l.pages_per_block = g.pages_per_block;
  l.blocks = g.blocks;
  if (version >= 2) {
    l.record_off = align_up(l.pages_off + l.pages_bytes, 4096);
    l.record_bytes = RedoRecord::area_bytes(g.raw_page());
  }
  if (version >= 3 && nvm_inside && g.nvm_bytes) {
    l.nvm_off = align_up(l.record_off + l.record_bytes, 4096);
    l.nvm_bytes = g.nvm_bytes;
  }
  return l;
}

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
using detail::first_violation;
using detail::invert;
using detail::invert_copy;
using detail::program_bits;

EmulatedNand::EmulatedNand(const Geometry& g, std::unique_ptr<NandMedia> media)
    : geo_(g),
      media_(std::move(media)),
      pages_(g.blocks, g.pages_per_block, false),
      raw_scratch_(g.raw_page()),
      faults_(g.blocks) {}

EmulatedNand::~EmulatedNand() = default;

Status EmulatedNand::create_ram(const Geometry& g0, std::unique_ptr<EmulatedNand>* out) {
  Geometry g = g0.resolved();
  PDL_TRY(g.validate());
  std::unique_ptr<NandMedia> m;
  PDL_TRY(detail::create_ram_media(uint64_t(g.pages_per_block) * g.raw_page(), g.blocks,
                                   g.pages_per_block, &m));
  out->reset(new EmulatedNand(g, std::move(m)));
  (*out)->pages_ = detail::PageStates(g.blocks, g.pages_per_block, true);  // created erased
  if (g.nvm_bytes) (*out)->nvm_ = detail::create_ram_nvm(g.nvm_bytes);
  return Status::ok();
}

Status EmulatedNand::create_file(const std::string& path, const Geometry& g0,
                                 std::unique_ptr<EmulatedNand>* out, const NvmPlacement& place) {
  Geometry g = g0.resolved();
  PDL_TRY(g.validate());
  if (!place.path.empty() && !g.nvm_bytes)
    return Status::error(Errc::kInvalidArgument,
                         "nvm_path=" + place.path + " given without NVM (nvm=SIZE)");
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status("cannot create image", path);
  Status st = detail::lock_image(fd, path);
  const bool nvm_inside = g.nvm_bytes && place.path.empty();
  const detail::ImageLayout l =
      detail::layout_of(g, g.nvm_bytes ? kImageVersion : kNoNvmVersion, nvm_inside);
  if (st.is_ok() && ftruncate(fd, 0) != 0) st = errno_status("truncate", path);
  if (st.is_ok() && ftruncate(fd, off_t(l.file_bytes())) != 0)
    st = errno_status("cannot size image", path);
  // The header, and the record area written (so allocated: storing a record never needs
  // room, and an erase never does); the NVM area allocated, for the same reason.
  std::array<uint8_t, 16> nvm_id{};
  if (g.nvm_bytes) nvm_id = detail::new_nvm_id();
  std::vector<uint8_t> h(kHeaderSize);
  detail::encode_header(g, l.pages_off, h.data(), l.nvm_off, nvm_id);
  if (st.is_ok()) st = detail::pwrite_all(fd, path, h.data(), h.size(), 0);
  std::vector<uint8_t> zeros(size_t(l.record_bytes), 0);
  if (st.is_ok()) st = detail::pwrite_all(fd, path, zeros.data(), zeros.size(), l.record_off);
  if (st.is_ok() && l.nvm_off) {
    const int e = posix_fallocate(fd, off_t(l.nvm_off), off_t(l.nvm_bytes));
    if (e != 0 && e != EOPNOTSUPP && e != EINVAL)
      st = host_full_errno(e) ? host_full(path, std::strerror(e))
                              : Status::error(Errc::kIoError, "cannot allocate the NVM area of " +
                                                                  path + ": " + std::strerror(e));
  }
  std::unique_ptr<detail::NvmMedia> nvm;
  if (st.is_ok() && l.nvm_off) {
    const int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) st = errno_status("dup", path);
    else nvm = detail::open_image_nvm(dup_fd, path, l.nvm_off, l.nvm_bytes, false);
  } else if (st.is_ok() && g.nvm_bytes) {
    st = detail::create_nvm_file(place.path, g.nvm_bytes, {nvm_id, path},
                                 place.replaceable ? &*place.replaceable : nullptr, place.force,
                                 &nvm);
    if (!st.is_ok()) ::unlink(path.c_str());  // the image just made (ours, locked) goes too
  }
  if (!st.is_ok()) {
    close(fd);
    return st;
  }
  std::unique_ptr<NandMedia> m;
  PDL_TRY(detail::open_file_media(fd, path, l, std::vector<uint32_t>(g.blocks, 0), false, &m));
  out->reset(new EmulatedNand(g, std::move(m)));
  (*out)->pages_ = detail::PageStates(g.blocks, g.pages_per_block, true);  // created erased
  (*out)->host_path_ = path;
  (*out)->nvm_ = std::move(nvm);
  return Status::ok();
}

Status EmulatedNand::nvm_identity(const std::string& path, std::array<uint8_t, 16>* id) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_status("cannot open image", path);
  uint8_t h[kNvmCrcAt + 4];
  const bool got = pread(fd, h, sizeof h, 0) == ssize_t(sizeof h);
  close(fd);
  if (!got || std::memcmp(h, kImageMagic, 8) != 0 || le::get32(h + 8) != 3 ||
      le::get32(h + kNvmCrcAt) != crc32c(h + kHeaderCrcAt + 4, kNvmCrcAt - kHeaderCrcAt - 4))
    return Status::error(Errc::kNotFound, path + " is not an image with NVM");
  std::memcpy(id->data(), h + kNvmIdAt, 16);
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

std::string EmulatedNand::host_io(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "unknown (" + dir + ": " + std::strerror(errno) + ")";
  std::string mode = detail::host_io_mode(fd);
  close(fd);
  return mode;
}

Status EmulatedNand::open_file(const std::string& path, std::unique_ptr<EmulatedNand>* out,
                               bool read_only, const std::string& nvm_path) {
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
  const uint32_t version = le::get32(h.data() + 8);
  if (version < 1 || version > kImageVersion)
    return fail(Status::error(Errc::kUnsupported,
                              path + ": image format version " + std::to_string(version) +
                                  " is not supported (this build reads versions 1 to 3; a newer "
                                  "pdl made it)"));
  Geometry g;
  uint32_t* f[] = {&g.page_data, &g.page_spare, &g.pages_per_block, &g.blocks,
                   &g.partial_programs, &g.erase_limit, &g.read_us, &g.program_us, &g.erase_us};
  for (size_t i = 0; i < std::size(f); i++) *f[i] = le::get32(h.data() + 16 + 4 * i);
  uint64_t nvm_off = 0;
  std::array<uint8_t, 16> nvm_id{};
  if (version >= 3) {
    const uint8_t* x = h.data();
    if (le::get32(x + kNvmCrcAt) != crc32c(x + kHeaderCrcAt + 4, kNvmCrcAt - kHeaderCrcAt - 4))
      return fail(Status::error(Errc::kCorrupt,
                                path + ": image header (NVM fields) checksum mismatch"));
    g.nvm_bytes = le::get32(x + kNvmBytesAt);
    g.nvm_latency_ns = le::get32(x + kNvmLatencyAt);
    g.nvm_read_ns = le::get32(x + kNvmReadAt);
    g.nvm_write_ns = le::get32(x + kNvmWriteAt);
    nvm_off = le::get64(x + kNvmOffAt);
    std::memcpy(nvm_id.data(), x + kNvmIdAt, 16);
    if (!g.nvm_bytes || !g.nvm_latency_ns || !g.nvm_read_ns || !g.nvm_write_ns)
      return fail(Status::error(Errc::kCorrupt, path + ": image header has NVM fields of zero"));
  }
  Status v = g.validate();
  if (!v.is_ok()) return fail(Status::error(Errc::kCorrupt, path + ": " + std::string(v.message())));
  if (le::get64(h.data() + 56) != detail::pages_offset(g))
    return fail(Status::error(Errc::kCorrupt, path + ": image header layout mismatch"));
  if (Status lk = detail::lock_image(fd, path, read_only); !lk.is_ok()) return fail(lk);
  struct stat sb;
  if (fstat(fd, &sb) != 0) return fail(errno_status("stat", path));
  detail::ImageLayout l = detail::layout_of(g, version, nvm_off != 0);
  if (nvm_off && nvm_off != l.nvm_off)
    return fail(Status::error(Errc::kCorrupt, path + ": image header NVM layout mismatch"));
  if (g.nvm_bytes && !nvm_off && nvm_path.empty())
    return fail(Status::error(Errc::kInvalidArgument,
                              "image " + path + " keeps its NVM in a file of its own: "
                              "give its path (URI nvm_path=PATH, pdl --nvm-path PATH, "
                              "pdl-fuse -o nvm_path=PATH)"));
  if (!nvm_path.empty() && !g.nvm_bytes)
    return fail(Status::error(Errc::kInvalidArgument,
                              "nvm_path=" + nvm_path + " contradicts the existing image " + path +
                                  ", which has no NVM"));
  if (!nvm_path.empty() && nvm_off)
    return fail(Status::error(Errc::kInvalidArgument,
                              "nvm_path=" + nvm_path + " contradicts the existing image " + path +
                                  ", which keeps its NVM inside the image file"));
  if (uint64_t(sb.st_size) < l.file_bytes())
    return fail(Status::error(Errc::kCorrupt, path + ": image file is truncated"));
  if (version < kNoNvmVersion && !read_only) {
    // Upgrade: the record area appended (zeros: no record pending), then the header; a
    // process dying between the two leaves a version-1 image a little longer, upgraded anew.
    l = detail::layout_of(g, kNoNvmVersion);
    if (uint64_t(sb.st_size) < l.file_bytes() && ftruncate(fd, off_t(l.file_bytes())) != 0)
      return fail(host_full_errno(errno) ? host_full(path, std::strerror(errno))
                                         : errno_status("cannot extend image", path));
    std::vector<uint8_t> zeros(size_t(l.record_bytes), 0);
    if (Status w = detail::pwrite_all(fd, path, zeros.data(), zeros.size(), l.record_off); !w.is_ok())
      return fail(w);
    detail::encode_header(g, l.pages_off, h.data());
    if (Status w = detail::pwrite_all(fd, path, h.data(), kHeaderCrcAt + 4, 0); !w.is_ok())
      return fail(w);
  }
  std::vector<uint8_t> counts_raw(size_t(g.blocks) * 4);
  if (pread(fd, counts_raw.data(), counts_raw.size(), kHeaderSize) != ssize_t(counts_raw.size()))
    return fail(errno_status("read erase counts", path));
  std::vector<uint32_t> counts(g.blocks);
  for (uint32_t b = 0; b < g.blocks; b++) counts[b] = le::get32(counts_raw.data() + 4 * b);
  std::unique_ptr<detail::NvmMedia> nvm;
  if (nvm_off) {
    const int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) return fail(errno_status("dup", path));
    nvm = detail::open_image_nvm(dup_fd, path, l.nvm_off, l.nvm_bytes, read_only);
  } else if (g.nvm_bytes) {
    if (Status s = detail::open_nvm_file(nvm_path, g.nvm_bytes, {nvm_id, path}, read_only, &nvm);
        !s.is_ok())
      return fail(s);
  }
  std::unique_ptr<NandMedia> m;
  PDL_TRY(detail::open_file_media(fd, path, l, std::move(counts), read_only, &m));
  out->reset(new EmulatedNand(g, std::move(m)));
  (*out)->nvm_ = std::move(nvm);
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
  pages_.not_erased(first);
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
  pages_.not_erased(ppa);
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


Status EmulatedNand::read(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare) {
  PDL_TRY(check_ppa(ppa));
  if ((!data.empty() && data.size() != geo_.page_data) ||
      (!spare.empty() && spare.size() != geo_.page_spare))
    return Status::error(Errc::kInvalidArgument, "read buffer sizes must match the geometry");
  if (faults_.frozen()) return Status::error(Errc::kPowerCut, "device frozen (power cut)");
  if (faults_.io_error_now()) return Status::error(Errc::kIoError, "injected I/O error (read)");
  const uint64_t off = uint64_t(ppa) * geo_.raw_page();
  if (const uint8_t* v = media_->view(off, geo_.raw_page())) {  // in memory: one pass each
    invert_copy(data.data(), v, data.size());
    invert_copy(spare.data(), v + geo_.page_data, spare.size());
  } else if (!data.empty() && !spare.empty()) {  // adjacent on the media: one host read
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

namespace {
thread_local EmulatedNand::Interrupted t_interrupted;
thread_local uint64_t t_mutating_ops = 0;
}  // namespace

const EmulatedNand::Interrupted& EmulatedNand::thread_interrupted() { return t_interrupted; }
uint64_t EmulatedNand::thread_mutating_ops() { return t_mutating_ops; }
void EmulatedNand::clear_interrupted() { t_interrupted = {}; }

bool EmulatedNand::admit_mutation(bool* tear) {
  if (!faults_.frozen()) t_mutating_ops++;
  return faults_.admit_mutation(tear);
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
  if (pages_.programs(ppa) >= geo_.partial_programs)
    return Status::error(Errc::kNandRule, "page " + std::to_string(ppa) + " exceeded NOP (" +
                                              std::to_string(geo_.partial_programs) + " programs)");
  if (!faults_.frozen() && faults_.io_error_now())
    return Status::error(Errc::kIoError, "injected I/O error (program)");
  // Stored bytes are inverted: stored = ~flash. Programming ANDs flash bits, so it ORs stored.
  // Both parts live in one raw-page scratch buffer at their in-page positions, and the span
  // from the first part's start to the last part's end is read and written as one: the media
  // stores it as one mutation, atomic against the host process dying (nand_media.h).
  const uint64_t off = uint64_t(ppa) * geo_.raw_page();
  struct Part {
    uint32_t rel;  // position within the raw page (data area, then spare area)
    std::span<const uint8_t> src;
  } parts[2] = {{data_off, data}, {geo_.page_data + spare_off, spare}};
  uint8_t* raw = raw_scratch_.data();  // reused: no allocation per program
  const uint32_t lo = data.empty() ? parts[1].rel : data_off;
  const uint32_t hi = spare.empty() ? uint32_t(data_off + data.size())
                                    : uint32_t(parts[1].rel + spare.size());
  auto media_io = [&](bool wr) -> Status {
    return wr ? media_->write(off + lo, raw + lo, hi - lo, pages_.erased(ppa))
              : media_->read(off + lo, raw + lo, hi - lo);
  };
  const bool erased = pages_.erased(ppa);
  if (erased) {  // erased by this process and not programmed since: stored zeros
    std::memset(raw + lo, 0, hi - lo);
  } else {
    PDL_TRY(media_io(false));
  }
  for (int i = 0; i < 2 && !erased; i++) {  // (over zeros no bit can go back to 1)
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
    pages_.not_erased(ppa);
  };
  if (!faults_.frozen() && faults_.host_full().fails_now())
    return host_full(host_path_, "injected: " + std::string(std::strerror(ENOSPC)));
  bool tear = false;
  if (!admit_mutation(&tear)) {
    if (tear)
      t_interrupted = {Interrupted::Op::kProgram, ppa, spare_off, {spare.begin(), spare.end()}};
    if (tear && faults_.tear() != Tear::kNone) apply_part(faults_.tear(), faults_.tear_rng());
    return Status::error(Errc::kPowerCut, "device frozen (power cut)");
  }
  const uint32_t block = ppa / geo_.pages_per_block;
  const bool marker_only = data.empty() && spare_off == 0 && spare.size() == 1;
  if (!marker_only && faults_.block_fails(block, true)) {
    apply_part(Tear::kRandomBits, faults_.fail_rng());
    pages_.programmed(ppa);
    ctr_.program_failures++;
    return Status::error(Errc::kBadBlock, "program of page " + std::to_string(ppa) +
                                              " failed (bad block " + std::to_string(block) + ")");
  }
  for (const Part& p : parts) {  // over zeros, ORing the inverted bits is inverting them
    if (erased) invert_copy(raw + p.rel, p.src.data(), p.src.size());
    else program_bits(raw + p.rel, p.src.data(), p.src.size());
  }
  PDL_TRY(media_io(true));
  pages_.programmed(ppa);
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
  const uint64_t ppb = geo_.pages_per_block;
  std::vector<uint8_t> pages(ppb, 0);  // the pages to zero, as one media mutation
  auto erase_some = [&](std::mt19937_64& rng) {  // a random subset of the pages erased
    for (uint64_t p = 0; p < ppb; p++) pages[p] = rng() & 1;
    if (!media_->erase(block, pages, count).is_ok()) return;  // (the host refused: none)
    for (uint64_t p = 0; p < ppb; p++)
      if (pages[p]) pages_.page_erased(block, uint32_t(p));
  };
  bool tear = false;
  if (!admit_mutation(&tear)) {
    if (tear) t_interrupted = {Interrupted::Op::kErase, block, 0, {}};
    if (tear && faults_.tear() != Tear::kNone) erase_some(faults_.tear_rng());  // interrupted
    return Status::error(Errc::kPowerCut, "device frozen (power cut)");
  }
  if (faults_.block_fails(block, false)) {
    erase_some(faults_.fail_rng());
    ctr_.erase_failures++;
    return Status::error(Errc::kBadBlock,
                         "erase of block " + std::to_string(block) + " failed (bad block)");
  }
  // The count first (the media's rule): if the host cannot store it, the block is left as it
  // was. An erased block is all zeros already.
  if (!pages_.all_erased(block)) std::fill(pages.begin(), pages.end(), 1);
  PDL_TRY(media_->erase(block, pages, count + 1));
  pages_.block_erased(block);
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
    (void)c->media_->erase(b, {}, media_->erase_count(b));
  }
  c->pages_ = pages_;
  if (nvm_) {
    std::vector<uint8_t> bytes(size_t(geo_.nvm_bytes));
    if (!nvm_->read(0, bytes).is_ok() || !c->nvm_->write(0, bytes).is_ok()) return nullptr;
  }
  return c;
}

std::string EmulatedNand::nvm_place() const { return nvm_ ? nvm_->describe() : ""; }

Status EmulatedNand::nvm_read(uint64_t off, std::span<uint8_t> out) {
  PDL_TRY(check_nvm(off, out.size()));
  if (faults_.frozen()) return Status::error(Errc::kPowerCut, "device frozen (power cut)");
  if (faults_.io_error_now()) return Status::error(Errc::kIoError, "injected I/O error (nvm read)");
  PDL_TRY(nvm_->read(off, out));
  count_nvm(false, out.size(), geo_.nvm_read_cost_ns(out.size()));
  return Status::ok();
}

Status EmulatedNand::nvm_write(uint64_t off, std::span<const uint8_t> in) {
  PDL_TRY(check_nvm(off, in.size()));
  if (read_only_) return Status::error(Errc::kReadOnly, "image opened read-only");
  if (!faults_.frozen() && faults_.io_error_now())
    return Status::error(Errc::kIoError, "injected I/O error (nvm write)");
  bool tear = false;
  if (!admit_mutation(&tear)) {
    if (tear) t_interrupted = {Interrupted::Op::kNvmWrite, off, 0, {}};
    if (tear && faults_.tear() != Tear::kNone && !in.empty()) {
      // The interrupted write: some of its 8-byte words reach the NVM, the rest do not.
      std::mt19937_64& rng = faults_.tear_rng();
      const uint64_t first = off / kNvmWord, last = (off + in.size() - 1) / kNvmWord;
      const uint64_t words = last - first + 1, prefix = rng() % (words + 1);
      for (uint64_t w = 0; w < words; w++) {
        if (faults_.tear() == Tear::kPrefix ? w >= prefix : (rng() & 1) == 0) continue;
        const uint64_t lo = std::max(off, (first + w) * kNvmWord);
        const uint64_t hi = std::min(off + in.size(), (first + w + 1) * kNvmWord);
        (void)nvm_->write(lo, in.subspan(size_t(lo - off), size_t(hi - lo)));
      }
    }
    return Status::error(Errc::kPowerCut, "device frozen (power cut)");
  }
  PDL_TRY(nvm_->write(off, in));
  count_nvm(true, in.size(), geo_.nvm_write_cost_ns(in.size()));
  return Status::ok();
}

Status EmulatedNand::flush() {
  if (faults_.frozen()) return Status::error(Errc::kPowerCut, "device frozen (power cut)");
  if (nvm_) PDL_TRY(nvm_->flush());
  return media_->flush();
}

}  // namespace pdl
