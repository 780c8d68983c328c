#!/usr/bin/python3
"""The layer check (tools/check_layers.py) passes a tree that follows the layer table and fails,
naming file:line and the edge, on an include reaching up (a back edge), sideways (one engine
into the other), into an engine from above the image layer, or into no layer at all.

Usage: test_check_layers.py CHECK_LAYERS_PY
"""

import os
import subprocess
import sys
import tempfile

SCRIPT = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def make_tree(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)


def run(root, *extra):
    r = subprocess.run([sys.executable, SCRIPT, "--root", root, *extra],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return r.returncode, r.stderr.decode()


CLEAN = {
    "flash/common/status.h": "#pragma once\n",
    "flash/device/nand.h": '#include "flash/common/status.h"\n',
    "flash/store/page_store.h": '#include "flash/device/nand.h"\n',
    "flash/codec/differential.h": '#include "flash/common/status.h"\n',
    "flash/pdl/record.h":
        '#include "flash/store/page_store.h"\n#include "flash/codec/differential.h"\n',
    "flash/ipl/ipl_sector.h": '#include "flash/store/page_store.h"\n',
    "flash/volume/volume.h": '#include "flash/store/page_store.h"\n',
    "flash/image/open_store.h":
        '#include "flash/pdl/record.h"\n#include "flash/ipl/ipl_sector.h"\n',
    "tools/page_view.h": '#include "flash/store/page_store.h"\n',
    "tools/cmd_dump.cc":
        '#include <map>\n#include "flash/image/open_store.h"\n#include "page_view.h"\n',
    "tpcc/fleet.cc": '#include "vfs/pdl_vfs.h"\n',
    "vfs/pdl_vfs.h": '#include "flash/image/open_store.h"\n',
}

BAD = [
    # (file, its text, the line the check must print)
    ("flash/store/store_params.cc",
     '#include "flash/store/page_store.h"\n#include "flash/pdl/record.h"\n',
     'flash/store/store_params.cc:2: flash/store may not include flash/pdl ("flash/pdl/record.h")'),
    ("flash/volume/volume.cc", '#include "flash/image/open_store.h"\n',
     'flash/volume/volume.cc:1: flash/volume may not include flash/image '
     '("flash/image/open_store.h")'),
    ("flash/pdl/pdl_store.cc", '\n\n#include "flash/ipl/ipl_sector.h"\n',
     'flash/pdl/pdl_store.cc:3: flash/pdl may not include flash/ipl ("flash/ipl/ipl_sector.h")'),
    ("tools/cmd_fsck.cc", '#  include "flash/ipl/ipl_sector.h"\n',
     'tools/cmd_fsck.cc:1: tools may not include flash/ipl ("flash/ipl/ipl_sector.h")'),
    ("flash/common/crc32c.cc", '#include "flash/device/nand.h"\n',
     'flash/common/crc32c.cc:1: flash/common may not include flash/device ("flash/device/nand.h")'),
    ("fuse/fs.cc", '#include "tools/page_view.h"\n',
     'fuse/fs.cc:1: fuse may not include tools ("tools/page_view.h")'),
    ("bench/run.cc", '#include "somewhere/else.h"\n',
     'bench/run.cc:1: bench includes "somewhere/else.h", which is in no layer'),
]

with tempfile.TemporaryDirectory() as root:
    make_tree(root, CLEAN)
    rc, err = run(root)
    check(rc == 0 and err == "", "a tree following the table passes (rc %d: %s)" % (rc, err))
    stamp, dep = os.path.join(root, "layers.ok"), os.path.join(root, "layers.d")
    rc, err = run(root, "--stamp", stamp, "--depfile", dep)
    check(rc == 0 and os.path.exists(stamp), "a clean tree writes the stamp")
    with open(dep, encoding="utf-8") as f:
        deps = f.read()
    check(deps.startswith(stamp + ":") and os.path.join(root, "tools/cmd_dump.cc") in deps,
          "the depfile names the stamp and every scanned file")

for path, text, line in BAD:
    with tempfile.TemporaryDirectory() as root:
        make_tree(root, CLEAN)
        make_tree(root, {path: text})
        stamp, dep = os.path.join(root, "layers.ok"), os.path.join(root, "layers.d")
        rc, err = run(root, "--stamp", stamp, "--depfile", dep)
        check(rc == 1, "%s: exit 1, got %d" % (path, rc))
        check(line in err.splitlines(), "%s: says %r, got %r" % (path, line, err))
        check("1 include breaks" in err, "%s: counts the offending include: %r" % (path, err))
        check(not os.path.exists(stamp), "%s: no stamp, so the build fails" % path)

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("ok")
