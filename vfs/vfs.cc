// vfs.cc — the "pdl" sqlite3_vfs: names, opening, deleting, access checks; registration.
//
// OVERVIEW
//   file:shop.db?vfs=pdl   shop.db on the host is a NAND image (emulated chip). SQLite's
//   database, rollback journal, WAL and super-journal are files inside the image's Volume;
//   the WAL-index is process memory; temp files are memory files. One process owns an image
//   (flock); its connections share it through a registry (db_state.h).
// USAGE
//   sqlite3 -cmd '.load build/vfs/pdl' -cmd '.open file:shop.db?vfs=pdl'
//   Super-journals (multi-database commits, ATTACH) stay on the host beside the image, through
//   the default VFS: the one deciding a multi-image commit must be readable while only one of
//   the images is open, which a file inside another image would not be.
//   URI parameters at creation: method, max_diff, obsolete, page, pages_per_block, size, nop,
//   erase_limit, max_files; at any open: cache_chunks, owner_cache, clock, track_changes, db (the database file
//   inside the image). A set parameter that contradicts an existing image, or an unknown one, fails the
//   open with a message. An image with no room left for the mount's clean-up opens read-only;
//   so do SQLite's read-only opens (SQLITE_OPEN_READONLY, mode=ro, immutable=1) and an image
//   the host will not let this process write — mounted in memory only (db_state.h).
// NOTES
//   * A path that exists but is not a pdl image is refused and never written.
//   * commit=atomic (the default): the rollback journal lives in memory and each database sync
//     is an atomic commit of the store (journal.cc). commit=journal keeps it on flash: then
//     deleting a journal (journal_mode=DELETE's commit point) is made durable at once, so a
//     commit acknowledged in DELETE mode survives a power cut (unix needs synchronous=EXTRA).
//   * A file that belongs to no pdl image — the journal of an ATTACHed unix database, which
//     SQLite opens through the main database's VFS while it rolls back a multi-database
//     transaction — is served by the default VFS. The journal of a pdl image no connection of
//     this process has open is served from that image, opened for the purpose.
//   * Randomness, sleep, time and dlopen are delegated to the default ("unix") VFS.
#include <unistd.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <new>

#include "vfs/pdl_vfs.h"
#include "vfs/vfs_file.h"

namespace pdl::vfs {

namespace {
thread_local std::string t_last_error;
sqlite3_vfs* g_base = nullptr;  // the default VFS, for the utility methods

// URI keys SQLite itself interprets: passed over silently.
bool sqlite_uri_key(const char* k) {
  static const char* const kKeys[] = {"vfs",  "mode", "cache", "psow", "nolock",
                                      "immutable", "modeof", nullptr};
  for (const char* const* p = kKeys; *p; p++)
    if (std::strcmp(*p, k) == 0) return true;
  return false;
}

std::string known_keys() {
  std::string s = "db";
  for (const char* const* p = ImageParams::kKeys; *p; p++) s += std::string(", ") + *p;
  return s;
}

// Parse the pdl parameters of a database URI.
// A key given twice is refused: SQLite would silently take the first value.
Status parse_uri(const char* name, ImageParams* params, std::string* db) {
  for (int i = 0;; i++) {
    const char* k = sqlite3_uri_key(name, i);
    if (!k) break;
    if (sqlite_uri_key(k)) continue;
    for (int j = 0; j < i; j++)
      if (std::strcmp(sqlite3_uri_key(name, j), k) == 0)
        return Status::error(Errc::kInvalidArgument,
                             std::string("URI parameter '") + k +
                                 "' given twice (pdl takes one value per parameter)");
    const char* v = sqlite3_uri_parameter(name, k);
    if (!v) v = "";
    if (std::strcmp(k, "db") == 0) {
      if (Status st = check_name(v); !st.is_ok())
        return Status::error(Errc::kInvalidArgument,
                             std::string("db=") + v + ": " + std::string(st.message()));
      *db = v;
      continue;
    }
    Status st = params->set(k, v);
    if (st.is(Errc::kNotFound))
      return Status::error(Errc::kInvalidArgument, std::string("unknown URI parameter '") + k +
                                                       "' (pdl knows: " + known_keys() + ")");
    PDL_TRY(st);
  }
  return Status::ok();
}

// "<db>-mj" + 9 hex digits (pager.c's "-mj%06X9%02X"): a super-journal (see OVERVIEW).
bool is_super_journal(const char* zname) {
  const size_t n = std::strlen(zname);
  if (n < 12 || std::strncmp(zname + n - 12, "-mj", 3) != 0) return false;
  for (size_t i = n - 9; i < n; i++)
    if (!std::isxdigit(static_cast<unsigned char>(zname[i]))) return false;
  return true;
}

int open_failed(PdlFile* f, int code, const std::string& msg) {
  report_error(code, msg);
  f->~PdlFile();
  return code;
}

int x_open(sqlite3_vfs*, sqlite3_filename zname, sqlite3_file* file, int flags, int* out_flags) {
  // By name, not by flag: pager_delsuper() opens the *child* journals named in a super-journal
  // with SQLITE_OPEN_SUPER_JOURNAL too, and those live in their images.
  if (zname && is_super_journal(zname))  // the base VFS's file object takes our slot
    return g_base->xOpen(g_base, zname, file, flags, out_flags);
  PdlFile* f = new (file) PdlFile();
  f->base.pMethods = nullptr;  // SQLite calls xClose only if xOpen set pMethods
  if (out_flags) *out_flags = flags;
  if (!zname || (flags & (SQLITE_OPEN_TEMP_DB | SQLITE_OPEN_TEMP_JOURNAL |
                          SQLITE_OPEN_SUBJOURNAL | SQLITE_OPEN_TRANSIENT_DB))) {
    f->mem = std::make_unique<MemoryData>();
    f->base.pMethods = &kMemoryFileMethods;
    return SQLITE_OK;
  }
  bool create = flags & SQLITE_OPEN_CREATE;
  // immutable=1 reaches no VFS as a flag (the pager applies it after xOpen): read-only too.
  const bool immutable = sqlite3_uri_boolean(zname, "immutable", 0);
  const bool ask_ro = (flags & SQLITE_OPEN_READONLY) || immutable;
  if (flags & SQLITE_OPEN_MAIN_DB) {
    ImageParams params;
    std::string db;
    Status st = parse_uri(zname, &params, &db);
    if (!st.is_ok()) return open_failed(f, SQLITE_CANTOPEN, zname + (": " + st.to_string()));
    st = acquire_db(zname, params, db, create && !ask_ro, ask_ro, &f->db);
    if (!st.is_ok())
      return open_failed(f, st.is(Errc::kBusy)       ? SQLITE_BUSY
                            : st.is(Errc::kHostFull) ? SQLITE_FULL  // (no room to create it)
                                                     : SQLITE_CANTOPEN,
                         std::string(st.message()));
    f->main_db = true;
    f->name = f->db->db_name;
    if (f->db->vol->read_only() && hot_journal_on_flash(*f->db)) {
      // SQLite refuses to read past a hot journal it may not roll back (READONLY_ROLLBACK),
      // but with immutable=1 it never looks: it would read the interrupted transaction.
      const std::string why = f->db->path + " holds a hot rollback journal (a transaction a " +
                              "crash interrupted) that only a read-write open can roll back";
      if (immutable) {
        release_db(f->db);
        return open_failed(f, SQLITE_CANTOPEN, why + "; immutable=1 would read past it");
      }
      report_error(SQLITE_READONLY_ROLLBACK, why + "; until then reads fail (SQLITE_READONLY)");
    }
  } else {
    std::string suffix;
    f->db = find_db_for(zname, &suffix);
    if (f->db) {
      add_ref(*f->db);
    } else {
      Status st = acquire_db_of_journal(zname, &f->db);
      if (!st.is_ok())
        return open_failed(f, st.is(Errc::kBusy) ? SQLITE_BUSY : SQLITE_CANTOPEN,
                           std::string(zname) + ": " + std::string(st.message()));
      if (!f->db) {  // no pdl image's file: served as the default VFS would serve it
        f->~PdlFile();
        return g_base->xOpen(g_base, zname, file, flags, out_flags);
      }
      suffix = "-journal";
    }
    f->name = f->db->db_name + suffix;
    FileInfo wal;
    if (suffix == "-wal" && f->db->vol->read_only() && !f->db->vol->stat(f->name, &wal).is_ok()) {
      // A read-only image whose WAL was checkpointed away: an empty WAL SQLite may not write
      // (WAL_RDONLY), so the database reads as it stands; the WAL-index is process memory.
      release_db(f->db);  // (a memory file holds no image)
      f->db.reset();
      f->mem = std::make_unique<MemoryData>();
      f->read_only = true;
      if (out_flags) *out_flags = (flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) |
                                  SQLITE_OPEN_READONLY;
      f->base.pMethods = &kMemoryFileMethods;
      return SQLITE_OK;
    }
    if (suffix == "-journal" && f->db->atomic_commit) {  // journal.cc
      f->read_only = flags & SQLITE_OPEN_READONLY;
      const int rc = open_journal(f, create);
      if (rc == SQLITE_OK) return SQLITE_OK;
      release_db(f->db);
      return open_failed(f, rc, std::string(zname) + ": no such journal");
    }
  }
  if (f->db->vol->read_only()) create = false;  // (no file to make: kNotFound names it)
  Status st = f->db->vol->open_file(f->name, create, &f->id);
  if (st.is_ok() && f->main_db && create && f->db->vol->main_name().empty())
    st = f->db->vol->set_main_name(f->name);
  if (!st.is_ok()) {
    release_db(f->db);
    return open_failed(f, st.is(Errc::kFull) || st.is(Errc::kHostFull) ? SQLITE_FULL
                          : st.is(Errc::kReadOnly)                    ? SQLITE_READONLY
                                                   : SQLITE_CANTOPEN,
                       std::string(zname) + ": " + std::string(st.message()));
  }
  f->read_only = flags & SQLITE_OPEN_READONLY;
  if (!f->read_only && (f->db->vol->read_only() || (f->main_db && ask_ro))) {
    // An image opened read-only (asked, host media read-only, its chip full) or immutable=1:
    // SQLite is told so, as for a file it may not write, and a write statement fails with
    // SQLITE_READONLY before it opens a journal; the WAL of such an image is WAL_RDONLY.
    f->read_only = true;
    if (out_flags)
      *out_flags = (flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_READONLY;
  }
  f->delete_on_close = flags & SQLITE_OPEN_DELETEONCLOSE;
  f->base.pMethods = &kVolumeFileMethods;
  return SQLITE_OK;
}

// x_open behind its guard: an exception leaves no PdlFile and no image reference behind (the
// slot is handed to the default VFS only by calls that cannot throw, so a PdlFile is live
// whenever x_open throws).
int x_open_guarded(sqlite3_vfs* vfs, sqlite3_filename zname, sqlite3_file* file, int flags,
                   int* out_flags) noexcept {
  try {
    return x_open(vfs, zname, file, flags, out_flags);
  } catch (...) {
    file->pMethods = nullptr;
    return abandon_file("xOpen", file);
  }
}

// The image holding `zname` (a journal or WAL of an open image, or the journal of a pdl image
// opened for the call: `opened`), or null if the file is not a pdl image's.
Status image_for(const char* zname, std::shared_ptr<DbState>* db, std::string* suffix,
                 bool* opened) {
  *opened = false;
  *db = find_db_for(zname, suffix);
  if (*db) return Status::ok();
  PDL_TRY(acquire_db_of_journal(zname, db));
  *opened = *db != nullptr;
  *suffix = "-journal";
  return Status::ok();
}

int x_delete(sqlite3_vfs*, const char* zname, int sync_dir) {
  if (is_super_journal(zname)) return g_base->xDelete(g_base, zname, sync_dir);
  std::string suffix;
  std::shared_ptr<DbState> db;
  bool opened;
  Status st = image_for(zname, &db, &suffix, &opened);
  if (!st.is_ok()) return to_sqlite(st, SQLITE_IOERR_DELETE);
  if (!db) return g_base->xDelete(g_base, zname, sync_dir);
  int rc;
  if (suffix == "-journal" && db->atomic_commit) {
    rc = delete_journal(*db);
  } else {
    st = db->vol->remove(db->db_name + suffix);
    if (st.is_ok()) st = db->vol->sync();  // see NOTES: the delete may be a commit
    rc = st.is(Errc::kNotFound) ? SQLITE_IOERR_DELETE_NOENT
                                : st.is_ok() ? SQLITE_OK : to_sqlite(st, SQLITE_IOERR_DELETE);
  }
  if (opened) release_db(db);
  return rc;
}

int x_access(sqlite3_vfs*, const char* zname, int flags, int* out) {
  if (is_super_journal(zname)) return g_base->xAccess(g_base, zname, flags, out);
  std::string suffix;
  std::shared_ptr<DbState> db;
  bool opened;
  Status st = image_for(zname, &db, &suffix, &opened);
  if (!st.is_ok()) return to_sqlite(st, SQLITE_IOERR_ACCESS);
  if (!db) return g_base->xAccess(g_base, zname, flags, out);
  if (suffix == "-journal" && db->atomic_commit) {
    *out = journal_exists(*db);
  } else {
    FileInfo fi;
    *out = db->vol->stat(db->db_name + suffix, &fi).is_ok() &&
           (flags != SQLITE_ACCESS_EXISTS || fi.size > 0);
  }
  if (opened) release_db(db);
  return SQLITE_OK;
}

// Absolute path with "." / ".." / "//" removed (symlinks are not resolved).
int x_full_pathname(sqlite3_vfs*, const char* zname, int n_out, char* out) {
  std::string path;
  if (zname[0] != '/') {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return SQLITE_CANTOPEN;
    path = cwd;
  }
  std::vector<std::string> parts;
  std::string all = path + "/" + zname;
  size_t i = 0;
  while (i <= all.size()) {
    size_t j = all.find('/', i);
    if (j == std::string::npos) j = all.size();
    std::string part = all.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string r;
  for (const auto& p : parts) r += "/" + p;
  if (r.empty()) r = "/";
  if (int(r.size()) >= n_out) return SQLITE_CANTOPEN;
  std::memcpy(out, r.c_str(), r.size() + 1);
  return SQLITE_OK;
}

int x_get_last_error(sqlite3_vfs*, int n, char* out) {
  if (n > 0 && out) {
    std::strncpy(out, t_last_error.c_str(), size_t(n) - 1);
    out[n - 1] = 0;
  }
  return 0;  // no errno: the message is the information
}

void* x_dl_open(sqlite3_vfs*, const char* p) { return g_base->xDlOpen(g_base, p); }
void x_dl_error(sqlite3_vfs*, int n, char* m) { g_base->xDlError(g_base, n, m); }
void (*x_dl_sym(sqlite3_vfs*, void* h, const char* s))(void) {
  return g_base->xDlSym(g_base, h, s);
}
void x_dl_close(sqlite3_vfs*, void* h) { g_base->xDlClose(g_base, h); }
int x_randomness(sqlite3_vfs*, int n, char* out) { return g_base->xRandomness(g_base, n, out); }
int x_sleep(sqlite3_vfs*, int us) { return g_base->xSleep(g_base, us); }
int x_current_time(sqlite3_vfs*, double* t) { return g_base->xCurrentTime(g_base, t); }
int x_current_time_int64(sqlite3_vfs*, sqlite3_int64* t) {
  if (g_base->iVersion >= 2 && g_base->xCurrentTimeInt64)
    return g_base->xCurrentTimeInt64(g_base, t);
  double d;
  int rc = g_base->xCurrentTime(g_base, &d);
  *t = sqlite3_int64(d * 86400000.0);
  return rc;
}

sqlite3_vfs g_vfs = {
    /* iVersion          */ 2,
    /* szOsFile          */ int(sizeof(PdlFile)),
    /* mxPathname        */ 4096,
    /* pNext             */ nullptr,
    /* zName             */ "pdl",
    /* pAppData          */ nullptr,
    /* xOpen             */ x_open_guarded,
    /* xDelete           */ vfs_guarded<"xDelete", x_delete>,
    /* xAccess           */ vfs_guarded<"xAccess", x_access>,
    /* xFullPathname     */ vfs_guarded<"xFullPathname", x_full_pathname>,
    /* xDlOpen           */ x_dl_open,
    /* xDlError          */ x_dl_error,
    /* xDlSym            */ x_dl_sym,
    /* xDlClose          */ x_dl_close,
    /* xRandomness       */ x_randomness,
    /* xSleep            */ x_sleep,
    /* xCurrentTime      */ x_current_time,
    /* xGetLastError     */ x_get_last_error,
    /* xCurrentTimeInt64 */ x_current_time_int64,
    /* xSetSystemCall    */ nullptr,
    /* xGetSystemCall    */ nullptr,
    /* xNextSystemCall   */ nullptr,
};
}  // namespace

void report_error(int code, const std::string& msg) {
  t_last_error = msg;
  sqlite3_log(code, "pdl: %s", msg.c_str());
  const char* quiet = std::getenv("PDL_VFS_QUIET");
  if (!quiet || !*quiet || std::strcmp(quiet, "0") == 0)
    std::fprintf(stderr, "pdl: %s\n", msg.c_str());
}

int VfsEscape::escaped(const char* method, const char* what, bool no_memory) noexcept {
  const int code = no_memory ? SQLITE_NOMEM : SQLITE_IOERR;
  char msg[512];  // no allocation: memory may be exhausted
  std::snprintf(msg, sizeof msg, "%s: %s (%s)", method,
                no_memory ? "out of memory" : "internal error", what);
  try {
    t_last_error = msg;
  } catch (...) {
    t_last_error.clear();
  }
  sqlite3_log(code, "pdl: %s", msg);
  const char* quiet = std::getenv("PDL_VFS_QUIET");
  if (!quiet || !*quiet || std::strcmp(quiet, "0") == 0) std::fprintf(stderr, "pdl: %s\n", msg);
  return code;
}

int abandon_file(const char* method, sqlite3_file* file) noexcept {
  const int rc = escape_current<VfsEscape>(method);
  PdlFile* f = as(file);
  try {
    if (f->db) release_db(f->db);
  } catch (...) {
    escape_current<VfsEscape>(method);
  }
  f->~PdlFile();
  return rc;
}

int to_sqlite(const Status& st, int io_code) {
  switch (st.code()) {
    case Errc::kOk: return SQLITE_OK;
    case Errc::kFull: return SQLITE_FULL;
    case Errc::kHostFull:  // not the chip's fault: say which host file system to free
      report_error(SQLITE_FULL, std::string(st.message()));
      return SQLITE_FULL;
    case Errc::kTooLarge: return SQLITE_FULL;  // (SQLite has no "file too large")
    case Errc::kBusy: return SQLITE_BUSY;
    case Errc::kCorrupt: return SQLITE_IOERR_DATA;
    case Errc::kReadOnly: return SQLITE_READONLY;
    default: return io_code;
  }
}

std::string last_error() { return t_last_error; }

int register_vfs(bool make_default) {
  if (!g_base) {
    g_base = sqlite3_vfs_find(nullptr);
    if (!g_base) return SQLITE_ERROR;
    if (g_base == &g_vfs) return SQLITE_OK;
    // Room for the base VFS's file object too (super-journals are opened through it).
    g_vfs.szOsFile = std::max(g_vfs.szOsFile, g_base->szOsFile);
  }
  return sqlite3_vfs_register(&g_vfs, make_default ? 1 : 0);
}

}  // namespace pdl::vfs
