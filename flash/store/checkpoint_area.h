// checkpoint_area.h — the checkpoint stream and the area blocks it is written to (docs/design.md
// §17, docs/format.md §14).
//
// The CHECKPOINT AREA is the chip's last `area` blocks (superblock format 6 and later); no
// engine sees them (checkpoint_view.h). A checkpoint's ROOT is one byte stream: a header
// (magic, version, gen, superblock uuid, geometry echo, method) and two sections, the engine's
// tables (its save_tables: small tables whole, paged tables as directories of table pages,
// paged_table.h) and the client's (the Volume's), each tagged and length-prefixed. Format 8
// splits the area into two halves (below); the table pages and the root are appended to a half
// by AreaPager (area_pager.h), each page's spare carrying {magic, gen, index, data CRC} under
// a CRC; the log entry (checkpoint_log.h) names the half, the root's first page, its length
// and CRC.
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

// HALVES (superblock format 8, docs/design.md §19): the area's first count / 2 blocks are half
// 0, the others half 1. A checkpoint's root, the table pages it names and the summary pages
// after it lie in one half; a checkpoint appends to its half (incremental) or, when the half is
// full, starts the other one afresh (full). Positions in the area ("area pages") count from
// the area's first page: (block - first) x pages_per_block + page.
struct AreaHalf {
  uint32_t first = 0;  // chip blocks [first, end)
  uint32_t end = 0;
};
AreaHalf area_half(uint32_t area_first, uint32_t area_blocks, uint32_t half);

// Where the next area page of a half goes. `erased`: the block was erased by this half's
// writes (its pages from `page` on are erased); a block entered at page 0 without it is erased
// before its first program (it may hold pages of an older use of the half).
struct SummaryCursor {
  bool usable = false;    // another page can be programmed at (block, page)
  uint32_t block = 0;     // the chip's block number
  uint32_t page = 0;
  uint32_t index = 0;     // the next summary's index
  bool erased = false;
  uint32_t end = 0;       // the half's end block
  // read_summaries stopped at a whole page of a later generation (a checkpoint write cut
  // before its log entry): pages from here on are not erased, so no summary can follow; the
  // cursor was moved to the next block.
  bool later = false;
};
// The half's first page (its first good block, to be erased); !usable if every block is bad.
SummaryCursor half_start(Nand& nand, const AreaHalf& h);
// Advance to the next page of a good block of the half; false past its end.
bool next_area_page(Nand& nand, SummaryCursor* c);
// The cursor's area page.
uint32_t area_page_of(const Nand& nand, uint32_t area_first, const SummaryCursor& c);

// TABLE PAGES (docs/format.md §14): spare {bad-block marker, "CKTP", gen, index, data CRC,
// table id, CRC of bytes [1, 25)}.
void encode_table_spare(uint64_t gen, uint32_t table, uint32_t index, uint32_t data_crc,
                        std::span<uint8_t> spare);
// The page is a whole table page (header CRC and data CRC right); its header's fields out.
bool table_page_whole(std::span<const uint8_t> data, std::span<const uint8_t> spare,
                      uint64_t* gen, uint32_t* table, uint32_t* index);
// ROOT PAGES: the root stream's pages, spare {marker, "CKPT", gen, index, data CRC, CRC}.
void encode_root_spare(uint64_t gen, uint32_t index, uint32_t data_crc, std::span<uint8_t> s);

// Read the root stream entry `e` names back from its half of the area [first, first + count),
// every check made. `pages_read`: area pages read (also on failure).
Status read_area(Nand& nand, uint32_t first, uint32_t count, const LogEntry& e,
                 std::vector<uint8_t>* stream, uint64_t* pages_read);

// SUMMARY PAGES (superblock format 7 and 8; docs/format.md §14): after checkpoint G's root,
// the next pages of its half in order (bad blocks skipped, a block beyond erased before its
// first page) hold summary pages 0, 1, ... of gen G, each declaring blocks of the store that
// may change after G. Spare as a root page's with magic "CKSM" and the summary index; data:
// u32 count, count x u32 block numbers, 0xFF after; a count of 0 declares no block but says
// the store's NVM changed after G (an engine whose replay reads its NVM: the mount replays
// even with no block declared; a pdl before this meaning refuses the page and scans). A page
// is programmed (and waited for) before any change to the blocks it declares (or to the
// NVM), so a page that does not decode was never relied on if it was being programmed — but
// a page can also fail because it decayed, and the two look alike: the reader refuses both
// (kCorrupt: mount scans), except at the first page of a block beyond the root, where an
// erased page, or a whole page of an older generation, ends the summaries cleanly; a whole
// page of a LATER generation (a checkpoint cut before its log entry appended there) ends
// them too (SummaryCursor::later).
// The cursor right after the root `e` names (no reads).
SummaryCursor summary_cursor_after(Nand& nand, uint32_t first, uint32_t count, const LogEntry& e);
// Program summary page cursor->index of gen `gen` declaring `blocks` at the cursor (erasing its
// block first if it is a new one) and advance the cursor. kFull if the half has no page left;
// kBadBlock if the area block failed (the caller stops using summaries).
Status write_summary(Nand& nand, uint64_t gen, std::span<const uint32_t> blocks,
                     SummaryCursor* cursor);
// Read the summaries following the root `e` names: every declared block into `declared`;
// `cursor` left where the next one goes; `pages` counts pages read; `summaries` the summary
// pages found (an empty one counted: the NVM changed). kCorrupt as above.
Status read_summaries(Nand& nand, uint32_t first, uint32_t count, const LogEntry& e,
                      std::vector<uint32_t>* declared, SummaryCursor* cursor, uint64_t* pages,
                      uint64_t* summaries);

// The declared blocks at which a periodic checkpoint is due (CheckpointView::due): `asked`
// (StoreParams::replay_blocks) if set, else 16 blocks per block of stream pages: a periodic
// checkpoint then programs at most ~1/16 of the pages the blocks it covers can hold (less when
// GC erases some of them without new data), and a mount after a power cut reads about 16
// spare areas per stream page. At least the blocks of kReplayLeastPages pages on a chip of 16
// times as many blocks (else a sixteenth of its blocks), and at least 16: a small root (IPL's
// tables, a young chip's) would otherwise make periodic checkpoints frequent — each merge
// declares two blocks for one block of programs — or let one sync's changes pass twice the
// budget and the checkpoint go stale. docs/design.md §17 has the figures.
inline constexpr uint32_t kReplayLeastPages = 4096;  // 0.45 s of page reads at 110 µs
uint32_t replay_budget(uint32_t asked, const Geometry& chip, uint32_t stream_pages);

// Blocks a half needs for a store of `logical_pages` on `g` (the whole chip): the per-page
// tables at their table-page size (ppmt 12 B per lpn, reverse map 4 B and differential counts
// 2 B per physical page, each rounded to whole table pages), a bound of the root (engine 32 B
// per block + 64 KiB, client 16 B per lpn + 64 KiB), a summary reserve of 2 x 16 pages, plus
// 2 % for bad blocks (at least one block). An engine whose tables all go into the root (IPL, hybrid
// FTLs, StableBuffer, a PDL store without paged tables) fits too: its tables are smaller than
// the paged tables' bound plus the root bound.
uint32_t checkpoint_half_blocks(const Geometry& g, uint64_t logical_pages);
// The area: two halves.
uint32_t checkpoint_area_blocks(const Geometry& g, uint64_t logical_pages);

}  // namespace pdl
