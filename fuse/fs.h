// fs.h — pdl-fuse's file system: the Volume of one open Image as a flat directory of regular
// files, plus the read-only inspection directory /.pdl/ (inspect.h).
//
// Each method is one FUSE operation. It takes the path libfuse gives ("/name", "/.pdl/map") and
// returns 0, a byte count, or -errno: Status becomes errno here (errno_of) and nowhere else.
// No libfuse type appears, so tests drive an Fs without a kernel (tests/fuse/test_fuse_fs.cc);
// ops.cc binds it to struct fuse_operations.
//
// Names and kinds of file:
//   * "/NAME" — a file of the Volume (any name the Volume accepts: 1..200 bytes). Regular files
//     only: no directories (mkdir → EPERM), links or special files. A path with more than one
//     component names nothing that can exist (ENOENT; the kernel never sends one for a
//     create, since the parent directory does not exist).
//   * "/NAME-shm" — SQLite's WAL-index: shared memory that SQLite never needs after the last
//     connection closes, so it lives in this process's RAM and costs no flash (visible, never
//     persisted; a rename between RAM and the Volume is EXDEV).
//   * "/.pdl/stats.json|config|blocks|map" — generated from the image when opened (a snapshot
//     per open; getattr reports the size of the text generated then), read-only (EACCES).
//
// Durability: fsync and fsyncdir sync the whole Volume (every file's bytes, sizes, names);
// flush (close) writes the file's cached chunks back without syncing; unlink of a rollback
// journal ("*-journal") is synced at once, since it is the commit point of SQLite's
// journal_mode=DELETE. A crash of pdl-fuse loses only what no sync made durable. close()
// (unmount) persists everything.
//
// Thread-safety: every method may be called from any libfuse worker thread; the Volume
// serialises flash work, and `mu_` guards the handle table and the RAM files.
#pragma once

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "flash/common/status.h"
#include "flash/image/image.h"

namespace pdl::fuse {

// The one Status → errno translation (a positive errno; 0 for ok).
int errno_of(const Status& st);

struct FsOptions {
  bool read_only = false;  // refuse every change with EROFS (the Image is open read-only too)
  uid_t uid = 0;           // owner reported for every file (the mounting user)
  gid_t gid = 0;
};

class Fs {
 public:
  using Handle = uint64_t;  // fuse_file_info::fh

  Fs(std::unique_ptr<Image> image, const FsOptions& opts);
  ~Fs();
  Fs(const Fs&) = delete;
  Fs& operator=(const Fs&) = delete;

  // Remove the ".fuse_hidden*" files a crash left: libfuse's names for files unlinked while
  // open, garbage once their mount is gone. Called once before mounting (not read-only).
  Status remove_hidden_leftovers();

  int getattr(const char* path, struct stat* st);
  // Names in directory `path` ("/" or "/.pdl"), without "." and "..".
  int readdir(const char* path, std::vector<std::string>* names);
  int mkdir(const char* path);
  int create(const char* path, int flags, Handle* fh);
  // *direct_io: the kernel must not cache the file (the /.pdl/ files, whose size is not known
  // ahead of a read).
  int open(const char* path, int flags, Handle* fh, bool* direct_io);
  int read(Handle fh, char* buf, size_t size, off_t off);
  int write(Handle fh, const char* buf, size_t size, off_t off);
  // By handle if `fh` is given (ftruncate), else by name.
  int truncate(const char* path, off_t size, const Handle* fh);
  int unlink(const char* path);
  int rmdir(const char* path);
  // flags: 0 or RENAME_NOREPLACE (EEXIST if `to` exists); RENAME_EXCHANGE is EINVAL.
  int rename(const char* from, const char* to, unsigned flags);
  int flush(Handle fh);
  int release(Handle fh);
  int fsync(Handle fh);
  int fsyncdir();
  int statfs(struct statvfs* st);
  // tv[0] (atime) is ignored (not stored); tv[1] may be UTIME_NOW or UTIME_OMIT.
  int utimens(const char* path, const struct timespec tv[2], const Handle* fh);
  // No modes or owners are stored: a change to what getattr reports is EPERM, a no-op is 0.
  int chmod(const char* path, mode_t mode);
  int chown(const char* path, uid_t uid, gid_t gid);

  // Unmount: persist everything (Image::close). The Fs refuses changes afterwards.
  Status close();
  Image& image() { return *image_; }

 private:
  struct RamFile;
  struct Open;
  enum class Where : uint8_t { kRoot, kPdlDir, kInspect, kRam, kVolume, kNowhere };
  struct Resolved {
    Where where = Where::kNowhere;
    std::string name;  // file name (inspection file name for kInspect)
  };
  Resolved resolve(const char* path) const;
  static bool under_inspect_dir(const char* path);  // "/.pdl/…", known name or not
  int change_check() const;  // -EROFS when read-only or closed
  int file_attr(const std::string& name, struct stat* st);
  int open_handle(Open o, Handle* fh);
  int find(Handle fh, Open* o);
  int volume_id(const char* path, const Handle* fh, Volume::FileId* id);

  std::unique_ptr<Image> image_;
  Volume& vol_;
  const FsOptions opts_;
  const struct timespec mounted_;  // times of the directories
  // Guards ram_, open_ and next_fh_ (and RamFile bytes). A leaf: held only around those maps,
  // never while calling the Volume (whose mu_ is independent of it) or taking another lock.
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<RamFile>> ram_;
  std::map<Handle, std::shared_ptr<Open>> open_;
  Handle next_fh_ = 1;
  std::atomic<bool> closed_ = false;
};

}  // namespace pdl::fuse
