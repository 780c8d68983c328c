// pdl_fuse.cc — main of pdl-fuse: mount a pdl image so any unmodified program can use it.
//
//   pdl-fuse [-f] [-d] [-s] [-o OPT,...] IMAGE MOUNTPOINT      (options.h; file system: fs.h)
//
// Start-up, in this order, so that every refusal is reported before anything is changed:
// options (libfuse validates its own by creating the fuse object) → mount point is a
// directory → the image opens (created if missing; exclusively locked: an image in use is
// refused naming its holder) → the kernel mount. Without -f the work happens in a forked
// child, and the parent exits only once the child has mounted or failed, with the child's exit
// status — so `pdl-fuse IMAGE DIR && ls DIR` works, and errors reach the terminal. The child
// then detaches (setsid, stdio to /dev/null; later errors go to syslog).
//
// Shutdown: `fusermount3 -u`, SIGTERM, SIGINT or SIGHUP end the loop; the image is then closed
// (everything persisted) and its lock released, and pdl-fuse exits.
//
// Exit status: 0 ok · 1 mount failed, or the image could not be written at unmount · 2 usage
// error · 3 image error (not a pdl image, corrupt, missing with ro, bad parameter for it) ·
// 4 image in use by another process. No exception leaves main.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "cli/usage.h"
#include "flash/common/c_edge.h"
#include "fuse/fs.h"
#include "fuse/ops.h"
#include "fuse/options.h"

#ifndef PDL_VERSION
#error "PDL_VERSION must be defined by the build (meson project version)"
#endif

namespace pdl::fuse {
namespace {

enum Exit : int {  // cli/usage.h's
  kOk = cli::kExitOk,
  kMountFailed = cli::kExitFailed,
  kUsage = cli::kExitUsage,
  kImage = cli::kExitImage,
  kBusy = cli::kExitBusy,
};

bool g_detached = false;  // stderr is /dev/null: report to syslog

void report(const std::string& msg) {
  if (g_detached) syslog(LOG_ERR, "%s", msg.c_str());
  else std::fprintf(stderr, "pdl-fuse: %s\n", msg.c_str());
}

// The absolute form of `path` (which may not exist yet: its directory must).
std::string absolute(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf)) return buf;
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (!realpath(dir.c_str(), buf)) return path;
  return std::string(buf) + (std::string(buf) == "/" ? "" : "/") + base;
}

// fsname "pdl:<image>" for mount(8)'s listing; ',' and '\' escaped for libfuse's -o parser.
std::string fsname_option(const std::string& image) {
  std::string s = "-ofsname=pdl:";
  for (char c : image) {
    if (c == ',' || c == '\\') s += '\\';
    s += c;
  }
  return s + ",subtype=pdl";
}

// The parent's side of a background start: wait for the child's exit status byte.
[[noreturn]] void wait_for_child(int fd, pid_t child) {
  unsigned char code = kMountFailed;
  ssize_t n;
  do n = read(fd, &code, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1) {
    int status = 0;
    waitpid(child, &status, 0);
    std::fprintf(stderr, "pdl-fuse: the daemon exited during start-up\n");
    _exit(kMountFailed);
  }
  _exit(code);
}

// Tell the waiting parent (if any) how start-up ended.
void tell_parent(int* fd, int code) {
  if (*fd < 0) return;
  const unsigned char c = static_cast<unsigned char>(code);
  ssize_t n;
  do n = write(*fd, &c, 1);
  while (n < 0 && errno == EINTR);
  close(*fd);
  *fd = -1;
}

void detach() {
  setsid();
  if (chdir("/") != 0) {
    // Nothing depends on the working directory (paths are absolute).
  }
  const int null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    if (null > 2) close(null);
  }
  openlog("pdl-fuse", LOG_PID, LOG_DAEMON);
  g_detached = true;
}

int serve(MountOptions& o, int* parent_fd) {
  const std::string image_path = absolute(o.image);
  const std::string mountpoint = absolute(o.mountpoint);
  std::string fsname = fsname_option(image_path);
  fuse_opt_add_arg(&o.fuse, fsname.c_str());

  // The Fs is created after the fuse object, which validates the options first.
  std::unique_ptr<Fs> fs;
  FsSlot slot;
  struct fuse* f = fuse_new(&o.fuse, &operations(), sizeof(struct fuse_operations), &slot);
  if (!f) {
    report("libfuse refused the options (see above); 'pdl-fuse --help' lists them");
    return kUsage;
  }
  struct stat st;
  const bool found = ::stat(mountpoint.c_str(), &st) == 0;
  if (!found || !S_ISDIR(st.st_mode)) {
    report(mountpoint + ": mount point " +
           (found ? "is not a directory" : std::string("cannot be used: ") + std::strerror(errno)));
    fuse_destroy(f);
    return kMountFailed;
  }
  std::unique_ptr<Image> img;
  Status s = open_image(image_path, o.params, o.read_only ? ImageMode::kOpen : ImageMode::kCreate,
                        o.read_only, "", &img);
  if (!s.is_ok()) {
    report(image_path + ": " + std::string(s.message()) +
           (s.is(Errc::kReadOnly) ? " (mount it with -o ro to read it)" : ""));
    fuse_destroy(f);
    return s.is(Errc::kBusy) ? kBusy : kImage;
  }
  const bool created = img->created;
  FsOptions fo;
  fo.read_only = o.read_only;
  fo.uid = getuid();
  fo.gid = getgid();
  fs = std::make_unique<Fs>(std::move(img), fo);
  slot.fs = fs.get();
  if (Status h = fs->remove_hidden_leftovers(); !h.is_ok()) {
    report(image_path + ": " + std::string(h.message()));
    Status c = fs->close();
    (void)c;
    fuse_destroy(f);
    return kImage;
  }
  if (fuse_mount(f, mountpoint.c_str()) != 0) {
    report(mountpoint + ": cannot mount (see the message above)");
    Status c = fs->close();
    (void)c;
    fs.reset();
    if (created) unlink(image_path.c_str());  // nothing was ever stored in it
    fuse_destroy(f);
    return kMountFailed;
  }
  struct fuse_session* se = fuse_get_session(f);
  fuse_set_signal_handlers(se);
  tell_parent(parent_fd, kOk);
  if (!o.foreground) detach();
  int rc;
  if (o.single_thread) {
    rc = fuse_loop(f);
  } else {
    struct fuse_loop_config* cfg = fuse_loop_cfg_create();
    rc = fuse_loop_mt(f, cfg);
    fuse_loop_cfg_destroy(cfg);
  }
  fuse_remove_signal_handlers(se);
  fuse_unmount(f);
  int code = rc == 0 ? kOk : kMountFailed;
  if (Status c = fs->close(); !c.is_ok()) {
    report(image_path + ": writing the image at unmount failed: " + c.to_string());
    code = kMountFailed;
  }
  fuse_destroy(f);
  fs.reset();  // releases the image and its lock
  return code;
}

int run(int argc, char** argv) {
  MountOptions o;
  std::string error;
  if (!parse_options(argc, argv, &o, &error)) {
    return cli::usage_error("pdl-fuse", error);
  }
  if (o.help) {
    print_usage(stdout);
    std::printf("\nlibfuse options:\n");
    std::fflush(stdout);
    fuse_lib_help(&o.fuse);
    return kOk;
  }
  if (o.version) {
    std::printf("pdl-fuse %s\nlibfuse %s\n", PDL_VERSION, fuse_pkgversion());
    return kOk;
  }
  int parent_fd = -1;
  if (!o.foreground) {
    int p[2];
    if (pipe(p) != 0) {
      report(std::string("pipe: ") + std::strerror(errno));
      return kMountFailed;
    }
    const pid_t child = fork();
    if (child < 0) {
      report(std::string("fork: ") + std::strerror(errno));
      return kMountFailed;
    }
    if (child > 0) {
      close(p[1]);
      wait_for_child(p[0], child);
    }
    close(p[0]);
    parent_fd = p[1];
  }
  const int code = serve(o, &parent_fd);
  tell_parent(&parent_fd, code);  // start-up failed (a no-op after a successful start)
  return code;
}

}  // namespace
}  // namespace pdl::fuse

int main(int argc, char** argv) {
  // (detached, stderr is /dev/null: what escapes is lost, but the mount is already served)
  return pdl::guarded_main("pdl-fuse", pdl::fuse::run, argc, argv, 1);
}
