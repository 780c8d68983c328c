// vfs_file.h — the sqlite3_file "subclasses" of the pdl VFS and the helpers its parts share.
//
// Three kinds of file come out of xOpen:
//   * Volume files: the database, its rollback journal / WAL / super-journal — all inside the
//     image's Volume (volume_file.cc; locks and shm of the database: lock.cc, shm.cc);
//   * memory files: temp databases, temp/sub-journals, transient files (memory_file.cc);
// SQLite allocates szOsFile bytes for each; xOpen constructs the C++ object in place and xClose
// destroys it. Invariant: `base` is the first member, so sqlite3_file* and PdlFile* convert.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "flash/common/status.h"
#include "vfs/db_state.h"
#include "vfs/sqlite_api.h"

namespace pdl::vfs {

struct MemoryData {
  std::vector<uint8_t> bytes;
};

struct PdlFile {
  sqlite3_file base;  // must stay first
  // Volume file:
  std::shared_ptr<DbState> db;
  Volume::FileId id = 0;
  std::string name;        // name inside the Volume
  bool main_db = false;
  bool read_only = false;
  bool delete_on_close = false;
  int lock = 0;            // SQLITE_LOCK_* held by this file (main database only)
  bool shm_mapped = false;
  uint16_t shm_shared_mask = 0, shm_excl_mask = 0;
  // Memory file:
  std::unique_ptr<MemoryData> mem;
};
static_assert(offsetof(PdlFile, base) == 0, "sqlite3_file must be the first member");

extern const sqlite3_io_methods kVolumeFileMethods;
extern const sqlite3_io_methods kMemoryFileMethods;

// Record `msg` as this thread's last error, log it through sqlite3_log, and print it on stderr
// (unless PDL_VFS_QUIET is set): SQLite reports only a code, the user needs the reason.
void report_error(int sqlite_code, const std::string& msg);
// Translate a Status at the VFS edge: kFull -> SQLITE_FULL, kBusy -> SQLITE_BUSY, kCorrupt ->
// SQLITE_IOERR_DATA (corrupt flash is an I/O error, never wrong data), others -> `io_code`.
int to_sqlite(const Status& st, int io_code);

// Lock table (lock.cc).
int db_lock(PdlFile* f, int level);
int db_unlock(PdlFile* f, int level);
int db_check_reserved(PdlFile* f, int* out);
// Shm (shm.cc).
int shm_map(sqlite3_file* file, int region, int size, int extend, void volatile** out);
int shm_lock(sqlite3_file* file, int offset, int n, int flags);
void shm_barrier(sqlite3_file* file);
int shm_unmap(sqlite3_file* file, int delete_flag);

// The pragma handler of SQLITE_FCNTL_PRAGMA (pragma.cc): pdl_stats, pdl_stats_reset.
int pdl_pragma(PdlFile* f, char** args);

}  // namespace pdl::vfs
