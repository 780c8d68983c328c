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
    if errors:
        shown = errors[:40]
        print("bench_smoke: FAILED\n  " + "\n  ".join(shown))
        if len(errors) > len(shown):
            print(f"  ... and {len(errors) - len(shown)} more")
        return 1
    print(f"bench_smoke: ok ({len(recs)} records)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
