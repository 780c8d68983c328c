#!/usr/bin/python3
"""tpcc_smoke.py — end-to-end test of the pdl-tpcc program and its Exp. 7 plot script.

    tpcc_smoke.py PDL_TPCC PDL_TOOL PLOT_SCRIPT

1. A comparison of every method in both commit modes and three journal modes on a tiny
   database (--scale 0.002, a short fixed warm-up): exit 0, the printed tables (every member,
   the checks, journal_mode=memory labelled crash-safe with atomic commit only, the summary),
   the JSON (per-transaction figures whose parts add up, ratios to PDL(256B) atomic, no journal
   programmed under commit=atomic, crash safety per member, all checks passed, one checksum per
   run) and the CSV; the images kept by --image-dir are pdl images whose database `pdl cat`
   extracts as a sound SQLite file.
2. A two-point sweep: its JSON and exp7.png (if matplotlib is importable).
3. Bad arguments exit 2 naming the problem; a chip too small exits 1 and says so.
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

# Members: every method in both commit modes but IPU (no atomic commit: its journal is on
# flash), and the unix VFS's wall-clock reference.
MEMBERS = [("pdl-journal", "PDL(256B) journal"), ("pdl-atomic", "PDL(256B) atomic"),
           ("pdl2k-journal", "PDL(2KB) journal"), ("pdl2k-atomic", "PDL(2KB) atomic"),
           ("opu-journal", "OPU journal"), ("opu-atomic", "OPU atomic"),
           ("ipu-journal", "IPU journal"),
           ("ipl-journal", "IPL(18KB) journal"), ("ipl-atomic", "IPL(18KB) atomic"),
           ("ipl64k-journal", "IPL(64KB) journal"), ("ipl64k-atomic", "IPL(64KB) atomic"),
           ("unix", "unix VFS")]
LABELS = [label for _, label in MEMBERS]
IMAGE_KEYS = [key for key, _ in MEMBERS if key != "unix"]


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def main():
    tpcc, tool, plot = sys.argv[1], sys.argv[2], sys.argv[3]
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        js, csv, imgs = (os.path.join(tmp, n) for n in ("t.json", "t.csv", "images"))
        p = run([tpcc, "--scale", "0.002", "--transactions", "60", "--warmup", "30",
                 "--methods", "all", "--journal-mode", "delete,wal,memory", "--json", js,
                 "--csv", csv, "--image-dir", imgs, "--quiet", "--work-dir", tmp])
        if p.returncode != 0:
            print(f"pdl-tpcc exited {p.returncode}:\n{p.stderr[-3000:]}")
            return 1
        out = p.stdout
        for label in LABELS:
            if out.count(label) < 3:
                errors.append(f"stdout: {label} missing from a table")
        for must in ("journal_mode=memory (crash-safe with atomic commit only)",
                     "PDL(256B) with atomic commit against:",
                     "same database content on every method: yes", "== Summary",
                     "consistency 1-10,12 ok; integrity_check ok"):
            if must not in out:
                errors.append(f"stdout: no '{must}'")
        d = json.load(open(js))
        if [r["journal_mode"] for r in d["runs"]] != ["delete", "wal", "memory"]:
            errors.append("json: runs are not delete, wal, memory")
        for r in d["runs"]:
            labels = [m["label"] for m in r["methods"]]
            if labels != LABELS:
                errors.append(f"json {r['journal_mode']}: members {labels}")
            if r["warmup_transactions"] != 30 or not r["warmup_fixed"]:
                errors.append(f"json {r['journal_mode']}: warm-up not 30 fixed")
            if r["reference"] != "pdl-atomic":
                errors.append(f"json {r['journal_mode']}: reference {r['reference']}")
            sums = {m["check"]["checksum"] for m in r["methods"]}
            if len(sums) != 1:
                errors.append(f"json {r['journal_mode']}: checksums differ {sums}")
            for m in r["methods"]:
                who = f"{r['journal_mode']} {m['label']}"
                if not m["check"]["ok"]:
                    errors.append(f"{who}: check failed {m['check']}")
                if m["transactions"] != 60:
                    errors.append(f"{who}: {m['transactions']} transactions")
                if sum(t["count"] for t in m["latency"]) != 60:
                    errors.append(f"{who}: latency counts do not add up to 60")
                atomic = m["key"].endswith("-atomic")
                if m["commit"] != ("atomic" if atomic else "journal" if m["vfs"] == "pdl" else ""):
                    errors.append(f"{who}: commit {m['commit']!r}")
                safe = r["journal_mode"] != "memory" or atomic
                if m["crash_safe"] != safe:
                    errors.append(f"{who}: crash_safe {m['crash_safe']}")
                if m["vfs"] == "unix":
                    continue
                pt = m["per_transaction"]
                parts = pt["database"]["sim_ms"] + pt["journal"]["sim_ms"] + pt["directory"]["sim_ms"]
                if abs(parts - pt["total"]["sim_ms"]) > 1e-6 * pt["total"]["sim_ms"] + 1e-9:
                    errors.append(f"{who}: parts {parts} != total {pt['total']['sim_ms']}")
                if pt["total"]["sim_ms"] <= 0 or pt["database"]["sqlite_bytes_written"] <= 0:
                    errors.append(f"{who}: no flash work measured")
                if (r["journal_mode"] == "memory") != (pt["journal"]["sqlite_bytes_written"] == 0):
                    errors.append(f"{who}: journal bytes {pt['journal']['sqlite_bytes_written']}")
                if atomic and r["journal_mode"] != "wal" and pt["journal"]["programs"] != 0:
                    errors.append(f"{who}: {pt['journal']['programs']} journal programs")
                if m["key"] == "pdl-atomic" and (m["ratio_to_pdl_database"] != 1 or
                                          m["ratio_to_pdl_total"] != 1):
                    errors.append(f"{who}: PDL's ratio to itself is not 1")
        rows = open(csv).read().splitlines()
        if len(rows) != 1 + 3 * len(LABELS):
            errors.append(f"csv: {len(rows)} lines")
        # The kept images: pdl images holding the database under the image's name.
        for j in ("delete", "wal", "memory"):
            for key in IMAGE_KEYS:
                img = os.path.join(imgs, j, key + ".db")
                plain = os.path.join(tmp, f"{j}-{key}.sqlite")
                with open(plain, "wb") as f:
                    c = subprocess.run([tool, "cat", img, key + ".db"], stdout=f,
                                       stderr=subprocess.PIPE, text=False)
                if c.returncode != 0:
                    errors.append(f"pdl cat {img}: exit {c.returncode} {c.stderr[-300:]}")
                    continue
                if j == "wal":
                    continue  # committed pages may still be in the WAL, a separate file
                con = sqlite3.connect(plain)
                ok = con.execute("PRAGMA integrity_check").fetchone()[0]
                n = con.execute("SELECT count(*) FROM warehouse").fetchone()[0]
                con.close()
                if ok != "ok" or n != 1:
                    errors.append(f"{img}: integrity {ok}, {n} warehouses")

        # 2. A sweep of two cache sizes and its plot.
        sj = os.path.join(tmp, "s.json")
        p = run([tpcc, "--sweep", "--sweep-cache", "1,5", "--scale", "0.002", "--transactions",
                 "40", "--warmup", "20", "--methods", "pdl,opu", "--journal-mode", "delete",
                 "--json", sj, "--quiet", "--work-dir", tmp])
        if p.returncode != 0:
            errors.append(f"sweep exited {p.returncode}: {p.stderr[-2000:]}")
        else:
            s = json.load(open(sj))["sweep"]
            if [x["cache_pct"] for x in s] != [1, 5]:
                errors.append(f"sweep points {[x['cache_pct'] for x in s]}")
            if "Exp. 7" not in p.stdout:
                errors.append("sweep: no Exp. 7 table")
            try:
                import matplotlib  # noqa: F401
                have_mpl = True
            except ImportError:
                have_mpl = False
            if have_mpl:
                q = run([sys.executable, plot, sj, "--out", tmp])
                png = os.path.join(tmp, "exp7.png")
                if q.returncode != 0 or not os.path.exists(png) or os.path.getsize(png) == 0:
                    errors.append(f"plot_exp7: exit {q.returncode} {q.stderr[-1000:]}")

        # 3. Errors.
        for args, code, words in [(["--methods", "pdl,xyz"], 2, "unknown method 'xyz'"),
                                  (["--journal-mode", "fast"], 2, "unknown mode 'fast'"),
                                  (["--scale", "0"], 2, "--scale: expected a number in [1e-06, 1], got '0'"),
                                  (["--transactions", "-3"], 2,
                                   "--transactions: expected an integer in [1, 1099511627776], got '-3'"),
                                  (["--chip-size", "1M", "--scale", "0.002", "--methods", "pdl",
                                    "--journal-mode", "delete", "--quiet"], 1, "too small")]:
            e = run([tpcc, "--work-dir", tmp] + args, env=dict(os.environ, PDL_VFS_QUIET="1"))
            if e.returncode != code or words not in e.stderr:
                errors.append(f"{args}: exit {e.returncode}, stderr {e.stderr[:300]!r}")
        # --image-dir never overwrites a file that is not a previous run's image.
        foreign = os.path.join(tmp, "foreign")
        os.makedirs(foreign)
        with open(os.path.join(foreign, "pdl-atomic.db"), "w") as f:
            f.write("precious")
        e = run([tpcc, "--work-dir", tmp, "--scale", "0.002", "--methods", "pdl", "--journal-mode",
                 "delete", "--transactions", "5", "--warmup", "5", "--quiet", "--image-dir", foreign])
        if e.returncode != 1 or "not overwriting" not in e.stderr or \
                open(os.path.join(foreign, "pdl-atomic.db")).read() != "precious":
            errors.append(f"--image-dir over a foreign pdl-atomic.db: exit {e.returncode} "
                          f"{e.stderr[:300]!r}")
        left = [n for n in os.listdir(tmp) if n.startswith("pdl-tpcc-")]
        if left:
            errors.append(f"scratch directories left behind: {left}")
    if errors:
        print("tpcc_smoke: FAILED\n  " + "\n  ".join(errors[:40]))
        return 1
    print("tpcc_smoke: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
