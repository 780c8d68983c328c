// host_file.cc — host_file.h.
#include "flash/device/host_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pdl::detail {

Status errno_status(const char* what, const std::string& path) {
  return Status::error(Errc::kIoError, std::string(what) + " " + path + ": " + std::strerror(errno));
}

bool host_full_errno(int e) { return e == ENOSPC || e == EDQUOT; }

Status host_full(const std::string& path, const std::string& why) {
  return Status::error(Errc::kHostFull, "the host file system holding " + path + " is full (" +
                                            why + "): nothing was written; free space there and retry");
}

Status pwrite_all(int fd, const std::string& path, const uint8_t* p, size_t n, uint64_t off) {
  while (n) {
    const ssize_t w = pwrite(fd, p, n, off_t(off));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && host_full_errno(errno)) return host_full(path, std::strerror(errno));
    if (w < 0) return errno_status("write", path);
    if (w == 0) return Status::error(Errc::kIoError, "short write to " + path);
    p += w, n -= size_t(w), off += uint64_t(w);
  }
  return Status::ok();
}

Status pread_all(int fd, const std::string& path, uint8_t* p, size_t n, uint64_t off) {
  while (n) {
    const ssize_t r = pread(fd, p, n, off_t(off));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno_status("read", path);
    if (r == 0) {  // past the end of the file: erased
      std::memset(p, 0, n);
      return Status::ok();
    }
    p += r, n -= size_t(r), off += uint64_t(r);
  }
  return Status::ok();
}

}  // namespace pdl::detail
