// crc_bench.cc — CRC-32C nanoseconds per call, every implementation in the same run.
//
// Method: 64 inputs spread over 256 KiB at mixed alignments (each call's input differs, all
// stay in L2, as pages being checked do); one timing = a loop of independent calls whose
// results are XORed into a volatile sink. Each repetition times every implementation once, in
// a rotating order; the figure is the median over repetitions, after a warm-up that lets the
// CPU leave its idle clock.
#include "bench/crc_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>

#include "flash/common/crc32c.h"

namespace pdl::bench {
namespace {

volatile uint32_t g_crc_sink;
using CrcClock = std::chrono::steady_clock;

constexpr size_t kInputs = 64;
constexpr size_t kStride = 4099;  // between input starts: odd, so alignments vary

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Nanoseconds per call (one call, or two continuing calls) of `f` over `n`-byte inputs.
template <typename F>
double time_calls(F f, const std::vector<uint8_t>& pool, size_t n, bool continued,
                  size_t calls) {
  uint32_t acc = 0;
  const size_t cut = n / 3;
  const auto t0 = CrcClock::now();
  for (size_t c = 0; c < calls; c++) {
    const uint8_t* p = pool.data() + (c % kInputs) * kStride;
    acc ^= continued ? f(p + cut, n - cut, f(p, cut, 0)) : f(p, n, 0);
  }
  const double ns = std::chrono::duration<double, std::nano>(CrcClock::now() - t0).count();
  g_crc_sink = g_crc_sink ^ acc;
  return ns / double(calls);
}

}  // namespace

void run_crc_bench(bool quick, std::vector<std::string>* json_records) {
  const int reps = quick ? 5 : 21;
  // Columns: every path this CPU has, then crc32c() itself (its path behind one indirect jump).
  std::vector<const char*> names;
  std::vector<Crc32cFn> fns;
  size_t chain = SIZE_MAX;
  for (Crc32cPath p : {Crc32cPath::kPortable, Crc32cPath::kChain, Crc32cPath::kInterleaved,
                       Crc32cPath::kIsal}) {
    if (!crc32c_path_available(p)) continue;
    if (p == Crc32cPath::kChain) chain = fns.size();
    names.push_back(crc32c_path_name(p));
    fns.push_back(crc32c_function(p));
  }
  const size_t entry = fns.size();  // crc32c() itself, called as callers call it
  names.push_back("crc32c()");
  const Crc32cPath selected = crc32c_selected_path();

  std::mt19937_64 rng(0xC4C32C);
  std::vector<uint8_t> pool(kInputs * kStride + 4096);
  for (auto& b : pool) b = uint8_t(rng());
  const auto timed = [&](size_t i, size_t n, bool continued, size_t calls) {
    if (i == entry)
      return time_calls([](const uint8_t* p, size_t k, uint32_t c) { return crc32c(p, k, c); },
                        pool, n, continued, calls);
    return time_calls(fns[i], pool, n, continued, calls);
  };
  {  // warm-up: ~0.2 s
    const auto t0 = CrcClock::now();
    while (std::chrono::duration<double>(CrcClock::now() - t0).count() < 0.2)
      timed(entry, 4096, false, 1000);
  }

  std::printf("crc32c ns per call (median of %d), crc32c() uses %s; [c] = two continuing "
              "calls, cut at a third\n%-10s",
              reps, crc32c_path_name(selected), "bytes");
  for (const char* name : names) std::printf(" %19s", name);
  std::printf("  chain/crc32c()\n");
  for (bool continued : {false, true}) {
    for (size_t n : {16u, 23u, 64u, 224u, 512u, 2048u, 4096u}) {
      const size_t calls = std::max<size_t>(1000, (quick ? 100000 : 400000) / (n + 32));
      std::vector<std::vector<double>> ns(names.size());
      for (int r = 0; r < reps; r++)
        for (size_t k = 0; k < names.size(); k++) {
          const size_t i = (k + size_t(r)) % names.size();
          ns[i].push_back(timed(i, n, continued, calls));
        }
      std::printf("%-6zu%-4s", n, continued ? "[c]" : "");
      std::vector<double> med(names.size());
      for (size_t i = 0; i < names.size(); i++) {
        const double m = med[i] = median(ns[i]);
        std::printf(" %19.1f", m);
        if (json_records) {
          char buf[256];
          std::snprintf(buf, sizeof buf,
                        "{\"exp\":\"crc\",\"bytes\":%zu,\"continued\":%s,\"path\":\"%s\","
                        "\"ns_per_call\":%.2f,\"gbps\":%.3f}",
                        n, continued ? "true" : "false", names[i], m,
                        double(n) / m);
          json_records->emplace_back(buf);
        }
      }
      if (chain != SIZE_MAX) std::printf("  %13.2fx", med[chain] / med[entry]);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
}

}  // namespace pdl::bench
