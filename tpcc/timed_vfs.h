// timed_vfs.h — "pdl-timed": a shim SQLite VFS over "pdl" that measures, per open image, the
// simulated flash time spent inside SQLite's read calls and counts its write calls, so a
// benchmark can split an image's device time into what SQLite waited for reading and what it
// waited for writing (the write response time of [StableBuffer]'s evaluation).
//
// Every call is forwarded unchanged to "pdl" (same file names, flags and URI parameters); the
// shim only reads the image's simulated clock (NandCounters::sim_us, under the Volume lock)
// before and after xRead, and counts xRead / xWrite / xSync calls. It never changes what the
// VFS or the store does. Flash work happens only inside VFS calls (no background work), so
//   device time of writes = (image's sim_us over a phase) - read_us over the phase
// is the device time spent inside xWrite, xSync, xTruncate, xDelete, ... : everything SQLite
// waited for to get its pages durably written (flushes, merges and GC they trigger included).
// Invariant: the counters of an image only grow; a caller measures a phase by difference.
#pragma once

#include <cstdint>
#include <string>

namespace pdl::tpcc {

// Calls on the files of one image (database, rollback journal, WAL), cumulative.
struct IoCalls {
  uint64_t reads = 0, writes = 0, syncs = 0;  // xRead, xWrite, xSync calls
  uint64_t db_writes = 0;                     // xWrite calls on the main database file
  double read_us = 0;  // simulated flash time inside xRead

  IoCalls operator-(const IoCalls& b) const {
    return {reads - b.reads, writes - b.writes, syncs - b.syncs, db_writes - b.db_writes,
            read_us - b.read_us};
  }
};

// Registers "pdl-timed" (and "pdl" under it) once; an SQLite result code.
int register_timed_vfs();
// The calls so far on the image whose database file is `db_path` (as SQLite names it, the
// full path); zeros if none was made through "pdl-timed".
IoCalls io_calls(const std::string& db_path);

}  // namespace pdl::tpcc
