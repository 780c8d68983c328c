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
//   * ownership is the same flock, on the device node;
//   * NVM (nvm=) needs a file for its bytes (nvm_path=), made at format and bound to the
//     device by an identity derived from its name and geometry; a later open gives nvm_path=
//     (its size comes from the file).
#include <algorithm>
#include <cstring>

#include "flash/common/crc32c.h"
#include "flash/device/nvm_file.h"

#include "flash/device/mtd_nand.h"
#include "flash/store/superblock.h"
#include "flash/image/image_internal.h"

namespace pdl {
namespace {

Status open_device(const std::string& dev, const ImageParams& params, bool read_only,
                   std::unique_ptr<MtdNand>* out) {
  if (params.nvm && *params.nvm && !params.nvm_path)  // before any device I/O
    return Status::error(Errc::kInvalidArgument,
                         "nvm=" + format_size(*params.nvm) + " on " + dev +
                             " needs a file for the NVM's bytes (nvm_path=PATH): a raw chip has "
                             "no room of its own for them");
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

// The NVM file's owner on a raw chip, which has no header to hold a random identity: the
// device's name and geometry (an NVM file moved to another device is refused).
detail::NvmOwner mtd_owner(const MtdNand& nand) {
  const MtdInfo& in = nand.info();
  const std::string key = in.name + "|" + std::to_string(in.size) + "|" +
                          std::to_string(in.erasesize) + "|" + std::to_string(in.writesize);
  detail::NvmOwner o;
  o.name = in.path;
  for (uint32_t i = 0; i < 4; i++) {
    const std::string salted = std::to_string(i) + key;
    const uint32_t c = crc32c(reinterpret_cast<const uint8_t*>(salted.data()), salted.size());
    std::memcpy(o.id.data() + 4 * i, &c, 4);
  }
  return o;
}

// Give the device its NVM file (nvm_path=): a new one at format (`create`), else the
// existing one, whose size the file's header gives (nvm=, if set, must agree).
Status attach_nvm(MtdNand& nand, const ImageParams& params, bool create, bool force,
                  bool read_only) {
  if (!params.nvm_path) return Status::ok();
  if (create && (!params.nvm || *params.nvm == 0))
    return Status::error(Errc::kInvalidArgument,
                         "nvm_path=" + *params.nvm_path + " given without NVM (nvm=SIZE)");
  std::unique_ptr<detail::NvmMedia> nvm;
  if (create)
    PDL_TRY(detail::create_nvm_file(*params.nvm_path, *params.nvm, mtd_owner(nand), nullptr,
                                    force, &nvm));
  else
    PDL_TRY(detail::open_nvm_file(*params.nvm_path, params.nvm.value_or(0), mtd_owner(nand),
                                  read_only, &nvm));
  nand.attach_nvm(std::move(nvm));
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
    PDL_TRY(attach_nvm(*nand, params, false, false, read_only));
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
    PDL_TRY(attach_nvm(*nand, params, true, false, false));
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
  PDL_TRY(attach_nvm(*nand, params, true, force, false));
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
