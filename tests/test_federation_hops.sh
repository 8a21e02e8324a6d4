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

clog=$tmp/count.requests
if ! start_badupstream count count "$clog"; then
	fail "badupstream.py count starts" "$(cat "$tmp/count.err")"
	finish
fi
COUNT=$BURL
: >"$clog"

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


echo "# $(($(date +%s) - t0)) s"
finish
