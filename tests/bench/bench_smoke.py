#!/usr/bin/python3
"""bench_smoke.py — smoke test of pdl-bench's [PDL] experiments and of the plot script.

    bench_smoke.py PDL_BENCH [PLOT_SCRIPT]

Runs `pdl-bench --exp 1,2,3,4,5,6` on a tiny chip (32 blocks, 40 % data, half a GC round of
warm-up, 200 operations per point) over every method, and checks the JSON: a measured record
for each experiment x method x obsolete mode (exp 1 also the IPL /diff variants), every
%ChangedByOneU_Op / %UpdateOps / T_read point, Exp. 5's derived figures equal to the measured
ones, one CSV per experiment. Strict: a method whose store cannot be formatted (IPU/IPL before
their engine is built) fails the test. If PLOT_SCRIPT is given and matplotlib is importable,
the plots are drawn into a temporary directory and exp1.png ... exp6.png must exist.

Then the paper-fidelity runs, as tiny: `--exp 1,iplsweep,2-8k --placement both` over PDL(2KB),
its no-merge twin and IPL(18KB) with 512- and 128-byte log sectors (records carry placement,
log_sector, nop, logical_page; every log region x sector x placement of the sweep; Exp. 2 at
8 KB logical pages N=1..8), `--logical-page 8192` changing 2 % of 8192 bytes, `--gc-victim
greedy|oldest` (recorded, and collecting differently), and bad --placement / --logical-page /
--gc-victim values refused with exit status 2.
"""
import json
import os
import subprocess
import sys
import tempfile

PAPER = ["PDL(256B)", "PDL(2KB)", "OPU", "IPU", "IPL(18KB)", "IPL(64KB)"]
EXP1_EXTRA = ["IPL(18KB)/diff", "IPL(64KB)/diff"]
MODES = {"PDL(256B)": ["spare", "memory"], "PDL(2KB)": ["spare", "memory"],
         "OPU": ["spare", "memory"]}


def main():
    bench = sys.argv[1]
    plot = sys.argv[2] if len(sys.argv) > 2 else None
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        out_json = os.path.join(tmp, "bench.json")
        cmd = [bench, "--exp", "1,2,3,4,5,6", "--blocks", "32", "--data-pct", "40",
               "--warm-rounds", "0.5", "--measure-ops", "200", "--obsolete", "both",
               "--jobs", "2", "--json", out_json, "--csv", os.path.join(tmp, "")]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            errors.append(f"pdl-bench exited {p.returncode}; stderr tail:\n" +
                          "\n".join(p.stderr.splitlines()[-15:]))
        if not os.path.exists(out_json):
            print("\n".join(errors) or "no JSON written")
            return 1
        with open(out_json) as f:
            recs = json.load(f)
        ok = [r for r in recs if r.get("source") != "error"]
        for r in recs:
            if r.get("source") == "error":
                errors.append(f"exp {r['exp']} {r['method']} {r['obsolete']}: {r['error']}")
                break

        def have(exp, method, mode, **kv):
            return any(r["exp"] == exp and r["method"] == method and r["obsolete"] == mode and
                       all(r.get(k) == v for k, v in kv.items()) for r in ok)

        for exp in "123456":
            methods = PAPER + (EXP1_EXTRA if exp == "1" else [])
            for m in methods:
                for mode in MODES.get(m, ["none"]):
                    if not have(exp, m, mode):
                        errors.append(f"exp {exp}: no record for {m} obsolete={mode}")
                        continue
                    if exp in "26":
                        for n in range(1, 9):
                            if not have(exp, m, mode, n_updates=n):
                                errors.append(f"exp {exp}: {m} {mode}: no N={n}")
                    if exp == "3":
                        for n in (1, 5):
                            for c in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100):
                                if not have(exp, m, mode, n_updates=n, changed_pct=c):
                                    errors.append(f"exp 3: {m} {mode}: no N={n} changed={c}")
                    if exp == "4":
                        for n in (1, 5):
                            for u in range(0, 101, 10):
                                if not have(exp, m, mode, n_updates=n, update_pct=u):
                                    errors.append(f"exp 4: {m} {mode}: no N={n} updateops={u}")
                    if exp == "5":
                        for tw in (500, 1000):
                            if not have(exp, m, mode, source="derived", t_write_us=tw):
                                errors.append(f"exp 5: {m} {mode}: no derived T_write={tw}")
                        meas = [r for r in ok if r["exp"] == "5" and r["method"] == m and
                                r["obsolete"] == mode and r["source"] == "measured"]
                        if not meas:
                            errors.append(f"exp 5: {m} {mode}: no measured point")
                        for r in meas:
                            d = r.get("derived_minus_measured_us")
                            if d is None or abs(d) > 1e-6 * max(1.0, r["total_us"]):
                                errors.append(f"exp 5: {m} {mode} T_read={r['t_read_us']} "
                                              f"T_write={r['t_write_us']}: derived - measured "
                                              f"= {d}")
        for r in ok:
            for k in ("read_us", "write_us", "total_us", "erases_per_op", "measure_ops",
                      "gc_rounds_reached"):
                if r.get(k) is None:
                    errors.append(f"exp {r['exp']} {r['method']}: field {k} missing")
            if r["source"] == "measured" and abs(r["read_us"] + r["write_us"] -
                                                 r["total_us"]) > 1e-6 * r["total_us"] + 1e-9:
                errors.append(f"exp {r['exp']} {r['method']}: read + write != total")
        for exp in "123456":
            if not os.path.exists(os.path.join(tmp, f"exp{exp}.csv")):
                errors.append(f"exp{exp}.csv not written")

        if plot:
            try:
                import matplotlib  # noqa: F401
                have_mpl = True
            except ImportError:
                have_mpl = False
                print("matplotlib not importable: plot script not checked")
            if have_mpl:
                pdir = os.path.join(tmp, "plots")
                q = subprocess.run([sys.executable, plot, out_json, "--out", pdir],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                if q.returncode != 0:
                    errors.append(f"plot script exited {q.returncode}: {q.stderr[-2000:]}")
                for exp in "123456":
                    png = os.path.join(pdir, f"exp{exp}.png")
                    if not os.path.exists(png) or os.path.getsize(png) == 0:
                        errors.append(f"plot: exp{exp}.png not drawn")
    errors += fidelity_checks(bench, plot)
    if errors:
        shown = errors[:40]
        print("bench_smoke: FAILED\n  " + "\n  ".join(shown))
        if len(errors) > len(shown):
            print(f"  ... and {len(errors) - len(shown)} more")
        return 1
    print(f"bench_smoke: ok ({len(recs)} records)")
    return 0


TINY = ["--blocks", "32", "--data-pct", "40", "--warm-rounds", "0.5", "--measure-ops", "200",
        "--jobs", "2"]


def fidelity_checks(bench, plot):
    """Placement, log sectors, the IPL sweep, no-merge and 8 KB logical pages; the errors."""
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        out_json = os.path.join(tmp, "fid.json")
        cmd = [bench, "--exp", "1,iplsweep,2-8k", "--placement", "both", "--methods",
               "pdl2k,pdl2k-nomerge,ipl18k,ipl18k-s128", "--obsolete", "spare",
               "--json", out_json, "--csv", os.path.join(tmp, "")] + TINY
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            return [f"fidelity run exited {p.returncode}: " + p.stderr[-1500:]]
        with open(out_json) as f:
            recs = json.load(f)
        for r in recs:
            for k in ("placement", "log_sector", "nop", "logical_page"):
                if k not in r:
                    errors.append(f"exp {r['exp']} {r['method']}: field {k} missing")
        for pl in ("fields", "run"):
            for m in ("PDL(2KB)", "PDL(2KB)/no-merge", "IPL(18KB)", "IPL(18KB)/128B"):
                if not [r for r in recs if r["exp"] == "1" and r["method"] == m
                        and r.get("placement") == pl]:
                    errors.append(f"exp 1: no {m} record with placement {pl}")
        for r in recs:
            if r["method"] == "IPL(18KB)/128B" and (r["log_sector"], r["nop"]) != (128, 16):
                errors.append(f"IPL(18KB)/128B: log_sector {r['log_sector']} nop {r['nop']}")
            if r["method"] == "IPL(18KB)" and (r["log_sector"], r["nop"]) != (512, 4):
                errors.append(f"IPL(18KB): log_sector {r['log_sector']} nop {r['nop']}")
        sweep = {(r["log_region"], r["log_sector"], r["placement"])
                 for r in recs if r["exp"] == "iplsweep"}
        for kb in (8, 12, 16, 18, 24, 32, 48, 64):
            for sector in (512, 128):
                for pl in ("fields", "run"):
                    if (kb * 1024, sector, pl) not in sweep:
                        errors.append(f"iplsweep: no {kb}KB x {sector} B x {pl}")
        k8 = [r for r in recs if r["exp"] == "2-8k"]
        if {r["n_updates"] for r in k8} != set(range(1, 9)):
            errors.append("exp 2-8k: not every N of 1..8")
        if any(r["logical_page"] != 8192 or r["changed_bytes"] != 164 for r in k8):
            errors.append("exp 2-8k: logical_page != 8192 or changed_bytes != 164")
        if not any(r["exp"] == "1" and r["method"] == "PDL(2KB)/no-merge" and
                   r["stats_gc_merges"] == 0 for r in recs):
            errors.append("PDL(2KB)/no-merge: no record without GC merges")
        if "PDL(2KB) with vs without the GC merge" not in p.stdout:
            errors.append("exp 1: no GC-merge table")
        for name in ("iplsweep.csv", "exp2-8k.csv"):
            if not os.path.exists(os.path.join(tmp, name)):
                errors.append(f"{name} not written")
        if plot:
            try:
                import matplotlib  # noqa: F401
                pdir = os.path.join(tmp, "plots")
                q = subprocess.run([sys.executable, plot, out_json, "--out", pdir],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for png in ("exp1.png", "exp1-run.png", "iplsweep.png", "exp2-8k.png"):
                    if not os.path.exists(os.path.join(pdir, png)):
                        errors.append(f"plot: {png} not drawn: {q.stderr[-500:]}")
            except ImportError:
                pass

        cmd = [bench, "--exp", "1", "--methods", "opu", "--obsolete", "spare",
               "--logical-page", "8192", "--json", out_json] + TINY
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            errors.append(f"--logical-page 8192 run exited {p.returncode}: {p.stderr[-500:]}")
        else:
            with open(out_json) as f:
                r = json.load(f)[0]
            if (r["logical_page"], r["changed_bytes"], r["placement"]) != (8192, 164, "fields"):
                errors.append(f"--logical-page 8192: record {r['logical_page']} "
                              f"{r['changed_bytes']} {r['placement']}")
            elif r["reads_per_op"] < 4:
                errors.append(f"--logical-page 8192: {r['reads_per_op']} reads per op (< 4)")

        # GC's victim order: the records say which, and the oldest-first order collects
        # differently from greedy on the same seed.
        victims = {}
        for victim in ("greedy", "oldest"):
            cmd = [bench, "--exp", "1", "--methods", "opu", "--obsolete", "spare",
                   "--gc-victim", victim, "--json", out_json] + TINY
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                errors.append(f"--gc-victim {victim} run exited {p.returncode}: {p.stderr[-500:]}")
                continue
            with open(out_json) as f:
                r = json.load(f)[0]
            if r.get("gc_victim") != victim:
                errors.append(f"--gc-victim {victim}: record says {r.get('gc_victim')!r}")
            victims[victim] = (r["stats_gc_base_moves"], r["erases_per_op"], r["total_us"])
        if len(victims) == 2 and victims["greedy"] == victims["oldest"]:
            errors.append(f"--gc-victim oldest collected exactly as greedy: {victims}")
    for bad in (["--placement", "middle"], ["--logical-page", "3000"], ["--gc-victim", "newest"]):
        p = subprocess.run([bench, "--exp", "1"] + bad, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 2 or bad[0] not in p.stderr:
            errors.append(f"{' '.join(bad)}: exit {p.returncode}, stderr {p.stderr[-300:]!r}")
    return errors


if __name__ == "__main__":
    sys.exit(main())
