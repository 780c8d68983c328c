// codec_bench.cc — diff_encode / diff_apply throughput on synthetic page pairs.
//
// Method: a fixed set of page pairs (different change positions, so branch predictors cannot
// learn one page) is encoded, then the encodings are applied, each in a loop timed with
// steady_clock until the row's time budget is spent. Apply runs in place on a working copy
// that already holds the result: applying a differential is idempotent, so every pass does
// the same copying work without a reset memcpy polluting the timing. A checksum of every
// result feeds a volatile sink so the work cannot be optimised away.
// roundtrip GB/s = page bytes / (encode time per page + apply time per page). Each figure is
// the best of several timing windows (see time_per_page), after a warm-up that lets the CPU
// leave its idle clock.
#include "bench/codec_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>

#include "bench/crc_bench.h"
#include "flash/codec/differential.h"

namespace pdl::bench {
namespace {

constexpr size_t kPairs = 64;
volatile uint64_t g_sink;

using Clock = std::chrono::steady_clock;

struct Pair {
  std::vector<uint8_t> base, page, enc, work;
};

std::vector<Pair> make_pairs(size_t page_size, unsigned changed_pct, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Pair> pairs(kPairs);
  const size_t changes = page_size * changed_pct / 100;
  for (Pair& p : pairs) {
    p.base.resize(page_size);
    for (auto& b : p.base) b = uint8_t(rng());
    p.page = p.base;
    // Exactly `changes` distinct positions get a different value.
    std::vector<size_t> idx(page_size);
    for (size_t i = 0; i < page_size; i++) idx[i] = i;
    for (size_t k = 0; k < changes; k++) {
      std::swap(idx[k], idx[k + size_t(rng() % (page_size - k))]);
      p.page[idx[k]] = uint8_t(p.base[idx[k]] ^ uint8_t(1 + rng() % 255));
    }
    p.enc.resize(page_size + kRunHeader);
  }
  return pairs;
}

// Runs `pass` (one pass over all pairs) in kWindows windows of budget_s / kWindows seconds
// each and returns the best window's seconds per page. The machines this runs on are shared:
// the best window is the one least disturbed by other work, so it is the repeatable figure.
constexpr int kWindows = 7;
template <typename Pass>
double time_per_page(double budget_s, Pass&& pass) {
  pass();  // warm caches and branch predictors
  double best = 1e30;
  for (int w = 0; w < kWindows; w++) {
    uint64_t pages = 0;
    const auto t0 = Clock::now();
    double elapsed = 0;
    do {
      for (int r = 0; r < 16; r++) pass();
      pages += 16 * kPairs;
      elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    } while (elapsed < budget_s / kWindows);
    best = std::min(best, elapsed / double(pages));
  }
  return best;
}

}  // namespace

void run_codec_bench(bool quick, std::vector<std::string>* json_records) {
  const double budget = quick ? 0.1 : 0.7;
  const size_t page_size = 2048;
  {  // warm-up: ~0.2 s of encoding before the first timed row
    std::vector<Pair> warm = make_pairs(page_size, 2, 1);
    uint64_t sum = 0;
    const auto t0 = Clock::now();
    while (std::chrono::duration<double>(Clock::now() - t0).count() < 0.2)
      for (Pair& p : warm) sum += diff_encode(p.base, p.page, p.enc);
    g_sink = g_sink + sum;
  }
  for (unsigned pct : {2u, 0u, 10u, 50u}) {
    std::vector<Pair> pairs = make_pairs(page_size, pct, 0xC0DEC000 + pct);
    uint64_t sum = 0;
    for (Pair& p : pairs) {
      const size_t n = diff_encode(p.base, p.page, p.enc);
      if (n == kDiffTooBig) {
        std::fprintf(stderr, "codec bench: encoding exceeded page + header\n");
        return;
      }
      p.enc.resize(n);
      p.work = p.base;
      if (!diff_apply(p.enc, p.work).is_ok() || p.work != p.page) {
        std::fprintf(stderr, "codec bench: round trip failed\n");
        return;
      }
      p.enc.resize(page_size + kRunHeader);
    }

    const double enc_s = time_per_page(budget, [&] {
      for (Pair& p : pairs) sum += diff_encode(p.base, p.page, p.enc);
    });
    for (Pair& p : pairs) p.enc.resize(diff_encode(p.base, p.page, p.enc));
    const double app_s = time_per_page(budget, [&] {
      for (Pair& p : pairs) {
        sum += diff_apply(p.enc, p.work).is_ok();
        sum += p.work[sum % page_size];
      }
    });
    g_sink = g_sink + sum;

    const double enc_gbps = double(page_size) / enc_s / 1e9;
    const double app_gbps = double(page_size) / app_s / 1e9;
    const double rt_gbps = double(page_size) / (enc_s + app_s) / 1e9;
    std::printf("codec  page=%zu changed=%u%%  encode %.2f GB/s  apply %.2f GB/s  "
                "encode+apply %.2f GB/s\n",
                page_size, pct, enc_gbps, app_gbps, rt_gbps);
    std::fflush(stdout);
    if (json_records) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "{\"exp\":\"codec\",\"page\":%zu,\"changed_pct\":%u,\"encode_gbps\":%.3f,"
                    "\"apply_gbps\":%.3f,\"roundtrip_gbps\":%.3f}",
                    page_size, pct, enc_gbps, app_gbps, rt_gbps);
      json_records->emplace_back(buf);
    }
  }
  // The checksum beside the codec: every page read and written is CRC-checked too.
  run_crc_bench(quick, json_records);
}

}  // namespace pdl::bench
