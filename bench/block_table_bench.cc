// block_table_bench.cc — pdl-blkbench: the size of the block manager's checkpointed tables
// (section PBLK, docs/format.md §13.1) by chip size, the part of a checkpoint's root that grows
// with the chip (issue 23: a mount after a clean unmount reads the root whole).
//
// Per chip size (2 KiB pages, 64 pages per block, the superblock's two blocks first): a
// BlockManager as a format leaves it (every block free, not known erased), and the same after
// a page-mapped workload driven through it — every logical page of half the data area written
// once in order, then as many random updates (uniform; --updates K: K times as many), with
// greedy garbage collection moving valid pages to the GC head, as PdlStore does. Printed: PBLK's bytes now and in its version 1
// layout (computed from the same tables), bytes per block, and the 110 µs page reads the mount
// spends on it (flash/image/block_table_sizes.h: the workload, and the round trip each
// measurement must pass). No chip: a 64 GiB run takes ~200 MB of RAM (the workload's page maps)
// and seconds, not an image. Bytes and page counts only: machine-independent.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/app.h"
#include "flash/image/block_table_sizes.h"

using namespace pdl;

// pdl-blkbench [--updates K] [MIB...]: chip sizes in MiB (default 256 MiB .. 64 GiB).
int main(int argc, char** argv) {
  std::vector<uint64_t> sizes = {256, 1024, 4096, 16384, 65536};
  uint64_t rounds = 1;
  std::vector<std::string> mibs;
  cli::CommandLine cl({"pdl-blkbench",
                       {"[--updates K] [MIB...]"},
                       "The size of the block manager's checkpointed tables (section PBLK) by "
                       "chip size in MiB (default 256 1024 4096 16384 65536), formatted and "
                       "after a page-mapped workload.",
                       "exit status: 0 measured, 1 a measurement failed, 2 usage error"});
  cl.app()
      .add_option("--updates", rounds, "random updates, K times the pages written")
      ->type_name("K")
      ->check(cli::integer(1, 1000))
      ->capture_default_str();
  cl.app().add_option("mib", mibs, "chip sizes in MiB")->type_name("MIB")
      ->check(cli::integer(1, 1u << 20));
  if (const int rc = cl.parse(argc, argv); rc >= 0) return rc;
  if (!mibs.empty()) sizes.clear();
  for (const std::string& m : mibs) {
    uint64_t v = 0;
    if (!cli::parse_decimal(m, &v)) return cl.error("MIB: not a size in MiB: '" + m + "'");
    sizes.push_back(v);
  }
  std::printf("PBLK (the block manager's checkpointed tables) by chip size; 2 KiB pages, 64 per "
              "block; reads at 2 KiB per 110 us page\n");
  std::printf("%-8s %8s | %-36s | half full, then %" PRIu64 " x as many random updates\n",
              "", "", "empty (as formatted)", rounds);
  std::printf("%-8s %8s | %10s %10s %6s %6s | %10s %10s %6s %6s %6s %7s\n", "chip", "blocks",
              "v1 bytes", "bytes", "B/blk", "reads", "v1 bytes", "bytes", "B/blk", "reads",
              "free", "closed");
  for (uint64_t mib : sizes) {
    Geometry g;
    g.page_data = 2048;
    g.page_spare = 64;
    g.pages_per_block = 64;
    g.blocks = uint32_t(mib * 1024 * 1024 / (uint64_t(g.page_data) * g.pages_per_block));
    BlockTableSize empty, full;
    if (const Status st = block_table_sizes(g, rounds, 0xb10c + mib, &empty, &full); !st.is_ok()) {
      std::fprintf(stderr, "pdl-blkbench: %" PRIu64 " MiB: %s\n", mib, st.to_string().c_str());
      return 1;
    }
    auto reads = [](uint64_t bytes) { return (bytes + 2047) / 2048; };
    const std::string chip = mib >= 1024 ? std::to_string(mib / 1024) + " GiB"
                                         : std::to_string(mib) + " MiB";
    std::printf("%-8s %8u | %10" PRIu64 " %10" PRIu64 " %6.2f %6" PRIu64 " | %10" PRIu64
                " %10" PRIu64 " %6.2f %6" PRIu64 " %6u %7u\n",
                chip.c_str(), g.blocks, empty.v1_bytes, empty.bytes,
                double(empty.bytes) / g.blocks, reads(empty.bytes), full.v1_bytes, full.bytes,
                double(full.bytes) / g.blocks, reads(full.bytes), full.free, full.closed);
    std::fflush(stdout);
  }
  return 0;
}
