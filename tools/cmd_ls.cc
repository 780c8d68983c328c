// cmd_ls.cc — `pdl ls IMAGE [-l]`: the files of an image's volume, sorted by name.
//
// -l adds size (bytes), kind (database, journal, wal), chunks holding a logical page, and the
// modification time (local time; kept lazily, so after a crash it may be older).
#include <algorithm>

#include "tools/commands.h"
#include "tools/image_open.h"

namespace pdl::tool {
namespace {

int run_ls(const Command& cmd, const Args& a) {
  std::unique_ptr<Image> img;
  if (Status st = open_read_only(a.pos[0], a, &img); !st.is_ok()) return fail_status(cmd, st);
  std::vector<FileInfo> files = img->volume->list();
  std::sort(files.begin(), files.end(),
            [](const FileInfo& x, const FileInfo& y) { return x.name < y.name; });
  const bool lng = a.has("long");
  for (const FileInfo& f : files) {
    if (!lng) {
      std::printf("%s\n", f.name.c_str());
      continue;
    }
    std::printf("%12llu  %-9s %7u  %s  %s\n", (unsigned long long)f.size, kind_name(f.kind),
                f.chunks_mapped, time_str(f.mtime_ns / 1000000000u, false).c_str(), f.name.c_str());
  }
  return kExitOk;
}

}  // namespace

const Command kLsCommand = {
    "ls",
    "IMAGE [-l]",
    "list the files in an image",
    "With -l, each line is: size in bytes, kind, chunks mapped, modification time, name.\n",
    {{"long", 'l', nullptr, "size, kind, chunks and mtime of each file"}, kNvmPathOption},
    1,
    1,
    run_ls,
};

}  // namespace pdl::tool
