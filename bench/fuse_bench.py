#!/usr/bin/python3
# fuse_bench.py — the stock sqlite3 shell inserting rows three ways, in one run:
#   fuse  sqlite3 WITHOUT the extension on MNT/bench.db, MNT a pdl-fuse mount of a fresh image
#         (pdl-fuse IMAGE MNT -f -o size=64M; mount, format and unmount are not timed)
#   vfs   sqlite3 -cmd '.load MODULE' -cmd '.open file:IMAGE?vfs=pdl&size=64M', IMAGE not
#         existing yet: the timed process creates it (cheap; measured apart as "fixed cost")
#   unix  sqlite3 on a plain file in the same directory as the images (the default unix VFS)
# Workloads, the same SQL text for every configuration (journal_mode DELETE and synchronous
# FULL, SQLite's defaults; the values are fixed pseudo-random text, so every run writes the
# same bytes):
#   batch       CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT); BEGIN;
#               --rows (10,000) single-row INSERT statements; COMMIT  (fed on stdin)
#   autocommit  CREATE TABLE t(...); --autocommit-rows (1,000) INSERTs, each its own
#               transaction (every commit syncs: on the mount, fsync -> the store's sync)
# Every (configuration, workload, repeat) gets a fresh image or file. Timed: the sqlite3
# process alone (time.perf_counter around subprocess.run). Checked after every run:
# count(*) (fuse: through the mount before unmounting) and PRAGMA integrity_check; for fuse,
# after unmounting, pdl-fuse's exit status 0 and the image reopened through the pdl VFS
# (count and integrity_check: the database the stock sqlite3 made is readable without FUSE).
#
# Figures:
#   wall-clock (machine-dependent): median/min/max seconds of --repeat runs, the ratio of each
#     configuration to unix and fuse/vfs. Both ratios are measured in this run on this machine;
#     they are not portable. With --tmp on tmpfs (the default /dev/shm) fsync costs nothing,
#     so the unix baseline is the fastest possible; the ratios show CPU (and FUSE) costs.
#   flash (machine-independent): page reads, programs, erases and the simulated flash time
#     (the paper's timing: read 110 us, program 1010 us, erase 1500 us) of the workload, for
#     fuse the difference of MNT/.pdl/stats.json read just before and after the sqlite3 run,
#     for vfs PRAGMA pdl_stats at the end of the timed session after PRAGMA pdl_stats_reset at
#     its start (so creating the image is not included).
#     They are counts, independent of the machine's speed (the fuse ones depend on how the
#     kernel splits writes into FUSE requests, not on timing).
#
# Run (./run fusebench does this):
#   bench/fuse_bench.py --fuse build/fuse/pdl-fuse --module build/vfs/pdl.so \
#       --json docs/results/fuse-bench.json > docs/results/fuse-bench.txt
# Options: --sqlite3 PATH (default /usr/bin/sqlite3), --repeat N (7), --rows N (10000),
# --autocommit-rows N (1000), --tmp DIR (default /dev/shm if present, else the system's
# temporary directory). If /dev/fuse is unusable or fusermount3 is missing, the fuse
# configuration is skipped with the reason printed. Exit status 0, 1 if a run or check
# failed, 2 for bad arguments. Python 3 standard library only.
import argparse
import json
import os
import platform
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

CHIP_SIZE = "64M"
DB_NAME = "bench.db"
CONFIGS = ("fuse", "vfs", "unix")
FLASH_KEYS = ("page_reads", "spare_reads", "programs", "erases", "bytes_read",
              "bytes_programmed", "sim_us")
RUN_TIMEOUT = 900  # seconds for one sqlite3 process
MOUNT_TIMEOUT = 30
EXIT_TIMEOUT = 120


class BenchError(Exception):
    pass


class MountFailed(BenchError):
    def __init__(self, msg, rc):
        super().__init__(msg)
        self.rc = rc


def make_sql(workload, rows):
    """The workload's SQL text: deterministic values, one INSERT statement per row."""
    rng = random.Random(20240601)
    out = ["CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT);\n"]
    if workload == "batch":
        out.append("BEGIN;\n")
    for i in range(1, rows + 1):
        b = "%080x" % rng.getrandbits(320)
        out.append("INSERT INTO t(a, b) VALUES(%d, '%s');\n" % (i, b))
    if workload == "batch":
        out.append("COMMIT;\n")
    return "".join(out)


def vfs_uri(image, **params):
    q = urllib.parse.urlencode(dict(vfs="pdl", **params))
    return "file:%s?%s" % (urllib.parse.quote(os.path.abspath(image)), q)


def median(xs):
    return statistics.median(xs) if xs else None


class Bench:
    def __init__(self, args):
        self.a = args
        self.root = None          # our scratch directory
        self.mounts = []          # [(mountpoint, Popen)] not yet unmounted
        self.fusermount = shutil.which("fusermount3")
        self.checks = {"runs": 0, "fuse_reopened_via_vfs": 0}

    # --- processes ---------------------------------------------------------------------------
    def sqlite(self, argv_tail, sql, what):
        """Runs sqlite3 -bail ARGV_TAIL with SQL on stdin; returns (seconds, stdout)."""
        cmd = [self.a.sqlite3, "-bail"] + argv_tail
        t0 = time.perf_counter()
        try:
            r = subprocess.run(cmd, input=sql, text=True, capture_output=True,
                               timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise BenchError("%s: sqlite3 took over %d s" % (what, RUN_TIMEOUT))
        dt = time.perf_counter() - t0
        if r.returncode != 0 or r.stderr.strip():
            raise BenchError("%s: %s exited %d: %s" % (what, shlex.join(cmd), r.returncode,
                                                       r.stderr.strip()[-2000:]))
        return dt, r.stdout

    def vfs_args(self, image, **params):
        return ["-cmd", ".load " + self.a.module, "-cmd", ".open " + vfs_uri(image, **params)]

    def check_db(self, argv_tail, expect, what):
        _, out = self.sqlite(argv_tail, "SELECT count(*) FROM t;\nPRAGMA integrity_check;\n",
                             what + " check")
        got = out.split()
        if got != [str(expect), "ok"]:
            raise BenchError("%s: expected count %d and integrity ok, got %r"
                             % (what, expect, out.strip()[:500]))

    def mount(self, image, mnt, log):
        os.mkdir(mnt)
        with open(log, "w") as f:
            p = subprocess.Popen([self.a.fuse, image, mnt, "-f", "-o", "size=" + CHIP_SIZE],
                                 stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT)
        self.mounts.append((mnt, p))
        deadline = time.monotonic() + MOUNT_TIMEOUT
        while not os.path.ismount(mnt):
            if p.poll() is not None:
                self.mounts.remove((mnt, p))
                raise MountFailed("pdl-fuse exited %d before mounting: %s"
                                  % (p.returncode, tail(log)), p.returncode)
            if time.monotonic() > deadline:
                raise BenchError("pdl-fuse did not mount %s within %d s" % (mnt, MOUNT_TIMEOUT))
            time.sleep(0.02)
        return p

    def unmount(self, mnt, p, log):
        """fusermount3 -u, then pdl-fuse must write everything and exit 0."""
        r = subprocess.run([self.fusermount, "-u", mnt], capture_output=True, text=True)
        if r.returncode != 0:
            raise BenchError("fusermount3 -u %s: %s" % (mnt, r.stderr.strip()))
        try:
            rc = p.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise BenchError("pdl-fuse did not exit within %d s of unmounting" % EXIT_TIMEOUT)
        self.mounts.remove((mnt, p))
        if rc != 0:
            raise BenchError("pdl-fuse exited %d after unmounting: %s" % (rc, tail(log)))

    def release(self, mnt, p):
        """Unmount (lazily if busy) and reap pdl-fuse, killing it if it does not exit."""
        if os.path.ismount(mnt) and self.fusermount:
            r = subprocess.run([self.fusermount, "-u", mnt], capture_output=True)
            if r.returncode != 0:
                subprocess.run([self.fusermount, "-u", "-z", mnt], capture_output=True)
        try:
            p.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def cleanup(self):
        for mnt, p in list(self.mounts):
            self.release(mnt, p)
        self.mounts.clear()
        if self.root:
            shutil.rmtree(self.root, ignore_errors=True)

    # --- fuse availability ------------------------------------------------------------------
    def fuse_unusable(self):
        """None if the fuse configuration can run, else the reason."""
        if not os.access(self.a.fuse, os.X_OK):
            return "%s is not an executable" % self.a.fuse
        if not self.fusermount:
            return "fusermount3 not found (Debian package fuse3)"
        try:
            os.close(os.open("/dev/fuse", os.O_RDWR))
        except OSError as e:
            return "/dev/fuse unusable: %s" % e
        d = tempfile.mkdtemp(prefix="probe-", dir=self.root)
        try:
            p = self.mount(os.path.join(d, "probe.img"), os.path.join(d, "mnt"),
                           os.path.join(d, "log"))
            self.unmount(os.path.join(d, "mnt"), p, os.path.join(d, "log"))
        except MountFailed as e:
            if e.rc != 1:  # 1: the kernel refused the mount; anything else is pdl-fuse's fault
                raise
            return "probe mount failed: %s" % e
        finally:
            self.cleanup_mounts_under(d)
            shutil.rmtree(d, ignore_errors=True)
        return None

    def cleanup_mounts_under(self, d):
        for mnt, p in list(self.mounts):
            if mnt.startswith(d + os.sep):
                self.release(mnt, p)
                self.mounts.remove((mnt, p))

    def startup(self, config, rep):
        """Seconds of a sqlite3 process given no SQL (vfs: it loads pdl and creates an image)."""
        d = os.path.join(self.root, "startup-%s-%d" % (config, rep))
        os.mkdir(d)
        try:
            path = os.path.join(d, "empty.img" if config == "vfs" else DB_NAME)
            argv = self.vfs_args(path, size=CHIP_SIZE) if config == "vfs" else [path]
            dt, _ = self.sqlite(argv, "", "%s startup" % config)
            if config == "vfs" and not os.path.exists(path):
                raise BenchError("vfs startup: the VFS did not create %s" % path)
            return dt
        finally:
            shutil.rmtree(d, ignore_errors=True)

    # --- one run -----------------------------------------------------------------------------
    def run_one(self, config, workload, sql, rows, rep):
        d = os.path.join(self.root, "%s-%s-%d" % (config, workload, rep))
        os.mkdir(d)
        what = "%s %s #%d" % (config, workload, rep + 1)
        res = {}
        try:
            if config == "unix":
                db = os.path.join(d, DB_NAME)
                res["wall_s"], _ = self.sqlite([db], sql, what)
                self.check_db([db], rows, what)
            elif config == "vfs":
                # The timed session creates (formats) the image, as pdl-fuse does before its
                # timed run: a store that formatted its chip knows every block is erased. (An
                # image made by an earlier process is mounted instead: a scan of every page's
                # spare area, and free blocks are erased again before use.)
                image = os.path.join(d, "vfs.img")
                full = "PRAGMA pdl_stats_reset;\n" + sql + "PRAGMA pdl_stats;\n"
                res["wall_s"], out = self.sqlite(self.vfs_args(image, size=CHIP_SIZE), full,
                                                 what)
                st = last_json(out, what)
                res["flash"] = {k: st["flash"][k] for k in FLASH_KEYS}
                res["syncs"] = st["store"]["syncs"]
                res["gc_runs"] = st["store"]["gc_runs"]
                res["stats_geometry"] = st["geometry"]
                res["method"] = st["method"]
                self.check_db(self.vfs_args(image), rows, what)
            else:
                image, mnt, log = (os.path.join(d, n) for n in ("fuse.img", "mnt", "log"))
                p = self.mount(image, mnt, log)
                stats = os.path.join(mnt, ".pdl", "stats.json")
                before = read_json(stats, what)
                db = os.path.join(mnt, DB_NAME)
                res["wall_s"], _ = self.sqlite([db], sql, what)
                after = read_json(stats, what)
                res["flash"] = {k: after["flash"][k] - before["flash"][k] for k in FLASH_KEYS}
                res["syncs"] = after["store"]["syncs"] - before["store"]["syncs"]
                res["gc_runs"] = after["store"]["gc_runs"] - before["store"]["gc_runs"]
                res["stats_geometry"] = after["geometry"]
                res["method"] = after["method"]
                self.check_db([db], rows, what + " (through the mount)")
                self.unmount(mnt, p, log)
                self.check_db(self.vfs_args(image, db=DB_NAME), rows,
                              what + " (image reopened through the pdl VFS)")
                self.checks["fuse_reopened_via_vfs"] += 1
            self.checks["runs"] += 1
        finally:
            self.cleanup_mounts_under(d)
            shutil.rmtree(d, ignore_errors=True)
        return res


def tail(path, n=1500):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:].strip() or "(no output)"
    except OSError:
        return "(no log)"


def read_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise BenchError("%s: reading %s: %s" % (what, path, e))


def last_json(out, what):
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if not lines:
        raise BenchError("%s: PRAGMA pdl_stats printed no JSON: %r" % (what, out[-500:]))
    try:
        return json.loads(lines[-1])
    except ValueError as e:
        raise BenchError("%s: PRAGMA pdl_stats: %s" % (what, e))


def fs_type(path):
    """The file system type of the mount holding PATH (from /proc/mounts)."""
    best, typ = "", "?"
    try:
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                mp = parts[1].replace("\\040", " ")
                if (path == mp or path.startswith(mp.rstrip("/") + "/")) and len(mp) > len(best):
                    best, typ = mp, parts[2]
    except OSError:
        pass
    return typ


def version_of(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return ", ".join((r.stdout or r.stderr).strip().splitlines()[:2]) or "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def parse_args():
    p = argparse.ArgumentParser(
        description="Wall time of the stock sqlite3 inserting rows on a pdl-fuse mount, through "
                    "the pdl VFS and on the unix VFS, in one run; plus the flash work counted.")
    p.add_argument("--fuse", required=True, help="the pdl-fuse binary")
    p.add_argument("--module", required=True, help="the pdl VFS extension (pdl.so)")
    p.add_argument("--sqlite3", default="/usr/bin/sqlite3", help="the sqlite3 shell")
    p.add_argument("--repeat", type=int, default=7, help="runs per configuration (median)")
    p.add_argument("--rows", type=int, default=10000, help="rows of the batch workload")
    p.add_argument("--autocommit-rows", type=int, default=1000,
                   help="rows (transactions) of the autocommit workload")
    p.add_argument("--json", help="write the figures to this file")
    default_tmp = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    p.add_argument("--tmp", default=default_tmp,
                   help="where images, mounts and the unix database live (default %(default)s)")
    a = p.parse_args()
    if a.repeat < 1 or a.rows < 1 or a.autocommit_rows < 1:
        p.error("--repeat, --rows and --autocommit-rows must be at least 1")
    for opt in ("fuse", "module", "sqlite3"):
        setattr(a, opt, os.path.abspath(getattr(a, opt)))
    if not os.path.isfile(a.module):
        p.error("--module %s: no such file" % a.module)
    if not os.access(a.sqlite3, os.X_OK):
        p.error("--sqlite3 %s: not an executable" % a.sqlite3)
    if not os.path.isdir(a.tmp):
        p.error("--tmp %s: no such directory" % a.tmp)
    return a


def fmt_ratio(x):
    return "-" if x is None else "%.2f" % x


def main():
    a = parse_args()
    b = Bench(a)

    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    out = sys.stdout
    workloads = {"batch": a.rows, "autocommit": a.autocommit_rows}
    machine = {
        "nproc": len(os.sched_getaffinity(0)),
        "python": platform.python_version(),
        "sqlite3": version_of([a.sqlite3, "--version"]),
        "kernel": platform.release(),
        "pdl_fuse": version_of([a.fuse, "--version"]) if os.access(a.fuse, os.X_OK) else "?",
    }
    report = {"benchmark": "fuse-bench", "command": shlex.join(sys.argv), "machine": machine,
              "params": {"repeat": a.repeat, "rows": a.rows,
                         "autocommit_rows": a.autocommit_rows, "chip_size": CHIP_SIZE,
                         "journal_mode": "delete", "synchronous": "full"},
              "skipped": {}, "results": {}, "fuse_vs_vfs": {}}
    rc = 0
    try:
        b.root = tempfile.mkdtemp(prefix="fb-", dir=a.tmp)
        report["tmp_dir"] = b.root
        report["tmp_fs"] = fs_type(os.path.realpath(b.root))
        configs = list(CONFIGS)
        print("fuse-bench: the stock sqlite3 inserting rows on a pdl-fuse mount (fuse), through"
              " the pdl VFS (vfs)", file=out)
        print("  and on the unix VFS (unix), in one run", file=out)
        print("command: %s" % report["command"], file=out)
        print("machine: nproc %d, python %s, sqlite3 %s, kernel %s" % (
            machine["nproc"], machine["python"], " ".join(machine["sqlite3"].split()[:2]),
            machine["kernel"]), file=out)
        print("pdl-fuse: %s" % machine["pdl_fuse"], file=out)
        print("files: %s (%s): images, mount points and the unix database" % (
            b.root, report["tmp_fs"]), file=out)
        if report["tmp_fs"] == "tmpfs":
            print("  (tmpfs: fsync costs nothing, the unix baseline is the fastest possible)",
                  file=out)
        out.flush()
        reason = b.fuse_unusable()
        if reason:
            configs.remove("fuse")
            report["skipped"]["fuse"] = reason
            print("SKIPPED fuse: %s" % reason, file=out)
        print("workloads (same SQL text everywhere; journal_mode DELETE, synchronous FULL):",
              file=out)
        print("  batch       CREATE TABLE; BEGIN; %d single-row INSERTs; COMMIT" % a.rows,
              file=out)
        print("  autocommit  CREATE TABLE; %d single-row INSERTs, each its own transaction"
              % a.autocommit_rows, file=out)
        print("each run on a fresh %s image / fresh file; timed: the sqlite3 process only;"
              " median of %d" % (CHIP_SIZE, a.repeat), file=out)
        out.flush()

        runs = {w: {c: [] for c in configs} for w in workloads}
        sqls = {w: make_sql(w, n) for w, n in workloads.items()}
        startup = {"unix": [], "vfs": []}
        for rep in range(a.repeat):            # interleaved, so drift hits every config alike
            for c in startup:
                startup[c].append(b.startup(c, rep))
            for w, n in workloads.items():
                for c in configs:
                    runs[w][c].append(b.run_one(c, w, sqls[w], n, rep))

        geometry = method = None
        for w, n in workloads.items():
            report["results"][w] = {}
            for c in configs:
                rs = runs[w][c]
                walls = [r["wall_s"] for r in rs]
                e = {"wall_s": walls, "median_s": median(walls), "min_s": min(walls),
                     "max_s": max(walls), "rows": n}
                if "flash" in rs[0]:
                    flash = {k: median([r["flash"][k] for r in rs]) for k in FLASH_KEYS}
                    same = all(r["flash"] == rs[0]["flash"] for r in rs)
                    e.update(flash=flash, flash_per_run=[r["flash"] for r in rs],
                             flash_same_every_run=same,
                             syncs=median([r["syncs"] for r in rs]),
                             gc_runs=median([r["gc_runs"] for r in rs]),
                             sim_us_per_row=flash["sim_us"] / n)
                    geometry, method = rs[0]["stats_geometry"], rs[0]["method"]
                report["results"][w][c] = e
            res = report["results"][w]
            unix = res.get("unix", {}).get("median_s")
            for c in configs:
                res[c]["ratio_vs_unix"] = res[c]["median_s"] / unix if unix else None
            if "fuse" in res and "vfs" in res:
                fs, vs = res["fuse"]["flash"]["sim_us"], res["vfs"]["flash"]["sim_us"]
                report["fuse_vs_vfs"][w] = {
                    "wall": res["fuse"]["median_s"] / res["vfs"]["median_s"],
                    "sim": fs / vs if vs else None,
                    "programs": (res["fuse"]["flash"]["programs"] / res["vfs"]["flash"]["programs"]
                                 if res["vfs"]["flash"]["programs"] else None)}
        if geometry:
            report["chip"] = dict(method=method, **geometry)
            print("chip: method %s, %d blocks x %d pages x %d+%d bytes (%s), nop %d;\n"
                  "  simulated read %d us, program %d us, erase %d us" % (
                      method, geometry["blocks"], geometry["pages_per_block"],
                      geometry["page_data"], geometry["page_spare"], CHIP_SIZE,
                      geometry["nop"], geometry["read_us"], geometry["program_us"],
                      geometry["erase_us"]), file=out)

        print("\nWall-clock seconds of the sqlite3 process (machine-dependent; every ratio is"
              " measured in this", file=out)
        print("run on this machine: x unix = median / unix median, fuse/vfs = fuse median /"
              " vfs median)", file=out)
        print("%-11s %-5s %9s %9s %9s %8s %10s" % ("workload", "cfg", "median_s", "min_s",
                                                    "max_s", "x unix", "rows/s"), file=out)
        for w in workloads:
            for c in configs:
                e = report["results"][w][c]
                print("%-11s %-5s %9.3f %9.3f %9.3f %8s %10.0f" % (
                    w, c, e["median_s"], e["min_s"], e["max_s"], fmt_ratio(e["ratio_vs_unix"]),
                    e["rows"] / e["median_s"]), file=out)
            if w in report["fuse_vs_vfs"]:
                print("%-11s fuse/vfs wall %s" % (
                    "", fmt_ratio(report["fuse_vs_vfs"][w]["wall"])), file=out)
        st = report["startup"] = {c: {"wall_s": v, "median_s": median(v)}
                                  for c, v in startup.items()}
        print("fixed cost of one sqlite3 process with no SQL, median: unix %.4f s, vfs %.4f s"
              % (st["unix"]["median_s"], st["vfs"]["median_s"]), file=out)
        print("(vfs: loading the extension and creating the %s image, which its timed runs"
              " include;" % CHIP_SIZE, file=out)
        print("fuse: the image is created and mounted before timing)", file=out)

        flash_cfgs = [c for c in configs if c != "unix"]
        if flash_cfgs:
            print("\nFlash work of the workload (machine-independent counts; simulated time at"
                  " the chip's timing;", file=out)
            print("fuse: MNT/.pdl/stats.json after minus before the sqlite3 run; vfs: PRAGMA"
                  " pdl_stats after", file=out)
            print("PRAGMA pdl_stats_reset, so creating the image is excluded; median of the"
                  " runs)", file=out)
            print("%-11s %-5s %10s %10s %7s %10s %9s %10s %6s %4s" % (
                "workload", "cfg", "page_reads", "programs", "erases", "MB_progr", "sim_s",
                "sim_us/row", "syncs", "gc"), file=out)
            for w in workloads:
                for c in flash_cfgs:
                    e = report["results"][w][c]
                    f = e["flash"]
                    print("%-11s %-5s %10d %10d %7d %10.2f %9.3f %10.1f %6d %4d%s" % (
                        w, c, f["page_reads"], f["programs"], f["erases"],
                        f["bytes_programmed"] / 1e6, f["sim_us"] / 1e6, e["sim_us_per_row"],
                        e["syncs"], e["gc_runs"],
                        "" if e["flash_same_every_run"] else "  (runs differ)"), file=out)
                if w in report["fuse_vs_vfs"]:
                    r = report["fuse_vs_vfs"][w]
                    print("%-11s fuse/vfs simulated time %s, programs %s" % (
                        "", fmt_ratio(r["sim"]), fmt_ratio(r["programs"])), file=out)

        print("\nchecks: %d runs, each count(*) = rows and integrity_check ok; %d fuse images"
              " reopened" % (b.checks["runs"], b.checks["fuse_reopened_via_vfs"]), file=out)
        print("through the pdl VFS after unmounting (pdl-fuse exit 0): count and"
              " integrity_check ok" if b.checks["fuse_reopened_via_vfs"] else
              "(fuse skipped: no image reopened)", file=out)
        report["checks"] = dict(b.checks, ok=True)
    except BenchError as e:
        print("fuse_bench: FAILED: %s" % e, file=sys.stderr)
        print("FAILED: %s" % e, file=out)
        report["error"] = str(e)
        rc = 1
    except KeyboardInterrupt:
        print("fuse_bench: interrupted", file=sys.stderr)
        rc = 130
    finally:
        b.cleanup()
    if a.json and rc in (0, 1):
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
    return rc


if __name__ == "__main__":
    sys.exit(main())
