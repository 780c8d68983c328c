#!/usr/bin/python3
"""tpcc_store.py — pdl-tpcc in a store made beforehand, the unix VFS alone in a directory of its
own, and the phase command: what `./run peers` builds its TPC-C-like run on (the pdl member on
an MTD device formatted by `pdl format`, the unix member on a mounted flash file system).

    tpcc_store.py PDL_TPCC PDL_TOOL PDL_EXTENSION SQLITE3

1. `pdl format` an image, put a database other.db in it (sqlite3 + the extension); pdl-tpcc
   --store runs PDL(256B) atomic in it: exit 0, --phase-cmd ran `CMD start` then `CMD end`
   once each, the JSON's exact counts agree with its per-transaction figures, the report names
   the store's size, other.db is still there with its row, pdl.db is a sound database.
2. pdl-tpcc --methods none --unix-dir DIR: the unix VFS alone, same seed and transactions: the
   same content checksum as the store's run, and DIR/unix.db removed afterwards.
3. Refusals: a store of another method (exit 1, names the contradiction, the image unchanged),
   a missing store (exit 1, nothing created), two members in one store, --store with
   --chip-size, --methods none with --no-unix (exit 2 each), a failing phase command (exit 1).
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from sanitizer_env import sqlite_env  # noqa: E402

COMMON = ["--scale", "0.002", "--transactions", "40", "--warmup", "20", "--journal-mode",
          "delete", "--quiet"]


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def sql(sqlite3, ext, uri, text):
    """The stock sqlite3 with the extension loaded (sanitizer runtimes preloaded if need be)."""
    return run([sqlite3, "-bail", "-cmd", ".load " + ext, "-cmd", ".open " + uri], input=text,
               env=sqlite_env())


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    tpcc, tool, ext, sqlite3 = sys.argv[1:5]
    if not sqlite3:
        print("no sqlite3 program: skipped")
        return 77
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        img = os.path.join(tmp, "store.img")
        phases = os.path.join(tmp, "phases")
        js, ujs = os.path.join(tmp, "s.json"), os.path.join(tmp, "u.json")
        udir = os.path.join(tmp, "fs")
        p = run([tool, "format", img, "--size", "32M", "--method", "pdl"])
        if p.returncode != 0:
            print(f"pdl format: {p.stderr}")
            return 1
        p = sql(sqlite3, ext, f"file:{img}?vfs=pdl&db=other.db",
                "CREATE TABLE o(x); INSERT INTO o VALUES('kept');\n")
        if p.returncode != 0:
            print(f"sqlite3 other.db: {p.stderr}")
            return 1

        # 1. the store's run
        p = run([tpcc, *COMMON, "--methods", "pdl", "--commit", "atomic", "--store", img,
                 "--no-unix", "--json", js, "--work-dir", tmp,
                 "--phase-cmd", f"echo >> {phases}"])
        if p.returncode != 0:
            print(f"pdl-tpcc --store exited {p.returncode}:\n{p.stderr[-3000:]}")
            return 1
        with open(phases) as f:
            if f.read().split() != ["start", "end"]:
                errors.append("--phase-cmd: not run as `CMD start` then `CMD end`")
        if "chip 32M" not in p.stdout:
            errors.append("the report does not give the store's size (chip 32M)")
        if f"file:{img}?vfs=pdl&db=pdl.db" not in p.stdout:
            errors.append("the report does not say where the database stays")
        with open(js) as f:
            m = json.load(f)["runs"][0]["methods"][0]
        c, per, n = m["counts"], m["per_transaction"]["total"], m["transactions"]
        if abs(c["programs"] / n - per["programs"]) > 1e-6 or \
                abs(c["erases"] / n - per["erases"]) > 1e-6 or \
                abs((c["page_reads"] + c["spare_reads"]) / n - per["reads"]) > 1e-6:
            errors.append(f"counts {c} do not match the per-transaction figures {per} x {n}")
        if c["programs"] == 0:
            errors.append("no program counted over the measured transactions")
        store_sum = m["check"]["checksum"]
        p = run([tool, "ls", img])
        for name in ("other.db", "pdl.db"):
            if name not in p.stdout:
                errors.append(f"pdl ls: {name} missing after the run:\n{p.stdout}")
        p = sql(sqlite3, ext, f"file:{img}?vfs=pdl&db=other.db&mode=ro", "SELECT x FROM o;\n")
        if p.stdout.strip() != "kept":
            errors.append(f"other.db lost its row: {p.stdout!r} {p.stderr!r}")
        p = sql(sqlite3, ext, f"file:{img}?vfs=pdl&db=pdl.db&mode=ro", "PRAGMA integrity_check;\n")
        if p.stdout.strip() != "ok":
            errors.append(f"pdl.db in the store: integrity_check {p.stdout!r} {p.stderr!r}")

        # 2. the unix VFS alone in a directory of its own
        p = run([tpcc, *COMMON, "--methods", "none", "--unix-dir", udir, "--json", ujs,
                 "--work-dir", tmp])
        if p.returncode != 0:
            errors.append(f"--methods none --unix-dir exited {p.returncode}: {p.stderr[-2000:]}")
        else:
            with open(ujs) as f:
                u = json.load(f)["runs"][0]["methods"]
            if [x["key"] for x in u] != ["unix"]:
                errors.append(f"--methods none ran {[x['key'] for x in u]}, not the unix VFS alone")
            elif u[0]["check"]["checksum"] != store_sum:
                errors.append(f"unix VFS checksum {u[0]['check']['checksum']} != the store's "
                              f"{store_sum}: not the same transactions")
            if os.path.exists(os.path.join(udir, "unix.db")):
                errors.append("--unix-dir: unix.db left behind")

        # 3. refusals
        before = digest(img)
        p = run([tpcc, *COMMON, "--methods", "opu", "--commit", "atomic", "--store", img,
                 "--no-unix", "--work-dir", tmp])
        if p.returncode != 1 or "contradicts the existing image" not in p.stderr:
            errors.append(f"a store of another method: exit {p.returncode}, {p.stderr[-500:]!r}")
        if digest(img) != before:
            errors.append("a refused run changed the store")
        missing = os.path.join(tmp, "none.img")
        p = run([tpcc, *COMMON, "--methods", "pdl", "--commit", "atomic", "--store", missing,
                 "--no-unix", "--work-dir", tmp])
        if p.returncode != 1 or "no image" not in p.stderr or os.path.exists(missing):
            errors.append(f"a missing store: exit {p.returncode}, {p.stderr[-500:]!r}")
        for args, want in (
                (["--methods", "pdl", "--store", img], "--store runs one method"),
                (["--methods", "pdl", "--commit", "atomic", "--store", img, "--chip-size",
                  "32M"], "leave out --chip-size"),
                (["--methods", "none", "--no-unix"], "nothing to run")):
            p = run([tpcc, *COMMON, *args, "--work-dir", tmp])
            if p.returncode != 2 or want not in p.stderr:
                errors.append(f"{args}: exit {p.returncode} (2 expected), {p.stderr[-300:]!r}")
        p = run([tpcc, *COMMON, "--methods", "none", "--phase-cmd", "false", "--work-dir", tmp])
        if p.returncode != 1 or "`false start` exited with 1" not in p.stderr:
            errors.append(f"a failing phase command: exit {p.returncode}, {p.stderr[-300:]!r}")
    for e in errors:
        print("FAIL:", e)
    print("ok" if not errors else f"{len(errors)} failure(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
