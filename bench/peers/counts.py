"""counts.py — from the VM's PEERS- lines (and the emulator's) to per-transaction figures and
the cross-checks of `./run peers`. Pure: text in, dicts out (tests/peers/test_peers.py).

nandsim drives the NAND core through exec_op, where nand_read_oob_op is a nand_read_page_op of
the spare columns: a data-page read is nand_read_page_op's hits less nand_read_oob_op's.
Lines (vm_script.py): PEERS-SNAP RUN TAG read_page read_oob prog prog_end erase;
PEERS-PDL RUN TAG {pdl_stats JSON}; PEERS-ROWS RUN count sum sum; PEERS-FULL RUN ...;
PEERS-FILL-PAGES RUN pages; PEERS-SECS RUN s; PEERS-FAIL RUN why; PEERS-TPCC RUN
"counts":{...} (pdl-tpcc's own counts of its measured transactions: pdl_stats S0 = 0, S1 =
them); for the TPC-C-like run PEERS-ROWS carries pdl-tpcc's content checksum.
A run's figures (window S0 -> S2: the measured transactions, the close, sync and settle):
  programs, erases, page_reads (data), spare_reads (spare only), reads = both; per_txn = / txns.
Mount (after a clean unmount): step1 = M0 -> M1 (UBI attach; JFFS2's and pdl's whole mount),
step2 = M1 -> M2 (the UBIFS mount), reads = both steps' page and spare reads.
Cross-checks: for pdl, the kprobe counts of S0 -> S1 and of the mount against pdl's own
counters (pdl_stats deltas) — equal; nandsim against the emulator (pdl_stats deltas, table
checksum) — equal; every system's table checksum per workload — equal.
"""
import json
import re

FIELDS = ["read_page", "read_oob", "prog", "prog_end", "erase"]
# [PDL] Table 1 timing, microseconds (flash/device/geometry.h): a read (page or spare only),
# a program, an erase.
READ_US, PROGRAM_US, ERASE_US = 110, 1010, 1500


def parse(text):
    """{'snap': {run: {tag: {field: n}}}, 'pdl': {run: {tag: flash}}, 'rows': {run: str},
    'full': {run: str}, 'fill_pages': {run: int}, 'secs': {run: int}, 'fail': [str]}"""
    d = {"snap": {}, "pdl": {}, "pdl_mount": {}, "rows": {}, "full": {}, "fill_pages": {},
         "secs": {}, "fail": []}
    for raw in text.splitlines():
        l = raw.strip()
        m = re.match(r"PEERS-(\w[\w-]*) (\S+) ?(.*)$", l)
        if not m:
            continue
        kind, run, rest = m.groups()
        if kind == "SNAP":
            p = rest.split()
            if len(p) == 6 and all(x.isdigit() for x in p[1:]):
                d["snap"].setdefault(run, {})[p[0]] = dict(zip(FIELDS, map(int, p[1:])))
        elif kind == "PDL":
            tag, _, js = rest.partition(" ")
            try:
                j = json.loads(js)
                d["pdl"].setdefault(run, {})[tag] = j["flash"]
                if tag == "M" and isinstance(j.get("mount"), dict):  # how the store mounted
                    d["pdl_mount"][run] = {k: j["mount"].get(k) for k in
                                           ("from_checkpoint", "checkpoint_pages", "scan_reason")}
            except (ValueError, KeyError):
                d["fail"].append(f"{run}: unreadable pdl_stats at {tag}")
        elif kind == "TPCC":  # pdl-tpcc's exact counts of the measured transactions
            try:
                c = json.loads("{" + rest + "}")["counts"]
                zero = {k: 0 for k in c}
                d["pdl"].setdefault(run, {}).update({"S0": zero, "S1": c})
            except (ValueError, KeyError):
                d["fail"].append(f"{run}: unreadable pdl-tpcc counts")
        elif kind == "ROWS":
            d["rows"][run] = rest
        elif kind == "FULL":
            d["full"][run] = rest
        elif kind == "FILL-PAGES":
            d["fill_pages"][run] = int(rest) if rest.isdigit() else rest
        elif kind == "SECS":
            d["secs"][run] = int(rest) if rest.isdigit() else None
        elif kind == "FAIL":
            d["fail"].append(f"{run}: {rest}")
    return d


def nand_delta(a, b):
    """Operation counts between two snapshots, named as pdl_stats names them."""
    spare = b["read_oob"] - a["read_oob"]
    return {"page_reads": b["read_page"] - a["read_page"] - spare,
            "spare_reads": b["read_oob"] - a["read_oob"],
            "programs": b["prog"] + b["prog_end"] - a["prog"] - a["prog_end"],
            "erases": b["erase"] - a["erase"]}


def pdl_delta(a, b):
    return {k: b[k] - a[k] for k in ["page_reads", "spare_reads", "programs", "erases"]}


def sim_us(c):
    return (c["page_reads"] + c["spare_reads"]) * READ_US + c["programs"] * PROGRAM_US + \
        c["erases"] * ERASE_US


def figures(c, txns):
    """The per-transaction figures of counts c."""
    return {"programs": c["programs"] / txns, "erases": c["erases"] / txns,
            "reads": (c["page_reads"] + c["spare_reads"]) / txns,
            "page_reads": c["page_reads"] / txns, "spare_reads": c["spare_reads"] / txns,
            "sim_ms": sim_us(c) / txns / 1000}


def run_result(d, run, txns):
    """One run's counts and figures, or None if its snapshots are missing."""
    s = d["snap"].get(run, {})
    if not all(t in s for t in ["S0", "S1", "S2"]):
        return None
    r = {"counts": nand_delta(s["S0"], s["S2"]),
         "counts_before_close": nand_delta(s["S0"], s["S1"])}
    r["per_txn"] = figures(r["counts"], txns)
    if all(t in s for t in ["M0", "M1", "M2"]):
        s1, s2 = nand_delta(s["M0"], s["M1"]), nand_delta(s["M1"], s["M2"])
        r["mount"] = {"step1": s1, "step2": s2,
                      "reads": sum(x["page_reads"] + x["spare_reads"] for x in (s1, s2)),
                      "programs": s1["programs"] + s2["programs"],
                      "erases": s1["erases"] + s2["erases"]}
        r["mount"]["sim_ms"] = sum(sim_us(x) for x in (s1, s2)) / 1000
        if "MC" in s:  # pdl: the close after the mount (a checkpoint if the mount scanned)
            r["mount"]["close_after"] = nand_delta(s["M2"], s["MC"])
    p = d["pdl"].get(run, {})
    if "S0" in p and "S1" in p:
        r["pdl_stats"] = pdl_delta(p["S0"], p["S1"])
        r["pdl_mount_stats"] = p.get("M")
        if run in d["pdl_mount"]:
            r["pdl_mount_report"] = d["pdl_mount"][run]
    if run in d["rows"]:
        r["rows"] = d["rows"][run]
    if run in d["secs"]:
        r["wall_s"] = d["secs"][run]
    return r


def cross_checks(runs, emu, pdl_systems):
    """Mismatch messages (empty: every check held). runs: {run: run_result}; emu: the
    emulator's parse() result (or None); pdl_systems: the systems that must report pdl_stats."""
    bad = []
    for run, r in sorted(runs.items()):
        if r is None:
            bad.append(f"{run}: no counts (the run failed)")
            continue
        if run.split("/")[1] in pdl_systems and "pdl_stats" not in r:
            bad.append(f"{run}: no pdl_stats (the store did not open?)")
        if "pdl_stats" in r and r["pdl_stats"] != r["counts_before_close"]:
            bad.append(f"{run}: NAND core counts {r['counts_before_close']} != pdl's own "
                       f"{r['pdl_stats']}")
        if r.get("pdl_mount_stats") is not None and "mount" in r:
            own = {k: r["pdl_mount_stats"][k] for k in ["page_reads", "spare_reads",
                                                         "programs", "erases"]}
            core = r["mount"]["step1"]
            # pdl's counters start after the open's first look at the device: the NAND core
            # may see more page reads than pdl_stats says (reported: mount_uncounted_reads)
            if any(own[k] != core[k] for k in ["spare_reads", "programs", "erases"]) or \
                    core["page_reads"] < own["page_reads"]:
                bad.append(f"{run}: mount: NAND core counts {core} != pdl's own {own}")
            r["mount_uncounted_reads"] = core["page_reads"] - own["page_reads"]
        if emu is not None and "pdl_stats" in r:
            e = emu["pdl"].get(run, {})
            if "S0" not in e or "S1" not in e:
                bad.append(f"{run}: the emulator has no counts")
            else:
                ed = pdl_delta(e["S0"], e["S1"])
                if ed != r["pdl_stats"]:
                    bad.append(f"{run}: nandsim {r['pdl_stats']} != emulator {ed}")
                em, nm = e.get("M"), r.get("pdl_mount_stats")
                keys = ["page_reads", "spare_reads", "programs", "erases"]
                if (em is None) != (nm is None) or \
                        (em is not None and any(em[k] != nm[k] for k in keys)):
                    bad.append(f"{run}: mount: nandsim and emulator counts differ")
            if emu["rows"].get(run) != r.get("rows"):
                bad.append(f"{run}: rows: nandsim {r.get('rows')} != emulator "
                           f"{emu['rows'].get(run)}")
    by_workload = {}
    for run, r in runs.items():
        if r is not None:
            age, _, w = run.split("/")
            by_workload.setdefault((age, w), set()).add(r.get("rows"))
    for (age, w), rows in sorted(by_workload.items()):
        if len(rows) != 1:
            bad.append(f"{age} workload {w}: the systems' tables differ: {sorted(map(str, rows))}")
    return bad


def emulator_pairs(runs, emu):
    """[(run, nandsim pdl_stats delta, emulator delta)] for the report."""
    out = []
    for run, r in sorted(runs.items()):
        if r is not None and "pdl_stats" in r:
            e = emu["pdl"].get(run, {}) if emu else {}
            ed = pdl_delta(e["S0"], e["S1"]) if "S0" in e and "S1" in e else None
            out.append((run, r["pdl_stats"], ed))
    return out
