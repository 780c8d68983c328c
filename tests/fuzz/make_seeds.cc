// make_seeds.cc — fuzz-seeds: the seed corpus of the fuzz targets, made from real data.
//
//   fuzz-seeds DIR     writes DIR/fuzz_image/, DIR/fuzz_superblock/, DIR/fuzz_differential/,
//                      DIR/fuzz_spare/
//
// fuzz_image: real images (512+32-byte pages, 8 per block, 128 KiB) of every method holding a
// file written, overwritten in part and synced, plus a file removed — each clean (closed) and
// as a power cut would leave it (copied while unsynced writes had reached the flash), in the
// compact form (compact_image.h), with and without the CRC fix-up flags. fuzz_superblock: the
// formatted superblock of each method (flags 0-3, overlay from byte 8). fuzz_differential:
// records, runs and round trips made by the encoders from random pages, IPL log sectors.
// fuzz_spare: per image kind, no edit, one flip of each kind (a spare header bit, an obsolete
// mark, a bad-block marker, a superblock byte), and random edit lists.
// Deterministic (fixed seeds, logical clock), so CI replays the same corpus every time.
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "flash/common/le.h"
#include "flash/ipl/ipl_sector.h"
#include "flash/codec/differential.h"
#include "flash/pdl/record.h"
#include "flash/store/store_params.h"
#include "flash/image/image.h"
#include "tests/fuzz/compact_image.h"

namespace fs = std::filesystem;

namespace {

bool put(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return bool(f);
}

std::vector<uint8_t> random_bytes(std::mt19937_64& rng, size_t n) {
  std::vector<uint8_t> b(n);
  for (auto& x : b) x = uint8_t(rng());
  return b;
}

bool check(const pdl::Status& st, const char* what) {
  if (st.is_ok()) return true;
  std::fprintf(stderr, "fuzz-seeds: %s: %s\n", what, st.to_string().c_str());
  return false;
}

bool image_seeds(const fs::path& dir, const fs::path& scratch) {
  for (const char* method : {"pdl", "opu", "ipu", "ipl"}) {
    pdl::ImageParams ip;
    for (auto [k, v] : {std::pair{"method", method}, {"page", "512"}, {"pages_per_block", "8"},
                        {"size", "128K"}, {"max_files", "4"}, {"clock", "logical"}})
      if (!check(ip.set(k, v), k)) return false;
    const std::string path = (scratch / (std::string(method) + ".img")).string();
    std::unique_ptr<pdl::Image> img;
    if (!check(pdl::format_image(path, ip, "seed.db", true, &img), "format")) return false;
    pdl::Volume& vol = *img->volume;
    std::mt19937_64 rng(42);
    pdl::Volume::FileId a, b;
    if (!check(vol.open_file("seed.db", true, &a), "create") ||
        !check(vol.write(a, 0, random_bytes(rng, 5000)), "write") || !check(vol.sync(), "sync") ||
        !check(vol.write(a, 1000, random_bytes(rng, 100)), "overwrite") ||
        !check(vol.open_file("gone", true, &b), "create") ||
        !check(vol.write(b, 0, random_bytes(rng, 600)), "write") || !check(vol.sync(), "sync") ||
        !check(vol.remove("gone"), "remove") || !check(vol.sync(), "sync"))
      return false;
    // A power cut's leftovers: unsynced writes that reached the flash, copied as they lie.
    if (!check(vol.write(a, 0, random_bytes(rng, 9000)), "write")) return false;
    const std::string cut = path + ".cut";
    fs::copy_file(path, cut, fs::copy_options::overwrite_existing);
    if (!check(img->close(), "close")) return false;
    img.reset();
    for (const auto& [name, file] : {std::pair{std::string(method), path},
                                     {std::string(method) + "-cut", cut}}) {
      std::vector<uint8_t> c = pdl::fuzz::compact(file);
      if (c.empty()) {
        std::fprintf(stderr, "fuzz-seeds: cannot read back %s\n", file.c_str());
        return false;
      }
      if (!put(dir / name, c)) return false;
      c[0] = pdl::fuzz::kFixHeaderCrc | pdl::fuzz::kFixPageCrcs;
      if (!put(dir / (name + "-fix"), c)) return false;
    }
  }
  return true;
}

bool superblock_seeds(const fs::path& dir, const fs::path& scratch) {
  for (uint8_t m = 0; m < 4; m++) {
    // The superblock as format writes it: fields from byte 8 (version, method, ...).
    pdl::ImageParams ip;
    const char* names[] = {"pdl", "opu", "ipu", "ipl"};
    if (!check(ip.set("method", names[m]), "method") || !check(ip.set("page", "512"), "page") ||
        !check(ip.set("pages_per_block", "8"), "ppb") || !check(ip.set("size", "128K"), "size") ||
        !check(ip.set("max_files", "4"), "max_files"))
      return false;
    const std::string path = (scratch / "sb.img").string();
    std::unique_ptr<pdl::Image> img;
    if (!check(pdl::format_image(path, ip, "", true, &img), "format")) return false;
    std::vector<uint8_t> data(512), spare(32);
    if (!check(img->nand->read(0, data, spare), "read superblock")) return false;
    img.reset();
    std::vector<uint8_t> seed = {m};
    seed.insert(seed.end(), data.begin() + 8, data.begin() + 76);
    if (!put(dir / ("format-" + std::string(names[m])), seed)) return false;
  }
  return true;
}

bool differential_seeds(const fs::path& dir) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 6; i++) {
    const size_t kPage = 2048;
    std::vector<uint8_t> base = random_bytes(rng, kPage), page = base;
    for (int k = 0; k < 1 + i * 3; k++) {
      const size_t off = rng() % kPage, len = 1 + rng() % 40;
      for (size_t j = off; j < std::min(kPage, off + len); j++) page[j] = uint8_t(rng());
    }
    std::vector<uint8_t> runs(kPage);
    const size_t n = pdl::diff_encode(base, page, runs);
    if (n == pdl::kDiffTooBig) continue;
    runs.resize(n);
    // 1: the runs alone.
    std::vector<uint8_t> s1 = {1};
    s1.insert(s1.end(), runs.begin(), runs.end());
    // 0: a differential page holding two records of them, and a tombstone.
    std::vector<uint8_t> s0 = {0};
    for (uint32_t lpn : {3u, 9u}) {
      pdl::RecordView r;
      r.lpn = lpn;
      r.seq = 100 + lpn;
      r.runs = runs;
      std::vector<uint8_t> rec(r.size());
      pdl::record_encode(r, rec.data());
      s0.insert(s0.end(), rec.begin(), rec.end());
    }
    pdl::RecordView t;
    t.lpn = 4;
    t.tombstone = true;
    std::vector<uint8_t> tomb(t.size());
    pdl::record_encode(t, tomb.data());
    s0.insert(s0.end(), tomb.begin(), tomb.end());
    // 2: the pair (first 256 bytes of each, so the halves line up), limit byte last.
    std::vector<uint8_t> s2 = {2};
    s2.insert(s2.end(), base.begin(), base.begin() + 256);
    s2.insert(s2.end(), page.begin(), page.begin() + 256);
    s2.push_back(uint8_t(32 + i * 30));
    // 3: the runs as IPL log records; 4: a log region of sectors carrying them (selector 4:
    // 512-byte sectors, 129: 128-byte ones).
    std::vector<uint8_t> s3 = {3};
    s3.insert(s3.end(), runs.begin(), runs.end());
    auto log_region = [&](uint8_t selector, size_t sector_size) {
      std::vector<uint8_t> s4 = {selector};
      const size_t cap = sector_size - pdl::kSectorHeader;
      const size_t k = std::max<size_t>(1, (n + cap - 1) / cap);
      for (size_t j = 0; j < k && j < 255; j++) {
        pdl::SectorHeader h;
        h.slot = uint16_t(i);
        h.idx = uint8_t(j);
        h.count = uint8_t(k);
        h.seq = 500 + uint64_t(i);
        const size_t from = j * cap, len = std::min(cap, n - std::min(n, from));
        h.len = uint16_t(len);
        std::vector<uint8_t> sector(sector_size);
        pdl::sector_encode(h, std::span(runs).subspan(std::min(n, from), len), sector);
        s4.insert(s4.end(), sector.begin(), sector.end());
      }
      return s4;
    };
    for (const auto& [name, s] :
         {std::pair{"records", s0}, {"runs", s1}, {"pair", s2}, {"log", s3},
          {"sectors", log_region(4, pdl::kLogSector)}, {"sectors128", log_region(129, 128)}})
      if (!put(dir / (std::string(name) + "-" + std::to_string(i)), s)) return false;
  }
  return true;
}

}  // namespace

bool spare_seeds(const fs::path& dir) {
  std::mt19937_64 rng(0x5BA2E);
  int n = 0;
  auto seed = [&](std::vector<uint8_t> in) {
    return put(dir / ("seed-" + std::to_string(n++)), in);
  };
  for (uint8_t image = 0; image < 5; image++) {
    // kind, a, b, c (fuzz_spare.cc): header bit, obsolete mark, marker, superblock byte.
    if (!seed({image}) || !seed({image, 0, 3, 4, 2}) || !seed({image, 0, 5, 24, 0}) ||
        !seed({image, 0, 9, 0, 7}) || !seed({image, 1, 0, 12, 0x42}) ||
        !seed({image, 0, 7, 8, 1, 0, 7, 30, 6}))  // two flips of one header
      return false;
    for (int k = 0; k < 4; k++) {
      std::vector<uint8_t> in = random_bytes(rng, 1 + 4 * (4 + rng() % 16));
      in[0] = image;
      if (!seed(in)) return false;
    }
  }
  return true;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz-seeds DIR\n");
    return 2;
  }
  const fs::path root = argv[1];
  const fs::path scratch = root / ".scratch";
  for (const char* d :
       {"fuzz_image", "fuzz_superblock", "fuzz_differential", "fuzz_spare", ".scratch"})
    fs::create_directories(root / d);
  const bool ok = image_seeds(root / "fuzz_image", scratch) &&
                  superblock_seeds(root / "fuzz_superblock", scratch) &&
                  differential_seeds(root / "fuzz_differential") &&
                  spare_seeds(root / "fuzz_spare");
  fs::remove_all(scratch);
  if (!ok) return 1;
  std::printf("fuzz-seeds: corpus in %s\n", root.c_str());
  return 0;
}
