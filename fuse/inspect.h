// inspect.h — the read-only files of pdl-fuse's /.pdl/ directory: the image described as text,
// so any program (cat, python, jq) can look inside a mounted store.
//
//   stats.json  the object PRAGMA pdl_stats and `pdl info --json` print (stats_json.h)
//   config      `key=value` lines: the image parameters (the keys of `-o` and of the VFS's
//               URI, so the lines recreate the geometry), then derived facts (blocks,
//               logical_pages, gc_reserve_blocks, chunk, data_lpns, timings, read_only, image)
//   blocks      "# block state valid_pages erase_count", then one line per erase block
//   map         "# lpn chunk base_ppa diff_ppa diff_in_buffer file", then one line per
//               mapped chunk of every file, in file-name then chunk order: the chunk's ppmt
//               entry ([PDL] Fig. 3). "-" for no page; the file name is the rest of the line.
//
// Each text is generated from the in-memory tables under the Volume's lock: no flash
// operation, no counter changes.
#pragma once

#include <string>
#include <string_view>

#include "flash/image/image.h"

namespace pdl::fuse {

inline constexpr const char* kInspectDir = ".pdl";
inline constexpr const char* const kInspectFiles[] = {"stats.json", "config", "blocks", "map"};

bool is_inspect_file(std::string_view name);
// The text of inspection file `name` (one of kInspectFiles) for `image`, mounted read-only or not.
std::string inspect_text(Image& image, std::string_view name, bool read_only);

}  // namespace pdl::fuse
