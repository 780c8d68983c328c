// mount_expect.h — what a mount must give back, kept in a file between pdl-bench --exp mount
// (which writes the chip) and its --mount-probe child (which mounts it in a fresh process):
// for every logical page, a CRC-32C of its last acknowledged value (written before a sync that
// returned ok), plus the other values it may hold after a power cut (written after that sync:
// the cut may keep any of them or none), and how many logical pages were written at all.
//
// Invariants: acked has one entry per written lpn (0 .. written-1; the store's other logical
// pages were never written and must read as unmapped); an lpn with no alternatives must read
// back exactly acked[lpn]. File layout (host byte order, the file never leaves the machine):
// magic "PDLMEXP1", u32 written, u32 logical pages, u32 acked[written], u64 n, then n pairs
// (u32 lpn, u32 crc).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "flash/common/status.h"
#include "flash/store/page_store.h"

namespace pdl::bench {

struct MountExpect {
  uint32_t logical_pages = 0;
  std::vector<uint32_t> acked;                          // [lpn] for lpn < acked.size()
  std::vector<std::pair<uint32_t, uint32_t>> maybe;     // (lpn, crc) written after the last sync

  // `lpn` is being written with a value of CRC `crc`, not yet synced.
  void written(uint32_t lpn, uint32_t crc) { maybe.emplace_back(lpn, crc); }
  // A sync returned ok: the last value written of every lpn is the acknowledged one.
  void synced() {
    for (const auto& [l, c] : maybe) acked[l] = c;
    maybe.clear();
  }

  Status save(const std::string& path) const;
  Status load(const std::string& path);
};

// Reads every logical page of `store`: an lpn below expect.acked.size() must be mapped and read
// as acked[lpn] or one of its alternatives, every other one unmapped. kCorrupt naming how many
// pages differ (and the first) if any does; *pages the pages read. `sample` > 0 (and below the
// written pages): only that many written lpns, drawn at random with `seed`, plus every lpn
// written after the last sync, are read (a chip larger than the host's page cache, where
// reading every page is a random read of the host's disk each); unwritten lpns are all
// checked unmapped either way (no flash read).
Status verify_mount(PageStore& store, const MountExpect& expect, uint64_t sample, uint64_t seed,
                    uint64_t* pages);

}  // namespace pdl::bench
