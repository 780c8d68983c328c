// area_pager.h — AreaPager: the TablePager (paged_table.h) over the checkpoint area's two
// halves (superblock format 8, docs/design.md §19, docs/format.md §14): a table page is one
// area page, and the checkpoint's root stream is appended after the table pages it names.
//
// A home is an area page number (counted from the area's first page), in either half. A table
// page's spare carries {"CKTP", the gen that wrote it, table id, page index, data CRC} under a
// CRC; load() reads the page through the real chip (so the NAND counters count it, like every
// other checkpoint page) and hands out its bytes only if all of it verifies (kCorrupt naming
// table, index and home otherwise), then calls the load-error hook (the store makes its
// checkpoint stale: a table it cannot read must not be trusted by the next mount).
//
// Between checkpoints the pager is PLACED on the current half (the one holding the durable
// checkpoint's root and every home the engine's directories name) with a cursor after that
// root and its summary pages, or unplaced (a format, a scan mount: the engine's tables have no
// homes yet). A checkpoint write is begin() .. finish():
//   * incremental (placed, room left): table pages and the root are appended at the cursor in
//     the current half, after everything the durable checkpoint references;
//   * full: the other half from its first good block (each block erased as it is entered),
//     relocate_all() true — the tables rewrite every homed page there, loading the old homes
//     from the current half.
// Invariants: a program never touches a page the durable checkpoint or the engine's RAM
// directories reference (those lie in the current half before the cursor); a block is marked
// bad only if this write erased it (then nothing referenced lies in it); finish(true) after the
// log entry naming the root is durable moves the current half to the written one.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "flash/common/status.h"
#include "flash/device/nand.h"
#include "flash/store/checkpoint_area.h"
#include "flash/store/checkpoint_log.h"
#include "flash/store/paged_table.h"

namespace pdl {

class AreaPager final : public TablePager {
 public:
  // `chip`: the whole chip (it must outlive the pager); the area is its blocks
  // [area_first, area_first + area_blocks).
  AreaPager(Nand& chip, uint32_t area_first, uint32_t area_blocks);

  uint32_t page_bytes() const override { return chip_.geometry().page_data; }
  Status load(uint32_t home, uint32_t table, uint32_t index, std::span<uint8_t> out) override;
  Status store(uint32_t table, uint32_t index, std::span<const uint8_t> data,
               uint32_t* home) override;
  bool relocate_all() const override { return writing_ && full_; }

  // Loads accept only pages written by checkpoints up to `gen` (the root that names them):
  // a page of a later, unfinished checkpoint at a home is refused, even with the right table
  // and index. Set before a mount's tables load; a durable write raises it to its gen.
  void limit_gen(uint64_t gen) { root_gen_ = gen; }
  // Placement (a mount from a checkpoint in `half`, the cursor after its summaries).
  void place(uint32_t half, const SummaryCursor& cursor);
  bool placed() const { return placed_; }
  uint32_t half() const { return half_; }
  // Where the next area page goes in the current half (the view's summaries go there too).
  SummaryCursor& cursor() { return cursor_; }
  // Good pages left in the cursor's half from the cursor on (no reads: bad marks only).
  uint64_t pages_left();

  // A checkpoint write of generation `gen` into `half` (full: from the half's first block).
  void begin(uint64_t gen, uint32_t half, bool full);
  bool full() const { return full_; }
  // The last write begun was full (kept after finish: tests, stats).
  bool last_full() const { return last_full_; }
  // The root stream, at the cursor after the table pages; fills e's half, root_page, pages,
  // stream_bytes and stream_crc (and area_first).
  Status write_root(std::span<const uint8_t> stream, LogEntry* e);
  // The write's log entry is durable (true: the written half becomes current, the cursor after
  // the root, the next summary index 0) or it was abandoned (false: a full write's half is
  // forgotten, the current half and its cursor as before; an incremental write's pages stay
  // behind as garbage, the cursor after them).
  void finish(bool durable);
  // Pages this write programmed (table pages and root).
  uint64_t written() const { return written_; }
  // Called after a load that failed its checks (not during a mount: set once mounted).
  void set_on_load_error(std::function<void()> f) { on_load_error_ = std::move(f); }

  uint64_t loads() const { return loads_; }
  uint64_t stores() const { return stores_; }

 private:
  Status program_next(std::span<const uint8_t> data, std::span<const uint8_t> spare,
                      uint32_t* at);
  bool erased_now(uint32_t block) const;

  Nand& chip_;
  uint32_t first_, blocks_;
  bool placed_ = false;
  uint32_t half_ = 0;
  SummaryCursor cursor_;
  // During a write:
  bool writing_ = false;
  bool full_ = false;
  bool last_full_ = false;
  uint64_t gen_ = 0;
  uint32_t target_ = 0;
  SummaryCursor saved_;  // the current half's cursor before a full write
  std::vector<uint32_t> erased_;  // blocks this write erased
  uint64_t written_ = 0;
  std::function<void()> on_load_error_;
  uint64_t root_gen_ = ~uint64_t(0);
  uint64_t loads_ = 0, stores_ = 0;
  std::vector<uint8_t> spare_;
  std::vector<uint8_t> page_;  // a load's data until it verifies
};

}  // namespace pdl
