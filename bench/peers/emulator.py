"""emulator.py — pdl's runs of `./run peers` again on the host emulator (an image file of the
nandsim's geometry: 2048-byte pages, the device's free spare bytes, 64 pages a block, 2048
blocks), in the VM's order (vm_script.py): the same SQL files, a fresh image per workload, or
one aged image per system filled with the same static data, the workload table dropped between
workloads. The counts each process reports (PRAGMA pdl_stats) come back as the VM's PEERS-PDL
lines (tags S0, S1, M) and PEERS-ROWS lines, so counts.py compares them one to one; the
TPC-C-like run (pdl-tpcc --store on the image, after the workloads) its PEERS-TPCC and
PEERS-ROWS lines.

fill_sql_for sizes the aged runs' fill: `pdl info` of a fresh image gives the store's data
pages; the VM runs the same file.
"""
import json
import os
import re
import subprocess

import workloads
from vm_script import FILL, TPCC_KEY, pdl_parts, sql_name
from workloads import TPCC, WORKLOADS

CHIP = "256M"


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, text=True, capture_output=True, **kw)


def fmt_image(pdl, img, method, spare):
    if os.path.exists(img):
        os.unlink(img)
    r = run([pdl, "format", img, "--method", method, "--size", CHIP, "--page", "2048",
             "--pages-per-block", "64", "--spare", str(spare)])
    if r.returncode != 0:
        raise RuntimeError(f"pdl format {img}: {r.stderr.strip()}")


def fill_sql_for(pdl, work, method, spare):
    """The static-fill SQL reaching FILL of a fresh store's data pages for `method`."""
    img = os.path.join(work, "emu-fill.img")
    fmt_image(pdl, img, method, spare)
    r = run([pdl, "info", img])
    os.unlink(img)
    m = re.search(r"data lpns: (\d+) used, (\d+) free", r.stdout)
    if not m:
        raise RuntimeError(f"pdl info {img}: no 'data lpns' line in {r.stdout!r}")
    used, free = int(m.group(1)), int(m.group(2))
    target = int(FILL * (used + free)) + 1 - used
    return workloads.fill_sql(workloads.fill_chunks(target))


class Emulator:
    def __init__(self, build, work, spare, tpcc_txns):
        self.pdl = os.path.join(build, "tools", "pdl")
        self.pdl_tpcc = os.path.join(build, "tpcc", "pdl-tpcc")
        self.tpcc_txns = tpcc_txns
        self.ext = os.path.join(build, "vfs", "pdl")
        self.work = work
        self.spare = spare
        self.img = os.path.join(work, "emu", "peers.db")
        os.makedirs(os.path.dirname(self.img), exist_ok=True)

    def sql(self, commit, text, what):
        uri = f"file:{self.img}?vfs=pdl&clock=logical&commit={commit}"
        r = run(["sqlite3", "-bail", "-cmd", ".load " + self.ext, "-cmd", ".open " + uri],
                input=text)
        if r.returncode != 0:
            raise RuntimeError(f"{what} on the emulator: {r.stderr.strip()}")
        return r.stdout

    def lines(self, run_id, out):
        """The PEERS- lines the VM's emit() would print for this sqlite3 output."""
        res, tag = [], None
        for l in out.splitlines():
            if l.startswith("PEERS-PDL "):
                tag = l.split()[1]
            elif l.startswith("{") and tag:
                res.append(f"PEERS-PDL {run_id} {tag} {l}")
                tag = None
            elif l.startswith("PEERS-ROWS "):
                res.append(f"PEERS-ROWS {run_id} {l[len('PEERS-ROWS '):]}")
        return res

    def workload(self, run_id, commit, w, sqldir):
        with open(os.path.join(sqldir, sql_name(w, "pdl"))) as f:
            text = f.read().replace(".system sh /peers/snap.sh", ".system true")
        out = self.lines(run_id, self.sql(commit, text, run_id))
        out += self.lines(run_id, self.sql(commit, workloads.CHECK_SQL, run_id + " check"))
        out += self.lines(run_id, self.sql(commit, ".print PEERS-PDL M\nPRAGMA pdl_stats;\n",
                                           run_id + " mount"))
        return out

    def tpcc(self, run_id, key, commit):
        """The TPC-C-like run in the image: its PEERS-TPCC and PEERS-ROWS lines."""
        js = os.path.join(os.path.dirname(self.img), "tpcc.json")
        r = run([self.pdl_tpcc, *workloads.tpcc_args(self.tpcc_txns),
                 *workloads.tpcc_member_args(key, commit, self.img),
                 "--work-dir", os.path.dirname(self.img), "--json", js])
        if r.returncode != 0:
            raise RuntimeError(f"{run_id} on the emulator: {r.stderr.strip()[-2000:]}")
        with open(js) as f:
            m = json.load(f)["runs"][0]["methods"][0]
        os.unlink(js)
        return [f"PEERS-TPCC {run_id} " + json.dumps({"counts": m["counts"]})[1:-1],
                f"PEERS-ROWS {run_id} {m['check']['checksum']}"]

    def system(self, age, system, sqldir):
        """The PEERS- lines of one pdl system's runs at one age."""
        key, method, commit = pdl_parts(system)
        out = []
        if age == "aged":
            fmt_image(self.pdl, self.img, method, self.spare)
            with open(os.path.join(sqldir, f"fill-{method}.sql")) as f:
                self.sql(commit, f.read(), f"{age}/{system} fill")
        for w in WORKLOADS:
            if age == "fresh":
                fmt_image(self.pdl, self.img, method, self.spare)
            out += self.workload(f"{age}/{system}/{w}", commit, w, sqldir)
            if age == "aged":
                self.sql(commit, "DROP TABLE t;\n", f"{age}/{system}/{w} cleanup")
        if age == "fresh":
            fmt_image(self.pdl, self.img, method, self.spare)
        out += self.tpcc(f"{age}/{system}/{TPCC}", TPCC_KEY[key], commit)
        return out

    def close(self):
        for sfx in ["", "-journal", "-wal", "-shm"]:
            if os.path.exists(self.img + sfx):
                os.unlink(self.img + sfx)
        os.rmdir(os.path.dirname(self.img))
