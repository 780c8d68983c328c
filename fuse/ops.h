// ops.h — the libfuse (high-level API, FUSE 3.14) binding of pdl-fuse's Fs: one
// fuse_operations table whose callbacks find the Fs through the FsSlot given to fuse_new as
// user data (fuse_get_context()->private_data) and forward to it. Nothing else here: paths,
// errno and semantics are fs.h's.
#pragma once

#define FUSE_USE_VERSION 314
#include <fuse.h>

namespace pdl::fuse {

class Fs;

// fuse_new's user data. The fuse object is created (validating the options) before the image
// is opened, so the Fs is filled in later — before fuse_mount, hence before any callback.
struct FsSlot {
  Fs* fs = nullptr;
};

// Kernel-side settings applied at init: attribute and entry caching for 1 s (pdl-fuse is the
// only writer of the image), hard_remove off (libfuse keeps unlinked open files readable).
const struct fuse_operations& operations();

}  // namespace pdl::fuse
