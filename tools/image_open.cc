// image_open.cc — opening an existing image read-only for the inspecting commands.
#include "tools/image_open.h"

namespace pdl::tool {

Status open_read_only(const std::string& path, std::unique_ptr<Image>* out,
                      const std::string& nvm_path) {
  if (path.empty()) return Status::error(Errc::kInvalidArgument, "empty image path");
  ImageParams p;
  if (!nvm_path.empty()) p.nvm_path = nvm_path;
  return open_image(path, p, ImageMode::kOpen, /*read_only=*/true, "", out);
}

Status owner_cache_option(const Args& a, ImageParams* p) {
  if (!a.has("owner-cache")) return Status::ok();
  if (p->set("owner_cache", a.get("owner-cache")).is_ok()) return Status::ok();
  return Status::error(Errc::kInvalidArgument, "--owner-cache " + a.get("owner-cache") +
                                                   ": a number of owner-map pages, 1 .. 1048576");
}

Status open_read_only(const std::string& path, const Args& a, std::unique_ptr<Image>* out) {
  if (path.empty()) return Status::error(Errc::kInvalidArgument, "empty image path");
  ImageParams p;
  if (a.has("nvm-path")) p.nvm_path = a.get("nvm-path");
  PDL_TRY(owner_cache_option(a, &p));
  if (a.has("volume-pages")) p.volume_tables = false;
  return open_image(path, p, ImageMode::kOpen, /*read_only=*/true, "", out);
}

}  // namespace pdl::tool
