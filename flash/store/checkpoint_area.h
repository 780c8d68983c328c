// checkpoint_area.h — the checkpoint stream and the area blocks it is written to (docs/design.md
// §17, docs/format.md §14).
//
// The CHECKPOINT AREA is the chip's last `area` blocks (superblock format 6); no engine sees
// them (checkpoint_view.h). A checkpoint is one byte STREAM: a header (magic, version, gen,
// superblock uuid, geometry echo, method) and two sections, the engine's tables (its
// save_tables) and the client's (the Volume's), each tagged and length-prefixed. The stream is
// cut into pages programmed in order into the area blocks from the first: each block erased
// first; a block marked bad is skipped, one whose erase or program fails is marked bad and its
// pages go to the next block. Each page's spare carries {magic, gen, page index, data CRC}
// under a CRC; the log entry (checkpoint_log.h) carries the stream's length and CRC.
// Reading checks everything (every page's spare and CRC, the stream's CRC, the header against
// the superblock); any mismatch is kCorrupt naming it, never wrong bytes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "flash/common/status.h"
#include "flash/device/nand.h"
#include "flash/store/checkpoint_log.h"
#include "flash/store/superblock.h"

namespace pdl {

// What a stream's header says, and what a reader expects it to say.
struct StreamHeader {
  uint64_t gen = 0;
  std::array<uint8_t, 16> uuid{};
  Geometry store_geometry;  // page_data, page_spare, pages_per_block, blocks (the store's)
  uint32_t area_blocks = 0;
  Method method = Method::kPdl;
  FtlKind ftl = FtlKind::kNone;
};

StreamHeader stream_header_for(const Superblock& sb, const Geometry& chip, uint64_t gen);

// The stream: header, then the engine's and the client's sections.
std::vector<uint8_t> encode_stream(const StreamHeader& h, std::span<const uint8_t> engine,
                                   std::span<const uint8_t> client);
// Check the header against `want` and return the two sections (views into `stream`).
Status decode_stream(std::span<const uint8_t> stream, const StreamHeader& want,
                     std::span<const uint8_t>* engine, std::span<const uint8_t>* client);

// Write `stream` as generation `gen` into the area [first, first + count) of `nand` (the whole
// chip). Fills e->area_first, area_blocks, pages, stream_bytes and stream_crc (kind and gen are
// the caller's). kFull if the area's good blocks cannot hold it.
Status write_area(Nand& nand, uint32_t first, uint32_t count, std::span<const uint8_t> stream,
                  LogEntry* e);
// Read the stream entry `e` names back from the area, every check made. `pages_read`: area
// pages read (also on failure).
Status read_area(Nand& nand, uint32_t first, uint32_t count, const LogEntry& e,
                 std::vector<uint8_t>* stream, uint64_t* pages_read);

// SUMMARY PAGES (superblock format 7; docs/format.md §14): after checkpoint G's stream, the
// next area pages in order (bad blocks skipped, a block beyond the stream's erased before its
// first page) hold summary pages 0, 1, ... of gen G, each declaring blocks of the store that
// may change after G. Spare as a stream page's with magic "CKSM" and the summary index; data:
// u32 count, count x u32 block numbers, 0xFF after. A page is programmed (and waited for)
// before any change to the blocks it declares, so a page that does not decode was never
// relied on if it was being programmed — but a page can also fail because it decayed, and
// the two look alike: the reader refuses both (kCorrupt: mount scans), except at the first
// page of a block beyond the stream, where an erased page, or a whole page of an older
// generation, ends the summaries cleanly.
struct SummaryCursor {
  bool usable = false;    // another summary page can be programmed at (block, page)
  uint32_t block = 0;     // the chip's block number
  uint32_t page = 0;
  uint32_t index = 0;     // the next summary's index
  bool stream_block = false;  // `block` holds stream pages (already erased by write_area)
};
// The cursor right after the stream `e` names (no reads: the walk of read_area).
SummaryCursor summary_cursor_after(Nand& nand, uint32_t first, uint32_t count, const LogEntry& e);
// Program summary page cursor->index of gen `gen` declaring `blocks` at the cursor (erasing its
// block first if it is a new one) and advance the cursor. kFull if the area has no page left;
// kBadBlock if the area block failed (the caller stops using summaries).
Status write_summary(Nand& nand, uint32_t first, uint32_t count, uint64_t gen,
                     std::span<const uint32_t> blocks, SummaryCursor* cursor);
// Read the summaries following the stream `e` names (a cursor from summary_cursor_after):
// every declared block into `declared`; `cursor` left where the next one goes; `pages`
// counts pages read; `summaries` the summary pages found. kCorrupt as above.
Status read_summaries(Nand& nand, uint32_t first, uint32_t count, const LogEntry& e,
                      std::vector<uint32_t>* declared, SummaryCursor* cursor, uint64_t* pages,
                      uint64_t* summaries);

// The declared blocks at which a periodic checkpoint is due (CheckpointView::due): `asked`
// (StoreParams::replay_blocks) if set, else 16 blocks per block of stream pages (at least 16):
// a periodic checkpoint then programs at most ~1/16 of the pages the blocks it covers can hold
// (less when GC erases some of them without new data), and a mount after a power cut reads
// about 16 spare areas per stream page — docs/design.md §17 has the figures.
uint32_t replay_budget(uint32_t asked, const Geometry& chip, uint32_t stream_pages);

// Blocks the area needs for a store of `logical_pages` on `g` (the whole chip): a generous
// bound of the tables' size — engine 24 B per lpn + 8 B per physical page + 32 B per block +
// 64 KiB; client 16 B per lpn + 64 KiB — plus 2 blocks and 2 % for bad blocks.
uint32_t checkpoint_area_blocks(const Geometry& g, uint64_t logical_pages);

}  // namespace pdl
