// fleet.h — one database per page-update method (and optionally the unix VFS), all cloned from
// the same loaded database and driven through the same transaction sequence.
//
// Invariants: every member runs transaction indices 0, 1, 2, ... of one Workload in order, and
// all members have run the same number of them whenever control returns to the caller — so at
// every measurement all members hold the same logical database (checked at the end by content
// checksum), and differences in their figures are the methods' alone.
//
// Life: open() clones the source into a fresh pdl image per method with SQLite's backup API
// (and into a unix-VFS file for the reference), set_cache_pct() sizes SQLite's page cache,
// warm_up() runs transactions on all members in lockstep rounds until every method's chip has
// erased its blocks `gc_rounds` times on average (garbage collection active: steady state, as
// in [PDL] §5.1), measure() runs the next N transactions on each member in turn, timing
// each (wall and CPU time) and taking the chip's counters before and after.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "flash/common/status.h"
#include "flash/image/image_counters.h"
#include "flash/image/stats_json.h"
#include "sql/sql.h"
#include "tpcc/check.h"
#include "tpcc/methods.h"
#include "tpcc/schema.h"
#include "tpcc/terminal.h"
#include "tpcc/timed_vfs.h"
#include "tpcc/workload.h"

namespace pdl::tpcc {

struct FleetConfig {
  Scale scale;
  uint64_t seed = 1;
  std::string journal = "delete";  // SQLite journal_mode
  uint32_t page = 2048;            // flash page data bytes = SQLite page size
  uint64_t chip_bytes = 0;         // chip size of every image
  std::string dir;                 // where the images (and the unix copy) are created
  bool unix_reference = true;
  bool unix_first = false;         // the unix reference opened and measured before the methods
  std::string uri_extra;           // appended to every pdl URI ("&obsolete=memory")
  std::string sb_extra;            // appended to StableBuffer members' URIs ("&sb_slots=64")
  // The one pdl member in this existing store (image file or /dev/mtdN), database file
  // <key>.db in it; chip_bytes is then 0 (the store's own size).
  std::string store;
  std::string unix_dir;  // the unix reference in DIR/unix.db ("" : in `dir`)
};

struct TypeFigures {
  uint64_t count = 0, rolled_back = 0;
  std::vector<double> wall_us;  // per transaction, sorted after measure()
  double sim_us = 0;            // simulated flash time of this type's transactions
};

// A pdl member's checkpoints (docs/design.md §17) over a measured phase and after it.
struct CheckpointFigures {
  bool area = false;         // the image has a checkpoint area (the rest is 0 without)
  uint64_t periodic = 0;     // periodic checkpoints written during the phase (by syncs)
  // Transactions of the phase after which a power cut would have mounted by a scan (the
  // checkpoint gone stale: too many blocks declared between syncs, or no summary room).
  uint64_t scan_exposed = 0;
  // With --checkpoint-cost, after the phase: the chip's operations writing one checkpoint of
  // the store's tables alone (what a periodic one writes), then one with the Volume's tables
  // too (what the close writes), and each one's area pages.
  bool measured = false;
  std::string none;  // why the store writes no checkpoint (kUnsupported's message), if so
  NandCounters periodic_one, close_one;
  uint64_t periodic_pages = 0, close_pages = 0;
};

// One member's figures for one measured phase.
struct Measurement {
  std::string key, label;  // "unix" / "unix VFS" for the reference
  std::string commit;      // the member's commit mode ("" for the unix reference)
  bool has_flash = false;
  uint64_t first_txn = 0, txns = 0;
  double wall_s = 0;
  double cpu_s = 0;         // host CPU time (user + sys) of its transactions (cpu_clock.h)
  uint64_t new_orders = 0;  // committed
  std::array<TypeFigures, kTxnTypes> types;
  ImageCounters flash;      // the chip's counters over the phase
  uint32_t cache_pages = 0;
  uint64_t db_pages = 0;    // database size (pages) at the start of the phase
  WearFigures wear;         // erase counts of the chip's blocks at the end of the phase
  std::string wear_level;   // "off" or the threshold
  IoCalls io;               // SQLite's calls on the image over the phase (timed_vfs.h)
  StoreParams store;        // the store's resolved parameters (log blocks, StableBuffer slots)
  CheckpointFigures checkpoint;
};

struct WarmupReport {
  uint64_t transactions = 0;
  bool fixed = false;   // a fixed number of transactions (--warmup), no GC target
  double target = 0;    // the GC-rounds target otherwise
  bool reached = true;  // every method reached the target (false: stopped at the cap)
  std::vector<double> gc_rounds;  // per member: erases since the clone / data blocks
};

class Fleet {
 public:
  Fleet(FleetConfig cfg, std::vector<MethodSpec> methods);
  ~Fleet();

  // Clones `source` (a loaded database on the unix VFS) into every member.
  Status open(const std::string& source);
  // PRAGMA cache_size on every member: `pct` percent of the database's pages (at least 1).
  Status set_cache_pct(double pct);
  // Lockstep rounds of `batch` transactions until each method's erases since the clone reach
  // `gc_rounds` x its data blocks, or `max_txns` transactions. `fixed` > 0: exactly that many.
  Status warm_up(double gc_rounds, uint64_t max_txns, uint64_t fixed, WarmupReport* out);
  // The next transactions, unmeasured, on every member.
  Status advance(uint64_t n);
  // The next `n` transactions on each member in turn, measured; n == 0: the first member runs
  // for `duration_s` seconds and the others as many transactions as it did.
  Status measure(uint64_t n, double duration_s, std::vector<Measurement>* out);
  // Each pdl member with a checkpoint area closes its Volume (which stays usable) and writes
  // a checkpoint of its store's tables, then one with the Volume's tables too (as Image::close
  // does; the close then finds it current),
  // counting each one's operations into the matching entry of `ms` (measure()'s, same order;
  // none: only written).
  Status count_checkpoints(std::vector<Measurement>* ms);
  // Consistency conditions, integrity_check and checksum of every member.
  Status check(std::vector<CheckReport>* out);
  // Closes every connection (the images stay).
  Status close();

  uint64_t next_txn() const;
  const FleetConfig& config() const { return cfg_; }
  // Path of a member's database file (image) by method key.
  std::string path_of(const std::string& key) const;
  // Bytes of the first pdl member's chip (its geometry), 0 without one.
  uint64_t chip_bytes() const;
  // If set, measure() calls it with "start" just before the first member's measured
  // transactions (after the last read of the set-up) and with "end" after the last member's;
  // an error fails the measurement.
  std::function<Status(const char*)> phase;
  // Called with a line of progress (warm-up rounds) for stderr.
  std::function<void(const std::string&)> progress;

 private:
  struct Member;
  // Runs `in` (transaction m.next of the workload) on member m.
  Status run_one(Member& m, const TxnInput& in, TxnOutcome* outcome);
  FleetConfig cfg_;
  std::vector<MethodSpec> methods_;
  Workload workload_;
  std::vector<std::unique_ptr<Member>> members_;
};

// Chip size for `methods` holding a database of `db_bytes` growing by `growth_bytes`, and a
// WAL or journal: the paper's proportion (data on at most half the chip, [PDL] §5.1: 1 GB
// on a 2 GB chip), and room in every method's logical capacity (IPL(64KB) keeps half of each
// block for logs).
uint64_t auto_chip_bytes(uint64_t db_bytes, uint64_t growth_bytes, uint32_t page,
                         const std::vector<MethodSpec>& methods);

}  // namespace pdl::tpcc
