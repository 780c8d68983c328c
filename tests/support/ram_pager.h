// ram_pager.h — a TablePager over RAM for tests (header-only): table pages stored in a vector,
// each tagged with its table and index so that load() checks what a real pager checks; a page
// can be corrupted, a store can be made to fail, and relocate_all can be forced.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "flash/store/paged_table.h"

namespace pdl::test {

class RamPager final : public TablePager {
 public:
  explicit RamPager(uint32_t page_bytes) : bytes_(page_bytes) {}
  uint32_t page_bytes() const override { return bytes_; }
  Status load(uint32_t home, uint32_t table, uint32_t index, std::span<uint8_t> out) override {
    loads++;
    if (home >= pages.size()) return Status::error(Errc::kCorrupt, "ram pager: no such home");
    const Page& p = pages[home];
    if (p.table != table || p.index != index || p.bad)
      return Status::error(Errc::kCorrupt, "ram pager: page does not verify");
    std::memcpy(out.data(), p.data.data(), bytes_);
    return Status::ok();
  }
  Status store(uint32_t table, uint32_t index, std::span<const uint8_t> data,
               uint32_t* home) override {
    if (fail_after >= 0 && stores >= uint64_t(fail_after))
      return Status::error(Errc::kFull, "ram pager: full");
    stores++;
    pages.push_back(Page{table, index, false, std::vector<uint8_t>(data.begin(), data.end())});
    *home = uint32_t(pages.size() - 1);
    return Status::ok();
  }
  bool relocate_all() const override { return relocate; }

  struct Page {
    uint32_t table = 0, index = 0;
    bool bad = false;
    std::vector<uint8_t> data;
  };
  std::vector<Page> pages;
  uint64_t loads = 0, stores = 0;
  int64_t fail_after = -1;  // stores that succeed before kFull (-1: never)
  bool relocate = false;

 private:
  uint32_t bytes_;
};

}  // namespace pdl::test
