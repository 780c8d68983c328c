// superblock.cc — encode, write and read the two superblock copies (page 0 of blocks 0 and
// 1). A copy whose block is marked bad is skipped; one good copy is enough.
#include "flash/store/superblock.h"

#include <cstring>
#include <vector>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/store/reread.h"
#include "flash/store/spare.h"

namespace pdl {
namespace {

constexpr char kMagic[8] = {'P', 'D', 'L', 'S', 'U', 'P', 'E', 'R'};
constexpr size_t kCrcAt = 76;

void encode(const Superblock& sb, const Geometry& g, std::span<uint8_t> d) {
  std::fill(d.begin(), d.end(), 0xFF);
  uint8_t* p = d.data();
  std::memcpy(p, kMagic, 8);
  le::put32(p + 8, sb.version);
  p[12] = uint8_t(sb.params.method);
  p[13] = uint8_t(sb.params.obsolete);
  le::put16(p + 14, 0);
  le::put32(p + 16, sb.params.max_differential);
  le::put32(p + 20, sb.params.logical_pages);
  le::put32(p + 24, sb.params.gc_reserve_blocks);
  le::put32(p + 28, g.page_data);
  le::put32(p + 32, g.page_spare);
  le::put32(p + 36, g.pages_per_block);
  le::put32(p + 40, g.blocks);
  std::memcpy(p + 44, sb.uuid.data(), 16);
  le::put64(p + 60, sb.format_time);
  le::put32(p + 68, sb.params.log_region);
  le::put32(p + 72, 0);  // reserved
  le::put32(p + kCrcAt, crc32c(p, kCrcAt));
}

Status decode(std::span<const uint8_t> d, const Geometry& g, Superblock* sb) {
  const uint8_t* p = d.data();
  if (std::memcmp(p, kMagic, 8) != 0)
    return Status::error(Errc::kCorrupt, "no pdl superblock (not a formatted pdl store)");
  if (le::get32(p + kCrcAt) != crc32c(p, kCrcAt))
    return Status::error(Errc::kCorrupt, "superblock checksum mismatch");
  const uint32_t version = le::get32(p + 8);
  const Method method = Method(p[12]);
  const bool atomic_family = method == Method::kPdl || method == Method::kOpu ||
                              method == Method::kIpl;
  if (version != kSuperblockLegacy && !(version == kSuperblockAtomic && atomic_family))
    return Status::error(Errc::kUnsupported,
                         "superblock format version " + std::to_string(version) +
                             " is unknown to this pdl (it reads 1, and 2 for pdl, opu and ipl "
                             "stores): the image was made by a newer pdl");
  sb->version = version;
  if (le::get32(p + 28) != g.page_data || le::get32(p + 32) != g.page_spare ||
      le::get32(p + 36) != g.pages_per_block || le::get32(p + 40) != g.blocks)
    return Status::error(Errc::kCorrupt, "superblock geometry differs from the device's");
  sb->params.method = Method(p[12]);
  sb->params.obsolete = ObsoleteMode(p[13]);
  sb->params.max_differential = le::get32(p + 16);
  sb->params.logical_pages = le::get32(p + 20);
  sb->params.gc_reserve_blocks = le::get32(p + 24);
  sb->params.log_region = le::get32(p + 68);
  std::memcpy(sb->uuid.data(), p + 44, 16);
  sb->format_time = le::get64(p + 60);
  StoreParams check = sb->params;
  Status st = check.resolve(g);
  if (!st.is_ok() || !(check.max_differential == sb->params.max_differential &&
                       check.logical_pages == sb->params.logical_pages &&
                       check.gc_reserve_blocks == sb->params.gc_reserve_blocks &&
                       check.log_region == sb->params.log_region))
    return Status::error(Errc::kCorrupt, "superblock parameters are invalid");
  return Status::ok();
}

// Program `data` + `spare` as page 0 of `block`; false if the block failed (now marked bad).
Status program_copy(Nand& nand, uint32_t block, std::span<const uint8_t> data,
                    std::span<const uint8_t> spare, bool* written) {
  *written = false;
  const Status st = as_program_status(nand.program(block * nand.geometry().pages_per_block, data,
                                                   spare));
  if (st.is(Errc::kBadBlock)) return nand.mark_bad(block);  // a copy fewer; never read again
  PDL_TRY(st);
  *written = true;
  return Status::ok();
}

void encode_page(const Superblock& sb, const Geometry& g, std::vector<uint8_t>* data,
                 std::vector<uint8_t>* spare) {
  data->assign(g.page_data, 0xFF);
  spare->assign(g.page_spare, 0xFF);
  encode(sb, g, *data);
  SpareHeader h;
  h.type = PageType::kSuperblock;
  h.data_crc = crc32c(data->data(), data->size());
  spare_encode(h, *spare);
}

// Program both copies (erasing each block first when `erase`: a rewrite), skipping bad blocks.
Status put_superblock(Nand& nand, const Superblock& sb, bool erase) {
  const Geometry& g = nand.geometry();
  std::vector<uint8_t> data, spare;
  encode_page(sb, g, &data, &spare);
  uint32_t written = 0;
  for (uint32_t b = 0; b < kSuperblockBlocks; b++) {
    if (nand.is_bad(b)) continue;
    if (erase) {
      const Status st = erase_with_retries(nand, b);
      if (st.is(Errc::kBadBlock)) {
        PDL_TRY(nand.mark_bad(b));
        continue;
      }
      PDL_TRY(st);
    }
    bool ok;
    PDL_TRY(program_copy(nand, b, data, spare, &ok));
    written += ok;
  }
  if (written == 0)
    return Status::error(Errc::kBadBlock, "blocks 0 to " + std::to_string(kSuperblockBlocks - 1) +
                                              " are all bad: no room for the superblock");
  return Status::ok();
}

}  // namespace

uint32_t superblock_version_for(Method method) {
  return method == Method::kIpu ? kSuperblockLegacy : kSuperblockAtomic;
}

Status rewrite_superblock(Nand& nand, const Superblock& sb) {
  return put_superblock(nand, sb, true);
}

Status write_superblock(Nand& nand, const Superblock& sb) {
  return put_superblock(nand, sb, false);
}

// The first copy whose spare, CRC, magic and checksum hold, into `data`; kCorrupt if none.
static Status find_copy(Nand& nand, std::span<uint8_t> data, std::span<uint8_t> spare) {
  const Geometry& g = nand.geometry();
  for (uint32_t b = 0; b < kSuperblockBlocks; b++) {
    if (nand.is_bad(b)) continue;
    SpareHeader h;
    bool passed;
    PDL_TRY(read_with_retries(
        nand, b * g.pages_per_block, data, spare,
        [&] {
          return spare_decode(spare, &h) == SpareState::kValid &&
                 h.type == PageType::kSuperblock && h.data_crc == crc32c(data.data(), data.size());
        },
        &passed));
    if (passed && std::memcmp(data.data(), kMagic, 8) == 0 &&
        le::get32(data.data() + kCrcAt) == crc32c(data.data(), kCrcAt))
      return Status::ok();
  }
  return Status::error(Errc::kCorrupt, "no pdl superblock (not a formatted pdl store)");
}

Status peek_superblock_blocks(Nand& nand, uint32_t* blocks) {
  const Geometry& g = nand.geometry();
  std::vector<uint8_t> data(g.page_data), spare(g.page_spare);
  PDL_TRY(find_copy(nand, data, spare));
  const uint8_t* p = data.data();
  if (le::get32(p + 28) != g.page_data || le::get32(p + 32) != g.page_spare ||
      le::get32(p + 36) != g.pages_per_block)
    return Status::error(Errc::kCorrupt, "superblock geometry differs from the device's");
  *blocks = le::get32(p + 40);
  return Status::ok();
}

Status read_superblock(Nand& nand, Superblock* sb) {
  const Geometry& g = nand.geometry();
  std::vector<uint8_t> data(g.page_data), spare(g.page_spare);
  Status last = Status::error(Errc::kCorrupt, "no pdl superblock (not a formatted pdl store)");
  for (uint32_t b = 0; b < kSuperblockBlocks; b++) {
    if (nand.is_bad(b)) continue;
    SpareHeader h;
    bool passed;
    PDL_TRY(read_with_retries(
        nand, b * g.pages_per_block, data, spare,
        [&] {
          return spare_decode(spare, &h) == SpareState::kValid &&
                 h.type == PageType::kSuperblock && h.data_crc == crc32c(data.data(), data.size());
        },
        &passed));
    if (!passed) continue;
    last = decode(data, g, sb);
    if (last.is_ok()) return last;
  }
  return last;
}

}  // namespace pdl
