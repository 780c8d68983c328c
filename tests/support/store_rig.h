// store_rig.h — a PageStore on an emulated chip with a model of its pages (header-only, tests
// only).
//
// StoreRig holds the chip, the store over it (destroyed before the chip), what every logical
// page must read (nullopt: unmapped) and the test's random stream; next_version() draws a
// page's next content from that stream (test_util.h's next_version, from the model's current
// content).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "flash/device/emulated_nand.h"
#include "flash/store/page_store.h"
#include "tests/support/test_util.h"

namespace pdl::test {

struct StoreRig {
  std::unique_ptr<EmulatedNand> nand;
  std::unique_ptr<PageStore> store;
  std::vector<std::optional<std::vector<uint8_t>>> model;
  std::mt19937_64 rng;
};

inline std::vector<uint8_t> next_version(StoreRig& r, Lpn lpn) {
  return next_version(r.rng, r.model[lpn] ? &*r.model[lpn] : nullptr, r.store->page_size());
}

}  // namespace pdl::test
