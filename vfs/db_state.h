// db_state.h — what the connections of one process share about one open image: the Image
// (device + store + Volume), SQLite's lock levels on the database, the WAL-index (shm) in
// process memory, and — with atomic commit — the rollback journal in process memory
// (journal.cc). Kept in a registry keyed by the image's full path; an image is identified by
// its file's device and inode, as os_unix.c identifies a database, so that the names it is
// opened under (symlinks, hard links) share one DbState, each name a key of the registry.
//
// Read-only: an image is opened read-only (O_RDONLY, shared flock, mounted in memory only:
// nothing is programmed or erased) when the opener asks (SQLITE_OPEN_READONLY, immutable=1),
// or when the host will not let this process write the file (read-only mount, no write
// permission: the open falls back to read-only, as os_unix.c's does). A read-write open of an
// image this process holds read-only because a connection asked is refused while the host
// would let it write (its flock and mount are read-only); connections asking read-only may
// share a read-write DbState.
//
// Lock levels follow os_unix.c's in-process rules, without the fcntl calls (the image is
// already owned by this process through its flock):
//   SHARED     granted unless another connection holds PENDING or EXCLUSIVE;
//   RESERVED   one connection at a time, while others may keep SHARED;
//   PENDING    taken on the way to EXCLUSIVE; blocks new SHARED locks;
//   EXCLUSIVE  granted once the requester is the only SHARED holder.
// Shm locks (WAL): SQLITE_SHM_NLOCK slots, each shared by many or exclusive to one.
// Thread-safety: `mu` guards the lock table and shm; the Volume has its own mutex.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "flash/image/image.h"

namespace pdl::vfs {

inline constexpr int kShmLocks = 8;  // SQLITE_SHM_NLOCK

// A file in process memory (temp files; the rollback journal with atomic commit).
struct MemoryData {
  std::vector<uint8_t> bytes;
};

struct DbState {
  std::string path;     // full path of the image = the database name SQLite uses
  // Every name this image is open under in this process (the registry's keys for it): `path`
  // first, then other links to the same file. Guarded by the registry.
  std::vector<std::string> names;
  bool has_id = false;  // dev/ino known (false: no host file, e.g. mtd= under another name)
  dev_t dev = 0;
  ino_t ino = 0;
  // Opened read-only because a connection asked, not because the host or the chip forbids
  // writing (see the file comment).
  bool read_only_asked = false;
  std::string db_name;  // the database file inside the Volume
  std::unique_ptr<Image> image;
  Volume* vol = nullptr;
  int refs = 0;         // open sqlite3_files (database, journals, WALs) — guarded by the registry
  pid_t pid = 0;        // the process that opened it (a forked child must not use it)
  // commit=atomic on a store with atomic groups: the rollback journal lives in `journal`
  // (journal.cc), never on flash, and each database sync is one atomic commit. Otherwise the
  // journal is a Volume file, as for commit=journal.
  bool atomic_commit = false;
  bool commit_asked_atomic = true;  // what the opener asked (commit=), for contradictions
  std::shared_ptr<MemoryData> journal;  // the in-memory journal "file" (null: none exists)
  // The journal that exists now is a Volume file: a hot journal left by commit=journal, or one
  // made durable for a commit spanning several databases (journal.cc). Guarded by the
  // Volume's own serialisation of SQLite's journal calls (one writer holds the locks).
  bool journal_on_flash = false;
  // Why the Volume may not commit on its own now (Volume::hold_commits; journal.cc): a journal
  // hot in memory, or a write transaction (RESERVED lock) in a rollback journal mode — whose
  // journal may be SQLite's own (journal_mode=MEMORY, OFF). Guarded by `mu`.
  bool hold_journal = false, hold_txn = false;
  // A write of the held transaction found no room (SQLITE_FULL) and no database sync came
  // since: SQLite's own rollback (MEMORY, OFF) may not have been able to restore the pages, so
  // the transaction's end discards the open group instead of committing it. Guarded by `mu`.
  bool txn_full = false;

  // Lock order: g_registry_mu (db_state.cc) -> this -> Volume::mu_. Taken without the registry
  // lock held, or under it; while holding it a connection may call the Volume (which takes
  // Volume::mu_), never the other way round; the registry lock is never taken under it.
  std::mutex mu;
  // Database lock table: owners are opaque file pointers.
  int shared = 0;                       // connections holding SHARED or more
  const void* reserved = nullptr;
  const void* pending = nullptr;
  const void* exclusive = nullptr;
  // WAL-index.
  std::vector<std::unique_ptr<uint8_t[]>> shm_regions;
  int shm_region_size = 0;
  int shm_users = 0;
  std::array<int, kShmLocks> shm_shared{};              // holders of each slot, shared
  std::array<const void*, kShmLocks> shm_exclusive{};   // exclusive holder of each slot
};

// Find or open the image at `path` (full path), or the image open under another name that is
// the same file. `params`: URI parameters already validated; `create`: SQLite asked to
// create; `read_only`: the opener asked read-only. On success *out holds one more reference.
Status acquire_db(const std::string& path, const ImageParams& params, const std::string& db,
                  bool create, bool read_only, std::shared_ptr<DbState>* out);
// The open DbState whose database name `name` extends by "-journal" or "-wal";
// nullptr if none is open. `*suffix` gets the extension.
std::shared_ptr<DbState> find_db_for(const std::string& name, std::string* suffix);
// The image whose rollback journal `name` is ("<image>-journal"), when no connection of this
// process has it open: SQLite reads the journals a super-journal names while it rolls back
// another database, and a pdl image's journal lives inside it. Opened now (one more
// reference: release_db). *out is null — and the status ok — if <image> is no pdl image: the
// file is then the default VFS's.
Status acquire_db_of_journal(const std::string& name, std::shared_ptr<DbState>* out);
void add_ref(DbState& db);
// Drop one reference (`db` is reset, even if an exception escapes); the last closes the Image
// (Volume::close, device unlocked).
void release_db(std::shared_ptr<DbState>& db);

}  // namespace pdl::vfs
