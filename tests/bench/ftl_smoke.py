#!/usr/bin/python3
"""ftl_smoke.py — smoke test of `./run ftl`'s programs at a tiny scale, strict.

    ftl_smoke.py PDL_FTLBENCH PDL_TPCC FTL_TPCC_PY FTL_RESULTS_MD_PY [FTL_PLOT_PY]

1. pdl-ftlbench, 3,000 keys (durable 300), one cache size, every default method (raw NAND
   PDL(256B), PDL(2KB), OPU, IPL(18KB); FTL(page), BAST and FAST with 16 and 32 log blocks):
   a record per setting x method, reads, programs and simulated time > 0, the content check
   passed (the program fails otherwise), BAST/FAST with their scaled log blocks (>= 2, the 32
   variant at least the 16's), and on the paper setting every FTL device programs at least as
   many pages as PDL(256B) (whole pages in place vs differentials).
2. pdl-tpcc at scale 0.01 with --methods pdl,ftl (PDL(256B) in both commit modes, the eight FTL
   devices with the journal on the device): every member present with its write response
   time, throughput and checks ok, the FTL members in commit=journal.
3. bench/ftl_tpcc.py --quick: the StableBuffer experiment's JSON (direct, gains, the sweep's
   points in three modes x three sizes x three FTLs), and bench/ftl_results_md.py over the two
   JSON files into a copy of the section's markers: every block filled, no "not run".
A missing method fails the test (an engine not built included).
"""
import json
import os
import subprocess
import sys
import tempfile

RAW = ["pdl256", "pdl2k", "opu", "ipl18k"]
FTLS = ["ftl-page", "bast16", "bast32", "fast16", "fast32"]
ALL_FTL = FTLS + ["sb-page", "sb-bast16", "sb-fast16"]
BLOCKS = ["ftl-iplbtree-claims", "ftl-inserts", "ftl-sb-claims", "ftl-sb-sweep", "ftl-tpcc"]


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n" +
                           "\n".join(p.stderr.splitlines()[-12:]))
    return p.stdout


def check_ftlbench(bench, tmp, errors):
    out = os.path.join(tmp, "ftlbench.json")
    run([bench, "--keys", "3000", "--durable-keys", "300", "--cache-pct", "4", "--quiet",
         "--dir", tmp, "--json", out, "--txt", os.path.join(tmp, "ftlbench.txt")])
    with open(out) as f:
        data = json.load(f)
    runs = data["runs"]
    for s in ("paper", "durable"):
        for m in RAW + FTLS:
            r = [x for x in runs if x["setting"] == s and x["method"] == m]
            if len(r) != 1:
                errors.append(f"ftlbench: {s} {m}: {len(r)} records, expected 1")
                continue
            r = r[0]
            for k in ("reads", "programs", "sim_s"):
                if not r[k] > 0:
                    errors.append(f"ftlbench: {s} {m}: {k} = {r[k]}")
            if m.startswith(("bast", "fast")) and r["log_blocks"] < 2:
                errors.append(f"ftlbench: {m}: {r['log_blocks']} log blocks")
            if r["ftl_device"] != (m in FTLS):
                errors.append(f"ftlbench: {m}: ftl_device {r['ftl_device']}")
    paper = {r["method"]: r for r in runs if r["setting"] == "paper"}
    for a, b in (("bast16", "bast32"), ("fast16", "fast32")):
        if a in paper and b in paper and paper[b]["log_blocks"] < paper[a]["log_blocks"]:
            errors.append(f"ftlbench: {b} has fewer log blocks than {a}")
    if "pdl256" in paper:
        for m in FTLS:
            if m in paper and paper[m]["programs"] < paper["pdl256"]["programs"]:
                errors.append(f"ftlbench: {m} programmed {paper[m]['programs']} pages, fewer "
                              f"than PDL(256B)'s {paper['pdl256']['programs']}")
    if not os.path.getsize(os.path.join(tmp, "ftlbench.txt")):
        errors.append("ftlbench: empty --txt")
    return out


def check_tpcc(tpcc, tmp, errors):
    out = os.path.join(tmp, "tpcc.json")
    run([tpcc, "--scale", "0.01", "--transactions", "60", "--warmup", "60", "--journal-mode",
         "delete", "--methods", "pdl,ftl", "--commit", "atomic,journal", "--no-unix", "--quiet",
         "--work-dir", tmp, "--json", out])
    with open(out) as f:
        data = json.load(f)
    members = {m["key"]: m for m in data["runs"][0]["methods"]}
    for key in ["pdl-atomic", "pdl-journal"] + [k + "-journal" for k in ALL_FTL]:
        m = members.get(key)
        if not m:
            errors.append(f"tpcc: no member {key} (have {', '.join(members)})")
            continue
        io = m["io"]
        if not (io["write_response_ms"] > 0 and io["sim_transactions_per_s"] > 0 and
                io["write_calls"] > 0):
            errors.append(f"tpcc: {key}: io {io}")
        if not m["check"]["ok"]:
            errors.append(f"tpcc: {key}: check failed")
    for k in ALL_FTL:
        if k + "-atomic" in members:
            errors.append(f"tpcc: {k} ran with atomic commit")


def check_experiment(script, md_script, plot, tpcc, ftlbench_json, tmp, errors):
    out_dir = os.path.join(tmp, "results")
    run([sys.executable, script, tpcc, "--quick", "--out-dir", out_dir])
    with open(os.path.join(out_dir, "ftl-tpcc.json")) as f:
        res = json.load(f)
    if len(res["gains"]) != 3:
        errors.append(f"ftl_tpcc: gains for {list(res['gains'])}")
    if len(res["sweep"]) != 3 * 3 * 3:
        errors.append(f"ftl_tpcc: {len(res['sweep'])} sweep points, expected 27")
    for p in res["sweep"]:
        if not (p["write_response_ms"] > 0 and p["sim_transactions_per_s"] > 0 and p["sb_slots"]):
            errors.append(f"ftl_tpcc: point {p['key']} {p['size_pct']}: {p}")
    md = os.path.join(tmp, "results.md")
    with open(md, "w") as f:
        for b in BLOCKS:
            f.write(f"<!-- generated by ftl_results_md.py: {b} -->\n<!-- end: {b} -->\n\n")
        f.write("<!-- generated by ftl_results_md.py: ftl-sqlbench -->\n"
                "<!-- end: ftl-sqlbench -->\n")
    run([sys.executable, md_script, md, "--ftlbench", ftlbench_json, "--tpcc",
         os.path.join(out_dir, "ftl-tpcc.json")])
    with open(md) as f:
        text = f.read()
    for b in BLOCKS:
        body = text.split(f"ftl_results_md.py: {b} -->\n")[1].split("<!-- end")[0]
        if not body.strip() or "not run" in body:
            errors.append(f"ftl_results_md: block {b}: {body[:300]!r}")
    if plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return
        png = os.path.join(tmp, "ftlbench.png")
        run([sys.executable, plot, ftlbench_json, png])
        for p in (png, os.path.join(out_dir, "ftl-tpcc.png")):
            if not os.path.exists(p) or not os.path.getsize(p):
                errors.append(f"no figure {os.path.basename(p)}")


def main():
    bench, tpcc, script, md_script = sys.argv[1:5]
    plot = sys.argv[5] if len(sys.argv) > 5 else None
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            fb = check_ftlbench(bench, tmp, errors)
            check_tpcc(tpcc, tmp, errors)
            check_experiment(script, md_script, plot, tpcc, fb, tmp, errors)
        except (RuntimeError, OSError, ValueError, KeyError, IndexError) as e:
            errors.append(f"{type(e).__name__}: {e}")
    if errors:
        print("FAIL:\n  " + "\n  ".join(errors))
        return 1
    print("ok: pdl-ftlbench, pdl-tpcc on the FTL devices and the StableBuffer experiment")
    return 0


if __name__ == "__main__":
    sys.exit(main())
