// file_media.cc — an image file's page array through a shared mapping or pread/pwrite, each
// mutation made atomic by the redo record (file_media.h).
#include "flash/device/file_media.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "flash/common/le.h"
#include "flash/device/host_file.h"
#include "flash/device/redo_record.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace pdl::detail {
namespace {

Status full(const std::string& path) { return host_full(path, std::strerror(errno)); }

// File systems on which fallocate guarantees that later writes into the range succeed, so
// that stores through a mapping of reserved storage cannot fault (file_media.h): tmpfs and
// ext4. Not xfs: a copy made with reflinks (Debian's cp makes them by default) shares extents
// that a write must unshare, which can fail for want of room — a SIGBUS through a mapping.
enum class HostFs { kOther, kTmpfs, kExt4 };
HostFs host_fs(int fd) {
  struct statfs s;
  if (fstatfs(fd, &s) != 0) return HostFs::kOther;
  constexpr unsigned long kTmpfsMagic = 0x01021994, kExt4Magic = 0xEF53;
  const unsigned long t = static_cast<unsigned long>(s.f_type);
  return t == kTmpfsMagic ? HostFs::kTmpfs : t == kExt4Magic ? HostFs::kExt4 : HostFs::kOther;
}
// Raw pages the pread cache holds: PDL_IMAGE_READ_CACHE=N (0: none, every read a pread),
// else 1024. (pdl-bench's mount probe turns it off: its RSS is then the mount's alone.)
uint32_t read_cache_pages() {
  const char* n = std::getenv("PDL_IMAGE_READ_CACHE");
  if (n == nullptr || *n == '\0') return 1024;
  char* end = nullptr;
  const unsigned long v = std::strtoul(n, &end, 10);
  return *end == '\0' ? uint32_t(std::min<unsigned long>(v, 1u << 20)) : 1024;
}
bool mapping_wanted() {
  const char* io = std::getenv("PDL_IMAGE_IO");
  return !(io && std::strcmp(io, "pread") == 0);
}

}  // namespace

std::string host_io_mode(int fd) {
  if (!mapping_wanted()) return "pread/pwrite (PDL_IMAGE_IO=pread)";
  switch (host_fs(fd)) {
    case HostFs::kTmpfs: return "mapped (tmpfs)";
    case HostFs::kExt4: return "mapped (ext4)";
    case HostFs::kOther: break;
  }
  return "pread/pwrite (not tmpfs or ext4)";
}

namespace {

class FileMedia final : public NandMedia {
 public:
  FileMedia(int fd, std::string path, const ImageLayout& l, std::vector<uint32_t> counts,
            bool read_only)
      : fd_(fd),
        path_(std::move(path)),
        l_(l),
        read_only_(read_only),
        block_bytes_(uint64_t(l.raw_page) * l.pages_per_block),
        reserved_(l.blocks, 0),
        erase_counts_(std::move(counts)),
        record_(RedoRecord::kHeaderBytes + l.raw_page) {
    const HostFs fs = host_fs(fd);
    map_state_ = fs != HostFs::kOther && mapping_wanted() ? kUntried : kUnavailable;
    // On tmpfs populating a reserved block maps pages it allocated anyway; on ext4 it would
    // dirty the whole block (zeros written back), so pages fault in as they are touched.
    populate_ = fs == HostFs::kTmpfs;
  }
  ~FileMedia() override {
    if (map_) munmap(map_, l_.file_bytes());
    close(fd_);  // closing releases the flock
  }

  // Reservations found on the media, the room for the record, then the pending record.
  Status start() {
    if (!read_only_) {
      (void)fallocate(fd_, FALLOC_FL_KEEP_SIZE, 0, off_t(l_.pages_off));  // header, counts
      if (l_.record_off)
        record_room_ =
            fallocate(fd_, FALLOC_FL_KEEP_SIZE, off_t(l_.record_off), off_t(l_.record_bytes)) == 0;
    }
    if (map_state_ == kUntried) find_allocated();
    if (!l_.record_off) return Status::ok();
    std::vector<uint8_t> area(RedoRecord::kHeaderBytes + l_.raw_page);
    PDL_TRY(io(false, l_.record_off, area.data(), area.size()));
    RedoRecord r = RedoRecord::decode(area, l_.raw_page);
    if (!r.sequence) return Status::ok();
    const bool fits = r.kind == RedoRecord::kProgram
                          ? r.length >= 1 && r.length <= l_.raw_page && r.where <= l_.pages_bytes &&
                                r.length <= l_.pages_bytes - r.where
                          : r.where < l_.blocks && r.length == l_.pages_per_block;
    if (!fits)
      return Status::error(Errc::kCorrupt, path_ + ": the redo record names a place outside the chip");
    sequence_ = r.sequence;
    if (read_only_) {
      if (r.kind == RedoRecord::kErase) erase_counts_[r.where] = r.count;
      overlay_ = std::move(r);
      return Status::ok();
    }
    if (r.kind == RedoRecord::kProgram) return write(r.where, r.payload.data(), r.length, false);
    std::vector<uint8_t> pages(l_.pages_per_block);
    for (uint32_t p = 0; p < l_.pages_per_block; p++) pages[p] = (r.payload[p / 8] >> (p % 8)) & 1;
    return erase(uint32_t(r.where), pages, r.count);
  }

  Status read(uint64_t off, uint8_t* buf, size_t n) override {
    if (mapped(off, n)) {
      std::memcpy(buf, map_ + l_.pages_off + off, n);
    } else {
      PDL_TRY(cached_read(off, buf, n));
    }
    if (overlay_.sequence) apply_overlay(off, buf, n);
    return Status::ok();
  }

  const uint8_t* view(uint64_t off, size_t n) override {
    return mapped(off, n) && !overlay_.sequence ? map_ + l_.pages_off + off : nullptr;
  }

  Status write(uint64_t off, const uint8_t* buf, size_t n, bool onto_erased) override {
    if (read_only_) return Status::error(Errc::kReadOnly, "image opened read-only");
    if (n > l_.raw_page) return Status::error(Errc::kInvalidArgument, "image write beyond a page");
    if (n == 0) return Status::ok();
    PDL_TRY(reserve(off, n));
    forget(off, n);
    PDL_TRY(onto_erased ? log_undo_program(off)
                        : log(RedoRecord::kProgram, off, uint32_t(n), 0, {buf, n}));
    Status st = mapped(off, n) ? (std::memcpy(map_ + l_.pages_off + off, buf, n), Status::ok())
                               : io(true, l_.pages_off + off, const_cast<uint8_t*>(buf), n);
    if (!st.is_ok()) {
      (void)unlog();  // failed as a whole: not to be redone
      return st;
    }
    return unlog();
  }

  Status erase(uint32_t block, std::span<const uint8_t> zero_pages, uint32_t count) override {
    if (read_only_) return Status::error(Errc::kReadOnly, "image opened read-only");
    const uint32_t ppb = l_.pages_per_block;
    uint8_t bits[128] = {};  // pages_per_block <= 1024
    bool all = !zero_pages.empty();
    for (size_t p = 0; p < zero_pages.size(); p++) {
      all = all && zero_pages[p];
      if (zero_pages[p]) bits[p / 8] |= uint8_t(1u << (p % 8));
    }
    PDL_TRY(log(RedoRecord::kErase, block, ppb, count, {bits, (ppb + 7) / 8}));
    // The count first: if the host cannot store it, the block is left as it was.
    const uint32_t old_count = erase_counts_[block];
    if (Status st = store_count(block, count); !st.is_ok()) {
      (void)unlog();
      return st;
    }
    const uint64_t off = block * block_bytes_;
    Status st = Status::ok();
    if (all) {
      st = zero(off, block_bytes_);
    } else {
      for (size_t p = 0; p < zero_pages.size() && st.is_ok(); p++)
        if (zero_pages[p]) st = zero(off + p * l_.raw_page, l_.raw_page);
    }
    if (!st.is_ok()) {
      // Failed part-way (the host refused a hole or a write): the count goes back, and the
      // record is dropped, so that nothing redoes an erase the caller was told failed. Pages
      // already zeroed stay zeroed, as after an erase a power cut interrupts.
      (void)store_count(block, old_count);
      (void)unlog();
      return st;
    }
    return unlog();
  }

  uint32_t erase_count(uint32_t block) const override { return erase_counts_[block]; }
  Status flush() override {
    if (fsync(fd_) != 0) return errno_status("fsync", path_);
    return Status::ok();
  }

 private:
  enum MapState { kUntried, kMapped, kUnavailable };

  // Makes the mapping at its first use; false if there is none (pread/pwrite instead).
  bool map() {
    if (map_state_ != kUntried) return map_state_ == kMapped;
    void* p = mmap(nullptr, l_.file_bytes(), PROT_READ | (read_only_ ? 0 : PROT_WRITE),
                   MAP_SHARED, fd_, 0);
    map_state_ = p == MAP_FAILED ? kUnavailable : kMapped;
    if (p != MAP_FAILED) map_ = static_cast<uint8_t*>(p);
    return map_state_ == kMapped;
  }
  bool mapped(uint64_t off, uint64_t n) const {
    if (!map_ || n == 0) return false;
    for (uint64_t b = off / block_bytes_; b <= (off + n - 1) / block_bytes_; b++)
      if (!reserved_[b]) return false;
    return true;
  }
  // Blocks wholly inside the file's data extents count as reserved (being conservative is
  // always correct: a block missed is read with pread and reserved at its first write).
  void find_allocated() {
    const uint64_t end = l_.pages_off + l_.pages_bytes;
    bool any = false;
    for (uint64_t at = l_.pages_off; at < end;) {
      const off_t s = lseek(fd_, off_t(at), SEEK_DATA);
      if (s < 0) break;  // ENXIO: no data after `at`; EINVAL: not supported
      const off_t e = lseek(fd_, s, SEEK_HOLE);
      if (e < 0) break;
      const uint64_t lo = std::max<uint64_t>(uint64_t(s), l_.pages_off) - l_.pages_off;
      const uint64_t hi = std::min<uint64_t>(uint64_t(e), end) - l_.pages_off;
      for (uint64_t b = (lo + block_bytes_ - 1) / block_bytes_; (b + 1) * block_bytes_ <= hi; b++)
        reserved_[b] = 1, any = true;
      at = uint64_t(e);
    }
    if (any && !map()) std::fill(reserved_.begin(), reserved_.end(), 0);
  }

  Status cached_read(uint64_t off, uint8_t* buf, size_t n) {
    const uint64_t page = off / l_.raw_page;
    const uint64_t in = off % l_.raw_page;
    if (in + n > l_.raw_page || cache_pages_ == 0) return io(false, l_.pages_off + off, buf, n);
    if (cache_.empty()) {  // made at the first read the mapping does not serve
      cache_.resize(size_t(cache_pages_) * l_.raw_page);
      cached_.assign(cache_pages_, kNone);
    }
    uint8_t* slot = &cache_[size_t(page % cache_pages_) * l_.raw_page];
    if (cached_[page % cache_pages_] != page) {
      PDL_TRY(io(false, l_.pages_off + page * l_.raw_page, slot, l_.raw_page));
      cached_[page % cache_pages_] = page;
    }
    std::memcpy(buf, slot + in, n);
    return Status::ok();
  }
  // The pending record of a read-only open, as if it had been redone.
  void apply_overlay(uint64_t off, uint8_t* buf, size_t n) const {
    const RedoRecord& r = overlay_;
    uint64_t lo, hi;
    if (r.kind == RedoRecord::kProgram) {
      lo = std::max(off, r.where), hi = std::min(off + n, r.where + r.length);
      if (lo < hi) std::memcpy(buf + (lo - off), r.payload.data() + (lo - r.where), hi - lo);
      return;
    }
    for (uint32_t p = 0; p < l_.pages_per_block; p++) {
      if (!((r.payload[p / 8] >> (p % 8)) & 1)) continue;
      const uint64_t ps = r.where * block_bytes_ + uint64_t(p) * l_.raw_page;
      lo = std::max(off, ps), hi = std::min(off + n, ps + l_.raw_page);
      if (lo < hi) std::memset(buf + (lo - off), 0, hi - lo);
    }
  }

  // The redo record: payload and header, a compiler fence, the sequence last. The fences keep
  // the stores in program order; a process killed between them leaves every earlier store in
  // the shared page cache, and a host crash that keeps the sequence but not its payload's host
  // page leaves a record failing its CRC, which is ignored.
  Status log(uint32_t kind, uint64_t where, uint32_t length, uint32_t count,
             std::span<const uint8_t> payload) {
    if (!l_.record_off) return Status::ok();
    if (++sequence_ == 0) sequence_ = 1;
    uint8_t* rec = record_.data();
    RedoRecord::encode_header(rec, sequence_, kind, where, length, count, payload);
    if (record_room_ && map()) {
      uint8_t* dst = map_ + l_.record_off;
      std::memcpy(dst + RedoRecord::kHeaderBytes, payload.data(), payload.size());
      std::memcpy(dst + 4, rec + 4, RedoRecord::kHeaderBytes - 4);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      std::memcpy(dst, rec, 4);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      return Status::ok();
    }
    // One pwrite, the sequence at its start: one torn by the process's death (between host
    // pages) fails its CRC.
    std::memcpy(rec + RedoRecord::kHeaderBytes, payload.data(), payload.size());
    return io(true, l_.record_off, rec, RedoRecord::kHeaderBytes + payload.size());
  }
  // A program into an erased page logs its undo: an erase record zeroing that one page with the
  // block's erase count unchanged. Redone at a reopen it rolls the program back; either way the
  // image shows the program whole or not at all, and no copy or CRC of the page is made.
  Status log_undo_program(uint64_t off) {
    const uint64_t page = off / l_.raw_page;
    const uint32_t block = uint32_t(page / l_.pages_per_block), p = uint32_t(page % l_.pages_per_block);
    uint8_t bits[128] = {};  // pages_per_block <= 1024
    bits[p / 8] = uint8_t(1u << (p % 8));
    return log(RedoRecord::kErase, block, l_.pages_per_block, erase_counts_[block],
               {bits, (l_.pages_per_block + 7) / 8});
  }
  Status unlog() {
    if (!l_.record_off) return Status::ok();
    if (record_room_ && map_) {
      std::atomic_signal_fence(std::memory_order_seq_cst);
      std::memset(map_ + l_.record_off, 0, 4);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      return Status::ok();
    }
    uint8_t z[4] = {};
    return io(true, l_.record_off, z, 4);
  }

  // Zeroes [off, off + n) of the page array (an erase; see the file comment for the hole).
  Status zero(uint64_t off, uint64_t n) {
    forget(off, n);
    if (!no_fallocate_ && !all_reserved(off, n)) {
      if (fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(l_.pages_off + off),
                    off_t(n)) == 0) {
        for (uint64_t b = off / block_bytes_; b <= (off + n - 1) / block_bytes_; b++)
          reserved_[b] = 0;  // holes again: reserved anew before the next write
        return Status::ok();
      }
      if (host_full_errno(errno)) return full(path_);  // (ext4 may need room to split an extent)
      if (errno != EOPNOTSUPP && errno != ENOSYS) return errno_status("erase (punch hole)", path_);
    }
    if (mapped(off, n)) {
      std::memset(map_ + l_.pages_off + off, 0, n);
      return Status::ok();
    }
    std::vector<uint8_t> z(size_t(std::min<uint64_t>(n, 1 << 20)), 0);
    for (uint64_t done = 0; done < n; done += z.size())
      PDL_TRY(io(true, l_.pages_off + off + done, z.data(),
                 size_t(std::min<uint64_t>(z.size(), n - done))));
    return Status::ok();
  }

  // A block's erase count, in the table and in memory (in memory only once in the table).
  Status store_count(uint32_t block, uint32_t count) {
    uint8_t c[4];
    le::put32(c, count);
    PDL_TRY(io(true, l_.counts_off + uint64_t(block) * 4, c, 4));
    erase_counts_[block] = count;
    return Status::ok();
  }
  Status io(bool wr, uint64_t off, uint8_t* buf, size_t n) {
    return wr ? pwrite_all(fd_, path_, buf, n, off) : pread_all(fd_, path_, buf, n, off);
  }
  // Host room for every block [off, off + n) touches, reserved once per block and process;
  // with a mapping, the block's host pages are then populated writable in one call (saving a
  // page fault per host page at first touch; silently skipped where the kernel has no
  // MADV_POPULATE_WRITE).
  Status reserve(uint64_t off, uint64_t n) {
    if (no_fallocate_ || n == 0) return Status::ok();
    for (uint64_t b = off / block_bytes_; b <= (off + n - 1) / block_bytes_; b++) {
      if (reserved_[b]) continue;
      int r;
      do {
        r = fallocate(fd_, FALLOC_FL_KEEP_SIZE, off_t(l_.pages_off + b * block_bytes_),
                      off_t(block_bytes_));
      } while (r != 0 && errno == EINTR);
      if (r != 0 && host_full_errno(errno)) return full(path_);
      if (r != 0 && (errno == EOPNOTSUPP || errno == ENOSYS)) {
        no_fallocate_ = true;  // written as is (see the file comment)
        std::fill(reserved_.begin(), reserved_.end(), 0);  // and never mapped
        return Status::ok();
      }
      if (r != 0) return errno_status("reserve room for", path_);
      reserved_[b] = 1;
      if (map() && populate_) {
        const uint64_t hp = 4096, s = l_.pages_off + b * block_bytes_;
        const uint64_t lo = (s + hp - 1) / hp * hp, hi = (s + block_bytes_) / hp * hp;
        if (hi > lo && madvise(map_ + lo, hi - lo, MADV_POPULATE_WRITE) != 0 && errno == EINVAL)
          populate_ = false;
      }
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
    if (cached_.empty() || n == 0) return;
    for (uint64_t p = off / l_.raw_page; p <= (off + n - 1) / l_.raw_page; p++) {
      if (cached_[p % cache_pages_] == p) cached_[p % cache_pages_] = kNone;
      if (p - off / l_.raw_page >= cache_pages_) break;  // every slot already checked
    }
  }

  const uint32_t cache_pages_ = read_cache_pages();
  static constexpr uint64_t kNone = ~uint64_t(0);
  int fd_;
  std::string path_;
  ImageLayout l_;
  bool read_only_;
  uint64_t block_bytes_;
  // Per block: host storage known allocated (reserved by this process, or found allocated at
  // open where mapping is safe): writes need no room, and the mapping may serve it.
  std::vector<uint8_t> reserved_;
  bool no_fallocate_ = false;  // the host file system has no fallocate
  std::vector<uint32_t> erase_counts_;
  std::vector<uint8_t> cache_;    // cache_pages_ raw pages, for reads not served by the mapping
  std::vector<uint64_t> cached_;  // page index held by each cache slot
  MapState map_state_;
  uint8_t* map_ = nullptr;     // the whole file, once mapped
  bool populate_ = false;      // tmpfs, and MADV_POPULATE_WRITE known to work or not yet tried
  bool record_room_ = false;   // the record area's host room is reserved: stored through the map
  uint32_t sequence_ = 0;      // of the last redo record
  std::vector<uint8_t> record_;  // the redo record being written (pwrite path)
  RedoRecord overlay_;           // read-only: the pending record, applied to every read
};

}  // namespace

Status open_file_media(int fd, const std::string& path, const ImageLayout& layout,
                       std::vector<uint32_t> counts, bool read_only,
                       std::unique_ptr<NandMedia>* out) {
  auto m = std::make_unique<FileMedia>(fd, path, layout, std::move(counts), read_only);
  PDL_TRY(m->start());
  *out = std::move(m);
  return Status::ok();
}

}  // namespace pdl::detail
