// tables_engine.h — the checkpoint mechanics on a test engine (header-only, tests only;
// test_checkpoint.cc): a PDL store behind TablesEngine, whose save_tables writes a digest of
// the store's contents (every lpn's mapped bit and page CRC), so that a checkpoint stream can
// be checked against the state it claims to be; open_tables mounts it as mount_store would,
// as a format-6 store (no summary pages: the guard writes "stale" at the first change); and
// TablesChip, the cases' common set-up: a 64-block chip of 512-byte pages formatted with an
// 8-block checkpoint area, its store opened through open_tables, a seeded rng and an empty
// model of the contents.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "flash/common/crc32c.h"
#include "flash/device/emulated_nand.h"
#include "flash/image/open_store.h"
#include "flash/pdl/pdl_store.h"
#include "flash/store/checkpoint_log.h"
#include "flash/store/checkpoint_view.h"
#include "flash/store/checkpointed_store.h"
#include "flash/store/superblock.h"
#include "flash/store/table_stream.h"
#include "tests/support/forwarding_store.h"
#include "tests/support/test_util.h"

namespace pdl::test {

// 512-byte pages, 8 per block, 64 blocks; the last 8 are the checkpoint area.
inline constexpr uint32_t kArea = 8;
inline Geometry chip_geometry() { return pdl::test::geometry(512, 32, 8, 64); }

inline StoreParams area_params() {
  StoreParams p;
  p.method = Method::kPdl;
  p.max_differential = 64;
  p.checkpoint = true;
  p.checkpoint_blocks = kArea;
  return p;
}

// A digest of a store's contents: every lpn's mapped bit and page CRC.
inline std::vector<uint8_t> digest(PageStore& s) {
  TableWriter w;
  std::vector<uint8_t> buf(s.page_size());
  for (Lpn l = 0; l < s.logical_pages(); l++) {
    const Status st = s.peek(l, buf);
    w.u8(st.is_ok());
    w.u32(st.is_ok() ? crc32c(buf.data(), buf.size()) : 0);
  }
  return std::move(w.data());
}

// The engine in front of a PDL store whose tables are the digest of its contents.
class TablesEngine final : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  Status save_tables(TableWriter& w) const override {
    if (inner().dirty()) return Status::error(Errc::kBusy, "dirty");
    const auto d = digest(inner());
    w.tag("TEST");
    w.bytes(d);
    return Status::ok();
  }
};

// What mount_store does on a chip with an area, with TablesEngine in front of a scanned PDL
// store (so that write_checkpoint has tables to write). The store runs as a format-6 one:
// no summary pages, the guard's "stale" entry on the first change — the log mechanics these
// cases check (a format-7 store falls back to them when it cannot declare a block;
// test_checkpoint_replay.cc checks its summaries).
inline Status open_tables(Nand& chip, std::unique_ptr<PageStore>* out) {
  Superblock sb;
  PDL_TRY(read_superblock(chip, resolve_store_params, &sb));
  auto log = std::make_unique<CheckpointLog>(chip, sb);  // (a block switch copies sb as is)
  sb.summaries = false;
  PDL_TRY(log->load());
  auto view = std::make_unique<CheckpointView>(chip, sb.checkpoint_blocks, *log);
  view->arm(log->may_be_current());
  std::unique_ptr<PageStore> eng;
  PDL_TRY(PdlStore::mount(*view, sb.params, false, CommitMode::kGroup, &eng, nullptr));
  *out = std::make_unique<CheckpointedStore>(sb, std::move(log), std::move(view),
                                             std::make_unique<TablesEngine>(std::move(eng)),
                                             false);
  return Status::ok();
}


// The common set-up: a chip formatted with the area (format's own store closed), the store
// opened through open_tables (unless `open` is false), rng seeded with `seed`, model sized.
struct TablesChip {
  std::unique_ptr<EmulatedNand> chip;
  std::unique_ptr<PageStore> s;
  std::mt19937_64 rng;
  std::vector<std::optional<std::vector<uint8_t>>> model;

  explicit TablesChip(uint64_t seed, bool open = true)
      : chip(make_ram_nand(chip_geometry())), rng(seeded_rng(seed)) {
    REQUIRE(format_store(*chip, area_params(), &s, CommitMode::kGroup).is_ok());
    model.resize(s->logical_pages());
    s.reset();
    if (open) REQUIRE(open_tables(*chip, &s).is_ok());
  }
};

}  // namespace pdl::test
