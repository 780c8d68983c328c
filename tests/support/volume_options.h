// volume_options.h — the VolumeOptions a Volume test starts from: the defaults, except that
// $OWNER_CACHE (a positive number of owner-map pages) sets VolumeOptions::owner_cache_pages.
// tests/meson.build runs the Volume suites and the Volume crash fuzzer a second time with
// OWNER_CACHE=1, so every Volume behaviour is checked with an owner map that lives on flash
// but for one page (a miss on nearly every entry, a write-back on nearly every change).
#pragma once

#include <cstdlib>
#include <string>

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

}  // namespace pdl::test
