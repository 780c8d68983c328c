#!/usr/bin/python3
"""ftl_tpcc.py — [StableBuffer]'s evaluation on SQLite: TPC-C write response time and
throughput of direct write-through vs StableBuffer on each FTL device, by driving pdl-tpcc.

    ftl_tpcc.py PDL_TPCC [--out-dir DIR] [--scale F] [--transactions N] [--warmup N]
                [--sizes 25,50,100,200,400] [--ftls page,bast16,fast16] [--quick] [--paper]

Every run: the same TPC-C-like load (pdl-tpcc --seed 1 at --scale), the same fixed warm-up and
the same measured transactions on every member, journal_mode=DELETE (the journal on the
device: an FTL device has no atomic commit), one chip size for all runs (the first run's
automatic size). Runs:
  1. direct: SQLite on ftl-page, bast16, fast16 (write-through), StableBuffer in front of
     each at its default slot count (on-demand recognition, passive flush), and PDL(256B) with
     atomic commit and with the journal on flash over raw NAND (the project's reference);
     then the same members in WAL mode (for the comparison with pdl only);
  2. the buffer-size sweep: sb-page, sb-bast16, sb-fast16 with --sb-slots at each --sizes
     percentage of the engine's default, in the paper's three combinations
     (ondemand+passive, incremental+passive, incremental+proactive).
Per member: write response time (pdl-tpcc's definition: simulated device time outside SQLite's
reads per page write SQLite made, syncs included) and throughput (transactions per simulated
second), with the flash counts. Writes DIR/ftl-tpcc.json, ftl-tpcc.txt and (matplotlib
permitting) ftl-tpcc.png. Exit status: 0 ok, 1 a pdl-tpcc run failed.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

MODES = [("ondemand", "passive"), ("incremental", "passive"), ("incremental", "proactive")]
MODE_LABEL = {("ondemand", "passive"): "O+P", ("incremental", "passive"): "I+P",
              ("incremental", "proactive"): "I+Pro"}


def run_tpcc(tpcc, args, tmp, quiet=True):
    out = os.path.join(tmp, "run.json")
    cmd = [tpcc] + args + ["--json", out, "--no-unix"] + (["--quiet"] if quiet else [])
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n" +
                           "\n".join(p.stderr.splitlines()[-10:]))
    with open(out) as f:
        return json.load(f), p.stdout


def member_figures(m):
    """The figures of one pdl-tpcc member record the report needs."""
    io, dev = m["io"], m["device"]
    pt = m["per_transaction"]["total"]
    return {
        "key": m["key"], "label": m["label"], "commit": m["commit"],
        "ftl": dev["ftl"], "method": dev["method"], "log_blocks": dev["log_blocks"],
        "sb_slots": dev["sb_slots"], "sb_recognition": dev["sb_recognition"],
        "sb_flush": dev["sb_flush"], "transactions": m["transactions"],
        "write_response_ms": io["write_response_ms"],
        "sim_transactions_per_s": io["sim_transactions_per_s"],
        "sim_writes_per_s": io["sim_writes_per_s"],
        "write_calls": io["write_calls"], "sim_ms": io["sim_ms"],
        "read_sim_ms": io["read_sim_ms"], "write_sim_ms": io["write_sim_ms"],
        "sim_ms_per_txn": pt["sim_ms"], "programs_per_txn": pt["programs"],
        "erases_per_txn": pt["erases"], "reads_per_txn": pt["reads"],
        "check_ok": m["check"]["ok"] if "check" in m else None,
    }


def sweep_point(mrec, direct_key, pct, direct):
    m = member_figures(mrec)
    m["ftl_key"] = direct_key
    m["size_pct"] = pct
    m["response_vs_direct"] = m["write_response_ms"] / direct["write_response_ms"]
    m["throughput_vs_direct"] = m["sim_transactions_per_s"] / direct["sim_transactions_per_s"]
    return m


def base_key(key):
    for sfx in ("-journal", "-atomic"):
        if key.endswith(sfx):
            return key[: -len(sfx)]
    return key


def text_report(res):
    lines = []
    c = res["config"]
    lines.append(f"ftl_tpcc.py: [StableBuffer] on SQLite — TPC-C-like, scale {c['scale']}, seed "
                 f"{c['seed']}, warm-up {c['warmup']} + {c['transactions']} measured "
                 f"transactions per member, journal_mode=DELETE, chip {c['chip_bytes']} bytes")
    lines.append("write resp. = simulated device time outside SQLite's reads per page write "
                 "SQLite made (syncs, merges, GC included); thr. = transactions per simulated "
                 "second")
    lines.append("")
    lines.append("== direct write-through vs StableBuffer (default slots, on-demand + passive) ==")
    lines.append(f"{'member':<22} {'slots':>6} {'resp. ms':>9} {'txn/sim-s':>10} "
                 f"{'ms/txn':>8} {'progs/txn':>9} {'erases/txn':>10}")
    for m in res["direct"]:
        lines.append(f"{m['label']:<22} {m['sb_slots'] or '-':>6} {m['write_response_ms']:9.3f} "
                     f"{m['sim_transactions_per_s']:10.2f} {m['sim_ms_per_txn']:8.2f} "
                     f"{m['programs_per_txn']:9.2f} {m['erases_per_txn']:10.3f}")
    lines.append("")
    lines.append("== the same members, journal_mode=WAL ==")
    for m in res.get("direct_wal", []):
        lines.append(f"{m['label']:<22} {m['sb_slots'] or '-':>6} {m['write_response_ms']:9.3f} "
                     f"{m['sim_transactions_per_s']:10.2f} {m['sim_ms_per_txn']:8.2f} "
                     f"{m['programs_per_txn']:9.2f} {m['erases_per_txn']:10.3f}")
    lines.append("")
    lines.append("StableBuffer / direct on the same FTL (response time: lower is better; "
                 "throughput: higher is better):")
    for ftl, g in res["gains"].items():
        lines.append(f"  {ftl:<10} response {g['response_ratio']:.2f}x of direct, throughput "
                     f"{g['throughput_ratio']:.2f}x")
    lines.append("")
    lines.append("== buffer-size sweep (slots as % of the default) ==")
    lines.append(f"{'FTL':<10} {'mode':<6} {'size%':>6} {'slots':>6} {'resp. ms':>9} "
                 f"{'txn/sim-s':>10} {'vs direct resp.':>15} {'thr.':>6}")
    for p in res["sweep"]:
        lines.append(f"{p['ftl']:<10} {MODE_LABEL[(p['sb_recognition'], p['sb_flush'])]:<6} "
                     f"{p['size_pct']:>6} {p['sb_slots']:>6} {p['write_response_ms']:9.3f} "
                     f"{p['sim_transactions_per_s']:10.2f} {p['response_vs_direct']:15.2f} "
                     f"{p['throughput_vs_direct']:6.2f}")
    return "\n".join(lines) + "\n"


def plot(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ftls = list(res["gains"].keys())
    fig, axes = plt.subplots(2, len(ftls), figsize=(4.2 * len(ftls), 6.5), squeeze=False)
    for col, ftl in enumerate(ftls):
        direct = next(m for m in res["direct"] if m["method"] == "ftl" and m["ftl_key"] == ftl)
        for row, (metric, title) in enumerate([("write_response_ms", "write response (ms)"),
                                               ("sim_transactions_per_s",
                                                "throughput (txn / simulated s)")]):
            ax = axes[row][col]
            for mode in MODES:
                pts = sorted((p["size_pct"], p[metric]) for p in res["sweep"]
                             if p["ftl_key"] == ftl and
                             (p["sb_recognition"], p["sb_flush"]) == mode)
                if pts:
                    ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o",
                            label=MODE_LABEL[mode])
            ax.axhline(direct[metric], color="black", linestyle="--", label="direct")
            ax.set_xscale("log", base=2)
            ax.set_xticks(res["config"]["sizes"])
            ax.set_xticklabels([f"{s}%" for s in res["config"]["sizes"]])
            ax.set_title(f"{direct['label']}: {title}", fontsize=9)
            if row == 1:
                ax.set_xlabel("StableBuffer size (% of default)")
            ax.legend(fontsize=7)
    fig.suptitle("StableBuffer vs direct write-through, TPC-C on SQLite (simulated time)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tpcc")
    ap.add_argument("--out-dir", default="docs/results")
    ap.add_argument("--scale", type=float, default=0.05)
    ap.add_argument("--transactions", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=2000)
    ap.add_argument("--sizes", default="25,50,100,200,400")
    ap.add_argument("--ftls", default="page,bast16,fast16")
    ap.add_argument("--quick", action="store_true", help="tiny: for the smoke test")
    ap.add_argument("--paper", action="store_true",
                    help="full TPC-C scale (1 warehouse, scale 1), 5000 transactions")
    a = ap.parse_args()
    if a.quick:
        a.scale, a.transactions, a.warmup, a.sizes = 0.01, 60, 60, "50,100,200"
    if a.paper:
        a.scale, a.transactions, a.warmup = 1.0, 5000, 5000
    sizes = [int(s) for s in a.sizes.split(",")]
    ftls = a.ftls.split(",")
    direct_keys = ["ftl-page" if f == "page" else f for f in ftls]
    sb_keys = ["sb-" + f for f in ftls]
    common = ["--scale", str(a.scale), "--seed", "1", "--transactions", str(a.transactions),
              "--warmup", str(a.warmup), "--journal-mode", "delete"]
    res = {"tool": "ftl_tpcc.py", "config": {"scale": a.scale, "seed": 1,
                                             "transactions": a.transactions, "warmup": a.warmup,
                                             "sizes": sizes, "ftls": ftls,
                                             "journal_mode": "delete"}}
    os.makedirs(a.out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            print("ftl_tpcc: direct and default StableBuffer ...", file=sys.stderr)
            data, _ = run_tpcc(a.tpcc, common + [
                "--methods", ",".join(["pdl"] + direct_keys + sb_keys),
                "--commit", "atomic,journal"], tmp)
            run = data["runs"][0]
            chip = run["chip_bytes"]
            res["config"]["chip_bytes"] = chip
            res["config"]["db_pages"] = run["db_pages"]
            direct = []
            for m in run["methods"]:
                f = member_figures(m)
                f["ftl_key"] = ("ftl-page" if f["ftl"] == "page" else f["ftl"] + str(f["log_blocks"])) \
                    if f["ftl"] else ""
                direct.append(f)
            res["direct"] = direct
            by_key = {base_key(m["key"]): m for m in direct}
            res["gains"] = {}
            for d, s in zip(direct_keys, sb_keys):
                dm, sm = by_key[d], by_key[s]
                res["gains"][d] = {
                    "response_ratio": sm["write_response_ms"] / dm["write_response_ms"],
                    "throughput_ratio": sm["sim_transactions_per_s"] /
                    dm["sim_transactions_per_s"]}
            # The same members in WAL mode: SQLite's other crash-safe journal, often the
            # better one on an FTL device (the comparison with pdl takes the best of the two).
            print("ftl_tpcc: the same in WAL mode ...", file=sys.stderr)
            wal_args = [x if x != "delete" else "wal" for x in common]
            data, _ = run_tpcc(a.tpcc, wal_args + [
                "--methods", ",".join(["pdl"] + direct_keys + sb_keys),
                "--commit", "atomic,journal", "--chip-size", str(chip)], tmp)
            res["direct_wal"] = [member_figures(m) for m in data["runs"][0]["methods"]]
            default_slots = {s: by_key[s]["sb_slots"] for s in sb_keys}
            res["config"]["default_slots"] = default_slots
            sweep = []
            for rec, fl in MODES:
                for pct in sizes:
                    # The StableBuffers whose pct % of the default is the same slot count run
                    # together (one load, one fleet).
                    groups = {}
                    for d, s in zip(direct_keys, sb_keys):
                        slots = max(1, round(default_slots[s] * pct / 100))
                        groups.setdefault(slots, []).append((d, s))
                    for slots, members in groups.items():
                        keys = [s for _, s in members]
                        print(f"ftl_tpcc: {','.join(keys)} {rec}+{fl} {pct}% = {slots} slots ...",
                              file=sys.stderr)
                        data, _ = run_tpcc(a.tpcc, common + [
                            "--methods", ",".join(keys), "--commit", "journal",
                            "--chip-size", str(chip), "--sb-slots", str(slots),
                            "--sb-recognition", rec, "--sb-flush", fl], tmp)
                        for (d, s), mrec in zip(members, data["runs"][0]["methods"]):
                            sweep.append(sweep_point(mrec, d, pct, by_key[d]))
            res["sweep"] = sweep
        except RuntimeError as e:
            print(f"ftl_tpcc: {e}", file=sys.stderr)
            return 1
    with open(os.path.join(a.out_dir, "ftl-tpcc.json"), "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    text = text_report(res)
    with open(os.path.join(a.out_dir, "ftl-tpcc.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    plot(res, os.path.join(a.out_dir, "ftl-tpcc.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
