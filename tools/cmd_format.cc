// cmd_format.cc — `pdl format IMAGE [options]`: create a new, empty image.
//
// Every parameter is checked before the file system is touched (geometry, method parameters
// and the volume layout), so a bad parameter never costs an existing image. An existing path
// is replaced only if it is a pdl image holding no file and not in use — or, with --force, any
// regular file (format_image says what a refused image holds).
#include <sys/stat.h>

#include "flash/device/emulated_nand.h"
#include "flash/device/mtd_nand.h"
#include "flash/image/image.h"
#include "flash/image/open_store.h"
#include "flash/volume/volume_format.h"
#include "tools/commands.h"

namespace pdl::tool {
namespace {

// Tool option -> ImageParams key.
struct ParamOption {
  const char* option;
  const char* key;
};
constexpr ParamOption kParamOptions[] = {
    {"method", "method"},   {"max-diff", "max_diff"},   {"obsolete", "obsolete"},
    {"log-region", "log_region"}, {"log-sector", "log_sector"},
    {"ftl", "ftl"},         {"log-blocks", "log_blocks"}, {"sb-slots", "sb_slots"},
    {"page", "page"},       {"pages-per-block", "pages_per_block"},   {"spare", "spare"},
    {"size", "size"},       {"nop", "nop"},             {"max-files", "max_files"},
    {"erase-limit", "erase_limit"}, {"nvm", "nvm"}, {"nvm-path", "nvm_path"},
    {"checkpoint", "checkpoint"},
};

int format_and_report(const Command& cmd, const std::string& path, const ImageParams& params,
                      const std::string& db, bool force);

int run_format(const Command& cmd, const Args& a) {
  const std::string& path = a.pos[0];
  ImageParams params;
  for (const ParamOption& p : kParamOptions) {
    if (!a.has(p.option)) continue;
    const Status st = params.set(p.key, a.get(p.option));
    if (!st.is_ok()) return usage_error(cmd, "--" + std::string(p.option) + ": " +
                                                 std::string(st.message()));
  }
  const std::string db = a.has("db") ? a.get("db") : "";
  if (!db.empty()) {
    const Status st = check_name(db);
    if (!st.is_ok()) return usage_error(cmd, "--db " + db + ": " + std::string(st.message()));
  }
  const bool force = a.has("force");
  if (MtdNand::is_mtd_path(path)) return format_and_report(cmd, path, params, db, force);
  // Check everything format_image would reject late, after replacing an existing image.
  const Geometry g = params.geometry();
  if (Status st = g.validate(); !st.is_ok()) return usage_error(cmd, std::string(st.message()));
  StoreParams sp = params.store_params();
  if (Status st = resolve_store_params(&sp, g); !st.is_ok())
    return usage_error(cmd, std::string(st.message()));
  VolumeLayout layout;
  if (Status st = VolumeLayout::plan(sp.logical_pages, g.page_data, params.max_files.value_or(0),
                                     &layout);
      !st.is_ok())
    return usage_error(cmd, std::string(st.message()));

  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode))
      return fail(cmd, kExitImage, path + " exists and is not a regular file; left untouched");
    if (!force && !EmulatedNand::is_image_file(path))
      return fail(cmd, kExitImage,
                  path + " exists and is not a pdl image; refusing to overwrite it "
                         "(--force replaces it)");
  }
  return format_and_report(cmd, path, params, db, force);
}

int format_and_report(const Command& cmd, const std::string& path, const ImageParams& params,
                      const std::string& db, bool force) {
  std::unique_ptr<Image> img;
  Status s = format_image(path, params, db, force, &img);
  // A parameter the image refuses is a usage error; a device that cannot be used is not.
  if (s.is(Errc::kInvalidArgument) && !MtdNand::is_mtd_path(path))
    return usage_error(cmd, std::string(s.message()));
  if (!s.is_ok()) return fail_status(cmd, s);
  StoreParams made;
  {
    auto guard = img->volume->lock();
    made = img->volume->store().params();
  }
  const VolumeLayout& L = img->volume->layout();
  std::printf("formatted %s: %s; %s; %u logical pages, %u data pages, %u file slots\n",
              path.c_str(), img->nand->geometry().describe().c_str(), made.describe().c_str(),
              made.logical_pages, L.data_lpns, L.max_files());
  s = img->close();
  if (!s.is_ok()) return fail_status(cmd, s);
  return kExitOk;
}

}  // namespace

const Command kFormatCommand = {
    "format",
    "IMAGE [--method pdl|opu|ipu|ipl|ftl|stablebuffer] [--max-diff N]\n"
    "       [--obsolete spare|memory] [--log-region SIZE] [--log-sector N]\n"
    "       [--ftl page|bast|fast] [--log-blocks N] [--sb-slots N]\n"
    "       [--page N] [--pages-per-block N] [--spare N]\n"
    "       [--size SIZE] [--nop N] [--max-files N] [--checkpoint on|off] [--db NAME]\n"
    "       [--force]",
    "create a new, empty image (an emulated NAND chip in a sparse file)",
    "Replaces IMAGE if it is a pdl image holding no file that no process has open; an image\n"
    "holding files (the message names them, the method and the size), one that cannot be\n"
    "read and any other existing file are refused (exit 3) unless --force.\n"
    "Unset parameters take the defaults of the paper's Table 1 and of the VFS (method pdl,\n"
    "max-diff 256, obsolete memory, 2048-byte pages, 64 pages per block, 256M, NOP 4, 256\n"
    "files). Sizes take K, M, G, T suffixes (binary); a chip has at least 8 erase blocks\n"
    "(1M with the default geometry) and at most 256G.\n"
    "Methods ftl and stablebuffer make a commodity FTL device (eMMC/SD-like) on the chip:\n"
    "--ftl picks its translation layer (page mapping, or the BAST/FAST log-block FTLs with\n"
    "--log-blocks, default 16); stablebuffer stages page writes in --sb-slots pages of the\n"
    "same device. They have no atomic commit: SQLite keeps its journal on the device.\n"
    "With --mtd DEV (raw NAND through Linux MTD) the geometry is the device's; --size uses\n"
    "its first SIZE bytes; a device holding anything but a pdl store or erased blocks is\n"
    "refused unless --force.\n"
    "With --nvm the store keeps part of its state in byte-addressable NVM (PCRAM timing):\n"
    "inside IMAGE, or with --nvm-path in a file of its own, which the other commands then\n"
    "need (--nvm-path); an existing file there is replaced only if it is this image's NVM\n"
    "file, or with --force.\n",
    {
        {"method", 0, "pdl|opu|ipu|ipl|ftl|stablebuffer",
         "page-update method, or an FTL device (default pdl)"},
        {"max-diff", 0, "N", "Max_Differential_Size in bytes, record header included (pdl)"},
        {"obsolete", 0, "spare|memory", "how obsolete pages are marked (pdl, opu; default memory)"},
        {"log-region", 0, "SIZE", "log region per erase block (ipl; default 9/64 of the block)"},
        {"log-sector", 0, "N", "bytes of a log sector, 128|256|512 (ipl; default 512; needs "
                               "nop >= page/N)"},
        {"ftl", 0, "page|bast|fast",
         "flash translation layer of an FTL device (ftl, stablebuffer; default page)"},
        {"log-blocks", 0, "N", "log blocks of the BAST/FAST FTL (default 16)"},
        {"sb-slots", 0, "N", "StableBuffer staging pages on the device (stablebuffer; default: "
                             "the engine's)"},
        {"page", 0, "N", "page data bytes, a power of two 512..32768 (default 2048)"},
        {"pages-per-block", 0, "N", "pages per erase block (default 64)"},
        {"spare", 0, "N", "page spare (OOB) bytes, 32..4096 (default page/32, at least 32)"},
        {"size", 0, "SIZE", "chip size, data areas: 1M (8 blocks) .. 256G (default 256M)"},
        {"nop", 0, "N", "partial programs allowed per page (default 4)"},
        {"erase-limit", 0, "N", "erases a block endures: emulated wear-out (default unlimited)"},
        {"nvm", 0, "SIZE", "NVM (PCRAM) beside the chip, a multiple of 8 bytes up to 1G, used "
                           "by the store (pdl, ipl; default none)"},
        {"nvm-path", 0, "PATH", "keep the NVM in this file, through libpmem (real persistent "
                                "memory on a DAX file system); default: inside IMAGE; needed "
                                "with --mtd"},
        {"max-files", 0, "N", "directory slots (default 256)"},
        {"checkpoint", 0, "on|off", "a checkpoint area at the chip's end, so that an open "
                                    "after a clean close reads it instead of scanning (default "
                                    "on where it takes at most 1/8 of the blocks)"},
        {"db", 0, "NAME", "the database file the VFS opens by default"},
        {"force", 0, nullptr, "replace IMAGE even if it holds files or is not a pdl image"},
    },
    1,
    1,
    run_format,
};

}  // namespace pdl::tool
