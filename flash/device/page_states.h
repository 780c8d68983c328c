// page_states.h — the emulator's per-page bookkeeping: programs since the block's last erase
// (the NOP rule) and "known erased" (erased by this process, or created erased, and not
// programmed since: a program need not read it first), header-only.
//
// Kept per erase block, and only for blocks touched since the chip was opened: an untouched
// block's pages all have 0 programs and the chip's default erased state, so opening a chip
// costs 8 bytes per block, not 2 per page (a 64 GiB chip has 32 M pages) — the RAM a mount is
// measured by is pdl's, not the emulator's. A block erased whole returns to the default when
// that is "erased" (a created chip) and drops its bytes.
// Thread-safety: none (the emulator's).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace pdl::detail {

class PageStates {
 public:
  PageStates(uint32_t blocks, uint32_t pages_per_block, bool erased)
      : ppb_(pages_per_block), erased_(erased), blocks_(blocks) {}
  PageStates(const PageStates& o) : ppb_(o.ppb_), erased_(o.erased_), blocks_(o.blocks_.size()) {
    for (size_t b = 0; b < blocks_.size(); b++)
      if (o.blocks_[b]) std::memcpy(touch(uint32_t(b)), o.blocks_[b].get(), 2 * size_t(ppb_));
  }
  PageStates& operator=(const PageStates& o) {
    PageStates c(o);
    std::swap(ppb_, c.ppb_);
    std::swap(erased_, c.erased_);
    blocks_.swap(c.blocks_);
    return *this;
  }

  uint8_t programs(uint64_t ppa) const {
    const uint8_t* b = blocks_[ppa / ppb_].get();
    return b ? b[ppa % ppb_] : 0;
  }
  bool erased(uint64_t ppa) const {
    const uint8_t* b = blocks_[ppa / ppb_].get();
    return b ? b[ppb_ + ppa % ppb_] != 0 : erased_;
  }
  // A program (whole, partial or failed) of page `ppa`: one more, and no longer erased.
  void programmed(uint64_t ppa) {
    uint8_t* b = touch(uint32_t(ppa / ppb_));
    b[ppa % ppb_]++;
    b[ppb_ + ppa % ppb_] = 0;
  }
  // Bytes of the page changed otherwise (a torn program, a bad-block mark, a flipped bit).
  void not_erased(uint64_t ppa) { touch(uint32_t(ppa / ppb_))[ppb_ + ppa % ppb_] = 0; }
  // Page `p` of `block` erased (a torn erase's subset).
  void page_erased(uint32_t block, uint32_t p) {
    uint8_t* b = touch(block);
    b[p] = 0;
    b[ppb_ + p] = 1;
  }
  // Every page of `block` erased.
  void block_erased(uint32_t block) {
    if (erased_) {
      blocks_[block].reset();
      return;
    }
    uint8_t* b = touch(block);
    std::memset(b, 0, ppb_);
    std::memset(b + ppb_, 1, ppb_);
  }
  bool all_erased(uint32_t block) const {
    const uint8_t* b = blocks_[block].get();
    if (!b) return erased_;
    for (uint32_t p = 0; p < ppb_; p++)
      if (!b[ppb_ + p]) return false;
    return true;
  }

 private:
  uint8_t* touch(uint32_t block) {
    std::unique_ptr<uint8_t[]>& b = blocks_[block];
    if (!b) {
      b.reset(new uint8_t[2 * size_t(ppb_)]);
      std::memset(b.get(), 0, ppb_);
      std::memset(b.get() + ppb_, erased_ ? 1 : 0, ppb_);
    }
    return b.get();
  }

  uint32_t ppb_;
  bool erased_;  // the state of a page of an untouched block
  std::vector<std::unique_ptr<uint8_t[]>> blocks_;
};

}  // namespace pdl::detail
