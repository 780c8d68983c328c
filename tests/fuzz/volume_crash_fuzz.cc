// volume_crash_fuzz.cc — volume-crash-fuzz: randomized power-cut campaign for pdl::Volume
// (regression seeds and an ATOMIC=1 sample run in the default tests; the long campaigns are
// opt-in).
//
//   build/tests/volume-crash-fuzz FIRST_SEED COUNT          (env: KEEP=1 go on after a failure,
//                                                            V=1 print every op, OPS=1 print
//                                                            the failing seed's ops,
//                                                            METHODS=all also draw IPU and
//                                                            IPL; default PDL/OPU, so that
//                                                            seeds keep their meaning;
//                                                            METHODS=ftl-page,bast16,... FTL
//                                                            devices only, see below;
//                                                            NVM=1 PDL and IPL with NVM)
// Per seed: a random tiny geometry (512/1024-byte pages, 4-8 pages per block, 16-47 blocks),
// method, obsolete mode, cache size and directory size; six rounds of random file operations
// (create, byte-range writes, truncates, removes, renames, syncs, closes) against a model, a
// power cut at a random flash operation with a random tear, sometimes further cuts during the
// remount, then the oracle: check() clean; files untouched since the last sync byte-identical;
// every chunk of a touched file a version that file (by identity) held since the sync, or
// zeros; a second mount of a copy identical; the volume keeps working.
// Slot mtimes come from the Volume's logical clock, so a seed is an exact replay: the same flash
// operations, the same cuts (seeds numbered before that change meant other runs).
//
// METHODS=<keys>: FTL devices (method catalogue keys of ftl_methods(): ftl-page, bast16, fast32,
// sb-page, ...), comma-separated; each seed draws one of them (from a stream of its own, so the
// geometry and workload draws keep their meaning) and runs per page — an FTL device has no
// atomic groups, so ATOMIC=1 is refused with them. The page FTL takes the drawn logical size;
// BAST/FAST take 2..7 log blocks (the key's 16 or 32 do not fit a tiny chip) and every FTL
// beyond the page one its engine's default size. The oracle is the per-page one above: what
// SQLite's journal relies on of a block device.
//
// ATOMIC=1: the store runs atomic groups (CommitMode::kGroup; PDL/OPU, and with METHODS=all
// IPL too — IPU, which has none, is drawn as IPL) and the oracle is exact: after a cut (and
// the remount's own cuts) the Volume's files — names, sizes, bytes — are exactly those of the
// last Volume::sync/close that returned, or of the one the cut interrupted. Commits are held
// (hold_commits: no auto-commit on a full chip), so only sync/close commit; a write, truncate,
// create, rename or remove that fails with kFull leaves what the Volume then reads back (the
// open group's state); a sync or close that fails with kFull committed nothing and is answered
// by rollback(), as is an occasional rollback() of its own. A rollback must give the committed
// state exactly. A second mount of a copy must agree; check() must be clean.
//
// NVM=1: the chip has byte-addressable NVM beside it (Geometry::nvm_bytes) and each seed draws,
// from a stream of its own, PDL with its write buffer in NVM (from NvmLog::min_nvm_bytes(page)
// to four times it) or IPL with its log areas in NVM (1..4 log sectors of 128 or 512 bytes per
// erase block, no flash log region), per page or with ATOMIC=1 atomic groups. The power cut
// counts NVM writes among the mutating operations, so cuts fall inside NVM writes too (torn at
// 8-byte words per the drawn Tear). Not with METHODS=<keys> (the FTL devices have no NVM).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "flash/image/methods.h"
#include "flash/image/open_store.h"
#include "flash/pdl/nvm_log.h"
#include "flash/device/emulated_nand.h"
#include "flash/store/page_store.h"
#include "flash/volume/volume.h"
#include "tests/support/volume_options.h"

using namespace pdl;
using Bytes = std::vector<uint8_t>;

static bool g_verbose = getenv("V") != nullptr;
static std::vector<std::string> g_log;
#define LOG(...) do { char b_[512]; snprintf(b_, sizeof b_, __VA_ARGS__); g_log.push_back(b_); if (g_verbose) fprintf(stderr, "op: %s\n", b_); } while (0)

struct Ident {
  Bytes cur;
  std::vector<Bytes> versions;  // since sync (incl. at sync if alive then)
  std::set<std::string> names;  // names held since sync
  std::set<uint64_t> sizes;
  bool alive_at_sync = false, removed = false, alive = true, touched = false;
  std::string name;
};

struct Model {
  std::map<uint64_t, Ident> ids;
  std::map<std::string, uint64_t> names;           // current
  std::map<std::string, std::set<uint64_t>> held;  // name -> idents that held it since sync
  std::set<std::string> absent_ok;                 // names absent at some point since sync
  uint64_t next = 1;
  void baseline() {
    held.clear();
    absent_ok.clear();
    for (auto it = ids.begin(); it != ids.end();) {
      if (!it->second.alive) { it = ids.erase(it); continue; }
      Ident& d = it->second;
      d.versions = {d.cur};
      d.sizes = {d.cur.size()};
      d.names = {d.name};
      d.alive_at_sync = true;
      d.removed = false;
      d.touched = false;
      held[d.name].insert(it->first);
      ++it;
    }
  }
};

struct Cfg {
  uint32_t page, ppb, blocks, cache, max_files;
  Method method;
  uint32_t max_diff;
  ObsoleteMode ob;
  uint32_t logical;  // 0 default
  uint32_t log_region = 0;  // IPL
  uint32_t wear_level = StoreParams::kWearLevelDefault;  // PDL/OPU: 0 off, 1..4 moves often
  FtlKind ftl = FtlKind::kNone;  // FTL devices (METHODS=<keys>)
  uint32_t log_blocks = 0;       // BAST/FAST
  uint32_t nvm = 0;              // NVM=1: the chip's and the store's NVM bytes
  uint32_t log_sector = 0;       // NVM=1, IPL: log sector bytes
};

static std::string cfg_str(const Cfg& c) {
  std::ostringstream o;
  o << "page=" << c.page << " ppb=" << c.ppb << " blocks=" << c.blocks << " cache=" << c.cache
    << " max_files=" << c.max_files << " method=" << method_name(c.method) << " max_diff=" << c.max_diff
    << " obsolete=" << obsolete_name(c.ob) << " logical=" << c.logical
    << " log_region=" << c.log_region << " wear_level=" << c.wear_level;
  if (is_ftl_device(c.method)) o << " ftl=" << ftl_name(c.ftl) << " log_blocks=" << c.log_blocks;
  if (c.nvm) o << " nvm=" << c.nvm << " log_sector=" << c.log_sector;
  return o.str();
}

static Bytes read_all(Volume& v, const std::string& n, Status* st_out = nullptr) {
  Volume::FileId id;
  Status st = v.lookup(n, &id);
  if (!st.is_ok()) { if (st_out) *st_out = st; return {}; }
  uint64_t size;
  st = v.size(id, &size);
  Bytes b(size + 5);
  size_t got = 0;
  st = v.read(id, 0, b, &got);
  if (st_out) *st_out = st;
  if (!st.is_ok()) { fprintf(stderr, "read %s: %s\n", n.c_str(), st.to_string().c_str()); }
  b.resize(got);
  return b;
}

static uint64_t g_seed;
static Cfg g_cfg;
static int g_zero_soft = 0, g_kfull_partial = 0, g_kfull = 0, g_cuts = 0;
static bool g_keep_going = getenv("KEEP") != nullptr;
static int g_bugs = 0;
static int g_skipped = 0;  // seeds whose drawn configuration the store or volume refused
static std::vector<MethodPreset> g_ftl_methods;  // METHODS=<keys>: the FTL devices to draw
static uint64_t g_wl_runs = 0;  // wear-levelling moves made (counted at each remount)
struct Bug {};
static void fail(const std::string& why) {
  fprintf(stderr, "BUG seed=%llu %s\n  %s\n", (unsigned long long)g_seed, cfg_str(g_cfg).c_str(), why.c_str());
  if (getenv("OPS")) for (auto& l : g_log) fprintf(stderr, "  op: %s\n", l.c_str());
  g_bugs++;
  if (!g_keep_going) exit(1);
  throw Bug{};
}

static bool chunk_matches(const Bytes& got, size_t off, size_t len, const Bytes& s) {
  for (size_t i = off; i < off + len; i++)
    if (got[i] != (i < s.size() ? s[i] : 0)) return false;
  return true;
}
static bool all_zero(const Bytes& got, size_t off, size_t len) {
  for (size_t i = off; i < off + len; i++) if (got[i]) return false;
  return true;
}
static bool ident_matches(const Ident& d, const Bytes& got, uint32_t chunk, bool* zeros_used) {
  *zeros_used = false;
  for (size_t off = 0; off < got.size(); off += chunk) {
    size_t len = std::min<size_t>(chunk, got.size() - off);
    bool ok = false;
    for (auto& s : d.versions) if (chunk_matches(got, off, len, s)) { ok = true; break; }
    if (!ok && all_zero(got, off, len)) { ok = true; *zeros_used = true; }
    if (!ok) return false;
  }
  return true;
}

static std::vector<std::string> kNames = {"a", "b", "c", "d", "e", "a-journal", "b-wal", "db-mj1"};

struct Rig {
  std::unique_ptr<EmulatedNand> nand;
  std::unique_ptr<Volume> vol;
};

// A fresh chip and Volume for the seed's configuration; false if the configuration is one the
// store refuses (too small: skipped, not a bug).
static bool format_rig(const Cfg& c, CommitMode mode, Rig* r) {
  Geometry g;
  g.page_data = c.page;
  g.page_spare = 32;
  g.pages_per_block = c.ppb;
  g.blocks = c.blocks;
  g.nvm_bytes = c.nvm;
  if (!EmulatedNand::create_ram(g, &r->nand).is_ok()) return false;
  StoreParams sp;
  sp.method = c.method;
  sp.max_differential = c.max_diff;
  sp.obsolete = c.ob;
  sp.logical_pages = c.logical;
  sp.log_region = c.log_region;
  sp.wear_level = c.wear_level;
  sp.ftl = c.ftl;
  sp.log_blocks = c.log_blocks;
  sp.nvm_bytes = c.nvm;
  sp.log_sector = c.log_sector;
  std::unique_ptr<PageStore> store;
  Status st = format_store(*r->nand, sp, &store, mode);
  if (!st.is_ok()) {
    g_skipped++;
    if (g_verbose) fprintf(stderr, "format_store: %s\n", st.to_string().c_str());
    return false;
  }
  VolumeOptions o = test::volume_options();  // (OWNER_CACHE=n: a small owner cache)
  o.cache_chunks = c.cache;
  o.logical_clock = true;
  st = Volume::format(std::move(store), c.max_files, "", o, &r->vol);
  if (!st.is_ok()) {
    g_skipped++;
    if (g_verbose) fprintf(stderr, "vol format: %s\n", st.to_string().c_str());
    return false;
  }
  return true;
}

static Status mount(Rig& r, const Cfg& c) {
  if (r.vol) g_wl_runs += r.vol->store().stats().wl_runs;
  r.vol.reset();
  std::unique_ptr<PageStore> store;
  PDL_TRY(mount_store(*r.nand, &store));
  store->set_wear_level(c.wear_level);
  VolumeOptions o = test::volume_options();  // (OWNER_CACHE=n: a small owner cache)
  o.cache_chunks = c.cache;
  o.logical_clock = true;
  return Volume::open(std::move(store), o, &r.vol);
}

static std::vector<Bytes> g_meta_snap;
static void snap_meta(Rig& r) {
  if (!getenv("METASNAP")) return;
  g_meta_snap.clear();
  auto lk = r.vol->lock();
  for (uint32_t l = 0; l < r.vol->layout().data_first; l++) {
    Bytes b(r.vol->layout().chunk);
    Status st = r.vol->store().read(l, b);
    if (!st.is_ok()) b.assign(b.size(), 0xEE);
    g_meta_snap.push_back(b);
  }
}
static void cmp_meta(Rig& r) {
  if (!getenv("METASNAP")) return;
  auto lk = r.vol->lock();
  for (uint32_t l = 0; l < g_meta_snap.size(); l++) {
    Bytes b(r.vol->layout().chunk);
    Status st = r.vol->store().read(l, b);
    if (!st.is_ok()) b.assign(b.size(), 0xEE);
    if (b != g_meta_snap[l]) fprintf(stderr, "   [meta] lpn %u differs from the last synced snapshot\n", l);
  }
}
static void verify_and_rebase(Rig& r, Model& m, const Cfg& c, const std::string& when) {
  Status st = r.vol->check();
  if (!st.is_ok()) fail(when + ": check failed: " + st.to_string());
  std::map<std::string, Bytes> present;
  for (const FileInfo& f : r.vol->list()) {
    Status rs;
    present[f.name] = read_all(*r.vol, f.name, &rs);
    if (!rs.is_ok()) fail(when + ": read " + f.name + ": " + rs.to_string());
  }
  std::vector<std::string> pnames;
  std::vector<std::vector<uint64_t>> cands;
  for (auto& [n, got] : present) {
    auto h = m.held.find(n);
    if (h == m.held.end() || h->second.empty())
      fail(when + ": unexpected file '" + n + "' size " + std::to_string(got.size()));
    std::vector<uint64_t> cs;
    for (uint64_t id : h->second) {
      bool z;
      const Ident& d = m.ids.at(id);
      if (ident_matches(d, got, c.page, &z) && d.sizes.count(got.size())) {
        cs.push_back(id);
        if (z) {
          g_zero_soft++;
          if (getenv("ZEROS")) fprintf(stderr, "note seed=%llu %s: file '%s' ident %llu: zero chunk(s) matching no version\n", (unsigned long long)g_seed, when.c_str(), n.c_str(), (unsigned long long)id);
        }
      }
    }
    if (cs.empty()) {
      std::ostringstream o;
      o << when << ": file '" << n << "' (size " << got.size() << ") matches no identity that held the name;";
      for (uint64_t id : h->second) {
        const Ident& d = m.ids.at(id);
        o << "\n    ident " << id << " versions:";
        for (auto& s : d.versions) o << " [" << s.size() << "]";
        o << " sizes:";
        for (auto z : d.sizes) o << " " << z;
        for (size_t off = 0; off < got.size(); off += c.page) {
          size_t len = std::min<size_t>(c.page, got.size() - off);
          bool ok = all_zero(got, off, len);
          for (auto& s : d.versions) ok = ok || chunk_matches(got, off, len, s);
          if (!ok) {
            o << " first bad chunk " << off / c.page << " (byte0=" << int(got[off]) << ")";
            if (getenv("DUMP")) {  // where the chunk differs from each version, and from zeros
              auto runs = [&](const Bytes* v) {
                std::ostringstream d;
                size_t diffs = 0, first = len;
                for (size_t i = 0; i < len; i++) {
                  const uint8_t want = v && off + i < v->size() ? (*v)[off + i] : 0;
                  if (got[off + i] != want) { diffs++; first = std::min(first, i); }
                }
                d << diffs << " bytes differ, first at " << first;
                return d.str();
              };
              o << "\n      vs zeros: " << runs(nullptr);
              for (auto& v : d.versions) o << "\n      vs [" << v.size() << "]: " << runs(&v);
            }
            break;
          }
        }
      }
      fail(o.str());
    }
    pnames.push_back(n);
    cands.push_back(cs);
  }
  std::set<uint64_t> required;
  for (auto& [id, d] : m.ids) {
    if (d.alive_at_sync && !d.touched && d.alive) {
      auto p = present.find(d.name);
      if (p == present.end()) fail(when + ": untouched file '" + d.name + "' missing");
      if (p->second != d.cur) fail(when + ": untouched file '" + d.name + "' differs");
    }
    if (d.alive_at_sync && !d.removed) required.insert(id);
  }
  std::set<uint64_t> used;
  std::function<bool(size_t)> dfs = [&](size_t i) -> bool {
    if (i == pnames.size()) {
      for (uint64_t r : required) if (!used.count(r)) return false;
      return true;
    }
    for (uint64_t id : cands[i]) {
      if (used.count(id)) continue;
      used.insert(id);
      if (dfs(i + 1)) return true;
      used.erase(id);
    }
    return false;
  };
  if (!dfs(0)) {
    std::string dump;
    for (size_t i = 0; i < pnames.size(); i++) {
      dump += "\n    present '" + pnames[i] + "' size " + std::to_string(present[pnames[i]].size()) + " candidates:";
      for (auto id : cands[i]) dump += " " + std::to_string(id);
    }
    for (auto& [mid, md] : m.ids) {
      dump += "\n    ident " + std::to_string(mid) + " name " + md.name + (md.alive ? "" : " (dead)") + (required.count(mid) ? " REQUIRED" : "") + " names:";
      for (auto& nn : md.names) dump += " " + nn;
      dump += " versions:";
      for (auto& s : md.versions) dump += " [" + std::to_string(s.size()) + "]";
    }
    fail(when + ": no consistent assignment of present files to identities (a never-removed file vanished or one identity appears twice)" + dump);
  }
  Model nm;
  for (auto& [n, got] : present) {
    uint64_t id = nm.next++;
    Ident d;
    d.cur = got;
    d.name = n;
    nm.ids[id] = d;
    nm.names[n] = id;
  }
  nm.baseline();
  m = nm;
}

static Bytes rand_bytes(std::mt19937_64& rng, size_t n) {
  Bytes b(n);
  uint8_t v = uint8_t(rng() | 1);
  int mode = rng() % 3;
  for (size_t i = 0; i < n; i++) b[i] = mode == 0 ? v : mode == 1 ? uint8_t(rng() | 1) : uint8_t(v + i);
  return b;
}

// A write on a file of `size` bytes (drawn in this order): whole pages, a short patch, an
// append, or anywhere, kept within the first 10 pages; then its data.
struct WriteDraw {
  uint64_t off, len;
  Bytes data;
};
static WriteDraw draw_write(std::mt19937_64& rng, const Cfg& c, uint64_t size) {
  uint64_t off, len;
  const int kind = int(rng() % 4);
  if (kind == 0) { off = (rng() % (size / c.page + 3)) * c.page; len = c.page * (1 + rng() % 3); }
  else if (kind == 1) { off = rng() % (size + 1); len = 1 + rng() % 40; }
  else if (kind == 2) { off = size; len = 1 + rng() % (2 * c.page); }
  else { off = rng() % (size + 2 * c.page); len = 1 + rng() % (3 * c.page); }
  if (off + len > 10 * c.page) { off = off % (6 * c.page); if (off + len > 10 * c.page) len = 1 + rng() % c.page; }
  Bytes data = rand_bytes(rng, len);
  return {off, len, std::move(data)};
}

static Status step(Rig& r, Model& m, std::mt19937_64& rng, const Cfg& c) {
  Volume& v = *r.vol;
  const std::string n = kNames[rng() % kNames.size()];
  int op = int(rng() % 100);
  if (op < 8) {
    LOG("sync");
    Status st = v.sync();
    if (st.is_ok()) { m.baseline(); snap_meta(r); }
    return st;
  }
  if (op < 10) {
    LOG("close");
    Status st = v.close();
    if (st.is_ok()) { m.baseline(); snap_meta(r); }
    return st;
  }
  if (!m.names.count(n) || op < 16) {
    if (m.names.count(n)) return Status::ok();
    LOG("create %s", n.c_str());
    Volume::FileId fid;
    Status st = v.open_file(n, true, &fid);
    if (g_verbose) fprintf(stderr, "  -> %s\n", st.to_string().c_str());
    // Cut mid-create: the slot may have reached flash (IPL writes synchronously), so the file
    // may exist — allowed, not required.
    if (st.is_ok() || st.is(Errc::kPowerCut)) {
      uint64_t id = m.next++;
      Ident d;
      d.name = n;
      d.names = {n};
      d.versions = {Bytes{}};
      d.sizes = {0};
      d.touched = true;
      m.ids[id] = d;
      m.names[n] = id;
      m.held[n].insert(id);
    }
    return st;
  }
  const uint64_t id = m.names.at(n);
  Ident& d = m.ids.at(id);
  Volume::FileId fid;
  if (!v.lookup(n, &fid).is_ok()) fail("model has " + n + " but volume does not");
  if (op < 55) {
    auto [off, len, data] = draw_write(rng, c, d.cur.size());
    LOG("write %s off=%llu len=%llu", n.c_str(), (unsigned long long)off, (unsigned long long)len);
    Bytes pre = d.cur;
    Bytes post = pre;
    if (post.size() < off + len) post.resize(off + len, 0);
    std::memcpy(post.data() + off, data.data(), len);
    for (uint64_t e = (off / c.page + 1) * c.page; e < off + len; e += c.page)
      if (e > pre.size()) d.sizes.insert(e);
    Status st = v.write(fid, off, data);
    d.touched = true;
    d.versions.push_back(post); d.sizes.insert(post.size());
    if (st.is_ok()) {
      d.cur = post;
      return st;
    }
    if (st.is(Errc::kFull) || st.is(Errc::kTooLarge)) {  // (a prefix may be stored)
      g_kfull++;
      Status rs;
      Bytes got = read_all(v, n, &rs);
      if (!rs.is_ok()) fail("read after kFull write: " + rs.to_string());
      if (got != pre) {
        g_kfull_partial++;
        for (size_t o2 = 0; o2 < got.size(); o2 += c.page) {
          size_t l2 = std::min<size_t>(c.page, got.size() - o2);
          if (!chunk_matches(got, o2, l2, pre) && !chunk_matches(got, o2, l2, post))
            fail("after kFull write of " + n + ": chunk " + std::to_string(o2 / c.page) +
                 " is neither the old nor the new contents (acknowledged data lost)");
        }
      }
      d.cur = got;
      d.versions.push_back(got); d.sizes.insert(got.size());
    }
    return st;
  }
  if (op < 68) {
    uint64_t size = d.cur.size();
    uint64_t ns = rng() % 2 ? rng() % (size + 1) : rng() % (size + 2 * c.page + 1);
    if (rng() % 4 == 0) ns = (ns / c.page) * c.page;
    LOG("truncate %s %llu", n.c_str(), (unsigned long long)ns);
    Bytes post = d.cur;
    post.resize(ns, 0);
    Status st = v.truncate(fid, ns);
    d.touched = true;
    d.versions.push_back(post); d.sizes.insert(post.size());
    if (st.is_ok()) d.cur = post;
    else if (st.is(Errc::kFull) || st.is(Errc::kTooLarge)) {
      g_kfull++;
      Status rs;
      d.cur = read_all(v, n, &rs);
      d.versions.push_back(d.cur);
    }
    return st;
  }
  if (op < 80) {
    LOG("remove %s", n.c_str());
    Status st = v.remove(n);
    if (st.is_ok()) {
      d.touched = true;
      d.removed = true;
      d.alive = false;
      m.names.erase(n);
      m.absent_ok.insert(n);
    }
    return st;
  }
  const std::string to = kNames[rng() % kNames.size()];
  LOG("rename %s -> %s", n.c_str(), to.c_str());
  Status st = v.rename(n, to);
  if (n == to) return st;
  bool applied = st.is_ok() || st.is(Errc::kPowerCut);
  if (st.is(Errc::kFull)) { Volume::FileId q; applied = !v.lookup(n, &q).is_ok(); }
  if (applied) {
    if (m.names.count(to)) {
      Ident& o = m.ids.at(m.names.at(to));
      o.touched = true;
      o.removed = true;
      o.alive = false;
    }
    d.touched = true;
    d.name = to;
    d.names.insert(to);
    m.names.erase(n);
    m.names[to] = id;
    m.held[to].insert(id);
    m.absent_ok.insert(n);
  }
  return st;
}

static void check_each(Rig& r, Model& m, const char* what) {
  if (!getenv("CHECKEACH") || r.nand->frozen()) return;
  std::set<std::string> vn;
  for (const FileInfo& f : r.vol->list()) vn.insert(f.name);
  for (auto& [n, id] : m.names) {
    if (!vn.count(n)) fail(std::string("divergence after ") + what + ": model has '" + n + "', volume not");
    if (std::string(getenv("CHECKEACH")) == "2") {
      FileInfo fi;
      (void)r.vol->stat(n, &fi);
      if (fi.size != m.ids.at(id).cur.size()) fail(std::string("divergence after ") + what + ": '" + n + "' size (volume " + std::to_string(fi.size) + " , model " + std::to_string(m.ids.at(id).cur.size()) + ")");
      vn.erase(n);
      continue;
    }
    Bytes got = read_all(*r.vol, n);
    if (got != m.ids.at(id).cur) fail(std::string("divergence after ") + what + ": '" + n + "' content (volume " + std::to_string(got.size()) + " bytes, model " + std::to_string(m.ids.at(id).cur.size()) + ")");
    vn.erase(n);
  }
  if (!vn.empty()) fail(std::string("divergence after ") + what + ": volume has extra '" + *vn.begin() + "'");
}
// The seed's configuration (also g_cfg, for reports). With METHODS=all a separate stream draws
// IPU or IPL half the time, so PDL/OPU draws stay as they were; atomic groups draw IPL for IPU
// (IPU has none) and leave IPL one more block of room (its commit log).
static bool nvm_mode() { return getenv("NVM") && std::string(getenv("NVM")) != "0"; }

static Cfg draw_cfg(uint64_t seed, std::mt19937_64& rng, bool atomic) {
  g_seed = seed;
  g_log.clear();
  Cfg c;
  c.page = rng() % 4 == 0 ? 1024 : 512;
  c.ppb = 4 + rng() % 5;
  c.blocks = 16 + rng() % 32;
  c.cache = 1 + rng() % 16;
  c.max_files = 4 + rng() % 16;
  c.method = rng() % 3 == 0 ? Method::kOpu : Method::kPdl;
  c.max_diff = rng() % 2 ? 0 : c.page / 8;
  c.ob = rng() % 2 ? ObsoleteMode::kSpare : ObsoleteMode::kMemory;
  uint32_t usable = (c.blocks - 6) * c.ppb;
  c.logical = rng() % 3 == 0 ? 0 : usable * (5 + rng() % 6) / 8;
  {  // wear levelling from a stream of its own, so the draws above keep their meaning
    std::mt19937_64 wl(seed ^ 0x3ea7u);
    const unsigned w = unsigned(wl() % 3);
    c.wear_level = w == 0 ? 0 : w == 1 ? 1 + uint32_t(wl() % 4) : StoreParams::kWearLevelDefault;
  }
  if (getenv("METHODS") && std::string(getenv("METHODS")) == "all") {
    std::mt19937_64 more(seed ^ 0x1b1u);
    const unsigned m = unsigned(more() % 4);
    if (m >= 2) {
      c.method = m == 2 && !atomic ? Method::kIpu : Method::kIpl;
      c.log_region = c.method == Method::kIpl ? c.page * (1 + uint32_t(more() % (c.ppb - 2))) : 0;
      const uint32_t cap = (c.blocks - (atomic ? 5 : 3)) * (c.ppb - c.log_region / c.page);
      c.logical = more() % 3 == 0 ? 0 : cap * (5 + uint32_t(more() % 4)) / 8;
    }
  }
  if (nvm_mode()) {  // PDL or IPL with NVM, from a stream of its own
    std::mt19937_64 nv(seed ^ 0x4e564du);
    if (nv() % 2) {
      c.method = Method::kPdl;
      c.log_region = 0;
      c.nvm = NvmLog::min_nvm_bytes(c.page) * (4 + uint32_t(nv() % 13)) / 4 / 8 * 8;
    } else {
      c.method = Method::kIpl;
      c.log_sector = nv() % 2 ? 128 : 512;
      const uint32_t sectors = 1 + uint32_t(nv() % 4);
      c.nvm = 64 + (c.blocks - kSuperblockBlocks) * sectors * c.log_sector;
      c.log_region = 0;  // every flash page a data page; the areas divide the NVM
      // (IPL keeps 3 blocks for merges besides the superblock's 2; one more for atomic groups)
      const uint32_t cap = (c.blocks - (atomic ? 6 : 5)) * c.ppb;
      c.logical = nv() % 3 == 0 ? 0 : cap * (5 + uint32_t(nv() % 4)) / 8;
    }
  }
  if (!g_ftl_methods.empty()) {
    std::mt19937_64 pick(seed ^ 0xf71u);
    const MethodPreset& m = g_ftl_methods[pick() % g_ftl_methods.size()];
    c.method = m.method;
    c.ftl = m.ftl;
    c.max_diff = 0;
    c.log_region = 0;
    c.ob = ObsoleteMode::kMemory;  // (an FTL keeps its invalid-page bits in RAM)
    if (m.ftl == FtlKind::kBast || m.ftl == FtlKind::kFast) c.log_blocks = 2 + uint32_t(pick() % 6);
    if (m.ftl != FtlKind::kPage || m.method != Method::kFtl) c.logical = 0;
  }
  g_cfg = c;
  return c;
}

static void run_seed(uint64_t seed, int rounds) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 7);
  const Cfg c = draw_cfg(seed, rng, false);
  Rig r;
  if (!format_rig(c, CommitMode::kPerPage, &r)) return;
  Status st;
  Model m;
  m.baseline();
  for (int round = 0; round < rounds; round++) {
    int warm = int(rng() % 60);
    for (int i = 0; i < warm; i++) {
      Status s = step(r, m, rng, c);
      if (!s.is_ok() && !s.is(Errc::kFull) && !s.is(Errc::kTooLarge)) fail("warm-up op failed: " + s.to_string());
      check_each(r, m, (g_log.empty() ? "" : g_log.back().c_str()));
    }
    if (rng() % 2) {
      Status s = r.vol->sync();
      if (s.is_ok()) m.baseline();
    }
    uint64_t k = rng() % 120;
    r.nand->cut_power_after(k, Tear(rng() % 3), rng());
    LOG("-- cut armed after %llu ops", (unsigned long long)k);
    for (int i = 0; i < 300; i++) {
      Status s = step(r, m, rng, c);
      if (s.is(Errc::kPowerCut)) { g_cuts++; break; }
      check_each(r, m, (g_log.empty() ? "" : g_log.back().c_str()));
      if (!s.is_ok() && !s.is(Errc::kFull) && !s.is(Errc::kTooLarge)) {
        if (r.nand->frozen()) break;
        fail("op failed: " + s.to_string());
      }
    }
    r.nand->restore_power();
    int tries = 0;
    for (;;) {
      if (tries < 3 && rng() % 2) r.nand->cut_power_after(rng() % 6, Tear(rng() % 3), rng());
      st = mount(r, c);
      r.nand->restore_power();
      if (st.is_ok()) break;
      if (!st.is(Errc::kPowerCut) || ++tries > 10) fail("remount: " + st.to_string());
      LOG("-- mount cut");
    }
    LOG("-- remounted (round %d)", round);
    cmp_meta(r);
    std::map<std::string, Bytes> view;
    for (const FileInfo& f : r.vol->list()) view[f.name] = read_all(*r.vol, f.name);
    {
      Rig r2;
      r2.nand = r.nand->clone();
      Status s2 = mount(r2, c);
      if (!s2.is_ok()) fail("clone mount: " + s2.to_string());
      std::map<std::string, Bytes> view2;
      for (const FileInfo& f : r2.vol->list()) view2[f.name] = read_all(*r2.vol, f.name);
      if (view2 != view) fail("second mount differs from the first");
    }
    verify_and_rebase(r, m, c, "round " + std::to_string(round));
  }
  st = r.vol->close();
  if (!st.is_ok()) fail("final close: " + st.to_string());
  std::map<std::string, Bytes> before;
  for (const FileInfo& f : r.vol->list()) before[f.name] = read_all(*r.vol, f.name);
  if (!mount(r, c).is_ok()) fail("final mount");
  std::map<std::string, Bytes> after;
  for (const FileInfo& f : r.vol->list()) after[f.name] = read_all(*r.vol, f.name);
  if (before != after) fail("final close+remount changed contents");
}


// ---------------------------------------------------------------- ATOMIC=1
using Files = std::map<std::string, Bytes>;
static int g_rollbacks = 0, g_sync_full = 0, g_cut_in_commit = 0, g_commits_done = 0;

static Files view_of(Volume& v, const std::string& when) {
  Files out;
  for (const FileInfo& f : v.list()) {
    Status rs;
    out[f.name] = read_all(v, f.name, &rs);
    if (!rs.is_ok()) fail(when + ": read " + f.name + ": " + rs.to_string());
  }
  return out;
}

static std::string files_diff(const Files& got, const Files& want) {
  std::string o;
  for (auto& [n, b] : want) {
    auto g = got.find(n);
    if (g == got.end()) o += "\n    '" + n + "' missing (size " + std::to_string(b.size()) + ")";
    else if (g->second != b) {
      size_t i = 0;
      while (i < b.size() && i < g->second.size() && b[i] == g->second[i]) i++;
      o += "\n    '" + n + "' size " + std::to_string(g->second.size()) + " (want " +
           std::to_string(b.size()) + "), first difference at byte " + std::to_string(i);
    }
  }
  for (auto& [n, b] : got)
    if (!want.count(n)) o += "\n    '" + n + "' unexpected (size " + std::to_string(b.size()) + ")";
  return o;
}

static Status mount_atomic(Rig& r, const Cfg& c) {
  if (r.vol) g_wl_runs += r.vol->store().stats().wl_runs;
  r.vol.reset();
  std::unique_ptr<PageStore> store;
  PDL_TRY(mount_store(*r.nand, &store, nullptr, CommitMode::kGroup));
  store->set_wear_level(c.wear_level);
  if (!store->atomic()) return Status::error(Errc::kInvalidArgument, "mount(kGroup): not atomic");
  VolumeOptions o = test::volume_options();  // (OWNER_CACHE=n: a small owner cache)
  o.cache_chunks = c.cache;
  o.logical_clock = true;
  PDL_TRY(Volume::open(std::move(store), o, &r.vol));
  r.vol->hold_commits(true);
  return Status::ok();
}

// One random operation. cur: the open group's files; committed: the last commit's.
// *commit_call: the op was a sync/close (a cut inside it may have committed `cur`).
static Status step_atomic(Rig& r, Files& cur, Files& committed, std::mt19937_64& rng,
                          const Cfg& c, bool* commit_call) {
  Volume& v = *r.vol;
  *commit_call = false;
  const std::string n = kNames[rng() % kNames.size()];
  const int op = int(rng() % 100);
  auto readback = [&](const std::string& what) {  // the Volume's word after a kFull
    g_kfull++;
    cur = view_of(v, what);
  };
  auto do_rollback = [&](const char* why) -> Status {
    LOG("rollback (%s)", why);
    Status st = v.rollback();
    if (!st.is_ok()) return st;
    g_rollbacks++;
    Files got = view_of(v, "after rollback");
    if (got != committed) fail(std::string("rollback (") + why + ") does not give the committed state" + files_diff(got, committed));
    cur = committed;
    return st;
  };
  if (op < 8 || (op < 10 && !cur.empty())) {
    const bool close = op >= 6;
    LOG(close ? "close" : "sync");
    *commit_call = true;
    Status st = close ? v.close() : v.sync();
    if (st.is_ok()) {
      committed = cur;
      g_commits_done++;
      return st;
    }
    if (!st.is(Errc::kFull)) return st;
    g_sync_full++;
    // A failed sync commits nothing (volume.h): the rollback gives the last commit.
    *commit_call = false;
    return do_rollback("after a full sync");
  }
  if (op < 11) return do_rollback("random");
  if (!cur.count(n) || op < 16) {
    if (cur.count(n)) return Status::ok();
    LOG("create %s", n.c_str());
    Volume::FileId fid;
    Status st = v.open_file(n, true, &fid);
    if (st.is_ok()) cur[n] = Bytes{};
    else if (st.is(Errc::kFull)) readback("after a full create");
    return st;
  }
  Volume::FileId fid;
  if (!v.lookup(n, &fid).is_ok()) fail("model has " + n + " but the volume does not");
  Bytes& d = cur[n];
  if (op < 55) {
    auto [off, len, data] = draw_write(rng, c, d.size());
    LOG("write %s off=%llu len=%llu", n.c_str(), (unsigned long long)off, (unsigned long long)len);
    Status st = v.write(fid, off, data);
    if (st.is_ok()) {
      if (d.size() < off + len) d.resize(off + len, 0);
      std::memcpy(d.data() + off, data.data(), len);
    } else if (st.is(Errc::kFull) || st.is(Errc::kTooLarge)) {  // (a prefix may be stored)
      readback("after a full write");
    }
    return st;
  }
  if (op < 68) {
    const uint64_t size = d.size();
    uint64_t ns = rng() % 2 ? rng() % (size + 1) : rng() % (size + 2 * c.page + 1);
    if (rng() % 4 == 0) ns = (ns / c.page) * c.page;
    LOG("truncate %s %llu", n.c_str(), (unsigned long long)ns);
    Status st = v.truncate(fid, ns);
    if (st.is_ok()) d.resize(ns, 0);
    else if (st.is(Errc::kFull) || st.is(Errc::kTooLarge)) readback("after a full truncate");
    return st;
  }
  if (op < 80) {
    LOG("remove %s", n.c_str());
    Status st = v.remove(n);
    if (st.is_ok()) cur.erase(n);
    else if (st.is(Errc::kFull)) readback("after a full remove");
    return st;
  }
  const std::string to = kNames[rng() % kNames.size()];
  LOG("rename %s -> %s", n.c_str(), to.c_str());
  Status st = v.rename(n, to);
  if (st.is_ok() && n != to) {
    Bytes b = std::move(d);
    cur.erase(n);
    cur[to] = std::move(b);
  } else if (st.is(Errc::kFull)) {
    readback("after a full rename");
  }
  return st;
}

static void run_seed_atomic(uint64_t seed, int rounds) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 7);
  const Cfg c = draw_cfg(seed, rng, true);
  Rig r;
  if (!format_rig(c, CommitMode::kGroup, &r)) return;
  Status st;
  if (!r.vol->store().atomic()) fail("format(kGroup) gave a store without atomic groups");
  if (!r.vol->atomic()) fail("the Volume over a kGroup store is not atomic");
  r.vol->hold_commits(true);
  Files cur, committed;
  for (int round = 0; round < rounds; round++) {
    const int warm = int(rng() % 60);
    bool commit_call = false;
    for (int i = 0; i < warm; i++) {
      Status s = step_atomic(r, cur, committed, rng, c, &commit_call);
      if (!s.is_ok() && !s.is(Errc::kFull) && !s.is(Errc::kTooLarge)) fail("warm-up op failed: " + s.to_string());
      if (getenv("CHECKEACH")) {  // (reads change the flash operations: debugging only)
        Files now = view_of(*r.vol, "check each");
        if (now != cur) fail("divergence after " + g_log.back() + files_diff(now, cur));
      }
    }
    const uint64_t k = rng() % 120;
    r.nand->cut_power_after(k, Tear(rng() % 3), rng());
    LOG("-- cut armed after %llu ops", (unsigned long long)k);
    commit_call = false;
    bool cut = false;
    for (int i = 0; i < 300; i++) {
      Status s = step_atomic(r, cur, committed, rng, c, &commit_call);
      if (s.is(Errc::kPowerCut)) { g_cuts++; cut = true; break; }
      if (getenv("CHECKEACH") && !r.nand->frozen()) {
        Files now = view_of(*r.vol, "check each");
        if (now != cur) fail("divergence after " + g_log.back() + files_diff(now, cur));
      }
      if (!s.is_ok() && !s.is(Errc::kFull) && !s.is(Errc::kTooLarge)) {
        if (r.nand->frozen()) { cut = true; break; }
        fail("op failed: " + s.to_string());
      }
    }
    if (cut && commit_call) g_cut_in_commit++;
    if (!cut) commit_call = false;
    r.nand->restore_power();
    int tries = 0;
    for (;;) {
      if (tries < 3 && rng() % 2) r.nand->cut_power_after(rng() % 6, Tear(rng() % 3), rng());
      st = mount_atomic(r, c);
      r.nand->restore_power();
      if (st.is_ok()) break;
      if (!st.is(Errc::kPowerCut) || ++tries > 10) fail("remount: " + st.to_string());
      LOG("-- mount cut");
    }
    const std::string when = "round " + std::to_string(round);
    LOG("-- remounted (%s)", when.c_str());
    if (Status cs = r.vol->check(); !cs.is_ok()) fail(when + ": check failed: " + cs.to_string());
    Files got = view_of(*r.vol, when);
    {
      Rig r2;
      r2.nand = r.nand->clone();
      Status s2 = mount_atomic(r2, c);
      if (!s2.is_ok()) fail("clone mount: " + s2.to_string());
      if (view_of(*r2.vol, when + " (second mount)") != got) fail(when + ": second mount differs from the first");
    }
    const bool is_committed = got == committed;
    const bool is_inflight = !is_committed && (commit_call || !cut) && got == cur;
    if (!is_committed && !is_inflight)
      fail(when + std::string(cut ? commit_call ? " (cut in a sync/close)" : " (cut outside a sync)" : " (no cut)") +
           ": the files are neither the last committed state nor the in-flight commit; vs committed:" +
           files_diff(got, committed) + (commit_call ? "\n  vs in-flight:" + files_diff(got, cur) : std::string()));
    committed = cur = got;
  }
  st = r.vol->close();
  if (st.is(Errc::kFull)) {
    if (!r.vol->rollback().is_ok()) fail("final rollback");
  } else if (!st.is_ok()) {
    fail("final close: " + st.to_string());
  }
  Files before = view_of(*r.vol, "final");
  if (!mount_atomic(r, c).is_ok()) fail("final mount");
  if (view_of(*r.vol, "final remount") != before) fail("final close+remount changed contents");
}

int main(int argc, char** argv) {
  uint64_t first = argc > 1 ? strtoull(argv[1], 0, 0) : 1;
  uint64_t count = argc > 2 ? strtoull(argv[2], 0, 0) : 100;
  int rounds = getenv("ROUNDS") ? atoi(getenv("ROUNDS")) : 6;
  const bool atomic = getenv("ATOMIC") && std::string(getenv("ATOMIC")) != "0";
  if (getenv("METHODS") && std::string(getenv("METHODS")) != "all") {
    std::string err, known;
    for (const MethodPreset& m : ftl_methods()) known += (known.empty() ? "" : ", ") + m.key;
    if (!parse_methods(getenv("METHODS"), ftl_methods(), known, &g_ftl_methods, &err)) {
      fprintf(stderr, "METHODS: %s; give 'all' or FTL device keys\n", err.c_str());
      return 2;
    }
    if (atomic) {
      fprintf(stderr, "METHODS=%s: FTL devices have no atomic groups; ATOMIC=1 cannot run them\n",
              getenv("METHODS"));
      return 2;
    }
    if (nvm_mode()) {
      fprintf(stderr, "METHODS=%s: FTL devices have no NVM; NVM=1 cannot run them\n",
              getenv("METHODS"));
      return 2;
    }
  }
  for (uint64_t seed = first; seed < first + count; seed++) {
    try {
      if (getenv("ATOMIC") && std::string(getenv("ATOMIC")) != "0") run_seed_atomic(seed, rounds);
      else run_seed(seed, rounds);
    } catch (Bug&) {
    }
  }
  fprintf(stderr, "done seeds %llu..%llu: bugs %d, cuts %d, kFull %d (partial %d), soft zero notes %d\n",
          (unsigned long long)first, (unsigned long long)(first + count - 1), g_bugs, g_cuts,
          g_kfull, g_kfull_partial, g_zero_soft);
  fprintf(stderr, "wear-levelling moves before remounts: %llu\n", (unsigned long long)g_wl_runs);
  fprintf(stderr, "seeds whose drawn configuration was refused (skipped): %d\n", g_skipped);
  // A campaign in which no seed could run checked nothing.
  if (count > 0 && uint64_t(g_skipped) == count) {
    fprintf(stderr, "every seed was skipped: nothing was checked\n");
    return 1;
  }
  if (getenv("ATOMIC") && std::string(getenv("ATOMIC")) != "0")
    fprintf(stderr, "atomic: %d commits, %d cuts inside a sync/close, %d rollbacks, %d syncs "
            "that found the chip full\n",
            g_commits_done, g_cut_in_commit, g_rollbacks, g_sync_full);
  return g_bugs ? 1 : 0;
}
