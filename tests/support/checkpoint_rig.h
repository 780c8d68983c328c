// checkpoint_rig.h — the store-level checkpoint campaigns' common ground (header-only, tests
// only; docs/design.md §17): a chip with a checkpoint area holding a store that was filled,
// worked on and checkpointed at a clean close; a workload step (writes, a trim, a sync) with
// the contents each sync acknowledges; the check that a store reads exactly some contents; the
// sample stride of the sanitizer run; and every programmed page of the checkpoint log and area,
// found on the chip (not from a list of page kinds, so kinds added to the area are covered).
//
// Invariants: the chip is 96 blocks of 8 pages of 512 bytes, its last 12 blocks the area;
// checkpointed_chip's store wrote every lpn once (so garbage collection runs in any workload
// after it), then 20 steps, then a clean checkpoint (gen 1).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "flash/device/emulated_nand.h"
#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "tests/support/test_util.h"

namespace pdl::test {

using CkPage = std::vector<uint8_t>;
using CkModel = std::vector<std::optional<CkPage>>;

inline constexpr uint32_t kCkBlocks = 96, kCkAreaBlocks = 24;  // halves of 12: appended checkpoints fit

struct CkConfig {
  const char* name;
  Method method;
  FtlKind ftl;
  CommitMode mode;
  uint32_t log_pages = 0;  // IPL: its log region, in pages per erase block
  uint64_t grown_bad = 0;  // > 0: the workload's grown_bad-th flash operation fails its block
  uint32_t table_cache = 0;  // > 0: clean table pages per paged table (and the fold bound)
  uint32_t nvm_bytes = 0;    // > 0: PDL's write buffer in that much NVM (method=pdl&nvm=)
};

// PDL, OPU with atomic commit, the page FTL, IPL with atomic commit and FAST.
inline const std::vector<CkConfig>& ck_configs() {
  static const std::vector<CkConfig> all = {
      {"pdl atomic", Method::kPdl, FtlKind::kNone, CommitMode::kGroup},
      {"opu atomic", Method::kOpu, FtlKind::kNone, CommitMode::kGroup},
      {"ftl page", Method::kFtl, FtlKind::kPage, CommitMode::kPerPage},
      {"ipl atomic", Method::kIpl, FtlKind::kNone, CommitMode::kGroup, 2},
      {"fast", Method::kFtl, FtlKind::kFast, CommitMode::kPerPage},
  };
  return all;
}

inline StoreParams ck_params(const CkConfig& c) {
  StoreParams p;
  p.method = c.method;
  p.ftl = c.ftl;
  if (c.method == Method::kIpl) p.log_region = c.log_pages * 512;
  else if (c.method != Method::kIpu && c.nvm_bytes == 0) p.max_differential = 64;
  // (With NVM the default, a page: records stay buffered until they go cold.)
  if (c.grown_bad) p.gc_reserve_blocks = 4;  // (room for a merge once a block is retired)
  p.checkpoint = true;
  p.checkpoint_blocks = kCkAreaBlocks;
  p.nvm_bytes = c.nvm_bytes;
  return p;
}

// One step of a workload: `writes` writes (one for IPU/IPL: a group must fit a log region) and
// a trim, then a sync; `pending` gets the contents the sync would acknowledge.
inline Status ck_step(PageStore& s, CkModel* pending, std::mt19937_64& rng, int writes) {
  if (const int most = in_page(s.params().method) ? 1 : writes; writes > most) writes = most;
  for (int i = 0; i < writes; i++) {
    const Lpn l = Lpn(rng() % s.logical_pages());
    const CkPage p = next_version(rng, (*pending)[l] ? &*(*pending)[l] : nullptr, s.page_size());
    PDL_TRY(s.write(l, p));
    (*pending)[l] = p;
  }
  const Lpn t = Lpn(rng() % s.logical_pages());
  PDL_TRY(s.trim(t));
  (*pending)[t].reset();
  return s.sync();
}

// Every lpn reads as `model` says: its page, or kNotFound.
inline bool ck_reads_as(PageStore& s, const CkModel& model) {
  CkPage got(s.page_size());
  for (Lpn l = 0; l < model.size(); l++) {
    const Status st = s.read(l, got);
    if (model[l] ? !st.is_ok() || got != *model[l] : !st.is(Errc::kNotFound)) return false;
  }
  return true;
}

// A chip with a checkpoint of some contents (`model`), written by a clean close.
inline std::unique_ptr<EmulatedNand> checkpointed_chip(const CkConfig& c, CkModel* model,
                                                       std::mt19937_64& rng) {
  Geometry g = geometry(512, 32, 8, kCkBlocks);
  g.nvm_bytes = c.nvm_bytes;
  auto chip = make_ram_nand(g);
  std::unique_ptr<PageStore> s;
  REQUIRE(format_store(*chip, ck_params(c), &s, c.mode).is_ok());
  model->assign(s->logical_pages(), std::nullopt);
  for (Lpn l = 0; l < s->logical_pages(); l++) {  // every page once: GC runs in the workload
    const CkPage p = random_page(rng, s->page_size());
    REQUIRE(s->write(l, p).is_ok());
    (*model)[l] = p;
    if (l % 16 == 15) REQUIRE(s->sync().is_ok());
  }
  REQUIRE(s->sync().is_ok());
  for (int i = 0; i < 20; i++) {
    CkModel m = *model;
    REQUIRE(ck_step(*s, &m, rng, 8).is_ok());
    *model = m;
  }
  const Status w = s->write_checkpoint({});
  INFO(c.name << ": write_checkpoint " << w.to_string());
  REQUIRE(w.is_ok());
  return chip;
}

// Every programmed page (data or spare not all 0xFF) of the checkpoint log's blocks (0 and 1:
// superblock copies and log entries) and of the area (the chip's last `area_blocks` blocks:
// stream pages, summary pages and whatever else the area holds), read from the chip.
inline std::vector<Ppa> checkpoint_pages(EmulatedNand& chip, uint32_t area_blocks) {
  const Geometry& g = chip.geometry();
  std::vector<uint32_t> blocks = {0, 1};
  for (uint32_t b = g.blocks - area_blocks; b < g.blocks; b++) blocks.push_back(b);
  std::vector<Ppa> out;
  CkPage data(g.page_data), spare(g.page_spare);
  auto erased = [](const CkPage& v) {
    return std::all_of(v.begin(), v.end(), [](uint8_t x) { return x == 0xFF; });
  };
  for (const uint32_t b : blocks) {
    if (chip.marked_bad(b)) continue;
    for (uint32_t p = 0; p < g.pages_per_block; p++) {
      const Ppa ppa = Ppa(uint64_t(b) * g.pages_per_block + p);
      const Status st = chip.read(ppa, data, spare);
      if (!st.is_ok() || !erased(data) || !erased(spare)) out.push_back(ppa);
    }
  }
  return out;
}

}  // namespace pdl::test
