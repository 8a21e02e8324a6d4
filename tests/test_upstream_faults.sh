#!/bin/bash
# Upstreams that lie about what they send, and bursts the store must
# absorb.  Nothing wrong may be stored or served:
#   1. a source cut short with X-DEBUGINFOD-SIZE announcing all of it, and
#      one sent gzip-encoded (not asked for) and cut short;
#   2. a stripped executable (the right build-id, no DWARF, no symbol
#      table) sent as the debuginfo;
#   3. an answer without end: cut at --upstream-max-size while it
#      streams; the default is finite;
#   4. a burst of cold misses with the store queue bounded to nothing:
#      every file is stored before the next fetch (pushback), every
#      client gets the right bytes, and /metrics shows the queue.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_upstream_faults.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy strip cmp python3 ss debuginfod
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
BADUPSTREAM=$top_srcdir/tests/badupstream.py

mkdir -p "$tmp"/{src,bin,out,up} || exit 99
cp "$FIXTURES"/hello.c "$FIXTURES"/greet.c "$FIXTURES"/greet.h "$tmp/src/" ||
    exit 99
(cd "$tmp/src" && gcc -g -O0 -o "$tmp/bin/hello" hello.c greet.c) || exit 99
strip --strip-all -o "$tmp/bin/hello.stripped" "$tmp/bin/hello" || exit 99
ID=$(buildid "$tmp/bin/hello")
[ -n "$ID" ] && [ "$(buildid "$tmp/bin/hello.stripped")" = "$ID" ] ||
    { echo "# fixtures: build-ids"; exit 99; }
SRC=$tmp/src/hello.c

# not_served DESC PATH: the hub answers PATH with a 404 or a reset (000),
# never a 200.
not_served() {
	local code
	code=$(http "$2" "$tmp/out/body" "$tmp/out/hdrs" --max-time 60)
	if [ "$code" = 200 ]; then
		fail "$1" "200 with $(file_size "$tmp/out/body") bytes"
	elif [ "$code" = 404 ] || [ "$code" = 000 ]; then
		pass "$1 ($code)"
	else
		fail "$1" "status $code"
	fi
}

section 'sources cut short'
for mode in short gzipcut; do
	start_badupstream "$mode" "$mode" "$SRC" ||
	    { fail "badupstream.py $mode starts"; continue; }
	: >"$tmp/symhubd.out"
	hub -d "$tmp/store-$mode" -u "$BURL name=$mode" \
	    --log-file "$tmp/$mode.log"
	not_served "$mode: a source cut short is not served" \
	    "/buildid/$ID/source$SRC"
	check "$mode: nothing is stored" metric_cmp symhub_cache_entries -eq 0
	check "$mode: a warning says why" grep -Eq \
	    "upstream $mode sent .*(not the [0-9]+ its X-DEBUGINFOD-SIZE|Content-Encoding it was not asked for)" \
	    "$tmp/$mode.log"
	stop_check "$mode: the hub stops"
	kill "$BPID"; wait_exit "$BPID" 5
done

section 'a stripped executable as the debuginfo'
start_badupstream stripped wrongfile "$tmp/bin/hello.stripped" ||
    fail "badupstream.py wrongfile starts"
hub -d "$tmp/store-stripped" -u "$BURL name=stripped" \
    --log-file "$tmp/stripped.log"
not_served "a stripped executable sent as the debuginfo is not served" \
    "/buildid/$ID/debuginfo"
check "... nor stored" metric_cmp symhub_cache_entries -eq 0
check "... and a warning says why" grep -q \
    "upstream stripped sent no DWARF and no symbol table" "$tmp/stripped.log"
expect_get "the same file as the executable is fine" \
    "/buildid/$ID/executable" 200 "$tmp/bin/hello.stripped"
stop_check "the hub stops"
kill "$BPID"; wait_exit "$BPID" 5

section 'an answer without end'
check "--upstream-max-size has a finite default (16 GiB)" \
    eval '"$SYMHUBD" -n | grep -Eq "^upstream-max-size *= *17179869184$"'
start_badupstream endless endless || fail "badupstream.py endless starts"
hub -d "$tmp/store-endless" -u "$BURL name=endless" --upstream-max-size 1M \
    --log-file "$tmp/endless.log"
code=$(http "/buildid/$ID/debuginfo" "$tmp/out/body" "$tmp/out/hdrs" \
    --max-time 60)
check "an endless answer is cut: 406, too large ($code)" [ "$code" = 406 ]
b=$(metric 'symhub_upstream_bytes_total{upstream="endless"}')
check "... as it passes 1 MiB ($b bytes read)" \
    eval '[ -n "$b" ] && [ "$b" -le $((1024 * 1024 + 1024 * 1024)) ]'
check "... and tmp/ is left empty" dir_empty "$tmp/store-endless/tmp"
stop_check "the hub stops"
kill "$BPID"; wait_exit "$BPID" 5

section 'a burst of cold misses, the store queue bounded'
for v in 1 2 3 4 5 6; do
	mkdir -p "$tmp/src$v" && cp "$tmp/src"/*.[ch] "$tmp/src$v/" &&
	    (cd "$tmp/src$v" && gcc -g -O0 -o "$tmp/up/p$v" hello.c greet.c) ||
	    exit 99
done
start_debuginfod up "" "$tmp/up" || { echo "# debuginfod"; exit 99; }
for v in 1 2 3 4 5 6; do
	I[$v]=$(buildid "$tmp/up/p$v")
	wait_until 60 eval "[ \"\$(http_code $DURL/buildid/${I[$v]}/executable)\" = 200 ]" ||
	    { echo "# debuginfod did not index p$v"; exit 99; }
done
hub -d "$tmp/store-burst" -u "$DURL" --store-queue-bytes 1
pids=()
for v in 1 2 3 4 5 6; do
	for k in 1 2 3; do
		curl -s -o "$tmp/out/p$v.$k" "$URL/buildid/${I[$v]}/executable" &
		pids+=($!)
	done
done
wait "${pids[@]}"
bad=""
for v in 1 2 3 4 5 6; do
	for k in 1 2 3; do
		cmp -s "$tmp/out/p$v.$k" "$tmp/up/p$v" || bad="$bad p$v.$k"
	done
done
check "18 cold requests for 6 files: every client has the right bytes \
(${bad:-all})" [ -z "$bad" ]
check "every file was stored before more were fetched (pushback)" \
    metric_cmp symhub_fetch_store_pushback_total -ge 6
check "/metrics shows the store queue" \
    eval 'metric_cmp symhub_fetch_store_queue -eq 0 &&
    metric_cmp symhub_fetch_store_queue_bytes -eq 0'
check "all six are stored" wait_metric symhub_cache_entries -ge 6 10
stop_check "the hub stops"

finish
