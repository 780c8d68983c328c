// image_internal.h — what image.cc (image files) and image_mtd.cc (MTD devices) share: the
// steps of opening and formatting an image once its device is open. Not a public interface.
#pragma once

#include <memory>
#include <string>

#include "flash/image/image.h"

namespace pdl {

// kBusy "image PATH is in use by pid N (comm)".
Status busy(const std::string& path);
VolumeOptions volume_options(const ImageParams& p, Nand& nand, bool read_only);
// How the image's store commits: atomic groups unless commit=journal (ImageParams).
CommitMode commit_mode(const ImageParams& p);
// Mount img.nand's store and open its Volume into img (read-only if asked, or if the mount's
// clean-up finds no room); then check that `params` agree with what is on flash.
Status mount_image(Image& img, const ImageParams& params, bool read_only);
// Format img.nand with `params` and open the new Volume into img.
Status format_volume(Image& img, const ImageParams& params, const std::string& main_name);

// The MTD counterparts of open_image / format_image (image_mtd.cc).
Status open_mtd_image(const std::string& dev, const ImageParams& params, ImageMode mode,
                      bool read_only, const std::string& main_name, std::unique_ptr<Image>* out);
Status format_mtd_image(const std::string& dev, const ImageParams& params,
                        const std::string& main_name, bool force, std::unique_ptr<Image>* out);

}  // namespace pdl
