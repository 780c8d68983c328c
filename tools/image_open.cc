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
  return open_read_only(path, out, a.has("nvm-path") ? a.get("nvm-path") : "");
}

}  // namespace pdl::tool
