// nvm_file.cc — NVM in a file of its own, mapped through libpmem (nvm_file.h).
#include "flash/device/nvm_file.h"

#include <fcntl.h>
#include <libpmem.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/device/host_file.h"

namespace pdl::detail {
namespace {

constexpr char kNvmMagic[8] = {'P', 'D', 'L', 'N', 'V', 'M', 'F', '1'};
constexpr uint32_t kNvmFileVersion = 1;
constexpr uint32_t kHeaderBytes = 4096;
constexpr size_t kOwnerNameMax = 1024;
// Header fields (docs/format.md, "The NVM file").
constexpr size_t kVersionAt = 8, kHeaderBytesAt = 12, kSizeAt = 16, kIdAt = 24, kNameLenAt = 40,
                 kNameAt = 44, kCrcAt = kHeaderBytes - 4;

std::string hex(const std::array<uint8_t, 16>& id) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t b : id) s += d[b >> 4], s += d[b & 15];
  return s;
}

void encode_header(uint64_t bytes, const NvmOwner& owner, uint8_t* h) {
  std::memset(h, 0, kHeaderBytes);
  std::memcpy(h, kNvmMagic, 8);
  le::put32(h + kVersionAt, kNvmFileVersion);
  le::put32(h + kHeaderBytesAt, kHeaderBytes);
  le::put64(h + kSizeAt, bytes);
  std::memcpy(h + kIdAt, owner.id.data(), 16);
  const size_t n = std::min(owner.name.size(), kOwnerNameMax);
  le::put32(h + kNameLenAt, uint32_t(n));
  std::memcpy(h + kNameAt, owner.name.data(), n);
  le::put32(h + kCrcAt, crc32c(h, kCrcAt));
}

// What a header says, or why it is not one.
struct Header {
  uint64_t bytes = 0;
  std::array<uint8_t, 16> id{};
  std::string name;
};

Status decode_header(const std::string& path, const uint8_t* h, size_t got, Header* out) {
  const std::string not_nvm = "NVM file " + path + " is not a pdl NVM file (";
  if (got < kHeaderBytes || std::memcmp(h, kNvmMagic, 8) != 0)
    return Status::error(Errc::kCorrupt, not_nvm + "bad magic)");
  if (le::get32(h + kCrcAt) != crc32c(h, kCrcAt))
    return Status::error(Errc::kCorrupt, not_nvm + "header checksum mismatch)");
  const uint32_t version = le::get32(h + kVersionAt);
  if (version != kNvmFileVersion)
    return Status::error(Errc::kUnsupported, "NVM file " + path + " has format version " +
                                                 std::to_string(version) +
                                                 " (this build reads version 1)");
  if (le::get32(h + kHeaderBytesAt) != kHeaderBytes || le::get32(h + kNameLenAt) > kOwnerNameMax)
    return Status::error(Errc::kCorrupt, not_nvm + "header fields out of range)");
  out->bytes = le::get64(h + kSizeAt);
  std::memcpy(out->id.data(), h + kIdAt, 16);
  out->name.assign(reinterpret_cast<const char*>(h + kNameAt), le::get32(h + kNameLenAt));
  return Status::ok();
}

Status lock_file(int fd, const std::string& path, bool shared) {
  if (flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0) return Status::ok();
  if (errno == EWOULDBLOCK)
    return Status::error(Errc::kBusy, "NVM file " + path + " is in use by another process");
  return errno_status("lock", path);
}

class PmemNvm final : public NvmMedia {
 public:
  PmemNvm(int fd, std::string path, uint8_t* map, size_t map_len, bool is_pmem, bool read_only,
          bool libpmem_map)
      : fd_(fd), path_(std::move(path)), map_(map), map_len_(map_len), is_pmem_(is_pmem),
        read_only_(read_only), libpmem_map_(libpmem_map) {}
  ~PmemNvm() override {
    if (libpmem_map_) pmem_unmap(map_, map_len_);
    else munmap(map_, map_len_);
    close(fd_);
  }
  uint64_t size() const override { return map_len_ - kHeaderBytes; }
  Status read(uint64_t off, std::span<uint8_t> out) override {
    if (!out.empty()) std::memcpy(out.data(), map_ + kHeaderBytes + off, out.size());
    return Status::ok();
  }
  Status write(uint64_t off, std::span<const uint8_t> in) override {
    if (read_only_)
      return Status::error(Errc::kReadOnly, "NVM file " + path_ + " opened read-only");
    if (in.empty()) return Status::ok();
    uint8_t* base = map_ + kHeaderBytes;  // 4 KiB aligned: NVM words are aligned in memory
    const uint64_t end = off + in.size();
    for (uint64_t w = off / 8 * 8; w < end; w += 8) {
      uint64_t v;
      std::memcpy(&v, base + w, 8);
      const uint64_t lo = std::max(off, w), hi = std::min(end, w + 8);
      std::memcpy(reinterpret_cast<uint8_t*>(&v) + (lo - w), in.data() + (lo - off), hi - lo);
      __atomic_store_n(reinterpret_cast<uint64_t*>(base + w), v, __ATOMIC_RELAXED);
    }
    if (is_pmem_) {
      pmem_persist(base + off, in.size());
    } else if (pmem_msync(base + off, in.size()) != 0) {
      return errno_status("msync", path_);
    }
    return Status::ok();
  }
  std::string describe() const override {
    return std::string("file ") + path_ +
           (is_pmem_ ? " (persistent memory, libpmem)" : " (not persistent memory: libpmem msync)");
  }

 private:
  int fd_;
  std::string path_;
  uint8_t* map_;
  size_t map_len_;
  bool is_pmem_, read_only_, libpmem_map_;
};

// Map the open, locked, checked file `fd` (owned from here on) of total length `len`.
Status map_file(int fd, const std::string& path, size_t len, bool read_only,
                std::unique_ptr<NvmMedia>* out) {
  if (read_only) {
    void* p = mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      Status s = errno_status("map", path);
      close(fd);
      return s;
    }
    const bool pm = pmem_is_pmem(p, len) != 0;
    out->reset(new PmemNvm(fd, path, static_cast<uint8_t*>(p), len, pm, true, false));
    return Status::ok();
  }
  size_t mapped = 0;
  int is_pmem = 0;
  void* p = pmem_map_file(path.c_str(), 0, 0, 0, &mapped, &is_pmem);
  if (!p || mapped != len) {
    const std::string why = p ? "its length changed while opening" : pmem_errormsg();
    if (p) pmem_unmap(p, mapped);
    close(fd);
    return Status::error(Errc::kIoError, "cannot map NVM file " + path + " (libpmem): " + why);
  }
  out->reset(new PmemNvm(fd, path, static_cast<uint8_t*>(p), len, is_pmem != 0, false, true));
  return Status::ok();
}

// The owner check: names both stores.
Status owner_mismatch(const std::string& path, const Header& h, const NvmOwner& owner) {
  return Status::error(Errc::kInvalidArgument,
                       "NVM file " + path + " belongs to another store (" +
                           (h.name.empty() ? std::string("unnamed") : h.name) + ", id " +
                           hex(h.id) + "), not to " + owner.name + " (id " + hex(owner.id) +
                           "); refusing to use it");
}

}  // namespace

std::array<uint8_t, 16> new_nvm_id() {
  std::random_device rd;
  std::array<uint8_t, 16> id;
  for (size_t i = 0; i < id.size(); i += 4) {
    const uint32_t r = rd();
    std::memcpy(id.data() + i, &r, 4);
  }
  return id;
}

Status create_nvm_file(const std::string& path, uint64_t bytes, const NvmOwner& owner,
                       const std::array<uint8_t, 16>* replaceable, bool force,
                       std::unique_ptr<NvmMedia>* out) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return errno_status("cannot create NVM file", path);
  auto fail = [&](Status s) {
    close(fd);
    return s;
  };
  if (Status s_ = lock_file(fd, path, false); !s_.is_ok()) return fail(s_);
  struct stat sb;
  if (fstat(fd, &sb) != 0) return fail(errno_status("stat", path));
  if (!S_ISREG(sb.st_mode))
    return fail(Status::error(Errc::kInvalidArgument,
                              "NVM file " + path + " is not a regular file; left untouched"));
  if (sb.st_size > 0 && !force) {  // an existing file: ours to replace?
    std::vector<uint8_t> h(kHeaderBytes);
    const ssize_t got = pread(fd, h.data(), h.size(), 0);
    Header hd;
    const Status d = decode_header(path, h.data(), got < 0 ? 0 : size_t(got), &hd);
    if (!d.is_ok())
      return fail(Status::error(Errc::kExists, "NVM file " + path +
                                                   " exists and is not a pdl NVM file (" +
                                                   std::string(d.message()) +
                                                   "); refusing to overwrite it (--force does)"));
    if (hd.id != owner.id && !(replaceable && hd.id == *replaceable))
      return fail(Status::error(Errc::kExists,
                                "NVM file " + path + " belongs to another store (" + hd.name +
                                    ", id " + hex(hd.id) +
                                    "); refusing to overwrite it (--force does)"));
  }
  std::vector<uint8_t> h(kHeaderBytes);
  encode_header(bytes, owner, h.data());
  // Zeroed NVM, allocated (a later store through the mapping never needs room).
  if (ftruncate(fd, 0) != 0) return fail(errno_status("truncate", path));
  if (ftruncate(fd, off_t(kHeaderBytes + bytes)) != 0)
    return fail(host_full_errno(errno) ? host_full(path, std::strerror(errno))
                                       : errno_status("cannot size NVM file", path));
  if (int e = posix_fallocate(fd, 0, off_t(kHeaderBytes + bytes)); e != 0 && e != EOPNOTSUPP &&
                                                                   e != EINVAL) {
    errno = e;
    return fail(host_full_errno(e) ? host_full(path, std::strerror(e))
                                   : errno_status("cannot allocate NVM file", path));
  }
  if (Status s_ = pwrite_all(fd, path, h.data(), h.size(), 0); !s_.is_ok()) return fail(s_);
  if (fsync(fd) != 0) return fail(errno_status("fsync", path));
  return map_file(fd, path, size_t(kHeaderBytes + bytes), false, out);
}

Status open_nvm_file(const std::string& path, uint64_t bytes, const NvmOwner& owner,
                     bool read_only, std::unique_ptr<NvmMedia>* out) {
  int fd = ::open(path.c_str(), (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    return Status::error(Errc::kNotFound, "NVM file " + path + " is missing (the store " +
                                              owner.name + " keeps its NVM there)");
  if (fd < 0) return errno_status("cannot open NVM file", path);
  auto fail = [&](Status s) {
    close(fd);
    return s;
  };
  if (Status s_ = lock_file(fd, path, read_only); !s_.is_ok()) return fail(s_);
  std::vector<uint8_t> h(kHeaderBytes);
  const ssize_t got = pread(fd, h.data(), h.size(), 0);
  Header hd;
  if (Status s_ = decode_header(path, h.data(), got < 0 ? 0 : size_t(got), &hd); !s_.is_ok())
    return fail(s_);
  if (hd.id != owner.id) return fail(owner_mismatch(path, hd, owner));
  if (bytes && hd.bytes != bytes)
    return fail(Status::error(Errc::kInvalidArgument,
                              "NVM file " + path + " holds " + std::to_string(hd.bytes) +
                                  " bytes of NVM; the store " + owner.name + " has " +
                                  std::to_string(bytes)));
  struct stat sb;
  if (fstat(fd, &sb) != 0) return fail(errno_status("stat", path));
  bytes = hd.bytes;
  if (bytes == 0 || bytes % 8 || bytes > (1u << 30))
    return fail(Status::error(Errc::kCorrupt, "NVM file " + path + ": its header gives a size of " +
                                                  std::to_string(bytes) + " bytes"));
  if (uint64_t(sb.st_size) != kHeaderBytes + bytes)
    return fail(Status::error(Errc::kCorrupt, "NVM file " + path + " is " +
                                                  std::to_string(sb.st_size) +
                                                  " bytes long; its header says " +
                                                  std::to_string(kHeaderBytes + bytes)));
  return map_file(fd, path, size_t(kHeaderBytes + bytes), read_only, out);
}

}  // namespace pdl::detail
