// nvm_log.h — PDL's differential write buffer made durable in NVM (method=pdl&nvm=SIZE):
// an append-only log of differential records and commit entries (docs/format.md, "PDL's write
// buffer in NVM"; docs/design.md §16).
//
// The NVM [0, nvm_bytes) is split into two halves. The log lives in one of them: a header
// (magic, epoch) and entries, each 8-byte aligned, each a *record* (a PDL record, record.h,
// exactly as in a differential page) or a *commit* (seq S: every seq <= S is committed).
// Every entry carries a CRC-32C over the log's epoch, the entry's offset and its bytes, so a
// torn entry (a power cut keeps any subset of its 8-byte words) or an entry left by an older
// epoch is never taken. A sync appends the records changed since the last one, then a commit
// entry (two writes: the commit entry is durable only after the records are).
// When the log is full — and at the first sync after a mount — a fresh log is written in the
// *other* half with a larger epoch, holding the whole write buffer and a commit entry; the old
// half stays the one recovery takes until that commit entry is written. So no flash program
// resets the log.
// Recovery takes the half with the largest epoch whose entries, read in order up to the first
// one failing its checks, include a commit entry; of it the entries up to its last commit.
//
// Invariants: within one epoch, entries are written once each, in order, by one mount (a
// remount always starts a fresh epoch), so nothing of this epoch lies past the tail; a log
// never needs more than fresh_bytes(buffer capacity) bytes, which fits a half
// (buffer_capacity() chooses the capacity so).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flash/device/nand.h"
#include "flash/pdl/record.h"

namespace pdl {

class NvmLog {
 public:
  static constexpr uint32_t kHeaderBytes = 32;
  static constexpr uint32_t kEntryHeader = 8;
  static constexpr uint32_t kCommitBytes = kEntryHeader + 8;
  static constexpr uint64_t kMagic = 0x314c4d564e4c4450ull;  // "PDLNVML1"
  static constexpr uint8_t kRecord = 1, kCommit = 2;

  // The write buffer capacity for `nvm_bytes` of NVM and pages of `page_data` bytes: whole
  // pages such that a fresh log of a full buffer fits a half; 0 if not even one page fits.
  static uint32_t buffer_capacity(uint32_t nvm_bytes, uint32_t page_data);
  // The smallest NVM with a one-page buffer.
  static uint32_t min_nvm_bytes(uint32_t page_data);
  // Bytes an entry holding `r` takes (header, record, padding to 8).
  static uint32_t entry_bytes(const RecordView& r);

  explicit NvmLog(uint32_t nvm_bytes) : half_bytes_(nvm_bytes / 2 / 8 * 8) {}

  // What recovery found: the committed seq and records (in log order) of the half taken.
  struct Recovered {
    bool found = false;
    uint64_t commit_seq = 0;
    uint64_t max_seq = 0;  // largest seq of any entry that passed its checks
    std::vector<std::vector<uint8_t>> records;  // encoded PDL records
  };
  // Read both halves (counted NVM reads). Sets the log up so that the next commit writes a
  // fresh log in the other half with a larger epoch than any valid header.
  Status recover(Nand& nand, Recovered* out);
  // A new store: invalidate both halves, then a fresh empty log committing `seq`.
  Status format(Nand& nand, uint64_t seq);

  // True if `changed` records and a commit entry fit after the tail; else commit_fresh.
  bool fits(uint64_t bytes) const { return !need_fresh_ && tail_ + bytes + kCommitBytes <= half_bytes_; }
  // Append records, then a commit entry for `seq`.
  Status append(Nand& nand, const std::vector<RecordView>& records, uint64_t seq);
  // Write a fresh log in the other half holding `records` and a commit entry for `seq`.
  Status commit_fresh(Nand& nand, const std::vector<RecordView>& records, uint64_t seq);

  // Where lpn's newest record entry of this log is (payload offset and size; false if none).
  bool where(uint32_t lpn, uint64_t* off, uint32_t* size) const;
  // Parse the current half again and compare: the last commit is `seq`, and every record of
  // `records` is the newest entry for its lpn, byte for byte (check(), fsck).
  Status verify(Nand& nand, uint64_t seq, const std::vector<RecordView>& records) const;

  uint64_t epoch() const { return epoch_; }
  uint32_t half() const { return half_; }
  uint64_t tail() const { return tail_; }
  uint32_t half_bytes() const { return half_bytes_; }

 private:
  struct Parsed {
    bool header_ok = false;
    uint64_t epoch = 0;
    bool committed = false;
    uint64_t commit_seq = 0;
    uint64_t commit_end = 0;  // offset within the half after the last commit entry
    uint64_t max_seq = 0;
    std::vector<std::pair<uint64_t, uint32_t>> records;  // payload offset and size, committed
  };
  static void parse(std::span<const uint8_t> half, Parsed* p);
  static uint32_t entry_crc(uint64_t epoch, uint64_t off, std::span<const uint8_t> entry);
  uint64_t base() const { return uint64_t(half_) * half_bytes_; }
  void encode_entry(uint8_t kind, std::span<const uint8_t> payload, std::vector<uint8_t>* out,
                    uint64_t at) const;
  // Entries for `records` starting at `at` (within the half) into *out; where_ updated.
  void encode_records(const std::vector<RecordView>& records, uint64_t at,
                      std::vector<uint8_t>* out);
  Status write_commit(Nand& nand, uint64_t at, uint64_t seq);

  const uint32_t half_bytes_;
  uint32_t half_ = 0;
  uint64_t epoch_ = 0;
  uint64_t tail_ = 0;        // offset within the half of the next entry
  bool need_fresh_ = true;   // the next commit writes a fresh log
  uint64_t max_epoch_ = 0;   // largest epoch of a valid header in either half
  std::unordered_map<uint32_t, std::pair<uint64_t, uint32_t>> where_;  // lpn -> its payload
  std::vector<uint8_t> scratch_;
};

}  // namespace pdl
