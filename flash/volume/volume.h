// volume.h — named files inside one PageStore: the database, its journal or WAL, and (through
// FUSE) any file a program creates.
//
// Files are byte arrays cut into chunks of one logical page; each written chunk owns one data
// lpn. Layout and the owner map: volume_format.h; bytes: docs/format.md §4.
//
// Durability contract (what the VFS and FUSE promise on top of it):
//   * sync() makes every file's contents, size and name durable, for all files at once;
//   * after a crash, each chunk of a file is its last synced version or a later written one,
//     and the directory is its synced state or a later one, page by page (the PageStore's
//     per-page atomicity). A name removed or a file truncated is durable after the next sync.
//   * a write that fails with kFull stored at most a prefix of its chunks, and the file's size
//     covers exactly what was stored; nothing else changed.
// Crash rules that make this hold:
//   * an lpn freed by remove/truncate is trimmed after the sync that makes its release durable
//     (until then the durable directory may still point at it), and reused only after the
//     next sync has made the trim durable too (until then a new owner entry could become
//     durable before the new owner's bytes, which would show the old owner's);
//   * file ids are fresh for every file created (max id on flash + 1 at mount), so owner
//     entries of a file whose slot is gone are dead — mount clears them, and their lpns are
//     reused (like any release) only after the next sync;
//   * a name a rename vacated is taken again only after that rename is durable, and a
//     replacing rename across directory pages commits twice (volume.cc, rename);
//   * bytes of the last chunk past a file's size are zeroed before the file grows over them
//     (a crash can make a chunk durable before its size);
//   * a partial-chunk write is read-modify-write in a small write-back cache (journal headers
//     come in 4..28-byte pieces); dirty chunks are written at sync, at eviction, or at close.
//   * modification times are kept lazily (like Linux `lazytime`): persisted with other slot
//     changes (size, name) and at close; after a crash a file's mtime may be older.
//   * the owner map in RAM is a bounded cache of its pages (owner_cache.h): a changed page
//     may be written back before the sync to make room. That keeps the rules above, which
//     are stated per entry at the moment it is set in RAM (the store may make a sync
//     interval's writes durable in any order anyway); volume_owners.cc says why.
//
// On a store with atomic groups (PageStore::atomic(), what images use) sync() is one atomic
// commit: after a crash the Volume is exactly its state at the last sync — every file's bytes,
// sizes, names and the owner map together — and rollback() returns to it without a crash; with
// commits held, a sync() or close() that fails with kFull (a chunk found no room) commits
// nothing. The rules above still hold (they are conservative there); two of them would need
// commits in the middle of a group and are not used: a full lpn pool takes released lpns at
// once (their release commits with their reuse), and renames never commit twice. Commits the
// Volume starts by itself — when the open group outgrows the room left for it (a write would
// fail with kFull), or past VolumeOptions::auto_commit_pages — happen only while commits are
// not held (hold_commits: the SQLite VFS holds them while a transaction's rollback journal
// exists only in memory, since a commit then would make half a transaction durable).
//
// Thread-safety: every public method locks the Volume's mutex, so the connections and threads
// of one process share a Volume safely. The store below is driven under that mutex only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "flash/store/page_store.h"
#include "flash/store/table_stream.h"
#include "flash/volume/dirty_pages.h"
#include "flash/volume/lpn_kinds.h"
#include "flash/volume/lpn_pool.h"
#include "flash/volume/owner_cache.h"
#include "flash/volume/volume_format.h"

namespace pdl {

// What a file is for, by name; flash work is reported per kind (cost.h classes).
enum class FileKind : uint8_t {
  kDatabase = 0,   // any file that is not one of the below (the SQLite database, FUSE files)
  kJournal = 1,    // "*-journal" (rollback journal) and "*-mj*" (super-journal)
  kWal = 2,        // "*-wal"
  kDirectory = 3,  // the Volume's own metadata: header, directory, owner map
};
inline constexpr unsigned kFileKinds = 4;
FileKind kind_of(std::string_view name);
const char* kind_name(FileKind k);

// Volume-level work per file kind (what callers asked for; the flash work is in costs()).
struct KindStats {
  uint64_t writes = 0, bytes_written = 0;  // write() calls and their bytes
  uint64_t reads = 0, bytes_read = 0;      // read() calls and the bytes returned
  uint64_t chunks_written = 0;             // chunk (= logical page) writes to the store
  uint64_t chunks_read = 0;                // chunk reads from the store (cache misses)
  uint64_t bytes_changed = 0;  // bytes of written chunks that differ from before (if tracked)
};
struct VolumeStats {
  KindStats kind[kFileKinds];
  uint64_t syncs = 0, cache_hits = 0, cache_evictions = 0, trims = 0;
  // The owner-map cache (owner_cache.h): pages read from the store on a miss, dirty pages
  // written back to make room (besides those written at a commit), and its size now.
  uint64_t owner_loads = 0, owner_writebacks = 0;
  uint32_t owner_cached = 0, owner_cache_pages = 0;  // pages resident; capacity
  uint32_t free_lpns = 0;  // data lpns free now (a snapshot, not a counter)
  // Periodic checkpoints the Volume wrote with its tables (after a sync, when one was due).
  uint64_t checkpoints = 0;
  bool changes_tracked = false;  // VolumeOptions::track_changes: bytes_changed is measured
};

struct FileInfo {
  uint32_t id = 0;
  std::string name;
  uint64_t size = 0;
  uint64_t mtime_ns = 0;
  uint32_t chunks_mapped = 0;  // chunks holding an lpn
  FileKind kind = FileKind::kDatabase;
};

// Mounts the store on its chip again (the image layer passes its mount_store): how a Volume
// whose store halted on a full host file system gets a fresh one (page_store.h).
using StoreOpener = std::function<Status(CommitMode mode, std::unique_ptr<PageStore>* out)>;

inline constexpr uint32_t kDefaultOwnerCachePages = 64;

struct VolumeOptions {
  bool read_only = false;     // no writes; mount does no clean-up
  std::string read_only_why;  // said by writes refused on a read-only volume
  uint32_t cache_chunks = 16; // write-back cache capacity, chunks
  // Owner-map pages kept in RAM (owner_cache.h; at least 1): the RAM of the owner map,
  // whatever the chip's size. A miss reads the page from the store; a dirty page leaving the
  // cache is written back first. The default holds a TPC-C run's whole working set.
  uint32_t owner_cache_pages = kDefaultOwnerCachePages;
  // Measure bytes_changed: the store does not know a chunk's previous contents (PDL encodes
  // against the base page, not the last version), so this costs one uncounted read
  // (PageStore::peek) per chunk written: host time on the write path, hence off unless asked.
  bool track_changes = false;
  // Modification times from a counter — 1 ms past the newest mtime on the volume (at least
  // 2026-01-01) per change — instead of the wall clock: the bytes written, and so every flash
  // figure, become a pure function of the operations (benchmarks, repeatable runs).
  bool logical_clock = false;
  // Atomic stores: commit by itself once the open group has programmed this many pages
  // (0 = only when a write would otherwise fail with kFull), unless commits are held.
  uint32_t auto_commit_pages = 0;
  // How to mount the store again after it halted on a full host file system; empty: the
  // Volume then returns the store's kHostFull and takes no more changes.
  StoreOpener remount;
};

class Volume {
 public:
  using FileId = uint32_t;

  // Lay out a fresh volume on an empty store (from format_store) and make it durable.
  static Status format(std::unique_ptr<PageStore> store, uint32_t max_files,
                       const std::string& main_name, const VolumeOptions& opts,
                       std::unique_ptr<Volume>* out);
  // Mount the volume on a mounted store: read header, directory and owner map; clear what a
  // crash left dead (unless read-only).
  static Status open(std::unique_ptr<PageStore> store, const VolumeOptions& opts,
                     std::unique_ptr<Volume>* out);
  // The same, given the Volume's tables from a checkpoint (save_tables; bytes: docs/format.md
  // §13.4): empty → the reading open above; else the header page is read as always and the
  // directory and owner map come from `tables` instead of their pages. Tables that do not
  // decode, disagree with the header, or with the store (a stale section) are refused: the
  // open then reads the metadata pages as above, and tables_refused() says why.
  // volume_tables.cc.
  // `touched` (with tables; volume_catch_up.cc): the store was replayed past the checkpoint
  // that holds `tables` (ClientTables, flash/image/open_store.h), and these are the lpns the
  // replay reconsidered (sorted): the tables are brought up to date from the directory and
  // the owner-map pages among them — what a reading open would build, without reading the
  // rest of the owner map. caught_up() says so.
  static Status open(std::unique_ptr<PageStore> store, const VolumeOptions& opts,
                     std::unique_ptr<Volume>* out, std::span<const uint8_t> tables,
                     const std::vector<uint32_t>* touched = nullptr);
  ~Volume();

  // ---- checkpoint (volume_tables.cc) ----
  // Append the Volume's tables to `w`: what a reading open would build from the directory and
  // the owner map, so that open(..., tables) gives a Volume equal to it. RAM work only.
  // REQUIRES a clean volume, as close() leaves it: nothing unsynced, no lazy mtime, no release
  // or trim waiting for a commit, no stale slot, writable and not halted — else an error naming
  // what is pending (the caller then writes no client section; the next open reads the pages).
  Status save_tables(TableWriter& w);
  // The most bytes save_tables can append for a volume of layout `L` (any files, any holes):
  // what the checkpoint area must hold for the Volume (docs/format.md §13.4).
  static uint64_t max_table_bytes(const VolumeLayout& L);
  // Bytes of RAM the Volume's tables take now: files and their chunk tables, names, directory
  // slots, owner map, lpn classes, dirty-page bitmaps, lpn pool, release lists, chunk cache.
  uint64_t table_bytes();
  // How the last open went: from a checkpoint's tables, or by reading the metadata pages; if
  // tables were offered and refused, why (empty otherwise).
  bool from_tables() const { return from_tables_; }
  // The tables were a checkpoint's older than the store, brought up to date (open, touched).
  bool caught_up() const { return caught_up_; }
  const std::string& tables_refused() const { return tables_refused_; }

  // ---- files ----
  Status lookup(std::string_view name, FileId* id);            // kNotFound if absent
  Status create(std::string_view name, FileId* id);            // kInvalidArgument if it exists
  Status open_file(std::string_view name, bool create, FileId* id);
  // Read up to buf.size() bytes at `off`; *got < buf.size() at end of file.
  Status read(FileId id, uint64_t off, std::span<uint8_t> buf, size_t* got);
  Status write(FileId id, uint64_t off, std::span<const uint8_t> data);
  Status truncate(FileId id, uint64_t size);
  Status size(FileId id, uint64_t* size);
  Status set_mtime(FileId id, uint64_t mtime_ns);
  Status remove(std::string_view name);
  // Rename, replacing `to` if it exists (the replaced file's chunks are freed).
  Status rename(std::string_view from, std::string_view to);
  Status stat(std::string_view name, FileInfo* info);
  std::vector<FileInfo> list();

  // Store the file's dirty cached chunks (write-back, not durability: no sync). Surfaces a
  // kFull for this file's bytes now rather than at a later sync (FUSE's flush on close).
  Status flush(FileId id);
  // Everything durable (see the contract above).
  Status sync();
  // Atomic stores: discard everything since the last sync, in RAM and in the store, and read
  // the Volume's state back from what the last sync committed. kUnsupported otherwise.
  Status rollback();
  // Something was written, truncated, created, removed or renamed since the last sync.
  bool dirty();
  // Pages the store's open group has programmed (PageStore::uncommitted_pages).
  uint64_t uncommitted_pages();
  // Reads and writes a caller served without the store (the SQLite VFS's rollback journal in
  // memory), counted in stats() with the Volume's own: what SQLite asked for, at no flash cost.
  void count_unstored(FileKind kind, bool write, uint64_t bytes);
  // While held, the Volume commits only when sync() or close() is called (see above).
  void hold_commits(bool held);
  bool atomic() const { return atomic_; }
  // sync(), persist lazy mtimes, and make the releases' trims durable. The Volume stays usable.
  Status close();

  // ---- inspection ----
  const VolumeLayout& layout() const { return hdr_.layout; }
  // The largest size a file can have: its data area (data_lpns chunks). Writes and truncates
  // beyond it fail with kTooLarge; mount finds no file beyond it (else kCorrupt).
  uint64_t max_file_size() const { return uint64_t(hdr_.layout.data_lpns) * chunk_; }
  std::string main_name();
  Status set_main_name(const std::string& name);  // durable at the next sync
  bool read_only() const { return opts_.read_only; }
  VolumeStats stats();
  // Reset the Volume's, the store's and the Nand's counters.
  void reset_stats();
  // The store, for stats and inspection. REQUIRES: hold lock() while using it.
  PageStore& store() { return *store_; }
  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mu_); }
  // Owner of data lpn `lpn` (id 0 = free; through the owner-map cache, so it may read an
  // owner page) and the lpns of a file's chunks (kNoLpn = hole).
  Status owner_of(uint32_t lpn, Owner* out);
  Status chunk_lpns(std::string_view name, std::vector<uint32_t>* lpns);
  // fsck: the store's check(), then directory and owner-map consistency, then every mapped
  // chunk read back (every page's CRC). kCorrupt names the first problem found.
  Status check();

  static constexpr uint32_t kNoLpn = 0xFFFFFFFFu;

 private:
  struct File {
    uint32_t slot = 0;
    Slot meta;
    FileKind kind = FileKind::kDatabase;
    // Chunk index -> lpn (kNoLpn: hole, reads as zeros), up to the highest chunk mapped. A
    // dense vector: the VFS and FUSE index it on every chunk read and write, and SQLite's files
    // are dense. Its length is bounded by the data area (data_lpns entries): writes and sizes
    // past max_file_size() are refused, and mount refuses a slot whose size is beyond it, so
    // no size read from flash sizes it (an owner entry is live only within its file's size).
    std::vector<uint32_t> chunks;
    bool mtime_dirty = false;
    // Chunks [size, n) become holes; the capacity grows by an eighth, not doubled: the chunk
    // tables are most of the Volume's RAM (4 bytes per chunk), a doubled one half unused.
    void grow_chunks(size_t n) {
      if (n > chunks.capacity()) chunks.reserve(n + n / 8 + 16);
      chunks.resize(n, kNoLpn);
    }
  };
  struct CachedChunk {
    FileId id = 0;
    uint32_t chunk = 0;
    bool dirty = false;
    uint64_t used = 0;
    std::vector<uint8_t> data;
  };

  Volume(std::unique_ptr<PageStore> store, const VolumeOptions& opts, const VolumeHeader& hdr);
  void reset_state();  // the RAM state of an empty volume (construction, rollback)
  // Mount's recovery (volume_mount.cc): load() runs the phases below in this order.
  Status load();
  // The tables from a checkpoint section (volume_tables.cc) instead of load(); on an error the
  // state is partly built: the caller resets it and calls load(). `replayed`: the store
  // changed since the tables were saved (the checks against the store's metadata locations
  // and lowest free lpns are then catch_up's).
  Status load_tables(std::span<const uint8_t> tables, bool replayed);
  // load()'s last phases, after the owner map (or catch_up): the next id, then the dead lpns
  // released and (writable) the clean-up made durable.
  Status finish_load(FileId max_id, const std::vector<uint32_t>& dead,
                     const std::vector<bool>& drop_slot);
  uint32_t meta_locations_crc() const;  // where the metadata pages lie in the store now
  Status load_directory(FileId* max_id, std::vector<bool>* drop_slot);
  Status load_owner_map(FileId* max_id, std::vector<uint32_t>* dead);
  Status release_dead(const std::vector<uint32_t>& dead);
  Status clear_stale_on_flash(const std::vector<bool>& drop_slot);
  Status repair_tails();  // volume_mount.cc
  Status check_locked();  // volume_mount.cc
  Status writable();  // also mounts a halted store again (remount_store)
  Status file(FileId id, File** f);
  Status create_locked(std::string_view name, FileId* id);
  void remove_locked(FileId id);
  void slot_changed(File& f);
  void release(File& f, uint32_t first_chunk);
  Status read_chunk(File& f, uint32_t c, std::span<uint8_t> out);
  Status store_chunk(File& f, uint32_t c, std::span<const uint8_t> data);
  Status store_chunk_once(File& f, uint32_t c, std::span<const uint8_t> data);
  // Atomic stores: reuse an lpn released but not yet back in the pool; the list it came from.
  std::vector<uint32_t>* take_released(uint32_t* lpn);
  bool may_commit() const { return atomic_ && !held_ && !committing_; }
  Status auto_commit();
  Status rollback_locked();
  Status remount_store();  // the store halted on a full host file system: mount it again
  Status reload_committed();  // the tables from what the store holds (rollback, remount)
  bool dirty_locked();
  Status cached_chunk(File& f, uint32_t c, CachedChunk** out);  // load for read-modify-write
  Status evict_one();
  void drop_cache(FileId id, uint32_t first_chunk);
  Status sync_locked();
  Status save_tables_locked(TableWriter& w);
  // After a sync: the periodic checkpoint the store leaves to the Volume, with its tables.
  Status periodic_checkpoint();
  // volume_catch_up.cc: load()'s first phases for tables (load_tables) of a checkpoint older
  // than the store, from the pages among `touched` (the replay's lpns); then finish_load.
  // An error leaves the state partly built (the caller resets it and calls load()).
  Status catch_up(const std::vector<uint32_t>& touched, FileId* max_id,
                  std::vector<bool>* drop_slot, std::vector<uint32_t>* dead);
  // An owner entry found on flash (lpn's), by load_owner_map's rules: the file's claim of its
  // chunk (the newest generation wins: the other lpn goes to `dead`), or `dead`.
  Status claim(uint32_t lpn, const Owner& o, FileId* max_id, std::vector<uint32_t>* dead);
  Status claim_page(uint32_t p, FileId* max_id, std::vector<uint32_t>* dead, bool pooled = false);
  Status flush_cache(FileId only = 0);  // 0: every file
  Status commit_meta();
  Status zero_tail(File& f);
  Status unclaim_released(File& f, uint64_t new_size);
  Status write_meta_page(uint32_t lpn, std::span<const uint8_t> page);
  void encode_dir_page(uint32_t page, std::span<uint8_t> out) const;
  // The owner map through its cache (volume_owners.cc). owner_page makes page `p` resident
  // (writing back the least recently used dirty page if the cache is full, then reading `p`
  // from the store); on an error nothing changed. The others address entries by data lpn.
  Status owner_page(uint32_t p, OwnerCache::Page** out);
  Status get_owner(uint32_t lpn, Owner* out);
  Status set_owner(uint32_t lpn, Owner o);
  // Set an entry whose page owner_page made resident with no cache call since. Infallible.
  void set_resident_owner(uint32_t lpn, Owner o);
  Status write_owner_page(OwnerCache::Page& pg);  // write back (a commit, an eviction)
  uint32_t owner_page_of(uint32_t lpn) const {
    return (lpn - hdr_.layout.data_first) / hdr_.layout.owners_per_page();
  }
  uint64_t chunk_count(uint64_t size) const { return (size + chunk_ - 1) / chunk_; }
  // kTooLarge unless [off, off + len) lies within max_file_size() (len 0: a size of `off`).
  Status within_capacity(uint64_t off, uint64_t len) const;

  // Guards everything below (and the store's and the Nand's state). Lock order: the innermost
  // of the process's locks — the VFS registry lock, then DbState::mu, then this (vfs/db_state.h);
  // the Volume takes no other lock while holding it, nor calls out to code that might.
  std::mutex mu_;
  std::unique_ptr<PageStore> store_;
  const VolumeOptions opts_;
  const bool atomic_;      // the store commits groups atomically
  bool held_ = false;      // hold_commits
  bool committing_ = false;  // a commit the Volume started is running (no recursion)
  VolumeHeader hdr_;
  const uint32_t chunk_;
  bool header_dirty_ = false;
  uint64_t now_ns();  // the wall clock, or the logical one (VolumeOptions::logical_clock)
  uint64_t logical_ns_ = 0;  // last logical time handed out; 0 = not started
  std::unordered_map<FileId, File> files_;
  std::map<std::string, FileId, std::less<>> names_;
  std::vector<FileId> slot_ids_;        // slot -> file id (0: empty, kStaleSlot: see rename)
  std::map<uint32_t, Slot> stale_slots_;  // slot -> bytes it keeps during a rename (rename)
  static constexpr FileId kStaleSlot = 0xFFFFFFFFu;
  OwnerCache owners_;                   // owner-map pages in RAM (the rest on flash only)
  LpnKinds lpn_kind_;                   // lpn -> FileKind (the store's cost classifier)
  std::vector<uint8_t> owner_io_;       // an owner page being read or written
  // Owner page -> the largest generation among its entries (0: none), as on flash for a page
  // not in the cache, at least that for a resident one (exact again when written back): what
  // the next version is derived from without reading the owner map (volume_tables.cc).
  std::vector<uint64_t> page_gen_;
  DirtyPages dir_dirty_, owner_dirty_;
  LpnPool pool_;
  std::vector<uint32_t> pending_free_;  // released lpns waiting for a durable sync
  std::vector<uint32_t> trimmed_;       // released lpns whose trims wait for a durable sync
  // Owner entries cleared at the last commit (their clearing is durable at the next one).
  std::vector<std::pair<uint32_t, Owner>> uncleared_;
  std::set<std::string, std::less<>> vacated_;  // names renamed away since the last commit
  std::vector<CachedChunk> cache_;
  // Atomic stores, from rollback() to the next commit: the store holds the committed version
  // of every page again and SQLite's rollback writes those bytes back; a chunk write that
  // repeats what the store holds (checked with a counted read) is skipped, so a rollback needs
  // no room on a full chip.
  bool restoring_ = false;
  Status broken_;  // a rollback failed half-way: no change is accepted (rollback())
  Status discarded_;  // a remount lost changes not yet synced: the next sync reports it
  uint64_t tick_ = 0;
  FileId next_id_ = 1;
  uint64_t next_version_ = 1;
  VolumeStats stats_;
  std::vector<uint8_t> scratch_, old_;
  bool from_tables_ = false;     // the last open restored the tables from a checkpoint
  bool caught_up_ = false;       // ... and brought them up to date after a replay
  std::string tables_refused_;   // why offered tables were not used (empty: none refused)
};

}  // namespace pdl
