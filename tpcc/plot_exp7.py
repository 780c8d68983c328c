#!/usr/bin/python3
"""plot_exp7.py — pdl-tpcc's sweep (PDL paper Exp. 7) to a PNG like the paper's Figure 14.

    /usr/bin/python3 tpcc/plot_exp7.py docs/results/tpcc-sweep.json --out docs/results

writes exp7.png: simulated flash I/O time per TPC-C transaction (ms, log y) against SQLite's
page cache as a percentage of the database (log x), one column per journal mode; top row the
database pages only (what the paper measured), bottom row the total with the journal or WAL.
One colour per method, as in bench/plot_results.py; a method measured in both commit modes
is drawn solid with commit=atomic and dashed with commit=journal. Needs Debian's
python3-matplotlib.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ORDER = ["PDL(256B)", "PDL(2KB)", "OPU", "IPU", "IPL(18KB)", "IPL(64KB)"]
COLORS = {"PDL(256B)": "#d62728", "PDL(2KB)": "#ff7f0e", "OPU": "#1f77b4", "IPU": "#7f7f7f",
          "IPL(18KB)": "#2ca02c", "IPL(64KB)": "#9467bd"}
MARKERS = {"PDL(256B)": "o", "PDL(2KB)": "s", "OPU": "^", "IPU": "v", "IPL(18KB)": "D",
           "IPL(64KB)": "P"}


def method_of(label):
    """'PDL(256B) atomic' -> 'PDL(256B)': labels carry the commit mode when both were run."""
    for suffix in (" atomic", " journal"):
        if label.endswith(suffix):
            return label[: -len(suffix)]
    return label


def order(label):
    base = method_of(label)
    return (ORDER.index(base) if base in ORDER else 99, label.endswith(" journal"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("--out", default=".")
    ap.add_argument("--name", default="exp7.png")
    a = ap.parse_args()
    with open(a.json) as f:
        data = json.load(f)
    points = data.get("sweep", [])
    if not points:
        print(f"plot_exp7: no sweep in {a.json}", file=sys.stderr)
        return 1
    journals = []
    for p in points:
        if p["journal_mode"] not in journals:
            journals.append(p["journal_mode"])
    fig, axes = plt.subplots(2, len(journals), figsize=(4.6 * len(journals), 7.2),
                             squeeze=False, sharex=True)
    for col, j in enumerate(journals):
        series = {}
        for p in points:
            if p["journal_mode"] != j:
                continue
            for m in p["methods"]:
                if m["vfs"] != "pdl":
                    continue
                pt = m["per_transaction"]
                series.setdefault(m["label"], []).append(
                    (p["cache_pct"], pt["database"]["sim_ms"], pt["total"]["sim_ms"]))
        for row, (idx, what) in enumerate([(1, "database pages"), (2, "total (with journal/WAL)")]):
            ax = axes[row][col]
            for label in sorted(series, key=order):
                xs = [v[0] for v in sorted(series[label])]
                ys = [v[idx] for v in sorted(series[label])]
                base = method_of(label)
                ax.plot(xs, ys, marker=MARKERS.get(base, "o"), color=COLORS.get(base),
                        linestyle="--" if label.endswith(" journal") else "-", label=label)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.grid(True, which="both", alpha=0.3)
            safe = "" if j not in ("memory", "off") else " (not crash-safe)"
            ax.set_title(f"journal_mode={j}{safe}: {what}", fontsize=9)
            if row == 1:
                ax.set_xlabel("SQLite cache (% of database pages)")
            if col == 0:
                ax.set_ylabel("simulated flash I/O per transaction (ms)")
        axes[0][col].legend(fontsize=7)
    scale = f"{data.get('warehouses', 1)} warehouse(s), scale {data.get('scale', 1)}"
    fig.suptitle(f"pdl-tpcc Exp. 7 (PDL paper Fig. 14): {scale}; PDL paper Table 1 timing",
                 fontsize=10)
    fig.tight_layout()
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, a.name)
    fig.savefig(path, dpi=110)
    print(f"plot_exp7: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
