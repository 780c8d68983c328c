// pragma.cc — the VFS's pragmas, reached through SQLITE_FCNTL_PRAGMA on the main database:
//   PRAGMA pdl_stats;        one row: the image's statistics as JSON (flash/image/stats_json.h)
//   PRAGMA pdl_stats_reset;  zero every counter (Volume, store, flash); returns "ok"
//   PRAGMA pdl_check;        fsck of the open image (store tables, directory, owner map, every
//                            page's CRC); returns "ok" or the first problem
// Any other pragma is SQLite's (SQLITE_NOTFOUND).
#include "flash/image/stats_json.h"
#include "vfs/vfs_file.h"

namespace pdl::vfs {

int pdl_pragma(PdlFile* f, char** args) {
  const char* name = args[1];
  if (sqlite3_stricmp(name, "pdl_stats") == 0) {
    args[0] = sqlite3_mprintf("%s", image_stats_json(*f->db->image).c_str());
    return args[0] ? SQLITE_OK : SQLITE_NOMEM;
  }
  if (sqlite3_stricmp(name, "pdl_stats_reset") == 0) {
    f->db->vol->reset_stats();
    args[0] = sqlite3_mprintf("ok");
    return SQLITE_OK;
  }
  if (sqlite3_stricmp(name, "pdl_check") == 0) {
    Status st = f->db->vol->check();
    args[0] = sqlite3_mprintf("%s", st.is_ok() ? "ok" : st.to_string().c_str());
    return SQLITE_OK;
  }
  return SQLITE_NOTFOUND;
}

}  // namespace pdl::vfs
