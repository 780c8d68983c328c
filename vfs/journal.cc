// journal.cc — atomic commit for a stock SQLite: the rollback journal in process memory, and
// the points where the image's store commits.
//
// OVERVIEW
//   With commit=atomic (the default) the store commits atomic groups (PageStore::atomic(): PDL
//   and OPU): after a power cut it holds exactly what its last commit held. SQLite's rollback
//   journal exists to undo a transaction a crash interrupted; if the database file can never
//   be seen half-written, the journal is needed only for a rollback while the process lives —
//   so it lives in memory (`DbState::journal`, shared by the image's connections like a file)
//   and never costs a flash program. Nothing in SQLite changes: it writes, syncs, reads and
//   deletes the journal through this VFS as through any file.
// WHERE THE STORE COMMITS (docs/design.md §8 has the table per journal mode and synchronous)
//   * xSync of the database (volume_file.cc): SQLite syncs it only when the file holds a whole
//     transaction — at commit (CommitPhaseOne, after every page is written) or after a rollback
//     restored the pages — so the commit is of a consistent database.
//   * the journal is finalized (deleted, truncated to 0 or its header zeroed): the transaction
//     is over, committed or rolled back; what it left uncommitted (synchronous=OFF: no xSync)
//     is committed now.
//   * the end of a write transaction (xUnlock below RESERVED; the WAL's write or checkpoint
//     lock released), if the open group has pages on flash and no journal is hot in memory:
//     journal_mode=MEMORY or OFF and WAL with synchronous below FULL never sync otherwise.
//   While a journal is hot in memory, or a write transaction holds the RESERVED lock (SQLite's
//   own journal of journal_mode MEMORY and OFF is invisible here), nothing else commits: the
//   Volume's own commits — when a write finds no room — are held (Volume::hold_commits), so
//   the store never holds half a transaction durably; such a write fails with SQLITE_FULL.
//   WAL mode takes no RESERVED lock: a commit in the middle of writing WAL frames or
//   checkpointing is safe (SQLite's WAL has its own commit frames), and may make room.
// ROLLBACK
//   A rollback reads the journal's first header (readJournalHdr: 4 bytes at offset 8, read
//   nowhere else): SQLite is about to restore the database to its state at the transaction's
//   start — which is exactly the store's last commit, since every transaction start finds
//   the group empty (a leftover is committed when the journal turns hot). The open group is
//   discarded there (Volume::rollback): the store then already holds every page SQLite is
//   about to write back, and needs no room for them — so a transaction that filled the chip
//   rolls back cleanly. The writes and sync that follow commit the restored pages.
//   A journal still hot when the last connection closes (a rollback that failed) is the same:
//   the unfinished transaction is discarded before the close commits.
// SEVERAL DATABASES
//   A transaction over several databases (ATTACH) uses a super-journal: SQLite writes its name
//   into every child journal, syncs each database, then deletes the super-journal — the commit
//   point — and each child must be able to roll back until then. SQLITE_FCNTL_SYNC tells the
//   database file the super-journal's name just before its sync: the journal is then written
//   to the Volume and committed with the database's pages in one group (journal_on_flash), and
//   lives on flash until SQLite deletes it, as with commit=journal.
// THE JOURNAL ON FLASH
//   A hot journal in the Volume — left by commit=journal, or by a multi-database commit a crash
//   interrupted — is served from the Volume, so SQLite rolls it back as always.
// RAM
//   The journal holds the original of every page a transaction changes, like SQLite's own
//   journal_mode=MEMORY: a transaction of N pages keeps N pages in memory until it ends.
#include <cstring>

#include "vfs/vfs_file.h"

namespace pdl::vfs {

namespace {

// SQLite's own test (hasHotJournal): a journal whose first byte is not zero holds a header.
bool hot(const MemoryData* m) { return m && !m->bytes.empty() && m->bytes[0] != 0; }

std::string journal_name(const DbState& d) { return d.db_name + "-journal"; }

// REQUIRES: d.mu.
void apply_hold(DbState& d) { d.vol->hold_commits(d.hold_journal || d.hold_txn); }

// The memory journal turned hot (a transaction begins) or cold (it ended). REQUIRES: d.mu.
int transition(DbState& d, bool was_hot, int io_code) {
  const bool now = hot(d.journal.get());
  if (was_hot == now) return SQLITE_OK;
  Status st;
  if (now) {
    // Whatever an earlier transaction left uncommitted (journal_mode=MEMORY or OFF, WAL) is
    // committed first: a rollback of this transaction discards the open group, which must
    // then hold this transaction alone.
    if (d.vol->dirty()) st = d.vol->sync();
    if (st.is_ok()) d.hold_journal = true;
  } else {
    d.hold_journal = false;
    if (d.vol->dirty()) st = d.vol->sync();  // (synchronous=OFF: no xSync came)
  }
  apply_hold(d);
  return st.is_ok() ? SQLITE_OK : to_sqlite(st, io_code);
}

// The journal's Volume file (journal_on_flash), opened or created.
Status volume_journal(DbState& d, bool create, Volume::FileId* id) {
  return d.vol->open_file(journal_name(d), create, id);
}

// A hot journal in the Volume: one that exists, is not empty and starts with a header.
// (No flash read when the Volume has no journal, as with atomic commit.)
bool volume_journal_hot(DbState& d) {
  Volume::FileId id;
  uint8_t first = 0;
  size_t got = 0;
  return d.vol->lookup(journal_name(d), &id).is_ok() &&
         d.vol->read(id, 0, std::span<uint8_t>(&first, 1), &got).is_ok() && got == 1 &&
         first != 0;
}

int j_close(sqlite3_file* file) {
  PdlFile* f = as(file);
  release_db(f->db);
  f->~PdlFile();
  return SQLITE_OK;
}

int j_read(sqlite3_file* file, void* buf, int amt, sqlite3_int64 off) {
  PdlFile* f = as(file);
  DbState& d = *f->db;
  std::lock_guard<std::mutex> g(d.mu);
  const size_t o = size_t(off), n = size_t(amt);
  size_t got = 0;
  if (d.journal_on_flash) {
    Volume::FileId id;
    Status st = volume_journal(d, false, &id);
    if (st.is_ok()) st = d.vol->read(id, o, std::span<uint8_t>(static_cast<uint8_t*>(buf), n), &got);
    if (!st.is_ok()) return to_sqlite(st, SQLITE_IOERR_READ);
  } else {
    MemoryData* m = d.journal.get();
    // A rollback begins (see ROLLBACK above): discard the open group.
    if (off == 8 && amt == 4 && hot(m)) {
      const Status st = d.vol->rollback();
      if (!st.is_ok()) return to_sqlite(st, SQLITE_IOERR_READ);
    }
    if (m && o < m->bytes.size()) {
      got = std::min(n, m->bytes.size() - o);
      std::memcpy(buf, m->bytes.data() + o, got);
    }
    d.vol->count_unstored(FileKind::kJournal, false, got);
  }
  if (got == n) return SQLITE_OK;
  std::memset(static_cast<uint8_t*>(buf) + got, 0, n - got);
  return SQLITE_IOERR_SHORT_READ;
}

// A journal on flash that SQLite finalized by truncating it or zeroing its header (the commit
// point of journal_mode TRUNCATE and PERSIST) leaves the Volume: the next transaction's
// journal is in memory again. REQUIRES: d.mu, d.journal_on_flash.
Status leave_flash_if_finalized(DbState& d) {
  if (!d.atomic_commit || volume_journal_hot(d)) return Status::ok();
  d.journal_on_flash = false;
  Status st = d.vol->remove(journal_name(d));
  if (st.is(Errc::kNotFound)) st = Status::ok();
  return st.is_ok() ? d.vol->sync() : st;
}

int j_write(sqlite3_file* file, const void* buf, int amt, sqlite3_int64 off) {
  PdlFile* f = as(file);
  DbState& d = *f->db;
  std::lock_guard<std::mutex> g(d.mu);
  const std::span<const uint8_t> data(static_cast<const uint8_t*>(buf), size_t(amt));
  if (d.journal_on_flash) {
    Volume::FileId id;
    Status st = volume_journal(d, true, &id);
    if (st.is_ok()) st = d.vol->write(id, uint64_t(off), data);
    if (st.is_ok() && off == 0) st = leave_flash_if_finalized(d);
    return st.is_ok() ? SQLITE_OK : to_sqlite(st, SQLITE_IOERR_WRITE);
  }
  if (!d.journal) d.journal = std::make_shared<MemoryData>();
  std::vector<uint8_t>& b = d.journal->bytes;
  const bool was_hot = hot(d.journal.get());
  const size_t end = size_t(off) + data.size();
  try {
    if (b.size() < end) b.resize(end);
  } catch (const std::bad_alloc&) {
    return SQLITE_NOMEM;
  }
  std::memcpy(b.data() + off, data.data(), data.size());
  d.vol->count_unstored(FileKind::kJournal, true, data.size());
  return transition(d, was_hot, SQLITE_IOERR_WRITE);
}

int j_truncate(sqlite3_file* file, sqlite3_int64 size) {
  PdlFile* f = as(file);
  DbState& d = *f->db;
  std::lock_guard<std::mutex> g(d.mu);
  if (d.journal_on_flash) {
    Volume::FileId id;
    Status st = volume_journal(d, true, &id);
    if (st.is_ok()) st = d.vol->truncate(id, uint64_t(size));
    if (st.is_ok() && size == 0) st = leave_flash_if_finalized(d);
    return st.is_ok() ? SQLITE_OK : to_sqlite(st, SQLITE_IOERR_TRUNCATE);
  }
  if (!d.journal) return SQLITE_OK;
  const bool was_hot = hot(d.journal.get());
  if (size_t(size) < d.journal->bytes.size()) d.journal->bytes.resize(size_t(size));
  return transition(d, was_hot, SQLITE_IOERR_TRUNCATE);
}

int j_sync(sqlite3_file* file, int) {
  PdlFile* f = as(file);
  DbState& d = *f->db;
  std::lock_guard<std::mutex> g(d.mu);
  if (!d.journal_on_flash) return SQLITE_OK;  // in memory: nothing to make durable
  const Status st = d.vol->sync();
  return st.is_ok() ? SQLITE_OK : to_sqlite(st, SQLITE_IOERR_FSYNC);
}

int j_file_size(sqlite3_file* file, sqlite3_int64* size) {
  PdlFile* f = as(file);
  DbState& d = *f->db;
  std::lock_guard<std::mutex> g(d.mu);
  *size = 0;
  if (d.journal_on_flash) {
    Volume::FileId id;
    uint64_t s = 0;
    Status st = volume_journal(d, false, &id);
    if (st.is_ok()) st = d.vol->size(id, &s);
    *size = sqlite3_int64(s);
    return st.is_ok() ? SQLITE_OK : to_sqlite(st, SQLITE_IOERR_FSTAT);
  }
  if (d.journal) *size = sqlite3_int64(d.journal->bytes.size());
  return SQLITE_OK;
}

int j_lock(sqlite3_file*, int) { return SQLITE_OK; }  // only the database file is locked
int j_check_reserved(sqlite3_file*, int* out) {
  *out = 0;
  return SQLITE_OK;
}
int j_file_control(sqlite3_file* file, int op, void* arg) {
  if (op == SQLITE_FCNTL_VFSNAME) {
    *static_cast<char**>(arg) =
        sqlite3_mprintf(as(file)->db->journal_on_flash ? "pdl" : "pdl(journal in memory)");
    return SQLITE_OK;
  }
  return SQLITE_NOTFOUND;
}
int j_sector_size(sqlite3_file* file) { return int(as(file)->db->vol->layout().chunk); }
int j_device_characteristics(sqlite3_file*) { return SQLITE_IOCAP_POWERSAFE_OVERWRITE; }

}  // namespace

const sqlite3_io_methods kJournalFileMethods = {
    /* iVersion               */ 1,
    /* xClose                 */ guarded_close<j_close>,
    /* xRead                  */ vfs_guarded<"xRead", j_read>,
    /* xWrite                 */ vfs_guarded<"xWrite", j_write>,
    /* xTruncate              */ vfs_guarded<"xTruncate", j_truncate>,
    /* xSync                  */ vfs_guarded<"xSync", j_sync>,
    /* xFileSize              */ vfs_guarded<"xFileSize", j_file_size>,
    /* xLock                  */ vfs_guarded<"xLock", j_lock>,
    /* xUnlock                */ vfs_guarded<"xUnlock", j_lock>,
    /* xCheckReservedLock     */ vfs_guarded<"xCheckReservedLock", j_check_reserved>,
    /* xFileControl           */ vfs_guarded<"xFileControl", j_file_control>,
    /* xSectorSize            */ j_sector_size,
    /* xDeviceCharacteristics */ j_device_characteristics,
    /* xShmMap                */ nullptr,
    /* xShmLock               */ nullptr,
    /* xShmBarrier            */ nullptr,
    /* xShmUnmap              */ nullptr,
    /* xFetch                 */ nullptr,
    /* xUnfetch               */ nullptr,
};

int open_journal(PdlFile* f, bool create) {
  DbState& d = *f->db;
  std::lock_guard<std::mutex> g(d.mu);
  // A hot journal in the Volume is rolled back from there (commit=journal left it, or a
  // multi-database commit was interrupted).
  if (!d.journal && !d.journal_on_flash && volume_journal_hot(d)) d.journal_on_flash = true;
  if (!d.journal_on_flash && !d.journal) {
    if (!create) return SQLITE_CANTOPEN;
    d.journal = std::make_shared<MemoryData>();
  }
  f->journal = true;
  f->base.pMethods = &kJournalFileMethods;
  return SQLITE_OK;
}

bool hot_journal_on_flash(DbState& d) {
  std::lock_guard<std::mutex> g(d.mu);
  return volume_journal_hot(d);
}

bool journal_exists(DbState& d) {
  std::lock_guard<std::mutex> g(d.mu);
  if (d.journal_on_flash || (!d.journal && volume_journal_hot(d))) {
    FileInfo fi;
    return d.vol->stat(journal_name(d), &fi).is_ok() && fi.size > 0;
  }
  return d.journal && !d.journal->bytes.empty();
}

int delete_journal(DbState& d) {
  std::lock_guard<std::mutex> g(d.mu);
  if (d.journal_on_flash || (!d.journal && volume_journal_hot(d))) {
    d.journal_on_flash = false;
    Status st = d.vol->remove(journal_name(d));
    if (st.is(Errc::kNotFound)) return SQLITE_IOERR_DELETE_NOENT;
    if (st.is_ok()) st = d.vol->sync();  // deleting the journal is DELETE mode's commit point
    return st.is_ok() ? SQLITE_OK : to_sqlite(st, SQLITE_IOERR_DELETE);
  }
  if (!d.journal) return SQLITE_IOERR_DELETE_NOENT;
  const bool was_hot = hot(d.journal.get());
  d.journal.reset();
  return transition(d, was_hot, SQLITE_IOERR_DELETE);
}

int journal_super_sync(DbState& d) {
  std::lock_guard<std::mutex> g(d.mu);
  if (!d.atomic_commit || d.journal_on_flash || !hot(d.journal.get())) return SQLITE_OK;
  // The journal goes to flash and commits with the database's pages (see SEVERAL DATABASES).
  Volume::FileId id;
  Status st = volume_journal(d, true, &id);
  if (st.is_ok()) st = d.vol->truncate(id, 0);
  if (st.is_ok()) st = d.vol->write(id, 0, d.journal->bytes);
  if (!st.is_ok()) return to_sqlite(st, SQLITE_IOERR_FSYNC);
  d.journal.reset();
  d.journal_on_flash = true;
  d.hold_journal = d.hold_txn = false;  // the classic protocol from here: the journal is durable
  apply_hold(d);
  st = d.vol->sync();
  return st.is_ok() ? SQLITE_OK : to_sqlite(st, SQLITE_IOERR_FSYNC);
}

int transaction_begins(DbState& d) {
  std::lock_guard<std::mutex> g(d.mu);
  if (!d.atomic_commit || d.journal_on_flash) return SQLITE_OK;
  // What an earlier transaction left uncommitted (synchronous=OFF) is committed first, so
  // that the open group holds this transaction alone. If it cannot be, this transaction does
  // not begin: its rollback would discard the earlier one with it.
  if (d.vol->dirty()) {
    const Status st = d.vol->sync();
    if (!st.is_ok()) return to_sqlite(st, SQLITE_IOERR_LOCK);
  }
  d.hold_txn = true;
  d.txn_full = false;
  apply_hold(d);
  return SQLITE_OK;
}

void database_write_failed(DbState& d, int rc) {
  std::lock_guard<std::mutex> g(d.mu);
  if ((rc & 0xFF) == SQLITE_FULL && d.hold_txn && !d.hold_journal) d.txn_full = true;
}

void database_synced(DbState& d) {
  std::lock_guard<std::mutex> g(d.mu);
  d.txn_full = false;  // SQLite synced a whole database: committed, or rolled back completely
}

int commit_at_transaction_end(DbState& d) {
  std::lock_guard<std::mutex> g(d.mu);
  if (d.hold_txn) {
    d.hold_txn = false;
    apply_hold(d);
  }
  if (d.txn_full) {  // (see DbState::txn_full) the store goes back to the transaction's start
    d.txn_full = false;
    const Status st = d.vol->rollback();
    return st.is_ok() ? SQLITE_OK : to_sqlite(st, SQLITE_IOERR_FSYNC);
  }
  if (!d.atomic_commit || hot(d.journal.get()) || d.vol->uncommitted_pages() == 0)
    return SQLITE_OK;
  const Status st = d.vol->sync();
  return st.is_ok() ? SQLITE_OK : to_sqlite(st, SQLITE_IOERR_FSYNC);
}

void discard_unfinished(DbState& d) {
  std::lock_guard<std::mutex> g(d.mu);
  if (!d.atomic_commit || !hot(d.journal.get())) return;
  // If the rollback fails the store is poisoned (a device error), and the close that follows
  // commits nothing either.
  if (d.vol->rollback().is_ok()) d.journal.reset();
}

}  // namespace pdl::vfs
