#!/usr/bin/python3
"""nvm_smoke.py — smoke test of `./run nvm`'s programs with the NVM entries at a tiny scale, strict.

    nvm_smoke.py PDL_BENCH PDL_SQLBENCH PDL_NVMBENCH PDL_TPCC NVM_RESULTS_MD_PY [NVM_PLOT_PY]

1. pdl-bench Exp. 1 on a tiny chip with pdl-nvm, pdl2k-nvm, ipl-pcram, ipl-pcram512 and their flash-only
   twins: a measured record per method (no error record), the NVM entries' chips with NVM
   (nvm_bytes > 0: 64 KiB for the PDL ones, 18 KiB per block for IPL+PCRAM), the flash-only ones
   without.
2. pdl-sqlbench, 60 single-row transactions per phase, atomic commit, DELETE: every NVM key and
   its flash-only twin present; the NVM entries wrote NVM, the flash-only ones none.
3. pdl-nvmbench, 3,000 records: insert and retrieve records for flash-only IPL and both PCRAM
   variants; the PCRAM ones wrote NVM and programmed no flash log sector, the flash-only one
   wrote no NVM.
4. pdl-tpcc --methods nvm at scale 0.01: every member (both PDL+NVM, PDL(256B), OPU,
   IPL(18KB), IPL+PCRAM(128B)) present with its consistency checks passed.
5. bench/nvm_results_md.py over the four JSON files into a copy of the section's markers: every
   block filled, no "not run"; bench/nvm_plot.py draws the figure (if matplotlib is there).
A method that cannot run fails the test (an engine not built included).
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from bench_run import run, run_json, tpcc_members  # noqa: E402

NVM = ["pdl-nvm", "pdl2k-nvm", "ipl-pcram", "ipl-pcram512"]
TWINS = ["pdl256", "ipl18k"]
BLOCKS = ["nvm-ipl-claims", "nvm-ipl", "nvm-target", "nvm-sqlbench", "nvm-tpcc", "nvm-bench"]


def check_bench(bench, tmp, errors):
    out = os.path.join(tmp, "bench.json")
    recs = run_json([bench, "--exp", "1", "--methods", ",".join(NVM + TWINS), "--blocks", "32",
                     "--data-pct", "40", "--warm-rounds", "0.5", "--measure-ops", "200",
                     "--obsolete", "spare", "--jobs", "2", "--json", out], out)
    for key in NVM + TWINS:
        r = [x for x in recs if x.get("method_key") == key and x["exp"] == "1"]
        if not r or any(x["source"] == "error" for x in r):
            errors.append(f"bench: {key}: {r[0].get('error') if r else 'no record'}")
            continue
        r = r[0]
        want = 64 * 1024 if key.endswith("-nvm") else 18 * 1024 * r["blocks"] if key in NVM else 0
        if r["nvm_bytes"] != want:
            errors.append(f"bench: {key}: chip NVM {r['nvm_bytes']}, expected {want}")
        if not r["total_us"] > 0:
            errors.append(f"bench: {key}: total_us {r['total_us']}")
    return out


def check_sqlbench(sqlbench, tmp, errors):
    out = os.path.join(tmp, "sqlbench.json")
    recs = run_json([sqlbench, "--methods", ",".join(NVM + TWINS), "--rows", "60", "--commit",
                     "atomic", "--journal", "delete", "--size", "32M", "--dir", tmp, "--json", out],
                    out)
    for key in NVM + TWINS:
        for phase in ("insert", "update"):
            r = [x for x in recs if x["vfs"] == "pdl" and x["method"] == key and
                 x["phase"] == phase]
            if len(r) != 1:
                errors.append(f"sqlbench: {key} {phase}: {len(r)} records")
                continue
            r = r[0]
            if (r["nvm_bytes_written_per_txn"] > 0) != (key in NVM) or \
                    (r["nvm_bytes"] > 0) != (key in NVM):
                errors.append(f"sqlbench: {key} {phase}: NVM {r['nvm_bytes']} B, "
                              f"{r['nvm_bytes_written_per_txn']} B written per transaction")
            if r["commit"] != "atomic" or not r["sim_us_per_txn"] > 0:
                errors.append(f"sqlbench: {key} {phase}: {r['commit']}, {r['sim_us_per_txn']} us")
    return out


def check_nvmbench(nvmbench, tmp, errors):
    out = os.path.join(tmp, "nvm-ipl.json")
    data = run_json([nvmbench, "--records", "3000", "--quiet", "--dir", tmp, "--json", out,
                     "--txt", os.path.join(tmp, "nvm-ipl.txt")], out)
    for key in ("ipl18k", "ipl-pcram512", "ipl-pcram"):
        for phase in ("insert", "retrieve"):
            r = [x for x in data["runs"] if x["method"] == key and x["phase"] == phase]
            if len(r) != 1:
                errors.append(f"nvmbench: {key} {phase}: {len(r)} records")
                continue
            r = r[0]
            if not r["paper_s"] > 0 or not r["sim_s"] > 0:
                errors.append(f"nvmbench: {key} {phase}: times {r['paper_s']} / {r['sim_s']}")
            if phase == "insert":
                pcram = key != "ipl18k"
                if (r["nvm_bytes_written"] > 0) != pcram or (r["flash_log_sectors"] > 0) == pcram:
                    errors.append(f"nvmbench: {key}: {r['nvm_bytes_written']} NVM bytes, "
                                  f"{r['flash_log_sectors']} flash log sectors")
    want = {"ipl-pcram512": 512, "ipl-pcram": 128}
    for r in data["runs"]:
        if r["method"] in want and r["log_sector"] != want[r["method"]]:
            errors.append(f"nvmbench: {r['method']}: log sector {r['log_sector']}")
    return out


def check_tpcc(tpcc, tmp, errors):
    want = ("pdl-nvm", "pdl2k-nvm", "pdl", "opu", "ipl", "ipl-pcram")
    members, out = tpcc_members(tpcc, tmp, "nvm", "atomic", want, errors)
    for key, m in ((k, members[k]) for k in want if k in members):
        if (m["nvm"]["bytes_written_per_txn"] > 0) != key.endswith(("nvm", "pcram")):
            errors.append(f"tpcc: {key}: NVM {m['nvm']}")
    return out


def check_md(md_script, plot, files, tmp, errors):
    md = os.path.join(tmp, "results.md")
    with open(md, "w") as f:
        for b in BLOCKS:
            f.write(f"<!-- generated by nvm_results_md.py: {b} -->\n<!-- end: {b} -->\n\n")
    run([sys.executable, md_script, md, "--ipl", files["ipl"], "--sqlbench", files["sql"],
         "--tpcc", files["tpcc"], "--bench", files["bench"]])
    with open(md) as f:
        text = f.read()
    for b in BLOCKS:
        body = text.split(f"nvm_results_md.py: {b} -->\n")[1].split("<!-- end")[0]
        if not body.strip() or "not run" in body:
            errors.append(f"nvm_results_md: block {b}: {body[:300]!r}")
    if run([sys.executable, md_script, md, "--ipl", files["ipl"], "--sqlbench", files["sql"],
            "--tpcc", files["tpcc"], "--bench", files["bench"], "--check"]) is None:
        errors.append("nvm_results_md: --check")
    if plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return
        png = os.path.join(tmp, "nvm-ipl.png")
        run([sys.executable, plot, files["ipl"], png])
        if not os.path.exists(png) or not os.path.getsize(png):
            errors.append("no figure nvm-ipl.png")


def main():
    bench, sqlbench, nvmbench, tpcc, md_script = sys.argv[1:6]
    plot = sys.argv[6] if len(sys.argv) > 6 else None
    errors = []
    files = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn, args in (("bench", check_bench, (bench,)),
                               ("sql", check_sqlbench, (sqlbench,)),
                               ("ipl", check_nvmbench, (nvmbench,)),
                               ("tpcc", check_tpcc, (tpcc,))):
            try:
                files[name] = fn(*args, tmp, errors)
            except (RuntimeError, OSError, ValueError, KeyError, IndexError) as e:
                errors.append(f"{name}: {type(e).__name__}: {e}")
        if len(files) == 4:
            try:
                check_md(md_script, plot, files, tmp, errors)
            except (RuntimeError, OSError, ValueError, KeyError, IndexError) as e:
                errors.append(f"results_md: {type(e).__name__}: {e}")
    if errors:
        print("FAIL:\n  " + "\n  ".join(errors))
        return 1
    print("ok: pdl-bench, pdl-sqlbench, pdl-nvmbench and pdl-tpcc with the NVM entries, and the "
          "results.md generator")
    return 0


if __name__ == "__main__":
    sys.exit(main())
