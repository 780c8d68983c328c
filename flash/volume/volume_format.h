// volume_format.h — the Volume's metadata as it lies in the PageStore's logical pages.
//
// A Volume keeps named files inside one PageStore. Its logical page (lpn) space is split once,
// at format time, into:
//   lpn 0                               volume header (magic, layout, default database name)
//   lpn 1 .. dir_pages                  directory: fixed-size slots, one per file
//   next owner_pages lpns               owner map: for each data lpn, (file id, chunk index)
//   data_first .. data_first+data_lpns  file contents, one chunk (= one logical page) per lpn
// Every structure is little-endian and carries a CRC-32C; byte layouts are in docs/format.md §4.
//
// Why an owner map (lpn -> file, chunk) rather than per-file chunk tables: the PageStore maps
// pages individually, so file contiguity buys nothing, and the owner map changes only when a
// chunk is allocated or freed — never on an overwrite. File ids are never reused while any
// reference to them can survive on flash, so deleting a file needs only its slot cleared: owner
// entries naming an id with no slot are recognisably dead after a crash. Each entry carries the
// generation of its allocation, so of two claims on one chunk the newer is taken.
//
// Unwritten metadata pages read as zeros, and an all-zero slot / owner entry means "empty", so
// a fresh volume writes only its header.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "flash/common/status.h"

namespace pdl {

inline constexpr uint32_t kVolumeVersion = 1;
inline constexpr uint32_t kSlotBytes = 256;
inline constexpr uint32_t kMaxNameBytes = 200;  // longest file name (bytes, no '/', no NUL)
inline constexpr uint32_t kOwnerBytes = 16;
inline constexpr uint32_t kDefaultMaxFiles = 256;

// How the lpn space is divided. Derived from (logical pages, chunk size, max files).
struct VolumeLayout {
  uint32_t chunk = 0;         // bytes per chunk = the store's page size
  uint32_t dir_pages = 0;     // directory lpns, starting at 1
  uint32_t owner_pages = 0;   // owner-map lpns, after the directory
  uint32_t data_first = 0;    // first data lpn
  uint32_t data_lpns = 0;     // data lpns

  uint32_t slots_per_page() const { return chunk / kSlotBytes; }
  uint32_t max_files() const { return dir_pages * slots_per_page(); }
  uint32_t owners_per_page() const { return chunk / kOwnerBytes; }
  uint32_t owner_first() const { return 1 + dir_pages; }
  // Plan a layout; kInvalidArgument if the store is too small to hold metadata and data.
  static Status plan(uint32_t logical_pages, uint32_t chunk, uint32_t max_files,
                     VolumeLayout* out);
};

struct VolumeHeader {
  VolumeLayout layout;
  std::string main_name;  // the database the VFS opens by default ("" = none yet)
};

// One directory slot. id == 0: the slot is empty.
struct Slot {
  uint32_t id = 0;
  uint64_t size = 0;      // exact file size in bytes
  uint64_t version = 0;   // volume-wide change counter when the slot was last written
  uint64_t mtime_ns = 0;  // modification time (ns since the epoch), for FUSE
  std::string name;
};

struct Owner {
  uint32_t id = 0;     // 0: the lpn is free
  uint32_t chunk = 0;  // chunk index within the file
  uint64_t gen = 0;    // volume change counter when the lpn was given to the chunk: of two
                       // claims on one chunk (a release not yet durable, a newer allocation),
                       // the newer wins
};

void encode_header(const VolumeHeader& h, std::span<uint8_t> page);
// kCorrupt (naming what is wrong) unless `page` holds a valid header for a store of
// `logical_pages` pages of `chunk` bytes.
Status decode_header(std::span<const uint8_t> page, uint32_t logical_pages, uint32_t chunk,
                     VolumeHeader* h);

void encode_slot(const Slot& s, uint8_t* at);  // kSlotBytes at `at`
// All-zero bytes decode as an empty slot; kCorrupt on a bad CRC, name or size.
Status decode_slot(const uint8_t* at, Slot* s);

inline void encode_owner(const Owner& o, uint8_t* at);
inline Owner decode_owner(const uint8_t* at);

// A file name the volume accepts: 1..kMaxNameBytes bytes, no '/' or NUL, not "." or "..".
// kInvalidArgument otherwise (message says why; "too long" for the length).
Status check_name(std::string_view name);

}  // namespace pdl

#include "flash/common/le.h"

namespace pdl {
inline void encode_owner(const Owner& o, uint8_t* at) {
  le::put32(at, o.id);
  le::put32(at + 4, o.chunk);
  le::put64(at + 8, o.gen);
}
inline Owner decode_owner(const uint8_t* at) {
  return {le::get32(at), le::get32(at + 4), le::get64(at + 8)};
}
}  // namespace pdl
