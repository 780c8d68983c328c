// image_open.h — how the inspecting commands (info, ls, cat, fsck, dump) open an image.
//
// Always an existing image, never created; the Volume is read-only (VolumeOptions::read_only:
// no clean-up of what a crash left, no writes at close), and mount itself writes nothing, so
// these commands never modify the image. A file that is not a pdl image is refused untouched
// (open_image checks the magic before anything else); an image another process holds is
// refused with Errc::kBusy naming the holder (pid and command).
#pragma once

#include <memory>
#include <string>

#include "flash/image/image.h"
#include "tools/cli.h"

namespace pdl::tool {

// `nvm_path`: the NVM file of an image whose NVM is in a file of its own (nvm_path=).
Status open_read_only(const std::string& path, std::unique_ptr<Image>* out,
                      const std::string& nvm_path = "");
// The same with the command's --nvm-path, --owner-cache and --volume-pages, if given
// (kNvmPathOption, kOwnerCacheOption; a bad --owner-cache is kInvalidArgument naming it).
Status open_read_only(const std::string& path, const Args& a, std::unique_ptr<Image>* out);

// --owner-cache into `p` if given; kInvalidArgument naming it if it is not 1 .. 1048576 (the
// commands check it first: a usage error).
Status owner_cache_option(const Args& a, ImageParams* p);

// The option every inspecting command takes.
inline constexpr Option kNvmPathOption = {
    "nvm-path", 0, "PATH", "the image's NVM file, if its NVM is in one (format --nvm-path)"};
// info and fsck: the Volume's owner-map cache for this open (URI key owner_cache).
inline constexpr Option kOwnerCacheOption = {
    "owner-cache", 0, "N", "owner-map pages the volume keeps in RAM (default: 64)"};

}  // namespace pdl::tool
