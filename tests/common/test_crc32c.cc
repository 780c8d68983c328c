// test_crc32c.cc — CRC-32C: known vectors, every implementation equal, continuation.
//
// Invariant checked: crc32c() and each implementation behind it (crc32c_by: the portable
// tables, the SSE4.2 chain, the SSE4.2 interleaved lanes, ISA-L for long inputs — those this
// CPU has) are the same function for every buffer, length, alignment, starting crc and split
// point, and all match the published CRC-32C check values (RFC 3720 B.4 and "123456789").
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "flash/common/crc32c.h"
#include "flash/common/crc32c_paths.h"
#include "flash/store/spare.h"
#include "tests/support/test_util.h"

using pdl::crc32c;
using pdl::crc32c_by;
using pdl::crc32c_portable;
using pdl::Crc32cPath;

namespace {

const Crc32cPath kAllPaths[] = {Crc32cPath::kPortable, Crc32cPath::kChain,
                                Crc32cPath::kInterleaved, Crc32cPath::kIsal};

// The implementations this CPU can run (always the portable one); the others are reported.
std::vector<Crc32cPath> runnable_paths() {
  std::vector<Crc32cPath> paths;
  for (Crc32cPath p : kAllPaths) {
    if (pdl::crc32c_path_available(p)) paths.push_back(p);
    else WARN("CRC-32C path " << pdl::crc32c_path_name(p) << " not available on this CPU");
  }
  return paths;
}

}  // namespace

TEST_CASE("every crc32c implementation matches the published check values", "[crc32c]") {
  const std::string check = "123456789";
  std::vector<uint8_t> zeros(32, 0x00), ones(32, 0xFF), inc(32), dec(32);
  for (int i = 0; i < 32; i++) {
    inc[size_t(i)] = uint8_t(i);
    dec[size_t(i)] = uint8_t(31 - i);
  }
  CHECK(crc32c(check.data(), check.size()) == 0xE3069283u);
  CHECK(crc32c_portable(check.data(), check.size()) == 0xE3069283u);
  for (Crc32cPath p : runnable_paths()) {
    INFO("path " << pdl::crc32c_path_name(p));
    CHECK(crc32c_by(p, check.data(), check.size()) == 0xE3069283u);
    CHECK(crc32c_by(p, zeros.data(), zeros.size()) == 0x8A9136AAu);
    CHECK(crc32c_by(p, ones.data(), ones.size()) == 0x62A8AB43u);
    CHECK(crc32c_by(p, inc.data(), inc.size()) == 0x46DD794Eu);
    CHECK(crc32c_by(p, dec.data(), dec.size()) == 0x113FDB5Cu);
  }
}

// Long vectors, so that the interleaved path splits them into lanes (the published vectors
// are all shorter than its shortest split): CRC-32C of a repeated vector, continued piecewise
// through the portable tables, equals the one-call result of every path.
TEST_CASE("every crc32c implementation agrees on long runs of the check vectors", "[crc32c]") {
  std::vector<uint8_t> unit(32);
  for (int i = 0; i < 32; i++) unit[size_t(i)] = uint8_t(i);
  for (size_t reps : {3u, 7u, 64u, 200u}) {
    std::vector<uint8_t> buf;
    uint32_t piecewise = 0;
    for (size_t r = 0; r < reps; r++) {
      buf.insert(buf.end(), unit.begin(), unit.end());
      piecewise = crc32c_portable(unit.data(), unit.size(), piecewise);
    }
    for (Crc32cPath p : runnable_paths()) {
      INFO("path " << pdl::crc32c_path_name(p) << " bytes " << buf.size());
      CHECK(crc32c_by(p, buf.data(), buf.size()) == piecewise);
    }
  }
}

TEST_CASE("crc32c of nothing leaves the running crc unchanged", "[crc32c]") {
  CHECK(crc32c(nullptr, 0) == 0u);
  CHECK(crc32c(nullptr, 0, 0xDEADBEEFu) == 0xDEADBEEFu);
  for (Crc32cPath p : runnable_paths()) {
    INFO("path " << pdl::crc32c_path_name(p));
    CHECK(crc32c_by(p, nullptr, 0) == 0u);
    CHECK(crc32c_by(p, nullptr, 0, 0xDEADBEEFu) == 0xDEADBEEFu);
  }
}

TEST_CASE("crc32c uses the implementation it reports", "[crc32c]") {
  const Crc32cPath selected = pdl::crc32c_selected_path();
  CHECK(pdl::crc32c_path_available(selected));
  INFO("selected " << pdl::crc32c_path_name(selected));
  // The first available in order of speed is the one chosen.
  for (Crc32cPath p : {Crc32cPath::kIsal, Crc32cPath::kInterleaved, Crc32cPath::kChain}) {
    if (pdl::crc32c_path_available(p)) {
      CHECK(selected == p);
      break;
    }
  }
  auto rng = pdl::test::seeded_rng(0xC4B);
  const auto buf = pdl::test::random_page(rng, 4096);
  CHECK(crc32c(buf.data(), buf.size(), 7u) == crc32c_by(selected, buf.data(), buf.size(), 7u));
}

// Every length 0..10000 (every lane split and tail the interleaved path can take, and the
// block boundary of its longest lanes), each at a start 0..15 bytes past an 8-byte boundary.
TEST_CASE("every crc32c implementation equals the portable table on every length to 10000",
          "[crc32c]") {
  auto rng = pdl::test::seeded_rng(0xC4C);
  const auto buf = pdl::test::random_page(rng, 10000 + 16);
  const auto paths = runnable_paths();
  // (The sanitizer run: every length to 1024, then one in PDL_EXHAUSTIVE_STRIDE, spread.)
  const uint64_t stride = pdl::test::exhaustive_stride();
  for (size_t len = 0; len <= 10000; len++) {
    if (len > 1024 && (len * 2654435761u >> 8) % stride != 0) continue;
    const size_t start = len % 16;
    const uint32_t init = (len % 3 == 0) ? 0u : uint32_t(rng());
    const uint32_t want = crc32c_portable(buf.data() + start, len, init);
    for (Crc32cPath p : paths)
      if (crc32c_by(p, buf.data() + start, len, init) != want)
        FAIL("path " << pdl::crc32c_path_name(p) << " start " << start << " len " << len
                     << " init " << init);
  }
  SUCCEED();
}

// The library call itself (its inversion and piecing), on any CPU: ISA-L picks its own code
// for the CPU it runs on, so this holds where crc32c() would not choose it.
TEST_CASE("the ISA-L call equals the portable table on every CPU", "[crc32c]") {
  auto rng = pdl::test::seeded_rng(0xC4E);
  const auto buf = pdl::test::random_page(rng, 5000 + 16);
  for (size_t len = 0; len <= 5000; len += 1 + len / 64) {
    const size_t start = len % 16;
    const uint32_t init = (len % 3 == 0) ? 0u : uint32_t(rng());
    INFO("len " << len << " start " << start << " init " << init);
    REQUIRE(pdl::detail::isal_crc32c(buf.data() + start, len, init) ==
            crc32c_portable(buf.data() + start, len, init));
  }
}

TEST_CASE("crc32c continues across split buffers on every implementation", "[crc32c]") {
  auto rng = pdl::test::seeded_rng(0xC4D);
  const auto paths = runnable_paths();
  for (int trial = 0; trial < 2000; trial++) {
    const size_t len = size_t(rng() % 10001);
    const size_t start = size_t(rng() % 16);  // misaligned on purpose
    const auto raw = pdl::test::random_page(rng, len + start);
    const uint8_t* buf = raw.data() + start;
    const size_t cut = size_t(rng() % (len + 1));
    const uint32_t init = (trial % 4 == 0) ? 0u : uint32_t(rng());
    INFO("len " << len << " start " << start << " cut " << cut << " init " << init);
    const uint32_t whole = crc32c_portable(buf, len, init);
    REQUIRE(crc32c(buf + cut, len - cut, crc32c(buf, cut, init)) == whole);
    for (Crc32cPath first : paths) {
      for (Crc32cPath second : paths) {  // start on one implementation, continue on another
        INFO("paths " << pdl::crc32c_path_name(first) << " then "
                      << pdl::crc32c_path_name(second));
        REQUIRE(crc32c_by(second, buf + cut, len - cut, crc32c_by(first, buf, cut, init)) ==
                whole);
      }
    }
  }
}

TEST_CASE("crc32c detects every single-bit flip in a page", "[crc32c]") {
  auto rng = pdl::test::seeded_rng(0xC4E);
  auto page = pdl::test::random_page(rng, 512);
  const uint32_t good = crc32c(page.data(), page.size());
  for (size_t bit = 0; bit < page.size() * 8; bit++) {
    page[bit / 8] ^= uint8_t(1u << (bit % 8));
    const uint32_t flipped = crc32c(page.data(), page.size());
    page[bit / 8] ^= uint8_t(1u << (bit % 8));
    if (flipped == good) FAIL("bit flip " << bit << " not detected");
  }
  SUCCEED();
}

// The spare header's CRC-32C corrects (flash/store/spare.cc): every pattern of one or two flipped
// bits among its 216 protected bits gives back the header as programmed, and three flipped
// bits never decode (CRC-32C's Hamming distance 6 at this length: no three-bit pattern lies
// within two bits of another valid header). Bytes outside the CRC: the obsolete mark decodes by
// majority, so one flip never changes it.
TEST_CASE("a spare header with one or two flipped bits decodes as programmed; three are refused",
          "[crc32c][spare]") {
  auto rng = pdl::test::seeded_rng(0x5BA2);
  std::vector<int> pos;  // bit positions in the spare: [1, 24) and [28, 32)
  for (int b = 8; b < 32 * 8; b++)
    if (b < 24 * 8 || b >= 28 * 8) pos.push_back(b);
  REQUIRE(pos.size() == 216);
  const uint64_t stride = pdl::test::exhaustive_stride();
  for (int round = 0; round < 4; round++) {
    pdl::SpareHeader h;
    h.type = round % 2 ? pdl::PageType::kDifferential : pdl::PageType::kBase;
    h.set_raw_word4(uint32_t(rng()));
    h.seq = rng();
    h.data_crc = uint32_t(rng());
    h.aux = uint32_t(rng() % 2048);
    h.commit = round >= 2;
    std::vector<uint8_t> spare(64), s(64);
    pdl::spare_encode(h, spare);
    auto same = [&](const pdl::SpareHeader& d) {
      return d.type == h.type && d.raw_word4() == h.raw_word4() && d.seq == h.seq && d.data_crc == h.data_crc &&
             d.aux == h.aux && d.commit == h.commit && !d.group && !d.obsolete && d.repaired;
    };
    auto flip = [&](int b) { s[size_t(b / 8)] ^= uint8_t(1u << (b % 8)); };
    for (size_t i = 0; i < pos.size(); i++) {
      for (size_t j = i; j < pos.size(); j++) {  // j == i: one flip
        // (The sanitizer run: one pair in PDL_EXHAUSTIVE_STRIDE, a different share each round.)
        if ((i * pos.size() + j + size_t(round)) % stride != 0) continue;
        s = spare;
        flip(pos[i]);
        if (j != i) flip(pos[j]);
        pdl::SpareHeader d;
        if (pdl::spare_decode(s, &d) != pdl::SpareState::kValid || !same(d))
          FAIL("bits " << pos[i] << ", " << pos[j] << " not corrected");
      }
    }
    for (int t = 0; t < 20000; t++) {
      s = spare;
      int a = pos[rng() % 216], b, c;
      do b = pos[rng() % 216]; while (b == a);
      do c = pos[rng() % 216]; while (c == a || c == b);
      flip(a), flip(b), flip(c);
      pdl::SpareHeader d;
      if (pdl::spare_decode(s, &d) != pdl::SpareState::kCorrupt)
        FAIL("bits " << a << ", " << b << ", " << c << " decoded");
    }
    for (int bit = 0; bit < 8; bit++) {  // the obsolete mark, live and marked
      pdl::SpareHeader d;
      s = spare;
      s[pdl::kSpareObsoleteAt] ^= uint8_t(1u << bit);
      REQUIRE(pdl::spare_decode(s, &d) == pdl::SpareState::kValid);
      REQUIRE(!d.obsolete);
      s[pdl::kSpareObsoleteAt] = uint8_t(1u << bit);
      REQUIRE(pdl::spare_decode(s, &d) == pdl::SpareState::kValid);
      REQUIRE(d.obsolete);
    }
  }
  SUCCEED();
}
