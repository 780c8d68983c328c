// options.h — pdl-fuse's command line, parsed the libfuse way (fuse_opt):
//
//   pdl-fuse [-f] [-d] [-s] [-o OPT[,OPT...]] IMAGE MOUNTPOINT | --help | --version
//
// pdl's own -o options are the image parameters (ImageParams keys: method, max_diff, obsolete,
// log_region, log_sector, ftl, log_blocks, sb_slots, page, pages_per_block, size, nop,
// max_files — used when IMAGE is created — and cache_chunks, owner_cache, sb_recognition, sb_flush at any
// mount); `ro` is both ours (the image is opened read-only)
// and the kernel's (a read-only mount). Every other -o option, and -d, go to libfuse unchanged,
// which refuses unknown ones. -f and -s are ours: foreground, single-threaded loop. libfuse's
// parser, not CLI11 (cli/app.h), because most of the command line is libfuse's; the help and
// the usage errors are in the common layout and wording of cli/usage.h.
#pragma once

#include <string>
#include <vector>

#include "flash/image/image_params.h"

#define FUSE_USE_VERSION 314
#include <fuse.h>

namespace pdl::fuse {

struct MountOptions {
  std::string image, mountpoint;  // as given
  ImageParams params;
  bool read_only = false, foreground = false, debug = false, single_thread = false;
  bool help = false, version = false;
  struct fuse_args fuse = FUSE_ARGS_INIT(0, nullptr);  // argv[0] + what libfuse gets
  std::vector<char*> kept_argv;  // argv without --mtd DEV (fuse_opt_parse's input)

  MountOptions() = default;
  MountOptions(const MountOptions&) = delete;
  MountOptions& operator=(const MountOptions&) = delete;
  ~MountOptions() { fuse_opt_free_args(&fuse); }
};

// Fill *out from argv. false on a usage error, described in *error.
bool parse_options(int argc, char** argv, MountOptions* out, std::string* error);
// The usage text (pdl's part; libfuse's options are printed by fuse_lib_help).
void print_usage(FILE* out);

}  // namespace pdl::fuse
