// fleet.cc — see fleet.h.
#include "tpcc/fleet.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "flash/device/emulated_nand.h"
#include "flash/image/image.h"
#include "flash/image/image_params.h"
#include "flash/image/open_store.h"
#include "flash/store/checkpointed_store.h"
#include "tpcc/cpu_clock.h"
#include "vfs/pdl_vfs.h"

namespace pdl::tpcc {

using Clock = std::chrono::steady_clock;

struct Fleet::Member {
  MethodSpec spec;
  bool is_unix = false;
  std::string path, uri;
  sql::Db db;
  std::unique_ptr<Terminal> term;
  Image* image = nullptr;  // the open image (pdl members), owned by the VFS
  uint64_t next = 0;       // next transaction index
  uint64_t erases_at_open = 0;
  uint32_t data_blocks = 0;
  uint32_t cache_pages = 0;

  Status fail(const Status& st) const {
    return Status::error(st.code(), spec.label + ": " + std::string(st.message()));
  }
  uint64_t sim_us() const {
    auto lock = image->volume->lock();
    return image->nand->counters().sim_us;
  }
  uint64_t erases() const {
    auto lock = image->volume->lock();
    return image->nand->counters().erases;
  }
};

namespace {

// Periodic checkpoints a member's store has written since its mount (0 without an area).
uint64_t fleet_periodic_checkpoints(Image* image) {
  if (!image) return 0;
  auto lock = image->volume->lock();
  auto* cs = dynamic_cast<CheckpointedStore*>(&image->volume->store());
  return cs ? cs->periodic_checkpoints() : 0;
}

// A power cut now would mount a member's image by a scan (it has an area, no current
// checkpoint and no summaries).
bool fleet_cut_would_scan(Image* image) {
  if (!image) return false;
  auto lock = image->volume->lock();
  auto* cs = dynamic_cast<CheckpointedStore*>(&image->volume->store());
  return cs && !cs->cut_would_replay();
}

// Removes a previous run's database at `path` (and its journal, WAL, shm) so the member starts
// fresh — but only if it is what this program would have made there: a pdl image, or for the
// unix member a SQLite database. Anything else is left alone and reported.
Status remove_db_files(const std::string& path, bool unix_db) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    bool ours = false;
    if (unix_db) {
      char magic[16] = {};
      FILE* f = std::fopen(path.c_str(), "rb");
      ours = f && (st.st_size == 0 || (std::fread(magic, 1, 16, f) == 16 &&
                                       std::memcmp(magic, "SQLite format 3", 16) == 0));
      if (f) std::fclose(f);
    } else {
      ours = EmulatedNand::is_image_file(path);
    }
    if (!ours)
      return Status::error(Errc::kInvalidArgument,
                           path + " exists and is not " +
                               (unix_db ? "a SQLite database" : "a pdl image") +
                               ": not overwriting it (choose another --image-dir)");
  }
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) unlink((path + suffix).c_str());
  return Status::ok();
}

Status clone_into(sqlite3* src, sql::Db& dst) {
  sqlite3_backup* b = sqlite3_backup_init(dst.get(), "main", src, "main");
  if (!b) return sql::status(dst.get(), sqlite3_errcode(dst.get()), "backup init");
  const int rc = sqlite3_backup_step(b, -1);
  const int rc2 = sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) return sql::status(dst.get(), rc, "backup");
  return sql::status(dst.get(), rc2, "backup finish");
}

}  // namespace

uint64_t auto_chip_bytes(uint64_t db_bytes, uint64_t growth_bytes, uint32_t page,
                         const std::vector<MethodSpec>& methods) {
  // The WAL at SQLite's default auto-checkpoint (1000 frames of a page + 24 bytes) plus slack;
  // a rollback journal is smaller than that for TPC-C's transactions.
  const uint64_t journal = 1100ull * (page + 24);
  const uint64_t need = db_bytes + growth_bytes + journal;
  const uint64_t block = uint64_t(page) * 64;
  const uint64_t first = (2 * need + block - 1) / block * block;
  // A method whose parameters resolve at no size (an engine not built, a bad key) would
  // never fit: stop at 64x and let its open say why.
  for (uint64_t chip = first; chip <= 64 * first; chip += block * 8) {
    bool fits = true;
    for (const MethodSpec& m : methods) {
      ImageParams p;
      const std::string uri = m.uri_params(page, chip);
      size_t pos = 0;
      while (pos < uri.size()) {
        size_t amp = uri.find('&', pos);
        if (amp == std::string::npos) amp = uri.size();
        const std::string kv = uri.substr(pos, amp - pos);
        const size_t eq = kv.find('=');
        (void)p.set(kv.substr(0, eq), kv.substr(eq + 1));
        pos = amp + 1;
      }
      p.page = page;
      p.size = chip;
      StoreParams sp = p.store_params();
      if (!resolve_store_params(&sp, p.geometry()).is_ok() ||
          double(sp.logical_pages) * page * 0.85 < double(need)) {
        fits = false;
        break;
      }
    }
    if (fits) return chip;
  }
  return first;
}

Fleet::Fleet(FleetConfig cfg, std::vector<MethodSpec> methods)
    : cfg_(std::move(cfg)), methods_(std::move(methods)), workload_(cfg_.scale, cfg_.seed) {}

Fleet::~Fleet() { (void)close(); }

std::string Fleet::path_of(const std::string& key) const {
  if (key == "unix" && !cfg_.unix_dir.empty()) return cfg_.unix_dir + "/unix.db";
  if (key != "unix" && !cfg_.store.empty()) return cfg_.store;
  return cfg_.dir + "/" + key + ".db";
}

uint64_t Fleet::chip_bytes() const {
  for (const auto& m : members_)
    if (m->image) return m->image->nand->geometry().data_bytes();  // (fixed at open)
  return 0;
}

Status Fleet::open(const std::string& source) {
  // Members open through "pdl-timed", the measuring shim over "pdl" (timed_vfs.h).
  if (register_timed_vfs() != SQLITE_OK)
    return Status::error(Errc::kIoError, "cannot register the pdl VFS");
  sql::set_open_detail(vfs::last_error);
  sql::seed_prng(uint32_t(cfg_.seed));  // the members write the same bytes run after run
  sql::Db src;
  PDL_TRY(src.open("file:" + source + "?vfs=unix&mode=ro"));
  std::vector<MethodSpec> all = methods_;
  if (cfg_.unix_reference)
    all.insert(cfg_.unix_first ? all.begin() : all.end(), {"unix", "unix VFS", {}, ""});
  for (const MethodSpec& spec : all) {
    auto m = std::make_unique<Member>();
    m->spec = spec;
    m->is_unix = spec.key == "unix";
    m->path = path_of(spec.key);
    const bool in_store = !m->is_unix && !cfg_.store.empty();
    if (in_store) {  // it must exist: never formatted here (its other files are never touched)
      std::unique_ptr<Image> probe;
      if (Status st = open_image(m->path, ImageParams(), ImageMode::kOpen, true, "", &probe);
          !st.is_ok())
        return m->fail(Status::error(st.code(), "--store " + m->path + ": " +
                                                    std::string(st.message())));
    } else if (Status st = remove_db_files(m->path, m->is_unix); !st.is_ok()) {
      return m->fail(st);
    }
    m->uri = "file:" + m->path;
    if (m->is_unix)
      m->uri += "?vfs=unix";
    else
      m->uri += "?vfs=pdl-timed&" + spec.uri_params(cfg_.page, cfg_.chip_bytes) + "&page=" +
                std::to_string(cfg_.page) +
                (in_store ? "&db=" + spec.key + ".db"
                          : "&size=" + std::to_string(cfg_.chip_bytes)) +
                "&clock=logical" + cfg_.uri_extra +
                (spec.preset.method == Method::kStableBuffer ? cfg_.sb_extra : "");
    Status st = m->db.open(m->uri);
    if (st.is_ok()) st = clone_into(src.get(), m->db);
    std::string mode;
    if (st.is_ok()) st = m->db.query_text("PRAGMA journal_mode=" + cfg_.journal, &mode);
    if (st.is_ok() && mode != cfg_.journal)
      st = Status::error(Errc::kInvalidArgument,
                         "journal_mode " + cfg_.journal + " not accepted (SQLite says " + mode +
                             ")");
    if (st.is_ok()) {
      m->term = std::make_unique<Terminal>(m->db, cfg_.scale);
      st = m->term->prepare();
    }
    if (st.is_ok() && !m->is_unix) {
      m->image = vfs::image_of(m->path);
      if (!m->image) st = Status::error(Errc::kIoError, "the VFS has no open image " + m->path);
    }
    if (!st.is_ok()) return m->fail(st);
    if (m->image) {
      m->erases_at_open = m->erases();
      m->data_blocks = m->image->nand->geometry().blocks - kSuperblockBlocks;
    }
    members_.push_back(std::move(m));
  }
  return src.close();
}

Status Fleet::set_cache_pct(double pct) {
  if (members_.empty()) return Status::error(Errc::kInvalidArgument, "fleet not open");
  int64_t pages = 0;
  PDL_TRY(members_[0]->db.query_int("PRAGMA page_count", &pages));
  const int64_t cache = std::max<int64_t>(1, std::llround(double(pages) * pct / 100.0));
  for (auto& m : members_) {
    Status st = m->db.exec("PRAGMA cache_size=" + std::to_string(cache));
    if (!st.is_ok()) return m->fail(st);
    m->cache_pages = uint32_t(cache);
  }
  return Status::ok();
}

uint64_t Fleet::next_txn() const { return members_.empty() ? 0 : members_[0]->next; }

Status Fleet::run_one(Member& m, const TxnInput& in, TxnOutcome* outcome) {
  Status st = m.term->run(in, outcome);
  if (!st.is_ok())
    return m.fail(Status::error(st.code(), "transaction " + std::to_string(m.next) + " (" +
                                               txn_name(in.type) + "): " +
                                               std::string(st.message())));
  m.next++;
  return Status::ok();
}

Status Fleet::advance(uint64_t n) {
  TxnOutcome o;
  for (auto& m : members_)
    for (uint64_t i = 0; i < n; i++) PDL_TRY(run_one(*m, workload_.input(m->next), &o));
  return Status::ok();
}

Status Fleet::warm_up(double gc_rounds, uint64_t max_txns, uint64_t fixed, WarmupReport* out) {
  const uint64_t start = next_txn();
  const uint64_t batch = 50;
  auto rounds = [&](const Member& m) {
    return m.image ? double(m.erases() - m.erases_at_open) / double(m.data_blocks) : 0.0;
  };
  auto all_reached = [&] {
    for (auto& m : members_)
      if (m->image && rounds(*m) < gc_rounds) return false;
    return true;
  };
  auto last_report = Clock::now();
  out->reached = true;
  out->fixed = fixed > 0;
  out->target = gc_rounds;
  for (;;) {
    const uint64_t done = next_txn() - start;
    if (fixed > 0 ? done >= fixed : all_reached()) break;
    if (fixed == 0 && done >= max_txns) {
      out->reached = false;
      break;
    }
    PDL_TRY(advance(fixed > 0 ? std::min(batch, fixed - done) : batch));
    if (progress && Clock::now() - last_report > std::chrono::seconds(2)) {
      last_report = Clock::now();
      std::string line = "warm-up (" + cfg_.journal + "): " + std::to_string(next_txn() - start) +
                         " transactions; GC rounds";
      char buf[64];
      for (auto& m : members_)
        if (m->image) {
          std::snprintf(buf, sizeof buf, " %s %.2f", m->spec.key.c_str(), rounds(*m));
          line += buf;
        }
      progress(line);
    }
  }
  out->transactions = next_txn() - start;
  out->gc_rounds.clear();
  for (auto& m : members_) out->gc_rounds.push_back(rounds(*m));
  return Status::ok();
}

Status Fleet::measure(uint64_t n, double duration_s, std::vector<Measurement>* out) {
  out->clear();
  int64_t pages = 0;
  PDL_TRY(members_[0]->db.query_int("PRAGMA page_count", &pages));
  if (phase) PDL_TRY(phase("start"));  // (nothing touches a chip from here to `before`)
  for (auto& mp : members_) {
    Member& m = *mp;
    Measurement r;
    r.key = m.spec.key;
    r.label = m.spec.label;
    r.commit = m.spec.commit;
    r.has_flash = m.image != nullptr;
    r.first_txn = m.next;
    r.cache_pages = m.cache_pages;
    r.db_pages = uint64_t(pages);
    const ImageCounters before = m.image ? snapshot(*m.image) : ImageCounters{};
    const uint64_t periodic_before = fleet_periodic_checkpoints(m.image);
    const IoCalls io_before = io_calls(m.path);
    const auto t0 = Clock::now();
    TxnOutcome o;
    for (uint64_t i = 0;; i++) {
      if (n > 0 ? i >= n
                : std::chrono::duration<double>(Clock::now() - t0).count() >= duration_s)
        break;
      const TxnInput in = workload_.input(m.next);
      const uint64_t sim0 = m.image ? m.sim_us() : 0;
      const double cpu0 = cpu_seconds();
      const auto a = Clock::now();
      PDL_TRY(run_one(m, in, &o));
      const auto b = Clock::now();
      r.cpu_s += cpu_seconds() - cpu0;
      TypeFigures& tf = r.types[size_t(in.type)];
      tf.wall_us.push_back(std::chrono::duration<double, std::micro>(b - a).count());
      if (m.image) tf.sim_us += double(m.sim_us() - sim0);
      tf.count++;
      if (o.rolled_back) tf.rolled_back++;
      else if (in.type == TxnType::kNewOrder) r.new_orders++;
      if (fleet_cut_would_scan(m.image)) r.checkpoint.scan_exposed++;
    }
    r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
    r.txns = m.next - r.first_txn;
    if (n == 0) n = r.txns;  // the others run as many as the first did
    if (m.image) {
      r.flash = snapshot(*m.image) - before;
      r.io = io_calls(m.path) - io_before;
      auto lock = m.image->volume->lock();
      PageStore& store = m.image->volume->store();
      r.wear = wear_figures(store);
      const StoreParams& sp = store.params();
      r.store = sp;
      r.wear_level = sp.wear_level == 0 ? "off" : std::to_string(sp.wear_level);
      r.checkpoint.area = dynamic_cast<CheckpointedStore*>(&store) != nullptr;
    }
    if (m.image) r.checkpoint.periodic = fleet_periodic_checkpoints(m.image) - periodic_before;
    for (TypeFigures& tf : r.types) std::sort(tf.wall_us.begin(), tf.wall_us.end());
    out->push_back(std::move(r));
  }
  if (phase) PDL_TRY(phase("end"));
  return Status::ok();
}

Status Fleet::count_checkpoints(std::vector<Measurement>* ms) {
  size_t i = 0;
  for (auto& mp : members_) {
    Member& m = *mp;
    CheckpointFigures scratch;
    if (ms && i >= ms->size()) break;
    CheckpointFigures& f = ms ? (*ms)[i++].checkpoint : scratch;
    if (!m.image) continue;
    // As Image::close: the Volume's close first (everything durable; it stays usable), then
    // the checkpoint. That close's own I/O is not the checkpoint's: it is left out.
    PDL_TRY(m.image->volume->close());
    TableWriter client;  // the Volume's tables, as Image::close saves them
    const bool with_client = m.image->volume->save_tables(client).is_ok();
    auto lock = m.image->volume->lock();
    auto* cs = dynamic_cast<CheckpointedStore*>(&m.image->volume->store());
    if (!cs) continue;
    const NandCounters c0 = m.image->nand->counters();
    const uint64_t t0 = cs->pager().stores();  // (table pages programmed: demand-loaded tables)
    if (const Status st = cs->write_checkpoint({}); st.is(Errc::kUnsupported)) {
      f.none = std::string(st.message());  // (an engine whose tables are not saved: none)
      continue;
    } else {
      PDL_TRY(st);
    }
    const NandCounters c1 = m.image->nand->counters();
    const uint64_t t1 = cs->pager().stores();
    f.periodic_pages = cs->log().newest().pages + (t1 - t0);  // root + table pages
    if (with_client) PDL_TRY(cs->write_checkpoint(client.data()));
    f.periodic_one = c1 - c0;
    f.close_one = m.image->nand->counters() - c1;
    f.close_pages = cs->log().newest().pages + (cs->pager().stores() - t1);
    f.measured = true;
  }
  return Status::ok();
}

Status Fleet::check(std::vector<CheckReport>* out) {
  out->clear();
  for (auto& m : members_) {
    CheckReport r;
    Status st = check_database(m->db, &r);
    if (!st.is_ok()) return m->fail(st);
    out->push_back(r);
  }
  return Status::ok();
}

Status Fleet::close() {
  Status first;
  for (auto& m : members_) {
    m->term.reset();
    m->image = nullptr;
    Status st = m->db.close();
    if (!st.is_ok() && first.is_ok()) first = m->fail(st);
  }
  members_.clear();
  return first;
}

}  // namespace pdl::tpcc
