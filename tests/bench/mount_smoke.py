#!/usr/bin/python3
"""mount_smoke.py — `./run mount-bench`'s program at a tiny size, and proof that its content
check is real.

    mount_smoke.py PDL_BENCH MOUNT_RESULTS_MD_PY

1. pdl-bench --exp mount --quick --mount-sizes 16M --mount-scan-max 16M (images in a scratch
   TMPDIR): exit 0; the table printed with its four rows (checkpoint area yes/no x clean/power
   cut) and "all mounts verified"; four JSON records, each with every written logical page
   verified; the clean mount with a checkpoint area read its tables from the checkpoint and
   fewer pages than the scans; the scans read at least every written page's spare area; no
   file left behind.
2. The same with the hidden --mount-tamper (one expected value changed before each mount, as if
   a mount had lost it): the run must fail naming the wrong page — the check is not vacuous.
3. The same run for FAST(16) (--methods fast16): four records, every page verified, the clean
   mount with a checkpoint area from the checkpoint, reading fewer pages than the scans. (After
   the power cut it may scan: on a chip this small the replay budget is 16 blocks, and one
   victim merge of FAST's declares more than twice that — the checkpoint goes stale. The
   replay's figures come from 256 MiB and 1 GiB, `./run mount-bench`.)
4. bench/mount_results_md.py over both JSON files into a copy of the section's markers: the
   three blocks filled, PDL's table with its four rows, the FTL devices' with FAST's four.
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    bench, md_py = sys.argv[1], sys.argv[2]
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = os.path.join(tmp, "scratch")
        os.mkdir(scratch)
        env = dict(os.environ, TMPDIR=scratch)
        out = os.path.join(tmp, "mount.json")
        cmd = [bench, "--exp", "mount", "--quick", "--mount-sizes", "16M",
               "--mount-scan-max", "16M", "--json", out]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=240)
        if r.returncode != 0:
            print(r.stdout + r.stderr)
            print("FAIL: pdl-bench --exp mount exited", r.returncode)
            return 1
        rows = [l for l in r.stdout.splitlines() if l.startswith("| PDL(256B) | 16 MiB |")]
        if len(rows) != 4:
            errors.append(f"expected 4 table rows for 16 MiB, got {len(rows)}:\n{r.stdout}")
        if "all mounts verified" not in r.stdout:
            errors.append("no 'all mounts verified' line")
        with open(out, encoding="utf-8") as f:
            recs = [x for x in json.load(f) if x.get("exp") == "mount"]
        if len(recs) != 4:
            errors.append(f"expected 4 mount records, got {len(recs)}")
        for x in recs:
            name = f"checkpoint={x['checkpoint']} {x['state']}"
            if x["verified_pages"] != x["written_lpns"] or x["written_lpns"] < 1000:
                errors.append(f"{name}: {x['verified_pages']} pages verified of "
                              f"{x['written_lpns']} written")
            if x["table_bytes"] <= 0 or x["vmhwm_bytes"] <= 0 or x["sim_us"] <= 0:
                errors.append(f"{name}: table/RSS/simulated time not measured: {x}")
        clean_cp = [x for x in recs if x["checkpoint"] and x["state"] == "clean"]
        scans = [x for x in recs if not x["from_checkpoint"]]
        if not clean_cp or not clean_cp[0]["from_checkpoint"]:
            errors.append("the clean mount with a checkpoint area did not use the checkpoint")
        elif scans and clean_cp[0]["pages_read"] >= min(x["pages_read"] for x in scans):
            errors.append("the checkpoint mount read no fewer pages than a scan")
        for x in scans:
            if x["pages_scanned"] < x["written_lpns"]:
                errors.append(f"a scan read {x['pages_scanned']} spare areas for "
                              f"{x['written_lpns']} written pages")
        left = os.listdir(scratch)
        if left:
            errors.append(f"left behind in TMPDIR: {left}")

        t = subprocess.run(cmd[:-2] + ["--mount-tamper"], capture_output=True, text=True,
                           env=env, timeout=240)
        if t.returncode != 1 or "wrong after the mount" not in t.stderr:
            errors.append(f"--mount-tamper: expected exit 1 naming the wrong page, got "
                          f"{t.returncode}: {t.stderr[-500:]}")
        if os.listdir(scratch):
            errors.append(f"--mount-tamper left behind: {os.listdir(scratch)}")

        ftl_out = os.path.join(tmp, "mount-ftl.json")
        f = subprocess.run(cmd[:-2] + ["--methods", "fast16", "--json", ftl_out],
                           capture_output=True, text=True, env=env, timeout=240)
        if f.returncode != 0:
            errors.append(f"--methods fast16: exit {f.returncode}: {f.stdout}{f.stderr[-500:]}")
        else:
            with open(ftl_out, encoding="utf-8") as fj:
                frecs = [x for x in json.load(fj) if x.get("exp") == "mount"]
            clean = [x for x in frecs if x["checkpoint"] and x["state"] == "clean"]
            fscans = [x for x in frecs if not x["checkpoint"]]
            if (len(frecs) != 4 or any(x["method"] != "FAST(16)" for x in frecs) or
                    any(x["verified_pages"] != x["written_lpns"] for x in frecs)):
                errors.append(f"FAST(16): expected 4 verified records, got {frecs}")
            elif (not clean or not clean[0]["from_checkpoint"] or
                  clean[0]["pages_read"] >= min(x["pages_read"] for x in fscans)):
                errors.append("FAST(16): the clean mount with a checkpoint area scanned, or read "
                              f"as much as a scan: {clean} / {fscans}")

        md = os.path.join(tmp, "results.md")
        with open(md, "w", encoding="utf-8") as f:
            for b in ["mount-table", "mount-targets", "mount-ftl-table"]:
                f.write(f"<!-- generated by mount_results_md.py: {b} -->\n<!-- end: {b} -->\n")
        g = subprocess.run([sys.executable, md_py, md, "--mount", out, "--mount", ftl_out],
                           capture_output=True, text=True)
        with open(md, encoding="utf-8") as f:
            text = f.read()
        if (g.returncode != 0 or text.count("\n| 16 MiB |") != 4 or
                text.count("| FAST(16) | 16 MiB |") != 4 or "| target (issue 23)" not in text):
            errors.append(f"mount_results_md.py: exit {g.returncode} {g.stderr}\n{text}")
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print("ok: pdl-bench --exp mount measured and verified 4 mounts at 16 MiB for PDL(256B) "
              "and 4 for FAST(16), refused a tampered expectation, and the results.md blocks "
              "render")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
