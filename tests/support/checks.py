# checks.py — the check/skip/report vocabulary of the Python test scripts (meson runs each as a
# test: exit 0 passed, 1 failed, 77 skipped). `check` records a failure and goes on, so that
# one run reports every failing check; `finish` prints them and sets the exit code.
import os
import sys

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def skip(reason):
    print("skipped: " + reason)
    sys.exit(77)


def finish():
    if failures:
        print("%d failure(s):" % len(failures))
        for f in failures:
            print("  " + f)
        sys.exit(1)
    print("all passed")


def fill_errno(path, chunks=4096, chunk=4096):
    """Write random bytes to a new file at path until the write or the fsync fails; the errno
    it failed with, or None if all of it fit."""
    try:
        with open(path, "wb") as f:
            for _ in range(chunks):
                f.write(os.urandom(chunk))
                f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        return e.errno
    return None
