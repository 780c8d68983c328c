#!/usr/bin/python3
"""results_md.py — the figures and verdicts of docs/results.md's [PDL] section, from pdl-bench's JSON.

    /usr/bin/python3 bench/results_md.py docs/results.md --bench docs/results/bench.json \
        [--gc-oldest docs/results/bench-gc-oldest.json] [--paper docs/results/exp1-paper.json]
    /usr/bin/python3 bench/results_md.py docs/results.md ... --check

Every table and every number of the section comes from here: the markdown between
`<!-- generated: NAME -->` and `<!-- end: NAME -->` is replaced by block NAME (the text outside
the markers is prose without figures). --check rewrites nothing and exits 1 if the file is not
what the JSON gives (a test runs it on the committed files, so a figure cannot go stale).

The claim table: each of [PDL] §5.2's claims about Exp. 1-6 is a rule over the JSON (its
`rule` text is printed beside it), evaluated under every *setting* of the choices the paper
leaves open — where the changed bytes go (`fields`: 8-byte fields at random places; `run`: one
contiguous run) and IPL's log sector (512 bytes, [IPL]'s, NOP 4; or 128 bytes, the size of
[PDL]'s log buffer, NOP 16). A setting not run for an experiment falls back to the 512-byte IPL
(marked †). Verdicts: yes / partly / no; the tally counts them per setting.
Standard library only.
"""
import argparse
import re
import sys

import md_blocks
from md_blocks import load

PLACEMENTS = ["fields", "run"]
PLACEMENT_TEXT = {"fields": "8-byte fields at random places", "run": "one contiguous run"}
SETTINGS = [("fields", 512), ("run", 512), ("fields", 128), ("run", 128)]
SETTING_TEXT = {("fields", 512): "fields, IPL 512-B sectors",
                ("run", 512): "one run, IPL 512-B sectors",
                ("fields", 128): "fields, IPL 128-B sectors",
                ("run", 128): "one run, IPL 128-B sectors"}
SIX = ["PDL(256B)", "PDL(2KB)", "OPU", "IPU", "IPL(18KB)", "IPL(64KB)"]


# ---------------------------------------------------------------------------------------------
# The records

class Data:
    def __init__(self, records):
        self.recs = [r for r in records if r.get("exp") in ("1", "2", "3", "4", "5", "6",
                                                            "iplsweep", "2-8k")]
        for r in self.recs:
            r.setdefault("placement", "fields")
            r["log_sector"] = r.get("log_sector") or 512
            r.setdefault("gc_merge", True)
            r.setdefault("logical_page", 2048)
            r.setdefault("gc_victim", "greedy")

    def find(self, exp, method, obsolete="spare", placement="fields", source="measured", **kw):
        """The one record matching; None if absent or failed."""
        obs = obsolete if method.startswith(("PDL", "OPU")) else "none"
        for r in self.recs:
            if (r["exp"] == exp and r["method"] == method and r.get("obsolete") == obs and
                    r["placement"] == placement and r.get("source") == source and
                    all(_eq(r.get(k), v) for k, v in kw.items())):
                return None if "error" in r else r
        return None

    def has(self, exp, method, placement):
        return any(r["exp"] == exp and r["method"] == method and r["placement"] == placement
                   for r in self.recs)


def _eq(a, b):
    if isinstance(b, float) or isinstance(a, float):
        return a is not None and abs(float(a) - float(b)) < 1e-9
    return a == b


def ipl(label, sector):
    """The label of IPL(18KB)/IPL(64KB) with log sectors of `sector` bytes."""
    return label if sector == 512 or not label.startswith("IPL(") else label + "/128B"


# ---------------------------------------------------------------------------------------------
# Number formatting (one style everywhere)

def us(v):
    if v is None:
        return "–"
    if v >= 10000:
        return f"{v:,.0f}"
    if v >= 1000:
        return f"{v:.0f}"
    return f"{v:.1f}"


def f4(v):
    return "–" if v is None else f"{v:.4f}"


def f3(v):
    return "–" if v is None else f"{v:.3f}"


def pct(v):
    return "–" if v is None else f"{v:.1f} %"


def table(head, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(head) - 1)
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def merges_per_op(r):
    return r["stats_gc_merges"] / r["measure_ops"]


# ---------------------------------------------------------------------------------------------
# Figure blocks

def series_labels(d, exp, placement, with_memory=True):
    """The methods an experiment ran, in the paper's order: (label, obsolete) pairs."""
    methods = []
    for r in d.recs:
        if r["exp"] == exp and r["placement"] == placement and r["method"] not in methods:
            methods.append(r["method"])
    order = SIX + ["IPL(18KB)/128B", "IPL(64KB)/128B", "IPL(18KB)/diff", "IPL(64KB)/diff",
                   "PDL(2KB)/no-merge"]
    methods.sort(key=lambda m: order.index(m) if m in order else len(order))
    out = []
    for mode in ["spare", "memory"] if with_memory else ["spare"]:
        for m in methods:
            if m.startswith(("PDL", "OPU")):
                if any(r["exp"] == exp and r["method"] == m and r["obsolete"] == mode and
                       r["placement"] == placement for r in d.recs):
                    out.append((m, mode))
            elif mode == "spare":
                out.append((m, "none"))
    return out


def label(m, obs):
    return m if obs == "none" else f"{m} {obs}"


def block_exp1(d):
    parts = []
    for pl in PLACEMENTS:
        rows = []
        for m, obs in series_labels(d, "1", pl):
            r = d.find("1", m, obs if obs != "none" else "spare", pl)
            if r is None:
                continue
            gc = 100 * r["gc_us"] / r["write_us"] if r["write_us"] else 0
            rows.append([m, obs if obs != "none" else "—", us(r["read_us"]),
                         f"{us(r['write_us'])} ({gc:.0f} %)", f"**{us(r['total_us'])}**",
                         f4(r["erases_per_op"]), f3(r["programs_per_op"]),
                         f3(r["reads_per_op"]), pct(r["case3_pct"]) if m.startswith("PDL") else "—",
                         f3(merges_per_op(r)) if m.startswith("PDL") else "—"])
        if not rows:
            continue
        parts.append(f"**Changed bytes as {PLACEMENT_TEXT[pl]}** (`placement={pl}`):\n\n" + table(
            ["method", "obsolete", "read µs", "write µs (GC share)", "**total µs**", "erases/op",
             "programs/op", "reads/op", "Case 3", "GC merges/op"], rows,
            ["---", "---"] + ["---:"] * 8))
    return "\n\n".join(parts)


def block_exp1_cases(d):
    lines = []
    for pl in PLACEMENTS:
        a = d.find("1", "PDL(256B)", "spare", pl)
        b = d.find("1", "PDL(2KB)", "spare", pl)
        i18 = d.find("1", "IPL(18KB)", "spare", pl)
        if not a:
            continue
        s = (f"- `{pl}`: PDL(256B) {a['case1_pct']:.1f} % Case 1, {a['case2_pct']:.1f} % Case 2, "
             f"{a['case3_pct']:.1f} % Case 3, mean differential record {a['avg_diff_bytes']:.0f} "
             f"bytes ({a['changed_bytes']} bytes changed per update)")
        if b:
            s += (f"; PDL(2KB) {b['case3_pct']:.1f} % Case 3, records of "
                  f"{b['avg_diff_bytes']:.0f} bytes, {merges_per_op(b):.3f} GC merges per update")
        if i18:
            s += (f"; IPL(18KB) {i18['log_records_per_op']:.1f} log records in "
                  f"{i18['log_sectors_per_op']:.2f} log sectors per update")
        lines.append(s + ".")
    for pl in PLACEMENTS:
        for size in ("18KB", "64KB"):
            a = d.find("1", f"IPL({size})", "spare", pl)
            b = d.find("1", f"IPL({size})/diff", "spare", pl)
            if a and b:
                lines.append(
                    f"- `{pl}`: IPL({size}) without the update-log hook (`/diff`): "
                    f"{us(a['total_us'])} → {us(b['total_us'])} µs per update "
                    f"({100 * (b['total_us'] / a['total_us'] - 1):+.1f} %), reads/op "
                    f"{a['reads_per_op']:.2f} → {b['reads_per_op']:.2f}.")
    return "\n".join(lines)


def grid_block(d, exp, xs, xfield, fmt, value, title_x, placements=PLACEMENTS, with_memory=True,
               extra_kw=None):
    parts = []
    for pl in placements:
        rows = []
        for m, obs in series_labels(d, exp, pl, with_memory):
            cells = []
            for xv in xs:
                kw = {xfield: xv}
                kw.update(extra_kw or {})
                r = d.find(exp, m, obs if obs != "none" else "spare", pl, **kw)
                cells.append(fmt(value(r)) if r else "–")
            if any(c != "–" for c in cells):
                rows.append([label(m, obs)] + cells)
        if rows:
            parts.append(f"`placement={pl}`:\n\n" + table(
                ["method"] + [title_x(v) for v in xs], rows))
    return "\n\n".join(parts)


def block_exp2(d):
    return grid_block(d, "2", list(range(1, 9)), "n_updates", us, lambda r: r["total_us"],
                      lambda n: f"N={n}", extra_kw={"logical_page": 2048})


def block_exp2_8k(d):
    exp = "2-8k" if any(r["exp"] == "2-8k" for r in d.recs) else "2"
    return grid_block(d, exp, list(range(1, 9)), "n_updates", us, lambda r: r["total_us"],
                      lambda n: f"N={n}", with_memory=False, extra_kw={"logical_page": 8192})


def block_exp6(d):
    return grid_block(d, "6", [1, 2, 4, 8], "n_updates", f4, lambda r: r["erases_per_op"],
                      lambda n: f"N={n}", with_memory=False, extra_kw={"logical_page": 2048})


EXP3_X = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100]


def block_exp3(d):
    return grid_block(d, "3", EXP3_X, "changed_pct", us, lambda r: r["total_us"],
                      lambda v: f"{v:g} %", with_memory=False, extra_kw={"n_updates": 1})


EXP4_X = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]


def exp4_ratio(d, other, pl, sector=512):
    """Min and max of other/PDL(256B) over %UpdateOps and N = 1, 5 (spare): (lo, at, hi, at)."""
    lo = hi = None
    for n in (1, 5):
        for p in EXP4_X:
            a = d.find("4", "PDL(256B)", "spare", pl, n_updates=n, update_pct=p)
            b = d.find("4", ipl(other, sector), "spare", pl, n_updates=n, update_pct=p)
            if not a or not b:
                continue
            v = b["total_us"] / a["total_us"]
            if lo is None or v < lo[0]:
                lo = (v, p, n)
            if hi is None or v > hi[0]:
                hi = (v, p, n)
    return lo, hi


def block_exp4(d):
    rows = []
    for other, paper in (("OPU", "0.5–3.4×"), ("IPL(18KB)", "1.6–3.1×"), ("IPL(64KB)", "2.0–9.7×")):
        row = [other, paper]
        for pl in PLACEMENTS:
            lo, hi = exp4_ratio(d, other, pl)
            row.append("–" if lo is None else
                       f"{lo[0]:.2f} ({lo[1]} %, N={lo[2]}) – {hi[0]:.2f} ({hi[1]} %, N={hi[2]})")
        rows.append(row)
    t = table(["PDL(256B) improvement over", "paper", "ours, fields", "ours, one run"], rows,
              ["---", "---", "---", "---"])
    abs_rows = []
    for pl in PLACEMENTS:
        for m in ("PDL(256B)", "OPU", "IPL(18KB)", "IPL(64KB)"):
            cells = [us(_v(d.find("4", m, "spare", pl, n_updates=1, update_pct=p), "total_us"))
                     for p in (0, 50, 100)]
            if any(c != "–" for c in cells):
                abs_rows.append([pl, m] + cells)
    return t + "\n\nAbsolute, N = 1, obsolete = spare (µs per operation):\n\n" + table(
        ["placement", "method", "0 %", "50 %", "100 %"], abs_rows, ["---", "---", "---:", "---:", "---:"])


def _v(r, f):
    return None if r is None else r[f]


EXP5_TR = {500: [10, 110, 500, 750, 1000, 1500], 1000: [10, 110, 500, 1000, 1250, 1500]}


def exp5_total(d, m, pl, tr, tw):
    r = d.find("5", m, "spare", pl, source="derived", t_read_us=tr, t_write_us=tw)
    if r is None:
        r = d.find("5", m, "spare", pl, source="measured", t_read_us=tr, t_write_us=tw)
    return _v(r, "total_us")


def block_exp5(d):
    parts = []
    for pl in PLACEMENTS:
        for tw, trs in EXP5_TR.items():
            rows = []
            for m in ("PDL(256B)", "PDL(2KB)", "OPU", "IPL(18KB)", "IPL(64KB)"):
                vals = [exp5_total(d, m, pl, tr, tw) for tr in trs]
                if all(v is None for v in vals):
                    continue
                rows.append([m] + [us(v) for v in vals])
            if rows:
                # Bold the best of each column.
                for j in range(1, len(trs) + 1):
                    nums = [(_num(r[j]), i) for i, r in enumerate(rows) if _num(r[j]) is not None]
                    if nums:
                        best = min(nums)[1]
                        rows[best][j] = f"**{rows[best][j]}**"
                parts.append(f"`placement={pl}`, T_write = {tw} µs:\n\n" + table(
                    ["method"] + [f"T_read {tr}" for tr in trs], rows))
    return "\n\n".join(parts)


def _num(s):
    try:
        return float(s.replace(",", "").strip("*"))
    except ValueError:
        return None


def cost_line(r):
    """Per update op: (page+spare reads, programs, erases) from the per-step counts."""
    n = r["measure_ops"]
    reads = sum(r[f"{s}_{k}"] for s in ("rs", "ws") for k in ("page_reads", "spare_reads")) / n
    progs = (r["rs_programs"] + r["ws_programs"]) / n
    erases = (r["rs_erases"] + r["ws_erases"]) / n
    return reads, progs, erases


def crossover_t_read(d, a, b, pl, t_write, t_erase=1500):
    """T_read at which methods a and b cost the same (N = 1, 2 %), or None."""
    ra = d.find("2", a, "spare", pl, n_updates=1, logical_page=2048)
    rb = d.find("2", b, "spare", pl, n_updates=1, logical_page=2048)
    if not ra or not rb:
        return None
    (ar, ap, ae), (br, bp, be) = cost_line(ra), cost_line(rb)
    if abs(ar - br) < 1e-12:
        return None
    return ((bp - ap) * t_write + (be - ae) * t_erase) / (ar - br)


def sweep_points(d, pl, sector):
    """The IPL log-region sweep under one setting: (total µs, log region KB) per region."""
    return [(r["total_us"], r["log_region"] // 1024) for r in d.recs
            if r["exp"] == "iplsweep" and r["placement"] == pl and r["log_sector"] == sector
            and "error" not in r]


def block_iplsweep(d):
    sizes = sorted({r["log_region"] for r in d.recs if r["exp"] == "iplsweep"})
    if not sizes:
        return "(no `iplsweep` records in the JSON)"
    rows = []
    for size in sizes:
        row = [f"{size // 1024} KB"]
        for pl in PLACEMENTS:
            for sector in (512, 128):
                r = next((r for r in d.recs if r["exp"] == "iplsweep" and r["log_region"] == size
                          and r["log_sector"] == sector and r["placement"] == pl
                          and "error" not in r), None)
                row.append("–" if r is None else
                           f"{us(r['total_us'])} ({r['merges_per_op']:.4f})")
        rows.append(row)
    best = []
    for pl in PLACEMENTS:
        for sector in (512, 128):
            pts = sweep_points(d, pl, sector)
            if pts:
                best.append(f"{pl}/{sector} B: best {min(pts)[1]} KB, worst {max(pts)[1]} KB")
    return table(["log region", "fields, 512-B sectors", "fields, 128-B sectors",
                  "one run, 512-B sectors", "one run, 128-B sectors"], rows) + (
        "\n\nCells: total µs per update (merges per update). " + "; ".join(best) + ".")


def block_gcmerge(d):
    rows = []
    for pl in PLACEMENTS:
        for m in ("PDL(2KB)", "PDL(2KB)/no-merge"):
            r = d.find("1", m, "spare", pl)
            if r:
                rows.append([f"Exp. 1, {pl}", m, us(r["total_us"]), pct(r["case3_pct"]),
                             f3(merges_per_op(r)), f4(r["erases_per_op"]),
                             f"{r['gc_rounds_reached']:.1f}", "yes" if r["unsteady"] else "no"])
    for n in (1, 2, 4, 8):
        for m in ("PDL(2KB)", "PDL(2KB)/no-merge"):
            r = d.find("2", m, "spare", "fields", n_updates=n, logical_page=2048)
            if r:
                rows.append([f"Exp. 2, N={n}", m, us(r["total_us"]), pct(r["case3_pct"]),
                             f3(merges_per_op(r)), f4(r["erases_per_op"]),
                             f"{r['gc_rounds_reached']:.1f}", "yes" if r["unsteady"] else "no"])
    return table(["run", "method", "total µs", "Case 3", "GC merges/op", "erases/op",
                  "GC rounds reached", "unsteady"], rows, ["---", "---"] + ["---:"] * 6)


def block_gcvictim(d, old):
    if old is None:
        return "(no GC-victim run: `./run bench` writes `results/bench-gc-oldest.json`)"
    rows = []
    for r in old.recs:
        if r["exp"] != "1":
            continue
        g = d.find("1", r["method"], r["obsolete"], r["placement"])
        if g is None:
            continue
        rows.append([r["method"], r["obsolete"], r["placement"], us(g["total_us"]),
                     us(r["total_us"]), f"{100 * (r['total_us'] / g['total_us'] - 1):+.2f} %",
                     f4(g["erases_per_op"]), f4(r["erases_per_op"])])
    return table(["method", "obsolete", "placement", "greedy µs", "oldest-first µs", "change",
                  "greedy erases/op", "oldest erases/op"], rows,
                 ["---", "---", "---"] + ["---:"] * 5)


def block_paper_scale(d, paper):
    if paper is None:
        return "(no paper-scale JSON)"
    rows = []
    for r in paper:
        if r.get("exp") != "1" or "error" in r:
            continue
        here = d.find("1", r["method"], r.get("obsolete", "spare"), r.get("placement", "fields"))
        rows.append([r["method"], us(r["read_us"]), us(r["write_us"]), us(r["total_us"]),
                     "–" if here is None else f"{100 * (r['total_us'] / here['total_us'] - 1):+.2f} %",
                     f4(r["erases_per_op"]), f3(r["programs_per_op"]), f"{r['measure_ops']:,}",
                     f"{r['wall_s']:.1f}"])
    return table(["method", "read µs", "write µs", "total µs", "vs 256 MiB (Exp. 1 above)",
                  "erases/op", "programs/op", "ops measured", "wall s (measure)"], rows)


# ---------------------------------------------------------------------------------------------
# Claims: each a rule over the data under one setting -> (figure text, verdict) or None

class Ctx:
    def __init__(self, d, pl, sector):
        self.d, self.pl, self.sector = d, pl, sector
        self.fallback = False

    def m(self, name):
        return ipl(name, self.sector)

    def r(self, exp, name, obsolete="spare", **kw):
        if exp in ("2", "6"):
            kw.setdefault("logical_page", 2048)
        lab = self.m(name)
        rec = self.d.find(exp, lab, obsolete, self.pl, **kw)
        if rec is None and lab != name:
            rec = self.d.find(exp, name, obsolete, self.pl, **kw)
            if rec is not None:
                self.fallback = True
        return rec

    def name5(self, name):
        """The label of `name` whose Exp. 5 grid exists: the setting's, else the 512-byte IPL's
        (a fallback)."""
        lab = self.m(name)
        if lab != name and not any(r["exp"] == "5" and r["method"] == lab and
                                   r["placement"] == self.pl for r in self.d.recs):
            self.fallback = True
            return name
        return lab

    def v(self, exp, name, field, obsolete="spare", **kw):
        rec = self.r(exp, name, obsolete, **kw)
        if rec is None:
            raise Missing(f"{exp}/{name}/{kw}")
        return rec[field]


class Missing(Exception):
    pass


def order_text(pairs, fmt=us):
    return " > ".join(f"{n} {fmt(v)}" for n, v in sorted(pairs, key=lambda p: -p[1]))


def short(name):
    return name.replace("PDL(256B)", "PDL256").replace("PDL(2KB)", "PDL2K").replace(
        "IPL(18KB)", "IPL18").replace("IPL(64KB)", "IPL64")


def c_e1_read(c):
    v = {n: c.v("1", n, "read_us") for n in SIX}
    groups = [["IPL(64KB)"], ["IPL(18KB)"], ["PDL(2KB)", "PDL(256B)"], ["OPU", "IPU"]]
    ok = all(min(v[a] for a in groups[i]) > max(v[b] for b in groups[i + 1]) - 1e-9
             for i in range(len(groups) - 1))
    return order_text([(short(n), v[n]) for n in SIX]), "yes" if ok else "no"


def order_claim(c, exp, field, want, fmt=us, **kw):
    """The paper's order `want` (largest first) of `field`: yes if exactly that order; partly if
    the methods other than IPL are in that order; no otherwise."""
    v = {n: c.v(exp, n, field, **kw) for n in want}
    got = sorted(want, key=lambda n: -v[n])
    if got == want:
        verdict = "yes"
    else:
        non_ipl = [n for n in got if not n.startswith("IPL")]
        verdict = "partly" if non_ipl == [n for n in want if not n.startswith("IPL")] else "no"
    return order_text([(short(n), v[n]) for n in want], fmt), verdict


def c_e1_write(c):
    return order_claim(c, "1", "write_us",
                       ["IPU", "OPU", "PDL(2KB)", "IPL(18KB)", "IPL(64KB)", "PDL(256B)"])


def c_e1_programs(c):
    opu = c.v("1", "OPU", "programs_per_op")
    p2k = c.v("1", "PDL(2KB)", "programs_per_op")
    i18 = c.v("1", "IPL(18KB)", "log_sectors_per_op")
    ok = 1.5 <= opu <= 2.5 and 0.75 <= p2k <= 1.35 and 0.75 <= i18 <= 1.25
    return (f"OPU {opu:.2f}, PDL2K {p2k:.2f} programs/op; IPL18 {i18:.2f} log sectors/op",
            "yes" if ok else "no")


def c_e1_best(c):
    v = {n: c.v("1", n, "total_us") for n in SIX}
    best = min(v, key=v.get)
    rest = sorted((n for n in SIX if n != "PDL(256B)"), key=v.get)
    return (f"PDL256 {us(v['PDL(256B)'])}; next {short(rest[0])} {us(v[rest[0]])}",
            "yes" if best == "PDL(256B)" else "no")


def c_e1_sweep(c):
    pts = sweep_points(c.d, c.pl, c.sector)
    if not pts:
        raise Missing("iplsweep")
    best, worst = min(pts)[1], max(pts)[1]
    return (f"best {best} KB ({us(min(pts)[0])}), worst {worst} KB ({us(max(pts)[0])})",
            "yes" if (best, worst) == (18, 64) else "partly" if best == 18 or worst == 64
            else "no")


def c_e1_memory(c):
    out, ok = [], True
    for n in ("PDL(256B)", "OPU"):
        s, m = c.v("1", n, "total_us", "spare"), c.v("1", n, "total_us", "memory")
        out.append(f"{short(n)} {s / m:.2f}×")
        ok &= 1 < s / m <= 2
    return ", ".join(out), "yes" if ok else "no"


def exp2_series(c, name):
    return [c.v("2", name, "total_us", n_updates=n) for n in range(1, 9)]


def c_e2_steady(c):
    out, ok = [], True
    for n in ("OPU", "IPU"):
        s = exp2_series(c, n)
        out.append(f"{short(n)} {us(min(s))}–{us(max(s))}")
        ok &= max(s) / min(s) - 1 <= 0.02
    return "; ".join(out), "yes" if ok else "no"


def c_e2_ipl_steps(c):
    out, ok = [], True
    for n in ("IPL(18KB)", "IPL(64KB)"):
        s = exp2_series(c, n)
        rises = [s[i + 1] / s[i] - 1 for i in range(7)]
        steps = sum(r > 0.10 for r in rises)
        flats = sum(abs(r) < 0.03 for r in rises)
        ok &= all(r > -0.01 for r in rises) and steps >= 1 and flats >= 1
        out.append(f"{short(n)} {us(s[0])} → {us(s[-1])}: {steps} steps, {flats} flat")
    return "; ".join(out), "yes" if ok else "no"


def growth(c, name):
    s = exp2_series(c, name)
    return s[-1] / s[0]


def c_e2_pdl2k(c):
    g = growth(c, "PDL(2KB)")
    others = {n: growth(c, n) for n in ("PDL(256B)", "IPL(18KB)", "IPL(64KB)")}
    slowest = all(g < o for o in others.values())
    verdict = "yes" if g <= 1.25 else "partly" if slowest else "no"
    return (f"{g:.2f}× over N=1–8 (PDL256 {others['PDL(256B)']:.2f}×, "
            f"IPL18 {others['IPL(18KB)']:.2f}×)", verdict)


def c_e2_pdl256(c):
    s = exp2_series(c, "PDL(256B)")
    o = exp2_series(c, "OPU")
    rising = all(s[i + 1] >= s[i] * 0.99 for i in range(7))
    near = abs(s[-1] / o[-1] - 1) <= 0.10
    return (f"{us(s[0])} → {us(s[-1])} (OPU {us(o[-1])}, {100 * (s[-1] / o[-1] - 1):+.1f} % at N=8)",
            "yes" if rising and near else "no")


def c_e2_best(c):
    ok_up_to = 0
    for n in range(1, 9):
        p = c.v("2", "PDL(256B)", "total_us", n_updates=n)
        rivals = min(c.v("2", m, "total_us", n_updates=n)
                     for m in ("OPU", "IPU", "IPL(18KB)", "IPL(64KB)"))
        if p < rivals:
            ok_up_to = n
        else:
            break
    p8, o8 = c.v("2", "PDL(256B)", "total_us", n_updates=8), c.v("2", "OPU", "total_us", n_updates=8)
    if ok_up_to == 8:
        return f"below all of them at every N (N=8: {us(p8)} vs OPU {us(o8)})", "yes"
    return (f"below them for N ≤ {ok_up_to}; at N=8 {100 * (p8 / o8 - 1):+.1f} % against OPU",
            "partly" if ok_up_to >= 1 else "no")


def c_e3_best(c):
    ok_up_to = None
    for p in EXP3_X:
        a = c.v("3", "PDL(256B)", "total_us", n_updates=1, changed_pct=p)
        rivals = min(c.v("3", m, "total_us", n_updates=1, changed_pct=p)
                     for m in ("OPU", "IPU", "IPL(18KB)", "IPL(64KB)"))
        if a < rivals:
            ok_up_to = p
        else:
            break
    a100 = c.v("3", "PDL(256B)", "total_us", n_updates=1, changed_pct=100)
    o100 = c.v("3", "OPU", "total_us", n_updates=1, changed_pct=100)
    if ok_up_to == EXP3_X[-1]:
        return "best at every %Changed", "yes"
    return (f"best up to {ok_up_to:g} %; at 100 % PDL256 {us(a100)} vs OPU {us(o100)}"
            if ok_up_to is not None else "not best even at 0.1 %",
            "partly" if ok_up_to is not None else "no")


def c_e3_pdl2k(c):
    a = c.v("3", "PDL(2KB)", "total_us", n_updates=1, changed_pct=100)
    o = c.v("3", "OPU", "total_us", n_updates=1, changed_pct=100)
    return (f"{us(a)} vs {us(o)} µs ({100 * (a / o - 1):+.1f} %)",
            "yes" if 1 < a / o <= 1.15 else "no")


def c_e4_range(other, lo_p, hi_p):
    def rule(c):
        lo, hi = exp4_ratio(c.d, other, c.pl, c.sector)
        if lo is None and c.m(other) != other:  # no Exp. 4 run of this IPL: the 512-byte one
            lo, hi = exp4_ratio(c.d, other, c.pl, 512)
            c.fallback = True
        if lo is None:
            raise Missing(other)
        lo_ok = abs(lo[0] / lo_p - 1) <= 0.15
        hi_ok = hi[0] >= hi_p * 0.85
        verdict = "yes" if lo_ok and hi_ok else "partly" if lo_ok or hi_ok else "no"
        return f"{lo[0]:.2f} – {hi[0]:.2f}×", verdict
    return rule


def c_e4_readonly(c):
    o = c.v("4", "OPU", "total_us", n_updates=1, update_pct=0)
    others = {n: c.v("4", n, "total_us", n_updates=1, update_pct=0)
              for n in ("PDL(256B)", "PDL(2KB)", "IPL(18KB)", "IPL(64KB)")}
    return (f"OPU {us(o)} vs " + ", ".join(f"{short(n)} {us(v)}" for n, v in others.items()),
            "yes" if all(o < v for v in others.values()) else "no")


def c_e4_overtake(c):
    pts = [(p, c.v("4", "PDL(256B)", "total_us", n_updates=1, update_pct=p),
            c.v("4", "OPU", "total_us", n_updates=1, update_pct=p)) for p in EXP4_X]
    for i, (p, a, o) in enumerate(pts):
        if all(a_ < o_ for _, a_, o_ in pts[i:]):  # below from p on, to 100 %
            return f"N=1: from {p} % on ({us(a)} vs {us(o)} µs)", "yes"
    return "not below OPU from any % on (N=1)", "no"


def c_e4_ipl(c):
    bad = []
    for n in (1, 5):
        for p in EXP4_X:
            a = c.v("4", "PDL(256B)", "total_us", n_updates=n, update_pct=p)
            for m in ("IPL(18KB)", "IPL(64KB)"):
                if not a < c.v("4", m, "total_us", n_updates=n, update_pct=p):
                    bad.append(f"{short(m)} N={n} {p} %")
    return ("every point, both N" if not bad else "not at " + ", ".join(bad[:3])), (
        "yes" if not bad else "no")


def c_e5_ipl(c):
    bad = 0
    for tw, trs in EXP5_TR.items():
        for tr in trs:
            a = exp5_total(c.d, "PDL(256B)", c.pl, tr, tw)
            for m in ("IPL(18KB)", "IPL(64KB)"):
                b = exp5_total(c.d, c.name5(m), c.pl, tr, tw)
                if a is None or b is None:
                    raise Missing("5")
                bad += not a < b
    return ("every point" if not bad else f"{bad} points not"), "yes" if not bad else "no"


def c_e5_opu(c):
    parts, all_ok = [], True
    for tw, trs in EXP5_TR.items():
        ok = all(exp5_total(c.d, "PDL(256B)", c.pl, tr, tw) < exp5_total(c.d, "OPU", c.pl, tr, tw)
                 for tr in trs)
        all_ok &= ok
        x_ = crossover_t_read(c.d, "PDL(256B)", "OPU", c.pl, tw)
        if x_ is not None:
            parts.append(f"OPU wins above T_read ≈ {x_:.0f} µs (T_write {tw})")
    return "; ".join(parts), "yes" if all_ok else "no"


def c_e5_opu_overtakes(c):
    out, ok = [], True
    for m in ("PDL(2KB)", "IPL(18KB)", "IPL(64KB)"):
        m = c.name5(m)
        x_ = crossover_t_read(c.d, m, "OPU", c.pl, 500)
        o = exp5_total(c.d, "OPU", c.pl, 1500, 500)
        b = exp5_total(c.d, m, c.pl, 1500, 500)
        if o is None or b is None:
            raise Missing("5")
        ok &= o < b
        out.append(f"{short(m)} from ≈ {x_:.0f} µs" if x_ and x_ > 0 else f"{short(m)}: always")
    return "OPU below " + ", ".join(out) + " (T_write 500)", "yes" if ok else "no"


def c_e6_order(c):
    return order_claim(c, "6", "erases_per_op",
                       ["OPU", "PDL(2KB)", "IPL(18KB)", "PDL(256B)", "IPL(64KB)"], f4, n_updates=1)


def c_e6_longevity(c):
    names = ["OPU", "PDL(2KB)", "IPL(18KB)", "PDL(256B)", "IPL(64KB)"]
    v = {n: c.v("6", n, "erases_per_op", n_updates=1) for n in names}
    two = sorted(names, key=v.get)[:2]
    return (f"fewest: {short(two[0])} {f4(v[two[0]])}, then {short(two[1])} {f4(v[two[1]])}",
            "yes" if two == ["IPL(64KB)", "PDL(256B)"] else "no")


def c_e2_8k(c):
    """At each N, the six rank as at 2 KB (N = 1..8, obsolete=spare, fields)."""
    if c.pl != "fields":
        raise Missing("2-8k runs fields only")
    exp8 = "2-8k" if any(r["exp"] == "2-8k" for r in c.d.recs) else "2"
    same = []
    for n in range(1, 9):
        ranks = []
        for lp, exp in ((2048, "2"), (8192, exp8)):
            v = {m: c.d.find(exp, m, "spare", "fields", n_updates=n, logical_page=lp) for m in SIX}
            if any(r is None for r in v.values()):
                raise Missing("2-8k")
            ranks.append(sorted(SIX, key=lambda m: v[m]["total_us"]))
        same.append(ranks[0] == ranks[1])
    if c.sector == 128:
        c.fallback = True
    diff = [str(n + 1) for n, ok in enumerate(same) if not ok]
    text = ("the six rank as at 2 KB at every N" if not diff else
            f"rank as at 2 KB but at N = {', '.join(diff)}")
    return text, "yes" if not diff else "partly" if len(diff) < 8 else "no"


CLAIMS = [
    ("1", "read time, worst first: IPL(64KB), IPL(18KB), PDL(2KB)/PDL(256B), OPU/IPU",
     "each group's fastest slower than the next group's slowest", c_e1_read),
    ("1", "write time, worst first: IPU, OPU, PDL(2KB), IPL(18KB), IPL(64KB), PDL(256B)",
     "exactly that order; partly: right but for the IPLs' places", c_e1_write),
    ("1", "OPU needs two writes per update, PDL(2KB) about one, IPL one",
     "OPU 1.5–2.5, PDL(2KB) 0.75–1.35 programs/op, IPL(18KB) 0.75–1.25 log sectors/op", c_e1_programs),
    ("1", "overall: PDL(256B) best", "least total µs of the six", c_e1_best),
    ("1", "IPL's log region, varied 8–64 KB: 18 KB best, 64 KB worst",
     "least and most total µs of the sweep; partly: one of the two", c_e1_sweep),
    ("1", "obsolete bits in RAM: up to two folds (§6)", "1 < spare/memory ≤ 2 for PDL(256B) and OPU",
     c_e1_memory),
    ("2", "OPU and IPU steady", "max/min over N=1–8 ≤ 1.02", c_e2_steady),
    ("2", "IPL increases stepwise", "never falls > 1 %, ≥ 1 rise > 10 % and ≥ 1 flat step (< 3 %)",
     c_e2_ipl_steps),
    ("2", "PDL(2KB) increases only very slightly",
     "N=8/N=1 ≤ 1.25; partly: more, but slower than PDL(256B) and both IPLs", c_e2_pdl2k),
    ("2", "PDL(256B) increases about linearly and approaches OPU (Case 3)",
     "never falls > 1 %, within 10 % of OPU at N=8", c_e2_pdl256),
    ("2", "PDL(256B) outperforms OPU, IPU and IPL",
     "below all four at every N; partly: for the first N only", c_e2_best),
    ("2", "8 KB logical pages: a tendency similar to 2 KB",
     "at each N=1–8 the six rank as at 2 KB; partly: not at every N", c_e2_8k),
    ("3", "PDL(256B) outperforms OPU, IPU, IPL (consistent with Exp. 2)",
     "below all four at every %Changed (N=1); partly: up to some %", c_e3_best),
    ("3", "near 100 %, PDL(2KB) slightly above OPU", "1 < PDL(2KB)/OPU ≤ 1.15 at 100 %", c_e3_pdl2k),
    ("4", "PDL(256B) improves on OPU 0.5–3.4×", "low end within 15 %, high end ≥ 85 % of the paper's; partly: one end",
     c_e4_range("OPU", 0.5, 3.4)),
    ("4", "PDL(256B) improves on IPL(18KB) 1.6–3.1×", "as above", c_e4_range("IPL(18KB)", 1.6, 3.1)),
    ("4", "PDL(256B) improves on IPL(64KB) 2.0–9.7×", "as above", c_e4_range("IPL(64KB)", 2.0, 9.7)),
    ("4", "read-only (0 %): OPU beats PDL and IPL", "OPU least at 0 %, N=1", c_e4_readonly),
    ("4", "as %UpdateOps grows PDL overtakes OPU", "PDL(256B) below OPU from some % on (N=1)",
     c_e4_overtake),
    ("4", "PDL always outperforms IPL", "PDL(256B) below both IPLs at every point, N=1 and 5",
     c_e4_ipl),
    ("5", "PDL(256B) always outperforms IPL", "every (T_read, T_write) point", c_e5_ipl),
    ("5", "PDL(256B) always outperforms OPU", "every (T_read, T_write) point", c_e5_opu),
    ("5", "as T_read grows, OPU overtakes PDL(2KB) and IPL", "OPU below each at T_read 1500 (T_write 500)",
     c_e5_opu_overtakes),
    ("6", "N=1, most erases first: OPU, PDL(2KB), IPL(18KB), PDL(256B), IPL(64KB)",
     "exactly that order; partly: right but for the IPLs' places", c_e6_order),
    ("6", "IPL(64KB) best longevity, PDL(256B) next", "the two fewest erases/op, in that order",
     c_e6_longevity),
]


def evaluate(d):
    """verdicts[i][setting] = (text, verdict, fallback) or None."""
    out = []
    for exp, claim, rule, fn in CLAIMS:
        row = {}
        for pl, sector in SETTINGS:
            c = Ctx(d, pl, sector)
            try:
                text, verdict = fn(c)
                row[(pl, sector)] = (text, verdict, c.fallback)
            except Missing:
                row[(pl, sector)] = None
        out.append(row)
    return out


def block_claims(d):
    ev = evaluate(d)
    rows = []
    for i, ((exp, claim, rule, _), row) in enumerate(zip(CLAIMS, ev)):
        cells = []
        for s in SETTINGS:
            v = row[s]
            if v is None:
                cells.append("not run")
                continue
            text, verdict, fb = v
            base = row[SETTINGS[0]] if s[1] == 128 else None
            same = base is not None and s[1] == 128 and row[(s[0], 512)] is not None and \
                row[(s[0], 512)][:2] == (text, verdict)
            mark = "†" if fb else ""
            if same:
                cells.append(f"as 512 B{mark}")
            else:
                cells.append(f"{text} — **{verdict}**{mark}")
        rows.append([f"{exp}.{_index(i)}", claim, rule] + cells)
    head = ["#", "paper claim ([PDL] §5.2)", "rule"] + [SETTING_TEXT[s] for s in SETTINGS]
    return table(head, rows, ["---"] * (3 + len(SETTINGS)))


def block_tally(d):
    ev = evaluate(d)
    rows = []
    for s in SETTINGS:
        counts = {"yes": 0, "partly": 0, "no": 0}
        missing = 0
        for row in ev:
            v = row[s]
            if v is None:
                missing += 1
            else:
                counts[v[1]] += 1
        no_list = [f"{CLAIMS[i][0]}.{_index(i)}" for i, row in enumerate(ev)
                   if row[s] is not None and row[s][1] != "yes"]
        rows.append([SETTING_TEXT[s], str(counts["yes"]), str(counts["partly"]), str(counts["no"]),
                     str(missing), ", ".join(no_list) or "—"])
    return table(["setting", "yes", "partly", "no", "not run", "claims not agreeing (Exp.claim)"],
                 rows, ["---", "---:", "---:", "---:", "---:", "---"])


def _index(i):
    exp = CLAIMS[i][0]
    return sum(1 for j in range(i + 1) if CLAIMS[j][0] == exp)


def block_deviations(d, old):
    rows = []
    # Change placement.
    f1 = d.find("1", "PDL(256B)", "spare", "fields")
    r1 = d.find("1", "PDL(256B)", "spare", "run")
    o1f = d.find("1", "OPU", "spare", "fields")
    o1r = d.find("1", "OPU", "spare", "run")
    eff = []
    if f1 and r1 and o1f and o1r:
        eff.append(f"Exp. 1 OPU/PDL(256B) {o1f['total_us'] / f1['total_us']:.2f}× (fields) vs "
                   f"{o1r['total_us'] / r1['total_us']:.2f}× (run); records "
                   f"{f1['avg_diff_bytes']:.0f} vs {r1['avg_diff_bytes']:.0f} B")
    for pl in PLACEMENTS:
        a = d.find("2", "PDL(256B)", "spare", pl, n_updates=5, logical_page=2048)
        if a:
            eff.append(f"Exp. 2 N=5 PDL(256B) {us(a['total_us'])} µs, Case 3 "
                       f"{a['case3_pct']:.0f} % ({pl})")
    for pl in PLACEMENTS:
        a = d.find("3", "PDL(256B)", "spare", pl, n_updates=1, changed_pct=10)
        if a:
            eff.append(f"Exp. 3 10 % PDL(256B) {us(a['total_us'])} µs ({pl})")
    rows.append(["where a change's bytes go", "\"randomly selected\" portion of the page (§5.1)",
                 "8-byte fields at random places (`fields`, ~6 runs at 2 %) or one contiguous run (`run`)",
                 "; ".join(eff) or "–"])
    # IPL log sector.
    eff = []
    for size in ("18KB", "64KB"):
        a = d.find("1", f"IPL({size})", "spare", "fields")
        b = d.find("1", f"IPL({size})/128B", "spare", "fields")
        if a and b:
            eff.append(f"Exp. 1 IPL({size}) write {us(a['write_us'])} → {us(b['write_us'])} µs, "
                       f"erases/op {a['erases_per_op']:.4f} → {b['erases_per_op']:.4f}")
    rows.append(["IPL's flush unit and NOP", "a 128-byte log buffer per page (page/16, footnote 14); "
                 "no NOP given (Table 1)",
                 "512-byte log sectors ([IPL]'s), NOP 4; or 128-byte sectors (`log_sector=128`, "
                 "100 bytes of records after the 28-byte sector header), NOP 16",
                 "; ".join(eff) or "–"])
    # IPL best/worst log region.
    eff = []
    for sector in (512, 128):
        pts = sweep_points(d, "fields", sector)
        if pts:
            eff.append(f"{sector}-B sectors: best {min(pts)[1]} KB, worst {max(pts)[1]} KB "
                       "(fields)")
    rows.append(["IPL's log region", "18 KB best and 64 KB worst of 8–64 KB (Exp. 1 text)",
                 "IPL(18KB) and IPL(64KB) as the paper's, and the sweep", "; ".join(eff) or "–"])
    # GC merge.
    a = d.find("1", "PDL(2KB)", "spare", "fields")
    b = d.find("1", "PDL(2KB)/no-merge", "spare", "fields")
    eff = "–"
    if a and b:
        eff = (f"Exp. 1 PDL(2KB) {us(a['total_us'])} µs, Case 3 {a['case3_pct']:.1f} %, "
               f"{merges_per_op(a):.3f} merges/op with it; {us(b['total_us'])} µs, Case 3 "
               f"{b['case3_pct']:.1f} %{', unsteady' if b['unsteady'] else ''} without")
    rows.append(["GC merge of large differentials", "none: GC moves base pages and compacts "
                 "differentials (§4.1)", "GC rewrites a differential > half a page with its base "
                 "page as a new base page", eff])
    # GC victim.
    eff = "–"
    if old is not None:
        ch = {}
        for r in old.recs:
            g = d.find("1", r["method"], r["obsolete"], r["placement"]) if r["exp"] == "1" else None
            if g:
                ch.setdefault(r["method"], []).append(100 * (r["total_us"] / g["total_us"] - 1))
        eff = ("Exp. 1 total µs, oldest-first against greedy (both obsolete modes and "
               "placements): " + ", ".join(f"{m} {min(v):+.1f} … {max(v):+.1f} %"
                                           for m, v in ch.items()))
    rows.append(["GC victim", "Woodhouse's JFFS (footnote 15): the log's head, oldest first",
                 "greedy (fewest valid pages)", eff])
    # Case 3 read.
    a = d.find("2", "PDL(256B)", "spare", "fields", n_updates=8, logical_page=2048)
    o = d.find("2", "OPU", "spare", "fields", n_updates=8, logical_page=2048)
    eff = "–" if not (a and o) else (f"Exp. 2 N=8: PDL(256B) {us(a['total_us'])} = OPU "
                                     f"{us(o['total_us'])} + {us(a['total_us'] - o['total_us'])} µs")
    rows.append(["the base-page read of a Case 3 write", "Fig. 4 reads the base page before it "
                 "knows the case", "as Fig. 4 (not a deviation: the paper's figures do not show "
                 "the read's cost)", eff])
    # 8 KB logical pages.
    exp = "2-8k" if any(r["exp"] == "2-8k" for r in d.recs) else "2"
    a1 = d.find(exp, "PDL(256B)", "spare", "fields", n_updates=1, logical_page=8192)
    a8 = d.find(exp, "PDL(256B)", "spare", "fields", n_updates=8, logical_page=8192)
    eff = "–" if not (a1 and a8) else (f"Exp. 2 at 8 KB: PDL(256B) {us(a1['total_us'])} → "
                                       f"{us(a8['total_us'])} µs over N=1–8")
    rows.append(["8 KB logical pages", "tested, \"a tendency similar\" (§5.1, Exp. 2)",
                 "a logical page of 4 flash pages, stored as 4 logical pages of the store (as the "
                 "VFS stores a SQLite page larger than a flash page)", eff])
    return table(["choice", "paper", "ours", "effect (measured)"], rows, ["---"] * 4)


# ---------------------------------------------------------------------------------------------

def blocks(d, old, paper):
    return {
        "exp1": lambda: block_exp1(d),
        "exp1-cases": lambda: block_exp1_cases(d),
        "exp2": lambda: block_exp2(d),
        "exp2-8k": lambda: block_exp2_8k(d),
        "exp3": lambda: block_exp3(d),
        "exp4": lambda: block_exp4(d),
        "exp5": lambda: block_exp5(d),
        "exp6": lambda: block_exp6(d),
        "iplsweep": lambda: block_iplsweep(d),
        "gc-merge": lambda: block_gcmerge(d),
        "gc-victim": lambda: block_gcvictim(d, old),
        "claims": lambda: block_claims(d),
        "tally": lambda: block_tally(d),
        "deviations": lambda: block_deviations(d, old),
        "exp1-paper": lambda: block_paper_scale(d, paper),
    }


MARK = re.compile(r"(<!-- generated: ([a-z0-9-]+) -->\n)(.*?)(<!-- end: \2 -->)", re.S)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("markdown")
    ap.add_argument("--bench", required=True, help="pdl-bench --json output (Exp. 1-6)")
    ap.add_argument("--gc-oldest", help="pdl-bench --gc-victim oldest --json output")
    ap.add_argument("--paper", help="pdl-bench --exp 1 --paper-scale --json output")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if the file differs from what the JSON gives")
    a = ap.parse_args()
    try:
        d = Data(load(a.bench))
        old = Data(load(a.gc_oldest)) if a.gc_oldest else None
        paper = load(a.paper) if a.paper else None
        with open(a.markdown, encoding="utf-8") as f:
            text = f.read()
    except (OSError, ValueError) as e:
        print(f"results_md.py: {e}", file=sys.stderr)
        return 2
    new, seen = md_blocks.render(text, MARK, blocks(d, old, paper), "results_md.py")
    if not seen:
        print(f"results_md.py: {a.markdown} has no generated block", file=sys.stderr)
        return 2
    return md_blocks.write_or_check(a.markdown, text, new, a.check, "results_md.py",
                                    "bench/results_md.py (or ./run bench)")


if __name__ == "__main__":
    sys.exit(main())
