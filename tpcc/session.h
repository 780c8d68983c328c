// session.h — the steps of a pdl-tpcc comparison, shared by pdl-tpcc and pdl-hostbench: load
// the source database once on the unix VFS, size the chips, and run one journal mode's fleet
// (clone, warm up, measure, check).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flash/common/status.h"
#include "tpcc/fleet.h"
#include "tpcc/loader.h"
#include "tpcc/options.h"
#include "tpcc/report.h"

namespace pdl::tpcc {

// Loads the TPC-C rows into a new database at `path` on the unix VFS (page size o.page):
// its wall time in *secs and its size in *pages.
Status load_source(const Options& o, const Scale& scale, const std::string& path,
                   const LoadProgress& progress, double* secs, uint64_t* pages);
// The chip size of every image: o.chip_bytes, or (0: auto) room for the loaded database, its
// growth over the warm-up and the measured transactions, and a journal or WAL.
uint64_t chip_bytes_for(const Options& o, uint64_t loaded_pages);
// The fleet of o's methods in `journal` mode, images in `dir`.
FleetConfig fleet_config(const Options& o, const Scale& scale, const std::string& journal,
                         uint64_t chip_bytes, const std::string& dir);
// One comparison (or, with `sweep`, the Exp. 7 points) in one journal mode, appended to *out.
Status run_journal(const Options& o, const FleetConfig& cfg, const std::string& source,
                   bool sweep, std::vector<RunResult>* out);

}  // namespace pdl::tpcc
