"""workloads.py — the SQL every system of `./run peers` runs, generated in this one place.

Workloads (100-byte rows, synchronous=FULL, SQLite pages of 2048 bytes = the flash page):
  a  N single-row INSERTs into an empty table, rollback journal (DELETE)
  b  the same in WAL mode
  c  N single-row UPDATEs of random rows of a 10,000-row table (loaded in one transaction
     before the measurement), DELETE
  d  the same in WAL mode
  t  the TPC-C-like run of pdl-tpcc (tpcc_args below), not SQL from here
Each statement is its own transaction (autocommit). Row contents and the updated row ids come
from a generator seeded per workload: every system runs byte-identical SQL. The only
difference between systems: JFFS2 cannot hold SQLite's -shm mapping, so its WAL runs take
PRAGMA locking_mode=EXCLUSIVE (the wal-index in heap memory) — exclusive=True below.

The script marks its measurement window for the counters: `.system SNAP TAG` (a command that
prints the NAND core's counts, see vm_script.py) and `.print PEERS-PDL TAG` followed by
PRAGMA pdl_stats (pdl's own counters; unknown pragmas print nothing on the file systems):
  S0 after the set-up (table created, for c/d loaded), before the first measured transaction
  S1 after the last measured transaction, before the connection closes
The caller takes S2 after the process has exited, a `sync` and a settle (vm_script.py).
"""
import random

WORKLOADS = ["a", "b", "c", "d"]
JOURNAL = {"a": "DELETE", "b": "WAL", "c": "DELETE", "d": "WAL"}
KIND = {"a": "insert", "b": "insert", "c": "update", "d": "update"}
TITLE = {"a": "single-row INSERTs, DELETE", "b": "single-row INSERTs, WAL",
         "c": "single-row UPDATEs of random rows, DELETE",
         "d": "single-row UPDATEs of random rows, WAL"}
ROW_BYTES = 100
TABLE_ROWS = 10000       # the table c and d update
PAGE_SIZE = 2048         # SQLite page = flash page on every system
SNAP = "@SNAP@"          # replaced by the counter command of the environment
SEEDS = {"a": 101, "b": 101, "c": 202, "d": 202}  # b and d run a's and c's statements


def blob(rng):
    return "X'" + rng.getrandbits(8 * ROW_BYTES).to_bytes(ROW_BYTES, "little").hex() + "'"


def marks(tag):
    return [f".system {SNAP} {tag}", f".print PEERS-PDL {tag}", "PRAGMA pdl_stats;"]


def workload_sql(w, txns, exclusive=False, snap="sh /peers/snap.sh"):
    """The SQL text of workload w with `txns` measured transactions."""
    if w not in JOURNAL:
        raise ValueError(f"unknown workload {w!r} (expected one of {', '.join(WORKLOADS)})")
    rng = random.Random(SEEDS[w])
    out = [".bail on", f"PRAGMA page_size={PAGE_SIZE};", "PRAGMA synchronous=FULL;"]
    if exclusive and JOURNAL[w] == "WAL":
        out.append("PRAGMA locking_mode=EXCLUSIVE;")
    out.append(f"PRAGMA journal_mode={JOURNAL[w]};")
    out.append("CREATE TABLE t(id INTEGER PRIMARY KEY, p BLOB);")
    if KIND[w] == "update":
        out.append("BEGIN;")
        out += [f"INSERT INTO t VALUES({i}, {blob(rng)});" for i in range(1, TABLE_ROWS + 1)]
        out.append("COMMIT;")
    out += marks("S0")
    for i in range(1, txns + 1):
        if KIND[w] == "insert":
            out.append(f"INSERT INTO t VALUES({i}, {blob(rng)});")
        else:
            out.append(f"UPDATE t SET p = {blob(rng)} WHERE id = {rng.randint(1, TABLE_ROWS)};")
    out += marks("S1")
    return "\n".join(out).replace(SNAP, snap) + "\n"


# The table's content after the run, the same on every system: row count and a checksum.
CHECK_SQL = ("PRAGMA locking_mode=EXCLUSIVE;\n"  # JFFS2: WAL without -shm
             "SELECT 'PEERS-ROWS ' || count(*) || ' ' || total(id * length(p)) || ' ' || "
             "total(unicode(substr(hex(p), 1 + id % 150, 1)) * id) FROM t;\n"
             "PRAGMA integrity_check;\n")


# The TPC-C-like run, workload "t": pdl-tpcc (tpcc/) on every system, the same seed and
# transactions; its content checksum stands for the table check. Scale 0.05 of one warehouse
# (about 2,200 pages of 2 KiB loaded), the rollback journal (DELETE), SQLite's cache at
# pdl-tpcc's default (1 % of the database's pages); a fixed warm-up of half the measured
# transactions, unmeasured. The file systems run the unix VFS alone in the mounted directory
# (--methods none --unix-dir), pdl the method in the formatted device (--store); --phase-cmd
# takes the snapshots S0 and S1 around the measured transactions.
TPCC = "t"
TPCC_SCALE = 0.05
TPCC_JOURNAL = "delete"


def tpcc_args(txns):
    """pdl-tpcc's arguments common to every system for `txns` measured transactions."""
    return ["--scale", f"{TPCC_SCALE:g}", "--warmup", str(max(1, txns // 2)),
            "--transactions", str(txns), "--journal-mode", TPCC_JOURNAL, "--seed", "1",
            "--quiet"]


def tpcc_member_args(pdl_key, commit, place):
    """The member's arguments: a pdl method key and commit in the store at `place`, or (key
    None) the unix VFS alone with its database in the directory `place`."""
    if pdl_key is None:
        return ["--methods", "none", "--unix-dir", place]
    return ["--methods", pdl_key, "--commit", commit, "--store", place, "--no-unix"]


def expected_rows(w, txns):
    return txns if KIND[w] == "insert" else TABLE_ROWS


# The static data of the aged runs on pdl: 900-byte random blobs (two rows a 2 KiB page),
# CHUNK rows a transaction; chunks = how many to reach the fill target.
FILL_ROW_BYTES = 900
FILL_CHUNK = 10000


def fill_sql(chunks):
    out = [".bail on", f"PRAGMA page_size={PAGE_SIZE};", "PRAGMA synchronous=OFF;",
           "CREATE TABLE s(id INTEGER PRIMARY KEY, b BLOB);"]
    for _ in range(chunks):
        out.append(f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                   f"WHERE x < {FILL_CHUNK}) INSERT INTO s(b) SELECT randomblob("
                   f"{FILL_ROW_BYTES}) FROM c;")
    out.append("SELECT 'PEERS-FILL-PAGES ' || page_count FROM pragma_page_count;")
    return "\n".join(out) + "\n"


def fill_chunks(target_pages):
    """Chunks of FILL_CHUNK rows whose pages (two rows a page) reach target_pages."""
    per_chunk = FILL_CHUNK // 2
    return -(-target_pages // per_chunk)
