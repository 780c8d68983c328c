// pdl_tables.cc — PdlStore's checkpointed tables (PDL, OPU, and the page-mapping FTL device):
// save_tables, mount_tables, table_bytes. Byte layout: docs/format.md §13.1.
//
// What is saved is what a scan mount (pdl_recovery.cc) rebuilds plus what it cannot: the
// scalars (PDLS, version 2): next seq, committed seq, the page holding the newest commit
// record, damaged pages, blocks of discarded groups; then the three paged tables
// (paged_table.h, docs/design.md §18), each a TPAG section — the ppmt (entries whole: base,
// differential, copies, in_dwb), the reverse map and vdct: through a pager (w.pager(), the
// checkpoint area) only their dirty table pages are programmed and the stream holds their
// directories; without one (no area: tests, tools) their entries go inline; then the block
// manager's tables (PBLK, block_tables.cc) and the write buffer's records (PDWB: with NVM, the
// committed buffer; without, empty after a sync). Nothing is derived at mount by walking the
// tables (version 1 derived vdct and copies): a mount costs the stream and the directories,
// not the chip; table pages load when first used. The entries of a table page are trusted once
// the pager verified the page (its CRC and table/index); check() (pdl fsck, the tests)
// recomputes them all.
// Empty after a sync, so verified empty and not saved: the open group (committed_, group
// pages, pending base page, NVM changes), GC's compaction buffer and victim — but the bucket
// count of the open group's hash map is saved: a commit walks the group in the map's order,
// its valid-count changes relink closed blocks in that order, and the closed lists' order
// picks GC victims among equals, so a fresh map would make the mounted store diverge.
//
// The commit page. A scan finds the newest commit record; with atomic groups the store keeps
// it pinned (commit_ppa_), per page it keeps the page mount found (commit_candidate_) until it
// programs — after which the newest record is no longer known (every page is a record of its
// own). Mount converts between the modes as set_commit_mode does, so a store saved in one
// mode mounts in the other (the image mounts per page, then switches to groups). A per-page
// PDL/OPU store that programmed since its mount saves its record as unknown (version 3, flag
// bit 2): such tables mount per page (which needs no record: recovery's cut-off covers every
// page there, each a record of its own) and refuse groups (kUnsupported: that mount scans,
// and the scan finds the record to pin). The FTL device never has groups.
//
// The NVM log (method=pdl&nvm=SIZE) is read again by mount_tables, as by the scan mount: the
// log must be re-read anyway to set up its next commit (a remount always writes a fresh log,
// nvm_log.h), and comparing it with the saved buffer (the last commit's seq, every buffered
// record the log's newest for its lpn) refuses a checkpoint the NVM no longer matches — except
// for the replay after a power cut (`moved`), which rebuilds the buffer from the log.
#include <string>
#include <unordered_map>

#include "flash/common/le.h"
#include "flash/pdl/pdl_store.h"

namespace pdl {

namespace {
constexpr uint8_t kVersion = 2;
// Version 3: as 2, and flag bit 2 may say the newest commit record is not known (a per-page
// PDL/OPU store that programmed since its mount). Written only then, so that every other
// checkpoint stays readable by a pdl that knows version 2 (one that does not know 3 scans).
constexpr uint8_t kVersionRecordUnknown = 3;
constexpr uint8_t kFlagGroups = 1, kFlagNvm = 2, kFlagRecordUnknown = 4;
}  // namespace

Status PdlStore::save_tables(TableWriter& w) const {
  auto refuse = [](Errc e, const std::string& why) {
    return Status::error(e, "checkpoint: " + why);
  };
  if (legacy_)
    return refuse(Errc::kUnsupported, "a store of superblock format 1 mounts by scan");
  if (!poisoned_.is_ok())
    return refuse(Errc::kInvalidArgument,
                  "the store is poisoned: " + std::string(poisoned_.message()));
  if (!halted_.is_ok())
    return refuse(Errc::kInvalidArgument,
                  "the store is halted: " + std::string(halted_.message()));
  if (dirty() || pending_.held || !committed_.empty() || !group_pages_.empty())
    return refuse(Errc::kInvalidArgument, "changes since the last sync");
  if (!nvm_ && !dwb_.empty())
    return refuse(Errc::kInvalidArgument, "the write buffer holds records");
  if (!gc_buffer_.empty() || gc_victim_ >= 0 || !stage_.empty())
    return refuse(Errc::kInvalidArgument, "in the middle of a garbage collection");
  const bool atomic_method = has_atomic_commit(params_.method);
  // Per page, once a page was programmed the newest commit record is no longer tracked (every
  // page is one): saved as unknown — a per-page mount needs none; one with groups scans.
  const bool record_unknown = atomic_method && !groups_ && programmed_;
  const Ppa commit = !atomic_method || record_unknown ? kNoPpa
                     : groups_                        ? commit_ppa_
                                                      : commit_candidate_;
  const uint32_t ppb = geo_.pages_per_block;

  w.tag("PDLS");
  w.u8(record_unknown ? kVersionRecordUnknown : kVersion);
  w.u8(uint8_t((groups_ ? kFlagGroups : 0) | (nvm_ ? kFlagNvm : 0) |
               (record_unknown ? kFlagRecordUnknown : 0)));
  w.u32(uint32_t(ppmt_.size()));
  w.u32(geo_.blocks);
  w.u32(ppb);
  w.u32(dwb_.capacity());
  w.u64(next_seq_);
  w.u64(committed_seq_);
  w.u32(commit);
  w.u64(damaged_pages_);
  w.u64(nvm_ ? nvm_commit_seq_ : 0);
  w.u64(committed_.bucket_count());
  w.u32(void_blocks_);
  for (uint32_t b = 0; b < geo_.blocks; b++)
    if (void_block_[b]) w.u32(b);

  PDL_TRY(tables_status());
  PDL_TRY(ppmt_.save(w));
  PDL_TRY(p2l_.save(w));
  PDL_TRY(vdct_.save(w));
  PDL_TRY(blocks_.save_tables(w));

  w.tag("PDWB");
  w.u32(dwb_.used());
  w.bytes(dwb_.page().first(dwb_.used()));
  return Status::ok();
}

Status PdlStore::mount_tables(Nand& nand, const StoreParams& params, CommitMode mode,
                              TableReader& r, std::unique_ptr<PageStore>* out,
                              NvmLog::Recovered* moved) {
  std::unique_ptr<PdlStore> s(new PdlStore(nand, params));
  const Geometry& g = s->geo_;
  const uint64_t pages = g.total_pages();
  const uint32_t ppb = g.pages_per_block;
  const uint32_t lpns = uint32_t(s->ppmt_.size());
  const bool atomic_method = has_atomic_commit(params.method);
  auto bad = [&](const std::string& m) {
    r.fail("checkpoint: " + m);
    return r.status();
  };

  // ---- PDLS: the scalars ----
  r.tag("PDLS");
  const uint8_t version = r.u8(), flags = r.u8();
  const uint32_t n_lpns = r.u32(), blocks = r.u32(), n_ppb = r.u32(), capacity = r.u32();
  const uint64_t next_seq = r.u64(), committed_seq = r.u64();
  const Ppa commit = r.u32();
  const uint64_t damaged = r.u64(), nvm_seq = r.u64(), group_buckets = r.u64();
  PDL_TRY(r.status());
  if (version != kVersion && version != kVersionRecordUnknown)
    return bad("PDL tables of version " + std::to_string(version));
  const bool record_unknown = flags & kFlagRecordUnknown;
  if ((flags & ~(kFlagGroups | kFlagNvm | kFlagRecordUnknown)) != 0 ||
      bool(flags & kFlagNvm) != bool(s->nvm_) || ((flags & kFlagGroups) && !atomic_method) ||
      record_unknown != (version == kVersionRecordUnknown) ||
      (record_unknown && ((flags & kFlagGroups) || !atomic_method)))
    return bad("PDL tables' flags " + std::to_string(flags) + " do not fit the method");
  if (n_lpns != lpns || blocks != g.blocks || n_ppb != ppb || capacity != s->dwb_.capacity())
    return bad("PDL tables of another store (" + std::to_string(n_lpns) + " logical pages, " +
               std::to_string(blocks) + " blocks of " + std::to_string(n_ppb) +
               " pages, a write buffer of " + std::to_string(capacity) + " bytes)");
  if (next_seq == 0 || committed_seq >= next_seq || (s->nvm_ && nvm_seq >= next_seq))
    return bad("sequence numbers out of order (next " + std::to_string(next_seq) + ")");
  if (commit != kNoPpa &&
      (!atomic_method || record_unknown || commit >= pages || commit / ppb < kSuperblockBlocks))
    return bad("commit page " + std::to_string(commit) + " out of range");
  if (group_buckets == 0 || group_buckets > 4 * uint64_t(lpns) + 64)
    return bad("the open group's map of " + std::to_string(group_buckets) + " buckets");
  // (Its bucket count fixes the order a commit walks the group in, and so the order of the
  // valid-count changes that order the closed lists: the same count, the same victims.)
  if (group_buckets > s->committed_.bucket_count()) s->committed_.rehash(group_buckets);
  s->next_seq_ = next_seq;
  s->committed_seq_ = committed_seq;
  s->damaged_pages_ = damaged;
  const uint32_t n_void = r.u32();
  if (!r.check(n_void, g.blocks + 1, "void block count")) return r.status();
  for (uint32_t i = 0; i < n_void; i++) {
    const uint32_t b = r.u32();
    if (!r.check(b, g.blocks, "void block")) return r.status();
    if (b < kSuperblockBlocks || s->void_block_[b]) return bad("void block list");
    s->note_void_block(b);
  }

  // ---- TPAG x3: the paged tables (their directories, or inline entries) ----
  PDL_TRY(s->ppmt_.load(r));
  PDL_TRY(s->p2l_.load(r));
  PDL_TRY(s->vdct_.load(r));

  // ---- PBLK: the block manager ----
  PDL_TRY(s->blocks_.load_tables(r));

  // ---- PDWB: the write buffer (with NVM: the committed one) ----
  r.tag("PDWB");
  const uint32_t used = r.u32();
  if (!r.check(used, uint64_t(s->dwb_.capacity()) + 1, "write buffer bytes")) return r.status();
  if (used != 0 && !s->nvm_) return bad("a write buffer without NVM after a sync");
  const std::span<const uint8_t> bytes = r.bytes(used);
  PDL_TRY(r.status());
  RecordReader rr(bytes);
  RecordView rec;
  while (rr.next(&rec)) {
    if (!r.check(rec.lpn, lpns, "write buffer record's lpn")) return r.status();
    RecordView seen;
    if (s->dwb_.find(rec.lpn, &seen)) return bad("two write buffer records of one lpn");
    if (rec.seq >= next_seq) return bad("write buffer record newer than the next seq");
    if (!s->ppmt_.get(rec.lpn).in_dwb) {
      PDL_TRY(s->tables_status());
      return bad("write buffer record of page " + std::to_string(rec.lpn) +
                 " whose ppmt entry has none");
    }
    s->dwb_.put(rec);  // (fits: the records were read from `used` <= capacity bytes)
  }
  if (!rr.status().is_ok())
    return bad("write buffer: " + std::string(rr.status().message()));
  PDL_TRY(r.finish());

  // ---- the commit page, and the mode asked for (as set_commit_mode converts) ----
  s->legacy_ = false;
  const bool saved_groups = flags & kFlagGroups;
  const bool groups = mode == CommitMode::kGroup && atomic_method;
  if (record_unknown && groups)
    return Status::error(Errc::kUnsupported,
                         "checkpoint: saved after per-page writes, which leave the newest commit "
                         "record untracked; atomic groups need it pinned (a scan finds it)");
  s->groups_ = saved_groups;
  if (saved_groups) s->commit_ppa_ = commit;
  else s->commit_candidate_ = commit;
  if (commit != kNoPpa && (s->blocks_.is_free(commit / ppb) || s->blocks_.is_bad(commit / ppb)))
    return bad("commit page " + std::to_string(commit) + " in a free or bad block");
  if (saved_groups != groups && commit != kNoPpa && !s->referenced(commit)) {
    // The pin's count: in the saved valid counts with groups, not without.
    const uint32_t b = commit / ppb;
    if ((saved_groups ? s->blocks_.valid(b) == 0
                                              : s->blocks_.valid(b) >= ppb))
      return bad("commit page " + std::to_string(commit) + "'s block valid count");
    if (saved_groups) s->blocks_.valid_dec(commit);
    else s->blocks_.valid_inc(commit);
  }
  s->groups_ = groups;
  s->commit_ppa_ = groups ? commit : kNoPpa;
  s->commit_candidate_ = groups ? kNoPpa : commit;
  s->blocks_.set_user_keep(groups ? 2 : 1);
  s->programmed_ = record_unknown;  // (set_commit_mode then refuses groups, as after writes)
  PDL_TRY(s->tables_status());  // (a table page the commit page's test loaded)

  // ---- the NVM log, read again: it must be the one the tables were saved with ----
  if (s->nvm_) {
    NvmLog::Recovered local;
    NvmLog::Recovered& nvm = moved ? *moved : local;
    PDL_TRY(s->nvm_->recover(nand, &nvm));
    if (!nvm.found)
      return Status::error(Errc::kCorrupt,
                           "checkpoint: NVM holds no intact write-buffer log");
    if (moved) {  // (the replay rebuilds the buffer from the log: pdl_replay.cc)
      if (nvm.commit_seq < nvm_seq)
        return Status::error(Errc::kCorrupt, "checkpoint: the NVM log's last commit " +
                                                 std::to_string(nvm.commit_seq) +
                                                 " is older than the tables' " +
                                                 std::to_string(nvm_seq));
      s->ledger_.charge(s->ledger_.other());
      *out = std::move(s);
      return Status::ok();
    }
    if (nvm.commit_seq != nvm_seq)
      return Status::error(Errc::kCorrupt, "checkpoint: the NVM log's last commit is " +
                                               std::to_string(nvm.commit_seq) +
                                               ", the tables' " + std::to_string(nvm_seq));
    std::unordered_map<Lpn, size_t> newest;
    for (size_t i = 0; i < nvm.records.size(); i++)
      if (nvm.records[i].size() >= 4) newest[le::get32(nvm.records[i].data())] = i;
    std::vector<uint8_t> enc;
    Status mismatch;
    s->dwb_.for_each([&](const RecordView& v) {
      if (!mismatch.is_ok()) return;
      auto it = newest.find(v.lpn);
      enc.resize(v.size());
      record_encode(v, enc.data());
      if (it == newest.end() || nvm.records[it->second] != enc)
        mismatch = Status::error(Errc::kCorrupt, "checkpoint: the buffered record of page " +
                                                     std::to_string(v.lpn) +
                                                     " is not the NVM log's newest");
    });
    PDL_TRY(mismatch);
    s->nvm_mounted(nvm_seq);
  }
  s->ledger_.charge(s->ledger_.other());
  *out = std::move(s);
  return Status::ok();
}

uint64_t PdlStore::table_bytes() const {
  // Write buffers: their page-sized bytes and about 12 bytes of index per record.
  auto buffer = [](const WriteBuffer& b) { return uint64_t(b.capacity()) + 12 * b.count(); };
  // A hash map's entry: key, value, a node pointer and a bucket slot (a fair estimate).
  auto map_entry = [](size_t kv) { return uint64_t(kv + 2 * sizeof(void*)); };
  // The paged tables: their resident pages and directories (not the chip's size).
  uint64_t n = ppmt_.ram_bytes() + p2l_.ram_bytes() + vdct_.ram_bytes() +
               group_page_.size() * map_entry(sizeof(Ppa)) +
               group_pages_.capacity() * sizeof(Ppa) + void_block_.capacity() +
               gc_sources_.capacity() * sizeof(Ppa) + blocks_.table_bytes() + buffer(dwb_) +
               buffer(gc_buffer_) + pending_.data.capacity() +
               committed_.size() * map_entry(sizeof(Lpn) + sizeof(Refs));
  if (nvm_)
    n += buffer(committed_dwb_) + buffer(stage_) +
         nvm_changed_.size() * map_entry(sizeof(Lpn)) +
         dwb_.count() * map_entry(sizeof(uint32_t) + 12);  // the log's index of its records
  return n;
}

void PdlStore::tables_saved(bool durable) {
  ppmt_.saved(durable);
  p2l_.saved(durable);
  vdct_.saved(durable);
}

PagedTableStats PdlStore::paged_stats() const {
  PagedTableStats sum;
  for (const PagedTableBase* t : {static_cast<const PagedTableBase*>(&ppmt_),
                                  static_cast<const PagedTableBase*>(&p2l_),
                                  static_cast<const PagedTableBase*>(&vdct_)}) {
    const PagedTableStats x = t->stats();
    sum.loads += x.loads;
    sum.evictions += x.evictions;
    sum.saved_pages += x.saved_pages;
    sum.resident += x.resident;
    sum.dirty += x.dirty;
    sum.homed += x.homed;
    sum.folded_entries += x.folded_entries;
    sum.folded_pages += x.folded_pages;
    sum.folds += x.folds;
  }
  return sum;
}

Status PdlStore::tables_status() const {
  PDL_TRY(ppmt_.status());
  PDL_TRY(p2l_.status());
  return vdct_.status();
}

Status PdlStore::guard(Status st) {
  fold_tables();
  const Status t = tables_status();
  if (t.is_ok()) return st;
  if (poisoned_.is_ok())
    poisoned_ = Status::error(t.code(), "table page: " + std::string(t.message()) +
                                            " (the store is halted until mounted again)");
  return poisoned_;
}

}  // namespace pdl
