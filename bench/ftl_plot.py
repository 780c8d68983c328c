#!/usr/bin/python3
"""ftl_plot.py — pdl-ftlbench's figure in the layout of [IPL-B+tree]'s Fig. 6.

    ftl_plot.py FTLBENCH_JSON OUT_PNG

Panels (a) reads, (b) programs (the paper's writes), (c) erases and (d) simulated I/O time
against SQLite's cache (the paper's buffer frames), one line per method; a row per durability
setting in the JSON. Exit status 0, or 1 without matplotlib or with an unreadable JSON.
"""
import json
import sys

PANELS = [("reads", "(a) reads"), ("programs", "(b) programs (writes)"),
          ("erases", "(c) erases"), ("sim_s", "(d) simulated I/O time (s)")]


def main():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print("ftl_plot.py: matplotlib is not installed", file=sys.stderr)
        return 1
    with open(sys.argv[1]) as f:
        data = json.load(f)
    runs = data["runs"]
    settings = list(dict.fromkeys(r["setting"] for r in runs))
    methods = list(dict.fromkeys(r["method"] for r in runs))
    fig, axes = plt.subplots(len(settings), 4, figsize=(16, 3.6 * len(settings)), squeeze=False)
    for row, setting in enumerate(settings):
        rs = [r for r in runs if r["setting"] == setting]
        for col, (metric, title) in enumerate(PANELS):
            ax = axes[row][col]
            for m in methods:
                # Log scale: a point of 0 (no erase at all) is left out.
                pts = sorted((r["cache_pages"], r[metric]) for r in rs
                             if r["method"] == m and r[metric] > 0)
                if not pts:
                    continue
                r0 = next(r for r in rs if r["method"] == m)
                label = r0["label"] + (f" [{r0['log_blocks']} log]" if r0["log_blocks"] else "")
                ax.plot([x for x, _ in pts], [y for _, y in pts],
                        marker="o" if r0["ftl_device"] else "s",
                        linestyle="--" if r0["ftl_device"] else "-", label=label)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            ax.set_xlabel("SQLite cache (buffer frames, pages)")
            ax.set_title(f"{title} — {setting}, {rs[0]['keys']:,} keys", fontsize=9)
            if col == 0:
                ax.legend(fontsize=6)
    fig.suptitle("Random inserts into SQLite's B-tree: raw NAND (solid) vs FTL devices (dashed)")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)
    plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main())
