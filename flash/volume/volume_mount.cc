// volume_mount.cc — mounting a volume (directory + owner map → files) and checking one (fsck).
//
// Mount is where the crash rules of volume.h are enforced:
//   * two slots with one name (a rename cut between two directory pages): the higher version
//     wins, the other file is dropped;
//   * an owner entry is live only if its id has a slot, its chunk lies within the file's size,
//     and no newer entry claims the same chunk (a release whose clearing is not yet durable
//     beside a new allocation for the chunk: the newer allocation's bytes were on flash before
//     its entry, so it holds the file's latest version of the chunk);
//   * everything else — dead owner entries, lpns mapped in the store that no file owns — is
//     cleared and trimmed; dead entries the owner map on flash still names are cleared
//     durably before mount returns (left there, a file growing back over their chunk could
//     revive them), and their lpns reused only after that.
// A file's last chunk holding bytes past its size (a cut between the chunk and the size) is
// zeroed there and synced (repair_tails).
// The next file id is one above every id found in slots *and* owner entries, dead or alive,
// so no id still referenced on flash is handed out again.
#include <algorithm>
#include <string>
#include <unordered_set>

#include "flash/volume/volume.h"

namespace pdl {

namespace {
Status read_meta(PageStore& store, uint32_t lpn, std::span<uint8_t> page) {
  Status st = store.read(lpn, page);
  return st.is(Errc::kNotFound) ? Status::ok() : st;  // never written: zeros = empty
}
}  // namespace

// Phases, in order; a phase's output is the next one's input:
//   load_directory  the directory's slots become files (clash losers marked in drop_slot);
//   load_owner_map  the owner map's live entries become the files' chunk tables; free lpns go to
//                   the pool; dead entries and owned-on-no-file lpns are listed in dead;
//   release_dead    each dead lpn released (pending_free_ if the owner map on flash names it,
//                   else trimmed or pooled);
//   clear_stale_on_flash, repair_tails (writable mounts only) make the clean-up durable.
// next_id_ is set between the owner map and the release, from every id seen.
Status Volume::load() {
  FileId max_id = 0;
  std::vector<bool> drop_slot(slot_ids_.size(), false);
  PDL_TRY(load_directory(&max_id, &drop_slot));
  std::vector<uint32_t> dead;
  PDL_TRY(load_owner_map(&max_id, &dead));
  return finish_load(max_id, dead, drop_slot);
}

Status Volume::finish_load(FileId max_id, const std::vector<uint32_t>& dead,
                           const std::vector<bool>& drop_slot) {
  next_id_ = max_id + 1;
  if (next_id_ == 0) next_id_ = 0xFFFFFFFFu;  // ids exhausted: creates fail with kFull
  PDL_TRY(release_dead(dead));
  if (opts_.read_only) return Status::ok();
  PDL_TRY(clear_stale_on_flash(drop_slot));
  return repair_tails();
}

// In: empty tables. Out: files_, names_, slot_ids_ of the winning slots; *drop_slot marks the
// slots that lost a clash (and their directory pages dirty, unless read-only); *max_id and
// next_version_ raised to cover every slot. Fails (kCorrupt) on an undecodable slot or a size
// beyond the volume.
Status Volume::load_directory(FileId* max_id, std::vector<bool>* drop_slot) {
  const VolumeLayout& L = hdr_.layout;
  const uint32_t per_slot_page = L.slots_per_page();
  for (uint32_t p = 0; p < L.dir_pages; p++) {
    PDL_TRY(read_meta(*store_, 1 + p, scratch_));
    for (uint32_t i = 0; i < per_slot_page; i++) {
      Slot s;
      Status st = decode_slot(scratch_.data() + i * kSlotBytes, &s);
      if (!st.is_ok())
        return Status::error(Errc::kCorrupt, "directory page " + std::to_string(p) + " slot " +
                                                 std::to_string(i) + ": " +
                                                 std::string(st.message()));
      if (s.id == 0) continue;
      if (s.size > max_file_size())  // (it would size the file's chunk table: volume.h, File)
        return Status::error(Errc::kCorrupt,
                             "directory page " + std::to_string(p) + " slot " +
                                 std::to_string(i) + ": file " + s.name + " has size " +
                                 std::to_string(s.size) + ", beyond the " +
                                 std::to_string(max_file_size()) +
                                 " bytes the volume can hold; the directory is corrupt");
      *max_id = std::max(*max_id, s.id);
      next_version_ = std::max(next_version_, s.version + 1);
      const uint32_t slot = p * per_slot_page + i;
      // Two slots for one name, or for one id (a replacing rename cut between its commits),
      // possibly both at once with two different files: the newest slot wins outright.
      std::vector<FileId> clash;
      if (files_.count(s.id)) clash.push_back(s.id);
      auto dup = names_.find(s.name);
      if (dup != names_.end() && dup->second != s.id) clash.push_back(dup->second);
      if (std::any_of(clash.begin(), clash.end(),
                      [&](FileId o) { return files_.at(o).meta.version >= s.version; })) {
        (*drop_slot)[slot] = true;
        continue;
      }
      for (FileId o : clash) {
        File& other = files_.at(o);
        (*drop_slot)[other.slot] = true;
        slot_ids_[other.slot] = 0;
        names_.erase(other.meta.name);
        files_.erase(o);
      }
      File f;
      f.slot = slot;
      f.meta = s;
      f.kind = kind_of(s.name);
      slot_ids_[slot] = s.id;
      names_.emplace(s.name, s.id);
      files_.emplace(s.id, std::move(f));
    }
  }
  const bool cleanup = !opts_.read_only;
  for (uint32_t slot = 0; slot < drop_slot->size(); slot++)
    if ((*drop_slot)[slot] && cleanup) dir_dirty_.set(slot / per_slot_page);
  return Status::ok();
}

// In: the files. Out: each file's chunk table from the live entries of the owner map on flash
// (the newest claim of a chunk wins); lpn_kind_ of owned lpns; free unmapped lpns in the pool;
// *dead lists every other lpn of the data area that is owned or mapped (in lpn order, a
// superseded claim when the newer one is found); *max_id and next_version_ raised.
// Every owner page is read, through the owner cache (so the owner map is never all in RAM):
// a page at a time, except when a chunk is claimed twice (after a crash) and the older claim's
// page is read again to compare generations.
Status Volume::load_owner_map(FileId* max_id, std::vector<uint32_t>* dead) {
  for (uint32_t p = 0; p < hdr_.layout.owner_pages; p++) PDL_TRY(claim_page(p, max_id, dead));
  return Status::ok();
}

// Every entry of owner page `p`, in lpn order, claimed (claim). `pooled`: its lpns may be in
// the pool (catch_up: as the checkpoint left them); each is taken out first, and claim pools
// it again if its entry is empty and the store does not map it.
Status Volume::claim_page(uint32_t p, FileId* max_id, std::vector<uint32_t>* dead, bool pooled) {
  const VolumeLayout& L = hdr_.layout;
  const uint32_t per_owner_page = L.owners_per_page();
  for (uint32_t i = 0; i < per_owner_page; i++) {
    const size_t idx = size_t(p) * per_owner_page + i;
    if (idx >= L.data_lpns) break;
    const uint32_t lpn = L.data_first + uint32_t(idx);
    Owner o;
    PDL_TRY(get_owner(lpn, &o));
    if (pooled && pool_.is_free(lpn)) pool_.remove(lpn);
    PDL_TRY(claim(lpn, o, max_id, dead));
  }
  return Status::ok();
}

// In: the files (and their claims so far). Out: the entry `o` of `lpn` applied — an empty one
// puts lpn in the pool (or in *dead if the store maps it: written, allocation never synced);
// a live one claims its file's chunk unless a newer claim holds it; *max_id, next_version_
// raised.
Status Volume::claim(uint32_t lpn, const Owner& o, FileId* max_id, std::vector<uint32_t>* dead) {
  if (o.id == 0) {
    if (store_->is_mapped(lpn)) dead->push_back(lpn);
    else pool_.put(lpn);
    return Status::ok();
  }
  *max_id = std::max(*max_id, o.id);
  next_version_ = std::max(next_version_, o.gen + 1);
  auto it = files_.find(o.id);
  if (it != files_.end() && o.chunk < chunk_count(it->second.meta.size)) {
    File& f = it->second;
    if (f.chunks.size() <= o.chunk) f.grow_chunks(size_t(o.chunk) + 1);
    Owner held_by;
    if (f.chunks[o.chunk] != kNoLpn) PDL_TRY(get_owner(f.chunks[o.chunk], &held_by));
    uint32_t& held = f.chunks[o.chunk];
    if (held == kNoLpn || held_by.gen < o.gen) {
      // The newer claim wins: an allocation's bytes are on flash before its entry.
      if (held != kNoLpn) dead->push_back(held);
      held = lpn;
      lpn_kind_.set(lpn, uint8_t(f.kind));
      return Status::ok();
    }
  }
  dead->push_back(lpn);
  return Status::ok();
}

// In: the dead lpns. Out: those the owner map on flash names in pending_free_; the others (if
// writable) trimmed (trimmed_) or pooled. Trims are the only store operations.
Status Volume::release_dead(const std::vector<uint32_t>& dead) {
  const bool cleanup = !opts_.read_only;
  for (uint32_t lpn : dead) {
    Owner o;
    PDL_TRY(get_owner(lpn, &o));
    if (o.id != 0) {
      // The owner map on flash still names this lpn: released like any other (commit_meta
      // clears the entry and trims it, and reuses it once both are durable). Read-only: the
      // list only tells check() that the entry is a leftover, not corruption.
      pending_free_.push_back(lpn);
      continue;
    }
    if (!cleanup) continue;
    // Written but never owned on flash: nothing durable refers to it. Trimmed now, reused once
    // the trim is durable (commit_meta).
    if (store_->is_mapped(lpn)) {
      PDL_TRY(store_->trim(lpn));
      trimmed_.push_back(lpn);
    } else {
      pool_.put(lpn);
    }
  }
  return Status::ok();
}

// Writable mounts. In: the clash losers and pending_free_. Out: both cleared on flash durably.
// Stale slots (the losers of a clash) are cleared durably before anything else can change:
// left on flash, a later remove of the winner, cut between its directory page and theirs,
// would bring the stale name back (found by volume-crash-fuzz METHODS=all, seed 911).
// So are owner entries on flash that mount found dead: left there until the next sync, a file
// growing back over such a chunk, cut before its new owner entry was durable, made the dead
// entry live again and showed bytes the file never held since its last sync (found by
// volume-crash-fuzz, seed 19483). The first commit queues their clearing, the second makes it
// durable; a mount after a clean close finds none.
Status Volume::clear_stale_on_flash(const std::vector<bool>& drop_slot) {
  const bool dead_on_flash = !pending_free_.empty();
  if (dead_on_flash || std::find(drop_slot.begin(), drop_slot.end(), true) != drop_slot.end())
    PDL_TRY(commit_meta());
  if (dead_on_flash) PDL_TRY(commit_meta());
  return Status::ok();
}

// A cut can make a file's last chunk durable while its size is not: the chunk then holds bytes
// past the size that the file never held since its last sync (an unacknowledged write). They
// are zeroed now, and made durable before anything can grow the file over them.
Status Volume::repair_tails() {
  bool repaired = false;
  for (auto& [id, f] : files_) {
    const size_t tail = size_t(f.meta.size % chunk_);
    const uint32_t c = uint32_t(f.meta.size / chunk_);
    if (tail == 0 || c >= f.chunks.size() || f.chunks[c] == kNoLpn) continue;
    Status st = store_->read(f.chunks[c], scratch_);
    if (st.is(Errc::kNotFound)) continue;
    PDL_TRY(st);
    if (std::all_of(scratch_.begin() + long(tail), scratch_.end(), [](uint8_t b) { return !b; }))
      continue;
    std::fill(scratch_.begin() + long(tail), scratch_.end(), 0);
    PDL_TRY(store_->write(f.chunks[c], scratch_));
    repaired = true;
  }
  return repaired ? store_->sync() : Status::ok();
}

Status Volume::check() {
  std::lock_guard<std::mutex> g(mu_);
  return check_locked();
}

Status Volume::check_locked() {
  auto corrupt = [](const std::string& m) { return Status::error(Errc::kCorrupt, m); };
  PDL_TRY(store_->check());
  const VolumeLayout& L = hdr_.layout;
  std::vector<uint8_t> seen(L.data_lpns, 0);
  std::unordered_set<std::string> names;
  for (const auto& [id, f] : files_) {
    if (slot_ids_[f.slot] != id) return corrupt("file " + f.meta.name + ": slot mismatch");
    if (!names.insert(f.meta.name).second) return corrupt("name " + f.meta.name + " twice");
    if (f.chunks.size() > chunk_count(f.meta.size))
      return corrupt("file " + f.meta.name + ": chunks beyond its size");
    for (uint32_t c = 0; c < f.chunks.size(); c++) {
      const uint32_t l = f.chunks[c];
      if (l == kNoLpn) continue;
      const std::string where = "file " + f.meta.name + " chunk " + std::to_string(c);
      if (l < L.data_first || l - L.data_first >= L.data_lpns)
        return corrupt(where + ": lpn " + std::to_string(l) + " outside the data area");
      const uint32_t i = l - L.data_first;
      if (seen[i]++) return corrupt(where + ": lpn " + std::to_string(l) + " used twice");
      Owner o;
      PDL_TRY(get_owner(l, &o));
      if (o.id != id || o.chunk != c)
        return corrupt(where + ": owner map disagrees for lpn " + std::to_string(l));
      if (pool_.is_free(l)) return corrupt(where + ": lpn " + std::to_string(l) + " is free");
      Status st = store_->read(l, scratch_);
      if (st.is(Errc::kNotFound) && store_->damaged_pages() > 0)
        return corrupt(where + ": lpn " + std::to_string(l) +
                       " is owned but has no copy on flash (data lost)");
      if (!st.is_ok() && !st.is(Errc::kNotFound))
        return corrupt(where + ": " + std::string(st.message()));
    }
  }
  for (uint32_t i = 0; i < L.data_lpns; i++) {
    if (seen[i]) continue;
    Owner o;
    PDL_TRY(get_owner(L.data_first + i, &o));
    if (o.id != 0 && std::find(pending_free_.begin(), pending_free_.end(), L.data_first + i) ==
                         pending_free_.end())
      return corrupt("lpn " + std::to_string(L.data_first + i) + " owned by a missing file");
  }
  for (uint32_t l = 0; l < L.data_first; l++) {
    Status st = store_->read(l, scratch_);
    if (!st.is_ok() && !st.is(Errc::kNotFound))
      return corrupt("metadata page " + std::to_string(l) + ": " + std::string(st.message()));
  }
  return Status::ok();
}

}  // namespace pdl
