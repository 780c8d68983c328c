// memory_file.cc — sqlite3_io_methods for temp files (temp databases, temp and sub-journals,
// transient files): plain process memory, never on flash, gone at close.
#include <algorithm>
#include <cstring>

#include "vfs/vfs_file.h"

namespace pdl::vfs {

namespace {
MemoryData& mem(sqlite3_file* f) { return *reinterpret_cast<PdlFile*>(f)->mem; }

int m_close(sqlite3_file* file) {
  reinterpret_cast<PdlFile*>(file)->~PdlFile();
  return SQLITE_OK;
}

int m_read(sqlite3_file* file, void* buf, int amt, sqlite3_int64 off) {
  const std::vector<uint8_t>& b = mem(file).bytes;
  const size_t o = size_t(off), n = size_t(amt);
  const size_t got = o < b.size() ? std::min(n, b.size() - o) : 0;
  if (got) std::memcpy(buf, b.data() + o, got);
  if (got == n) return SQLITE_OK;
  std::memset(static_cast<uint8_t*>(buf) + got, 0, n - got);
  return SQLITE_IOERR_SHORT_READ;
}

int m_write(sqlite3_file* file, const void* buf, int amt, sqlite3_int64 off) {
  std::vector<uint8_t>& b = mem(file).bytes;
  const size_t end = size_t(off) + size_t(amt);
  try {
    if (b.size() < end) b.resize(end);
  } catch (const std::bad_alloc&) {
    return SQLITE_NOMEM;
  }
  std::memcpy(b.data() + off, buf, size_t(amt));
  return SQLITE_OK;
}

int m_truncate(sqlite3_file* file, sqlite3_int64 size) {
  std::vector<uint8_t>& b = mem(file).bytes;
  if (size_t(size) < b.size()) b.resize(size_t(size));
  return SQLITE_OK;
}

int m_sync(sqlite3_file*, int) { return SQLITE_OK; }

int m_file_size(sqlite3_file* file, sqlite3_int64* size) {
  *size = sqlite3_int64(mem(file).bytes.size());
  return SQLITE_OK;
}

int m_lock(sqlite3_file*, int) { return SQLITE_OK; }
int m_check_reserved(sqlite3_file*, int* out) {
  *out = 0;
  return SQLITE_OK;
}
int m_file_control(sqlite3_file*, int op, void* arg) {
  if (op == SQLITE_FCNTL_VFSNAME) {
    *static_cast<char**>(arg) = sqlite3_mprintf("pdl(memory)");
    return SQLITE_OK;
  }
  return SQLITE_NOTFOUND;
}
int m_sector_size(sqlite3_file*) { return 512; }
int m_device_characteristics(sqlite3_file*) {
  return SQLITE_IOCAP_ATOMIC | SQLITE_IOCAP_SAFE_APPEND | SQLITE_IOCAP_SEQUENTIAL |
         SQLITE_IOCAP_POWERSAFE_OVERWRITE;  // memory: nothing survives a crash anyway
}
}  // namespace

const sqlite3_io_methods kMemoryFileMethods = {
    /* iVersion               */ 1,
    /* xClose                 */ guarded_close<m_close>,
    /* xRead                  */ vfs_guarded<"xRead", m_read>,
    /* xWrite                 */ vfs_guarded<"xWrite", m_write>,
    /* xTruncate              */ vfs_guarded<"xTruncate", m_truncate>,
    /* xSync                  */ vfs_guarded<"xSync", m_sync>,
    /* xFileSize              */ vfs_guarded<"xFileSize", m_file_size>,
    /* xLock                  */ vfs_guarded<"xLock", m_lock>,
    /* xUnlock                */ vfs_guarded<"xUnlock", m_lock>,
    /* xCheckReservedLock     */ vfs_guarded<"xCheckReservedLock", m_check_reserved>,
    /* xFileControl           */ vfs_guarded<"xFileControl", m_file_control>,
    /* xSectorSize            */ m_sector_size,
    /* xDeviceCharacteristics */ m_device_characteristics,
    /* xShmMap                */ nullptr,
    /* xShmLock               */ nullptr,
    /* xShmBarrier            */ nullptr,
    /* xShmUnmap              */ nullptr,
    /* xFetch                 */ nullptr,
    /* xUnfetch               */ nullptr,
};

}  // namespace pdl::vfs
