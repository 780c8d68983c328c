"""report.py — the text of docs/results/peers.txt from run_peers.py's result (the JSON). Pure.

Tables per age: programs, erases, reads (page + spare-only) and simulated time at [PDL] Table 1
timing per transaction, a column per system; the mount cost after a clean unmount (after
workload c); the project's targets against UBIFS (default compression); the cross-checks.
"""
LABEL = {"ubifs": "UBIFS", "ubifs-none": "UBIFS none", "jffs2": "JFFS2",
         "pdl256-atomic": "PDL atomic", "pdl256-journal": "PDL journal",
         "opu-atomic": "OPU atomic", "opu-journal": "OPU journal"}
LONG = {"ubifs": "UBIFS on UBI, default compression (lzo)",
        "ubifs-none": "UBIFS on UBI, compr=none",
        "jffs2": "JFFS2, default compressors (WAL: locking_mode=EXCLUSIVE)",
        "pdl256-atomic": "pdl, PDL(256B), atomic commit (no journal on flash)",
        "pdl256-journal": "pdl, PDL(256B), SQLite's journal on flash",
        "opu-atomic": "pdl, OPU, atomic commit", "opu-journal": "pdl, OPU, journal on flash"}
WTITLE = {"a": "(a) INSERT, DELETE", "b": "(b) INSERT, WAL", "c": "(c) UPDATE, DELETE",
          "d": "(d) UPDATE, WAL", "t": "(t) TPC-C, DELETE"}
MOUNT_AFTER = "c"      # the mount is measured after every run; the table shows this one's
PDL_HEAD = "pdl256-atomic"  # the targets' pdl
TARGETS = {"a": 1 / 3, "c": 1 / 3, "b": 1.0, "d": 1.0, "t": 1.0}


def cell(x, width=11, digits=2):
    return ("–" if x is None else f"{x:,.{digits}f}").rjust(width)


def per_txn(result, age, system, w, key):
    r = result["runs"].get(f"{age}/{system}/{w}")
    return None if not r else r["per_txn"][key]


def mount(result, age, system):
    r = result["runs"].get(f"{age}/{system}/{MOUNT_AFTER}")
    return None if not r else r.get("mount")


def table(result, age, key, title, digits=2):
    systems = result["systems"]
    out = [f"{title} ({age} device)", f"{'workload':20}" +
           "".join(LABEL[s].rjust(12) for s in systems)]
    for w in result["workloads"]:
        out.append(f"{WTITLE[w]:20}" + "".join(
            " " + cell(per_txn(result, age, s, w, key), 11, digits) for s in systems))
    return out


def close_table(result, age):
    """Programs and erases per transaction after the last transaction (S1 -> S2)."""
    out = [f"of these, after the last transaction (S1 -> S2), programs / erases per transaction "
           f"({age} device)", f"{'workload':20}" +
           "".join(LABEL[s].rjust(14) for s in result["systems"])]
    for w in result["workloads"]:
        cells = []
        for s in result["systems"]:
            r = result["runs"].get(f"{age}/{s}/{w}")
            if not r:
                cells.append("–".rjust(14))
                continue
            a, b, t = r["counts"], r["counts_before_close"], result["txns"]
            cells.append(f"{(a['programs'] - b['programs']) / t:.2f}/"
                         f"{(a['erases'] - b['erases']) / t:.3f}".rjust(14))
        out.append(f"{WTITLE[w]:20}" + "".join(cells))
    out.append("  pdl: its close (the WAL's checkpoint into the database in (b)/(d); the tables' "
               "checkpoint, written at every clean close after changes); the file systems: "
               "the close, the sync and the background commit and erases")
    return out


def mount_table(result, age):
    out = [f"mount after a clean unmount ({age} device, after workload ({MOUNT_AFTER})): NAND "
           "operations", f"{'system':16}{'step 1':>12}{'step 2':>10}{'reads':>10}"
           f"{'programs':>10}{'erases':>8}{'sim ms':>10}"]
    for s in result["systems"]:
        m = mount(result, age, s)
        if m is None:
            out.append(f"{LABEL[s]:16}{'–':>12}")
            continue
        r1 = m["step1"]["page_reads"] + m["step1"]["spare_reads"]
        r2 = m["step2"]["page_reads"] + m["step2"]["spare_reads"]
        rep = result["runs"][f"{age}/{s}/{MOUNT_AFTER}"].get("pdl_mount_report")
        how = ("" if rep is None else "  checkpoint" if rep.get("from_checkpoint")
               else f"  scan: {rep.get('scan_reason')}")
        out.append(f"{LABEL[s]:16}{r1:>12,}{r2:>10,}{m['reads']:>10,}{m['programs']:>10,}"
                   f"{m['erases']:>8,}{m['sim_ms']:>10,.1f}{how}")
    out.append("  step 1: UBI attach / the JFFS2 mount / pdl's mount (opening the store); "
               "step 2: the UBIFS mount")
    return out


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def targets(result, age):
    """[(what, pdl, ubifs, ratio, goal, met)] for the age."""
    rows = []
    for pdl in ["pdl256-atomic", "pdl256-journal"]:
        for w in result["workloads"]:
            p = per_txn(result, age, pdl, w, "programs")
            u = per_txn(result, age, "ubifs", w, "programs")
            q = ratio(p, u)
            rows.append((f"{LABEL[pdl]} {WTITLE[w]} programs/txn", p, u, q, TARGETS[w],
                         None if q is None else q <= TARGETS[w] + 1e-12))
        pm, um = mount(result, age, pdl), mount(result, age, "ubifs")
        q = ratio(pm and pm["reads"], um and um["reads"])
        rows.append((f"{LABEL[pdl]} mount reads", pm and pm["reads"], um and um["reads"], q,
                     1.0, None if q is None else q <= 1.0))
    return rows


def target_lines(result, age):
    out = [f"targets against UBIFS (lzo) ({age} device): pdl / UBIFS, goal",
           f"{'':44}{'pdl':>10}{'UBIFS':>10}{'ratio':>8}{'goal':>8}  met"]
    for what, p, u, q, goal, met in targets(result, age):
        dg = 0 if "mount" in what else 2
        out.append(f"{what:44}{cell(p, 10, dg)}{cell(u, 10, dg)}{cell(q, 8)}"
                   f"{'≤ ' + f'{goal:.2f}':>8}"
                   f"  {'–' if met is None else 'yes' if met else 'NO'}")
    return out


def tpcc_line(result):
    t = result.get("tpcc")
    if not t:
        return "(t) not run"
    return (f"(t) pdl-tpcc ({' '.join(t['args'])}): TPC-C-like transactions on a database of "
            f"scale {t['scale']:g} of one warehouse, journal_mode={t['journal']}, the same seed "
            "and transactions on every system (the unix VFS in the mounted file system; pdl: "
            "the method in the device), content checksum and TPC-C consistency checked")


def text(result):
    out = [f"peers: pdl against UBIFS and JFFS2 on the kernel's nandsim "
           f"({result['command']}; bench/peers/)",
           f"kernel {result.get('kernel')}; QEMU TCG; VM wall time {result.get('vm_wall_s')} s, "
           f"whole run {result.get('wall_s')} s (wall-clock, this machine)",
           result.get("device") or "PDL-MTD-DEVICE: ?",
           f"{result['txns']:,} transactions a workload, each one statement (autocommit); "
           f"{result['row_bytes']}-byte rows; (c)/(d) on a {result['table_rows']:,}-row table; "
           f"SQLite pages {result['page_size']} B; synchronous=FULL",
           tpcc_line(result),
           "counts: kprobes on the NAND core (nand_read_page_op, nand_read_oob_op, "
           "nand_prog_page_op + nand_prog_page_end_op, nand_erase_op) from just before the "
           "first measured transaction to after the close, a sync and the settle of UBI's "
           "background erases; per transaction. Operation counts are machine-independent; "
           "sim ms = the counts at [PDL] Table 1 timing (read 110 us, program 1010 us, "
           "erase 1500 us)", "systems:"]
    out += [f"  {LABEL[s]:12} {LONG[s]}" for s in result["systems"]]
    for age in result["ages"]:
        if age == "aged":
            out += ["", "aged: static data filled first (UBIFS/JFFS2: a file of random bytes; pdl: "
                    "a table of random blobs in the same database) to >= 90 % of the capacity:"]
            for s in result["systems"]:
                f = result["full"].get(f"aged/{s}/fill")
                out.append(f"  {LABEL[s]:12} {f or '–'}")
        for key, title, dg in [("programs", "programs per transaction", 2),
                               ("erases", "erases per transaction", 3),
                               ("reads", "reads per transaction (page + spare-only)", 2),
                               ("sim_ms", "simulated ms per transaction ([PDL] Table 1)", 2)]:
            out += [""] + table(result, age, key, title, dg)
        out += [""] + close_table(result, age)
        out += [""] + mount_table(result, age)
        out += [""] + target_lines(result, age)
    out += ["", "pdl on nandsim vs the host emulator (same geometry, same SQL; pdl_stats of the "
            "measured transactions: page reads, spare reads, programs, erases):"]
    for e in result["emulator"]:
        n, m = e["nandsim"], e["emulator"]
        f = lambda c: "missing" if c is None else (f"{c['page_reads']} {c['spare_reads']} "
                                                   f"{c['programs']} {c['erases']}")
        out.append(f"  {e['run']:28} nandsim {f(n):24} emulator {f(m):24} "
                   f"{'equal' if n == m else 'DIFFERENT'}")
    bad = result["mismatches"] + result["failures"]
    out += ["", f"checks: {len(bad)} failed" + ("" if bad else
            " (the NAND core's counts equal pdl's own; nandsim equals the emulator; every "
            "system holds the same table after each workload)")]
    out += [f"  FAIL {b}" for b in bad]
    out.append(f"result: {'PASS' if not bad and result.get('vm_status') == 0 else 'FAIL'}")
    return "\n".join(out) + "\n"
