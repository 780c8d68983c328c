// fs.cc — pdl-fuse's file system over one Image (see fs.h).
#include "fuse/fs.h"

#include <fcntl.h>
#include <linux/fs.h>  // RENAME_NOREPLACE, RENAME_EXCHANGE

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "flash/volume/volume_format.h"
#include "fuse/inspect.h"

namespace pdl::fuse {

int errno_of(const Status& st) {
  switch (st.code()) {
    case Errc::kOk: return 0;
    case Errc::kNotFound: return ENOENT;
    case Errc::kFull:
    case Errc::kHostFull: return ENOSPC;  // the chip or the host file system under it
    case Errc::kTooLarge: return EFBIG;
    case Errc::kReadOnly: return EROFS;
    case Errc::kExists: return EEXIST;
    case Errc::kNameTooLong: return ENAMETOOLONG;
    case Errc::kInvalidArgument: return EINVAL;
    case Errc::kBusy: return EBUSY;
    case Errc::kUnsupported: return EOPNOTSUPP;
    case Errc::kIoError:
    case Errc::kPowerCut:
    case Errc::kNandRule:
    case Errc::kBadBlock:
    case Errc::kCorrupt: return EIO;  // never wrong bytes: the read fails
  }
  return EIO;
}

namespace {

constexpr const char* kShmSuffix = "-shm";
constexpr std::string_view kHiddenPrefix = ".fuse_hidden";  // libfuse's unlinked-but-open files

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool is_ram_name(std::string_view name) { return ends_with(name, kShmSuffix); }

bool writes(int flags) { return (flags & O_ACCMODE) != O_RDONLY; }

struct timespec now_ts() {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t;
}

struct timespec ts_of(uint64_t ns) {
  struct timespec t;
  t.tv_sec = time_t(ns / 1000000000ull);
  t.tv_nsec = long(ns % 1000000000ull);
  return t;
}

}  // namespace

// A WAL-index (or any "-shm" file): bytes in RAM, shared by every handle on it.
struct Fs::RamFile {
  std::vector<uint8_t> bytes;
  struct timespec mtime;
};

// What a handle refers to.
struct Fs::Open {
  Where where = Where::kNowhere;
  Volume::FileId id = 0;                   // kVolume
  std::shared_ptr<RamFile> ram;            // kRam
  std::shared_ptr<const std::string> text; // kInspect: the snapshot taken at open
  bool journal = false;                    // a rollback journal (see unlink)
};

Fs::Fs(std::unique_ptr<Image> image, const FsOptions& opts)
    : image_(std::move(image)), vol_(*image_->volume), opts_(opts), mounted_(now_ts()) {}

Fs::~Fs() = default;

// "/" → root; "/.pdl" → the inspection directory; "/.pdl/X" → an inspection file (X may be
// unknown: kNowhere); "/NAME" → RAM or Volume file; anything deeper → kNowhere.
Fs::Resolved Fs::resolve(const char* path) const {
  Resolved r;
  std::string_view p(path);
  if (p.empty() || p[0] != '/') return r;
  p.remove_prefix(1);
  if (p.empty()) {
    r.where = Where::kRoot;
    return r;
  }
  const size_t slash = p.find('/');
  if (slash == std::string_view::npos) {
    r.name = std::string(p);
    r.where = p == kInspectDir ? Where::kPdlDir : is_ram_name(p) ? Where::kRam : Where::kVolume;
    return r;
  }
  if (p.substr(0, slash) == kInspectDir) {
    const std::string_view f = p.substr(slash + 1);
    if (is_inspect_file(f)) {
      r.where = Where::kInspect;
      r.name = std::string(f);
    }
  }
  return r;
}

// "/.pdl/anything": the inspection directory refuses new entries whatever their name.
bool Fs::under_inspect_dir(const char* path) {
  return std::string_view(path).starts_with(std::string("/") + kInspectDir + "/");
}

int Fs::change_check() const {
  return opts_.read_only || closed_ ? -EROFS : 0;
}

int Fs::file_attr(const std::string& name, struct stat* st) {
  FileInfo fi;
  if (Status s = vol_.stat(name, &fi); !s.is_ok()) return -errno_of(s);
  const uint32_t chunk = vol_.layout().chunk;
  st->st_mode = S_IFREG | 0644;
  st->st_nlink = 1;
  st->st_size = off_t(fi.size);
  st->st_blksize = blksize_t(chunk);
  st->st_blocks = blkcnt_t(uint64_t(fi.chunks_mapped) * chunk / 512);
  st->st_mtim = st->st_ctim = st->st_atim = ts_of(fi.mtime_ns);
  return 0;
}

int Fs::getattr(const char* path, struct stat* st) {
  std::memset(st, 0, sizeof *st);
  st->st_uid = opts_.uid;
  st->st_gid = opts_.gid;
  const Resolved r = resolve(path);
  switch (r.where) {
    case Where::kRoot:
      st->st_mode = S_IFDIR | 0755;
      st->st_nlink = 3;  // ".", ".." and ".pdl"
      st->st_mtim = st->st_ctim = st->st_atim = mounted_;
      return 0;
    case Where::kPdlDir:
      st->st_mode = S_IFDIR | 0555;
      st->st_nlink = 2;
      st->st_mtim = st->st_ctim = st->st_atim = mounted_;
      return 0;
    case Where::kInspect:
      st->st_mode = S_IFREG | 0444;
      st->st_nlink = 1;
      st->st_size = off_t(inspect_text(*image_, r.name, opts_.read_only).size());
      st->st_mtim = st->st_ctim = st->st_atim = now_ts();
      return 0;
    case Where::kRam: {
      std::lock_guard<std::mutex> g(mu_);
      auto it = ram_.find(r.name);
      if (it == ram_.end()) return -ENOENT;
      st->st_mode = S_IFREG | 0644;
      st->st_nlink = 1;
      st->st_size = off_t(it->second->bytes.size());
      st->st_blksize = 4096;
      st->st_blocks = blkcnt_t((it->second->bytes.size() + 511) / 512);
      st->st_mtim = st->st_ctim = st->st_atim = it->second->mtime;
      return 0;
    }
    case Where::kVolume: return file_attr(r.name, st);
    case Where::kNowhere: break;
  }
  return -ENOENT;
}

int Fs::readdir(const char* path, std::vector<std::string>* names) {
  names->clear();
  const Resolved r = resolve(path);
  if (r.where == Where::kPdlDir) {
    names->assign(std::begin(kInspectFiles), std::end(kInspectFiles));
    return 0;
  }
  if (r.where != Where::kRoot) {
    struct stat st;
    return getattr(path, &st) == 0 ? -ENOTDIR : -ENOENT;
  }
  names->push_back(kInspectDir);
  for (const FileInfo& f : vol_.list())
    if (f.name != kInspectDir) names->push_back(f.name);
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& [name, file] : ram_) names->push_back(name);
  return 0;
}

int Fs::mkdir(const char* path) {
  const Resolved r = resolve(path);
  if (r.where == Where::kRoot || r.where == Where::kPdlDir) return -EEXIST;
  if (r.where == Where::kInspect || under_inspect_dir(path)) return -EACCES;
  if (r.where == Where::kNowhere) return -ENOENT;
  if (int rc = change_check()) return rc;
  return -EPERM;  // a flat volume: POSIX's "does not support the creation of directories"
}

int Fs::rmdir(const char* path) {
  const Resolved r = resolve(path);
  if (r.where == Where::kRoot) return -EBUSY;
  if (r.where == Where::kPdlDir) return -EACCES;
  struct stat st;
  return getattr(path, &st) == 0 ? -ENOTDIR : -ENOENT;
}

int Fs::open_handle(Open o, Handle* fh) {
  std::lock_guard<std::mutex> g(mu_);
  *fh = next_fh_++;
  open_[*fh] = std::make_shared<Open>(std::move(o));
  return 0;
}

int Fs::find(Handle fh, Open* o) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = open_.find(fh);
  if (it == open_.end()) return -EBADF;
  *o = *it->second;
  return 0;
}

int Fs::create(const char* path, int flags, Handle* fh) {
  const Resolved r = resolve(path);
  switch (r.where) {
    case Where::kRoot:
    case Where::kPdlDir: return -EISDIR;
    case Where::kInspect: return -EACCES;
    case Where::kNowhere: return under_inspect_dir(path) ? -EACCES : -ENOENT;
    case Where::kRam:
    case Where::kVolume: break;
  }
  if (int rc = change_check()) return rc;
  if (r.name.size() > kMaxNameBytes) return -ENAMETOOLONG;
  Open o;
  o.where = r.where;
  if (r.where == Where::kRam) {
    std::lock_guard<std::mutex> g(mu_);
    auto& slot = ram_[r.name];
    if (slot && (flags & O_EXCL)) return -EEXIST;
    if (!slot) {
      slot = std::make_shared<RamFile>();
      slot->mtime = now_ts();
    } else if (flags & O_TRUNC) {
      slot->bytes.clear();
    }
    o.ram = slot;
  } else {
    Status st = vol_.create(r.name, &o.id);
    if (st.is(Errc::kExists)) {
      if (flags & O_EXCL) return -EEXIST;
      st = vol_.lookup(r.name, &o.id);
      if (st.is_ok() && (flags & O_TRUNC)) st = vol_.truncate(o.id, 0);
    }
    if (!st.is_ok()) return -errno_of(st);
    o.journal = kind_of(r.name) == FileKind::kJournal;
  }
  return open_handle(std::move(o), fh);
}

int Fs::open(const char* path, int flags, Handle* fh, bool* direct_io) {
  *direct_io = false;
  const Resolved r = resolve(path);
  Open o;
  o.where = r.where;
  switch (r.where) {
    case Where::kRoot:
    case Where::kPdlDir: return -EISDIR;
    case Where::kNowhere: return -ENOENT;
    case Where::kInspect:
      if (writes(flags) || (flags & O_TRUNC)) return -EACCES;
      o.text = std::make_shared<const std::string>(
          inspect_text(*image_, r.name, opts_.read_only));
      *direct_io = true;
      break;
    case Where::kRam: {
      if (writes(flags) || (flags & O_TRUNC))
        if (int rc = change_check()) return rc;
      std::lock_guard<std::mutex> g(mu_);
      auto it = ram_.find(r.name);
      if (it == ram_.end()) return -ENOENT;
      if (flags & O_TRUNC) it->second->bytes.clear();
      o.ram = it->second;
      break;
    }
    case Where::kVolume: {
      if (writes(flags) || (flags & O_TRUNC))
        if (int rc = change_check()) return rc;
      if (Status st = vol_.lookup(r.name, &o.id); !st.is_ok()) return -errno_of(st);
      if (flags & O_TRUNC)
        if (Status st = vol_.truncate(o.id, 0); !st.is_ok()) return -errno_of(st);
      o.journal = kind_of(r.name) == FileKind::kJournal;
      break;
    }
  }
  return open_handle(std::move(o), fh);
}

int Fs::read(Handle fh, char* buf, size_t size, off_t off) {
  Open o;
  if (int rc = find(fh, &o)) return rc;
  if (off < 0) return -EINVAL;
  const uint64_t at = uint64_t(off);
  switch (o.where) {
    case Where::kInspect: {
      if (at >= o.text->size()) return 0;
      const size_t n = std::min(size, o.text->size() - size_t(at));
      std::memcpy(buf, o.text->data() + at, n);
      return int(n);
    }
    case Where::kRam: {
      std::lock_guard<std::mutex> g(mu_);
      const std::vector<uint8_t>& b = o.ram->bytes;
      if (at >= b.size()) return 0;
      const size_t n = std::min(size, b.size() - size_t(at));
      std::memcpy(buf, b.data() + at, n);
      return int(n);
    }
    case Where::kVolume: {
      size_t got = 0;
      std::span<uint8_t> out(reinterpret_cast<uint8_t*>(buf), size);
      if (Status st = vol_.read(o.id, at, out, &got); !st.is_ok()) return -errno_of(st);
      return int(got);
    }
    default: return -EBADF;
  }
}

int Fs::write(Handle fh, const char* buf, size_t size, off_t off) {
  Open o;
  if (int rc = find(fh, &o)) return rc;
  if (o.where == Where::kInspect) return -EBADF;  // opened read-only
  if (int rc = change_check()) return rc;
  if (off < 0) return -EINVAL;
  const uint64_t at = uint64_t(off);
  if (o.where == Where::kRam) {
    // (bounded like the Volume's files: a RAM file is sized by its highest offset)
    if (at > vol_.max_file_size() || size > vol_.max_file_size() - at) return -EFBIG;
    std::lock_guard<std::mutex> g(mu_);
    std::vector<uint8_t>& b = o.ram->bytes;
    if (b.size() < at + size) b.resize(at + size);
    std::memcpy(b.data() + at, buf, size);
    o.ram->mtime = now_ts();
    return int(size);
  }
  std::span<const uint8_t> data(reinterpret_cast<const uint8_t*>(buf), size);
  if (Status st = vol_.write(o.id, at, data); !st.is_ok()) {
    // A write crossing the end of the data area stored what lies within it: a short write
    // (POSIX), and the next write, at the end, gets EFBIG.
    if (st.is(Errc::kTooLarge) && at < vol_.max_file_size())
      return int(vol_.max_file_size() - at);
    return -errno_of(st);
  }
  return int(size);
}

int Fs::volume_id(const char* path, const Handle* fh, Volume::FileId* id) {
  if (fh) {
    Open o;
    if (int rc = find(*fh, &o)) return rc;
    if (o.where != Where::kVolume) return -EBADF;
    *id = o.id;
    return 0;
  }
  const Resolved r = resolve(path);
  if (r.where != Where::kVolume) return -ENOENT;
  if (Status st = vol_.lookup(r.name, id); !st.is_ok()) return -errno_of(st);
  return 0;
}

int Fs::truncate(const char* path, off_t size, const Handle* fh) {
  if (size < 0) return -EINVAL;
  const Resolved r = resolve(path ? path : "");
  if (r.where == Where::kInspect) return -EACCES;
  if (r.where == Where::kRoot || r.where == Where::kPdlDir) return -EISDIR;
  Open o;
  if (fh && find(*fh, &o) == 0 && o.where == Where::kInspect) return -EACCES;
  if (int rc = change_check()) return rc;
  if (r.where == Where::kRam || (fh && o.where == Where::kRam)) {
    if (uint64_t(size) > vol_.max_file_size()) return -EFBIG;
    std::lock_guard<std::mutex> g(mu_);
    std::shared_ptr<RamFile> f = o.ram;
    if (!f) {
      auto it = ram_.find(r.name);
      if (it == ram_.end()) return -ENOENT;
      f = it->second;
    }
    f->bytes.resize(size_t(size));
    f->mtime = now_ts();
    return 0;
  }
  Volume::FileId id;
  if (int rc = volume_id(path, fh, &id)) return rc;
  if (Status st = vol_.truncate(id, uint64_t(size)); !st.is_ok()) return -errno_of(st);
  return 0;
}

int Fs::unlink(const char* path) {
  const Resolved r = resolve(path);
  switch (r.where) {
    case Where::kRoot:
    case Where::kPdlDir: return -EISDIR;
    case Where::kInspect: return -EACCES;
    case Where::kNowhere: return -ENOENT;
    case Where::kRam: {
      if (int rc = change_check()) return rc;
      std::lock_guard<std::mutex> g(mu_);
      return ram_.erase(r.name) ? 0 : -ENOENT;  // open handles keep their bytes
    }
    case Where::kVolume: break;
  }
  if (int rc = change_check()) return rc;
  if (Status st = vol_.remove(r.name); !st.is_ok()) return -errno_of(st);
  // The commit point of journal_mode=DELETE: durable before the unlink returns.
  if (kind_of(r.name) == FileKind::kJournal)
    if (Status st = vol_.sync(); !st.is_ok()) return -errno_of(st);
  return 0;
}

int Fs::rename(const char* from, const char* to, unsigned flags) {
  const Resolved a = resolve(from), b = resolve(to);
  if (flags & RENAME_EXCHANGE) return -EINVAL;
  if (flags & ~unsigned(RENAME_NOREPLACE)) return -EINVAL;
  if (a.where == Where::kInspect || b.where == Where::kInspect) return -EACCES;
  if (b.where == Where::kNowhere && under_inspect_dir(to)) return -EACCES;
  if (a.where == Where::kRoot || a.where == Where::kPdlDir) return -EBUSY;
  if (b.where == Where::kRoot || b.where == Where::kPdlDir) return -EISDIR;
  if (a.where == Where::kNowhere || b.where == Where::kNowhere) return -ENOENT;
  if (int rc = change_check()) return rc;
  if (b.name.size() > kMaxNameBytes) return -ENAMETOOLONG;
  if ((a.where == Where::kRam) != (b.where == Where::kRam)) return -EXDEV;
  if (a.where == Where::kRam) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = ram_.find(a.name);
    if (it == ram_.end()) return -ENOENT;
    if (a.name == b.name) return 0;
    if ((flags & RENAME_NOREPLACE) && ram_.count(b.name)) return -EEXIST;
    std::shared_ptr<RamFile> f = it->second;
    ram_.erase(it);
    ram_[b.name] = f;
    return 0;
  }
  if (flags & RENAME_NOREPLACE) {
    Volume::FileId id;
    if (vol_.lookup(b.name, &id).is_ok()) return -EEXIST;
  }
  if (Status st = vol_.rename(a.name, b.name); !st.is_ok()) return -errno_of(st);
  // A journal leaving its name is a commit point too: libfuse renames a file unlinked while
  // still open (its RELEASE not yet processed — SQLite closes the journal just before it
  // deletes it, and FUSE's release is asynchronous) to ".fuse_hiddenN" instead of unlinking
  // it, and unlinks that at release.
  if (kind_of(a.name) == FileKind::kJournal)
    if (Status st = vol_.sync(); !st.is_ok()) return -errno_of(st);
  return 0;
}

Status Fs::remove_hidden_leftovers() {
  if (opts_.read_only) return Status::ok();
  bool removed = false;
  for (const FileInfo& f : vol_.list())
    if (f.name.starts_with(kHiddenPrefix)) {
      PDL_TRY(vol_.remove(f.name));
      removed = true;
    }
  return removed ? vol_.sync() : Status::ok();
}

int Fs::flush(Handle fh) {
  Open o;
  if (int rc = find(fh, &o)) return rc;
  if (o.where != Where::kVolume || opts_.read_only) return 0;
  if (Status st = vol_.flush(o.id); !st.is_ok() && !st.is(Errc::kNotFound))
    return -errno_of(st);
  return 0;
}

int Fs::release(Handle fh) {
  std::lock_guard<std::mutex> g(mu_);
  return open_.erase(fh) ? 0 : -EBADF;
}

int Fs::fsync(Handle fh) {
  Open o;
  if (int rc = find(fh, &o)) return rc;
  if (o.where != Where::kVolume) return 0;  // RAM and inspection files have nothing to sync
  return fsyncdir();
}

int Fs::fsyncdir() {
  if (opts_.read_only) return 0;
  if (Status st = vol_.sync(); !st.is_ok()) return -errno_of(st);
  return 0;
}

int Fs::statfs(struct statvfs* st) {
  std::memset(st, 0, sizeof *st);
  const VolumeLayout L = vol_.layout();
  const VolumeStats vs = vol_.stats();
  st->f_bsize = st->f_frsize = L.chunk;
  st->f_blocks = L.data_lpns;
  st->f_bfree = st->f_bavail = vs.free_lpns;
  st->f_files = L.max_files();
  const size_t used = vol_.list().size();
  st->f_ffree = st->f_favail = used < L.max_files() ? L.max_files() - used : 0;
  st->f_namemax = kMaxNameBytes;
  if (opts_.read_only) st->f_flag |= ST_RDONLY;
  return 0;
}

int Fs::utimens(const char* path, const struct timespec tv[2], const Handle* fh) {
  const Resolved r = resolve(path ? path : "");
  if (r.where == Where::kInspect) return -EACCES;
  if (r.where == Where::kRoot || r.where == Where::kPdlDir) return 0;  // nothing stored
  if (int rc = change_check()) return rc;
  const struct timespec m = !tv ? now_ts() : tv[1].tv_nsec == UTIME_NOW ? now_ts() : tv[1];
  const bool omit = tv && tv[1].tv_nsec == UTIME_OMIT;
  if (r.where == Where::kRam) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = ram_.find(r.name);
    if (it == ram_.end()) return -ENOENT;
    if (!omit) it->second->mtime = m;
    return 0;
  }
  Volume::FileId id;
  if (int rc = volume_id(path, fh, &id)) return rc;
  if (omit) return 0;
  if (m.tv_sec < 0) return -EINVAL;  // mtimes are unsigned nanoseconds since the epoch
  const uint64_t ns = uint64_t(m.tv_sec) * 1000000000ull + uint64_t(m.tv_nsec);
  if (Status st = vol_.set_mtime(id, ns); !st.is_ok()) return -errno_of(st);
  return 0;
}

int Fs::chmod(const char* path, mode_t mode) {
  struct stat st;
  if (int rc = getattr(path, &st)) return rc;
  return (mode & 07777) == (st.st_mode & 07777) ? 0 : -EPERM;
}

int Fs::chown(const char* path, uid_t uid, gid_t gid) {
  struct stat st;
  if (int rc = getattr(path, &st)) return rc;
  const bool same =
      (uid == uid_t(-1) || uid == st.st_uid) && (gid == gid_t(-1) || gid == st.st_gid);
  return same ? 0 : -EPERM;
}

Status Fs::close() {
  if (closed_.exchange(true)) return Status::ok();
  return image_->close();
}

}  // namespace pdl::fuse
