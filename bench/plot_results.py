#!/usr/bin/python3
"""plot_results.py — pdl-bench's JSON (Exp. 1-6 of [PDL]) to PNG figures like the paper's
Figures 8-13.

    /usr/bin/python3 bench/plot_results.py docs/results/bench.json --out docs/results

writes, for each experiment present in the JSON (records with "exp" "1".."6"):
    exp1.png  Fig. 8: read (a), write (b; GC part hatched, the non-GC read part lighter) and
              overall (c) time per update operation, one bar per method (and obsolete mode)
    exp2.png  Fig. 9: overall time per update op vs N_updates_till_write
    exp3.png  Fig. 10: overall time per update op vs %ChangedByOneU_Op (log x), N = 1 and 5
    exp4.png  Fig. 11: overall time per operation vs %UpdateOps, N = 1 and 5
    exp5.png  Fig. 12: overall time per update op vs T_read, T_write = 500 and 1000 us
              (lines: derived from operation counts; hollow markers: measured directly)
    exp6.png  Fig. 13: erases per update op vs N_updates_till_write
    expN-run.png  the same figure for the records of placement "run" (each change one
              contiguous run), beside expN.png (placement "fields", 8-byte fields at random
              places), when the JSON has them (pdl-bench --placement both, --exp all)
    iplsweep.png  IPL's overall time per update op vs log region (8-64 KB), one line per log
              sector (512, 128 B) and placement ([PDL] §5.2 Exp. 1's choice of IPL(18KB/64KB))
    exp2-8k.png   Exp. 2 with 8 KB logical pages ([PDL] §5.1)
Lines/bars: one colour per method; PDL/OPU with obsolete marks in RAM (obsolete=memory, the
§6 enhancement) dashed / lighter. IPU is ~70 ms per update, 30-700x the others: line plots use
a log y axis (labelled in us); in Fig. 8 bars taller than the axis are clipped and labelled
with their value. Needs Debian's python3-matplotlib (run with /usr/bin/python3).
"""
import argparse
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

METHOD_ORDER = ["PDL(256B)", "PDL(2KB)", "OPU", "IPU", "IPL(18KB)", "IPL(64KB)",
                "IPL(18KB)/diff", "IPL(64KB)/diff", "IPL(18KB)/128B", "IPL(64KB)/128B",
                "PDL(2KB)/no-merge"]
COLORS = {"PDL(256B)": "#d62728", "PDL(2KB)": "#ff7f0e", "OPU": "#1f77b4", "IPU": "#7f7f7f",
          "IPL(18KB)": "#2ca02c", "IPL(64KB)": "#9467bd", "IPL(18KB)/diff": "#98df8a",
          "IPL(64KB)/diff": "#c5b0d5", "IPL(18KB)/128B": "#17becf", "IPL(64KB)/128B": "#8c564b",
          "PDL(2KB)/no-merge": "#bcbd22"}
MARKERS = {"PDL(256B)": "o", "PDL(2KB)": "s", "OPU": "^", "IPU": "v", "IPL(18KB)": "D",
           "IPL(64KB)": "P", "IPL(18KB)/diff": "d", "IPL(64KB)/diff": "X",
           "IPL(18KB)/128B": "<", "IPL(64KB)/128B": ">", "PDL(2KB)/no-merge": "*"}
PLACEMENT_NOTE = {"fields": "", "run": " [placement run: each change one contiguous run]"}


def method_rank(m):
    return METHOD_ORDER.index(m) if m in METHOD_ORDER else len(METHOD_ORDER)


def series_key(r):
    return (r["method"], r.get("obsolete", "none"))


def series_sort(keys):
    # The paper's mode first (spare / none), then memory; methods in METHOD_ORDER.
    return sorted(keys, key=lambda k: (k[1] == "memory", method_rank(k[0])))


def series_label(key):
    method, obs = key
    return method if obs == "none" else f"{method} {obs}"


def style(key):
    method, obs = key
    memory = obs == "memory"
    return dict(color=COLORS.get(method, "black"), marker=MARKERS.get(method, "o"),
                linestyle="--" if memory else "-", markersize=5,
                markerfacecolor="white" if memory else COLORS.get(method, "black"))


def us_formatter():
    def f(v, _pos):
        if v <= 0:
            return ""
        if v >= 1:
            return f"{v:,.0f}"
        return f"{v:g}"
    return FuncFormatter(f)


def log_y(ax, unit_label):
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(us_formatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel(unit_label)
    ax.grid(True, which="major", axis="both", alpha=0.3)
    log_ticks(ax)


def log_ticks(ax):
    """Denser labelled ticks when the data span few decades (call after plotting)."""
    lo, hi = ax.get_ylim()
    decades = math.log10(hi / lo) if lo > 0 and hi > lo else 3
    if decades < 1.2:
        subs = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0)
    elif decades < 4:
        subs = (1.0, 2.0, 5.0)
    else:
        subs = (1.0,)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))


def good(records, exp, placement=None):
    return [r for r in records if r.get("exp") == exp and r.get("source") != "error"
            and r.get("total_us") is not None
            and (placement is None or r.get("placement", "fields") == placement)]


def lines(ax, recs, x_field, y_field, where=None):
    keys = series_sort({series_key(r) for r in recs if where is None or where(r)})
    for k in keys:
        pts = sorted((r[x_field], r[y_field]) for r in recs
                     if series_key(r) == k and (where is None or where(r)))
        if not pts:
            continue
        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=series_label(k), **style(k))
    return keys


def footer(fig, recs):
    r = recs[0]
    fig.text(0.01, 0.005,
             f"pdl-bench: {r['blocks']}-block chip ({r['chip_mib']:.0f} MiB), "
             f"{r['logical_pages']} logical pages ({r['data_pct']:.0f}% of data pages), "
             f"warm-up {r['warm_rounds']:g} GC rounds, seed {r['seed']}; simulated flash time "
             f"(Table 1 unless stated)", fontsize=7, color="0.35")


def save(fig, path):
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


# ---- Fig. 8 ----

def bar_panel(ax, names, values, title, ylabel, top, stacks=None):
    xs = range(len(names))
    for i, (name, v) in enumerate(zip(names, values)):
        method, obs = name
        color = COLORS.get(method, "black")
        alpha = 0.55 if obs == "memory" else 1.0
        shown = min(v, top)
        if stacks is None:
            ax.bar(i, shown, color=color, alpha=alpha, edgecolor="black", linewidth=0.5)
        else:
            # bottom to top: non-GC read (lighter), rest of non-GC, GC (hatched)
            read_part, other_part, gc_part = stacks[i]
            bottom = 0.0
            for part, kw in ((read_part, dict(color=color, alpha=0.35 * alpha)),
                             (other_part, dict(color=color, alpha=alpha)),
                             (gc_part, dict(color=color, alpha=alpha, hatch="///"))):
                h = max(0.0, min(part, top - bottom))
                if h > 0:
                    ax.bar(i, h, bottom=bottom, edgecolor="black", linewidth=0.5, **kw)
                bottom += part
        if v > top:
            ax.text(i, top * 0.97, f"{v:,.0f}\n(clipped)", ha="center", va="top", fontsize=7,
                    rotation=90, color="black",
                    bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=1))
        else:
            ax.text(i, v, f"{v:,.0f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([series_label(n) for n in names], rotation=60, ha="right", fontsize=8)
    ax.set_ylim(0, top)
    ax.set_title(title, fontsize=10)
    ax.set_ylabel(ylabel)
    ax.grid(True, axis="y", alpha=0.3)


def plot_exp1(recs, path, note=""):
    by = {}
    for r in recs:
        by[series_key(r)] = r
    names = series_sort(by.keys())
    reads = [by[n]["read_us"] for n in names]
    writes = [by[n]["write_us"] for n in names]
    totals = [by[n]["total_us"] for n in names]
    stacks = []
    for n in names:
        r = by[n]
        gc = r.get("gc_us") or 0.0
        nongc_read = max(0.0, (r.get("write_read_us") or 0.0) - (r.get("gc_read_us") or 0.0))
        stacks.append((nongc_read, max(0.0, r["write_us"] - gc - nongc_read), gc))
    # One y range for (b) and (c), set by the methods other than IPU so they stay readable.
    rest = [t for n, t in zip(names, totals) if n[0] != "IPU"] or totals
    top = max(rest) * 1.18
    top_read = max(reads) * 1.25
    fig, axes = plt.subplots(1, 3, figsize=(15, 5.2))
    bar_panel(axes[0], names, reads, "(a) reading step", "time per update op (us)", top_read)
    bar_panel(axes[1], names, writes,
              "(b) writing step (hatched: GC; lighter: reads outside GC)",
              "time per update op (us)", top, stacks)
    bar_panel(axes[2], names, totals, "(c) overall", "time per update op (us)", top)
    r = recs[0]
    fig.suptitle(
        "Exp. 1 (Fig. 8): read, write and overall time per update operation "
        f"(N_updates_till_write = {r['n_updates']}, %ChangedByOneU_Op = {r['changed_pct']:g}, "
        f"T_read = {r['t_read_us']} us, T_write = {r['t_write_us']} us){note}", fontsize=11)
    footer(fig, recs)
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    save(fig, path)


# ---- Fig. 9 / 13 ----

def plot_vs_n(recs, path, y_field, title, ylabel):
    fig, ax = plt.subplots(figsize=(8, 5.5))
    lines(ax, recs, "n_updates", y_field)
    ax.set_xlabel("N_updates_till_write")
    ax.set_xticks(sorted({r["n_updates"] for r in recs}))
    log_y(ax, ylabel)
    if y_field != "total_us":
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    log_ticks(ax)
    ax.set_title(title, fontsize=11)
    ax.legend(fontsize=8, ncol=2)
    footer(fig, recs)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, path)


# ---- Fig. 10 / 11 / 12: two panels ----

def two_panels(recs, path, split_field, split_values, split_name, x_field, xlabel, title,
               ylabel, log_x=False, measured_overlay=False):
    fig, axes = plt.subplots(1, len(split_values), figsize=(14, 5.5), sharey=True)
    if len(split_values) == 1:
        axes = [axes]
    for ax, sv in zip(axes, split_values):
        if measured_overlay:
            lines(ax, recs, x_field, "total_us",
                  where=lambda r, sv=sv: r[split_field] == sv and r["source"] == "derived")
            first = True
            for r in recs:
                if r[split_field] == sv and r["source"] == "measured":
                    ax.plot([r[x_field]], [r["total_us"]], linestyle="none", marker="o",
                            markersize=10, markerfacecolor="none", markeredgecolor="black",
                            label="measured directly" if first else None)
                    first = False
        else:
            lines(ax, recs, x_field, "total_us", where=lambda r, sv=sv: r[split_field] == sv)
        ax.set_xlabel(xlabel)
        if log_x:
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        log_y(ax, ylabel if ax is axes[0] else "")
        ax.set_title(f"{split_name} = {sv:g}", fontsize=10)
        ax.legend(fontsize=7, ncol=2)
    for ax in axes:
        log_ticks(ax)
    fig.suptitle(title, fontsize=11)
    footer(fig, recs)
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    save(fig, path)


# ---- the IPL log-region sweep ----

def plot_iplsweep(recs, path):
    fig, ax = plt.subplots(figsize=(8, 5.5))
    keys = sorted({(r["log_sector"], r.get("placement", "fields")) for r in recs},
                  key=lambda k: (-k[0], k[1]))
    colors = {512: "#2ca02c", 128: "#17becf"}
    for sector, pl in keys:
        pts = sorted((r["log_region"] / 1024, r["total_us"]) for r in recs
                     if r["log_sector"] == sector and r.get("placement", "fields") == pl)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o" if pl == "fields" else "s",
                color=colors.get(sector, "black"), linestyle="-" if pl == "fields" else "--",
                label=f"log sector {sector} B, placement {pl}")
    ax.set_xlabel("log region per block (KB)")
    ax.set_xticks(sorted({r["log_region"] / 1024 for r in recs}))
    ax.set_ylabel("overall time per update op (us)")
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    ax.set_title("IPL(y), y = 8 .. 64 KB ([PDL] §5.2 Exp. 1): overall time per update op\n"
                 "(N_updates_till_write = 1, %ChangedByOneU_Op = 2)", fontsize=11)
    ax.legend(fontsize=8)
    footer(fig, recs)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    save(fig, path)


def plot_experiment(exp, recs, path, note=""):
    if exp == "1":
        plot_exp1(recs, path, note)
    elif exp in ("2", "2-8k"):
        what = "Exp. 2 (Fig. 9)" if exp == "2" else "Exp. 2 with 8 KB logical pages ([PDL] §5.1)"
        plot_vs_n(recs, path, "total_us",
                  f"{what}: overall time per update operation\n"
                  "vs N_updates_till_write (%ChangedByOneU_Op = 2)" + note,
                  "overall time per update op (us)")
    elif exp == "3":
        ns = sorted({r["n_updates"] for r in recs})
        two_panels(recs, path, "n_updates", ns, "N_updates_till_write", "changed_pct",
                   "%ChangedByOneU_Op", "Exp. 3 (Fig. 10): overall time per update "
                   "operation vs %ChangedByOneU_Op" + note, "overall time per update op (us)",
                   log_x=True)
    elif exp == "4":
        ns = sorted({r["n_updates"] for r in recs})
        two_panels(recs, path, "n_updates", ns, "N_updates_till_write", "update_pct",
                   "%UpdateOps", "Exp. 4 (Fig. 11): overall time per operation for mixes "
                   "of read-only and update operations (%ChangedByOneU_Op = 2)" + note,
                   "overall time per operation (us)")
    elif exp == "5":
        tws = sorted({r["t_write_us"] for r in recs if r["source"] == "derived"})
        two_panels(recs, path, "t_write_us", tws, "T_write (us)", "t_read_us",
                   "T_read (us)", "Exp. 5 (Fig. 12): overall time per update operation vs "
                   "flash timing (N_updates_till_write = 1, %ChangedByOneU_Op = 2, "
                   "T_erase = 1500 us)\nlines: derived from the operation counts of one "
                   "run at Table 1 timing; circles: measured on chips with that timing" + note,
                   "overall time per update op (us)", measured_overlay=True)
    elif exp == "6":
        plot_vs_n(recs, path, "erases_per_update",
                  "Exp. 6 (Fig. 13): erase operations per update operation\n"
                  "vs N_updates_till_write (%ChangedByOneU_Op = 2)" + note,
                  "erases per update op")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="pdl-bench --json output")
    ap.add_argument("--out", default="docs/results", help="directory for the PNGs")
    ap.add_argument("--prefix", default="", help="file name prefix (e.g. paper-)")
    a = ap.parse_args()
    with open(a.json) as f:
        records = json.load(f)
    os.makedirs(a.out, exist_ok=True)
    out = lambda n: os.path.join(a.out, f"{a.prefix}exp{n}.png")  # noqa: E731
    made = 0
    for exp in "123456":
        for pl in ("fields", "run"):
            recs = good(records, exp, pl)
            if not recs:
                if pl == "fields":
                    print(f"exp {exp}: no records, no figure", file=sys.stderr)
                continue
            name = exp if pl == "fields" else f"{exp}-run"
            plot_experiment(exp, recs, out(name), PLACEMENT_NOTE[pl])
            made += 1
    recs = good(records, "2-8k")
    if recs:
        plot_experiment("2-8k", recs, out("2-8k"))
        made += 1
    recs = good(records, "iplsweep")
    if recs:
        plot_iplsweep(recs, os.path.join(a.out, f"{a.prefix}iplsweep.png"))
        made += 1
    if made == 0:
        print("plot_results: no experiment records in " + a.json, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
