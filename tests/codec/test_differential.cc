// test_differential.cc — the page-differential codec: round trips, canonical runs, limits,
// hostile input.
//
// Invariants checked: apply(encode(base, page)) == page; identical pages encode to nothing;
// the encoding is byte-for-byte the canonical one (runs sorted, each starting and ending on a
// changed byte, gaps of < kRunHeader equal bytes merged, gaps >= kRunHeader split), computed
// here by a naive byte-at-a-time reference encoder; encode never writes past out.size() and
// reports kDiffTooBig instead; apply rejects malformed runs with kCorrupt and stays in bounds.
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "flash/common/le.h"
#include "flash/codec/differential.h"
#include "tests/support/test_util.h"

using pdl::diff_apply;
using pdl::diff_encode;
using pdl::Errc;
using pdl::kDiffTooBig;
using pdl::kRunHeader;

namespace {

using Bytes = std::vector<uint8_t>;

struct Run {
  size_t off, len;
  bool operator==(const Run&) const = default;
};

// Decodes run headers (the test trusts only the format, not diff_apply).
std::vector<Run> parse_runs(const Bytes& enc) {
  std::vector<Run> runs;
  size_t pos = 0;
  while (pos < enc.size()) {
    REQUIRE(enc.size() - pos >= kRunHeader);
    Run r{pdl::le::get16(&enc[pos]), pdl::le::get16(&enc[pos + 2])};
    pos += kRunHeader;
    REQUIRE(enc.size() - pos >= r.len);
    pos += r.len;
    runs.push_back(r);
  }
  return runs;
}

// The specification, one byte at a time: changed stretches, merged across gaps < kRunHeader.
Bytes reference_encode(const Bytes& base, const Bytes& page) {
  std::vector<Run> runs;
  for (size_t i = 0; i < page.size(); i++) {
    if (base[i] == page[i]) continue;
    if (!runs.empty() && i - (runs.back().off + runs.back().len) < kRunHeader)
      runs.back().len = i + 1 - runs.back().off;
    else
      runs.push_back({i, 1});
  }
  Bytes out;
  for (const Run& r : runs) {
    uint8_t h[4];
    pdl::le::put16(h, uint16_t(r.off));
    pdl::le::put16(h + 2, uint16_t(r.len));
    out.insert(out.end(), h, h + 4);
    out.insert(out.end(), page.begin() + std::ptrdiff_t(r.off),
               page.begin() + std::ptrdiff_t(r.off + r.len));
  }
  return out;
}

// Encodes with a buffer big enough for anything (page + one header).
Bytes encode(const Bytes& base, const Bytes& page) {
  Bytes out(page.size() + kRunHeader + 64, 0xAB);
  const size_t n = diff_encode(base, page, std::span<uint8_t>(out.data(), page.size() + kRunHeader));
  REQUIRE(n != kDiffTooBig);
  REQUIRE(n <= page.size() + kRunHeader);
  out.resize(n);
  return out;
}

size_t count_changed(const Bytes& a, const Bytes& b) {
  size_t c = 0;
  for (size_t i = 0; i < a.size(); i++) c += a[i] != b[i];
  return c;
}

// Maximal stretches of changed bytes, before any merging.
size_t count_stretches(const Bytes& a, const Bytes& b) {
  size_t s = 0;
  for (size_t i = 0; i < a.size(); i++)
    if (a[i] != b[i] && (i == 0 || a[i - 1] == b[i - 1])) s++;
  return s;
}

// Every property of one pair: round trip, canonical form, size bounds.
void check_pair(const Bytes& base, const Bytes& page) {
  const Bytes enc = encode(base, page);
  REQUIRE(enc == reference_encode(base, page));

  const auto runs = parse_runs(enc);
  size_t prev_end = 0;
  size_t payload = 0;
  for (size_t k = 0; k < runs.size(); k++) {
    const Run& r = runs[k];
    REQUIRE(r.len > 0);
    REQUIRE(r.off + r.len <= page.size());
    if (k > 0) REQUIRE(r.off >= prev_end + kRunHeader);  // sorted, gap >= one header
    REQUIRE(base[r.off] != page[r.off]);                 // runs start and end on changes
    REQUIRE(base[r.off + r.len - 1] != page[r.off + r.len - 1]);
    for (size_t i = prev_end; i < r.off; i++) REQUIRE(base[i] == page[i]);
    prev_end = r.off + r.len;
    payload += r.len;
  }
  for (size_t i = prev_end; i < page.size(); i++) REQUIRE(base[i] == page[i]);
  REQUIRE(enc.size() == payload + kRunHeader * runs.size());
  // Merging only ever trades a 4-byte header for fewer than 4 gap bytes.
  REQUIRE(enc.size() <= count_changed(base, page) + kRunHeader * count_stretches(base, page));
  REQUIRE(enc.size() <= page.size() + kRunHeader);

  Bytes out = base;
  const pdl::Status st = diff_apply(enc, out);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  REQUIRE(out == page);
}

// `page` = `base` with `count` random positions changed to a different value.
Bytes scatter_changes(std::mt19937_64& rng, const Bytes& base, size_t count) {
  Bytes page = base;
  for (size_t k = 0; k < count; k++) {
    const size_t i = size_t(rng() % base.size());
    page[i] = uint8_t(base[i] ^ uint8_t(1 + rng() % 255));
  }
  return page;
}

// `page` = `base` with a few changed stretches of random length (how database pages change).
Bytes clustered_changes(std::mt19937_64& rng, const Bytes& base, size_t stretches) {
  Bytes page = base;
  for (size_t k = 0; k < stretches; k++) {
    const size_t len = 1 + size_t(rng() % 40);
    const size_t at = size_t(rng() % base.size());
    for (size_t i = at; i < std::min(base.size(), at + len); i++)
      page[i] = uint8_t(base[i] ^ uint8_t(1 + rng() % 255));
  }
  return page;
}

}  // namespace

TEST_CASE("identical pages give the empty differential", "[differential]") {
  const size_t n = GENERATE(512, 2048, 4096, 8192);
  auto rng = pdl::test::seeded_rng(0xD1 + n);
  const Bytes base = pdl::test::random_page(rng, n);
  Bytes out(16, 0xAB);
  CHECK(diff_encode(base, base, out) == 0);
  CHECK(diff_encode(base, base, std::span<uint8_t>()) == 0);  // fits even in no space at all
  Bytes page = base;
  CHECK(diff_apply({}, page).is_ok());
  CHECK(page == base);
}

TEST_CASE("empty pages encode to nothing", "[differential]") {
  Bytes none;
  Bytes out(8);
  CHECK(diff_encode(none, none, out) == 0);
  CHECK(diff_apply({}, none).is_ok());
}

TEST_CASE("a single changed byte at the first and at the last offset", "[differential]") {
  const size_t n = GENERATE(512, 2048, 4096, 8192);
  auto rng = pdl::test::seeded_rng(0xD2 + n);
  const Bytes base = pdl::test::random_page(rng, n);
  for (size_t at : {size_t(0), size_t(1), size_t(7), size_t(8), size_t(31), size_t(32), n - 2,
                    n - 1}) {
    Bytes page = base;
    page[at] ^= 0x5A;
    const Bytes enc = encode(base, page);
    REQUIRE(enc.size() == kRunHeader + 1);
    REQUIRE(parse_runs(enc) == std::vector<Run>{{at, 1}});
    REQUIRE(enc[4] == page[at]);
    check_pair(base, page);
  }
}

TEST_CASE("changes fewer than a header apart share one run", "[differential]") {
  auto rng = pdl::test::seeded_rng(0xD3);
  const Bytes base = pdl::test::random_page(rng, 2048);
  for (size_t start : {size_t(0), size_t(5), size_t(100), size_t(2040)}) {
    for (size_t gap = 0; gap <= 8; gap++) {  // equal bytes between the two changes
      const size_t second = start + 1 + gap;
      if (second >= base.size()) continue;
      Bytes page = base;
      page[start] ^= 0xFF;
      page[second] ^= 0xFF;
      const auto runs = parse_runs(encode(base, page));
      INFO("start " << start << " gap " << gap);
      if (gap < kRunHeader) {
        REQUIRE(runs == std::vector<Run>{{start, gap + 2}});
      } else {
        REQUIRE(runs == std::vector<Run>{{start, 1}, {second, 1}});
      }
      check_pair(base, page);
    }
  }
}

TEST_CASE("a chain of short gaps merges into one run", "[differential]") {
  auto rng = pdl::test::seeded_rng(0xD4);
  const Bytes base = pdl::test::random_page(rng, 512);
  Bytes page = base;
  // Changes at 10, 13, 17, 20, 24 (gaps 2,3,2,3) then 29 (gap 4) and 100.
  for (size_t at : {10, 13, 17, 20, 24, 29, 100}) page[at] ^= 0x01;
  REQUIRE(parse_runs(encode(base, page)) == std::vector<Run>{{10, 15}, {29, 1}, {100, 1}});
  check_pair(base, page);
}

TEST_CASE("a change near the page end with a short equal tail", "[differential]") {
  auto rng = pdl::test::seeded_rng(0xD5);
  const Bytes base = pdl::test::random_page(rng, 512);
  for (size_t tail = 0; tail <= 6; tail++) {
    Bytes page = base;
    page[511 - tail] ^= 0x80;
    page[500] ^= 0x80;
    INFO("tail " << tail);
    // The run never extends over the equal bytes after the last change.
    const auto runs = parse_runs(encode(base, page));
    REQUIRE(runs.back().off + runs.back().len == 512 - tail);
    check_pair(base, page);
  }
}

TEST_CASE("every byte changed gives one run covering the page", "[differential]") {
  const size_t n = GENERATE(512, 2048, 4096, 8192);
  auto rng = pdl::test::seeded_rng(0xD6 + n);
  const Bytes base = pdl::test::random_page(rng, n);
  Bytes page = base;
  for (auto& b : page) b = uint8_t(~b);
  const Bytes enc = encode(base, page);
  REQUIRE(enc.size() == n + kRunHeader);
  REQUIRE(parse_runs(enc) == std::vector<Run>{{0, n}});
  check_pair(base, page);
  // Exactly the encoded size is enough; one byte less is not.
  Bytes out(n + kRunHeader);
  REQUIRE(diff_encode(base, page, out) == n + kRunHeader);
  REQUIRE(diff_encode(base, page, std::span<uint8_t>(out.data(), n + kRunHeader - 1)) ==
          kDiffTooBig);
}

TEST_CASE("the largest page the u16 format allows round trips", "[differential]") {
  auto rng = pdl::test::seeded_rng(0xD7);
  const Bytes base = pdl::test::random_page(rng, 0xFFFF);
  Bytes page = base;
  for (auto& b : page) b = uint8_t(~b);
  REQUIRE(parse_runs(encode(base, page)) == std::vector<Run>{{0, 0xFFFF}});
  check_pair(base, page);
  page = base;
  page[0xFFFE] ^= 1;
  REQUIRE(parse_runs(encode(base, page)) == std::vector<Run>{{0xFFFE, 1}});
  check_pair(base, page);
}

TEST_CASE("random page pairs round trip in canonical form", "[differential]") {
  const size_t n = GENERATE(512, 2048, 4096, 8192);
  auto rng = pdl::test::seeded_rng(0xD8 + n);
  for (int trial = 0; trial < 1200; trial++) {
    const Bytes base = pdl::test::random_page(rng, n);
    Bytes page;
    switch (trial % 6) {
      case 0: page = scatter_changes(rng, base, 1 + rng() % 8); break;            // sparse
      case 1: page = scatter_changes(rng, base, n / 50); break;                   // ~2%
      case 2: page = scatter_changes(rng, base, n / 4 + rng() % n); break;        // dense
      case 3: page = clustered_changes(rng, base, 1 + rng() % 12); break;
      case 4: page = pdl::test::random_page(rng, n); break;                        // unrelated
      default: {  // bytes mostly equal with a repeating pattern: exercises every gap length
        page = base;
        const size_t step = 1 + rng() % 9;
        for (size_t i = rng() % step; i < n; i += step) page[i] ^= 0x11;
      }
    }
    INFO("page " << n << " trial " << trial);
    check_pair(base, page);
  }
}

TEST_CASE("pages of every small size, including odd tails, round trip", "[differential]") {
  auto rng = pdl::test::seeded_rng(0xD9);
  for (size_t n = 1; n <= 130; n++) {
    for (int trial = 0; trial < 40; trial++) {
      const Bytes base = pdl::test::random_page(rng, n);
      Bytes page = base;
      const size_t changes = size_t(rng() % (n + 1));
      for (size_t k = 0; k < changes; k++) page[rng() % n] ^= uint8_t(1 + rng() % 255);
      INFO("n " << n << " trial " << trial);
      check_pair(base, page);
    }
  }
}

TEST_CASE("a too-small output buffer gives kDiffTooBig and is never overrun", "[differential]") {
  const size_t n = GENERATE(512, 2048);
  auto rng = pdl::test::seeded_rng(0xDA + n);
  constexpr size_t kGuard = 64;
  constexpr uint8_t kCanary = 0xC5;
  for (int trial = 0; trial < 40; trial++) {
    const Bytes base = pdl::test::random_page(rng, n);
    const Bytes page = trial % 2 ? clustered_changes(rng, base, 1 + rng() % 6)
                                 : scatter_changes(rng, base, 1 + rng() % 30);
    const Bytes want = reference_encode(base, page);
    // Every limit below the encoded size fails; the exact size and more succeed.
    for (size_t cap = 0; cap <= want.size() + 2; cap++) {
      Bytes buf(cap + kGuard, kCanary);
      const size_t got = diff_encode(base, page, std::span<uint8_t>(buf.data(), cap));
      INFO("trial " << trial << " cap " << cap << " needed " << want.size());
      if (cap < want.size()) {
        REQUIRE(got == kDiffTooBig);
      } else {
        REQUIRE(got == want.size());
        REQUIRE(std::equal(want.begin(), want.end(), buf.begin()));
      }
      for (size_t g = cap; g < buf.size(); g++) REQUIRE(buf[g] == kCanary);
    }
  }
}

TEST_CASE("adjacent runs are accepted by apply", "[differential]") {
  // The encoder never emits them (it would merge), but they are well defined.
  Bytes page(512, 0x00);
  const Bytes runs = {10, 0, 2, 0, 1, 2,  // offset 10, length 2: bytes 1 2
                      12, 0, 1, 0, 3};    // offset 12 (the previous end), length 1: byte 3
  REQUIRE(diff_apply(runs, page).is_ok());
  CHECK(page[10] == 1);
  CHECK(page[11] == 2);
  CHECK(page[12] == 3);
  CHECK(page[9] == 0);
  CHECK(page[13] == 0);
}

namespace {

Bytes make_runs(std::initializer_list<std::pair<size_t, size_t>> runs, size_t drop_tail = 0) {
  Bytes out;
  for (auto [off, len] : runs) {
    uint8_t h[4];
    pdl::le::put16(h, uint16_t(off));
    pdl::le::put16(h + 2, uint16_t(len));
    out.insert(out.end(), h, h + 4);
    out.insert(out.end(), len, uint8_t(0xEE));
  }
  out.resize(out.size() - drop_tail);
  return out;
}

void expect_corrupt(const Bytes& runs, size_t page_size = 512) {
  // The page sits inside a guarded buffer: apply must not touch the guard bytes.
  constexpr size_t kGuard = 32;
  Bytes buf(page_size + 2 * kGuard, 0x77);
  const pdl::Status st = diff_apply(runs, std::span<uint8_t>(buf.data() + kGuard, page_size));
  INFO(st.to_string());
  REQUIRE(st.is(Errc::kCorrupt));
  for (size_t g = 0; g < kGuard; g++) {
    REQUIRE(buf[g] == 0x77);
    REQUIRE(buf[kGuard + page_size + g] == 0x77);
  }
}

}  // namespace

TEST_CASE("hostile differentials are rejected as corrupt", "[differential]") {
  SECTION("truncated header") {
    for (size_t k = 1; k < kRunHeader; k++) {
      Bytes r = make_runs({{0, 1}});
      r.resize(k);
      expect_corrupt(r);
      expect_corrupt(make_runs({{0, 1}, {10, 1}}, kRunHeader + 1 - k));  // second header cut
    }
  }
  SECTION("truncated payload") {
    expect_corrupt(make_runs({{0, 8}}, 1));
    expect_corrupt(make_runs({{0, 8}}, 8));
    expect_corrupt(make_runs({{0, 2}, {100, 300}}, 150));
  }
  SECTION("zero-length run") {
    expect_corrupt(make_runs({{0, 0}}));
    expect_corrupt(make_runs({{5, 1}, {20, 0}}));
  }
  SECTION("run past the page end") {
    expect_corrupt(make_runs({{511, 2}}));
    expect_corrupt(make_runs({{512, 1}}));
    expect_corrupt(make_runs({{0, 513}}));
    expect_corrupt(make_runs({{0xFFFF, 1}}));
    expect_corrupt(make_runs({{1, 0xFFFF}}), 0xFFFF);
    expect_corrupt(make_runs({{0, 1}}), 0);  // any run is out of bounds of an empty page
  }
  SECTION("unsorted or overlapping runs") {
    expect_corrupt(make_runs({{100, 4}, {50, 4}}));    // unsorted
    expect_corrupt(make_runs({{100, 10}, {105, 2}}));  // overlapping
    expect_corrupt(make_runs({{100, 10}, {109, 2}}));  // overlapping by one byte
    expect_corrupt(make_runs({{100, 1}, {100, 1}}));   // duplicate
  }
}

TEST_CASE("apply of random bytes is either ok or corrupt, and stays in bounds", "[differential]") {
  auto rng = pdl::test::seeded_rng(0xDB);
  size_t ok = 0, corrupt = 0;
  for (int trial = 0; trial < 20000; trial++) {
    Bytes runs = pdl::test::random_page(rng, size_t(rng() % 40));
    // Keep offsets and lengths small often enough that some inputs are valid.
    for (size_t p = 0; p + 4 <= runs.size(); p += 4 + (rng() % 8)) {
      runs[p + 1] = uint8_t(rng() % 3);
      runs[p + 3] = 0;
      runs[p + 2] = uint8_t(runs[p + 2] % 8);
    }
    Bytes page(512 + 64, 0x77);
    const pdl::Status st = diff_apply(runs, std::span<uint8_t>(page.data(), 512));
    if (st.is_ok()) ok++;
    else {
      REQUIRE(st.is(Errc::kCorrupt));
      corrupt++;
    }
    for (size_t g = 512; g < page.size(); g++) REQUIRE(page[g] == 0x77);
  }
  CHECK(ok > 0);
  CHECK(corrupt > 0);
}
