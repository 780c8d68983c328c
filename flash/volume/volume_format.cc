// volume_format.cc — encode/decode of the Volume's header, directory slots and owner entries.
#include "flash/volume/volume_format.h"

#include <algorithm>
#include <cstring>

#include "flash/common/crc32c.h"

namespace pdl {

namespace {
constexpr char kMagic[8] = {'P', 'D', 'L', 'V', 'O', 'L', '0', '1'};
constexpr uint32_t kHeaderBytes = 256;
constexpr uint32_t kHeaderCrcAt = kHeaderBytes - 4;
constexpr uint32_t kSlotCrcAt = kSlotBytes - 4;
constexpr uint32_t kSlotNameAt = 40;
static_assert(kSlotNameAt + kMaxNameBytes <= kSlotCrcAt, "slot layout");
constexpr uint32_t kHeaderNameAt = 40;
static_assert(kHeaderNameAt + kMaxNameBytes <= kHeaderCrcAt, "header layout");

Status corrupt(const std::string& m) { return Status::error(Errc::kCorrupt, m); }
}  // namespace

Status VolumeLayout::plan(uint32_t logical_pages, uint32_t chunk, uint32_t max_files,
                          VolumeLayout* out) {
  VolumeLayout l;
  l.chunk = chunk;
  if (chunk < kSlotBytes || chunk % kSlotBytes != 0)
    return Status::error(Errc::kInvalidArgument, "page size " + std::to_string(chunk) +
                                                     " is too small for a volume");
  if (max_files == 0) max_files = kDefaultMaxFiles;
  l.dir_pages = (max_files + l.slots_per_page() - 1) / l.slots_per_page();
  const uint64_t meta = 1 + uint64_t(l.dir_pages);
  // Data lpns d need ceil(d / per_page) owner pages: the largest d with meta + owners + d <= L.
  const uint64_t per = l.owners_per_page();
  const auto too_small = [&] {
    return Status::error(Errc::kInvalidArgument,
                         "store too small for a volume: its " + std::to_string(logical_pages) +
                             " logical pages cannot hold the header, the directory (" +
                             std::to_string(l.dir_pages) + " pages for " +
                             std::to_string(max_files) +
                             " files) and 2 data pages: give a larger size or fewer max_files");
  };
  if (logical_pages <= meta + 1) return too_small();
  uint64_t d = (uint64_t(logical_pages) - meta) * per / (per + 1);
  while (d > 0 && meta + (d + per - 1) / per + d > logical_pages) d--;
  if (d < 2) return too_small();
  l.owner_pages = uint32_t((d + per - 1) / per);
  l.data_first = uint32_t(meta + l.owner_pages);
  l.data_lpns = uint32_t(d);
  *out = l;
  return Status::ok();
}

void encode_header(const VolumeHeader& h, std::span<uint8_t> page) {
  std::fill(page.begin(), page.end(), 0);
  uint8_t* p = page.data();
  std::memcpy(p, kMagic, 8);
  le::put32(p + 8, kVolumeVersion);
  le::put32(p + 12, h.layout.chunk);
  le::put32(p + 16, kSlotBytes);
  le::put32(p + 20, h.layout.dir_pages);
  le::put32(p + 24, h.layout.owner_pages);
  le::put32(p + 28, h.layout.data_first);
  le::put32(p + 32, h.layout.data_lpns);
  le::put16(p + 36, uint16_t(h.main_name.size()));
  std::memcpy(p + kHeaderNameAt, h.main_name.data(), h.main_name.size());
  le::put32(p + kHeaderCrcAt, crc32c(p, kHeaderCrcAt));
}

Status decode_header(std::span<const uint8_t> page, uint32_t logical_pages, uint32_t chunk,
                     VolumeHeader* h) {
  const uint8_t* p = page.data();
  if (page.size() < kHeaderBytes || std::memcmp(p, kMagic, 8) != 0)
    return corrupt("no volume header (the store holds no pdl volume)");
  if (le::get32(p + kHeaderCrcAt) != crc32c(p, kHeaderCrcAt))
    return corrupt("volume header fails its checksum");
  if (le::get32(p + 8) != kVolumeVersion)
    return Status::error(Errc::kUnsupported,
                         "volume format version " + std::to_string(le::get32(p + 8)) +
                             " (this build reads version " + std::to_string(kVolumeVersion) + ")");
  VolumeLayout& l = h->layout;
  l.chunk = le::get32(p + 12);
  l.dir_pages = le::get32(p + 20);
  l.owner_pages = le::get32(p + 24);
  l.data_first = le::get32(p + 28);
  l.data_lpns = le::get32(p + 32);
  const uint32_t name_len = le::get16(p + 36);
  if (l.chunk != chunk || le::get32(p + 16) != kSlotBytes)
    return corrupt("volume header: chunk or slot size disagrees with the store");
  if (l.dir_pages == 0 || l.data_first != 1 + uint64_t(l.dir_pages) + l.owner_pages ||
      uint64_t(l.data_first) + l.data_lpns > logical_pages ||
      uint64_t(l.owner_pages) * l.owners_per_page() < l.data_lpns)
    return corrupt("volume header: layout does not fit the store");
  if (name_len > kMaxNameBytes) return corrupt("volume header: main name too long");
  h->main_name.assign(reinterpret_cast<const char*>(p + kHeaderNameAt), name_len);
  return Status::ok();
}

void encode_slot(const Slot& s, uint8_t* at) {
  std::memset(at, 0, kSlotBytes);
  if (s.id == 0) return;  // an empty slot is all zeros
  le::put32(at, s.id);
  le::put64(at + 8, s.size);
  le::put64(at + 16, s.version);
  le::put64(at + 24, s.mtime_ns);
  le::put16(at + 32, uint16_t(s.name.size()));
  std::memcpy(at + kSlotNameAt, s.name.data(), s.name.size());
  le::put32(at + kSlotCrcAt, crc32c(at, kSlotCrcAt));
}

Status decode_slot(const uint8_t* at, Slot* s) {
  *s = Slot{};
  if (std::all_of(at, at + kSlotBytes, [](uint8_t b) { return b == 0; })) return Status::ok();
  if (le::get32(at + kSlotCrcAt) != crc32c(at, kSlotCrcAt))
    return corrupt("directory slot fails its checksum");
  s->id = le::get32(at);
  s->size = le::get64(at + 8);
  s->version = le::get64(at + 16);
  s->mtime_ns = le::get64(at + 24);
  const uint32_t n = le::get16(at + 32);
  if (s->id == 0 || s->id == 0xFFFFFFFFu || n == 0 || n > kMaxNameBytes)
    return corrupt("directory slot malformed");
  s->name.assign(reinterpret_cast<const char*>(at + kSlotNameAt), n);
  Status st = check_name(s->name);
  if (!st.is_ok()) return corrupt("directory slot: bad name: " + std::string(st.message()));
  return Status::ok();
}

Status check_name(std::string_view name) {
  auto bad = [](const std::string& m) { return Status::error(Errc::kInvalidArgument, m); };
  if (name.empty()) return bad("empty file name");
  if (name.size() > kMaxNameBytes)
    return Status::error(Errc::kNameTooLong, "file name too long (" +
                                                 std::to_string(name.size()) + " bytes; at most " +
                                                 std::to_string(kMaxNameBytes) + ")");
  if (name == "." || name == "..") return bad("file name '" + std::string(name) + "' reserved");
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos)
    return bad("file name contains '/' or NUL");
  return Status::ok();
}

}  // namespace pdl
