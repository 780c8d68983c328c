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

// Blocks the area needs for a store of `logical_pages` on `g` (the whole chip): a generous
// bound of the tables' size — engine 24 B per lpn + 8 B per physical page + 32 B per block +
// 64 KiB; client 16 B per lpn + 64 KiB — plus 2 blocks and 2 % for bad blocks.
uint32_t checkpoint_area_blocks(const Geometry& g, uint64_t logical_pages);

}  // namespace pdl
