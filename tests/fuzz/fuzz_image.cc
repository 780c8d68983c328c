// fuzz_image.cc — libFuzzer target: open, mount and recover a hostile pdl image file.
//
// Input: a compact image (compact_image.h; seeds: real images of every method, clean and cut
// mid-write, from fuzz-seeds). Each input is written to an image file in /dev/shm and opened
// as the tools and the VFS open one (open_image: header, superblock, store recovery by scan,
// the Volume's directory and clean-up); then every file is read to its end, the volume
// checked, a new file written and synced, the image closed and mounted again.
// Errors are expected and fine. What must never happen (the fuzzer reports it): a crash, a
// hang, a sanitizer report, an allocation beyond libFuzzer's limit — or wrong bytes: a file
// written and synced through an image that opened must read back the same, and after a clean
// close the image must mount again and still hold it (abort() otherwise).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "flash/image/image.h"
#include "tests/fuzz/compact_image.h"

namespace {

const std::string& image_path() {
  static const std::string p = [] {
    const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/pdl-fuzz-image-" + std::to_string(getpid()) + ".img";
  }();
  return p;
}

std::unique_ptr<pdl::Image> open(const std::string& path) {
  std::unique_ptr<pdl::Image> img;
  if (!pdl::open_image(path, pdl::ImageParams{}, pdl::ImageMode::kOpen, false, "", &img)
           .is_ok())
    return nullptr;
  return img;
}

// Read every file to its end (errors are fine; the bytes are unknown).
void read_all(pdl::Volume& vol) {
  std::vector<uint8_t> buf(4096);
  for (const pdl::FileInfo& f : vol.list()) {
    pdl::Volume::FileId id;
    if (!vol.lookup(f.name, &id).is_ok()) continue;
    for (uint64_t off = 0; off < f.size && off < (4u << 20); off += buf.size()) {
      size_t got = 0;
      if (!vol.read(id, off, buf, &got).is_ok() || got == 0) break;
    }
  }
}

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> p(n);
  for (size_t i = 0; i < n; i++) p[i] = uint8_t(i * 7 + 3);
  return p;
}

// True if "fuzz-probe" reads back as `want` (false if it cannot be read at all).
bool probe_matches(pdl::Volume& vol, const std::vector<uint8_t>& want, bool* readable) {
  *readable = false;
  pdl::Volume::FileId id;
  if (!vol.lookup("fuzz-probe", &id).is_ok()) return true;
  std::vector<uint8_t> got(want.size());
  size_t n = 0;
  if (!vol.read(id, 0, got, &n).is_ok()) return true;
  *readable = true;
  return n == want.size() && got == want;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = image_path();
  if (!pdl::fuzz::expand({data, size}, path)) return 0;
  const std::vector<uint8_t> want = pattern(3000);
  bool synced = false;
  if (auto img = open(path)) {
    pdl::Volume& vol = *img->volume;
    read_all(vol);
    (void)vol.check();
    pdl::Volume::FileId id;
    if (!vol.read_only() && vol.open_file("fuzz-probe", true, &id).is_ok() &&
        vol.write(id, 0, want).is_ok() && vol.sync().is_ok()) {
      synced = true;
      bool readable;
      if (!probe_matches(vol, want, &readable) || !readable) {
        std::fprintf(stderr, "fuzz_image: a synced file reads back wrong\n");
        std::abort();
      }
    }
    synced = img->close().is_ok() && synced;
  }
  if (synced) {  // the image closed cleanly: a remount must show the file
    auto img = open(path);
    bool readable = false;
    if (!img || !probe_matches(*img->volume, want, &readable) || !readable) {
      std::fprintf(stderr, "fuzz_image: a synced file is %s after a clean close and remount\n",
                   !img ? "gone (the image no longer opens)" : readable ? "wrong" : "unreadable");
      std::abort();
    }
    read_all(*img->volume);
  }
  unlink(path.c_str());
  return 0;
}
