// sb_stable_buffer.cc — StableBuffer's reader, writer, flush manager, directory commits and
// recovery (sb_stable_buffer.h).
#include "flash/ftl/sb_stable_buffer.h"

#include <algorithm>
#include <string>
#include <utility>

namespace pdl {

StableBufferStore::StableBufferStore(std::unique_ptr<PageStore> device, const StoreParams& p,
                                     const SbLayout& l)
    : StoreBase(device->nand(), p),
      device_(std::move(device)),
      layout_(l),
      model_(SbCostModel::of(p.ftl, device_->params().log_blocks, geo_, l.slots)),
      recognizer_(p.sb_recognition, geo_.pages_per_block, model_.focus_blocks),
      slots_(l.slots) {}

Status StableBufferStore::open(std::unique_ptr<PageStore> device, const StoreParams& p,
                               bool format, std::unique_ptr<PageStore>* out,
                               MountReport* report) {
  if (p.method != Method::kStableBuffer || p.sb_slots == 0 || p.logical_pages == 0)
    return Status::error(Errc::kInvalidArgument,
                         "stablebuffer: parameters not resolved (" + p.describe() + ")");
  const SbLayout l = SbLayout::of(p.logical_pages, p.sb_slots, device->page_size());
  if (device->logical_pages() < l.device_pages())
    return Status::error(Errc::kInvalidArgument,
                         "stablebuffer: the FTL device offers " +
                             std::to_string(device->logical_pages()) + " pages, the buffer needs " +
                             std::to_string(l.device_pages()) + " (user pages, slots, directory)");
  std::unique_ptr<StableBufferStore> s(new StableBufferStore(std::move(device), p, l));
  s->set_classifier(nullptr);
  MountClock clock(s->nand_);
  if (format) {
    for (uint32_t i = 0; i < l.slots; i++) s->free_.insert(i);
    s->dir_dirty_ = true;
    PDL_TRY(s->commit());
  } else {
    SbDirectory dir;
    std::vector<uint32_t> stale;
    PDL_TRY(load_directory(*s->device_, l, &dir, &stale));
    s->seq_ = dir.seq;
    s->next_ts_ = dir.next_ts;
    s->slots_ = dir.entries;
    for (uint32_t i = 0; i < l.slots; i++) {
      const SbSlotEntry& e = s->slots_[i];
      if (e.dest == kSbFree) continue;
      s->sbtt_[e.dest] = i;
      s->recognizer_.insert(e.dest);
    }
    s->pending_ = stale;
    std::vector<bool> is_stale(l.slots, false);
    for (uint32_t i : stale) is_stale[i] = true;
    for (uint32_t i = 0; i < l.slots; i++)
      if (s->slots_[i].dest == kSbFree && !is_stale[i]) s->free_.insert(i);
    s->dir_dirty_ = !stale.empty();
    s->sb_.recovered_slots = s->sbtt_.size();
  }
  if (report) {
    MountReport mine;
    clock.finish(&mine);
    report->sim_us += mine.sim_us;
    report->wall_s += mine.wall_s;
  }
  *out = std::move(s);
  return Status::ok();
}

uint32_t StableBufferStore::slot_of(Lpn lpn) const {
  auto it = sbtt_.find(lpn);
  return it == sbtt_.end() ? kSbFree : it->second;
}

Status StableBufferStore::read_page(Lpn lpn, std::span<uint8_t> page) {
  const uint32_t s = slot_of(lpn);
  if (s == kSbFree) {
    sb_.direct_reads++;
    return fail(device_->read(lpn, page));
  }
  sb_.slot_reads++;
  const Status st = device_->read(layout_.slot_lpn(s), page);
  if (st.is(Errc::kNotFound))
    return Status::error(Errc::kCorrupt, "stablebuffer: slot " + std::to_string(s) +
                                             " staging logical page " + std::to_string(lpn) +
                                             " is unmapped on the device");
  return fail(st);
}

Status StableBufferStore::peek(Lpn lpn, std::span<uint8_t> page) {
  PDL_TRY(check_page(lpn, page.size()));
  const uint32_t s = slot_of(lpn);
  return device_->peek(s == kSbFree ? lpn : layout_.slot_lpn(s), page);
}

Status StableBufferStore::halted() const {
  if (!halted_.is_ok()) return halted_;
  return device_->halted();
}

void StableBufferStore::set_wear_level(uint32_t threshold) {
  StoreBase::set_wear_level(threshold);
  device_->set_wear_level(threshold);
}

void StableBufferStore::unstage(Lpn lpn, uint32_t slot) {
  sbtt_.erase(lpn);
  recognizer_.erase(lpn);
  slots_[slot] = SbSlotEntry{};
  pending_.push_back(slot);
  dir_dirty_ = true;
}

Status StableBufferStore::flush(const SbInstance& inst) {
  std::vector<uint8_t> buf(geo_.page_data);
  sb_.flushes++;
  sb_.instances[int(inst.pattern)]++;
  for (Lpn d : inst.pages) {
    const uint32_t s = slot_of(d);
    if (s == kSbFree) continue;
    const Status rd = device_->read(layout_.slot_lpn(s), buf);
    if (rd.is(Errc::kNotFound))
      return Status::error(Errc::kCorrupt, "stablebuffer: slot " + std::to_string(s) +
                                               " is unmapped on the device");
    PDL_TRY(fail(rd));
    PDL_TRY(fail(device_->write(d, buf)));
    unstage(d, s);
    sb_.flushed_pages[int(inst.pattern)]++;
  }
  return Status::ok();
}

Status StableBufferStore::commit() {
  PDL_TRY(fail(device_->sync()));
  SbDirectory dir;
  dir.seq = seq_ + 1;
  dir.next_ts = next_ts_;
  dir.entries = slots_;
  Status st = write_directory(*device_, layout_, dir);
  if (st.is(Errc::kFull)) {
    // A device filled to the last page (thin provisioning): the copy being replaced is the
    // older one (the newest complete copy is the other), so trimming it first is safe and
    // gives the FTL pages to reclaim.
    // The free slots' pages are dead too (the durable directory names none of them).
    for (uint32_t i = 0; i < layout_.dir_pages; i++)
      PDL_TRY(fail(device_->trim(layout_.dir_lpn(uint32_t(dir.seq % 2), i))));
    for (uint32_t s : free_) PDL_TRY(fail(device_->trim(layout_.slot_lpn(s))));
    PDL_TRY(fail(device_->sync()));
    st = write_directory(*device_, layout_, dir);
  }
  PDL_TRY(fail(st));
  PDL_TRY(fail(device_->sync()));
  seq_ = dir.seq;
  sb_.directory_commits++;
  sb_.directory_pages += layout_.dir_pages;
  for (uint32_t s : pending_) free_.insert(s);
  pending_.clear();
  dir_dirty_ = false;
  return Status::ok();
}

Status StableBufferStore::flush_passive() {
  PDL_TRY(changeable());
  // The best instance first, as the paper's passive method; then the next best until a batch
  // of slots is freed, so that one directory commit serves several instances.
  const uint32_t batch = std::max<uint32_t>(1, layout_.slots / kPassiveBatchDivisor);
  uint32_t freed = 0;
  while (freed < batch) {
    const auto inst = recognizer_.pick(model_, false);
    if (!inst) break;
    sb_.passive_flushes++;
    PDL_TRY(flush(*inst));
    freed += uint32_t(inst->pages.size());
  }
  if (dir_dirty_) PDL_TRY(commit());
  return Status::ok();
}

Status StableBufferStore::take_slot(uint32_t* slot) {
  if (free_.empty()) {
    // Passive flushing: the buffer is full (or its free slots wait for a commit).
    PDL_TRY(flush_passive());
  }
  if (free_.empty())
    return Status::error(Errc::kFull, "stablebuffer: no slot frees up (" +
                                          std::to_string(layout_.slots) + " slots)");
  auto it = free_.lower_bound(cursor_);
  if (it == free_.end()) it = free_.begin();
  *slot = *it;
  return Status::ok();
}

Status StableBufferStore::write(Lpn lpn, std::span<const uint8_t> page) {
  PDL_TRY(check_page(lpn, page.size()));
  PDL_TRY(changeable());
  stats_.writes++;
  const uint32_t staged = slot_of(lpn);
  if (staged != kSbFree) {
    sb_.restaged_writes++;
    return fail(device_->write(layout_.slot_lpn(staged), page));
  }
  uint32_t s = 0;
  PDL_TRY(take_slot(&s));
  slots_[s] = SbSlotEntry{lpn, next_ts_};  // (first: the device charges the slot to lpn's class)
  const Status st = device_->write(layout_.slot_lpn(s), page);
  if (!st.is_ok()) {
    slots_[s] = SbSlotEntry{};
    return fail(st);
  }
  next_ts_++;
  free_.erase(s);
  cursor_ = s + 1;
  sbtt_[lpn] = s;
  recognizer_.insert(lpn);
  dir_dirty_ = true;
  sb_.staged_writes++;
  if (params_.sb_flush == SbFlush::kProactive) {
    if (auto inst = recognizer_.pick(model_, true)) {
      sb_.proactive_flushes++;
      PDL_TRY(flush(*inst));
    }
  }
  return Status::ok();
}

Status StableBufferStore::trim(Lpn lpn) {
  PDL_TRY(check_lpn(lpn));
  PDL_TRY(changeable());
  stats_.trims++;
  // The destination first: a device trim that fails (a full host halts the device half-way in
  // a merge) leaves the slot staged, so reads still return the staged page, as the failed trim
  // allows; unstaging first would expose the destination's older version.
  PDL_TRY(fail(device_->trim(lpn)));
  const uint32_t s = slot_of(lpn);
  if (s != kSbFree) {
    unstage(lpn, s);
    sb_.unstaged_trims++;
  }
  return Status::ok();
}

Status StableBufferStore::sync() {
  PDL_TRY(changeable());
  stats_.syncs++;
  if (dir_dirty_ || !pending_.empty()) PDL_TRY(commit());
  else PDL_TRY(fail(device_->sync()));
  return Status::ok();
}

bool StableBufferStore::is_mapped(Lpn lpn) const {
  if (lpn >= layout_.user) return false;
  return sbtt_.count(lpn) != 0 || device_->is_mapped(lpn);
}

const StoreStats& StableBufferStore::stats() const {
  const StoreStats mine = stats_;
  stats_ = device_->stats();  // the device's work: its pages, collections, bad blocks
  stats_.reads = mine.reads;
  stats_.writes = mine.writes;
  stats_.trims = mine.trims;
  stats_.syncs = mine.syncs;
  return stats_;
}

void StableBufferStore::set_classifier(LpnClassifier classifier) {
  classifier_ = std::move(classifier);
  device_->set_classifier([this](uint32_t dev_lpn) -> uint8_t {
    Lpn user = dev_lpn;
    if (dev_lpn >= layout_.user) {
      const uint32_t s = dev_lpn - layout_.user;
      if (s >= layout_.slots || slots_[s].dest == kSbFree) return 0;  // directory, free slot
      user = slots_[s].dest;
    }
    return classifier_ ? classifier_(user) : 0;
  });
}

void StableBufferStore::reset_stats() {
  StoreBase::reset_stats();
  device_->reset_stats();
  const uint64_t recovered = sb_.recovered_slots;
  sb_ = SbStats{};
  sb_.recovered_slots = recovered;
}

size_t StableBufferStore::mapping_bytes_per_lpn() const {
  // The device's tables cover the slots and the directory too; the SBTT and slot table add
  // about 16 bytes per slot.
  const uint64_t dev = uint64_t(device_->mapping_bytes_per_lpn()) * layout_.device_pages();
  return size_t((dev + uint64_t(layout_.slots) * 16 + layout_.user - 1) / layout_.user);
}

LpnLocation StableBufferStore::locate(Lpn lpn) const {
  if (lpn >= layout_.user) return LpnLocation{};
  const uint32_t s = slot_of(lpn);
  return device_->locate(s == kSbFree ? lpn : layout_.slot_lpn(s));
}

Status StableBufferStore::check() const {
  PDL_TRY(device_->check());
  return check_buffer();
}

Status StableBufferStore::check_mount() const {
  PDL_TRY(device_->check_mount());
  return check_buffer();
}

Status StableBufferStore::check_buffer() const {
  auto bad = [](const std::string& m) { return Status::error(Errc::kCorrupt, "stablebuffer: " + m); };
  std::vector<uint8_t> seen(layout_.slots, 0);
  for (const auto& [d, s] : sbtt_) {
    if (d >= layout_.user || s >= layout_.slots) return bad("SBTT entry out of range");
    if (slots_[s].dest != d)
      return bad("SBTT maps page " + std::to_string(d) + " to slot " + std::to_string(s) +
                 ", which holds " + std::to_string(slots_[s].dest));
    seen[s]++;
  }
  for (uint32_t s : free_) seen[s] += 2;
  for (uint32_t s : pending_) seen[s] += 4;
  for (uint32_t s = 0; s < layout_.slots; s++) {
    if (seen[s] != 1 && seen[s] != 2 && seen[s] != 4)
      return bad("slot " + std::to_string(s) + " is not exactly one of staged, free, pending");
    if ((seen[s] == 1) != (slots_[s].dest != kSbFree))
      return bad("slot " + std::to_string(s) + "'s entry disagrees with the SBTT");
  }
  if (recognizer_.size() != sbtt_.size() || !recognizer_.consistent())
    return bad("the pattern recognizer disagrees with the SBTT");
  return Status::ok();
}

}  // namespace pdl
