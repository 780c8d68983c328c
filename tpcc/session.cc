// session.cc — see session.h.
#include "tpcc/session.h"

#include <algorithm>
#include <chrono>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace pdl::tpcc {
namespace {

// --phase-cmd: `cmd phase` through the shell; ok when it exits 0.
Status run_phase_cmd(const std::string& cmd, const char* phase) {
  if (cmd.empty()) return Status::ok();
  const std::string line = cmd + " " + phase;
  std::fflush(stdout);
  std::fflush(stderr);
  const int rc = std::system(line.c_str());
  if (rc == 0) return Status::ok();
  const std::string how = rc == -1                ? "could not be started"
                          : WIFEXITED(rc)          ? "exited with " + std::to_string(WEXITSTATUS(rc))
                          : WIFSIGNALED(rc)        ? "was killed by signal " + std::to_string(WTERMSIG(rc))
                                                   : "failed";
  return Status::error(Errc::kIoError, "--phase-cmd: `" + line + "` " + how);
}

}  // namespace

Status load_source(const Options& o, const Scale& scale, const std::string& path,
                   const LoadProgress& progress, double* secs, uint64_t* pages) {
  const auto t0 = std::chrono::steady_clock::now();
  sql::Db db;
  PDL_TRY(db.open("file:" + path + "?vfs=unix"));
  PDL_TRY(db.exec("PRAGMA page_size=" + std::to_string(o.page) +
                  "; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536"));
  PDL_TRY(load(db, scale, o.seed, progress));
  int64_t n = 0;
  PDL_TRY(db.query_int("PRAGMA page_count", &n));
  *pages = uint64_t(n);
  *secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return db.close();
}

uint64_t chip_bytes_for(const Options& o, uint64_t loaded_pages) {
  if (o.chip_bytes != 0) return o.chip_bytes;
  // Room for the database's growth (about 1 KiB per transaction) over the measured run and
  // a warm-up that programs the chip `gc_rounds` times at a conservative 16 KiB per
  // transaction (auto_chip_bytes adds the journal or WAL).
  const uint64_t db = loaded_pages * o.page;
  auto chip_for = [&](uint64_t txns) { return auto_chip_bytes(db, 1024 * txns, o.page, o.methods); };
  const uint64_t txns = o.transactions * (o.sweep ? 1 + o.sweep_cache.size() : 1);
  uint64_t chip = chip_for(txns + (o.warmup ? o.warmup : 0));
  if (o.warmup == 0)
    chip = chip_for(txns + std::min<uint64_t>(o.warmup_max,
                                              uint64_t(o.gc_rounds * double(chip) / 16384)));
  return chip;
}

FleetConfig fleet_config(const Options& o, const Scale& scale, const std::string& journal,
                         uint64_t chip_bytes, const std::string& dir) {
  FleetConfig cfg;
  cfg.scale = scale;
  cfg.seed = o.seed;
  cfg.journal = journal;
  cfg.page = o.page;
  cfg.chip_bytes = chip_bytes;
  cfg.dir = dir;
  cfg.unix_reference = o.unix_reference;
  cfg.uri_extra = o.uri_extra;
  cfg.sb_extra = o.sb_extra;
  cfg.store = o.store;
  cfg.unix_dir = o.unix_dir;
  return cfg;
}

Status run_journal(const Options& o, const FleetConfig& cfg, const std::string& source,
                   bool sweep, std::vector<RunResult>* out) {
  Fleet fleet(cfg, o.methods);
  if (o.progress)
    fleet.progress = [](const std::string& l) { std::fprintf(stderr, "%s\n", l.c_str()); };
  if (!o.phase_cmd.empty())
    fleet.phase = [&o](const char* phase) { return run_phase_cmd(o.phase_cmd, phase); };
  PDL_TRY(fleet.open(source));
  const uint64_t chip_bytes = cfg.chip_bytes ? cfg.chip_bytes : fleet.chip_bytes();
  const std::vector<double> caches = sweep ? o.sweep_cache : std::vector<double>{o.cache_pct};
  PDL_TRY(fleet.set_cache_pct(caches.front()));
  WarmupReport wu;
  if (o.progress) std::fprintf(stderr, "warm-up (%s) ...\n", cfg.journal.c_str());
  PDL_TRY(fleet.warm_up(o.gc_rounds, o.warmup_max, o.warmup, &wu));
  // The database grew during the warm-up: size the cache again from its pages now.
  PDL_TRY(fleet.set_cache_pct(caches.front()));
  // Measuring checkpoints: start from one, as a clean close and the next open would (its
  // summaries and periodic checkpoints run from there; a fresh image has none yet).
  if (o.checkpoint_cost) PDL_TRY(fleet.count_checkpoints(nullptr));
  for (size_t i = 0; i < caches.size(); i++) {
    RunResult r;
    r.journal = cfg.journal;
    r.cache_pct = caches[i];
    r.chip_bytes = chip_bytes;
    r.page = cfg.page;
    r.warmup = wu;
    if (i > 0) {
      // A new cache size: refill the cache with a tenth of a measurement, unmeasured.
      PDL_TRY(fleet.set_cache_pct(caches[i]));
      PDL_TRY(fleet.advance(std::max<uint64_t>(1, o.transactions / 10)));
    }
    if (o.progress)
      std::fprintf(stderr, "measuring (%s, cache %g%%) ...\n", cfg.journal.c_str(), caches[i]);
    PDL_TRY(fleet.measure(o.duration_s > 0 && i == 0 ? 0 : o.transactions,
                          i == 0 ? o.duration_s : 0, &r.members));
    if (o.checkpoint_cost) PDL_TRY(fleet.count_checkpoints(&r.members));
    if (i + 1 == caches.size()) {
      if (o.progress) std::fprintf(stderr, "checking (%s) ...\n", cfg.journal.c_str());
      PDL_TRY(fleet.check(&r.checks));
    }
    out->push_back(std::move(r));
  }
  return fleet.close();
}

}  // namespace pdl::tpcc
