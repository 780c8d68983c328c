#!/usr/bin/python3
"""results_md_in_sync.py — a generated section of docs/results.md is what its JSON gives.

    results_md_in_sync.py [--figure REGEX] SCRIPT MARKDOWN ARGS...

Runs SCRIPT --check (bench/results_md.py for the [PDL] section, bench/ftl_results_md.py for
"SQLite on commodity FTL devices") on the committed markdown and JSON (ARGS: the script's JSON
options): a figure edited by hand, or JSON rerun without regenerating the text, fails. Then shows
the check can fail: a copy with one generated figure changed — the first match of REGEX's group
1 (default: the bold total of the generated Exp. 1 table) — must be refused, and regenerating
the copy must restore it byte for byte.
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


EXP1_TOTAL = r"<!-- generated: exp1 -->\n.*?\*\*(\d[\d,.]*)\*\*"


def main():
    argv = sys.argv[1:]
    figure = EXP1_TOTAL
    if argv[:1] == ["--figure"]:
        figure, argv = argv[1], argv[2:]
    script, md, args = argv[0], argv[1], argv[2:]
    name = os.path.basename(script)
    r = run(script, md, args, True)
    if r.returncode != 0:
        print(r.stderr, end="")
        print("FAIL: docs/results.md differs from what %s makes of the JSON" % name)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "results.md")
        shutil.copy(md, copy)
        with open(copy, encoding="utf-8") as f:
            text = f.read()
        m = re.search(figure, text, re.S)
        if not m:
            print("FAIL: no generated figure matches " + figure)
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
    print("ok: docs/results.md is in sync with what %s makes of its JSON, and the check "
          "refuses an edited figure" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
