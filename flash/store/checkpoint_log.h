// checkpoint_log.h — the checkpoint log: the anchor saying which checkpoint, if any, is current
// (docs/design.md §17, docs/format.md §14).
//
// Entries live in pages 1 .. pages_per_block-1 of the superblock blocks 0 and 1 (page 0 holds
// the superblock copy), one entry per page, each page programmed once, in page order: a
// "checkpoint gen G" entry names the stream of generation G in the checkpoint area (its pages,
// the area blocks it spans, its length and CRC-32C); a "stale gen G" entry says the chip
// changed since checkpoint G. Every entry carries the superblock's uuid and a CRC-32C.
//
// Invariants:
//   * gens never decrease along the log; the newest entry is the largest (gen, kind) with
//     stale > checkpoint for one gen, and a checkpoint entry has a gen larger than every entry
//     before it;
//   * a checkpoint is trusted only if the newest valid entry is it and no programmed page that
//     fails to decode (torn, flipped, unreadable) could be newer: such a page after the newest
//     valid entry of its block, or in the other block after its last valid entry, puts the log
//     in doubt (mount then scans; the guard still writes "stale" before any change);
//   * when the current block's pages run out (or the other block holds a doubtful tail), the
//     other block is erased, its superblock copy programmed again, and the log continues
//     there: a cut leaves one valid superblock copy and the newest durable entry readable.
// Reads go through read_with_retries (reread.h); a block marked bad is skipped (with one good
// superblock block the log cannot switch: when that block fills, no more entries fit).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "flash/common/status.h"
#include "flash/device/nand.h"
#include "flash/store/superblock.h"

namespace pdl {

enum class LogKind : uint32_t { kCheckpoint = 1, kStale = 2 };

// Entry format 2 (superblock format 8, docs/format.md §14): a checkpoint names the HALF of the
// area its root lies in and the root's first page; format 1's entries (formats 6 and 7) have
// another magic and never decode here.
struct LogEntry {
  LogKind kind = LogKind::kCheckpoint;
  uint64_t gen = 0;
  std::array<uint8_t, 16> uuid{};
  uint32_t area_first = 0;   // first block of the checkpoint area (an echo of the geometry)
  uint32_t half = 0;         // the area half holding the root and every table page it names
  uint32_t root_page = 0;    // the root's first page, counted from the area's first page
  uint32_t pages = 0;        // area pages holding the root stream (consecutive, bad blocks skipped)
  uint64_t stream_bytes = 0;
  uint32_t stream_crc = 0;   // CRC-32C of the whole root stream
};

// Bytes an entry takes at the start of its page (the rest of the page stays 0xFF).
inline constexpr size_t kLogEntryBytes = 68;

class CheckpointLog {
 public:
  // `nand`: the whole chip; `sb`: its superblock (the uuid entries carry, the copy a block
  // switch programs again).
  CheckpointLog(Nand& nand, const Superblock& sb) : nand_(nand), sb_(sb) {}

  // Read the log: both blocks' last programmed pages (a binary search: pages are programmed
  // in order), walking back over pages that fail to decode. Reads only.
  Status load();
  // A log known to be empty (format just erased blocks 0 and 1): no reads.
  void set_empty();

  bool has_entry() const { return has_newest_; }
  const LogEntry& newest() const { return newest_; }
  // Programmed pages that fail to decode may hide a newer entry (see the invariants).
  bool doubt() const { return doubt_; }
  const std::string& doubt_reason() const { return doubt_why_; }
  // The newest entry is a checkpoint and nothing in the log could be newer.
  bool trusted_checkpoint() const {
    return has_newest_ && newest_.kind == LogKind::kCheckpoint && !doubt_;
  }
  // A checkpoint may be the newest entry: before any change, "stale" must be written.
  bool may_be_current() const {
    return doubt_ || (has_newest_ && newest_.kind == LogKind::kCheckpoint);
  }
  uint64_t max_gen() const { return max_gen_; }
  uint64_t pages_read() const { return pages_read_; }

  // Program `e` (uuid filled in) as the next entry; switches blocks when needed. A program
  // that fails (kBadBlock) leaves a garbage page and the entry goes to the next one.
  Status append(LogEntry e);
  // Append "stale gen max_gen()".
  Status append_stale();

 private:
  enum class PageState { kErased, kValid, kInvalid };
  struct BlockScan {
    bool good = false;       // not marked bad
    uint32_t last = 0;       // last programmed page (0: no entry page programmed)
    bool has_valid = false;  // some entry in 1..last decodes
    uint32_t valid_at = 0;   // the newest one's page
    LogEntry valid;
    bool invalid_tail = false;  // a programmed page after valid_at (or no valid entry at all)
  };
  Status page_state(uint32_t block, uint32_t page, PageState* st, LogEntry* e);
  Status scan_block(uint32_t block, BlockScan* out);
  void settle();  // newest_, doubt_, max_gen_, cur_ from scans_
  Status switch_to(uint32_t block);
  void encode(const LogEntry& e, std::span<uint8_t> d) const;
  bool decode(std::span<const uint8_t> d, LogEntry* e) const;

  Nand& nand_;
  Superblock sb_;
  BlockScan scans_[kSuperblockBlocks];
  bool has_newest_ = false;
  LogEntry newest_;
  bool doubt_ = false;
  std::string doubt_why_;
  uint64_t max_gen_ = 0;
  uint32_t cur_ = 0;  // the block appends go to
  uint64_t pages_read_ = 0;
};

}  // namespace pdl
