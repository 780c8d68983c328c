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
// Format 4's extension (FTL devices): bytes 80..91 under their own CRC at 92 (docs/format.md §2).
constexpr size_t kExtAt = 80;
constexpr size_t kExtCrcAt = 92;
// Format 6's extension (a checkpoint area): bytes 96..123 under their own CRC at 124.
constexpr size_t kCkAt = 96;
constexpr size_t kCkCrcAt = 124;

void encode(const Superblock& sb, const Geometry& g, std::span<uint8_t> d) {
  std::fill(d.begin(), d.end(), 0xFF);
  uint8_t* p = d.data();
  std::memcpy(p, kMagic, 8);
  le::put32(p + 8, superblock_stored_version(sb));
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
  const bool sector_stored = sb.version == kSuperblockLogSector ||
                             (sb.version == kSuperblockNvm && sb.params.method == Method::kIpl);
  le::put32(p + 72, sector_stored ? sb.params.log_sector : 0);
  le::put32(p + kCrcAt, crc32c(p, kCrcAt));
  if (sb.version == kSuperblockFtl) {
    p[kExtAt] = uint8_t(sb.params.ftl);
    p[kExtAt + 1] = p[kExtAt + 2] = p[kExtAt + 3] = 0;
    le::put32(p + kExtAt + 4, sb.params.log_blocks);
    le::put32(p + kExtAt + 8, sb.params.sb_slots);
    le::put32(p + kExtCrcAt, crc32c(p + kExtAt, kExtCrcAt - kExtAt));
  }
  if (sb.version == kSuperblockNvm) {
    le::put32(p + kExtAt, sb.params.nvm_bytes);
    std::memset(p + kExtAt + 4, 0, kExtCrcAt - kExtAt - 4);
    le::put32(p + kExtCrcAt, crc32c(p + kExtAt, kExtCrcAt - kExtAt));
  }
  if (sb.checkpoint_blocks) {
    le::put32(p + kCkAt, sb.version);
    le::put32(p + kCkAt + 4, sb.checkpoint_blocks);
    std::memset(p + kCkAt + 8, 0, kCkCrcAt - kCkAt - 8);
    le::put32(p + kCkCrcAt, crc32c(p + kCkAt, kCkCrcAt - kCkAt));
  }
}

// kCorrupt "superblock field <name> = <value> is invalid: <why>".
Status bad_field(const char* name, uint64_t value, const std::string& why) {
  return Status::error(Errc::kCorrupt, std::string("superblock field ") + name + " = " +
                                           std::to_string(value) + " is invalid: " + why);
}

// Every field is checked against the device's geometry and the method's rules (resolve), so a
// superblock whose CRC holds but whose values do not is refused naming the first bad field.
Status decode(std::span<const uint8_t> d, const Geometry& g, ParamsResolver resolve,
              Superblock* sb) {
  const uint8_t* p = d.data();
  if (std::memcmp(p, kMagic, 8) != 0)
    return Status::error(Errc::kCorrupt, "no pdl superblock (not a formatted pdl store)");
  if (le::get32(p + kCrcAt) != crc32c(p, kCrcAt))
    return Status::error(Errc::kCorrupt, "superblock checksum mismatch");
  uint32_t version = le::get32(p + 8);
  // Format 6: a base format (1..5) plus a checkpoint area; the base is decoded below as
  // itself, its parameters checked on the blocks the store runs on.
  sb->checkpoint_blocks = 0;
  sb->summaries = version == kSuperblockSummaries || version == kSuperblockHalves;
  sb->halves = version == kSuperblockHalves;
  Geometry gs = g;  // the store's geometry
  if (version == kSuperblockCheckpoint || version == kSuperblockSummaries ||
      version == kSuperblockHalves) {
    if (le::get32(p + kCkCrcAt) != crc32c(p + kCkAt, kCkCrcAt - kCkAt))
      return Status::error(Errc::kCorrupt,
                           "superblock checkpoint extension (bytes 96..127) checksum mismatch");
    for (size_t i = kCkAt + 8; i < kCkCrcAt; i++)
      if (p[i] != 0) return bad_field("bytes 104..123", p[i], "must be 0");
    version = le::get32(p + kCkAt);
    if (version < kSuperblockLegacy || version > kSuperblockNvm)
      return bad_field("base version", version, "formats 6 to 8 wrap a format of 1 to 5");
    const uint32_t area = le::get32(p + kCkAt + 4);
    if (area == 0 || area > g.blocks / 2 || g.blocks - area <= kSuperblockBlocks)
      return bad_field("checkpoint_blocks", area,
                       "1 to half the chip's " + std::to_string(g.blocks) + " blocks");
    if (sb->halves && area < 2)
      return bad_field("checkpoint_blocks", area, "format 8's area is two halves: at least 2");
    sb->checkpoint_blocks = area;
    gs = store_geometry(g, area);
  }
  const Method method = Method(p[12]);
  const bool known_method =
      p[12] >= uint8_t(Method::kPdl) && p[12] <= uint8_t(Method::kStableBuffer);
  if (version == kSuperblockLegacy || version == kSuperblockAtomic ||
      version == kSuperblockLogSector || version == kSuperblockFtl || version == kSuperblockNvm) {
    if (!known_method)
      return bad_field("method", p[12], "1 pdl, 2 opu, 3 ipu, 4 ipl, 5 ftl or 6 stablebuffer");
  }
  const bool atomic_family = has_atomic_commit(method);
  // (Format 2 on an FTL device is a known format on the wrong method: named below.)
  if (version != kSuperblockLegacy &&
      !(version == kSuperblockAtomic && (atomic_family || is_ftl_device(method))) &&
      version != kSuperblockLogSector && version != kSuperblockFtl &&
      !(version == kSuperblockNvm && known_method))
    return Status::error(Errc::kUnsupported,
                         "superblock format version " + std::to_string(version) +
                             " is unknown to this pdl (it reads 1, 2 for pdl, opu and ipl "
                             "stores, 3 for ipl, 4 for ftl devices and 5 for pdl and ipl with "
                             "nvm, 6 for any of them with a checkpoint area, 7 for 6 with summaries, 8 for 7 "
                             "with the area in halves): the image was made by a "
                             "newer pdl");
  if (version == kSuperblockNvm && !can_use_nvm(method))
    return bad_field("method", p[12], "superblock format 5 is for pdl (1) and ipl (4) stores only");
  if (version == kSuperblockLogSector && method != Method::kIpl)
    return bad_field("method", p[12], "superblock format 3 is for ipl stores only (4)");
  if ((version == kSuperblockFtl) != is_ftl_device(method))
    return bad_field("method", p[12],
                     "superblock format 4 is for the ftl (5) and stablebuffer (6) methods only, "
                     "and they have no other");
  if (version == kSuperblockFtl) {
    if (le::get32(p + kExtCrcAt) != crc32c(p + kExtAt, kExtCrcAt - kExtAt))
      return Status::error(Errc::kCorrupt, "superblock extension (bytes 80..95) checksum mismatch");
    const uint8_t ftl = p[kExtAt];
    if (ftl < uint8_t(FtlKind::kPage) || ftl > uint8_t(FtlKind::kFast))
      return bad_field("ftl", ftl, "1 page, 2 bast or 3 fast");
    if (p[kExtAt + 1] != 0 || p[kExtAt + 2] != 0 || p[kExtAt + 3] != 0)
      return bad_field("bytes 81..83", p[kExtAt + 1] | p[kExtAt + 2] << 8 | p[kExtAt + 3] << 16,
                       "must be 0");
    sb->params.ftl = FtlKind(ftl);
    sb->params.log_blocks = le::get32(p + kExtAt + 4);
    sb->params.sb_slots = le::get32(p + kExtAt + 8);
  }
  if (version == kSuperblockNvm) {
    if (le::get32(p + kExtCrcAt) != crc32c(p + kExtAt, kExtCrcAt - kExtAt))
      return Status::error(Errc::kCorrupt, "superblock extension (bytes 80..95) checksum mismatch");
    for (size_t i = kExtAt + 4; i < kExtCrcAt; i++)
      if (p[i] != 0) return bad_field("bytes 84..91", p[i], "must be 0");
    sb->params.nvm_bytes = le::get32(p + kExtAt);
    if (sb->params.nvm_bytes == 0)
      return bad_field("nvm_bytes", 0, "format 5 is for a store that uses NVM");
    if (sb->params.nvm_bytes > g.nvm_bytes)
      return Status::error(Errc::kInvalidArgument,
                           "this " + std::string(method_name(method)) + " store keeps part of "
                           "its state in " + std::to_string(sb->params.nvm_bytes) +
                           " bytes of NVM, and the device has " +
                           (g.nvm_bytes ? std::to_string(g.nvm_bytes) + " bytes" : "none") +
                           ": open it with its NVM (nvm_path=, docs/design.md §16)");
  }
  sb->version = version;
  if (p[13] != uint8_t(ObsoleteMode::kSpare) && p[13] != uint8_t(ObsoleteMode::kMemory))
    return bad_field("obsolete", p[13], "1 spare or 2 memory");
  if (le::get16(p + 14) != 0) return bad_field("bytes 14..15", le::get16(p + 14), "must be 0");
  const uint32_t log_sector = le::get32(p + 72);
  const bool sector_stored =
      version == kSuperblockLogSector || (version == kSuperblockNvm && method == Method::kIpl);
  if (!sector_stored && log_sector != 0)
    return bad_field("bytes 72..75", log_sector, "must be 0 unless the store is an ipl store of format 3 or 5");
  if (version == kSuperblockNvm && method == Method::kIpl && log_sector == 0)
    return bad_field("log_sector", log_sector, "format 5 records an ipl store's log sector size");
  if (version == kSuperblockLogSector && log_sector == kLogSector)
    return bad_field("log_sector", log_sector,
                     "a store of 512-byte log sectors is format 2, not 3");
  if (version == kSuperblockLogSector && log_sector == 0)
    return bad_field("log_sector", log_sector, "format 3 records the log sector size");
  const struct {
    const char* name;
    uint32_t at, device;
  } shape[] = {{"page_data", 28, g.page_data},
               {"page_spare", 32, g.page_spare},
               {"pages_per_block", 36, g.pages_per_block},
               {"blocks", 40, g.blocks}};
  for (const auto& f : shape)
    if (le::get32(p + f.at) != f.device)
      return Status::error(Errc::kCorrupt,
                           std::string("superblock geometry differs from the device's: field ") +
                               f.name + " = " + std::to_string(le::get32(p + f.at)) +
                               ", the device has " + std::to_string(f.device));
  sb->params.method = method;
  sb->params.obsolete = ObsoleteMode(p[13]);
  sb->params.max_differential = le::get32(p + 16);
  sb->params.logical_pages = le::get32(p + 20);
  sb->params.gc_reserve_blocks = le::get32(p + 24);
  sb->params.log_region = le::get32(p + 68);
  sb->params.log_sector = log_sector;  // 0 below format 3: the method's default
  std::memcpy(sb->uuid.data(), p + 44, 16);
  sb->format_time = le::get64(p + 60);
  // resolve fills defaults for zero fields and checks ranges; a stored field is final, so
  // one it would refuse or change is invalid.
  const struct {
    const char* name;
    const char* prefix;  // how resolve's messages name it
    uint32_t StoreParams::*field;
  } fields[] = {{"max_differential", "max_diff:", &StoreParams::max_differential},
                {"logical_pages", "logical_pages:", &StoreParams::logical_pages},
                {"gc_reserve_blocks", "gc_reserve:", &StoreParams::gc_reserve_blocks},
                {"log_region", "log_region:", &StoreParams::log_region},
                {"log_sector", "log_sector:", &StoreParams::log_sector},
                {"log_blocks", "log_blocks:", &StoreParams::log_blocks},
                {"sb_slots", "sb_slots:", &StoreParams::sb_slots},
                {"nvm_bytes", "nvm:", &StoreParams::nvm_bytes}};
  StoreParams check = sb->params;
  const Status st = resolve(&check, gs);
  if (!st.is_ok()) {
    const std::string why(st.message());
    for (const auto& f : fields)
      if (why.rfind(f.prefix, 0) == 0) return bad_field(f.name, sb->params.*f.field, why);
    if (why.rfind("obsolete:", 0) == 0) return bad_field("obsolete", p[13], why);
    if (why.rfind("ftl:", 0) == 0) return bad_field("ftl", uint8_t(sb->params.ftl), why);
    return Status::error(Errc::kCorrupt, "superblock parameters are invalid: " + why);
  }
  sb->params.log_sector = check.log_sector;  // resolved: 512 for ipl below format 3
  for (const auto& f : fields)
    if (check.*f.field != sb->params.*f.field)
      return bad_field(f.name, sb->params.*f.field,
                       std::string("a ") + method_name(method) + " store on this geometry has " +
                           std::to_string(check.*f.field));
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

uint32_t superblock_version_for(const StoreParams& params) {
  if (is_ftl_device(params.method)) return kSuperblockFtl;
  if (params.nvm_bytes != 0) return kSuperblockNvm;
  if (params.method == Method::kIpu) return kSuperblockLegacy;
  if (params.method == Method::kIpl && params.log_sector != 0 && params.log_sector != kLogSector)
    return kSuperblockLogSector;
  return kSuperblockAtomic;
}

Status write_superblock_copy(Nand& nand, const Superblock& sb, uint32_t block) {
  std::vector<uint8_t> data, spare;
  encode_page(sb, nand.geometry(), &data, &spare);
  bool ok;
  PDL_TRY(program_copy(nand, block, data, spare, &ok));
  if (!ok)
    return Status::error(Errc::kBadBlock, "the superblock copy in block " +
                                              std::to_string(block) + " failed to program");
  return Status::ok();
}

Status rewrite_superblock(Nand& nand, const Superblock& sb) {
  return put_superblock(nand, sb, true);
}

Status write_superblock(Nand& nand, const Superblock& sb) {
  return put_superblock(nand, sb, false);
}

// Reads the copy in block `b` into `data` and `spare` (rereading as read_with_retries does);
// `*passed`: its spare is a valid superblock header whose data CRC matches.
static Status read_copy(Nand& nand, uint32_t b, std::span<uint8_t> data, std::span<uint8_t> spare,
                        bool* passed) {
  SpareHeader h;
  return read_with_retries(
      nand, b * nand.geometry().pages_per_block, data, spare,
      [&] {
        return spare_decode(spare, &h) == SpareState::kValid &&
               h.type == PageType::kSuperblock && h.data_crc == crc32c(data.data(), data.size());
      },
      passed);
}

// The first copy whose spare, CRC, magic and checksum hold, into `data`; kCorrupt if none.
static Status find_copy(Nand& nand, std::span<uint8_t> data, std::span<uint8_t> spare) {
  for (uint32_t b = 0; b < kSuperblockBlocks; b++) {
    if (nand.is_bad(b)) continue;
    bool passed;
    PDL_TRY(read_copy(nand, b, data, spare, &passed));
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

Status read_superblock(Nand& nand, ParamsResolver resolve, Superblock* sb) {
  const Geometry& g = nand.geometry();
  std::vector<uint8_t> data(g.page_data), spare(g.page_spare);
  Status last = Status::error(Errc::kCorrupt, "no pdl superblock (not a formatted pdl store)");
  for (uint32_t b = 0; b < kSuperblockBlocks; b++) {
    if (nand.is_bad(b)) continue;
    bool passed;
    PDL_TRY(read_copy(nand, b, data, spare, &passed));
    if (!passed) continue;
    last = decode(data, g, resolve, sb);
    if (last.is_ok()) return last;
  }
  return last;
}

}  // namespace pdl
