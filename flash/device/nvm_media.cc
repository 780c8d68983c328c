// nvm_media.cc — NVM media kept in RAM (nvm_media.h).
#include "flash/device/nvm_media.h"

#include <cstring>
#include <vector>

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

}  // namespace

std::unique_ptr<NvmMedia> create_ram_nvm(uint64_t bytes) {
  return std::make_unique<RamNvm>(bytes);
}

}  // namespace pdl::detail
