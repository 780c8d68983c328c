// page_view.cc — raw page reads and their one-line descriptions.
#include "tools/page_view.h"

#include "flash/common/crc32c.h"
#include "tools/cli.h"

namespace pdl::tool {

Status read_page_view(Nand& nand, Ppa ppa, PageView* out) {
  const Geometry& g = nand.geometry();
  std::vector<uint8_t> spare(g.page_spare);
  out->data.clear();
  out->data_crc_ok = false;
  PDL_TRY(nand.read(ppa, {}, spare));
  out->state = spare_decode(spare, &out->hdr);
  if (out->state != SpareState::kValid) return Status::ok();
  out->data.resize(g.page_data);
  PDL_TRY(nand.read(ppa, out->data, {}));
  out->data_crc_ok = crc32c(out->data.data(), out->data.size()) == out->hdr.data_crc;
  return Status::ok();
}

const char* page_type_name(PageType t) {
  switch (t) {
    case PageType::kSuperblock: return "superblock";
    case PageType::kBase: return "base";
    case PageType::kDifferential: return "differential";
    case PageType::kIplData: return "data";
    case PageType::kIplEmpty: return "empty-merge marker";
    case PageType::kFtlTrim: return "trim record";
  }
  return "unknown";
}

std::string describe_page(const PageView& v) {
  if (v.state == SpareState::kErased) return "erased";
  if (v.state == SpareState::kCorrupt) return "torn (spare header fails its CRC or version)";
  const SpareHeader& h = v.hdr;
  std::string s = page_type_name(h.type);
  if (h.type == PageType::kBase) s += strf(", lpn %u", h.logical_page());
  if (h.type == PageType::kDifferential)
    s += strf(", %u record%s in %u bytes", h.record_count(), h.record_count() == 1 ? "" : "s", h.aux);
  if (h.type == PageType::kIplData)
    s += h.aux ? strf(", lpn %u, one of %u pages of a merge", h.logical_page(), h.aux)
               : strf(", lpn %u, first write", h.logical_page());
  if (h.type == PageType::kIplEmpty) s += strf(", logical block %u", h.logical_block());
  if (h.type == PageType::kFtlTrim) s += strf(", lpn %u", h.logical_page());
  s += strf(", seq %llu, data crc 0x%08x %s, %s", (unsigned long long)h.seq, h.data_crc,
            v.data_crc_ok ? "ok" : "BAD", h.obsolete ? "marked obsolete" : "live");
  return s;
}

}  // namespace pdl::tool
