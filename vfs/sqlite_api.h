// sqlite_api.h — the one place vfs/ includes SQLite.
//
// The VFS sources are compiled twice: into the loadable module pdl.so, where every SQLite call
// must go through the sqlite3_api routine table the host passes to sqlite3_pdl_init (so the
// module works with whatever SQLite library loaded it), and into a static library linked with
// libsqlite3 for programs that register the VFS directly (pdl-tpcc, the tests).
#pragma once

#ifdef PDL_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#else
#include <sqlite3.h>
#endif
