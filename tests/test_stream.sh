#!/bin/bash
# A cold miss streams: the client gets the bytes while the upstream is
# still sending them, and so does every client that asks meanwhile; the
# tail waits until the whole file is verified, so a file that turns out
# wrong, an upstream that cuts, stalls or sends more than it announced,
# leaves every client with a reset short of the end and nothing stored:
#   1. the right head, then zeros (the file fails its checks), a reset,
#      more bytes than announced: curl and debuginfod-find stream the
#      first half, then are reset before the end; debuginfod-find exits
#      non-zero and keeps nothing;
#   2. the first bytes reach coalesced clients (curl, debuginfod-find)
#      while the upstream holds the rest back (it sends it only when the
#      test says so), one that hangs up mid-stream harms nobody, and the
#      headers are a warm hit's; bytes past Content-Length are not read;
#   3. a stall mid-body: reset after the timeout;
#   4. a head that names another build-id: dropped at once;
#   5. gdb and llvm-debuginfod-find-19 get the bytes of elfutils'
#      debuginfod through a cold hub, byte for byte, streamed.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_stream.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
. "$top_srcdir/tests/stream_lib.sh"

need curl gcc objcopy strip readelf cmp python3 debuginfod debuginfod-find \
    gdb llvm-debuginfod-find-19
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
BADUPSTREAM=$top_srcdir/tests/badupstream.py

# big: an executable of 1 MiB (a table in .rodata), other: the same with
# another table, so another build-id; many: a debuginfo of ~200 KB (many
# functions and types), its stripped executable for gdb
# (tests/stream_lib.sh).
stream_fixtures other
strip --strip-all -o "$tmp/gdb/big" "$tmp/bin/big" || exit 99
[ "$(buildid "$tmp/bin/other")" != "$ID" ] ||
    { echo "# fixtures: build-ids"; exit 99; }

# One upstream sends the big executable in two halves, the second once
# $tmp/h/go exists, as $tmp/h/then says (tests/badupstream.py halves).
stream_halves
# A hub that asks it, patient while it holds (low-speed check: 1 KB/s
# for the first-byte timeout).
hub -d "$tmp/st" -u "$HALVES name=halves first-byte-timeout=30" \
    --log-file "$tmp/hub.log"

# cold CLIENT-OUT [KIND]: GET the big file (as an executable, or KIND)
# in the background, body to CLIENT-OUT, headers to CLIENT-OUT.hdr; sets
# CPID.
cold() {
	curl -s --max-time 60 -o "$1" -D "$1.hdr" \
	    "$URL/buildid/$ID/${2:-executable}" &
	CPID=$!
	PIDS+=("$CPID")
}

# spoiled WORD WHAT: the hub streams the first half to debuginfod-find
# and to curl (the executable), and to gdb (the same file as the
# debuginfo of its stripped copy), then WORD spoils the rest: all are
# cut off short, the client caches keep nothing, the store stays empty.
spoiled() {
	local dc gc cut st
	afterwards "$1"
	cut=$(metric symhub_fetch_streams_cut_total)
	st=$(metric symhub_fetch_streams_total)
	client_env
	dc=$DEBUGINFOD_CACHE_PATH
	DEBUGINFOD_RETRY_LIMIT=0 timeout 60 debuginfod-find executable "$ID" \
	    >"$tmp/out/$1.df" 2>&1 &
	DFPID=$!
	PIDS+=("$DFPID")
	client_env
	gc=$DEBUGINFOD_CACHE_PATH
	(cd "$tmp/gdb" && DEBUGINFOD_RETRY_LIMIT=0 timeout 60 gdb -nx -batch \
	    -iex 'set debuginfod enabled on' -ex 'info line main' \
	    "$tmp/gdb/big") >"$tmp/out/$1.gdb" 2>&1 &
	GPID=$!
	PIDS+=("$GPID")
	cold "$tmp/out/$1"
	streams "$tmp/out/$1"
	verdict $? "$2: the client streams first ($(bytes "$tmp/out/$1") bytes)"
	wait_metric symhub_fetch_streams_total -ge $((st + 2)) 30
	verdict $? "$2: so does gdb's debuginfo"
	touch "$tmp/h/go"
	wait_exit "$CPID" 60
	[ "$exit_status" != 0 ] && [ "$(bytes "$tmp/out/$1")" -lt "$SIZE" ]
	verdict $? "$2: curl is cut off short of the end" \
	    "curl exit $exit_status, $(bytes "$tmp/out/$1") of $SIZE bytes"
	wait_exit "$DFPID" 60
	[ "$exit_status" != 0 ] && [ -z "$(find "$dc" -type f -path "*$ID*")" ]
	verdict $? "$2: debuginfod-find fails, its cache keeps nothing" \
	    "exit $exit_status: $(head -n 2 "$tmp/out/$1.df")" \
	    "$(find "$dc" -type f)"
	wait_exit "$GPID" 60
	[ -z "$(find "$gc" -type f -path "*$ID*")" ]
	verdict $? "$2: gdb's cache keeps nothing" "$(find "$gc" -type f)" \
	    "$(head -n 5 "$tmp/out/$1.gdb")"
	check "$2: nothing is stored" metric_cmp symhub_cache_entries -eq 0
	check "$2: the stream was cut" \
	    metric_cmp symhub_fetch_streams_cut_total -gt "${cut:-0}"
}

section 'the right head, then the wrong bytes'
spoiled zeros "zeros after the head"
section 'the upstream cuts or sends too much'
spoiled reset "a reset mid-body"
spoiled overflow "more bytes than X-DEBUGINFOD-SIZE"

section 'the first bytes come before the last has left the upstream'
afterwards rest
j0=$(metric symhub_fetch_jobs_total)
s0=$(metric symhub_fetch_streams_total)
r0=$(metric symhub_fetch_streamed_total)
cold "$tmp/out/c1"
C1=$CPID
streams "$tmp/out/c1"
verdict $? "client 1 has bytes while the upstream holds the rest ($(bytes "$tmp/out/c1") of $SIZE)" \
    "$(tail -n 3 "$tmp/hub.log")"
check "... and the tail is held back" \
    eval "[ \$(bytes '$tmp/out/c1') -le $((SIZE - 65536)) ]"
cold "$tmp/out/c2"
C2=$CPID
streams "$tmp/out/c2"
verdict $? "a second client, coalesced, streams too ($(bytes "$tmp/out/c2") bytes)"
client_env
timeout 60 debuginfod-find executable "$ID" >"$tmp/out/df" 2>&1 &
DFPID=$!
PIDS+=("$DFPID")
wait_metric symhub_fetch_streamed_total -ge $((r0 + 3)) 30
verdict $? "... and debuginfod-find (3 readers)"
cold "$tmp/out/c3"
C3=$CPID
streams "$tmp/out/c3"
kill "$C3" 2>/dev/null
wait_exit "$C3" 10
check "a fourth client hangs up mid-stream ($(bytes "$tmp/out/c3") bytes)" \
    eval "[ \$(bytes '$tmp/out/c3') -lt $SIZE ]"
check "... all from one upstream request, one stream" eval \
    "metric_cmp symhub_fetch_jobs_total -eq $((j0 + 1)) &&
    metric_cmp symhub_fetch_streams_total -eq $((s0 + 1)) &&
    metric_cmp symhub_fetch_streamed_total -eq $((r0 + 4))"
touch "$tmp/h/go"
wait_exit "$C1" 30
e1=$exit_status
wait_exit "$C2" 30
e2=$exit_status
[ "$e1$e2" = 00 ] && cmp -s "$tmp/out/c1" "$BIG" && cmp -s "$tmp/out/c2" "$BIG"
verdict $? "once the upstream sends the rest, curl has the file, byte for byte" \
    "curl exit $e1, $e2; $(bytes "$tmp/out/c1"), $(bytes "$tmp/out/c2") bytes"
wait_exit "$DFPID" 30
expect_file "... and debuginfod-find" "$(head -n 1 "$tmp/out/df")" "$BIG"
check "it is stored" wait_metric symhub_cache_entries -ge 1 10
curl -s -o "$tmp/out/warm" -D "$tmp/out/warm.hdr" "$URL/buildid/$ID/executable"
xhdrs() {
	local h
	for h in Content-Length Content-Type X-DEBUGINFOD-SIZE \
	    X-DEBUGINFOD-FILE Last-Modified Accept-Ranges; do
		echo "$h: $(header "$1" "$h")"
	done
}
[ "$(xhdrs "$tmp/out/c1.hdr")" = "$(xhdrs "$tmp/out/warm.hdr")" ] &&
    [ "$(header "$tmp/out/c1.hdr" Content-Length)" = "$SIZE" ]
verdict $? "the streamed answer has a warm hit's headers" \
    "cold:" "$(xhdrs "$tmp/out/c1.hdr")" "warm:" "$(xhdrs "$tmp/out/warm.hdr")"
# More than Content-Length: libcurl reads what it says and no more, so
# the file is whole and right (the same bytes, as the debuginfo).
afterwards excess
cold "$tmp/out/excess" debuginfo
streams "$tmp/out/excess"
verdict $? "4 KiB more than Content-Length: the client streams first"
touch "$tmp/h/go"
wait_exit "$CPID" 30
[ "$exit_status" = 0 ] && cmp -s "$tmp/out/excess" "$BIG"
verdict $? "... and has the file, byte for byte, no more" \
    "curl exit $exit_status, $(bytes "$tmp/out/excess") of $SIZE bytes"
stop_check "the hub stops (the reader that hung up let go)"

section 'the upstream stalls mid-body'
# libcurl's low-speed check (1 KB/s for the first-byte timeout, 1 s, on
# its few seconds' average) gives up on it.
afterwards stall
hub -d "$tmp/st-stall" -u "$HALVES name=halves first-byte-timeout=1"
cold "$tmp/out/stall"
wait_exit "$CPID" 60
e=$exit_status
[ "$e" != 0 ] && [ "$e" != 124 ] && [ "$(bytes "$tmp/out/stall")" -gt 0 ] &&
    [ "$(bytes "$tmp/out/stall")" -lt "$SIZE" ]
verdict $? "the client streams, then is reset short" \
    "curl exit $e, $(bytes "$tmp/out/stall") of $SIZE bytes"
check "... nothing stored" metric_cmp symhub_cache_entries -eq 0
stop_check "the hub stops"
kill "$HPID"; wait_exit "$HPID" 5

section 'a head that lies'
start_badupstream lie wrongfile "$tmp/bin/other" ||
    fail "badupstream.py wrongfile starts"
hub -d "$tmp/st-lie" -u "$BURL name=lie" --log-file "$tmp/lie.log"
code=$(http "/buildid/$ID/executable" "$tmp/out/lie" "$tmp/out/lie.hdr" \
    --max-time 30)
[ "$code" = 000 ] || [ "$code" = 503 ]
verdict $? "another build-id in the first bytes: no answer but a reset ($code)"
check "... dropped at its head, and said so" grep -q \
    "upstream lie sent a file with another build-id .*dropped at its head" \
    "$tmp/lie.log"
check "... nothing streamed, nothing stored" eval \
    'metric_cmp symhub_fetch_streams_total -eq 0 &&
    metric_cmp symhub_cache_entries -eq 0'
stop_check "the hub stops"
kill "$BPID"; wait_exit "$BPID" 5

section "real clients through a streaming cold hub"
start_debuginfod up "" "$tmp/up" || { echo "# debuginfod"; exit 99; }
wait_until 60 eval "[ \"\$(http_code $DURL/buildid/$MID/debuginfo)\" = 200 ]" ||
    { echo "# debuginfod did not index many"; exit 99; }
curl -s -o "$tmp/out/direct" "$DURL/buildid/$MID/debuginfo" || exit 99
[ "$(file_size "$tmp/out/direct")" -gt 131072 ] ||
    { echo "# fixtures: the debuginfo is too small to stream"; exit 99; }
# gdb asks for the debuginfo, LLVM's client for the executable: each a
# cold key of one hub.
hub -d "$tmp/st-real" -u "$DURL name=up"
client_env
(cd "$tmp/gdb" && timeout 60 gdb -nx -batch \
    -iex 'set debuginfod enabled on' -ex 'info line f300' \
    "$tmp/gdb/many") >"$tmp/out/gdb" 2>&1
grep -Eq '^Line [0-9]+ of "many.c"' "$tmp/out/gdb" &&
    cmp -s "$DEBUGINFOD_CACHE_PATH/$MID/debuginfo" "$tmp/out/direct"
verdict $? "gdb: the line of f300, the debuginfo byte for byte" \
    "$(head -n 5 "$tmp/out/gdb")"
check "... streamed" metric_cmp symhub_fetch_streamed_total -eq 1
client_env
f=$(timeout 60 llvm-debuginfod-find-19 --executable "$MID" 2>"$tmp/out/err")
expect_file "llvm-debuginfod-find-19: the executable, byte for byte" "$f" \
    "$tmp/up/many"
check "... streamed" metric_cmp symhub_fetch_streamed_total -eq 2
stop_check "the hub stops"

finish
