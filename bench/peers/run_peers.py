#!/usr/bin/python3
"""run_peers.py — `./run peers [--quick]`: pdl against UBIFS and JFFS2 on the kernel's nandsim.

    run_peers.py --build DIR --work DIR [--quick] [--out-dir docs/results] [--log-only LOG]

One boot of the test-mtd VM (tests/mtd/vm.py: Debian's kernel under QEMU TCG, nandsim 256 MiB,
2048+64-byte pages, 128 KiB blocks) runs workloads.py's SQL on UBIFS (lzo, and compr=none),
JFFS2 and pdl through MtdNand (PDL(256B) and OPU, atomic commit and the journal on flash),
fresh and aged (>= 90 % static data), counting at the NAND core with kprobes (vm_script.py);
then pdl's runs again on the host emulator of the same geometry (emulator.py). The figures
(counts.py, report.py) go to OUT/peers.json and peers.txt (also printed), the plot to
OUT/peers.png (plot.py). --quick: 250 transactions a workload, fresh devices only (the full
run: 1,000, fresh and aged). --log-only LOG: no VM, the figures from a saved VM log (the
emulator still runs). Exit status: 0 every run and check passed, 1 a run or a cross-check
failed (the table still printed, the mismatches named), 2 set-up error.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import counts  # noqa: E402
import emulator  # noqa: E402
import report  # noqa: E402
import vm_script  # noqa: E402
import workloads  # noqa: E402

VM = os.path.join(HERE, "..", "..", "tests", "mtd", "vm.py")
TOOLS = ["ubiformat", "ubiattach", "ubidetach", "ubimkvol", "flash_erase"]


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def prepare(work, build, txns, ages, spare):
    """The VM's /peers directory: snap.sh, the SQL, the fill files, test.sh."""
    d = os.path.join(work, "peers")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    write(os.path.join(d, "snap.sh"), vm_script.SNAP_SH)
    write(os.path.join(d, "phase.sh"), vm_script.PHASE_SH)
    for w in workloads.WORKLOADS:
        write(os.path.join(d, f"w-{w}.sql"), workloads.workload_sql(w, txns))
        if workloads.JOURNAL[w] == "WAL":
            write(os.path.join(d, f"w-{w}-x.sql"), workloads.workload_sql(w, txns, True))
    write(os.path.join(d, "check.sql"), workloads.CHECK_SQL)
    if "aged" in ages:
        for method in sorted(set(vm_script.PDL_METHOD.values())):
            write(os.path.join(d, f"fill-{method}.sql"),
                  emulator.fill_sql_for(os.path.join(build, "tools", "pdl"), work, method,
                                        spare))
    write(os.path.join(d, "test.sh"), vm_script.script(ages, tpcc_txns=txns))
    return d


def boot(work, build, peers_dir, log, timeout):
    bins = [os.path.join(build, "tools", "pdl"), os.path.join(build, "tpcc", "pdl-tpcc"),
            shutil.which("sqlite3")]
    for t in TOOLS:
        p = shutil.which(t) or shutil.which(t, path="/usr/sbin:/sbin")
        if not p:
            raise SystemExit(f"peers: {t} is missing: install the Debian package mtd-utils "
                             "(./run peers installs it)")
        bins.append(p)
    cmd = [sys.executable, VM, "--work", work, "--script", os.path.join(peers_dir, "test.sh"),
           "--log", log, "--timeout", str(timeout), "--memory", "1536",
           "--file", f"{os.path.join(build, 'vfs', 'pdl.so')}:/lib/pdl.so",
           "--file", f"{peers_dir}:/peers"]
    for b in bins:
        cmd += ["--bin", b]
    for m in vm_script.MODULES:
        cmd += ["--module", m]
    t0 = time.monotonic()
    r = subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
    return r.returncode, time.monotonic() - t0


def kernel(work):
    """The kernel package vm.py unpacked (DIR/kernel/PACKAGE), or None."""
    try:
        with open(os.path.join(work, "kernel", "PACKAGE")) as f:
            return f.read().strip()
    except OSError:
        return None


def main():
    ap = argparse.ArgumentParser(description="pdl against UBIFS and JFFS2 on nandsim")
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default="build-mtd")
    ap.add_argument("--out-dir", default="docs/results")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--log-only", help="read this VM log instead of booting the VM")
    ap.add_argument("--timeout", type=int, default=0, help="VM timeout, s (0: by mode)")
    a = ap.parse_args()
    build, work = os.path.abspath(a.build), os.path.abspath(a.work)
    txns = 250 if a.quick else 1000
    ages = ["fresh"] if a.quick else ["fresh", "aged"]
    spare = 38  # nandsim's free OOB bytes with its 1-bit Hamming ECC (checked in the log)
    os.makedirs(work, exist_ok=True)
    t0 = time.monotonic()
    peers_dir = prepare(work, build, txns, ages, spare)
    log = os.path.join(work, "peers-vm.log")
    vm_status, vm_secs = 0, None
    if a.log_only:
        log = a.log_only
    else:
        print(f"peers: booting the VM ({'quick: ' if a.quick else ''}{txns} transactions a "
              f"workload, {' and '.join(ages)}; log {log})", file=sys.stderr, flush=True)
        vm_status, vm_secs = boot(work, build, peers_dir, log, a.timeout or
                                  (1800 if a.quick else 7200))
    with open(log, errors="replace") as f:
        text = f.read()
    dev = re.search(r"PDL-MTD-DEVICE: .*", text)
    m = re.search(r"oobavail=(\d+)", text)
    if m and int(m.group(1)) != spare:
        print(f"peers: the device has {m.group(1)} free spare bytes, not {spare}",
              file=sys.stderr)
        return 2
    d = counts.parse(text)
    runs = {}
    for age in ages:
        for s in vm_script.SYSTEMS:
            for w in workloads.WORKLOADS + [workloads.TPCC]:
                run = f"{age}/{s}/{w}"
                runs[run] = counts.run_result(d, run, txns)
    print("peers: pdl's runs on the host emulator", file=sys.stderr, flush=True)
    emu = emulator.Emulator(build, work, spare, txns)
    emu_lines = []
    try:
        for age in ages:
            for s in vm_script.PDL_SYSTEMS:
                emu_lines += emu.system(age, s, peers_dir)
    except RuntimeError as e:
        d["fail"].append(f"emulator: {e}")
    finally:
        emu.close()
    emu_d = counts.parse("\n".join(emu_lines))
    mismatches = counts.cross_checks(runs, emu_d, vm_script.PDL_SYSTEMS)
    result = {
        "command": "./run peers" + (" --quick" if a.quick else ""),
        "quick": a.quick, "txns": txns, "table_rows": workloads.TABLE_ROWS,
        "row_bytes": workloads.ROW_BYTES, "page_size": workloads.PAGE_SIZE,
        "ages": ages, "systems": vm_script.SYSTEMS,
        "workloads": workloads.WORKLOADS + [workloads.TPCC],
        "tpcc": {"args": workloads.tpcc_args(txns), "scale": workloads.TPCC_SCALE,
                 "journal": workloads.TPCC_JOURNAL, "transactions": txns},
        "device": dev.group(0) if dev else None,
        "kernel": kernel(work),
        "vm_status": vm_status, "vm_wall_s": round(vm_secs) if vm_secs else None,
        "wall_s": round(time.monotonic() - t0),
        "full": d["full"], "fill_pages": d["fill_pages"],
        "runs": runs,
        "emulator": [{"run": r, "nandsim": n, "emulator": e}
                     for r, n, e in counts.emulator_pairs(runs, emu_d)],
        "failures": d["fail"], "mismatches": mismatches,
    }
    txt = report.text(result)
    print(txt, end="")
    os.makedirs(a.out_dir, exist_ok=True)
    write(os.path.join(a.out_dir, "peers.json"), json.dumps(result, indent=1) + "\n")
    write(os.path.join(a.out_dir, "peers.txt"), txt)
    rc = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "plot.py"),
                         os.path.join(a.out_dir, "peers.json"),
                         os.path.join(a.out_dir, "peers.png")], check=False).returncode
    ok = vm_status == 0 and not d["fail"] and not mismatches and rc == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
