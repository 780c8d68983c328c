// test_vfs_locks.cc — SQLite's database lock levels between two connections of one process
// (db_state.h, lock.cc), as a table of steps on two sqlite3_file handles of one image opened
// through the pdl VFS: each step is an xLock, xUnlock or xCheckReservedLock with the result it
// must give. No busy handler is involved: every step answers at once, so a lock that wrongly
// waits or wrongly grants fails its row instead of hanging a connection.
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/vfs_test_util.h"

using namespace pdl::test;

namespace {

// A database file opened directly with the pdl VFS's xOpen; closed on destruction.
class RawFile {
 public:
  RawFile(sqlite3_vfs* vfs, sqlite3_filename name)
      : mem_(static_cast<char*>(std::calloc(1, size_t(vfs->szOsFile)))) {
    f_ = reinterpret_cast<sqlite3_file*>(mem_.get());
    int out = 0;
    const int rc = vfs->xOpen(vfs, name, f_, kOpenFlags | SQLITE_OPEN_MAIN_DB, &out);
    INFO("xOpen: " << rc);
    REQUIRE(rc == SQLITE_OK);
    open_ = true;
  }
  ~RawFile() {
    if (open_) f_->pMethods->xClose(f_);
  }
  RawFile(const RawFile&) = delete;
  RawFile& operator=(const RawFile&) = delete;
  sqlite3_file* get() { return f_; }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> mem_;
  sqlite3_file* f_ = nullptr;
  bool open_ = false;
};

enum Op { kLock, kUnlock, kCheckReserved };

struct Step {
  int conn;  // 0 or 1
  Op op;
  int level;  // SQLITE_LOCK_* for kLock / kUnlock; the expected answer for kCheckReserved
  int rc;     // SQLITE_OK or SQLITE_BUSY
};

const char* level_name(int level) {
  switch (level) {
    case SQLITE_LOCK_NONE: return "NONE";
    case SQLITE_LOCK_SHARED: return "SHARED";
    case SQLITE_LOCK_RESERVED: return "RESERVED";
    case SQLITE_LOCK_PENDING: return "PENDING";
    case SQLITE_LOCK_EXCLUSIVE: return "EXCLUSIVE";
    default: return "?";
  }
}

}  // namespace

TEST_CASE("two connections' lock levels: each request is granted or refused at once",
          "[vfs][locks]") {
  use_pdl_vfs();
  sqlite3_vfs* vfs = sqlite3_vfs_find("pdl");
  REQUIRE(vfs != nullptr);
  const std::string path = temp_path("locks.db");
  const char* params[] = {"size", "1M"};
  sqlite3_filename name = sqlite3_create_filename(path.c_str(), "", "", 1, params);
  REQUIRE(name != nullptr);
  {
    RawFile a(vfs, name), b(vfs, name);
    sqlite3_file* conn[2] = {a.get(), b.get()};
    constexpr int N = SQLITE_LOCK_NONE, S = SQLITE_LOCK_SHARED, R = SQLITE_LOCK_RESERVED,
                  X = SQLITE_LOCK_EXCLUSIVE, OK = SQLITE_OK, BUSY = SQLITE_BUSY;
    // Only requests SQLite makes (RESERVED from SHARED, EXCLUSIVE from RESERVED or PENDING).
    const std::vector<Step> table = {
        // Readers share; one writer at a time reserves, readers stay.
        {0, kLock, S, OK},
        {1, kLock, S, OK},
        {1, kCheckReserved, 0, OK},
        {0, kLock, R, OK},
        {1, kCheckReserved, 1, OK},
        {1, kLock, R, BUSY},  // never two RESERVED holders
        {0, kCheckReserved, 1, OK},
        // The other reader leaving and coming back changes nothing of that.
        {1, kUnlock, N, OK},
        {1, kCheckReserved, 1, OK},
        {1, kLock, S, OK},
        {1, kLock, R, BUSY},
        // The writer's EXCLUSIVE waits for the other reader (PENDING, new readers refused).
        {0, kLock, X, BUSY},
        {1, kUnlock, N, OK},
        {1, kLock, S, BUSY},
        {0, kLock, X, OK},
        {1, kLock, S, BUSY},
        {1, kCheckReserved, 1, OK},
        // Back to SHARED: the other may read, and reserve once the first lets go of RESERVED.
        {0, kUnlock, S, OK},
        {1, kCheckReserved, 0, OK},
        {1, kLock, S, OK},
        {1, kLock, R, OK},
        {0, kLock, R, BUSY},
        {1, kUnlock, S, OK},
        {0, kLock, R, OK},
        {1, kLock, R, BUSY},
        // All released: nothing reserved, and either may take everything.
        {0, kUnlock, N, OK},
        {1, kUnlock, N, OK},
        {0, kCheckReserved, 0, OK},
        {1, kLock, S, OK},
        {1, kLock, R, OK},
        {1, kLock, X, OK},
        {0, kLock, S, BUSY},
        {1, kUnlock, N, OK},
        {0, kLock, S, OK},
        {0, kUnlock, N, OK},
    };
    for (size_t i = 0; i < table.size(); i++) {
      const Step& st = table[i];
      sqlite3_file* f = conn[st.conn];
      INFO("step " << i << ": connection " << st.conn << " "
                   << (st.op == kLock     ? std::string("lock ") + level_name(st.level)
                       : st.op == kUnlock ? std::string("unlock to ") + level_name(st.level)
                                          : std::string("check reserved")));
      const auto t0 = std::chrono::steady_clock::now();
      int rc, reserved = -1;
      switch (st.op) {
        case kLock: rc = f->pMethods->xLock(f, st.level); break;
        case kUnlock: rc = f->pMethods->xUnlock(f, st.level); break;
        default: rc = f->pMethods->xCheckReservedLock(f, &reserved); break;
      }
      // A step that waits at all is a bug; the bound is loose for a loaded machine.
      CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
      REQUIRE(rc == st.rc);
      if (st.op == kCheckReserved) REQUIRE((reserved != 0) == (st.level != 0));
    }
  }
  sqlite3_free_filename(name);
}
