// image.cc — opening, creating and formatting images; parameter contradictions; lock holders.
#include "flash/image/open_store.h"
#include "flash/image/image.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "flash/device/emulated_nand.h"
#include "flash/device/mtd_nand.h"
#include "flash/image/image_internal.h"

namespace pdl {

Image::~Image() {
  volume.reset();  // the Volume (and its store) before the device they use
  nand.reset();
}

Status Image::close() {
  if (!volume) return Status::ok();
  PDL_TRY(volume->close());
  checkpoint = Status::error(Errc::kUnsupported, "read-only: no checkpoint written");
  if (volume->read_only()) return Status::ok();
  // The checkpoint (docs/design.md §17): the data is synced, so a failure here loses nothing;
  // it is kept in `checkpoint` for the caller to report, and the next mount scans.
  TableWriter client;  // the Volume's tables: its client section
  // A Volume that cannot save its tables exactly (volume_tables.cc says why) gets no client
  // section: the next mount then reads its metadata pages, as without a checkpoint.
  if (!volume->save_tables(client).is_ok()) client = TableWriter();
  auto guard = volume->lock();
  checkpoint = volume->store().write_checkpoint(client.data());
  return Status::ok();
}

std::string lock_holder(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";
  // /proc/locks: "1: FLOCK  ADVISORY  WRITE 1234 08:01:56789 0 EOF"
  std::ifstream locks("/proc/locks");
  std::string line;
  char want[64];
  snprintf(want, sizeof want, ":%llu ", (unsigned long long)st.st_ino);
  while (std::getline(locks, line)) {
    if (line.find("FLOCK") == std::string::npos || line.find(want) == std::string::npos)
      continue;
    std::istringstream in(line);
    std::string idx, kind, adv, mode, pid;
    in >> idx >> kind >> adv >> mode >> pid;
    if (kind == "->") continue;  // a waiter, not the holder
    std::string comm;
    std::ifstream c("/proc/" + pid + "/comm");
    std::getline(c, comm);
    return "pid " + pid + (comm.empty() ? "" : " (" + comm + ")");
  }
  return "";
}

Status busy(const std::string& path) {
  const std::string who = lock_holder(path);
  const std::string me = "pid " + std::to_string(getpid());
  // This process holds it through another opener that does not share (the VFS shares its own
  // opens of one file under any name).
  if (who == me || who.rfind(me + " ", 0) == 0)
    return Status::error(Errc::kBusy,
                         "image " + path + " is already open in this process (" + who + ")");
  return Status::error(Errc::kBusy, "image " + path + " is in use by " +
                                        (who.empty() ? std::string("another process") : who));
}

Status check_params_match(const ImageParams& p, const Nand& nand, const StoreParams& sp,
                          const VolumeLayout& layout) {
  const Geometry& g = nand.geometry();
  auto clash = [](const char* key, const std::string& asked, const std::string& has) {
    return Status::error(Errc::kInvalidArgument,
                         std::string(key) + "=" + asked +
                             " contradicts the existing image, which has " + key + "=" + has);
  };
  if (p.method && *p.method != sp.method)
    return clash("method", method_name(*p.method), method_name(sp.method));
  if (p.max_diff && writes_differentials(sp.method) && *p.max_diff != sp.max_differential)
    return clash("max_diff", std::to_string(*p.max_diff), std::to_string(sp.max_differential));
  // IPU and IPL have no obsolete marks: the parameter means nothing to them and is ignored.
  if (p.obsolete && has_obsolete_marks(sp.method) && *p.obsolete != sp.obsolete)
    return clash("obsolete", obsolete_name(*p.obsolete), obsolete_name(sp.obsolete));
  if (p.log_region) {  // compared as stored: whole pages (with NVM: whole log sectors)
    const uint64_t asked =
        sp.nvm_bytes != 0 && sp.log_sector != 0
            ? uint64_t(*p.log_region) / sp.log_sector * sp.log_sector
            : (uint64_t(*p.log_region) + g.page_data - 1) / g.page_data * g.page_data;
    if (!has_log_region(sp.method))
      return Status::error(Errc::kInvalidArgument,
                           "log_region=" + format_size(*p.log_region) +
                               " contradicts the existing image, which has method=" +
                               method_name(sp.method) + " (no log region)");
    if (asked != sp.log_region)
      return clash("log_region", format_size(asked), format_size(sp.log_region));
  }
  if (p.log_sector) {
    if (!has_log_region(sp.method))
      return Status::error(Errc::kInvalidArgument,
                           "log_sector=" + std::to_string(*p.log_sector) +
                               " contradicts the existing image, which has method=" +
                               method_name(sp.method) + " (no log sectors)");
    if (*p.log_sector != sp.log_sector)
      return clash("log_sector", std::to_string(*p.log_sector), std::to_string(sp.log_sector));
  }
  if (p.ftl && (!is_ftl_device(sp.method) || *p.ftl != sp.ftl))
    return clash("ftl", ftl_name(*p.ftl), ftl_name(sp.ftl));
  if (p.log_blocks && *p.log_blocks != sp.log_blocks)
    return clash("log_blocks", std::to_string(*p.log_blocks), std::to_string(sp.log_blocks));
  if (p.sb_slots && *p.sb_slots != sp.sb_slots)
    return clash("sb_slots", std::to_string(*p.sb_slots), std::to_string(sp.sb_slots));
  if (p.page && *p.page != g.page_data)
    return clash("page", std::to_string(*p.page), std::to_string(g.page_data));
  if (p.spare && *p.spare != g.page_spare)
    return clash("spare", std::to_string(*p.spare), std::to_string(g.page_spare));
  if (p.pages_per_block && *p.pages_per_block != g.pages_per_block)
    return clash("pages_per_block", std::to_string(*p.pages_per_block),
                 std::to_string(g.pages_per_block));
  if (p.nop && *p.nop != g.partial_programs)
    return clash("nop", std::to_string(*p.nop), std::to_string(g.partial_programs));
  if (p.erase_limit && *p.erase_limit != g.erase_limit)
    return clash("erase_limit", std::to_string(*p.erase_limit), std::to_string(g.erase_limit));
  if (p.size && *p.size != g.data_bytes())
    return clash("size", format_size(*p.size), format_size(g.data_bytes()));
  // NVM: the device's and the store's (the store uses all of it, ImageParams::store_params).
  if (p.nvm && (*p.nvm != g.nvm_bytes || *p.nvm != sp.nvm_bytes))
    return clash("nvm", format_size(*p.nvm),
                 format_size(sp.nvm_bytes) + (g.nvm_bytes != sp.nvm_bytes
                                                  ? " (on a device with " +
                                                        format_size(g.nvm_bytes) + " of NVM)"
                                                  : std::string()));
  if (p.max_files && *p.max_files > layout.max_files())
    return clash("max_files", std::to_string(*p.max_files), std::to_string(layout.max_files()));
  return Status::ok();
}

CommitMode commit_mode(const ImageParams& p) {
  return p.atomic_commit.value_or(true) ? CommitMode::kGroup : CommitMode::kPerPage;
}

VolumeOptions volume_options(const ImageParams& p, Nand& nand, bool read_only) {
  VolumeOptions o;
  o.read_only = read_only;
  const StoreParams run_time = p.run_time();
  o.remount = remount_opener(nand, &run_time);
  if (p.cache_chunks) o.cache_chunks = *p.cache_chunks;
  if (p.owner_cache) o.owner_cache_pages = *p.owner_cache;
  if (p.logical_clock) o.logical_clock = *p.logical_clock;
  if (p.track_changes) o.track_changes = *p.track_changes;
  return o;
}

// `nvm`: where the NVM goes (params.nvm_path; what format may replace there).
static Status create_new(const std::string& path, const ImageParams& params,
                         const std::string& main_name, std::unique_ptr<Image>* out,
                         NvmPlacement nvm = {}) {
  nvm.path = params.nvm_path.value_or("");
  const Geometry g = params.geometry();
  PDL_TRY(g.validate());
  StoreParams sp;
  // Before creating the file: a bad parameter leaves no file behind.
  PDL_TRY(image_store_params(params, g, &sp));
  auto img = std::make_unique<Image>();
  img->path = path;
  img->created = true;
  // The path did not exist (open_image) or was unlinked (format_image): a file there is ours,
  // and a failure — an error or an exception (out of memory sizing the store's tables) —
  // removes it. Not when the device is busy: someone else created it meanwhile and holds it.
  // An NVM file that did not exist before is ours too.
  struct stat nvm_st;
  const bool nvm_is_new = !nvm.path.empty() && ::stat(nvm.path.c_str(), &nvm_st) != 0;
  auto remove_ours = [&] {
    img.reset();
    ::unlink(path.c_str());  // our own half-made image
    if (nvm_is_new) ::unlink(nvm.path.c_str());
  };
  std::unique_ptr<EmulatedNand> nand;
  Status st;
  try {
    st = EmulatedNand::create_file(path, g, &nand, nvm);
  } catch (...) {
    remove_ours();
    throw;
  }
  if (!st.is_ok()) {
    if (!st.is(Errc::kBusy)) remove_ours();
    return st;
  }
  img->nand = std::move(nand);
  try {
    st = format_volume(*img, params, main_name);
  } catch (...) {
    remove_ours();
    throw;
  }
  if (!st.is_ok()) {
    remove_ours();
    return st;
  }
  *out = std::move(img);
  return Status::ok();
}

Status open_image(const std::string& path, const ImageParams& params, ImageMode mode,
                  bool read_only, const std::string& main_name, std::unique_ptr<Image>* out) {
  if (params.mtd || MtdNand::is_mtd_path(path))
    return open_mtd_image(params.mtd.value_or(path), params, mode, read_only, main_name, out);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT)
      return Status::error(Errc::kIoError, "cannot access " + path + ": " + strerror(errno));
    if (mode != ImageMode::kCreate)
      return Status::error(Errc::kNotFound, "no image at " + path);
    return create_new(path, params, main_name, out);
  }
  if (!S_ISREG(st.st_mode) || !EmulatedNand::is_image_file(path))
    return Status::error(Errc::kInvalidArgument,
                         path + " exists but is not a pdl image (" +
                             (S_ISREG(st.st_mode) ? (st.st_size == 0 ? "an empty file"
                                                                     : "some other file")
                                                  : "not a regular file") +
                             "); it was left untouched");
  auto img = std::make_unique<Image>();
  img->path = path;
  std::unique_ptr<EmulatedNand> nand;
  Status s = EmulatedNand::open_file(path, &nand, read_only, params.nvm_path.value_or(""));
  if (s.is(Errc::kBusy)) return busy(path);
  PDL_TRY(s);
  img->nand = std::move(nand);
  PDL_TRY(mount_image(*img, params, read_only));
  *out = std::move(img);
  return Status::ok();
}

Status mount_image(Image& img, const ImageParams& params, bool read_only) {
  Nand& nand = *img.nand;
  const NandCounters c0 = nand.counters();
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<PageStore> store;
  const StoreParams run_time = params.run_time();
  ClientTables client;  // the Volume's tables, if the store came from a checkpoint
  PDL_TRY(mount_store(nand, &store, &img.mount, CommitMode::kPerPage, &run_time, &client));
  if (!params.volume_tables) client.clear();
  const StoreParams sp = store->params();
  std::unique_ptr<Volume> vol;
  // An image of an older format is brought up to date by its first writable open; then the
  // store runs atomic groups (each Volume sync one commit: what the VFS's in-memory journal
  // relies on) unless the opener asked for the journal on flash (commit=journal: the store
  // commits page by page, [PDL]'s engine, as before atomic commit existed).
  if (params.wear_level) store->set_wear_level(*params.wear_level);
  Status s = read_only ? Status::ok() : upgrade_store(nand, *store);
  if (s.is_ok() && !store->legacy_format()) s = store->set_commit_mode(commit_mode(params));
  // The Volume's tables from the checkpoint (it reads its pages if they do not fit).
  if (s.is_ok())
    s = Volume::open(std::move(store), volume_options(params, nand, read_only), &vol,
                     client.section, client.replayed ? &client.touched : nullptr);
  if ((s.is(Errc::kFull) || s.is(Errc::kHostFull)) && !read_only) {
    // No room for the mount's clean-up (a chip at the end of its life, or one filled up to a
    // write that failed): mounted again, from what is on flash as after a crash, without the
    // clean-up and read-only, so that everything committed can still be read.
    PDL_TRY(mount_store(nand, &store, &img.mount, CommitMode::kPerPage, &run_time));
    if (params.wear_level) store->set_wear_level(*params.wear_level);
    if (!store->legacy_format()) PDL_TRY(store->set_commit_mode(commit_mode(params)));
    VolumeOptions o = volume_options(params, nand, true);
    o.read_only_why = (s.is(Errc::kFull) ? "the chip is full (" : "no room on the host (") +
                      std::string(s.message()) + ")";
    s = Volume::open(std::move(store), o, &vol);
  }
  PDL_TRY(s);
  PDL_TRY(check_params_match(params, nand, sp, vol->layout()));
  img.volume = std::move(vol);
  const NandCounters& c1 = nand.counters();
  img.open.page_reads = c1.page_reads - c0.page_reads;
  img.open.spare_reads = c1.spare_reads - c0.spare_reads;
  img.open.programs = c1.programs - c0.programs;
  img.open.sim_us = c1.sim_us - c0.sim_us;
  img.open.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return Status::ok();
}

Status image_store_params(const ImageParams& params, const Geometry& g, StoreParams* out,
                          std::string* why_off) {
  StoreParams sp = params.store_params();
  std::string why;
  if (params.checkpoint == false) {
    why = "checkpoint=off";
  } else {
    sp.checkpoint = true;
    uint32_t area = 0;
    const Status st = checkpoint_area_for(sp, g, &area);
    if (params.checkpoint == true) {
      PDL_TRY(st);  // asked for: a chip it does not fit is an error
    } else if (!st.is_ok()) {
      why = std::string(st.message());
    } else if (area > g.blocks / 8) {
      why = "the chip is too small for a checkpoint area: it needs " + std::to_string(area) +
            " of its " + std::to_string(g.blocks) + " blocks (more than 1/8)";
    }
    if (!why.empty()) sp.checkpoint = false;
  }
  sp.checkpoint_blocks = 0;
  PDL_TRY(resolve_store_params(&sp, g));  // (the shared checks; the area's were made above)
  if (why_off) *why_off = why;
  *out = params.store_params();
  out->checkpoint = sp.checkpoint;
  return Status::ok();
}

Status format_volume(Image& img, const ImageParams& params, const std::string& main_name) {
  std::unique_ptr<PageStore> store;
  StoreParams sp;
  PDL_TRY(image_store_params(params, img.nand->geometry(), &sp));
  PDL_TRY(format_store(*img.nand, sp, &store, commit_mode(params)));
  return Volume::format(std::move(store), params.max_files.value_or(0), main_name,
                        volume_options(params, *img.nand, false), &img.volume);
}

// kExists naming what the pdl image at `path` holds (files, method, size) if it holds any
// file, or if it cannot be read (a damaged image may still be salvaged); kBusy if in use.
// (An image whose NVM is in a file of its own is read with the caller's nvm_path.)
static Status check_replaceable(const std::string& path, const ImageParams& params) {
  std::unique_ptr<Image> img;
  ImageParams just_nvm;
  just_nvm.nvm_path = params.nvm_path;
  Status st = open_image(path, just_nvm, ImageMode::kOpen, /*read_only=*/true, "", &img);
  // The new image's nvm_path may not be the old one's business (its NVM inside, or none).
  if (st.is(Errc::kInvalidArgument) && params.nvm_path)
    st = open_image(path, ImageParams(), ImageMode::kOpen, /*read_only=*/true, "", &img);
  if (st.is(Errc::kBusy)) return st;
  const std::string keep = "; refusing to replace it (--force does)";
  if (!st.is_ok())
    return Status::error(Errc::kExists, path + " is a pdl image that cannot be read (" +
                                            std::string(st.message()) + ")" + keep);
  const std::vector<FileInfo> files = img->volume->list();
  if (files.empty()) return Status::ok();  // nothing to lose
  StoreParams sp;
  {
    auto guard = img->volume->lock();
    sp = img->volume->store().params();
  }
  std::string what;
  uint64_t bytes = 0;
  for (size_t i = 0; i < files.size(); i++) {
    bytes += files[i].size;
    if (i < 3) what += (i ? ", " : "") + files[i].name;
  }
  if (files.size() > 3) what += ", ...";
  return Status::error(
      Errc::kExists,
      path + " is a pdl image holding " + std::to_string(files.size()) +
          (files.size() == 1 ? " file" : " files") + " (" + what + "; " + std::to_string(bytes) +
          " bytes), method " + method_name(sp.method) + ", size " +
          format_size(img->nand->geometry().data_bytes()) + keep);
}

Status format_image(const std::string& path, const ImageParams& params,
                    const std::string& main_name, bool force, std::unique_ptr<Image>* out) {
  if (params.mtd || MtdNand::is_mtd_path(path))
    return format_mtd_image(params.mtd.value_or(path), params, main_name, force, out);
  NvmPlacement nvm;
  nvm.force = force;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    // The image being replaced may own the NVM file there: the new one may replace it.
    std::array<uint8_t, 16> old_id;
    if (EmulatedNand::nvm_identity(path, &old_id).is_ok()) nvm.replaceable = old_id;
    if (!force && !EmulatedNand::is_image_file(path))
      return Status::error(Errc::kInvalidArgument,
                           path + " exists and is not a pdl image; refusing to overwrite it");
    // An image holding files (or one that cannot be read) is kept unless `force`.
    if (!force && EmulatedNand::is_image_file(path)) PDL_TRY(check_replaceable(path, params));
    // Take the image's lock before replacing it, so an image in use is never destroyed.
    if (EmulatedNand::is_image_file(path)) {
      std::unique_ptr<EmulatedNand> held;
      Status s = EmulatedNand::open_file(path, &held, false, params.nvm_path.value_or(""));
      if (s.is(Errc::kInvalidArgument)) s = EmulatedNand::open_file(path, &held);
      if (s.is(Errc::kBusy)) return busy(path);
    }
    if (::unlink(path.c_str()) != 0)
      return Status::error(Errc::kIoError, "cannot replace " + path + ": " + strerror(errno));
  }
  return create_new(path, params, main_name, out, nvm);
}

}  // namespace pdl
