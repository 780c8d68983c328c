#!/usr/bin/python3
"""results_md_in_sync.py — docs/results.md's [PDL] section is what its JSON gives.

    results_md_in_sync.py SCRIPT MARKDOWN ARGS...

Runs bench/results_md.py --check on the committed markdown and JSON (ARGS: --bench FILE, ...):
a figure edited by hand, or JSON rerun without regenerating the text, fails. Then shows the check
can fail: a copy with one generated figure changed must be refused, and regenerating the copy
must restore it byte for byte.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def run(script, md, args, check):
    cmd = [sys.executable, script, md] + args + (["--check"] if check else [])
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    script, md, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    r = run(script, md, args, True)
    if r.returncode != 0:
        print(r.stderr, end="")
        print("FAIL: docs/results.md differs from what bench/results_md.py makes of the JSON")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "results.md")
        shutil.copy(md, copy)
        with open(copy, encoding="utf-8") as f:
            text = f.read()
        m = re.search(r"<!-- generated: exp1 -->\n.*?\*\*(\d[\d,.]*)\*\*", text, re.S)
        if not m:
            print("FAIL: no bold total in the generated Exp. 1 table")
            return 1
        bad = text[:m.start(1)] + "9" + text[m.start(1):]
        with open(copy, "w", encoding="utf-8") as f:
            f.write(bad)
        if run(script, copy, args, True).returncode != 1:
            print("FAIL: --check accepted a hand-edited figure")
            return 1
        if run(script, copy, args, False).returncode != 0:
            print("FAIL: regenerating the edited copy failed")
            return 1
        with open(copy, encoding="utf-8") as f:
            if f.read() != text:
                print("FAIL: regenerating did not restore the file")
                return 1
    print("ok: docs/results.md is in sync with its JSON, and the check refuses an edited figure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
