#!/usr/bin/python3
"""ckpt_cost_smoke.py — end-to-end test of `./run ckpt-cost`'s parts: pdl-tpcc --checkpoint and
--checkpoint-cost, and bench/ckpt_cost_md.py.

    ckpt_cost_smoke.py PDL_TPCC CKPT_COST_MD

1. pdl-tpcc on a tiny database (PDL(256B) and OPU, atomic commit and the journal on flash,
   DELETE) with --checkpoint off: no member has a checkpoint area.
2. The same with --checkpoint on --checkpoint-cost: every member has one and counts the measured
   transactions after which a power cut would have scanned; the atomic members
   report one checkpoint of the store's tables and one with the Volume's, each programming its
   area pages plus the log entry's page, the close's no larger than the store's but for its
   root; so do the members committing per page (their tables say the newest commit record is
   unknown); the measured transactions are the same as in 1.
3. The same as 2 with --table-cache 1: every member programs and erases exactly as in 2 (the
   table cache decides what is read, never what is written), loads more table pages, and the
   atomic PDL member folds dirty pages into entries.
4. ckpt_cost_md.py renders the runs into markdown blocks naming every member (the table-cache
   block saying the programs are the same), and --check then accepts the file; a bad
   --checkpoint value exits 2.
"""
import json
import os
import subprocess
import sys
import tempfile

KEYS = ["pdl-atomic", "pdl-journal", "opu-atomic", "opu-journal"]


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def members(path):
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    return {m["key"]: m for r in j["runs"] for m in r["methods"]}


def main():
    tpcc, md = sys.argv[1], sys.argv[2]
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        base = [tpcc, "--scale", "0.002", "--warmup", "40", "--transactions", "60",
                "--methods", "pdl,opu", "--commit", "atomic,journal", "--journal-mode",
                "delete", "--no-unix", "--quiet", "--work-dir", tmp]
        js = {}
        for mode, extra in (("off", []), ("on", ["--checkpoint-cost"]),
                            ("cache", ["--checkpoint-cost", "--table-cache", "1"])):
            js[mode] = os.path.join(tmp, mode + ".json")
            p = run(base + ["--checkpoint", "off" if mode == "off" else "on", "--json",
                            js[mode]] + extra)
            if p.returncode != 0:
                print(f"pdl-tpcc --checkpoint {mode} exited {p.returncode}:\n{p.stderr[-3000:]}")
                return 1
        off, on, cache = members(js["off"]), members(js["on"]), members(js["cache"])
        for k in KEYS:
            if k in on and k in cache:
                a, b = on[k]["counts"], cache[k]["counts"]
                if (a["programs"], a["erases"]) != (b["programs"], b["erases"]):
                    errors.append(f"{k}: table_cache=1 programmed or erased differently")
                if cache[k]["store"]["table_loads"] <= on[k]["store"]["table_loads"]:
                    errors.append(f"{k}: table_cache=1 loaded no more table pages")
        if "pdl-atomic" in cache and cache["pdl-atomic"]["store"].get("table_folds", 0) == 0:
            errors.append("pdl-atomic: table_cache=1 folded no dirty page")
        for k in KEYS:
            if k not in off or k not in on:
                errors.append(f"{k}: missing from a run")
                continue
            if off[k]["checkpoint"]["area"]:
                errors.append(f"{k}: a checkpoint area with --checkpoint off")
            c = on[k]["checkpoint"]
            if not c["area"]:
                errors.append(f"{k}: no checkpoint area with --checkpoint on")
            exposed = c.get("txns_a_cut_would_scan")
            if not isinstance(exposed, int) or not 0 <= exposed <= on[k]["transactions"]:
                errors.append(f"{k}: txns_a_cut_would_scan {exposed!r}: not a count of the "
                              "measured transactions")
            if off[k]["first_transaction"] != on[k]["first_transaction"] or \
                    off[k]["transactions"] != on[k]["transactions"]:
                errors.append(f"{k}: the runs measured different transactions")
            for one in ("periodic_one", "close_one"):
                o = c.get(one)
                if not o or o["area_pages"] < 1 or o["programs"] != o["area_pages"] + 1:
                    errors.append(f"{k}: {one} {o}: not its area pages plus the log entry")
            # The close's checkpoint follows the store's at once: no table page is dirty then
            # (demand-loaded tables, design.md §18), so it writes its root alone — fewer pages
            # than the store's, which wrote the measured run's table pages.
            if "periodic_one" in c and "close_one" in c and \
                    c["close_one"]["area_pages"] > c["periodic_one"]["area_pages"] + 4:
                errors.append(f"{k}: the close's checkpoint rewrote table pages no change "
                              "dirtied")
        doc = os.path.join(tmp, "results.md")
        with open(doc, "w", encoding="utf-8") as f:
            f.write("<!-- generated by ckpt_cost_md.py: ckpt-cost -->\n<!-- end: ckpt-cost -->\n"
                    "<!-- generated by ckpt_cost_md.py: table-cache -->\n"
                    "<!-- end: table-cache -->\n"
                    "<!-- generated by ckpt_cost_md.py: block-tables -->\n"
                    "<!-- end: block-tables -->\n")
        args = [sys.executable, md, doc, "--off", js["off"], "--on", js["on"], "--cache",
                js["cache"]]
        p = run(args)
        if p.returncode != 0:
            errors.append(f"ckpt_cost_md.py exited {p.returncode}: {p.stderr}")
        with open(doc, encoding="utf-8") as f:
            text = f.read()
        for label in ("PDL(256B) atomic", "PDL(256B) journal", "OPU atomic", "OPU journal"):
            if text.count(f"| delete | {label} |") != 2:
                errors.append(f"ckpt_cost_md.py: no row for {label} in each table")
        cost = text.split("ckpt_cost_md.py: ckpt-cost -->")[1].split("<!-- end")[0]
        for k in KEYS:
            if k in on and f"| {on[k]['checkpoint']['txns_a_cut_would_scan']:,} of " not in cost:
                errors.append(f"ckpt_cost_md.py: {k}'s transactions exposed to a scan not shown")
        block = text.split("ckpt_cost_md.py: table-cache -->")[1].split("<!-- end")[0]
        if "table_cache=1:" not in block or "| **no** |" in block:
            errors.append("ckpt_cost_md.py: the table-cache block is missing or says the "
                          "programs differ")
        if run(args + ["--check"]).returncode != 0:
            errors.append("ckpt_cost_md.py --check refuses the file it wrote")
        p = run(base + ["--checkpoint", "maybe"])
        if p.returncode != 2 or "--checkpoint" not in p.stderr:
            errors.append(f"--checkpoint maybe: exit {p.returncode}, {p.stderr.strip()}")
    for e in errors:
        print("FAIL: " + e)
    if not errors:
        print("ok: pdl-tpcc --checkpoint / --checkpoint-cost and ckpt_cost_md.py")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
