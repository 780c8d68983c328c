// cmd_dump.cc — `pdl dump IMAGE --lpn N | --block B | --file NAME`: one logical page, one
// erase block or one file's chunks, from the store's tables down to the spare headers on flash.
//
// --lpn: what the lpn is for in the volume (header, directory, owner map, or which file and
// chunk owns it), its ppmt entry (base page, differential page or write buffer) and the decoded
// spare headers of those pages, with the lpn's differential record found in its page.
// --file: each chunk of a file with its lpn, base page and differential page.
// --block: state, valid pages, erase count, then one line per page — spare type, lpn or record
// count, seq, obsolete mark, data CRC, and whether the store counts the page as live. Runs of
// erased pages are shown as one line. Reads the image only (image_open.h).
#include <map>

#include "flash/image/open_store.h"
#include "tools/commands.h"
#include "tools/image_open.h"
#include "tools/page_view.h"

namespace pdl::tool {
namespace {

std::string role_of(Volume& vol, const std::map<uint32_t, std::string>& names, Lpn lpn) {
  const VolumeLayout& L = vol.layout();
  if (lpn == 0) return "volume header";
  if (lpn < L.owner_first()) return strf("directory page %u", lpn - 1);
  if (lpn < L.data_first) return strf("owner-map page %u", lpn - L.owner_first());
  if (lpn - L.data_first >= L.data_lpns) return "beyond the volume's data lpns (unused)";
  Owner o;
  if (Status st = vol.owner_of(lpn, &o); !st.is_ok())
    return "data lpn, its owner-map page unreadable: " + std::string(st.message());
  if (o.id == 0) return "data lpn, free";
  auto it = names.find(o.id);
  if (it == names.end())
    return strf("data lpn, owner entry names file id %u, which has no directory slot (dead)",
                o.id);
  return strf("data lpn: chunk %u of file \"%s\" (id %u)", o.chunk, it->second.c_str(), o.id);
}

int dump_lpn(const Command& cmd, Image& img, Lpn lpn) {
  Volume& vol = *img.volume;
  std::map<uint32_t, std::string> names;
  for (const FileInfo& f : vol.list()) names[f.id] = f.name;
  const std::string role = role_of(vol, names, lpn);
  auto guard = vol.lock();
  PageStore& store = vol.store();
  Nand& nand = *img.nand;
  const uint32_t ppb = nand.geometry().pages_per_block;
  const LpnLocation loc = store.locate(lpn);
  std::printf("lpn %u: %s\n", lpn, role.c_str());
  std::printf("  mapped         %s\n", store.is_mapped(lpn)       ? "yes"
                                       : loc.trim_pending         ? "no (trim pending)"
                                                                  : "no");
  if (loc.base == kNoPpa) {
    std::printf("  base page      none\n");
  } else {
    PageView v;
    if (Status st = read_page_view(nand, loc.base, &v); !st.is_ok()) return fail_status(cmd, st);
    std::printf("  base page      %s\n", ppa_str(loc.base, ppb).c_str());
    std::printf("    spare        %s\n", describe_page(v).c_str());
  }
  if (loc.diff_in_buffer)
    std::printf("  differential   in the write buffer: %s, %u bytes\n",
                loc.trim_pending ? "tombstone" : "record", loc.diff_bytes);
  if (loc.diff == kNoPpa) {
    if (!loc.diff_in_buffer)
      std::printf("  differential   none%s\n",
                  loc.base == kNoPpa ? "" : " (the base page holds the whole page)");
    return kExitOk;
  }
  PageView v;
  if (Status st = read_page_view(nand, loc.diff, &v); !st.is_ok()) return fail_status(cmd, st);
  std::printf("  differential   %s%s\n", ppa_str(loc.diff, ppb).c_str(),
              loc.diff_in_buffer ? " (superseded by the buffered one)" : "");
  std::printf("    spare        %s\n", describe_page(v).c_str());
  if (v.state != SpareState::kValid || v.hdr.type != PageType::kDifferential) return kExitOk;
  std::vector<RecordInfo> records;
  const Status decoded =
      page_inspector(store.params(), nand.geometry())->differential_records(v.data, v.hdr,
                                                                            &records);
  bool found = false;
  for (const RecordInfo& r : records) {
    if (r.lpn != lpn) continue;
    std::printf("    record       seq %llu, %zu bytes (%zu header + %zu of runs), %s\n",
                (unsigned long long)r.seq, r.bytes, r.header_bytes, r.bytes - r.header_bytes,
                r.tombstone ? "tombstone"
                            : strf("%zu run%s", r.runs, r.runs == 1 ? "" : "s").c_str());
    found = true;
  }
  if (!decoded.is_ok())
    std::printf("    records      malformed: %s\n", std::string(decoded.message()).c_str());
  else if (!found)
    std::printf("    record       NOT FOUND in the page\n");
  return kExitOk;
}

void print_log_sectors(const PageInspector& inspector, std::span<const uint8_t> data);

// One line per log sector of a log page (IPL: PageInspector::log_sectors).
Status dump_log_page(Nand& nand, const PageInspector& inspector, Ppa ppa, uint32_t p) {
  std::vector<uint8_t> data(nand.geometry().page_data);
  PDL_TRY(nand.read(ppa, data, {}));
  if (all_ff(data)) {
    std::printf("  %4u %8u  log page, erased\n", p, ppa);
    return Status::ok();
  }
  std::printf("  %4u %8u  log page\n", p, ppa);
  print_log_sectors(inspector, data);
  return Status::ok();
}

// The sectors of a log page or of an NVM log area, one line each.
void print_log_sectors(const PageInspector& inspector, std::span<const uint8_t> data) {
  const std::vector<LogSectorInfo> sectors = inspector.log_sectors(data);
  for (uint32_t i = 0; i < sectors.size(); i++) {
    const LogSectorInfo& s = sectors[i];
    switch (s.kind) {
      case LogSectorInfo::kErased:
        std::printf("         sector %u: erased\n", i);
        break;
      case LogSectorInfo::kTorn:
        std::printf("         sector %u: torn (fails its CRC, magic or bounds)\n", i);
        break;
      case LogSectorInfo::kUnmap:
        std::printf("         sector %u: unmap (trims), logical block %u, seq %llu, %u/%u,"
                    " slots", i, s.lbn, (unsigned long long)s.seq, s.index + 1, s.count);
        for (uint32_t sl : s.unmapped_slots) std::printf(" %u", sl);
        std::printf("\n");
        break;
      case LogSectorInfo::kLog:
        std::printf("         sector %u: log of lpn %u (slot %u), seq %llu, %u/%u, %u bytes%s\n",
                    i, s.lpn, s.slot, (unsigned long long)s.seq, s.index + 1, s.count,
                    s.payload_bytes, s.reset ? ", reset" : "");
        break;
    }
  }
}

int dump_block(const Command& cmd, Image& img, uint32_t block) {
  auto guard = img.volume->lock();
  PageStore& store = img.volume->store();
  Nand& nand = *img.nand;
  const Geometry& g = nand.geometry();
  const uint32_t ppb = g.pages_per_block;
  const BlockInfo bi = store.block_info(block);
  // Which pages of the block the store counts: current base pages, referenced diff pages.
  std::vector<int64_t> base_lpn(ppb, -1);
  std::vector<uint32_t> refs(ppb, 0);
  const Ppa first = Ppa(block) * ppb;
  for (Lpn l = 0; l < store.logical_pages(); l++) {
    const LpnLocation loc = store.locate(l);
    if (loc.base != kNoPpa && loc.base / ppb == block) base_lpn[loc.base - first] = l;
    if (loc.diff != kNoPpa && loc.diff / ppb == block) refs[loc.diff - first]++;
  }
  std::printf("block %u: %s, %u valid page%s, erased %u time%s; pages %u..%u\n", block,
              block_state_name(bi.state), bi.valid_pages, bi.valid_pages == 1 ? "" : "s",
              bi.erase_count, bi.erase_count == 1 ? "" : "s", first, first + ppb - 1);
  std::printf("  %4s %8s  %-12s %10s %10s  %-8s %-9s %s\n", "page", "ppa", "type", "lpn/recs",
              "seq", "data crc", "obsolete", "store");
  PageView v;
  const std::unique_ptr<PageInspector> inspector = page_inspector(store.params(), g);
  for (uint32_t p = 0; p < ppb; p++) {
    if (inspector->is_log_page(first + p)) {  // its sectors, not its (erased) spare
      if (Status st = dump_log_page(nand, *inspector, first + p, p); !st.is_ok())
        return fail_status(cmd, st);
      continue;
    }
    if (Status st = read_page_view(nand, first + p, &v); !st.is_ok()) return fail_status(cmd, st);
    if (v.state == SpareState::kErased) {
      uint32_t q = p;
      PageView w;
      while (q + 1 < ppb) {
        if (Status st = read_page_view(nand, first + q + 1, &w); !st.is_ok())
          return fail_status(cmd, st);
        if (w.state != SpareState::kErased) break;
        q++;
      }
      if (q == p) std::printf("  %4u %8u  erased\n", p, first + p);
      else std::printf("  %4u %8s  erased (pages %u..%u, ppa %u..%u)\n", p, "..", p, q,
                       first + p, first + q);
      p = q;
      continue;
    }
    if (v.state == SpareState::kCorrupt) {
      std::printf("  %4u %8u  torn (spare header fails its CRC or version)\n", p, first + p);
      continue;
    }
    const SpareHeader& h = v.hdr;
    std::string what = "-", live = "stale";
    if (h.type == PageType::kBase) {
      what = std::to_string(h.logical_page());
      if (base_lpn[p] >= 0) live = "live (current base)";
    } else if (h.type == PageType::kDifferential) {
      what = strf("%u rec", h.record_count());
      if (refs[p]) live = strf("live (%u differential%s)", refs[p], refs[p] == 1 ? "" : "s");
    } else if (h.type == PageType::kSuperblock) {
      live = "superblock";
    } else if (h.type == PageType::kIplData) {
      what = std::to_string(h.logical_page());
      if (base_lpn[p] >= 0) live = "live (data page)";
    } else if (h.type == PageType::kIplEmpty) {
      what = strf("lbn %u", h.logical_block());
      live = "empty-merge marker";
    } else if (h.type == PageType::kFtlTrim) {
      what = std::to_string(h.logical_page());
    }
    std::printf("  %4u %8u  %-12s %10s %10llu  %-8s %-9s %s\n", p, first + p,
                page_type_name(h.type), what.c_str(), (unsigned long long)h.seq,
                v.data_crc_ok ? "ok" : "BAD", h.obsolete ? "marked" : "-", live.c_str());
  }
  // IPL with NVM ([IPL-PCRAM]): the block's log area, whose slots are log sectors. A sector
  // not newer than the block's oldest data page is left from an earlier life and does not
  // count (docs/format.md §11).
  uint64_t nvm_off;
  uint32_t nvm_bytes;
  if (inspector->nvm_log_area(block, &nvm_off, &nvm_bytes)) {
    std::vector<uint8_t> area(nvm_bytes);
    if (Status st = nand.nvm_read(nvm_off, area); !st.is_ok()) return fail_status(cmd, st);
    std::printf("  NVM log area: %u bytes at NVM offset %llu\n", nvm_bytes,
                (unsigned long long)nvm_off);
    print_log_sectors(*inspector, area);
  }
  return kExitOk;
}

int dump_file(const Command& cmd, Image& img, const std::string& name) {
  Volume& vol = *img.volume;
  FileInfo fi;
  Status st = vol.stat(name, &fi);
  if (st.is(Errc::kNotFound)) return fail(cmd, kExitImage, "no file '" + name + "' in the image");
  if (!st.is_ok()) return fail_status(cmd, st);
  std::vector<uint32_t> lpns;
  if (st = vol.chunk_lpns(name, &lpns); !st.is_ok()) return fail_status(cmd, st);
  auto guard = vol.lock();
  PageStore& store = vol.store();
  const uint32_t ppb = img.nand->geometry().pages_per_block;
  std::printf("file \"%s\" (id %u): %llu bytes, %s, %u of %zu chunks mapped\n", name.c_str(),
              fi.id, (unsigned long long)fi.size, kind_name(fi.kind), fi.chunks_mapped,
              lpns.size());
  std::printf("  %6s %8s  %-28s %s\n", "chunk", "lpn", "base page", "differential");
  for (size_t c = 0; c < lpns.size(); c++) {
    if (lpns[c] == Volume::kNoLpn) {
      std::printf("  %6zu %8s  hole (reads as zeros)\n", c, "-");
      continue;
    }
    const LpnLocation loc = store.locate(lpns[c]);
    std::string diff = "-";
    if (loc.diff_in_buffer) diff = strf("write buffer (%u bytes)", loc.diff_bytes);
    else if (loc.diff != kNoPpa) diff = ppa_str(loc.diff, ppb);
    std::printf("  %6zu %8u  %-28s %s\n", c, lpns[c],
                loc.base == kNoPpa ? "unmapped" : ppa_str(loc.base, ppb).c_str(), diff.c_str());
  }
  return kExitOk;
}

int run_dump(const Command& cmd, const Args& a) {
  const bool by_lpn = a.has("lpn"), by_block = a.has("block"), by_file = a.has("file");
  if (int(by_lpn) + int(by_block) + int(by_file) != 1)
    return usage_error(cmd, "give exactly one of --lpn N, --block B and --file NAME");
  if (by_file) {
    std::unique_ptr<Image> img;
    if (Status st = open_read_only(a.pos[0], a, &img); !st.is_ok()) return fail_status(cmd, st);
    return dump_file(cmd, *img, a.get("file"));
  }
  uint64_t n = 0;
  const std::string& text = a.get(by_lpn ? "lpn" : "block");
  if (!parse_u64(text, &n))
    return usage_error(cmd, std::string(by_lpn ? "--lpn" : "--block") + " " + text +
                                ": not a number");
  std::unique_ptr<Image> img;
  if (Status st = open_read_only(a.pos[0], a, &img); !st.is_ok()) return fail_status(cmd, st);
  uint64_t limit;
  {
    auto guard = img->volume->lock();
    PageStore& store = img->volume->store();
    limit = by_lpn ? store.logical_pages() : img->nand->geometry().blocks;
  }
  if (n >= limit)
    return usage_error(cmd, strf("%s %llu out of range: the image has %llu %s",
                                 by_lpn ? "--lpn" : "--block", (unsigned long long)n,
                                 (unsigned long long)limit,
                                 by_lpn ? "logical pages" : "blocks"));
  return by_lpn ? dump_lpn(cmd, *img, Lpn(n)) : dump_block(cmd, *img, uint32_t(n));
}

}  // namespace

const Command kDumpCommand = {
    "dump",
    "IMAGE --lpn N | --block B | --file NAME",
    "show a logical page, an erase block or a file's chunks down to the flash pages",
    "--lpn N: the volume's use of lpn N (metadata, or which file and chunk owns it), its\n"
    "mapping (base page; differential page or the write buffer) and the decoded spare\n"
    "headers of those pages, with its differential record.\n"
    "--block B: state, valid pages and erase count of block B, then per page: type, lpn (base)\n"
    "or record count (differential), seq, data CRC, obsolete mark, and whether the store\n"
    "counts the page as live.\n"
    "--file NAME: the lpn of each chunk of file NAME, with its base and differential page.\n"
    "Numbers may be decimal or 0x hex.\n",
    {{"lpn", 0, "N", "a logical page number"},
     {"block", 0, "B", "an erase block number"},
     {"file", 0, "NAME", "a file of the volume (pdl ls lists them)"},
     kNvmPathOption},
    1,
    1,
    run_dump,
};

}  // namespace pdl::tool
