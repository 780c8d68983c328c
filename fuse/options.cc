// options.cc — pdl-fuse's command line (see options.h): libfuse's fuse_opt, because most of it
// is libfuse's own (-o OPT, -d, the mount point); help and errors in the common layout of
// cli/usage.h.
#include "fuse/options.h"

#include <cstdio>
#include <cstring>
#include <set>
#include <exception>
#include <string>
#include <vector>

#include "cli/usage.h"

namespace pdl::fuse {

namespace {

enum Key { kHelp, kVersion, kForeground, kDebug, kSingle, kReadOnly };

const struct fuse_opt kOpts[] = {
    FUSE_OPT_KEY("-h", kHelp),       FUSE_OPT_KEY("--help", kHelp),
    FUSE_OPT_KEY("-V", kVersion),    FUSE_OPT_KEY("--version", kVersion),
    FUSE_OPT_KEY("-f", kForeground), FUSE_OPT_KEY("-d", kDebug),
    FUSE_OPT_KEY("debug", kDebug),   FUSE_OPT_KEY("-s", kSingle),
    FUSE_OPT_KEY("ro", kReadOnly),   FUSE_OPT_END,
};

struct Parse {
  MountOptions* out;
  std::string error;
  int positional = 0;
  std::set<std::string> seen;  // our -o keys so far
};

// fuse_opt's callback: 0 = consumed, 1 = keep for libfuse, -1 = error.
int parse_option(void* data, const char* arg, int key) {
  Parse& p = *static_cast<Parse*>(data);
  MountOptions& o = *p.out;
  switch (key) {
    case kHelp: o.help = true; return 0;
    case kVersion: o.version = true; return 0;
    case kForeground: o.foreground = true; return 0;
    case kDebug: o.debug = o.foreground = true; return 1;  // libfuse prints every request
    case kSingle: o.single_thread = true; return 0;
    case kReadOnly: o.read_only = true; return 1;  // the kernel mounts read-only too
    case FUSE_OPT_KEY_NONOPT:
      if (p.positional == 0) o.image = arg;
      else if (p.positional == 1) o.mountpoint = arg;
      else {
        p.error = std::string("unexpected argument '") + arg + "'";
        return -1;
      }
      p.positional++;
      return 0;
    case FUSE_OPT_KEY_OPT: {
      const char* eq = std::strchr(arg, '=');
      if (!eq) return 1;
      const std::string k(arg, size_t(eq - arg));
      if (k == "commit") {  // the VFS's: programs on a mount keep their own journals
        p.error = "commit= is a parameter of the SQLite VFS; on a mount every fsync commits "
                  "the store atomically (page by page on ipu and the FTL devices, which have no "
                  "atomic commit)";
        return -1;
      }
      const Status st = o.params.set(k, eq + 1);
      if (st.is(Errc::kNotFound)) return 1;  // not ours: libfuse's (or unknown: it refuses)
      if (!p.seen.insert(k).second) {  // the last would silently win
        p.error = "-o " + k + "= given twice (pdl takes one value per parameter)";
        return -1;
      }
      if (!st.is_ok()) {
        p.error = std::string(st.message());
        return -1;
      }
      return 0;
    }
    default: return 1;
  }
}

// The callback libfuse calls, behind a catch-all: nothing unwinds into libfuse.
int on_option(void* data, const char* arg, int key, struct fuse_args*) noexcept {
  try {
    return parse_option(data, arg, key);
  } catch (const std::exception& e) {
    try {
      static_cast<Parse*>(data)->error = std::string("cannot parse '") + arg + "': " + e.what();
    } catch (...) {
    }
    return -1;
  } catch (...) {
    try {
      static_cast<Parse*>(data)->error = std::string("cannot parse '") + arg + "'";
    } catch (...) {
    }
    return -1;
  }
}

}  // namespace

bool parse_options(int argc, char** argv, MountOptions* out, std::string* error) {
  Parse p{out, "", 0, {}};
  fuse_opt_free_args(&out->fuse);
  // --mtd DEV (or --mtd=DEV) is ours alone: taken out before libfuse sees the arguments.
  std::vector<char*> kept;
  for (int i = 0; i < argc; i++) {
    const std::string a = argv[i];
    if (a == "--mtd" || a.rfind("--mtd=", 0) == 0) {
      if (a == "--mtd" && i + 1 >= argc) {
        *error = "--mtd needs a value (an MTD device, /dev/mtdN)";
        return false;
      }
      if (!p.seen.insert("mtd").second) {
        *error = "--mtd given twice";
        return false;
      }
      const Status st = out->params.set("mtd", a == "--mtd" ? argv[++i] : a.substr(6));
      if (!st.is_ok()) {
        *error = std::string(st.message());
        return false;
      }
      continue;
    }
    kept.push_back(argv[i]);
  }
  out->kept_argv = kept;
  out->fuse = FUSE_ARGS_INIT(int(out->kept_argv.size()), out->kept_argv.data());
  if (fuse_opt_parse(&out->fuse, &p, kOpts, on_option) != 0) {
    *error = p.error.empty() ? "bad options" : p.error;
    return false;
  }
  if (out->help || out->version) return true;
  if (out->params.mtd) {  // --mtd DEV (or -o mtd=DEV) stands for IMAGE
    if (p.positional == 2) {
      *error = "give IMAGE or --mtd DEV, not both";
      return false;
    }
    if (p.positional == 0) {
      *error = "MOUNTPOINT is required";
      return false;
    }
    out->mountpoint = out->image;
    out->image = *out->params.mtd;
    p.positional = 2;
  }
  if (p.positional < 2) {
    *error = p.positional == 0 ? "IMAGE and MOUNTPOINT are required"
                               : "MOUNTPOINT is required";
    return false;
  }
  return true;
}

void print_usage(FILE* out) {
  cli::HelpText h;
  h.program = "pdl-fuse";
  h.usage = {"[options] IMAGE MOUNTPOINT", "[options] --mtd DEV MOUNTPOINT", "--help | --version"};
  h.description =
      "Mount a pdl image (an emulated NAND chip holding a page-differential-logging store)\n"
      "so that any program can use its files. IMAGE is created if it does not exist.\n"
      "Unmount with 'fusermount3 -u MOUNTPOINT'; pdl-fuse then writes everything to the\n"
      "image and exits ('flock IMAGE true' waits for that).\n\n"
      "The mount is one flat directory of regular files; /.pdl/ holds read-only views\n"
      "of the store: stats.json, config, blocks, map. '*-shm' files (SQLite's WAL-index)\n"
      "are kept in memory, never on flash. fsync makes the whole store durable.";
  h.groups = {
      {"options",
       {{"--mtd DEV", "instead of IMAGE: raw NAND through Linux MTD (/dev/mtdN;\n"
                      "formatted if blank, refused if it holds anything else)"},
        {"-h, --help", "this help, then libfuse's options"},
        {"-V, --version", "versions of pdl-fuse and libfuse"},
        {"-f", "stay in the foreground"},
        {"-d, -o debug", "print every FUSE request (implies -f)"},
        {"-s", "one thread (default: libfuse's multi-threaded loop)"},
        {"-o ro", "read-only: the image is not modified (it must exist)"}}},
      {"image parameters (-o, comma-separated; new image only unless said)",
       {{"-o method=M", "pdl, opu, ipu or ipl; ftl or stablebuffer: an FTL device\n"
                        "(eMMC/SD-like, no atomic commit) (default: pdl)"},
        {"-o max_diff=N", "pdl: Max_Differential_Size in bytes (default: 256)"},
        {"-o obsolete=spare|memory", "pdl/opu: where obsolete marks live"},
        {"-o log_region=N", "ipl: log region per erase block, bytes"},
        {"-o log_sector=N", "ipl: bytes of a log sector, 128|256|512 (default: 512)"},
        {"-o ftl=page|bast|fast", "ftl/stablebuffer: the device's translation layer\n"
                                  "(default: page)"},
        {"-o log_blocks=N", "ftl=bast|fast: log blocks (default: 16)"},
        {"-o sb_slots=N", "stablebuffer: staging pages on the device"},
        {"-o sb_recognition=R", "stablebuffer: ondemand|incremental write-pattern\n"
                                "recognition (any mount; default: ondemand)"},
        {"-o sb_flush=F", "stablebuffer: passive|proactive flushing (any mount;\n"
                          "default: passive)"},
        {"-o page=N", "flash page data bytes (default: 2048)"},
        {"-o pages_per_block=N", "pages per erase block (default: 64)"},
        {"-o size=S", "chip size, 1M .. 256G, at least 8 erase blocks (default: 256M)"},
        {"-o nop=N", "partial programs per page (default: 4)"},
        {"-o erase_limit=N", "erases a block endures (emulated wear-out)"},
        {"-o nvm=SIZE", "pdl/ipl: NVM (PCRAM) beside the chip, used by the store;\n"
                        "a multiple of 8 bytes up to 1G (default: none)"},
        {"-o nvm_path=PATH", "keep the NVM in this file through libpmem (real\n"
                             "persistent memory on DAX); every mount of such an image\n"
                             "needs it (default: inside the image; needed on MTD)"},
        {"-o max_files=N", "directory slots"},
        {"-o cache_chunks=N", "write-back cache of the volume, chunks (any mount)"},
        {"-o owner_cache=N", "owner-map pages the volume keeps in RAM (any mount)"},
        {"-o clock=logical", "mtimes from a counter: repeatable flash figures (any mount)"},
        {"-o track_changes=on", "measure bytes_changed in stats.json (any mount)"}}}};
  h.footer =
      "exit status: 0 ok, 1 mount failed or the image could not be written at unmount,\n"
      "2 usage error, 3 image error (not a pdl image, corrupt, missing), 4 image in use by\n"
      "another process.";
  std::fputs(cli::render_help(h).c_str(), out);
}

}  // namespace pdl::fuse
