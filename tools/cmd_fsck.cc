// cmd_fsck.cc — `pdl fsck IMAGE`: check an image without modifying it.
//
// Checks, in order, printing one line each with what was checked and how much:
//   1. image file   — the emulator header (magic, checksum, geometry) and the flock: open;
//   2. mount        — crash recovery, one scan of every spare area (pdl_recovery.cc);
//   3. superblock   — both copies (blocks 0 and 1): header, type and data CRC;
//   4. store tables — PageStore::check(): ppmt, reverse map, vdct, copies, block valid counts;
//   5. flash pages  — every programmed page of the store's blocks read back: each live page
//                     (a current base page, a differential page some lpn points at) must have
//                     a valid header of the right type and lpn and a good data CRC; torn and
//                     stale pages are counted (a crash leaves them; they are not errors);
//                     IPU/IPL: data pages, and IPL log pages by their sectors' CRCs;
//   6. bad blocks   — pages on blocks marked bad newer than their lpn's mapping (data the
//                     marker hid: the block was in service);
//   7. volume       — Volume::check(): directory, owner map, every chunk read back (a chunk
//                     owned by a file but with no copy on flash is lost data).
// Mount's line counts spare headers repaired (one or two flipped bits) and is a problem if it found
// damaged pages (a header failing its CRC that no torn program explains).
// The Volume is opened read-only and mount writes nothing, so the image is never modified.
// Exit 0 only if every check passed; 1 (each problem on stderr) otherwise, a mount that fails
// on corrupt data included; 3 if IMAGE is missing or not an image; 4 if it is in use.
#include "flash/image/open_store.h"
#include "flash/store/superblock.h"
#include "tools/commands.h"
#include "tools/image_open.h"
#include "tools/page_view.h"

namespace pdl::tool {
namespace {

class Report {
 public:
  explicit Report(const Command& cmd) : cmd_(cmd) {}
  void ok(const char* what, const std::string& detail) {
    std::printf("  %-14s ok: %s\n", what, detail.c_str());
  }
  void problem(const char* what, const std::string& msg) {
    std::printf("  %-14s PROBLEM: %s\n", what, msg.c_str());
    std::fflush(stdout);
    fail(cmd_, kExitProblem, std::string(what) + ": " + msg);
    problems_++;
  }
  int problems() const { return problems_; }

 private:
  const Command& cmd_;
  int problems_ = 0;
};

void check_superblocks(Nand& nand, const StoreParams& sp, Report* rep) {
  uint32_t good = 0;
  std::string bad;
  const uint32_t ppb = nand.geometry().pages_per_block;
  for (uint32_t b = 0; b < kSuperblockBlocks; b++) {
    PageView v;
    const Status st = read_page_view(nand, b * ppb, &v);
    std::string why;
    if (!st.is_ok()) why = std::string(st.message());
    else if (v.state != SpareState::kValid) why = describe_page(v);
    else if (v.hdr.type != PageType::kSuperblock) why = "not a superblock page";
    else if (!v.data_crc_ok) why = "data CRC mismatch";
    if (why.empty()) good++;
    else bad += strf("%scopy in block %u: %s", bad.empty() ? "" : "; ", b, why.c_str());
  }
  if (good == kSuperblockBlocks)
    rep->ok("superblock", strf("%u of %u copies valid (%s)", good, kSuperblockBlocks,
                               sp.describe().c_str()));
  else
    rep->problem("superblock", strf("%u of %u copies valid: ", good, kSuperblockBlocks) + bad);
}

void check_pages(PageStore& store, Report* rep) {
  Nand& nand = store.nand();
  const Geometry& g = nand.geometry();
  const uint64_t pages = g.total_pages();
  // What should be live: lpn of each current base page, and differential pages referenced.
  std::vector<uint32_t> base_of(pages, kNoPpa);
  std::vector<uint8_t> diff_live(pages, 0);
  uint64_t live_base = 0;
  for (Lpn l = 0; l < store.logical_pages(); l++) {
    const LpnLocation loc = store.locate(l);
    if (loc.base != kNoPpa && loc.base < pages) {
      base_of[loc.base] = l;
      live_base++;
    }
    if (loc.diff != kNoPpa && loc.diff < pages) diff_live[loc.diff] = 1;
  }
  uint64_t live_diff = 0;
  for (uint8_t d : diff_live) live_diff += d;
  uint64_t programmed = 0, erased = 0, torn = 0, base = 0, diff = 0, stale = 0,
           stale_bad_data = 0, live_ok = 0;
  std::string first_problem;
  uint64_t problems = 0;
  auto problem = [&](Ppa p, const std::string& m) {
    if (problems++ == 0) first_problem = ppa_str(p, g.pages_per_block) + ": " + m;
  };
  PageView v;
  // IPU/IPL: data pages are type "data"; IPL log pages keep their spare erased and hold 512-byte
  // sectors with their own CRCs; locate() names a block's newest used log page as "diff".
  const bool in_page =
      store.params().method == Method::kIpu || store.params().method == Method::kIpl;
  const PageType base_type = in_page ? PageType::kIplData : PageType::kBase;
  const std::unique_ptr<PageInspector> inspector = page_inspector(store.params(), g);
  std::vector<uint8_t> log_data(g.page_data);
  uint64_t live_logs = 0;
  for (Ppa p = Ppa(kSuperblockBlocks) * g.pages_per_block; p < pages; p++) {
    if (inspector->is_log_page(p)) {
      if (Status st = nand.read(p, log_data, {}); !st.is_ok()) {
        problem(p, std::string(st.message()));
        continue;
      }
      uint32_t valid = 0, bad = 0;
      for (const LogSectorInfo& s : inspector->log_sectors(log_data)) {
        valid += s.kind == LogSectorInfo::kLog || s.kind == LogSectorInfo::kUnmap;
        bad += s.kind == LogSectorInfo::kTorn;
      }
      if (valid + bad == 0) {
        erased++;
        if (diff_live[p]) problem(p, "live log page reads erased");
        continue;
      }
      programmed++;
      diff++;
      torn += bad;
      // Every used log page of a block that holds a logical block is live.
      if (store.block_info(p / g.pages_per_block).state == BlockInfo::kFree) {
        stale++;
        continue;
      }
      live_logs++;
      if (valid == 0) problem(p, "live log page has no valid sector");
      else live_ok++;
      continue;
    }
    if (Status st = read_page_view(nand, p, &v); !st.is_ok()) {
      problem(p, std::string(st.message()));
      continue;
    }
    const bool live = base_of[p] != kNoPpa || diff_live[p];
    if (v.state == SpareState::kErased) {
      erased++;
      if (live) problem(p, "live page reads erased");
      continue;
    }
    programmed++;
    if (v.state == SpareState::kCorrupt) {
      torn++;
      if (live) problem(p, "live page has a torn spare header");
      continue;
    }
    if (v.hdr.type == base_type) base++;
    else if (v.hdr.type == PageType::kDifferential) diff++;
    if (!live) {
      stale++;
      stale_bad_data += !v.data_crc_ok;
      continue;
    }
    if (base_of[p] != kNoPpa &&
        (v.hdr.type != base_type || v.hdr.lpn != base_of[p])) {
      problem(p, strf("base page of lpn %u holds %s", base_of[p], describe_page(v).c_str()));
    } else if (diff_live[p] && v.hdr.type != PageType::kDifferential) {
      problem(p, "differential page holds " + describe_page(v));
    } else if (!v.data_crc_ok) {
      problem(p, "live " + std::string(page_type_name(v.hdr.type)) +
                     " page fails its data CRC (stored bytes changed)");
    } else if (v.hdr.type == PageType::kDifferential) {
      std::vector<RecordInfo> records;
      if (Status rs = inspector->differential_records(v.data, v.hdr, &records); !rs.is_ok())
        problem(p, "differential records malformed: " + std::string(rs.message()));
      else
        live_ok++;
    } else {
      live_ok++;
    }
  }
  if (in_page) live_diff = live_logs;
  const std::string counts =
      strf("programmed %llu (%llu base, %llu differential, %llu torn), erased %llu; "
           "live %llu (%llu base, %llu differential), %llu with a good data CRC; "
           "stale %llu (%llu with bad data, harmless)",
           (unsigned long long)programmed, (unsigned long long)base,
           (unsigned long long)diff, (unsigned long long)torn, (unsigned long long)erased,
           (unsigned long long)(live_base + live_diff), (unsigned long long)live_base,
           (unsigned long long)live_diff, (unsigned long long)live_ok,
           (unsigned long long)stale, (unsigned long long)stale_bad_data);
  if (problems == 0) rep->ok("flash pages", counts);
  else
    rep->problem("flash pages", strf("%llu bad live page%s, first: ", (unsigned long long)problems,
                                     problems == 1 ? "" : "s") +
                                    first_problem + " (" + counts + ")");
}

// Blocks marked bad are skipped by mount. One holding a valid page newer than what its lpn
// maps to (or than the lpn's differential) had data in service when it was marked — a marker
// that changed on the media, not a retired block (whose live pages GC moved, keeping their seq).
void check_bad_blocks(PageStore& store, Report* rep) {
  Nand& nand = store.nand();
  const Geometry& g = nand.geometry();
  const bool in_page =
      store.params().method == Method::kIpu || store.params().method == Method::kIpl;
  const PageType base_type = in_page ? PageType::kIplData : PageType::kBase;
  uint32_t bad = 0;
  uint64_t held = 0, newer = 0;
  std::string first;
  PageView v, cur;
  auto seq_at = [&](Ppa p) -> uint64_t {
    if (p == kNoPpa || p >= g.total_pages()) return 0;
    if (!read_page_view(nand, p, &cur).is_ok() || cur.state != SpareState::kValid) return 0;
    return cur.hdr.seq;
  };
  for (uint32_t b = kSuperblockBlocks; b < g.blocks; b++) {
    if (!nand.is_bad(b)) continue;
    bad++;
    for (uint32_t i = 0; i < g.pages_per_block; i++) {
      const Ppa p = b * g.pages_per_block + i;
      if (!read_page_view(nand, p, &v).is_ok() || v.state != SpareState::kValid ||
          v.hdr.type != base_type || !v.data_crc_ok || v.hdr.lpn >= store.logical_pages())
        continue;
      held++;
      const LpnLocation loc = store.locate(v.hdr.lpn);
      if (v.hdr.seq > std::max(seq_at(loc.base), seq_at(loc.diff))) {
        if (newer++ == 0)
          first = strf("%s holds lpn %u (seq %llu), newer than its mapping",
                       ppa_str(p, g.pages_per_block).c_str(), v.hdr.lpn,
                       (unsigned long long)v.hdr.seq);
      }
    }
  }
  const std::string counts = strf("%u marked bad, %llu valid pages on them", bad,
                                  (unsigned long long)held);
  if (newer == 0) rep->ok("bad blocks", counts);
  else
    rep->problem("bad blocks", strf("%llu page%s on blocks marked bad hold data no live page "
                                    "backs, first: ",
                                    (unsigned long long)newer, newer == 1 ? "" : "s") +
                                   first + " (" + counts + ")");
}

int run_fsck(const Command& cmd, const Args& a) {
  const std::string& path = a.pos[0];
  Report rep(cmd);
  std::printf("fsck %s\n", path.c_str());
  std::unique_ptr<Image> img;
  Status st = open_read_only(path, &img);
  if (st.is(Errc::kCorrupt)) {
    rep.problem("mount", std::string(st.message()));
    std::printf("1 problem found\n");
    return kExitProblem;
  }
  if (!st.is_ok()) return fail_status(cmd, st);
  Volume& vol = *img->volume;
  const std::vector<FileInfo> files = vol.list();
  {
    auto guard = vol.lock();
    PageStore& store = vol.store();
    Nand& nand = *img->nand;
    const MountReport& m = img->mount;
    rep.ok("image file", nand.geometry().describe());
    const std::string scan =
        strf("%llu pages scanned, %llu torn, %llu spare headers repaired (one or two flipped bits); "
             "%llu live lpns, %llu valid differential pages, %llu free blocks",
             (unsigned long long)m.pages_scanned, (unsigned long long)m.torn_pages,
             (unsigned long long)m.spare_repairs, (unsigned long long)m.live_lpns,
             (unsigned long long)m.valid_diff_pages, (unsigned long long)m.free_blocks);
    if (m.damaged_pages == 0)
      rep.ok("mount", scan);
    else
      rep.problem("mount", strf("%llu damaged page%s: a spare header fails its CRC where no "
                                "torn program can be (later pages of its block are "
                                "programmed); what it held is lost (",
                                (unsigned long long)m.damaged_pages,
                                m.damaged_pages == 1 ? "" : "s") +
                               scan + ")");
    check_superblocks(nand, store.params(), &rep);
    const bool in_page =
        store.params().method == Method::kIpu || store.params().method == Method::kIpl;
    if (st = store.check(); st.is_ok() && in_page)
      rep.ok("store tables", strf("slot states of %u lpns, block map and free list of %u blocks",
                                  store.logical_pages(),
                                  nand.geometry().blocks - kSuperblockBlocks));
    else if (st.is_ok())
      rep.ok("store tables", strf("ppmt of %u lpns, reverse map and vdct of %llu pages, "
                                  "valid counts of %u blocks",
                                  store.logical_pages(),
                                  (unsigned long long)nand.geometry().total_pages(),
                                  nand.geometry().blocks - kSuperblockBlocks));
    else
      rep.problem("store tables", std::string(st.message()));
    check_pages(store, &rep);
    check_bad_blocks(store, &rep);
  }
  uint64_t chunks = 0;
  for (const FileInfo& f : files) chunks += f.chunks_mapped;
  const VolumeLayout& L = vol.layout();
  if (st = vol.check(); st.is_ok())
    rep.ok("volume", strf("%zu file%s, %llu chunks read back, owner map of %u data lpns, "
                          "%u metadata pages read back",
                          files.size(), files.size() == 1 ? "" : "s",
                          (unsigned long long)chunks, L.data_lpns, L.data_first));
  else
    rep.problem("volume", std::string(st.message()));
  if (rep.problems() == 0) {
    std::printf("clean\n");
    return kExitOk;
  }
  std::printf("%d problem%s found\n", rep.problems(), rep.problems() == 1 ? "" : "s");
  return kExitProblem;
}

}  // namespace

const Command kFsckCommand = {
    "fsck",
    "IMAGE",
    "check an image (recovery, tables, every page's CRC, directory); changes nothing",
    "Mounts the image (crash recovery: a scan of every spare area), checks both superblock\n"
    "copies, recomputes the store's tables (PageStore::check), reads back every programmed\n"
    "page (each live page needs a valid header and data CRC; torn and stale pages left by a\n"
    "crash are counted, not errors), then checks the volume: directory, owner map and every\n"
    "file chunk (Volume::check). Prints one line per check. The image is opened read-only.\n"
    "Exit 0 if clean, 1 if any problem was found (each one also on stderr).\n",
    {},
    1,
    1,
    run_fsck,
};

}  // namespace pdl::tool
