#!/usr/bin/python3
"""mount_after_kill.py — the mount after a power cut, with a checkpoint area and without: what
docs/design.md §17 reports per method ("Measured at 256 MiB").

    /usr/bin/python3 bench/mount_after_kill.py PDL_TOOL PDL_MODULE [--method M] [--size S]
        [--rows N] [--statements K] [--format-arg ARG]... [--work-dir DIR] [--check]

For a checkpoint area on, then off: `pdl format IMG --size S --method M --checkpoint on|off`;
a process (Debian's python, its sqlite3 loading PDL_MODULE, the pdl VFS) creates a table and
inserts N rows in transactions of 1,000 and closes cleanly (the close writes a checkpoint);
a second process runs K statements — each an UPDATE of one row and an INSERT, committed — and
kills itself (SIGKILL: no close, no checkpoint: what the image file holds is what a power cut
of the emulated chip leaves); then `pdl info --json IMG` mounts it (with the area: the
checkpoint plus the blocks declared since, replayed; without: a scan of every page), opens the
Volume (from the checkpoint's tables, caught up with what the replay names, where the engine
lists it; else reading its directory and owner map) — and `pdl info --volume-pages` does the
same with the Volume reading its pages, for comparison — and
`pdl fsck IMG` checks it (with the area it also mounts from the checkpoint and compares that
mount's tables with a scan's). One table row per image: pages the mount read, its simulated
time (machine-independent: the emulator's Table 1 timings), summary pages and blocks replayed,
the whole open's pages and simulated time both ways, fsck's verdict. Images live in a
temporary directory (under --work-dir or TMPDIR), removed at
the end.

--check (the test suite's use): fails unless the image with the area mounted from the
checkpoint by replaying at least one block, the one without scanned, the replay read fewer
pages than the scan, the Volume's open read no more than reading its pages (and, for PDL, OPU,
IPL, IPU and StableBuffer, caught up from the checkpoint's tables), and fsck found both clean.
"""
import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile


def load_vfs(module):
    loader = sqlite3.connect(":memory:")
    loader.enable_load_extension(True)
    loader.load_extension(module)
    loader.close()  # (the VFS stays registered)


def child(args):
    """--child fill|kill: the SQLite side, in a process of its own."""
    load_vfs(args.module)
    c = sqlite3.connect("file:" + args.image + "?vfs=pdl", uri=True)
    if args.child == "fill":
        c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        for i in range(0, args.rows, 1000):
            n = min(1000, args.rows - i)
            c.executemany("INSERT INTO t(v) VALUES (hex(randomblob(60)))", [()] * n)
            c.commit()
        c.close()
        return 0
    for s in range(args.statements):
        c.execute("UPDATE t SET v = hex(randomblob(60)) WHERE id = ?",
                  (1 + (s * 7919) % max(1, args.rows),))
        c.execute("INSERT INTO t(v) VALUES (hex(randomblob(60)))")
        c.commit()
    os.kill(os.getpid(), signal.SIGKILL)
    return 1  # (not reached)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=3600, **kw)


def measure(args, tmp, checkpoint):
    img = os.path.join(tmp, "ck-%s.img" % checkpoint)
    r = run([args.tool, "format", img, "--size", args.size, "--method", args.method,
             "--checkpoint", checkpoint] + args.format_arg)
    if r.returncode != 0:
        sys.exit("pdl format failed: " + r.stdout + r.stderr)
    me = [sys.executable, os.path.abspath(__file__), args.tool, args.module, "--image", img,
          "--rows", str(args.rows), "--statements", str(args.statements)]
    r = run(me + ["--child", "fill"])
    if r.returncode != 0:
        sys.exit("filling the image failed: " + r.stdout + r.stderr)
    r = run(me + ["--child", "kill"])
    if r.returncode != -signal.SIGKILL:
        sys.exit("the updating process was not killed (exit %d): %s" %
                 (r.returncode, r.stdout + r.stderr))
    r = run([args.tool, "info", "--json", img])
    if r.returncode != 0:
        sys.exit("pdl info failed: " + r.stdout + r.stderr)
    info = json.loads(r.stdout)
    m = info["image"]["mount"]
    # The whole open (the store's mount and the Volume's open), and the same with the Volume
    # reading its directory and owner map instead of the checkpoint's tables.
    opened = info["checkpoint"]["open"]
    r = run([args.tool, "info", "--json", "--volume-pages", img])
    if r.returncode != 0:
        sys.exit("pdl info --volume-pages failed: " + r.stdout + r.stderr)
    reading = json.loads(r.stdout)["checkpoint"]["open"]
    f = run([args.tool, "fsck", img])
    os.unlink(img)
    return {"checkpoint": checkpoint, "mount": m, "open": opened, "reading": reading,
            "fsck": f.returncode == 0, "fsck_out": f.stdout + f.stderr}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tool")
    ap.add_argument("module")
    ap.add_argument("--method", default="ipl")
    ap.add_argument("--size", default="256M")
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--statements", type=int, default=3)
    ap.add_argument("--format-arg", action="append", default=[])
    ap.add_argument("--work-dir")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--child", choices=["fill", "kill"], help=argparse.SUPPRESS)
    ap.add_argument("--image", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    with tempfile.TemporaryDirectory(prefix="pdl-kill-", dir=args.work_dir) as tmp:
        rows = [measure(args, tmp, "on"), measure(args, tmp, "off")]
    print("%s, %s chip, %d rows, then %d UPDATE+INSERT statements and SIGKILL "
          "(simulated time: the emulator's Table 1 timings)" %
          (args.method + "".join(" " + a for a in args.format_arg), args.size, args.rows,
           args.statements))
    print("| checkpoint area | mount | pages read | simulated | summary pages | blocks replayed "
          "| whole open: pages, simulated (volume) | the volume reading its pages instead "
          "| fsck |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for x in rows:
        m, o, rd = x["mount"], x["open"], x["reading"]
        volume = ("caught up" if o["volume"] == "tables" and m["replayed_blocks"] else
                  "its tables" if o["volume"] == "tables" else "read its pages")
        print("| %s | %s | %d | %.1f ms | %d | %d | %d, %.1f ms (%s) | %d, %.1f ms | %s |" %
              (x["checkpoint"], "checkpoint + replay" if m["from_checkpoint"] else
               "scan (%s)" % m["scan_reason"], m["pages_scanned"] + m["checkpoint_pages"],
               m["sim_us"] / 1000.0, m["summary_pages"], m["replayed_blocks"],
               o["pages"], o["sim_us"] / 1000.0, volume, rd["pages"], rd["sim_us"] / 1000.0,
               "clean" if x["fsck"] else "PROBLEM"))
    if not args.check:
        return 0
    on, off = rows[0]["mount"], rows[1]["mount"]
    errors = []
    if not (on["from_checkpoint"] and on["replayed_blocks"] > 0):
        errors.append("the image with a checkpoint area did not replay (%s)" % on["scan_reason"])
    if off["from_checkpoint"]:
        errors.append("the image without a checkpoint area did not scan")
    if not on["pages_scanned"] + on["checkpoint_pages"] < off["pages_scanned"]:
        errors.append("the replay read no fewer pages than the scan")
    if (args.method in ("pdl", "opu", "ipl", "ipu", "stablebuffer") and
            rows[0]["open"]["volume"] != "tables"):
        errors.append("the volume did not catch up from the checkpoint's tables")
    if rows[0]["open"]["pages"] > rows[0]["reading"]["pages"]:
        errors.append("the volume's open from its tables read more than reading its pages")
    for x in rows:
        if not x["fsck"]:
            errors.append("fsck (checkpoint %s): %s" % (x["checkpoint"], x["fsck_out"]))
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
