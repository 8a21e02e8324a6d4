#!/bin/bash
# Federation, and what is passed from hop to hop: the
# headers an upstream receives, the hop limit, and loops between two hubs
# and through elfutils' debuginfod.
# Fixtures, helpers and the two debuginfod upstreams: tests/federation.sh.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_federation_hops.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
. "$top_srcdir/tests/federation.sh"

# Federation hygiene, as case files (tests/cases/): what the upstream
# receives, seen by a fake upstream that logs each request.
for c in fed-forward-headers fed-forwarded-for fed-hop-limit \
    fed-upstream-404 fed-upstream-503; do
	run_case "$c"
done

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
		{ [ "$code" = 404 ] || [ "$cexit" = 56 ]; } &&
		    less "$secs" 2
		verdict $? "A <-> B: a miss ends quickly (status $code, ${secs}s)" \
		    "status $code, curl $cexit, ${secs}s"
		[ "$nb" -ge 1 ] && [ "$na" -lt 10 ] && [ "$nb" -lt 10 ]
		verdict $? "A <-> B: few requests ($na at A, $nb at B)" \
		    "$na at A, $nb at B"
		next_unknown
		get "http://127.0.0.1:$PB/buildid/$U/executable" "$tmp/out/b"
		{ [ "$code" = 404 ] || [ "$cexit" = 56 ]; } &&
		    less "$secs" 2
		verdict $? "B <-> A: a miss ends quickly (status $code, ${secs}s)" \
		    "status $code, curl $cexit, ${secs}s"
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


echo "# $(($(date +%s) - t0)) s"
finish
