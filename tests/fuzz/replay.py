#!/usr/bin/python3
"""replay.py — the fuzz targets' corpus replayed once (meson test fuzz_replay).

    replay.py FUZZ_SEEDS REGRESSIONS_DIR TARGET-replay...

Generates the seed corpus (fuzz-seeds: real images of every method, superblocks, encoded
differentials and IPL logs) in a temp dir, then runs each replay program over its target's
seeds and over the inputs committed in REGRESSIONS_DIR/TARGET/ (every input that once made a
target fail). A crash, abort() or sanitizer report fails the test; so does a target with no
seeds (a test that replays nothing proves nothing). Real fuzzing: `./run fuzz`.
"""
import os
import subprocess
import sys
import tempfile


def main():
    seeds, regressions, replays = sys.argv[1], sys.argv[2], sys.argv[3:]
    failures = 0
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as tmp:
        p = subprocess.run([seeds, tmp], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"fuzz-seeds failed ({p.returncode}): {p.stderr}")
            return 1
        for exe in replays:
            target = os.path.basename(exe).removesuffix("-replay")
            dirs = [os.path.join(tmp, target)]
            n = len(os.listdir(dirs[0]))
            reg = os.path.join(regressions, target)
            if os.path.isdir(reg) and os.listdir(reg):
                dirs.append(reg)
                n += len(os.listdir(reg))
            r = subprocess.run([exe] + dirs, capture_output=True, text=True)
            ok = r.returncode == 0 and f"{n} inputs replayed" in r.stdout and n > 0
            print(f"{'ok  ' if ok else 'FAIL'} {target}: {n} inputs ({len(dirs) - 1} regression "
                  f"dir): exit {r.returncode} {r.stdout.strip()}")
            if not ok:
                print(r.stderr[-4000:])
                failures += 1
    print(f"fuzz_replay: {failures} targets failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
