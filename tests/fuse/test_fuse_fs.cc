// test_fuse_fs.cc — pdl-fuse's file system (fuse/fs.h) driven directly, without a kernel.
//
// Every FUSE operation of pdl::fuse::Fs over an image file: files written, read, truncated,
// renamed and removed, with sizes, modes, owners and times as getattr reports them; every
// errno the contract names (long names, deeper paths, existing names, directories, modes,
// owners, read-only mounts); persistence across close and remount; durability of fsync and of
// a rollback journal's unlink across a power cut of the emulated chip (the Fs dropped without
// close()); ENOSPC on a tiny chip with nothing committed lost; "-shm" files kept in RAM at no
// flash cost; statfs; and the read-only texts of /.pdl/ (stats.json, config, blocks, map).
// The suites that touch flash run over every method (PDL, OPU, IPU, IPL) on a small chip.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <limits>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>  // RENAME_NOREPLACE, RENAME_EXCHANGE (glibc, _GNU_SOURCE)
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "flash/device/emulated_nand.h"
#include "flash/image/image.h"
#include "fuse/fs.h"
#include "tests/support/test_util.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

using namespace pdl;
using pdl::fuse::Fs;
using pdl::fuse::FsOptions;

namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint32_t kChunk = 512;  // the page size of every image here: one Volume chunk
constexpr uid_t kUid = 4242;      // what the Fs reports as every file's owner
constexpr gid_t kGid = 4343;

const char* const kMethods[] = {"pdl", "opu", "ipu", "ipl"};

// A small chip: 512-byte pages, 8 pages per block, `size` of data (128K: 32 blocks), and a
// directory of 16 files (the default, 256, would take 128 of the chip's pages).
constexpr uint32_t kMaxFiles = 16;
ImageParams params_for(const std::string& method, const char* size = "128K") {
  ImageParams p;
  REQUIRE(p.set("max_files", std::to_string(kMaxFiles)).is_ok());
  REQUIRE(p.set("method", method).is_ok());
  REQUIRE(p.set("page", "512").is_ok());
  REQUIRE(p.set("pages_per_block", "8").is_ok());
  REQUIRE(p.set("size", size).is_ok());
  return p;
}

FsOptions options(bool read_only = false) {
  FsOptions o;
  o.read_only = read_only;
  o.uid = kUid;
  o.gid = kGid;
  return o;
}

Bytes pattern(size_t n, uint64_t salt) {
  std::mt19937_64 rng = test::seeded_rng(salt);
  return test::random_page(rng, n);
}

// An image file in a fresh temp directory with an Fs over it; remount() and crash() reopen it.
struct Mount {
  std::string path;
  ImageParams params;
  bool read_only = false;
  std::unique_ptr<Fs> fs;

  explicit Mount(const std::string& method, const char* size = "128K")
      : path(test::temp_path("image.pdl")), params(params_for(method, size)) {
    std::unique_ptr<Image> img;
    Status st = format_image(path, params, "", /*force=*/false, &img);
    INFO(method << ": " << st.to_string());
    REQUIRE(st.is_ok());
    fs = std::make_unique<Fs>(std::move(img), options());
  }
  ~Mount() {
    if (fs) (void)fs->close();
  }

  Fs& operator*() { return *fs; }
  Fs* operator->() { return fs.get(); }

  void open(bool ro) {
    std::unique_ptr<Image> img;
    Status st = open_image(path, params, ImageMode::kOpen, ro, "", &img);
    INFO(st.to_string());
    REQUIRE(st.is_ok());
    read_only = ro;
    fs = std::make_unique<Fs>(std::move(img), options(ro));
  }
  // Unmount (close: persist everything), release the image, mount it again.
  void remount(bool ro = false) {
    Status st = fs->close();
    INFO(st.to_string());
    REQUIRE(st.is_ok());
    fs.reset();
    open(ro);
  }
  EmulatedNand& nand() {
    auto* n = dynamic_cast<EmulatedNand*>(fs->image().nand.get());
    REQUIRE(n != nullptr);
    return *n;
  }
  // Power fails after `ops` more programs/erases; the Fs is then dropped without close()
  // (nothing more reaches the chip) and the image is mounted again as after a crash.
  void cut_power_after(uint64_t ops) { nand().cut_power_after(ops); }
  void crash_and_remount() {
    fs.reset();
    open(false);
  }
};

Fs::Handle create(Fs& fs, const std::string& path, int flags = O_CREAT | O_RDWR) {
  Fs::Handle fh = 0;
  const int rc = fs.create(path.c_str(), flags, &fh);
  INFO("create " << path);
  REQUIRE(rc == 0);
  return fh;
}

Fs::Handle open_file(Fs& fs, const std::string& path, int flags = O_RDONLY,
                     bool* direct_io = nullptr) {
  Fs::Handle fh = 0;
  bool direct = true;
  const int rc = fs.open(path.c_str(), flags, &fh, &direct);
  INFO("open " << path);
  REQUIRE(rc == 0);
  if (direct_io) *direct_io = direct;
  return fh;
}

void write_at(Fs& fs, Fs::Handle fh, const Bytes& b, off_t off) {
  const int rc = fs.write(fh, reinterpret_cast<const char*>(b.data()), b.size(), off);
  REQUIRE(rc == int(b.size()));
}

// A whole file by handle: reads in `piece`-byte calls until a short (0) read.
std::string read_handle(Fs& fs, Fs::Handle fh, size_t piece = 4096) {
  std::string out;
  std::vector<char> buf(piece);
  for (;;) {
    const int rc = fs.read(fh, buf.data(), buf.size(), off_t(out.size()));
    REQUIRE(rc >= 0);
    if (rc == 0) break;
    out.append(buf.data(), size_t(rc));
    REQUIRE(out.size() < (64u << 20));
  }
  return out;
}

Bytes read_all(Fs& fs, const std::string& path) {
  const Fs::Handle fh = open_file(fs, path);
  const std::string s = read_handle(fs, fh, 700);  // not a multiple of the chunk
  REQUIRE(fs.release(fh) == 0);
  return Bytes(s.begin(), s.end());
}

// Create (or replace the contents of) `path`, as cp would: create, write, flush, release.
void put(Fs& fs, const std::string& path, const Bytes& b) {
  const Fs::Handle fh = create(fs, path, O_CREAT | O_TRUNC | O_WRONLY);
  if (!b.empty()) write_at(fs, fh, b, 0);
  REQUIRE(fs.flush(fh) == 0);
  REQUIRE(fs.release(fh) == 0);
}

void sync_file(Fs& fs, const std::string& path) {
  const Fs::Handle fh = open_file(fs, path, O_RDWR);
  REQUIRE(fs.fsync(fh) == 0);
  REQUIRE(fs.release(fh) == 0);
}

struct stat attr(Fs& fs, const std::string& path) {
  struct stat st;
  const int rc = fs.getattr(path.c_str(), &st);
  INFO("getattr " << path);
  REQUIRE(rc == 0);
  return st;
}

int getattr_rc(Fs& fs, const std::string& path) {
  struct stat st;
  return fs.getattr(path.c_str(), &st);
}

std::set<std::string> listing(Fs& fs, const char* dir = "/") {
  std::vector<std::string> names;
  REQUIRE(fs.readdir(dir, &names) == 0);
  std::set<std::string> s(names.begin(), names.end());
  REQUIRE(s.size() == names.size());  // no name twice
  return s;
}

std::string inspect(Fs& fs, const std::string& name, size_t piece = 4096) {
  bool direct = false;
  const Fs::Handle fh = open_file(fs, "/.pdl/" + name, O_RDONLY, &direct);
  REQUIRE(direct);
  const std::string s = read_handle(fs, fh, piece);
  REQUIRE(fs.release(fh) == 0);
  return s;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::map<std::string, std::string> config_of(Fs& fs) {
  std::map<std::string, std::string> kv;
  for (const std::string& l : lines_of(inspect(fs, "config"))) {
    const size_t eq = l.find('=');
    INFO("config line '" << l << "'");
    REQUIRE(eq != std::string::npos);
    REQUIRE(eq > 0);
    REQUIRE(!kv.count(l.substr(0, eq)));
    kv[l.substr(0, eq)] = l.substr(eq + 1);
  }
  return kv;
}

bool is_number(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

struct MapLine {
  std::string lpn, chunk, base, diff, in_buffer, name;
};

std::vector<MapLine> map_of(const std::string& text) {
  std::vector<std::string> ls = lines_of(text);
  REQUIRE(!ls.empty());
  REQUIRE(ls[0].rfind("#", 0) == 0);
  std::vector<MapLine> out;
  for (size_t i = 1; i < ls.size(); i++) {
    INFO("map line '" << ls[i] << "'");
    std::istringstream in(ls[i]);
    MapLine m;
    REQUIRE(bool(in >> m.lpn >> m.chunk >> m.base >> m.diff >> m.in_buffer));
    REQUIRE(in.get() == ' ');
    std::getline(in, m.name);
    REQUIRE(!m.name.empty());
    REQUIRE(is_number(m.lpn));
    REQUIRE(is_number(m.chunk));
    REQUIRE((is_number(m.base) || m.base == "-"));
    REQUIRE((is_number(m.diff) || m.diff == "-"));
    out.push_back(m);
  }
  return out;
}

struct timespec mtime_of(Fs& fs, const std::string& path) { return attr(fs, path).st_mtim; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Files: round trip, attributes, listing

TEST_CASE("a file created and written through the Fs reads back with its size in getattr",
          "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method);
  const Bytes data = pattern(3 * kChunk + 77, 1);

  const Fs::Handle fh = create(*m, "/hello.db");
  CHECK(attr(*m, "/hello.db").st_size == 0);
  // In two unaligned pieces.
  write_at(*m, fh, Bytes(data.begin(), data.begin() + 300), 0);
  write_at(*m, fh, Bytes(data.begin() + 300, data.end()), 300);
  // Read back through the same handle, before any flush.
  std::vector<char> buf(data.size() + 100);
  REQUIRE(m->read(fh, buf.data(), buf.size(), 0) == int(data.size()));
  CHECK(std::equal(data.begin(), data.end(), reinterpret_cast<uint8_t*>(buf.data())));
  // A read at an offset, one that ends past the end, one at the end.
  REQUIRE(m->read(fh, buf.data(), 10, 1000) == 10);
  CHECK(std::equal(data.begin() + 1000, data.begin() + 1010,
                   reinterpret_cast<uint8_t*>(buf.data())));
  REQUIRE(m->read(fh, buf.data(), 100, off_t(data.size() - 20)) == 20);
  CHECK(m->read(fh, buf.data(), 100, off_t(data.size())) == 0);
  CHECK(m->read(fh, buf.data(), 100, off_t(data.size() + 5000)) == 0);
  REQUIRE(m->flush(fh) == 0);
  REQUIRE(m->release(fh) == 0);

  const struct stat st = attr(*m, "/hello.db");
  CHECK(st.st_mode == (S_IFREG | 0644));
  CHECK(st.st_size == off_t(data.size()));
  CHECK(st.st_blksize == blksize_t(kChunk));
  CHECK(st.st_nlink == 1);
  CHECK(st.st_uid == kUid);
  CHECK(st.st_gid == kGid);
  CHECK(read_all(*m, "/hello.db") == data);

  // An empty file.
  put(*m, "/empty", {});
  CHECK(attr(*m, "/empty").st_size == 0);
  CHECK(read_all(*m, "/empty").empty());

  // The directories.
  const struct stat root = attr(*m, "/");
  CHECK(S_ISDIR(root.st_mode));
  CHECK(root.st_uid == kUid);
  CHECK(S_ISDIR(attr(*m, "/.pdl").st_mode));
}

TEST_CASE("readdir of / lists the files and .pdl, and /.pdl lists the four inspection files",
          "[fuse]") {
  Mount m("pdl");
  CHECK(listing(*m) == std::set<std::string>{".pdl"});
  put(*m, "/a.db", pattern(100, 2));
  put(*m, "/b.db-journal", pattern(700, 3));
  put(*m, "/c", {});
  CHECK(listing(*m) == std::set<std::string>{".pdl", "a.db", "b.db-journal", "c"});
  CHECK(listing(*m, "/.pdl") ==
        std::set<std::string>{"stats.json", "config", "blocks", "map"});
  std::vector<std::string> names;
  CHECK(m->readdir("/nope", &names) == -ENOENT);
  CHECK(m->readdir("/a.db", &names) == -ENOTDIR);
  CHECK(m->readdir("/a/b", &names) == -ENOENT);
}

TEST_CASE("a handle that is released, or was never given, is EBADF", "[fuse]") {
  Mount m("pdl");
  const Fs::Handle fh = create(*m, "/f");
  REQUIRE(m->release(fh) == 0);
  char c = 'x';
  CHECK(m->read(fh, &c, 1, 0) == -EBADF);
  CHECK(m->write(fh, &c, 1, 0) == -EBADF);
  CHECK(m->release(fh) == -EBADF);
  CHECK(m->fsync(fh) == -EBADF);
  CHECK(m->flush(fh) == -EBADF);
  CHECK(m->read(987654, &c, 1, 0) == -EBADF);
}

TEST_CASE("create of an existing name opens it, truncates it with O_TRUNC, and is EEXIST with "
          "O_EXCL", "[fuse]") {
  Mount m("pdl");
  const Bytes data = pattern(1500, 4);
  put(*m, "/f", data);
  Fs::Handle fh = 0;
  CHECK(m->create("/f", O_CREAT | O_EXCL | O_RDWR, &fh) == -EEXIST);
  fh = create(*m, "/f", O_CREAT | O_RDWR);
  REQUIRE(m->release(fh) == 0);
  CHECK(read_all(*m, "/f") == data);
  fh = create(*m, "/f", O_CREAT | O_TRUNC | O_RDWR);
  REQUIRE(m->release(fh) == 0);
  CHECK(attr(*m, "/f").st_size == 0);
  // open with O_TRUNC truncates too.
  put(*m, "/g", data);
  fh = open_file(*m, "/g", O_WRONLY | O_TRUNC);
  REQUIRE(m->release(fh) == 0);
  CHECK(attr(*m, "/g").st_size == 0);
}

// ---------------------------------------------------------------------------------------------
// Persistence

TEST_CASE("files written through the Fs keep names, sizes, contents and mtimes across a "
          "remount", "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method);
  std::map<std::string, Bytes> files = {
      {"main.db", pattern(4 * kChunk, 10)},
      {"main.db-journal", pattern(kChunk + 28, 11)},
      {"x", pattern(1, 12)},
      {"empty", {}},
      {std::string(200, 'n'), pattern(3000, 13)},  // the longest name
  };
  for (const auto& [n, b] : files) put(*m, "/" + n, b);
  const struct timespec fixed = {1700000000, 123456789};
  const struct timespec tv[2] = {{0, UTIME_OMIT}, fixed};
  REQUIRE(m->utimens("/main.db", tv, nullptr) == 0);
  {
    const struct timespec mt = mtime_of(*m, "/main.db");
    CHECK(mt.tv_sec == fixed.tv_sec);
    CHECK(mt.tv_nsec == fixed.tv_nsec);
  }
  // By handle too.
  const struct timespec fixed2 = {1500000000, 5};
  const struct timespec tv2[2] = {{0, 0}, fixed2};
  const Fs::Handle fh = open_file(*m, "/x", O_RDWR);
  REQUIRE(m->utimens("/x", tv2, &fh) == 0);
  REQUIRE(m->release(fh) == 0);

  m.remount();
  std::set<std::string> want = {".pdl"};
  for (const auto& [n, b] : files) want.insert(n);
  CHECK(listing(*m) == want);
  for (const auto& [n, b] : files) {
    INFO("file " << n.substr(0, 20));
    CHECK(attr(*m, "/" + n).st_size == off_t(b.size()));
    CHECK(read_all(*m, "/" + n) == b);
  }
  const struct timespec mt = mtime_of(*m, "/main.db");
  CHECK(mt.tv_sec == fixed.tv_sec);
  CHECK(mt.tv_nsec == fixed.tv_nsec);
  const struct timespec mt2 = mtime_of(*m, "/x");
  CHECK(mt2.tv_sec == fixed2.tv_sec);
  CHECK(mt2.tv_nsec == fixed2.tv_nsec);

  // And again after a second remount with more changes in between.
  put(*m, "/x", pattern(2 * kChunk + 3, 14));
  REQUIRE(m->unlink("/empty") == 0);
  m.remount();
  CHECK(getattr_rc(*m, "/empty") == -ENOENT);
  CHECK(read_all(*m, "/x") == pattern(2 * kChunk + 3, 14));
  CHECK(read_all(*m, "/main.db") == files["main.db"]);
  REQUIRE(m->image().volume->check().is_ok());
}

TEST_CASE("utimens sets a fixed mtime, leaves it with UTIME_OMIT and sets now with UTIME_NOW",
          "[fuse]") {
  Mount m("pdl");
  put(*m, "/f", pattern(10, 20));
  const struct timespec fixed = {1234567890, 987654321};
  const struct timespec set[2] = {{0, UTIME_OMIT}, fixed};
  REQUIRE(m->utimens("/f", set, nullptr) == 0);
  struct timespec mt = mtime_of(*m, "/f");
  CHECK(mt.tv_sec == fixed.tv_sec);
  CHECK(mt.tv_nsec == fixed.tv_nsec);

  const struct timespec omit[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
  REQUIRE(m->utimens("/f", omit, nullptr) == 0);
  mt = mtime_of(*m, "/f");
  CHECK(mt.tv_sec == fixed.tv_sec);
  CHECK(mt.tv_nsec == fixed.tv_nsec);

  const struct timespec now[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  REQUIRE(m->utimens("/f", now, nullptr) == 0);
  mt = mtime_of(*m, "/f");
  CHECK(std::llabs(static_cast<long long>(mt.tv_sec - time(nullptr))) <= 5);

  // tv == nullptr means "now" (utimes(path, NULL)).
  REQUIRE(m->utimens("/f", set, nullptr) == 0);
  REQUIRE(m->utimens("/f", nullptr, nullptr) == 0);
  CHECK(std::llabs(static_cast<long long>(mtime_of(*m, "/f").tv_sec - time(nullptr))) <= 5);

  CHECK(m->utimens("/nope", set, nullptr) == -ENOENT);
  CHECK(m->utimens("/.pdl/map", set, nullptr) == -EACCES);
}

TEST_CASE("a write or a truncate sets the file's mtime to now, and it persists", "[fuse]") {
  Mount m("pdl");
  put(*m, "/f", pattern(700, 21));
  const struct timespec old[2] = {{0, UTIME_OMIT}, {1000000000, 0}};
  REQUIRE(m->utimens("/f", old, nullptr) == 0);
  REQUIRE(mtime_of(*m, "/f").tv_sec == 1000000000);
  const Fs::Handle fh = open_file(*m, "/f", O_RDWR);
  write_at(*m, fh, pattern(10, 22), 5);
  CHECK(std::llabs(static_cast<long long>(mtime_of(*m, "/f").tv_sec - time(nullptr))) <= 5);
  REQUIRE(m->utimens("/f", old, nullptr) == 0);
  REQUIRE(m->truncate("/f", 100, &fh) == 0);
  const time_t t = mtime_of(*m, "/f").tv_sec;
  CHECK(std::llabs(static_cast<long long>(t - time(nullptr))) <= 5);
  REQUIRE(m->release(fh) == 0);
  m.remount();
  CHECK(mtime_of(*m, "/f").tv_sec == t);
}

// ---------------------------------------------------------------------------------------------
// Truncate, unlink, rename

TEST_CASE("truncate by path and by handle shrinks and grows files, grown bytes reading as "
          "zeros", "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method);
  const Bytes data = pattern(4 * kChunk + 100, 30);
  put(*m, "/f", data);

  SECTION("by path") {
    REQUIRE(m->truncate("/f", 700, nullptr) == 0);
    CHECK(attr(*m, "/f").st_size == 700);
    Bytes want(data.begin(), data.begin() + 700);
    CHECK(read_all(*m, "/f") == want);
    REQUIRE(m->truncate("/f", 3 * kChunk + 5, nullptr) == 0);
    want.resize(3 * kChunk + 5, 0);
    CHECK(attr(*m, "/f").st_size == off_t(want.size()));
    CHECK(read_all(*m, "/f") == want);
    REQUIRE(m->truncate("/f", 0, nullptr) == 0);
    CHECK(read_all(*m, "/f").empty());
    CHECK(m->truncate("/f", -1, nullptr) == -EINVAL);
    CHECK(m->truncate("/nope", 10, nullptr) == -ENOENT);
    CHECK(m->truncate("/", 10, nullptr) == -EISDIR);
  }
  SECTION("by handle") {
    const Fs::Handle fh = open_file(*m, "/f", O_RDWR);
    REQUIRE(m->truncate("/f", 1000, &fh) == 0);
    CHECK(attr(*m, "/f").st_size == 1000);
    Bytes want(data.begin(), data.begin() + 1000);
    CHECK(read_all(*m, "/f") == want);
    REQUIRE(m->truncate(nullptr, 2 * kChunk + 1000, &fh) == 0);  // nullpath_ok style
    want.resize(2 * kChunk + 1000, 0);
    CHECK(read_all(*m, "/f") == want);
    // Bytes written past the end after a shrink leave zeros between.
    REQUIRE(m->truncate("/f", 10, &fh) == 0);
    const Bytes tail = pattern(50, 31);
    write_at(*m, fh, tail, 3 * kChunk);
    want.assign(data.begin(), data.begin() + 10);
    want.resize(3 * kChunk, 0);
    want.insert(want.end(), tail.begin(), tail.end());
    CHECK(read_all(*m, "/f") == want);
    REQUIRE(m->release(fh) == 0);
    m.remount();
    CHECK(read_all(*m, "/f") == want);
  }
  SECTION("a write past the end of a new file leaves a hole of zeros") {
    const Fs::Handle fh = create(*m, "/holey");
    const Bytes b = pattern(20, 32);
    write_at(*m, fh, b, 5 * kChunk + 3);
    REQUIRE(m->release(fh) == 0);
    Bytes want(5 * kChunk + 3, 0);
    want.insert(want.end(), b.begin(), b.end());
    CHECK(read_all(*m, "/holey") == want);
    m.remount();
    CHECK(read_all(*m, "/holey") == want);
  }
}

TEST_CASE("an unlinked file is gone: getattr, open and unlink are ENOENT", "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method);
  put(*m, "/f", pattern(2000, 40));
  REQUIRE(m->unlink("/f") == 0);
  CHECK(getattr_rc(*m, "/f") == -ENOENT);
  Fs::Handle fh;
  bool direct;
  CHECK(m->open("/f", O_RDONLY, &fh, &direct) == -ENOENT);
  CHECK(m->unlink("/f") == -ENOENT);
  CHECK(listing(*m) == std::set<std::string>{".pdl"});
  // The name can be created again, fresh.
  fh = create(*m, "/f");
  CHECK(attr(*m, "/f").st_size == 0);
  REQUIRE(m->release(fh) == 0);
  m.remount();
  CHECK(attr(*m, "/f").st_size == 0);
}

TEST_CASE("rename moves a file, replaces an existing target, honours RENAME_NOREPLACE and "
          "refuses RENAME_EXCHANGE", "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method);
  const Bytes a = pattern(2 * kChunk + 9, 50), b = pattern(3 * kChunk, 51);
  put(*m, "/a", a);
  put(*m, "/b", b);

  SECTION("to a new name") {
    REQUIRE(m->rename("/a", "/c", 0) == 0);
    CHECK(getattr_rc(*m, "/a") == -ENOENT);
    CHECK(read_all(*m, "/c") == a);
    CHECK(listing(*m) == std::set<std::string>{".pdl", "b", "c"});
    m.remount();
    CHECK(listing(*m) == std::set<std::string>{".pdl", "b", "c"});
    CHECK(read_all(*m, "/c") == a);
  }
  SECTION("over an existing file") {
    REQUIRE(m->rename("/a", "/b", 0) == 0);
    CHECK(getattr_rc(*m, "/a") == -ENOENT);
    CHECK(attr(*m, "/b").st_size == off_t(a.size()));
    CHECK(read_all(*m, "/b") == a);
    CHECK(listing(*m) == std::set<std::string>{".pdl", "b"});
    m.remount();
    CHECK(listing(*m) == std::set<std::string>{".pdl", "b"});
    CHECK(read_all(*m, "/b") == a);
    REQUIRE(m->image().volume->check().is_ok());
  }
  SECTION("RENAME_NOREPLACE onto an existing name is EEXIST and changes nothing") {
    CHECK(m->rename("/a", "/b", RENAME_NOREPLACE) == -EEXIST);
    CHECK(read_all(*m, "/a") == a);
    CHECK(read_all(*m, "/b") == b);
    REQUIRE(m->rename("/a", "/c", RENAME_NOREPLACE) == 0);
    CHECK(read_all(*m, "/c") == a);
  }
  SECTION("RENAME_EXCHANGE is EINVAL") {
    CHECK(m->rename("/a", "/b", RENAME_EXCHANGE) == -EINVAL);
    CHECK(read_all(*m, "/a") == a);
    CHECK(read_all(*m, "/b") == b);
  }
  SECTION("errors") {
    CHECK(m->rename("/nope", "/z", 0) == -ENOENT);
    CHECK(m->rename("/a", std::string("/" + std::string(201, 'r')).c_str(), 0) ==
          -ENAMETOOLONG);
    CHECK(m->rename("/a/x", "/z", 0) == -ENOENT);
    CHECK(m->rename("/a", "/a", 0) == 0);
    CHECK(read_all(*m, "/a") == a);
  }
  SECTION("a handle stays valid across a rename of its file") {
    const Fs::Handle fh = open_file(*m, "/a", O_RDWR);
    REQUIRE(m->rename("/a", "/moved", 0) == 0);
    const Bytes more = pattern(100, 52);
    write_at(*m, fh, more, off_t(a.size()));
    std::vector<char> buf(10);
    REQUIRE(m->read(fh, buf.data(), buf.size(), 0) == 10);
    CHECK(std::equal(a.begin(), a.begin() + 10, reinterpret_cast<uint8_t*>(buf.data())));
    REQUIRE(m->truncate("/moved", off_t(a.size() + more.size()), &fh) == 0);
    REQUIRE(m->fsync(fh) == 0);
    REQUIRE(m->release(fh) == 0);
    Bytes want = a;
    want.insert(want.end(), more.begin(), more.end());
    CHECK(read_all(*m, "/moved") == want);
    m.remount();
    CHECK(read_all(*m, "/moved") == want);
  }
}

// ---------------------------------------------------------------------------------------------
// errno edges

TEST_CASE("names of 200 bytes work and of 201 bytes are ENAMETOOLONG", "[fuse]") {
  Mount m("pdl");
  const std::string ok = "/" + std::string(200, 'a'), tooLong = "/" + std::string(201, 'a');
  Fs::Handle fh;
  REQUIRE(m->create(ok.c_str(), O_CREAT | O_RDWR, &fh) == 0);
  REQUIRE(m->release(fh) == 0);
  CHECK(attr(*m, ok).st_size == 0);
  CHECK(listing(*m).count(ok.substr(1)) == 1);
  CHECK(m->create(tooLong.c_str(), O_CREAT | O_RDWR, &fh) == -ENAMETOOLONG);
  CHECK(m->create((tooLong + "-shm").c_str(), O_CREAT | O_RDWR, &fh) == -ENAMETOOLONG);
  // Looking up a name that cannot exist: it does not exist (ENAMETOOLONG would do too).
  const int rc = getattr_rc(*m, tooLong);
  CHECK((rc == -ENOENT || rc == -ENAMETOOLONG));
  CHECK(m->rename(ok.c_str(), tooLong.c_str(), 0) == -ENAMETOOLONG);
  CHECK(attr(*m, ok).st_size == 0);
}

TEST_CASE("paths with more than one component name nothing: ENOENT", "[fuse]") {
  Mount m("pdl");
  put(*m, "/a", pattern(10, 60));
  Fs::Handle fh;
  bool direct;
  CHECK(getattr_rc(*m, "/a/b") == -ENOENT);
  CHECK(getattr_rc(*m, "/x/y/z") == -ENOENT);
  CHECK(m->create("/a/b", O_CREAT | O_RDWR, &fh) == -ENOENT);
  CHECK(m->create("/x/y", O_CREAT | O_RDWR, &fh) == -ENOENT);
  CHECK(m->open("/a/b", O_RDONLY, &fh, &direct) == -ENOENT);
  CHECK(m->unlink("/a/b") == -ENOENT);
  CHECK(m->truncate("/a/b", 0, nullptr) == -ENOENT);
  CHECK(m->mkdir("/a/b") == -ENOENT);
  CHECK(listing(*m) == std::set<std::string>{".pdl", "a"});
}

TEST_CASE("operations on an unknown file are ENOENT", "[fuse]") {
  Mount m("pdl");
  Fs::Handle fh;
  bool direct;
  CHECK(getattr_rc(*m, "/nope") == -ENOENT);
  CHECK(m->open("/nope", O_RDONLY, &fh, &direct) == -ENOENT);
  CHECK(m->open("/nope", O_RDWR, &fh, &direct) == -ENOENT);
  CHECK(m->unlink("/nope") == -ENOENT);
  CHECK(m->chmod("/nope", 0644) == -ENOENT);
  CHECK(m->chown("/nope", kUid, kGid) == -ENOENT);
  CHECK(getattr_rc(*m, "/.pdl/nope") == -ENOENT);
  CHECK(m->open("/.pdl/nope", O_RDONLY, &fh, &direct) == -ENOENT);
  CHECK(m->unlink("/.pdl/nope") == -ENOENT);
  CHECK(getattr_rc(*m, "/nope-shm") == -ENOENT);
  CHECK(m->open("/nope-shm", O_RDONLY, &fh, &direct) == -ENOENT);
  CHECK(m->unlink("/nope-shm") == -ENOENT);
}

TEST_CASE("directories cannot be made or removed, nor opened or created as files", "[fuse]") {
  Mount m("pdl");
  put(*m, "/f", pattern(10, 61));
  CHECK(m->mkdir("/d") == -EPERM);
  CHECK(getattr_rc(*m, "/d") == -ENOENT);
  CHECK(m->mkdir("/") == -EEXIST);
  CHECK(m->mkdir("/.pdl") == -EEXIST);
  const int rc = m->rmdir("/.pdl");
  CHECK(rc < 0);
  CHECK(rc == -EACCES);
  CHECK(m->rmdir("/") == -EBUSY);
  CHECK(m->rmdir("/f") == -ENOTDIR);
  CHECK(m->rmdir("/nope") == -ENOENT);
  CHECK(S_ISDIR(attr(*m, "/.pdl").st_mode));
  CHECK(listing(*m, "/.pdl").size() == 4);
  Fs::Handle fh;
  bool direct;
  CHECK(m->create("/.pdl", O_CREAT | O_RDWR, &fh) == -EISDIR);
  CHECK(m->open("/", O_RDONLY, &fh, &direct) == -EISDIR);
  CHECK(m->open("/.pdl", O_RDONLY, &fh, &direct) == -EISDIR);
  CHECK(m->unlink("/.pdl") == -EISDIR);
  CHECK(m->rename("/.pdl", "/x", 0) == -EBUSY);
  CHECK(m->rename("/f", "/.pdl", 0) == -EISDIR);
}

TEST_CASE("chmod and chown succeed only when they change nothing getattr reports", "[fuse]") {
  Mount m("pdl");
  put(*m, "/f", pattern(10, 62));
  CHECK(m->chmod("/f", 0644) == 0);
  CHECK(m->chmod("/f", S_IFREG | 0644) == 0);
  CHECK(m->chmod("/f", 0600) == -EPERM);
  CHECK(m->chmod("/f", 0755) == -EPERM);
  CHECK(attr(*m, "/f").st_mode == (S_IFREG | 0644));
  CHECK(m->chown("/f", kUid, kGid) == 0);
  CHECK(m->chown("/f", uid_t(-1), gid_t(-1)) == 0);
  CHECK(m->chown("/f", kUid, gid_t(-1)) == 0);
  CHECK(m->chown("/f", uid_t(-1), kGid) == 0);
  CHECK(m->chown("/f", kUid + 1, kGid) == -EPERM);
  CHECK(m->chown("/f", kUid, kGid + 1) == -EPERM);
  CHECK(m->chown("/f", 0, 0) == -EPERM);
  CHECK(m->chmod("/", 0755) == 0);
  CHECK(m->chmod("/", 0700) == -EPERM);
  CHECK(m->chmod("/.pdl/map", 0444) == 0);
  CHECK(m->chmod("/.pdl/map", 0644) == -EPERM);
}

TEST_CASE("after close() the Fs refuses changes with EROFS but still reads", "[fuse]") {
  Mount m("pdl");
  const Bytes data = pattern(700, 63);
  put(*m, "/f", data);
  REQUIRE(m->close().is_ok());
  Fs::Handle fh;
  CHECK(m->create("/g", O_CREAT | O_RDWR, &fh) == -EROFS);
  CHECK(m->unlink("/f") == -EROFS);
  CHECK(m->truncate("/f", 0, nullptr) == -EROFS);
  CHECK(m->rename("/f", "/h", 0) == -EROFS);
  CHECK(read_all(*m, "/f") == data);
  CHECK(m->close().is_ok());  // a second close is harmless
}

// ---------------------------------------------------------------------------------------------
// Read-only mounts

TEST_CASE("a read-only Fs reads files and refuses every change with EROFS", "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method);
  const Bytes data = pattern(2 * kChunk + 50, 70);
  put(*m, "/f", data);
  m.remount(/*ro=*/true);
  // The image file is not modified by anything below.
  auto file_bytes = [&] {
    std::ifstream in(m.path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::string before = file_bytes();

  CHECK(read_all(*m, "/f") == data);
  CHECK(attr(*m, "/f").st_size == off_t(data.size()));
  CHECK(listing(*m) == std::set<std::string>{".pdl", "f"});

  Fs::Handle fh;
  bool direct;
  CHECK(m->open("/f", O_RDWR, &fh, &direct) == -EROFS);
  CHECK(m->open("/f", O_WRONLY, &fh, &direct) == -EROFS);
  CHECK(m->open("/f", O_RDONLY | O_TRUNC, &fh, &direct) == -EROFS);
  CHECK(m->create("/g", O_CREAT | O_RDWR, &fh) == -EROFS);
  CHECK(m->create("/f", O_CREAT | O_RDWR, &fh) == -EROFS);
  CHECK(m->create("/g-shm", O_CREAT | O_RDWR, &fh) == -EROFS);
  CHECK(m->mkdir("/d") == -EROFS);
  CHECK(m->truncate("/f", 10, nullptr) == -EROFS);
  CHECK(m->unlink("/f") == -EROFS);
  CHECK(m->rename("/f", "/g", 0) == -EROFS);
  const struct timespec tv[2] = {{0, UTIME_OMIT}, {1600000000, 0}};
  CHECK(m->utimens("/f", tv, nullptr) == -EROFS);

  const Fs::Handle rfh = open_file(*m, "/f", O_RDONLY);
  const char x = 'x';
  CHECK(m->write(rfh, &x, 1, 0) == -EROFS);
  CHECK(m->truncate("/f", 10, &rfh) == -EROFS);
  CHECK(m->utimens("/f", tv, &rfh) == -EROFS);
  CHECK(m->flush(rfh) == 0);
  CHECK(m->fsync(rfh) == 0);
  CHECK(m->fsyncdir() == 0);
  REQUIRE(m->release(rfh) == 0);

  struct statvfs sv;
  REQUIRE(m->statfs(&sv) == 0);
  CHECK((sv.f_flag & ST_RDONLY) != 0);
  CHECK(config_of(*m)["read_only"] == "1");
  CHECK(!inspect(*m, "map").empty());

  CHECK(read_all(*m, "/f") == data);
  CHECK(attr(*m, "/f").st_size == off_t(data.size()));
  REQUIRE(m->close().is_ok());
  CHECK(file_bytes() == before);
}

// ---------------------------------------------------------------------------------------------
// /.pdl/

TEST_CASE("the /.pdl files open read-only with direct_io and refuse every change with EACCES",
          "[fuse]") {
  Mount m("pdl");
  put(*m, "/f", pattern(10, 80));
  for (const char* name : {"stats.json", "config", "blocks", "map"}) {
    const std::string p = std::string("/.pdl/") + name;
    INFO(p);
    bool direct = false;
    Fs::Handle fh = 0;
    REQUIRE(m->open(p.c_str(), O_RDONLY, &fh, &direct) == 0);
    CHECK(direct);
    const char x = 'x';
    CHECK(m->write(fh, &x, 1, 0) < 0);  // opened read-only: the kernel never sends it
    CHECK(m->truncate(p.c_str(), 0, &fh) == -EACCES);
    CHECK(m->fsync(fh) == 0);
    CHECK(m->flush(fh) == 0);
    REQUIRE(m->release(fh) == 0);
    CHECK(m->open(p.c_str(), O_WRONLY, &fh, &direct) == -EACCES);
    CHECK(m->open(p.c_str(), O_RDWR, &fh, &direct) == -EACCES);
    CHECK(m->open(p.c_str(), O_RDONLY | O_TRUNC, &fh, &direct) == -EACCES);
    CHECK(m->create(p.c_str(), O_CREAT | O_RDWR, &fh) == -EACCES);
    CHECK(m->unlink(p.c_str()) == -EACCES);
    CHECK(m->truncate(p.c_str(), 0, nullptr) == -EACCES);
    CHECK(m->rename(p.c_str(), "/stolen", 0) == -EACCES);
    CHECK(m->rename("/f", p.c_str(), 0) == -EACCES);
    const struct stat st = attr(*m, p);
    CHECK(S_ISREG(st.st_mode));
    CHECK((st.st_mode & 0222) == 0);
    CHECK(st.st_size > 0);
  }
  Fs::Handle fh;
  CHECK(m->create("/.pdl/new", O_CREAT | O_RDWR, &fh) == -EACCES);
  CHECK(m->rename("/f", "/.pdl/new", 0) == -EACCES);
  CHECK(getattr_rc(*m, "/.pdl/new") == -ENOENT);
  CHECK(read_all(*m, "/f") == pattern(10, 80));
  CHECK(listing(*m, "/.pdl").size() == 4);
}

TEST_CASE("getattr of a /.pdl file reports the size of the text an open then reads", "[fuse]") {
  Mount m("pdl");
  put(*m, "/f", pattern(3 * kChunk, 81));
  sync_file(*m, "/f");
  for (const char* name : {"config", "blocks", "map"}) {
    INFO(name);
    const off_t size = attr(*m, std::string("/.pdl/") + name).st_size;
    CHECK(size > 0);
    CHECK(inspect(*m, name).size() == size_t(size));
  }
  CHECK(attr(*m, "/.pdl/stats.json").st_size > 0);
}

TEST_CASE("/.pdl/stats.json is a JSON object naming the method and every file", "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method);
  put(*m, "/main.db", pattern(kChunk + 1, 82));
  put(*m, "/main.db-journal", pattern(3, 83));
  const std::string s = inspect(*m, "stats.json");
  REQUIRE(s.size() > 2);
  CHECK(s.front() == '{');
  const std::string trimmed = s.back() == '\n' ? s.substr(0, s.size() - 1) : s;
  CHECK(trimmed.back() == '}');
  CHECK(s.find("\"method\"") != std::string::npos);
  CHECK(s.find("\"" + method + "\"") != std::string::npos);
  CHECK(s.find("\"main.db\"") != std::string::npos);
  CHECK(s.find("\"main.db-journal\"") != std::string::npos);
  // Braces and brackets balance outside strings (a cheap well-formedness check).
  int depth = 0;
  bool in_str = false, esc = false, went_negative = false;
  for (char c : s) {
    if (in_str) {
      if (esc) esc = false;
      else if (c == '\\') esc = true;
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    else if (c == '{' || c == '[') depth++;
    else if (c == '}' || c == ']') went_negative |= --depth < 0;
  }
  CHECK(!in_str);
  CHECK(depth == 0);
  CHECK(!went_negative);
}

TEST_CASE("/.pdl/config has key=value lines for the image's parameters", "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method);
  std::map<std::string, std::string> kv = config_of(*m);
  for (const char* k : {"method", "page", "pages_per_block", "blocks", "logical_pages",
                        "read_only"}) {
    INFO("key " << k);
    CHECK(kv.count(k) == 1);
  }
  CHECK(kv["method"] == method);
  CHECK(kv["page"] == "512");
  CHECK(kv["pages_per_block"] == "8");
  CHECK(kv["blocks"] == "32");  // 128K / (512 * 8)
  CHECK(is_number(kv["logical_pages"]));
  CHECK(kv["read_only"] == "0");
  CHECK(kv["size"] == "128K");
  CHECK(kv["max_files"] == std::to_string(kMaxFiles));
}

TEST_CASE("/.pdl/config of an FTL device names its FTL, and files on it persist", "[fuse][ftl]") {
  Mount m("ftl");
  std::map<std::string, std::string> kv = config_of(*m);
  CHECK(kv["method"] == "ftl");
  CHECK(kv["ftl"] == "page");
  CHECK(kv.count("log_blocks") == 0);  // the page FTL has none
  CHECK(kv.count("sb_slots") == 0);    // no StableBuffer
  CHECK(kv.count("max_diff") == 0);
  CHECK(kv.count("obsolete") == 0);
  const Bytes data = pattern(3 * kChunk + 100, 85);
  put(*m, "/f", data);
  sync_file(*m, "/f");
  m.remount();
  CHECK(config_of(*m)["ftl"] == "page");
  CHECK(read_all(*m, "/f") == data);
}

TEST_CASE("/.pdl/blocks has a header then one line per erase block", "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method);
  put(*m, "/f", pattern(5 * kChunk, 84));
  sync_file(*m, "/f");
  const uint32_t blocks = uint32_t(std::stoul(config_of(*m)["blocks"]));
  const std::vector<std::string> ls = lines_of(inspect(*m, "blocks"));
  REQUIRE(!ls.empty());
  CHECK(ls[0].rfind("#", 0) == 0);
  REQUIRE(ls.size() == size_t(blocks) + 1);
  const std::set<std::string> states = {"free", "open", "full", "reserved", "victim"};
  std::set<std::string> seen;
  for (uint32_t b = 0; b < blocks; b++) {
    const std::string& l = ls[b + 1];
    INFO("line '" << l << "'");
    std::istringstream in(l);
    std::string block, state, valid, erases, extra;
    REQUIRE(bool(in >> block >> state >> valid >> erases));
    CHECK(!(in >> extra));
    CHECK(block == std::to_string(b));
    CHECK(states.count(state) == 1);
    CHECK(is_number(valid));
    CHECK(std::stoul(valid) <= 8);
    CHECK(is_number(erases));
    seen.insert(state);
  }
  CHECK(seen.count("free") == 1);  // a mostly empty chip
}

TEST_CASE("/.pdl/map lists one line per mapped chunk, and an open handle reads one snapshot",
          "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method);
  const Fs::Handle fh = create(*m, "/f");
  write_at(*m, fh, pattern(3 * kChunk, 85), 0);
  REQUIRE(m->fsync(fh) == 0);
  REQUIRE(m->release(fh) == 0);
  put(*m, "/with space", pattern(kChunk, 86));
  sync_file(*m, "/with space");

  const std::string text = inspect(*m, "map");
  const std::vector<MapLine> lines = map_of(text);
  std::set<std::string> lpns, chunks;
  size_t spaced = 0;
  for (const MapLine& l : lines) {
    if (l.name == "with space") spaced++;
    if (l.name != "f") continue;
    lpns.insert(l.lpn);
    chunks.insert(l.chunk);
    CHECK(is_number(l.base));
    CHECK((l.in_buffer == "yes" || l.in_buffer == "no"));
  }
  CHECK(lpns.size() == 3);
  CHECK(chunks == std::set<std::string>{"0", "1", "2"});
  CHECK(std::count_if(lines.begin(), lines.end(),
                      [](const MapLine& l) { return l.name == "f"; }) == 3);
  CHECK(spaced == 1);
  std::set<std::string> all_lpns;
  for (const MapLine& l : lines) all_lpns.insert(l.lpn);
  CHECK(all_lpns.size() == lines.size());  // no lpn owned twice

  // A handle reads the text generated at its open, in any pieces, whatever changes after.
  bool direct = false;
  const Fs::Handle snap = open_file(*m, "/.pdl/map", O_RDONLY, &direct);
  CHECK(direct);
  const Fs::Handle g = create(*m, "/g");
  write_at(*m, g, pattern(2 * kChunk, 87), 0);
  REQUIRE(m->fsync(g) == 0);
  REQUIRE(m->release(g) == 0);
  const std::string pieces = read_handle(*m, snap, 7);
  CHECK(pieces == text);
  // Reads at arbitrary offsets of the same snapshot.
  std::vector<char> buf(13);
  const int n = m->read(snap, buf.data(), buf.size(), 5);
  REQUIRE(n == 13);
  CHECK(std::string(buf.data(), 13) == text.substr(5, 13));
  CHECK(m->read(snap, buf.data(), buf.size(), off_t(text.size())) == 0);
  REQUIRE(m->release(snap) == 0);
  // A new open sees the new file.
  const std::vector<MapLine> after = map_of(inspect(*m, "map"));
  CHECK(std::count_if(after.begin(), after.end(),
                      [](const MapLine& l) { return l.name == "g"; }) == 2);
}

TEST_CASE("/.pdl texts cost no flash operation", "[fuse]") {
  Mount m("pdl");
  put(*m, "/f", pattern(3 * kChunk, 88));
  sync_file(*m, "/f");
  const NandCounters before = m->image().nand->counters();
  for (const char* name : {"stats.json", "config", "blocks", "map"}) {
    (void)inspect(*m, name);
    (void)attr(*m, std::string("/.pdl/") + name);
  }
  const NandCounters after = m->image().nand->counters();
  CHECK(after.programs == before.programs);
  CHECK(after.erases == before.erases);
  CHECK(after.page_reads == before.page_reads);
}

// ---------------------------------------------------------------------------------------------
// ENOSPC

TEST_CASE("writes that fill a tiny chip fail with ENOSPC and lose nothing committed",
          "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method, "64K");  // 16 blocks of 8 pages of 512 bytes
  const Bytes first = pattern(3 * kChunk + 10, 90);
  {
    const Fs::Handle fh = create(*m, "/first");
    write_at(*m, fh, first, 0);
    REQUIRE(m->fsync(fh) == 0);
    REQUIRE(m->release(fh) == 0);
  }
  const Fs::Handle fh = create(*m, "/big");
  const Bytes piece = pattern(2 * kChunk, 91);
  int rc = 0;
  off_t off = 0;
  for (int i = 0; i < 1000; i++) {
    rc = m->write(fh, reinterpret_cast<const char*>(piece.data()), piece.size(), off);
    if (rc < 0) break;
    REQUIRE(rc == int(piece.size()));
    off += rc;
  }
  INFO("wrote " << off << " bytes before the error");
  REQUIRE(rc == -ENOSPC);
  CHECK(off > 0);
  // What the failed write stored is a prefix of its chunks, covered by the size.
  const off_t big_size = attr(*m, "/big").st_size;
  CHECK(big_size >= off);
  CHECK(big_size <= off + off_t(piece.size()));
  CHECK(big_size % kChunk == 0);
  // Further writes keep failing cleanly; fsync makes the rest durable.
  CHECK(m->write(fh, reinterpret_cast<const char*>(piece.data()), piece.size(), big_size) ==
        -ENOSPC);
  CHECK(m->fsync(fh) == 0);
  CHECK(m->flush(fh) == 0);
  REQUIRE(m->release(fh) == 0);
  CHECK(read_all(*m, "/first") == first);

  m.remount();
  CHECK(read_all(*m, "/first") == first);
  CHECK(attr(*m, "/big").st_size == big_size);
  const Bytes big = read_all(*m, "/big");
  REQUIRE(big.size() == size_t(big_size));
  for (size_t at = 0; at < big.size(); at += piece.size()) {
    const size_t n = std::min(piece.size(), big.size() - at);
    INFO("at " << at);
    CHECK(std::equal(big.begin() + long(at), big.begin() + long(at + n), piece.begin()));
  }
  Status st = m->image().volume->check();
  INFO(st.to_string());
  CHECK(st.is_ok());

  // Space freed by an unlink is usable again once syncs have made the release durable.
  REQUIRE(m->unlink("/big") == 0);
  REQUIRE(m->fsyncdir() == 0);
  REQUIRE(m->fsyncdir() == 0);
  put(*m, "/again", piece);
  CHECK(read_all(*m, "/again") == piece);
  CHECK(read_all(*m, "/first") == first);
}

TEST_CASE("a full directory refuses another file with ENOSPC, and -shm files still work",
          "[fuse]") {
  Mount m("pdl");
  for (uint32_t i = 0; i < kMaxFiles; i++) put(*m, "/f" + std::to_string(i), {});
  Fs::Handle fh;
  CHECK(m->create("/one-more", O_CREAT | O_RDWR, &fh) == -ENOSPC);
  CHECK(getattr_rc(*m, "/one-more") == -ENOENT);
  struct statvfs sv;
  REQUIRE(m->statfs(&sv) == 0);
  CHECK(sv.f_ffree == 0);
  fh = create(*m, "/f0.db-shm");
  REQUIRE(m->release(fh) == 0);
  REQUIRE(m->unlink("/f3") == 0);
  fh = create(*m, "/one-more");
  REQUIRE(m->release(fh) == 0);
  m.remount();
  CHECK(listing(*m).size() == kMaxFiles + 1);  // with .pdl
}

// ---------------------------------------------------------------------------------------------
// -shm files

TEST_CASE("-shm files live in RAM: usable, listed, gone after a remount, and free of flash "
          "work", "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method);
  put(*m, "/x.db", pattern(kChunk, 100));
  sync_file(*m, "/x.db");

  const Fs::Handle fh = create(*m, "/x.db-shm");
  const Bytes data = pattern(32768 + 100, 101);
  write_at(*m, fh, data, 0);
  std::vector<char> buf(data.size());
  REQUIRE(m->read(fh, buf.data(), buf.size(), 0) == int(data.size()));
  CHECK(std::equal(data.begin(), data.end(), reinterpret_cast<uint8_t*>(buf.data())));
  CHECK(read_all(*m, "/x.db-shm") == data);
  struct stat st = attr(*m, "/x.db-shm");
  CHECK(st.st_mode == (S_IFREG | 0644));
  CHECK(st.st_size == off_t(data.size()));
  CHECK(st.st_uid == kUid);
  CHECK(listing(*m) == std::set<std::string>{".pdl", "x.db", "x.db-shm"});

  // Truncate by path and by handle; a second handle shares the bytes.
  REQUIRE(m->truncate("/x.db-shm", 100, nullptr) == 0);
  CHECK(attr(*m, "/x.db-shm").st_size == 100);
  REQUIRE(m->truncate("/x.db-shm", 300, &fh) == 0);
  Bytes want(data.begin(), data.begin() + 100);
  want.resize(300, 0);
  CHECK(read_all(*m, "/x.db-shm") == want);
  const Fs::Handle fh2 = open_file(*m, "/x.db-shm", O_RDWR);
  const Bytes w2 = pattern(10, 102);
  write_at(*m, fh2, w2, 5);
  std::copy(w2.begin(), w2.end(), want.begin() + 5);
  REQUIRE(m->read(fh, buf.data(), 300, 0) == 300);
  CHECK(std::equal(want.begin(), want.end(), reinterpret_cast<uint8_t*>(buf.data())));
  CHECK(m->fsync(fh) == 0);
  CHECK(m->flush(fh) == 0);
  REQUIRE(m->release(fh2) == 0);
  REQUIRE(m->release(fh) == 0);
  // utimens, chmod, chown as for any file.
  const struct timespec tv[2] = {{0, UTIME_OMIT}, {1600000000, 7}};
  REQUIRE(m->utimens("/x.db-shm", tv, nullptr) == 0);
  CHECK(mtime_of(*m, "/x.db-shm").tv_sec == 1600000000);
  CHECK(m->chmod("/x.db-shm", 0644) == 0);
  CHECK(m->chmod("/x.db-shm", 0600) == -EPERM);
  Fs::Handle ex;
  CHECK(m->create("/x.db-shm", O_CREAT | O_EXCL | O_RDWR, &ex) == -EEXIST);

  // Renames between RAM and the Volume are EXDEV; within RAM they work.
  put(*m, "/a", pattern(10, 103));
  put(*m, "/a-shm", pattern(10, 104));
  CHECK(m->rename("/a-shm", "/a", 0) == -EXDEV);
  CHECK(m->rename("/a", "/a-shm", 0) == -EXDEV);
  CHECK(m->rename("/a", "/b-shm", 0) == -EXDEV);
  CHECK(read_all(*m, "/a") == pattern(10, 103));
  REQUIRE(m->rename("/a-shm", "/c-shm", 0) == 0);
  CHECK(getattr_rc(*m, "/a-shm") == -ENOENT);
  CHECK(read_all(*m, "/c-shm") == pattern(10, 104));
  CHECK(m->rename("/c-shm", "/x.db-shm", RENAME_NOREPLACE) == -EEXIST);
  REQUIRE(m->unlink("/c-shm") == 0);
  CHECK(getattr_rc(*m, "/c-shm") == -ENOENT);

  m.remount();
  CHECK(getattr_rc(*m, "/x.db-shm") == -ENOENT);
  CHECK(listing(*m) == std::set<std::string>{".pdl", "a", "x.db"});
}

TEST_CASE("writing, reading and truncating a -shm file programs and erases nothing", "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method);
  put(*m, "/x.db", pattern(2 * kChunk, 105));
  sync_file(*m, "/x.db");
  const NandCounters before = m->image().nand->counters();
  const Fs::Handle fh = create(*m, "/x.db-shm");
  for (int i = 0; i < 40; i++) write_at(*m, fh, pattern(1024, 106 + uint64_t(i)), i * 1024);
  (void)read_all(*m, "/x.db-shm");
  REQUIRE(m->truncate("/x.db-shm", 0, &fh) == 0);
  REQUIRE(m->fsync(fh) == 0);
  REQUIRE(m->flush(fh) == 0);
  REQUIRE(m->release(fh) == 0);
  REQUIRE(m->unlink("/x.db-shm") == 0);
  const NandCounters after = m->image().nand->counters();
  CHECK(after.programs == before.programs);
  CHECK(after.erases == before.erases);
  CHECK(after.bytes_programmed == before.bytes_programmed);
}

// ---------------------------------------------------------------------------------------------
// Durability across a power cut (the Fs dropped without close())

// A cut later than every step below: power lasts until the explicit cut after a final fsync.
constexpr uint64_t kLasts = 1000;

TEST_CASE("an fsynced file survives a power cut; a later unsynced file is absent or holds "
          "bytes it was written", "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  const uint64_t cut_after = GENERATE(0u, 1u, 3u, 8u, kLasts);
  INFO(method << " cut after " << cut_after << " operations");
  Mount m(method);
  const Bytes a = pattern(3 * kChunk + 200, 110);
  {
    const Fs::Handle fh = create(*m, "/a.db");
    write_at(*m, fh, a, 0);
    REQUIRE(m->fsync(fh) == 0);
    REQUIRE(m->release(fh) == 0);
  }
  m.cut_power_after(cut_after);
  // After the fsync: a new file, whole chunks, no sync. Operations may fail with EIO once the
  // chip has lost power.
  const Bytes b = pattern(4 * kChunk, 111);
  Fs::Handle fh = 0;
  if (m->create("/b.db", O_CREAT | O_RDWR, &fh) == 0) {
    for (uint32_t c = 0; c < 4; c++) {
      const int rc = m->write(fh, reinterpret_cast<const char*>(b.data() + c * kChunk),
                              kChunk, off_t(c * kChunk));
      CHECK((rc == int(kChunk) || rc == -EIO));
    }
    (void)m->flush(fh);
    (void)m->release(fh);
  }
  if (cut_after == kLasts) {  // power lasts: an fsync, then cut before anything else
    REQUIRE(m->fsyncdir() == 0);
    m.cut_power_after(0);
  }
  m.crash_and_remount();
  CHECK(read_all(*m, "/a.db") == a);
  struct stat st;
  const int rc = m->getattr("/b.db", &st);
  if (cut_after == 0) CHECK(rc == -ENOENT);  // nothing after the fsync reached the chip
  if (cut_after == kLasts) {
    REQUIRE(rc == 0);
    CHECK(read_all(*m, "/b.db") == b);
  }
  if (rc == 0) {
    const Bytes got = read_all(*m, "/b.db");
    CHECK(got.size() <= b.size());
    for (size_t c = 0; c * kChunk < got.size(); c++) {
      INFO("chunk " << c);
      const size_t n = std::min<size_t>(kChunk, got.size() - c * kChunk);
      const bool as_written = std::equal(got.begin() + long(c * kChunk),
                                         got.begin() + long(c * kChunk + n),
                                         b.begin() + long(c * kChunk));
      const bool zeros = std::all_of(got.begin() + long(c * kChunk),
                                     got.begin() + long(c * kChunk + n),
                                     [](uint8_t x) { return x == 0; });
      CHECK((as_written || zeros));
    }
  } else {
    CHECK(rc == -ENOENT);
  }
  Status cs = m->image().volume->check();
  INFO(cs.to_string());
  CHECK(cs.is_ok());
}

TEST_CASE("unlink of a rollback journal is durable at once, without an fsync", "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method);
  const Bytes db = pattern(2 * kChunk, 120), journal = pattern(kChunk + 28, 121);
  put(*m, "/x.db", db);
  put(*m, "/x.db-journal", journal);
  put(*m, "/plain", pattern(10, 122));
  REQUIRE(m->fsyncdir() == 0);

  SECTION("the journal's unlink survives a cut right after it") {
    REQUIRE(m->unlink("/x.db-journal") == 0);
    m.cut_power_after(0);
    m.crash_and_remount();
    CHECK(getattr_rc(*m, "/x.db-journal") == -ENOENT);
    CHECK(read_all(*m, "/x.db") == db);
    CHECK(read_all(*m, "/plain") == pattern(10, 122));
  }
  SECTION("control: another file's unlink is not durable until a sync") {
    REQUIRE(m->unlink("/plain") == 0);
    m.cut_power_after(0);
    m.crash_and_remount();
    CHECK(getattr_rc(*m, "/plain") == 0);
    CHECK(read_all(*m, "/x.db-journal") == journal);
  }
  SECTION("a journal renamed away (libfuse hiding it while open) is durable at once too") {
    // The kernel's RELEASE of the journal can reach libfuse after its UNLINK: libfuse then
    // renames it to .fuse_hiddenN and unlinks that at release. A crash in between must not
    // bring the journal back (it would be hot, and roll back a committed transaction).
    REQUIRE(m->rename("/x.db-journal", "/.fuse_hidden0000000100000001", 0) == 0);
    m.cut_power_after(0);
    m.crash_and_remount();
    CHECK(getattr_rc(*m, "/x.db-journal") == -ENOENT);
    CHECK(read_all(*m, "/x.db") == db);
    // What is left under the hidden name is removed at the next mount.
    if (getattr_rc(*m, "/.fuse_hidden0000000100000001") == 0) {
      REQUIRE(m->remove_hidden_leftovers().is_ok());
      CHECK(getattr_rc(*m, "/.fuse_hidden0000000100000001") == -ENOENT);
      m.cut_power_after(0);
      m.crash_and_remount();
      CHECK(getattr_rc(*m, "/.fuse_hidden0000000100000001") == -ENOENT);
    }
    CHECK(read_all(*m, "/plain") == pattern(10, 122));
  }
  SECTION("a super-journal's unlink is durable at once too") {
    put(*m, "/x.db-mj01234567", pattern(100, 123));
    REQUIRE(m->fsyncdir() == 0);
    REQUIRE(m->unlink("/x.db-mj01234567") == 0);
    m.cut_power_after(0);
    m.crash_and_remount();
    CHECK(getattr_rc(*m, "/x.db-mj01234567") == -ENOENT);
  }
  Status cs = m->image().volume->check();
  INFO(cs.to_string());
  CHECK(cs.is_ok());
}

TEST_CASE("fsyncdir makes every file durable across a power cut", "[fuse]") {
  Mount m("pdl");
  const Bytes a = pattern(2 * kChunk + 1, 130);
  put(*m, "/a", a);
  REQUIRE(m->fsyncdir() == 0);
  m.cut_power_after(0);
  m.crash_and_remount();
  CHECK(read_all(*m, "/a") == a);
}

// ---------------------------------------------------------------------------------------------
// statfs

TEST_CASE("statfs reports chunks as blocks, free chunks that shrink as files grow, and the "
          "directory's capacity", "[fuse]") {
  const std::string method = GENERATE(from_range(std::begin(kMethods), std::end(kMethods)));
  INFO(method);
  Mount m(method);
  struct statvfs sv;
  REQUIRE(m->statfs(&sv) == 0);
  CHECK(sv.f_bsize == kChunk);
  CHECK(sv.f_frsize == kChunk);
  CHECK(sv.f_blocks > 0);
  CHECK(sv.f_bfree <= sv.f_blocks);
  CHECK(sv.f_bavail <= sv.f_bfree);
  CHECK(sv.f_namemax == 200);
  const VolumeLayout L = m->image().volume->layout();
  CHECK(sv.f_files == L.max_files());
  CHECK(sv.f_files == kMaxFiles);
  CHECK(sv.f_ffree == L.max_files());
  CHECK(sv.f_flag == 0);
  CHECK(config_of(*m)["max_files"] == std::to_string(sv.f_files));

  const Fs::Handle fh = create(*m, "/big");
  write_at(*m, fh, pattern(20 * kChunk, 140), 0);
  REQUIRE(m->fsync(fh) == 0);
  REQUIRE(m->release(fh) == 0);
  struct statvfs after;
  REQUIRE(m->statfs(&after) == 0);
  CHECK(after.f_blocks == sv.f_blocks);
  CHECK(after.f_bfree < sv.f_bfree);
  CHECK(after.f_bfree + 20 <= sv.f_bfree);
  CHECK(after.f_ffree == sv.f_ffree - 1);
  m.remount();
  struct statvfs again;
  REQUIRE(m->statfs(&again) == 0);
  CHECK(again.f_bfree == after.f_bfree);
}

// ---------------------------------------------------------------------------------------------
// Threads

TEST_CASE("threads writing different files through one Fs each read back their own bytes",
          "[fuse]") {
  Mount m("pdl", "256K");
  constexpr int kThreads = 4;
  std::vector<Bytes> want(kThreads);
  std::vector<std::thread> ts;
  std::atomic<int> failures = 0;
  for (int t = 0; t < kThreads; t++) {
    want[size_t(t)] = pattern(6 * kChunk + size_t(t), 150 + uint64_t(t));
    ts.emplace_back([&, t] {
      Fs& fs = *m;
      const std::string p = "/t" + std::to_string(t);
      Fs::Handle fh;
      if (fs.create(p.c_str(), O_CREAT | O_RDWR, &fh) != 0) return void(failures++);
      const Bytes& b = want[size_t(t)];
      for (size_t at = 0; at < b.size(); at += 100) {
        const size_t n = std::min<size_t>(100, b.size() - at);
        if (fs.write(fh, reinterpret_cast<const char*>(b.data() + at), n, off_t(at)) != int(n))
          failures++;
        if (at % 1000 == 0) {
          std::vector<std::string> names;
          if (fs.readdir("/", &names) != 0) failures++;
          struct stat st;
          if (fs.getattr("/.pdl/map", &st) != 0) failures++;
        }
      }
      if (fs.fsync(fh) != 0) failures++;
      if (fs.release(fh) != 0) failures++;
    });
  }
  for (auto& t : ts) t.join();
  CHECK(failures == 0);
  m.remount();
  for (int t = 0; t < kThreads; t++)
    CHECK(read_all(*m, "/t" + std::to_string(t)) == want[size_t(t)]);
}

TEST_CASE("a write or size beyond what the chip can hold is EFBIG and changes nothing",
          "[fuse]") {
  Mount m("pdl");
  const Bytes data = pattern(100, 3);
  const Fs::Handle fh = create(*m, "/f.db");
  write_at(*m, fh, data, 0);
  const off_t far = off_t(1) << 41;  // far beyond the chip: its chunk table would be 4 GiB
  REQUIRE(m->truncate("/f.db", far, nullptr) == -EFBIG);
  CHECK(m->truncate(nullptr, far, &fh) == -EFBIG);  // ftruncate
  const char byte = 1;
  CHECK(m->write(fh, &byte, 1, far) == -EFBIG);
  CHECK(m->write(fh, &byte, 1, std::numeric_limits<off_t>::max()) == -EFBIG);
  CHECK(m->fsync(fh) == 0);
  CHECK(attr(*m, "/f.db").st_size == off_t(data.size()));
  // SQLite's -shm files live in process memory, bounded alike.
  const Fs::Handle shm = create(*m, "/f.db-shm");
  CHECK(m->write(shm, &byte, 1, far) == -EFBIG);
  CHECK(m->truncate("/f.db-shm", far, nullptr) == -EFBIG);
  CHECK(attr(*m, "/f.db-shm").st_size == 0);
  REQUIRE(m->release(shm) == 0);
  REQUIRE(m->release(fh) == 0);
  CHECK(read_all(*m, "/f.db") == data);
}
