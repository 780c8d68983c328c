// sb_tables.cc — StableBuffer's checkpointed tables (docs/format.md §13.3): the FTL device's
// tables nested first (the device's own save_tables, whatever FTL it is, as a length-prefixed
// sub-stream its mount_tables reads and finishes on its own), then the slot table, the
// free-slot pointer, the directory's commit number and the timestamp counter.
//
// Saved only when synced: the slot directory committed (no slot pending, the RAM directory the
// durable one) and the device synced. Then the free slots are exactly the slots naming no
// destination, the SBTT and the recognizer follow from the slot table, and nothing is pending:
// none of those is saved. The staged pages themselves stay in the device's slots (the device's
// tables say where); the slot directory on the device is not read — the slot table saved is
// the one its last commit wrote.
#include <algorithm>
#include <string>

#include "flash/ftl/sb_stable_buffer.h"
#include "flash/ftl/sb_store.h"

namespace pdl {

namespace {

// Memory an ordered-set entry takes (red-black node: 3 pointers and a colour, the value), and
// an unordered container's entry (node: next pointer and value; a bucket pointer).
constexpr uint64_t kTreeNode = 40, kHashNode = 24, kHashBucket = 8;

// The buffer's section (SBUF), checked against layout `l`: the free-slot pointer, the
// directory's commit number, the timestamp counter and the slot table. Errors stay in r.
struct SbSection {
  uint32_t cursor = 0;
  uint64_t seq = 0, next_ts = 0;
  std::vector<SbSlotEntry> slots;
};
void read_section(TableReader& r, const SbLayout& l, SbSection* out) {
  r.tag("SBUF");
  const uint32_t user = r.u32(), slots = r.u32();
  if (r.status().is_ok() && (user != l.user || slots != l.slots))
    r.fail("checkpoint: stablebuffer of " + std::to_string(user) + " pages and " +
           std::to_string(slots) + " slots is not this store's (" + std::to_string(l.user) +
           ", " + std::to_string(l.slots) + ")");
  out->cursor = r.u32();
  out->seq = r.u64();
  out->next_ts = r.u64();
  r.check(out->cursor, uint64_t(l.slots) + 1, "stablebuffer free-slot pointer");
  if (r.status().is_ok() && (out->seq == 0 || out->next_ts == 0))
    r.fail("checkpoint: stablebuffer directory commit or timestamp counter 0");
  if (!r.check_count(l.slots, 12, "stablebuffer slot")) return;
  out->slots.assign(l.slots, SbSlotEntry{});
  std::vector<uint8_t> staged(l.user, 0);
  for (uint32_t i = 0; i < l.slots && r.status().is_ok(); i++) {
    SbSlotEntry e;
    e.dest = r.u32();
    e.ts = r.u64();
    if (!r.status().is_ok()) break;
    const std::string where = "checkpoint: stablebuffer slot " + std::to_string(i);
    if (e.dest == kSbFree) {
      if (e.ts != 0) r.fail(where + ": free with a timestamp");
      continue;
    }
    if (!r.check(e.dest, l.user, "stablebuffer slot's destination")) break;
    if (e.ts >= out->next_ts) {
      r.fail(where + ": timestamp " + std::to_string(e.ts) + " not below the counter " +
             std::to_string(out->next_ts));
      break;
    }
    if (staged[e.dest]++) {
      r.fail(where + ": destination " + std::to_string(e.dest) + " staged twice");
      break;
    }
    out->slots[i] = e;
  }
}

}  // namespace

Status StableBufferStore::save_tables(TableWriter& w) const {
  PDL_TRY(changeable());
  PDL_TRY(device_->halted());
  if (dir_dirty_ || !pending_.empty())
    return Status::error(Errc::kInvalidArgument,
                         "stablebuffer: the slot directory has changes not committed (" +
                             std::to_string(pending_.size()) +
                             " slots pending): sync before saving the tables");
  // The device's tables, length-prefixed (the length patched in once known).
  w.tag("SBDV");
  const size_t at = w.size();
  w.u64(0);
  PDL_TRY(device_->save_tables(w));
  const uint64_t n = w.size() - at - 8;
  for (int i = 0; i < 8; i++) w.data()[at + size_t(i)] = uint8_t(n >> (8 * i));
  w.tag("SBUF");
  w.u32(layout_.user);
  w.u32(layout_.slots);
  w.u32(cursor_);
  w.u64(seq_);
  w.u64(next_ts_);
  for (const SbSlotEntry& e : slots_) {
    w.u32(e.dest);
    w.u64(e.ts);
  }
  return Status::ok();
}

uint64_t StableBufferStore::table_bytes() const {
  return device_->table_bytes() + sizeof(SbSlotEntry) * uint64_t(slots_.capacity()) +
         kHashNode * sbtt_.size() + kHashBucket * sbtt_.bucket_count() +
         kTreeNode * free_.size() + 4 * uint64_t(pending_.capacity()) + recognizer_.table_bytes();
}

Status StableBufferStore::from_tables(std::unique_ptr<PageStore> device, const StoreParams& p,
                                      TableReader& r, std::unique_ptr<PageStore>* out) {
  if (p.method != Method::kStableBuffer || p.sb_slots == 0 || p.logical_pages == 0)
    return Status::error(Errc::kInvalidArgument,
                         "stablebuffer: parameters not resolved (" + p.describe() + ")");
  const SbLayout l = SbLayout::of(p.logical_pages, p.sb_slots, device->page_size());
  if (device->logical_pages() < l.device_pages())
    return Status::error(Errc::kCorrupt,
                         "checkpoint: the stablebuffer's FTL device offers " +
                             std::to_string(device->logical_pages()) + " pages, the buffer needs " +
                             std::to_string(l.device_pages()));
  std::unique_ptr<StableBufferStore> s(new StableBufferStore(std::move(device), p, l));
  s->set_classifier(nullptr);
  SbSection sec;
  read_section(r, l, &sec);
  PDL_TRY(r.finish());
  s->cursor_ = sec.cursor;
  s->seq_ = sec.seq;
  s->next_ts_ = sec.next_ts;
  for (uint32_t i = 0; i < l.slots; i++) {
    const SbSlotEntry& e = sec.slots[i];
    if (e.dest == kSbFree) {
      s->free_.insert(i);
      continue;
    }
    s->sbtt_.emplace(e.dest, i);
    s->slots_[i] = e;
    s->recognizer_.insert(e.dest);
  }
  s->sb_.recovered_slots = s->sbtt_.size();
  *out = std::move(s);
  return Status::ok();
}

// The device's nested section (tag SBDV, u64 length, its bytes) as a reader of its own, with
// the pager of `r` (the device's paged tables load through it); an error stays in r.status().
TableReader SbStore::device_section(TableReader& r) {
  r.tag("SBDV");
  const uint64_t n = r.u64();
  return TableReader(r.bytes(size_t(std::min<uint64_t>(n, r.remaining() + 1))), r.pager());
}

Status SbStore::mount_tables(Nand& nand, const StoreParams& p, TableReader& r,
                             TablesMounter mount_device, std::unique_ptr<PageStore>* out) {
  TableReader dr = device_section(r);
  PDL_TRY(r.status());
  std::unique_ptr<PageStore> device;
  PDL_TRY(mount_device(nand, device_params(p, nand.geometry()), CommitMode::kPerPage, dr,
                       &device));
  PDL_TRY(dr.finish());
  return StableBufferStore::from_tables(std::move(device), p, r, out);
}

Status SbStore::replay(Nand& nand, const StoreParams& p, TableReader& r,
                       const std::vector<uint32_t>& declared, DeviceReplayer replay_device,
                       std::unique_ptr<PageStore>* out, MountReport* report) {
  TableReader dr = device_section(r);
  PDL_TRY(r.status());
  std::unique_ptr<PageStore> device;
  PDL_TRY(replay_device(nand, device_params(p, nand.geometry()), CommitMode::kPerPage, dr,
                        declared, &device, report));
  // What the user may see changed: the device's list, read through the buffer (below), with
  // the destinations the checkpoint's slot table staged. Without either, no list: the client
  // treats its tables as out of date.
  std::vector<Lpn> device_lpns;
  const bool listed = device->take_replayed_lpns(&device_lpns);
  SbSection then;
  if (listed)
    read_section(r, SbLayout::of(p.logical_pages, p.sb_slots, device->page_size()), &then);
  PDL_TRY(mount(std::move(device), p, out, report));
  if (!listed || !r.status().is_ok()) return Status::ok();
  std::vector<Lpn> staged_then;
  for (const SbSlotEntry& e : then.slots)
    if (e.dest != kSbFree) staged_then.push_back(e.dest);
  static_cast<StableBufferStore&>(**out).set_replayed(device_lpns, staged_then);
  return Status::ok();
}

// A user page reads its slot while staged, else its destination. If no slot and no directory
// page changed since the checkpoint (none in the device's list), the directory the mount read
// is the checkpoint's, so every page staged then is staged now in the same slot holding the
// same bytes, and a page reads differently only if its destination changed. Otherwise every
// page staged then or now is listed too (at most the slots, twice).
void StableBufferStore::set_replayed(const std::vector<Lpn>& device_lpns,
                                     const std::vector<Lpn>& staged_then) {
  std::vector<Lpn> out;
  bool buffer_changed = false;
  for (Lpn l : device_lpns) {
    if (l < layout_.user) out.push_back(l);
    else buffer_changed = true;
  }
  if (buffer_changed) {
    out.insert(out.end(), staged_then.begin(), staged_then.end());
    for (const auto& [dest, slot] : sbtt_) out.push_back(dest);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  replayed_ = true;
  replayed_lpns_ = std::move(out);
}

}  // namespace pdl
