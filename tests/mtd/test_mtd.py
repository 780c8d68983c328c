#!/usr/bin/env python3
# test_mtd.py — ./run test-mtd: pdl on raw NAND through Linux MTD, against the kernel's nandsim
# under QEMU, compared with the emulator.
#
# One VM boot (vm.py: Debian's generic kernel, nandsim with the paper's geometry, 2048+64-byte
# pages and 128 KiB blocks) runs, on /dev/mtd0:
#   1. the PageStore correctness suite (test_page_store_model under PDL_TEST_MTD): every method
#      against a reference map across GC and remounts, on 12 blocks of the device;
#   2. per method (pdl, opu, ipu, ipl) and journal mode (DELETE, WAL), for pdl and ipl once
#      more with reads as on kernels without MEMREAD (Linux 3.2-6.0: PDL_MTD_READS=pread), and
#      for every method once more as on kernels without MEMWRITE either (before 3.2: also
#      PDL_MTD_WRITES=pwrite; the page store suite runs that way too): `pdl format --mtd`,
#      a scripted SQLite workload through the stock sqlite3 and the pdl VFS (`mtd=` URI
#      parameter), then in new processes (a remount each): the table's checksum and
#      integrity_check, `pdl fsck --mtd`, `pdl info --mtd`;
#   3. pdl-fuse --mtd: the stock sqlite3 on the mount, then the VFS on the same device;
#   4. the edges: a blank device (refused by info, created in place by the VFS), a device
#      holding foreign data (left untouched), a non-MTD path, an MTD device that is not NAND
#      (mtdram), a device in use (exit 4 naming the holder).
# Then the same workloads run on the host on emulated chips of the same geometry (page, spare
# bytes = the device's free OOB bytes, pages per block, blocks), and the flash operation counts
# of each workload process (PRAGMA pdl_stats at its end) are compared: the engine must do
# exactly the same reads, programs and erases on the real MTD stack as on the emulator (nandsim
# injects no faults, so nothing may differ), and the table must hold the same rows. Pass/fail:
# the VM's checks, equal rows, equal counts; the report goes to docs/results/mtd.txt.
# Exit status: 0 pass, 1 a check failed, 2 usage or set-up error.
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

METHODS = ["pdl", "opu", "ipu", "ipl"]
JOURNALS = ["DELETE", "WAL"]
# Also run as on older kernels: "pread", before MEMREAD (Linux 6.1: pread + MEMREADOOB64 +
# ECCGETSTATS); "old", before MEMWRITE (3.2: pwrite + MEMWRITEOOB64) and the sysfs attributes
# (4.7: the free OOB bytes from ECCGETLAYOUT). KERNEL_ENV: the switches; KERNEL_IO: what the
# stats' "device" must then say.
PREAD_METHODS = ["pdl", "ipl"]
OLD_METHODS = METHODS
KERNEL_ENV = {"": "", "pread": "PDL_MTD_READS=pread",
              "old": "PDL_MTD_READS=pread PDL_MTD_WRITES=pwrite PDL_MTD_SYSFS=off"}
KERNEL_IO = {"": "(NAND simulator partition 0, SLC NAND, ECC 1 bit per 256 B): reads MEMREAD, "
                 "programs MEMWRITE",
             "pread": "reads pread + MEMREADOOB64, programs MEMWRITE",
             "old": "(SLC NAND): reads pread + MEMREADOOB64, programs pwrite + MEMWRITEOOB64"}


def all_runs():
    """(method, journal, kernel) of every workload run, kernel a KERNEL_ENV key."""
    runs = [(m, j, "") for m in METHODS for j in JOURNALS]
    runs += [(m, "DELETE", "pread") for m in PREAD_METHODS]
    runs += [(m, "DELETE", "old") for m in OLD_METHODS]
    return runs
SIZE = "32M"  # the part of the device each workload's store uses
HERE = os.path.dirname(os.path.abspath(__file__))


def workload_sql(journal):
    """A deterministic workload: a table with an index, 120 transactions of inserts, updates
    and deletes (about 2,300 rows of 200 bytes), then PRAGMA pdl_stats (this process's flash
    counters: the mount and the workload)."""
    out = [f"PRAGMA journal_mode={journal};",
           "CREATE TABLE item(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);",
           "CREATE INDEX item_k ON item(k);"]
    nid = 1
    for t in range(120):
        out.append("BEGIN;")
        for _ in range(20):
            out.append(f"INSERT INTO item VALUES({nid}, {nid * 7919 % 1009}, "
                       f"printf('%0200d', {nid}));")
            nid += 1
        for j in range(5):
            victim = (t * 37 + j * 101) % nid + 1
            out.append(f"UPDATE item SET k = k + 1, v = printf('%0200d', {victim + t}) "
                       f"WHERE id = {victim};")
        out.append(f"DELETE FROM item WHERE id = {(t * 53) % nid + 1};")
        out.append("COMMIT;")
    out.append("PRAGMA pdl_stats;")
    return "\n".join(out) + "\n"


CHECK_SQL = ("SELECT 'rows ' || count(*) || ' ' || total(k) || ' ' || total(length(v)) "
             "|| ' ' || total(id * k) FROM item;\nPRAGMA integrity_check;\n")


def vm_script():
    """The shell script run inside the VM (busybox sh). nandsim is split in two: mtd0 (the
    first 1024 blocks) for the suites, mtd1 (blank at boot) for creating a store in place."""
    lines = ["set -u", "fail=0",
             "say() { echo \"pdl-mtd: $*\"; }",
             "check() { if [ \"$1\" != 0 ]; then say \"FAIL $2 (exit $1)\"; fail=1; "
             "else say \"ok $2\"; fi; }",
             "SQL() { sqlite3 -bail -cmd '.load /lib/pdl' -cmd \".open file:shop.db?vfs=pdl&mtd=$1\"; }",
             "M0='/dev/mtd0&clock=logical'",
             # Edges first, while the chip is as nandsim made it (erased).
             "pdl info --mtd /dev/mtd0 > /tmp/o 2>&1; rc=$?; cat /tmp/o",
             "[ $rc = 3 ] && grep -q 'holds no pdl store' /tmp/o; check $? 'blank device: info refused'",
             "echo 'CREATE TABLE t(a); INSERT INTO t VALUES(42);' | SQL '/dev/mtd1&size=4M'",
             "check $? 'blank device: created through the VFS'",
             "echo 'SELECT a FROM t;' | SQL /dev/mtd1 > /tmp/o; grep -qx 42 /tmp/o; "
             "check $? 'blank device: reopened'",
             "pdl info --mtd /dev/mtd1 | grep -q '4 MiB'; check $? 'blank device: info shows 4 MiB'",
             "dd if=/dev/urandom of=/tmp/junk bs=2048 count=1 2>/dev/null",
             "dd if=/tmp/junk of=/dev/mtd0 bs=2048 seek=320 count=1 2>/dev/null; "
             "check $? 'foreign data written (block 5)'",
             # (the sqlite3 shell goes on in memory after a failed .open: the message counts)
             "echo 'SELECT 1;' | SQL /dev/mtd0 > /tmp/o 2>&1; cat /tmp/o",
             "grep -q 'not blank' /tmp/o; check $? 'foreign data: VFS refuses'",
             "pdl format --mtd /dev/mtd0 --size 4M > /tmp/o 2>&1; rc=$?; cat /tmp/o",
             "[ $rc != 0 ] && grep -q 'not a pdl store' /tmp/o; "
             "check $? 'foreign data: format refuses without --force'",
             "pdl info --mtd /dev/null > /tmp/o 2>&1; rc=$?; cat /tmp/o",
             "[ $rc = 3 ] && grep -q 'not an MTD' /tmp/o; check $? 'non-MTD path refused'",
             "cat /proc/mtd",
             "pdl format --mtd /dev/mtd2 > /tmp/o 2>&1; rc=$?; cat /tmp/o",
             "[ $rc != 0 ] && grep -q 'not NAND' /tmp/o; check $? 'RAM (not NAND) MTD refused'",
             # pdl-fuse on raw NAND: the stock sqlite3, without the extension, reads the
             # database created above and adds a row; after the unmount the VFS sees it.
             "mkdir -p /mnt && pdl-fuse --mtd /dev/mtd1 /mnt; check $? 'pdl-fuse --mtd mounted'",
             "sqlite3 /mnt/shop.db 'INSERT INTO t VALUES(43); SELECT sum(a) FROM t;' > /tmp/o; "
             "grep -qx 85 /tmp/o; check $? 'stock sqlite3 on the mount'",
             "umount /mnt; check $? 'unmounted'",
             "for i in $(seq 50); do pdl info --mtd /dev/mtd1 > /dev/null 2>&1 && break; "
             "sleep 0.2; done",
             "echo 'SELECT sum(a) FROM t;' | SQL /dev/mtd1 > /tmp/o; grep -qx 85 /tmp/o; "
             "check $? 'the VFS reads what the mount wrote'",
             "say 'page store suite (every method, 12 blocks of /dev/mtd0)'",
             "t0=$(date +%s)",
             "PDL_TEST_MTD=/dev/mtd0 PDL_TEST_SEED=7 test_page_store_model "
             "'every page store matches a reference map across GC and remounts' > /tmp/psm.log 2>&1",
             "rc=$?; tail -n 3 /tmp/psm.log; check $rc page_store_model",
             "say \"page store suite took $(( $(date +%s) - t0 )) s\"",
             "say 'page store suite as on kernels before MEMWRITE and MEMREAD'",
             "t0=$(date +%s)",
             f"{KERNEL_ENV['old']} PDL_TEST_MTD=/dev/mtd0 PDL_TEST_SEED=7 test_page_store_model "
             "'every page store matches a reference map across GC and remounts' > /tmp/psm.log 2>&1",
             "rc=$?; tail -n 3 /tmp/psm.log; check $rc 'page_store_model (old kernel)'",
             "say \"page store suite (old kernel) took $(( $(date +%s) - t0 )) s\""]
    for m, j, kernel in all_runs():
        tag = f"{kernel}:{m}/{j}" if kernel else f"{m}/{j}"
        env = KERNEL_ENV[kernel]
        lines += [f"export {env}"] if env else []
        lines += [
            f"pdl format --mtd /dev/mtd0 --size {SIZE} --method {m} --force > /dev/null",
            f"check $? 'format {tag}'",
            f"SQL \"$M0\" < /work/workload-{j}.sql > /tmp/w.out 2> /tmp/w.err",
            f"rc=$?; cat /tmp/w.err; check $rc 'workload {tag}'",
            f"say \"stats {tag} $(grep '^{{' /tmp/w.out | tail -n 1)\"",
            f"grep '^{{' /tmp/w.out | grep -qF '{KERNEL_IO[kernel]}'; "
            f"check $? 'device interface {tag}'",
            f"SQL \"$M0\" < /work/check.sql > /tmp/c.out 2>&1",
            f"rc=$?; check $rc 'reopen {tag}'",
            f"say \"rows {tag} $(grep '^rows ' /tmp/c.out | cut -c6-)\"",
            f"grep -qx ok /tmp/c.out; check $? 'integrity_check {tag}'",
            f"pdl fsck --mtd /dev/mtd0 > /tmp/f.out 2>&1",
            f"rc=$?; check $rc 'fsck {tag}' || cat /tmp/f.out",
        ]
        lines += [f"unset {' '.join(v.split('=')[0] for v in env.split())}"] if env else []
    # Without MEMWRITE a program of data and spare is two of the chip's: on a chip allowing 2
    # per page, PDL's obsolete mark (a third) is refused — the statement fails, what was
    # committed stays; with MEMWRITE the same runs.
    nop2 = "'/dev/mtd1&nop=2'"
    lines += [
        "say 'NOP 2 without MEMWRITE'",
        "pdl format --mtd /dev/mtd1 --size 4M --method pdl --nop 2 --force > /dev/null",
        f"echo 'CREATE TABLE t(a);' | (export {KERNEL_ENV['old']}; SQL {nop2})",
        "check $? 'nop 2: create'",
        f"echo 'INSERT INTO t VALUES(1);' | (export {KERNEL_ENV['old']}; SQL {nop2}) 2> /tmp/o",
        "rc=$?; cat /tmp/o",
        "[ $rc != 0 ] && grep -q 'disk I/O error' /tmp/o",
        "check $? 'nop 2: a third program refused'",
        f"echo 'SELECT count(*) FROM t; PRAGMA integrity_check;' | SQL {nop2} > /tmp/o",
        "[ \"$(cat /tmp/o)\" = \"$(printf '0\\nok')\" ]; check $? 'nop 2: committed table intact'",
        f"echo 'INSERT INTO t VALUES(1); INSERT INTO t VALUES(2);' | SQL {nop2}",
        "check $? 'nop 2: with MEMWRITE the same writes work'",
    ]
    lines += [
        "pdl info --mtd /dev/mtd0 | head -n 4; check $? 'info'",
        # In use: a process holds the device; the tool is refused with exit 4 naming it.
        "(echo 'SELECT count(*) FROM item;'; sleep 3) | SQL /dev/mtd0 > /dev/null 2>&1 &",
        "sleep 1",
        "pdl info --mtd /dev/mtd0 > /tmp/o 2>&1; rc=$?; cat /tmp/o",
        "[ $rc = 4 ] && grep -q 'in use by pid' /tmp/o; check $? 'device in use: exit 4'",
        "wait",
        "exit $fail",
    ]
    return "\n".join(lines) + "\n"


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, text=True, capture_output=True, **kw)


def emulate(build, work, spare, journal, method):
    """The workload on an emulated chip of the device's geometry: (stats, rows)."""
    img = os.path.join(work, f"emu-{method}-{journal}.img")
    if os.path.exists(img):
        os.unlink(img)
    pdl = os.path.join(build, "tools", "pdl")
    r = run([pdl, "format", img, "--method", method, "--size", SIZE, "--page", "2048",
             "--pages-per-block", "64", "--spare", str(spare)])
    if r.returncode != 0:
        raise RuntimeError(f"pdl format {img}: {r.stderr.strip()}")
    uri = f"file:{img}?vfs=pdl&clock=logical"
    base = ["sqlite3", "-bail", "-cmd", ".load " + os.path.join(build, "vfs", "pdl"),
            "-cmd", ".open " + uri]
    with open(os.path.join(work, f"workload-{journal}.sql")) as f:
        r = run(base, stdin=f)
    if r.returncode != 0:
        raise RuntimeError(f"workload {method}/{journal} on the emulator: {r.stderr.strip()}")
    stats = [l for l in r.stdout.splitlines() if l.startswith("{")][-1]
    with open(os.path.join(work, "check.sql")) as f:
        r = run(base, stdin=f)
    rows = next(l[5:] for l in r.stdout.splitlines() if l.startswith("rows "))
    return json.loads(stats)["flash"], rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default="build-mtd")
    ap.add_argument("--out", default="docs/results/mtd.txt")
    ap.add_argument("--timeout", type=int, default=1500)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    for j in JOURNALS:
        with open(os.path.join(work, f"workload-{j}.sql"), "w") as f:
            f.write(workload_sql(j))
    with open(os.path.join(work, "check.sql"), "w") as f:
        f.write(CHECK_SQL)
    script = os.path.join(work, "in_vm.sh")
    with open(script, "w") as f:
        f.write(vm_script())
    bins = [os.path.join(build, "tests", "test_page_store_model"),
            os.path.join(build, "tools", "pdl"), os.path.join(build, "fuse", "pdl-fuse"),
            shutil.which("sqlite3")]
    files = [f"{os.path.join(build, 'vfs', 'pdl.so')}:/lib/pdl.so"]
    files += [f"{os.path.join(work, n)}:/work/{n}"
              for n in ["check.sql"] + [f"workload-{j}.sql" for j in JOURNALS]]
    log = os.path.join(work, "vm.log")
    cmd = [sys.executable, os.path.join(HERE, "vm.py"), "--work", work, "--script", script,
           "--log", log, "--timeout", str(a.timeout), "--nandsim", "parts=1024",
           # mtd2: an MTD device that is not NAND (RAM), which pdl must refuse
           "--module", "mtdram:total_size=1024 erase_size=128", "--module", "fuse"]
    for b in bins:
        cmd += ["--bin", b]
    for f in files:
        cmd += ["--file", f]
    t0 = time.monotonic()
    vm = subprocess.run(cmd, check=False)
    vm_secs = time.monotonic() - t0
    with open(log, errors="replace") as f:
        text = f.read()
    lines = [l.strip() for l in text.splitlines()]
    fails = [l for l in lines if l.startswith("pdl-mtd: FAIL")]
    oks = [l for l in lines if l.startswith("pdl-mtd: ok")]
    m = re.search(r"oobavail[=: ]+(\d+)", text)
    if vm.returncode not in (0, 1) or not m:
        print(f"test-mtd: the VM run did not complete (vm.py exit {vm.returncode}); "
              f"see {log}", file=sys.stderr)
        return 2
    spare = int(m.group(1))
    dev = {}
    for l in lines:
        mm = re.match(r"pdl-mtd: (stats|rows) (\S+) (.*)$", l)
        if mm:
            dev.setdefault(mm.group(2), {})[mm.group(1)] = mm.group(3)
    report = ["test-mtd: pdl on raw NAND (Linux MTD, nandsim under QEMU TCG) vs the emulator",
              f"command: ./run test-mtd (tests/mtd/test_mtd.py); VM wall time {vm_secs:.0f} s "
              f"(boot, page store suite twice, {len(all_runs())} workloads, edges)",
              next((l for l in lines if l.startswith("PDL-MTD-DEVICE:")), "PDL-MTD-DEVICE: ?"),
              f"workload: tests/mtd/test_mtd.py workload_sql (120 transactions, ~2,000 rows),"
              f" store on the first {SIZE} of the device; emulator: the same geometry "
              f"(2048+{spare} B pages, 64 pages/block)",
              f"VM checks: {len(oks)} ok, {len(fails)} failed"]
    report += [f"  {l}" for l in fails]
    report.append("")
    report.append("flash operations of the workload process (PRAGMA pdl_stats at its end):")
    report.append(f"{'method/journal':16} {'':9} {'page_reads':>10} {'spare_reads':>11} "
                  f"{'programs':>9} {'erases':>7} {'device_ms':>10}")
    mismatch = 0
    emulated = {}
    for m_, j, kernel in all_runs():
        tag = f"{kernel}:{m_}/{j}" if kernel else f"{m_}/{j}"
        if (m_, j) not in emulated:
            emulated[(m_, j)] = emulate(build, work, spare, j, m_)
        e_stats, e_rows = emulated[(m_, j)]
        d = dev.get(tag, {})
        try:
            d_stats = json.loads(d.get("stats", ""))["flash"]
        except (json.JSONDecodeError, KeyError):
            d_stats = None
        if d.get("rows") != e_rows:
            mismatch += 1
            report.append(f"{tag}: rows differ: nandsim {d.get('rows')} emulator {e_rows}")
        keys = ["page_reads", "spare_reads", "programs", "erases"]
        if d_stats is None or any(d_stats[k] != e_stats[k] for k in keys):
            mismatch += 1
            report.append(f"{tag}: flash operation counts differ")
        for name, s in (("nandsim", d_stats), ("emulator", e_stats)):
            if s is None:
                report.append(f"{tag:16} {name:9} (missing)")
                continue
            unit = "real" if name == "nandsim" else "simulated"
            report.append(f"{tag:16} {name:9} {s['page_reads']:>10} {s['spare_reads']:>11} "
                          f"{s['programs']:>9} {s['erases']:>7} {s['sim_us'] / 1000:>10.1f}"
                          f" ({unit})")
    report.append("")
    report.append("device_ms: nandsim = real time in the MTD ioctls under QEMU TCG (RAM-backed "
                  "chip, emulated CPU); emulator = simulated time at the PDL paper's Table 1")
    ok = vm.returncode == 0 and not fails and mismatch == 0
    report.append(f"result: {'PASS' if ok else 'FAIL'}")
    text_out = "\n".join(report) + "\n"
    print(text_out, end="")
    if a.out:
        with open(a.out, "w") as f:
            f.write(text_out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
