// image.h — a pdl image opened for use: the NAND device, the mounted store and its Volume.
//
// One Image per process per image path: the device is locked exclusively (a second process
// gets kBusy, with the holder's pid and name when the kernel tells them). The VFS keeps a
// registry of open Images shared by its connections; the tools and pdl-fuse open one each.
//
// open_image never modifies a file that is not a pdl image, and creates an image only when
// asked to (ImageMode::kCreate) and the path does not exist.
#pragma once

#include <memory>
#include <string>

#include "flash/device/nand.h"
#include "flash/store/page_store.h"
#include "flash/image/image_params.h"
#include "flash/volume/volume.h"

namespace pdl {

enum class ImageMode : uint8_t {
  kOpen,    // the image must exist
  kCreate,  // open, or create and format if the path does not exist
};

struct Image {
  std::string path;
  bool created = false;       // this open created the image
  MountReport mount;          // what mounting the store found and cost (empty if created)
  // What the whole open cost (empty if created): the store's mount (`mount`) plus the Volume's
  // open — from its tables in the checkpoint, or by reading its directory and owner map — and
  // a writable open's clean-up. Flash counters of the image's chip, simulated time, wall.
  struct OpenCost {
    uint64_t page_reads = 0;   // data-area reads (NandCounters::page_reads)
    uint64_t spare_reads = 0;  // spare-area-only reads
    uint64_t programs = 0;     // (a writable open's clean-up after a crash programs)
    uint64_t sim_us = 0;
    double wall_s = 0;
  } open;
  std::unique_ptr<Nand> nand;
  std::unique_ptr<Volume> volume;  // owns the PageStore; destroyed before `nand`

  // What the last close() did about a checkpoint (docs/design.md §17): Ok — written, or the
  // newest one is already this state; kUnsupported — none (read-only, a format without a
  // checkpoint area, a method that mounts by scan); another error — it failed (nothing lost:
  // the data was synced; the next mount scans).
  Status checkpoint = Status::error(Errc::kUnsupported, "not closed");

  ~Image();
  // volume->close(): persist everything (lazy mtimes, trims); then, unless read-only, write a
  // checkpoint of the store's and the Volume's tables (its outcome in `checkpoint`, not in the
  // returned status: the data is safe either way).
  Status close();
};

// `main_name`: the database file a new image's Volume records as its default ("" = none).
Status open_image(const std::string& path, const ImageParams& params, ImageMode mode,
                  bool read_only, const std::string& main_name, std::unique_ptr<Image>* out);

// Format `path` as a new image. Without `force`, an existing path is replaced only if it is a
// pdl image holding no file and no process has it open: any other file is refused with
// kInvalidArgument, a pdl image holding files (or one that cannot be read) with kExists naming
// what it holds (files, method, size), an image in use with kBusy. The returned Image is open.
Status format_image(const std::string& path, const ImageParams& params,
                    const std::string& main_name, bool force, std::unique_ptr<Image>* out);

// The store parameters a new image of `params` on `g` gets: ImageParams::store_params with
// the checkpoint decided — off if checkpoint=off; on if checkpoint=on (an error if the area
// does not fit); unset: on where it fits (at most 1/8 of the blocks), else off and `why_off`
// says why ("" when on). Checked as format_store will (kInvalidArgument naming the parameter).
Status image_store_params(const ImageParams& params, const Geometry& g, StoreParams* out,
                          std::string* why_off = nullptr);

// Check that the parameters set in `params` agree with an open store; kInvalidArgument naming
// the first parameter that contradicts it.
Status check_params_match(const ImageParams& params, const Nand& nand, const StoreParams& sp,
                          const VolumeLayout& layout);

// "pid 1234 (pdl-fuse)" for the process holding an flock on `path`, or "" if unknown.
std::string lock_holder(const std::string& path);

}  // namespace pdl
