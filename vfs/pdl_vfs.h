// pdl_vfs.h — registering the "pdl" SQLite VFS from C++ (static linking).
//
// Programs linked with libsqlite3 and the pdlvfs library call register_vfs() once; the
// loadable module pdl.so does the same from sqlite3_pdl_init. Then:
//   sqlite3_open_v2("file:shop.db?vfs=pdl&method=pdl", &db,
//                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nullptr);
// URI parameters: README "URI parameters"; the VFS itself: vfs.cc.
#pragma once

#include <string>

namespace pdl {
class Nand;
struct Image;
}

namespace pdl::vfs {

// Register the VFS named "pdl" (idempotent). Returns an SQLite result code.
int register_vfs(bool make_default = false);

// For tests and benchmarks: the device of the image open at `full_path` (as SQLite names it,
// i.e. after xFullPathname), or nullptr if no connection has it open. Lets a crash test freeze
// the chip (EmulatedNand::cut_power_after) under a live connection.
pdl::Nand* device_of(const std::string& full_path);
// Likewise the open Image (device, store, Volume) — for benchmarks reading its counters. Valid
// while a connection keeps the image open; lock the Volume (image->volume->lock()) to read
// the store.
pdl::Image* image_of(const std::string& full_path);

// The last error message the VFS produced on this thread ("" if none): the detail behind a
// SQLITE_CANTOPEN / SQLITE_BUSY from sqlite3_open_v2, which SQLite itself cannot carry.
std::string last_error();

}  // namespace pdl::vfs
