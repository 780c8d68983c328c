// test_util.h — small helpers shared by every test executable (compiled into each one).
//
// Invariants: helpers that can fail REQUIRE success (they abort the calling test case, never
// return a half-made object); randomness comes only from test_seed(), so a failing run is
// reproduced by setting PDL_TEST_SEED to the seed the run printed; temp_path() never returns
// the same path twice in one process and never points into the source tree.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "flash/device/emulated_nand.h"
#include "flash/device/geometry.h"

namespace pdl::test {

// The run's base seed: $PDL_TEST_SEED (decimal or 0x-hex) if set, else a fixed default.
// The first call in a process reports it once with WARN, so every run's log names its seed.
uint64_t test_seed();

// A generator for one test: test_seed() mixed with `salt` (use a different salt per test so
// tests do not share streams).
std::mt19937_64 seeded_rng(uint64_t salt);

// n uniformly random bytes.
std::vector<uint8_t> random_page(std::mt19937_64& rng, size_t n);

// The next version of a logical page whose current content is `old` (none: never written):
// one time in four, or for a first version, a whole new random page; otherwise three random
// 16-byte runs changed (what differentials and log records are made of).
std::vector<uint8_t> next_version(std::mt19937_64& rng, const std::vector<uint8_t>* old,
                                  size_t n);

// A tiny chip for fast tests: 512+32-byte pages, 4 pages/block, `blocks` blocks, NOP 4,
// default ([PDL] Table 1) timing.
Geometry small_geometry(uint32_t blocks = 16);

// A geometry with the given sizes and default ([PDL] Table 1) timing.
Geometry geometry(uint32_t page_data, uint32_t page_spare, uint32_t pages_per_block,
                  uint32_t blocks);

// A fresh, fully erased RAM chip; REQUIREs that creation succeeds.
std::unique_ptr<EmulatedNand> make_ram_nand(const Geometry& g);

// PDL_TEST_MTD=/dev/mtdN (./run test-mtd, inside QEMU with nandsim): suites written against
// make_test_nand run on that raw NAND instead of the emulator. mtd_test_geometry() is then the
// device's geometry cut to `blocks` blocks (nullopt when the variable is unset);
// make_test_nand(g) opens the device's first g.blocks blocks (g as mtd_test_geometry gave it),
// or makes a RAM chip when the variable is unset. Both REQUIRE that the device opens.
std::optional<Geometry> mtd_test_geometry(uint32_t blocks);
std::unique_ptr<Nand> make_test_nand(const Geometry& g);

// A path "<dir>/<stem>" inside a fresh mkdtemp directory under $TMPDIR (or /dev/shm, or /tmp).
// The file does not exist yet. The directories are removed when the process exits normally (set
// PDL_KEEP_TEMP=1 to keep them); forked children must leave with _exit().
std::string temp_path(const char* stem);
// Removes the directory of `path` (a temp_path()) now, unless PDL_KEEP_TEMP=1.
void remove_temp(const std::string& path);

// The bytes of the file at `path` (none if it cannot be read).
std::vector<uint8_t> file_bytes(const std::string& path);
// Writes `b` at offset `off` of the existing file at `path` (REQUIREs that all of it is written).
void put_file(const std::string& path, const std::vector<uint8_t>& b, uint64_t off);

// A temp_path() whose directory goes when this goes out of scope: for the trials of a crash
// campaign, whose thousands of images would otherwise stay until the process exits — in
// /dev/shm, that is RAM (gigabytes for the exhaustive VFS campaign).
class ScopedTempPath {
 public:
  explicit ScopedTempPath(const char* stem) : path_(temp_path(stem)) {}
  ~ScopedTempPath() { remove_temp(path_); }
  ScopedTempPath(const ScopedTempPath&) = delete;
  ScopedTempPath& operator=(const ScopedTempPath&) = delete;
  const std::string& str() const { return path_; }

 private:
  std::string path_;
};

// PDL_MATRIX_STRIDE=s: a matrix test runs its configuration (or case) i only if
// (i + salt) % s == 0 (the sanitizer run of CI samples the matrices the plain run covers
// whole). A call site passes its own salt (its __LINE__), so that tests over the same matrix
// keep different configurations and together still sanitize every one.
inline bool in_matrix_sample(size_t i, size_t salt = 0) {
  const char* e = std::getenv("PDL_MATRIX_STRIDE");
  const long s = e && *e ? std::atol(e) : 1;
  return s <= 1 || (i + salt) % size_t(s) == 0;
}

// The process runs under AddressSanitizer or ThreadSanitizer (their shadow memory takes most
// of the address space). Asked at run time: the suites' own code is compiled alike in the
// plain and the sanitizer build (-Dsanitize, tests/meson.build), so no macro can say.
bool sanitizer_shadow();

// PDL_CRASH_TRIALS=n (the sanitizer run of CI: 10): a random power-cut campaign written for
// `full` trials per configuration at the plain run's 100 runs full * n / 100 of them, and at
// least `least`.
inline int crash_trials(int full, int least) {
  const char* e = std::getenv("PDL_CRASH_TRIALS");
  if (!e || !*e) return full;
  return std::max(least, int(int64_t(full) * std::atol(e) / 100));
}

// PDL_EXHAUSTIVE_STRIDE=s (the sanitizer run of CI): an exhaustive campaign takes every s-th
// case only.
inline uint64_t exhaustive_stride() {
  const char* e = std::getenv("PDL_EXHAUSTIVE_STRIDE");
  const long s = e && *e ? std::atol(e) : 1;
  return s > 1 ? uint64_t(s) : 1;
}

}  // namespace pdl::test
