// exp_mount.cc — pdl-bench --exp mount: what mounting costs by chip size (issue 23's figures).
//
// For each method (--methods; PDL(256B) by default) and chip size (--mount-sizes) an image file
// in the work directory (sparse: erased pages are holes) is formatted with a checkpoint area,
// half of its logical pages written through the PageStore (random contents), a quarter as many
// updates (read, change %Changed of the page, write: differentials), in atomic groups of
// kSyncEvery writes (the commit mode images run; an FTL device, which has none, syncs every
// kFtlSyncEvery writes, as SQLite's transactions on it do), and closed cleanly
// (write_checkpoint, as Image::close does).
// Then, each mount in a fresh process (mount_probe.h: its RSS is the mount's alone):
//   clean      the image as closed;
//   power cut  the image reopened (mounted), a seeded random number of further updates with a
//              sync as in the fill, then the emulator's power cut after a random
//              number of flash operations, the process writing on until a write or sync
//              fails; no checkpoint is written — what the chip holds is what a cut leaves.
// --mount-fill 0: an empty chip, formatted, checkpointed and mounted (no power-cut run).
// Chips up to --mount-scan-max are measured again formatted without a checkpoint area (the
// before-state: every mount scans every page's spare area, [PDL] Fig. 7).
// Every mount is checked page by page against the acknowledged values (mount_expect.h); a
// mount that loses data fails the run. Simulated time and pages read are machine-independent;
// wall time and RSS are this machine's (printed with a note saying which machine).
// The bench measures whatever mount_store does: it makes no assumption about how.
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <thread>

#include "bench/experiments.h"
#include "bench/mount_expect.h"
#include "bench/mount_probe.h"
#include "bench/wall_clock.h"
#include "flash/common/crc32c.h"
#include "flash/common/json.h"
#include "flash/device/emulated_nand.h"
#include "flash/image/image_params.h"
#include "flash/image/open_store.h"

namespace pdl::bench {
namespace {

constexpr uint32_t kSyncEvery = 1024;  // a sync (one atomic commit) after this many writes
// An FTL device (no atomic groups) syncs after this many: a few SQLite transactions' pages. (At
// 1,024 random writes a sync, BAST and FAST merge so many blocks between two syncs that the
// periodic checkpoint's budget runs out — checkpoint_view.h — and every power cut scans.)
constexpr uint32_t kFtlSyncEvery = 16;
constexpr double kGiB = double(1ull << 30);

std::string size_name(uint64_t bytes) {
  char buf[32];
  if (bytes >= (1ull << 30))
    std::snprintf(buf, sizeof buf, "%g GiB", double(bytes) / kGiB);
  else
    std::snprintf(buf, sizeof buf, "%g MiB", double(bytes) / double(1 << 20));
  return buf;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(colon + 2);
    }
  return "unknown CPU";
}

// The scratch directory the images go into: --work-dir, or a new one in $TMPDIR (removed by the
// destructor, with whatever is left in it).
class WorkDir {
 public:
  Status make(const std::string& given) {
    if (!given.empty()) {
      path_ = given;
      return Status::ok();
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/pdl-mount-XXXXXX";
    if (!mkdtemp(tmpl.data()))
      return Status::error(Errc::kIoError, "cannot make a scratch directory " + tmpl + ": " +
                                               std::strerror(errno));
    path_ = tmpl;
    owned_ = true;
    return Status::ok();
  }
  ~WorkDir() {
    if (owned_) {
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool owned_ = false;
};

// The files of one chip: removed when measured (or on the way out after an error).
struct ChipFiles {
  std::string image, expect, probe_out;
  ~ChipFiles() {
    for (const std::string* f : {&image, &expect, &probe_out}) std::remove(f->c_str());
  }
};

struct Variant {
  const MethodPreset* method;
  uint64_t bytes;
  bool checkpoint;
  ObsoleteMode mode;
};

// Atomic groups where the method has them (images run them), else page by page.
CommitMode commit_of(const MethodPreset& m) {
  return has_atomic_commit(m.method) ? CommitMode::kGroup : CommitMode::kPerPage;
}
uint32_t sync_every(const MethodPreset& m) {
  return is_ftl_device(m.method) ? kFtlSyncEvery : kSyncEvery;
}

// Fill: --mount-fill % (half) of the logical pages written, a quarter as many updates, a sync
// (a commit: the store runs atomic groups, as images do) every `every` writes and at the end.
// *expect gets every page's value.
Status fill(PageStore& store, const Options& o, uint32_t every, std::mt19937_64& rng,
            MountExpect* expect, uint64_t* updates) {
  const uint32_t written =
      uint32_t(double(store.logical_pages()) * o.mount_fill_pct / 100.0);
  expect->logical_pages = store.logical_pages();
  expect->acked.assign(written, 0);
  std::vector<uint8_t> page(store.page_size());
  for (Lpn l = 0; l < written; l++) {
    random_fill(page, rng);
    expect->acked[l] = crc32c(page.data(), page.size());
    PDL_TRY(store.write(l, page));
    if ((l + 1) % every == 0) PDL_TRY(store.sync());
  }
  *updates = written / 4;
  if (written == 0) return store.sync();
  PageChanger changer(page.size(), o.changed, o.change_run);
  std::uniform_int_distribution<uint32_t> pick(0, written - 1);
  for (uint64_t i = 0; i < *updates; i++) {
    const Lpn l = pick(rng);
    PDL_TRY(store.read(l, page));
    changer.change(page, rng);
    expect->acked[l] = crc32c(page.data(), page.size());
    PDL_TRY(store.write(l, page));
    if ((i + 1) % every == 0) PDL_TRY(store.sync());
  }
  return store.sync();
}

// The power-cut phase on a mounted store: `n` updates with a sync every `every`, then a
// power cut armed after 1..64 more flash operations (a random tear) and updates until it hits.
// *expect: acknowledged values up to the last sync that returned ok, the later writes as
// alternatives. *cut_writes: the writes of the phase, the one the cut stopped included.
Status updates_until_cut(PageStore& store, EmulatedNand& nand, const Options& o,
                         uint32_t every, std::mt19937_64& rng, uint64_t n, MountExpect* expect,
                         uint64_t* cut_writes) {
  const uint32_t written = uint32_t(expect->acked.size());
  std::vector<uint8_t> page(store.page_size());
  PageChanger changer(page.size(), o.changed, o.change_run);
  std::uniform_int_distribution<uint32_t> pick(0, written - 1);
  *cut_writes = 0;
  bool armed = false;
  // A PDL write programs a page only every few writes (the differential write buffer): allow
  // plenty of writes for 64 operations to happen.
  const uint64_t limit = n + 1000000;
  for (uint64_t i = 0; i < limit; i++) {
    if (i == n) {
      const Tear tears[] = {Tear::kNone, Tear::kPrefix, Tear::kRandomBits};
      nand.cut_power_after(std::uniform_int_distribution<uint64_t>(1, 64)(rng), tears[rng() % 3],
                           rng());
      armed = true;
    }
    const Lpn l = pick(rng);
    Status st = store.read(l, page);
    if (st.is_ok()) {
      changer.change(page, rng);
      expect->written(l, crc32c(page.data(), page.size()));
      ++*cut_writes;
      st = store.write(l, page);
    }
    if (st.is_ok() && (i + 1) % every == 0) {
      st = store.sync();
      if (st.is_ok()) expect->synced();
    }
    if (!st.is_ok()) {
      if (armed && nand.frozen()) return Status::ok();
      return st;
    }
  }
  return Status::error(Errc::kIoError,
                       "the power cut armed after 1..64 flash operations never happened in a "
                       "million writes");
}

void put_probe(JsonObj& j, const ProbeResult& r) {
  for (const char* k : {"pages_read", "page_reads", "spare_reads", "programs", "erases",
                        "pages_scanned", "checkpoint_pages", "torn_pages", "live_lpns",
                        "table_bytes", "verify_sample", "vmhwm_bytes", "vmrss_bytes", "rss_anon_bytes",
                        "rss_file_bytes", "rss_before_bytes", "sim_us", "chip_sim_us",
                        "verified_pages"})
    j.u(k, std::strtoull(r.at(k).c_str(), nullptr, 10));
  j.n("wall_s", std::strtod(r.at("wall_s").c_str(), nullptr));
  j.n("verify_wall_s", std::strtod(r.at("verify_wall_s").c_str(), nullptr));
  j.b("from_checkpoint", r.at("from_checkpoint") == "1");
  j.s("scan_reason", r.at("scan_reason") == "-" ? "" : r.at("scan_reason"));
}

struct Row {
  std::string method, chip, variant, state, reason;
  uint64_t pages_read = 0, hwm = 0, start = 0, table = 0;
  double sim_s = 0, wall_s = 0, gib = 0;
  bool from_cp = false;
};

Status probe_row(const Variant& v, const ChipFiles& f, const char* state, const Options& o,
                 const MountExpect& expect, JsonObj base, std::vector<std::string>* json,
                 std::vector<Row>* rows) {
  if (o.mount_tamper) {  // the test hook: one expected value no mount can give
    MountExpect t = expect;
    t.acked[0] ^= 1;
    t.maybe.erase(std::remove_if(t.maybe.begin(), t.maybe.end(),
                                 [](const auto& p) { return p.first == 0; }),
                  t.maybe.end());
    PDL_TRY(t.save(f.expect));
  } else {
    PDL_TRY(expect.save(f.expect));
  }
  std::fprintf(stderr, "mount %s %s: probe ...\n", size_name(v.bytes).c_str(), state);
  ProbeResult r;
  PDL_TRY(run_mount_probe(f.image, f.expect, f.probe_out, o.mount_verify, &r));
  Row row;
  row.chip = size_name(v.bytes) + (expect.acked.empty() ? " (empty)" : "");
  row.method = v.method->label;
  row.variant = std::string(v.checkpoint ? "yes" : "no") +
                (v.mode == ObsoleteMode::kSpare
                     ? ""
                     : std::string(", obsolete ") + obsolete_name(v.mode));
  row.state = state;
  row.gib = double(v.bytes) / kGiB;
  row.pages_read = std::strtoull(r.at("pages_read").c_str(), nullptr, 10);
  row.sim_s = double(std::strtoull(r.at("sim_us").c_str(), nullptr, 10)) / 1e6;
  row.wall_s = std::strtod(r.at("wall_s").c_str(), nullptr);
  row.hwm = std::strtoull(r.at("vmhwm_bytes").c_str(), nullptr, 10);
  row.start = std::strtoull(r.at("rss_before_bytes").c_str(), nullptr, 10);
  row.table = std::strtoull(r.at("table_bytes").c_str(), nullptr, 10);
  row.from_cp = r.at("from_checkpoint") == "1";
  row.reason = r.at("scan_reason");
  rows->push_back(row);
  base.s("state", state);
  put_probe(base, r);
  base.n("sim_s", row.sim_s)
      .n("rss_mib_per_gib",
         double(row.hwm - std::min(row.hwm, row.start)) / double(1 << 20) / row.gib)
      .n("table_mib_per_gib", double(row.table) / double(1 << 20) / row.gib);
  json->push_back(base.str());
  return Status::ok();
}

Status run_variant(const Variant& v, const Options& o, const std::string& dir,
                   std::vector<std::string>* json, std::vector<Row>* rows) {
  const auto t_all = Clock::now();
  const Geometry g = chip(uint32_t(v.bytes / (64 * 2048)));
  PDL_TRY(g.validate());
  const std::string stem = dir + "/mount-" + v.method->key + "-" + std::to_string(v.bytes >> 20) +
                           "M-" + (v.checkpoint ? "cp" : "nocp") + "-" + obsolete_name(v.mode);
  ChipFiles f{stem + ".img", stem + ".expect", stem + ".probe"};
  std::mt19937_64 rng(o.seed ^ (v.bytes * 0x9e3779b97f4a7c15ull) ^ (v.checkpoint ? 1 : 2));
  MountExpect expect;
  uint64_t fill_updates = 0;
  double fill_s = 0;
  JsonObj base;
  {
    std::unique_ptr<EmulatedNand> nand;
    PDL_TRY(EmulatedNand::create_file(f.image, g, &nand));
    StoreParams p = v.method->params(0, v.mode, g.blocks);
    p.checkpoint = v.checkpoint;
    std::unique_ptr<PageStore> store;
    PDL_TRY(format_store(*nand, p, &store, commit_of(*v.method)));
    std::fprintf(stderr, "mount %s %s checkpoint=%s: fill %u of %u logical pages ...\n",
                 v.method->label.c_str(), size_name(v.bytes).c_str(), v.checkpoint ? "on" : "off",
                 uint32_t(double(store->logical_pages()) * o.mount_fill_pct / 100.0),
                 store->logical_pages());
    const auto t0 = Clock::now();
    PDL_TRY(fill(*store, o, sync_every(*v.method), rng, &expect, &fill_updates));
    if (v.checkpoint) PDL_TRY(store->write_checkpoint({}));
    fill_s = seconds_since(t0);
    base.s("exp", "mount")
        .s("method", v.method->label)
        .u("sync_every", sync_every(*v.method))
        .s("obsolete", obsolete_name(v.mode))
        .b("checkpoint", v.checkpoint)
        .u("chip_bytes", g.data_bytes())
        .u("blocks", g.blocks)
        .u("logical_pages", store->logical_pages())
        .u("written_lpns", expect.acked.size())
        .u("fill_updates", fill_updates)
        .n("fill_wall_s", fill_s)
        .s("host", cpu_model() + ", " + std::to_string(std::thread::hardware_concurrency()) +
                       " hardware threads");
  }
  PDL_TRY(probe_row(v, f, "clean", o, expect, base, json, rows));
  if (expect.acked.empty()) return Status::ok();  // an empty chip: nothing to update

  // Power cut: reopen, update, cut.
  uint64_t n = 0, cut_writes = 0;
  NandCounters cut_ops;
  {
    std::unique_ptr<EmulatedNand> nand;
    PDL_TRY(EmulatedNand::open_file(f.image, &nand));
    std::unique_ptr<PageStore> store;
    PDL_TRY(mount_store(*nand, &store, nullptr, commit_of(*v.method)));
    const NandCounters c0 = nand->counters();
    n = std::uniform_int_distribution<uint64_t>(1, std::max<uint64_t>(1, expect.acked.size() / 8))(
        rng);
    std::fprintf(stderr, "mount %s %s checkpoint=%s: %" PRIu64 " updates, then a power cut ...\n",
                 v.method->label.c_str(), size_name(v.bytes).c_str(),
                 v.checkpoint ? "on" : "off", n);
    PDL_TRY(updates_until_cut(*store, *nand, o, sync_every(*v.method), rng, n, &expect,
                              &cut_writes));
    cut_ops = nand->counters() - c0;
    store.reset();  // the process "loses power": no sync, no checkpoint
  }
  base.u("cut_updates", cut_writes)
      .u("cut_programs", cut_ops.programs)
      .u("cut_erases", cut_ops.erases)
      .u("unsynced_writes", expect.maybe.size());
  PDL_TRY(probe_row(v, f, "power cut", o, expect, base, json, rows));
  std::fprintf(stderr, "mount %s %s checkpoint=%s: done in %.1f s\n", v.method->label.c_str(),
               size_name(v.bytes).c_str(), v.checkpoint ? "on" : "off", seconds_since(t_all));
  return Status::ok();
}

void print_table(const std::vector<Row>& rows) {
  if (rows.empty()) return;
  std::printf(
      "\nRSS: the mounting process's peak (VmHWM); per GiB: its growth over the RSS before the "
      "mount (the process's own %.1f MiB), per GiB of chip. Table RAM: the store's tables "
      "(PageStore::table_bytes) after the mount.\n"
      "\n| method | chip | checkpoint | state | pages read | simulated mount | wall | RSS (VmHWM) "
      "| RSS per GiB | table RAM per GiB | from checkpoint |\n"
      "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|\n",
      double(rows[0].start) / double(1 << 20));
  for (const Row& r : rows)
    std::printf("| %s | %s | %s | %s | %" PRIu64
                " | %.3f s | %.3f s | %.1f MiB | %.2f MiB | %.2f MiB | %s |\n",
                r.method.c_str(), r.chip.c_str(), r.variant.c_str(), r.state.c_str(),
                r.pages_read, r.sim_s, r.wall_s, double(r.hwm) / double(1 << 20),
                double(r.hwm - std::min(r.hwm, r.start)) / double(1 << 20) / r.gib,
                double(r.table) / double(1 << 20) / r.gib,
                r.from_cp ? "yes" : ("no: " + r.reason).c_str());
}

}  // namespace

Status run_mount(const Options& o, std::vector<std::string>* json) {
  // The images are read and written with pread/pwrite (file_media.h), here as in the probes: an
  // image larger than the host's page cache, mapped, makes every random read of a page a fault
  // that reads the device's whole read-around window (8 MiB on this machine's disk): the 64 GiB
  // chip's updates read hundreds of GB.
  setenv("PDL_IMAGE_IO", "pread", 1);
  WorkDir dir;
  PDL_TRY(dir.make(o.work_dir));
  const std::vector<uint64_t> sizes = o.mount_chip_sizes();
  const uint64_t scan_max = o.mount_scan_max_bytes();
  std::printf("\n== mount: time and RAM by chip size, after a clean unmount and a power cut ==\n");
  std::vector<MethodPreset> methods = o.methods;
  if (methods.empty()) methods.push_back(*find_method("pdl256"));
  std::string labels;
  for (const MethodPreset& m : methods) labels += (labels.empty() ? "" : ", ") + m.label;
  std::printf(
      "%s on image files of 2048+64 B pages, 64 pages/block; half the logical pages "
      "written, a quarter as many updates (%%Changed=%g), synced, closed with a checkpoint; "
      "power cut: reopened, a random number of updates (a sync every %u writes; FTL devices "
      "every %u), a cut after a random 1..64 flash operations. Chips up to %s also without a "
      "checkpoint area. Every mount in a fresh process, every page verified after it.\n",
      labels.c_str(), o.changed, kSyncEvery, kFtlSyncEvery, size_name(scan_max).c_str());
  std::printf(
      "Machine-independent: pages read, simulated mount ([PDL] Table 1 timings). This "
      "machine's: wall, RSS (VmHWM of the mounting process, the image read with pread so that "
      "no chip page is in it) — %s, %u hardware threads, images on %s.\n",
      cpu_model().c_str(), std::thread::hardware_concurrency(), dir.path().c_str());
  std::fflush(stdout);
  std::vector<Row> rows;
  Status st;
  const std::vector<ObsoleteMode> spare_only = {ObsoleteMode::kSpare};  // (methods without marks)
  for (const MethodPreset& m : methods)
    for (ObsoleteMode mode : m.has_obsolete_modes() ? o.mount_modes : spare_only)
      for (uint64_t bytes : sizes)
        for (bool cp : {true, false})
          if (st.is_ok() && (cp || bytes <= scan_max))
            st = run_variant({&m, bytes, cp, mode}, o, dir.path(), json, &rows);
  print_table(rows);
  if (!st.is_ok()) return st;
  if (o.mount_verify == 0)
    std::printf("all mounts verified: every written logical page read back as acknowledged\n");
  else
    std::printf("all mounts verified: %llu random written pages (--mount-verify) and every page "
                "written after the last sync read back as acknowledged, every unwritten page "
                "unmapped\n",
                (unsigned long long)o.mount_verify);
  return Status::ok();
}

}  // namespace pdl::bench
