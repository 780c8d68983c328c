#!/usr/bin/python3
"""vfs_out_of_memory.py — the pdl VFS out of memory: an error for SQLite, never an abort.

    vfs_out_of_memory.py PDL_SO SQLITE3

The stock sqlite3 shell loads pdl.so under an address-space limit (prlimit --as) too small for
the RAM a big chip needs at open, which makes the allocation fail deterministically:
1. creating a 256 GiB image, the largest chip (its per-block tables: the mapping itself is
   demand-loaded since superblock format 8 and the emulator keeps state only for blocks it
   touched, so a 64 GiB chip now opens in the limit): the open fails with SQLite's "out of
   memory" and the VFS names the method on stderr; sqlite3 exits normally (not by a signal),
   and no file is left behind;
2. an existing image the limit cannot open: the same error, and the image is left byte for
   byte as it was (a failed open removes only an image it created itself).
Plain builds only (a sanitizer's shadow memory needs more address space than the limit).
"""
import hashlib
import os
import subprocess
import sys
import tempfile

LIMIT = str(100_000_000)  # bytes of address space: a 16 MiB chip opens, a 256 GiB one cannot


def shell(sqlite3, so, uri, limit=True):
    cmd = [sqlite3, "-cmd", ".load " + so, "-cmd", ".open " + uri, ":memory:", "select 1"]
    if limit:
        cmd = ["prlimit", "--as=" + LIMIT] + cmd
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=120)


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read(1 << 20))  # header, superblocks and the volume's first pages
    return h.hexdigest(), os.stat(path).st_size


def main():
    so, sqlite3 = sys.argv[1], sys.argv[2]
    so = os.path.splitext(so)[0]  # .load wants the path without ".so"
    errors = []
    with tempfile.TemporaryDirectory() as d:
        img = os.path.join(d, "big.db")
        # 1. A create that runs out of memory leaves nothing behind.
        p = shell(sqlite3, so, f"file:{img}?vfs=pdl&size=256G")
        if p.returncode < 0:
            errors.append(f"create: sqlite3 killed by signal {-p.returncode}: {p.stderr[-500:]}")
        if "out of memory" not in p.stderr or "pdl: xOpen: out of memory" not in p.stderr:
            errors.append(f"create: stderr does not say out of memory: {p.stderr[-500:]}")
        if os.path.exists(img):
            errors.append(f"create: {img} left behind ({os.stat(img).st_size} bytes)")
        if os.listdir(d):
            errors.append(f"create: files left behind: {os.listdir(d)}")
        # A small chip opens under the same limit (the limit is not simply too tight).
        small = os.path.join(d, "small.db")
        p = shell(sqlite3, so, f"file:{small}?vfs=pdl&size=16M")
        if p.returncode != 0 or p.stderr or not os.path.exists(small):
            errors.append(f"16M under the limit: exit {p.returncode}: {p.stderr[-500:]}")
        # 2. An existing image the limit cannot open is left as it was.
        p = shell(sqlite3, so, f"file:{img}?vfs=pdl&size=256G", limit=False)
        if p.returncode != 0 or not os.path.exists(img):
            errors.append(f"creating the 256G image without a limit: {p.stderr[-500:]}")
        else:
            before = digest(img)
            p = shell(sqlite3, so, f"file:{img}?vfs=pdl")
            if p.returncode < 0:
                errors.append(f"open: sqlite3 killed by signal {-p.returncode}: {p.stderr[-500:]}")
            if "out of memory" not in p.stderr:
                errors.append(f"open: stderr does not say out of memory: {p.stderr[-500:]}")
            if not os.path.exists(img):
                errors.append("open: the existing image was removed")
            elif digest(img) != before:
                errors.append("open: the existing image changed")
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print("ok: out of memory is an SQLite error; no file left; an existing image untouched")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
