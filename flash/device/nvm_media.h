// nvm_media.h — the stored bytes of the NVM beside a chip (Geometry::nvm_bytes): in memory
// (RAM chips, tests) or persistent (an image file's NVM area, a companion file, or real
// persistent memory through libpmem).
//
// No timing, counting or fault model here: the device that owns the media (EmulatedNand,
// MtdNand) checks ranges, counts each access (CountingNand::count_nvm) and, for the emulator,
// decides what a power cut leaves. Invariant: a fresh media reads as zero bytes; write() of n
// bytes at off has reached the media when it returns (the image file's page cache: durable
// against the host process dying; flush() makes it durable against the host OS crashing, as
// for the pages. libpmem's file: persisted by write() itself — pmem_persist on real persistent
// memory, msync on an ordinary file).
// Tearing when the host process dies mid-write: the image file's NVM is written with one
// pwrite, which the kernel stops, if at all, only at a host page boundary (4 KiB, a multiple of
// the 8-byte word); libpmem's is stored word by word with aligned 8-byte stores, so only whole
// words are ever torn (docs/reliability.md, "The NVM").
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "flash/common/status.h"

namespace pdl::detail {

class NvmMedia {
 public:
  virtual ~NvmMedia() = default;
  virtual uint64_t size() const = 0;
  virtual Status read(uint64_t off, std::span<uint8_t> out) = 0;
  virtual Status write(uint64_t off, std::span<const uint8_t> in) = 0;
  // What holds the bytes, for reports: "RAM", "image file", "pmem /mnt/pmem/x (DAX)".
  virtual std::string describe() const = 0;
  // Durable on the host. A no-op where write() already persists (libpmem) and for the image
  // file's NVM area, which the image's own flush (fsync of the whole file) covers.
  virtual Status flush() { return Status::ok(); }
};

// `bytes` of zeroed memory.
std::unique_ptr<NvmMedia> create_ram_nvm(uint64_t bytes);

// The NVM area [off, off + bytes) of an image file open as `fd` (docs/format.md §1; the media
// owns the descriptor — a dup of the image's — and closes it), read with pread and written with
// pwrite; `read_only` refuses writes.
std::unique_ptr<NvmMedia> open_image_nvm(int fd, const std::string& path, uint64_t off,
                                         uint64_t bytes, bool read_only);

}  // namespace pdl::detail
