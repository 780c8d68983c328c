// db_state.cc — the registry of images open in this process.
#include "vfs/db_state.h"

#include "flash/common/thread_annotations.h"
#include "flash/device/emulated_nand.h"

#include "vfs/pdl_vfs.h"
#include "vfs/vfs_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

namespace pdl::vfs {

namespace {
// Lock order (the process's locks, outermost first): g_registry_mu -> DbState::mu ->
// Volume::mu_. This one guards the registry maps below; while holding it, a DbState's mu or
// its Volume's mu_ may be taken (share_open checks an open image under Volume::mu_), never the
// other way round. (A pdl::Mutex: a clang build, where meson adds -Wthread-safety,
// checks the PDL_REQUIRES below.)
Mutex g_registry_mu;
std::map<std::string, std::shared_ptr<DbState>>& registry_all() PDL_REQUIRES(g_registry_mu) {
  static auto* r = new std::map<std::string, std::shared_ptr<DbState>>();  // never destroyed:
  return *r;  // connections may still close during static destruction
}

// The registry as this process sees it. A child forked while images were open inherits the
// parent's entries; they are the parent's (device lock, memory state), so the child drops them
// without closing anything — closing would write to the parent's image — and opens afresh
// (which finds the image locked by the parent: SQLITE_BUSY).
std::map<std::string, std::shared_ptr<DbState>>& registry() PDL_REQUIRES(g_registry_mu) {
  auto& r = registry_all();
  const pid_t me = getpid();
  for (auto it = r.begin(); it != r.end();) {
    if (it->second->pid == me) {
      ++it;
      continue;
    }
    static auto* orphans = new std::vector<std::shared_ptr<DbState>>();  // never destroyed
    orphans->push_back(it->second);
    it = r.erase(it);
  }
  return r;
}

// The only non-journal file of `vol`, else the only one whose first bytes are SQLite's file
// header, else `fallback`.
std::string only_database(Volume& vol, const std::string& fallback) {
  static constexpr char kMagic[] = "SQLite format 3";  // 16 bytes with its NUL
  std::vector<std::string> files, sqlite;
  for (const FileInfo& f : vol.list())
    if (f.kind == FileKind::kDatabase) files.push_back(f.name);
  if (files.size() == 1) return files[0];
  for (const std::string& name : files) {
    Volume::FileId id;
    uint8_t head[sizeof kMagic];
    size_t got = 0;
    if (vol.lookup(name, &id).is_ok() && vol.read(id, 0, head, &got).is_ok() &&
        got == sizeof head && std::memcmp(head, kMagic, sizeof head) == 0)
      sqlite.push_back(name);
  }
  return sqlite.size() == 1 ? sqlite[0] : fallback;
}

std::string basename_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The open image that `path` names: the one whose file is the same (device, inode) — under
// this name or another —, else (no file at `path`) the one registered under this name.
std::shared_ptr<DbState> find_open(const std::string& path) PDL_REQUIRES(g_registry_mu) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    for (const auto& [name, s] : registry())
      if (s->has_id && s->dev == st.st_dev && s->ino == st.st_ino) return s;
  }
  auto it = registry().find(path);
  if (it == registry().end() || it->second->has_id) return nullptr;  // (a file since replaced)
  return it->second;
}

// A connection of this process shares the open image `s` under `path`.
Status share_open(DbState& s, const std::string& path, const ImageParams& params,
                  const std::string& db, bool read_only) {
  if (!read_only && s.read_only_asked && ::access(path.c_str(), W_OK) == 0)
    return Status::error(Errc::kReadOnly,
                         "image " + path + " is open read-only in this process (a connection "
                         "asked for it read-only); it can be opened read-write once those "
                         "connections are closed");
  {
    auto vl = s.vol->lock();
    PDL_TRY(check_params_match(params, *s.image->nand, s.vol->store().params(),
                               s.vol->layout()));
  }
  if (!db.empty() && db != s.db_name)
    return Status::error(Errc::kInvalidArgument, "db=" + db + " contradicts the open image, "
                                                 "whose database is " + s.db_name);
  if (params.atomic_commit && *params.atomic_commit != s.commit_asked_atomic)
    return Status::error(Errc::kInvalidArgument,
                         std::string("commit=") + (*params.atomic_commit ? "atomic" : "journal") +
                             " contradicts the open image, which another connection of this "
                             "process opened with commit=" +
                             (s.commit_asked_atomic ? "atomic" : "journal"));
  return Status::ok();
}
}  // namespace

Status acquire_db(const std::string& path, const ImageParams& params, const std::string& db,
                  bool create, bool read_only, std::shared_ptr<DbState>* out) {
  MutexLock g(g_registry_mu);
  if (std::shared_ptr<DbState> open = find_open(path)) {
    PDL_TRY(share_open(*open, path, params, db, read_only));
    if (std::find(open->names.begin(), open->names.end(), path) == open->names.end()) {
      open->names.push_back(path);  // another link to the same file: its journal and WAL
      registry()[path] = open;      // names are found under this name too (find_db_for)
    }
    open->refs++;
    *out = open;
    return Status::ok();
  }
  auto s = std::make_shared<DbState>();
  s->path = path;
  s->names = {path};
  s->pid = getpid();
  const std::string default_name = db.empty() ? basename_of(path) : db;
  Status st = open_image(path, params, create ? ImageMode::kCreate : ImageMode::kOpen,
                         read_only, default_name, &s->image);
  if (st.is(Errc::kReadOnly) && !read_only)  // the host will not let us write it: read-only
    st = open_image(path, params, ImageMode::kOpen, true, default_name, &s->image);
  PDL_TRY(st);
  // An image this open created is removed again if the open fails from here on (an error or
  // an exception): a failed create leaves no file behind.
  struct UndoCreate {
    DbState& s;
    bool armed = true;
    ~UndoCreate() {
      if (!armed || !s.image || !s.image->created) return;
      s.image.reset();  // (the device closed and unlocked first)
      ::unlink(s.path.c_str());
    }
  } undo{*s};
  s->read_only_asked = read_only;
  struct stat id;
  if (::stat(path.c_str(), &id) == 0) {
    s->has_id = true;
    s->dev = id.st_dev;
    s->ino = id.st_ino;
  }
  s->vol = s->image->volume.get();
  // Which file inside the Volume is the database: db=, else the one recorded at creation,
  // else (an image formatted by `pdl format` or filled through FUSE) the only non-journal
  // file, or the only one starting with SQLite's header, else the image's own name.
  s->db_name = db;
  if (s->db_name.empty()) s->db_name = s->vol->main_name();
  if (s->db_name.empty()) s->db_name = only_database(*s->vol, basename_of(path));
  PDL_TRY(check_name(s->db_name));
  // Atomic commit needs a store with atomic groups (PDL, OPU, IPL); IPU keeps the journal on
  // flash, as with commit=journal (pdl_stats says which).
  s->commit_asked_atomic = params.atomic_commit.value_or(true);
  s->atomic_commit = s->commit_asked_atomic && s->vol->atomic();
  s->refs = 1;
  registry()[path] = s;  // (replacing the entry of a file since replaced at this name)
  undo.armed = false;
  *out = s;
  return Status::ok();
}

std::shared_ptr<DbState> find_db_for(const std::string& name, std::string* suffix) {
  MutexLock g(g_registry_mu);
  for (const char* sfx : {"-journal", "-wal"}) {
    const std::string s(sfx);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      auto it = registry().find(name.substr(0, name.size() - s.size()));
      if (it != registry().end()) {
        *suffix = s;
        return it->second;
      }
    }
  }
  return nullptr;  // (super-journals live on the host: vfs.cc)
}

Status acquire_db_of_journal(const std::string& name, std::shared_ptr<DbState>* out) {
  out->reset();
  static const std::string kSuffix = "-journal";
  if (name.size() <= kSuffix.size() ||
      name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
    return Status::ok();
  const std::string image = name.substr(0, name.size() - kSuffix.size());
  if (!EmulatedNand::is_image_file(image)) return Status::ok();
  return acquire_db(image, ImageParams(), "", false, false, out);
}

Nand* device_of(const std::string& full_path) {
  MutexLock g(g_registry_mu);
  auto it = registry().find(full_path);
  return it == registry().end() ? nullptr : it->second->image->nand.get();
}

Image* image_of(const std::string& full_path) {
  MutexLock g(g_registry_mu);
  auto it = registry().find(full_path);
  return it == registry().end() ? nullptr : it->second->image.get();
}

void add_ref(DbState& db) {
  MutexLock g(g_registry_mu);
  db.refs++;
}

void release_db(std::shared_ptr<DbState>& ref) {
  const std::shared_ptr<DbState> db = std::move(ref);  // the caller's reference, gone for good
  // Under the registry lock, so a concurrent open of the same path waits for the device to
  // be released instead of finding it busy.
  MutexLock g(g_registry_mu);
  if (--db->refs > 0) return;
  try {
    discard_unfinished(*db);  // (a transaction whose journal is still hot in memory)
  } catch (...) {
    escape_current<VfsEscape>("xClose");
  }
  for (const std::string& name : db->names) {
    auto it = registry().find(name);
    if (it != registry().end() && it->second == db) registry().erase(it);
  }
  try {
    Status st = db->image->close();
    (void)st;  // the last xClose cannot report failure; unsynced data is what a crash would lose
  } catch (...) {
    escape_current<VfsEscape>("xClose");  // the device is released all the same
  }
  db->image.reset();
  db->vol = nullptr;
}

}  // namespace pdl::vfs
