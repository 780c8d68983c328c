#!/usr/bin/python3
"""check_layers.py — every `#include "..."` of the source tree follows the layer table.

The layers (docs/design.md §1), each a folder, each including only itself and the layers
below it:

    flash/common   status vocabulary, CRC-32C, little-endian, JSON, C-edge guards
    flash/device   NAND chips: the Nand interface, the emulator, Linux MTD
    flash/store    the PageStore interface, the on-flash metadata every engine shares
    flash/codec    the differential codec both engines use
    flash/pdl      PDL and OPU      flash/ipl   IPL and IPU   (the engines)
    flash/ftl      commodity FTL devices (BAST, FAST) and StableBuffer over the PageStore
                   interface (the page-mapping FTL is flash/pdl's OPU path)
    flash/volume   files inside a store (the Volume), over the PageStore interface
    flash/image    the store factory, image assembly, reports: the only layer that names
                   an engine; above it nothing includes flash/pdl, flash/ipl or flash/ftl
    sql            a small RAII wrapper of the sqlite3 C API (programs and tests; not the VFS)
    cli            the programs' common command line: help layout, usage errors, exit codes
    vfs, fuse, tools, tpcc, bench   the programs, over the image layer (tpcc and bench
                   also use the VFS and sql; all but vfs use cli; bench also runs tpcc's
                   workload)

Run by every build (a default target of the top-level meson.build, writing a stamp and a depfile so
that it reruns when a scanned file or folder changes) and by `meson test` (suite layers).
A back or sideways edge fails with one line per offending include, as the compiler would:
    flash/store/x.cc:6: flash/store may not include flash/pdl ("flash/pdl/record.h")
Exit status: 0 clean, 1 an edge the table forbids (or an include of an unknown folder),
2 bad usage.

Usage: check_layers.py [--root DIR] [--stamp FILE --depfile FILE]
"""

import argparse
import os
import re
import sys

BELOW_IMAGE = ["flash/common", "flash/device", "flash/store", "flash/codec", "flash/volume",
               "flash/image"]

# What each layer may include besides itself.
ALLOWED = {
    "flash/common": [],
    "flash/device": ["flash/common"],
    "flash/store": ["flash/common", "flash/device"],
    "flash/codec": ["flash/common"],
    "flash/pdl": ["flash/common", "flash/device", "flash/store", "flash/codec"],
    "flash/ipl": ["flash/common", "flash/device", "flash/store", "flash/codec"],
    "flash/ftl": ["flash/common", "flash/device", "flash/store"],
    "flash/volume": ["flash/common", "flash/device", "flash/store"],
    "flash/image": ["flash/common", "flash/device", "flash/store", "flash/codec", "flash/pdl",
                    "flash/ipl", "flash/ftl", "flash/volume"],
    "sql": ["flash/common"],
    "cli": ["flash/common"],
    "vfs": BELOW_IMAGE,
    "fuse": BELOW_IMAGE + ["cli"],
    "tools": BELOW_IMAGE + ["cli"],
    "tpcc": BELOW_IMAGE + ["vfs", "sql", "cli"],
    "bench": BELOW_IMAGE + ["vfs", "sql", "cli", "tpcc"],
}

SOURCE_EXTENSIONS = (".h", ".cc", ".cpp", ".hpp")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    """The layer (a key of ALLOWED) a path relative to the root belongs to, or None."""
    parts = path.split("/")
    if parts[0] == "flash" and len(parts) > 2:
        key = "flash/" + parts[1]
    else:
        key = parts[0]
    return key if key in ALLOWED else None


def scanned_files(root):
    """(files, folders) of the layers under root, as paths relative to it, sorted."""
    files, folders = [], []
    for top in sorted({k.split("/")[0] for k in ALLOWED}):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            folders.append(dirpath)
            for name in sorted(filenames):
                if name.endswith(SOURCE_EXTENSIONS):
                    files.append(os.path.relpath(os.path.join(dirpath, name), root))
    return files, folders


def check(root):
    """The violations: (file, line number, message) in file order."""
    problems = []
    files, _ = scanned_files(root)
    for rel in files:
        src = layer_of(rel)
        if src is None:
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for number, text in enumerate(f, 1):
                m = INCLUDE.match(text)
                if not m:
                    continue
                target = m.group(1)
                if "/" not in target:  # a header next to the file
                    target = os.path.join(os.path.dirname(rel), target)
                dst = layer_of(os.path.normpath(target))
                if dst is None:
                    problems.append((rel, number, '%s includes "%s", which is in no layer'
                                     % (src, m.group(1))))
                elif dst != src and dst not in ALLOWED[src]:
                    problems.append((rel, number, '%s may not include %s ("%s")'
                                     % (src, dst, m.group(1))))
    return problems


def write_depfile(path, stamp, root):
    files, folders = scanned_files(root)
    deps = [os.path.join(root, f) for f in files] + folders
    with open(path, "w", encoding="utf-8") as f:
        f.write(stamp.replace(" ", "\\ ") + ": " +
                " \\\n  ".join(d.replace(" ", "\\ ") for d in deps) + "\n")


def main(argv):
    ap = argparse.ArgumentParser(description="check the layer table of #include edges")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--stamp", help="file written when the tree is clean (a build target)")
    ap.add_argument("--depfile", help="ninja depfile: every file and folder scanned")
    args = ap.parse_args(argv)
    if bool(args.stamp) != bool(args.depfile):
        ap.error("--stamp and --depfile go together")
    root = os.path.abspath(args.root)
    problems = check(root)
    for rel, number, msg in problems:
        print("%s:%d: %s" % (rel, number, msg), file=sys.stderr)
    if problems:
        n = len(problems)
        print("check_layers: %d %s the layer table in tools/check_layers.py "
              "(docs/design.md §1)" % (n, "include breaks" if n == 1 else "includes break"),
              file=sys.stderr)
        return 1
    if args.stamp:
        write_depfile(args.depfile, args.stamp, root)
        with open(args.stamp, "w", encoding="utf-8") as f:
            f.write("layers ok\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
