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
//   7. checkpoint   — with a current checkpoint, a second mount from it, compared with the
//                     scan: every lpn's mapping, every block's valid pages and bad mark
//                     (check_checkpoint);
//   8. volume       — Volume::check(): directory, owner map, every chunk read back (a chunk
//                     owned by a file but with no copy on flash is lost data).
// Mount's line counts spare headers repaired (one or two flipped bits) and is a problem if it found
// damaged pages (a header failing its CRC that no torn program explains).
// The Volume is opened read-only and mount writes nothing, so the image is never modified.
// Exit 0 only if every check passed; 1 (each problem on stderr) otherwise, a mount that fails
// on corrupt data included; 3 if IMAGE is missing or not an image; 4 if it is in use.
#include "flash/image/checkpoint_info.h"
#include "flash/image/open_store.h"
#include "flash/image/tables_compare.h"
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

// Check 5, flash pages, in named steps (check_pages runs them in order):
//   find_live   from the store's mapping, which pages should be live: the lpn of each current
//               base page, and the differential pages referenced (no flash op);
//   check_page  each page of the store's blocks, in ppa order, read back once: counted as
//               erased, torn, stale or live, and a live one checked (check_log_page: IPL log
//               pages, by their sectors' CRCs);
//   report      one line: the counts, and the first problem.
class PageCheck {
 public:
  PageCheck(PageStore& store, Nand& nand)
      : store_(store), nand_(nand), g_(nand_.geometry()), pages_(g_.total_pages()),
        in_page_(pdl::in_page(store.params().method)),
        base_type_(in_page_ ? PageType::kIplData : PageType::kBase),
        inspector_(page_inspector(store.params(), g_)), log_data_(g_.page_data) {}

  void find_live() {
    base_of_.assign(pages_, kNoPpa);
    diff_live_.assign(pages_, 0);
    for (Lpn l = 0; l < store_.logical_pages(); l++) {
      const LpnLocation loc = store_.locate(l);
      if (loc.base != kNoPpa && loc.base < pages_) {
        base_of_[loc.base] = l;
        live_base_++;
      }
      if (loc.diff != kNoPpa && loc.diff < pages_) diff_live_[loc.diff] = 1;
    }
    for (uint8_t d : diff_live_) live_diff_ += d;
  }

  void check_all() {
    for (Ppa p = Ppa(kSuperblockBlocks) * g_.pages_per_block; p < pages_; p++) {
      if (inspector_->is_log_page(p)) check_log_page(p);
      else check_page(p);
    }
  }

  void report(Report* rep) {
    if (in_page_) live_diff_ = live_logs_;
    const std::string counts =
        strf("programmed %llu (%llu base, %llu differential, %llu torn), erased %llu; "
             "live %llu (%llu base, %llu differential), %llu with a good data CRC; "
             "stale %llu (%llu with bad data, harmless)",
             (unsigned long long)programmed_, (unsigned long long)base_,
             (unsigned long long)diff_, (unsigned long long)torn_, (unsigned long long)erased_,
             (unsigned long long)(live_base_ + live_diff_), (unsigned long long)live_base_,
             (unsigned long long)live_diff_, (unsigned long long)live_ok_,
             (unsigned long long)stale_, (unsigned long long)stale_bad_data_);
    if (problems_ == 0) rep->ok("flash pages", counts);
    else
      rep->problem("flash pages", strf("%llu bad live page%s, first: ",
                                       (unsigned long long)problems_,
                                       problems_ == 1 ? "" : "s") +
                                      first_problem_ + " (" + counts + ")");
  }

 private:
  void problem(Ppa p, const std::string& m) {
    if (problems_++ == 0) first_problem_ = ppa_str(p, g_.pages_per_block) + ": " + m;
  }

  // IPU/IPL: data pages are type "data"; IPL log pages keep their spare erased and hold 512-byte
  // sectors with their own CRCs; locate() names a block's newest used log page as "diff".
  void check_log_page(Ppa p) {
    if (Status st = nand_.read(p, log_data_, {}); !st.is_ok()) {
      problem(p, std::string(st.message()));
      return;
    }
    uint32_t valid = 0, bad = 0;
    for (const LogSectorInfo& s : inspector_->log_sectors(log_data_)) {
      valid += s.kind == LogSectorInfo::kLog || s.kind == LogSectorInfo::kUnmap;
      bad += s.kind == LogSectorInfo::kTorn;
    }
    if (valid + bad == 0) {
      erased_++;
      if (diff_live_[p]) problem(p, "live log page reads erased");
      return;
    }
    programmed_++;
    diff_++;
    torn_ += bad;
    // Every used log page of a block that holds a logical block is live.
    if (store_.block_info(p / g_.pages_per_block).state == BlockInfo::kFree) {
      stale_++;
      return;
    }
    live_logs_++;
    if (valid == 0) problem(p, "live log page has no valid sector");
    else live_ok_++;
  }

  void check_page(Ppa p) {
    if (Status st = read_page_view(nand_, p, &v_); !st.is_ok()) {
      problem(p, std::string(st.message()));
      return;
    }
    const bool live = base_of_[p] != kNoPpa || diff_live_[p];
    if (v_.state == SpareState::kErased) {
      erased_++;
      if (live) problem(p, "live page reads erased");
      return;
    }
    programmed_++;
    if (v_.state == SpareState::kCorrupt) {
      torn_++;
      if (live) problem(p, "live page has a torn spare header");
      return;
    }
    if (v_.hdr.type == base_type_) base_++;
    else if (v_.hdr.type == PageType::kDifferential) diff_++;
    if (!live) {
      stale_++;
      // (a trim record of BAST/FAST is spare only: no data to check)
      stale_bad_data_ += !v_.data_crc_ok && v_.hdr.type != PageType::kFtlTrim;
      return;
    }
    if (base_of_[p] != kNoPpa &&
        (v_.hdr.type != base_type_ || v_.hdr.logical_page() != base_of_[p])) {
      problem(p, strf("base page of lpn %u holds %s", base_of_[p], describe_page(v_).c_str()));
    } else if (diff_live_[p] && v_.hdr.type != PageType::kDifferential) {
      problem(p, "differential page holds " + describe_page(v_));
    } else if (!v_.data_crc_ok) {
      problem(p, "live " + std::string(page_type_name(v_.hdr.type)) +
                     " page fails its data CRC (stored bytes changed)");
    } else if (v_.hdr.type == PageType::kDifferential) {
      std::vector<RecordInfo> records;
      if (Status rs = inspector_->differential_records(v_.data, v_.hdr, &records); !rs.is_ok())
        problem(p, "differential records malformed: " + std::string(rs.message()));
      else
        live_ok_++;
    } else {
      live_ok_++;
    }
  }

  PageStore& store_;
  Nand& nand_;
  const Geometry& g_;
  const uint64_t pages_;
  const bool in_page_;
  const PageType base_type_;
  const std::unique_ptr<PageInspector> inspector_;
  std::vector<uint8_t> log_data_;
  PageView v_;
  // find_live: per page, the lpn whose current base page it is (kNoPpa: none), and whether
  // some lpn's differential is on it.
  std::vector<uint32_t> base_of_;
  std::vector<uint8_t> diff_live_;
  uint64_t live_base_ = 0, live_diff_ = 0;
  // check_page, check_log_page:
  uint64_t programmed_ = 0, erased_ = 0, torn_ = 0, base_ = 0, diff_ = 0, stale_ = 0,
           stale_bad_data_ = 0, live_ok_ = 0, live_logs_ = 0;
  std::string first_problem_;
  uint64_t problems_ = 0;
};

// What PageStore::check() recomputed for `store`, in the engine's terms.
std::string tables_checked(PageStore& store, const Geometry& g) {
  const StoreParams& sp = store.params();
  const unsigned blocks = g.blocks - kSuperblockBlocks;
  if (pdl::in_page(sp.method))
    return strf("slot states of %u lpns, block map and free list of %u blocks",
                store.logical_pages(), blocks);
  if (sp.method == Method::kStableBuffer) {
    PageStore& device = store.flash_store();
    return strf("slot table of %u staging slots over %u lpns; the FTL device's: ", sp.sb_slots,
                store.logical_pages()) +
           tables_checked(device, g);
  }
  if (sp.ftl == FtlKind::kBast || sp.ftl == FtlKind::kFast)
    return strf("block map of %u lpns, %u log blocks and free list of %u blocks",
                store.logical_pages(), sp.log_blocks, blocks);
  return strf("ppmt of %u lpns, reverse map and vdct of %llu pages, valid counts of %u blocks",
              store.logical_pages(), (unsigned long long)g.total_pages(), blocks);
}

void check_pages(PageStore& store, Nand& nand, Report* rep) {
  PageCheck check(store, nand);
  check.find_live();
  check.check_all();
  check.report(rep);
}

// Blocks marked bad are skipped by mount. One holding a valid page newer than what its lpn
// maps to (or than the lpn's differential) had data in service when it was marked — a marker
// that changed on the media, not a retired block (whose live pages GC moved, keeping their seq).
void check_bad_blocks(PageStore& store, Nand& nand, Report* rep) {
  const Geometry& g = nand.geometry();
  const bool in_page = pdl::in_page(store.params().method);
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
          v.hdr.type != base_type || !v.data_crc_ok || v.hdr.logical_page() >= store.logical_pages())
        continue;
      held++;
      const LpnLocation loc = store.locate(v.hdr.logical_page());
      if (v.hdr.seq > std::max(seq_at(loc.base), seq_at(loc.diff))) {
        if (newer++ == 0)
          first = strf("%s holds lpn %u (seq %llu), newer than its mapping",
                       ppa_str(p, g.pages_per_block).c_str(), v.hdr.logical_page(),
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

// Check 8, checkpoint: with a checkpoint the log calls current (docs/design.md §17), the store
// is mounted a second time, from it, on the same chip (reads only: its area pages, each with
// its spare's and data's CRC, the stream's CRC and header, the engine's check()), and its
// tables compared with the scan's: every lpn's mapping (mapped, base page, differential page)
// and every block's valid page count and bad mark, equal but for the tombstones a checkpoint
// keeps and a scan drops (tables_compare.h). A checkpoint that decodes but disagrees is a
// problem: the next open would trust it. One that does not verify is not: a power cut during a
// checkpoint write (after its area was erased, before its log entry) leaves exactly that, and
// the next mount scans.
void check_checkpoint(Image& img, const ImageParams& params, Report* rep) {
  CheckpointInfo c;
  if (Status st = checkpoint_info(img, &c); !st.is_ok()) {
    rep->problem("checkpoint", std::string(st.message()));
    return;
  }
  auto guard = img.volume->lock();
  PageStore& scanned = img.volume->store();
  if (c.area_blocks == 0) {
    rep->ok("checkpoint", c.area_text());
    return;
  }
  if (!c.has_entry || !c.entry_is_checkpoint || c.log_doubt) {
    rep->ok("checkpoint", "area " + c.area_text() + ", log " + c.log_text() +
                              ": no current checkpoint, the next open scans");
    return;
  }
  ImageParams from = params;
  from.scan_mount = false;
  const StoreParams run_time = from.run_time();
  std::unique_ptr<PageStore> ck;
  MountReport m;
  Nand& nand = *img.nand;
  if (Status st = mount_store(nand, &ck, &m, CommitMode::kPerPage, &run_time); !st.is_ok()) {
    rep->problem("checkpoint", "mounting gen " + std::to_string(c.entry_gen) + ": " +
                                   std::string(st.message()));
    return;
  }
  if (!m.from_checkpoint) {
    rep->ok("checkpoint", strf("gen %llu does not verify (%s): the next open scans (what a power "
                               "cut during a checkpoint write leaves)",
                               (unsigned long long)c.entry_gen, m.scan_reason.c_str()));
    return;
  }
  if (scanned.atomic() != ck->atomic()) {
    const Status st =
        ck->set_commit_mode(scanned.atomic() ? CommitMode::kGroup : CommitMode::kPerPage);
    if (!st.is_ok()) {
      rep->problem("checkpoint", "commit mode: " + std::string(st.message()));
      return;
    }
  }
  const Lpn lpns = scanned.logical_pages();
  const uint32_t blocks = scanned.nand().geometry().blocks;
  // (Equal but for tombstones the run time keeps and a scan drops: tables_compare.h.)
  const std::string first =
      compare_tables(*ck, scanned, blocks, nand.geometry().pages_per_block).first;
  if (first.empty())
    rep->ok("checkpoint", strf("checkpoint gen %llu agrees with the scan: %u lpns, %u blocks "
                               "(%llu area pages read, CRCs good)",
                               (unsigned long long)c.entry_gen, lpns, blocks,
                               (unsigned long long)m.checkpoint_pages));
  else
    rep->problem("checkpoint", strf("checkpoint gen %llu disagrees with the scan, first: ",
                                    (unsigned long long)c.entry_gen) +
                                   first);
}

int run_fsck(const Command& cmd, const Args& a) {
  const std::string& path = a.pos[0];
  ImageParams params;
  if (Status oc = owner_cache_option(a, &params); !oc.is_ok())
    return usage_error(cmd, std::string(oc.message()));
  Report rep(cmd);
  std::printf("fsck %s\n", path.c_str());
  std::unique_ptr<Image> img;
  // Mounted by scanning even if a checkpoint is current: fsck checks what is on flash.
  if (a.has("nvm-path")) params.nvm_path = a.get("nvm-path");
  params.scan_mount = true;
  Status st = path.empty() ? Status::error(Errc::kInvalidArgument, "empty image path")
                           : open_image(path, params, ImageMode::kOpen, /*read_only=*/true, "",
                                        &img);
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
    // (A mount from a checkpoint, replay included, counts no live lpns: it walked none.)
    const std::string counts =
        m.from_checkpoint ? strf("%llu free blocks", (unsigned long long)m.free_blocks)
                          : strf("%llu live lpns, %llu valid differential pages, %llu free blocks",
                                 (unsigned long long)m.live_lpns,
                                 (unsigned long long)m.valid_diff_pages,
                                 (unsigned long long)m.free_blocks);
    const std::string scan =
        strf("%llu pages scanned, %llu torn, %llu spare headers repaired (one or two flipped bits); ",
             (unsigned long long)m.pages_scanned, (unsigned long long)m.torn_pages,
             (unsigned long long)m.spare_repairs) +
        counts;
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
    if (st = store.check(); st.is_ok())
      rep.ok("store tables", tables_checked(store, nand.geometry()));
    else
      rep.problem("store tables", std::string(st.message()));
    // The chip's pages against the mapping that names them (StableBuffer: its FTL device's),
    // over the blocks the store runs on (a checkpoint area after them is not the store's:
    // store.nand() shows the chip without it, docs/design.md §17).
    check_pages(store.flash_store(), store.nand(), &rep);
    check_bad_blocks(store.flash_store(), store.nand(), &rep);
  }
  check_checkpoint(*img, params, &rep);  // (locks the Volume itself)
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
    "file chunk (Volume::check). With a current checkpoint it also mounts from it and\n"
    "compares its tables with the scan's (every lpn's base and differential page, every\n"
    "block's valid pages and bad mark): a disagreement is a problem. Prints one line per\n"
    "check. The image is opened read-only.\n"
    "Exit 0 if clean, 1 if any problem was found (each one also on stderr).\n",
    {kNvmPathOption, kOwnerCacheOption},
    1,
    1,
    run_fsck,
};

}  // namespace pdl::tool
