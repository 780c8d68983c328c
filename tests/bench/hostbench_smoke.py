#!/usr/bin/python3
"""hostbench_smoke.py — smoke test of pdl-hostbench (pdl against the unix VFS in host time).

    hostbench_smoke.py PDL_HOSTBENCH

Runs every workload tiny (50 + 50 single-row transactions in DELETE, a 200-row bulk load in
WAL, TPC-C --quick with 50 measured transactions in MEMORY; both commit modes; one
repetition) in a temporary --dir, and checks: exit status 0, a JSON record per workload x
journal x commit mode with positive CPU and wall times and speeds (their median inside their
range), the printed table's rows, and nothing left in --dir. No timing threshold: the machine
is shared. Then a bad argument: exit status 2 naming it.
"""
import json
import os
import subprocess
import sys
import tempfile

EXPECTED = [("rows", "delete"), ("bulk", "wal"), ("tpcc", "memory")]


def main():
    bench = sys.argv[1]
    errors = []
    # tmpfs when there is one, as the benchmark's own default: no fsync reaches a disk.
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(dir=shm) as tmp:
        out_json = os.path.join(tmp, "hostbench.json")
        work = os.path.join(tmp, "work")
        os.mkdir(work)
        cmd = [bench, "--rows", "50", "--journal", "delete", "--bulk-rows", "200",
               "--bulk-journal", "wal", "--tpcc-transactions", "50", "--tpcc-journal", "memory",
               "--repetitions", "1", "--size", "16M", "--dir", work, "--json", out_json]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            print(f"pdl-hostbench exited {p.returncode}; stderr tail:\n" +
                  "\n".join(p.stderr.splitlines()[-15:]))
            return 1
        with open(out_json) as f:
            report = json.load(f)
        if os.listdir(work):
            errors.append(f"left in --dir: {os.listdir(work)}")
        # How the images were read and written (mapped or pread/pwrite) is said, not guessed.
        io = report.get("image_io", "")
        if not (io.startswith("mapped (") or io.startswith("pread/pwrite (")):
            errors.append(f"image_io {io!r}")
        if f"image files in {work}: {io}" not in p.stdout:
            errors.append("no 'image files in' line in the output")
        results = report.get("results", [])
        for workload, journal in EXPECTED:
            for commit in ("journal", "atomic"):
                recs = [r for r in results if (r["workload"], r["journal"], r["commit"]) ==
                        (workload, journal, commit)]
                name = f"{workload} {journal} commit={commit}"
                if len(recs) != 1:
                    errors.append(f"{name}: {len(recs)} records")
                    continue
                r = recs[0]
                if r["repetitions"] != 1 or r["transactions"] <= 0:
                    errors.append(f"{name}: repetitions {r['repetitions']}, "
                                  f"transactions {r['transactions']}")
                for key in ("cpu_speed", "wall_speed", "unix_cpu_s", "pdl_cpu_s",
                            "unix_wall_s", "pdl_wall_s"):
                    s = r[key]
                    if len(s["samples"]) != 1 or not all(x > 0 for x in s["samples"]):
                        errors.append(f"{name}: {key} samples {s['samples']}")
                    elif not s["min"] <= s["median"] <= s["max"]:
                        errors.append(f"{name}: {key} median outside its range: {s}")
                line = f"{workload:<5} {journal:<8} {commit:<7}"
                if not any(l.startswith(line) for l in p.stdout.splitlines()):
                    errors.append(f"{name}: no row in the printed table")
        if len(results) != 2 * len(EXPECTED):
            errors.append(f"{len(results)} records, expected {2 * len(EXPECTED)}")

    p = subprocess.run([bench, "--journal", "sideways"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 2 or "sideways" not in p.stderr:
        errors.append(f"--journal sideways: exit {p.returncode}, stderr {p.stderr!r}")
    for e in errors:
        print("FAIL:", e)
    print("hostbench smoke:", "ok" if not errors else f"{len(errors)} failures")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
