#!/bin/bash
# A cold miss streams zstd-coded to the clients that accept zstd, as a
# warm hit would go, coded as the bytes come; the tail still waits until
# the whole file is verified, and the frame ends only then, so a file
# that turns out wrong, an upstream that cuts, stalls or sends more than
# it announced, leaves every client cut short: no last chunk, no whole
# zstd frame, nothing in a client cache:
#   1. coalesced readers of one cold fetch each get the coding they
#      asked for (zstd raw, curl --compressed, identity, debuginfod-find)
#      while the upstream holds the rest back, fewer bytes on the wire;
#      one that hangs up harms nobody;
#   2. the right head then zeros, a reset, more bytes than announced, a
#      stall: curl (raw zstd and --compressed) and debuginfod-find are
#      cut short, the coded bytes are no whole frame, nothing is kept;
#   3. gdb, debuginfod-find and llvm-debuginfod-find-19 get the bytes of
#      elfutils' debuginfod through a cold hub, byte for byte, streamed
#      in zstd (libcurl under each sends deflate, gzip, br, zstd);
#   4. a hub behind another (accept-encoding=zstd) streams too, and
#      passes the other's zstd on as it came (no coding again), the
#      bytes that decode into the tail and the frame's end held back
#      until the file is verified: one a byte short is cut, no frame.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_stream_zstd.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
. "$top_srcdir/tests/stream_lib.sh"

need curl gcc objcopy strip readelf cmp python3 zstd debuginfod \
    debuginfod-find gdb llvm-debuginfod-find-19
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
BADUPSTREAM=$top_srcdir/tests/badupstream.py
unset DEBUGINFOD_URLS

# big: an executable of 1 MiB (a table in .rodata, compressible);
# many: a debuginfo of ~200 KB, its stripped executable for gdb
# (tests/stream_lib.sh).
stream_fixtures
# The upstream sends the big executable in two halves, the second once
# $tmp/h/go exists, as $tmp/h/then says (tests/badupstream.py halves).
stream_halves
hub -d "$tmp/st" -u "$HALVES name=halves first-byte-timeout=30" \
    --log-file "$tmp/hub.log"

# get OUT [CURL ARGS...]: GET the big executable in the background, body
# to OUT, headers to OUT.hdr; sets CPID.
get() {
	local out=$1
	shift
	curl -s --max-time 60 -o "$out" -D "$out.hdr" "$@" \
	    "$URL/buildid/$ID/executable" &
	CPID=$!
	PIDS+=("$CPID")
}
# raw OUT: as get, the coded bytes as they came (no decoding, written
# at once: a few hundred bytes would wait in curl's stdio buffer).
raw() {
	get "$1" -N -H 'Accept-Encoding: zstd'
}
# coded_lines: the answers the hub logged zstd-coded for the big file,
# cut (RST) or whole (200).
coded_lines() {
	grep -c "GET /buildid/$ID/executable \(200 [0-9]*\|RST 0\) upstream halves zstd" \
	    "$tmp/hub.log"
}

section 'coalesced readers, each in its coding, while the upstream holds'
afterwards rest
s0=$(metric symhub_fetch_streams_total)
r0=$(metric symhub_fetch_streamed_total)
raw "$tmp/out/z"
Z=$CPID
streams "$tmp/out/z"
verdict $? "zstd raw: coded bytes come while the upstream holds the rest" \
    "$(tail -n 3 "$tmp/hub.log")"
get "$tmp/out/c" --compressed
C=$CPID
streams "$tmp/out/c"
verdict $? "curl --compressed, coalesced, streams too"
check "... and the decoded bytes stop short of the held-back tail" \
    eval "[ \$(bytes '$tmp/out/c') -le $((SIZE - 65536)) ]"
get "$tmp/out/i"
I=$CPID
streams "$tmp/out/i"
verdict $? "curl without Accept-Encoding, coalesced, streams too"
client_env
DC=$DEBUGINFOD_CACHE_PATH
timeout 60 debuginfod-find executable "$ID" >"$tmp/out/df" 2>&1 &
DFPID=$!
PIDS+=("$DFPID")
get "$tmp/out/gone" --compressed
G=$CPID
streams "$tmp/out/gone"
kill "$G" 2>/dev/null
wait_exit "$G" 10
wait_metric symhub_fetch_streamed_total -ge $((r0 + 5)) 30
verdict $? "five readers, one of them gone, of one stream" \
    "streamed: $(metric symhub_fetch_streamed_total)"
check "... one upstream request, one stream" \
    metric_cmp symhub_fetch_streams_total -eq $((s0 + 1))
touch "$tmp/h/go"
wait_exit "$Z" 30
ez=$exit_status
wait_exit "$C" 30
ec=$exit_status
wait_exit "$I" 30
ei=$exit_status
[ "$ez$ec$ei" = 000 ]
verdict $? "the three curls end well" "exit $ez $ec $ei"
[ "$(header "$tmp/out/z.hdr" Content-Encoding)" = zstd ] &&
    zstd -q -d -c "$tmp/out/z" | cmp -s - "$BIG"
verdict $? "zstd raw: Content-Encoding zstd, one frame that decodes to the file" \
    "$(cat "$tmp/out/z.hdr")"
zb=$(bytes "$tmp/out/z")
check "... $zb bytes on the wire for $SIZE" eval "[ $zb -lt $((SIZE / 4)) ]"
check "... chunked, no Content-Length; X-DEBUGINFOD-SIZE the file's; Vary: Accept-Encoding; no Accept-Ranges" eval \
    "[ -z \"\$(header '$tmp/out/z.hdr' Content-Length)\" ] &&
    [ \"\$(header '$tmp/out/z.hdr' X-DEBUGINFOD-SIZE)\" = $SIZE ] &&
    [ \"\$(header '$tmp/out/z.hdr' Vary)\" = Accept-Encoding ] &&
    [ -z \"\$(header '$tmp/out/z.hdr' Accept-Ranges)\" ]"
[ "$(header "$tmp/out/c.hdr" Content-Encoding)" = zstd ] &&
    cmp -s "$tmp/out/c" "$BIG"
verdict $? "curl --compressed: zstd, the file byte for byte"
[ -z "$(header "$tmp/out/i.hdr" Content-Encoding)" ] &&
    [ "$(header "$tmp/out/i.hdr" Content-Length)" = "$SIZE" ] &&
    cmp -s "$tmp/out/i" "$BIG"
verdict $? "curl without Accept-Encoding: as it is, Content-Length, byte for byte" \
    "$(cat "$tmp/out/i.hdr")"
wait_exit "$DFPID" 30
expect_file "debuginfod-find: the file, byte for byte" \
    "$(head -n 1 "$tmp/out/df")" "$BIG"
check "... the hub coded the answers of the zstd clients, and said so" eval \
    "[ \$(coded_lines) -ge 3 ] &&
    metric_cmp 'symhub_encoded_responses_total{coding=\"zstd\"}' -ge 3"
check "it is stored" wait_metric symhub_cache_entries -ge 1 10
stop_check "the hub stops (the reader that hung up let go)"

# spoiled WORD WHAT: the first half streams, zstd-coded, to curl raw,
# curl --compressed and debuginfod-find; then WORD spoils the rest: all
# are cut short of the last chunk and of the frame's end, the client
# cache keeps nothing, the store stays empty.
spoiled() {
	local dc
	afterwards "$1"
	hub -d "$tmp/st-$1" -u "$HALVES name=halves first-byte-timeout=30" \
	    --log-file "$tmp/hub-$1.log"
	client_env
	dc=$DEBUGINFOD_CACHE_PATH
	DEBUGINFOD_RETRY_LIMIT=0 timeout 60 debuginfod-find executable "$ID" \
	    >"$tmp/out/$1.df" 2>&1 &
	DFPID=$!
	PIDS+=("$DFPID")
	raw "$tmp/out/$1.z"
	Z=$CPID
	get "$tmp/out/$1.c" --compressed
	C=$CPID
	streams "$tmp/out/$1.z" && streams "$tmp/out/$1.c"
	verdict $? "$2: the zstd clients stream first"
	wait_metric symhub_fetch_streamed_total -ge 3 30
	verdict $? "$2: so does debuginfod-find"
	touch "$tmp/h/go"
	wait_exit "$Z" 60
	[ "$exit_status" != 0 ] && ! zstd -q -t "$tmp/out/$1.z" 2>/dev/null
	verdict $? "$2: curl raw is cut off, its bytes are no whole zstd frame" \
	    "curl exit $exit_status, $(bytes "$tmp/out/$1.z") bytes"
	wait_exit "$C" 60
	[ "$exit_status" != 0 ] && [ "$(bytes "$tmp/out/$1.c")" -lt "$SIZE" ]
	verdict $? "$2: curl --compressed is cut off short of the end" \
	    "curl exit $exit_status, $(bytes "$tmp/out/$1.c") of $SIZE bytes"
	wait_exit "$DFPID" 60
	[ "$exit_status" != 0 ] && [ -z "$(find "$dc" -type f -path "*$ID*")" ]
	verdict $? "$2: debuginfod-find fails, its cache keeps nothing" \
	    "exit $exit_status: $(head -n 2 "$tmp/out/$1.df")" \
	    "$(find "$dc" -type f)"
	check "$2: all three were sent zstd, and cut" eval \
	    "[ \$(grep -c 'GET /buildid/$ID/executable RST 0 upstream halves zstd' '$tmp/hub-$1.log') -ge 3 ]"
	check "$2: nothing is stored" metric_cmp symhub_cache_entries -eq 0
	stop_check "$2: the hub stops"
}

section 'the right head, then the wrong bytes; cuts; too many bytes'
spoiled zeros "zeros after the head"
spoiled reset "a reset mid-body"
spoiled overflow "more bytes than X-DEBUGINFOD-SIZE"

section 'the upstream stalls mid-body'
afterwards stall
hub -d "$tmp/st-stall" -u "$HALVES name=halves first-byte-timeout=1"
raw "$tmp/out/stall.z"
Z=$CPID
get "$tmp/out/stall.c" --compressed
wait_exit "$CPID" 60
e=$exit_status
[ "$e" != 0 ] && [ "$e" != 124 ] && [ "$(bytes "$tmp/out/stall.c")" -gt 0 ] &&
    [ "$(bytes "$tmp/out/stall.c")" -lt "$SIZE" ]
verdict $? "curl --compressed streams, then is reset short" \
    "curl exit $e, $(bytes "$tmp/out/stall.c") of $SIZE bytes"
wait_exit "$Z" 60
[ "$exit_status" != 0 ] && [ "$(bytes "$tmp/out/stall.z")" -gt 0 ] &&
    ! zstd -q -t "$tmp/out/stall.z" 2>/dev/null
verdict $? "curl raw: some coded bytes, no whole frame" \
    "curl exit $exit_status, $(bytes "$tmp/out/stall.z") bytes"
check "... nothing stored" metric_cmp symhub_cache_entries -eq 0
stop_check "the hub stops"
kill "$HPID"; wait_exit "$HPID" 5

section "real clients through a streaming cold hub"
start_debuginfod up "" "$tmp/up" || { echo "# debuginfod"; exit 99; }
wait_until 60 eval "[ \"\$(http_code $DURL/buildid/$MID/debuginfo)\" = 200 ]" ||
    { echo "# debuginfod did not index many"; exit 99; }
curl -s -o "$tmp/out/direct" "$DURL/buildid/$MID/debuginfo" || exit 99
[ "$(file_size "$tmp/out/direct")" -gt 131072 ] ||
    { echo "# fixtures: the debuginfo is too small to stream"; exit 99; }
hub -d "$tmp/st-real" -u "$DURL name=up" --log-file "$tmp/real.log"
client_env
(cd "$tmp/gdb" && timeout 60 gdb -nx -batch \
    -iex 'set debuginfod enabled on' -ex 'info line f300' \
    "$tmp/gdb/many") >"$tmp/out/gdb" 2>&1
grep -Eq '^Line [0-9]+ of "many.c"' "$tmp/out/gdb" &&
    cmp -s "$DEBUGINFOD_CACHE_PATH/$MID/debuginfo" "$tmp/out/direct"
verdict $? "gdb: the line of f300, the debuginfo byte for byte" \
    "$(head -n 5 "$tmp/out/gdb")"
check "... streamed zstd-coded" eval \
    "metric_cmp symhub_fetch_streamed_total -eq 1 &&
    grep -q 'GET /buildid/$MID/debuginfo 200 [0-9]* upstream up zstd' '$tmp/real.log'"
client_env
f=$(timeout 60 debuginfod-find executable "$MID" 2>"$tmp/out/err")
expect_file "debuginfod-find: the executable, byte for byte" "$f" \
    "$tmp/up/many"
check "... streamed zstd-coded" eval \
    "metric_cmp symhub_fetch_streamed_total -eq 2 &&
    grep -q 'GET /buildid/$MID/executable 200 [0-9]* upstream up zstd' '$tmp/real.log'"
stop_check "the hub stops"
hub -d "$tmp/st-llvm" -u "$DURL name=up" --log-file "$tmp/llvm.log"
client_env
f=$(timeout 60 llvm-debuginfod-find-19 --debuginfo "$MID" 2>"$tmp/out/err")
expect_file "llvm-debuginfod-find-19: the debuginfo, byte for byte" "$f" \
    "$tmp/out/direct"
check "... streamed zstd-coded" eval \
    "metric_cmp symhub_fetch_streamed_total -eq 1 &&
    grep -q 'GET /buildid/$MID/debuginfo 200 [0-9]* upstream up zstd' '$tmp/llvm.log'"
stop_check "the hub stops"

section "a hub behind another (accept-encoding=zstd) streams its zstd on"
# The central hub's copies at level 19: not what the regional would make.
hub -d "$tmp/st-central" -F "$tmp/up" --compress-level 19 \
    --compress-best-level 0 --log-file "$tmp/central.log"
C=$URL
wait_until 60 eval "[ \"\$(http_code $C/buildid/$MID/debuginfo)\" = 200 ]" ||
    { echo "# the central hub did not index many"; exit 99; }
hub -d "$tmp/st-regional" -u "$C name=central accept-encoding=zstd" \
    --compress-best-level 0 --log-file "$tmp/regional.log"
client_env
(cd "$tmp/gdb" && timeout 60 gdb -nx -batch \
    -iex 'set debuginfod enabled on' -ex 'info line f300' \
    "$tmp/gdb/many") >"$tmp/out/gdb2" 2>&1
grep -Eq '^Line [0-9]+ of "many.c"' "$tmp/out/gdb2" &&
    cmp -s "$DEBUGINFOD_CACHE_PATH/$MID/debuginfo" "$tmp/out/direct"
verdict $? "gdb through both hubs: the debuginfo byte for byte" \
    "$(head -n 5 "$tmp/out/gdb2")"
cz=$(grep "GET /buildid/$MID/debuginfo 200 [0-9]* hit zstd" "$tmp/central.log" |
    awk '{ print $7 }')
check "... the central hub sent zstd, the regional streamed it on as it came ($cz bytes)" eval \
    "[ -n '$cz' ] && metric_cmp symhub_fetch_streams_total -eq 1 &&
    grep -q 'GET /buildid/$MID/debuginfo 200 $cz upstream central zstd' '$tmp/regional.log'"
stop_check "the regional hub stops"

section "another hub's zstd: forwarded byte for byte, its end held back"
# A fake hub (badupstream.py zstd) sends many's debuginfo, and the big
# executable one byte short of what its X-DEBUGINFOD-SIZE says.
mkdir -p "$tmp/z" || exit 99
zstd -q -19 -c "$tmp/out/direct" >"$tmp/z/$MID" &&
    file_size "$tmp/out/direct" >"$tmp/z/$MID.size" &&
    zstd -q -19 -c "$BIG" >"$tmp/z/$ID" && echo $((SIZE + 1)) >"$tmp/z/$ID.size" ||
    exit 99
start_badupstream fake zstd "$tmp/z" "$tmp/fake.log" ||
    fail "badupstream.py zstd starts"
hub -d "$tmp/st-fwd" -u "$BURL name=fake accept-encoding=zstd" \
    --log-file "$tmp/fwd.log"
code=$(http "/buildid/$MID/debuginfo" "$tmp/out/fwd" "$tmp/out/fwd.hdr" \
    -H 'Accept-Encoding: zstd')
[ "$code" = 200 ] && cmp -s "$tmp/out/fwd" "$tmp/z/$MID"
verdict $? "zstd raw: the upstream's frame, byte for byte" \
    "status $code, $(bytes "$tmp/out/fwd") bytes for $(file_size "$tmp/z/$MID")"
check "... streamed" metric_cmp symhub_fetch_streamed_total -eq 1
raw "$tmp/out/fshort.z"
wait_exit "$CPID" 30
[ "$exit_status" != 0 ] && ! zstd -q -t "$tmp/out/fshort.z" 2>/dev/null
verdict $? "one byte short: curl raw is cut off, its bytes are no whole frame" \
    "curl exit $exit_status, $(bytes "$tmp/out/fshort.z") of $(file_size "$tmp/z/$ID") bytes"
client_env
DEBUGINFOD_RETRY_LIMIT=0 timeout 60 debuginfod-find executable "$ID" \
    >"$tmp/out/fshort.df" 2>&1
[ $? != 0 ] && [ -z "$(find "$DEBUGINFOD_CACHE_PATH" -type f -path "*$ID*")" ]
verdict $? "... debuginfod-find fails, its cache keeps nothing" \
    "$(head -n 2 "$tmp/out/fshort.df")"
check "... streamed, not stored" eval \
    "metric_cmp symhub_fetch_streamed_total -ge 2 &&
    ! curl -s --max-time 10 -o /dev/null '$URL/buildid/$ID/executable'"
stop_check "the hub stops"

finish
