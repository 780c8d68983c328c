// random.h — TPC-C's random inputs (TPC-C 5.11 §2.1.6, §4.3.2), deterministic and portable.
//
// Rng is xoshiro256** seeded through splitmix64: the same seed gives the same numbers on every
// platform and standard library (std::uniform_int_distribution is implementation-defined, so it
// is not used). Every generated value in pdl-tpcc — loaded rows and transaction inputs — comes
// from an Rng whose seed derives from the run's --seed, so a run is reproducible.
#pragma once

#include <cstdint>
#include <string>

namespace pdl::tpcc {

uint64_t splitmix64(uint64_t* state);
// A seed for stream `stream` of run seed `seed` (loader tables, transaction i, ...).
uint64_t derive_seed(uint64_t seed, uint64_t stream);

class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  // Uniform in [lo, hi] (inclusive, lo <= hi), unbiased.
  int64_t uniform(int64_t lo, int64_t hi);
  // Uniform fixed-point: a value in [lo, hi] with `decimals` digits after the point
  // (e.g. 0.0000 .. 0.2000 for a tax rate).
  double decimal(double lo, double hi, int decimals);
  // a-string / n-string of a random length in [min_len, max_len] (§4.3.2.2).
  std::string astring(int min_len, int max_len);
  std::string nstring(int min_len, int max_len);
  // §4.3.2.7: four random digits followed by "11111".
  std::string zip();
  // i_data / s_data: a-string of 26..50 characters, 10% containing "ORIGINAL" (§4.3.3.1).
  std::string data_with_original();

 private:
  uint64_t s_[4];
};

// The C constants of NURand (§2.1.6): one set for loading, and for the run a C_LAST whose
// distance from the load's obeys §2.1.6.1 (65..119, not 96 or 112).
struct NURandC {
  int64_t c_last = 0, c_id = 0, ol_i_id = 0;
  static NURandC for_load(uint64_t seed);
  static NURandC for_run(const NURandC& load, uint64_t seed);
};

// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
int64_t nurand(Rng& r, int64_t a, int64_t x, int64_t y, int64_t c);

// C_LAST from a number 0..999: three syllables (§4.3.2.3), e.g. 371 → "PRICALLYOUGHT".
std::string last_name(int64_t num);

}  // namespace pdl::tpcc
