// ipl_crash_fuzz.cc — ipl-crash-fuzz: randomized power-cut campaign for the IPU/IPL engine
// (opt-in; not a default test).
//
//   build/tests/ipl-crash-fuzz FIRST_SEED COUNT      (env: KEEP=1 go on after a failure,
//                                                     CYCLES=n crash cycles per seed, default 8)
// Per seed: a random geometry (512–8192-byte pages with nop = page/512, 2–16 pages per block,
// 8–40 blocks), IPU or IPL with a log region of 1 .. pages_per_block-1 pages, logical_pages
// sometimes not a multiple of the data pages per block. Then CYCLES times: random work (small
// changes with correct note_update ranges, overlapping runs, whole new pages, pages of zeros,
// trims, syncs, reads and peeks checked against the model), a power cut at a random flash
// operation with a random tear, restore, mount (twice: identical), check(), and the oracle:
// every lpn is its value at the last completed sync or a value written (or a trim) after it.
// The recovered values become the next cycle's baseline.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "flash/device/emulated_nand.h"
#include "flash/store/page_store.h"

using namespace pdl;
using Page = std::vector<uint8_t>;
using Value = std::optional<Page>;  // nullopt: unmapped

namespace {

struct Failure {
  std::string what;
};

[[noreturn]] void fail(const std::string& m) { throw Failure{m}; }

std::vector<Value> read_all(PageStore& s) {
  std::vector<Value> out(s.logical_pages());
  Page p(s.page_size());
  for (Lpn l = 0; l < s.logical_pages(); l++) {
    const Status st = s.read(l, p);
    if (st.is(Errc::kNotFound)) continue;
    if (!st.is_ok()) fail("read " + std::to_string(l) + ": " + st.to_string());
    out[l] = p;
  }
  return out;
}

// Random work until the chip's power fails (or `ops` operations without a cut).
// synced[l]: value at the last completed sync; later[l]: values written after it.
Status work(PageStore& s, std::mt19937_64& rng, std::vector<Value>& cur,
            std::vector<Value>& synced, std::vector<std::vector<Value>>& later, int ops) {
  const uint32_t ps = s.page_size();
  const Lpn n = s.logical_pages();
  Page got(ps);
  for (int i = 0; i < ops; i++) {
    const Lpn l = Lpn(rng() % n);
    const unsigned r = unsigned(rng() % 100);
    if (r < 55) {
      Page p;
      if (cur[l] && rng() % 10 < 7) {
        p = *cur[l];
        const int updates = 1 + int(rng() % 6);
        const bool note = rng() % 3 != 0;
        for (int u = 0; u < updates; u++) {
          const uint32_t len = 1 + uint32_t(rng() % (rng() % 5 == 0 ? ps / 2 : 48));
          const uint32_t off = uint32_t(rng() % (ps - len + 1));
          for (uint32_t k = 0; k < len; k++) p[off + k] = uint8_t(p[off + k] + 1 + rng() % 255);
          if (note) s.note_update(l, off, len);
        }
      } else if (rng() % 4 == 0) {
        p.assign(ps, 0);
        if (rng() % 2) p[rng() % ps] = uint8_t(1 + rng() % 255);
      } else {
        p.resize(ps);
        for (auto& b : p) b = uint8_t(rng());
      }
      later[l].push_back(p);  // may be durable even if the write is cut
      PDL_TRY(s.write(l, p));
      cur[l] = p;
    } else if (r < 65) {
      later[l].push_back(std::nullopt);
      PDL_TRY(s.trim(l));
      cur[l].reset();
    } else if (r < 72) {
      PDL_TRY(s.sync());
      synced = cur;
      for (auto& v : later) v.clear();
    } else {
      const bool peek = rng() % 2;
      const Status st = peek ? s.peek(l, got) : s.read(l, got);
      if (st.is(Errc::kPowerCut) || st.is(Errc::kIoError)) return st;
      if (cur[l]) {
        if (!st.is_ok()) fail("read " + std::to_string(l) + ": " + st.to_string());
        if (got != *cur[l]) fail("read " + std::to_string(l) + " differs from the model");
      } else if (!st.is(Errc::kNotFound)) {
        fail("read of unmapped " + std::to_string(l) + ": " + st.to_string());
      }
    }
  }
  return Status::ok();
}

void run_seed(uint64_t seed, int cycles, uint64_t* cuts) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 11);
  Geometry g;
  g.page_data = 512u << (rng() % 5);
  g.page_spare = std::max<uint32_t>(32, g.page_data / 32);
  g.pages_per_block = 2 + uint32_t(rng() % 15);
  g.blocks = 8 + uint32_t(rng() % 33);
  g.partial_programs = std::max<uint32_t>(4, g.page_data / 512);
  StoreParams p;
  p.method = rng() % 3 == 0 ? Method::kIpu : Method::kIpl;
  if (p.method == Method::kIpl)
    p.log_region = g.page_data * (1 + uint32_t(rng() % (g.pages_per_block - 1)));
  const uint32_t dpb = g.pages_per_block - p.log_region / g.page_data;
  const uint32_t cap = (g.blocks - kSuperblockBlocks - 1) * dpb;
  p.logical_pages = rng() % 2 ? 0 : std::max<uint32_t>(1, cap - uint32_t(rng() % (dpb + 1)));
  char cfg[200];
  std::snprintf(cfg, sizeof cfg, "page=%u ppb=%u blocks=%u method=%s log_region=%u logical=%u",
                g.page_data, g.pages_per_block, g.blocks, method_name(p.method), p.log_region,
                p.logical_pages);
  try {
    std::unique_ptr<EmulatedNand> nand;
    if (!EmulatedNand::create_ram(g, &nand).is_ok()) fail("create_ram");
    std::unique_ptr<PageStore> s;
    if (Status st = format_store(*nand, p, &s); !st.is_ok()) fail("format: " + st.to_string());
    const Lpn n = s->logical_pages();
    std::vector<Value> cur(n), synced(n);
    std::vector<std::vector<Value>> later(n);
    for (int c = 0; c < cycles; c++) {
      const Tear tear = Tear(rng() % 3);
      nand->cut_power_after(rng() % 400, tear, rng());
      Status st = work(*s, rng, cur, synced, later, 100000);
      if (!st.is(Errc::kPowerCut))
        fail("cycle " + std::to_string(c) + ": expected a power cut, got " + st.to_string());
      (*cuts)++;
      s.reset();
      nand->restore_power();
      std::unique_ptr<PageStore> a, b;
      const uint64_t before = nand->mutating_ops();
      if (st = mount_store(*nand, &a); !st.is_ok()) fail("mount: " + st.to_string());
      if (nand->mutating_ops() != before) fail("mount wrote to the chip");
      if (st = a->check(); !st.is_ok()) fail("check after mount: " + st.to_string());
      const auto got = read_all(*a);
      if (st = mount_store(*nand, &b); !st.is_ok()) fail("second mount: " + st.to_string());
      if (read_all(*b) != got) fail("two mounts disagree");
      for (Lpn l = 0; l < n; l++) {
        bool ok = got[l] == synced[l];
        for (const Value& v : later[l]) ok = ok || got[l] == v;
        if (!ok)
          fail("cycle " + std::to_string(c) + " (tear " + std::to_string(int(tear)) + "): lpn " +
               std::to_string(l) + " is neither its synced value nor a later one (" +
               std::to_string(later[l].size()) + " later writes)");
      }
      cur = got;
      synced = got;
      for (auto& v : later) v.clear();
      s = std::move(a);
    }
  } catch (const Failure& f) {
    std::printf("BUG seed=%llu %s\n  %s\n", (unsigned long long)seed, cfg, f.what.c_str());
    std::fflush(stdout);
    if (!std::getenv("KEEP")) std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: ipl-crash-fuzz FIRST_SEED COUNT\n");
    return 2;
  }
  const uint64_t first = std::strtoull(argv[1], nullptr, 10);
  const uint64_t count = std::strtoull(argv[2], nullptr, 10);
  const int cycles = std::getenv("CYCLES") ? std::atoi(std::getenv("CYCLES")) : 8;
  uint64_t cuts = 0;
  for (uint64_t s = first; s < first + count; s++) run_seed(s, cycles, &cuts);
  std::printf("done seeds %llu..%llu: %llu power cuts\n", (unsigned long long)first,
              (unsigned long long)(first + count - 1), (unsigned long long)cuts);
  return 0;
}
