// volume.cc — file operations, the partial-chunk write-back cache, and sync.
#include "flash/volume/volume.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstring>
#include <utility>

namespace pdl {

namespace {
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
uint64_t wall_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
}
constexpr uint64_t kLogicalEpochNs = 1767225600ull * 1000000000ull;  // 2026-01-01T00:00:00Z
// Bytes that differ between a and b (b empty: bytes of a that are not zero), 8 at a time.
size_t count_changed(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  constexpr uint64_t k7f = 0x7F7F7F7F7F7F7F7Full;
  size_t n = 0, i = 0;
  for (; i + 8 <= a.size(); i += 8) {
    uint64_t x, y = 0;
    std::memcpy(&x, a.data() + i, 8);
    if (!b.empty()) std::memcpy(&y, b.data() + i, 8);
    x ^= y;
    // High bit of each byte set iff the byte is nonzero.
    const uint64_t t = ((((x & k7f) + k7f) | x) & ~k7f) >> 7;  // 1 per nonzero byte
    n += size_t((t * 0x0101010101010101ull) >> 56);             // sum of the 8 bytes
  }
  for (; i < a.size(); i++) n += a[i] != (b.empty() ? 0 : b[i]);
  return n;
}
}  // namespace

FileKind kind_of(std::string_view name) {
  if (ends_with(name, "-journal") || name.find("-mj") != std::string_view::npos)
    return FileKind::kJournal;
  if (ends_with(name, "-wal")) return FileKind::kWal;
  return FileKind::kDatabase;
}

const char* kind_name(FileKind k) {
  switch (k) {
    case FileKind::kDatabase: return "database";
    case FileKind::kJournal: return "journal";
    case FileKind::kWal: return "wal";
    case FileKind::kDirectory: return "directory";
  }
  return "?";
}

Volume::Volume(std::unique_ptr<PageStore> store, const VolumeOptions& opts,
               const VolumeHeader& hdr)
    : store_(std::move(store)),
      opts_(opts),
      atomic_(store_->atomic()),
      hdr_(hdr),
      chunk_(hdr.layout.chunk),
      slot_ids_(hdr.layout.max_files(), 0),
      owners_(std::max<uint32_t>(opts.owner_cache_pages, 1), hdr.layout.owners_per_page()),
      lpn_kind_(store_->logical_pages()),
      owner_io_(hdr.layout.chunk),
      page_gen_(hdr.layout.owner_pages, 0),
      dir_dirty_(hdr.layout.dir_pages),
      owner_dirty_(hdr.layout.owner_pages),
      pool_(hdr.layout.data_first, hdr.layout.data_lpns),
      scratch_(hdr.layout.chunk),
      old_(hdr.layout.chunk) {
  lpn_kind_.fill(0, hdr.layout.data_first, uint8_t(FileKind::kDirectory));
  store_->set_classifier([this](uint32_t lpn) { return lpn_kind_.get(lpn); });
  if (!opts.read_only) store_->set_client_checkpoints(true);  // (periodic_checkpoint)
}

Volume::~Volume() { store_->set_classifier(nullptr); }

void Volume::reset_state() {
  const VolumeLayout& L = hdr_.layout;
  header_dirty_ = false;
  files_.clear();
  names_.clear();
  std::fill(slot_ids_.begin(), slot_ids_.end(), 0);
  stale_slots_.clear();
  owners_.clear();
  std::fill(page_gen_.begin(), page_gen_.end(), 0);
  lpn_kind_.fill(L.data_first, lpn_kind_.size(), uint8_t(FileKind::kDatabase));
  dir_dirty_.clear_all();
  owner_dirty_.clear_all();
  pool_ = LpnPool(L.data_first, L.data_lpns);
  pending_free_.clear();
  trimmed_.clear();
  uncleared_.clear();
  vacated_.clear();
  cache_.clear();
  next_id_ = 1;
  next_version_ = 1;
}

Status Volume::rollback() {
  std::lock_guard<std::mutex> g(mu_);
  if (!atomic_)
    return Status::error(Errc::kUnsupported, "the store has no atomic groups to roll back");
  if (opts_.read_only) return Status::ok();
  if (!broken_.is_ok()) return broken_;
  // Half a rollback leaves tables that match nothing on flash: the Volume then refuses every
  // change until it is reopened (the store's recovery finds the last commit).
  const Status st = rollback_locked();
  // A full host is no half rollback: the store halted before changing anything on flash, and
  // the next change mounts it again (writable()), once the host has room.
  if (!st.is_ok() && !st.is(Errc::kHostFull))
    broken_ = Status::error(st.code(), "a rollback failed: " + std::string(st.message()));
  return st;
}

Status Volume::rollback_locked() {
  Status ab = store_->abort();
  if (ab.is(Errc::kHostFull)) ab = remount_store();
  PDL_TRY(ab);
  return reload_committed();
}

Status Volume::reload_committed() {
  // What the last commit holds: the header (the main name may have changed), then the rest.
  Status st = store_->read(0, scratch_);
  if (st.is(Errc::kNotFound))
    return Status::error(Errc::kCorrupt, "no volume header (the store holds no pdl volume)");
  PDL_TRY(st);
  VolumeHeader h;
  PDL_TRY(decode_header(scratch_, store_->logical_pages(), store_->page_size(), &h));
  hdr_.main_name = h.main_name;
  reset_state();
  restoring_ = true;
  return load();
}

// A store that met a full host file system in the middle of a change takes no more changes
// (page_store.h), though its last commit is intact on flash and nothing was half programmed:
// mounted again on the same chip, it holds exactly that commit — what a rollback wants — and
// takes changes again, once the host has room, without reopening the image.
Status Volume::remount_store() {
  if (!opts_.remount) {  // nothing to mount it with: the store stays halted
    const Status halted = store_->halted();
    return halted.is_ok() ? Status::error(Errc::kHostFull, "the store halted: no room on the host")
                          : halted;
  }
  std::unique_ptr<PageStore> fresh;
  PDL_TRY(opts_.remount(atomic_ ? CommitMode::kGroup : CommitMode::kPerPage, &fresh));
  fresh->set_wear_level(store_->params().wear_level);  // a run-time choice, not on flash
  store_->set_classifier(nullptr);
  store_ = std::move(fresh);
  store_->set_classifier([this](uint32_t lpn) { return lpn_kind_.get(lpn); });
  if (!opts_.read_only) store_->set_client_checkpoints(true);
  return Status::ok();
}

bool Volume::dirty() {
  std::lock_guard<std::mutex> g(mu_);
  return dirty_locked();
}

bool Volume::dirty_locked() {
  if (opts_.read_only) return false;
  if (store_->dirty() || header_dirty_ || dir_dirty_.any() || owner_dirty_.any()) return true;
  for (const CachedChunk& e : cache_)
    if (e.dirty) return true;
  return false;
}

uint64_t Volume::uncommitted_pages() {
  std::lock_guard<std::mutex> g(mu_);
  return store_->uncommitted_pages();
}

void Volume::count_unstored(FileKind kind, bool write, uint64_t bytes) {
  std::lock_guard<std::mutex> g(mu_);
  KindStats& ks = stats_.kind[size_t(kind)];
  if (write) {
    ks.writes++;
    ks.bytes_written += bytes;
  } else {
    ks.reads++;
    ks.bytes_read += bytes;
  }
}

void Volume::hold_commits(bool held) {
  std::lock_guard<std::mutex> g(mu_);
  held_ = held;
}

// A commit the Volume starts by itself (atomic stores, commits not held): everything so far,
// as sync() would.
Status Volume::auto_commit() {
  committing_ = true;
  const Status st = sync_locked();
  committing_ = false;
  return st;
}

Status Volume::format(std::unique_ptr<PageStore> store, uint32_t max_files,
                      const std::string& main_name, const VolumeOptions& opts,
                      std::unique_ptr<Volume>* out) {
  VolumeHeader h;
  PDL_TRY(VolumeLayout::plan(store->logical_pages(), store->page_size(), max_files, &h.layout));
  if (!main_name.empty()) PDL_TRY(check_name(main_name));
  h.main_name = main_name;
  std::unique_ptr<Volume> v(new Volume(std::move(store), opts, h));
  for (uint32_t l = v->pool_.first(); l < v->pool_.first() + v->pool_.count(); l++)
    v->pool_.put(l);
  v->header_dirty_ = true;
  PDL_TRY(v->sync_locked());
  *out = std::move(v);
  return Status::ok();
}

Status Volume::open(std::unique_ptr<PageStore> store, const VolumeOptions& opts,
                    std::unique_ptr<Volume>* out) {
  return open(std::move(store), opts, out, {});  // volume_tables.cc
}

Status Volume::writable() {
  if (!broken_.is_ok()) return broken_;
  if (!opts_.read_only && !store_->halted().is_ok()) {
    // Before the next change: the store as its media holds it (its last commit; per page, as
    // a power cut would leave it), and the tables with it. Half a reload matches nothing.
    const Status why = store_->halted();
    const bool lost = dirty_locked();
    PDL_TRY(remount_store());
    // Changes acknowledged since the last sync are gone: the next sync says so, once (as
    // fsync reports a lost write-back) — unless commits are held (hold_commits): they are the
    // open transaction's, which its owner is rolling back anyway.
    if (lost && !held_ && discarded_.is_ok())
      discarded_ = Status::error(Errc::kHostFull, "changes since the last sync were lost: " +
                                                      std::string(why.message()));
    // (The host still full: the clean-up after the load — what a mount after a power cut
    // does — halts the store again, with the tables loaded; the next change tries again.)
    const Status st = reload_committed();
    if (!st.is_ok() && !st.is(Errc::kHostFull))
      broken_ = Status::error(st.code(), "a reload failed: " + std::string(st.message()));
    return st;
  }
  if (opts_.read_only)
    return Status::error(Errc::kReadOnly, opts_.read_only_why.empty()
                                              ? "volume is read-only"
                                              : "volume is read-only: " + opts_.read_only_why);
  return Status::ok();
}

Status Volume::file(FileId id, File** f) {
  auto it = files_.find(id);
  if (it == files_.end())
    return Status::error(Errc::kNotFound, "file " + std::to_string(id) + " no longer exists");
  *f = &it->second;
  return Status::ok();
}

void Volume::slot_changed(File& f) {
  f.meta.version = next_version_++;
  f.mtime_dirty = false;
  dir_dirty_.set(f.slot / hdr_.layout.slots_per_page());
}

// ---- names ----

Status Volume::lookup(std::string_view name, FileId* id) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = names_.find(name);
  if (it == names_.end())
    return Status::error(Errc::kNotFound, "no file '" + std::string(name) + "'");
  *id = it->second;
  return Status::ok();
}

Status Volume::create_locked(std::string_view name, FileId* id) {
  PDL_TRY(writable());
  PDL_TRY(check_name(name));
  if (names_.count(name))
    return Status::error(Errc::kExists, "file '" + std::string(name) + "' exists");
  if (vacated_.count(name) && !atomic_) PDL_TRY(commit_meta());  // see rename()
  auto free_slot = std::find(slot_ids_.begin(), slot_ids_.end(), 0u);
  if (free_slot == slot_ids_.end())
    return Status::error(Errc::kFull, "directory full (" + std::to_string(slot_ids_.size()) +
                                          " files)");
  if (next_id_ == 0xFFFFFFFFu) return Status::error(Errc::kFull, "file ids exhausted");
  File f;
  f.slot = uint32_t(free_slot - slot_ids_.begin());
  f.meta.id = next_id_++;
  f.meta.name = std::string(name);
  f.meta.mtime_ns = now_ns();
  f.kind = kind_of(name);
  *free_slot = f.meta.id;
  slot_changed(f);
  names_.emplace(f.meta.name, f.meta.id);
  *id = f.meta.id;
  files_.emplace(f.meta.id, std::move(f));
  return Status::ok();
}

Status Volume::create(std::string_view name, FileId* id) {
  std::lock_guard<std::mutex> g(mu_);
  return create_locked(name, id);
}

Status Volume::open_file(std::string_view name, bool create, FileId* id) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = names_.find(name);
  if (it != names_.end()) {
    *id = it->second;
    return Status::ok();
  }
  if (!create) return Status::error(Errc::kNotFound, "no file '" + std::string(name) + "'");
  return create_locked(name, id);
}

// Free the lpns of chunks >= first_chunk; reusable two commits later (commit_meta). Their
// owner entries stay until the release is durable: a removed file's entries are dead once its
// slot is gone, a truncated file's once its new size is on flash — so a cut before that finds
// the file whole, never with some chunks already unowned.
void Volume::release(File& f, uint32_t first_chunk) {
  for (size_t c = first_chunk; c < f.chunks.size(); c++) {
    const uint32_t l = f.chunks[c];
    if (l == kNoLpn) continue;
    pending_free_.push_back(l);  // (its kind stays: the trim and its marks are charged to it)
  }
  if (f.chunks.size() > first_chunk) f.chunks.resize(first_chunk);
  drop_cache(f.meta.id, first_chunk);
}

void Volume::remove_locked(FileId id) {
  File& f = files_.at(id);
  release(f, 0);
  slot_ids_[f.slot] = 0;
  dir_dirty_.set(f.slot / hdr_.layout.slots_per_page());
  names_.erase(f.meta.name);
  files_.erase(id);
}

Status Volume::remove(std::string_view name) {
  std::lock_guard<std::mutex> g(mu_);
  PDL_TRY(writable());
  auto it = names_.find(name);
  if (it == names_.end())
    return Status::error(Errc::kNotFound, "no file '" + std::string(name) + "'");
  remove_locked(it->second);
  return Status::ok();
}

Status Volume::rename(std::string_view from, std::string_view to) {
  std::lock_guard<std::mutex> g(mu_);
  PDL_TRY(writable());
  PDL_TRY(check_name(to));
  auto it = names_.find(from);
  if (it == names_.end())
    return Status::error(Errc::kNotFound, "no file '" + std::string(from) + "'");
  const FileId id = it->second;
  if (from == to) return Status::ok();
  // A name vacated by an earlier rename is taken again only once that rename is durable:
  // otherwise a cut could leave the old slot under that name beside the new one, and mount
  // would keep the newer — losing the renamed file's data.
  if (vacated_.count(to) && !atomic_) PDL_TRY(commit_meta());
  // Replacing another file: the renamed file moves into the replaced file's slot, so one
  // slot write switches the name over. If its old slot is in another directory page, that
  // slot keeps its bytes on flash (a stale copy with a lower version) until a commit has made
  // the move durable — a cut in between leaves either the old pair of files or the same id
  // twice, and mount keeps the higher version — and a second commit then clears it, before any
  // later change could make the stale copy the only one (volume_mount.cc). So a replacing
  // rename across directory pages costs two metadata commits; within one page, one slot write.
  bool stale = false;
  auto old = names_.find(to);
  if (old != names_.end()) {
    File& f = files_.at(id);
    const uint32_t target = files_.at(old->second).slot;
    remove_locked(old->second);
    const uint32_t per = hdr_.layout.slots_per_page();
    stale = target / per != f.slot / per && !atomic_;  // (atomic: one commit covers both)
    if (stale) {
      stale_slots_[f.slot] = f.meta;
      slot_ids_[f.slot] = kStaleSlot;
    } else {
      slot_ids_[f.slot] = 0;
      dir_dirty_.set(f.slot / per);  // the old slot is cleared in the same commit
    }
    f.slot = target;
    slot_ids_[target] = id;
  }
  names_.erase(names_.find(from));
  vacated_.insert(std::string(from));
  File& f = files_.at(id);
  f.meta.name = std::string(to);
  f.kind = kind_of(to);
  for (uint32_t l : f.chunks)
    if (l != kNoLpn) lpn_kind_.set(l, uint8_t(f.kind));
  slot_changed(f);
  names_.emplace(f.meta.name, id);
  if (stale) {
    PDL_TRY(commit_meta());  // the move is durable; commit_meta() released the stale slot
    PDL_TRY(commit_meta());  // and now its clearing is durable too
  }
  return Status::ok();
}

Status Volume::stat(std::string_view name, FileInfo* info) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = names_.find(name);
  if (it == names_.end())
    return Status::error(Errc::kNotFound, "no file '" + std::string(name) + "'");
  const File& f = files_.at(it->second);
  info->id = f.meta.id;
  info->name = f.meta.name;
  info->size = f.meta.size;
  info->mtime_ns = f.meta.mtime_ns;
  info->kind = f.kind;
  info->chunks_mapped = uint32_t(std::count_if(f.chunks.begin(), f.chunks.end(),
                                               [](uint32_t l) { return l != kNoLpn; }));
  return Status::ok();
}

std::vector<FileInfo> Volume::list() {
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> g(mu_);
    for (const auto& [n, id] : names_) names.push_back(n);
  }
  std::vector<FileInfo> out;
  for (const auto& n : names) {
    FileInfo fi;
    if (stat(n, &fi).is_ok()) out.push_back(fi);
  }
  return out;
}

// ---- contents ----

Status Volume::size(FileId id, uint64_t* size) {
  std::lock_guard<std::mutex> g(mu_);
  File* f;
  PDL_TRY(file(id, &f));
  *size = f->meta.size;
  return Status::ok();
}

uint64_t Volume::now_ns() {
  if (!opts_.logical_clock) return wall_ns();
  if (logical_ns_ == 0) {
    logical_ns_ = kLogicalEpochNs;
    for (const auto& [id, f] : files_) logical_ns_ = std::max(logical_ns_, f.meta.mtime_ns);
  }
  return logical_ns_ += 1000000;
}

Status Volume::set_mtime(FileId id, uint64_t mtime_ns) {
  std::lock_guard<std::mutex> g(mu_);
  PDL_TRY(writable());
  File* f;
  PDL_TRY(file(id, &f));
  f->meta.mtime_ns = mtime_ns;
  slot_changed(*f);  // an explicit time (utimens) is persisted like a size change
  return Status::ok();
}

Status Volume::read_chunk(File& f, uint32_t c, std::span<uint8_t> out) {
  KindStats& ks = stats_.kind[size_t(f.kind)];
  for (CachedChunk& e : cache_)
    if (e.id == f.meta.id && e.chunk == c) {
      e.used = ++tick_;
      stats_.cache_hits++;
      std::memcpy(out.data(), e.data.data(), chunk_);
      return Status::ok();
    }
  if (c >= f.chunks.size() || f.chunks[c] == kNoLpn) {
    std::fill(out.begin(), out.end(), 0);
    return Status::ok();
  }
  ks.chunks_read++;
  Status st = store_->read(f.chunks[c], out);
  if (!st.is(Errc::kNotFound)) return st;
  // An owned chunk the store has no page for. A crash under per-page commits (commit=journal,
  // this session or an earlier one: the mode is not recorded on flash) can leave it, the owner
  // entry durable before the chunk's bytes: zeros, as SQLite's hot journal then restores the
  // page. Once the mount found damaged pages (a header failing in front of programmed pages),
  // the page may have been lost: an error, never zeros in place of the data.
  if (store_->damaged_pages() > 0)
    return Status::error(Errc::kCorrupt,
                         "chunk " + std::to_string(c) + " of '" + f.meta.name + "' (logical page " +
                             std::to_string(f.chunks[c]) + ") has no copy on flash" +
                             (store_->damaged_pages() > 0
                                  ? " (the store holds " +
                                        std::to_string(store_->damaged_pages()) + " damaged page" +
                                        (store_->damaged_pages() == 1 ? ")" : "s)")
                                  : ""));
  return Status::ok();  // never written: zeros
}

Status Volume::read(FileId id, uint64_t off, std::span<uint8_t> buf, size_t* got) {
  std::lock_guard<std::mutex> g(mu_);
  File* f;
  PDL_TRY(file(id, &f));
  *got = 0;
  KindStats& ks = stats_.kind[size_t(f->kind)];
  ks.reads++;
  if (off >= f->meta.size) return Status::ok();
  const size_t n = size_t(std::min<uint64_t>(buf.size(), f->meta.size - off));
  size_t done = 0;
  while (done < n) {
    const uint64_t pos = off + done;
    const uint32_t c = uint32_t(pos / chunk_);
    const size_t in = size_t(pos % chunk_), len = std::min<size_t>(chunk_ - in, n - done);
    if (len == chunk_) {
      PDL_TRY(read_chunk(*f, c, buf.subspan(done, chunk_)));
    } else {
      PDL_TRY(read_chunk(*f, c, scratch_));
      std::memcpy(buf.data() + done, scratch_.data() + in, len);
    }
    done += len;
  }
  ks.bytes_read += n;
  *got = n;
  return Status::ok();
}

// Atomic stores: an lpn released since the last commits (its trim issued or not) taken back at
// once. Its release and this reuse commit together, so no crash can show the old owner's bytes
// under the new owner, and its pending trim or owner clearing is dropped.
std::vector<uint32_t>* Volume::take_released(uint32_t* lpn) {
  for (auto* list : {&trimmed_, &pending_free_}) {
    if (list->empty()) continue;
    *lpn = list->back();
    list->pop_back();
    return list;
  }
  return nullptr;
}

// Write one whole chunk to the store, allocating its lpn on first write. On an atomic store a
// write refused for lack of room (the open group keeps every version it replaced until it
// commits) commits what came before and tries again, unless commits are held.
Status Volume::store_chunk(File& f, uint32_t c, std::span<const uint8_t> data) {
  Status st = store_chunk_once(f, c, data);
  if (!st.is(Errc::kFull) || !may_commit() || !store_->dirty()) return st;
  // (kFull from the commit: other cached chunks found no room either, but what was stored is
  // committed now — and what the open group held back, released.)
  const Status ac = auto_commit();
  if (!ac.is_ok() && !ac.is(Errc::kFull)) return ac;
  return store_chunk_once(f, c, data);
}

Status Volume::store_chunk_once(File& f, uint32_t c, std::span<const uint8_t> data) {
  KindStats& ks = stats_.kind[size_t(f.kind)];
  uint32_t l = c < f.chunks.size() ? f.chunks[c] : kNoLpn;
  const bool fresh = l == kNoLpn;
  std::vector<uint32_t>* from = nullptr;  // the released list a reused lpn came from
  size_t changed = 0;
  if (fresh) {
    // Released lpns reach the pool two commits after their release (commit_meta): when the
    // pool is empty, commit to bring them in rather than fail (atomic stores take them at
    // once instead: no commit in the middle of a group).
    bool took = pool_.take(&l);
    if (!took && atomic_) {
      from = take_released(&l);
      took = from != nullptr;
    }
    for (int i = 0; i < 2 && !took && !atomic_ && (!pending_free_.empty() || !trimmed_.empty());
         i++) {
      PDL_TRY(commit_meta());
      took = pool_.take(&l);
    }
    if (!took)
      return Status::error(Errc::kFull, "volume full: no free logical page for '" +
                                            f.meta.name + "'");
    // Its owner page resident before the chunk is stored, so that setting the entry after
    // cannot fail (a full cache writes a dirty page back: on a failure nothing changed).
    OwnerCache::Page* pg;
    if (Status st = owner_page(owner_page_of(l), &pg); !st.is_ok()) {
      if (from) from->push_back(l);
      else pool_.put(l);
      return st;
    }
    if (opts_.track_changes) changed = count_changed(data, {});
  } else if (restoring_) {
    // Rolled back to its committed version: the same bytes again need no flash write.
    Status st = store_->read(l, old_);
    if (!st.is_ok() && !st.is(Errc::kNotFound)) return st;
    changed = count_changed(old_, data);
    if (st.is_ok() && changed == 0) return Status::ok();
  } else if (opts_.track_changes) {
    Status st = store_->peek(l, old_);
    if (!st.is_ok() && !st.is(Errc::kNotFound)) return st;
    changed = count_changed(old_, data);
  }
  if (fresh) lpn_kind_.set(l, uint8_t(f.kind));  // before the write: its cost is charged by kind
  Status st = store_->write(l, data);
  if (!st.is_ok()) {  // nothing changed (kFull), or the store is poisoned anyway
    if (from) from->push_back(l);
    else if (fresh) pool_.put(l);
    return st;
  }
  if (fresh) {
    if (f.chunks.size() <= c) f.grow_chunks(size_t(c) + 1);
    f.chunks[c] = l;
    set_resident_owner(l, Owner{f.meta.id, c, next_version_++});
  }
  ks.chunks_written++;
  if (opts_.track_changes) ks.bytes_changed += changed;
  if (opts_.auto_commit_pages && may_commit() &&
      store_->uncommitted_pages() >= opts_.auto_commit_pages)
    return auto_commit();
  return Status::ok();
}

Status Volume::evict_one() {
  auto lru = std::min_element(cache_.begin(), cache_.end(),
                              [](const CachedChunk& a, const CachedChunk& b) {
                                return a.used < b.used;
                              });
  if (lru->dirty) {
    File* f;
    PDL_TRY(file(lru->id, &f));
    PDL_TRY(store_chunk(*f, lru->chunk, lru->data));
  }
  stats_.cache_evictions++;
  cache_.erase(lru);
  return Status::ok();
}

Status Volume::cached_chunk(File& f, uint32_t c, CachedChunk** out) {
  for (CachedChunk& e : cache_)
    if (e.id == f.meta.id && e.chunk == c) {
      e.used = ++tick_;
      *out = &e;
      return Status::ok();
    }
  if (cache_.size() >= std::max<uint32_t>(opts_.cache_chunks, 1)) PDL_TRY(evict_one());
  CachedChunk e;
  e.id = f.meta.id;
  e.chunk = c;
  e.used = ++tick_;
  e.data.resize(chunk_);
  PDL_TRY(read_chunk(f, c, e.data));
  cache_.push_back(std::move(e));
  *out = &cache_.back();
  return Status::ok();
}

void Volume::drop_cache(FileId id, uint32_t first_chunk) {
  std::erase_if(cache_, [&](const CachedChunk& e) { return e.id == id && e.chunk >= first_chunk; });
}

// The file grows to `new_size`: lpns it released (by a truncate since the last commit) for
// chunks now inside the size still claim them in the owner map. Unclaim them now, so the
// commit that makes the new size durable also drops the claims — else a cut after it could
// bring the released bytes back into the regrown hole.
// A claim on chunks the file grows over whose clearing is being written by the next commit
// (released at the last one) could stay on flash while the new size becomes durable — and a
// cut before the regrown chunk's own entry is durable would bring the released bytes back: make
// the clearing durable first. (Costs a commit when a file regrows right after a synced
// truncate, e.g. a journal in journal_mode=TRUNCATE.)
Status Volume::unclaim_released(File& f, uint64_t new_size) {
  const uint64_t old_n = chunk_count(f.meta.size), n = chunk_count(new_size);
  for (uint32_t l : pending_free_) {
    Owner o;
    PDL_TRY(get_owner(l, &o));
    if (o.id == f.meta.id && o.chunk < n) PDL_TRY(set_owner(l, Owner{}));
  }
  for (const auto& [l, o] : uncleared_)
    if (o.id == f.meta.id && o.chunk >= old_n && o.chunk < n && !atomic_) return commit_meta();
  return Status::ok();
}

// Bytes of the last chunk past the file's size may be stale: a shrink leaves them, and a crash
// can make a chunk durable before the size that ends inside it. Before the file grows over
// them they become zeros, so a hole or a regrown tail never shows old (or another file's
// deleted) bytes.
Status Volume::zero_tail(File& f) {
  const size_t tail = size_t(f.meta.size % chunk_);
  if (tail == 0) return Status::ok();
  const uint32_t c = uint32_t(f.meta.size / chunk_);
  const bool cached = std::any_of(cache_.begin(), cache_.end(), [&](const CachedChunk& e) {
    return e.id == f.meta.id && e.chunk == c;
  });
  if (!cached && (c >= f.chunks.size() || f.chunks[c] == kNoLpn)) return Status::ok();
  CachedChunk* e;
  PDL_TRY(cached_chunk(f, c, &e));
  if (std::any_of(e->data.begin() + long(tail), e->data.end(), [](uint8_t b) { return b != 0; })) {
    std::fill(e->data.begin() + long(tail), e->data.end(), 0);
    e->dirty = true;
  }
  return Status::ok();
}

// A file can never hold more than the volume's data area: every chunk of it would need its own
// lpn. Refusing sizes past that bound also bounds every file's chunk table (volume.h, File).
Status Volume::within_capacity(uint64_t off, uint64_t len) const {
  const uint64_t cap = max_file_size();
  if (off <= cap && len <= cap - off) return Status::ok();
  return Status::error(Errc::kTooLarge,
                       (len ? "a write of " + std::to_string(len) + " bytes at offset " +
                                  std::to_string(off) + " would end"
                            : "a file size of " + std::to_string(off) + " bytes is") +
                           " beyond the largest file this volume can hold (" +
                           std::to_string(cap) + " bytes, its data area)");
}

Status Volume::write(FileId id, uint64_t off, std::span<const uint8_t> data) {
  std::lock_guard<std::mutex> g(mu_);
  PDL_TRY(writable());
  File* f;
  PDL_TRY(file(id, &f));
  // Past the data area: the part within it is written as usual (a dense file reaching the
  // end of a full data area stores the prefix that fits and then fails as any full write),
  // the rest is refused — kFull if no lpn is free or waiting to be, else kTooLarge.
  Status beyond;
  if (!data.empty()) beyond = within_capacity(off, data.size());
  if (!beyond.is_ok()) {
    const bool no_room = pool_.free_count() == 0 && pending_free_.empty() && trimmed_.empty();
    if (no_room) beyond = Status::error(Errc::kFull, beyond.message());
    if (off >= max_file_size()) return beyond;
    data = data.first(size_t(max_file_size() - off));
  }
  KindStats& ks = stats_.kind[size_t(f->kind)];
  ks.writes++;
  if (off + data.size() > f->meta.size) {
    PDL_TRY(zero_tail(*f));
    PDL_TRY(unclaim_released(*f, off + data.size()));
  }
  f->meta.mtime_ns = now_ns();
  const uint64_t version = f->meta.version;
  size_t done = 0;
  while (done < data.size()) {
    const uint64_t pos = off + done;
    const uint32_t c = uint32_t(pos / chunk_);
    const size_t in = size_t(pos % chunk_), len = std::min<size_t>(chunk_ - in, data.size() - done);
    if (len == chunk_) {
      // A whole chunk supersedes any cached copy, dirty or not — once it is stored (a failed
      // write must not lose an acknowledged partial write held in the cache).
      PDL_TRY(store_chunk(*f, c, data.subspan(done, chunk_)));
      std::erase_if(cache_, [&](const CachedChunk& e) { return e.id == id && e.chunk == c; });
    } else {
      CachedChunk* e;
      PDL_TRY(cached_chunk(*f, c, &e));
      std::memcpy(e->data.data() + in, data.data() + done, len);
      e->dirty = true;
    }
    done += len;
    // Size grows as bytes land, so a failure part-way leaves an exact (shorter) size.
    if (pos + len > f->meta.size) {
      f->meta.size = pos + len;
      slot_changed(*f);
    }
  }
  ks.bytes_written += data.size();
  if (f->meta.version == version) f->mtime_dirty = true;  // persisted lazily (see volume.h)
  return beyond;
}

Status Volume::truncate(FileId id, uint64_t size) {
  std::lock_guard<std::mutex> g(mu_);
  PDL_TRY(writable());
  File* f;
  PDL_TRY(file(id, &f));
  if (size == f->meta.size) return Status::ok();
  if (size > f->meta.size) {
    PDL_TRY(within_capacity(size, 0));
    PDL_TRY(zero_tail(*f));
    PDL_TRY(unclaim_released(*f, size));
  } else {
    // Zero the new tail now too (before anything is released, so a failure changes nothing):
    // once synced, no stale byte lies past the end on flash, and a crash can expose only bytes
    // the file held since its last sync.
    const uint64_t old_size = f->meta.size;
    f->meta.size = size;
    Status st = zero_tail(*f);
    f->meta.size = old_size;
    PDL_TRY(st);
    release(*f, uint32_t(chunk_count(size)));
  }
  f->meta.size = size;
  f->meta.mtime_ns = now_ns();
  slot_changed(*f);
  return Status::ok();
}

// ---- sync ----

void Volume::encode_dir_page(uint32_t page, std::span<uint8_t> out) const {
  std::fill(out.begin(), out.end(), 0);
  const uint32_t per = hdr_.layout.slots_per_page();
  for (uint32_t i = 0; i < per; i++) {
    const uint32_t slot = page * per + i;
    const FileId id = slot_ids_[slot];
    if (id == kStaleSlot) encode_slot(stale_slots_.at(slot), out.data() + i * kSlotBytes);
    else if (id != 0) encode_slot(files_.at(id).meta, out.data() + i * kSlotBytes);
  }
}

Status Volume::write_meta_page(uint32_t lpn, std::span<const uint8_t> page) {
  KindStats& ks = stats_.kind[size_t(FileKind::kDirectory)];
  size_t changed = chunk_;
  if (opts_.track_changes) {
    Status st = store_->peek(lpn, old_);
    if (!st.is_ok() && !st.is(Errc::kNotFound)) return st;
    changed = count_changed(old_, page);
  }
  ks.writes++;
  ks.bytes_written += chunk_;
  ks.chunks_written++;
  if (opts_.track_changes) ks.bytes_changed += changed;
  return store_->write(lpn, page);
}

// Store every dirty cached chunk (of file `only`, if not 0). kFull for a chunk that needs a
// fresh lpn does not stop the others; it is returned at the end (other errors at once).
Status Volume::flush_cache(FileId only) {
  Status full;
  for (CachedChunk& e : cache_) {
    if (!e.dirty || (only != 0 && e.id != only)) continue;
    File* f;
    PDL_TRY(file(e.id, &f));
    Status st = store_chunk(*f, e.chunk, e.data);
    if (st.is(Errc::kFull)) {
      full = st;
      continue;
    }
    PDL_TRY(st);
    e.dirty = false;
  }
  return full;
}

// Write the dirty owner-map and directory pages, sync the store, then act on what is now
// durable: renames' stale slots may be cleared, released lpns trimmed and reused, vacated
// names taken again. Only a device error makes it fail (overwrites of metadata pages always
// fit the store), and after one the store is poisoned until remounted.
Status Volume::commit_meta() {
  // The order of these writes does not make the commit atomic (the store's write buffer may
  // program them in another order); the crash rules of volume.h do.
  const VolumeLayout& L = hdr_.layout;
  for (uint32_t p = owner_dirty_.next(0); p != DirtyPages::kNone; p = owner_dirty_.next(p + 1)) {
    OwnerCache::Page* pg = owners_.find(p);  // (dirty pages are resident: volume_owners.cc)
    assert(pg != nullptr && pg->dirty);
    PDL_TRY(write_owner_page(*pg));
  }
  for (uint32_t p = dir_dirty_.next(0); p != DirtyPages::kNone; p = dir_dirty_.next(p + 1)) {
    encode_dir_page(p, scratch_);
    PDL_TRY(write_meta_page(1 + p, scratch_));
    dir_dirty_.clear(p);
  }
  if (header_dirty_) {
    encode_header(hdr_, scratch_);
    PDL_TRY(write_meta_page(0, scratch_));
    header_dirty_ = false;
  }
  PDL_TRY(store_->sync());
  restoring_ = false;
  vacated_.clear();
  // Renames that left a stale slot are durable now: the slot can be cleared (next commit).
  for (const auto& [slot, meta] : stale_slots_) {
    slot_ids_[slot] = 0;
    dir_dirty_.set(slot / L.slots_per_page());
  }
  stale_slots_.clear();
  // Trims issued at the previous commit are durable now: those lpns read as unmapped after
  // any cut, so they may be reused. (Reused earlier, a new owner entry could become durable
  // before the new owner's bytes, and show the old owner's.)
  for (uint32_t l : trimmed_) pool_.put(l);
  trimmed_.clear();
  // The releases are durable now: unown and trim the lpns (both durable at the next commit).
  uncleared_.clear();  // the clearings written by this commit are durable
  size_t done = 0;
  Status trim = Status::ok();
  for (; done < pending_free_.size(); done++) {
    const uint32_t l = pending_free_[done];
    // (A cache miss reads the owner page, and may write another back: failing, the lpn waits
    // in pending_free_ for the next commit, as a trim without room does.)
    Owner o;
    trim = get_owner(l, &o);
    if (!trim.is_ok()) break;
    if (o.id != 0) {
      uncleared_.emplace_back(l, o);
      set_resident_owner(l, Owner{});
    }
    trim = store_->trim(l);
    if (!trim.is_ok()) break;
    stats_.trims++;
    trimmed_.push_back(l);
  }
  // Each lpn is in exactly one of the two lists, or it could enter the pool twice. A trim that
  // finds no room waits in pending_free_ for the next commit (the lpn stays out of the pool
  // until its trim is durable): this commit is durable already, so the sync succeeded.
  pending_free_.erase(pending_free_.begin(), pending_free_.begin() + ptrdiff_t(done));
  if (!trim.is_ok() && !trim.is(Errc::kFull)) return trim;
  return Status::ok();
}

Status Volume::sync_locked() {
  if (opts_.read_only) return Status::ok();
  PDL_TRY(writable());
  if (!discarded_.is_ok()) return std::exchange(discarded_, Status::ok());
  stats_.syncs++;
  // Contents first, then metadata. A chunk that found no free lpn (store_chunk has already
  // committed to bring released lpns in) does not stop the rest from becoming durable.
  Status data = flush_cache();
  if (!data.is_ok() && !data.is(Errc::kFull)) return data;
  // Atomic stores: a sync is all or nothing. Committed without the chunk left out, the files
  // would be durable with sizes over bytes never stored — a torn commit; the group stays open
  // for the caller to roll back or make room. (An auto-commit does commit what it has.)
  if (!data.is_ok() && atomic_ && !committing_) return data;
  PDL_TRY(commit_meta());
  if (data.is_ok()) PDL_TRY(periodic_checkpoint());
  return data;
}

// The store leaves periodic checkpoints to the Volume (set_client_checkpoints): when one is
// due after a sync, the Volume's tables are made to describe the flash — lazy mtimes
// persisted, releases carried through (at most three more metadata commits, each holding only
// the Volume's own pages and trims) — and the checkpoint written with them, so that a mount
// after a power cut brings them up to date (volume_catch_up.cc) instead of reading the owner
// map. If they still cannot be saved (a trim waiting for room), nothing: the store writes one
// without them once overdue. Only a power cut or an I/O error is an error (the sync's data is
// durable either way).
Status Volume::periodic_checkpoint() {
  if (opts_.read_only || !store_->checkpoint_due()) return Status::ok();
  for (auto& [id, f] : files_)
    if (f.mtime_dirty) slot_changed(f);
  for (int k = 0; k < 3; k++) {
    if (!dirty_locked() && pending_free_.empty() && trimmed_.empty() && uncleared_.empty() &&
        stale_slots_.empty() && vacated_.empty())
      break;
    PDL_TRY(commit_meta());
  }
  TableWriter w;
  if (!save_tables_locked(w).is_ok()) return Status::ok();
  const Status st = store_->write_checkpoint(w.data());
  if (st.is(Errc::kPowerCut) || st.is(Errc::kIoError)) return st;
  if (st.is_ok()) stats_.checkpoints++;
  return Status::ok();
}

Status Volume::flush(FileId id) {
  std::lock_guard<std::mutex> g(mu_);
  File* f;
  PDL_TRY(file(id, &f));
  if (opts_.read_only) return Status::ok();
  return flush_cache(id);
}

Status Volume::sync() {
  std::lock_guard<std::mutex> g(mu_);
  return sync_locked();
}

Status Volume::close() {
  std::lock_guard<std::mutex> g(mu_);
  if (opts_.read_only) return Status::ok();
  for (auto& [id, f] : files_)
    if (f.mtime_dirty) slot_changed(f);
  PDL_TRY(sync_locked());
  if (!trimmed_.empty()) PDL_TRY(commit_meta());  // the trims' tombstones
  return Status::ok();
}

// ---- inspection ----

std::string Volume::main_name() {
  std::lock_guard<std::mutex> g(mu_);
  return hdr_.main_name;
}

Status Volume::set_main_name(const std::string& name) {
  std::lock_guard<std::mutex> g(mu_);
  PDL_TRY(writable());
  PDL_TRY(check_name(name));
  hdr_.main_name = name;
  header_dirty_ = true;
  return Status::ok();
}

VolumeStats Volume::stats() {
  std::lock_guard<std::mutex> g(mu_);
  VolumeStats s = stats_;
  s.free_lpns = pool_.free_count();
  s.owner_cached = uint32_t(owners_.size());
  s.owner_cache_pages = owners_.capacity();
  s.changes_tracked = opts_.track_changes;
  return s;
}

void Volume::reset_stats() {
  std::lock_guard<std::mutex> g(mu_);
  stats_ = VolumeStats{};
  store_->reset_counters();
}

Status Volume::chunk_lpns(std::string_view name, std::vector<uint32_t>* lpns) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = names_.find(name);
  if (it == names_.end())
    return Status::error(Errc::kNotFound, "no file '" + std::string(name) + "'");
  *lpns = files_.at(it->second).chunks;
  return Status::ok();
}

}  // namespace pdl
