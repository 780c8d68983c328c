// volume_catch_up.cc — the Volume's open after a power cut from the tables of the last
// checkpoint: load()'s result, without reading the whole owner map (docs/design.md §18, "The
// Volume after a power cut").
//
// The tables S (load_tables) are those of checkpoint C, saved when the Volume described the
// flash exactly (save_tables' invariants: every owner entry on flash live, every data lpn
// mapped iff owned, nothing pending). The store was replayed past C, and `touched` holds every
// lpn the replay reconsidered: every lpn written, trimmed or moved since C (and maybe more).
// So every page outside `touched` holds what it held at C; in particular every owner-map page
// outside it holds S's entries, all of them live at C. What load() would build from the flash
// now is then:
//   * the directory: read whole (it is bounded by the file slots, not by the data), by
//     load_directory, clashes and all;
//   * the claims: S's chunk tables, less the chunks past each file's size now and the files
//     gone, less every claim S made of an lpn on a changed owner page; then the entries of
//     the changed owner pages applied in lpn order by load_owner_map's own rule (claim): the
//     newest generation of a chunk wins. An unchanged page's entries are S's claims, one per
//     chunk, already in place: the order of the comparisons does not change the winner, as
//     generations are unique (each allocation takes the next version);
//   * the dead: S's claims that ended (past a size, of a file gone) on unchanged pages, the
//     losers and dead entries of the changed pages, and any lpn written since C that no entry
//     owns (free in S, mapped now);
//   * the pool: S's, less the lpns of changed pages and the newly dead, plus those changed
//     pages' empty, unmapped entries;
//   * next_version_: 1 + the largest slot version or owner generation (S's per-page
//     generations for unchanged pages, the read ones for changed pages); next_id_: above every
//     id in a slot, on a changed page, or in S (an id S knew may still be on an unchanged page
//     of a file removed since: possibly higher than load() derives, never lower, and any id
//     above every id on flash is as good).
// The flash read: the directory, the changed owner pages, an owner page for each generation
// comparison, and the store's mapping of the changed data lpns — what was written since C,
// not what is stored. CPU: one pass over S's chunk tables (RAM).
#include <algorithm>

#include "flash/volume/volume.h"

namespace pdl {

Status Volume::catch_up(const std::vector<uint32_t>& touched, FileId* max_id,
                        std::vector<bool>* drop_slot, std::vector<uint32_t>* dead) {
  const VolumeLayout& L = hdr_.layout;
  std::vector<uint8_t> page_changed(L.owner_pages, 0);
  std::vector<uint32_t> data_changed;
  for (uint32_t l : touched) {
    if (l >= L.owner_first() && l < L.data_first) page_changed[l - L.owner_first()] = 1;
    else if (l >= L.data_first && l - L.data_first < L.data_lpns) data_changed.push_back(l);
  }
  auto on_changed_page = [&](uint32_t lpn) { return page_changed[owner_page_of(lpn)] != 0; };

  // The checkpoint's files; the directory as on flash now.
  std::unordered_map<FileId, File> ck = std::move(files_);
  files_.clear();
  names_.clear();
  std::fill(slot_ids_.begin(), slot_ids_.end(), 0);
  *max_id = next_id_ == 0xFFFFFFFFu ? next_id_ : next_id_ - 1;  // (every id S knew)
  next_version_ = 1;
  drop_slot->assign(slot_ids_.size(), false);
  PDL_TRY(load_directory(max_id, drop_slot));

  // S's claims kept: within each surviving file's size, of lpns on unchanged owner pages.
  // The rest of S's claims: dead if their page is unchanged (the entry there still names the
  // old chunk, which is no longer live), else left to that page's entries below.
  const uint8_t kDatabaseKind = uint8_t(FileKind::kDatabase);
  for (auto& [id, old] : ck) {
    auto it = files_.find(id);
    File* f = it == files_.end() ? nullptr : &it->second;
    const uint64_t keep = f ? std::min<uint64_t>(old.chunks.size(), chunk_count(f->meta.size)) : 0;
    if (f) f->chunks.assign(old.chunks.begin(), old.chunks.begin() + long(keep));
    for (size_t c = 0; c < old.chunks.size(); c++) {
      const uint32_t l = old.chunks[c];
      if (l == kNoLpn) continue;
      if (on_changed_page(l)) {
        if (f && c < keep) f->chunks[c] = kNoLpn;  // (the page's entry decides)
        lpn_kind_.set(l, kDatabaseKind);
      } else if (c < keep) {
        lpn_kind_.set(l, uint8_t(f->kind));  // (a rename may have changed the kind)
      } else {
        dead->push_back(l);
        lpn_kind_.set(l, kDatabaseKind);
      }
    }
  }
  ck.clear();

  // The changed owner pages' entries, in lpn order, by load_owner_map's rule.
  for (uint32_t p = 0; p < L.owner_pages; p++)
    if (page_changed[p]) PDL_TRY(claim_page(p, max_id, dead, /*pooled=*/true));
  // Written since C on an unchanged owner page: owned by S's entry (kept, or dead above), or
  // free in S — then, if the store maps it now, written and never owned: dead.
  for (uint32_t l : data_changed) {
    if (on_changed_page(l) || !pool_.is_free(l)) continue;
    if (!store_->is_mapped(l)) continue;
    pool_.remove(l);
    dead->push_back(l);
  }

  // A file's chunk table ends on its last claimed chunk, as load() builds it.
  for (auto& [id, f] : files_)
    while (!f.chunks.empty() && f.chunks.back() == kNoLpn) f.chunks.pop_back();
  for (uint64_t g : page_gen_) next_version_ = std::max(next_version_, g + 1);
  // (An lpn superseded on one page may be found dead again on its own.)
  std::sort(dead->begin(), dead->end());
  dead->erase(std::unique(dead->begin(), dead->end()), dead->end());
  return Status::ok();
}

}  // namespace pdl
