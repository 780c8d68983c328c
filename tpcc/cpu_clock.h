// cpu_clock.h — host CPU time of this process (user + system), for the benchmarks' CPU figures
// beside their wall-clock ones: clock_gettime(CLOCK_PROCESS_CPUTIME_ID).
//
// The VFS, the Volume, the engines and the emulator start no thread, and SQLite runs its work
// on the caller's, so the difference of two readings around some work is that work's CPU time
// (steadier than wall time on a shared, loaded machine: waiting for a core does not count).
#pragma once

#include <time.h>

namespace pdl::tpcc {

inline double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace pdl::tpcc
