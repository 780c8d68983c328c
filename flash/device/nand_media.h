// nand_media.h — the stored bytes of an emulated chip: the inverted page array and the
// per-block erase counts, in memory (RamMedia) or in an image file (file_media.h).
//
// Offsets are into the page array (page `ppa` at ppa × raw page size); bytes are stored
// inverted (stored = ~flash), so an erased page is zeros. The emulator (emulated_nand.cc)
// decides what each flash operation leaves and hands it over as one mutation: write() (a
// program, or a bad-block mark) or erase() (zero some of a block's pages and set its erase
// count). Each mutation is atomic against the death of the host process: a reopened image
// shows it either fully applied or not at all (file_media.h says how).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "flash/common/status.h"

namespace pdl::detail {

class NandMedia {
 public:
  virtual ~NandMedia() = default;
  virtual Status read(uint64_t off, uint8_t* buf, size_t n) = 0;
  // The stored bytes [off, off + n) where they lie in memory (valid until the next mutation),
  // or nullptr: read() them.
  virtual const uint8_t* view(uint64_t off, size_t n) = 0;
  // Store n bytes at off (at most one raw page for an image file). `onto_erased`: the raw page
  // holding them is erased (all stored zeros) before this write, so a write cut short by the
  // host process dying may be undone — the page zeroed again — instead of redone, which needs
  // no copy of the bytes (file_media.h).
  virtual Status write(uint64_t off, const uint8_t* buf, size_t n, bool onto_erased = false) = 0;
  // Zero every page p of `block` with zero_pages[p] != 0 (an empty span zeroes none), then
  // record `count` as the block's erase count. If the count cannot be stored nothing changes.
  virtual Status erase(uint32_t block, std::span<const uint8_t> zero_pages, uint32_t count) = 0;
  virtual uint32_t erase_count(uint32_t block) const = 0;
  virtual Status flush() { return Status::ok(); }
};

// Lazily zeroed anonymous memory: `blocks` blocks of `block_bytes`.
Status create_ram_media(uint64_t block_bytes, uint32_t blocks, uint32_t pages_per_block,
                        std::unique_ptr<NandMedia>* out);

}  // namespace pdl::detail
