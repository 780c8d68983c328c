// ram_media.cc — an emulated chip's stored bytes in lazily zeroed anonymous memory; erasing
// returns whole host pages to the kernel. Nothing outlives the process, so nothing is logged.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "flash/device/nand_media.h"

namespace pdl::detail {
namespace {

class RamMedia final : public NandMedia {
 public:
  RamMedia(uint8_t* base, uint64_t bytes, uint64_t block_bytes, uint32_t blocks,
           uint32_t pages_per_block)
      : base_(base),
        bytes_(bytes),
        block_bytes_(block_bytes),
        page_bytes_(block_bytes / pages_per_block),
        erase_counts_(blocks, 0) {}
  ~RamMedia() override { munmap(base_, bytes_); }
  Status read(uint64_t off, uint8_t* buf, size_t n) override {
    std::memcpy(buf, base_ + off, n);
    return Status::ok();
  }
  const uint8_t* view(uint64_t off, size_t) override { return base_ + off; }
  Status write(uint64_t off, const uint8_t* buf, size_t n, bool) override {
    std::memcpy(base_ + off, buf, n);
    return Status::ok();
  }
  Status erase(uint32_t block, std::span<const uint8_t> zero_pages, uint32_t count) override {
    const uint64_t off = block * block_bytes_;
    bool all = !zero_pages.empty();
    for (uint8_t z : zero_pages) all = all && z;
    if (all) {
      zero(off, block_bytes_);
    } else {
      for (size_t p = 0; p < zero_pages.size(); p++)
        if (zero_pages[p]) zero(off + p * page_bytes_, page_bytes_);
    }
    erase_counts_[block] = count;
    return Status::ok();
  }
  uint32_t erase_count(uint32_t block) const override { return erase_counts_[block]; }

 private:
  void zero(uint64_t off, uint64_t n) {
    const uint64_t hp = uint64_t(sysconf(_SC_PAGESIZE));
    const uint64_t a = (off + hp - 1) / hp * hp, b = (off + n) / hp * hp;
    if (b <= a) {
      std::memset(base_ + off, 0, n);
      return;
    }
    std::memset(base_ + off, 0, a - off);
    std::memset(base_ + b, 0, off + n - b);
    if (madvise(base_ + a, b - a, MADV_DONTNEED) != 0) std::memset(base_ + a, 0, b - a);
  }
  uint8_t* base_;
  uint64_t bytes_;
  uint64_t block_bytes_;
  uint64_t page_bytes_;
  std::vector<uint32_t> erase_counts_;
};

}  // namespace

Status create_ram_media(uint64_t block_bytes, uint32_t blocks, uint32_t pages_per_block,
                        std::unique_ptr<NandMedia>* out) {
  const uint64_t bytes = block_bytes * blocks;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return Status::error(Errc::kIoError, "cannot map emulated chip memory");
  out->reset(new RamMedia(static_cast<uint8_t*>(p), bytes, block_bytes, blocks, pages_per_block));
  return Status::ok();
}

}  // namespace pdl::detail
