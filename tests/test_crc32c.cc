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
#include "tests/test_util.h"

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
