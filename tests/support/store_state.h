// store_state.h — a PageStore's whole content as the crash and commit tests compare it
// (header-only, tests only): per lpn its page, or nothing if the lpn was never written or is
// trimmed.
//
// read_all reads every logical page; any read result but the page or kNotFound fails the test
// (REQUIRE, naming the lpn and the status).
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <vector>

#include "flash/store/page_store.h"

namespace pdl::test {

using StoreState = std::vector<std::optional<std::vector<uint8_t>>>;

inline StoreState read_all(PageStore& s) {
  StoreState out(s.logical_pages());
  std::vector<uint8_t> got(s.page_size());
  for (Lpn l = 0; l < out.size(); l++) {
    const Status st = s.read(l, got);
    INFO("lpn " << l << ": " << st.to_string());
    REQUIRE((st.is_ok() || st.is(Errc::kNotFound)));
    if (st.is_ok()) out[l] = got;
  }
  return out;
}

}  // namespace pdl::test
