#!/usr/bin/python3
"""plot.py — docs/results/peers.png from peers.json: programs and erases per transaction per
system and workload (a panel per age), and the reads of a mount after a clean unmount (log
scale). Operation counts at the NAND core (bench/peers/counts.py).

    plot.py PEERS_JSON OUT_PNG
"""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from report import LABEL, WTITLE, MOUNT_AFTER  # noqa: E402

COLORS = {"ubifs": "#1f77b4", "ubifs-none": "#9ecae1", "jffs2": "#7f7f7f",
          "pdl256-atomic": "#d62728", "pdl256-journal": "#ff9896",
          "opu-atomic": "#2ca02c", "opu-journal": "#98df8a"}


def main():
    if len(sys.argv) != 3:
        print("usage: plot.py PEERS_JSON OUT_PNG", file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        res = json.load(f)
    ages, systems, wl = res["ages"], res["systems"], res["workloads"]
    fig, axes = plt.subplots(len(ages) * 2 + 1, 1, figsize=(11, 3.2 * (len(ages) * 2 + 1)))
    width = 0.8 / len(systems)
    for i, age in enumerate(ages):
        for j, (key, what) in enumerate([("programs", "programs"), ("erases", "erases")]):
            ax = axes[2 * i + j]
            for k, s in enumerate(systems):
                ys = []
                for w in wl:
                    r = res["runs"].get(f"{age}/{s}/{w}")
                    ys.append(r["per_txn"][key] if r else 0)
                ax.bar([x + k * width for x in range(len(wl))], ys, width, label=LABEL[s],
                       color=COLORS[s])
            ax.set_xticks([x + width * (len(systems) - 1) / 2 for x in range(len(wl))])
            ax.set_xticklabels([WTITLE[w] for w in wl])
            ax.set_ylabel(f"{what} / transaction")
            ax.set_title(f"{what} per transaction, {age} device ({res['txns']:,} single-row "
                         "transactions; NAND core counts)")
            ax.grid(axis="y", alpha=0.3)
    axes[0].legend(ncol=4, fontsize=8)
    ax = axes[-1]
    for k, s in enumerate(systems):
        ys = []
        for age in ages:
            r = res["runs"].get(f"{age}/{s}/{MOUNT_AFTER}")
            ys.append(r["mount"]["reads"] if r and "mount" in r else 0)
        ax.bar([x + k * width for x in range(len(ages))], ys, width, label=LABEL[s],
               color=COLORS[s])
    ax.set_xticks([x + width * (len(systems) - 1) / 2 for x in range(len(ages))])
    ax.set_xticklabels([f"{a} device" for a in ages])
    ax.set_yscale("log")
    ax.set_ylim(bottom=1000)
    ax.set_ylabel("page + spare reads")
    ax.set_title("reads of a mount after a clean unmount (UBI attach + UBIFS mount; JFFS2 "
                 "mount; pdl store open)")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=90)
    return 0


if __name__ == "__main__":
    sys.exit(main())
