// mount_expect.cc — the expected contents file of pdl-bench --exp mount, and the check of a
// mounted store against it (mount_expect.h).
#include "bench/mount_expect.h"

#include <algorithm>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <memory>
#include <random>

#include "flash/common/crc32c.h"

namespace pdl::bench {
namespace {

constexpr char kMagic[8] = {'P', 'D', 'L', 'M', 'E', 'X', 'P', '1'};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

Status io_error(const std::string& path, const char* what) {
  return Status::error(Errc::kIoError, path + ": cannot " + what + ": " + std::strerror(errno));
}

}  // namespace

Status MountExpect::save(const std::string& path) const {
  File f(std::fopen(path.c_str(), "wb"));
  if (!f) return io_error(path, "create");
  const uint32_t written = uint32_t(acked.size());
  const uint64_t n = maybe.size();
  bool ok = std::fwrite(kMagic, 1, sizeof kMagic, f.get()) == sizeof kMagic &&
            std::fwrite(&written, 4, 1, f.get()) == 1 &&
            std::fwrite(&logical_pages, 4, 1, f.get()) == 1 &&
            std::fwrite(acked.data(), 4, acked.size(), f.get()) == acked.size() &&
            std::fwrite(&n, 8, 1, f.get()) == 1;
  for (const auto& [l, c] : maybe)
    ok = ok && std::fwrite(&l, 4, 1, f.get()) == 1 && std::fwrite(&c, 4, 1, f.get()) == 1;
  if (!ok || std::fflush(f.get()) != 0) return io_error(path, "write");
  return Status::ok();
}

Status MountExpect::load(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return io_error(path, "open");
  char magic[8];
  uint32_t written = 0;
  uint64_t n = 0;
  if (std::fread(magic, 1, 8, f.get()) != 8 || std::memcmp(magic, kMagic, 8) != 0 ||
      std::fread(&written, 4, 1, f.get()) != 1 || std::fread(&logical_pages, 4, 1, f.get()) != 1 ||
      written > logical_pages)
    return Status::error(Errc::kCorrupt, path + ": not an expected-contents file of pdl-bench");
  acked.resize(written);
  if (std::fread(acked.data(), 4, written, f.get()) != written ||
      std::fread(&n, 8, 1, f.get()) != 1 || n > uint64_t(1) << 32)
    return Status::error(Errc::kCorrupt, path + ": truncated");
  maybe.resize(n);
  for (auto& [l, c] : maybe)
    if (std::fread(&l, 4, 1, f.get()) != 1 || std::fread(&c, 4, 1, f.get()) != 1 ||
        l >= written)
      return Status::error(Errc::kCorrupt, path + ": truncated or an lpn out of range");
  return Status::ok();
}

Status verify_mount(PageStore& store, const MountExpect& expect, uint64_t sample, uint64_t seed,
                    uint64_t* pages) {
  *pages = 0;
  if (store.logical_pages() != expect.logical_pages)
    return Status::error(Errc::kCorrupt, "the mounted store has " +
                                             std::to_string(store.logical_pages()) +
                                             " logical pages, " +
                                             std::to_string(expect.logical_pages) + " expected");
  std::vector<std::pair<uint32_t, uint32_t>> maybe = expect.maybe;
  std::sort(maybe.begin(), maybe.end());
  std::vector<uint8_t> page(store.page_size());
  uint64_t bad = 0;
  std::string first;
  auto wrong = [&](uint32_t l, const std::string& why) {
    if (bad++ == 0) first = "lpn " + std::to_string(l) + " " + why;
  };
  const uint64_t written = expect.acked.size();
  std::vector<uint8_t> pick;  // with a sample: the written lpns to read
  if (sample > 0 && sample < written) {
    pick.assign(written, 0);
    std::mt19937_64 rng(seed);
    for (uint64_t k = 0; k < sample; k++) pick[rng() % written] = 1;
    for (const auto& [l, c] : maybe) pick[l] = 1;
  }
  for (uint32_t l = 0; l < expect.logical_pages; l++) {
    if (l < written && !pick.empty() && !pick[l]) continue;
    if (l >= written) {
      if (store.is_mapped(l)) wrong(l, "is mapped but was never written");
      continue;
    }
    PDL_TRY(store.read(l, page));
    (*pages)++;
    const uint32_t crc = crc32c(page.data(), page.size());
    if (crc == expect.acked[l]) continue;
    auto it = std::lower_bound(maybe.begin(), maybe.end(), std::make_pair(l, uint32_t(0)));
    bool found = false;
    for (; it != maybe.end() && it->first == l; ++it) found = found || it->second == crc;
    if (!found) wrong(l, "reads back neither its acknowledged value nor one written after");
  }
  if (bad)
    return Status::error(Errc::kCorrupt, std::to_string(bad) + " of " +
                                             std::to_string(expect.logical_pages) +
                                             " logical pages wrong after the mount (first: " +
                                             first + ")");
  return Status::ok();
}

}  // namespace pdl::bench
