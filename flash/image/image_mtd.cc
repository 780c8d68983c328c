// image_mtd.cc — images on raw NAND through Linux MTD (/dev/mtdN): open, create, format.
//
// An MTD device is an image like a file (image.h), with these differences:
//   * it always exists, so "create" means formatting it — done only when it is blank (the
//     first page of every good block erased); a device holding anything else is refused
//     untouched, and only `pdl format --force` erases it;
//   * a store may use only the first blocks of the device (size= at format); the superblock
//     records how many, and later opens follow it;
//   * the geometry is the device's: page=, pages_per_block= and spare= may only repeat it, and
//     erase_limit= (emulated wear-out) has no meaning;
//   * ownership is the same flock, on the device node.
#include <algorithm>

#include "flash/device/mtd_nand.h"
#include "flash/store/superblock.h"
#include "flash/image/image_internal.h"

namespace pdl {
namespace {

Status open_device(const std::string& dev, const ImageParams& params, bool read_only,
                   std::unique_ptr<MtdNand>* out) {
  MtdOptions o;
  o.read_only = read_only;
  o.partial_programs = params.nop.value_or(0);
  const Status s = MtdNand::open(dev, o, out);
  if (s.is(Errc::kBusy)) return busy(dev);
  PDL_TRY(s);
  const Geometry& g = (*out)->geometry();
  auto differs = [&](const char* key, uint64_t asked, uint64_t has) {
    return Status::error(Errc::kInvalidArgument, std::string(key) + "=" + std::to_string(asked) +
                                                     " contradicts " + dev + ", which has " +
                                                     std::to_string(has));
  };
  if (params.page && *params.page != g.page_data) return differs("page", *params.page, g.page_data);
  if (params.pages_per_block && *params.pages_per_block != g.pages_per_block)
    return differs("pages_per_block", *params.pages_per_block, g.pages_per_block);
  if (params.spare && *params.spare != g.page_spare)
    return differs("spare", *params.spare, g.page_spare);
  if (params.erase_limit)
    return Status::error(Errc::kInvalidArgument,
                         "erase_limit= emulates wear-out: it has no meaning on " + dev);
  return Status::ok();
}

// Use the first size= bytes of the device (a whole number of erase blocks).
Status apply_size(MtdNand& nand, const ImageParams& params) {
  if (!params.size) return Status::ok();
  const Geometry& g = nand.geometry();
  const uint64_t block_bytes = uint64_t(g.page_data) * g.pages_per_block;
  const std::string asked = "size=" + format_size(*params.size);
  if (*params.size % block_bytes != 0)
    return Status::error(Errc::kInvalidArgument, asked + " is not a whole number of " +
                                                     format_size(block_bytes) + " erase blocks");
  if (!nand.limit_blocks(uint32_t(std::min<uint64_t>(*params.size / block_bytes, 0xFFFFFFFFu))))
    return Status::error(Errc::kInvalidArgument,
                         asked + " does not fit " + nand.info().path + " (8 erase blocks .. " +
                             format_size(nand.info().size) + ")");
  return Status::ok();
}

// Blank: the first page of every good block reads erased (data and free spare all 0xFF).
Status is_blank(MtdNand& nand, bool* blank) {
  const Geometry& g = nand.geometry();
  std::vector<uint8_t> data(g.page_data), spare(g.page_spare);
  auto erased = [](const std::vector<uint8_t>& v) {
    return std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0xFF; });
  };
  *blank = false;
  for (uint32_t b = 0; b < g.blocks; b++) {
    if (nand.is_bad(b)) continue;
    const Status st = nand.read(Ppa(b) * g.pages_per_block, data, spare);
    if (st.is(Errc::kCorrupt)) return Status::ok();  // not erased: ECC fails on it
    PDL_TRY(st);
    if (!erased(data) || !erased(spare)) return Status::ok();
  }
  *blank = true;
  return Status::ok();
}

std::string format_hint(const std::string& dev) {
  return "`pdl format --mtd " + dev + " --force` erases it";
}

}  // namespace

Status open_mtd_image(const std::string& dev, const ImageParams& params, ImageMode mode,
                      bool read_only, const std::string& main_name, std::unique_ptr<Image>* out) {
  std::unique_ptr<MtdNand> nand;
  PDL_TRY(open_device(dev, params, read_only, &nand));
  auto img = std::make_unique<Image>();
  img->path = dev;
  uint32_t recorded = 0;
  const Status sb = peek_superblock_blocks(*nand, &recorded);
  if (sb.is_ok()) {
    if (!nand->limit_blocks(recorded))
      return Status::error(Errc::kCorrupt, dev + ": the superblock records " +
                                               std::to_string(recorded) +
                                               " erase blocks, the device has fewer");
    // Identifying the device is not the store's work (an image file's header read is not
    // counted either): the counters start at the mount, as on the emulator.
    nand->reset_counters();
    img->nand = std::move(nand);
    PDL_TRY(mount_image(*img, params, read_only));
  } else {
    if (!sb.is(Errc::kCorrupt)) return sb;  // the device failed the read
    if (mode != ImageMode::kCreate || read_only)
      return Status::error(Errc::kNotFound, dev + " holds no pdl store (`pdl format --mtd " +
                                                dev + "` makes one)");
    bool blank;
    PDL_TRY(is_blank(*nand, &blank));
    if (!blank)
      return Status::error(Errc::kInvalidArgument,
                           dev + " holds no pdl store and is not blank: left untouched (" +
                               format_hint(dev) + ")");
    PDL_TRY(apply_size(*nand, params));
    nand->reset_counters();
    img->created = true;
    img->nand = std::move(nand);
    PDL_TRY(format_volume(*img, params, main_name));
  }
  *out = std::move(img);
  return Status::ok();
}

Status format_mtd_image(const std::string& dev, const ImageParams& params,
                        const std::string& main_name, bool force, std::unique_ptr<Image>* out) {
  std::unique_ptr<MtdNand> nand;
  PDL_TRY(open_device(dev, params, false, &nand));
  uint32_t recorded;
  if (!force && !peek_superblock_blocks(*nand, &recorded).is_ok()) {
    bool blank;
    PDL_TRY(is_blank(*nand, &blank));
    if (!blank)
      return Status::error(Errc::kInvalidArgument, dev + " holds data that is not a pdl store: "
                                                         "left untouched (" + format_hint(dev) +
                                                         ")");
  }
  PDL_TRY(apply_size(*nand, params));
  nand->reset_counters();
  auto img = std::make_unique<Image>();
  img->path = dev;
  img->created = true;
  img->nand = std::move(nand);
  PDL_TRY(format_volume(*img, params, main_name));
  *out = std::move(img);
  return Status::ok();
}

}  // namespace pdl
