// volume_snapshot.h — what the Volume tests compare (header-only, tests only): everything a
// user or the next operations can see of a Volume (files, bytes, chunk tables, owner entries,
// free lpns, main name), the comparison of two, and a random file workload.
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "flash/volume/volume.h"

namespace pdl::test {

// Everything a user or the next operations can see of a Volume.
struct Snapshot {
  std::vector<FileInfo> files;
  std::map<std::string, std::vector<uint8_t>> bytes;
  std::map<std::string, std::vector<uint32_t>> lpns;
  std::vector<Owner> owners;
  uint32_t free_lpns = 0;
  std::string main_name;
};

// `live`: a volume that was not just opened keeps holes at the end of a chunk table that a
// truncate left (an open builds tables up to the last mapped chunk): compared without them.
inline Snapshot snapshot(Volume& v, bool live = false) {
  Snapshot s;
  s.files = v.list();
  for (const FileInfo& fi : s.files) {
    Volume::FileId id;
    REQUIRE(v.lookup(fi.name, &id).is_ok());
    std::vector<uint8_t> b(fi.size);
    size_t got = 0;
    REQUIRE(v.read(id, 0, b, &got).is_ok());
    REQUIRE(got == fi.size);
    s.bytes[fi.name] = b;
    std::vector<uint32_t>& lpns = s.lpns[fi.name];
    REQUIRE(v.chunk_lpns(fi.name, &lpns).is_ok());
    while (live && !lpns.empty() && lpns.back() == Volume::kNoLpn) lpns.pop_back();
  }
  const VolumeLayout& L = v.layout();
  for (uint32_t l = L.data_first; l < L.data_first + L.data_lpns; l++)
  {
    Owner o;
    REQUIRE(v.owner_of(l, &o).is_ok());
    s.owners.push_back(o);
  }
  s.free_lpns = v.stats().free_lpns;
  s.main_name = v.main_name();
  return s;
}

inline void require_equal(const Snapshot& a, const Snapshot& b, const char* what) {
  INFO(what);
  REQUIRE(a.files.size() == b.files.size());
  for (size_t i = 0; i < a.files.size(); i++) {
    INFO("file " << a.files[i].name);
    CHECK(a.files[i].id == b.files[i].id);
    CHECK(a.files[i].name == b.files[i].name);
    CHECK(a.files[i].size == b.files[i].size);
    CHECK(a.files[i].mtime_ns == b.files[i].mtime_ns);
    CHECK(a.files[i].chunks_mapped == b.files[i].chunks_mapped);
    CHECK(a.files[i].kind == b.files[i].kind);
  }
  CHECK(a.bytes == b.bytes);
  CHECK(a.lpns == b.lpns);
  REQUIRE(a.owners.size() == b.owners.size());
  for (size_t i = 0; i < a.owners.size(); i++) {
    INFO("data lpn index " << i);
    CHECK(a.owners[i].id == b.owners[i].id);
    CHECK(a.owners[i].chunk == b.owners[i].chunk);
    CHECK(a.owners[i].gen == b.owners[i].gen);
  }
  CHECK(a.free_lpns == b.free_lpns);
  CHECK(a.main_name == b.main_name);
}

// One random file operation: a create and write somewhere (holes too), a truncate down or up,
// a rename (some replacing), a remove, an mtime, or a sync. Files stay within `cap_chunks`
// chunks (and an eighth of the volume). The first error is returned (a power cut).
inline Status random_op(Volume& v, std::mt19937& rng, uint64_t cap_chunks = 12) {
  const size_t chunk = v.layout().chunk;
  const uint64_t cap = std::min<uint64_t>(v.max_file_size() / 8, cap_chunks * chunk);
  const char* names[] = {"db", "db-journal", "db-wal", "a", "b", "c"};
  const std::string name = names[rng() % 6];
  Volume::FileId id;
  const bool exists = v.lookup(name, &id).is_ok();
  switch (rng() % 9) {
    case 0:
    case 1:
    case 2: {  // write somewhere (creating)
      PDL_TRY(v.open_file(name, true, &id));
      const uint64_t off = rng() % cap;
      const size_t len = 1 + rng() % (2 * chunk);
      std::vector<uint8_t> d(len, uint8_t(rng()));
      return off + len <= cap ? v.write(id, off, d) : Status::ok();
    }
    case 3:
      return exists ? v.truncate(id, rng() % cap) : Status::ok();
    case 4:
      return exists ? v.rename(name, names[rng() % 6]) : Status::ok();
    case 5:
      return exists && rng() % 2 ? v.remove(name) : Status::ok();
    case 6:
      return exists ? v.set_mtime(id, 1800000000000000000ull + rng()) : Status::ok();
    default:
      return v.sync();
  }
}

// `ops` random operations, each required to succeed.
inline void random_work(Volume& v, std::mt19937& rng, int ops) {
  for (int i = 0; i < ops; i++) {
    const Status st = random_op(v, rng);
    INFO(st.to_string());
    REQUIRE(st.is_ok());
  }
}

}  // namespace pdl::test
