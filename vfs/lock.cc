// lock.cc — SQLite's database lock levels between the connections of one process (rules in
// db_state.h). Other processes are kept out altogether by the image's flock.
#include "vfs/vfs_file.h"

namespace pdl::vfs {

int db_lock(PdlFile* f, int level) {
  DbState& d = *f->db;
  std::lock_guard<std::mutex> g(d.mu);
  if (f->lock >= level) return SQLITE_OK;
  const void* me = f;
  auto other = [me](const void* owner) { return owner != nullptr && owner != me; };
  switch (level) {
    case SQLITE_LOCK_SHARED:
      if (d.pending || d.exclusive) return SQLITE_BUSY;
      d.shared++;
      f->lock = SQLITE_LOCK_SHARED;
      return SQLITE_OK;
    case SQLITE_LOCK_RESERVED:
      if (other(d.reserved) || other(d.pending) || other(d.exclusive)) return SQLITE_BUSY;
      d.reserved = me;
      f->lock = SQLITE_LOCK_RESERVED;
      return SQLITE_OK;
    case SQLITE_LOCK_EXCLUSIVE:
      if (other(d.pending) || other(d.exclusive)) return SQLITE_BUSY;
      d.pending = me;  // new readers wait from now on
      if (d.shared > 1) {
        f->lock = SQLITE_LOCK_PENDING;
        return SQLITE_BUSY;
      }
      d.exclusive = me;
      f->lock = SQLITE_LOCK_EXCLUSIVE;
      return SQLITE_OK;
    default:
      return SQLITE_MISUSE;  // SQLite never asks for PENDING directly
  }
}

int db_unlock(PdlFile* f, int level) {
  DbState& d = *f->db;
  std::lock_guard<std::mutex> g(d.mu);
  if (f->lock <= level) return SQLITE_OK;
  const void* me = f;
  if (d.reserved == me) d.reserved = nullptr;
  if (d.pending == me) d.pending = nullptr;
  if (d.exclusive == me) d.exclusive = nullptr;
  if (level == SQLITE_LOCK_NONE) d.shared--;
  f->lock = level;
  return SQLITE_OK;
}

int db_check_reserved(PdlFile* f, int* out) {
  DbState& d = *f->db;
  std::lock_guard<std::mutex> g(d.mu);
  *out = d.reserved || d.pending || d.exclusive;
  return SQLITE_OK;
}

}  // namespace pdl::vfs
