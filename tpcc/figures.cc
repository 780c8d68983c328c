// figures.cc — see figures.h.
#include "tpcc/figures.h"

#include <cmath>

namespace pdl::tpcc {

Part& Part::operator/=(double n) {
  sim_us /= n;
  reads /= n;
  programs /= n;
  erases /= n;
  bytes_programmed /= n;
  sqlite_bytes /= n;
  return *this;
}

namespace {

void add(Part* p, const FlashCost& c, double w) {
  p->sim_us += w * c.sim_us;
  p->reads += w * (c.page_reads + c.spare_reads);
  p->programs += w * c.programs;
  p->erases += w * c.erases;
  p->bytes_programmed += w * c.bytes_programmed;
}

}  // namespace

CostSplit split_costs(const ImageCounters& d) {
  CostSplit s;
  const unsigned kDb = unsigned(FileKind::kDatabase), kJ = unsigned(FileKind::kJournal),
                 kW = unsigned(FileKind::kWal), kDir = unsigned(FileKind::kDirectory);
  Part* parts[kFileKinds] = {};
  parts[kDb] = &s.database;
  parts[kJ] = &s.journal;
  parts[kW] = &s.journal;
  parts[kDir] = &s.directory;
  double programmed = 0;
  for (unsigned k = 0; k < kFileKinds; k++) programmed += d.costs.cls[k].flash.bytes_programmed;
  for (unsigned k = 0; k < kFileKinds; k++) {
    const FlashCost& c = d.costs.cls[k].flash;
    add(parts[k], c, 1.0);
    // Shared work by programmed bytes; with nothing programmed (a read-only phase) it goes to
    // the database.
    const double share = programmed > 0 ? c.bytes_programmed / programmed : (k == kDb ? 1 : 0);
    add(parts[k], d.costs.gc, share);
    add(parts[k], d.costs.other, share);
    parts[k]->sqlite_bytes += double(d.volume.kind[k].bytes_written);
  }
  s.gc_sim_us = d.costs.gc.sim_us;
  s.total.sim_us = double(d.nand.sim_us);
  s.total.reads = double(d.nand.page_reads + d.nand.spare_reads);
  s.total.programs = double(d.nand.programs);
  s.total.erases = double(d.nand.erases);
  s.total.bytes_programmed = double(d.nand.bytes_programmed);
  s.total.sqlite_bytes = s.database.sqlite_bytes + s.journal.sqlite_bytes;
  return s;
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = size_t(std::ceil(p / 100.0 * double(sorted.size())));
  if (rank == 0) rank = 1;
  return sorted[rank - 1];
}

}  // namespace pdl::tpcc
