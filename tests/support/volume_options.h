// volume_options.h — the VolumeOptions a Volume test starts from: the defaults, except that
// $OWNER_CACHE (a positive number of owner-map pages) sets VolumeOptions::owner_cache_pages.
// tests/meson.build runs the Volume suites and the Volume crash fuzzer a second time with
// OWNER_CACHE=1, so every Volume behaviour is checked with an owner map that lives on flash
// but for one page (a miss on nearly every entry, a write-back on nearly every change).
// fresh_volume: the Volume such a test starts on, formatted on a store formatted on `nand`.
#pragma once

#include <catch2/catch.hpp>

#include <memory>

#include <cstdlib>
#include <string>

#include "flash/image/open_store.h"
#include "flash/volume/volume.h"

namespace pdl::test {

inline VolumeOptions volume_options() {
  VolumeOptions o;
  if (const char* e = std::getenv("OWNER_CACHE")) {
    const unsigned long n = std::strtoul(e, nullptr, 10);
    if (n > 0) o.owner_cache_pages = uint32_t(n);
  }
  return o;
}

// A store of `params` formatted on `nand` in `mode`, and a Volume of `max_files` files formatted
// on it (`main`: the database's name, "" for none). REQUIREs both formats to succeed.
inline std::unique_ptr<Volume> fresh_volume(Nand& nand, const StoreParams& params, CommitMode mode,
                                            uint32_t max_files, const std::string& main,
                                            const VolumeOptions& opts) {
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(nand, params, &store, mode).is_ok());
  std::unique_ptr<Volume> vol;
  REQUIRE(Volume::format(std::move(store), max_files, main, opts, &vol).is_ok());
  return vol;
}

}  // namespace pdl::test
