#!/usr/bin/python3
# test_bad_input.py — every bad input a careless or hostile user may give, as one table:
# case -> expected status, a fragment of the message, and the files that must be left
# byte-identical (or never created).
#
#   test_bad_input.py PDL_TOOL PDL_MODULE SQLITE3 PDL_FUSE PDL_TPCC
#
# Programs driven: the pdl tool (exit codes of tools/cli.h), the SQLite VFS (through Debian's
# /usr/bin/python3, whose sqlite3 module loads pdl.so: the status is SQLite's error name, the
# reason is on stderr), pdl-fuse's and pdl-tpcc's command lines (refused before any mount or
# load). Each row runs on fresh copies of a small image holding one database, so rows are
# independent.
#
# Adding a row: append a Case to CASES. `prog` is "pdl", "vfs", "fuse" or "tpcc"; `args` are
# the program's arguments ("vfs": the URI), with {img} (a fresh copy of the base image, made
# by `prepare` if given), {new} (a path that does not exist) and {tmp} substituted; `status`
# is the exit code, or for "vfs" SQLite's error name ("SQLITE_CANTOPEN"); `fragment` must
# appear in stderr; `unchanged` lists the placeholders whose file must be byte-identical
# afterwards (a path that did not exist must still not exist).
#
# Sanitizer builds: the uninstrumented python3 loading the instrumented pdl.so gets the
# sanitizer runtimes preloaded (sanitizer_env.py). Exit 77 (skipped) without a sqlite3 shell.
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, failures, finish, skip  # noqa: F401
from sanitizer_env import sqlite_env

TOOL, MODULE, SQLITE, FUSE, TPCC = (sys.argv[1:] + [""] * 5)[:5]
PYTHON = "/usr/bin/python3"
if not SQLITE or not os.path.exists(SQLITE):
    print("no sqlite3 shell: skipped")
    sys.exit(77)



# ---- image surgery (docs/format.md) ----

def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_T = _crc32c_table()


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = _T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def geometry(path):
    """(page_data, page_spare, pages_per_block, pages_offset) from the image file header."""
    with open(path, "rb") as f:
        h = f.read(64)
    page_data, page_spare, ppb, _blocks = struct.unpack_from("<IIII", h, 16)
    (pages_off,) = struct.unpack_from("<Q", h, 56)
    return page_data, page_spare, ppb, pages_off


def patch_superblock(path, offset, fmt, value):
    """Set a field of both superblock copies (docs/format.md §2; the image file stores every
    flash byte inverted, so that a sparse hole reads as erased) and fix every checksum over
    it: the superblock's own CRC (bytes 76..79), the spare header's data CRC (spare bytes
    16..19) and its header CRC (spare bytes 28..31 over [1, 24)), so only the field is wrong."""
    pd, ps, ppb, off = geometry(path)
    with open(path, "r+b") as f:
        for block in (0, 1):
            at = off + block * ppb * (pd + ps)
            f.seek(at)
            page = bytearray(b ^ 0xFF for b in f.read(pd + ps))  # stored inverted
            data, spare = page[:pd], page[pd:]
            # The spare layout this surgery knows: refuse to pass a row on a layout it does not.
            assert struct.unpack_from("<I", spare, 16)[0] == crc32c(data), "spare layout changed"
            assert struct.unpack_from("<I", spare, 28)[0] == crc32c(spare[1:24]), \
                "spare layout changed"
            struct.pack_into(fmt, data, offset, value)
            struct.pack_into("<I", data, 76, crc32c(data[:76]))
            struct.pack_into("<I", spare, 16, crc32c(data))
            struct.pack_into("<I", spare, 28, crc32c(spare[1:24]))
            f.seek(at)
            f.write(bytes(b ^ 0xFF for b in data + spare))


def lpn0_page(path):
    """The flash page holding the volume header (lpn 0), from `pdl dump --lpn 0`."""
    out = subprocess.run([TOOL, "dump", path, "--lpn", "0"], stdout=subprocess.PIPE,
                         timeout=60).stdout.decode()
    return int(re.search(r"base page +ppa (\d+)", out).group(1))


def flip_data_byte(path, ppa, byte):
    pd, ps, _ppb, off = geometry(path)
    with open(path, "r+b") as f:
        f.seek(off + ppa * (pd + ps) + byte)
        b = f.read(1)
        f.seek(off + ppa * (pd + ps) + byte)
        f.write(bytes([b[0] ^ 0x5A]))


def truncate_half(path):
    os.truncate(path, os.path.getsize(path) // 2)


def foreign(path):
    with open(path, "wb") as f:
        f.write(b"my thesis, chapter 1\n" * 500)


# ---- the table ----

@dataclass
class Case:
    name: str
    prog: str                 # "pdl", "vfs", "fuse", "tpcc"
    args: list                # arguments (for "vfs": [URI]); {img} {new} {tmp} substituted
    status: object            # exit code, or SQLite's error name for "vfs"
    fragment: str             # must appear in stderr
    prepare: Optional[Callable[[str], None]] = None   # applied to {img} before the run
    unchanged: list = field(default_factory=lambda: ["img", "new"])


GC_RESERVE_AT, METHOD_AT = 24, 12

CASES = [
    # pdl format never destroys what an image holds without --force.
    Case("format over an image holding files", "pdl", ["format", "{img}", "--size", "8M"], 3,
         "holding 1 file (main.db"),
    Case("format over a damaged pdl image", "pdl", ["format", "{img}"], 3,
         "cannot be read", prepare=lambda p: flip_data_byte(p, lpn0_page(p), 100)),
    Case("format over a foreign file", "pdl", ["format", "{img}"], 3, "not a pdl image",
         prepare=foreign),
    Case("format of a directory", "pdl", ["format", "{tmp}"], 3, "not a regular file"),
    # Sizes: the maximum and the real minimum are said.
    Case("format --size 1T", "pdl", ["format", "{new}", "--size", "1T"], 2,
         "maximum chip size, 256G"),
    Case("format --size 64K (below 8 erase blocks)", "pdl", ["format", "{new}", "--size", "64K"],
         2, "at least 8 erase blocks: size 1M or more"),
    Case("format --size lots", "pdl", ["format", "{new}", "--size", "lots"], 2, "not a size"),
    Case("format --page 1000", "pdl", ["format", "{new}", "--page", "1000"], 2, "power of two"),
    Case("format --size given twice", "pdl", ["format", "{new}", "--size", "8M", "--size", "16M"],
         2, "given twice"),
    # A file that is not there is an image error (exit 3), not a usage error.
    Case("cat of a file not in the image", "pdl", ["cat", "{img}", "missing"], 3,
         "no file 'missing'"),
    Case("dump --file of a file not in the image", "pdl", ["dump", "{img}", "--file", "missing"],
         3, "no file 'missing'"),
    # The superblock: every field checked against the geometry, the bad one named.
    Case("superblock gc_reserve_blocks = 0xFFFFFFFF", "pdl", ["info", "{img}"], 3,
         "superblock field gc_reserve_blocks = 4294967295 is invalid",
         prepare=lambda p: patch_superblock(p, GC_RESERVE_AT, "<I", 0xFFFFFFFF)),
    Case("superblock gc_reserve_blocks = 0xFFFFFFFF (VFS)", "vfs", ["file:{img}?vfs=pdl"],
         "SQLITE_CANTOPEN", "gc_reserve_blocks = 4294967295",
         prepare=lambda p: patch_superblock(p, GC_RESERVE_AT, "<I", 0xFFFFFFFF)),
    Case("superblock method = 9", "pdl", ["info", "{img}"], 3,
         "superblock field method = 9 is invalid",
         prepare=lambda p: patch_superblock(p, METHOD_AT, "<B", 9)),
    Case("superblock logical_pages = 0xFFFFFFFF", "pdl", ["info", "{img}"], 3,
         "superblock field logical_pages = 4294967295 is invalid",
         prepare=lambda p: patch_superblock(p, 20, "<I", 0xFFFFFFFF)),
    # The volume header: said to be it, and that no reader can locate files without it.
    Case("volume header fails its CRC (pdl cat)", "pdl", ["cat", "{img}", "main.db"], 3,
         "volume header (lpn 0",
         prepare=lambda p: flip_data_byte(p, lpn0_page(p), 100)),
    Case("volume header fails its CRC (VFS)", "vfs", ["file:{img}?vfs=pdl"], "SQLITE_CANTOPEN",
         "volume header (lpn 0", prepare=lambda p: flip_data_byte(p, lpn0_page(p), 100)),
    # Already refused well: truncated images, foreign files, absurd geometry, bad URI values.
    Case("truncated image (pdl info)", "pdl", ["info", "{img}"], 3, "", prepare=truncate_half),
    Case("truncated image (VFS)", "vfs", ["file:{img}?vfs=pdl"], "SQLITE_CANTOPEN", "",
         prepare=truncate_half),
    Case("foreign file (pdl fsck)", "pdl", ["fsck", "{img}"], 3, "not a pdl image",
         prepare=foreign),
    Case("foreign file (VFS)", "vfs", ["file:{img}?vfs=pdl"], "SQLITE_CANTOPEN",
         "not a pdl image", prepare=foreign),
    Case("URI size=64M&size=32M", "vfs", ["file:{new}?vfs=pdl&size=64M&size=32M"],
         "SQLITE_CANTOPEN", "URI parameter 'size' given twice"),
    Case("URI size=1T", "vfs", ["file:{new}?vfs=pdl&size=1T"], "SQLITE_CANTOPEN",
         "maximum chip size, 256G"),
    Case("URI size=64K", "vfs", ["file:{new}?vfs=pdl&size=64K"], "SQLITE_CANTOPEN",
         "size 1M or more"),
    Case("URI size=lots", "vfs", ["file:{new}?vfs=pdl&size=lots"], "SQLITE_CANTOPEN",
         "not a size"),
    Case("URI page=1000", "vfs", ["file:{new}?vfs=pdl&page=1000"], "SQLITE_CANTOPEN",
         "power of two"),
    Case("URI pages_per_block=100000", "vfs", ["file:{new}?vfs=pdl&pages_per_block=100000"],
         "SQLITE_CANTOPEN", "must be 2 .. 1024"),
    Case("URI unknown parameter", "vfs", ["file:{new}?vfs=pdl&sise=64M"], "SQLITE_CANTOPEN",
         "unknown URI parameter 'sise'"),
    Case("URI contradicting the image", "vfs", ["file:{img}?vfs=pdl&method=opu"],
         "SQLITE_CANTOPEN", "contradicts the existing image"),
    # pdl-fuse's -o parameters are the VFS's keys: the same refusals, before any mount.
    # (The mount point does not exist: a pdl-fuse that accepted the options still mounts nothing.)
    Case("pdl-fuse -o size=64M,size=32M", "fuse",
         ["{new}", "{tmp}/no-mnt", "-o", "size=64M,size=32M"], 2, "-o size= given twice"),
    Case("pdl-fuse -o size=1T", "fuse", ["{new}", "{tmp}/no-mnt", "-o", "size=1T"], 2,
         "maximum chip size, 256G"),
    Case("pdl-fuse --mtd given twice", "fuse",
         ["--mtd", "/dev/mtd0", "--mtd", "/dev/mtd1", "{tmp}/no-mnt"], 2, "--mtd given twice"),
    # pdl-tpcc checks its chip size and output files before the load.
    Case("pdl-tpcc --chip-size 1K", "tpcc", ["--quick", "--chip-size", "1K"], 2,
         "--chip-size 1K"),
    Case("pdl-tpcc --chip-size 64K", "tpcc", ["--quick", "--chip-size", "64K"], 2,
         "size 1M or more"),
    Case("pdl-tpcc --json /nonexistent/x", "tpcc", ["--quick", "--json", "/nonexistent/x"], 2,
         "--json /nonexistent/x: cannot create"),
    Case("pdl-tpcc --csv /nonexistent/x", "tpcc", ["--quick", "--csv", "/nonexistent/x"], 2,
         "--csv /nonexistent/x: cannot create"),
    Case("pdl-tpcc --chip-size given twice", "tpcc",
         ["--quick", "--chip-size", "1G", "--chip-size", "2G"], 2, "--chip-size given twice"),
]

VFS_OPEN = r"""
import sqlite3, sys
boot = sqlite3.connect(":memory:")
boot.enable_load_extension(True)
boot.load_extension(sys.argv[1])
try:
    db = sqlite3.connect(sys.argv[2], uri=True)
    db.execute("select count(*) from sqlite_master").fetchall()
    db.execute("create table if not exists probe(x)")
    db.commit()
    print("SQLITE_OK")
except sqlite3.Error as e:
    print(getattr(e, "sqlite_errorname", type(e).__name__))
"""


def run_case(c, base, tmp):
    work = tempfile.mkdtemp(dir=tmp)
    paths = {"img": os.path.join(work, "main.db"), "new": os.path.join(work, "new.db"),
             "tmp": work}
    shutil.copyfile(base, paths["img"])
    if c.prepare:
        c.prepare(paths["img"])
    before = {}
    for k in c.unchanged:
        p = paths[k]
        before[k] = open(p, "rb").read() if os.path.exists(p) else None
    args = [a.format(**paths) for a in c.args]
    env = None
    if c.prog == "pdl":
        cmd = [TOOL, *args]
    elif c.prog == "vfs":
        cmd, env = [PYTHON, "-c", VFS_OPEN, MODULE, args[0]], sqlite_env()
    elif c.prog == "fuse":
        cmd = [FUSE, *args]
    else:
        cmd = [TPCC, "--work-dir", work, *args]
    try:  # a refusal is immediate: what runs on (a load, a benchmark) has failed the case
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                           timeout=60)
    except subprocess.TimeoutExpired as e:
        r = subprocess.CompletedProcess(cmd, "timed out", e.stdout or b"", e.stderr or b"")
    out, err = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    status = out.strip().splitlines()[-1] if c.prog == "vfs" and out.strip() else r.returncode
    problems = []
    if status != c.status:
        problems.append("status %r, expected %r" % (status, c.status))
    if c.fragment not in err:
        problems.append("message lacks %r" % c.fragment)
    if "Sanitizer" in err or "runtime error" in err or (isinstance(r.returncode, int) and
                                                        r.returncode < 0):
        problems.append("crash or sanitizer report")
    if c.prog == "tpcc" and "loaded" in out:
        problems.append("refused only after the load")
    for k, b in before.items():
        p = paths[k]
        now = open(p, "rb").read() if os.path.exists(p) else None
        if now != b:
            problems.append("%s %s" % (k, "created" if b is None else "changed"))
    check(not problems, "%-48s -> %r %s%s" % (c.name, status, err.strip().splitlines()[0][:140]
                                             if err.strip() else "(no message)",
                                             "" if not problems else "  [" + "; ".join(problems) +
                                             "]"))
    shutil.rmtree(work, ignore_errors=True)


tmp = tempfile.mkdtemp(prefix="pdl-bad-input-")
try:
    base = os.path.join(tmp, "base.db")
    r = subprocess.run([SQLITE, "-batch", "-bail", "-cmd", ".load " + MODULE,
                        "-cmd", ".open file:%s?vfs=pdl&size=4M&db=main.db" % base],
                       input=b"create table t(x); insert into t values('hello');",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=sqlite_env(),
                       timeout=120)
    if r.returncode != 0:
        raise SystemExit("cannot make the base image: " + r.stderr.decode())
    for c in CASES:
        if (c.prog == "fuse" and not FUSE) or (c.prog == "tpcc" and not TPCC):
            print("skip  " + c.name)
            continue
        run_case(c, base, tmp)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

if failures:
    print("\n%d of %d case(s) failed" % (len(failures), len(CASES)))
    sys.exit(1)
print("\nall %d cases passed" % len(CASES))
