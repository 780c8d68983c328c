// timed_vfs.cc — see timed_vfs.h. The shim follows SQLite's documented VFS-shim pattern: the
// wrapper's sqlite3_file header is followed by the "pdl" file it forwards to.
#include "tpcc/timed_vfs.h"

#include <sqlite3.h>

#include <cstring>
#include <map>
#include <mutex>

#include "flash/image/image.h"
#include "vfs/pdl_vfs.h"

namespace pdl::tpcc {
namespace {

sqlite3_vfs* g_inner = nullptr;
sqlite3_vfs g_vfs;
std::mutex g_mu;
std::map<std::string, IoCalls>& calls_by_db() {
  static std::map<std::string, IoCalls> m;
  return m;
}

struct TimedFile {
  sqlite3_file base;   // methods = the shim's io methods
  IoCalls* calls;      // the image's entry in calls_by_db (map nodes are stable)
  std::string* db;     // the database file's full path (owned)
  bool main_db;
  sqlite3_file* inner() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

TimedFile* tf(sqlite3_file* f) { return reinterpret_cast<TimedFile*>(f); }

// The image's simulated clock, 0 while no connection has it open.
uint64_t sim_now(const std::string& db) {
  Image* img = vfs::image_of(db);
  if (!img) return 0;
  auto lock = img->volume->lock();
  return img->nand->counters().sim_us;
}

int x_close(sqlite3_file* f) {
  TimedFile* t = tf(f);
  const int rc = t->inner()->pMethods ? t->inner()->pMethods->xClose(t->inner()) : SQLITE_OK;
  delete t->db;
  t->db = nullptr;
  return rc;
}
int x_read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
  TimedFile* t = tf(f);
  const uint64_t t0 = sim_now(*t->db);
  const int rc = t->inner()->pMethods->xRead(t->inner(), buf, n, off);
  const uint64_t t1 = sim_now(*t->db);
  std::lock_guard<std::mutex> g(g_mu);
  t->calls->reads++;
  if (t1 >= t0) t->calls->read_us += double(t1 - t0);
  return rc;
}
int x_write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  TimedFile* t = tf(f);
  {
    std::lock_guard<std::mutex> g(g_mu);
    t->calls->writes++;
    if (t->main_db) t->calls->db_writes++;
  }
  return t->inner()->pMethods->xWrite(t->inner(), buf, n, off);
}
int x_truncate(sqlite3_file* f, sqlite3_int64 size) {
  return tf(f)->inner()->pMethods->xTruncate(tf(f)->inner(), size);
}
int x_sync(sqlite3_file* f, int flags) {
  {
    std::lock_guard<std::mutex> g(g_mu);
    tf(f)->calls->syncs++;
  }
  return tf(f)->inner()->pMethods->xSync(tf(f)->inner(), flags);
}
int x_file_size(sqlite3_file* f, sqlite3_int64* size) {
  return tf(f)->inner()->pMethods->xFileSize(tf(f)->inner(), size);
}
int x_lock(sqlite3_file* f, int l) { return tf(f)->inner()->pMethods->xLock(tf(f)->inner(), l); }
int x_unlock(sqlite3_file* f, int l) {
  return tf(f)->inner()->pMethods->xUnlock(tf(f)->inner(), l);
}
int x_check_reserved(sqlite3_file* f, int* out) {
  return tf(f)->inner()->pMethods->xCheckReservedLock(tf(f)->inner(), out);
}
int x_file_control(sqlite3_file* f, int op, void* arg) {
  return tf(f)->inner()->pMethods->xFileControl(tf(f)->inner(), op, arg);
}
int x_sector_size(sqlite3_file* f) {
  return tf(f)->inner()->pMethods->xSectorSize(tf(f)->inner());
}
int x_device_characteristics(sqlite3_file* f) {
  return tf(f)->inner()->pMethods->xDeviceCharacteristics(tf(f)->inner());
}
int x_shm_map(sqlite3_file* f, int pg, int sz, int extend, void volatile** p) {
  return tf(f)->inner()->pMethods->xShmMap(tf(f)->inner(), pg, sz, extend, p);
}
int x_shm_lock(sqlite3_file* f, int off, int n, int flags) {
  return tf(f)->inner()->pMethods->xShmLock(tf(f)->inner(), off, n, flags);
}
void x_shm_barrier(sqlite3_file* f) { tf(f)->inner()->pMethods->xShmBarrier(tf(f)->inner()); }
int x_shm_unmap(sqlite3_file* f, int del) {
  return tf(f)->inner()->pMethods->xShmUnmap(tf(f)->inner(), del);
}
int x_fetch(sqlite3_file* f, sqlite3_int64 off, int n, void** p) {
  return tf(f)->inner()->pMethods->xFetch(tf(f)->inner(), off, n, p);
}
int x_unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  return tf(f)->inner()->pMethods->xUnfetch(tf(f)->inner(), off, p);
}

// One io-methods table per inner version (the inner file's table decides which calls exist).
sqlite3_io_methods make_methods(int version) {
  sqlite3_io_methods m{};
  m.iVersion = version;
  m.xClose = x_close;
  m.xRead = x_read;
  m.xWrite = x_write;
  m.xTruncate = x_truncate;
  m.xSync = x_sync;
  m.xFileSize = x_file_size;
  m.xLock = x_lock;
  m.xUnlock = x_unlock;
  m.xCheckReservedLock = x_check_reserved;
  m.xFileControl = x_file_control;
  m.xSectorSize = x_sector_size;
  m.xDeviceCharacteristics = x_device_characteristics;
  if (version >= 2) {
    m.xShmMap = x_shm_map;
    m.xShmLock = x_shm_lock;
    m.xShmBarrier = x_shm_barrier;
    m.xShmUnmap = x_shm_unmap;
  }
  if (version >= 3) {
    m.xFetch = x_fetch;
    m.xUnfetch = x_unfetch;
  }
  return m;
}
const sqlite3_io_methods g_methods[3] = {make_methods(1), make_methods(2), make_methods(3)};

int x_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  TimedFile* t = tf(f);
  t->base.pMethods = nullptr;
  t->db = nullptr;
  t->calls = nullptr;
  std::memset(t->inner(), 0, size_t(g_inner->szOsFile));
  const int rc = g_inner->xOpen(g_inner, name, t->inner(), flags, out_flags);
  if (rc != SQLITE_OK || !t->inner()->pMethods) return rc;
  t->main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
  std::string db;
  if (name && (flags & (SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_WAL)))
    db = sqlite3_filename_database(name);
  else if (name)
    db = name;
  t->db = new std::string(db);
  {
    std::lock_guard<std::mutex> g(g_mu);
    t->calls = &calls_by_db()[db];
  }
  const int v = t->inner()->pMethods->iVersion;
  t->base.pMethods = &g_methods[v >= 3 ? 2 : v < 1 ? 0 : v - 1];
  return SQLITE_OK;
}

int x_delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return g_inner->xDelete(g_inner, name, sync_dir);
}
int x_access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_inner->xAccess(g_inner, name, flags, out);
}
int x_full_pathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_inner->xFullPathname(g_inner, name, n, out);
}
void* x_dl_open(sqlite3_vfs*, const char* f) { return g_inner->xDlOpen(g_inner, f); }
void x_dl_error(sqlite3_vfs*, int n, char* out) { g_inner->xDlError(g_inner, n, out); }
void (*x_dl_sym(sqlite3_vfs*, void* h, const char* s))(void) {
  return g_inner->xDlSym(g_inner, h, s);
}
void x_dl_close(sqlite3_vfs*, void* h) { g_inner->xDlClose(g_inner, h); }
int x_randomness(sqlite3_vfs*, int n, char* out) { return g_inner->xRandomness(g_inner, n, out); }
int x_sleep(sqlite3_vfs*, int us) { return g_inner->xSleep(g_inner, us); }
int x_current_time(sqlite3_vfs*, double* out) { return g_inner->xCurrentTime(g_inner, out); }
int x_get_last_error(sqlite3_vfs*, int n, char* out) {
  return g_inner->xGetLastError ? g_inner->xGetLastError(g_inner, n, out) : 0;
}
int x_current_time_int64(sqlite3_vfs*, sqlite3_int64* out) {
  return g_inner->xCurrentTimeInt64(g_inner, out);
}

}  // namespace

int register_timed_vfs() {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_inner) return SQLITE_OK;
  if (const int rc = vfs::register_vfs(); rc != SQLITE_OK) return rc;
  sqlite3_vfs* inner = sqlite3_vfs_find("pdl");
  if (!inner) return SQLITE_ERROR;
  g_vfs = sqlite3_vfs{};
  g_vfs.iVersion = inner->iVersion >= 2 ? 2 : 1;
  g_vfs.szOsFile = int(sizeof(TimedFile)) + inner->szOsFile;
  g_vfs.mxPathname = inner->mxPathname;
  g_vfs.zName = "pdl-timed";
  g_vfs.xOpen = x_open;
  g_vfs.xDelete = x_delete;
  g_vfs.xAccess = x_access;
  g_vfs.xFullPathname = x_full_pathname;
  g_vfs.xDlOpen = x_dl_open;
  g_vfs.xDlError = x_dl_error;
  g_vfs.xDlSym = x_dl_sym;
  g_vfs.xDlClose = x_dl_close;
  g_vfs.xRandomness = x_randomness;
  g_vfs.xSleep = x_sleep;
  g_vfs.xCurrentTime = x_current_time;
  g_vfs.xGetLastError = x_get_last_error;
  if (g_vfs.iVersion >= 2) g_vfs.xCurrentTimeInt64 = x_current_time_int64;
  g_inner = inner;
  return sqlite3_vfs_register(&g_vfs, 0);
}

IoCalls io_calls(const std::string& db_path) {
  std::lock_guard<std::mutex> g(g_mu);
  auto it = calls_by_db().find(db_path);
  return it == calls_by_db().end() ? IoCalls{} : it->second;
}

}  // namespace pdl::tpcc
