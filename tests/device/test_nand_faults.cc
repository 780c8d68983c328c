// test_nand_faults.cc — the emulator's media faults beyond power cuts (emulated_nand.h):
// bit flips under an ECC, factory and grown bad blocks, failed programs and erases.
//
// Invariants checked: flips within the ECC strength never reach the caller and are counted;
// beyond it a read fails with kCorrupt (or, miscorrecting, returns wrong bytes with Ok), the
// media is never changed, and a later read draws again; a marked block fails every program and
// erase with kBadBlock and keeps its marker, which a reopened image file still shows; a scheduled
// failure hits exactly the chosen operation, leaves only states a real chip could reach
// (bits between old and new; pages erased or not), and makes its block fail from then on;
// injected I/O errors fail exactly the chosen operations (any kind) and change nothing;
// the Nand interface's default marker access (used by wrappers) agrees with the emulator's.
#include <catch2/catch.hpp>

#include "flash/device/emulated_nand.h"
#include "tests/support/cut_at_nand.h"
#include "tests/support/nand_page.h"
#include "tests/support/require_status.h"
#include "tests/support/test_util.h"

using pdl::EmulatedNand;
using pdl::Errc;
using pdl::Geometry;
using pdl::Ppa;
using pdl::Status;
using pdl::test::make_ram_nand;
using pdl::test::small_geometry;

namespace {

using Bytes = std::vector<uint8_t>;
using Page = pdl::test::NandPage;

Page random_page(std::mt19937_64& rng, const Geometry& g) {
  return {pdl::test::random_page(rng, g.page_data), pdl::test::random_page(rng, g.page_spare)};
}

Status read(EmulatedNand& n, Ppa p, Page* out) {
  const Geometry& g = n.geometry();
  *out = {Bytes(g.page_data), Bytes(g.page_spare)};
  return n.read(p, out->data, out->spare);
}

// A chip whose first `pages` pages hold random contents; returns them.
std::vector<Page> fill(EmulatedNand& n, uint32_t pages, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Page> want;
  for (Ppa p = 0; p < pages; p++) {
    want.push_back(random_page(rng, n.geometry()));
    want.back().spare[0] = 0xFF;  // byte 0 is the bad-block marker: keep the blocks good
    REQUIRE_OK(n.program(p, want.back().data, want.back().spare));
  }
  return want;
}

void require_between(const Bytes& old_b, const Bytes& new_b, const Bytes& got) {
  REQUIRE(got.size() == old_b.size());
  for (size_t i = 0; i < got.size(); i++) {
    REQUIRE((got[i] & ~old_b[i]) == 0);
    REQUIRE((new_b[i] & ~got[i]) == 0);
  }
}

}  // namespace

TEST_CASE("bit flips within the ECC strength are corrected and counted", "[nand][faults]") {
  auto n = make_ram_nand(small_geometry());
  const std::vector<Page> want = fill(*n, 64, 1);
  EmulatedNand::BitFlips f;
  f.sector_rate = 0.5;
  f.min_flips = 1;
  f.max_flips = 4;
  f.ecc_strength = 4;
  n->set_bit_flips(f);
  for (int i = 0; i < 20000; i++) {
    Page got;
    const Ppa p = Ppa(i % 64);
    REQUIRE_OK(read(*n, p, &got));
    REQUIRE(got == want[p]);
  }
  // 20,000 reads x 2 sectors (512-byte data area, spare) x 0.5 x 2.5 flips on average.
  CHECK(n->counters().ecc_corrected_bits > 45000);
  CHECK(n->counters().ecc_corrected_bits < 55000);
  CHECK(n->counters().ecc_uncorrectable == 0);
}

TEST_CASE("beyond the ECC strength a read fails, the media is unchanged, a retry draws again",
          "[nand][faults]") {
  auto n = make_ram_nand(small_geometry());
  const std::vector<Page> want = fill(*n, 8, 2);
  EmulatedNand::BitFlips f;
  f.sector_rate = 1.0;
  f.min_flips = 5;
  f.max_flips = 9;
  f.ecc_strength = 4;
  n->set_bit_flips(f);
  Page got;
  for (Ppa p = 0; p < 8; p++) REQUIRE_ERR(read(*n, p, &got), Errc::kCorrupt);
  // Only the spare read: one sector, fails too.
  Bytes spare(n->geometry().page_spare);
  REQUIRE_ERR(n->read(0, {}, spare), Errc::kCorrupt);
  CHECK(n->counters().ecc_uncorrectable == 8 * 2 + 1);
  f.sector_rate = 0.02;  // rare now: most reads succeed, and return the right bytes
  n->set_bit_flips(f);
  int ok = 0, failed = 0;
  for (int i = 0; i < 2000; i++) {
    const Ppa p = Ppa(i % 8);
    const Status st = read(*n, p, &got);
    if (st.is_ok()) {
      REQUIRE(got == want[p]);
      ok++;
    } else {
      REQUIRE(st.is(Errc::kCorrupt));
      failed++;
    }
  }
  CHECK(failed > 50);
  CHECK(ok > 1500);
  n->set_bit_flips({});
  for (Ppa p = 0; p < 8; p++) {
    REQUIRE_OK(read(*n, p, &got));
    REQUIRE(got == want[p]);
  }
}

TEST_CASE("a miscorrecting ECC returns wrong bytes as if the read were fine", "[nand][faults]") {
  auto n = make_ram_nand(small_geometry());
  const std::vector<Page> want = fill(*n, 4, 3);
  EmulatedNand::BitFlips f;
  f.sector_rate = 1.0;
  f.min_flips = f.max_flips = 6;
  f.ecc_strength = 4;
  f.miscorrect = true;
  n->set_bit_flips(f);
  for (Ppa p = 0; p < 4; p++) {
    Page got;
    REQUIRE_OK(read(*n, p, &got));
    CHECK(got.data != want[p].data);
    CHECK(got.spare != want[p].spare);
  }
  CHECK(n->counters().ecc_uncorrectable == 4 * 2);
}

TEST_CASE("a marked block fails programs and erases with kBadBlock and keeps its marker",
          "[nand][faults]") {
  const std::string path = pdl::test::temp_path("bad.img");
  std::unique_ptr<EmulatedNand> n;
  REQUIRE_OK(EmulatedNand::create_file(path, small_geometry(), &n));
  const Geometry g = n->geometry();
  const Ppa first = 3 * g.pages_per_block;
  CHECK(!n->is_bad(3));
  REQUIRE_OK(n->mark_bad(3));
  CHECK(n->is_bad(3));
  CHECK(n->marked_bad(3));
  CHECK(!n->is_bad(2));
  CHECK(n->counters().programs == 0);  // marking is not a counted program
  REQUIRE_ERR(n->program(first + 1, Bytes(g.page_data, 0x5A), {}), Errc::kBadBlock);
  REQUIRE_ERR(n->erase(3), Errc::kBadBlock);
  CHECK(n->counters().program_failures == 1);
  CHECK(n->counters().erase_failures == 1);
  Bytes spare(g.page_spare);
  REQUIRE_OK(n->read(first, {}, spare));
  CHECK(spare[0] != 0xFF);  // a failed erase never clears the marker
  REQUIRE_OK(n->program(2 * g.pages_per_block, Bytes(g.page_data, 0x5A), {}));  // others work
  REQUIRE_OK(n->erase(2));
  n.reset();
  REQUIRE_OK(EmulatedNand::open_file(path, &n));
  CHECK(n->is_bad(3));  // the marker is on the media
  CHECK(!n->is_bad(2));
}

TEST_CASE("a scheduled failure hits exactly that operation and makes its block bad",
          "[nand][faults]") {
  auto n = make_ram_nand(small_geometry());
  const Geometry g = n->geometry();
  std::mt19937_64 rng(4);
  const Page a = random_page(rng, g), b = random_page(rng, g);
  const Ppa in5 = 5 * g.pages_per_block;
  n->fail_at(2, 99);
  REQUIRE_OK(n->program(in5, a.data, {}));
  REQUIRE_OK(n->erase(7));
  const Status st = n->program(in5 + 1, b.data, b.spare);
  REQUIRE(st.is(Errc::kBadBlock));
  CHECK(!n->is_bad(5));  // not marked yet: the engine must notice and mark it
  CHECK(!n->is_bad(7));
  // The failed program left bits between erased and the new contents.
  Page got;
  REQUIRE_OK(read(*n, in5 + 1, &got));
  require_between(Bytes(g.page_data, 0xFF), b.data, got.data);
  // The block fails from now on; the page programmed before the failure still reads.
  REQUIRE_ERR(n->program(in5 + 2, a.data, {}), Errc::kBadBlock);
  REQUIRE_OK(read(*n, in5, &got));
  CHECK(got.data == a.data);
  // A failed erase leaves each page erased or untouched, and the marker can still be set.
  REQUIRE_ERR(n->erase(5), Errc::kBadBlock);
  REQUIRE_OK(read(*n, in5, &got));
  CHECK((got.data == a.data || got.data == Bytes(g.page_data, 0xFF)));
  REQUIRE_OK(n->mark_bad(5));
  CHECK(n->marked_bad(5));
  // Other blocks are unaffected; an erase can be the failing operation too.
  n->fail_at(0, 1);
  REQUIRE_ERR(n->erase(9), Errc::kBadBlock);
  CHECK(!n->is_bad(9));
  REQUIRE_OK(n->erase(10));
}

TEST_CASE("injected I/O errors hit exactly the chosen operations of any kind and touch nothing",
          "[nand][faults]") {
  auto n = make_ram_nand(small_geometry());
  const Geometry g = n->geometry();
  const std::vector<Page> want = fill(*n, 3, 7);
  std::mt19937_64 rng(8);
  const Page c = random_page(rng, g);
  const uint64_t ops0 = n->operations();
  // A single error: the second operation from now, a program — it programs nothing.
  n->io_errors_at(1);
  Page got;
  REQUIRE_OK(read(*n, 0, &got));
  REQUIRE_ERR(n->program(3, c.data, c.spare), Errc::kIoError);
  REQUIRE_OK(read(*n, 3, &got));
  CHECK(got.data == Bytes(g.page_data, 0xFF));
  REQUIRE_OK(n->program(3, c.data, c.spare));  // the page was untouched: programmable
  CHECK(n->io_errors_injected() == 1);
  CHECK(n->operations() - ops0 == 4);
  // A window of three: a read, an erase and a bad-block mark fail; the block keeps its pages.
  n->io_errors_at(0, 3);
  REQUIRE_ERR(read(*n, 1, &got), Errc::kIoError);
  REQUIRE_ERR(n->erase(0), Errc::kIoError);
  REQUIRE_ERR(n->mark_bad(0), Errc::kIoError);
  CHECK(!n->marked_bad(0));
  REQUIRE_OK(read(*n, 1, &got));
  CHECK(got == want[1]);
  CHECK(n->io_errors_injected() == 4);
  // A device gone until cleared; the counters never saw the failed operations as work.
  const uint64_t reads = n->counters().page_reads;
  n->io_errors_at(0, UINT64_MAX);
  for (int i = 0; i < 10; i++) REQUIRE_ERR(read(*n, 2, &got), Errc::kIoError);
  CHECK(n->counters().page_reads == reads);
  n->clear_io_errors();
  REQUIRE_OK(read(*n, 2, &got));
  CHECK(got == want[2]);
  CHECK(n->io_errors_injected() == 14);
}

TEST_CASE("the Nand interface's default marker access agrees with the emulator's",
          "[nand][faults]") {
  auto n = make_ram_nand(small_geometry());
  pdl::test::CutAt wrapper(*n);  // a Nand that does not override mark_bad / is_bad
  pdl::Nand& generic = wrapper;
  CHECK(!generic.is_bad(4));
  REQUIRE_OK(generic.mark_bad(4));
  CHECK(generic.is_bad(4));
  CHECK(n->marked_bad(4));
  CHECK(n->is_bad(4));
  CHECK(generic.is_bad(n->geometry().blocks));  // out of range: never usable
  REQUIRE_OK(n->mark_bad(6));
  CHECK(generic.is_bad(6));
}

TEST_CASE("the operation a power cut interrupted is reported, on whichever chip of the thread",
          "[nand][faults]") {
  using Op = EmulatedNand::Interrupted::Op;
  const Geometry g = small_geometry(8);
  auto a = make_ram_nand(g);
  auto b = make_ram_nand(g);
  std::mt19937_64 rng(5);
  const uint64_t ops0 = EmulatedNand::thread_mutating_ops();
  fill(*a, 3, 1);  // 3 programs on chip a
  CHECK(EmulatedNand::thread_mutating_ops() - ops0 == 3);
  // A program interrupted: its page and spare bytes.
  a->cut_power_after(1, pdl::Tear::kPrefix, 2);
  CHECK(EmulatedNand::thread_interrupted().op == Op::kNone);
  const Page p = random_page(rng, g);
  REQUIRE_OK(a->program(3, p.data, p.spare));
  CHECK(a->program(4, p.data, {}, 0, 0).is(Errc::kPowerCut));
  CHECK(EmulatedNand::thread_interrupted().op == Op::kProgram);
  CHECK(EmulatedNand::thread_interrupted().where == 4);
  CHECK(EmulatedNand::thread_interrupted().spare.empty());
  CHECK(a->erase(1).is(Errc::kPowerCut));  // frozen: not counted, not the interrupted one
  CHECK(EmulatedNand::thread_mutating_ops() - ops0 == 5);
  CHECK(EmulatedNand::thread_interrupted().where == 4);
  // Another chip of the thread: an erase interrupted; then a partial program's spare offset.
  b->cut_power_after(0);
  CHECK(b->erase(2).is(Errc::kPowerCut));
  CHECK(EmulatedNand::thread_interrupted().op == Op::kErase);
  CHECK(EmulatedNand::thread_interrupted().where == 2);
  b->restore_power();
  b->cut_power_after(0);
  const Bytes spare = {0x12, 0x34};
  CHECK(b->program(9, {}, spare, 0, 3).is(Errc::kPowerCut));
  CHECK(EmulatedNand::thread_interrupted().op == Op::kProgram);
  CHECK(EmulatedNand::thread_interrupted().spare_off == 3);
  CHECK(EmulatedNand::thread_interrupted().spare == spare);
  CHECK(EmulatedNand::thread_mutating_ops() - ops0 == 7);
}
