// wall_clock.h — host (wall) time for the benchmarks' progress lines and wall-time fields.
// Simulated flash time comes from the Nand's counters, never from here.
#pragma once

#include <chrono>

namespace pdl::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace pdl::bench
