// nvm_log.cc — the NVM log of PDL's write buffer: encoding, appends, fresh logs, recovery
// (nvm_log.h; byte layout in docs/format.md, "PDL's write buffer in NVM").
#include "flash/pdl/nvm_log.h"

#include <algorithm>
#include <string>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/store/reread.h"

namespace pdl {

namespace {
uint64_t round8(uint64_t n) { return (n + 7) / 8 * 8; }
}  // namespace

uint32_t NvmLog::buffer_capacity(uint32_t nvm_bytes, uint32_t page_data) {
  const uint64_t half = nvm_bytes / 2 / 8 * 8;
  if (half < kHeaderBytes + kCommitBytes) return 0;
  // A record is at least kRecordHeader (16) bytes and its entry adds at most 15 (header and
  // padding): a full buffer of W bytes takes fewer than 2W bytes of entries.
  const uint64_t avail = half - kHeaderBytes - kCommitBytes;
  return uint32_t(avail / 2 / page_data * page_data);
}

uint32_t NvmLog::min_nvm_bytes(uint32_t page_data) {
  return uint32_t(2 * round8(2 * uint64_t(page_data) + kHeaderBytes + kCommitBytes));
}

uint32_t NvmLog::entry_bytes(const RecordView& r) {
  return uint32_t(round8(kEntryHeader + r.size()));
}

uint32_t NvmLog::entry_crc(uint64_t epoch, uint64_t off, std::span<const uint8_t> entry) {
  uint8_t pre[16];
  le::put64(pre, epoch);
  le::put64(pre + 8, off);
  const uint32_t c = crc32c(pre, sizeof pre);
  return crc32c(entry.data() + 4, entry.size() - 4, c);  // (the CRC word itself excluded)
}

void NvmLog::encode_entry(uint8_t kind, std::span<const uint8_t> payload,
                          std::vector<uint8_t>* out, uint64_t at) const {
  const size_t start = out->size();
  const size_t n = round8(kEntryHeader + payload.size());
  out->resize(start + n, 0);
  uint8_t* p = out->data() + start;
  le::put32(p + 4, uint32_t(kind) << 24 | uint32_t(payload.size()));
  std::copy(payload.begin(), payload.end(), p + kEntryHeader);
  le::put32(p, entry_crc(epoch_, at, std::span<const uint8_t>(p, kEntryHeader + payload.size())));
}

void NvmLog::encode_records(const std::vector<RecordView>& records, uint64_t at,
                            std::vector<uint8_t>* out) {
  out->clear();
  for (const RecordView& r : records) {
    scratch_.resize(r.size());
    record_encode(r, scratch_.data());
    const uint64_t off = at + out->size();
    encode_entry(kRecord, scratch_, out, off);
    where_[r.lpn] = {base() + off + kEntryHeader, uint32_t(r.size())};
  }
}

Status NvmLog::write_commit(Nand& nand, uint64_t at, uint64_t seq) {
  uint8_t s[8];
  le::put64(s, seq);
  std::vector<uint8_t> e;
  encode_entry(kCommit, s, &e, at);
  return nvm_write_with_retries(nand, base() + at, e);
}

Status NvmLog::append(Nand& nand, const std::vector<RecordView>& records, uint64_t seq) {
  need_fresh_ = true;  // until both writes are done
  std::vector<uint8_t> bytes;
  encode_records(records, tail_, &bytes);
  if (!bytes.empty()) PDL_TRY(nvm_write_with_retries(nand, base() + tail_, bytes));
  PDL_TRY(write_commit(nand, tail_ + bytes.size(), seq));
  tail_ += bytes.size() + kCommitBytes;
  need_fresh_ = false;
  return Status::ok();
}

Status NvmLog::commit_fresh(Nand& nand, const std::vector<RecordView>& records, uint64_t seq) {
  need_fresh_ = true;
  half_ = 1 - half_;
  epoch_ = max_epoch_ + 1;
  max_epoch_ = epoch_;  // (once its header is written; a larger one is harmless before)
  where_.clear();
  uint8_t h[kHeaderBytes] = {};
  le::put64(h, kMagic);
  le::put64(h + 8, epoch_);
  le::put32(h + 16, half_bytes_);
  le::put32(h + 28, crc32c(h, 28));
  PDL_TRY(nvm_write_with_retries(nand, base(), h));
  std::vector<uint8_t> bytes;
  encode_records(records, kHeaderBytes, &bytes);
  if (!bytes.empty()) PDL_TRY(nvm_write_with_retries(nand, base() + kHeaderBytes, bytes));
  PDL_TRY(write_commit(nand, kHeaderBytes + bytes.size(), seq));
  tail_ = kHeaderBytes + bytes.size() + kCommitBytes;
  need_fresh_ = false;
  return Status::ok();
}

void NvmLog::parse(std::span<const uint8_t> half, Parsed* p) {
  *p = Parsed{};
  if (half.size() < kHeaderBytes) return;
  const uint8_t* h = half.data();
  if (le::get64(h) != kMagic || le::get32(h + 28) != crc32c(h, 28) ||
      le::get32(h + 16) != half.size())
    return;
  p->header_ok = true;
  p->epoch = le::get64(h + 8);
  std::vector<std::pair<uint64_t, uint32_t>> pending;
  for (uint64_t off = kHeaderBytes; off + kEntryHeader <= half.size();) {
    const uint8_t* e = h + off;
    const uint32_t word = le::get32(e + 4);
    const uint8_t kind = uint8_t(word >> 24);
    const uint32_t n = word & 0xFFFFFF;
    if (kind != kRecord && kind != kCommit) break;
    if (kind == kCommit && n != 8) break;
    if (off + round8(kEntryHeader + n) > half.size()) break;
    if (le::get32(e) != entry_crc(p->epoch, off, std::span<const uint8_t>(e, kEntryHeader + n)))
      break;
    if (kind == kRecord) {
      RecordReader rr(std::span<const uint8_t>(e + kEntryHeader, n));
      RecordView r;
      if (!rr.next(&r) || r.size() != n) break;
      p->max_seq = std::max(p->max_seq, r.seq);
      pending.push_back({off + kEntryHeader, n});
    } else {
      const uint64_t seq = le::get64(e + kEntryHeader);
      if (p->committed && seq < p->commit_seq) break;  // commits only grow
      p->committed = true;
      p->commit_seq = seq;
      p->max_seq = std::max(p->max_seq, seq);
      p->records.insert(p->records.end(), pending.begin(), pending.end());
      pending.clear();
      p->commit_end = off + round8(kEntryHeader + n);
    }
    off += round8(kEntryHeader + n);
  }
}

Status NvmLog::recover(Nand& nand, Recovered* out) {
  *out = Recovered{};
  std::vector<uint8_t> bytes[2];
  Parsed parsed[2];
  int take = -1;
  max_epoch_ = 0;
  for (int i = 0; i < 2; i++) {
    bytes[i].resize(half_bytes_);
    PDL_TRY(nvm_read_with_retries(nand, uint64_t(i) * half_bytes_, bytes[i]));
    parse(bytes[i], &parsed[i]);
    if (!parsed[i].header_ok) continue;
    max_epoch_ = std::max(max_epoch_, parsed[i].epoch);
    if (parsed[i].committed && (take < 0 || parsed[i].epoch > parsed[take].epoch)) take = i;
  }
  need_fresh_ = true;  // a remount always starts a fresh epoch (nvm_log.h, invariants)
  where_.clear();
  if (take < 0) {
    half_ = 1;  // the first fresh log goes to half 0
    return Status::ok();
  }
  const Parsed& p = parsed[take];
  half_ = uint32_t(take);
  epoch_ = p.epoch;
  tail_ = p.commit_end;
  out->found = true;
  out->commit_seq = p.commit_seq;
  out->max_seq = std::max(parsed[0].max_seq, parsed[1].max_seq);
  for (const auto& [off, n] : p.records) {
    out->records.emplace_back(bytes[take].begin() + off, bytes[take].begin() + off + n);
    where_[le::get32(bytes[take].data() + off)] = {base() + off, n};
  }
  return Status::ok();
}

Status NvmLog::format(Nand& nand, uint64_t seq) {
  Recovered ignored;
  PDL_TRY(recover(nand, &ignored));  // (the epochs of whatever the NVM held before)
  return commit_fresh(nand, {}, seq);
}

bool NvmLog::where(uint32_t lpn, uint64_t* off, uint32_t* size) const {
  auto it = where_.find(lpn);
  if (it == where_.end()) return false;
  *off = it->second.first;
  *size = it->second.second;
  return true;
}

Status NvmLog::verify(Nand& nand, uint64_t seq, const std::vector<RecordView>& records) const {
  auto bad = [](const std::string& m) { return Status::error(Errc::kCorrupt, "NVM log: " + m); };
  if (need_fresh_) return Status::ok();  // nothing written since the mount's recovery read it
  std::vector<uint8_t> bytes(half_bytes_);
  PDL_TRY(nvm_read_with_retries(nand, base(), bytes));
  Parsed p;
  parse(bytes, &p);
  if (!p.header_ok || p.epoch != epoch_) return bad("the current half's header is not valid");
  if (!p.committed || p.commit_end != tail_)
    return bad("entries end at " + std::to_string(p.commit_end) + ", expected " +
               std::to_string(tail_));
  if (p.commit_seq != seq)
    return bad("last commit " + std::to_string(p.commit_seq) + ", expected " +
               std::to_string(seq));
  std::unordered_map<uint32_t, std::pair<uint64_t, uint32_t>> newest;
  for (const auto& [off, n] : p.records) newest[le::get32(bytes.data() + off)] = {off, n};
  std::vector<uint8_t> enc;
  for (const RecordView& r : records) {
    auto it = newest.find(r.lpn);
    enc.resize(r.size());
    record_encode(r, enc.data());
    if (it == newest.end() || it->second.second != enc.size() ||
        !std::equal(enc.begin(), enc.end(), bytes.begin() + it->second.first))
      return bad("the buffered record of page " + std::to_string(r.lpn) +
                 " is not the log's newest");
  }
  return Status::ok();
}

}  // namespace pdl
