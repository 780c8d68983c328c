#!/usr/bin/python3
# test_pdl_tool.py — end-to-end test of the `pdl` tool (tools/) on real images.
#
#   test_pdl_tool.py PDL_TOOL PDL_MODULE SQLITE3
#
# Images are filled through the stock sqlite3 shell with the pdl.so extension (the tool itself
# only formats and reads). Checked: format (and its refusals), info (text and --json, which
# must parse), ls -l, cat (the extracted database is a valid SQLite file with the same rows),
# fsck (clean: exit 0; a flipped data byte, a damaged superblock copy, a damaged image header:
# exit 1), spare-area bit flips (one or two in a header, the obsolete mark, the bad-block
# marker: cat right and fsck clean; three in a header, a whole marker: cat fails, fsck exit 1), dump --lpn / --block / --file, read-only commands leave the image byte-identical,
# an FTL device image (method ftl, ftl=page: format, info naming the FTL, fsck, dump, refused
# FTL parameters), a non-image file is refused (exit 3) and unchanged, an image held by another process gives
# exit 4 naming it, usage errors give exit 2, and no command prints a traceback-like crash.
#
# Sanitizer builds: the stock sqlite3 loads an instrumented pdl.so, so meson passes the
# sanitizer runtimes in PDL_SANITIZER_PRELOAD; they are preloaded into sqlite3 only (with
# leak detection off: sqlite3 is not ours), while the tool runs with the suite's ASAN_OPTIONS.
# Exit 77 (skipped) if there is no sqlite3 shell.
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, failures, finish, skip  # noqa: F401
from pdl_cli import run_pdl, run_sqlite
from sanitizer_env import sqlite_env

TOOL, MODULE, SQLITE = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""
if not SQLITE or not os.path.exists(SQLITE):
    skip("no sqlite3 shell")


def pdl(*args, stdout=subprocess.PIPE):
    """Run the tool; returns (exit code, stdout bytes, stderr text)."""
    return run_pdl(TOOL, args, stdout)


def sql(image, script, uri_extra=""):
    r = run_sqlite(SQLITE, MODULE, image, script, uri_extra)
    if r.returncode != 0:
        raise SystemExit("sqlite3 failed (%d): %s" % (r.returncode, r.stderr.decode()))
    return r.stdout.decode()


def image_geometry(path):
    """(page_data, page_spare, pages_per_block, blocks, pages_offset) from the header."""
    with open(path, "rb") as f:
        h = f.read(64)
    assert h[:8] == b"PDLNAND1", "not an image"
    page_data, page_spare, ppb, blocks = struct.unpack_from("<IIII", h, 16)
    (pages_off,) = struct.unpack_from("<Q", h, 56)
    return page_data, page_spare, ppb, blocks, pages_off


def flip_byte(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x5A]))


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


tmp = tempfile.mkdtemp(prefix="pdl-tool-test-")
try:
    img = os.path.join(tmp, "shop.pdl")

    # ---- version, help ----
    rc, out, _ = pdl("--version")
    check(rc == 0 and re.match(rb"^pdl \d+\.\d+\.\d+\n$", out), "--version prints 'pdl X.Y.Z'")
    rc, out, _ = pdl("--help")
    check(rc == 0 and all(c in out for c in
                          [b"format", b"info", b"ls", b"cat", b"fsck", b"dump"]),
          "--help lists every command")
    for c in ["format", "info", "ls", "cat", "fsck", "dump"]:
        rc, out, _ = pdl(c, "--help")
        check(rc == 0 and out.startswith(b"usage: pdl " + c.encode()), "%s --help" % c)

    # ---- format ----
    rc, out, err = pdl("format", img, "--size", "8M", "--db", "main.db")
    check(rc == 0 and b"formatted" in out, "format a new 8M image: " + err)
    rc, out, err = pdl("format", img, "--size", "8M", "--db", "main.db", "--max-diff", "512")
    check(rc == 0, "format replaces an existing pdl image not in use: " + err)

    # ---- fill through SQLite ----
    sql(img, """
        create table t(id integer primary key, v text, n integer);
        with recursive c(x) as (select 1 union all select x + 1 from c where x < 3000)
        insert into t(v, n) select hex(randomblob(120)), x from c;
        update t set n = n + 1 where id % 7 = 0;
        update t set v = 'x' where id % 11 = 0;
        delete from t where id % 13 = 0;
    """)
    rows = int(sql(img, "select count(*) from t;").strip())
    check(rows == 3000 - 3000 // 13, "sqlite3 through pdl.so filled the image (%d rows)" % rows)
    before = read_bytes(img)

    # ---- info ----
    rc, out, err = pdl("info", img)
    text = out.decode()
    print(text)
    check(rc == 0, "info exits 0: " + err)
    for want in ["2048+64 B pages, 64 pages/block, 64 blocks (8 MiB)", "pdl, max_diff 512 B",
                 "obsolete=memory", "main.db", "uuid ", "erase counts min", "pages scanned",
                 "logical pages:", "blocks:"]:
        check(want in text, "info shows '%s'" % want)
    # sqlite3 closed the image cleanly: a checkpoint was written, and this open read it.
    check(re.search(r"checkpoint   area \d+ blocks \(\d+ bytes\)", text) is not None,
          "info shows the checkpoint area")
    check(re.search(r"log: newest entry checkpoint gen \d+", text) is not None,
          "info shows the log's newest entry: a checkpoint")
    check(re.search(r"this open mounted from checkpoint gen \d+: \d+ pages read", text)
          is not None, "info: this open mounted from the checkpoint")
    check(re.search(r"ram          tables \d+ bytes .*MiB per GiB of chip", text) is not None,
          "info shows the tables' RAM per GiB")
    # A mount from the checkpoint reads no owner-map page (the Volume's section has none).
    check("volume owner-map cache: 0 of 64 pages held" in text,
          "info shows the owner-map cache, empty after a checkpoint mount")
    rc, out, err = pdl("info", img, "--owner-cache", "2")
    check(rc == 0 and "owner-map cache: 0 of 2 pages held" in out.decode(),
          "info --owner-cache 2 sets the cache: " + err)
    rc, out, err = pdl("fsck", img, "--owner-cache", "1")
    check(rc == 0, "fsck --owner-cache 1: clean through a one-page owner cache: " + err)

    rc, out, err = pdl("info", "--json", img)
    check(rc == 0, "info --json exits 0: " + err)
    j = None
    try:
        j = json.loads(out)
    except ValueError as e:
        check(False, "info --json parses: %s" % e)
    if j is not None:
        check(j["method"] == "pdl" and j["max_diff"] == 512, "info --json: method")
        check([f["name"] for f in j["files"]] == ["main.db"], "info --json: files")
        im = j.get("image", {})
        check(all(k in im for k in ["format", "layout", "space", "erase_counts", "mount"]),
              "info --json: image extras")
        check(im["space"]["blocks"]["reserved"] == 2 and
              sum(im["space"]["blocks"].values()) == 64, "info --json: blocks by state")
        check(sum(b["blocks"] for b in im["erase_counts"]["histogram"]) == 64,
              "info --json: erase-count histogram covers every block")
        ck, ram = j.get("checkpoint") or {}, j.get("ram") or {}
        check(ck.get("mount") == "checkpoint" and ck.get("checkpoint_gen", 0) >= 1 and
              ck.get("checkpoint_pages", 0) >= 1 and ck.get("area_blocks", 0) >= 1 and
              ck.get("superblock_format") == 8 and ck.get("log", {}).get("entry") == "checkpoint",
              "info --json: checkpoint member (%s)" % ck)
        check(ram.get("table_bytes", 0) > 0 and ram.get("chip_bytes") == 8 << 20 and
              abs(ram["ram_bytes_per_gib"] - ram["table_bytes"] * 128) < 1 and
              ram.get("owner_cache_pages") == 64 and ram.get("owner_pages_cached") == 0,
              "info --json: ram member (%s)" % ram)
        db_size = j["files"][0]["size"]

    # ---- ls ----
    rc, out, _ = pdl("ls", img)
    check(rc == 0 and out == b"main.db\n", "ls lists main.db")
    rc, out, _ = pdl("ls", "-l", img)
    fields = out.decode().split()
    check(rc == 0 and len(fields) >= 5 and fields[-1] == "main.db" and fields[1] == "database",
          "ls -l: size kind chunks mtime name")
    if j is not None:
        check(int(fields[0]) == db_size, "ls -l size agrees with info --json")

    # ---- cat ----
    extracted = os.path.join(tmp, "extracted.db")
    with open(extracted, "wb") as f:
        rc, _, err = pdl("cat", img, "main.db", stdout=f)
    check(rc == 0, "cat exits 0: " + err)
    if j is not None:
        check(os.path.getsize(extracted) == db_size, "cat writes the whole file")
    r = subprocess.run([SQLITE, extracted, "pragma integrity_check; select count(*) from t;"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    check(r.returncode == 0 and r.stdout.decode().split() == ["ok", str(rows)],
          "extracted database: integrity ok, %d rows (%s %s)" % (rows, r.stdout, r.stderr))

    # ---- fsck ----
    rc, out, err = pdl("fsck", img)
    print(out.decode())
    check(rc == 0 and out.rstrip().endswith(b"clean"), "fsck of a good image: exit 0, clean")
    for step in [b"mount", b"superblock", b"store tables", b"flash pages", b"volume"]:
        check(re.search(rb"  " + step + rb" +ok: ", out) is not None, "fsck checked " + step.decode())
    check(re.search(rb"  checkpoint +ok: checkpoint gen \d+ agrees with the scan", out) is not None,
          "fsck mounted from the checkpoint and compared it with the scan")

    # ---- dump ----
    rc, out, err = pdl("dump", img, "--file", "main.db")
    check(rc == 0, "dump --file exits 0: " + err)
    chunk_lines = re.findall(rb"^ +(\d+) +(\d+)  ppa (\d+) \(block (\d+), page (\d+)\)",
                             out, re.M)
    check(len(chunk_lines) > 10, "dump --file lists the chunks")
    chunk0 = chunk_lines[0]
    lpn, ppa = int(chunk0[1]), int(chunk0[2])
    rc, out, err = pdl("dump", img, "--lpn", str(lpn))
    print(out.decode())
    check(rc == 0 and b'chunk 0 of file "main.db"' in out, "dump --lpn names the owner")
    check(b"base page      ppa %d " % ppa in out and b"spare        base, lpn %d," % lpn in out,
          "dump --lpn: base page and its decoded spare header")
    check(b"differential" in out, "dump --lpn: differential line")
    page_data, page_spare, ppb, blocks, pages_off = image_geometry(img)
    block = ppa // ppb
    rc, out, err = pdl("dump", img, "--block", str(block))
    print(out.decode())
    check(rc == 0 and out.startswith(b"block %d: " % block), "dump --block exits 0")
    m = re.search(rb"^ +%d +%d  base +%d +\d+  ok +\S+ +live \(current base\)" %
                  (ppa % ppb, ppa, lpn), out, re.M)
    check(m is not None, "dump --block shows the chunk's base page as live")
    rc, out, _ = pdl("dump", img, "--block", "0")
    check(rc == 0 and b"reserved" in out and b"superblock" in out, "dump --block 0: superblock")
    rc, out, _ = pdl("dump", img, "--lpn", "0")
    check(rc == 0 and b"volume header" in out, "dump --lpn 0: volume header")

    check(read_bytes(img) == before, "info, ls, cat, fsck, dump left the image byte-identical")

    # ---- a checkpoint whose area page changed: mount scans, fsck says so and stays clean ----
    # (what a power cut during a checkpoint write leaves: the log names a checkpoint whose area
    # was erased and rewritten in part)
    ck_bad = os.path.join(tmp, "ck-bad.pdl")
    shutil.copyfile(img, ck_bad)
    page_data, page_spare, ppb, blocks, pages_off = image_geometry(ck_bad)
    area = j["checkpoint"]["area_blocks"] if j else 0
    root_page = (blocks - area) * ppb + (j["checkpoint"]["log"]["root_page"] if j else 0)
    flip_byte(ck_bad, pages_off + root_page * (page_data + page_spare) + 100)
    ck_bad_bytes = read_bytes(ck_bad)
    rc, out, err = pdl("info", ck_bad)
    check(rc == 0 and b"this open mounted by scan: checkpoint corrupt: " in out,
          "info of an image whose checkpoint area page changed: mounted by scan, saying why")
    rc, out, err = pdl("fsck", ck_bad)
    print(out.decode())
    check(rc == 0 and re.search(rb"  checkpoint +ok: gen \d+ does not verify \(checkpoint corrupt: ",
                                out) is not None and out.rstrip().endswith(b"clean"),
          "fsck: a checkpoint that does not verify is reported, not a problem (the next open scans)")
    check(read_bytes(ck_bad) == ck_bad_bytes,
          "info and fsck wrote nothing there either (no stale entry, no checkpoint)")
    os.remove(ck_bad)

    # ---- an image without a checkpoint area (checkpoint off): info and fsck say so ----
    nock = os.path.join(tmp, "nock.pdl")
    rc, _, err = pdl("format", nock, "--size", "8M", "--checkpoint", "off")
    check(rc == 0, "format --checkpoint off: " + err)
    rc, out, err = pdl("info", nock)
    check(rc == 0 and re.search(rb"checkpoint   area none \(superblock format [1-5]\): mounts by "
                                rb"scan\n +this open mounted by scan: format without a "
                                rb"checkpoint area\n", out) is not None,
          "info of an image without a checkpoint area: none, mounted by scan")
    rc, out, err = pdl("info", "--json", nock)
    ck = json.loads(out)["checkpoint"] if rc == 0 else {}
    check(ck.get("area_blocks") == 0 and ck.get("mount") == "scan" and
          ck.get("log", {}).get("entry") == "none", "info --json without an area: %s" % ck)
    rc, out, err = pdl("fsck", nock)
    check(rc == 0 and re.search(rb"  checkpoint +ok: none \(superblock format", out) is not None,
          "fsck of an image without a checkpoint area: clean, says none")
    os.remove(nock)

    # ---- a second method: opu, obsolete=spare (images default to memory) ----
    opu = os.path.join(tmp, "opu.pdl")
    rc, _, err = pdl("format", opu, "--size", "8M", "--method", "opu", "--obsolete", "spare",
                     "--pages-per-block", "32")
    check(rc == 0, "format opu/spare: " + err)
    sql(opu, "create table t(x); insert into t select randomblob(300) from "
             "(with recursive c(i) as (select 1 union all select i+1 from c where i<500) "
             "select * from c); delete from t where rowid % 3 = 0;")
    rc, out, err = pdl("fsck", opu)
    check(rc == 0, "fsck of an opu image: clean (%s)" % err)
    rc, out, _ = pdl("info", opu)
    check(rc == 0 and b"method       opu" in out and b"32 pages/block" in out, "info of opu image")

    # ---- IPU and IPL images: format, fill through SQLite, info, fsck, dump of log sectors ----
    # (IPL also with 128-byte log sectors: 16 per 2 KiB page, on a chip allowing 16 programs)
    for name, method, sector, extra in (
            ("ipl", "ipl", 512, ["--log-region", "8K", "--pages-per-block", "16"]),
            ("ipl128", "ipl", 128, ["--log-region", "8K", "--pages-per-block", "16",
                                    "--log-sector", "128", "--nop", "16"]),
            ("ipu", "ipu", 0, ["--pages-per-block", "16"])):
        ip = os.path.join(tmp, name + ".pdl")
        rc, _, err = pdl("format", ip, "--size", "4M", "--method", method, *extra)
        check(rc == 0, "format %s: %s" % (method, err))
        sql(ip, "create table t(x); insert into t select randomblob(300) from "
                "(with recursive c(i) as (select 1 union all select i+1 from c where i<300) "
                "select * from c); update t set x = randomblob(300) where rowid % 5 = 0; "
                "delete from t where rowid % 3 = 0;")
        rc, out, err = pdl("fsck", ip)
        check(rc == 0 and b"slot states of" in out, "fsck of an %s image: clean (%s)" % (method, err))
        rc, out, _ = pdl("info", ip)
        check(rc == 0 and ("method       " + method).encode() in out, "info of %s image" % method)
        if method == "ipl":
            check(b"log region 8K (4 of 16 pages per block)" in out, "info names the log region")
            check(("log sectors of %d B" % sector).encode() in out,
                  "info names the log sector size (%d)" % sector)
            rc, out, _ = pdl("info", ip, "--json")
            j = json.loads(out)
            check(j["method"] == "ipl" and j["log_region"] == 8192 and j["obsolete"] == "none"
                  and j["log_sector"] == sector,
                  "info --json of ipl: method, log_region, log_sector, no obsolete marks")
            # Some block holds log sectors: dump shows them decoded.
            found = False
            for b in range(2, 64):
                rc, out, _ = pdl("dump", ip, "--block", str(b))
                if re.search(rb"sector \d+: log of lpn \d+ \(slot \d+\), seq \d+, 1/\d+", out):
                    found = True
                    break
            check(found, "dump --block decodes IPL log sectors")
        rc, _, err = pdl("format", os.path.join(tmp, "bad-" + method + ".pdl"), "--size", "4M",
                         "--method", method, "--log-region", "2M")
        check(rc == 2 and "log_region" in err, "format %s with a bad log region: exit 2 naming it (%s)"
              % (method, err))

    # ---- an FTL device (method ftl, ftl=page): format, fill through SQLite, info, fsck, dump ----
    ftl = os.path.join(tmp, "ftl.pdl")
    rc, out, err = pdl("format", ftl, "--size", "4M", "--method", "ftl", "--ftl", "page",
                       "--pages-per-block", "16", "--db", "main.db")
    check(rc == 0 and b"ftl ftl=page" in out, "format --method ftl --ftl page: %s%s"
          % (out.decode(errors="replace"), err))
    sql(ftl, "create table t(x); insert into t select randomblob(300) from "
             "(with recursive c(i) as (select 1 union all select i+1 from c where i<300) "
             "select * from c); update t set x = randomblob(300) where rowid % 5 = 0; "
             "delete from t where rowid % 3 = 0;")
    ftl_before = read_bytes(ftl)
    rc, out, err = pdl("fsck", ftl)
    check(rc == 0 and out.rstrip().endswith(b"clean"), "fsck of an ftl=page image: clean (%s)"
          % err)
    rc, out, _ = pdl("info", ftl)
    check(rc == 0 and b"method       ftl, ftl page," in out and b"no atomic commit" in out,
          "info of an ftl=page image names the FTL and the missing atomic commit")
    rc, out, _ = pdl("info", ftl, "--json")
    j = json.loads(out)
    check(j["method"] == "ftl" and j["ftl"] == "page" and j["log_blocks"] == 0
          and j["sb_slots"] == 0 and j["commit"] == "journal" and j["obsolete"] == "none",
          "info --json of ftl=page: method, ftl, log_blocks, sb_slots, journal commit")
    rc, out, err = pdl("dump", ftl, "--file", "main.db")
    lines = re.findall(rb"^ +(\d+) +(\d+)  ppa (\d+) \(block (\d+), page (\d+)\)", out, re.M)
    check(rc == 0 and len(lines) > 10, "dump --file of an ftl=page image lists the chunks (%s)"
          % err)
    if lines:
        rc, out, _ = pdl("dump", ftl, "--lpn", lines[0][1].decode())
        check(rc == 0 and b"base page      ppa" in out, "dump --lpn of an ftl=page image")
        rc, out, _ = pdl("dump", ftl, "--block", lines[0][3].decode())
        check(rc == 0 and b"live (current base)" in out, "dump --block of an ftl=page image")
    check(read_bytes(ftl) == ftl_before, "info, fsck, dump left the ftl image byte-identical")
    for args, field in ((["--method", "ftl", "--ftl", "page", "--log-blocks", "16"], "log_blocks"),
                        (["--method", "ftl", "--sb-slots", "8"], "sb_slots"),
                        (["--method", "pdl", "--ftl", "page"], "ftl"),
                        (["--method", "ftl", "--ftl", "nand"], "--ftl"),
                        (["--method", "ftl", "--log-blocks", "zero"], "--log-blocks")):
        bad_ftl = os.path.join(tmp, "bad-ftl.pdl")
        rc, _, err = pdl("format", bad_ftl, "--size", "4M", *args)
        check(rc == 2 and field in err and not os.path.exists(bad_ftl),
              "format %s: exit 2 naming %s, nothing created (%s)" % (args, field, err.strip()))

    # ---- corruption: one data byte of a live base page ----
    bad = os.path.join(tmp, "bad.pdl")
    shutil.copyfile(img, bad)
    # Pick a live base page of the database that is not the last programmed page of its block
    # (mount checks that one's data itself and would drop it as torn).
    target = None
    for c in chunk_lines:
        p_lpn, p_ppa = int(c[1]), int(c[2])
        rc, out, _ = pdl("dump", img, "--block", str(p_ppa // ppb))
        nxt = re.search(rb"^ +%d +%d  (\S+)" % (p_ppa % ppb + 1, p_ppa + 1), out, re.M)
        if nxt and nxt.group(1) != b"erased":
            target = (p_lpn, p_ppa)
            break
    check(target is not None, "found a live base page to corrupt")
    if target:
        raw = page_data + page_spare
        flip_byte(bad, pages_off + target[1] * raw + 100)  # data area, byte 100
        rc, out, err = pdl("fsck", bad)
        print(out.decode(), err)
        check(rc == 1, "fsck of a corrupted image exits 1 (got %d)" % rc)
        check("pdl: fsck: " in err and "CRC" in (err + out.decode()),
              "fsck names the bad CRC on stderr")
        with open(os.devnull, "wb") as null:
            rc, _, err = pdl("cat", bad, "main.db", stdout=null)
        check(rc == 3 and err.startswith("pdl: cat: "), "cat of a corrupted chunk exits 3: " + err)

    # ---- a checkpoint that disagrees with the chip: fsck's comparison finds it ----
    # The same page's spare header changed at rest (4 bits: beyond the repair of one or two):
    # the scan drops the page as damaged, the checkpoint (written before, still current)
    # still maps the lpn there. fsck names the lpn.
    if target:
        moved = os.path.join(tmp, "moved.pdl")
        shutil.copyfile(img, moved)
        flip_byte(moved, pages_off + target[1] * raw + page_data + 5)  # spare header byte 5
        rc, out, err = pdl("fsck", moved)
        print(out.decode(), err)
        check(rc == 1 and re.search(rb"  checkpoint +PROBLEM: checkpoint gen \d+ disagrees with "
                                    rb"the scan, first: lpn %d: checkpoint says mapped base "
                                    rb"ppa %d " % (target[0], target[1]), out) is not None,
              "fsck: a checkpoint that disagrees with the scan is a problem naming the lpn")
        os.remove(moved)

    # ---- corruption: one superblock copy (mount still works on the other) ----
    sb = os.path.join(tmp, "sb.pdl")
    shutil.copyfile(img, sb)
    flip_byte(sb, pages_off + 10)  # block 0 page 0, data byte 10
    rc, out, err = pdl("fsck", sb)
    check(rc == 1 and b"1 of 2 copies valid" in out, "fsck reports a bad superblock copy")

    # ---- spare-area faults: a flip ends as a correct read or an error, never other bytes ----
    sp = os.path.join(tmp, "spare.pdl")
    # (checkpoint=off: these faults are about what a mount by scan makes of spare areas)
    sql(sp, "create table t(x); insert into t values('hello');", "&size=16M&checkpoint=off")
    rc, good, err = pdl("cat", sp, "spare.pdl")
    check(rc == 0 and good.startswith(b"SQLite format 3"), "cat of the spare-fault image: " + err)
    rc, out, _ = pdl("dump", sp, "--file", "spare.pdl")
    m = re.search(rb"^ +0 +\d+ +ppa (\d+) ", out, re.M)
    check(m is not None, "dump --file names chunk 0's base page")
    sp_data, sp_spare, sp_ppb, _, sp_off = image_geometry(sp)
    if m:
        ppa0 = int(m.group(1))
        spare0 = sp_off + ppa0 * (sp_data + sp_spare) + sp_data
        marker0 = sp_off + (ppa0 - ppa0 % sp_ppb) * (sp_data + sp_spare) + sp_data

        def flipped(name, bits):
            """A copy of sp with the given (offset, bit) flips; returns its path."""
            path = os.path.join(tmp, name + ".pdl")
            shutil.copyfile(sp, path)
            with open(path, "r+b") as f:
                for off, bit in bits:
                    f.seek(off)
                    b = f.read(1)[0]
                    f.seek(off)
                    f.write(bytes([b ^ (1 << bit)]))
            return path

        for name, bits in (("obsolete mark", [(spare0 + 24, 0)]),
                           ("type byte", [(spare0 + 1, 2)]),
                           ("lpn", [(spare0 + 4, 0)]),
                           ("sequence number", [(spare0 + 8, 3)]),
                           ("header CRC", [(spare0 + 28, 5)]),
                           ("lpn and sequence number", [(spare0 + 4, 1), (spare0 + 9, 6)]),
                           ("bad-block marker", [(marker0, 0)])):
            path = flipped("flip", bits)
            rc, out, err = pdl("cat", path, "spare.pdl")
            check(rc == 0 and out == good,
                  "%d flipped bit(s) of chunk 0's %s: cat returns the right bytes (exit %d)"
                  % (len(bits), name, rc))
            rc, out, err = pdl("fsck", path)
            check(rc == 0, "... and fsck finds nothing lost (exit %d): %s" % (rc, err.strip()))
        path = flipped("hdr3", [(spare0 + 4, 0), (spare0 + 9, 2), (spare0 + 17, 7)])
        rc, out, err = pdl("cat", path, "spare.pdl")
        check(rc != 0 and err.startswith("pdl: cat: "),
              "3 flipped bits of a header (beyond repair): cat fails (exit %d): %s"
              % (rc, err.strip()))
        rc, out, err = pdl("fsck", path)
        check(rc == 1 and "damaged page" in err and "no copy on flash" in err,
              "... fsck exits 1 naming the damaged page and the chunk it lost: " + err.strip())
        path = flipped("marker8", [(marker0, b) for b in range(8)])
        rc, out, err = pdl("cat", path, "spare.pdl")
        check(rc != 0 and not out.startswith(good[:100]),
              "a block marked bad under live pages: cat fails (exit %d): %s" % (rc, err.strip()))
        rc, out, err = pdl("fsck", path)
        check(rc == 1, "... and fsck exits 1: " + err.strip())

    # ---- corruption: the image header ----
    hdr = os.path.join(tmp, "hdr.pdl")
    shutil.copyfile(img, hdr)
    flip_byte(hdr, 20)  # page_spare: header CRC fails
    rc, out, err = pdl("fsck", hdr)
    check(rc == 1 and "checksum" in err, "fsck of a damaged image header exits 1: " + err)
    rc, out, err = pdl("info", hdr)
    check(rc == 3 and err.startswith("pdl: info: "), "info of a damaged image header exits 3")

    # ---- a file that is not an image ----
    other = os.path.join(tmp, "notes.txt")
    with open(other, "wb") as f:
        f.write(os.urandom(10000))
    original = read_bytes(other)
    for args in (["info", other], ["ls", other], ["cat", other, "x"], ["fsck", other],
                 ["dump", other, "--block", "2"], ["format", other], ["info", "--json", other]):
        rc, _, err = pdl(*args)
        check(rc == 3 and err.startswith("pdl: %s: " % args[0]) and "not a pdl image" in err,
              "pdl %s on a non-image: exit 3 (%s)" % (args[0], err.strip()))
    check(read_bytes(other) == original, "the non-image file is unchanged")
    rc, _, err = pdl("info", os.path.join(tmp, "missing.pdl"))
    check(rc == 3, "info of a missing image: exit 3")
    rc, _, err = pdl("format", tmp)
    check(rc == 3, "format of a directory: exit 3")
    forced = os.path.join(tmp, "forced.pdl")
    shutil.copyfile(other, forced)
    rc, _, err = pdl("format", forced, "--size", "8M", "--force")
    check(rc == 0 and pdl("fsck", forced)[0] == 0, "format --force replaces a non-image file")

    # ---- an image in use ----
    holder = subprocess.Popen(
        [SQLITE, "-batch", "-cmd", ".load " + MODULE, "-cmd", ".open file:%s?vfs=pdl" % img],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env=sqlite_env())
    try:
        holder.stdin.write(b"select count(*) from t;\n")
        holder.stdin.flush()
        ino = os.stat(img).st_ino
        deadline = time.time() + 30
        held = False
        while time.time() < deadline and not held:
            with open("/proc/locks") as f:
                held = any("FLOCK" in line and ":%d " % ino in line for line in f)
            if not held:
                time.sleep(0.05)
        check(held, "the sqlite3 holder has the image locked")
        snapshot = read_bytes(img)
        for args in (["info", img], ["ls", img], ["cat", img, "main.db"], ["fsck", img],
                     ["dump", img, "--lpn", "1"], ["format", img, "--size", "8M"]):
            rc, _, err = pdl(*args)
            check(rc == 4 and err.startswith("pdl: %s: " % args[0]) and
                  ("pid %d (sqlite3)" % holder.pid) in err,
                  "pdl %s on an image in use: exit 4 naming the holder (%s)" %
                  (args[0], err.strip()))
        check(read_bytes(img) == snapshot, "refused format left the image in use unchanged")
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    rc, _, _ = pdl("fsck", img)
    check(rc == 0, "after the holder exits the image is usable and clean")

    # ---- usage errors ----
    for args in ([], ["frobnicate"], ["info"], ["info", img, "extra"], ["info", "--bogus", img],
                 ["ls", "-x", img], ["cat", img],
                 ["dump", img], ["dump", img, "--lpn", "1", "--block", "2"],
                 ["dump", img, "--lpn", "abc"], ["dump", img, "--lpn", "99999999"],
                 ["dump", img, "--block", "64"], ["dump", img, "--lpn"],
                 ["format", os.path.join(tmp, "n.pdl"), "--size", "lots"],
                 ["format", os.path.join(tmp, "n.pdl"), "--method", "magic"],
                 ["format", os.path.join(tmp, "n.pdl"), "--db", "a/b"],
                 ["format", os.path.join(tmp, "n.pdl"), "--json"],
                 ["info", "--json=yes", img], ["format", img, "--size", "8M", "--size", "16M"],
                 ["info", img, "--owner-cache", "0"], ["fsck", img, "--owner-cache", "many"]):
        rc, _, err = pdl(*args)
        check(rc == 2 and err.startswith("pdl: "), "usage error %s: exit 2 (%s)" %
              (args, err.strip()))
    check(not os.path.exists(os.path.join(tmp, "n.pdl")), "rejected formats created nothing")
    check(read_bytes(img) != b"" and pdl("fsck", img)[0] == 0,
          "usage errors left the image intact")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

finish()
