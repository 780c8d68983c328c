// checkpoint_area.cc — the stream's header and sections, and its pages in the area blocks
// (layout: docs/format.md §14).
#include "flash/store/checkpoint_area.h"

#include <algorithm>
#include <cstring>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/store/reread.h"
#include "flash/store/spare.h"
#include "flash/store/table_stream.h"

namespace pdl {
namespace {

constexpr uint32_t kStreamVersion = 1;
constexpr uint8_t kSpareMagic[4] = {'C', 'K', 'P', 'T'};
constexpr size_t kSpareCrcAt = 21;  // CRC-32C of spare bytes [1, 21)

void encode_spare(uint64_t gen, uint32_t index, uint32_t data_crc, std::span<uint8_t> s) {
  std::fill(s.begin(), s.end(), 0xFF);
  uint8_t* p = s.data();  // p[0]: the bad-block marker, never programmed
  std::memcpy(p + 1, kSpareMagic, 4);
  le::put64(p + 5, gen);
  le::put32(p + 13, index);
  le::put32(p + 17, data_crc);
  le::put32(p + kSpareCrcAt, crc32c(p + 1, kSpareCrcAt - 1));
}

// The page holds stream page `index` of generation `gen`, its data intact.
bool page_ok(std::span<const uint8_t> data, std::span<const uint8_t> s, uint64_t gen,
             uint32_t index) {
  const uint8_t* p = s.data();
  return std::memcmp(p + 1, kSpareMagic, 4) == 0 &&
         le::get32(p + kSpareCrcAt) == crc32c(p + 1, kSpareCrcAt - 1) &&
         le::get64(p + 5) == gen && le::get32(p + 13) == index &&
         le::get32(p + 17) == crc32c(data.data(), data.size());
}

uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

}  // namespace

StreamHeader stream_header_for(const Superblock& sb, const Geometry& chip, uint64_t gen) {
  StreamHeader h;
  h.gen = gen;
  h.uuid = sb.uuid;
  h.store_geometry = store_geometry(chip, sb.checkpoint_blocks);
  h.area_blocks = sb.checkpoint_blocks;
  h.method = sb.params.method;
  h.ftl = sb.params.ftl;
  return h;
}

std::vector<uint8_t> encode_stream(const StreamHeader& h, std::span<const uint8_t> engine,
                                   std::span<const uint8_t> client) {
  TableWriter w;
  w.tag("PDCK");
  w.u32(kStreamVersion);
  w.u64(h.gen);
  w.bytes(h.uuid);
  w.u32(h.store_geometry.page_data);
  w.u32(h.store_geometry.page_spare);
  w.u32(h.store_geometry.pages_per_block);
  w.u32(h.store_geometry.blocks);
  w.u32(h.area_blocks);
  w.u8(uint8_t(h.method));
  w.u8(uint8_t(h.ftl));
  w.tag("ENGN");
  w.u64(engine.size());
  w.bytes(engine);
  w.tag("CLNT");
  w.u64(client.size());
  w.bytes(client);
  return std::move(w.data());
}

Status decode_stream(std::span<const uint8_t> stream, const StreamHeader& want,
                     std::span<const uint8_t>* engine, std::span<const uint8_t>* client) {
  TableReader r(stream);
  r.tag("PDCK");
  const uint32_t version = r.u32();
  if (r.status().is_ok() && version != kStreamVersion)
    r.fail("checkpoint: stream version " + std::to_string(version) + " is unknown");
  const uint64_t gen = r.u64();
  const auto uuid = r.bytes(16);
  const uint32_t shape[5] = {r.u32(), r.u32(), r.u32(), r.u32(), r.u32()};
  const uint8_t method = r.u8(), ftl = r.u8();
  PDL_TRY(r.status());
  const uint32_t want_shape[5] = {want.store_geometry.page_data, want.store_geometry.page_spare,
                                  want.store_geometry.pages_per_block,
                                  want.store_geometry.blocks, want.area_blocks};
  if (gen != want.gen)
    return Status::error(Errc::kCorrupt, "checkpoint: stream of gen " + std::to_string(gen) +
                                             " where the log names gen " +
                                             std::to_string(want.gen));
  if (std::memcmp(uuid.data(), want.uuid.data(), 16) != 0)
    return Status::error(Errc::kCorrupt, "checkpoint: stream of another format (uuid)");
  if (std::memcmp(shape, want_shape, sizeof shape) != 0)
    return Status::error(Errc::kCorrupt, "checkpoint: stream geometry differs from the chip's");
  if (method != uint8_t(want.method) || ftl != uint8_t(want.ftl))
    return Status::error(Errc::kCorrupt, "checkpoint: stream of another method");
  r.tag("ENGN");
  const uint64_t elen = r.u64();
  r.check_count(elen, 1, "engine section bytes");
  *engine = r.bytes(size_t(elen));
  r.tag("CLNT");
  const uint64_t clen = r.u64();
  r.check_count(clen, 1, "client section bytes");
  *client = r.bytes(size_t(clen));
  return r.finish();
}

AreaHalf area_half(uint32_t area_first, uint32_t area_blocks, uint32_t half) {
  const uint32_t h0 = area_blocks / 2;
  if (half == 0) return {area_first, area_first + h0};
  return {area_first + h0, area_first + area_blocks};
}

SummaryCursor half_start(Nand& nand, const AreaHalf& h) {
  SummaryCursor c;
  c.end = h.end;
  for (uint32_t b = h.first; b < h.end; b++) {
    if (nand.is_bad(b)) continue;
    c.block = b;
    c.usable = true;
    return c;
  }
  return c;
}

bool next_area_page(Nand& nand, SummaryCursor* c) {
  const uint32_t ppb = nand.geometry().pages_per_block;
  if (++c->page < ppb) return true;
  c->page = 0;
  c->erased = false;
  for (c->block++; c->block < c->end; c->block++)
    if (!nand.is_bad(c->block)) return true;
  return false;
}

uint32_t area_page_of(const Nand& nand, uint32_t area_first, const SummaryCursor& c) {
  return (c.block - area_first) * nand.geometry().pages_per_block + c.page;
}

void encode_root_spare(uint64_t gen, uint32_t index, uint32_t data_crc, std::span<uint8_t> s) {
  encode_spare(gen, index, data_crc, s);
}

namespace {

constexpr uint8_t kTableMagic[4] = {'C', 'K', 'T', 'P'};
constexpr size_t kTableCrcAt = 25;  // CRC-32C of spare bytes [1, 25)

}  // namespace

void encode_table_spare(uint64_t gen, uint32_t table, uint32_t index, uint32_t data_crc,
                        std::span<uint8_t> s) {
  std::fill(s.begin(), s.end(), 0xFF);
  uint8_t* p = s.data();  // p[0]: the bad-block marker, never programmed
  std::memcpy(p + 1, kTableMagic, 4);
  le::put64(p + 5, gen);
  le::put32(p + 13, index);
  le::put32(p + 17, data_crc);
  le::put32(p + 21, table);
  le::put32(p + kTableCrcAt, crc32c(p + 1, kTableCrcAt - 1));
}

bool table_page_whole(std::span<const uint8_t> data, std::span<const uint8_t> s, uint64_t* gen,
                      uint32_t* table, uint32_t* index) {
  const uint8_t* p = s.data();
  if (std::memcmp(p + 1, kTableMagic, 4) != 0 ||
      le::get32(p + kTableCrcAt) != crc32c(p + 1, kTableCrcAt - 1) ||
      le::get32(p + 17) != crc32c(data.data(), data.size()))
    return false;
  *gen = le::get64(p + 5);
  *index = le::get32(p + 13);
  *table = le::get32(p + 21);
  return true;
}

namespace {

// The cursor at area page `at` of the half [h.first, h.end), `erased` set (a page written in
// this half's current use lies at or before it in its block); !usable if `at` is not in a good
// block of the half.
SummaryCursor cursor_at(Nand& nand, uint32_t area_first, const AreaHalf& h, uint32_t at) {
  const uint32_t ppb = nand.geometry().pages_per_block;
  SummaryCursor c;
  c.end = h.end;
  c.block = area_first + at / ppb;
  c.page = at % ppb;
  c.erased = true;
  c.usable = c.block >= h.first && c.block < h.end && !nand.is_bad(c.block);
  return c;
}

}  // namespace

Status read_area(Nand& nand, uint32_t first, uint32_t count, const LogEntry& e,
                 std::vector<uint8_t>* stream, uint64_t* pages_read) {
  const Geometry& g = nand.geometry();
  *pages_read = 0;
  const AreaHalf h = area_half(first, count, e.half);
  const uint64_t capacity = uint64_t(h.end - h.first) * g.pages_per_block;
  const uint64_t half_first_page = uint64_t(h.first - first) * g.pages_per_block;
  if (e.area_first != first || e.half > 1 || e.pages == 0 || e.root_page < half_first_page ||
      e.root_page - half_first_page >= capacity ||
      e.pages > capacity - (e.root_page - half_first_page) ||
      e.stream_bytes > uint64_t(e.pages) * g.page_data ||
      div_up(std::max<uint64_t>(e.stream_bytes, 1), g.page_data) != e.pages)
    return Status::error(Errc::kCorrupt, "checkpoint: the log entry's extent does not fit the area");
  SummaryCursor c = cursor_at(nand, first, h, e.root_page);
  if (!c.usable)
    return Status::error(Errc::kCorrupt, "checkpoint: the root's first page lies in a bad block");
  stream->assign(size_t(e.pages) * g.page_data, 0);
  std::vector<uint8_t> spare(g.page_spare);
  uint32_t idx = 0;
  for (; idx < e.pages && c.usable; idx++) {
    std::span<uint8_t> data(stream->data() + size_t(idx) * g.page_data, g.page_data);
    bool passed;
    const Status st = read_with_retries(
        nand, Ppa(uint64_t(c.block) * g.pages_per_block + c.page), data, spare,
        [&] { return page_ok(data, spare, e.gen, idx); }, &passed);
    ++*pages_read;
    if (!st.is_ok() && !st.is(Errc::kCorrupt) && !st.is(Errc::kIoError)) return st;
    if (!passed)
      return Status::error(Errc::kCorrupt,
                           "checkpoint: page " + std::to_string(idx) + " (block " +
                               std::to_string(c.block) + ", page " + std::to_string(c.page) +
                               ") " +
                               (st.is_ok() ? "fails its checks"
                                           : "is unreadable: " + std::string(st.message())));
    if (idx + 1 < e.pages) c.usable = next_area_page(nand, &c);
  }
  if (idx < e.pages)
    return Status::error(Errc::kCorrupt, "checkpoint: the half ends after " +
                                             std::to_string(idx) + " of " +
                                             std::to_string(e.pages) + " pages");
  stream->resize(size_t(e.stream_bytes));
  if (crc32c(stream->data(), stream->size()) != e.stream_crc)
    return Status::error(Errc::kCorrupt, "checkpoint: stream CRC mismatch");
  return Status::ok();
}

namespace {

constexpr uint8_t kSummaryMagic[4] = {'C', 'K', 'S', 'M'};

void encode_summary_spare(uint64_t gen, uint32_t index, uint32_t data_crc, std::span<uint8_t> s) {
  encode_spare(gen, index, data_crc, s);
  std::memcpy(s.data() + 1, kSummaryMagic, 4);
  le::put32(s.data() + kSpareCrcAt, crc32c(s.data() + 1, kSpareCrcAt - 1));
}

// The page is a whole root, summary or table page (CRCs intact): its gen, kind and index.
bool whole_area_page(std::span<const uint8_t> data, std::span<const uint8_t> s, uint64_t* gen,
                     bool* summary, uint32_t* index) {
  const uint8_t* p = s.data();
  *summary = false;
  uint32_t table;
  if (table_page_whole(data, s, gen, &table, index)) return true;
  const bool stream = std::memcmp(p + 1, kSpareMagic, 4) == 0;
  *summary = std::memcmp(p + 1, kSummaryMagic, 4) == 0;
  if (!stream && !*summary) return false;
  if (le::get32(p + kSpareCrcAt) != crc32c(p + 1, kSpareCrcAt - 1)) return false;
  if (le::get32(p + 17) != crc32c(data.data(), data.size())) return false;
  *gen = le::get64(p + 5);
  *index = le::get32(p + 13);
  return true;
}

}  // namespace

SummaryCursor summary_cursor_after(Nand& nand, uint32_t first, uint32_t count, const LogEntry& e) {
  const AreaHalf h = area_half(first, count, e.half);
  SummaryCursor c = cursor_at(nand, first, h, e.root_page);
  for (uint32_t i = 0; i < e.pages && c.usable; i++) {
    c.usable = next_area_page(nand, &c);
    if (i + 1 < e.pages) c.erased = true;  // a root page lies in this block
  }
  return c;  // (a root that does not fit: read_area refuses the entry)
}

Status write_summary(Nand& nand, uint64_t gen, std::span<const uint32_t> blocks,
                     SummaryCursor* c) {
  const Geometry& g = nand.geometry();
  if (!c->usable || 4 + 4 * blocks.size() > g.page_data)
    return Status::error(Errc::kFull, "checkpoint: no room for another summary page");
  if (c->page == 0 && !c->erased) {
    const Status er = erase_with_retries(nand, c->block);
    if (er.is(Errc::kBadBlock)) c->usable = false;
    PDL_TRY(er);
    c->erased = true;
  }
  std::vector<uint8_t> data(g.page_data, 0xFF), spare(g.page_spare);
  le::put32(data.data(), uint32_t(blocks.size()));
  for (size_t i = 0; i < blocks.size(); i++) le::put32(data.data() + 4 + 4 * i, blocks[i]);
  encode_summary_spare(gen, c->index, crc32c(data.data(), data.size()), spare);
  const Status st =
      as_program_status(nand.program(Ppa(uint64_t(c->block) * g.pages_per_block + c->page), data,
                                     spare));
  if (!st.is_ok()) {
    c->usable = false;  // a failed or cut page sits there: no summary may follow it
    return st;
  }
  c->index++;
  c->usable = next_area_page(nand, c);
  return Status::ok();
}

Status read_summaries(Nand& nand, uint32_t first, uint32_t count, const LogEntry& e,
                      std::vector<uint32_t>* declared, SummaryCursor* c, uint64_t* pages,
                      uint64_t* summaries) {
  const Geometry& g = nand.geometry();
  *c = summary_cursor_after(nand, first, count, e);
  std::vector<uint8_t> data(g.page_data), spare(g.page_spare);
  while (c->usable) {
    const Ppa ppa = Ppa(uint64_t(c->block) * g.pages_per_block + c->page);
    uint64_t gen = 0;
    uint32_t index = 0;
    bool summary = false, whole = false;
    const Status st = read_with_retries(
        nand, ppa, data, spare,
        [&] {
          whole = whole_area_page(data, spare, &gen, &summary, &index);
          return (whole && summary && gen == e.gen && index == c->index) ||
                 (all_ff(data) && all_ff(spare));
        },
        &whole);
    ++*pages;
    if (!st.is_ok() && !st.is(Errc::kCorrupt) && !st.is(Errc::kIoError)) return st;
    if (all_ff(data) && all_ff(spare)) return Status::ok();  // the next one goes here
    bool sum = false;
    const bool decodes = whole_area_page(data, spare, &gen, &sum, &index);
    if (decodes && sum && gen == e.gen && index == c->index) {
      const uint32_t n = le::get32(data.data());
      if (4 + 4 * uint64_t(n) > g.page_data)
        return Status::error(Errc::kCorrupt, "checkpoint: summary page " +
                                                 std::to_string(index) + " lists " +
                                                 std::to_string(n) + " blocks");
      for (uint32_t i = 0; i < n; i++) declared->push_back(le::get32(data.data() + 4 + 4 * i));
      ++*summaries;
      c->index++;
      c->usable = next_area_page(nand, c);
      continue;
    }
    // The first page of a block beyond the root: a whole page of an older generation means
    // no summary reached this block (its erase comes first).
    if (c->page == 0 && !c->erased && decodes && gen < e.gen) return Status::ok();
    // A whole page of a later generation: a checkpoint write that was cut (or failed) before
    // its log entry; the summaries of gen e.gen ended before it (a failed write stops them).
    // Its pages are not erased: the next area page goes to the next block.
    if (decodes && gen > e.gen) {
      c->later = true;
      c->page = g.pages_per_block - 1;
      c->usable = next_area_page(nand, c);
      return Status::ok();
    }
    c->usable = false;
    return Status::error(Errc::kCorrupt, "checkpoint: summary page " +
                                             std::to_string(c->index) + " (block " +
                                             std::to_string(c->block) + ", page " +
                                             std::to_string(c->page) + ") does not decode");
  }
  return Status::ok();  // the half is full: no more summaries
}

uint32_t replay_budget(uint32_t asked, const Geometry& chip, uint32_t stream_pages) {
  if (asked) return asked;
  const uint64_t least = std::max<uint64_t>(
      16, std::min<uint64_t>(div_up(kReplayLeastPages, chip.pages_per_block), chip.blocks / 16));
  return uint32_t(
      std::max<uint64_t>(least, div_up(16 * uint64_t(stream_pages), chip.pages_per_block)));
}

uint32_t checkpoint_half_blocks(const Geometry& g, uint64_t logical_pages) {
  const uint64_t physical = uint64_t(g.blocks) * g.pages_per_block;
  auto table_pages = [&](uint64_t entries, uint64_t bytes) {
    const uint64_t per = std::max<uint64_t>(1, g.page_data / bytes);
    return div_up(entries, per);
  };
  const uint64_t paged = table_pages(logical_pages, 12) + table_pages(physical, 4) +
                         table_pages(physical, 2);
  const uint64_t root = div_up(32 * uint64_t(g.blocks) + 65536 + 16 * logical_pages + 65536,
                               g.page_data);
  const uint64_t reserve = 2 * 16;
  uint64_t blocks = div_up(paged + root + reserve, g.pages_per_block);
  blocks += div_up(blocks * 2, 100);  // bad blocks: 2 %, at least one
  return uint32_t(std::min<uint64_t>(blocks, g.blocks));
}

uint32_t checkpoint_area_blocks(const Geometry& g, uint64_t logical_pages) {
  return uint32_t(std::min<uint64_t>(2 * uint64_t(checkpoint_half_blocks(g, logical_pages)),
                                     g.blocks));
}

}  // namespace pdl
