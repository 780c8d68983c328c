// test_crc32c.cc — CRC-32C: known vectors, hardware path == portable table, continuation.
//
// Invariant checked: crc32c() (SSE4.2 when available) and crc32c_portable() are the same
// function for every buffer, length, alignment and starting crc, and both match the published
// CRC-32C check values (RFC 3720 B.4 and the "123456789" check).
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "flash/common/crc32c.h"
#include "flash/store/spare.h"
#include "tests/support/test_util.h"

using pdl::crc32c;
using pdl::crc32c_portable;

TEST_CASE("crc32c matches the published check values", "[crc32c]") {
  const std::string check = "123456789";
  CHECK(crc32c(check.data(), check.size()) == 0xE3069283u);
  CHECK(crc32c_portable(check.data(), check.size()) == 0xE3069283u);

  std::vector<uint8_t> zeros(32, 0x00), ones(32, 0xFF), inc(32), dec(32);
  for (int i = 0; i < 32; i++) {
    inc[size_t(i)] = uint8_t(i);
    dec[size_t(i)] = uint8_t(31 - i);
  }
  CHECK(crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu);
  CHECK(crc32c_portable(zeros.data(), zeros.size()) == 0x8A9136AAu);
  CHECK(crc32c(ones.data(), ones.size()) == 0x62A8AB43u);
  CHECK(crc32c_portable(ones.data(), ones.size()) == 0x62A8AB43u);
  CHECK(crc32c(inc.data(), inc.size()) == 0x46DD794Eu);
  CHECK(crc32c_portable(inc.data(), inc.size()) == 0x46DD794Eu);
  CHECK(crc32c(dec.data(), dec.size()) == 0x113FDB5Cu);
  CHECK(crc32c_portable(dec.data(), dec.size()) == 0x113FDB5Cu);
}

TEST_CASE("crc32c of nothing leaves the running crc unchanged", "[crc32c]") {
  CHECK(crc32c(nullptr, 0) == 0u);
  CHECK(crc32c_portable(nullptr, 0) == 0u);
  CHECK(crc32c(nullptr, 0, 0xDEADBEEFu) == 0xDEADBEEFu);
  CHECK(crc32c_portable(nullptr, 0, 0xDEADBEEFu) == 0xDEADBEEFu);
}

TEST_CASE("hardware crc32c equals the portable table on random buffers", "[crc32c]") {
  auto rng = pdl::test::seeded_rng(0xC4C);
  const auto buf = pdl::test::random_page(rng, 8192 + 16);
  for (int trial = 0; trial < 2000; trial++) {
    // Random start (misaligned on purpose), random length including 0..7-byte tails.
    const size_t start = size_t(rng() % 16);
    const size_t len = trial < 64 ? size_t(trial) : size_t(rng() % 8193);
    const uint32_t init = (trial % 3 == 0) ? 0u : uint32_t(rng());
    INFO("start " << start << " len " << len << " init " << init);
    REQUIRE(crc32c(buf.data() + start, len, init) == crc32c_portable(buf.data() + start, len, init));
  }
}

TEST_CASE("crc32c continues across split buffers", "[crc32c]") {
  auto rng = pdl::test::seeded_rng(0xC4D);
  for (int trial = 0; trial < 500; trial++) {
    const size_t len = size_t(rng() % 4097);
    const auto buf = pdl::test::random_page(rng, len);
    const size_t cut = len ? size_t(rng() % (len + 1)) : 0;
    INFO("len " << len << " cut " << cut);
    const uint32_t whole = crc32c(buf.data(), len);
    REQUIRE(crc32c(buf.data() + cut, len - cut, crc32c(buf.data(), cut)) == whole);
    REQUIRE(crc32c_portable(buf.data() + cut, len - cut, crc32c_portable(buf.data(), cut)) ==
            whole);
    // Mixed: start on one implementation, continue on the other.
    REQUIRE(crc32c(buf.data() + cut, len - cut, crc32c_portable(buf.data(), cut)) == whole);
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
