// fuzz_differential.cc — libFuzzer target: the decoders of differentials and IPL logs
// (flash/codec/differential.h, record.h; flash/ipl/ipl_sector.h), on hostile bytes.
//
// Input: byte 0 selects what the rest is —
//   0  a differential page's used bytes: records walked (RecordReader), each record's runs
//      applied to a page;
//   1  the runs of one differential, applied to a page (diff_apply);
//   2  a base page and a new page (the input's halves): diff_encode within a limit, then
//      diff_apply must turn the base into exactly the new page (abort() otherwise);
//   3  IPL log records applied in order (log_apply);
//   4  a block's log region: walk_log over it, each complete write's payloads applied (or its
//      unmap bitmap consulted) as the store's replay does; sectors of 512 bytes, or of 128
//      when byte 0 is 128 or more (129, 134, ...: a store with log_sector=128).
// Errors (kCorrupt) are expected; crashes, out-of-bounds access (ASan), wrong round trips are
// what the fuzzer hunts.
#include <algorithm>
#include <cstdlib>
#include <span>
#include <vector>

#include "flash/ipl/ipl_sector.h"
#include "flash/codec/differential.h"
#include "flash/pdl/record.h"
#include "flash/store/store_params.h"

namespace {

constexpr size_t kPage = 2048;  // the paper's page

std::vector<uint8_t> base_page() {
  std::vector<uint8_t> p(kPage);
  for (size_t i = 0; i < kPage; i++) p[i] = uint8_t(i * 31 + 7);
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::span<const uint8_t> in(data + 1, size - 1);
  std::vector<uint8_t> page = base_page();
  switch (data[0] % 5) {
    case 0: {
      pdl::RecordReader rr(in.first(std::min(in.size(), kPage)));
      pdl::RecordView r;
      while (rr.next(&r)) {
        if (r.size() > kPage) std::abort();  // a record cannot be larger than its page
        if (!r.tombstone) (void)pdl::diff_apply(r.runs, page);
      }
      break;
    }
    case 1:
      (void)pdl::diff_apply(in, page);
      break;
    case 2: {
      const size_t half = std::min(in.size() / 2, kPage);
      std::vector<uint8_t> base = base_page(), want = base_page();
      std::copy_n(in.begin(), half, base.begin());
      std::copy_n(in.begin() + int64_t(half), half, want.begin());
      const size_t limit = in.empty() ? 0 : in.back() * 8u;  // some limits are too small
      std::vector<uint8_t> runs(limit);
      const size_t n = pdl::diff_encode(base, want, runs);
      if (n == pdl::kDiffTooBig) break;
      if (n > limit) std::abort();
      if (!pdl::diff_apply(std::span(runs).first(n), base).is_ok() || base != want)
        std::abort();
      break;
    }
    case 3:
      (void)pdl::log_apply(in, page);
      break;
    case 4: {
      const size_t sector = data[0] >= 128 ? 128 : pdl::kLogSector;
      std::vector<uint8_t> log(in.begin(), in.end());
      log.resize((log.size() + sector - 1) / sector * sector, 0xFF);
      const uint32_t used = uint32_t(log.size() / sector);
      (void)pdl::walk_log(log, sector, used, 0,
                          [&](const pdl::SectorHeader& h,
                              std::span<const std::span<const uint8_t>> parts) {
                            if ((h.flags & pdl::kSectorUnmap) && !parts.empty()) {
                              (void)pdl::unmap_has(parts[0], h.slot);
                              return pdl::Status::ok();
                            }
                            if (h.flags & pdl::kSectorReset) std::fill(page.begin(), page.end(), 0);
                            for (const auto& p : parts) {
                              const pdl::Status st = pdl::log_apply(p, page);
                              if (!st.is_ok()) return st;
                            }
                            return pdl::Status::ok();
                          });
      break;
    }
  }
  return 0;
}
