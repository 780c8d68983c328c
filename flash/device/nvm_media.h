// nvm_media.h — the stored bytes of the NVM beside a chip (Geometry::nvm_bytes): in memory
// (RAM chips, tests) or persistent (an image file's NVM area, a companion file, or real
// persistent memory through libpmem).
//
// No timing, counting or fault model here: the device that owns the media (EmulatedNand,
// MtdNand) checks ranges, counts each access (CountingNand::count_nvm) and, for the emulator,
// decides what a power cut leaves. Invariant: write() of n bytes at off is durable when it
// returns (flushed to persistence by the media itself); a fresh media reads as zero bytes.
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
};

// `bytes` of zeroed memory.
std::unique_ptr<NvmMedia> create_ram_nvm(uint64_t bytes);

}  // namespace pdl::detail
