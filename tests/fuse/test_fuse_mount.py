#!/usr/bin/python3
# test_fuse_mount.py — end-to-end test of pdl-fuse under the kernel (suite "fuse").
#
#   test_fuse_mount.py PDL_FUSE PDL_TOOL PDL_MODULE SQLITE3
#
# Real mounts (pdl-fuse -f, unmounted with fusermount3 -u) on fresh images in a temp dir:
#   - the stock sqlite3 *without* the extension builds a database inside the mount (journal
#     modes delete, wal, truncate), integrity_check ok; after unmount the same database opens
#     through file:IMAGE?vfs=pdl with the same rows — and the reverse direction (built through
#     the VFS, changed through the mount, read back through the VFS);
#   - the VFS picks the database of an image that also holds a plain file;
#   - files: a 6 MiB and an odd-sized file copied in and out byte-identical, and again after a
#     remount; rename, truncate, unlink, utimens; concurrent readers;
#   - /.pdl/ files parse (stats.json is JSON, config key=value, blocks and map tables) and refuse
#     writes; statfs;
#   - errno: ENOENT, ENAMETOOLONG, EPERM (mkdir), EACCES (/.pdl), EROFS (-o ro), ENOSPC on a
#     full chip with an fsynced file intact afterwards;
#   - ownership: a second mount exits 4 and the VFS fails, both naming the holder's pid;
#   - a kill -9 of pdl-fuse loses only what was not fsynced, and the image checks clean;
#   - background mode (no -f) returns once mounted; `flock IMAGE true` waits for the unmount;
#   - the command line: --help, --version, usage errors (2), a non-image (3, untouched), a
#     mount point that is not a directory (1);
#   - NVM (-o nvm=64K, inside the image and with nvm_path=): the stock sqlite3 fills a
#     database, /.pdl/config names the NVM, a remount without the NVM file fails naming
#     nvm_path, with it the rows are back, and pdl fsck --nvm-path is clean. This part needs the
#     NVM engines and fails, saying so, until they are merged.
# `pdl fsck` checks every image after its last unmount.
#
# Exit 77 (skipped, with the reason printed) if /dev/fuse or fusermount3 is unusable or there
# is no sqlite3 shell. Sanitizer builds: pdl-fuse and pdl run instrumented; sqlite3 loads an
# instrumented pdl.so only with PDL_SANITIZER_PRELOAD (as in test_pdl_tool.py); any sanitizer
# report in a pdl-fuse log is a failure.
import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, failures, fill_errno, finish, skip  # noqa: F401
from sanitizer_env import sqlite_env

FUSE, TOOL, MODULE = sys.argv[1], sys.argv[2], sys.argv[3]
SQLITE = sys.argv[4] if len(sys.argv) > 4 else ""
FUSERMOUNT = shutil.which("fusermount3")




def stock_sql(db, script):
    """The stock sqlite3 shell, no extension: (exit code, stdout, stderr)."""
    r = subprocess.run([SQLITE, "-batch", "-bail", db], input=script.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def vfs_sql(image, script, uri_extra=""):
    """sqlite3 with pdl.so on file:IMAGE?vfs=pdl: (exit code, stdout, stderr)."""
    cmd = [SQLITE, "-batch", "-bail", "-cmd", ".load " + MODULE,
           "-cmd", ".open file:%s?vfs=pdl%s" % (image, uri_extra)]
    r = subprocess.run(cmd, input=script.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=sqlite_env(), timeout=120)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def tool(*args):
    r = subprocess.run([TOOL, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def fuse_cmd(*args):
    r = subprocess.run([FUSE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def sanitizer_report(text):
    return "Sanitizer" in text or "runtime error" in text


class Mount:
    """pdl-fuse IMAGE DIR -f [opts] as a child; unmount() returns its exit status."""
    serial = 0

    def __init__(self, image, mnt, *opts):
        Mount.serial += 1
        self.image, self.mnt = image, mnt
        self.log_path = os.path.join(WORK, "pdl-fuse-%d.log" % Mount.serial)
        self.log = open(self.log_path, "w+b")
        self.proc = subprocess.Popen([FUSE, image, mnt, "-f", *opts], stdout=self.log,
                                     stderr=self.log)
        deadline = time.monotonic() + 30
        while not os.path.ismount(mnt):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("pdl-fuse did not mount (exit %s): %s" %
                                   (self.proc.poll(), self.text()))
            time.sleep(0.02)

    def text(self):
        self.log.flush()
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def unmount(self):
        subprocess.run([FUSERMOUNT, "-u", self.mnt], check=True, timeout=60)
        rc = self.proc.wait(timeout=120)
        log = self.text()
        if sanitizer_report(log):
            check(False, "no sanitizer report from pdl-fuse: " + log)
        return rc

    def kill(self):
        self.proc.kill()
        self.proc.wait(timeout=60)
        subprocess.run([FUSERMOUNT, "-u", self.mnt], timeout=60)


def fresh(name):
    """A new image path (not created yet: pdl-fuse creates it) and an empty mount point."""
    image = os.path.join(WORK, name + ".img")
    mnt = os.path.join(WORK, name + ".mnt")
    os.mkdir(mnt)
    return image, mnt


def fsck_clean(image, what):
    rc, out, err = tool("fsck", image)
    check(rc == 0 and "clean" in out, "pdl fsck clean: " + what + ("" if rc == 0 else out + err))


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                return h.hexdigest()
            h.update(b)


def expect_errno(fn, code, what):
    try:
        fn()
    except OSError as e:
        check(e.errno == code, "%s: %s (got %s)" % (what, errno.errorcode[code],
                                                   errno.errorcode.get(e.errno, e.errno)))
        return
    check(False, "%s: %s expected, the call succeeded" % (what, errno.errorcode[code]))


# ---------------------------------------------------------------------------------------------

def probe():
    """Skip with the reason unless a real mount works here."""
    if not SQLITE or not os.path.exists(SQLITE):
        skip("no sqlite3 shell")
    if not FUSERMOUNT:
        skip("no fusermount3 (Debian package fuse3)")
    if not os.path.exists("/dev/fuse"):
        skip("/dev/fuse does not exist (no FUSE in this kernel or container)")
    try:
        os.close(os.open("/dev/fuse", os.O_RDWR))
    except OSError as e:
        skip("/dev/fuse unusable: %s" % e)
    image, mnt = fresh("probe")
    p = subprocess.run([FUSE, image, mnt, "-o", "size=1M"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    if p.returncode != 0 or not os.path.ismount(mnt):
        skip("cannot mount here (pdl-fuse exit %d): %s" % (p.returncode, p.stderr.decode()))
    # Background mode worked: it returned with the file system mounted. Unmount, and flock
    # waits for the daemon to have written everything and released the image.
    check(sorted(os.listdir(mnt)) == [".pdl"], "background mount: empty volume lists .pdl")
    subprocess.run([FUSERMOUNT, "-u", mnt], check=True, timeout=60)
    subprocess.run(["flock", image, "true"], check=True, timeout=60)
    check(not os.path.ismount(mnt), "background mount: unmounted")
    fsck_clean(image, "background mount")


def test_command_line():
    rc, out, err = fuse_cmd("--help")
    check(rc == 0 and "usage: pdl-fuse" in out and "method=" in out, "--help: usage, exit 0")
    rc, out, err = fuse_cmd("--version")
    check(rc == 0 and "pdl-fuse" in out + err and "FUSE" in (out + err).upper(),
          "--version names pdl-fuse and libfuse")
    rc, out, err = fuse_cmd()
    check(rc == 2 and "IMAGE and MOUNTPOINT are required" in err, "no arguments: exit 2")
    image, mnt = fresh("cli")
    rc, out, err = fuse_cmd(image)
    check(rc == 2 and "MOUNTPOINT is required" in err, "no mount point: exit 2")
    rc, out, err = fuse_cmd(image, mnt, "-o", "method=nonsense")
    check(rc == 2 and not os.path.exists(image), "bad method: exit 2, no image made (%s)" % err)
    rc, out, err = fuse_cmd(image, mnt, "-o", "size=1X")
    check(rc == 2 and not os.path.exists(image), "bad size: exit 2 (%s)" % err.strip())
    rc, out, err = fuse_cmd(image, mnt, "extra")
    check(rc == 2 and "unexpected argument" in err, "third argument: exit 2")
    notdir = os.path.join(WORK, "plain-file")
    with open(notdir, "w") as f:
        f.write("x")
    rc, out, err = fuse_cmd(image, notdir)
    check(rc == 1 and not os.path.exists(image), "mount point not a directory: exit 1 (%s)"
          % err.strip())
    junk = os.path.join(WORK, "junk.img")
    data = os.urandom(300000)
    with open(junk, "wb") as f:
        f.write(data)
    rc, out, err = fuse_cmd(junk, mnt)
    with open(junk, "rb") as f:
        same = f.read() == data
    check(rc == 3 and same and not os.path.ismount(mnt),
          "not an image: exit 3, file untouched (%s)" % err.strip())
    rc, out, err = fuse_cmd(os.path.join(WORK, "missing.img"), mnt, "-o", "ro")
    check(rc == 3 and not os.path.exists(os.path.join(WORK, "missing.img")),
          "-o ro on a missing image: exit 3, nothing created (%s)" % err.strip())


ROWS = 2000


def fill_script(mode):
    return ("PRAGMA journal_mode=%s;\n" % mode +
            "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT);\n"
            "CREATE INDEX t_a ON t(a);\n"
            "BEGIN;\n" +
            "".join("INSERT INTO t(a, b) VALUES (%d, '%s');\n" % (i * 7 % 1009, "v%05d" % i * 8)
                    for i in range(ROWS)) +
            "COMMIT;\n"
            "UPDATE t SET b = 'changed' WHERE id % 10 = 0;\n"
            "DELETE FROM t WHERE id % 97 = 0;\n"
            "PRAGMA integrity_check;\n"
            "SELECT count(*), sum(a) FROM t;\n")


def expected_rows():
    ids = [i for i in range(1, ROWS + 1) if i % 97 != 0]
    return len(ids), sum((i - 1) * 7 % 1009 for i in ids)


def test_stock_sqlite_then_vfs():
    n, s = expected_rows()
    for mode in ("delete", "wal", "truncate"):
        image, mnt = fresh("stock-" + mode)
        m = Mount(image, mnt, "-o", "size=64M")
        db = os.path.join(mnt, "shop.db")
        rc, out, err = stock_sql(db, fill_script(mode))
        check(rc == 0 and "ok\n%d|%d" % (n, s) in out,
              "%s: stock sqlite3 fills a database in the mount, integrity ok (%s)"
              % (mode, err.strip()))
        rc, out, err = stock_sql(db, "PRAGMA journal_mode; SELECT count(*) FROM t;")
        persistent = mode if mode == "wal" else "delete"  # only WAL is kept in the file
        check(rc == 0 and out.split() == [persistent, str(n)],
              "%s: a second stock sqlite3 reads it back: %s" % (mode, out.split()))
        # While mounted, the image is owned: the VFS cannot open it, and says who has it.
        rc, out, err = vfs_sql(image, "SELECT count(*) FROM t;")
        check(rc != 0 and str(m.proc.pid) in err and "pdl-fuse" in err,
              "%s: VFS open while mounted fails naming pid %d: %s"
              % (mode, m.proc.pid, err.strip()))
        check(m.unmount() == 0, "%s: unmount exit 0" % mode)
        rc, out, err = vfs_sql(image, "PRAGMA integrity_check; SELECT count(*), sum(a) FROM t;"
                               "SELECT count(*) FROM t WHERE b = 'changed';")
        check(rc == 0 and out.split() == ["ok", "%d|%d" % (n, s), str(ROWS // 10 - 2)],
              "%s: after unmount the VFS opens the same database: %s %s"
              % (mode, out.split(), err.strip()))
        fsck_clean(image, "stock sqlite3 " + mode)


def test_vfs_then_stock_sqlite():
    image, mnt = fresh("reverse")
    n, s = expected_rows()
    rc, out, err = vfs_sql(image, fill_script("delete"), "&size=64M")
    check(rc == 0 and "ok\n%d|%d" % (n, s) in out, "VFS builds a database (%s)" % err.strip())
    m = Mount(image, mnt)
    dbs = [f for f in os.listdir(mnt) if f != ".pdl"]
    check(len(dbs) == 1, "one database file in the mount: %s" % dbs)
    db = os.path.join(mnt, dbs[0])
    rc, out, err = stock_sql(db, "PRAGMA integrity_check; SELECT count(*), sum(a) FROM t;"
                             "INSERT INTO t(a, b) VALUES (5000, 'from the mount');")
    check(rc == 0 and out.split() == ["ok", "%d|%d" % (n, s)],
          "stock sqlite3 reads the VFS's database and inserts: %s %s" % (out.split(), err))
    check(m.unmount() == 0, "reverse: unmount exit 0")
    rc, out, err = vfs_sql(image, "SELECT b FROM t WHERE a = 5000; PRAGMA integrity_check;")
    check(rc == 0 and out.split("\n")[:2] == ["from the mount", "ok"],
          "the VFS sees the row inserted through the mount: %r" % out)
    fsck_clean(image, "reverse")


def test_vfs_picks_database():
    image, mnt = fresh("pick")
    m = Mount(image, mnt, "-o", "size=64M")
    with open(os.path.join(mnt, "notes.txt"), "w") as f:
        f.write("not a database\n" * 100)
    rc, out, err = stock_sql(os.path.join(mnt, "shop.db"),
                             "CREATE TABLE k(v); INSERT INTO k VALUES ('picked');")
    check(rc == 0, "stock sqlite3 makes shop.db beside notes.txt")
    check(m.unmount() == 0, "pick: unmount exit 0")
    rc, out, err = fuse_cmd(image, mnt, "-o", "method=opu")
    check(rc == 3 and "opu" in err and "pdl" in err and not os.path.ismount(mnt),
          "an existing pdl image mounted with -o method=opu: exit 3 naming both (%s)"
          % err.strip())
    rc, out, err = vfs_sql(image, "SELECT v FROM k;")
    check(rc == 0 and out.strip() == "picked",
          "the VFS opens shop.db, not notes.txt: %r %s" % (out, err.strip()))


def test_files():
    image, mnt = fresh("files")
    m = Mount(image, mnt, "-o", "size=64M")
    big_src = os.path.join(WORK, "big.src")
    odd_src = os.path.join(WORK, "odd.src")
    with open(big_src, "wb") as f:
        f.write(os.urandom(6 << 20))
    with open(odd_src, "wb") as f:
        f.write(os.urandom(123457))
    shutil.copyfile(big_src, os.path.join(mnt, "big.bin"))
    shutil.copyfile(odd_src, os.path.join(mnt, "odd.bin"))
    check(os.path.getsize(os.path.join(mnt, "big.bin")) == 6 << 20, "6 MiB file: size")
    out_big = os.path.join(WORK, "big.out")
    shutil.copyfile(os.path.join(mnt, "big.bin"), out_big)
    check(digest(out_big) == digest(big_src), "6 MiB file copied in and out byte-identical")
    check(digest(os.path.join(mnt, "odd.bin")) == digest(odd_src),
          "123457-byte file byte-identical")

    # Concurrent readers of the same file, at different offsets.
    want = open(big_src, "rb").read()
    errors = []

    def reader(k):
        try:
            with open(os.path.join(mnt, "big.bin"), "rb") as f:
                for i in range(24):
                    off = ((k * 7919 + i * 104729) * 61) % (len(want) - 70000)
                    f.seek(off)
                    if f.read(70000) != want[off:off + 70000]:
                        errors.append((k, off))
        except OSError as e:
            errors.append((k, str(e)))

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(not errors, "6 concurrent readers see the right bytes: %s" % errors[:3])

    # rename, truncate, unlink, utimens
    os.rename(os.path.join(mnt, "odd.bin"), os.path.join(mnt, "odd-renamed.bin"))
    check(not os.path.exists(os.path.join(mnt, "odd.bin")) and
          digest(os.path.join(mnt, "odd-renamed.bin")) == digest(odd_src),
          "rename keeps the contents")
    with open(os.path.join(mnt, "cut.bin"), "wb") as f:
        f.write(b"abcdefghij" * 1000)
    os.truncate(os.path.join(mnt, "cut.bin"), 4321)
    with open(os.path.join(mnt, "cut.bin"), "rb") as f:
        check(f.read() == (b"abcdefghij" * 1000)[:4321], "truncate shortens")
    os.truncate(os.path.join(mnt, "cut.bin"), 9000)
    with open(os.path.join(mnt, "cut.bin"), "rb") as f:
        check(f.read() == (b"abcdefghij" * 1000)[:4321] + bytes(9000 - 4321),
              "truncate extends with zeros")
    with open(os.path.join(mnt, "gone.bin"), "wb") as f:
        f.write(b"x" * 5000)
    os.unlink(os.path.join(mnt, "gone.bin"))
    check(not os.path.exists(os.path.join(mnt, "gone.bin")), "unlink removes")
    stamp = 1700000000_123456789
    os.utime(os.path.join(mnt, "cut.bin"), ns=(stamp, stamp))
    check(os.stat(os.path.join(mnt, "cut.bin")).st_mtime_ns == stamp, "utimens sets the mtime")
    st = os.statvfs(mnt)
    check(st.f_blocks > 0 and 0 < st.f_bfree < st.f_blocks and st.f_namemax == 200,
          "statfs: capacity %d, free %d, namemax %d" % (st.f_blocks, st.f_bfree, st.f_namemax))
    check(m.unmount() == 0, "files: unmount exit 0")

    m = Mount(image, mnt)
    check(sorted(os.listdir(mnt)) == [".pdl", "big.bin", "cut.bin", "odd-renamed.bin"],
          "after remount: the same files %s" % sorted(os.listdir(mnt)))
    check(digest(os.path.join(mnt, "big.bin")) == digest(big_src) and
          digest(os.path.join(mnt, "odd-renamed.bin")) == digest(odd_src),
          "after remount: contents byte-identical")
    check(os.stat(os.path.join(mnt, "cut.bin")).st_mtime_ns == stamp and
          os.path.getsize(os.path.join(mnt, "cut.bin")) == 9000,
          "after remount: mtime and size kept")
    test_inspect(mnt)
    check(m.unmount() == 0, "files: second unmount exit 0")
    fsck_clean(image, "files")


def test_inspect(mnt):
    pdl = os.path.join(mnt, ".pdl")
    check(sorted(os.listdir(pdl)) == ["blocks", "config", "map", "stats.json"],
          "/.pdl lists its four files")
    with open(os.path.join(pdl, "stats.json")) as f:
        stats = json.load(f)
    check(isinstance(stats, dict) and stats, "stats.json parses as a JSON object: %s"
          % sorted(stats)[:8])
    with open(os.path.join(pdl, "config")) as f:
        config = dict(line.rstrip("\n").split("=", 1) for line in f if line.strip())
    check(config.get("method") == "pdl" and config.get("page") == "2048" and
          int(config.get("blocks", 0)) > 0, "config: key=value with method, page, blocks")
    with open(os.path.join(pdl, "blocks")) as f:
        rows = [line.split() for line in f if not line.startswith("#")]
    check(len(rows) == int(config["blocks"]) and
          all(len(r) == 4 and r[0].isdigit() and r[2].isdigit() and r[3].isdigit()
              for r in rows), "blocks: one row per erase block (block state valid erases)")
    with open(os.path.join(pdl, "map")) as f:
        rows = [line.split() for line in f if not line.startswith("#")]
    files = {r[5] for r in rows if len(r) == 6}
    check(rows and all(len(r) == 6 and r[0].isdigit() and r[2].isdigit() for r in rows) and
          {"big.bin", "cut.bin", "odd-renamed.bin"} <= files,
          "map: lpn chunk base diff in_buffer file, for every file present")
    expect_errno(lambda: open(os.path.join(pdl, "config"), "w"), errno.EACCES,
                 "/.pdl/config refuses writes")
    expect_errno(lambda: open(os.path.join(pdl, "new"), "w"), errno.EACCES,
                 "/.pdl refuses new files")
    expect_errno(lambda: os.unlink(os.path.join(pdl, "map")), errno.EACCES,
                 "/.pdl/map refuses unlink")


def test_errno():
    image, mnt = fresh("errno")
    m = Mount(image, mnt, "-o", "size=1M")
    expect_errno(lambda: open(os.path.join(mnt, "missing")), errno.ENOENT, "open of a missing file")
    expect_errno(lambda: open(os.path.join(mnt, "n" * 201), "w"), errno.ENAMETOOLONG,
                 "a 201-byte name")
    with open(os.path.join(mnt, "n" * 200), "w") as f:
        f.write("longest name")
    check(os.path.exists(os.path.join(mnt, "n" * 200)), "a 200-byte name works")
    expect_errno(lambda: os.mkdir(os.path.join(mnt, "dir")), errno.EPERM, "mkdir")
    expect_errno(lambda: os.symlink("x", os.path.join(mnt, "link")), errno.EPERM, "symlink")
    expect_errno(lambda: os.rename(os.path.join(mnt, "missing"), os.path.join(mnt, "x")),
                 errno.ENOENT, "rename of a missing file")
    # A full chip: ENOSPC, and what was fsynced before survives.
    keep = os.urandom(20000)
    with open(os.path.join(mnt, "keep.bin"), "wb") as f:
        f.write(keep)
        f.flush()
        os.fsync(f.fileno())
    got = fill_errno(os.path.join(mnt, "fill.bin"))
    check(got == errno.ENOSPC, "filling a 1 MiB chip: ENOSPC (got %s)"
          % errno.errorcode.get(got, got))
    with open(os.path.join(mnt, "keep.bin"), "rb") as f:
        check(f.read() == keep, "full chip: the fsynced file reads back")
    os.unlink(os.path.join(mnt, "fill.bin"))
    with open(os.path.join(mnt, "after.bin"), "wb") as f:
        f.write(b"room again")
    check(m.unmount() == 0, "errno: unmount exit 0")
    m = Mount(image, mnt)
    with open(os.path.join(mnt, "keep.bin"), "rb") as f:
        check(f.read() == keep, "full chip: the fsynced file survives a remount")
    with open(os.path.join(mnt, "after.bin"), "rb") as f:
        check(f.read() == b"room again", "full chip: space is reusable after unlink")
    check(m.unmount() == 0, "errno: second unmount exit 0")
    fsck_clean(image, "full chip")

    # Read-only: every change is EROFS, reads work, the image is not modified.
    before = digest(image)
    m = Mount(image, mnt, "-o", "ro")
    with open(os.path.join(mnt, "keep.bin"), "rb") as f:
        check(f.read() == keep, "-o ro: reads work")
    expect_errno(lambda: open(os.path.join(mnt, "keep.bin"), "r+b"), errno.EROFS,
                 "-o ro: open for writing")
    expect_errno(lambda: open(os.path.join(mnt, "new.bin"), "wb"), errno.EROFS,
                 "-o ro: create")
    expect_errno(lambda: os.unlink(os.path.join(mnt, "keep.bin")), errno.EROFS,
                 "-o ro: unlink")
    check(m.unmount() == 0, "-o ro: unmount exit 0")
    check(digest(image) == before, "-o ro: the image is byte-identical")


def test_ownership_and_crash():
    image, mnt = fresh("owned")
    m = Mount(image, mnt, "-o", "size=64M")
    mnt2 = os.path.join(WORK, "owned2.mnt")
    os.mkdir(mnt2)
    rc, out, err = fuse_cmd(image, mnt2, "-f")
    check(rc == 4 and str(m.proc.pid) in err and not os.path.ismount(mnt2),
          "a second mount of an image in use: exit 4 naming pid %d (%s)"
          % (m.proc.pid, err.strip()))
    rc, out, err = tool("info", image)
    check(rc == 4, "pdl info on a mounted image: exit 4")

    # kill -9: what was fsynced survives, what was not may be lost, the image checks clean.
    synced = os.urandom(300000)
    with open(os.path.join(mnt, "synced.bin"), "wb") as f:
        f.write(synced)
        f.flush()
        os.fsync(f.fileno())
    db = os.path.join(mnt, "crash.db")
    rc, out, err = stock_sql(db, "CREATE TABLE c(x); INSERT INTO c VALUES (1), (2), (3);")
    check(rc == 0, "crash: a committed database (DELETE mode: commits are synced)")
    with open(os.path.join(mnt, "unsynced.bin"), "wb") as f:
        f.write(os.urandom(100000))
    m.kill()
    check(not os.path.ismount(mnt), "crash: pdl-fuse killed, mount point released")
    fsck_clean(image, "after kill -9")
    m = Mount(image, mnt)
    with open(os.path.join(mnt, "synced.bin"), "rb") as f:
        check(f.read() == synced, "crash: the fsynced file survives kill -9")
    rc, out, err = stock_sql(db, "PRAGMA integrity_check; SELECT sum(x) FROM c;")
    check(rc == 0 and out.split() == ["ok", "6"], "crash: the committed database survives: %s"
          % out.split())
    check(m.unmount() == 0, "crash: unmount exit 0")
    fsck_clean(image, "after the crash and a clean unmount")


def test_nvm():
    n, s = expected_rows()
    for where in ("inside", "file"):
        image, mnt = fresh("nvm-" + where)
        nvm = image + ".nvm"
        opts = "size=16M,nvm=64K" + (",nvm_path=" + nvm if where == "file" else "")
        try:
            m = Mount(image, mnt, "-o", opts)
        except RuntimeError as e:
            check(False, "nvm %s: mount with -o %s (%s)%s" % (
                where, opts, str(e).strip()[-300:],
                " - the NVM engines are not merged yet" if "not implemented" in str(e) else ""))
            continue
        db = os.path.join(mnt, "shop.db")
        rc, out, err = stock_sql(db, fill_script("delete"))
        check(rc == 0 and "ok\n%d|%d" % (n, s) in out,
              "nvm %s: stock sqlite3 fills a database in the mount (%s)" % (where, err.strip()))
        with open(os.path.join(mnt, ".pdl", "config")) as f:
            config = dict(line.rstrip("\n").split("=", 1) for line in f if line.strip())
        check(config.get("nvm") == "64K" and
              (nvm in config.get("nvm_place", "") if where == "file"
               else config.get("nvm_place", "").startswith("image file")),
              "nvm %s: /.pdl/config names the NVM: %s" % (where, config))
        check(m.unmount() == 0, "nvm %s: unmount exit 0" % where)
        if where == "file":
            rc, out, err = fuse_cmd(image, mnt, "-f")
            check(rc != 0 and "nvm_path" in err and not os.path.ismount(mnt),
                  "nvm file: a mount without nvm_path fails naming it: " + err.strip())
        m = Mount(image, mnt, *(["-o", "nvm_path=" + nvm] if where == "file" else []))
        rc, out, err = stock_sql(db, "SELECT count(*), sum(a) FROM t;")
        check(rc == 0 and out.split() == ["%d|%d" % (n, s)],
              "nvm %s: the rows are back after a remount: %s %s" % (where, out.split(), err))
        check(m.unmount() == 0, "nvm %s: unmount exit 0 again" % where)
        rc, out, err = tool("fsck", image, *(["--nvm-path", nvm] if where == "file" else []))
        check(rc == 0 and "clean" in out, "nvm %s: pdl fsck clean: %s%s" % (where, out[-200:],
                                                                            err))


def main():
    global WORK
    WORK = tempfile.mkdtemp(prefix="pdl-fuse-test-")
    try:
        probe()
        test_command_line()
        test_stock_sqlite_then_vfs()
        test_vfs_then_stock_sqlite()
        test_vfs_picks_database()
        test_files()
        test_errno()
        test_ownership_and_crash()
        test_nvm()
    finally:
        for d in os.listdir(WORK):
            p = os.path.join(WORK, d)
            if os.path.ismount(p):
                subprocess.run([FUSERMOUNT, "-u", "-z", p], timeout=60)
        shutil.rmtree(WORK, ignore_errors=True)
    finish()


WORK = ""
if __name__ == "__main__":
    main()
