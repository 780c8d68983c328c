// test_emulated_nand.cc — the NAND emulator's rules, counters, image files and fault injection.
//
// Invariants checked: program only turns bits 1 -> 0 and at most NOP times per page between
// erases, and a refused program leaves the media unchanged; erase makes a whole block 0xFF;
// addresses are checked; counters and simulated time follow [PDL] Table 1; an image file
// keeps data, spare, geometry and erase counts across reopen, is exclusively locked while open,
// and is never modified when it fails to open; a power cut lets exactly k more mutating
// operations through, then freezes the chip without touching the media, and a torn operation
// leaves only states a real chip could reach (bits between old and new; pages erased or not).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include <catch2/catch.hpp>

#include "flash/common/crc32c.h"
#include "flash/common/le.h"
#include "flash/device/emulated_nand.h"
#include "tests/support/nand_page.h"
#include "tests/support/require_status.h"
#include "tests/support/test_util.h"

using pdl::EmulatedNand;
using pdl::Errc;
using pdl::Geometry;
using pdl::Ppa;
using pdl::Status;
using pdl::Tear;
using pdl::test::make_ram_nand;
using pdl::test::small_geometry;

namespace {

using Bytes = std::vector<uint8_t>;
using Page = pdl::test::NandPage;

Page read_page(EmulatedNand& nand, Ppa ppa) {
  const Geometry& g = nand.geometry();
  Page p{Bytes(g.page_data), Bytes(g.page_spare)};
  REQUIRE_OK(nand.read(ppa, p.data, p.spare));
  return p;
}

Page erased_page(const Geometry& g) {
  return {Bytes(g.page_data, 0xFF), Bytes(g.page_spare, 0xFF)};
}

Page random_page(std::mt19937_64& rng, const Geometry& g) {
  return {pdl::test::random_page(rng, g.page_data), pdl::test::random_page(rng, g.page_spare)};
}

// Every page of the chip, for before/after comparisons.
std::vector<Page> snapshot(EmulatedNand& nand) {
  std::vector<Page> all;
  for (Ppa p = 0; p < nand.geometry().total_pages(); p++) all.push_back(read_page(nand, p));
  return all;
}

std::unique_ptr<EmulatedNand> create_file(const std::string& path, const Geometry& g) {
  std::unique_ptr<EmulatedNand> nand;
  REQUIRE_OK(EmulatedNand::create_file(path, g, &nand));
  REQUIRE(nand != nullptr);
  return nand;
}

std::unique_ptr<EmulatedNand> open_file(const std::string& path) {
  std::unique_ptr<EmulatedNand> nand;
  REQUIRE_OK(EmulatedNand::open_file(path, &nand));
  REQUIRE(nand != nullptr);
  return nand;
}

Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const Bytes& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  REQUIRE(f.good());
}

void require_same_geometry(const Geometry& a, const Geometry& b) {
  CHECK(a.page_data == b.page_data);
  CHECK(a.page_spare == b.page_spare);
  CHECK(a.pages_per_block == b.pages_per_block);
  CHECK(a.blocks == b.blocks);
  CHECK(a.partial_programs == b.partial_programs);
  CHECK(a.erase_limit == b.erase_limit);
  CHECK(a.read_us == b.read_us);
  CHECK(a.program_us == b.program_us);
  CHECK(a.erase_us == b.erase_us);
}

// new ⊆ got ⊆ old, bit by bit (as sets of 1 bits): programming only cleared bits, and only
// bits the new contents clear.
void require_between(const Bytes& old_b, const Bytes& new_b, const Bytes& got) {
  REQUIRE(got.size() == old_b.size());
  for (size_t i = 0; i < got.size(); i++) {
    INFO("byte " << i << " old " << int(old_b[i]) << " new " << int(new_b[i]) << " got "
                 << int(got[i]));
    REQUIRE((got[i] & ~old_b[i]) == 0);       // no bit went 0 -> 1
    REQUIRE((new_b[i] & ~got[i]) == 0);       // no bit cleared that new keeps at 1
  }
}

}  // namespace

TEST_CASE("a fresh chip reads erased in data and spare", "[nand]") {
  auto nand = make_ram_nand(small_geometry());
  const Geometry& g = nand->geometry();
  for (Ppa p = 0; p < g.total_pages(); p++) REQUIRE(read_page(*nand, p) == erased_page(g));
  for (uint32_t b = 0; b < g.blocks; b++) REQUIRE(nand->erase_count(b) == 0);
  CHECK_FALSE(nand->frozen());
  CHECK(nand->mutating_ops() == 0);
}

TEST_CASE("geometry defaults follow Table 1 and invalid geometry is refused", "[nand]") {
  const Geometry d = Geometry{}.resolved();
  CHECK(d.page_data == 2048);
  CHECK(d.page_spare == 64);
  CHECK(d.pages_per_block == 64);
  CHECK(d.read_us == 110);
  CHECK(d.program_us == 1010);
  CHECK(d.erase_us == 1500);
  CHECK(d.validate().is_ok());

  std::unique_ptr<EmulatedNand> nand;
  Geometry bad = small_geometry();
  bad.page_data = 1000;  // not a power of two
  CHECK(EmulatedNand::create_ram(bad, &nand).is(Errc::kInvalidArgument));
  bad = small_geometry();
  bad.blocks = 7;
  CHECK(EmulatedNand::create_ram(bad, &nand).is(Errc::kInvalidArgument));
  bad = small_geometry();
  bad.pages_per_block = 1;
  CHECK(EmulatedNand::create_ram(bad, &nand).is(Errc::kInvalidArgument));
}

TEST_CASE("program over programmed bits fails and leaves the media unchanged", "[nand]") {
  auto nand = make_ram_nand(small_geometry());
  const Geometry& g = nand->geometry();
  const Bytes a5(g.page_data, 0xA5), s3c(g.page_spare, 0x3C);
  REQUIRE_OK(nand->program(5, a5, s3c));
  const Page before = read_page(*nand, 5);
  CHECK(before == Page{a5, s3c});

  REQUIRE_ERR(nand->program(5, Bytes(g.page_data, 0x5A), {}), Errc::kNandRule);
  REQUIRE_ERR(nand->program(5, {}, Bytes(g.page_spare, 0xC3)), Errc::kNandRule);
  // One bad byte anywhere refuses the whole program, including its legal bytes.
  Bytes mostly_legal(g.page_data, 0x00);
  mostly_legal[g.page_data - 1] = 0xFF;
  REQUIRE_ERR(nand->program(5, mostly_legal, {}), Errc::kNandRule);
  REQUIRE_ERR(nand->program(5, Bytes(8, 0xFF), {}, 100), Errc::kNandRule);  // partial, too
  CHECK(read_page(*nand, 5) == before);
  CHECK(nand->counters().programs == 1);
  CHECK(nand->mutating_ops() == 1);

  // Programming the same bits again changes nothing and is legal.
  REQUIRE_OK(nand->program(5, a5, s3c));
  CHECK(read_page(*nand, 5) == before);
}

TEST_CASE("programming only 1 to 0 over programmed bits is allowed", "[nand]") {
  auto nand = make_ram_nand(small_geometry());
  const Geometry& g = nand->geometry();
  // A spare byte taken 0xFF -> 0x0F -> 0x00 in three partial programs (NOP is 4).
  for (uint8_t v : {uint8_t(0xFF), uint8_t(0x0F), uint8_t(0x00)}) {
    REQUIRE_OK(nand->program(9, {}, Bytes{v}, 0, 7));
    Page p = read_page(*nand, 9);
    CHECK(p.spare[7] == v);
    p.spare[7] = 0xFF;
    CHECK(p == erased_page(g));  // nothing else was touched
  }
  // Partial data programs at different offsets of one page.
  auto rng = pdl::test::seeded_rng(0x4E01);
  const Bytes x = pdl::test::random_page(rng, 10), y = pdl::test::random_page(rng, 10);
  auto nand2 = make_ram_nand(small_geometry());
  REQUIRE_OK(nand2->program(3, x, {}, 100));
  REQUIRE_OK(nand2->program(3, y, {}, g.page_data - 10));
  Page want = erased_page(g);
  std::copy(x.begin(), x.end(), want.data.begin() + 100);
  std::copy(y.begin(), y.end(), want.data.end() - 10);
  CHECK(read_page(*nand2, 3) == want);
}

TEST_CASE("the NOP limit refuses further programs until the block is erased", "[nand]") {
  Geometry geo = small_geometry();
  geo.partial_programs = 2;
  auto nand = make_ram_nand(geo);
  const Geometry& g = nand->geometry();
  REQUIRE(g.partial_programs == 2);

  REQUIRE_OK(nand->program(4, {}, Bytes{0x7F}, 0, 0));
  // A refused program (0 -> 1) does not use up the page's NOP.
  REQUIRE_ERR(nand->program(4, {}, Bytes{0xFF}, 0, 0), Errc::kNandRule);
  REQUIRE_ERR(nand->program(4, {}, Bytes{0x80}, 0, 0), Errc::kNandRule);
  // Data and spare in one call count as one program.
  REQUIRE_OK(nand->program(4, Bytes{0x01}, Bytes{0x7F}, 0, 1));
  const Page before = read_page(*nand, 4);
  REQUIRE_ERR(nand->program(4, {}, Bytes{0x7F}, 0, 2), Errc::kNandRule);  // third: over NOP
  REQUIRE_ERR(nand->program(4, Bytes(g.page_data, 0x00), {}), Errc::kNandRule);
  CHECK(read_page(*nand, 4) == before);
  CHECK(before.spare[2] == 0xFF);

  // Other pages of the block keep their own count.
  REQUIRE_OK(nand->program(5, {}, Bytes{0x00}));
  REQUIRE_OK(nand->program(5, {}, Bytes{0x00}));
  REQUIRE_ERR(nand->program(5, {}, Bytes{0x00}), Errc::kNandRule);

  REQUIRE_OK(nand->erase(1));  // pages 4..7
  REQUIRE_OK(nand->program(4, {}, Bytes{0x7F}, 0, 2));
  REQUIRE_OK(nand->program(4, Bytes(g.page_data, 0x00), {}));
  REQUIRE_ERR(nand->program(4, {}, Bytes{0x00}), Errc::kNandRule);
}

TEST_CASE("erase restores 0xFF in the data and spare of the whole block only", "[nand]") {
  auto nand = make_ram_nand(small_geometry());
  const Geometry& g = nand->geometry();
  auto rng = pdl::test::seeded_rng(0x4E02);
  std::vector<Page> want;
  for (Ppa p = 0; p < 4 * g.pages_per_block; p++) {  // blocks 0..3
    want.push_back(random_page(rng, g));
    REQUIRE_OK(nand->program(p, want.back().data, want.back().spare));
  }
  REQUIRE_OK(nand->erase(2));
  for (Ppa p = 0; p < 4 * g.pages_per_block; p++) {
    INFO("page " << p);
    if (p / g.pages_per_block == 2)
      REQUIRE(read_page(*nand, p) == erased_page(g));
    else
      REQUIRE(read_page(*nand, p) == want[p]);
  }
  CHECK(nand->erase_count(2) == 1);
  REQUIRE_OK(nand->erase(2));
  REQUIRE_OK(nand->erase(0));
  CHECK(nand->erase_count(2) == 2);
  CHECK(nand->erase_count(0) == 1);
  CHECK(nand->erase_count(1) == 0);
  // Erasing an erased block is legal.
  REQUIRE_OK(nand->erase(15));
  CHECK(read_page(*nand, 15 * g.pages_per_block) == erased_page(g));
}

TEST_CASE("a block worn past its erase limit fails to erase", "[nand]") {
  Geometry geo = small_geometry();
  geo.erase_limit = 3;
  auto nand = make_ram_nand(geo);
  for (int i = 0; i < 3; i++) REQUIRE_OK(nand->erase(6));
  REQUIRE_ERR(nand->erase(6), Errc::kBadBlock);
  CHECK(nand->erase_count(6) == 3);
  CHECK(nand->counters().erase_failures == 1);
  REQUIRE_OK(nand->erase(7));  // other blocks are fine
}

TEST_CASE("out-of-range addresses and malformed requests fail", "[nand]") {
  auto nand = make_ram_nand(small_geometry());
  const Geometry& g = nand->geometry();
  const Ppa end = Ppa(g.total_pages());
  Bytes d(g.page_data), s(g.page_spare);
  REQUIRE_ERR(nand->read(end, d, s), Errc::kNandRule);
  REQUIRE_ERR(nand->read(pdl::kNoPpa, d, {}), Errc::kNandRule);
  REQUIRE_ERR(nand->program(end, Bytes(g.page_data, 0), {}), Errc::kNandRule);
  REQUIRE_ERR(nand->program(pdl::kNoPpa, {}, Bytes{0}), Errc::kNandRule);
  REQUIRE_ERR(nand->erase(g.blocks), Errc::kNandRule);
  REQUIRE_ERR(nand->erase(0xFFFFFFFFu), Errc::kNandRule);
  // Past the end of a page's data or spare area.
  REQUIRE_ERR(nand->program(0, Bytes(20, 0), {}, g.page_data - 10), Errc::kNandRule);
  REQUIRE_ERR(nand->program(0, Bytes(g.page_data + 1, 0), {}), Errc::kNandRule);
  REQUIRE_ERR(nand->program(0, {}, Bytes(2, 0), 0, g.page_spare - 1), Errc::kNandRule);
  REQUIRE_ERR(nand->program(0, {}, Bytes(1, 0), 0, 0xFFFFFFFFu), Errc::kNandRule);
  // Buffers of the wrong size, and a program of nothing.
  Bytes short_data(g.page_data - 1), long_spare(g.page_spare + 1);
  REQUIRE_ERR(nand->read(0, short_data, {}), Errc::kInvalidArgument);
  REQUIRE_ERR(nand->read(0, {}, long_spare), Errc::kInvalidArgument);
  REQUIRE_ERR(nand->program(0, {}, {}), Errc::kInvalidArgument);
  CHECK(nand->erase_count(g.blocks) == 0);
  // Nothing was counted and nothing changed.
  CHECK(nand->counters().page_reads == 0);
  CHECK(nand->counters().spare_reads == 0);
  CHECK(nand->counters().programs == 0);
  CHECK(nand->counters().erases == 0);
  CHECK(nand->counters().sim_us == 0);
  CHECK(nand->mutating_ops() == 0);
  CHECK(read_page(*nand, 0) == erased_page(g));
}

TEST_CASE("counters and simulated time add up per Table 1", "[nand]") {
  auto nand = make_ram_nand(small_geometry());
  const Geometry& g = nand->geometry();
  REQUIRE(g.read_us == 110);
  REQUIRE(g.program_us == 1010);
  REQUIRE(g.erase_us == 1500);
  Bytes d(g.page_data), s(g.page_spare);

  const uint64_t k = 7, k_data_only = 3, spare_only = 5, e = 2;
  for (uint64_t i = 0; i < k; i++) REQUIRE_OK(nand->read(Ppa(i), d, s));
  for (uint64_t i = 0; i < k_data_only; i++) REQUIRE_OK(nand->read(Ppa(i), d, {}));
  for (uint64_t i = 0; i < spare_only; i++) REQUIRE_OK(nand->read(Ppa(i), {}, s));
  // Programs: full page + spare, data only, spare only, partial data + partial spare.
  REQUIRE_OK(nand->program(0, Bytes(g.page_data, 0x11), Bytes(g.page_spare, 0x22)));
  REQUIRE_OK(nand->program(1, Bytes(g.page_data, 0x33), {}));
  REQUIRE_OK(nand->program(2, {}, Bytes(g.page_spare, 0x44)));
  REQUIRE_OK(nand->program(3, Bytes(100, 0x55), Bytes(4, 0x66), 12, 8));
  const uint64_t p = 4;
  for (uint64_t i = 0; i < e; i++) REQUIRE_OK(nand->erase(uint32_t(5 + i)));
  // Refused operations cost nothing.
  REQUIRE_ERR(nand->program(0, Bytes(g.page_data, 0xFF), {}), Errc::kNandRule);
  REQUIRE_ERR(nand->erase(g.blocks), Errc::kNandRule);

  const pdl::NandCounters c = nand->counters();
  CHECK(c.page_reads == k + k_data_only);
  CHECK(c.spare_reads == spare_only);
  CHECK(c.programs == p);
  CHECK(c.erases == e);
  CHECK(c.bytes_read == k * (g.page_data + g.page_spare) + k_data_only * g.page_data +
                            spare_only * g.page_spare);
  CHECK(c.bytes_programmed ==
        uint64_t(g.page_data + g.page_spare) + g.page_data + g.page_spare + 100 + 4);
  CHECK(c.sim_us == (k + k_data_only + spare_only) * 110 + p * 1010 + e * 1500);
  CHECK(nand->mutating_ops() == p + e);

  // Differences of counter snapshots isolate one phase.
  REQUIRE_OK(nand->read(0, d, s));
  REQUIRE_OK(nand->erase(9));
  const pdl::NandCounters delta = nand->counters() - c;
  CHECK(delta.page_reads == 1);
  CHECK(delta.erases == 1);
  CHECK(delta.programs == 0);
  CHECK(delta.sim_us == 110 + 1500);
  CHECK(delta.bytes_read == g.page_data + g.page_spare);

  nand->reset_counters();
  CHECK(nand->counters().sim_us == 0);
  CHECK(nand->counters().page_reads == 0);
  CHECK(nand->counters().bytes_programmed == 0);
  CHECK(nand->mutating_ops() == p + e + 1);  // not a counter: the chip's own history
}

TEST_CASE("simulated time uses the geometry's own timing", "[nand]") {
  Geometry geo = small_geometry();
  geo.read_us = 25;
  geo.program_us = 200;
  geo.erase_us = 3000;
  auto nand = make_ram_nand(geo);
  Bytes d(geo.page_data);
  REQUIRE_OK(nand->read(0, d, {}));
  REQUIRE_OK(nand->program(0, {}, Bytes{0}));
  REQUIRE_OK(nand->erase(0));
  CHECK(nand->counters().sim_us == 25 + 200 + 3000);
}

TEST_CASE("an image file keeps data, spare, geometry and erase counts across reopen",
          "[nand][image]") {
  const std::string path = pdl::test::temp_path("chip.img");
  Geometry geo = small_geometry(8);
  geo.partial_programs = 3;
  geo.erase_limit = 1000;
  geo.read_us = 50;
  geo.program_us = 700;
  geo.erase_us = 2000;
  auto rng = pdl::test::seeded_rng(0x4E03);
  std::vector<Page> model(geo.total_pages(), erased_page(geo));
  {
    auto nand = create_file(path, geo);
    require_same_geometry(nand->geometry(), geo);
    for (Ppa p : {0u, 1u, 5u, 12u, 13u, 14u, 15u, 31u}) {
      model[p] = random_page(rng, geo);
      REQUIRE_OK(nand->program(p, model[p].data, model[p].spare));
    }
    // Block 3 (pages 12..15) programmed, then erased twice; block 5 erased once.
    REQUIRE_OK(nand->erase(3));
    REQUIRE_OK(nand->erase(3));
    REQUIRE_OK(nand->erase(5));
    for (Ppa p = 12; p < 16; p++) model[p] = erased_page(geo);
    // A partial program after the erase, at odd offsets.
    REQUIRE_OK(nand->program(13, Bytes(7, 0x00), Bytes(3, 0x0F), 301, 5));
    std::fill_n(model[13].data.begin() + 301, 7, 0x00);
    std::fill_n(model[13].spare.begin() + 5, 3, 0x0F);
    const uint64_t sim_before = nand->counters().sim_us;
    REQUIRE_OK(nand->flush());
    CHECK(nand->counters().sim_us == sim_before);  // flushing to the host is free
    CHECK(snapshot(*nand) == model);
  }
  CHECK(EmulatedNand::is_image_file(path));
  {
    auto nand = open_file(path);
    CHECK(nand->counters().programs == 0);
    CHECK(nand->counters().sim_us == 0);  // reopening costs no simulated time
    require_same_geometry(nand->geometry(), geo);
    CHECK(snapshot(*nand) == model);
    CHECK(nand->erase_count(3) == 2);
    CHECK(nand->erase_count(5) == 1);
    CHECK(nand->erase_count(0) == 0);
    // Keep working on the reopened image, with its own timing.
    const pdl::NandCounters c0 = nand->counters();
    model[31].spare[0] = 0x00;
    REQUIRE_OK(nand->program(31, {}, Bytes{0x00}));
    REQUIRE_OK(nand->erase(0));
    model[0] = model[1] = erased_page(geo);
    CHECK((nand->counters() - c0).sim_us == 700 + 2000);
  }
  {
    auto nand = open_file(path);
    CHECK(snapshot(*nand) == model);
    CHECK(nand->erase_count(0) == 1);
    CHECK(nand->erase_count(3) == 2);
  }
}

TEST_CASE("create_file replaces an existing image with an erased chip", "[nand][image]") {
  const std::string path = pdl::test::temp_path("chip.img");
  const Geometry geo = small_geometry(8);
  {
    auto nand = create_file(path, geo);
    REQUIRE_OK(nand->program(2, Bytes(geo.page_data, 0x00), {}));
    REQUIRE_OK(nand->erase(4));
  }
  Geometry bigger = small_geometry(12);
  auto nand = create_file(path, bigger);
  CHECK(nand->geometry().blocks == 12);
  CHECK(read_page(*nand, 2) == erased_page(bigger));
  CHECK(nand->erase_count(4) == 0);
}

// Read-only: a mutation that a missed path of a read-only mount might attempt fails loudly
// (kReadOnly), touching nothing; readers share the image.
TEST_CASE("an image opened read-only refuses programs, erases and bad-block marks with kReadOnly",
          "[nand][image][readonly]") {
  const std::string path = pdl::test::temp_path("ro.img");
  const Geometry geo = small_geometry(8);
  {
    auto w = create_file(path, geo);
    REQUIRE_OK(w->program(1, Bytes(geo.page_data, 0x42), {}));
  }
  std::ifstream in(path, std::ios::binary);
  const std::string before((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::unique_ptr<EmulatedNand> ro, other;
  REQUIRE_OK(EmulatedNand::open_file(path, &ro, /*read_only=*/true));
  REQUIRE_OK(EmulatedNand::open_file(path, &other, /*read_only=*/true));  // a shared lock
  REQUIRE_ERR(ro->program(2, Bytes(geo.page_data, 0x17), {}), Errc::kReadOnly);
  REQUIRE_ERR(ro->erase(0), Errc::kReadOnly);
  REQUIRE_ERR(ro->mark_bad(3), Errc::kReadOnly);
  CHECK(read_page(*ro, 1).data == Bytes(geo.page_data, 0x42));
  CHECK(read_page(*ro, 2) == erased_page(geo));
  std::unique_ptr<EmulatedNand> writer;  // no writer while readers hold it
  REQUIRE_ERR(EmulatedNand::open_file(path, &writer), Errc::kBusy);
  ro.reset();
  other.reset();
  std::ifstream again(path, std::ios::binary);
  const std::string after((std::istreambuf_iterator<char>(again)),
                          std::istreambuf_iterator<char>());
  CHECK((after == before));
}

TEST_CASE("a second open of an image in use fails with kBusy", "[nand][image]") {
  const std::string path = pdl::test::temp_path("chip.img");
  const Geometry geo = small_geometry(8);
  auto first = create_file(path, geo);
  REQUIRE_OK(first->program(1, Bytes(geo.page_data, 0x42), {}));

  // flock locks belong to the open file description, so a second open() in this very
  // process conflicts just as another process would.
  std::unique_ptr<EmulatedNand> second;
  REQUIRE_ERR(EmulatedNand::open_file(path, &second), Errc::kBusy);
  CHECK(second == nullptr);
  // create_file on an image in use must not wipe it.
  REQUIRE_ERR(EmulatedNand::create_file(path, geo, &second), Errc::kBusy);
  CHECK(read_page(*first, 1).data == Bytes(geo.page_data, 0x42));

  // And from another process.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::unique_ptr<EmulatedNand> n;
    const Status st = EmulatedNand::open_file(path, &n);
    _exit(int(st.code()));  // _exit: no test-framework or static teardown in the child
  }
  int wstatus = 0;
  REQUIRE(waitpid(child, &wstatus, 0) == child);
  REQUIRE(WIFEXITED(wstatus));
  CHECK(WEXITSTATUS(wstatus) == int(Errc::kBusy));

  first.reset();  // closing releases the lock
  auto again = open_file(path);
  CHECK(read_page(*again, 1).data == Bytes(geo.page_data, 0x42));
}

TEST_CASE("open_file on a file that is not a valid image fails and leaves it unchanged",
          "[nand][image]") {
  auto rng = pdl::test::seeded_rng(0x4E04);
  const std::string path = pdl::test::temp_path("not-an-image");

  auto expect_refused = [&](const Bytes& contents, Errc want) {
    write_file(path, contents);
    std::unique_ptr<EmulatedNand> nand;
    const Status st = EmulatedNand::open_file(path, &nand);
    INFO(st.to_string());
    CHECK(st.is(want));
    CHECK(nand == nullptr);
    CHECK(read_file(path) == contents);
  };

  SECTION("random bytes") {
    expect_refused(pdl::test::random_page(rng, 8192), Errc::kCorrupt);
    CHECK_FALSE(EmulatedNand::is_image_file(path));
  }
  SECTION("text") { expect_refused(Bytes{'h', 'e', 'l', 'l', 'o', '\n'}, Errc::kCorrupt); }
  SECTION("empty") { expect_refused(Bytes{}, Errc::kCorrupt); }
  SECTION("only the magic") {
    expect_refused(Bytes{'P', 'D', 'L', 'N', 'A', 'N', 'D', '1'}, Errc::kCorrupt);
  }

  SECTION("damaged images") {
    const Geometry geo = small_geometry(8);
    {
      auto nand = create_file(path, geo);
      REQUIRE_OK(nand->program(0, Bytes(geo.page_data, 0x00), {}));
    }
    const Bytes good = read_file(path);
    REQUIRE(good.size() > 4096);
    CHECK(EmulatedNand::is_image_file(path));

    Bytes flipped = good;  // a geometry field changed: header checksum mismatch
    flipped[20] ^= 0x01;
    expect_refused(flipped, Errc::kCorrupt);

    Bytes newer = good;  // a valid header of an unknown version (3 is NVM's: docs/format.md)
    pdl::le::put32(newer.data() + 8, 4);
    pdl::le::put32(newer.data() + 64, pdl::crc32c(newer.data(), 64));
    expect_refused(newer, Errc::kUnsupported);

    Bytes bad_geo = good;  // a valid header whose geometry is impossible
    pdl::le::put32(bad_geo.data() + 16, 1000);  // page_data
    pdl::le::put32(bad_geo.data() + 64, pdl::crc32c(bad_geo.data(), 64));
    expect_refused(bad_geo, Errc::kCorrupt);

    Bytes truncated = good;  // the file cut short (its redo record area)
    truncated.resize(good.size() - 1);
    expect_refused(truncated, Errc::kCorrupt);

    // The untouched image still opens.
    write_file(path, good);
    auto nand = open_file(path);
    CHECK(read_page(*nand, 0).data == Bytes(geo.page_data, 0x00));
  }
}

TEST_CASE("open_file on a missing path fails with an I/O error", "[nand][image]") {
  std::unique_ptr<EmulatedNand> nand;
  const std::string path = pdl::test::temp_path("missing.img");
  REQUIRE_ERR(EmulatedNand::open_file(path, &nand), Errc::kIoError);
  CHECK_FALSE(EmulatedNand::is_image_file(path));
  CHECK(access(path.c_str(), F_OK) != 0);  // and nothing was created
}

TEST_CASE("a power cut lets exactly k more programs and erases through, then freezes",
          "[nand][power]") {
  const uint64_t k = GENERATE(0, 1, 2, 3, 5);
  CAPTURE(k);
  auto nand = make_ram_nand(small_geometry());
  const Geometry& g = nand->geometry();
  auto rng = pdl::test::seeded_rng(0x4E05 + k);
  // Some history before the cut: blocks 0..2 fully programmed.
  for (Ppa p = 0; p < 3 * g.pages_per_block; p++) {
    const Page pg = random_page(rng, g);
    REQUIRE_OK(nand->program(p, pg.data, pg.spare));
  }
  const uint64_t ops_before = nand->mutating_ops();
  nand->cut_power_after(k);
  CHECK_FALSE(nand->frozen());

  // A sequence of mutating operations (erases of programmed blocks, programs of erased
  // pages); reads in between do not count towards k.
  std::vector<Page> model = snapshot(*nand);
  nand->reset_counters();
  uint64_t done = 0;
  for (uint64_t i = 0; i < k; i++) {
    if (i % 2 == 0) {
      const uint32_t block = uint32_t(i / 2 % 3);
      REQUIRE_OK(nand->erase(block));
      for (Ppa p = block * g.pages_per_block; p < (block + 1) * g.pages_per_block; p++)
        model[p] = erased_page(g);
    } else {
      const Ppa p = Ppa(8 * g.pages_per_block + i);
      model[p] = random_page(rng, g);
      REQUIRE_OK(nand->program(p, model[p].data, model[p].spare));
    }
    done++;
    REQUIRE(read_page(*nand, 0).data.size() == g.page_data);
  }
  REQUIRE(done == k);
  CHECK(nand->counters().programs + nand->counters().erases == k);
  CHECK_FALSE(nand->frozen());

  // Operation k+1 fails, and so does everything after it: reads included.
  const Page fresh = random_page(rng, g);
  REQUIRE_ERR(nand->program(Ppa(10 * g.pages_per_block), fresh.data, fresh.spare),
              Errc::kPowerCut);
  CHECK(nand->frozen());
  Bytes d(g.page_data), s(g.page_spare);
  REQUIRE_ERR(nand->read(0, d, s), Errc::kPowerCut);
  REQUIRE_ERR(nand->read(0, {}, s), Errc::kPowerCut);
  REQUIRE_ERR(nand->erase(1), Errc::kPowerCut);
  REQUIRE_ERR(nand->program(Ppa(11 * g.pages_per_block), fresh.data, {}), Errc::kPowerCut);
  REQUIRE_ERR(nand->flush(), Errc::kPowerCut);
  CHECK(nand->mutating_ops() == ops_before + k + 1);

  nand->restore_power();
  CHECK_FALSE(nand->frozen());
  REQUIRE_OK(nand->flush());
  CHECK(snapshot(*nand) == model);  // Tear::kNone: the cut operations left no trace
  REQUIRE_OK(nand->program(Ppa(10 * g.pages_per_block), fresh.data, fresh.spare));
  REQUIRE_OK(nand->erase(1));
  CHECK(read_page(*nand, Ppa(10 * g.pages_per_block)) == fresh);
}

TEST_CASE("a torn program leaves bits between the old and the new contents", "[nand][power]") {
  const Tear tear = GENERATE(Tear::kPrefix, Tear::kRandomBits);
  CAPTURE(int(tear));
  const Geometry geo = small_geometry(8);
  auto rng = pdl::test::seeded_rng(0x4E06 + uint64_t(tear));
  int partial = 0;
  for (uint64_t trial = 0; trial < 64; trial++) {
    CAPTURE(trial);
    auto nand = make_ram_nand(geo);
    const Ppa ppa = Ppa(trial % geo.total_pages());
    // Old contents: random bits already programmed (or erased on some trials).
    Page old_p = trial % 4 == 0 ? erased_page(geo) : random_page(rng, geo);
    if (trial % 4 != 0) REQUIRE_OK(nand->program(ppa, old_p.data, old_p.spare));
    // New contents only clear bits, so the program itself is legal.
    Page new_p = random_page(rng, geo);
    for (size_t i = 0; i < new_p.data.size(); i++) new_p.data[i] &= old_p.data[i];
    for (size_t i = 0; i < new_p.spare.size(); i++) new_p.spare[i] &= old_p.spare[i];

    nand->cut_power_after(0, tear, rng());
    REQUIRE_ERR(nand->program(ppa, new_p.data, new_p.spare), Errc::kPowerCut);
    nand->restore_power();
    const Page got = read_page(*nand, ppa);
    require_between(old_p.data, new_p.data, got.data);
    require_between(old_p.spare, new_p.spare, got.spare);
    if (got != old_p && got != new_p) partial++;

    if (tear == Tear::kPrefix) {
      // Data and spare are torn independently: in each, some prefix is new, the rest old.
      auto require_prefix = [](const Bytes& o, const Bytes& n, const Bytes& r) {
        size_t f = 0;
        while (f < r.size() && r[f] == n[f]) f++;
        for (size_t i = f; i < r.size(); i++) REQUIRE(r[i] == o[i]);
      };
      require_prefix(old_p.data, new_p.data, got.data);
      require_prefix(old_p.spare, new_p.spare, got.spare);
    }
    // Every other page is untouched.
    for (Ppa p = 0; p < geo.total_pages(); p++)
      if (p != ppa) REQUIRE(read_page(*nand, p) == erased_page(geo));
  }
  CHECK(partial > 0);  // 64 seeded trials: a strictly partial result is all but certain
}

TEST_CASE("a torn partial program only affects the bytes it was given", "[nand][power]") {
  const Tear tear = GENERATE(Tear::kPrefix, Tear::kRandomBits);
  auto nand = make_ram_nand(small_geometry());
  const Geometry& g = nand->geometry();
  nand->cut_power_after(0, tear, 42);
  REQUIRE_ERR(nand->program(2, Bytes(16, 0x00), Bytes(4, 0x00), 200, 10), Errc::kPowerCut);
  nand->restore_power();
  const Page got = read_page(*nand, 2);
  for (size_t i = 0; i < g.page_data; i++)
    if (i < 200 || i >= 216) REQUIRE(got.data[i] == 0xFF);
  for (size_t i = 0; i < g.page_spare; i++)
    if (i < 10 || i >= 14) REQUIRE(got.spare[i] == 0xFF);
}

TEST_CASE("an interrupted erase leaves each page either erased or untouched", "[nand][power]") {
  const Tear tear = GENERATE(Tear::kNone, Tear::kPrefix, Tear::kRandomBits);
  CAPTURE(int(tear));
  const Geometry geo = small_geometry(8);
  auto rng = pdl::test::seeded_rng(0x4E07 + uint64_t(tear));
  int erased_pages = 0, kept_pages = 0;
  for (uint64_t trial = 0; trial < 32; trial++) {
    CAPTURE(trial);
    auto nand = make_ram_nand(geo);
    for (Ppa p = 0; p < 3 * geo.pages_per_block; p++) {
      const Page pg = random_page(rng, geo);
      REQUIRE_OK(nand->program(p, pg.data, pg.spare));
    }
    const std::vector<Page> before = snapshot(*nand);
    nand->cut_power_after(0, tear, rng());
    REQUIRE_ERR(nand->erase(1), Errc::kPowerCut);
    REQUIRE_ERR(nand->erase(2), Errc::kPowerCut);  // frozen: no second tear
    nand->restore_power();
    const std::vector<Page> after = snapshot(*nand);
    for (Ppa p = 0; p < geo.total_pages(); p++) {
      INFO("page " << p);
      if (p / geo.pages_per_block != 1) {
        REQUIRE(after[p] == before[p]);
      } else if (after[p] == erased_page(geo)) {
        erased_pages++;
      } else {
        REQUIRE(after[p] == before[p]);
        kept_pages++;
      }
    }
  }
  if (tear == Tear::kNone) {
    CHECK(erased_pages == 0);
  } else {
    CHECK(erased_pages > 0);  // 128 seeded coin flips each way
    CHECK(kept_pages > 0);
  }
}

TEST_CASE("a torn operation on an image file persists like on a real chip", "[nand][power]") {
  const std::string path = pdl::test::temp_path("torn.img");
  const Geometry geo = small_geometry(8);
  auto rng = pdl::test::seeded_rng(0x4E08);
  std::vector<Page> before;
  {
    auto nand = create_file(path, geo);
    for (Ppa p = 0; p < 2 * geo.pages_per_block; p++) {
      const Page pg = random_page(rng, geo);
      REQUIRE_OK(nand->program(p, pg.data, pg.spare));
    }
    before = snapshot(*nand);
    nand->cut_power_after(0, Tear::kRandomBits, 7);
    REQUIRE_ERR(nand->erase(1), Errc::kPowerCut);
  }
  auto nand = open_file(path);  // "remount" after the cut
  for (Ppa p = 0; p < geo.total_pages(); p++) {
    const Page got = read_page(*nand, p);
    if (p / geo.pages_per_block == 1)
      REQUIRE((got == before[p] || got == erased_page(geo)));
    else
      REQUIRE(got == before[p]);
  }
}

TEST_CASE("clone copies contents and erase counts into an independent RAM chip", "[nand]") {
  const std::string path = pdl::test::temp_path("clone-src.img");
  const bool from_file = GENERATE(false, true);
  CAPTURE(from_file);
  const Geometry geo = small_geometry(8);
  auto src = from_file ? create_file(path, geo) : make_ram_nand(geo);
  auto rng = pdl::test::seeded_rng(0x4E09);
  for (Ppa p : {0u, 3u, 9u, 30u}) {
    const Page pg = random_page(rng, geo);
    REQUIRE_OK(src->program(p, pg.data, pg.spare));
  }
  REQUIRE_OK(src->erase(5));
  REQUIRE_OK(src->erase(5));
  REQUIRE_OK(src->erase(6));
  REQUIRE_OK(src->program(21, {}, Bytes{0x00}, 0, 4));  // block 5, after its erases

  auto copy = src->clone();
  REQUIRE(copy != nullptr);
  CHECK(copy->counters().programs == 0);
  CHECK(copy->counters().erases == 0);
  CHECK(copy->counters().sim_us == 0);
  require_same_geometry(copy->geometry(), src->geometry());
  CHECK(snapshot(*copy) == snapshot(*src));
  for (uint32_t b = 0; b < geo.blocks; b++) CHECK(copy->erase_count(b) == src->erase_count(b));
  CHECK(copy->erase_count(5) == 2);

  // Independent: changes to the copy do not reach the source, and vice versa.
  const auto src_before = snapshot(*src);
  REQUIRE_OK(copy->program(1, Bytes(geo.page_data, 0x00), {}));
  REQUIRE_OK(copy->erase(0));
  CHECK(snapshot(*src) == src_before);
  CHECK(src->erase_count(0) == 0);
  REQUIRE_OK(src->program(2, {}, Bytes{0x00}));
  CHECK(read_page(*copy, 2) == erased_page(geo));
}
