// fuzz_superblock.cc — libFuzzer target: parse a hostile superblock and mount the store it
// describes (docs/format.md §2; flash/store/superblock.cc, open_store.cc).
//
// Input: byte 0 = flags — bits 0-1 the method the chip was formatted with (pdl, opu, ipu,
// ipl), kKeepCrc: leave the superblock's own CRC as the input has it (otherwise recomputed,
// so that mutations reach the field checks), kKeepSecondCopy: leave block 1's copy valid
// (the fallback path), kOverlayMagic: the overlay starts at byte 0 (the magic) instead of 8.
// The rest overlays the superblock's bytes from there up to its CRC. The chip is a freshly
// formatted small one (512+32-byte pages, 8 per block, 32 blocks) whose superblock page(s)
// are rewritten with the result; then mount_store(), and if it mounts: a page written,
// read back (abort() if wrong), synced, and the store's own check().
// What must never happen: a crash, a sanitizer report, an allocation beyond libFuzzer's
// limit (a hostile size field), wrong bytes.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "flash/image/open_store.h"
#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/device/emulated_nand.h"
#include "flash/store/page_store.h"
#include "flash/store/spare.h"
#include "flash/store/superblock.h"

namespace {

constexpr uint8_t kKeepCrc = 4, kKeepSecondCopy = 8, kOverlayMagic = 16;
constexpr size_t kCrcAt = 76;  // docs/format.md §2

pdl::Geometry chip_geometry() {
  pdl::Geometry g;
  g.page_data = 512;
  g.page_spare = 32;
  g.pages_per_block = 8;
  g.blocks = 32;
  return g.resolved();
}

// One formatted chip per method, made once; each input works on a clone.
const pdl::EmulatedNand& formatted(unsigned method) {
  static std::array<std::unique_ptr<pdl::EmulatedNand>, 4> chips;
  auto& c = chips[method];
  if (!c) {
    pdl::StoreParams p;
    p.method = pdl::Method(method + 1);  // kPdl, kOpu, kIpu, kIpl
    std::unique_ptr<pdl::PageStore> s;
    pdl::Status st = pdl::EmulatedNand::create_ram(chip_geometry(), &c);
    if (st.is_ok()) st = pdl::format_store(*c, p, &s);
    if (!st.is_ok()) {
      std::fprintf(stderr, "fuzz_superblock: cannot format the chip: %s\n", st.to_string().c_str());
      std::abort();
    }
  }
  return *c;
}

// Replace page 0 of `block` with `data` under a valid superblock spare header.
void rewrite(pdl::EmulatedNand& nand, uint32_t block, const std::vector<uint8_t>& data) {
  const pdl::Geometry& g = nand.geometry();
  if (!nand.erase(block).is_ok()) std::abort();
  pdl::SpareHeader h;
  h.type = pdl::PageType::kSuperblock;
  h.data_crc = pdl::crc32c(data.data(), data.size());
  std::vector<uint8_t> spare(g.page_spare);
  pdl::spare_encode(h, spare);
  if (!nand.program(block * g.pages_per_block, data, spare).is_ok()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* in, size_t size) {
  if (size < 1) return 0;
  const uint8_t flags = in[0];
  std::unique_ptr<pdl::EmulatedNand> nand = formatted(flags & 3).clone();
  const pdl::Geometry& g = nand->geometry();
  std::vector<uint8_t> data(g.page_data), spare(g.page_spare);
  if (!nand->read(0, data, spare).is_ok()) std::abort();
  const size_t from = (flags & kOverlayMagic) ? 0 : 8;
  for (size_t i = 1; i < size && from + i - 1 < kCrcAt; i++) data[from + i - 1] = in[i];
  if (!(flags & kKeepCrc)) pdl::le::put32(data.data() + kCrcAt, pdl::crc32c(data.data(), kCrcAt));
  rewrite(*nand, 0, data);
  if (!(flags & kKeepSecondCopy)) rewrite(*nand, 1, data);

  std::unique_ptr<pdl::PageStore> store;
  if (!pdl::mount_store(*nand, &store).is_ok()) return 0;
  if (store->logical_pages() == 0 || store->page_size() != g.page_data) std::abort();
  std::vector<uint8_t> page(g.page_data), got(g.page_data);
  for (size_t i = 0; i < page.size(); i++) page[i] = uint8_t(i * 13 + size);
  const pdl::Lpn lpn = store->logical_pages() - 1;
  if (store->write(lpn, page).is_ok() && store->sync().is_ok()) {
    if (!store->read(lpn, got).is_ok() || got != page) std::abort();
    (void)store->check();
  }
  return 0;
}
