// ops.cc — fuse_operations forwarding to Fs (see ops.h).
#include "fuse/ops.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdio>

#include "flash/common/c_edge.h"
#include "fuse/fs.h"

namespace pdl::fuse {

namespace {

Fs& fs() { return *static_cast<FsSlot*>(fuse_get_context()->private_data)->fs; }

// Every change to the files comes through this mount (the image is owned exclusively), and
// the kernel keeps its page cache coherent with its own writes and truncates. So cached pages
// stay valid across opens (keep_cache) and across a changed mtime (no auto_inval_data):
// without that, each transaction of SQLite re-read its header and first pages from flash.
void* op_init(struct fuse_conn_info* conn, struct fuse_config* cfg) {
  conn->want &= ~unsigned(FUSE_CAP_AUTO_INVAL_DATA);
  cfg->attr_timeout = 1.0;
  cfg->entry_timeout = 1.0;
  cfg->negative_timeout = 0;
  cfg->hard_remove = 0;
  cfg->use_ino = 0;
  return fuse_get_context()->private_data;
}

int op_getattr(const char* path, struct stat* st, struct fuse_file_info*) {
  return fs().getattr(path, st);
}

int op_readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t,
               struct fuse_file_info*, enum fuse_readdir_flags) {
  std::vector<std::string> names;
  if (int rc = fs().readdir(path, &names)) return rc;
  fill(buf, ".", nullptr, 0, fuse_fill_dir_flags(0));
  fill(buf, "..", nullptr, 0, fuse_fill_dir_flags(0));
  for (const std::string& n : names)
    if (fill(buf, n.c_str(), nullptr, 0, fuse_fill_dir_flags(0))) break;
  return 0;
}

int op_mkdir(const char* path, mode_t) { return fs().mkdir(path); }
int op_rmdir(const char* path) { return fs().rmdir(path); }
int op_unlink(const char* path) { return fs().unlink(path); }
int op_rename(const char* from, const char* to, unsigned flags) {
  return fs().rename(from, to, flags);
}
int op_mknod(const char* path, mode_t mode, dev_t) {
  if (!S_ISREG(mode)) return -EPERM;  // regular files only
  Fs::Handle fh;
  if (int rc = fs().create(path, O_CREAT | O_EXCL | O_WRONLY, &fh)) return rc;
  return fs().release(fh);
}
int op_link(const char*, const char*) { return -EPERM; }
int op_symlink(const char*, const char*) { return -EPERM; }
int op_chmod(const char* path, mode_t mode, struct fuse_file_info*) {
  return fs().chmod(path, mode);
}
int op_chown(const char* path, uid_t uid, gid_t gid, struct fuse_file_info*) {
  return fs().chown(path, uid, gid);
}
int op_truncate(const char* path, off_t size, struct fuse_file_info* fi) {
  const Fs::Handle fh = fi ? fi->fh : 0;
  return fs().truncate(path, size, fi ? &fh : nullptr);
}
int op_create(const char* path, mode_t, struct fuse_file_info* fi) {
  Fs::Handle fh;
  if (int rc = fs().create(path, fi->flags, &fh)) return rc;
  fi->fh = fh;
  fi->keep_cache = 1;
  return 0;
}
int op_open(const char* path, struct fuse_file_info* fi) {
  Fs::Handle fh;
  bool direct = false;
  if (int rc = fs().open(path, fi->flags, &fh, &direct)) return rc;
  fi->fh = fh;
  fi->direct_io = direct;
  fi->keep_cache = !direct;
  return 0;
}
int op_read(const char*, char* buf, size_t size, off_t off, struct fuse_file_info* fi) {
  return fs().read(fi->fh, buf, size, off);
}
int op_write(const char*, const char* buf, size_t size, off_t off, struct fuse_file_info* fi) {
  return fs().write(fi->fh, buf, size, off);
}
int op_statfs(const char*, struct statvfs* st) { return fs().statfs(st); }
int op_flush(const char*, struct fuse_file_info* fi) { return fs().flush(fi->fh); }
int op_release(const char*, struct fuse_file_info* fi) { return fs().release(fi->fh); }
int op_fsync(const char*, int, struct fuse_file_info* fi) { return fs().fsync(fi->fh); }
int op_fsyncdir(const char*, int, struct fuse_file_info*) { return fs().fsyncdir(); }
int op_utimens(const char* path, const struct timespec tv[2], struct fuse_file_info* fi) {
  const Fs::Handle fh = fi ? fi->fh : 0;
  return fs().utimens(path, tv, fi ? &fh : nullptr);
}

// The catch-all at libfuse's edge (flash/common/c_edge.h): an exception escaping an operation
// (out of memory, or a defect) is reported on stderr and answered -ENOMEM / -EIO; it never
// unwinds into libfuse, which would abort the mount and lose every file's unsynced data.
struct FuseEscape {
  static int escaped(const char* op, const char* what, bool no_memory) noexcept {
    std::fprintf(stderr, "pdl-fuse: %s: %s (%s)\n", op,
                 no_memory ? "out of memory" : "internal error", what);
    return no_memory ? -ENOMEM : -EIO;
  }
};
template <EdgeName Name, auto Fn>
inline constexpr auto fuse_guarded = guarded<FuseEscape, Name, Fn>;

struct fuse_operations make_operations() {
  struct fuse_operations o = {};
  o.init = op_init;  // (cannot throw; what it returns is the mount's private data)
  o.getattr = fuse_guarded<"getattr", op_getattr>;
  o.readdir = fuse_guarded<"readdir", op_readdir>;
  o.mkdir = fuse_guarded<"mkdir", op_mkdir>;
  o.rmdir = fuse_guarded<"rmdir", op_rmdir>;
  o.unlink = fuse_guarded<"unlink", op_unlink>;
  o.rename = fuse_guarded<"rename", op_rename>;
  o.mknod = fuse_guarded<"mknod", op_mknod>;
  o.link = fuse_guarded<"link", op_link>;
  o.symlink = fuse_guarded<"symlink", op_symlink>;
  o.chmod = fuse_guarded<"chmod", op_chmod>;
  o.chown = fuse_guarded<"chown", op_chown>;
  o.truncate = fuse_guarded<"truncate", op_truncate>;
  o.create = fuse_guarded<"create", op_create>;
  o.open = fuse_guarded<"open", op_open>;
  o.read = fuse_guarded<"read", op_read>;
  o.write = fuse_guarded<"write", op_write>;
  o.statfs = fuse_guarded<"statfs", op_statfs>;
  o.flush = fuse_guarded<"flush", op_flush>;
  o.release = fuse_guarded<"release", op_release>;
  o.fsync = fuse_guarded<"fsync", op_fsync>;
  o.fsyncdir = fuse_guarded<"fsyncdir", op_fsyncdir>;
  o.utimens = fuse_guarded<"utimens", op_utimens>;
  return o;
}

}  // namespace

const struct fuse_operations& operations() {
  static const struct fuse_operations ops = make_operations();
  return ops;
}

}  // namespace pdl::fuse
