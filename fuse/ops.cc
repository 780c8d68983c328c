// ops.cc — fuse_operations forwarding to Fs (see ops.h).
#include "fuse/ops.h"

#include <fcntl.h>

#include <cerrno>

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

struct fuse_operations make_operations() {
  struct fuse_operations o = {};
  o.init = op_init;
  o.getattr = op_getattr;
  o.readdir = op_readdir;
  o.mkdir = op_mkdir;
  o.rmdir = op_rmdir;
  o.unlink = op_unlink;
  o.rename = op_rename;
  o.mknod = op_mknod;
  o.link = op_link;
  o.symlink = op_symlink;
  o.chmod = op_chmod;
  o.chown = op_chown;
  o.truncate = op_truncate;
  o.create = op_create;
  o.open = op_open;
  o.read = op_read;
  o.write = op_write;
  o.statfs = op_statfs;
  o.flush = op_flush;
  o.release = op_release;
  o.fsync = op_fsync;
  o.fsyncdir = op_fsyncdir;
  o.utimens = op_utimens;
  return o;
}

}  // namespace

const struct fuse_operations& operations() {
  static const struct fuse_operations ops = make_operations();
  return ops;
}

}  // namespace pdl::fuse
