// test_nvm.cc — the NVM beside an emulated chip (Nand::nvm_read / nvm_write), in each of its
// places: RAM, an image file's NVM area (image format version 3), and an NVM file of its own
// through libpmem (nvm_path=). Fresh NVM reads as zeros; writes read back and persist across
// close and reopen; ranges outside it and writes to read-only images are refused; counters and
// simulated time follow Geometry's cost formula exactly; a power cut tears a write only in
// whole 8-byte words; clone() copies it; version-2 images still open; a wrong NVM file
// (missing, garbage, wrong size, another store's) is refused with the cause named; a host
// process killed (SIGKILL) in the middle of NVM writes leaves a prefix of whole words.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/device/emulated_nand.h"
#include "tests/support/require_status.h"
#include "tests/support/test_util.h"

using pdl::EmulatedNand;
using pdl::Errc;
using pdl::Geometry;
using pdl::NvmPlacement;
using Bytes = std::vector<uint8_t>;
using pdl::test::file_bytes;
using pdl::test::put_file;

namespace {

enum class Place { kRam, kImage, kFile };

const char* place_name(Place p) {
  return p == Place::kRam ? "RAM" : p == Place::kImage ? "image file" : "NVM file";
}

Geometry nvm_geometry(uint32_t nvm_bytes = 64 << 10) {
  Geometry g = pdl::test::small_geometry(16);
  g.nvm_bytes = nvm_bytes;
  return g.resolved();
}

// A chip with NVM in place `p`; its image and NVM file (if any) in a fresh temp directory.
struct Chip {
  Place place;
  std::string image, nvm_file;
  std::unique_ptr<EmulatedNand> nand;

  Chip(Place p, const Geometry& g) : place(p) {
    if (p == Place::kRam) {
      REQUIRE_OK(EmulatedNand::create_ram(g, &nand));
      return;
    }
    image = pdl::test::temp_path("nvm.img");
    NvmPlacement where;
    if (p == Place::kFile) where.path = nvm_file = image + ".nvm";
    REQUIRE_OK(EmulatedNand::create_file(image, g, &nand, where));
  }
  ~Chip() {
    nand.reset();
    if (!image.empty()) pdl::test::remove_temp(image);
  }
  void reopen(bool read_only = false) {
    nand.reset();
    REQUIRE_OK(EmulatedNand::open_file(image, &nand, read_only, nvm_file));
  }
};

Bytes pattern(size_t n, uint8_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; i++) b[i] = uint8_t(seed + i * 7 + (i >> 8));
  return b;
}

Bytes nvm(pdl::Nand& n, uint64_t off, size_t len) {
  Bytes b(len);
  REQUIRE_OK(n.nvm_read(off, b));
  return b;
}

}  // namespace

TEST_CASE("fresh NVM reads as zeros and reads back what was written, in every place",
          "[nvm]") {
  const Geometry g = nvm_geometry();
  for (Place p : {Place::kRam, Place::kImage, Place::kFile}) {
    INFO(place_name(p));
    Chip c(p, g);
    CHECK(nvm(*c.nand, 0, g.nvm_bytes) == Bytes(g.nvm_bytes, 0));
    const Bytes a = pattern(1000, 3), b = pattern(13, 99);
    REQUIRE_OK(c.nand->nvm_write(4096 + 5, a));  // unaligned start and end
    REQUIRE_OK(c.nand->nvm_write(g.nvm_bytes - 13, b));
    CHECK(nvm(*c.nand, 4096 + 5, a.size()) == a);
    CHECK(nvm(*c.nand, g.nvm_bytes - 13, b.size()) == b);
    CHECK(nvm(*c.nand, 4096, 5) == Bytes(5, 0));  // neighbours untouched
    CHECK(nvm(*c.nand, 4096 + 5 + a.size(), 3) == Bytes(3, 0));
    CHECK(!c.nand->nvm_place().empty());
  }
}

TEST_CASE("NVM persists across close and reopen of an image", "[nvm][image]") {
  const Geometry g = nvm_geometry(8192);
  for (Place p : {Place::kImage, Place::kFile}) {
    INFO(place_name(p));
    Chip c(p, g);
    const Bytes a = pattern(777, 11);
    REQUIRE_OK(c.nand->nvm_write(123, a));
    REQUIRE_OK(c.nand->flush());
    c.reopen();
    CHECK(c.nand->geometry().nvm_bytes == 8192);
    CHECK(c.nand->geometry().nvm_write_ns == g.nvm_write_ns);
    CHECK(nvm(*c.nand, 123, a.size()) == a);
    CHECK(nvm(*c.nand, 0, 123) == Bytes(123, 0));
    c.reopen(/*read_only=*/true);
    CHECK(nvm(*c.nand, 123, a.size()) == a);
  }
}

TEST_CASE("NVM ranges outside the device are refused; a chip without NVM has none",
          "[nvm]") {
  const Geometry g = nvm_geometry(4096);
  for (Place p : {Place::kRam, Place::kImage, Place::kFile}) {
    INFO(place_name(p));
    Chip c(p, g);
    Bytes b(16, 1);
    CHECK(c.nand->nvm_write(4096 - 8, b).is(Errc::kNandRule));
    CHECK(c.nand->nvm_read(4096, std::span<uint8_t>(b.data(), 1)).is(Errc::kNandRule));
    CHECK(c.nand->nvm_read(~uint64_t(0) - 4, b).is(Errc::kNandRule));  // no wrap-around
    CHECK(nvm(*c.nand, 4096 - 16, 16) == Bytes(16, 0));
  }
  auto plain = pdl::test::make_ram_nand(pdl::test::small_geometry(16));
  Bytes b(8);
  CHECK(plain->nvm_write(0, b).is(Errc::kUnsupported));
  CHECK(plain->nvm_place().empty());
}

TEST_CASE("a read-only image refuses NVM writes and changes nothing", "[nvm][image]") {
  const Geometry g = nvm_geometry(4096);
  for (Place p : {Place::kImage, Place::kFile}) {
    INFO(place_name(p));
    Chip c(p, g);
    REQUIRE_OK(c.nand->nvm_write(0, pattern(64, 5)));
    c.reopen(/*read_only=*/true);
    CHECK(c.nand->nvm_write(0, Bytes(64, 0)).is(Errc::kReadOnly));
    CHECK(nvm(*c.nand, 0, 64) == pattern(64, 5));
    CHECK(c.nand->counters().nvm_writes == 0);
  }
}

TEST_CASE("NVM counters and simulated time follow Geometry's cost formula exactly",
          "[nvm]") {
  const Geometry g = nvm_geometry(4096);
  CHECK(g.nvm_write_cost_ns(32) == 7100);
  CHECK(g.nvm_read_cost_ns(32) == 206);
  CHECK(g.nvm_write_cost_ns(33) == 78 + 2 * (7100 - 78));
  for (Place p : {Place::kRam, Place::kImage, Place::kFile}) {
    INFO(place_name(p));
    Chip c(p, g);
    c.nand->reset_counters();
    uint64_t ns = 0, written = 0, read = 0;
    // Many small writes: sim_us must be the whole microseconds of the exact total, not a sum
    // of rounded ones (a 1-byte write costs 7100 ns: 7.1 µs).
    for (uint32_t i = 0; i < 1000; i++) {
      const size_t n = 1 + i % 40;
      REQUIRE_OK(c.nand->nvm_write((i * 8) % 4000, pattern(n, uint8_t(i))));
      ns += g.nvm_write_cost_ns(n);
      written += n;
      if (i % 3 == 0) {
        Bytes r(n);
        REQUIRE_OK(c.nand->nvm_read((i * 8) % 4000, r));
        ns += g.nvm_read_cost_ns(n);
        read += n;
      }
    }
    const pdl::NandCounters& k = c.nand->counters();
    CHECK(k.nvm_writes == 1000);
    CHECK(k.nvm_reads == 334);
    CHECK(k.nvm_bytes_written == written);
    CHECK(k.nvm_bytes_read == read);
    CHECK(k.nvm_ns == ns);
    CHECK(k.sim_us == ns / 1000);
    CHECK(k.programs == 0);
  }
}

TEST_CASE("a power cut tears an NVM write only in whole 8-byte words", "[nvm][power]") {
  const Geometry g = nvm_geometry(4096);
  const Bytes old_bytes = pattern(4096, 1), new_bytes = pattern(4096, 200);
  for (Place p : {Place::kRam, Place::kImage, Place::kFile}) {
    for (pdl::Tear tear : {pdl::Tear::kPrefix, pdl::Tear::kRandomBits, pdl::Tear::kNone}) {
      for (uint64_t seed = 1; seed <= 20; seed++) {
        INFO(place_name(p) << " tear " << int(tear) << " seed " << seed);
        Chip c(p, g);
        REQUIRE_OK(c.nand->nvm_write(0, old_bytes));
        const uint64_t off = 13, len = 1000;  // partial words at both ends
        c.nand->cut_power_after(0, tear, seed);
        CHECK(c.nand->nvm_write(off, std::span(new_bytes).subspan(off, len)).is(Errc::kPowerCut));
        c.nand->restore_power();
        const Bytes got = nvm(*c.nand, 0, 4096);
        bool prefix_over = false, any_new = false, any_old = false;
        for (uint64_t w = 0; w < 4096 / 8; w++) {
          const uint64_t lo = std::max(off, w * 8), hi = std::min(off + len, w * 8 + 8);
          if (lo >= hi) {  // outside the write: untouched
            REQUIRE(std::equal(got.begin() + long(w * 8), got.begin() + long(w * 8 + 8),
                               old_bytes.begin() + long(w * 8)));
            continue;
          }
          const bool is_new = std::equal(got.begin() + long(lo), got.begin() + long(hi),
                                         new_bytes.begin() + long(lo));
          const bool is_old = std::equal(got.begin() + long(lo), got.begin() + long(hi),
                                         old_bytes.begin() + long(lo));
          REQUIRE((is_new || is_old));  // a whole word, never a part of one
          if (is_new && !is_old) any_new = true;
          if (is_old && !is_new) any_old = true;
          if (tear == pdl::Tear::kPrefix) {
            if (!is_new) prefix_over = true;
            REQUIRE(!(prefix_over && is_new && !is_old));  // new words form a prefix
          }
        }
        if (tear == pdl::Tear::kNone) CHECK_FALSE(any_new);
        (void)any_old;
      }
    }
  }
}

TEST_CASE("across many power-cut trials both torn outcomes occur", "[nvm][power]") {
  // The check above could pass with a tear that never writes; this one cannot.
  const Geometry g = nvm_geometry(4096);
  int partial = 0;
  for (uint64_t seed = 1; seed <= 40; seed++) {
    Chip c(Place::kRam, g);
    c.nand->cut_power_after(0, pdl::Tear::kRandomBits, seed);
    CHECK(c.nand->nvm_write(0, Bytes(256, 0xAB)).is(Errc::kPowerCut));
    c.nand->restore_power();
    const Bytes got = nvm(*c.nand, 0, 256);
    const auto set = std::count(got.begin(), got.end(), 0xAB);
    if (set > 0 && set < 256) partial++;
  }
  CHECK(partial > 30);
}

TEST_CASE("clone copies the NVM of an image", "[nvm]") {
  const Geometry g = nvm_geometry(8192);
  for (Place p : {Place::kImage, Place::kFile}) {
    INFO(place_name(p));
    Chip c(p, g);
    REQUIRE_OK(c.nand->nvm_write(100, pattern(3000, 42)));
    auto copy = c.nand->clone();
    REQUIRE(copy);
    CHECK(nvm(*copy, 0, 8192) == nvm(*c.nand, 0, 8192));
    CHECK(copy->nvm_place() == "RAM");
    REQUIRE_OK(copy->nvm_write(100, Bytes(8, 0)));  // its own bytes
    CHECK(nvm(*c.nand, 100, 3000) == pattern(3000, 42));
  }
}

TEST_CASE("an image with NVM is version 3 with its NVM area where docs/format.md says",
          "[nvm][image]") {
  const Geometry g = nvm_geometry(8192);
  Chip c(Place::kImage, g);
  REQUIRE_OK(c.nand->nvm_write(40, pattern(16, 77)));
  REQUIRE_OK(c.nand->flush());
  const Bytes f = file_bytes(c.image);
  CHECK(pdl::le::get32(f.data() + 8) == 3);
  CHECK(pdl::le::get32(f.data() + 72) == 8192);
  CHECK(pdl::le::get32(f.data() + 76) == 78);
  CHECK(pdl::le::get32(f.data() + 80) == 206);
  CHECK(pdl::le::get32(f.data() + 84) == 7100);
  const uint64_t nvm_off = pdl::le::get64(f.data() + 88);
  const uint64_t pages_off = pdl::le::get64(f.data() + 56);
  CHECK(nvm_off % 4096 == 0);
  CHECK(nvm_off > pages_off + g.total_pages() * g.raw_page());
  REQUIRE(f.size() == nvm_off + 8192);
  CHECK(Bytes(f.begin() + long(nvm_off + 40), f.begin() + long(nvm_off + 56)) == pattern(16, 77));
  // The NVM fields have their own checksum: a flipped byte there is refused.
  c.nand.reset();
  put_file(c.image, Bytes{uint8_t(f[73] ^ 1)}, 73);
  std::unique_ptr<EmulatedNand> n;
  const pdl::Status st = EmulatedNand::open_file(c.image, &n);
  CHECK(st.is(Errc::kCorrupt));
  CHECK_THAT(std::string(st.message()), Catch::Contains("NVM fields"));
}

TEST_CASE("an image without NVM stays version 2; a newer version is refused clearly",
          "[nvm][image]") {
  const std::string path = pdl::test::temp_path("v2.img");
  {
    std::unique_ptr<EmulatedNand> n;
    REQUIRE_OK(EmulatedNand::create_file(path, pdl::test::small_geometry(16), &n));
    Bytes d(512, 0x5A);
    REQUIRE_OK(n->program(0, d, {}));
  }
  Bytes f = file_bytes(path);
  CHECK(pdl::le::get32(f.data() + 8) == 2);
  {
    std::unique_ptr<EmulatedNand> n;
    REQUIRE_OK(EmulatedNand::open_file(path, &n));
    CHECK(n->geometry().nvm_bytes == 0);
    Bytes d(512);
    REQUIRE_OK(n->read(0, d, {}));
    CHECK(d == Bytes(512, 0x5A));
  }
  CHECK(pdl::le::get32(file_bytes(path).data() + 8) == 2);  // a writable open keeps it 2
  pdl::le::put32(f.data() + 8, 4);
  pdl::le::put32(f.data() + 64, pdl::crc32c(f.data(), 64));
  put_file(path, Bytes(f.begin(), f.begin() + 68), 0);
  std::unique_ptr<EmulatedNand> n;
  const pdl::Status st = EmulatedNand::open_file(path, &n);
  CHECK(st.is(Errc::kUnsupported));
  CHECK_THAT(std::string(st.message()), Catch::Contains("version 4"));
  pdl::test::remove_temp(path);
}

TEST_CASE("an NVM file that is missing, garbage, the wrong size or another store's is "
          "refused with the cause named",
          "[nvm][image]") {
  const Geometry g = nvm_geometry(8192);
  Chip a(Place::kFile, g), b(Place::kFile, g);
  REQUIRE_OK(a.nand->nvm_write(0, pattern(64, 1)));
  a.nand.reset();
  b.nand.reset();
  std::unique_ptr<EmulatedNand> n;
  auto open_with = [&](const std::string& nvm_path) {
    n.reset();
    return EmulatedNand::open_file(a.image, &n, false, nvm_path);
  };
  auto says = [](const pdl::Status& st, const std::string& what) {
    INFO(st.to_string());
    return std::string(st.message()).find(what) != std::string::npos;
  };
  SECTION("no nvm_path for an image whose NVM is in a file") {
    const pdl::Status st = open_with("");
    CHECK(st.is(Errc::kInvalidArgument));
    CHECK(says(st, "nvm_path"));
  }
  SECTION("missing") {
    const pdl::Status st = open_with(a.nvm_file + ".gone");
    CHECK(st.is(Errc::kNotFound));
    CHECK(says(st, a.nvm_file + ".gone"));
    CHECK(says(st, "missing"));
  }
  SECTION("another store's") {
    const pdl::Status st = open_with(b.nvm_file);
    CHECK(st.is(Errc::kInvalidArgument));
    CHECK(says(st, "belongs to another store"));
    CHECK(says(st, b.image));
  }
  SECTION("garbage header") {
    put_file(a.nvm_file, Bytes(16, 0xEE), 100);
    const pdl::Status st = open_with(a.nvm_file);
    CHECK(st.is(Errc::kCorrupt));
    CHECK(says(st, "checksum"));
    CHECK(says(st, a.nvm_file));
  }
  SECTION("not an NVM file at all") {
    put_file(a.nvm_file, Bytes(8, 'x'), 0);
    const pdl::Status st = open_with(a.nvm_file);
    CHECK(st.is(Errc::kCorrupt));
    CHECK(says(st, "not a pdl NVM file"));
  }
  SECTION("wrong length") {
    REQUIRE(truncate(a.nvm_file.c_str(), 4096 + 4096) == 0);
    const pdl::Status st = open_with(a.nvm_file);
    CHECK(st.is(Errc::kCorrupt));
    CHECK(says(st, "bytes long"));
  }
  SECTION("nvm_path for an image whose NVM is inside it, or one without NVM") {
    Chip inside(Place::kImage, g);
    inside.nand.reset();
    const pdl::Status st = EmulatedNand::open_file(inside.image, &n, false, a.nvm_file);
    CHECK(st.is(Errc::kInvalidArgument));
    CHECK(says(st, "inside the image"));
  }
  SECTION("the right file opens, and holds what was written") {
    REQUIRE_OK(open_with(a.nvm_file));
    CHECK(nvm(*n, 0, 64) == pattern(64, 1));
    CHECK_THAT(n->nvm_place(), Catch::Contains(a.nvm_file) && Catch::Contains("libpmem"));
    // Locked while open: a second writer is refused.
    std::unique_ptr<EmulatedNand> n2;
    CHECK_FALSE(EmulatedNand::open_file(a.image, &n2, false, a.nvm_file).is_ok());
  }
}

TEST_CASE("creating an image refuses to overwrite another store's NVM file without force",
          "[nvm][image]") {
  const Geometry g = nvm_geometry(4096);
  Chip a(Place::kFile, g);
  REQUIRE_OK(a.nand->nvm_write(0, pattern(32, 9)));
  a.nand.reset();
  const std::string other = pdl::test::temp_path("other.img");
  std::unique_ptr<EmulatedNand> n;
  NvmPlacement where;
  where.path = a.nvm_file;
  const pdl::Status st = EmulatedNand::create_file(other, g, &n, where);
  CHECK(st.is(Errc::kExists));
  CHECK_THAT(std::string(st.message()), Catch::Contains("belongs to another store"));
  CHECK(access(other.c_str(), F_OK) != 0);  // no half-made image left
  REQUIRE_OK(EmulatedNand::open_file(a.image, &n, false, a.nvm_file));  // left as it was
  CHECK(nvm(*n, 0, 32) == pattern(32, 9));
  n.reset();
  // A plain file is not overwritten either.
  const std::string plain = other + ".txt";
  { std::ofstream(plain) << "keep me"; }
  where.path = plain;
  CHECK(EmulatedNand::create_file(other, g, &n, where).is(Errc::kExists));
  CHECK(file_bytes(plain) == Bytes{'k', 'e', 'e', 'p', ' ', 'm', 'e'});
  // The store being reformatted may replace its own; force replaces any.
  std::array<uint8_t, 16> id;
  REQUIRE_OK(EmulatedNand::nvm_identity(a.image, &id));
  where.path = a.nvm_file;
  where.replaceable = id;
  REQUIRE_OK(EmulatedNand::create_file(other, g, &n, where));
  CHECK(nvm(*n, 0, 32) == Bytes(32, 0));
  n.reset();
  where = {};
  where.path = plain;
  where.force = true;
  REQUIRE_OK(EmulatedNand::create_file(other, g, &n, where));
  n.reset();
  pdl::test::remove_temp(other);
}

TEST_CASE("a process killed during NVM writes leaves each one whole or a prefix of whole words",
          "[nvm][kill]") {
  // The child rewrites the first 64 KiB of the NVM over and over, version v in every word
  // ((v << 32) | word index); killed at a random moment, the NVM must hold version v+1 in a
  // prefix of the words and version v in the rest (docs/reliability.md, "The NVM").
  constexpr uint32_t kBytes = 64 << 10, kWords = kBytes / 8;
  const Geometry g = nvm_geometry(kBytes);
  auto rng = pdl::test::seeded_rng(0x4E564D4B);
  int torn = 0;
  for (Place p : {Place::kImage, Place::kFile}) {
    for (int trial = 0; trial < 12; trial++) {
      INFO(place_name(p) << " trial " << trial);
      Chip c(p, g);
      {  // version 0
        std::vector<uint64_t> w(kWords);
        for (uint32_t i = 0; i < kWords; i++) w[i] = i;
        REQUIRE_OK(c.nand->nvm_write(0, std::span(reinterpret_cast<const uint8_t*>(w.data()),
                                                  kBytes)));
      }
      c.nand.reset();
      const pid_t pid = fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        std::unique_ptr<EmulatedNand> n;
        if (!EmulatedNand::open_file(c.image, &n, false, c.nvm_file).is_ok()) _exit(2);
        std::vector<uint64_t> w(kWords);
        for (uint64_t v = 1;; v++) {
          for (uint32_t i = 0; i < kWords; i++) w[i] = (v << 32) | i;
          const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(w.data()),
                                               kBytes);
          if (!n->nvm_write(0, bytes).is_ok()) _exit(3);
        }
      }
      const timespec nap = {0, long(2'000'000 + rng() % 30'000'000)};  // 2 .. 32 ms
      nanosleep(&nap, nullptr);
      kill(pid, SIGKILL);
      int status = 0;
      REQUIRE(waitpid(pid, &status, 0) == pid);
      REQUIRE(WIFSIGNALED(status));  // still writing when killed, not failed
      c.reopen(/*read_only=*/true);
      const Bytes got = nvm(*c.nand, 0, kBytes);
      std::vector<uint64_t> w(kWords);
      std::memcpy(w.data(), got.data(), kBytes);
      const uint64_t first = w[0] >> 32, last = w[kWords - 1] >> 32;
      REQUIRE((first == last || first == last + 1));
      bool in_prefix = true;
      for (uint32_t i = 0; i < kWords; i++) {
        REQUIRE((w[i] & 0xFFFFFFFFu) == i);  // whole words: never a mix of two versions
        const uint64_t v = w[i] >> 32;
        REQUIRE((v == first || v == last));
        if (v == last && first != last) in_prefix = false;
        REQUIRE((in_prefix || v == last));  // the newer version is a prefix
      }
      if (first != last) torn++;
    }
  }
  WARN(torn << " of 24 kills landed inside a write");
}
