#!/usr/bin/python3
# test_host_full.py — an image on a host file system that fills up (suite "integration").
#
#   test_host_full.py SQLITE3 PDL_MODULE PDL_TOOL PDL_FUSE
#
# A tmpfs of 1 MiB is mounted, and a 16 MiB image (sparse) created on it:
#   - the stock sqlite3 with the extension inserts until the host is full: SQLITE_FULL
#     ("database or disk is full"), with a message on stderr naming the image file; in the
#     same process SELECT still returns every committed row;
#   - no block is marked bad or retired (pdl info --json), pdl fsck is clean;
#   - once room is freed on the host, inserts succeed again and integrity_check is ok;
#   - pdl-fuse with its image on the full tmpfs: a write fails with ENOSPC (not EIO), and its
#     log says nothing of a bad block at unmount; the image then checks clean.
# Exit 77 (skipped, with the reason) when not root, when the tmpfs cannot be mounted, or when
# there is no sqlite3 shell (the FUSE part alone is skipped without /dev/fuse).
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, failures, fill_errno, finish, skip  # noqa: F401
from sanitizer_env import sqlite_env

SQLITE, MODULE, TOOL, FUSE = (sys.argv[1:5] + [""] * 4)[:4]
FUSERMOUNT = shutil.which("fusermount3")



def sql(image, script, uri_extra=""):
    """The stock sqlite3 on stdin (no -bail: later statements run after a failed one)."""
    cmd = [SQLITE, "-batch", "-cmd", ".load " + MODULE,
           "-cmd", ".open file:%s?vfs=pdl%s" % (image, uri_extra), ":memory:"]
    env = sqlite_env()
    env.pop("PDL_VFS_QUIET", None)
    return subprocess.run(cmd, input=script, capture_output=True, text=True, env=env,
                          timeout=300)


def store_counts(image):
    r = subprocess.run([TOOL, "info", "--json", image], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    s = json.loads(r.stdout)["store"]
    return s.get("bad_blocks"), s.get("blocks_retired")


def fsck_clean(image, what):
    r = subprocess.run([TOOL, "fsck", image], capture_output=True, text=True)
    check(r.returncode == 0, "%s: pdl fsck clean (exit %d: %s%s)" %
          (what, r.returncode, r.stdout.strip()[-200:], r.stderr.strip()[-200:]))


def sqlite_part(d):
    image = os.path.join(d, "h.db")
    filler = os.path.join(d, "filler")
    with open(filler, "wb") as f:  # freed later, to make room again
        f.write(b"\1" * 256 * 1024)
    r = sql(image, "create table t(x); insert into t values('hello');", "&size=16M")
    check(r.returncode == 0, "create on the tmpfs (%s)" % r.stderr.strip())
    r = sql(image, "with recursive c(i) as (select 1 union all select i+1 from c "
                   "where i < 3000) insert into t select randomblob(2000) from c;\n"
                   "select 'count', count(*) from t;\n"
                   "select 'first', x from t where rowid = 1;\n")
    check("database or disk is full" in r.stderr,
          "host full: SQLITE_FULL (stderr: %s)" % r.stderr.strip()[:300])
    check(("holding %s is full" % image) in r.stderr,
          "host full: the message names the image file")
    check("count|1" in r.stdout and "first|hello" in r.stdout,
          "host full: SELECT in the same process returns the committed row (%s)"
          % r.stdout.strip())
    check(store_counts(image) == (0, 0), "host full: no block bad or retired (%s)"
          % (store_counts(image),))
    fsck_clean(image, "host full")
    os.unlink(filler)
    r = sql(image, "insert into t values('again'); select 'count', count(*) from t;\n"
                   "pragma integrity_check;\n")
    check(r.returncode == 0 and "count|2" in r.stdout and "ok" in r.stdout,
          "room again: insert works, integrity ok (%s %s)" % (r.stdout.strip(), r.stderr.strip()))
    check(store_counts(image) == (0, 0), "room again: no block bad or retired")


def fuse_part(d):
    if not FUSE or not FUSERMOUNT or not os.path.exists("/dev/fuse"):
        print("skipped (FUSE part): no pdl-fuse, fusermount3 or /dev/fuse")
        return
    image = os.path.join(d, "f.img")
    mnt = tempfile.mkdtemp(prefix="pdl-hostfull-mnt-")
    log = tempfile.TemporaryFile()  # pdl-fuse's output (not on d: the test fills d up)
    proc = subprocess.Popen([FUSE, image, mnt, "-f", "-o", "size=16M"], stdout=log, stderr=log)
    deadline = time.monotonic() + 30
    while not os.path.ismount(mnt):
        if proc.poll() is not None or time.monotonic() > deadline:
            log.seek(0)
            check(False, "pdl-fuse mounts on the tmpfs: " + log.read().decode(errors="replace"))
            return
        time.sleep(0.02)
    got = fill_errno(os.path.join(mnt, "fill.bin"))
    check(got == errno.ENOSPC, "FUSE, host full: ENOSPC (got %s)" % errno.errorcode.get(got, got))
    subprocess.run([FUSERMOUNT, "-u", mnt], timeout=60)
    proc.wait(timeout=120)
    log.seek(0)
    text = log.read().decode(errors="replace")
    check("bad block" not in text, "FUSE: no bad block reported at unmount (%s)" % text.strip())
    os.rmdir(mnt)
    check(store_counts(image) == (0, 0), "FUSE: no block bad or retired")
    fsck_clean(image, "FUSE")


def main():
    if os.geteuid() != 0:
        skip("mounting a tmpfs needs root")
    if not SQLITE:
        skip("no sqlite3 shell")
    d = tempfile.mkdtemp(prefix="pdl-hostfull-")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", d],
                      capture_output=True).returncode != 0:
        os.rmdir(d)
        skip("cannot mount a tmpfs")
    try:
        sqlite_part(d)
    finally:
        subprocess.run(["umount", d])
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", d],
                      capture_output=True).returncode == 0:
        try:
            fuse_part(d)
        finally:
            subprocess.run(["umount", d])
    os.rmdir(d)
    finish()


main()
