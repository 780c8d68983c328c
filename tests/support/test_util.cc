// test_util.cc — shared test helpers: seeds, random pages, small chips, temporary paths, files.
#include "tests/support/test_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>

#include <catch2/catch.hpp>

#include "flash/common/scratch_dir.h"
#include "flash/device/mtd_nand.h"

namespace pdl::test {
namespace {

constexpr uint64_t kDefaultSeed = 0x5EED0000000000C1ull;

// Removes every directory made by temp_path() when the process exits normally.
struct TempDirs {
  std::mutex mu;
  std::vector<std::string> dirs;
  ~TempDirs() {
    const char* keep = std::getenv("PDL_KEEP_TEMP");
    if (keep && *keep && *keep != '0') return;
    std::error_code ec;
    for (const auto& d : dirs) std::filesystem::remove_all(d, ec);
  }
};
TempDirs& temp_dirs() {
  static TempDirs t;
  return t;
}

}  // namespace

}  // namespace pdl::test

// Defined by the sanitizer runtimes only (weak: null in a plain process).
extern "C" void __asan_init() __attribute__((weak));
extern "C" void __tsan_init() __attribute__((weak));

namespace pdl::test {

bool sanitizer_shadow() { return __asan_init != nullptr || __tsan_init != nullptr; }

uint64_t test_seed() {
  static const uint64_t seed = [] {
    uint64_t s = kDefaultSeed;
    const char* env = std::getenv("PDL_TEST_SEED");
    if (env && *env) s = std::strtoull(env, nullptr, 0);
    return s;
  }();
  static bool reported = false;
  if (!reported) {
    reported = true;
    WARN("test seed " << seed << " (set PDL_TEST_SEED=" << seed << " to reproduce)");
  }
  return seed;
}

std::mt19937_64 seeded_rng(uint64_t salt) {
  // splitmix64 of seed ^ salt, so nearby salts give unrelated streams.
  uint64_t z = test_seed() ^ (salt * 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return std::mt19937_64(z ^ (z >> 31));
}

std::vector<uint8_t> random_page(std::mt19937_64& rng, size_t n) {
  std::vector<uint8_t> v(n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t r = rng();
    for (int k = 0; k < 8; k++) v[i + size_t(k)] = uint8_t(r >> (8 * k));
  }
  if (i < n) {
    const uint64_t r = rng();
    for (int k = 0; i < n; i++, k++) v[i] = uint8_t(r >> (8 * k));
  }
  return v;
}

std::vector<uint8_t> next_version(std::mt19937_64& rng, const std::vector<uint8_t>* old,
                                  size_t n) {
  if (!old || rng() % 4 == 0) return random_page(rng, n);
  std::vector<uint8_t> p = *old;
  for (int k = 0; k < 3; k++) {
    const size_t at = rng() % (p.size() - 16);
    for (size_t i = 0; i < 16; i++) p[at + i] = uint8_t(rng());
  }
  return p;
}

Geometry geometry(uint32_t page_data, uint32_t page_spare, uint32_t pages_per_block,
                  uint32_t blocks) {
  Geometry g;
  g.page_data = page_data;
  g.page_spare = page_spare;
  g.pages_per_block = pages_per_block;
  g.blocks = blocks;
  return g;
}

Geometry small_geometry(uint32_t blocks) {
  Geometry g;
  g.page_data = 512;
  g.page_spare = 32;
  g.pages_per_block = 4;
  g.blocks = blocks;
  return g.resolved();
}

static std::unique_ptr<MtdNand> open_test_mtd(const char* dev) {
  std::unique_ptr<MtdNand> nand;
  const Status st = MtdNand::open(dev, MtdOptions{}, &nand);
  INFO("PDL_TEST_MTD=" << dev << ": " << st.to_string());
  REQUIRE(st.is_ok());
  return nand;
}

std::optional<Geometry> mtd_test_geometry(uint32_t blocks) {
  const char* dev = std::getenv("PDL_TEST_MTD");
  if (!dev || !*dev) return std::nullopt;
  Geometry g = open_test_mtd(dev)->geometry();
  g.blocks = blocks;
  return g;
}

std::unique_ptr<Nand> make_test_nand(const Geometry& g) {
  const char* dev = std::getenv("PDL_TEST_MTD");
  if (!dev || !*dev) return make_ram_nand(g);
  auto nand = open_test_mtd(dev);
  REQUIRE(nand->limit_blocks(g.blocks));
  REQUIRE(nand->geometry().page_data == g.page_data);
  REQUIRE(nand->geometry().pages_per_block == g.pages_per_block);
  return nand;
}

std::unique_ptr<EmulatedNand> make_ram_nand(const Geometry& g) {
  std::unique_ptr<EmulatedNand> nand;
  const Status st = EmulatedNand::create_ram(g, &nand);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  REQUIRE(nand != nullptr);
  return nand;
}

std::string temp_path(const char* stem) {
  // Under /dev/shm unless TMPDIR names a place: images fsync on every commit, which on a disk
  // was most of the wall time of the crash campaigns.
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = (tmp && *tmp ? std::string(tmp) : default_scratch_root()) + "/pdl-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const char* dir = mkdtemp(buf.data());
  INFO("mkdtemp " << tmpl);
  REQUIRE(dir != nullptr);
  {
    TempDirs& t = temp_dirs();
    std::lock_guard<std::mutex> lock(t.mu);
    t.dirs.emplace_back(dir);
  }
  return std::string(dir) + "/" + stem;
}

void remove_temp(const std::string& path) {
  const char* keep = std::getenv("PDL_KEEP_TEMP");
  if (keep && *keep && *keep != '0') return;
  const std::string dir = std::filesystem::path(path).parent_path().string();
  TempDirs& t = temp_dirs();
  std::lock_guard<std::mutex> lock(t.mu);
  const auto it = std::find(t.dirs.begin(), t.dirs.end(), dir);
  if (it == t.dirs.end()) return;  // not one of temp_path()'s
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  t.dirs.erase(it);
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void put_file(const std::string& path, const std::vector<uint8_t>& b, uint64_t off) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(pwrite(fd, b.data(), b.size(), off_t(off)) == ssize_t(b.size()));
  close(fd);
}

}  // namespace pdl::test
