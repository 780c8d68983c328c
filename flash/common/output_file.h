// output_file.h — check, before a long run, that a results file named on a command line can be
// written (pdl-tpcc, pdl-bench, pdl-sqlbench write their --json / --csv files at the end).
//
// An existing file must be writable; a new one must be creatable (it is made and removed
// again, so the check leaves the file system as it was).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "flash/common/status.h"

namespace pdl {

inline Status check_output_file(const std::string& path) {
  if (path.empty()) return Status::error(Errc::kInvalidArgument, "empty file name");
  if (::access(path.c_str(), F_OK) == 0) {
    if (::access(path.c_str(), W_OK) != 0)
      return Status::error(Errc::kInvalidArgument,
                           path + ": cannot write: " + std::strerror(errno));
    return Status::ok();
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0)
    return Status::error(Errc::kInvalidArgument, path + ": cannot create: " + std::strerror(errno));
  ::close(fd);
  ::unlink(path.c_str());
  return Status::ok();
}

}  // namespace pdl
