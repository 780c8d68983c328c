// ipl_crash_fuzz.cc — ipl-crash-fuzz: randomized power-cut campaign for the IPU/IPL engine
// (its ATOMIC=1 mode runs in the default tests over a sample of seeds; the rest is opt-in).
//
//   build/tests/ipl-crash-fuzz FIRST_SEED COUNT      (env: KEEP=1 go on after a failure,
//                                                     CYCLES=n crash cycles per seed, default 8)
// Per seed: a random geometry (512–8192-byte pages with nop = page/512, 2–16 pages per block,
// 8–40 blocks), IPU or IPL with a log region of 1 .. pages_per_block-1 pages (LOG_SECTORS=all:
// log sectors of 512, 256 or 128 bytes, nop = page/log_sector; else 512), logical_pages
// sometimes not a multiple of the data pages per block. NVM=1: always IPL, with its log areas
// in NVM ([IPL-PCRAM]) instead of a flash log region — 1 .. 4 sectors of 128 or 512 bytes per
// block, every page a data page; the cuts then hit NVM writes too (torn at 8-byte words); with
// ATOMIC=1 its commit records go to NVM. Then CYCLES times: random work (small
// changes with correct note_update ranges, overlapping runs, whole new pages, pages of zeros,
// trims, syncs, reads and peeks checked against the model), a power cut at a random flash
// operation with a random tear, restore, mount (twice: identical), check(), and the oracle:
// every lpn is its value at the last completed sync or a value written (or a trim) after it.
// The recovered values become the next cycle's baseline.
//
// ATOMIC=1: atomic groups (CommitMode::kGroup) instead, with the exact oracle. The seed draws
// the same way but IPU is replaced by IPL (IPU has no atomic groups); METHODS=all also draws
// PDL and OPU (a separate random stream). Work: random groups of writes (small changes, whole
// pages, zero pages), trims, reads and peeks checked against the open group's model, abort()
// (the model returns to the committed state) and sync(); a write's kFull changed nothing, a
// sync's kFull is answered by abort(). After the cut: mount(kGroup) twice, check(), and the
// whole store must equal the last committed state — or the in-flight one if the cut hit a
// sync (or an abort that the cut made a no-op: still the committed one). A sync with nothing
// pending must program nothing. OPS=1 prints the failing seed's operations, V=1 every one.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "flash/image/open_store.h"
#include "flash/device/emulated_nand.h"
#include "flash/store/page_store.h"
#include "flash/store/spare.h"
#include "flash/store/store_params.h"

using namespace pdl;
using Page = std::vector<uint8_t>;
using Value = std::optional<Page>;  // nullopt: unmapped

namespace {

struct Failure {
  std::string what;
};

[[noreturn]] void fail(const std::string& m) { throw Failure{m}; }

std::vector<Value> read_all(PageStore& s) {
  std::vector<Value> out(s.logical_pages());
  Page p(s.page_size());
  for (Lpn l = 0; l < s.logical_pages(); l++) {
    const Status st = s.read(l, p);
    if (st.is(Errc::kNotFound)) continue;
    if (!st.is_ok()) fail("read " + std::to_string(l) + ": " + st.to_string());
    out[l] = p;
  }
  return out;
}

// Random work until the chip's power fails (or `ops` operations without a cut).
// synced[l]: value at the last completed sync; later[l]: values written after it.
// A read (or peek) of lpn l checked against the model's value; a cut or an I/O error is
// returned, anything else wrong fails the seed.
Status read_checked(PageStore& s, Lpn l, const Value& want, bool peek, Page& got,
                    const char* model) {
  const Status st = peek ? s.peek(l, got) : s.read(l, got);
  if (st.is(Errc::kPowerCut) || st.is(Errc::kIoError)) return st;
  if (want) {
    if (!st.is_ok()) fail("read " + std::to_string(l) + ": " + st.to_string());
    if (got != *want) fail("read " + std::to_string(l) + " differs from " + model);
  } else if (!st.is(Errc::kNotFound)) {
    fail("read of unmapped " + std::to_string(l) + ": " + st.to_string());
  }
  return Status::ok();
}

// Change `p` (lpn l's page) in 1..6 runs, most of them short, some up to half a page; two
// times in three the runs are told to the store (note_update). Returns whether they were.
bool small_change(PageStore& s, Lpn l, std::mt19937_64& rng, Page& p) {
  const uint32_t ps = uint32_t(p.size());
  const int updates = 1 + int(rng() % 6);
  const bool note = rng() % 3 != 0;
  for (int u = 0; u < updates; u++) {
    const uint32_t len = 1 + uint32_t(rng() % (rng() % 5 == 0 ? ps / 2 : 48));
    const uint32_t off = uint32_t(rng() % (ps - len + 1));
    for (uint32_t k = 0; k < len; k++) p[off + k] = uint8_t(p[off + k] + 1 + rng() % 255);
    if (note) s.note_update(l, off, len);
  }
  return note;
}

Status work(PageStore& s, std::mt19937_64& rng, std::vector<Value>& cur,
            std::vector<Value>& synced, std::vector<std::vector<Value>>& later, int ops) {
  const uint32_t ps = s.page_size();
  const Lpn n = s.logical_pages();
  Page got(ps);
  for (int i = 0; i < ops; i++) {
    const Lpn l = Lpn(rng() % n);
    const unsigned r = unsigned(rng() % 100);
    if (r < 55) {
      Page p;
      if (cur[l] && rng() % 10 < 7) {
        p = *cur[l];
        small_change(s, l, rng, p);
      } else if (rng() % 4 == 0) {
        p.assign(ps, 0);
        if (rng() % 2) p[rng() % ps] = uint8_t(1 + rng() % 255);
      } else {
        p.resize(ps);
        for (auto& b : p) b = uint8_t(rng());
      }
      later[l].push_back(p);  // may be durable even if the write is cut
      PDL_TRY(s.write(l, p));
      cur[l] = p;
    } else if (r < 65) {
      later[l].emplace_back();  // a trim (in place: GCC 12 -O1 -fsanitize warns on a moved nullopt)
      PDL_TRY(s.trim(l));
      cur[l].reset();
    } else if (r < 72) {
      PDL_TRY(s.sync());
      synced = cur;
      for (auto& v : later) v.clear();
    } else {
      PDL_TRY(read_checked(s, l, cur[l], rng() % 2, got, "the model"));
    }
  }
  return Status::ok();
}

// Wear levelling from a stream of its own (so the other draws keep their meaning): off, a
// threshold of 1..4 erases (moves all the time), or the default.
uint32_t draw_wear_level(uint64_t seed) {
  std::mt19937_64 wl(seed ^ 0x3ea7u);
  const unsigned w = unsigned(wl() % 3);
  return w == 0 ? 0 : w == 1 ? 1 + uint32_t(wl() % 4) : StoreParams::kWearLevelDefault;
}

// IPL's log sector size with LOG_SECTORS=all, from a stream of its own (so the other draws keep
// their meaning): 512, 256 or 128 bytes. Without it 0 (512): every seed runs as before.
uint32_t draw_log_sector(uint64_t seed) {
  const char* e = std::getenv("LOG_SECTORS");
  if (!e || std::string(e) != "all") return 0;
  std::mt19937_64 ls(seed ^ 0x5ec7u);
  return 128u << (ls() % 3);
}

// NVM=1: an IPL store keeps its log areas in NVM ([IPL-PCRAM]) instead of a flash log region:
// log sectors of 128 or 512 bytes, 1 .. 4 per block, from a stream of its own.
bool nvm_mode() {
  const char* e = std::getenv("NVM");
  return e && std::string(e) != "0";
}

// Gives an IPL store the seed's log sector size and the chip the NOP it needs (NVM=1: the
// chip the NVM and the store its log areas there).
void apply_log_sector(uint64_t seed, Geometry* g, StoreParams* p) {
  if (nvm_mode() && p->method == Method::kIpu) p->method = Method::kIpl;  // (IPU has no log)
  if (p->method != Method::kIpl) return;
  if (nvm_mode()) {
    std::mt19937_64 nv(seed ^ 0x4e564du);
    p->log_sector = nv() % 2 ? 128 : 512;
    const uint32_t sectors = 1 + uint32_t(nv() % 4);
    g->nvm_bytes = 64 + (g->blocks - kSuperblockBlocks) * sectors * p->log_sector;
    p->nvm_bytes = g->nvm_bytes;
    p->log_region = 0;  // every page a data page; the areas divide the NVM
    return;
  }
  p->log_sector = draw_log_sector(seed);
  if (p->log_sector)
    g->partial_programs = std::max(g->partial_programs, g->page_data / p->log_sector);
}

// The chip of a seed, the first draws of its stream (in this order): page size, pages per
// block, blocks.
Geometry draw_geometry(std::mt19937_64& rng) {
  Geometry g;
  g.page_data = 512u << (rng() % 5);
  g.page_spare = std::max<uint32_t>(32, g.page_data / 32);
  g.pages_per_block = 2 + uint32_t(rng() % 15);
  g.blocks = 8 + uint32_t(rng() % 33);
  g.partial_programs = std::max<uint32_t>(4, g.page_data / 512);
  return g;
}

void run_seed(uint64_t seed, int cycles, uint64_t* cuts) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 11);
  Geometry g = draw_geometry(rng);
  StoreParams p;
  p.method = rng() % 3 == 0 ? Method::kIpu : Method::kIpl;
  if (p.method == Method::kIpl)
    p.log_region = g.page_data * (1 + uint32_t(rng() % (g.pages_per_block - 1)));
  const uint32_t dpb = g.pages_per_block - p.log_region / g.page_data;
  const uint32_t cap = (g.blocks - kSuperblockBlocks - 1) * dpb;
  p.logical_pages = rng() % 2 ? 0 : std::max<uint32_t>(1, cap - uint32_t(rng() % (dpb + 1)));
  // One block in reserve, the per-page engine's minimum (IPL's default of 3 keeps room for
  // atomic commit, which this mode does not use): seeds keep their meaning.
  p.gc_reserve_blocks = 1;
  p.wear_level = draw_wear_level(seed);
  apply_log_sector(seed, &g, &p);
  char cfg[240];
  std::snprintf(cfg, sizeof cfg,
                "page=%u ppb=%u blocks=%u method=%s log_region=%u log_sector=%u logical=%u "
                "wear_level=%u nvm=%u",
                g.page_data, g.pages_per_block, g.blocks, method_name(p.method), p.log_region,
                p.log_sector, p.logical_pages, p.wear_level, p.nvm_bytes);
  try {
    std::unique_ptr<EmulatedNand> nand;
    if (!EmulatedNand::create_ram(g, &nand).is_ok()) fail("create_ram");
    std::unique_ptr<PageStore> s;
    if (Status st = format_store(*nand, p, &s); !st.is_ok()) fail("format: " + st.to_string());
    const Lpn n = s->logical_pages();
    std::vector<Value> cur(n), synced(n);
    std::vector<std::vector<Value>> later(n);
    for (int c = 0; c < cycles; c++) {
      const Tear tear = Tear(rng() % 3);
      nand->cut_power_after(rng() % 400, tear, rng());
      Status st = work(*s, rng, cur, synced, later, 100000);
      if (!st.is(Errc::kPowerCut))
        fail("cycle " + std::to_string(c) + ": expected a power cut, got " + st.to_string());
      (*cuts)++;
      s.reset();
      nand->restore_power();
      std::unique_ptr<PageStore> a, b;
      const uint64_t before = nand->mutating_ops();
      if (st = mount_store(*nand, &a); !st.is_ok()) fail("mount: " + st.to_string());
      if (nand->mutating_ops() != before) fail("mount wrote to the chip");
      if (st = a->check(); !st.is_ok()) fail("check after mount: " + st.to_string());
      const auto got = read_all(*a);
      if (st = mount_store(*nand, &b); !st.is_ok()) fail("second mount: " + st.to_string());
      if (read_all(*b) != got) fail("two mounts disagree");
      for (Lpn l = 0; l < n; l++) {
        bool ok = got[l] == synced[l];
        for (const Value& v : later[l]) ok = ok || got[l] == v;
        if (!ok)
          fail("cycle " + std::to_string(c) + " (tear " + std::to_string(int(tear)) + "): lpn " +
               std::to_string(l) + " is neither its synced value nor a later one (" +
               std::to_string(later[l].size()) + " later writes)");
      }
      cur = got;
      synced = got;
      for (auto& v : later) v.clear();
      a->set_wear_level(p.wear_level);  // (a run-time choice, not on flash)
      s = std::move(a);
    }
  } catch (const Failure& f) {
    std::printf("BUG seed=%llu %s\n  %s\n", (unsigned long long)seed, cfg, f.what.c_str());
    std::fflush(stdout);
    if (!std::getenv("KEEP")) std::exit(1);
  }
}


// ---------------------------------------------------------------- ATOMIC=1
bool g_verbose = std::getenv("V") != nullptr;
std::vector<std::string> g_ops;  // the current seed's operations (OPS=1 prints them on failure)
uint64_t g_kfull_writes = 0, g_kfull_syncs = 0, g_aborts = 0, g_commits = 0, g_cut_in_sync = 0;
uint64_t g_groups_cut = 0;
std::map<std::string, uint64_t> g_full_kinds;  // kFull messages (their start), counted
uint64_t g_merges = 0, g_purged = 0, g_void = 0;
void note_full(const Status& st) {
  std::string m(st.message());
  for (char& ch : m) if (ch >= '0' && ch <= '9') ch = 'N';
  g_full_kinds[m.substr(0, 70)]++;
}

void oplog(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void oplog(const char* fmt, ...) {
  char b[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  g_ops.push_back(b);
  if (g_verbose) std::fprintf(stderr, "op: %s\n", b);
}

// Where the cut hit (the oracle's choices).
enum class CutIn { kNone, kOther, kSync };

// Random groups until the power fails (or `ops` operations). committed: the state of the last
// sync that returned ok; cur: the open group's view.
Status work_atomic(PageStore& s, EmulatedNand& nand, std::mt19937_64& rng, std::vector<Value>& cur,
                   std::vector<Value>& committed, int ops, CutIn* cut_in,
                   int arm_at_sync = -1, uint32_t span = 4) {
  const uint32_t ps = s.page_size();
  const Lpn n = s.logical_pages();
  Page got(ps);
  *cut_in = CutIn::kOther;
  // A group's size: sometimes a few ops, sometimes many (a group rewriting whole blocks).
  int sync_pct = int(2 + rng() % 12);
  int full_streak = 0;  // kFull answers in a row, aborts in between (no write got through)
  std::string last_full;
  for (int i = 0; i < ops; i++) {
    if (full_streak >= 400) {  // nothing gets through, not even right after an abort
      std::string blocks;
      for (uint32_t b = kSuperblockBlocks; b < nand.geometry().blocks; b++) {
        const BlockInfo bi = s.block_info(b);
        blocks += std::string(" ") + std::to_string(b) + ":" + block_state_name(bi.state) + "/" +
                  std::to_string(bi.valid_pages);
      }
      fail("wedged: " + std::to_string(full_streak) +
           " kFull answers in a row, aborts included (last: " + last_full + "); free blocks " +
           std::to_string(s.free_blocks()) + ", mapped lpns " +
           std::to_string(std::count_if(committed.begin(), committed.end(),
                                        [](const Value& v) { return v.has_value(); })) +
           "/" + std::to_string(n) + "; blocks (state/valid):" + blocks);
    }
    // Groups sometimes focus on one logical block region (rewrites of one erase block).
    Lpn l = Lpn(rng() % n);
    if (rng() % 3 == 0) l = Lpn((l / span) * span + rng() % span) % n;
    const unsigned r = unsigned(rng() % 100);
    if (r < 55) {
      Page p;
      const char* kind;
      if (cur[l] && rng() % 10 < 7) {
        p = *cur[l];
        const bool note = small_change(s, l, rng, p);
        kind = note ? "small(noted)" : "small";
      } else if (rng() % 4 == 0) {
        p.assign(ps, 0);
        if (rng() % 2) p[rng() % ps] = uint8_t(1 + rng() % 255);
        kind = "zero";
      } else {
        p.resize(ps);
        for (auto& b : p) b = uint8_t(rng());
        kind = "whole";
      }
      const Status st = s.write(l, p);
      oplog("write %u %s -> %s", l, kind, st.to_string().c_str());
      if (st.is(Errc::kFull)) {  // changed nothing
        g_kfull_writes++;
        full_streak++;
        last_full = st.to_string();
        note_full(st);
        const Status rs = s.read(l, got);
        if (rs.is(Errc::kPowerCut) || rs.is(Errc::kIoError)) return rs;
        if (cur[l] ? !rs.is_ok() || got != *cur[l] : !rs.is(Errc::kNotFound))
          fail("a write that returned kFull changed lpn " + std::to_string(l) + " (now " +
               (rs.is(Errc::kNotFound) ? "unmapped" : got == p ? "the new value" : "another value") + ")");
        continue;
      }
      PDL_TRY(st);
      full_streak = 0;
      cur[l] = p;
    } else if (r < 63) {
      const Status st = s.trim(l);
      oplog("trim %u -> %s", l, st.to_string().c_str());
      if (st.is(Errc::kFull)) {  // changed nothing (as a write's kFull)
        g_kfull_writes++;
        note_full(st);
        const Status rs = s.read(l, got);
        if (rs.is(Errc::kPowerCut) || rs.is(Errc::kIoError)) return rs;
        if (cur[l] ? !rs.is_ok() || got != *cur[l] : !rs.is(Errc::kNotFound)) {
          // LAX_TRIM=1: take the store's word (what a trim's kFull left) and go on, to see
          // what a commit then makes durable.
          if (!std::getenv("LAX_TRIM"))
            fail("a trim that returned kFull changed lpn " + std::to_string(l) + " (now " +
                 (rs.is(Errc::kNotFound) ? "unmapped" : "mapped") + ")");
          oplog("   (the trim's kFull changed lpn %u: now %s)", l,
                rs.is(Errc::kNotFound) ? "unmapped" : "mapped");
          if (rs.is(Errc::kNotFound)) cur[l].reset();
          else if (rs.is_ok()) cur[l] = got;
        }
        continue;
      }
      PDL_TRY(st);
      cur[l].reset();
    } else if (r < 63 + unsigned(sync_pct)) {
      const bool dirty = s.dirty();
      const uint64_t before = nand.mutating_ops();
      if (arm_at_sync >= 0 && dirty && arm_at_sync-- == 0) {  // a cut inside this commit
        const uint64_t k = rng() % 6;
        nand.cut_power_after(k, Tear(rng() % 3), rng());
        oplog("-- cut re-armed after %llu ops, inside the next sync", (unsigned long long)k);
      }
      *cut_in = CutIn::kSync;
      const Status st = s.sync();
      oplog("sync (dirty=%d) -> %s", int(dirty), st.to_string().c_str());
      if (st.is(Errc::kPowerCut)) return st;
      *cut_in = CutIn::kOther;
      if (st.is(Errc::kFull)) {  // commit refused: the group stays open; abort it
        g_kfull_syncs++;
        note_full(st);
        if (!s.dirty()) fail("sync returned kFull but the group is no longer open");
        const Status as = s.abort();
        oplog("abort (after a refused commit) -> %s", as.to_string().c_str());
        PDL_TRY(as);
        g_aborts++;
        cur = committed;
        continue;
      }
      PDL_TRY(st);
      if (!dirty && nand.mutating_ops() != before)
        fail("a sync with nothing pending programmed or erased " +
             std::to_string(nand.mutating_ops() - before) + " time(s)");
      if (s.dirty()) fail("dirty() after a sync");
      g_commits++;
      committed = cur;
      sync_pct = int(2 + rng() % 12);
    } else if (r < 66 + unsigned(sync_pct)) {
      const Status st = s.abort();
      oplog("abort -> %s", st.to_string().c_str());
      PDL_TRY(st);
      g_aborts++;
      if (s.dirty()) fail("dirty() after an abort");
      cur = committed;
    } else if (r < 67 + unsigned(sync_pct)) {  // the whole state, now
      for (Lpn k = 0; k < n; k++) {
        const Status st = s.read(k, got);
        if (st.is(Errc::kPowerCut) || st.is(Errc::kIoError)) return st;
        if (cur[k] ? !st.is_ok() || got != *cur[k] : !st.is(Errc::kNotFound))
          fail("full read: lpn " + std::to_string(k) + " differs from the open group's model");
      }
      oplog("read all: ok");
    } else {
      PDL_TRY(read_checked(s, l, cur[l], rng() % 2, got, "the open group's model"));
    }
  }
  *cut_in = CutIn::kNone;
  return Status::ok();
}


// TRACE=1: every program and erase the store issues, in the op log (the Nand the stores see
// forwards everything to the emulated chip; the cut stays the chip's).
class TraceNand : public Nand {
 public:
  explicit TraceNand(EmulatedNand& inner) : in_(inner) {}
  const Geometry& geometry() const override { return in_.geometry(); }
  Status read(Ppa ppa, std::span<uint8_t> data, std::span<uint8_t> spare) override {
    return in_.read(ppa, data, spare);
  }
  Status program(Ppa ppa, std::span<const uint8_t> data, std::span<const uint8_t> spare,
                 uint32_t data_off, uint32_t spare_off) override {
    const Status st = in_.program(ppa, data, spare, data_off, spare_off);
    if (on_) {
      const uint32_t ppb = geometry().pages_per_block;
      std::string what;
      SpareHeader h;
      if (spare_off == 0 && spare.size() >= kSpareBytesUsed &&
          spare_decode(spare, &h) == SpareState::kValid) {
        char c[128];
        std::snprintf(c, sizeof c, "%s l%u s%llu%s%s a%u", h.type == PageType::kBase ? "B"
                      : h.type == PageType::kDifferential ? "D" : h.type == PageType::kIplData
                      ? "I" : h.type == PageType::kIplEmpty ? "E" : "?", h.raw_word4(),
                      (unsigned long long)h.seq, h.commit ? " C" : "", h.group ? " G" : "", h.aux);
        what = c;
      } else if (data.empty() && spare_off == kSpareObsoleteAt) {
        what = "obsolete mark";
      } else {
        what = "partial data@" + std::to_string(data_off) + "+" + std::to_string(data.size()) +
               " spare@" + std::to_string(spare_off) + "+" + std::to_string(spare.size());
      }
      oplog("   nand: program %u.%u %s -> %s", ppa / ppb, ppa % ppb, what.c_str(),
            st.to_string().c_str());
    }
    return st;
  }
  Status erase(uint32_t block) override {
    const Status st = in_.erase(block);
    if (on_) oplog("   nand: erase %u -> %s", block, st.to_string().c_str());
    return st;
  }
  Status flush() override { return in_.flush(); }
  Status nvm_read(uint64_t off, std::span<uint8_t> out) override { return in_.nvm_read(off, out); }
  Status nvm_write(uint64_t off, std::span<const uint8_t> in) override {
    const Status st = in_.nvm_write(off, in);
    if (on_) oplog("   nand: nvm write %llu+%zu -> %s", (unsigned long long)off, in.size(),
                   st.to_string().c_str());
    return st;
  }
  const NandCounters& counters() const override { return in_.counters(); }
  void reset_counters() override { in_.reset_counters(); }
  void set_counting(bool on) override { in_.set_counting(on); }
  uint32_t erase_count(uint32_t block) const override { return in_.erase_count(block); }
  Status mark_bad(uint32_t block) override { return in_.mark_bad(block); }
  bool is_bad(uint32_t block) override { return in_.is_bad(block); }
  uint32_t ecc_strength() const override { return in_.ecc_strength(); }
  uint32_t last_read_flips() const override { return in_.last_read_flips(); }

 private:
  EmulatedNand& in_;
  bool on_ = std::getenv("TRACE") != nullptr;
};

// DUMP=1: the chip's pages (spare headers) as the mount will see them.
void dump_chip(EmulatedNand& nand) {
  const Geometry& g = nand.geometry();
  auto copy = nand.clone();
  std::vector<uint8_t> data(g.page_data), spare(g.page_spare);
  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++) {
    std::string line = "  block " + std::to_string(b) + ":";
    for (uint32_t p = 0; p < g.pages_per_block; p++) {
      const Status st = copy->read(b * g.pages_per_block + p, data, spare);
      SpareHeader h;
      const SpareState ss = st.is_ok() ? spare_decode(spare, &h) : SpareState::kCorrupt;
      char c[96];
      if (ss == SpareState::kErased) std::snprintf(c, sizeof c, " [-]");
      else if (ss == SpareState::kCorrupt) std::snprintf(c, sizeof c, " [torn]");
      else
        std::snprintf(c, sizeof c, " [%s l%u s%llu%s%s%s a%u]",
                      h.type == PageType::kBase ? "B" : h.type == PageType::kDifferential ? "D"
                      : h.type == PageType::kIplData ? "I" : h.type == PageType::kIplEmpty ? "E"
                      : "?", h.raw_word4(), (unsigned long long)h.seq, h.commit ? " C" : "",
                      h.group ? " G" : "", h.obsolete ? " X" : "", h.aux);
      line += c;
    }
    oplog("%s", line.c_str());
  }
}

std::string diff_summary(const std::vector<Value>& got, const std::vector<Value>& want,
                         const std::vector<Value>* also) {
  std::string o;
  int shown = 0;
  for (size_t l = 0; l < got.size() && shown < 8; l++) {
    if (got[l] == want[l]) continue;
    shown++;
    o += "\n    lpn " + std::to_string(l) + ": got " +
         (got[l] ? "data" : std::string("unmapped")) + ", committed " +
         (want[l] ? "data" : std::string("unmapped"));
    if (also) o += std::string(", in-flight ") + ((*also)[l] ? "data" : "unmapped") +
                   ((*also)[l] == got[l] ? " (= got)" : "");
  }
  return o;
}

void run_seed_atomic(uint64_t seed, int cycles, uint64_t* cuts) {
  g_ops.clear();
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 11);
  Geometry g = draw_geometry(rng);
  StoreParams p;
  (void)rng();  // the per-page mode's IPU/IPL draw: always IPL here
  p.method = Method::kIpl;
  p.log_region = g.page_data * (1 + uint32_t(rng() % (g.pages_per_block - 1)));
  const char* methods = std::getenv("METHODS");
  std::mt19937_64 more(seed ^ 0xa70u);  // a separate stream: METHODS=all keeps IPL's draws
  if (methods && std::string(methods) == "all" && more() % 2) {
    p.method = more() % 3 == 0 ? Method::kOpu : Method::kPdl;
    p.log_region = 0;
    p.obsolete = more() % 2 ? ObsoleteMode::kSpare : ObsoleteMode::kMemory;
    p.max_differential = more() % 2 ? 0 : std::max<uint32_t>(64, g.page_data / 8);
  }
  if (p.method == Method::kIpl) {
    const uint32_t dpb = g.pages_per_block - p.log_region / g.page_data;
    // IPL keeps 3 blocks in reserve (merge target, commit log, one shadow); sometimes more.
    const uint32_t spare_blocks = 3 + uint32_t(rng() % 3 == 0 ? rng() % 3 : 0);
    if (g.blocks < kSuperblockBlocks + spare_blocks + 1) g.blocks = kSuperblockBlocks + spare_blocks + 1;
    const uint32_t cap = (g.blocks - kSuperblockBlocks - spare_blocks) * dpb;
    p.logical_pages = rng() % 2 ? 0 : std::max<uint32_t>(1, cap - uint32_t(rng() % (dpb + 1)));
    if (spare_blocks > 3 && p.logical_pages == 0) p.logical_pages = cap;
  } else {
    const uint32_t usable = (g.blocks - kSuperblockBlocks - 4) * g.pages_per_block;
    p.logical_pages = more() % 3 == 0 ? 0 : std::max<uint32_t>(1, usable * uint32_t(4 + more() % 5) / 8);
  }
  p.wear_level = draw_wear_level(seed);
  apply_log_sector(seed, &g, &p);
  char cfg[280];
  std::snprintf(cfg, sizeof cfg,
                "ATOMIC page=%u ppb=%u blocks=%u method=%s log_region=%u log_sector=%u "
                "logical=%u obsolete=%s max_diff=%u wear_level=%u nvm=%u",
                g.page_data, g.pages_per_block, g.blocks, method_name(p.method), p.log_region,
                p.log_sector, p.logical_pages, obsolete_name(p.obsolete), p.max_differential,
                p.wear_level, p.nvm_bytes);
  if (g_verbose) std::fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, cfg);
  try {
    std::unique_ptr<EmulatedNand> nand;
    if (!EmulatedNand::create_ram(g, &nand).is_ok()) fail("create_ram");
    TraceNand tnand(*nand);
    std::unique_ptr<PageStore> s;
    if (Status st = format_store(tnand, p, &s, CommitMode::kGroup); !st.is_ok())
      fail("format: " + st.to_string());
    if (!s->atomic()) fail("format(kGroup) gave a store without atomic groups");
    const Lpn n = s->logical_pages();
    const uint32_t span = p.method == Method::kIpl
                              ? g.pages_per_block - p.log_region / g.page_data
                              : g.pages_per_block;
    std::vector<Value> cur(n), committed(n);
    for (int c = 0; c < cycles; c++) {
      const Tear tear = Tear(rng() % 3);
      const uint64_t at = rng() % 4 == 0 ? rng() % 12 : rng() % 400;
      // A third of the cycles aim at a commit: the cut moves to a few operations into the
      // Nth sync of a dirty group (if the first cut has not come yet).
      const int arm_at_sync = rng() % 3 == 0 ? int(rng() % 6) : -1;
      nand->cut_power_after(arm_at_sync >= 0 ? at + 100000 : at, tear, rng());
      oplog("-- cycle %d: cut armed after %llu ops, tear %d%s", c, (unsigned long long)at,
            int(tear), arm_at_sync >= 0 ? " (moved into a sync)" : "");
      CutIn cut_in;
      const bool was_dirty = s->dirty();
      Status st =
          work_atomic(*s, *nand, rng, cur, committed, 100000, &cut_in, arm_at_sync, span);
      if (!st.is(Errc::kPowerCut))
        fail("cycle " + std::to_string(c) + ": expected a power cut, got " + st.to_string() +
             " (kFull writes " + std::to_string(g_kfull_writes) + ")");
      (void)was_dirty;
      (*cuts)++;
      if (cut_in == CutIn::kSync) g_cut_in_sync++;
      if (s->dirty()) g_groups_cut++;
      g_merges += s->stats().merges;
      g_purged += s->stats().purged_blocks;
      g_void += s->stats().void_pages;
      s.reset();
      nand->restore_power();
      if (std::getenv("DUMP")) dump_chip(*nand);
      std::unique_ptr<PageStore> a, b;
      MountReport rep;
      const uint64_t before = nand->mutating_ops();
      if (st = mount_store(tnand, &a, &rep, CommitMode::kGroup); !st.is_ok())
        fail("mount: " + st.to_string());
      if (nand->mutating_ops() != before) fail("mount wrote to the chip");
      if (!a->atomic()) fail("mount(kGroup) gave a store without atomic groups");
      if (st = a->check(); !st.is_ok()) fail("check after mount: " + st.to_string());
      if (a->dirty()) fail("dirty() after mount");
      const auto got = read_all(*a);
      if (st = mount_store(tnand, &b, nullptr, CommitMode::kGroup); !st.is_ok())
        fail("second mount: " + st.to_string());
      if (read_all(*b) != got) fail("two mounts disagree");
      b.reset();
      const bool is_committed = got == committed;
      const bool is_inflight = cut_in == CutIn::kSync && got == cur;
      oplog("-- mounted: %s (cut in %s; void pages %llu, committed_seq %llu)",
            is_committed ? "the committed state" : is_inflight ? "the in-flight commit" : "A MIX",
            cut_in == CutIn::kSync ? "sync" : "other", (unsigned long long)rep.void_pages,
            (unsigned long long)rep.committed_seq);
      if (!is_committed && !is_inflight)
        fail("cycle " + std::to_string(c) + " (tear " + std::to_string(int(tear)) + ", cut in " +
             (cut_in == CutIn::kSync ? "sync" : "write/trim/abort/read") +
             "): the mounted state is neither the last committed one nor the in-flight commit" +
             diff_summary(got, committed, cut_in == CutIn::kSync ? &cur : nullptr));
      cur = got;
      committed = got;
      a->set_wear_level(p.wear_level);
      s = std::move(a);
    }
    // The end: commit one more group without a cut, then a remount gives it exactly.
    CutIn cut_in;
    Status st = work_atomic(*s, *nand, rng, cur, committed, int(rng() % 60), &cut_in, -1, span);
    if (!st.is_ok()) fail("final work: " + st.to_string());
    if (st = s->sync(); st.is(Errc::kFull)) {
      if (st = s->abort(); !st.is_ok()) fail("final abort: " + st.to_string());
      cur = committed;
    } else if (!st.is_ok()) {
      fail("final sync: " + st.to_string());
    }
    committed = cur;
    s.reset();
    if (st = mount_store(tnand, &s, nullptr, CommitMode::kGroup); !st.is_ok())
      fail("final mount: " + st.to_string());
    if (st = s->check(); !st.is_ok()) fail("final check: " + st.to_string());
    if (read_all(*s) != committed) fail("final remount differs from the last commit");
  } catch (const Failure& f) {
    std::printf("BUG seed=%llu %s\n  %s\n", (unsigned long long)seed, cfg, f.what.c_str());
    if (std::getenv("OPS"))
      for (const std::string& o : g_ops) std::printf("  op: %s\n", o.c_str());
    std::fflush(stdout);
    if (!std::getenv("KEEP")) std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: ipl-crash-fuzz FIRST_SEED COUNT\n");
    return 2;
  }
  const uint64_t first = std::strtoull(argv[1], nullptr, 10);
  const uint64_t count = std::strtoull(argv[2], nullptr, 10);
  const int cycles = std::getenv("CYCLES") ? std::atoi(std::getenv("CYCLES")) : 8;
  uint64_t cuts = 0;
  const bool atomic = std::getenv("ATOMIC") && std::string(std::getenv("ATOMIC")) != "0";
  for (uint64_t s = first; s < first + count; s++)
    atomic ? run_seed_atomic(s, cycles, &cuts) : run_seed(s, cycles, &cuts);
  std::printf("done seeds %llu..%llu: %llu power cuts\n", (unsigned long long)first,
              (unsigned long long)(first + count - 1), (unsigned long long)cuts);
  if (atomic)
    std::printf("atomic: %llu commits, %llu aborts, %llu cuts inside a sync, %llu cuts with a "
                "group open, kFull: %llu writes/trims, %llu syncs\n",
                (unsigned long long)g_commits, (unsigned long long)g_aborts,
                (unsigned long long)g_cut_in_sync, (unsigned long long)g_groups_cut,
                (unsigned long long)g_kfull_writes, (unsigned long long)g_kfull_syncs);
  if (atomic) {
    std::printf("store stats (summed over the stores cut): merges %llu, purged blocks %llu, "
                "void pages %llu\n", (unsigned long long)g_merges,
                (unsigned long long)g_purged, (unsigned long long)g_void);
    for (const auto& [m, k] : g_full_kinds)
      std::printf("  kFull x%llu: %s\n", (unsigned long long)k, m.c_str());
  }
  return 0;
}
