// area_pager.cc — table pages and the root appended to a half of the checkpoint area; loads
// checked page by page (layouts: docs/format.md §14).
#include "flash/store/area_pager.h"

#include <algorithm>
#include <string>

#include "flash/common/crc32c.h"
#include "flash/store/reread.h"

namespace pdl {

AreaPager::AreaPager(Nand& chip, uint32_t area_first, uint32_t area_blocks)
    : chip_(chip), first_(area_first), blocks_(area_blocks) {
  spare_.resize(chip.geometry().page_spare);
}

Status AreaPager::load(uint32_t home, uint32_t table, uint32_t index, std::span<uint8_t> out) {
  const Geometry& g = chip_.geometry();
  const std::string what = "table page " + std::to_string(table) + "/" + std::to_string(index) +
                           " at area page " + std::to_string(home);
  auto fail = [&](Status st) {
    if (on_load_error_) on_load_error_();
    return st;
  };
  if (out.size() != g.page_data)
    return Status::error(Errc::kInvalidArgument, "area pager: a table page is a page's data");
  if (uint64_t(home) >= uint64_t(blocks_) * g.pages_per_block)
    return fail(Status::error(Errc::kCorrupt, "checkpoint: " + what + " lies outside the area"));
  const Ppa ppa = Ppa(uint64_t(first_) * g.pages_per_block + home);
  std::vector<uint8_t>& data = page_;
  data.resize(g.page_data);
  uint64_t gen = 0;
  uint32_t t = 0, i = 0;
  bool passed = false;
  const Status st = read_with_retries(
      chip_, ppa, data, spare_,
      [&] {
        return table_page_whole(data, spare_, &gen, &t, &i) && t == table && i == index &&
               gen <= root_gen_;
      },
      &passed);
  loads_++;
  if (!st.is_ok() && !st.is(Errc::kCorrupt) && !st.is(Errc::kIoError)) return fail(st);
  if (!passed)
    return fail(Status::error(
        Errc::kCorrupt, "checkpoint: " + what + " (block " +
                            std::to_string(uint64_t(ppa) / g.pages_per_block) + ", page " +
                            std::to_string(uint64_t(ppa) % g.pages_per_block) + ") " +
                            (st.is_ok() ? "fails its checks"
                                        : "is unreadable: " + std::string(st.message()))));
  std::copy(data.begin(), data.end(), out.begin());
  return Status::ok();
}

Status AreaPager::store(uint32_t table, uint32_t index, std::span<const uint8_t> data,
                        uint32_t* home) {
  if (!writing_)
    return Status::error(Errc::kInvalidArgument, "area pager: a table page outside a checkpoint");
  if (data.size() != chip_.geometry().page_data)
    return Status::error(Errc::kInvalidArgument, "area pager: a table page is a page's data");
  encode_table_spare(gen_, table, index, crc32c(data.data(), data.size()), spare_);
  PDL_TRY(program_next(data, spare_, home));
  stores_++;
  return Status::ok();
}

void AreaPager::place(uint32_t half, const SummaryCursor& cursor) {
  placed_ = true;
  half_ = half;
  cursor_ = cursor;
}

uint64_t AreaPager::pages_left() {
  if (!cursor_.usable) return 0;
  const uint32_t ppb = chip_.geometry().pages_per_block;
  uint64_t n = ppb - cursor_.page;
  for (uint32_t b = cursor_.block + 1; b < cursor_.end; b++)
    if (!chip_.is_bad(b)) n += ppb;
  return n;
}

void AreaPager::begin(uint64_t gen, uint32_t half, bool full) {
  writing_ = true;
  full_ = full;
  last_full_ = full;
  gen_ = gen;
  target_ = half;
  saved_ = cursor_;
  erased_.clear();
  written_ = 0;
  if (full) cursor_ = half_start(chip_, area_half(first_, blocks_, half));
}

bool AreaPager::erased_now(uint32_t block) const {
  return std::find(erased_.begin(), erased_.end(), block) != erased_.end();
}

Status AreaPager::program_next(std::span<const uint8_t> data, std::span<const uint8_t> spare,
                               uint32_t* at) {
  const uint32_t ppb = chip_.geometry().pages_per_block;
  for (;;) {
    if (!cursor_.usable)
      return Status::error(Errc::kFull, "checkpoint: the area half " + std::to_string(target_) +
                                            " has no page left");
    if (cursor_.page == 0 && !cursor_.erased) {
      // A block entered afresh: nothing referenced lies in it (it is after the cursor).
      const Status er = erase_with_retries(chip_, cursor_.block);
      if (er.is(Errc::kBadBlock)) {
        PDL_TRY(chip_.mark_bad(cursor_.block));
        cursor_.page = ppb - 1;
        cursor_.usable = next_area_page(chip_, &cursor_);
        continue;
      }
      PDL_TRY(er);
      cursor_.erased = true;
      erased_.push_back(cursor_.block);
    }
    const uint32_t block = cursor_.block;
    const Ppa ppa = Ppa(uint64_t(block) * ppb + cursor_.page);
    const Status st = as_program_status(chip_.program(ppa, data, spare));
    written_++;
    if (st.is(Errc::kBadBlock)) {
      // The page is garbage. A block this write erased leaves service (nothing referenced is
      // in it); one holding referenced pages is only left behind. Either way this write fails
      // (a later one retries elsewhere).
      if (erased_now(block)) {
        PDL_TRY(chip_.mark_bad(block));
        cursor_.page = ppb - 1;
      }
      cursor_.usable = next_area_page(chip_, &cursor_);
      return st;
    }
    if (!st.is_ok()) {
      cursor_.usable = next_area_page(chip_, &cursor_);  // (a cut: the page may be torn)
      return st;
    }
    *at = area_page_of(chip_, first_, cursor_);
    cursor_.usable = next_area_page(chip_, &cursor_);
    return Status::ok();
  }
}

Status AreaPager::write_root(std::span<const uint8_t> stream, LogEntry* e) {
  const Geometry& g = chip_.geometry();
  const uint64_t pages = std::max<uint64_t>(1, (stream.size() + g.page_data - 1) / g.page_data);
  std::vector<uint8_t> data(g.page_data), spare(g.page_spare);
  for (uint64_t idx = 0; idx < pages; idx++) {
    const uint64_t off = idx * g.page_data;
    const uint64_t n =
        off < stream.size() ? std::min<uint64_t>(g.page_data, stream.size() - off) : 0;
    std::fill(data.begin(), data.end(), 0xFF);
    if (n) std::copy(stream.begin() + long(off), stream.begin() + long(off + n), data.begin());
    encode_root_spare(gen_, uint32_t(idx), crc32c(data.data(), data.size()), spare);
    uint32_t at = 0;
    PDL_TRY(program_next(data, spare, &at));
    if (idx == 0) e->root_page = at;
  }
  e->area_first = first_;
  e->half = target_;
  e->pages = uint32_t(pages);
  e->stream_bytes = stream.size();
  e->stream_crc = crc32c(stream.data(), stream.size());
  return Status::ok();
}

void AreaPager::finish(bool durable) {
  if (!writing_) return;
  writing_ = false;
  if (durable) {
    placed_ = true;
    half_ = target_;
    root_gen_ = gen_;
    cursor_.index = 0;
    cursor_.later = false;
  } else if (full_) {
    cursor_ = saved_;
  }
  full_ = false;
}

}  // namespace pdl
