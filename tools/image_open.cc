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

Status open_read_only(const std::string& path, const Args& a, std::unique_ptr<Image>* out) {
  if (path.empty()) return Status::error(Errc::kInvalidArgument, "empty image path");
  ImageParams p;
  if (a.has("nvm-path")) p.nvm_path = a.get("nvm-path");
  if (a.has("owner-cache")) PDL_TRY(p.set("owner_cache", a.get("owner-cache")));
  return open_image(path, p, ImageMode::kOpen, /*read_only=*/true, "", out);
}

}  // namespace pdl::tool
