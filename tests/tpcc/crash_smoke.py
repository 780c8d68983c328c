#!/usr/bin/python3
"""crash_smoke.py — end-to-end test of pdl-crash (random power cuts over TPC-C-like runs).

    crash_smoke.py PDL_CRASH

1. A short campaign over the default configurations (34 cuts, 6 transactions per trial, a
   clean close and reopen after every 2, on chips with a checkpoint area): PDL, OPU and IPL
   with commit=atomic in DELETE, WAL and MEMORY and with commit=journal in DELETE and WAL, IPU
   with its journal on flash in DELETE and WAL; exit 0, one line per configuration with its
   cuts and "0 failed" and one saying where they landed (sites adding up to the cuts), totals
   that add up, half of the trials given the chance of a second cut in the recovery, the
   reopens of PDL and OPU with atomic commit mounting from the checkpoint.
2. --trial I replays one trial of each configuration (the reproduce line of a failure).
3. Bad arguments exit 2 naming the problem; journal_mode=memory with commit=journal only is
   refused (it promises nothing across a crash).
The campaign's figures (10,000 cuts) are in docs/reliability.md, from `./run crash`.
"""
import re
import subprocess
import sys


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def main():
    crash = sys.argv[1]
    errors = []
    p = run([crash, "--cuts", "34", "--txns", "6", "--reopen", "2", "--seed", "3"])
    if p.returncode != 0:
        print(f"pdl-crash exited {p.returncode}:\n{p.stdout}\n{p.stderr[-3000:]}")
        return 1
    lines = [l for l in p.stdout.splitlines() if l.startswith("  ") and "landed:" not in l]
    landed = [l for l in p.stdout.splitlines() if "       landed:" in l]
    if len(landed) != len(lines):
        errors.append(f"{len(landed)} 'landed' lines for {len(lines)} configurations")
    for l, site_line in zip(lines, landed):
        n = int(re.search(r"(\d+) cuts over", l).group(1))
        sites = sum(int(x) for x in re.findall(r"(?:data|checkpoint stream|summary|"
                                                r"other area page|area erase|log) (\d+)",
                                                site_line.split(";")[0]))
        if sites != n:
            errors.append(f"sites add up to {sites}, not {n}: {site_line}")
        m = re.search(r"\((\d+) closes, (\d+) reopens from the checkpoint per run\)", site_line)
        if not m or int(m.group(1)) != 3:
            errors.append(f"closes per run: {site_line}")
        elif l.split()[:2] in (["pdl", "atomic"], ["opu", "atomic"]) and int(m.group(2)) != 2:
            errors.append(f"reopens from the checkpoint: {l} / {site_line}")
    configs = [tuple(l.split()[:3]) for l in lines]
    want = [(m, c, j) for m in ("pdl", "opu") for c in ("atomic", "journal")
            for j in ("delete", "wal", "memory") if c == "atomic" or j != "memory"]
    want += [("ipu", "journal", j) for j in ("delete", "wal")]
    want += [("ipl", c, j) for c in ("atomic", "journal") for j in ("delete", "wal", "memory")
             if c == "atomic" or j != "memory"]
    if configs != want:
        errors.append(f"configurations {configs}")
    cuts = 0
    for l in lines:
        m = re.search(r"(\d+) cuts over (\d+) flash operations \((\d+) erases\) of 6 "
                      r"transactions, (\d+) failed", l)
        if not m or int(m.group(2)) == 0 or int(m.group(4)) != 0:
            errors.append(f"line: {l}")
            continue
        cuts += int(m.group(1))
    m = re.search(r"pdl-crash: (\d+) cuts, (\d+) of them followed by a cut during the recovery"
                  r".*; (\d+) failures;", p.stdout)
    if not m or int(m.group(1)) != 34 or cuts != 34 or int(m.group(3)) != 0:
        errors.append(f"totals: {p.stdout.splitlines()[-1]} (lines add up to {cuts})")
    elif int(m.group(2)) > 17:
        errors.append(f"{m.group(2)} recovery cuts in 17 odd trials")

    for args in (["--methods", "ipl", "--commit", "journal", "--journals", "wal"],
                 ["--methods", "ipl", "--commit", "atomic", "--journals", "delete"],
                 ["--methods", "pdl", "--commit", "atomic", "--journals", "memory"]):
        p = run([crash, "--cuts", "16", "--txns", "6", "--reopen", "2", "--seed", "3", "--trial",
                 "1"] + args)
        if p.returncode != 0 or "pdl-crash: 1 cuts" not in p.stdout:
            errors.append(f"--trial 1 {args}: exit {p.returncode} {p.stdout} {p.stderr[-500:]}")

    for args, word in ((["--methods", "nope"], "unknown method 'nope'"),
                       (["--journals", "memory", "--commit", "journal"], "promises nothing"),
                       (["--journals", "fast"], "unknown journal mode 'fast'"),
                       (["--commit", "lazy"], "unknown commit mode 'lazy'"),
                       (["--cuts", "0"], "--cuts: expected an integer"),
                       (["--factor", "2"], "--factor: expected a number in (0, 1], got '2'"),
                       (["--checkpoint", "maybe"], "--checkpoint: expected on or off")):
        p = run([crash] + args)
        if p.returncode != 2 or word not in p.stderr:
            errors.append(f"{args}: exit {p.returncode}, stderr {p.stderr[:200]!r}")

    for e in errors:
        print("FAIL:", e)
    print(f"crash_smoke: {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
