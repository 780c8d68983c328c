// test_volume.cc — the Volume: named files inside one PageStore, over every method.
//
// A reference model (name -> bytes) drives random operations — create, byte-range writes that
// cover whole and partial chunks, truncates both ways, removes, renames, syncs, close/remount —
// and every read is compared with it; check() runs along the way. Power cuts then check the
// crash rules of volume.h: after a cut, files untouched since the last sync are exactly their
// synced bytes, and a changed file holds, chunk by chunk, a version it had since that sync.
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <random>
#include <set>

#include "flash/image/open_store.h"
#include "flash/store/page_store.h"
#include "flash/volume/volume.h"
#include "tests/support/forwarding_store.h"
#include "tests/support/store_matrix.h"
#include "tests/support/test_util.h"
#include "tests/support/volume_options.h"

using namespace pdl;

namespace {

using Bytes = std::vector<uint8_t>;

struct Rig {
  std::unique_ptr<EmulatedNand> nand;
  std::unique_ptr<Volume> vol;
};

Rig make_volume(const test::StoreConfig& cfg, VolumeOptions opts = test::volume_options()) {
  Rig r;
  r.nand = test::make_ram_nand(cfg.geo);
  std::unique_ptr<PageStore> store;
  REQUIRE(format_store(*r.nand, cfg.params, &store).is_ok());
  Status st = Volume::format(std::move(store), 32, "", opts, &r.vol);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  return r;
}

Status remount(Rig& r, VolumeOptions opts = test::volume_options()) {
  r.vol.reset();
  std::unique_ptr<PageStore> store;
  PDL_TRY(mount_store(*r.nand, &store));
  return Volume::open(std::move(store), opts, &r.vol);
}

Bytes read_all(Volume& v, const std::string& name) {
  Volume::FileId id;
  REQUIRE(v.lookup(name, &id).is_ok());
  uint64_t size;
  REQUIRE(v.size(id, &size).is_ok());
  Bytes b(size_t(size) + 7);
  size_t got = 0;
  Status st = v.read(id, 0, b, &got);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  REQUIRE(got == size);
  b.resize(got);
  return b;
}

// Random operations against a model; returns at the first failing operation (for power cuts).
struct Workload {
  std::mt19937_64 rng;
  std::map<std::string, Bytes> model;
  uint32_t chunk;
  Volume* v = nullptr;
  // What the touched files would hold if the current step completes (a step cut part-way may
  // have applied part of itself, chunk by chunk).
  std::map<std::string, std::optional<Bytes>> pending;
  explicit Workload(uint64_t seed, uint32_t chunk) : rng(seed), chunk(chunk) {}

  std::string pick_name() { return "f" + std::to_string(rng() % 6) + (rng() % 4 ? "" : "-journal"); }

  Status step(std::string* touched) {
    const std::string name = pick_name();
    *touched = name;
    pending.clear();
    const int op = int(rng() % 100);
    Volume::FileId id;
    if (op < 45) {  // write
      PDL_TRY(v->open_file(name, true, &id));
      Bytes& m = model[name];
      const uint64_t max = 6 * chunk;
      const uint64_t off = rng() % max;
      const size_t len = rng() % 3 == 0 ? chunk : size_t(1 + rng() % (2 * chunk));
      Bytes data = test::random_page(rng, len);
      if (rng() % 3 == 0) std::fill(data.begin(), data.end(), uint8_t(rng()));  // small changes
      Bytes after = m;
      if (after.size() < off + len) after.resize(off + len, 0);
      std::copy(data.begin(), data.end(), after.begin() + long(off));
      pending[name] = after;
      PDL_TRY(v->write(id, off, data));
      m = after;
    } else if (op < 55) {  // truncate
      PDL_TRY(v->open_file(name, true, &id));
      const uint64_t size = rng() % (5 * chunk);
      Bytes after = model[name];
      after.resize(size, 0);
      pending[name] = after;
      PDL_TRY(v->truncate(id, size));
      model[name] = after;
    } else if (op < 62) {  // remove
      Status st = v->remove(name);
      if (st.is(Errc::kNotFound)) {
        REQUIRE(!model.count(name));
        return Status::ok();
      }
      PDL_TRY(st);
      model.erase(name);
    } else if (op < 67) {  // rename (replacing)
      const std::string to = pick_name();
      if (model.count(name) && name != to) {
        *touched = name + "," + to;
        pending[name] = std::nullopt;
        pending[to] = model[name];
      }
      Status st = v->rename(name, to);
      if (st.is(Errc::kNotFound)) {
        REQUIRE(!model.count(name));
        return Status::ok();
      }
      PDL_TRY(st);
      if (name != to) {
        model[to] = model[name];
        model.erase(name);
      }
    } else if (op < 90) {  // read a range
      if (!model.count(name)) return Status::ok();
      PDL_TRY(v->lookup(name, &id));
      const Bytes& m = model[name];
      const uint64_t off = rng() % (m.size() + chunk);
      Bytes b(size_t(rng() % (3 * chunk)) + 1);
      size_t got = 0;
      PDL_TRY(v->read(id, off, b, &got));
      const size_t expect = off >= m.size() ? 0 : std::min<size_t>(b.size(), m.size() - off);
      REQUIRE(got == expect);
      REQUIRE(std::equal(b.begin(), b.begin() + long(got), m.begin() + long(off)));
    } else {
      PDL_TRY(v->sync());
      *touched = "";
    }
    return Status::ok();
  }
};

void require_equal_to_model(Volume& v, const std::map<std::string, Bytes>& model) {
  std::set<std::string> names;
  for (const FileInfo& f : v.list()) names.insert(f.name);
  std::set<std::string> want;
  for (const auto& [n, b] : model) want.insert(n);
  REQUIRE(names == want);
  for (const auto& [n, b] : model) {
    INFO("file " << n);
    REQUIRE(read_all(v, n) == b);
  }
}

}  // namespace

TEST_CASE("files read back what the model wrote, across syncs and remounts", "[volume]") {
  static const auto matrix = test::store_matrix();
  const size_t which = GENERATE(range(size_t(0), matrix.size()));
  const uint32_t cache = GENERATE(1u, 16u);
  if (!test::in_matrix_sample(which * 2 + (cache == 16u), __LINE__)) return;
  const auto& cfg = matrix[which];
  INFO(cfg.name << " cache=" << cache);
  VolumeOptions opts = test::volume_options();
  opts.cache_chunks = cache;
  Rig r = make_volume(cfg, opts);
  Workload w(test::test_seed() ^ 0x701, cfg.geo.page_data);
  for (int i = 0; i < 1500; i++) {
    w.v = r.vol.get();
    std::string touched;
    Status st = w.step(&touched);
    INFO("op " << i << ": " << st.to_string());
    REQUIRE(st.is_ok());
    if (i % 100 == 99) {
      Status c = r.vol->check();
      INFO(c.to_string());
      REQUIRE(c.is_ok());
    }
    if (i % 400 == 399) {
      REQUIRE(r.vol->close().is_ok());
      REQUIRE(remount(r, opts).is_ok());
      require_equal_to_model(*r.vol, w.model);
    }
  }
  REQUIRE(r.vol->close().is_ok());
  REQUIRE(remount(r, opts).is_ok());
  require_equal_to_model(*r.vol, w.model);
  REQUIRE(r.vol->check().is_ok());
}

TEST_CASE("after a power cut, untouched files are their synced bytes and changed files hold "
          "versions they had since the sync", "[volume][powerloss]") {
  static const auto matrix = test::store_matrix();
  const size_t which = GENERATE(range(size_t(0), matrix.size()));
  if (!test::in_matrix_sample(which, __LINE__)) return;
  const auto& cfg = matrix[which];
  INFO(cfg.name);
  for (int trial = 0; trial < 12; trial++) {
    Rig r = make_volume(cfg);
    const uint64_t seed = test::test_seed() ^ (0x9000 + uint64_t(trial));
    Workload w(seed, cfg.geo.page_data);
    w.v = r.vol.get();
    // Warm up with syncs so files exist and GC has work, then sync.
    for (int i = 0; i < 300; i++) {
      std::string t;
      REQUIRE(w.step(&t).is_ok());
    }
    REQUIRE(r.vol->sync().is_ok());
    const auto synced = w.model;
    // Since the sync: every state each file passes through.
    std::map<std::string, std::vector<std::optional<Bytes>>> history;
    for (const auto& [n, b] : synced) history[n].push_back(b);
    std::map<std::string, std::set<std::string>> aliases;  // file name -> its names since sync
    std::mt19937_64 rng(seed);
    r.nand->cut_power_after(rng() % 400, Tear(rng() % 3), rng());
    for (int i = 0; i < 200; i++) {
      std::string touched;
      Status st = w.step(&touched);
      auto note_as = [&](const std::string& n, const std::string& shown_as) {
        auto& h = history[shown_as];
        if (h.empty()) h.push_back(std::nullopt);  // did not exist at the sync
        if (w.model.count(n)) h.push_back(w.model.at(n));
        else h.push_back(std::nullopt);
        if (!st.is_ok() && w.pending.count(n)) h.push_back(w.pending.at(n));
      };
      auto note = [&](const std::string& n) {
        note_as(n, n);
        for (const std::string& a : aliases[n]) note_as(n, a);
      };
      if (touched.find(',') != std::string::npos) {
        // A renamed file keeps its identity: until the rename is durable, its old name may
        // come back after a cut, showing whatever the file held since (as on POSIX systems).
        const std::string from = touched.substr(0, touched.find(','));
        const std::string to = touched.substr(touched.find(',') + 1);
        if (from != to) {
          // The file now called `to` may show any version it held under `from` since the sync.
          if (history.count(from)) {
            auto& ht = history[to];
            if (ht.empty()) ht.push_back(std::nullopt);
            ht.insert(ht.end(), history[from].begin(), history[from].end());
          }
          aliases[to].insert(from);
          aliases[to].insert(aliases[from].begin(), aliases[from].end());
          aliases[to].erase(to);
        }
      }
      // A failed step may have applied part of itself: record the model's state either way
      // (the model was not updated for the failed part, so also allow "partly done" below).
      for (size_t a = 0, b; a < touched.size(); a = b + 1) {
        b = touched.find(',', a);
        if (b == std::string::npos) b = touched.size();
        note(touched.substr(a, b - a));
      }
      if (!st.is_ok()) {
        REQUIRE((st.is(Errc::kPowerCut) || st.is(Errc::kFull)));
        if (st.is(Errc::kPowerCut)) break;
      }
      if (touched.empty() && st.is_ok()) {  // a sync completed: new baseline
        history.clear();
        aliases.clear();
        for (const auto& [n, b] : w.model) history[n].push_back(b);
      }
    }
    r.nand->restore_power();
    Status st = remount(r);
    INFO("trial " << trial << ": " << st.to_string());
    REQUIRE(st.is_ok());
    REQUIRE(r.vol->check().is_ok());
    std::set<std::string> present;
    for (const FileInfo& f : r.vol->list()) present.insert(f.name);
    for (const auto& [n, h] : history) {
      INFO("file " << n);
      const bool changed = h.size() > 1;
      const bool existed = h.front().has_value();
      if (!changed) {
        REQUIRE(present.count(n) == size_t(existed));
        if (existed) REQUIRE(read_all(*r.vol, n) == *h.front());
        continue;
      }
      if (!present.count(n)) {
        // Absent: allowed only if some state since the sync had it absent.
        bool ok = std::any_of(h.begin(), h.end(), [](const auto& s) { return !s.has_value(); });
        REQUIRE(ok);
        continue;
      }
      const Bytes got = read_all(*r.vol, n);
      const uint32_t c = cfg.geo.page_data;
      for (size_t off = 0; off < got.size(); off += c) {
        const size_t len = std::min<size_t>(c, got.size() - off);
        bool ok = std::all_of(got.begin() + long(off), got.begin() + long(off + len),
                              [](uint8_t b) { return b == 0; });
        // Bytes of a chunk come from one version. Past that version's end (the size may come
        // from another version) they are zeros or bytes the file itself held there: a shrink
        // leaves its tail on flash, and it is zeroed only when the file grows over it again.
        auto held_here = [&](size_t i) {
          return got[i] == 0 || std::any_of(h.begin(), h.end(), [&](const auto& v) {
                   return v && i < v->size() && (*v)[i] == got[i];
                 });
        };
        for (const auto& s : h) {
          if (ok) break;
          if (!s) continue;
          ok = true;
          for (size_t i = off; i < off + len && ok; i++)
            ok = i < s->size() ? got[i] == (*s)[i] : held_here(i);
        }
        INFO("chunk at " << off << " of " << got.size());
        REQUIRE(ok);
      }
    }
    // And the recovered volume keeps working.
    Volume::FileId id;
    REQUIRE(r.vol->open_file("after", true, &id).is_ok());
    Bytes d(3000, 0x5a);
    REQUIRE(r.vol->write(id, 0, d).is_ok());
    REQUIRE(r.vol->close().is_ok());
    REQUIRE(remount(r).is_ok());
    REQUIRE(read_all(*r.vol, "after") == d);
  }
}

TEST_CASE("a removed file's pages are not reused before the removal is durable",
          "[volume][powerloss]") {
  const auto cfg = test::store_matrix().front();
  Rig r = make_volume(cfg);
  Volume::FileId a, b;
  Bytes old(5 * cfg.geo.page_data, 0x11), fresh(5 * cfg.geo.page_data, 0x22);
  REQUIRE(r.vol->create("a", &a).is_ok());
  REQUIRE(r.vol->write(a, 0, old).is_ok());
  REQUIRE(r.vol->sync().is_ok());
  REQUIRE(r.vol->remove("a").is_ok());
  REQUIRE(r.vol->create("b", &b).is_ok());
  REQUIRE(r.vol->write(b, 0, fresh).is_ok());  // must use other lpns than a's
  // Cut before anything else reaches flash: "a" must survive intact.
  r.nand->cut_power_after(0);
  REQUIRE(!r.vol->sync().is_ok());
  r.nand->restore_power();
  REQUIRE(remount(r).is_ok());
  REQUIRE(read_all(*r.vol, "a") == old);
}

// A store whose trims can be made to fail with kFull (a full chip can refuse the room a
// tombstone needs); everything else is the real store's.
class TrimRefusingStore final : public test::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  int refuse_after = -1;  // trims that succeed before every later one fails (-1: none fails)
  int refused = 0;
  Status trim(Lpn lpn) override {
    if (refuse_after == 0) {
      refused++;
      return Status::error(Errc::kFull, "flash full: no room for the tombstone (test)");
    }
    if (refuse_after > 0) refuse_after--;
    return inner().trim(lpn);
  }
};

TEST_CASE("a commit whose trims find no room succeeds, and their pages are reused only once",
          "[volume][full]") {
  const auto cfg = test::store_matrix().front();
  const CommitMode mode = GENERATE(CommitMode::kPerPage, CommitMode::kGroup);
  INFO("config " << cfg.name << (mode == CommitMode::kGroup ? ", atomic" : ", per page"));
  auto nand = test::make_ram_nand(cfg.geo);
  std::unique_ptr<PageStore> real;
  REQUIRE(format_store(*nand, cfg.params, &real, mode).is_ok());
  auto owned = std::make_unique<TrimRefusingStore>(std::move(real));
  TrimRefusingStore* store = owned.get();
  std::unique_ptr<Volume> vol;
  REQUIRE(Volume::format(std::move(owned), 32, "", test::volume_options(), &vol).is_ok());
  const size_t chunk = cfg.geo.page_data;
  Volume::FileId a, b, c;
  REQUIRE(vol->create("a", &a).is_ok());
  REQUIRE(vol->write(a, 0, Bytes(6 * chunk, 0x11)).is_ok());
  REQUIRE(vol->sync().is_ok());
  REQUIRE(vol->remove("a").is_ok());
  REQUIRE(vol->create("b", &b).is_ok());
  REQUIRE(vol->write(b, 0, Bytes(chunk, 0x22)).is_ok());
  // The commit makes the removal durable, then trims a's lpns: two, then no room.
  store->refuse_after = 2;
  const Status st = vol->sync();
  INFO(st.to_string());
  REQUIRE(st.is_ok());  // committed: the refused trims wait for the next commit
  REQUIRE(store->refused == 1);
  store->refuse_after = -1;
  REQUIRE(vol->sync().is_ok());  // (nothing new: the waiting trims are issued now)
  REQUIRE(vol->sync().is_ok());  // and durable: every one of a's lpns is back in the pool
  // Two files taking every lpn the pool hands out: a page given twice would show in both.
  REQUIRE(vol->create("c", &c).is_ok());
  REQUIRE(vol->write(c, 0, Bytes(6 * chunk, 0x33)).is_ok());
  REQUIRE(vol->write(b, chunk, Bytes(4 * chunk, 0x44)).is_ok());
  REQUIRE(vol->sync().is_ok());
  REQUIRE(read_all(*vol, "c") == Bytes(6 * chunk, 0x33));
  Bytes want_b(chunk, 0x22);
  want_b.resize(5 * chunk, 0x44);
  REQUIRE(read_all(*vol, "b") == want_b);
  REQUIRE(vol->check().is_ok());
  vol.reset();
  std::unique_ptr<PageStore> again;
  REQUIRE(mount_store(*nand, &again).is_ok());
  REQUIRE(Volume::open(std::move(again), test::volume_options(), &vol).is_ok());
  REQUIRE(read_all(*vol, "c") == Bytes(6 * chunk, 0x33));
  REQUIRE(read_all(*vol, "b") == want_b);
  REQUIRE(vol->check().is_ok());
}

TEST_CASE("sizes are exact, holes read as zeros, and a shrunk tail stays zero after regrowth",
          "[volume]") {
  const auto cfg = test::store_matrix()[2];
  Rig r = make_volume(cfg);
  const uint32_t c = cfg.geo.page_data;
  Volume::FileId id;
  REQUIRE(r.vol->create("x", &id).is_ok());
  Bytes tail(10, 0x7f);
  REQUIRE(r.vol->write(id, 3 * uint64_t(c) + 5, tail).is_ok());  // chunks 0..2 are holes
  uint64_t size;
  REQUIRE(r.vol->size(id, &size).is_ok());
  REQUIRE(size == 3 * uint64_t(c) + 15);
  Bytes all = read_all(*r.vol, "x");
  REQUIRE(std::all_of(all.begin(), all.begin() + 3 * long(c) + 5, [](uint8_t b) { return !b; }));
  REQUIRE(r.vol->truncate(id, 3 * uint64_t(c) + 7).is_ok());
  REQUIRE(r.vol->sync().is_ok());
  REQUIRE(r.vol->truncate(id, 4 * uint64_t(c)).is_ok());
  all = read_all(*r.vol, "x");
  REQUIRE(all[3 * c + 6] == 0x7f);
  REQUIRE(all[3 * c + 7] == 0);  // was 0x7f before the shrink
  FileInfo fi;
  REQUIRE(r.vol->stat("x", &fi).is_ok());
  REQUIRE(fi.chunks_mapped == 1);
}

TEST_CASE("a full volume refuses writes with kFull and loses nothing", "[volume]") {
  const auto cfg = test::store_matrix()[2];
  Rig r = make_volume(cfg);
  const uint32_t c = cfg.geo.page_data;
  Volume::FileId id;
  REQUIRE(r.vol->create("big", &id).is_ok());
  Bytes chunk(c);
  uint64_t written = 0;
  Status st;
  std::mt19937_64 rng(test::test_seed());
  for (;;) {
    chunk = test::random_page(rng, c);
    st = r.vol->write(id, written, chunk);
    if (!st.is_ok()) break;
    written += c;
  }
  INFO(st.to_string());
  REQUIRE(st.is(Errc::kFull));
  uint64_t size;
  REQUIRE(r.vol->size(id, &size).is_ok());
  REQUIRE(size == written);
  REQUIRE(r.vol->close().is_ok());
  REQUIRE(remount(r).is_ok());
  REQUIRE(read_all(*r.vol, "big").size() == written);
  REQUIRE(r.vol->check().is_ok());
  // Freeing space makes room again (after the release is synced).
  REQUIRE(r.vol->lookup("big", &id).is_ok());
  REQUIRE(r.vol->truncate(id, written / 2).is_ok());
  REQUIRE(r.vol->sync().is_ok());
  REQUIRE(r.vol->write(id, written / 2, chunk).is_ok());
}

TEST_CASE("names are checked and a read-only volume refuses changes", "[volume]") {
  const auto cfg = test::store_matrix()[0];
  Rig r = make_volume(cfg);
  Volume::FileId id;
  REQUIRE(r.vol->create("", &id).is(Errc::kInvalidArgument));
  REQUIRE(r.vol->create("a/b", &id).is(Errc::kInvalidArgument));
  REQUIRE(r.vol->create("..", &id).is(Errc::kInvalidArgument));
  REQUIRE(r.vol->create(std::string(kMaxNameBytes + 1, 'n'), &id).is(Errc::kNameTooLong));
  REQUIRE(r.vol->create(std::string(kMaxNameBytes, 'n'), &id).is_ok());
  REQUIRE(r.vol->create(std::string(kMaxNameBytes, 'n'), &id).is(Errc::kExists));
  Bytes d(100, 1);
  REQUIRE(r.vol->write(id, 0, d).is_ok());
  REQUIRE(r.vol->close().is_ok());
  VolumeOptions ro = test::volume_options();
  ro.read_only = true;
  REQUIRE(remount(r, ro).is_ok());
  REQUIRE(r.vol->lookup(std::string(kMaxNameBytes, 'n'), &id).is_ok());
  REQUIRE(r.vol->write(id, 0, d).is(Errc::kReadOnly));
  REQUIRE(r.vol->remove(std::string(kMaxNameBytes, 'n')).is(Errc::kReadOnly));
  REQUIRE(read_all(*r.vol, std::string(kMaxNameBytes, 'n')) == d);
}

TEST_CASE("the directory holds max_files files, then refuses with kFull", "[volume]") {
  const auto cfg = test::store_matrix()[0];
  Rig r = make_volume(cfg);
  const uint32_t max = r.vol->layout().max_files();
  REQUIRE(max >= 32);
  Volume::FileId id;
  for (uint32_t i = 0; i < max; i++) REQUIRE(r.vol->create("n" + std::to_string(i), &id).is_ok());
  REQUIRE(r.vol->create("one-more", &id).is(Errc::kFull));
  REQUIRE(r.vol->remove("n3").is_ok());
  REQUIRE(r.vol->create("one-more", &id).is_ok());
  REQUIRE(r.vol->close().is_ok());
  REQUIRE(remount(r).is_ok());
  REQUIRE(r.vol->list().size() == max);
}

// Every chip operation the Volume's writes cause, counted (reads, programs, erases) or not
// (PageStore::peek): the emulator's operation count sees both.
uint64_t uncounted_ops(const EmulatedNand& nand, uint64_t ops_before, const NandCounters& before) {
  const NandCounters& c = nand.counters();
  const uint64_t counted = (c.page_reads - before.page_reads) + (c.spare_reads - before.spare_reads) +
                           (c.programs - before.programs) + (c.erases - before.erases);
  return nand.operations() - ops_before - counted;
}

TEST_CASE("bytes_changed is measured only when asked, and only then costs a read per write",
          "[volume][stats]") {
  const bool track = GENERATE(false, true);
  INFO("track_changes " << track);
  const auto cfg = test::store_matrix()[0];
  VolumeOptions opts = test::volume_options();
  opts.track_changes = track;
  Rig r = make_volume(cfg, opts);
  const uint32_t c = cfg.geo.page_data;
  Volume::FileId db;
  REQUIRE(r.vol->create("shop.db", &db).is_ok());
  Bytes page(c, 0x33);
  for (int i = 0; i < 4; i++) REQUIRE(r.vol->write(db, uint64_t(i) * c, page).is_ok());
  REQUIRE(r.vol->sync().is_ok());
  r.vol->reset_stats();
  const uint64_t ops = r.nand->operations();
  const NandCounters before = r.nand->counters();
  page[7] = 0x34;  // one byte of each page changes
  page[9] = 0x35;  // and another
  for (int i = 0; i < 4; i++) REQUIRE(r.vol->write(db, uint64_t(i) * c, page).is_ok());
  REQUIRE(r.vol->sync().is_ok());
  const VolumeStats vs = r.vol->stats();
  CHECK(vs.changes_tracked == track);
  CHECK(vs.kind[size_t(FileKind::kDatabase)].bytes_changed == (track ? 8u : 0u));
  if (track) CHECK(uncounted_ops(*r.nand, ops, before) >= 4);  // a peek per chunk written
  else CHECK(uncounted_ops(*r.nand, ops, before) == 0);        // no hidden read
}

TEST_CASE("flash work is attributed to the file kind that caused it", "[volume][stats]") {
  const auto cfg = test::store_matrix()[0];
  VolumeOptions tracked = test::volume_options();
  tracked.track_changes = true;
  Rig r = make_volume(cfg, tracked);
  const uint32_t c = cfg.geo.page_data;
  Volume::FileId db, j;
  REQUIRE(r.vol->create("shop.db", &db).is_ok());
  REQUIRE(r.vol->create("shop.db-journal", &j).is_ok());
  REQUIRE(r.vol->sync().is_ok());
  r.vol->reset_stats();
  Bytes page(c, 0x33);
  for (int i = 0; i < 4; i++) REQUIRE(r.vol->write(db, uint64_t(i) * c, page).is_ok());
  REQUIRE(r.vol->write(j, 0, Bytes(100, 9)).is_ok());
  REQUIRE(r.vol->sync().is_ok());
  const VolumeStats vs = r.vol->stats();
  const auto& d = vs.kind[size_t(FileKind::kDatabase)];
  const auto& jj = vs.kind[size_t(FileKind::kJournal)];
  REQUIRE(d.bytes_written == 4 * uint64_t(c));
  REQUIRE(d.chunks_written == 4);
  REQUIRE(d.bytes_changed == 4 * uint64_t(c));  // fresh chunks: every non-zero byte
  REQUIRE(jj.bytes_written == 100);
  REQUIRE(jj.chunks_written == 1);  // the partial chunk, written at sync
  auto lock = r.vol->lock();
  const CostBreakdown& cb = r.vol->store().costs();
  REQUIRE(cb.cls[size_t(FileKind::kDatabase)].base_pages == 4);
  REQUIRE(cb.cls[size_t(FileKind::kJournal)].base_pages == 1);
  REQUIRE(cb.cls[size_t(FileKind::kDirectory)].flash.programs > 0);  // slots and owner map
  REQUIRE(cb.cls[size_t(FileKind::kWal)].flash.programs == 0);
}

TEST_CASE("a logical clock makes mtimes, and so the flash figures, repeat exactly", "[volume]") {
  const auto cfg = test::store_matrix()[0];
  VolumeOptions opts = test::volume_options();
  opts.logical_clock = true;
  constexpr uint64_t kEpoch = 1767225600ull * 1000000000ull;  // 2026-01-01
  auto run = [&](Rig& r) {
    Volume::FileId a, b;
    REQUIRE(r.vol->create("a", &a).is_ok());
    REQUIRE(r.vol->create("b", &b).is_ok());
    for (int i = 0; i < 40; i++) {
      REQUIRE(r.vol->write(i % 2 ? a : b, uint64_t(i) * 300, Bytes(700, uint8_t(i))).is_ok());
      if (i % 7 == 0) REQUIRE(r.vol->sync().is_ok());
    }
    REQUIRE(r.vol->truncate(a, 1000).is_ok());
    REQUIRE(r.vol->sync().is_ok());
  };
  Rig one = make_volume(cfg, opts), two = make_volume(cfg, opts);
  run(one);
  run(two);
  CHECK(one.nand->counters().sim_us == two.nand->counters().sim_us);
  CHECK(one.nand->counters().programs == two.nand->counters().programs);
  FileInfo fa, fb;
  REQUIRE(one.vol->stat("a", &fa).is_ok());
  REQUIRE(one.vol->stat("b", &fb).is_ok());
  // 2 creates, 40 writes, 1 truncate: 43 ticks of 1 ms; "a" changed last.
  CHECK(fa.mtime_ns == kEpoch + 43 * 1000000ull);
  CHECK(fb.mtime_ns == kEpoch + 41 * 1000000ull);
  // After a remount the clock goes on from the newest mtime: never backwards.
  REQUIRE(one.vol->close().is_ok());
  REQUIRE(remount(one, opts).is_ok());
  Volume::FileId c;
  REQUIRE(one.vol->create("c", &c).is_ok());
  FileInfo fc;
  REQUIRE(one.vol->stat("c", &fc).is_ok());
  CHECK(fc.mtime_ns == fa.mtime_ns + 1000000ull);
}

TEST_CASE("offsets and sizes beyond the data area are refused with kTooLarge and change nothing",
          "[volume]") {
  const auto cfg = test::store_matrix()[2];
  Rig r = make_volume(cfg);
  Volume::FileId id;
  REQUIRE(r.vol->create("x", &id).is_ok());
  const Bytes hello = {'h', 'e', 'l', 'l', 'o'};
  REQUIRE(r.vol->write(id, 0, hello).is_ok());
  REQUIRE(r.vol->sync().is_ok());
  const uint64_t cap = r.vol->max_file_size();
  REQUIRE(cap == uint64_t(r.vol->layout().data_lpns) * cfg.geo.page_data);
  const Bytes one = {1};
  Status st = r.vol->truncate(id, uint64_t(1) << 41);
  INFO(st.to_string());
  REQUIRE(st.is(Errc::kTooLarge));
  REQUIRE(std::string(st.message()).find("largest file") != std::string::npos);
  REQUIRE(r.vol->truncate(id, cap + 1).is(Errc::kTooLarge));
  REQUIRE(r.vol->write(id, uint64_t(1) << 41, one).is(Errc::kTooLarge));
  REQUIRE(r.vol->write(id, cap, one).is(Errc::kTooLarge));
  REQUIRE(r.vol->write(id, ~uint64_t(0), one).is(Errc::kTooLarge));  // (would wrap around)
  REQUIRE(read_all(*r.vol, "x") == hello);
  FileInfo fi;
  REQUIRE(r.vol->stat("x", &fi).is_ok());
  REQUIRE(fi.chunks_mapped == 1);
  // The bound is exact: the last byte of the data area is a valid offset.
  REQUIRE(r.vol->write(id, cap - 1, one).is_ok());
  REQUIRE(r.vol->truncate(id, cap).is_ok());
  REQUIRE(r.vol->close().is_ok());
  REQUIRE(remount(r).is_ok());
  REQUIRE(r.vol->check().is_ok());
}

TEST_CASE("mount refuses a directory slot whose size is beyond the data area, naming the file",
          "[volume]") {
  // A hostile or damaged image: a size from flash must not size the file's chunk table.
  const auto cfg = test::store_matrix()[2];
  Rig r = make_volume(cfg);
  Volume::FileId id;
  REQUIRE(r.vol->create("huge", &id).is_ok());
  REQUIRE(r.vol->write(id, 0, Bytes(10, 7)).is_ok());
  REQUIRE(r.vol->close().is_ok());
  r.vol.reset();
  std::unique_ptr<PageStore> store;
  REQUIRE(mount_store(*r.nand, &store).is_ok());
  Bytes page(cfg.geo.page_data);
  REQUIRE(store->read(1, page).is_ok());  // directory page 0
  bool found = false;
  for (size_t at = 0; at + kSlotBytes <= page.size(); at += kSlotBytes) {
    Slot s;
    REQUIRE(decode_slot(page.data() + at, &s).is_ok());
    if (s.name != "huge") continue;
    s.size = uint64_t(1) << 60;
    encode_slot(s, page.data() + at);
    found = true;
  }
  REQUIRE(found);
  REQUIRE(store->write(1, page).is_ok());
  REQUIRE(store->sync().is_ok());
  store.reset();
  Status st = remount(r);
  INFO(st.to_string());
  REQUIRE(st.is(Errc::kCorrupt));
  REQUIRE(std::string(st.message()).find("huge") != std::string::npos);
  REQUIRE(std::string(st.message()).find("beyond") != std::string::npos);
}

TEST_CASE("dirty metadata pages are walked in ascending order, each once", "[volume]") {
  const uint32_t n = GENERATE(1u, 63u, 64u, 65u, 1024u, 1000u);
  INFO("pages " << n);
  DirtyPages d(n);
  CHECK(!d.any());
  CHECK(d.next(0) == DirtyPages::kNone);
  std::mt19937 rng(n);
  std::set<uint32_t> want;
  for (int i = 0; i < 40; i++) {
    const uint32_t p = rng() % n;
    d.set(p);
    want.insert(p);
  }
  d.set(n - 1);  // the last page (a partial word)
  want.insert(n - 1);
  std::vector<uint32_t> got;
  for (uint32_t p = d.next(0); p != DirtyPages::kNone; p = d.next(p + 1)) got.push_back(p);
  CHECK(got == std::vector<uint32_t>(want.begin(), want.end()));
  CHECK(d.next(n) == DirtyPages::kNone);
  for (uint32_t p : want) {
    CHECK(d.any());
    d.clear(p);
    d.clear(p);  // twice: still counted once
  }
  CHECK(!d.any());
  d.set(0);
  d.clear_all();
  CHECK(!d.any());
  CHECK(d.next(0) == DirtyPages::kNone);
}
