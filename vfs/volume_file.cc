// volume_file.cc — sqlite3_io_methods for files inside an image's Volume: the database, its
// rollback journal, WAL and super-journal.
//
// xSync makes the whole Volume durable (every file's contents, sizes and names) — with atomic
// commit one atomic commit of the store (journal.cc says when else the store commits). Short
// reads zero-fill and return SQLITE_IOERR_SHORT_READ. xSectorSize is the flash page's data size.
// xDeviceCharacteristics claims only POWERSAFE_OVERWRITE: a write rewrites whole chunks, and
// the store makes each chunk old-or-new after a crash, so bytes outside the written range
// never change (the crash tests check it). SAFE_APPEND does not hold — a size may become
// durable before the appended bytes (the store's write buffer may program them later) — and
// neither do ATOMIC* or SEQUENTIAL.
#include <cstring>

#include "vfs/vfs_file.h"

namespace pdl::vfs {

namespace {

int x_close(sqlite3_file* file) {
  PdlFile* f = as(file);
  int rc = SQLITE_OK;
  if (f->main_db) {
    if (f->shm_mapped) shm_unmap(file, 0);
    db_unlock(f, SQLITE_LOCK_NONE);
  }
  if (f->delete_on_close) {
    Status st = f->db->vol->remove(f->name);
    if (!st.is_ok() && !st.is(Errc::kNotFound)) rc = to_sqlite(st, SQLITE_IOERR_DELETE);
  }
  release_db(f->db);
  f->~PdlFile();
  return rc;
}

int x_read(sqlite3_file* file, void* buf, int amt, sqlite3_int64 off) {
  PdlFile* f = as(file);
  size_t got = 0;
  std::span<uint8_t> out(static_cast<uint8_t*>(buf), size_t(amt));
  Status st = f->db->vol->read(f->id, uint64_t(off), out, &got);
  if (!st.is_ok()) return to_sqlite(st, SQLITE_IOERR_READ);
  if (got < size_t(amt)) {
    std::memset(out.data() + got, 0, size_t(amt) - got);
    return SQLITE_IOERR_SHORT_READ;
  }
  return SQLITE_OK;
}

int x_write(sqlite3_file* file, const void* buf, int amt, sqlite3_int64 off) {
  PdlFile* f = as(file);
  if (f->read_only) return SQLITE_READONLY;
  Status st = f->db->vol->write(
      f->id, uint64_t(off), std::span<const uint8_t>(static_cast<const uint8_t*>(buf), size_t(amt)));
  if (st.is_ok()) return SQLITE_OK;
  const int rc = to_sqlite(st, SQLITE_IOERR_WRITE);
  if (st.is(Errc::kTooLarge)) report_error(rc, f->name + ": " + std::string(st.message()));
  if (f->main_db) database_write_failed(*f->db, rc);
  return rc;
}

int x_truncate(sqlite3_file* file, sqlite3_int64 size) {
  PdlFile* f = as(file);
  if (f->read_only) return SQLITE_READONLY;
  Status st = f->db->vol->truncate(f->id, uint64_t(size));
  if (st.is(Errc::kTooLarge)) report_error(SQLITE_FULL, f->name + ": " + std::string(st.message()));
  return st.is_ok() ? SQLITE_OK : to_sqlite(st, SQLITE_IOERR_TRUNCATE);
}

int x_sync(sqlite3_file* file, int) {
  PdlFile* f = as(file);
  if (f->read_only) return SQLITE_OK;
  Status st = f->db->vol->sync();
  if (st.is_ok() && f->main_db) database_synced(*f->db);
  return st.is_ok() ? SQLITE_OK : to_sqlite(st, SQLITE_IOERR_FSYNC);
}

int x_file_size(sqlite3_file* file, sqlite3_int64* size) {
  PdlFile* f = as(file);
  uint64_t s = 0;
  Status st = f->db->vol->size(f->id, &s);
  *size = sqlite3_int64(s);
  return st.is_ok() ? SQLITE_OK : to_sqlite(st, SQLITE_IOERR_FSTAT);
}

int x_lock(sqlite3_file* file, int level) {
  PdlFile* f = as(file);
  if (!f->main_db) return SQLITE_OK;
  const int before = f->lock;
  int rc = db_lock(f, level);
  if (rc == SQLITE_OK && before < SQLITE_LOCK_RESERVED && level >= SQLITE_LOCK_RESERVED) {
    rc = transaction_begins(*f->db);
    if (rc != SQLITE_OK) db_unlock(f, before);  // (SQLite keeps its lock level on an error)
  }
  return rc;
}

int x_unlock(sqlite3_file* file, int level) {
  PdlFile* f = as(file);
  if (!f->main_db) return SQLITE_OK;
  const bool writing = f->lock >= SQLITE_LOCK_RESERVED;
  const int rc = db_unlock(f, level);
  // A write transaction ended: commit what it left uncommitted (journal.cc).
  if (rc == SQLITE_OK && writing && level <= SQLITE_LOCK_SHARED)
    return commit_at_transaction_end(*f->db);
  return rc;
}

int x_check_reserved(sqlite3_file* file, int* out) {
  PdlFile* f = as(file);
  if (!f->main_db) {
    *out = 0;
    return SQLITE_OK;
  }
  return db_check_reserved(f, out);
}

int x_file_control(sqlite3_file* file, int op, void* arg) {
  PdlFile* f = as(file);
  switch (op) {
    case SQLITE_FCNTL_PRAGMA:
      return f->main_db ? pdl_pragma(f, static_cast<char**>(arg)) : SQLITE_NOTFOUND;
    case SQLITE_FCNTL_SYNC:  // the database's sync is next; arg: a super-journal's name or null
      return f->main_db && arg ? journal_super_sync(*f->db) : SQLITE_OK;
    case SQLITE_FCNTL_VFSNAME:
      *static_cast<char**>(arg) = sqlite3_mprintf("pdl");
      return SQLITE_OK;
    case SQLITE_FCNTL_LOCKSTATE:
      *static_cast<int*>(arg) = f->lock;
      return SQLITE_OK;
    case SQLITE_FCNTL_HAS_MOVED:
      *static_cast<int*>(arg) = 0;
      return SQLITE_OK;
    case SQLITE_FCNTL_SIZE_HINT:
    case SQLITE_FCNTL_CHUNK_SIZE:
      return SQLITE_OK;  // chunks are allocated as written; nothing to reserve
    default:
      return SQLITE_NOTFOUND;
  }
}

int x_sector_size(sqlite3_file* file) {
  PdlFile* f = as(file);
  return int(f->db->vol->layout().chunk);
}

int x_device_characteristics(sqlite3_file*) { return SQLITE_IOCAP_POWERSAFE_OVERWRITE; }

}  // namespace

const sqlite3_io_methods kVolumeFileMethods = {
    /* iVersion               */ 2,  // shm (WAL); no memory-mapped I/O
    /* xClose                 */ guarded_close<x_close>,
    /* xRead                  */ vfs_guarded<"xRead", x_read>,
    /* xWrite                 */ vfs_guarded<"xWrite", x_write>,
    /* xTruncate              */ vfs_guarded<"xTruncate", x_truncate>,
    /* xSync                  */ vfs_guarded<"xSync", x_sync>,
    /* xFileSize              */ vfs_guarded<"xFileSize", x_file_size>,
    /* xLock                  */ vfs_guarded<"xLock", x_lock>,
    /* xUnlock                */ vfs_guarded<"xUnlock", x_unlock>,
    /* xCheckReservedLock     */ vfs_guarded<"xCheckReservedLock", x_check_reserved>,
    /* xFileControl           */ vfs_guarded<"xFileControl", x_file_control>,
    /* xSectorSize            */ x_sector_size,
    /* xDeviceCharacteristics */ x_device_characteristics,
    /* xShmMap                */ vfs_guarded<"xShmMap", shm_map>,
    /* xShmLock               */ vfs_guarded<"xShmLock", shm_lock>,
    /* xShmBarrier            */ vfs_guarded<"xShmBarrier", shm_barrier>,
    /* xShmUnmap              */ vfs_guarded<"xShmUnmap", shm_unmap>,
    /* xFetch                 */ nullptr,
    /* xUnfetch               */ nullptr,
};

}  // namespace pdl::vfs
