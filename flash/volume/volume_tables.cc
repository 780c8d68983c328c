// volume_tables.cc — the Volume's tables in a checkpoint: saved at a clean unmount, restored at
// the next open instead of reading the directory and the owner map (docs/design.md §4, bytes:
// docs/format.md §13.4).
//
// What is saved is what a reading open (volume_mount.cc, load) would build from the metadata
// pages, not the session's RAM as it happens to be: each file's slot (id, size, version,
// mtime, name) and its chunk table cut after the last mapped chunk, in runs (version 3: a file
// written in order is a few runs of consecutive lpns; version 2 took 4 bytes per chunk). The
// owner map is NOT in the section (since version 2): at a clean close the owner pages on flash
// are current (nothing dirty), so the restored Volume reads them on demand through its owner
// cache, like any other (owner_cache.h) — a mount from a checkpoint reads no owner page. What
// a reading open derives from the owner pages is derived from the chunk tables or saved: the
// lpn classes, the free pool (every unowned data lpn: a bitmap, lowest first, so its order is
// the set's), the next file id (max id + 1, derived and checked against the saved one) and the
// next version (1 + the largest slot version or owner generation: saved, since the
// generations are on flash; checked to exceed every slot's version). Version 2 sections (no
// runs) are read too; version 1 (owner generations per chunk) is refused: that open reads the
// pages.
// Invariants save_tables checks, so that restored == read (else it refuses, naming the cause):
//   * nothing unsynced, no lazy mtime, no stale slot, no vacated name: the directory and the
//     owner map on flash are exactly the RAM tables (no owner page dirty in the cache);
//   * no release, trim or owner clearing waiting for a commit: every non-empty owner entry is
//     live (its file's chunk names the lpn), so a reading open finds nothing dead — checked
//     for the owner pages in the cache (RAM only: the rest are not read to save);
//   * every lpn of a chunk table is out of the pool, no lpn in two chunks; every other data
//     lpn in the pool. That the store maps the owned lpns and not the others is not re-asked
//     of the store lpn by lpn at save or restore: with a demand-loaded mapping
//     (docs/design.md §18) that reads every table page (fsck reads every owned page).
// repair_tails is not run at restore: it zeroes bytes past a file's size that only a cut
// between a chunk and its size can leave; every mount repairs them, and no write of a session
// leaves any (zero_tail), so at the clean unmount that saved the tables there are none.
// The section ends with its own CRC-32C (it reaches open() apart from the stream that carried
// it). Restore treats the section as hostile (TableReader; every id, slot, name, size, lpn, chunk
// count range-checked, no allocation beyond what the section holds) and checks it against the
// header page it reads and against the store (belt and braces: the checkpoint layer already
// refuses a checkpoint the chip changed since): the layout and main name echo the header; the
// locations of the metadata pages in the store (PageStore::locate, RAM only) hash to what they
// were at save, so a rewritten directory or owner-map page is noticed; the owned lpns number
// the mapped ones counted at save, and the lowest free lpns (the ones a file grown since would
// have taken) are unmapped in the store. Any disagreement: the open reads
// the pages as without tables, and tables_refused() says why.
#include <algorithm>
#include <string>

#include "flash/common/crc32c.h"
#include "flash/volume/volume.h"

namespace pdl {

namespace {

constexpr uint32_t kStaleProbe = 64;  // lowest free lpns load_tables asks the store about
constexpr uint32_t kTablesVersion = 3;
// A chunk table entry (docs/format.md §13.4): an lpn; kNoLpn, then a count of holes; or
// kLpnRun, then the first lpn and a count of chunks holding consecutive lpns (written for
// kMinLpnRun chunks or more, and for the one lpn equal to the marker).
constexpr uint32_t kLpnRun = 0xFFFFFFFEu;
constexpr uint32_t kMinLpnRun = 4;
}  // namespace

uint32_t Volume::meta_locations_crc() const {
  uint32_t crc = 0;
  uint8_t b[8];
  for (uint32_t lpn = 0; lpn < hdr_.layout.data_first; lpn++) {
    const LpnLocation loc = store_->locate(lpn);
    le::put32(b, loc.base);
    le::put32(b + 4, loc.diff);
    crc = crc32c(b, sizeof b, crc);
  }
  return crc;
}

uint64_t Volume::max_table_bytes(const VolumeLayout& L) {
  // Version 1's bound (it sizes the checkpoint area at format: kept, so formats do not
  // change): fixed part (with the longest main name) and CRC; per file (longest name); per
  // data lpn 12 + 8 bytes. Version 3 takes less (docs/format.md §13.4): per mapped chunk 4
  // bytes, or 8 more after a hole run (a hole run only ever precedes a mapped chunk), 12 for
  // the one lpn written as a run of one; per owner page at most a 12-byte generation run.
  constexpr uint64_t kFixed = 4 + 4 + 6 * 4 + 2 + kMaxNameBytes + 4 + 4 + 4 + 8 + 4 + 4;
  constexpr uint64_t kPerFile = 4 + 4 + 8 + 8 + 8 + 1 + kMaxNameBytes + 4;
  return kFixed + uint64_t(L.max_files()) * kPerFile + uint64_t(L.data_lpns) * (12 + 8);
}

Status Volume::save_tables(TableWriter& w) {
  std::lock_guard<std::mutex> g(mu_);
  return save_tables_locked(w);
}

Status Volume::save_tables_locked(TableWriter& w) {
  auto refuse = [](const std::string& why) {
    return Status::error(Errc::kInvalidArgument, "volume tables not saved: " + why);
  };
  if (opts_.read_only) return refuse("the volume is mounted read-only (no clean-up was done)");
  if (!broken_.is_ok()) return refuse("a rollback failed: " + std::string(broken_.message()));
  if (!discarded_.is_ok()) return refuse("changes were lost to a full host");
  if (!store_->halted().is_ok()) return refuse("the store halted on a full host");
  if (dirty_locked()) return refuse("changes not synced (call close() first)");
  for (const auto& [id, f] : files_)
    if (f.mtime_dirty) return refuse("file " + f.meta.name + " has a lazy mtime (call close())");
  if (!pending_free_.empty())
    return refuse(std::to_string(pending_free_.size()) + " released lpns wait for a commit");
  if (!trimmed_.empty())
    return refuse(std::to_string(trimmed_.size()) + " trims wait for a commit (call close())");
  if (!uncleared_.empty())
    return refuse(std::to_string(uncleared_.size()) + " owner clearings wait for a commit");
  if (!stale_slots_.empty()) return refuse("a rename's stale slot waits for a commit");
  if (!vacated_.empty()) return refuse("a rename waits for a commit");

  const VolumeLayout& L = hdr_.layout;
  // Every chunk's lpn owned once and out of the pool; every other data lpn in the pool. (The
  // store is not asked whether each is mapped: that would load every table page of a
  // demand-loaded mapping, docs/design.md §18, at every checkpoint.)
  std::vector<uint64_t> owned_bits((size_t(L.data_lpns) + 63) / 64, 0);  // (RAM: 1 bit per lpn)
  uint32_t owned = 0;
  FileId max_id = 0;
  // As a reading open derives it: 1 + the largest slot version or owner generation on flash.
  uint64_t next_version = 1;
  for (uint64_t g : page_gen_) next_version = std::max(next_version, g + 1);
  for (const auto& [id, f] : files_)
    for (uint32_t c = 0; c < f.chunks.size(); c++) {
      const uint32_t lpn = f.chunks[c];
      if (lpn == kNoLpn) continue;
      const uint32_t i = lpn - L.data_first;
      if (i >= L.data_lpns || (owned_bits[i / 64] >> (i % 64) & 1) || pool_.is_free(lpn))
        return refuse("lpn " + std::to_string(lpn) + " of file " + f.meta.name +
                      " is outside the data area, in two chunks, or free");
      owned_bits[i / 64] |= uint64_t(1) << (i % 64);
      owned++;
    }
  for (uint32_t i = 0; i < L.data_lpns; i++) {
    const uint32_t lpn = L.data_first + i;
    if (owned_bits[i / 64] >> (i % 64) & 1) continue;
    if (!pool_.is_free(lpn))
      return refuse("lpn " + std::to_string(lpn) + " is in no chunk but not in the free pool");
  }
  const uint32_t mapped = owned;  // (the invariant above: the store maps exactly these)
  // The owner pages in RAM against the chunk tables (the others are on flash, as committed).
  for (const OwnerCache::Page& pg : owners_.pages())
    for (uint32_t k = 0; k < pg.entries.size(); k++) {
      const Owner& o = pg.entries[k];
      const uint64_t i = uint64_t(pg.page) * L.owners_per_page() + k;
      if (i >= L.data_lpns) break;
      const uint32_t lpn = L.data_first + uint32_t(i);
      const bool is_owned = owned_bits[i / 64] >> (i % 64) & 1;
      auto it = files_.find(o.id);
      const bool live = o.id != 0 && it != files_.end() && o.chunk < it->second.chunks.size() &&
                        it->second.chunks[o.chunk] == lpn;
      if (o.id != 0 ? !live : is_owned)
        return refuse("the owner entry of lpn " + std::to_string(lpn) +
                      " is not live (a reading mount would release it)");
      next_version = std::max(next_version, o.gen + 1);
    }
  std::vector<const File*> by_slot;
  for (const auto& [id, f] : files_) {
    by_slot.push_back(&f);
    max_id = std::max(max_id, id);
    next_version = std::max(next_version, f.meta.version + 1);
  }
  std::sort(by_slot.begin(), by_slot.end(),
            [](const File* a, const File* b) { return a->slot < b->slot; });

  const size_t start = w.size();
  w.tag("VOLT");
  w.u32(kTablesVersion);
  w.u32(store_->logical_pages());
  w.u32(L.chunk);
  w.u32(L.dir_pages);
  w.u32(L.owner_pages);
  w.u32(L.data_first);
  w.u32(L.data_lpns);
  w.u16(uint16_t(hdr_.main_name.size()));
  w.bytes(
      std::span(reinterpret_cast<const uint8_t*>(hdr_.main_name.data()), hdr_.main_name.size()));
  w.u32(meta_locations_crc());
  w.u32(mapped);
  w.u32(max_id == 0xFFFFFFFFu ? max_id : max_id + 1);
  w.u64(next_version);
  // The owner pages' generations in runs of equal values (most are 0: never written).
  uint32_t gen_runs = 0;
  for (size_t p = 0; p < page_gen_.size(); p++)
    gen_runs += p == 0 || page_gen_[p] != page_gen_[p - 1];
  w.u32(gen_runs);
  for (size_t p = 0; p < page_gen_.size();) {
    size_t e = p + 1;
    while (e < page_gen_.size() && page_gen_[e] == page_gen_[p]) e++;
    w.u64(page_gen_[p]);
    w.u32(uint32_t(e - p));
    p = e;
  }
  w.u32(uint32_t(by_slot.size()));
  uint32_t chunks_owned = 0;
  for (const File* f : by_slot) {
    w.u32(f->slot);
    w.u32(f->meta.id);
    w.u64(f->meta.size);
    w.u64(f->meta.version);
    w.u64(f->meta.mtime_ns);
    w.u8(uint8_t(f->meta.name.size()));
    w.bytes(std::span(reinterpret_cast<const uint8_t*>(f->meta.name.data()), f->meta.name.size()));
    // The chunk table as load_owner_map builds it: up to the last mapped chunk.
    size_t n = f->chunks.size();
    while (n > 0 && f->chunks[n - 1] == kNoLpn) n--;
    w.u32(uint32_t(n));
    for (size_t c = 0; c < n;) {
      const uint32_t l = f->chunks[c];
      size_t e = c + 1;  // the run of holes, or of consecutive lpns, from c
      if (l == kNoLpn) {  // (never the last entry: n ends on a mapped chunk)
        while (f->chunks[e] == kNoLpn) e++;
        w.u32(kNoLpn);
        w.u32(uint32_t(e - c));
      } else {
        while (e < n && f->chunks[e] != kNoLpn && f->chunks[e] == l + (e - c)) e++;
        if (e - c < kMinLpnRun && l != kLpnRun) {
          e = c + 1;
          w.u32(l);
        } else {
          w.u32(kLpnRun);
          w.u32(l);
          w.u32(uint32_t(e - c));
        }
        chunks_owned += uint32_t(e - c);
      }
      c = e;
    }
  }
  if (chunks_owned != owned)
    return refuse(std::to_string(chunks_owned) + " mapped chunks but " + std::to_string(owned) +
                  " owned lpns");
  // The section's own CRC: it is handed over apart from the stream that carried it.
  w.u32(crc32c(w.data().data() + start, w.size() - start));
  return Status::ok();
}

// In: the Volume as constructed (empty tables, header from the page). Out: the tables a
// reading open builds, from `tables`; an error (kCorrupt naming the cause) leaves them partly
// built.
Status Volume::load_tables(std::span<const uint8_t> tables, bool replayed) {
  const VolumeLayout& L = hdr_.layout;
  if (tables.size() < 8)
    return Status::error(Errc::kCorrupt, "volume tables: " + std::to_string(tables.size()) +
                                             " bytes, too short for a section");
  const uint32_t crc = le::get32(tables.data() + tables.size() - 4);
  tables = tables.first(tables.size() - 4);
  if (crc != crc32c(tables.data(), tables.size()))
    return Status::error(Errc::kCorrupt, "volume tables: CRC mismatch (damaged section)");
  TableReader r(tables);
  r.tag("VOLT");
  const uint32_t version = r.u32();
  if (r.status().is_ok() && version != kTablesVersion && version != 2)
    r.fail("volume tables: version " + std::to_string(version) + ", this pdl reads 2 and " +
           std::to_string(kTablesVersion));
  const uint32_t echo[] = {r.u32(), r.u32(), r.u32(), r.u32(), r.u32(), r.u32()};
  const uint32_t want[] = {store_->logical_pages(), L.chunk,      L.dir_pages,
                           L.owner_pages,           L.data_first, L.data_lpns};
  if (r.status().is_ok() && !std::equal(std::begin(echo), std::end(echo), std::begin(want)))
    r.fail("volume tables: the layout differs from the volume header's");
  const uint16_t name_len = r.u16();
  const auto main_name = r.bytes(name_len);
  if (r.status().is_ok() && std::string(main_name.begin(), main_name.end()) != hdr_.main_name)
    r.fail("volume tables: the main name differs from the volume header's");
  const uint32_t locations = r.u32(), mapped_saved = r.u32(), next_id_saved = r.u32();
  const uint64_t next_version_saved = r.u64();
  if (r.status().is_ok() && !replayed && locations != meta_locations_crc())
    r.fail("volume tables: the directory or owner map moved in the store since they were saved");
  // (Version 2: a generation per owner page, read as runs of one.)
  const uint32_t gen_runs = version == 2 ? L.owner_pages : r.u32();
  r.check_count(gen_runs, version == 2 ? 8 : 12, "volume tables: owner page generation runs");
  PDL_TRY(r.status());
  uint64_t gens_above = 1;  // 1 + the largest owner generation
  for (uint32_t k = 0, p = 0; k < gen_runs && r.status().is_ok(); k++) {
    const uint64_t gen = r.u64();
    const uint32_t run = version == 2 ? 1 : r.u32();
    if (!r.status().is_ok()) break;
    if (gen == UINT64_MAX) r.fail("volume tables: owner page generation out of range");
    if (run == 0 || run > L.owner_pages - p)
      r.fail("volume tables: owner page generation runs beyond the owner map");
    if (!r.status().is_ok()) break;
    std::fill_n(page_gen_.begin() + p, run, gen);
    p += run;
    gens_above = std::max(gens_above, gen + 1);
    if (k + 1 == gen_runs && p != L.owner_pages)
      r.fail("volume tables: owner page generation runs end before the owner map");
  }
  if (gen_runs == 0 && L.owner_pages != 0 && r.status().is_ok())
    r.fail("volume tables: no owner page generations");
  const uint32_t nfiles = r.u32();
  r.check(nfiles, uint64_t(slot_ids_.size()) + 1, "volume tables: file count");
  r.check_count(nfiles, 4 + 4 + 8 + 8 + 8 + 1 + 4, "volume tables: files");
  PDL_TRY(r.status());

  FileId max_id = 0;
  uint64_t versions_above = 1;  // 1 + the largest slot version
  // The owned lpns (1 bit each, freed at return): an lpn in two chunks is refused.
  std::vector<uint64_t> owned((size_t(L.data_lpns) + 63) / 64, 0);
  for (uint32_t k = 0; k < nfiles; k++) {
    File f;
    f.slot = r.u32();
    f.meta.id = r.u32();
    f.meta.size = r.u64();
    f.meta.version = r.u64();
    f.meta.mtime_ns = r.u64();
    const auto name = r.bytes(r.u8());
    const uint32_t n = r.u32();
    PDL_TRY(r.status());
    f.meta.name.assign(name.begin(), name.end());
    const std::string what = "volume tables: file " + std::to_string(k);
    if (!r.check(f.slot, slot_ids_.size(), "volume tables: slot")) break;
    if (slot_ids_[f.slot] != 0) r.fail(what + ": slot " + std::to_string(f.slot) + " twice");
    if (f.meta.id == 0 || f.meta.id == kStaleSlot || files_.count(f.meta.id))
      r.fail(what + ": id " + std::to_string(f.meta.id) + " invalid or twice");
    if (!check_name(f.meta.name).is_ok() || names_.count(f.meta.name))
      r.fail(what + ": name invalid or twice");
    if (f.meta.size > max_file_size()) r.fail(what + ": size beyond the data area");
    if (!r.check(n, chunk_count(f.meta.size) + 1, "volume tables: chunk count")) break;
    f.kind = kind_of(f.meta.name);
    // The runs of mapped chunks (first chunk, first lpn, count), read first: an entry takes
    // at least 4 bytes, so this list is bounded by the section, and the chunk table is sized
    // only once its last entry is known to be a mapped chunk — as a reading open sizes it.
    struct Run {
      uint32_t chunk, lpn, count;
    };
    std::vector<Run> mapped;
    for (uint64_t c = 0; c < n && r.status().is_ok();) {
      uint32_t l = r.u32(), count = 1;
      if (l == kNoLpn) {
        const uint32_t run = r.u32();
        if (r.status().is_ok() && (run == 0 || c + run >= n))
          r.fail(what + ": a run of " + std::to_string(run) + " holes at chunk " +
                 std::to_string(c) + " of " + std::to_string(n) +
                 " (a chunk table ends on a mapped chunk)");
        c += run;
        continue;
      }
      if (l == kLpnRun && version != 2) {
        l = r.u32();
        count = r.u32();
        if (r.status().is_ok() && (count == 0 || count > n - c))
          r.fail(what + ": a run of " + std::to_string(count) + " lpns at chunk " +
                 std::to_string(c) + " of " + std::to_string(n));
      }
      // (An lpn below the data area wraps to a huge offset: out of range too.)
      if (!r.check(uint64_t(l) - L.data_first + count - 1, L.data_lpns, "volume tables: lpn"))
        break;
      for (uint32_t k = 0; k < count; k++) {
        const uint32_t i = l - L.data_first + k;
        if (owned[i / 64] >> (i % 64) & 1) {
          r.fail(what + ": lpn " + std::to_string(l + k) + " owned twice");
          break;
        }
        owned[i / 64] |= uint64_t(1) << (i % 64);
        lpn_kind_.set(l + k, uint8_t(f.kind));
      }
      mapped.push_back(Run{uint32_t(c), l, count});
      c += count;
    }
    PDL_TRY(r.status());
    f.chunks.assign(n, kNoLpn);
    for (const Run& m : mapped)
      for (uint32_t k = 0; k < m.count; k++) f.chunks[m.chunk + k] = m.lpn + k;
    max_id = std::max(max_id, f.meta.id);
    if (f.meta.version == UINT64_MAX) return Status::error(Errc::kCorrupt, what + ": version");
    versions_above = std::max(versions_above, f.meta.version + 1);
    slot_ids_[f.slot] = f.meta.id;
    names_.emplace(f.meta.name, f.meta.id);
    files_.emplace(f.meta.id, std::move(f));
  }
  PDL_TRY(r.finish());
  next_id_ = max_id + 1;
  if (next_id_ == 0) next_id_ = 0xFFFFFFFFu;  // as load()
  auto corrupt = [](const std::string& m) {
    return Status::error(Errc::kCorrupt, "volume tables: " + m);
  };
  next_version_ = std::max(versions_above, gens_above);
  if (next_id_ != next_id_saved || next_version_ != next_version_saved)
    return corrupt("the next file id or version disagrees with the files");
  // Every unowned lpn goes to the pool; as many owned as the saved count of mapped lpns. (The
  // store is not asked lpn by lpn: with a demand-loaded mapping, docs/design.md §18, that would
  // read every table page at every mount. The tables come CRC-checked from a checkpoint of
  // this very store, and the probe below catches tables older than the store.)
  uint32_t owned_n = 0;
  for (uint32_t i = 0; i < L.data_lpns; i++) {
    const uint32_t lpn = L.data_first + i;
    if (owned[i / 64] >> (i % 64) & 1) {
      owned_n++;
      continue;
    }
    pool_.put(lpn);
  }
  if (owned_n != mapped_saved)
    return corrupt(std::to_string(owned_n) + " data lpns owned by files, " +
                   std::to_string(mapped_saved) + " mapped when the tables were saved");
  // Tables older than the store: a file grown since took the lowest free lpns (the pool hands
  // those out first), so the lowest few free ones must still be unmapped — a bounded probe of
  // one or two table pages, where asking every lpn would read them all.
  uint32_t probed = replayed ? kStaleProbe : 0;  // (after a replay: catch_up's)
  for (uint32_t i = 0; i < L.data_lpns && probed < kStaleProbe; i++) {
    const uint32_t lpn = L.data_first + i;
    if (owned[i / 64] >> (i % 64) & 1) continue;
    probed++;
    if (store_->is_mapped(lpn))
      return corrupt("lpn " + std::to_string(lpn) +
                     " is free in the tables but mapped in the store (tables older than it)");
  }
  return Status::ok();
}

Status Volume::open(std::unique_ptr<PageStore> store, const VolumeOptions& opts,
                    std::unique_ptr<Volume>* out, std::span<const uint8_t> tables,
                    const std::vector<uint32_t>* touched) {
  std::vector<uint8_t> page(store->page_size());
  Status st = store->read(0, page);
  if (st.is(Errc::kNotFound))
    return Status::error(Errc::kCorrupt, "no volume header (the store holds no pdl volume)");
  VolumeHeader h;
  if (st.is_ok()) st = decode_header(page, store->logical_pages(), store->page_size(), &h);
  if (st.is(Errc::kCorrupt) && st.message().rfind("no volume header", 0) != 0)
    // Everything else may be intact, but without the header's layout no file can be found.
    return Status::error(
        Errc::kCorrupt,
        "the volume header (lpn 0, which locates the directory) is damaged: " +
            std::string(st.message()) +
            "; no file of this image can be located, by pdl cat or any other reader; the data "
            "pages are left as they are: keep the image file (do not format it) for salvage");
  PDL_TRY(st);
  std::unique_ptr<Volume> v(new Volume(std::move(store), opts, h));
  if (!tables.empty()) {
    Status t = v->load_tables(tables, touched != nullptr);
    // After a replay: brought up to date from the pages the replay names; an error there
    // (a page that does not read or decode) and the open reads every page instead.
    FileId max_id = 0;
    std::vector<bool> drop_slot;
    std::vector<uint32_t> dead;
    if (t.is_ok() && touched) t = v->catch_up(*touched, &max_id, &drop_slot, &dead);
    v->from_tables_ = t.is_ok();
    v->caught_up_ = t.is_ok() && touched;
    if (!t.is_ok()) {
      if (t.is(Errc::kPowerCut)) return t;
      v->tables_refused_ = std::string(t.message());
      v->reset_state();
    }
    if (v->caught_up_) PDL_TRY(v->finish_load(max_id, dead, drop_slot));
  }
  if (!v->from_tables_) PDL_TRY(v->load());
  *out = std::move(v);
  return Status::ok();
}

uint64_t Volume::table_bytes() {
  std::lock_guard<std::mutex> g(mu_);
  // Node-based containers: the payload plus two pointers of list/tree overhead per node.
  constexpr uint64_t kNode = 2 * sizeof(void*);
  uint64_t n = sizeof(*this);
  for (const auto& [id, f] : files_)
    n += sizeof(id) + sizeof(File) + kNode + f.chunks.capacity() * sizeof(uint32_t) +
         f.meta.name.capacity();
  n += files_.bucket_count() * sizeof(void*);
  for (const auto& [name, id] : names_) n += sizeof(name) + sizeof(id) + 2 * kNode + name.size();
  for (const auto& [slot, meta] : stale_slots_)
    n += sizeof(slot) + sizeof(meta) + 2 * kNode + meta.name.capacity();
  for (const auto& name : vacated_) n += sizeof(name) + 2 * kNode + name.size();
  n += slot_ids_.capacity() * sizeof(FileId) + owners_.table_bytes() + owner_io_.capacity() +
       page_gen_.capacity() * sizeof(uint64_t) +
       lpn_kind_.table_bytes() + dir_dirty_.table_bytes() + owner_dirty_.table_bytes() +
       pool_.table_bytes() + (pending_free_.capacity() + trimmed_.capacity()) * sizeof(uint32_t) +
       uncleared_.capacity() * sizeof(uncleared_[0]) + scratch_.capacity() + old_.capacity() +
       hdr_.main_name.capacity();
  for (const CachedChunk& e : cache_) n += sizeof(e) + e.data.capacity();
  return n;
}

}  // namespace pdl
