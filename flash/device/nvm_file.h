// nvm_file.h — the NVM beside a chip kept in a file of its own (URI key nvm_path=PATH),
// mapped through libpmem: real persistent memory when the file is on a DAX file system
// (pmem_is_pmem), an ordinary file otherwise (libpmem then persists with msync).
//
// Layout (docs/format.md, "The NVM file"): a 4 KiB header — magic, version, the NVM's size,
// the identity of the store that owns it (16 bytes) and that store's path when it was made,
// CRC-32C — then the NVM's bytes. The file is exactly 4096 + nvm_bytes long.
//
// Invariants:
//   * never a wrong NVM: opening checks the header, the size and the owner, and any mismatch
//     is a clear error naming the file and the cause (kNotFound: missing; kCorrupt: garbage
//     or a wrong length; kInvalidArgument: another store's file or another size);
//   * locked (flock) while open, exclusively for a writer and shared for readers, as images
//     are: a second writer gets kBusy;
//   * each write stores every 8-byte word it touches with one aligned 8-byte store (a word
//     partly covered is read, merged and stored whole), then persists the range: the host
//     process dying mid-write leaves whole words only — new ones then old ones, in order;
//     after the write returns, the bytes are persistent (pmem_persist on pmem; pmem_msync
//     otherwise, so an OS crash loses nothing written before).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "flash/device/nvm_media.h"

namespace pdl::detail {

// Who owns an NVM file: the image's NVM identity (a random id in its header) or, on MTD, one
// derived from the device; `name` (the owner's path) is only for messages.
struct NvmOwner {
  std::array<uint8_t, 16> id{};
  std::string name;
};

// Make `path` a fresh NVM file of `bytes` zero bytes owned by `owner` and open it. An
// existing file is replaced only if it is an NVM file owned by owner.id or by `replaceable`
// (the store being reformatted), or with `force`; otherwise kExists naming what it is.
Status create_nvm_file(const std::string& path, uint64_t bytes, const NvmOwner& owner,
                       const std::array<uint8_t, 16>* replaceable, bool force,
                       std::unique_ptr<NvmMedia>* out);

// Open the NVM file `path` of an existing store: owned by owner.id, holding `bytes` of NVM
// (0: the size its header gives, which the file's length must match).
Status open_nvm_file(const std::string& path, uint64_t bytes, const NvmOwner& owner,
                     bool read_only, std::unique_ptr<NvmMedia>* out);

// A fresh random identity (for a new image's NVM).
std::array<uint8_t, 16> new_nvm_id();

}  // namespace pdl::detail
