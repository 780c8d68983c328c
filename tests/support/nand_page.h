// nand_page.h — one NAND page as the device tests compare it: its data and spare areas
// (header-only, tests only).
#pragma once

#include <cstdint>
#include <vector>

namespace pdl::test {

struct NandPage {
  std::vector<uint8_t> data, spare;
  bool operator==(const NandPage&) const = default;
};

}  // namespace pdl::test
