"""vm_script.py — the shell script `./run peers` runs in the test-mtd VM (tests/mtd/vm.py), and
the files it needs there.

Counting: kprobes in tracefs on the NAND core (nand_base.c), the layer every system's I/O
passes through — UBI (under UBIFS), JFFS2 and pdl's MtdNand alike:
  nand_read_page_op  a page read (data, with or without its spare area)
  nand_read_oob_op   a spare-area-only read
  nand_prog_page_op + nand_prog_page_end_op   a program (spare-only and full-page paths)
  nand_erase_op      a block erase
/peers/snap.sh TAG prints "PEERS-SNAP <run> TAG <read_page> <read_oob> <prog> <prog_end>
<erase>" from kprobe_profile's hit counts ($PEERS_RUN names the run).

Per run (fresh: a newly formatted device per workload; aged: one device per system, filled to
>= 90 % with static data, then the workloads one after another, each table dropped — pdl: one
database a device, static table beside the workload's — or each database file removed after
its run):
set-up, the workload (snapshots S0 and S1 inside, workloads.py), exit, `sync`, settle (until
the counters stop moving: UBI erases in a background thread), S2; the table's checksum; then
the mount cost after a clean unmount: M0 unmounted, M1 after the first mount step (UBI attach;
for JFFS2 and pdl the whole mount), M2 after the second (the UBIFS mount); pdl's M1 and M2 are
taken inside the process that opened the store, before its close, and MC after that close (a
mount that had to scan writes the checkpoint there). Every line the parser reads starts with
PEERS-.

Systems (SYSTEMS): UBIFS on UBI (default compressor, lzo; and compr=none), JFFS2 (default
compressors), pdl through MtdNand (methods PDL(256B) and OPU, commit atomic and journal).
"""
import shlex

import workloads
from workloads import WORKLOADS, JOURNAL, TPCC

FS_SYSTEMS = ["ubifs", "ubifs-none", "jffs2"]
PDL_SYSTEMS = ["pdl256-atomic", "pdl256-journal", "opu-atomic", "opu-journal"]
SYSTEMS = FS_SYSTEMS + PDL_SYSTEMS
PDL_METHOD = {"pdl256": "pdl", "opu": "opu"}  # catalogue key -> pdl format --method
TPCC_KEY = {"pdl256": "pdl", "opu": "opu"}    # catalogue key -> pdl-tpcc --methods
FILL = 0.90        # aged: static data, fraction of the file system's / store's capacity
MNT = "/mnt/fs"
PROBES = ["nand_read_page_op", "nand_read_oob_op", "nand_prog_page_op",
          "nand_prog_page_end_op", "nand_erase_op"]
MODULES = ["zstd", "ubifs", "jffs2"]  # zstd first: UBIFS fails to set up its compressors else

SNAP_SH = """#!/bin/sh
# snap.sh TAG: the NAND core's operation counts (kprobe hits) for run $PEERS_RUN.
awk -v run="$PEERS_RUN" -v tag="$1" '{ c[$1] = $2 }
  END { print "PEERS-SNAP", run, tag, c["nand_read_page_op"] + 0, c["nand_read_oob_op"] + 0,
        c["nand_prog_page_op"] + 0, c["nand_prog_page_end_op"] + 0, c["nand_erase_op"] + 0 }' \\
  /sys/kernel/tracing/kprobe_profile
"""


PHASE_SH = """#!/bin/sh
# phase.sh start|end: pdl-tpcc's --phase-cmd; sync, settle (the counters still for 0.5 s, at
# most 15 s: UBI erases in the background), then snapshot S0 (start) or S1 (end).
case "$1" in start) tag=S0 ;; end) tag=S1 ;; *) echo "phase.sh: $1?" >&2; exit 2 ;; esac
sync
p=""
for i in $(seq 30); do
    c=$(md5sum < /sys/kernel/tracing/kprobe_profile)
    [ "$c" = "$p" ] && break
    p=$c
    sleep 0.5
done
sh /peers/snap.sh $tag
"""


def is_pdl(system):
    return system in PDL_SYSTEMS


def pdl_parts(system):
    key, commit = system.rsplit("-", 1)
    return key, PDL_METHOD[key], commit


def sql_name(w, system):
    """The workload file a system runs: JFFS2's WAL runs take exclusive locking."""
    return f"w-{w}-x.sql" if system == "jffs2" and JOURNAL[w] == "WAL" else f"w-{w}.sql"


PRELUDE = r"""set -u
mount -t tracefs nodev /sys/kernel/tracing || { echo "PEERS-FAIL - tracefs"; exit 1; }
T=/sys/kernel/tracing
for f in @PROBES@; do
    echo "p:$f $f" >> $T/kprobe_events || { echo "PEERS-FAIL - kprobe $f"; exit 1; }
done
echo 1 > $T/events/kprobes/enable
mkdir -p @MNT@
fail=0
say() { echo "PEERS-$*"; }
bad() { say "FAIL $PEERS_RUN $*"; fail=1; }
snap() { sh /peers/snap.sh "$1"; }
# settle: until the counters stop moving (0.5 s apart, at most 15 s)
settle() {
    sync
    p=""
    for i in $(seq 30); do
        c=$(cat $T/kprobe_profile | md5sum)
        [ "$c" = "$p" ] && return 0
        p=$c
        sleep 0.5
    done
}
emit() {  # the PEERS- lines of a sqlite3 output, pdl_stats JSON joined to its tag
    awk -v r="$PEERS_RUN" '/^PEERS-PDL /{ t = $2; next }
        /^\{/ && t != "" { print "PEERS-PDL", r, t, $0; t = ""; next }
        /^PEERS-/ { print }' "$1"
}
# SQLite on a system: sq SYSTEM DB (stdin the SQL)
sq() {
    case $1 in
    @PDL@) sqlite3 -bail -cmd '.load /lib/pdl' \
              -cmd ".open file:$2?vfs=pdl&mtd=/dev/mtd0&clock=logical&commit=${1##*-}" ;;
    *) sqlite3 -bail @MNT@/$2 ;;
    esac
}
setup() {  # a freshly formatted, mounted device
    case $1 in
    ubifs*) ubiformat -y -q /dev/mtd0 && ubiattach -m 0 > /dev/null &&
            ubimkvol /dev/ubi0 -N peers -m > /dev/null && fs_mount $1 2 ;;
    jffs2) flash_erase -j -q /dev/mtd0 0 0 && fs_mount $1 1 ;;
    @PDL@) pdl format --mtd /dev/mtd0 --method $2 --force > /dev/null ;;
    esac
}
fs_mount() {  # fs_mount SYSTEM STEP: UBIFS step 1 attaches UBI, step 2 mounts
    case $1 in
    ubifs*) if [ $2 = 1 ]; then ubiattach -m 0 > /dev/null
            elif [ $1 = ubifs ]; then mount -t ubifs ubi0:peers @MNT@
            else mount -t ubifs -o compr=none ubi0:peers @MNT@; fi ;;
    jffs2) mount -t jffs2 mtd0 @MNT@ ;;
    esac
}
teardown() {
    case $1 in
    ubifs*) umount @MNT@ && ubidetach -m 0 > /dev/null ;;
    jffs2) umount @MNT@ ;;
    esac
}
# mountcost SYSTEM DB: unmount cleanly, then count the mount (M0, M1, M2)
mountcost() {
    case $1 in
    @PDL@) settle; snap M0  # M1 = M2 inside the process, before its close; MC after it
          printf '.print PEERS-PDL M\nPRAGMA pdl_stats;\n.system sh /peers/snap.sh M1\n.system sh /peers/snap.sh M2\n' |
              sq $1 $2 > /tmp/m 2>&1 || { cat /tmp/m; bad "pdl mount"; }
          settle; snap MC; emit /tmp/m ;;
    *) teardown $1 || bad "unmount"
       settle; snap M0
       fs_mount $1 1 || bad "mount step 1"
       settle; snap M1
       if [ $1 != jffs2 ]; then fs_mount $1 2 || bad "mount step 2"; settle; fi
       snap M2 ;;
    esac
}
# run SYSTEM WORKLOAD DB SQLFILE: the workload, S2, the check, the mount cost
run() {
    t0=$(date +%s)
    sq $1 $3 < /peers/$4 > /tmp/o 2> /tmp/e || { cat /tmp/e; bad "workload"; }
    settle; snap S2
    emit /tmp/o
    sq $1 $3 < /peers/check.sql > /tmp/c 2>&1 || { cat /tmp/c; bad "check"; }
    grep '^PEERS-ROWS' /tmp/c | sed "s|^PEERS-ROWS|PEERS-ROWS $PEERS_RUN|"
    grep -qx ok /tmp/c || bad "integrity_check"
    mountcost $1 $3
    say "SECS $PEERS_RUN $(( $(date +%s) - t0 ))"
}
# tpcc SYSTEM METHOD: the TPC-C-like run (pdl-tpcc, workloads.py's tpcc_args): S0 and S1 by
# its phase command around the measured transactions, S2 after exit, sync and settle; its
# content checksum (PEERS-ROWS) and, for pdl, the store's own counts (PEERS-TPCC)
tpcc() {
    case $1 in
    @PDL@) a="@TPCC_PDL@" ;;
    *) a="@TPCC_FS@" ;;
    esac
    pdl-tpcc @TPCC_ARGS@ $a --work-dir /tmp --json /tmp/t.json \
        --phase-cmd "sh /peers/phase.sh" > /tmp/o 2> /tmp/e || { tail -n 20 /tmp/e; bad "tpcc"; }
    settle; snap S2
    grep '^PEERS-SNAP' /tmp/o  # S0 and S1 (phase.sh runs with pdl-tpcc's output)
    case $1 in @PDL@) say "TPCC $PEERS_RUN $(grep -o '"counts":{[^}]*}' /tmp/t.json)" ;; esac
    say "ROWS $PEERS_RUN $(grep -o '"checksum":"[0-9a-f]*"' /tmp/t.json | cut -d'"' -f4)"
    grep -q '"ok":true' /tmp/t.json || bad "tpcc checks"
}
# cleanup SYSTEM DB: the workload's table gone before the next workload (aged runs). pdl holds
# one database a device: the static table and the workload's share it; the file systems hold
# each in a file of its own.
cleanup() {
    case $1 in
    @PDL@) echo 'DROP TABLE t;' | sq $1 $2 > /tmp/o 2>&1 || { cat /tmp/o; bad "cleanup"; } ;;
    *) rm -f @MNT@/$2 @MNT@/$2-wal @MNT@/$2-shm @MNT@/$2-journal ;;
    esac
}
# fill SYSTEM METHOD: static data to @FILL@ of the capacity (aged runs)
fill() {
    case $1 in
    @PDL@) sq $1 peers.db < /peers/fill-$2.sql > /tmp/o 2>&1 || { cat /tmp/o; bad "fill"; }
          grep '^PEERS-FILL-PAGES' /tmp/o | sed "s|^PEERS-FILL-PAGES|PEERS-FILL-PAGES $PEERS_RUN|"
          pdl info --mtd /dev/mtd0 > /tmp/i 2>&1
          say "FULL $PEERS_RUN pdl $(sed -n 's/.*data lpns: \([0-9]*\) used, \([0-9]*\) free.*/\1 \2/p' /tmp/i)" ;;
    *) set -- $1 $(df -k @MNT@ | awk 'NR == 2 { print $2, $3 }')
       mib=$(awk -v t=$2 -v u=$3 'BEGIN { n = int((@FILL@ * t - u) / 1024) + 1; print n }')
       dd if=/dev/urandom of=@MNT@/static bs=1M count=$mib 2> /dev/null || say "NOTE dd short"
       sync
       # df's "used" may lag what was written (UBIFS's accounting): top up in 2 MiB files
       n=0
       while df -k @MNT@ | awk -v f=@FILL@ 'NR == 2 { exit !($3 < f * $2) }'; do
           n=$((n + 1))
           [ $n -le 64 ] || { say "NOTE $PEERS_RUN fill stopped short"; break; }
           dd if=/dev/urandom of=@MNT@/static.$n bs=1M count=2 2> /dev/null || break
           sync
       done
       say "FULL $PEERS_RUN fs $(df -k @MNT@ | awk 'NR == 2 { print $3, $4, $2 }')" ;;
    esac
}
"""


def script(ages, systems=None, tpcc_txns=1000):
    """The VM's /test.sh for the ages given ("fresh", "aged") and systems (default all), the
    TPC-C-like run measuring `tpcc_txns` transactions."""
    pdl = "|".join(sorted({k + "-*" for k in PDL_METHOD}))  # the shell pattern of pdl's
    fs_args = workloads.tpcc_member_args(None, None, MNT)
    # (tpcc()'s shell expands $2, the pdl-tpcc key, and ${1##*-}, the commit mode)
    pdl_args = workloads.tpcc_member_args("$2", "${1##*-}", "/dev/mtd0")
    s = (PRELUDE.replace("@PROBES@", " ".join(PROBES)).replace("@PDL@", pdl).replace("@MNT@", MNT)
         .replace("@FILL@", f"{FILL:g}")
         .replace("@TPCC_ARGS@", " ".join(workloads.tpcc_args(tpcc_txns)))
         .replace("@TPCC_FS@", " ".join(fs_args)).replace("@TPCC_PDL@", " ".join(pdl_args)))
    lines = [s]
    for age in ages:
        for system in systems or SYSTEMS:
            method = pdl_parts(system)[1] if is_pdl(system) else "-"
            if age == "aged":
                lines += [f"export PEERS_RUN={age}/{system}/fill",
                          f"t0=$(date +%s); setup {system} {method} || bad setup",
                          f"fill {system} {method}",
                          f"say \"SECS $PEERS_RUN $(( $(date +%s) - t0 ))\""]
            for w in WORKLOADS:
                run_id = f"{age}/{system}/{w}"
                db = "peers.db" if is_pdl(system) else f"w{w}.db"
                lines.append(f"export PEERS_RUN={run_id}")
                if age == "fresh":
                    lines.append(f"setup {system} {method} || bad setup")
                lines.append(f"run {system} {w} {db} {sql_name(w, system)}")
                if age == "aged":
                    lines.append(f"cleanup {system} {db}")
                if age == "fresh":
                    lines.append(f"teardown {system}")
            run_id = f"{age}/{system}/{TPCC}"
            lines.append(f"export PEERS_RUN={run_id}")
            if age == "fresh":
                lines.append(f"setup {system} {method} || bad setup")
            key = TPCC_KEY[pdl_parts(system)[0]] if is_pdl(system) else "-"
            lines += [f"t0=$(date +%s); tpcc {system} {key}",
                      "say \"SECS $PEERS_RUN $(( $(date +%s) - t0 ))\"",
                      f"teardown {system}"]
    lines += ["free -m", "df -k /tmp", "dmesg | tail -n 25", "exit $fail"]
    return "\n".join(lines) + "\n"
