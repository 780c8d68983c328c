// vfs_file.h — the sqlite3_file "subclasses" of the pdl VFS and the helpers its parts share.
//
// Four kinds of file come out of xOpen:
//   * Volume files: the database, its WAL, and its rollback journal with commit=journal —
//     inside the image's Volume (volume_file.cc; locks and shm of the database: lock.cc, shm.cc);
//   * the rollback journal with commit=atomic: in process memory, shared by the image's
//     connections, on flash only when it must be (journal.cc);
//   * memory files: temp databases, temp/sub-journals, transient files (memory_file.cc);
//   * files that belong to no pdl image (a super-journal, the journal of an ATTACHed database
//     of another VFS that SQLite opens through this one while rolling back): the default VFS's
//     file object, in this object's place (vfs.cc);
// SQLite allocates szOsFile bytes for each; xOpen constructs the C++ object in place and xClose
// destroys it. Invariant: `base` is the first member, so sqlite3_file* and PdlFile* convert.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "flash/common/c_edge.h"
#include "flash/common/status.h"
#include "vfs/db_state.h"
#include "vfs/sqlite_api.h"

namespace pdl::vfs {

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
  bool journal = false;     // the database's rollback journal (journal.cc)
  // Memory file:
  std::unique_ptr<MemoryData> mem;
};
static_assert(offsetof(PdlFile, base) == 0, "sqlite3_file must be the first member");

// The PdlFile behind an sqlite3_file SQLite hands to the io methods.
inline PdlFile* as(sqlite3_file* f) { return reinterpret_cast<PdlFile*>(f); }

extern const sqlite3_io_methods kVolumeFileMethods;
extern const sqlite3_io_methods kMemoryFileMethods;
extern const sqlite3_io_methods kJournalFileMethods;

// The rollback journal with atomic commit (journal.cc). open_journal fills `f` (db and name
// set) as the journal's file; journal_exists / delete_journal are xAccess / xDelete for it.
int open_journal(PdlFile* f, bool create);
bool journal_exists(DbState& db);
// A hot rollback journal in the Volume (commit=journal, IPU, an interrupted multi-database
// commit): only a writable open can roll it back.
bool hot_journal_on_flash(DbState& db);
int delete_journal(DbState& db);
// Commit points SQLite tells the database file about (journal.cc):
//   SQLITE_FCNTL_SYNC with a super-journal name: the journal is made durable (on flash) and
//   committed with the database's pages, so a commit spanning several databases stays atomic;
//   the end of a write transaction (xUnlock below RESERVED, a WAL write or checkpoint lock
//   released): what it left uncommitted is committed, unless a journal in memory is hot.
int journal_super_sync(DbState& db);
int commit_at_transaction_end(DbState& db);
// A write transaction of a rollback journal mode begins (RESERVED lock): until it ends, the
// Volume commits only where SQLite says (journal.cc). An error: it may not begin.
int transaction_begins(DbState& db);
// The database file's write failed with `rc`, or its sync succeeded (see DbState::txn_full).
void database_write_failed(DbState& db, int rc);
void database_synced(DbState& db);
// The last connection closes: a journal still hot in memory means an unfinished transaction,
// whose changes are discarded (the commit that closing makes must not include them).
void discard_unfinished(DbState& db);

// Record `msg` as this thread's last error, log it through sqlite3_log, and print it on stderr
// (unless PDL_VFS_QUIET is set): SQLite reports only a code, the user needs the reason.
void report_error(int sqlite_code, const std::string& msg);
// The VFS's policy at its C edge (flash/common/c_edge.h): an exception that escapes a method is
// reported like report_error (without allocating) and answered SQLITE_NOMEM for
// std::bad_alloc, SQLITE_IOERR for anything else. Every sqlite3_vfs and sqlite3_io_methods
// method that can throw is put in its table through vfs_guarded; those that only forward to
// the default VFS or read a field cannot throw and are not.
struct VfsEscape {
  static int escaped(const char* method, const char* what, bool no_memory) noexcept;
};
template <EdgeName Name, auto Fn>
inline constexpr auto vfs_guarded = guarded<VfsEscape, Name, Fn>;
// Inside a catch block of xOpen or xClose: report the exception (VfsEscape) and undo what the
// method left behind — SQLite calls xClose only if xOpen set pMethods, and forgets a file once
// xClose returns, whatever it returns — so the image reference `file` holds is released and
// the PdlFile destroyed. REQUIRES: `file` holds a live PdlFile (vfs.cc, x_open).
int abandon_file(const char* method, sqlite3_file* file) noexcept;
template <int (*Close)(sqlite3_file*)>
int guarded_close(sqlite3_file* file) noexcept {
  try {
    return Close(file);
  } catch (...) {
    return abandon_file("xClose", file);
  }
}

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
