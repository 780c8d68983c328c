// fuzz_spare.cc — libFuzzer target: faults in spare areas and superblocks of a real image.
//
// The spare-area fault model (docs/format.md §3, docs/reliability.md): bits of the stored media
// change for good where the chip's ECC does not see it. What pdl promises under it: a read
// returns the bytes last synced, or an error — never other bytes. The harness makes, once per
// process, a real image of each method (512+32-byte pages, 8 per block, 128 KiB: two files
// written, partly overwritten and synced, closed) and remembers the files' bytes. An input
// picks the image (byte 0 mod 5: PDL, OPU, IPU, IPL, PDL with obsolete=spare) and then a list
// of 4-byte edits [kind, a, b, c], applied to the image file:
//   kind % 4 == 0  flip bit c of spare byte b % 32 of the a-th programmed page (byte 0 of a
//                  block's first page is its bad-block marker);
//   kind % 4 == 1  overwrite superblock data byte b % 80 of copy a % 2 with c;
//   kind % 4 == 2  flip bit c of superblock data byte b % 80 of copy a % 2;
//   kind % 4 == 3  flip bit c of spare byte b % 32 of superblock copy a % 2.
// Within the model's budget per page: at most two flipped bits in the CRC-covered header bytes
// [1, 24) and [28, 32) and at most three in each majority-read byte (the obsolete mark at 24,
// the bad-block marker at 0); edits past it are skipped. Superblock edits are unlimited (its
// data CRC and the second copy catch them). Flips of data areas are the chip ECC's to correct
// (emulated_nand.h) and not made here. Oracle: the image opened read-only either
// fails to open, or holds every file, and each read of it is an error or exactly its bytes
// (abort() otherwise). Errors are fine.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "flash/common/le.h"
#include "flash/image/image.h"

namespace {

struct Base {
  std::vector<uint8_t> file;                        // the image file's bytes
  std::map<std::string, std::vector<uint8_t>> files;  // name -> bytes
  uint64_t pages_offset = 0;
  uint32_t page_data = 0, raw = 0, ppb = 0, pages = 0;
  std::vector<uint32_t> programmed;  // ppas of programmed data-block pages
};

std::string scratch(const char* what) {
  const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  return std::string(dir) + "/pdl-fuzz-spare-" + what + "-" + std::to_string(getpid()) + ".img";
}

bool ok(const pdl::Status& st, const char* what) {
  if (st.is_ok()) return true;
  std::fprintf(stderr, "fuzz_spare: building the image: %s: %s\n", what, st.to_string().c_str());
  std::abort();
}

std::vector<uint8_t> bytes(std::mt19937_64& rng, size_t n) {
  std::vector<uint8_t> b(n);
  for (auto& x : b) x = uint8_t(rng());
  return b;
}

Base make_base(int which) {
  static const char* kMethods[] = {"pdl", "opu", "ipu", "ipl", "pdl"};
  Base b;
  pdl::ImageParams ip;
  for (auto [k, v] : {std::pair{"method", kMethods[which]}, {"page", "512"},
                      {"pages_per_block", "8"}, {"size", "128K"}, {"max_files", "4"},
                      {"clock", "logical"}})
    ok(ip.set(k, v), k);
  if (which == 4) ok(ip.set("obsolete", "spare"), "obsolete");
  const std::string path = scratch("base");
  std::unique_ptr<pdl::Image> img;
  ok(pdl::format_image(path, ip, "a.db", true, &img), "format");
  pdl::Volume& vol = *img->volume;
  std::mt19937_64 rng(7 + uint64_t(which));
  pdl::Volume::FileId a, c;
  std::vector<uint8_t> av = bytes(rng, 5000), cv = bytes(rng, 700);
  ok(vol.open_file("a.db", true, &a), "create");
  ok(vol.write(a, 0, av), "write");
  ok(vol.sync(), "sync");
  const std::vector<uint8_t> patch = bytes(rng, 300);
  ok(vol.write(a, 1200, patch), "overwrite");
  std::memcpy(av.data() + 1200, patch.data(), patch.size());
  ok(vol.open_file("c", true, &c), "create");
  ok(vol.write(c, 0, cv), "write");
  ok(vol.sync(), "sync");
  ok(vol.write(a, 4000, std::vector<uint8_t>(50, 0x5A)), "overwrite");
  std::memset(av.data() + 4000, 0x5A, 50);
  ok(vol.sync(), "sync");
  ok(img->close(), "close");
  img.reset();
  b.files["a.db"] = av;
  b.files["c"] = cv;
  std::ifstream f(path, std::ios::binary);
  b.file.assign(std::istreambuf_iterator<char>(f), {});
  unlink(path.c_str());
  const uint8_t* h = b.file.data();
  b.page_data = pdl::le::get32(h + 16);
  b.raw = b.page_data + pdl::le::get32(h + 20);
  b.ppb = pdl::le::get32(h + 24);
  b.pages = b.ppb * pdl::le::get32(h + 28);
  b.pages_offset = pdl::le::get64(h + 56);
  for (uint32_t p = 2 * b.ppb; p < b.pages; p++) {
    const uint64_t off = b.pages_offset + uint64_t(p) * b.raw + b.page_data;
    if (off + 32 > b.file.size()) break;
    bool programmed = false;
    for (int i = 0; i < 32; i++) programmed |= b.file[off + size_t(i)] != 0;  // stored inverted
    if (programmed) b.programmed.push_back(p);
  }
  return b;
}

const Base& base(int which) {
  static std::map<int, Base> bases;
  auto it = bases.find(which);
  if (it == bases.end()) it = bases.emplace(which, make_base(which)).first;
  return it->second;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Base& b = base(data[0] % 5);
  std::vector<uint8_t> img = b.file;
  // Flips per (page, budget class): header bytes, obsolete mark, marker.
  std::map<std::pair<uint32_t, int>, int> used;
  auto flip = [&](uint32_t ppa, uint32_t byte, uint32_t bit) {
    const uint64_t off = b.pages_offset + uint64_t(ppa) * b.raw + byte;
    if (off >= img.size()) return;  // an erased hole past the file's end: flip nothing
    img[off] ^= uint8_t(1u << (bit % 8));
  };
  auto spare_flip = [&](uint32_t ppa, uint32_t sbyte, uint32_t bit) {
    const int cls = sbyte == 0 ? 0 : sbyte == 24 ? 1 : (sbyte < 24 || sbyte >= 28) ? 2 : 3;
    const int limit = cls == 2 ? 2 : cls == 3 ? 1000 : 3;
    int& n = used[{ppa, cls}];
    if (n >= limit) return;
    n++;
    flip(ppa, b.page_data + sbyte, bit);
  };
  for (size_t i = 1; i + 4 <= size; i += 4) {
    const uint8_t kind = data[i], a = data[i + 1], x = data[i + 2], c = data[i + 3];
    switch (kind % 4) {
      case 0: {
        if (b.programmed.empty()) break;
        uint32_t ppa = b.programmed[a % b.programmed.size()];
        const uint32_t sbyte = x % 32;
        if (sbyte == 0) ppa -= ppa % b.ppb;  // the block's bad-block marker
        spare_flip(ppa, sbyte, c);
        break;
      }
      case 1: {
        const uint64_t off = b.pages_offset + uint64_t(a % 2) * b.ppb * b.raw + x % 80;
        if (off < img.size()) img[off] = uint8_t(~c);  // stored inverted
        break;
      }
      case 2:
        flip((a % 2) * b.ppb, x % 80, c);
        break;
      default:
        spare_flip((a % 2) * b.ppb, x % 32, c);
        break;
    }
  }
  const std::string path = scratch("input");
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(img.data()), std::streamsize(img.size()));
  }
  std::unique_ptr<pdl::Image> im;
  if (pdl::open_image(path, pdl::ImageParams{}, pdl::ImageMode::kOpen, true, "", &im).is_ok()) {
    pdl::Volume& vol = *im->volume;
    for (const auto& [name, want] : b.files) {
      pdl::Volume::FileId id;
      const pdl::Status st = vol.lookup(name, &id);
      if (!st.is_ok()) {
        std::fprintf(stderr, "fuzz_spare: file %s is missing from an image that opened: %s\n",
                     name.c_str(), st.to_string().c_str());
        std::abort();
      }
      std::vector<uint8_t> got(want.size() + 100);
      size_t n = 0;
      if (!vol.read(id, 0, got, &n).is_ok()) continue;  // an error: fine
      if (n != want.size() || std::memcmp(got.data(), want.data(), n) != 0) {
        std::fprintf(stderr, "fuzz_spare: file %s reads back other bytes (%zu of %zu): %s\n",
                     name.c_str(), n, want.size(), path.c_str());
        std::abort();
      }
    }
  }
  im.reset();
  unlink(path.c_str());
  return 0;
}
