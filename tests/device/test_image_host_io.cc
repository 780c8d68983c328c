// test_image_host_io.cc — how an image file meets the host (file_media.h, docs/format.md §1):
// the shared mapping and pread/pwrite (PDL_IMAGE_IO=pread) leave the same bytes and counters;
// reading a big sparse image allocates no host storage; a version-1 image is read as it is by
// a read-only open and upgraded by a writable one; a pending redo record is redone by a
// writable open and overlaid, without a write, by a read-only one; a torn record is ignored;
// an image bigger than the address space allowed is read and written without the mapping.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include <catch2/catch.hpp>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/device/emulated_nand.h"
#include "flash/device/redo_record.h"
#include "tests/support/nand_op_sequence.h"
#include "tests/support/require_status.h"
#include "tests/support/test_util.h"

using pdl::EmulatedNand;
using pdl::Geometry;
using pdl::test::media_difference;
using Bytes = std::vector<uint8_t>;
using pdl::test::file_bytes;
using pdl::test::put_file;

namespace {

std::unique_ptr<EmulatedNand> open_image(const std::string& path, bool read_only = false) {
  std::unique_ptr<EmulatedNand> n;
  REQUIRE_OK(EmulatedNand::open_file(path, &n, read_only));
  return n;
}

// docs/format.md §1.
uint64_t pages_offset(const Geometry& g) { return (4096 + 4ull * g.blocks + 4095) / 4096 * 4096; }
uint64_t record_offset(const Geometry& g) {
  return (pages_offset(g) + g.total_pages() * g.raw_page() + 4095) / 4096 * 4096;
}

// An image at `path` after `ops`, and the same on a RAM chip.
std::unique_ptr<EmulatedNand> make_image(const std::string& path, const Geometry& g,
                                         const std::vector<pdl::test::NandOp>& ops) {
  auto ram = pdl::test::make_ram_nand(g);
  std::unique_ptr<EmulatedNand> img;
  REQUIRE_OK(EmulatedNand::create_file(path, g, &img));
  for (const auto& op : ops) {
    REQUIRE_OK(op.apply(*img));
    REQUIRE_OK(op.apply(*ram));
  }
  return ram;
}

struct ScopedPreadIo {  // PDL_IMAGE_IO=pread for the images opened meanwhile
  ScopedPreadIo() { setenv("PDL_IMAGE_IO", "pread", 1); }
  ~ScopedPreadIo() { unsetenv("PDL_IMAGE_IO"); }
};

}  // namespace

TEST_CASE("the mapped and the pread/pwrite image I/O leave the same bytes and counters",
          "[nand][image]") {
  const Geometry g = pdl::test::geometry(2048, 64, 16, 16).resolved();
  const auto ops = pdl::test::nand_op_sequence(g, pdl::test::seeded_rng(0x10)(), 4000);
  const std::string mapped_path = pdl::test::temp_path("mapped.img");
  const std::string pread_path = pdl::test::temp_path("pread.img");
  auto ram = pdl::test::make_ram_nand(g);
  std::unique_ptr<EmulatedNand> mapped, plain;
  REQUIRE_OK(EmulatedNand::create_file(mapped_path, g, &mapped));
  {
    ScopedPreadIo io;
    REQUIRE_OK(EmulatedNand::create_file(pread_path, g, &plain));
  }
  for (const auto& op : ops) {
    REQUIRE_OK(op.apply(*mapped));
    REQUIRE_OK(op.apply(*plain));
    REQUIRE_OK(op.apply(*ram));
  }
  const pdl::NandCounters a = mapped->counters(), b = plain->counters();
  CHECK(a.programs == b.programs);
  CHECK(a.erases == b.erases);
  CHECK(a.bytes_programmed == b.bytes_programmed);
  CHECK(a.sim_us == b.sim_us);
  CHECK(a.page_reads == b.page_reads);
  CHECK(media_difference(*mapped, *plain) == "");
  CHECK(media_difference(*mapped, *ram) == "");
  mapped.reset();
  plain.reset();
  CHECK(file_bytes(mapped_path) == file_bytes(pread_path));
  // Reopened each way, either file reads the same.
  auto m2 = open_image(mapped_path);
  CHECK(media_difference(*m2, *ram) == "");
  ScopedPreadIo io;
  auto p2 = open_image(pread_path, /*read_only=*/true);
  CHECK(media_difference(*p2, *ram) == "");
}

TEST_CASE("reading every page of a big sparse image allocates no host storage",
          "[nand][image]") {
  const Geometry g = pdl::test::geometry(2048, 64, 64, 1984).resolved();  // 256 MiB
  const std::string path = pdl::test::temp_path("sparse.img");
  {
    std::unique_ptr<EmulatedNand> n;
    REQUIRE_OK(EmulatedNand::create_file(path, g, &n));
    for (uint32_t b : {2u, 3u, 700u})
      for (pdl::Ppa p = b * g.pages_per_block; p < (b + 1) * g.pages_per_block; p++)
        REQUIRE_OK(n->program(p, Bytes(g.page_data, uint8_t(p)), Bytes(g.page_spare, 0x5A)));
  }
  struct stat before;
  REQUIRE(stat(path.c_str(), &before) == 0);
  for (bool read_only : {true, false}) {
    INFO((read_only ? "read-only" : "writable") << " open");
    auto n = open_image(path, read_only);
    Bytes d(g.page_data), s(g.page_spare);
    for (pdl::Ppa p = 0; p < g.total_pages(); p++) {  // as a mount scan and more
      REQUIRE_OK(n->read(p, {}, s));
      REQUIRE_OK(n->read(p, d, s));
      const uint32_t b = p / g.pages_per_block;
      const bool written = b == 2 || b == 3 || b == 700;
      REQUIRE(d == Bytes(g.page_data, written ? uint8_t(p) : 0xFF));
    }
    struct stat after;
    REQUIRE(stat(path.c_str(), &after) == 0);
    CHECK(after.st_blocks == before.st_blocks);
  }
  // Blocks found allocated at open are written through the mapping: still the same bytes.
  {
    auto n = open_image(path);
    REQUIRE_OK(n->erase(3));
    REQUIRE_OK(n->program(3 * g.pages_per_block, Bytes(g.page_data, 0x11), {}));
    REQUIRE_OK(n->program(2 * g.pages_per_block, Bytes(g.page_data, 0x00), {}));
  }
  auto n = open_image(path, /*read_only=*/true);
  Bytes d(g.page_data);
  REQUIRE_OK(n->read(3 * g.pages_per_block, d, {}));
  CHECK(d == Bytes(g.page_data, 0x11));
  REQUIRE_OK(n->read(3 * g.pages_per_block + 1, d, {}));
  CHECK(d == Bytes(g.page_data, 0xFF));
  REQUIRE_OK(n->read(2 * g.pages_per_block, d, {}));
  CHECK(d == Bytes(g.page_data, 0x00));
  CHECK(n->erase_count(3) == 1);
}

TEST_CASE("a version-1 image is read as it is read-only and upgraded by a writable open",
          "[nand][image]") {
  const Geometry g = pdl::test::geometry(2048, 64, 16, 8).resolved();
  const auto ops = pdl::test::nand_op_sequence(g, pdl::test::seeded_rng(0x11)(), 500);
  const std::string path = pdl::test::temp_path("v1.img");
  auto ram = make_image(path, g, ops);
  // What version 1 wrote: the same header but for the version, no record area.
  Bytes v1 = file_bytes(path);
  const uint64_t pages_end = pages_offset(g) + g.total_pages() * g.raw_page();
  REQUIRE(v1.size() == record_offset(g) + pdl::detail::RedoRecord::area_bytes(g.raw_page()));
  v1.resize(pages_end);
  pdl::le::put32(v1.data() + 8, 1);
  pdl::le::put32(v1.data() + 64, pdl::crc32c(v1.data(), 64));
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(v1.data()), std::streamsize(v1.size()));
  }
  {
    auto ro = open_image(path, /*read_only=*/true);
    CHECK(media_difference(*ro, *ram) == "");
    Bytes d(g.page_data);
    CHECK(ro->program(0, d, {}).is(pdl::Errc::kReadOnly));
  }
  CHECK(file_bytes(path) == v1);  // not a byte changed
  {
    auto rw = open_image(path);
    CHECK(media_difference(*rw, *ram) == "");
    REQUIRE_OK(ops.front().apply(*ram));  // and it takes operations
    REQUIRE_OK(ops.front().apply(*rw));
  }
  const Bytes v2 = file_bytes(path);
  CHECK(pdl::le::get32(v2.data() + 8) == 2);
  CHECK(pdl::le::get32(v2.data() + 64) == pdl::crc32c(v2.data(), 64));
  CHECK(v2.size() == record_offset(g) + pdl::detail::RedoRecord::area_bytes(g.raw_page()));
  auto again = open_image(path, /*read_only=*/true);
  CHECK(media_difference(*again, *ram) == "");
}

TEST_CASE("a pending redo record is redone by a writable open and overlaid by a read-only one",
          "[nand][image]") {
  using pdl::detail::RedoRecord;
  const Geometry g = pdl::test::geometry(2048, 64, 16, 8).resolved();
  const auto ops = pdl::test::nand_op_sequence(g, pdl::test::seeded_rng(0x12)(), 300);
  const std::string path = pdl::test::temp_path("redo.img");
  auto ram = make_image(path, g, ops);
  const uint64_t rec = record_offset(g);

  SECTION("a program") {
    // Page 5's data bytes [100, 300) programmed to 0x00 (stored inverted: 0xFF), as a record.
    const Bytes payload(200, 0xFF);
    Bytes r(RedoRecord::kHeaderBytes);
    const uint64_t where = 5ull * g.raw_page() + 100;
    RedoRecord::encode_header(r.data(), 77, RedoRecord::kProgram, where, 200, 0, payload);
    r.insert(r.end(), payload.begin(), payload.end());
    put_file(path, r, rec);
    Bytes d(g.page_data), s(g.page_spare);
    REQUIRE_OK(ram->read(5, d, s));
    std::fill(d.begin() + 100, d.begin() + 300, 0x00);
    // Every page as on the RAM chip but page 5, which reads d.
    auto as_redone = [&](EmulatedNand& n) {
      Bytes pd(g.page_data), ps(g.page_spare), rd(g.page_data), rs(g.page_spare);
      for (pdl::Ppa p = 0; p < g.total_pages(); p++) {
        REQUIRE_OK(n.read(p, pd, ps));
        REQUIRE_OK(ram->read(p, rd, rs));
        if (p == 5) rd = d;
        if (pd != rd || ps != rs) return false;
      }
      return true;
    };
    const Bytes before = file_bytes(path);
    {
      auto ro = open_image(path, /*read_only=*/true);
      CHECK(as_redone(*ro));
    }
    CHECK(file_bytes(path) == before);  // a read-only open writes nothing
    {
      auto rw = open_image(path);
      const Bytes after = file_bytes(path);
      CHECK(pdl::le::get32(after.data() + rec) == 0);  // redone and cleared
      CHECK(as_redone(*rw));
    }
    CHECK(as_redone(*open_image(path, /*read_only=*/true)));
  }

  SECTION("an erase") {
    Bytes bits(2, 0xFF);  // all 16 pages of block 1
    Bytes r(RedoRecord::kHeaderBytes);
    RedoRecord::encode_header(r.data(), 9, RedoRecord::kErase, 1, g.pages_per_block, 41, bits);
    r.insert(r.end(), bits.begin(), bits.end());
    put_file(path, r, rec);
    auto check_erased = [&](EmulatedNand& n) {
      CHECK(n.erase_count(1) == 41);
      Bytes d(g.page_data), s(g.page_spare);
      for (pdl::Ppa p = g.pages_per_block; p < 2 * g.pages_per_block; p++) {
        REQUIRE_OK(n.read(p, d, s));
        CHECK(d == Bytes(g.page_data, 0xFF));
        CHECK(s == Bytes(g.page_spare, 0xFF));
      }
    };
    const Bytes before = file_bytes(path);
    check_erased(*open_image(path, /*read_only=*/true));
    CHECK(file_bytes(path) == before);
    check_erased(*open_image(path));
    CHECK(pdl::le::get32(file_bytes(path).data() + rec) == 0);
    check_erased(*open_image(path, /*read_only=*/true));
  }

  SECTION("a torn record (failing its CRC) is ignored") {
    const Bytes payload(200, 0xFF);
    Bytes r(RedoRecord::kHeaderBytes);
    RedoRecord::encode_header(r.data(), 78, RedoRecord::kProgram, 5ull * g.raw_page(), 200, 0,
                              payload);
    r.insert(r.end(), payload.begin(), payload.end());
    r.back() = 0x7F;  // its payload's host page not all written
    put_file(path, r, rec);
    CHECK(media_difference(*open_image(path, /*read_only=*/true), *ram) == "");
    CHECK(media_difference(*open_image(path), *ram) == "");
  }

  SECTION("a record outside the chip, or of no bytes, is refused as corrupt") {
    const uint64_t end = g.total_pages() * g.raw_page();
    // (offset, length): past the end; wrapping past 2^64 onto the erase-count table; empty.
    const std::pair<uint64_t, uint32_t> places[] = {
        {end - 8, 16}, {~uint64_t(0) - 7, 16}, {~uint64_t(0) - 7, 8}, {0, 0}};
    for (const auto& [where, length] : places) {
      INFO("program record at " << where << ", " << length << " bytes");
      const Bytes payload(length, 0xFF);
      Bytes r(RedoRecord::kHeaderBytes);
      RedoRecord::encode_header(r.data(), 3, RedoRecord::kProgram, where, length, 0, payload);
      r.insert(r.end(), payload.begin(), payload.end());
      put_file(path, r, rec);
      std::unique_ptr<EmulatedNand> n;
      CHECK(EmulatedNand::open_file(path, &n).is(pdl::Errc::kCorrupt));
      CHECK(EmulatedNand::open_file(path, &n, true).is(pdl::Errc::kCorrupt));
    }
  }
}

TEST_CASE("an image bigger than the address space allowed works without the mapping",
          "[nand][image]") {
  if (pdl::test::sanitizer_shadow()) return;  // (the sanitizers' shadow needs the room)
  // 64 GiB sparse: the mapping cannot be made under the limit, pread/pwrite serve instead.
  const Geometry g = pdl::test::geometry(16384, 512, 64, 63000).resolved();
  const std::string path = pdl::test::temp_path("big.img");
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // _exit codes: 0 fine, else the step that failed
    const rlimit lim{rlim_t(2) << 30, rlim_t(2) << 30};  // 2 GiB of address space
    if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(1);
    std::unique_ptr<EmulatedNand> n;
    if (!EmulatedNand::create_file(path, g, &n).is_ok()) _exit(2);
    const Bytes page(g.page_data, 0x3C);
    if (!n->program(62999u * 64, page, {}).is_ok() || !n->erase(5).is_ok()) _exit(3);
    n.reset();
    if (!EmulatedNand::open_file(path, &n).is_ok()) _exit(4);
    Bytes d(g.page_data);
    if (!n->read(62999u * 64, d, {}).is_ok() || d != page || n->erase_count(5) != 1) _exit(5);
    _exit(0);
  }
  int wstatus = 0;
  REQUIRE(waitpid(child, &wstatus, 0) == child);
  REQUIRE(WIFEXITED(wstatus));
  CHECK(WEXITSTATUS(wstatus) == 0);
}
