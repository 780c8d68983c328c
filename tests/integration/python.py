#!/usr/bin/python3
"""python.py — Python's sqlite3 module uses pdl knowing nothing of it but the extension.

Usage: /usr/bin/python3 python.py BUILD_DIR   (Debian's python: its sqlite3 can load extensions)

Checks:
  * enable_load_extension + load_extension(BUILD/vfs/pdl) registers the VFS for good (the loading
    connection can be closed first);
  * sqlite3.connect('file:...?vfs=pdl', uri=True): a round trip (create, executemany, update,
    delete, select), integrity_check and pdl_check say ok, pdl_stats is valid JSON;
  * WAL mode: a reader keeps its snapshot while a writer commits; checkpoint; persistence of
    data and of the journal mode across a reopen;
  * bad parameters fail with sqlite3.OperationalError.
"""
import json
import os
import shutil
import sqlite3
import sys
import tempfile


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: python.py BUILD_DIR")
    ext = os.path.join(sys.argv[1], "vfs", "pdl")
    tmp = tempfile.mkdtemp(prefix="pdl-py-", dir=os.environ.get("TMPDIR") or None)
    try:
        loader = sqlite3.connect(":memory:")
        loader.enable_load_extension(True)
        loader.load_extension(ext)
        loader.close()  # the VFS stays registered (SQLITE_OK_LOAD_PERMANENTLY)

        img = os.path.join(tmp, "py.db")
        uri = "file:" + img + "?vfs=pdl"

        # Round trip on a fresh image.
        conn = sqlite3.connect(uri + "&size=8M&method=pdl", uri=True)
        conn.execute("CREATE TABLE kv(k INTEGER PRIMARY KEY, v TEXT, b BLOB)")
        rows = [(i, "value %d" % i, bytes([i % 256]) * (i * 37 % 3000)) for i in range(300)]
        conn.executemany("INSERT INTO kv VALUES (?, ?, ?)", rows)
        conn.commit()
        conn.execute("UPDATE kv SET v = v || '!' WHERE k % 10 = 0")
        conn.execute("DELETE FROM kv WHERE k % 7 = 3")
        conn.commit()
        expect = {k: (v + "!" if k % 10 == 0 else v, b) for k, v, b in rows if k % 7 != 3}
        got = {k: (v, b) for k, v, b in conn.execute("SELECT k, v, b FROM kv")}
        check(got == expect, "round trip: rows differ")
        check(conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "integrity_check")
        check(conn.execute("PRAGMA pdl_check").fetchone()[0] == "ok", "pdl_check")
        stats = json.loads(conn.execute("PRAGMA pdl_stats").fetchone()[0])
        check(stats["method"] == "pdl", "pdl_stats method")
        check(stats["geometry"]["size_bytes"] == 8 << 20, "pdl_stats size")
        check(stats["device"] == "emulated", "pdl_stats device")
        check(stats["flash"]["programs"] > 0, "pdl_stats flash programs")
        check(any(f["name"] == "py.db" for f in stats["files"]), "pdl_stats files")
        check(conn.execute("PRAGMA pdl_stats_reset").fetchone()[0] == "ok", "pdl_stats_reset")
        stats = json.loads(conn.execute("PRAGMA pdl_stats").fetchone()[0])
        check(stats["flash"]["programs"] == 0, "counters after pdl_stats_reset")

        # WAL: concurrent reader keeps its snapshot; checkpoint; persistence.
        check(conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal", "enter WAL")
        reader = sqlite3.connect(uri, uri=True, isolation_level=None)
        reader.execute("BEGIN")
        before = reader.execute("SELECT count(*) FROM kv").fetchone()[0]
        check(before == len(expect), "reader count")
        conn.execute("INSERT INTO kv VALUES (1000, 'wal row', NULL)")
        conn.commit()
        check(reader.execute("SELECT count(*) FROM kv").fetchone()[0] == before,
              "reader snapshot changed under a WAL commit")
        reader.execute("COMMIT")
        check(reader.execute("SELECT count(*) FROM kv").fetchone()[0] == before + 1,
              "reader does not see the commit after its snapshot")
        reader.close()
        busy, log, done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        check(busy == 0 and log == 0 and done == 0, "checkpoint(TRUNCATE)")
        conn.execute("INSERT INTO kv VALUES (1001, 'after checkpoint', NULL)")
        conn.commit()
        conn.close()

        conn = sqlite3.connect(uri, uri=True)
        check(conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal", "WAL persists")
        check(conn.execute("SELECT v FROM kv WHERE k = 1000").fetchone()[0] == "wal row",
              "WAL row persists")
        check(conn.execute("SELECT v FROM kv WHERE k = 1001").fetchone()[0] == "after checkpoint",
              "row after checkpoint persists")
        check(conn.execute("SELECT count(*) FROM kv").fetchone()[0] == len(expect) + 2,
              "count after reopen")
        check(conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "integrity reopen")
        check(conn.execute("PRAGMA pdl_check").fetchone()[0] == "ok", "pdl_check reopen")
        conn.close()

        # A parameter contradicting the image, and a bad one, fail the open.
        for bad in ("&method=opu", "&page=1000"):
            try:
                c = sqlite3.connect(uri + bad, uri=True)
                c.execute("SELECT 1").fetchone()
                raise SystemExit("FAIL: open with %s succeeded" % bad)
            except sqlite3.OperationalError:
                pass
        print("python.py: all checks passed (SQLite %s)" % sqlite3.sqlite_version)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
