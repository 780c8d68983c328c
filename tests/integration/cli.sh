#!/bin/sh
# cli.sh — the stock sqlite3 shell uses pdl knowing nothing of it but the loadable extension.
#
# Usage: cli.sh BUILD_DIR [SQLITE3]   (meson test passes both; SQLITE3 defaults to `sqlite3`)
# Checks, each through `sqlite3 -cmd '.load BUILD/vfs/pdl' -cmd '.open file:IMG?vfs=pdl'` with SQL
# on stdin:
#   * create, insert, update, delete, select, integrity_check, pdl_check and pdl_stats (JSON);
#   * a reopen sees the data (persistence), WAL mode persists too;
#   * a second shell on an image a first one holds open fails with "in use" (and the holder's
#     pid) on stderr; once the first exits, the image opens again;
#   * an FTL device (method=ftl, ftl=page: SQLite on an eMMC/SD-like device) takes the same SQL,
#     reports "ftl":"page" and "commit":"journal" in pdl_stats, and keeps its data on reopen.
set -eu

BUILD=${1:?usage: cli.sh BUILD_DIR [SQLITE3]}
SQLITE=${2:-sqlite3}
EXT="$BUILD/vfs/pdl"
T=$(mktemp -d "${TMPDIR:-/tmp}/pdl-cli-XXXXXX")
IMG="$T/shop.db"
BG=

cleanup() {
  if [ -n "$BG" ]; then kill "$BG" 2>/dev/null || true; fi
  rm -rf "$T"
}
trap cleanup EXIT INT TERM

fail() {
  echo "FAIL: $*" >&2
  for f in "$T"/*.out "$T"/*.err; do
    [ -s "$f" ] && { echo "--- $f"; cat "$f"; } >&2
  done
  exit 1
}

# shell NAME [URI-PARAMS]: run the shell on IMG with stdin as SQL; NAME.out / NAME.err.
shell() {
  "$SQLITE" -cmd ".load $EXT" -cmd ".open file:$IMG?vfs=pdl$2" >"$T/$1.out" 2>"$T/$1.err"
}

has_line() {  # has_line NAME LINE: NAME.out has exactly this line
  grep -qxF -- "$2" "$T/$1.out" || fail "$1: no line '$2'"
}

no_errors() {
  [ ! -s "$T/$1.err" ] || fail "$1: unexpected stderr"
}

# 1. Create (small chip: size=8M), write, read back, check.
shell create "&size=8M" <<'SQL'
CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL);
INSERT INTO items(name, price) VALUES ('apple', 1.5), ('pear', 2.25), ('fig', 3.0);
BEGIN;
INSERT INTO items(name, price) SELECT 'bulk' || value, value FROM generate_series(1, 500);
COMMIT;
UPDATE items SET price = price * 2 WHERE name = 'fig';
DELETE FROM items WHERE name = 'pear';
SELECT name || '=' || price FROM items WHERE name NOT LIKE 'bulk%' ORDER BY id;
SELECT 'count=' || count(*) FROM items;
PRAGMA integrity_check;
PRAGMA pdl_check;
PRAGMA pdl_stats;
SQL
no_errors create
has_line create 'apple=1.5'
has_line create 'fig=6.0'
has_line create 'count=502'
[ "$(grep -cxF ok "$T/create.out")" -eq 2 ] || fail "create: integrity_check/pdl_check not ok"
grep -q '^{"method":"pdl",.*"geometry":{"page_data":2048,.*"files":\[{"name":"shop.db"' \
  "$T/create.out" || fail "create: pdl_stats is not the expected JSON"
[ -f "$IMG" ] || fail "no image file at $IMG"

# 2. Reopen exactly as a user would (the image knows its parameters): the data is there.
shell reopen "" <<'SQL'
SELECT 'count=' || count(*) || ' sum=' || sum(price) FROM items WHERE name NOT LIKE 'bulk%';
SELECT 'bulk=' || count(*) FROM items WHERE name LIKE 'bulk%';
PRAGMA journal_mode=WAL;
INSERT INTO items(name, price) VALUES ('kiwi', 0.5);
PRAGMA integrity_check;
SQL
no_errors reopen
has_line reopen 'count=2 sum=7.5'
has_line reopen 'bulk=500'
has_line reopen 'wal'
has_line reopen 'ok'

shell wal "" <<'SQL'
PRAGMA journal_mode;
SELECT name FROM items WHERE name = 'kiwi';
PRAGMA pdl_check;
SQL
no_errors wal
has_line wal 'wal'
has_line wal 'kiwi'
has_line wal 'ok'

# 3. A second shell while a first holds the image open.
mkfifo "$T/fifo"
"$SQLITE" -cmd ".load $EXT" -cmd ".open file:$IMG?vfs=pdl" <"$T/fifo" >"$T/holder.out" \
  2>"$T/holder.err" &
BG=$!
exec 3>"$T/fifo"
echo "SELECT 'ready';" >&3
i=0
until grep -qxF ready "$T/holder.out" 2>/dev/null; do
  i=$((i + 1))
  [ $i -le 200 ] || fail "the holder shell never answered"
  sleep 0.05
done
shell second "" <<'SQL' || true
SELECT 'second=' || count(*) FROM items;
SQL
grep -q "in use" "$T/second.err" || fail "second: no 'in use' on stderr"
grep -q "pid $BG" "$T/second.err" || fail "second: stderr does not name the holder pid $BG"
if grep -q '^second=' "$T/second.out"; then fail "second: read the image while it was held"; fi
echo ".quit" >&3
exec 3>&-
wait "$BG" || fail "the holder shell failed"
BG=
no_errors holder

shell after "" <<'SQL'
SELECT 'after=' || count(*) FROM items;
SQL
no_errors after
has_line after 'after=503'
# 4. SQLite on an FTL device: the journal on the device, per-page writes, same SQL.
IMG="$T/sdcard.db"
shell ftl "&size=8M&method=ftl&ftl=page" <<'SQL'
CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
BEGIN;
INSERT INTO t(v) SELECT hex(randomblob(40)) FROM generate_series(1, 400);
COMMIT;
UPDATE t SET v = 'x' WHERE id % 7 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT 'rows=' || count(*) FROM t;
PRAGMA journal_mode;
PRAGMA integrity_check;
PRAGMA pdl_check;
PRAGMA pdl_stats;
SQL
no_errors ftl
has_line ftl 'rows=320'
has_line ftl 'delete'
[ "$(grep -cxF ok "$T/ftl.out")" -eq 2 ] || fail "ftl: integrity_check/pdl_check not ok"
grep -q '^{"method":"ftl",.*"ftl":"page",.*"commit":"journal"' "$T/ftl.out" ||
  fail "ftl: pdl_stats does not name the page FTL and journal commit"
shell ftl_reopen "" <<'SQL'
SELECT 'rows=' || count(*) || ' x=' || sum(v = 'x') FROM t;
PRAGMA integrity_check;
SQL
no_errors ftl_reopen
has_line ftl_reopen 'rows=320 x=46'
has_line ftl_reopen 'ok'
echo "cli.sh: all checks passed"
