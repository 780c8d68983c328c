// nvm_media.cc — NVM media kept in RAM, and in an image file's NVM area (nvm_media.h).
#include "flash/device/nvm_media.h"

#include <unistd.h>

#include <cstring>
#include <vector>

#include "flash/device/host_file.h"

namespace pdl::detail {
namespace {

class RamNvm final : public NvmMedia {
 public:
  explicit RamNvm(uint64_t bytes) : bytes_(bytes, 0) {}
  uint64_t size() const override { return bytes_.size(); }
  Status read(uint64_t off, std::span<uint8_t> out) override {
    if (!out.empty()) std::memcpy(out.data(), bytes_.data() + off, out.size());
    return Status::ok();
  }
  Status write(uint64_t off, std::span<const uint8_t> in) override {
    if (!in.empty()) std::memcpy(bytes_.data() + off, in.data(), in.size());
    return Status::ok();
  }
  std::string describe() const override { return "RAM"; }

 private:
  std::vector<uint8_t> bytes_;
};

// The image's NVM area: one pread or pwrite per access (a write is torn by the host process
// dying only at a host page boundary). flush() is the image's: its fsync covers this area.
class ImageNvm final : public NvmMedia {
 public:
  ImageNvm(int fd, std::string path, uint64_t off, uint64_t bytes, bool read_only)
      : fd_(fd), path_(std::move(path)), off_(off), bytes_(bytes), read_only_(read_only) {}
  ~ImageNvm() override { close(fd_); }
  uint64_t size() const override { return bytes_; }
  Status read(uint64_t off, std::span<uint8_t> out) override {
    return pread_all(fd_, path_, out.data(), out.size(), off_ + off);
  }
  Status write(uint64_t off, std::span<const uint8_t> in) override {
    if (read_only_) return Status::error(Errc::kReadOnly, "image opened read-only");
    return pwrite_all(fd_, path_, in.data(), in.size(), off_ + off);
  }
  std::string describe() const override { return "image file " + path_; }

 private:
  int fd_;
  std::string path_;
  uint64_t off_, bytes_;
  bool read_only_;
};

}  // namespace

std::unique_ptr<NvmMedia> open_image_nvm(int fd, const std::string& path, uint64_t off,
                                         uint64_t bytes, bool read_only) {
  return std::make_unique<ImageNvm>(fd, path, off, bytes, read_only);
}

std::unique_ptr<NvmMedia> create_ram_nvm(uint64_t bytes) {
  return std::make_unique<RamNvm>(bytes);
}

}  // namespace pdl::detail
