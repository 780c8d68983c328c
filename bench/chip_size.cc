// chip_size.cc — see chip_size.h.
#include "bench/chip_size.h"

#include <algorithm>

#include "flash/common/split.h"
#include "flash/image/open_store.h"

namespace pdl::bench {

void set_uri_params(const std::string& params, ImageParams* ip) {
  for (const std::string& kv : split_list(params, '&')) {
    const size_t eq = kv.find('=');
    (void)ip->set(kv.substr(0, eq), kv.substr(eq + 1));
  }
}

uint64_t chip_bytes_for(uint64_t db_bytes, const std::vector<MethodPreset>& methods,
                        uint32_t page, uint32_t pages_per_block) {
  const uint64_t block = uint64_t(page) * pages_per_block;
  const uint64_t need = db_bytes + 64 * uint64_t(page);
  const uint64_t first = std::max<uint64_t>(16, (2 * need + block - 1) / block) * block;
  for (uint64_t chip = first; chip <= 16 * first; chip += 4 * block) {
    bool fits = true;
    for (const MethodPreset& m : methods) {
      ImageParams ip;
      set_uri_params(m.uri_params(page, chip, pages_per_block), &ip);
      ip.page = page;
      ip.size = chip;
      StoreParams sp = ip.store_params();
      if (!resolve_store_params(&sp, ip.geometry()).is_ok() ||
          double(sp.logical_pages) * page < 2.0 * double(need)) {
        fits = false;
        break;
      }
    }
    if (fits) return chip;
  }
  return first;
}

}  // namespace pdl::bench
