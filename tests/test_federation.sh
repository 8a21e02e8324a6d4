#!/bin/bash
# Integration test of symhubd's federation: misses fanned out to upstream
# debuginfod servers.  The upstreams are two real elfutils debuginfod
# servers over different programs, plus misbehaving ones from
# tests/badupstream.py (hangs, resets, lies, trickles, counts requests).
# The clients are curl, debuginfod-find, libdebuginfod (dfclient) and gdb.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_federation.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy strip readelf cmp timeout awk sed ss python3 \
    debuginfod debuginfod-find gdb
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$DFCLIENT" ] || skip "$DFCLIENT not built (make check builds it)"
[ -r "$BADUPSTREAM" ] || { echo "# $BADUPSTREAM missing"; exit 99; }

t0=$(date +%s)
unset DEBUGINFOD_URLS

section 'fixtures'
# prog1 and prog2 from the same fixture files, built in different
# directories, at different optimization levels (so different build-ids),
# and prog2's hello.c has one more line (so its source bytes differ too).
# The sources stay where they were built: debuginfod serves /source from
# the files its DWARF names.
mkdir -p "$tmp"/{src1,src2,bin,up1,up2,orig,out,gdb,par} || exit 99
cp "$FIXTURES"/hello.c "$FIXTURES"/greet.c "$FIXTURES"/greet.h \
    "$tmp/src1/" || exit 99
cp "$FIXTURES"/hello.c "$FIXTURES"/greet.c "$FIXTURES"/greet.h \
    "$tmp/src2/" || exit 99
echo '/* prog2 */' >>"$tmp/src2/hello.c"
(cd "$tmp/src1" && gcc -g -O0 -o "$tmp/bin/prog1" hello.c greet.c) || exit 99
(cd "$tmp/src2" && gcc -g -O1 -o "$tmp/bin/prog2" hello.c greet.c) || exit 99
for p in prog1 prog2; do
	d=$tmp/up${p#prog}
	objcopy --only-keep-debug "$tmp/bin/$p" "$d/$p.debug" || exit 99
	strip -g -o "$d/$p.stripped" "$tmp/bin/$p" || exit 99
	cp "$d/$p.debug" "$d/$p.stripped" "$tmp/orig/" || exit 99
	extract_section "$d/$p.debug" .debug_info "$tmp/orig/$p.debug_info" ||
	    exit 99
	extract_section "$d/$p.debug" .debug_line "$tmp/orig/$p.debug_line" ||
	    exit 99
done
DBG1=$tmp/orig/prog1.debug
EXE1=$tmp/orig/prog1.stripped
DBG2=$tmp/orig/prog2.debug
EXE2=$tmp/orig/prog2.stripped
SRC1=$tmp/src1/hello.c
SRC2=$tmp/src2/hello.c
ID1=$(buildid "$tmp/bin/prog1")
ID2=$(buildid "$tmp/bin/prog2")
if [ -z "$ID1" ] || [ -z "$ID2" ] || [ "$ID1" = "$ID2" ] ||
    [ "$ID1" != "$(buildid "$EXE1")" ] || [ "$ID2" != "$(buildid "$DBG2")" ]
then
	echo "# fixtures: missing or equal build-ids ($ID1, $ID2)"
	exit 99
fi
cmp -s "$SRC1" "$SRC2" && { echo "# fixtures: same hello.c"; exit 99; }

# next_unknown: set U to a new id nobody has.  Each check takes its own,
# so that no entry left by an earlier check can answer for it.
n_unknown=0
next_unknown() {
	n_unknown=$((n_unknown + 1))
	U=$(printf 'feedc0de%032x' "$n_unknown")
}

# ---- helpers -----------------------------------------------------------

# get URL OUT [CURL-ARGS...]: one GET; body to OUT, headers to OUT.hdr.
# Sets code (000: no HTTP answer), cexit (curl's exit status: 56 for a
# connection reset) and secs (the time it took).
get() {
	local u=$1 out=$2 w
	shift 2
	rm -f "$out" "$out.hdr"
	w=$(curl -s --path-as-is --max-time 15 -o "$out" -D "$out.hdr" \
	    -w '%{http_code} %{time_total}' "$@" "$u")
	cexit=$?
	read -r code secs <<<"$w"
}

# less A B: is the number A smaller than B?
less() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }'
}

# expect_url DESC URL EXPECTED-FILE [CURL-ARGS...]: 200 with those bytes.
expect_url() {
	local d=$1 u=$2 exp=$3
	shift 3
	get "$u" "$tmp/out/body" "$@"
	if [ "$code" = 200 ] && cmp -s "$tmp/out/body" "$exp"; then
		pass "$d"
	elif [ "$code" = 200 ]; then
		fail "$d" "GET $u: 200, but not the bytes of $exp"
	else
		fail "$d" "GET $u: status $code (curl exit $cexit), want 200"
	fi
}

# expect_reset DESC URL MAX-SECONDS [CURL-ARGS...]: the connection is
# reset (curl exit 56), no HTTP answer, within MAX-SECONDS.  A reset is
# symhubd's answer when it knows nothing definite: libdebuginfod retries
# it, where it would cache any HTTP error (or a closed connection) as
# "not found" for 10 minutes.
expect_reset() {
	local d=$1 u=$2 max=$3
	shift 3
	get "$u" "$tmp/out/body" "$@"
	if [ "$code" = 000 ] && [ "$cexit" = 56 ] && less "$secs" "$max"; then
		pass "$d (${secs}s)"
	else
		fail "$d" "GET $u: status $code, curl exit $cexit (want 000, 56:" \
		    "connection reset) after ${secs}s (want < ${max}s)" \
		    "$(head -c 200 "$tmp/out/body" 2>/dev/null)"
	fi
}

# seen LOG ID KIND: how many requests for /buildid/ID/KIND a log shows
# (a debuginfod log, a count-server log or a symhubd access log).
seen() {
	local n
	n=$(grep -c "GET /buildid/$2/$3[[:space:]]" "$1" 2>/dev/null)
	echo "${n:-0}"
}

# access LOG ID KIND: the last access-log line of symhubd for it.
access() {
	grep "GET /buildid/$2/$3 " "$1" | tail -1
}

section 'the upstreams'
if start_debuginfod up1 "" "$tmp/up1" &&
    wait_http 30 "$DURL/buildid/$ID1/debuginfo" 200; then
	UP1=$DURL
	UP1_PID=$DPID
	pass "debuginfod up1 serves prog1"
else
	fail "debuginfod up1 serves prog1" "$(tail -n 5 "$tmp/up1.log")"
	finish
fi
if start_debuginfod up2 "" "$tmp/up2" &&
    wait_http 30 "$DURL/buildid/$ID2/debuginfo" 200; then
	UP2=$DURL
	pass "debuginfod up2 serves prog2"
else
	fail "debuginfod up2 serves prog2" "$(tail -n 5 "$tmp/up2.log")"
	finish
fi
# The fixtures are where the issue wants them: each id on one upstream.
if http_is "$UP1/buildid/$ID2/debuginfo" 404 &&
    http_is "$UP2/buildid/$ID1/debuginfo" 404 &&
    http_is "$UP1/buildid/$ID1/source$SRC1" 200 &&
    http_is "$UP2/buildid/$ID2/source$SRC2" 200; then
	pass "each upstream has only its own program, sources included"
else
	fail "each upstream has only its own program, sources included"
fi

section 'the main hub: bytes from whichever upstream has them'
hublog=$tmp/hub.log
# logged PATTERN: the hub's log has (or soon has: a line is written once
# the answer is sent) a line matching PATTERN.
logged() {
	wait_until 10 grep -q "$1" "$hublog"
}
hub -d "$tmp/store" -u "$UP1 name=up1" -u "$UP2 name=up2" \
    --log-file "$hublog"
HUB_PID=$SYMHUBD_PID
HUB=$URL

# X-DEBUGINFOD-MAXSIZE smaller than the file, on a cold key: 406, which
# the client does not cache; then the same key without it: 200.
get "$HUB/buildid/$ID1/executable" "$tmp/out/b" -H "X-DEBUGINFOD-MAXSIZE: 100"
if [ "$code" = 406 ]; then
	pass "cold request with X-DEBUGINFOD-MAXSIZE: 100 -> 406"
else
	fail "cold request with X-DEBUGINFOD-MAXSIZE: 100 -> 406" \
	    "status $code (curl exit $cexit)"
fi
expect_url "then without a maximum: 200, the executable" \
    "$HUB/buildid/$ID1/executable" "$EXE1"
check "a 406 stores no negative entry" \
    metric_cmp symhub_cache_negative_entries -eq 0 "$HUB"

# Cold, through libdebuginfod: debuginfod-find first, then dfclient (its
# own fresh client cache, so it too asks symhubd).
client_env
client_file "debuginfod-find: prog1 debuginfo (cold)" "$DBG1" \
    debuginfod-find debuginfo "$ID1"
case $(access "$hublog" "$ID1" debuginfo) in
*" upstream up1 "*) pass "access log: prog1 debuginfo came from up1" ;;
*) fail "access log: prog1 debuginfo came from up1" \
    "$(access "$hublog" "$ID1" debuginfo)" ;;
esac
client_file "debuginfod-find: prog1 executable" "$EXE1" \
    debuginfod-find executable "$ID1"
client_file "debuginfod-find: prog1 source hello.c (cold)" "$SRC1" \
    debuginfod-find source "$ID1" "$SRC1"
client_env
client_file "dfclient: prog1 debuginfo" "$DBG1" "$DFCLIENT" debuginfo "$ID1"
client_file "dfclient: prog1 executable" "$EXE1" "$DFCLIENT" executable "$ID1"
f=$(timeout 30 "$DFCLIENT" source "$ID1" "$tmp/src1/greet.c" \
    2>"$tmp/out/err")
expect_file "dfclient: prog1 source greet.c (cold)" "$f" "$tmp/src1/greet.c"
# Sections, each client with nothing cached (libdebuginfod extracts a
# section itself from a debuginfo it has cached).
client_env
client_file "debuginfod-find: prog1 section .debug_line" \
    "$tmp/orig/prog1.debug_line" debuginfod-find section "$ID1" .debug_line
client_env
client_file "dfclient: prog1 section .debug_info" "$tmp/orig/prog1.debug_info" \
    "$DFCLIENT" section "$ID1" .debug_info
# libdebuginfod could have extracted the section itself from a debuginfo
# it fetched: the access log says symhubd answered /section with it.
if logged "GET /buildid/$ID1/section/.debug_info 200 " &&
    logged "GET /buildid/$ID1/section/.debug_line 200 "; then
	pass "access log: symhubd served the sections (200)"
else
	fail "access log: symhubd served the sections (200)" \
	    "$(grep "/section/" "$hublog" | tail -4)"
fi

section '200 simultaneous identical cold requests'
# Counted at the upstream that has the file, from its own /metrics and
# its own log, before and after.
m200='http_responses_transfer_bytes_count{code="200",type="debuginfo"}'
um0=$(metric "$m200" "$UP2")
ul0=$(seen "$tmp/up2.log" "$ID2" debuginfo)
ul1=$(seen "$tmp/up1.log" "$ID2" debuginfo)
pargs=()
for i in $(seq 200); do
	pargs+=(-o "$tmp/par/$i" "$HUB/buildid/$ID2/debuginfo")
done
curl -s --no-progress-meter --parallel --parallel-immediate \
    --parallel-max 200 --max-time 30 "${pargs[@]}" 2>"$tmp/out/par.err"
same=0
for i in $(seq 200); do
	cmp -s "$tmp/par/$i" "$DBG2" && same=$((same + 1))
done
if [ "$same" = 200 ]; then
	pass "200 parallel cold requests: all 200 got prog2's debuginfo"
else
	fail "200 parallel cold requests: all 200 got prog2's debuginfo" \
	    "$same of 200" "$(head -3 "$tmp/out/par.err")"
fi
um1=$(metric "$m200" "$UP2")
n=$(($(seen "$tmp/up2.log" "$ID2" debuginfo) - ul0))
if [ $((${um1:-0} - ${um0:-0})) = 1 ] && [ "$n" = 1 ]; then
	pass "200 parallel cold requests: exactly 1 reached up2"
else
	fail "200 parallel cold requests: exactly 1 reached up2" \
	    "up2 /metrics: $m200 went from $um0 to $um1; up2 log: $n requests"
fi
n=$(($(seen "$tmp/up1.log" "$ID2" debuginfo) - ul1))
if [ "$n" = 1 ]; then
	pass "200 parallel cold requests: exactly 1 reached up1 (its 404)"
else
	fail "200 parallel cold requests: exactly 1 reached up1 (its 404)" \
	    "up1 log: $n requests"
fi

# The same for ids nobody has, a few times: a miss too is fetched once,
# however many clients ask (and however they straddle the moment its
# negative entry is stored).
# burst URL N: N simultaneous GETs of URL; their statuses to $tmp/out/codes.
burst() {
	local i args=()
	for i in $(seq "$2"); do
		args+=(-o /dev/null "$1")
	done
	curl -s --no-progress-meter --parallel --parallel-immediate \
	    --parallel-max "$2" --max-time 30 -w '%{http_code}\n' \
	    "${args[@]}" >"$tmp/out/codes" 2>/dev/null
}
bad=()
for r in 1 2 3 4; do
	next_unknown
	burst "$HUB/buildid/$U/executable" 200
	n404=$(grep -cx 404 "$tmp/out/codes")
	n1=$(seen "$tmp/up1.log" "$U" executable)
	n2=$(seen "$tmp/up2.log" "$U" executable)
	[ "$n404 $n1 $n2" = "200 1 1" ] ||
	    bad+=("$U: $n404 of 200 got 404 (all: $(sort "$tmp/out/codes" |
	    uniq -c | tr -s ' \n' ' ')); up1 asked $n1 times, up2 $n2" \
	    "$(grep "$U" "$hublog" | grep -v " 404 " | head -5)" \
	    "$(grep -v "$U" "$hublog" | grep -iv " 200 \| 404 " | tail -5)")
done
if [ ${#bad[@]} = 0 ]; then
	pass "4 x 200 parallel misses: all 404, each upstream asked once per id"
else
	fail "4 x 200 parallel misses: all 404, each upstream asked once per id" \
	    "${bad[@]}"
fi

# The same through an upstream path that takes 1 s (badupstream.py delay
# in front of up2): all 200 arrive while the fetch is under way, so all
# of them wait for the one fetch.
if start_badupstream delay delay "$UP2"; then
	DELAY_PID=$BPID
	hub -d "$tmp/store-delay" -u "$BURL name=slow" --log-file "$tmp/delay.log"
	DHUB_PID=$SYMHUBD_PID
	mx='http_responses_transfer_bytes_count{code="200",type="executable"}'
	um0=$(metric "$mx" "$UP2")
	co0=$(metric symhub_fetch_coalesced_total)
	pargs=()
	for i in $(seq 200); do
		pargs+=(-o "$tmp/par/x$i" "$URL/buildid/$ID2/executable")
	done
	curl -s --no-progress-meter --parallel --parallel-immediate \
	    --parallel-max 200 --max-time 30 "${pargs[@]}" \
	    2>"$tmp/out/par.err"
	same=0
	for i in $(seq 200); do
		cmp -s "$tmp/par/x$i" "$EXE2" && same=$((same + 1))
	done
	um1=$(metric "$mx" "$UP2")
	co1=$(metric symhub_fetch_coalesced_total)
	if [ "$same" = 200 ] && [ $((${um1:-0} - ${um0:-0})) = 1 ]; then
		pass "200 parallel via a 1 s path: identical bytes, 1 upstream fetch"
	else
		fail "200 parallel via a 1 s path: identical bytes, 1 upstream fetch" \
		    "$same of 200 right; up2 $mx from $um0 to $um1"
	fi
	if [ $((${co1:-0} - ${co0:-0})) -ge 1 ]; then
		pass "symhub_fetch_coalesced_total grew by $((co1 - co0))"
	else
		fail "symhub_fetch_coalesced_total grew by >= 1" \
		    "from $co0 to $co1"
	fi
	stop_symhubd "$DHUB_PID"
	stop_symhubd "$DELAY_PID"
	URL=$HUB
	SYMHUBD_PID=$HUB_PID
else
	fail "badupstream.py delay starts" "$(cat "$tmp/delay.err")"
fi

section "warm hits carry the cold answer's headers"
xhdrs() {
	local h
	for h in Content-Length X-DEBUGINFOD-SIZE X-DEBUGINFOD-FILE \
	    Last-Modified; do
		echo "$h: $(header "$1" "$h")"
	done
}
get "$UP2/buildid/$ID2/source$SRC2" "$tmp/out/direct"
e0=$(metric symhub_cache_entries "$HUB")
get "$HUB/buildid/$ID2/source$SRC2" "$tmp/out/cold"
c1=$code
# The cold answer is sent before the store thread has indexed it.
wait_until 20 metric_cmp symhub_cache_entries -gt "${e0:-0}" "$HUB"
get "$HUB/buildid/$ID2/source$SRC2" "$tmp/out/warm"
c2=$code
if [ "$c1$c2" = 200200 ] && cmp -s "$tmp/out/cold" "$SRC2" &&
    cmp -s "$tmp/out/warm" "$SRC2"; then
	pass "prog2 source: cold and warm 200 with up2's bytes"
else
	fail "prog2 source: cold and warm 200 with up2's bytes" "status $c1, $c2"
fi
if [ "$(xhdrs "$tmp/out/cold.hdr")" = "$(xhdrs "$tmp/out/warm.hdr")" ] &&
    [ -n "$(header "$tmp/out/cold.hdr" X-DEBUGINFOD-FILE)" ]; then
	pass "warm hit: same Content-Length, X-DEBUGINFOD-SIZE, -FILE, Last-Modified"
else
	fail "warm hit: same Content-Length, X-DEBUGINFOD-SIZE, -FILE, Last-Modified" \
	    "cold:" "$(xhdrs "$tmp/out/cold.hdr")" "warm:" \
	    "$(xhdrs "$tmp/out/warm.hdr")"
fi
if [ "$(header "$tmp/out/cold.hdr" X-DEBUGINFOD-FILE)" = \
    "$(header "$tmp/out/direct.hdr" X-DEBUGINFOD-FILE)" ] &&
    [ "$(header "$tmp/out/cold.hdr" Last-Modified)" = \
    "$(header "$tmp/out/direct.hdr" Last-Modified)" ]; then
	pass "X-DEBUGINFOD-FILE and Last-Modified are the upstream's"
else
	fail "X-DEBUGINFOD-FILE and Last-Modified are the upstream's" \
	    "up2:" "$(xhdrs "$tmp/out/direct.hdr")" "symhubd:" \
	    "$(xhdrs "$tmp/out/cold.hdr")"
fi
case $(access "$hublog" "$ID2" "source$SRC2") in
*" hit "*) pass "access log: the second was a hit" ;;
*) fail "access log: the second was a hit" \
    "$(access "$hublog" "$ID2" "source$SRC2")" ;;
esac
# The same for an executable (its cold headers are kept for the restart
# below).
get "$UP2/buildid/$ID2/executable" "$tmp/out/xdirect"
get "$HUB/buildid/$ID2/executable" "$tmp/out/xcold"
get "$HUB/buildid/$ID2/executable" "$tmp/out/xwarm"
if [ "$code" = 200 ] &&
    [ "$(xhdrs "$tmp/out/xcold.hdr")" = "$(xhdrs "$tmp/out/xwarm.hdr")" ] &&
    [ "$(xhdrs "$tmp/out/xcold.hdr")" = "$(xhdrs "$tmp/out/xdirect.hdr")" ]
then
	pass "executable: cold and warm headers are up2's own"
else
	fail "executable: cold and warm headers are up2's own" \
	    "up2:" "$(xhdrs "$tmp/out/xdirect.hdr")" \
	    "cold:" "$(xhdrs "$tmp/out/xcold.hdr")" \
	    "warm:" "$(xhdrs "$tmp/out/xwarm.hdr")"
fi

# prog2 through libdebuginfod and gdb.
client_env
client_file "debuginfod-find: prog2 debuginfo" "$DBG2" \
    debuginfod-find debuginfo "$ID2"
client_file "debuginfod-find: prog2 executable" "$EXE2" \
    debuginfod-find executable "$ID2"
f=$(timeout 30 debuginfod-find source "$ID2" "$tmp/src2/greet.c" \
    2>"$tmp/out/err")
expect_file "debuginfod-find: prog2 source greet.c (cold)" "$f" \
    "$tmp/src2/greet.c"
client_env
client_file "dfclient: prog2 debuginfo" "$DBG2" "$DFCLIENT" debuginfo "$ID2"
client_file "dfclient: prog2 executable" "$EXE2" "$DFCLIENT" executable "$ID2"
client_file "dfclient: prog2 source hello.c (up2's own bytes)" "$SRC2" \
    "$DFCLIENT" source "$ID2" "$SRC2"
client_env
client_file "debuginfod-find: prog2 section .debug_info" \
    "$tmp/orig/prog2.debug_info" debuginfod-find section "$ID2" .debug_info
client_env
client_file "dfclient: prog2 section .debug_line" "$tmp/orig/prog2.debug_line" \
    "$DFCLIENT" section "$ID2" .debug_line
if logged "GET /buildid/$ID2/section/.debug_info 200 " &&
    logged "GET /buildid/$ID2/section/.debug_line 200 "; then
	pass "access log: symhubd served prog2's sections (200)"
else
	fail "access log: symhubd served prog2's sections (200)" \
	    "$(grep "/section/" "$hublog" | tail -4)"
fi
if logged "GET /buildid/$ID2/debuginfo 200 .* upstream up2 "; then
	pass "access log: prog2 debuginfo came from up2"
else
	fail "access log: prog2 debuginfo came from up2" \
	    "$(grep "/buildid/$ID2/debuginfo" "$hublog" | grep -v ' hit ' | head -3)"
fi

# gdb with the stripped binary alone; substitute-path hides the local
# sources, so they too come through symhubd.
client_env
cp "$EXE2" "$tmp/gdb/prog2"
(cd "$tmp/gdb" && timeout 60 gdb -nx -batch \
    -iex 'set debuginfod enabled on' \
    -iex "set substitute-path $tmp/src2 $tmp/nonexistent" \
    -ex 'info line square' -ex 'list main' "$tmp/gdb/prog2") \
    >"$tmp/out/gdb" 2>&1
# (At -O1 square is inlined into main: the line is named, not <square>.)
if grep -Eq '^Line [0-9]+ of "hello.c" starts at address' "$tmp/out/gdb"
then
	pass "gdb: info line square on prog2 (stripped) through symhubd"
else
	fail "gdb: info line square on prog2 (stripped) through symhubd" \
	    "$(head -20 "$tmp/out/gdb")"
fi
f=$(find "$DEBUGINFOD_CACHE_PATH/$ID2" -name 'source*hello.c' 2>/dev/null |
    head -1)
if grep -q 'square(argc + 1)' "$tmp/out/gdb" &&
    cmp -s "$DEBUGINFOD_CACHE_PATH/$ID2/debuginfo" "$DBG2" &&
    [ -n "$f" ] && cmp -s "$f" "$SRC2"; then
	pass "gdb: debuginfo and source came through symhubd"
else
	fail "gdb: debuginfo and source came through symhubd" \
	    "$(find "$DEBUGINFOD_CACHE_PATH" | head)"
fi

# A definite miss (both upstreams say 404), kept for the restart below.
next_unknown
UNK_NEG=$U
get "$HUB/buildid/$UNK_NEG/debuginfo" "$tmp/out/b"
c1=$code
n1=$(seen "$tmp/up1.log" "$UNK_NEG" debuginfo)
get "$HUB/buildid/$UNK_NEG/debuginfo" "$tmp/out/b"
c2=$code
if [ "$c1$c2" = 404404 ] &&
    [ "$(seen "$tmp/up1.log" "$UNK_NEG" debuginfo)" = 1 ] &&
    [ "$(seen "$tmp/up2.log" "$UNK_NEG" debuginfo)" = 1 ] &&
    [ "$n1" = 1 ] && access "$hublog" "$UNK_NEG" debuginfo | grep -q negative
then
	pass "definite miss: 404, then 404 from the negative entry (1 request each upstream)"
else
	fail "definite miss: 404, then 404 from the negative entry" \
	    "status $c1, $c2; up1 saw $(seen "$tmp/up1.log" "$UNK_NEG" debuginfo)," \
	    "up2 saw $(seen "$tmp/up2.log" "$UNK_NEG" debuginfo)" \
	    "$(access "$hublog" "$UNK_NEG" debuginfo)"
fi

section 'restart: the store survives, the upstream is down'
stop_check "main hub: SIGTERM, exit 0"
DEAD=$(free_port)
hub -d "$tmp/store" -u "http://127.0.0.1:$DEAD name=dead" --log-file "$hublog"
expect_url "after restart, upstream down: prog1 debuginfo" \
    "$URL/buildid/$ID1/debuginfo" "$DBG1"
expect_url "after restart, upstream down: prog1 executable" \
    "$URL/buildid/$ID1/executable" "$EXE1"
expect_url "after restart, upstream down: prog1 section .debug_info" \
    "$URL/buildid/$ID1/section/.debug_info" "$tmp/orig/prog1.debug_info"
expect_url "after restart, upstream down: prog1 source" \
    "$URL/buildid/$ID1/source$SRC1" "$SRC1"
expect_url "after restart, upstream down: prog2 debuginfo" \
    "$URL/buildid/$ID2/debuginfo" "$DBG2"
get "$URL/buildid/$ID2/executable" "$tmp/out/xre"
if [ "$code" = 200 ] &&
    [ "$(xhdrs "$tmp/out/xcold.hdr")" = "$(xhdrs "$tmp/out/xre.hdr")" ]; then
	pass "after restart: prog2 executable with the cold answer's headers"
else
	fail "after restart: prog2 executable with the cold answer's headers" \
	    "status $code" "$(xhdrs "$tmp/out/xcold.hdr")" \
	    "$(xhdrs "$tmp/out/xre.hdr")"
fi
get "$URL/buildid/$UNK_NEG/debuginfo" "$tmp/out/b"
if [ "$code" = 404 ] && metric_cmp \
    'symhub_upstream_requests_total{upstream="dead",outcome="transport"}' \
    -eq 0; then
	pass "after restart: the negative entry answers 404, nobody asked"
else
	fail "after restart: the negative entry answers 404, nobody asked" \
	    "status $code (curl exit $cexit)" \
	    "$(metrics_text | grep 'upstream="dead"' | grep -v ' 0$')"
fi
# The control: a key with no entry does reach the dead upstream.
next_unknown
expect_reset "after restart: an unknown key, upstream down -> reset" \
    "$URL/buildid/$U/debuginfo" 2
check "... and that one did try the dead upstream" metric_cmp \
    'symhub_upstream_requests_total{upstream="dead",outcome="transport"}' \
    -ge 1
client_env
client_file "after restart: debuginfod-find prog2 executable" "$EXE2" \
    debuginfod-find executable "$ID2"
stop_check "restarted hub: SIGTERM, exit 0"

section 'a hanging upstream'
if ! start_badupstream hang hang; then
	fail "badupstream.py hang starts" "$(cat "$tmp/hang.err")"
	finish
fi
HANG=$BURL
hub -d "$tmp/store-hang" -u "$HANG name=hang" -u "$UP1 name=up1" \
    --upstream-first-byte-timeout 2 --breaker-failures 2 \
    --breaker-cooldown 60 --log-file "$tmp/hang.log"
get "$URL/buildid/$ID1/debuginfo" "$tmp/out/b"
if [ "$code" = 200 ] && cmp -s "$tmp/out/b" "$DBG1" && less "$secs" 1; then
	pass "hang + up1: up1's answer served at once (${secs}s)"
else
	fail "hang + up1: up1's answer served at once" \
	    "status $code after ${secs}s (want 200 with prog1.debug, < 1 s)"
fi
neg0=$(metric symhub_cache_negative_entries)
# Nobody has it: up1 says 404, hang says nothing.  Not a definite miss,
# so no 404 (libdebuginfod would cache it for 10 min) but a reset, once
# the first-byte timeout (2 s) has passed.
next_unknown
expect_reset "hang + up1, unknown id: reset after the first-byte timeout" \
    "$URL/buildid/$U/debuginfo" 3.5
check "... and no negative entry stored" \
    metric_cmp symhub_cache_negative_entries -eq "${neg0:-0}"
check "... breaker still closed after 1 failure" \
    metric_cmp 'symhub_upstream_breaker_state{upstream="hang"}' -eq 0
next_unknown
expect_reset "hang + up1, another unknown id: reset again" \
    "$URL/buildid/$U/debuginfo" 3.5
if wait_metric 'symhub_upstream_breaker_state{upstream="hang"}' -eq 1 5; then
	pass "after 2 failures the breaker of hang is open"
else
	fail "after 2 failures the breaker of hang is open" \
	    "$(metrics_text | grep 'upstream="hang"' | grep -v bucket)"
fi
# Breaker open: hang is skipped, up1 says 404.  Still no definite miss
# (job_start() marks a job with a skipped upstream transient, as the
# skipped one may have the file): a reset, but at once.
next_unknown
expect_reset "breaker open, unknown id: reset within 100 ms" \
    "$URL/buildid/$U/debuginfo" 0.1
check "... and no negative entry stored" \
    metric_cmp symhub_cache_negative_entries -eq "${neg0:-0}"
get "$URL/buildid/$ID1/executable" "$tmp/out/b"
if [ "$code" = 200 ] && cmp -s "$tmp/out/b" "$EXE1" && less "$secs" 0.5; then
	pass "breaker open: up1's file served at once (${secs}s)"
else
	fail "breaker open: up1's file served at once" \
	    "status $code after ${secs}s"
fi
stop_check "hang hub: SIGTERM, exit 0"

section 'a resetting upstream'
if start_badupstream reset reset; then
	hub -d "$tmp/store-reset" -u "$BURL name=reset" -u "$UP1 name=up1"
	expect_url "reset + up1: prog1 debuginfo" "$URL/buildid/$ID1/debuginfo" \
	    "$DBG1"
	expect_url "reset + up1: prog1 executable" \
	    "$URL/buildid/$ID1/executable" "$EXE1"
	expect_url "reset + up1: prog1 source" "$URL/buildid/$ID1/source$SRC1" \
	    "$SRC1"
	next_unknown
	expect_reset "reset + up1, unknown id: reset" \
	    "$URL/buildid/$U/debuginfo" 2
	check "reset upstream counted as transport failures" metric_cmp \
	    'symhub_upstream_requests_total{upstream="reset",outcome="transport"}' \
	    -ge 1
	stop_check "reset hub: SIGTERM, exit 0"
	stop_symhubd "$BPID"
else
	fail "badupstream.py reset starts" "$(cat "$tmp/reset.err")"
fi

section 'a lying upstream'
# It answers every build-id with prog2's debuginfo.
if ! start_badupstream liar wrongfile "$DBG2"; then
	fail "badupstream.py wrongfile starts" "$(cat "$tmp/liar.err")"
	finish
fi
LIAR=$BURL
LIAR_PID=$BPID
hub -d "$tmp/store-liar" -u "$LIAR name=liar" --log-file "$tmp/liar.log"
for k in debuginfo executable; do
	get "$URL/buildid/$ID1/$k" "$tmp/out/b"
	if [ "$code" = 200 ]; then
		fail "liar alone: prog1 $k is not served" \
		    "200 with $(cmp -s "$tmp/out/b" "$DBG2" && echo "prog2's bytes" ||
		    echo "some bytes")"
	elif [ "$code" = 404 ] || [ "$cexit" = 56 ]; then
		pass "liar alone: prog1 $k is not served (status $code, curl $cexit)"
	else
		fail "liar alone: prog1 $k is not served" \
		    "status $code, curl exit $cexit: neither 404 nor a reset"
	fi
done
client_env
if f=$(timeout 30 debuginfod-find debuginfo "$ID1" 2>"$tmp/out/err"); then
	fail "liar alone: debuginfod-find finds nothing" "it found $f"
else
	pass "liar alone: debuginfod-find finds nothing"
fi
check "symhub_upstream_requests_total{outcome=\"wrong_buildid\"} >= 1" \
    metric_cmp 'symhub_upstream_requests_total{upstream="liar",outcome="wrong_buildid"}' -ge 1
check "liar alone: nothing cached (no entry, no negative entry)" \
    eval 'metric_cmp symhub_cache_entries -eq 0 &&
    metric_cmp symhub_cache_negative_entries -eq 0'
stop_check "liar hub: SIGTERM, exit 0"
# The same store, an honest upstream: the file must come from up1.
u0=$(seen "$tmp/up1.log" "$ID1" debuginfo)
hub -d "$tmp/store-liar" -u "$UP1 name=up1" --log-file "$tmp/liar.log"
expect_url "then up1 on the same store: prog1 debuginfo" \
    "$URL/buildid/$ID1/debuginfo" "$DBG1"
if [ "$(seen "$tmp/up1.log" "$ID1" debuginfo)" = $((u0 + 1)) ]; then
	pass "... fetched from up1: the liar's answer was never stored"
else
	fail "... fetched from up1: the liar's answer was never stored" \
	    "up1 saw $(($(seen "$tmp/up1.log" "$ID1" debuginfo) - u0)) requests"
fi
stop_symhubd
# Liar and up1 together, a few times on fresh stores: whoever wins the
# race, the client gets prog1's own bytes.
bad=()
for r in 1 2 3; do
	hub -d "$tmp/store-liar$r" -u "$LIAR name=liar" -u "$UP1 name=up1"
	for k in debuginfo executable; do
		[ "$k" = debuginfo ] && want=$DBG1 || want=$EXE1
		get "$URL/buildid/$ID1/$k" "$tmp/out/b"
		if [ "$code" != 200 ] || ! cmp -s "$tmp/out/b" "$want"; then
			bad+=("round $r $k: status $code, curl $cexit$(
			    cmp -s "$tmp/out/b" "$DBG2" && echo ", prog2's bytes")")
		fi
	done
	stop_symhubd
done
if [ ${#bad[@]} = 0 ]; then
	pass "liar + up1, 3 rounds x 2 kinds: always prog1's own bytes"
else
	fail "liar + up1: always prog1's own bytes" "${bad[@]}"
fi
# Now make sure the liar wins the race: up1 behind a 1 s delay.  Its
# attempt is cancelled when the liar's 200 starts, the liar's file is
# rejected, and symhubd must ask up1 again.
SLOW1=
if start_badupstream delay1 delay "$UP1"; then
	SLOW1=$BURL
	hub -d "$tmp/store-liar-slow" -u "$LIAR name=liar" \
	    -u "$SLOW1 name=slowup1"
	get "$URL/buildid/$ID1/debuginfo" "$tmp/out/b"
	if [ "$code" = 200 ] && cmp -s "$tmp/out/b" "$DBG1" && metric_cmp \
	    'symhub_upstream_requests_total{upstream="liar",outcome="wrong_buildid"}' \
	    -ge 1; then
		pass "liar wins the race, is rejected, up1 is asked again: prog1's bytes (${secs}s)"
	else
		fail "liar wins the race, is rejected, up1 is asked again" \
		    "status $code, curl $cexit$(cmp -s "$tmp/out/b" "$DBG2" &&
		    echo ", prog2's bytes")" \
		    "$(metrics_text | grep 'upstream="liar",outcome="wrong')"
	fi
	stop_symhubd
else
	fail "badupstream.py delay (up1) starts" "$(cat "$tmp/delay1.err")"
fi
stop_symhubd "$LIAR_PID"

section 'a trickling upstream'
if start_badupstream trickle trickle "$DBG1"; then
	TRICKLE=$BURL
	hub -d "$tmp/store-trickle" -u "$TRICKLE name=slow timeout=2" \
	    -u "$UP1 name=up1"
	get "$URL/buildid/$ID1/debuginfo" "$tmp/out/b"
	if [ "$code" = 200 ] && cmp -s "$tmp/out/b" "$DBG1" && less "$secs" 4
	then
		pass "trickle (timeout=2) + up1: up1's bytes (${secs}s)"
	else
		fail "trickle (timeout=2) + up1: up1's bytes" \
		    "status $code, curl $cexit, after ${secs}s"
	fi
	stop_symhubd
	# The trickler surely first: up1 behind the 1 s delay.  It wins,
	# times out after 2 s, and up1 must be asked again.
	if [ -n "$SLOW1" ]; then
		hub -d "$tmp/store-trickle1" -u "$TRICKLE name=slow timeout=2" \
		    -u "$SLOW1 name=slowup1"
		get "$URL/buildid/$ID1/debuginfo" "$tmp/out/b"
		if [ "$code" = 200 ] && cmp -s "$tmp/out/b" "$DBG1" &&
		    less "$secs" 5 && metric_cmp \
		    'symhub_upstream_requests_total{upstream="slow",outcome="timeout"}' \
		    -ge 1; then
			pass "trickle wins, times out, up1 asked again: up1's bytes (${secs}s)"
		else
			fail "trickle wins, times out, up1 asked again: up1's bytes" \
			    "status $code, curl $cexit, after ${secs}s" \
			    "$(metrics_text | grep 'upstream="slow",outcome="timeout"')"
		fi
		stop_symhubd
	fi
	hub -d "$tmp/store-trickle2" -u "$TRICKLE name=slow timeout=2"
	expect_reset "trickle alone (timeout=2): reset within 3.5 s" \
	    "$URL/buildid/$ID1/debuginfo" 3.5
	if less 1.5 "$secs"; then
		pass "... after the transfer timeout, not before (${secs}s)"
	else
		fail "... after the transfer timeout, not before" "${secs}s"
	fi
	check "... counted as a timeout" metric_cmp \
	    'symhub_upstream_requests_total{upstream="slow",outcome="timeout"}' \
	    -ge 1
	check "... nothing cached" metric_cmp symhub_cache_entries -eq 0
	stop_symhubd
else
	fail "badupstream.py trickle starts" "$(cat "$tmp/trickle.err")"
fi

section 'negative cache: TTLs, and no poisoning after a transient failure'
clog=$tmp/count.requests
if ! start_badupstream count count "$clog"; then
	fail "badupstream.py count starts" "$(cat "$tmp/count.err")"
	finish
fi
COUNT=$BURL
: >"$clog"
hub -d "$tmp/store-neg" -u "$COUNT name=count" --negative-ttl 2,4 \
    --log-file "$tmp/neg.log"
next_unknown
get "$URL/buildid/$U/debuginfo" "$tmp/out/b"
c1=$code
tm1=$(date +%s.%N)
get "$URL/buildid/$U/debuginfo" "$tmp/out/b"
if [ "$c1$code" = 404404 ] && [ "$(seen "$clog" "$U" debuginfo)" = 1 ]; then
	pass "negative entry: a repeated miss does not reach the upstream"
else
	fail "negative entry: a repeated miss does not reach the upstream" \
	    "status $c1, $code; the upstream saw $(seen "$clog" "$U" debuginfo)"
fi
# Ask every 0.1 s until the upstream is asked again: that is when the
# entry expired.  TTLs are whole seconds: 2 means 1 to 2 s from now.
# asked_again N: one more request; has the upstream seen N by now?
asked_again() {
	get "$URL/buildid/$U/debuginfo" "$tmp/out/b"
	[ "$(seen "$clog" "$U" debuginfo)" -ge "$1" ] && return 0
	sleep 0.1
	return 1
}
if wait_until 8 asked_again 2; then
	tm2=$(date +%s.%N)
	e1=$(awk -v a="$tm1" -v b="$tm2" 'BEGIN { printf "%.1f", b - a }')
	if less 0.9 "$e1" && less "$e1" 2.6; then
		pass "first TTL (2 s): the upstream is asked again after ${e1}s"
	else
		fail "first TTL (2 s): the upstream is asked again after 1-2 s" \
		    "after ${e1}s"
	fi
	if wait_until 10 asked_again 3; then
		e2=$(awk -v a="$tm2" -v b="$(date +%s.%N)" \
		    'BEGIN { printf "%.1f", b - a }')
		# 4 s means 3 to 4 s; the first TTL would have ended by 2.
		if less 2.7 "$e2" && less "$e2" 4.8; then
			pass "second TTL (4 s) is longer: asked again after ${e2}s"
		else
			fail "second TTL (4 s) is longer: asked again after 3-4 s" \
			    "after ${e2}s"
		fi
	else
		fail "second TTL (4 s): the upstream is asked again" \
		    "$(seen "$clog" "$U" debuginfo) requests seen"
	fi
else
	fail "first TTL (2 s): the upstream is asked again" \
	    "$(seen "$clog" "$U" debuginfo) requests seen"
fi
stop_symhubd

# A transient failure (nothing listens on the upstream's port yet), then
# the upstream comes up: the same client, with the same cache, succeeds at
# once.
LATE=$(free_port)
hub -d "$tmp/store-late" -u "http://127.0.0.1:$LATE name=late" \
    --breaker-failures 5 --log-file "$tmp/late-hub.log"
client_env
if f=$(timeout 30 debuginfod-find debuginfo "$ID1" 2>"$tmp/out/err"); then
	fail "upstream down: debuginfod-find fails" "it found $f"
else
	pass "upstream down: debuginfod-find fails"
fi
if [ -s "$DEBUGINFOD_CACHE_PATH/$ID1/debuginfo" ] ||
    [ ! -e "$DEBUGINFOD_CACHE_PATH/$ID1/debuginfo" ]; then
	pass "... and its cache holds no 'not found' marker"
else
	fail "... and its cache holds no 'not found' marker" \
	    "$(ls -la "$DEBUGINFOD_CACHE_PATH/$ID1/")"
fi
if start_debuginfod late "$LATE" "$tmp/up1" &&
    wait_http 30 "$DURL/buildid/$ID1/debuginfo" 200; then
	s0=$(date +%s.%N)
	f=$(timeout 10 debuginfod-find debuginfo "$ID1" 2>"$tmp/out/err")
	e=$(awk -v a="$s0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
	if [ -n "$f" ] && cmp -s "$f" "$DBG1" && less "$e" 3; then
		pass "upstream up: the same debuginfod-find succeeds at once (${e}s)"
	else
		fail "upstream up: the same debuginfod-find succeeds at once" \
		    "got '${f:-(no path)}' after ${e}s" "$(tail -3 "$tmp/out/err")"
	fi
	check "... and symhubd stored no negative entry" \
	    metric_cmp symhub_cache_negative_entries -eq 0
	stop_symhubd "$DPID"
else
	fail "debuginfod starts on the late port $LATE" \
	    "$(tail -n 5 "$tmp/late.log")"
fi
stop_symhubd

section 'federation hygiene, seen by the count server'
printf '# credentials for this upstream only\nAuthorization: Bearer upstream-secret\n' \
    >"$tmp/auth.headers"
hub -d "$tmp/store-hyg" -u "$COUNT name=count header-file=$tmp/auth.headers"
next_unknown
get "$URL/buildid/$U/debuginfo" "$tmp/out/b" -A "fedtest-agent/1.0" \
    -H "Authorization: Bearer client-secret" -H "X-DEBUGINFOD-MAXSIZE: 123456"
line=$(grep "^GET /buildid/$U/debuginfo" "$clog" | head -1)
# upheader NAME: the value the upstream received ("" when absent).
upheader() {
	printf '%s\n' "$line" | tr '\t' '\n' |
	    awk -v n="$(echo "$1" | tr '[:upper:]' '[:lower:]')" '{
	    i = index($0, ":")
	    if (i && tolower(substr($0, 1, i - 1)) == n) {
	        print substr($0, i + 2); exit } }'
}
if [ "$code" = 404 ] && [ -n "$line" ]; then
	pass "hygiene: the request reached the count server (404)"
else
	fail "hygiene: the request reached the count server (404)" \
	    "status $code; log: $(tail -2 "$clog")"
fi
v=$(upheader User-Agent)
# With this hub's mark, which survives a hop through elfutils' debuginfod.
check "hygiene: the client's User-Agent is forwarded, marked ($v)" \
    eval "[[ '$v' =~ ^fedtest-agent/1.0\ symhub-via/[0-9a-f]{32}\$ ]]"
v=$(upheader X-Forwarded-For)
check "hygiene: X-Forwarded-For ends with the client, 127.0.0.1 ($v)" \
    eval '[[ "$v" == *127.0.0.1 ]]'
v=$(upheader Authorization)
check "hygiene: header-file Authorization sent, the client's not ($v)" \
    eval '[ "$v" = "Bearer upstream-secret" ] &&
    ! printf "%s" "$line" | grep -q client-secret'
v=$(upheader X-DEBUGINFOD-MAXSIZE)
check "hygiene: X-DEBUGINFOD-MAXSIZE forwarded ($v)" test "$v" = 123456
next_unknown
get "$URL/buildid/$U/debuginfo" "$tmp/out/b" -H "X-Forwarded-For: 1.2.3.4"
line=$(grep "^GET /buildid/$U/debuginfo" "$clog" | head -1)
v=$(upheader X-Forwarded-For)
check "hygiene: X-Forwarded-For 1.2.3.4 becomes '1.2.3.4, 127.0.0.1' ($v)" \
    test "$v" = "1.2.3.4, 127.0.0.1"
v=$(upheader Authorization)
check "hygiene: no client Authorization -> header-file's still sent" \
    test "$v" = "Bearer upstream-secret"
# The hop limit (default 8): 8 addresses already, 404 without asking.
next_unknown
get "$URL/buildid/$U/debuginfo" "$tmp/out/b" \
    -H "X-Forwarded-For: 10.0.0.1, 10.0.0.2, 10.0.0.3, 10.0.0.4, 10.0.0.5, 10.0.0.6, 10.0.0.7, 10.0.0.8"
if [ "$code" = 404 ] && [ "$(seen "$clog" "$U" debuginfo)" = 0 ]; then
	pass "hop limit: 8 forwarded hops -> 404, upstream not asked"
else
	fail "hop limit: 8 forwarded hops -> 404, upstream not asked" \
	    "status $code; upstream saw $(seen "$clog" "$U" debuginfo)"
fi
stop_symhubd

section 'two hubs federating to each other'
PA=$(free_port)
PB=$(free_port)
while [ "$PB" = "$PA" ]; do PB=$(free_port); done
if start_symhubd_at "$PA" -d "$tmp/store-a" -u "http://127.0.0.1:$PB name=b" \
    --log-file "$tmp/a.log"; then
	A_PID=$SYMHUBD_PID
	if start_symhubd_at "$PB" -d "$tmp/store-b" \
	    -u "http://127.0.0.1:$PA name=a" --log-file "$tmp/b.log"; then
		B_PID=$SYMHUBD_PID
		next_unknown
		get "http://127.0.0.1:$PA/buildid/$U/debuginfo" "$tmp/out/b"
		na=$(seen "$tmp/a.log" "$U" debuginfo)
		nb=$(seen "$tmp/b.log" "$U" debuginfo)
		if { [ "$code" = 404 ] || [ "$cexit" = 56 ]; } &&
		    less "$secs" 2; then
			pass "A <-> B: a miss ends quickly (status $code, ${secs}s)"
		else
			fail "A <-> B: a miss ends quickly" \
			    "status $code, curl $cexit, ${secs}s"
		fi
		if [ "$nb" -ge 1 ] && [ "$na" -lt 10 ] && [ "$nb" -lt 10 ]; then
			pass "A <-> B: few requests ($na at A, $nb at B)"
		else
			fail "A <-> B: few requests" "$na at A, $nb at B"
		fi
		next_unknown
		get "http://127.0.0.1:$PB/buildid/$U/executable" "$tmp/out/b"
		if { [ "$code" = 404 ] || [ "$cexit" = 56 ]; } &&
		    less "$secs" 2; then
			pass "B <-> A: a miss ends quickly (status $code, ${secs}s)"
		else
			fail "B <-> A: a miss ends quickly" \
			    "status $code, curl $cexit, ${secs}s"
		fi
		stop_symhubd "$B_PID"
	else
		fail "hub B starts on port $PB" "$(tail -n 3 "$tmp/symhubd.out")"
	fi
	stop_symhubd "$A_PID"
else
	fail "hub A starts on port $PA" "$(tail -n 3 "$tmp/symhubd.out")"
fi

section "a loop through elfutils' debuginfod, which drops X-Symhub-Via"
# A asks E, and E (federating to DEBUGINFOD_URLS) asks A.  elfutils passes
# User-Agent on, so A knows its own request when it comes back.
PA=$(free_port)
mkdir -p "$tmp/e-loop"
if DEBUGINFOD_CACHE_PATH=$tmp/e-loop-cache \
    DEBUGINFOD_FED=http://127.0.0.1:$PA start_debuginfod e-loop "" \
    "$tmp/e-loop"; then
	E_PID=$DPID
	if start_symhubd_at "$PA" -d "$tmp/store-loop" \
	    -u "$DURL name=elfutils" --log-file "$tmp/loop.log"; then
		A_PID=$SYMHUBD_PID
		next_unknown
		get "$URL/buildid/$U/debuginfo" "$tmp/out/loop"
		check "A -> elfutils -> A: 404 at once, no reset (${secs}s)" \
		    [ "$code" = 404 ]
		# Logged once answered, maybe after curl returned.
		check "A knew its own request: answered as a loop" \
		    wait_until 20 grep -q \
		    "GET /buildid/$U/debuginfo 404 .* loop " "$tmp/loop.log"
		check "the upstream said not found" metric_cmp \
		    'symhub_upstream_requests_total{upstream="elfutils",outcome="notfound"}' \
		    -eq 1
		check "no time-out counted against the upstream" metric_cmp \
		    'symhub_upstream_requests_total{upstream="elfutils",outcome="timeout"}' \
		    -eq 0
		next_unknown
		t=$(date +%s%N)
		DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$tmp/dfc-loop \
		    debuginfod-find debuginfo "$U" >"$tmp/out/loop.df" 2>&1
		st=$?
		t=$((($(date +%s%N) - t) / 1000000))
		# Its request and the loop's, logged once answered.
		wait_until 20 eval "[ \"\$(seen '$tmp/loop.log' '$U' \
		    debuginfo)\" -ge 2 ]"
		n=$(seen "$tmp/loop.log" "$U" debuginfo)
		check "debuginfod-find through the loop: not found, once (${t} ms, $n requests at A)" \
		    eval "[ $st != 0 ] && [ $n = 2 ]"
		stop_symhubd "$A_PID"
	else
		fail "hub A starts on port $PA" "$(tail -n 3 "$tmp/symhubd.out")"
	fi
	kill "$E_PID"
	wait_exit "$E_PID" 10
else
	fail "elfutils' debuginfod starts, federating to A" \
	    "$(tail -n 3 "$tmp/e-loop.log")"
fi

section "an upload without DWARF does not hide an upstream's copy"
# A debuginfo with only a symbol table is stored; the first request for
# it asks the upstreams once anyway, and a better copy replaces it.
FTOKENS=$tmp/fed.tokens
if FTOK=$(new_token fed upload "$FTOKENS"); then
	hub -d "$tmp/store13" -u "$UP1" --tokens "$FTOKENS" \
	    --log-file "$tmp/h13.log"
	strip -g -o "$tmp/out/p1.symtab" "$tmp/bin/prog1" &&
	    strip -g -o "$tmp/out/p2.symtab" "$tmp/bin/prog2" || exit 99
	for p in 1 2; do
		eval "id=\$ID$p"
		code=$(put_file "/buildid/$id/debuginfo" "$tmp/out/p$p.symtab" \
		    "$tmp/out/put.body" "$tmp/out/put.hdrs" \
		    -H "Authorization: Bearer $FTOK")
		check "prog$p: a debuginfo with only a symbol table is stored" \
		    test "$code" = 201
	done
	n0=$(seen "$tmp/up1.log" "$ID1" debuginfo)
	expect_url "prog1: the first request gets up1's DWARF copy instead" \
	    "$URL/buildid/$ID1/debuginfo" "$DBG1"
	n1=$(seen "$tmp/up1.log" "$ID1" debuginfo)
	check "prog1: up1 was asked once ($n0 -> $n1)" test "$n1" = $((n0 + 1))
	expect_url "prog1: the better copy is kept" \
	    "$URL/buildid/$ID1/debuginfo" "$DBG1"
	check "prog1: and up1 is not asked again" \
	    test "$(seen "$tmp/up1.log" "$ID1" debuginfo)" = "$n1"
	m0=$(seen "$tmp/up1.log" "$ID2" debuginfo)
	expect_url "prog2 (up1 lacks it): the upload is served" \
	    "$URL/buildid/$ID2/debuginfo" "$tmp/out/p2.symtab"
	m1=$(seen "$tmp/up1.log" "$ID2" debuginfo)
	check "prog2: up1 was asked ($m0 -> $m1)" test "$m1" = $((m0 + 1))
	expect_url "prog2: served again" "$URL/buildid/$ID2/debuginfo" \
	    "$tmp/out/p2.symtab"
	check "prog2: up1 is not asked on every request" \
	    test "$(seen "$tmp/up1.log" "$ID2" debuginfo)" = "$m1"
	stop_symhubd "$SYMHUBD_PID"
else
	fail "a token for the upload checks" "new_token failed"
fi

check "upstream up1 still alive" alive "$UP1_PID"
echo "# $(($(date +%s) - t0)) s"
finish
