// cmd_cat.cc — `pdl cat IMAGE FILE`: a file's bytes to standard output.
//
// Binary-safe and streamed: the file is read in 1 MiB pieces through the Volume (every chunk
// CRC-checked by the store), so memory stays small whatever the file's size. A read error ends
// the command with exit 3 after the bytes before it were written.
#include <cerrno>
#include <cstring>

#include "tools/commands.h"
#include "tools/image_open.h"

namespace pdl::tool {
namespace {

int run_cat(const Command& cmd, const Args& a) {
  const std::string& name = a.pos[1];
  std::unique_ptr<Image> img;
  if (Status st = open_read_only(a.pos[0], a, &img); !st.is_ok()) return fail_status(cmd, st);
  Volume& vol = *img->volume;
  Volume::FileId id;
  Status st = vol.lookup(name, &id);
  if (st.is(Errc::kNotFound))
    return fail(cmd, kExitImage, "no file '" + name + "' in " + a.pos[0]);
  if (!st.is_ok()) return fail_status(cmd, st);
  uint64_t size = 0;
  if (st = vol.size(id, &size); !st.is_ok()) return fail_status(cmd, st);
  std::vector<uint8_t> buf(1u << 20);
  for (uint64_t off = 0; off < size;) {
    size_t got = 0;
    st = vol.read(id, off, buf, &got);
    if (!st.is_ok())
      return fail(cmd, kExitImage, name + strf(" at byte %llu: ", (unsigned long long)off) +
                                       std::string(st.message()));
    if (got == 0) break;  // end of file (size cannot change: the image is ours alone)
    if (std::fwrite(buf.data(), 1, got, stdout) != got)
      return fail(cmd, kExitImage,
                  std::string("cannot write to standard output: ") + std::strerror(errno));
    off += got;
  }
  return kExitOk;
}

}  // namespace

const Command kCatCommand = {
    "cat",
    "IMAGE FILE",
    "write a file of the image to standard output",
    "Binary-safe and streamed. `pdl ls IMAGE` lists the files. Exit 3 (as for a missing\n"
    "image) if FILE is not in the image.\n",
    {kNvmPathOption},
    2,
    2,
    run_cat,
};

}  // namespace pdl::tool
