// crc_bench.h — micro-benchmark of CRC-32C: nanoseconds per call of each implementation.
//
// Sizes are those pdl checksums: spare headers (23 bytes), short records, spare areas (64 and
// 224 bytes), sectors and pages (512 to 4096 bytes); each also as a continued call, the input
// cut at a third (crc32c(b, crc32c(a))). Every implementation this CPU has (crc32c.h:
// Crc32cPath) is timed in the same run, the implementations taking turns within each
// repetition; a figure is the median of the repetitions. The sse4.2-chain column is the
// algorithm crc32c() used before the interleaved lanes (one crc32 chain); the ratio column is
// chain time over crc32c()'s own path. Wall clock: deterministic in work, not in time.
#pragma once

#include <string>
#include <vector>

namespace pdl::bench {

// Prints the table to stdout and (if json_records is not null) appends one JSON object per
// size and path: {"exp":"crc","bytes":4096,"continued":false,"path":"isa-l","ns_per_call":..,
// "gbps":..}. quick: 5 repetitions instead of 21.
void run_crc_bench(bool quick, std::vector<std::string>* json_records);

}  // namespace pdl::bench
