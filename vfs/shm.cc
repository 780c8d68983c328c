// shm.cc — the WAL-index ("-shm") in process memory, shared by the connections of one
// process to one image, with SQLite's eight shm lock slots.
//
// Regions are zero-filled when created and live while any connection has the shm mapped; when
// the last one unmaps, they are freed and the next WAL user rebuilds the index from the WAL
// (SQLite's normal recovery of a fresh wal-index).
#include <atomic>

#include "vfs/vfs_file.h"

namespace pdl::vfs {

namespace {
}  // namespace

int shm_map(sqlite3_file* file, int region, int size, int extend, void volatile** out) {
  PdlFile* f = as(file);
  DbState& d = *f->db;
  std::lock_guard<std::mutex> g(d.mu);
  if (!f->shm_mapped) {
    f->shm_mapped = true;
    d.shm_users++;
  }
  if (d.shm_region_size == 0) d.shm_region_size = size;
  if (size != d.shm_region_size) return SQLITE_IOERR_SHMSIZE;
  if (size_t(region) >= d.shm_regions.size()) {
    if (!extend) {
      *out = nullptr;
      return SQLITE_OK;
    }
    while (d.shm_regions.size() <= size_t(region))
      d.shm_regions.emplace_back(new (std::nothrow) uint8_t[size_t(size)]());
    if (!d.shm_regions.back()) {
      d.shm_regions.pop_back();
      return SQLITE_NOMEM;
    }
  }
  *out = d.shm_regions[size_t(region)].get();
  return SQLITE_OK;
}

namespace {
int shm_lock_locked(PdlFile* f, int offset, int n, int flags);
}

int shm_lock(sqlite3_file* file, int offset, int n, int flags) {
  PdlFile* f = as(file);
  int rc;
  {
    std::lock_guard<std::mutex> g(f->db->mu);
    rc = shm_lock_locked(f, offset, n, flags);
  }
  // The WAL's write lock (slot 0) or checkpoint lock (slot 1) released: a write transaction or
  // a checkpoint ended (journal.cc commits what it left, if it left pages on flash).
  if (rc == SQLITE_OK && (flags & SQLITE_SHM_UNLOCK) && (flags & SQLITE_SHM_EXCLUSIVE) &&
      offset <= 1)
    return commit_at_transaction_end(*f->db);
  return rc;
}

namespace {
int shm_lock_locked(PdlFile* f, int offset, int n, int flags) {
  DbState& d = *f->db;
  const uint16_t mask = uint16_t(((1u << n) - 1) << offset);
  const void* me = f;
  if (flags & SQLITE_SHM_UNLOCK) {
    for (int i = offset; i < offset + n; i++) {
      const uint16_t bit = uint16_t(1u << i);
      if (f->shm_excl_mask & bit) d.shm_exclusive[size_t(i)] = nullptr;
      if (f->shm_shared_mask & bit) d.shm_shared[size_t(i)]--;
    }
    f->shm_excl_mask &= uint16_t(~mask);
    f->shm_shared_mask &= uint16_t(~mask);
    return SQLITE_OK;
  }
  if (flags & SQLITE_SHM_SHARED) {
    if (f->shm_shared_mask & mask) return SQLITE_OK;
    const void* x = d.shm_exclusive[size_t(offset)];
    if (x && x != me) return SQLITE_BUSY;
    d.shm_shared[size_t(offset)]++;
    f->shm_shared_mask |= mask;
    return SQLITE_OK;
  }
  for (int i = offset; i < offset + n; i++) {  // exclusive
    const uint16_t bit = uint16_t(1u << i);
    const void* x = d.shm_exclusive[size_t(i)];
    const int others = d.shm_shared[size_t(i)] - ((f->shm_shared_mask & bit) ? 1 : 0);
    if ((x && x != me) || others > 0) return SQLITE_BUSY;
  }
  for (int i = offset; i < offset + n; i++) d.shm_exclusive[size_t(i)] = me;
  f->shm_excl_mask |= mask;
  return SQLITE_OK;
}
}  // namespace

void shm_barrier(sqlite3_file* file) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::lock_guard<std::mutex> g(as(file)->db->mu);
}

int shm_unmap(sqlite3_file* file, int) {
  PdlFile* f = as(file);
  if (!f->shm_mapped) return SQLITE_OK;
  DbState& d = *f->db;
  std::lock_guard<std::mutex> g(d.mu);
  shm_lock_locked(f, 0, kShmLocks, SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE);
  f->shm_mapped = false;
  if (--d.shm_users == 0) {
    d.shm_regions.clear();
    d.shm_region_size = 0;
  }
  return SQLITE_OK;
}

}  // namespace pdl::vfs
