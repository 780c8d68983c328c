// random.cc — see random.h.
#include "tpcc/random.h"

#include <cmath>

namespace pdl::tpcc {

__extension__ typedef unsigned __int128 U128;  // for Lemire's method (GCC/Clang)

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  uint64_t s = seed ^ (stream * 0xD1B54A32D192ED03ull);
  splitmix64(&s);
  return splitmix64(&s);
}

Rng::Rng(uint64_t seed) {
  uint64_t st = seed;
  for (uint64_t& w : s_) w = splitmix64(&st);
}

uint64_t Rng::next() {
  auto rotl = [](uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

int64_t Rng::uniform(int64_t lo, int64_t hi) {
  const uint64_t range = uint64_t(hi - lo) + 1;
  if (range == 0) return int64_t(next());  // the full 64-bit range
  // Lemire's multiply-and-reject: unbiased, one multiplication in the common case.
  U128 m = U128(next()) * range;
  uint64_t low = uint64_t(m);
  if (low < range) {
    const uint64_t threshold = (0 - range) % range;
    while (low < threshold) {
      m = U128(next()) * range;
      low = uint64_t(m);
    }
  }
  return lo + int64_t(m >> 64);
}

double Rng::decimal(double lo, double hi, int decimals) {
  const double scale = std::pow(10.0, decimals);
  const int64_t v = uniform(int64_t(std::llround(lo * scale)), int64_t(std::llround(hi * scale)));
  return double(v) / scale;
}

std::string Rng::astring(int min_len, int max_len) {
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string s(size_t(uniform(min_len, max_len)), ' ');
  for (char& c : s) c = kChars[uniform(0, sizeof kChars - 2)];
  return s;
}

std::string Rng::nstring(int min_len, int max_len) {
  std::string s(size_t(uniform(min_len, max_len)), '0');
  for (char& c : s) c = char('0' + uniform(0, 9));
  return s;
}

std::string Rng::zip() { return nstring(4, 4) + "11111"; }

std::string Rng::data_with_original() {
  std::string s = astring(26, 50);
  if (uniform(1, 10) == 1) s.replace(size_t(uniform(0, int64_t(s.size()) - 8)), 8, "ORIGINAL");
  return s;
}

NURandC NURandC::for_load(uint64_t seed) {
  Rng r(derive_seed(seed, 0xC0C0));
  NURandC c;
  c.c_last = r.uniform(0, 255);
  c.c_id = r.uniform(0, 1023);
  c.ol_i_id = r.uniform(0, 8191);
  return c;
}

NURandC NURandC::for_run(const NURandC& load, uint64_t seed) {
  Rng r(derive_seed(seed, 0xC1C1));
  NURandC c;
  for (;;) {
    c.c_last = r.uniform(0, 255);
    const int64_t delta = c.c_last > load.c_last ? c.c_last - load.c_last : load.c_last - c.c_last;
    if (delta >= 65 && delta <= 119 && delta != 96 && delta != 112) break;
  }
  c.c_id = r.uniform(0, 1023);
  c.ol_i_id = r.uniform(0, 8191);
  return c;
}

int64_t nurand(Rng& r, int64_t a, int64_t x, int64_t y, int64_t c) {
  return (((r.uniform(0, a) | r.uniform(x, y)) + c) % (y - x + 1)) + x;
}

std::string last_name(int64_t num) {
  static const char* const kSyl[] = {"BAR", "OUGHT", "ABLE", "PRI",   "PRES",
                                     "ESE", "ANTI",  "CALLY", "ATION", "EING"};
  return std::string(kSyl[(num / 100) % 10]) + kSyl[(num / 10) % 10] + kSyl[num % 10];
}

}  // namespace pdl::tpcc
