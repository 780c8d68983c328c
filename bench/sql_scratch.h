// sql_scratch.h — the start of a SQLite benchmark run on pdl images (pdl-ftlbench,
// pdl-nvmbench): a fresh scratch directory for its images and databases, and the pdl VFS
// registered with SQLite, open errors naming the VFS's cause.
//
// Invariants: on failure the cause is said on stderr as "<tool>: ..." and nothing is left
// behind (the scratch directory made is removed again); the caller removes `work` at the end.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

#include <sqlite3.h>

#include "flash/common/scratch_dir.h"
#include "sql/sql.h"
#include "vfs/pdl_vfs.h"

namespace pdl::bench {

// Makes the scratch directory `*work` (under `dir`, or /dev/shm, else /tmp) and registers the
// pdl VFS; false (said on stderr) if either fails.
inline bool open_sql_scratch(const char* tool, const std::string& dir, std::string* work) {
  if (Status st = make_scratch_dir(dir, tool, work); !st.is_ok()) {
    std::fprintf(stderr, "%s: %s\n", tool, std::string(st.message()).c_str());
    return false;
  }
  if (vfs::register_vfs() != SQLITE_OK) {
    std::fprintf(stderr, "%s: cannot register the pdl VFS\n", tool);
    rmdir(work->c_str());
    return false;
  }
  sql::set_open_detail(vfs::last_error);
  return true;
}

}  // namespace pdl::bench
