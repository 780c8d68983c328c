// open_store.cc — resolve_store_params / format_store / mount_store: the method decides which
// engine runs (for a mount, the superblock's).
//
// Format order makes a cut format harmless: the old superblock copies are erased first (the
// chip is then "not formatted"), then every data block, and the new superblock is programmed
// last. A chip is a store only once its superblock is complete.
// page_inspector picks the engine's PageInspector the same way.
// upgrade_store brings a PDL, OPU or IPL store of superblock format 1 (no commit records) to
// format 2 (an IPL store without room for a commit log stays format 1).
#include <chrono>
#include <ctime>
#include <optional>
#include <random>

#include "flash/image/open_store.h"
#include "flash/ftl/hybrid_store.h"
#include "flash/ftl/sb_store.h"
#include "flash/ipl/ipl_page_inspector.h"
#include "flash/ipl/ipl_store.h"
#include "flash/pdl/pdl_page_inspector.h"
#include "flash/pdl/pdl_store.h"
#include "flash/image/mount_tables.h"
#include "flash/store/area_pager.h"
#include "flash/store/checkpoint_area.h"
#include "flash/store/checkpoint_log.h"
#include "flash/store/checkpoint_view.h"
#include "flash/store/checkpointed_store.h"
#include "flash/store/page_store.h"
#include "flash/store/superblock.h"
#include "flash/store/reread.h"

namespace pdl {

Status resolve_store_params(StoreParams* params, const Geometry& g) {
  PDL_TRY(params->check_method());
  if (params->method == Method::kIpu || params->method == Method::kIpl)
    return IplStore::resolve_params(params, g);
  if (params->method == Method::kStableBuffer)
    return SbStore::resolve_params(params, g, resolve_store_params);
  if (params->method == Method::kFtl && params->ftl != FtlKind::kPage)
    return HybridStore::resolve_params(params, g);
  return PdlStore::resolve_params(params, g);
}

namespace {

// An FTL device (method=ftl) of resolved `params`: formatted empty, or mounted.
Status format_ftl_device(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out) {
  if (params.ftl == FtlKind::kPage)
    return PdlStore::format(nand, params, CommitMode::kPerPage, out);
  return HybridStore::format(nand, params, out);
}

Status mount_ftl_device(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out,
                        MountReport* report) {
  if (params.ftl == FtlKind::kPage)
    return PdlStore::mount(nand, params, false, CommitMode::kPerPage, out, report);
  return HybridStore::mount(nand, params, out, report);
}

// The run-time choices of `run_time` (not stored in the superblock) applied to `params`.
void apply_run_time(const StoreParams* run_time, StoreParams* params) {
  if (!run_time) return;
  params->sb_recognition = run_time->sb_recognition;
  params->sb_flush = run_time->sb_flush;
  params->scan_mount = run_time->scan_mount;
  params->replay_blocks = run_time->replay_blocks;
  params->table_cache = run_time->table_cache;
}

}  // namespace

namespace {

// kGroup on a store of format 1 is refused: it has no commit records.
Status refuse_legacy_group(const Superblock& sb, CommitMode mode) {
  if (sb.version == kSuperblockLegacy && mode == CommitMode::kGroup &&
      (sb.params.method == Method::kPdl || sb.params.method == Method::kOpu ||
       sb.params.method == Method::kIpl))
    return Status::error(Errc::kUnsupported,
                         "a store of superblock format 1 has no commit records: upgrade it "
                         "(a writable open does) before using atomic groups");
  return Status::ok();
}

// The engine of `sb` formatted empty on `nand` (the chip, or its checkpoint view).
Status format_engine(Nand& nand, const Superblock& sb, CommitMode mode,
                     std::unique_ptr<PageStore>* out) {
  if (in_page(sb.params.method)) return IplStore::format(nand, sb.params, out);
  if (sb.params.method == Method::kFtl) return format_ftl_device(nand, sb.params, out);
  if (sb.params.method == Method::kStableBuffer) {
    std::unique_ptr<PageStore> device;
    PDL_TRY(format_ftl_device(nand, SbStore::device_params(sb.params, nand.geometry()), &device));
    return SbStore::format(std::move(device), sb.params, out);
  }
  return PdlStore::format(nand, sb.params, mode, out);
}

// The engine of `sb` recovered by scanning `nand` (the chip, or its checkpoint view).
Status mount_engine(Nand& nand, const Superblock& sb, CommitMode mode,
                    std::unique_ptr<PageStore>* out, MountReport* report) {
  PDL_TRY(refuse_legacy_group(sb, mode));
  const bool legacy = sb.version == kSuperblockLegacy;
  switch (sb.params.method) {
    case Method::kFtl:  // a block device: no atomic groups, whatever `mode` asks
      return mount_ftl_device(nand, sb.params, out, report);
    case Method::kStableBuffer: {
      std::unique_ptr<PageStore> device;
      PDL_TRY(mount_ftl_device(nand, SbStore::device_params(sb.params, nand.geometry()), &device,
                               report));
      return SbStore::mount(std::move(device), sb.params, out, report);
    }
    case Method::kPdl:
    case Method::kOpu:
      return PdlStore::mount(nand, sb.params, legacy, mode, out, report);
    case Method::kIpu:
    case Method::kIpl:
      PDL_TRY(IplStore::mount(nand, sb.params, legacy, out, report));
      return (*out)->set_commit_mode(mode);  // (IPU stays per-page)
  }
  return Status::error(Errc::kUnsupported, "unknown page-update method in superblock");
}

// What a mount from a checkpoint read: area pages, summary pages, the blocks they declare
// and where the next summary goes; with declared blocks, the engine's replay report.
struct CheckpointRead {
  uint64_t pages = 0;
  uint64_t summaries = 0;
  std::vector<uint32_t> declared;
  SummaryCursor cursor;
  bool replayed = false;
  MountReport replay;
};

// The engines that replay declared blocks after a power cut — every one: PdlStore (with its
// write buffer in NVM too), IplStore (with its log areas in NVM too), HybridStore (BAST, FAST),
// StableBuffer over any FTL device; their guard declares blocks in summary pages instead of
// writing "stale". (Only the pdl and ipl methods keep data in NVM: StoreParams::validate.)
bool has_replay(const StoreParams& params) {
  return params.nvm_bytes == 0 || params.method == Method::kPdl || params.method == Method::kIpl;
}

// An engine with replay that keeps state in NVM reads it again when it replays (PDL's write
// buffer log; IPL's commit area and log areas): its NVM writes are declared (an empty summary
// page), not made stale.
void declare_nvm_writes(CheckpointView& view, const StoreParams& params) {
  view.replay_nvm(has_replay(params) && params.nvm_bytes != 0);
}

// The engine after a power cut: the checkpoint's tables plus the declared blocks re-read.
// kUnsupported for an engine without replay (the caller scans).
Status replay_engine(Nand& view, const StoreParams& params, CommitMode mode, TableReader& r,
                     const std::vector<uint32_t>& declared, std::unique_ptr<PageStore>* out,
                     MountReport* report) {
  if (has_replay(params) && in_page(params.method))
    return IplStore::replay(view, params, mode, r, declared, out, report);
  if (has_replay(params) && params.method == Method::kStableBuffer)  // (the device through here)
    return SbStore::replay(view, params, r, declared, replay_engine, out, report);
  if (has_replay(params) && params.method == Method::kFtl && params.ftl != FtlKind::kPage)
    return HybridStore::replay(view, params, r, declared, out, report);
  if (has_replay(params))
    return PdlStore::replay(view, params,
                            params.method == Method::kFtl ? CommitMode::kPerPage : mode, r,
                            declared, out, report);
  return Status::error(Errc::kUnsupported, std::string("power cut: ") +
                                               method_name(params.method) + " cannot replay");
}

// The engine of `sb` from the checkpoint the log's newest entry names: its root read and
// checked in its half of the area, the engine's tables mounted on `view` (their table pages
// loaded through `pager`) and checked; the client's section into `client`. The summary pages
// after the root read too, and if they declare blocks, the engine replays them (the client's
// section is then out of date: returned only with the lpns the replay reconsidered). On
// success the pager is placed on the root's half, its cursor after the summaries. Any error:
// the caller scans.
Status mount_from_checkpoint(Nand& nand, const Superblock& sb, CheckpointLog& log,
                             CheckpointView& view, AreaPager& pager, CommitMode mode,
                             std::unique_ptr<PageStore>* out, ClientTables* client,
                             CheckpointRead* cr) {
  PDL_TRY(refuse_legacy_group(sb, mode));
  const LogEntry& e = log.newest();
  std::vector<uint8_t> stream;
  PDL_TRY(read_area(nand, view.area_first(), view.area_blocks(), e, &stream, &cr->pages));
  std::span<const uint8_t> engine, client_section;
  PDL_TRY(decode_stream(stream, stream_header_for(sb, nand.geometry(), e.gen), &engine,
                        &client_section));
  const Status st = read_summaries(nand, view.area_first(), view.area_blocks(), e,
                                   &cr->declared, &cr->cursor, &cr->pages, &cr->summaries);
  if (!st.is_ok()) return Status::error(st.code(), "summary: " + std::string(st.message()));
  const uint64_t loads0 = pager.loads();
  pager.limit_gen(e.gen);
  TableReader r(engine, &pager);
  if (!cr->declared.empty() || cr->summaries > 0) {  // (none declared: the NVM changed)
    PDL_TRY(replay_engine(view, sb.params, mode, r, cr->declared, out, &cr->replay));
    cr->replayed = true;
  } else {
    PDL_TRY(mount_store_tables(view, sb.params, mode, r, out));
  }
  PDL_TRY((*out)->check_mount());  // (the full check() reads every table page: pdl fsck)
  if (in_page(sb.params.method)) PDL_TRY((*out)->set_commit_mode(mode));
  cr->pages += pager.loads() - loads0;
  pager.place(e.half, cr->cursor);
  std::vector<uint32_t> touched;  // (taken from the engine even without a client: its RAM)
  const bool listed = cr->replayed && (*out)->take_replayed_lpns(&touched);
  if (!client || (cr->replayed && !listed)) return Status::ok();  // (out of date, no list)
  client->section.assign(client_section.begin(), client_section.end());
  client->replayed = cr->replayed;
  client->touched = std::move(touched);
  return Status::ok();
}

}  // namespace

Status checkpoint_area_for(const StoreParams& params, const Geometry& g, uint32_t* area) {
  *area = 0;
  if (!params.checkpoint) return Status::ok();
  uint32_t a = params.checkpoint_blocks;
  if (a == 0) {
    StoreParams whole = params;
    whole.checkpoint = false;
    PDL_TRY(resolve_store_params(&whole, g));
    a = checkpoint_area_blocks(g, whole.logical_pages);
  }
  if (a < 2 || a > g.blocks / 2 || g.blocks - a <= 2 * kSuperblockBlocks)
    return Status::error(Errc::kInvalidArgument,
                         "checkpoint: an area of " + std::to_string(a) + " blocks does not fit a "
                         "chip of " + std::to_string(g.blocks) + " blocks (two halves of at "
                         "least a block, at most half of the chip)");
  StoreParams rest = params;
  rest.checkpoint = false;
  rest.checkpoint_blocks = 0;
  const Status st = resolve_store_params(&rest, store_geometry(g, a));
  if (!st.is_ok())
    return Status::error(st.code(), "checkpoint: with an area of " + std::to_string(a) +
                                        " blocks, the store's " + std::to_string(g.blocks - a) +
                                        " blocks do not fit the parameters: " +
                                        std::string(st.message()));
  *area = a;
  return Status::ok();
}

Status format_store(Nand& nand, const StoreParams& params, std::unique_ptr<PageStore>* out,
                    CommitMode mode) {
  Superblock sb;
  PDL_TRY(checkpoint_area_for(params, nand.geometry(), &sb.checkpoint_blocks));
  sb.params = params;
  sb.params.checkpoint = false;  // the engine's parameters; the area is the superblock's
  sb.params.checkpoint_blocks = 0;
  PDL_TRY(resolve_store_params(&sb.params, store_geometry(nand.geometry(), sb.checkpoint_blocks)));
  sb.version = superblock_version_for(sb.params);
  sb.summaries = sb.checkpoint_blocks != 0;  // format 8
  sb.halves = sb.checkpoint_blocks != 0;
  std::random_device rd;
  for (auto& b : sb.uuid) b = uint8_t(rd());
  sb.format_time = uint64_t(std::time(nullptr));
  for (uint32_t b = 0; b < kSuperblockBlocks; b++) {
    if (nand.is_bad(b)) continue;
    const Status st = erase_with_retries(nand, b);
    if (st.is(Errc::kBadBlock)) PDL_TRY(nand.mark_bad(b));  // write_superblock skips it
    else PDL_TRY(st);
  }
  std::unique_ptr<PageStore> store;
  std::unique_ptr<CheckpointLog> log;
  std::unique_ptr<CheckpointView> view;
  if (sb.checkpoint_blocks) {  // the engine on the chip's first blocks - area blocks
    log = std::make_unique<CheckpointLog>(nand, sb);
    view = std::make_unique<CheckpointView>(nand, sb.checkpoint_blocks, *log);
    declare_nvm_writes(*view, sb.params);
  }
  PDL_TRY(format_engine(view ? static_cast<Nand&>(*view) : nand, sb, mode, &store));  // erases
  PDL_TRY(write_superblock(nand, sb));
  if (in_page(sb.params.method))
    PDL_TRY(store->set_commit_mode(mode));  // (IPU stays per-page)
  if (view) {
    log->set_empty();  // blocks 0 and 1 were erased above: no entry
    store = std::make_unique<CheckpointedStore>(sb, std::move(log), std::move(view),
                                                std::move(store), false, false,
                                                has_replay(sb.params));
  }
  *out = std::move(store);
  return Status::ok();
}

Status mount_store(Nand& nand, std::unique_ptr<PageStore>* out, MountReport* report,
                   CommitMode mode, const StoreParams* run_time, ClientTables* client) {
  const uint64_t t0 = nand.counters().sim_us;
  const auto w0 = std::chrono::steady_clock::now();
  auto wall = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  };
  if (client) client->clear();
  Superblock sb;
  PDL_TRY(read_superblock(nand, resolve_store_params, &sb));
  apply_run_time(run_time, &sb.params);
  if (!sb.checkpoint_blocks) {
    PDL_TRY(mount_engine(nand, sb, mode, out, report));
    if (report) {
      report->scan_reason = "format without a checkpoint area";
      report->sim_us = nand.counters().sim_us - t0;
      report->wall_s = wall();
    }
    return Status::ok();
  }
  auto log = std::make_unique<CheckpointLog>(nand, sb);
  if (!sb.halves) {
    // Formats 6 and 7: their log entries (format 1) and single-stream area are not this pdl's;
    // the store scans, and its first change erases the old checkpoint's first page so that
    // an older pdl scans too (never mounts a checkpoint older than the chip).
    log->set_empty();
    auto view = std::make_unique<CheckpointView>(nand, sb.checkpoint_blocks, *log);
    view->arm_erase_only();
    std::unique_ptr<PageStore> engine;
    PDL_TRY(mount_engine(*view, sb, mode, &engine, report));
    if (report) {
      report->scan_reason = "superblock format " + std::to_string(sb.summaries ? 7 : 6) +
                            ": its checkpoint area holds one stream; this pdl reads and writes "
                            "format 8's halves (the checkpoint is ignored; reformat to get "
                            "checkpoints)";
      report->sim_us = nand.counters().sim_us - t0;
      report->wall_s = wall();
    }
    *out = std::make_unique<CheckpointedStore>(sb, std::move(log), std::move(view),
                                               std::move(engine), false);
    return Status::ok();
  }
  PDL_TRY(log->load());
  auto view = std::make_unique<CheckpointView>(nand, sb.checkpoint_blocks, *log);
  declare_nvm_writes(*view, sb.params);
  view->arm(log->may_be_current());  // before anything could change the chip
  auto pager = std::make_unique<AreaPager>(nand, view->area_first(), view->area_blocks());
  std::unique_ptr<PageStore> engine;
  std::string reason;
  CheckpointRead cr;
  if (sb.params.scan_mount) {
    reason = "a scan was asked for";
  } else if (log->doubt()) {
    reason = "checkpoint log in doubt: " + log->doubt_reason();
  } else if (!log->has_entry()) {
    reason = "no checkpoint";
  } else if (log->newest().kind == LogKind::kStale) {
    reason = "changed since the checkpoint";
  } else {
    const Status st =
        mount_from_checkpoint(nand, sb, *log, *view, *pager, mode, &engine, client, &cr);
    if (st.is(Errc::kPowerCut)) return st;  // the chip is gone: a scan would fail as well
    if (st.is(Errc::kUnsupported)) reason = std::string(st.message());  // (no tables, no replay)
    else if (!st.is_ok()) reason = "checkpoint corrupt: " + std::string(st.message());
    if (!st.is_ok()) {
      engine.reset();
      // Its tables (and their homes) are gone: the first checkpoint is full.
      pager = std::make_unique<AreaPager>(nand, view->area_first(), view->area_blocks());
      if (client) client->clear();
    }
  }
  const bool from = engine != nullptr;
  if (!from) PDL_TRY(mount_engine(*view, sb, mode, &engine, report));
  // Declarations go on after the root and its summaries (unless a cut checkpoint's pages
  // follow them: then the stale guard, and the next checkpoint after those pages).
  const bool declare = from && has_replay(sb.params) && !cr.cursor.later;
  if (report) {
    if (from && cr.replayed) *report = cr.replay;
    report->from_checkpoint = from;
    report->checkpoint_gen = log->has_entry() ? log->newest().gen : 0;
    report->checkpoint_pages = cr.pages;
    report->summary_pages = cr.summaries;
    report->scan_reason = reason;
    report->sim_us = nand.counters().sim_us - t0;
    report->wall_s = wall();
  }
  const LogEntry newest = log->has_entry() ? log->newest() : LogEntry();
  auto* v = view.get();
  auto cs = std::make_unique<CheckpointedStore>(sb, std::move(log), std::move(view),
                                                std::move(engine), from && !cr.replayed,
                                                from && !cr.replayed, has_replay(sb.params),
                                                std::move(pager));
  if (declare)
    v->start_summaries(newest.gen, &cs->pager().cursor(), cr.declared,
                       replay_budget(sb.params.replay_blocks, nand.geometry(), newest.pages));
  *out = std::move(cs);
  return Status::ok();
}

std::unique_ptr<PageInspector> page_inspector(const StoreParams& params, const Geometry& g) {
  if (params.method == Method::kIpu || params.method == Method::kIpl)
    return std::make_unique<IplPageInspector>(params, g);
  return std::make_unique<PdlPageInspector>();
}

Status upgrade_store(Nand& nand, PageStore& store) {
  if (!store.legacy_format()) return Status::ok();
  // First a commit record covering every page on flash (format 1 counted them all), then the
  // superblock: cut in between, the store mounts as format 1 again and is upgraded again.
  PDL_TRY(store.upgrade_format());
  if (store.legacy_format()) return Status::ok();  // IPU, or an IPL store with no room
  Superblock sb;
  PDL_TRY(read_superblock(nand, resolve_store_params, &sb));
  sb.version = superblock_version_for(sb.params);  // (a format 1 store's sectors are 512)
  return rewrite_superblock(nand, sb);
}

StoreOpener remount_opener(Nand& nand, const StoreParams* run_time) {
  std::optional<StoreParams> choices;
  if (run_time) choices = *run_time;
  return [&nand, choices](CommitMode mode, std::unique_ptr<PageStore>* out) {
    return mount_store(nand, out, nullptr, mode, choices ? &*choices : nullptr);
  };
}

}  // namespace pdl
