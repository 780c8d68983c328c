// extension.cc — the loadable-module entry point of pdl.so.
//
//   sqlite3 -cmd '.load build/vfs/pdl' -cmd '.open file:shop.db?vfs=pdl'
// SQLite derives the entry name sqlite3_pdl_init from the file name. It returns
// SQLITE_OK_LOAD_PERMANENTLY: the VFS outlives the loading connection (with plain SQLITE_OK
// the module would be unloaded at that connection's close while the VFS is still registered).
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "vfs/pdl_vfs.h"

extern "C" __attribute__((visibility("default"))) int sqlite3_pdl_init(
    sqlite3*, char** err, const sqlite3_api_routines* api) {
  SQLITE_EXTENSION_INIT2(api);
  const int rc = pdl::vfs::register_vfs(false);
  if (rc != SQLITE_OK) {
    *err = sqlite3_mprintf("pdl: cannot register the VFS (SQLite code %d)", rc);
    return rc;
  }
  return SQLITE_OK_LOAD_PERMANENTLY;
}
