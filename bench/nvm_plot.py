#!/usr/bin/python3
"""nvm_plot.py — pdl-nvmbench's figure in the layout of [IPL-PCRAM]'s Fig. 2.

    nvm_plot.py NVMBENCH_JSON OUT_PNG

Panels (a) random insertion and (b) random retrieval: simulated time per method at
[IPL-PCRAM] Table 1's flash timing plus PCRAM (the paper's setting; hatched: at [PDL] Table 1's
flash timing), and (c) block merges during the insertion. Exit status 0, or 1 without
matplotlib or with an unreadable JSON.
"""
import json
import sys


def main():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("nvm_plot.py: matplotlib is not installed", file=sys.stderr)
        return 1
    try:
        with open(sys.argv[1]) as f:
            data = json.load(f)
    except (OSError, ValueError, IndexError) as e:
        print(f"nvm_plot.py: {e}", file=sys.stderr)
        return 1
    runs = data["runs"]
    labels = list(dict.fromkeys(r["label"] for r in runs))
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    colours = ["#888888", "#4c72b0", "#dd8452", "#55a868", "#c44e52"]
    for ax, phase, title in ((axes[0], "insert", "(a) random insertion"),
                             (axes[1], "retrieve", "(b) random retrieval")):
        xs = range(len(labels))
        paper = [next((r["paper_s"] for r in runs if r["label"] == l and r["phase"] == phase), 0)
                 for l in labels]
        sim = [next((r["sim_s"] for r in runs if r["label"] == l and r["phase"] == phase), 0)
               for l in labels]
        ax.bar([x - 0.2 for x in xs], paper, 0.4, color=colours[:len(labels)],
               label="[IPL-PCRAM] flash timing")
        ax.bar([x + 0.2 for x in xs], sim, 0.4, color=colours[:len(labels)], alpha=0.45,
               hatch="//", label="[PDL] flash timing")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, rotation=15, fontsize=8)
        ax.set_ylabel("simulated time (s)")
        ax.set_title(title)
        ax.legend(fontsize=7)
    merges = [next((r["merges"] for r in runs if r["label"] == l and r["phase"] == "insert"), 0)
              for l in labels]
    axes[2].bar(range(len(labels)), merges, color=colours[:len(labels)])
    axes[2].set_xticks(list(range(len(labels))))
    axes[2].set_xticklabels(labels, rotation=15, fontsize=8)
    axes[2].set_ylabel("block merges")
    axes[2].set_title("(c) merges during the insertion")
    fig.suptitle(f"IPL flash-only vs IPL+PCRAM: {data['records']:,} records of 40-50 B, "
                 f"{data['db_page']} B pages, cache {data['buffer_pct']:g} % of the database",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
