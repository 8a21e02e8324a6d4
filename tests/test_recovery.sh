#!/bin/bash
# Integration test of store recovery: a hub whose index is removed,
# truncated or damaged starts again with everything it held (uploads,
# fetched debuginfo, executables and sources, byte-identical, with their
# headers), `symhub store rebuild` does the same by hand and refuses a
# store in use, a flipped key in data.mdb is repaired at open from the
# catalog, and rotten blobs are found by `symhub store verify`, by the
# first read after a start and by the daemon's background verifier, never
# served; quarantine/ is emptied after its grace time.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_recovery.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy strip cmp awk sed ss debuginfod sha256sum python3
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"

section 'fixtures: hello is uploaded, hello2 comes from an upstream'
mkdir -p "$tmp"/{src,bin,f,out,up} || exit 99
cp "$FIXTURES"/hello.c "$FIXTURES"/greet.c "$FIXTURES"/greet.h "$tmp/src/" ||
    exit 99
(cd "$tmp/src" && gcc -g -O0 -o "$tmp/bin/hello" hello.c greet.c &&
    gcc -g -O1 -o "$tmp/up/hello2" hello.c greet.c) || exit 99
F=$tmp/f
objcopy --only-keep-debug "$tmp/bin/hello" "$F/hello.debug" &&
    strip -g -o "$F/hello.stripped" "$tmp/bin/hello" || exit 99
ID=$(buildid "$tmp/bin/hello")
ID2=$(buildid "$tmp/up/hello2")
[ -n "$ID" ] && [ -n "$ID2" ] || { echo "# fixtures: no build-ids"; exit 99; }

TOKENS=$tmp/tokens
TOK=$(new_token ci upload "$TOKENS") || { echo "# token"; exit 99; }
AUTH="Authorization: Bearer $TOK"
STORE=$tmp/store

start_debuginfod up "" "$tmp/up" ||
    { echo "# elfutils debuginfod does not start"; exit 99; }
wait_until 60 eval "[ \"\$(http_code $DURL/buildid/$ID2/debuginfo)\" = 200 ]" ||
    { echo "# debuginfod did not index $tmp/up"; exit 99; }
SRC=$tmp/src/hello.c

hub -d "$STORE" --tokens "$TOKENS" -u "$DURL"
code=$(put_file "/buildid/$ID/debuginfo" "$F/hello.debug" "$tmp/out/b" \
    "$tmp/out/h" -H "$AUTH")
code2=$(put_file "/buildid/$ID/executable" "$F/hello.stripped" "$tmp/out/b" \
    "$tmp/out/h" -H "$AUTH")
check "uploads of a debuginfo and an executable are stored" \
    eval '[ "$code" = 201 ] && [ "$code2" = 201 ]'
# What the hub serves now is the reference for every restart below.
PATHS=("/buildid/$ID/debuginfo" "/buildid/$ID/executable"
    "/buildid/$ID2/debuginfo" "/buildid/$ID2/executable"
    "/buildid/$ID2/source$SRC")
i=0
for p in "${PATHS[@]}"; do
	code=$(http "$p" "$tmp/ref.$i" "$tmp/ref.$i.h")
	[ "$code" = 200 ] || fail "reference GET $p" "status $code"
	grep -i '^x-debuginfod-file' "$tmp/ref.$i.h" >"$tmp/ref.$i.x"
	i=$((i + 1))
done
wait_metric symhub_cache_entries -ge 5 20 ||
    fail "the fetched files are stored" "$(metric symhub_cache_entries)"
stop_check "the hub stops"
# From here on the upstream is gone: what the hub serves is its own.
kill -TERM "$DPID"; wait_exit "$DPID" 10
nblobs=$(find "$STORE/blobs" -type f | wc -l)

# served_as_before DESC: every reference path answers the same bytes
# and X-DEBUGINFOD-FILE as before.
served_as_before() {
	local i=0 p bad=""
	for p in "${PATHS[@]}"; do
		code=$(http "$p" "$tmp/out/body" "$tmp/out/hdrs")
		if [ "$code" != 200 ] || ! cmp -s "$tmp/out/body" "$tmp/ref.$i"; then
			bad="$bad $p($code)"
		elif ! grep -i '^x-debuginfod-file' "$tmp/out/hdrs" |
		    cmp -s - "$tmp/ref.$i.x"; then
			bad="$bad $p(headers)"
		fi
		i=$((i + 1))
	done
	check "$1" [ -z "$bad" ] || echo "# differs:$bad"
}

section 'the index removed'
rm -rf "$STORE/index"
: >"$tmp/symhubd.out"
hub -d "$STORE" --tokens "$TOKENS"
check "with its index removed the hub says so and rebuilds it" \
    grep -q "the index is damaged or lost; rebuilding" "$tmp/symhubd.out"
check "the log names the command to run" \
    grep -q "symhub store rebuild $STORE" "$tmp/symhubd.out"
served_as_before "every upload, fetched debuginfo, executable and source \
is served byte-identical, with its headers"
check "no blob was deleted or quarantined" \
    eval '[ "$(find "$STORE/blobs" -type f | wc -l)" = "$nblobs" ] &&
    { [ ! -d "$STORE/quarantine" ] || [ -z "$(ls -A "$STORE/quarantine")" ]; }'

# A rebuild by hand is refused while the hub has the store open.
"$SYMHUB" store rebuild "$STORE" >"$tmp/rb.out" 2>&1
st=$?
check "symhub store rebuild refuses a store in use (exit $st)" \
    eval '[ "$st" = 1 ] && grep -q "in use" "$tmp/rb.out"'
stop_check "the hub stops"

section 'data.mdb truncated halfway (a SIGBUS in LMDB)'
size=$(stat -c %s "$STORE/index/data.mdb")
truncate -s $((size / 2)) "$STORE/index/data.mdb"
: >"$tmp/symhubd.out"
hub -d "$STORE" --tokens "$TOKENS"
check "a half-truncated index is found damaged, not a crash" \
    grep -q "the index is damaged or lost" "$tmp/symhubd.out"
served_as_before "and after the rebuild everything is served as before"
stop_check "the hub stops"

section 'by hand'
rm -rf "$STORE/index"
"$SYMHUB" store rebuild "$STORE" >"$tmp/rb.out" 2>&1
st=$?
check "symhub store rebuild restores 5 records and reports it (exit $st)" \
    eval '[ "$st" = 0 ] && grep -q ": 5 records" "$tmp/rb.out"'
: >"$tmp/symhubd.out"
hub -d "$STORE" --tokens "$TOKENS"
check "the hub then starts without a rebuild of its own" \
    eval '! grep -q "rebuilding" "$tmp/symhubd.out"'
served_as_before "and serves everything as before"
stop_check "the hub stops"

section 'a flipped key: the index hides a record it holds'
# The build-id's first byte flipped wherever data.mdb holds it (the
# records' keys, their LRU entries): no crash, the record under a wrong
# key, its neighbours out of order.  Old hubs answered 404 for the
# uploads until someone ran a rebuild.
python3 - "$STORE/index/data.mdb" "$ID" <<'PY' || exit 99
import sys
p, idhex = sys.argv[1], sys.argv[2]
want = bytes.fromhex(idhex)
bad = bytes([want[0] ^ 0xff]) + want[1:]
data = open(p, 'rb').read()
n = data.count(want)
if n == 0:
    sys.exit(1)
open(p, 'r+b').write(data.replace(want, bad))
print('# flipped %d key(s)' % n)
PY
: >"$tmp/symhubd.out"
hub -d "$STORE" --tokens "$TOKENS"
check "the open says the index was damaged, and what it took back" \
    grep -q "THE INDEX WAS DAMAGED:.* 2 record(s)" "$tmp/symhubd.out"
check "and counts it in /metrics" \
    eval '[ "$(metric symhub_cache_check_restored_total)" = 2 ]'
served_as_before "the uploads are served again, the rest as before"
stop_check "the hub stops"

# blob_of N: the blob file holding reference N's bytes.
blob_of() {
	local h
	h=$(sha256sum "$tmp/ref.$1" | cut -c1-64)
	echo "$STORE/blobs/${h:0:2}/${h:2}"
}
rot() {
	printf 'X' | dd of="$1" bs=1 seek=100 conv=notrunc status=none
}

section 'rot while the hub was down, found when first read'
# Bytes written in place change no identity index/clean records: the
# hub trusts the store as it was closed, and old hubs served the rotten
# bytes (with their old ETag) until the verifier came by.  The verifier
# is off here, so only the first read can find them.
b4=$(blob_of 4)
rot "$b4"
: >"$tmp/symhubd.out"
hub -d "$STORE" --tokens "$TOKENS" --verify-period 0
check "the hub trusted the store as it was closed (no check ran)" \
    eval '[ "$(metric symhub_cache_opened_clean)" = 1 ]'
expect_get "a rotten source is not served: a miss, and the upstream is \
gone" "/buildid/$ID2/source$SRC" 404
check "it is counted" \
    eval '[ "$(metric symhub_cache_first_failed_total)" = 1 ]'
check "and kept in quarantine/" eval '[ ! -e "$b4" ] &&
    [ -e "$STORE/quarantine/$(basename "$(dirname "$b4")")$(basename "$b4").bad" ]'
check "and logged" wait_until 10 grep -q "when first read since the start" \
    "$tmp/symhubd.out"
expect_get "an intact file is served, hashed once" "/buildid/$ID/debuginfo" \
    200 "$tmp/ref.0"
# How many blobs the first reads hashed depends on what a request reads
# (a source miss reads its debuginfo's line tables, for embedded text);
# that each is hashed once does not: the same reads again hash nothing.
v=$(metric symhub_cache_first_verified_total)
expect_get "the same file again" "/buildid/$ID/debuginfo" 200 "$tmp/ref.0"
expect_get "the rotten source again: still a miss" \
    "/buildid/$ID2/source$SRC" 404
check "(each counted once: $v hashed, none again)" \
    eval '[ "$v" -ge 2 ] &&
    [ "$(metric symhub_cache_first_verified_total)" = "$v" ] &&
    [ "$(metric symhub_cache_first_failed_total)" = 1 ]'
stop_check "the hub stops"

section 'rot'
b=$(blob_of 2)
rot "$b"
"$SYMHUB" store verify "$STORE" >"$tmp/vf.out" 2>&1
st=$?
check "symhub store verify finds the rotten blob (exit $st)" \
    eval '[ "$st" = 1 ] && grep -q " 1 failed" "$tmp/vf.out"'
q=$STORE/quarantine/$(basename "$(dirname "$b")")$(basename "$b").bad
check "and keeps it in quarantine/" eval '[ ! -e "$b" ] && [ -e "$q" ]'

hub -d "$STORE" --tokens "$TOKENS" --verify-period 1
expect_get "the rotten fetched debuginfo is not served (upstream gone)" \
    "/buildid/$ID2/debuginfo" 404
b=$(blob_of 1)
v0=$(metric symhub_cache_verify_failed_total)
rot "$b"
check "the background verifier finds a blob rotten at run time" \
    wait_metric symhub_cache_verify_failed_total -ge $((v0 + 1)) 30
check "and logs it" grep -q "no longer match their SHA-256" "$tmp/symhubd.out"
expect_get "its wrong bytes are never served" "/buildid/$ID/executable" 404
expect_get "the intact upload still is" "/buildid/$ID/debuginfo" 200 \
    "$tmp/ref.0"
stop_check "the hub stops"

section 'quarantine/ is collected after its grace time'
old=$(ls "$STORE"/quarantine/* | head -1)
fresh=$(ls "$STORE"/quarantine/* | tail -1)
[ -n "$old" ] && [ "$old" != "$fresh" ] ||
    { echo "# want two quarantined files: $(ls "$STORE/quarantine")"; exit 99; }
touch -d '8 days ago' "$old"
hub -d "$STORE" --tokens "$TOKENS"
check "a file kept there past --quarantine-keep (7 days) is deleted" \
    wait_metric symhub_cache_quarantine_deleted_total -ge 1 30
check "it is gone, a fresh one stays" eval '[ ! -e "$old" ] && [ -e "$fresh" ]'
stop_check "the hub stops"

finish
