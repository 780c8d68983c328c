// image_open.cc — opening an existing image read-only for the inspecting commands.
#include "tools/image_open.h"

namespace pdl::tool {

Status open_read_only(const std::string& path, std::unique_ptr<Image>* out) {
  if (path.empty()) return Status::error(Errc::kInvalidArgument, "empty image path");
  return open_image(path, ImageParams(), ImageMode::kOpen, /*read_only=*/true, "", out);
}

}  // namespace pdl::tool
