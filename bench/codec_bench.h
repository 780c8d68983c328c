// codec_bench.h — micro-benchmark of the page-differential codec (diff_encode / diff_apply).
//
// Reports throughput in GB/s (10^9 page bytes per second of wall time, std::chrono::steady_clock)
// for 2048-byte pages with 0, 2, 10 and 50 % of their bytes changed at random positions (the
// 2 % row is the project's target: encode + apply >= 4 GB/s). Changed bytes are scattered one
// by one, the codec's worst case (about one run per changed byte at 2 %); real page updates
// change stretches and encode faster. Results are deterministic in work (fixed seed), not in
// time; the 0 % apply figure only measures an empty call.
#pragma once

#include <string>
#include <vector>

namespace pdl::bench {

// Runs every row, prints a table to stdout, and (if json_records is not null) appends one JSON
// object per row: {"exp":"codec","page":2048,"changed_pct":2,"encode_gbps":..,
// "apply_gbps":..,"roundtrip_gbps":..}. quick: ~0.05 s per measurement instead of ~0.3 s.
void run_codec_bench(bool quick, std::vector<std::string>* json_records);

}  // namespace pdl::bench
