// scratch_dir.h — a fresh scratch directory for the benchmark programs (pdl-sqlbench, pdl-tpcc):
// under /dev/shm when it exists (images fsync on every commit; tmpfs makes that free), else
// /tmp, unless the caller names a root.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "flash/common/status.h"

namespace pdl {

inline std::string default_scratch_root() {
  struct stat st;
  return stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
}

// Creates "<root>/<prefix>-XXXXXX" (mkdtemp) and returns its path in *out; root "" = the
// default root.
inline Status make_scratch_dir(const std::string& root, const std::string& prefix,
                               std::string* out) {
  std::string tmpl = (root.empty() ? default_scratch_root() : root) + "/" + prefix + "-XXXXXX";
  if (!mkdtemp(tmpl.data()))
    return Status::error(Errc::kIoError, "cannot create a directory in " +
                                             tmpl.substr(0, tmpl.rfind('/')) + ": " +
                                             std::strerror(errno));
  *out = tmpl;
  return Status::ok();
}

}  // namespace pdl
