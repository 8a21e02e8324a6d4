#!/bin/bash
# Federation, and what a miss leaves: the negative
# entry's TTLs, and no entry (at symhubd or in libdebuginfod's cache)
# after a transient failure.
# Fixtures, helpers and the two debuginfod upstreams: tests/federation.sh.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_federation_negative.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
. "$top_srcdir/tests/federation.sh"

section 'negative cache: TTLs, and no poisoning after a transient failure'
clog=$tmp/count.requests
if ! start_badupstream count count "$clog"; then
	fail "badupstream.py count starts" "$(cat "$tmp/count.err")"
	finish
fi
COUNT=$BURL
: >"$clog"
# The TTLs pass on the test clock (tests/lib.sh clock_step): stepped,
# not waited for, so their bounds are checked on both sides at any load.
test_clock_built && clock_init
hub -d "$tmp/store-neg" -u "$COUNT name=count" --negative-ttl 100,400 \
    --log-file "$tmp/neg.log"
next_unknown
get "$URL/buildid/$U/debuginfo" "$tmp/out/b"
c1=$code
get "$URL/buildid/$U/debuginfo" "$tmp/out/b"
[ "$c1$code" = 404404 ] && [ "$(seen "$clog" "$U" debuginfo)" = 1 ]
verdict $? "negative entry: a repeated miss does not reach the upstream" \
    "status $c1, $code; the upstream saw $(seen "$clog" "$U" debuginfo)"
# asked_after SECONDS N: step the clock, ask once more; 404, and has the
# upstream seen N requests for it by now?
asked_after() {
	clock_step "$1"
	get "$URL/buildid/$U/debuginfo" "$tmp/out/b"
	[ "$code" = 404 ] && [ "$(seen "$clog" "$U" debuginfo)" = "$2" ]
}
# TTLs are whole seconds on the wall clock: 100 means 99 to 100 s from
# now, and the steps keep 10 s from either end.
if test_clock_built; then
	check "first TTL (100 s): 90 s on, still the entry's 404" \
	    asked_after 90 1
	check "first TTL (100 s): 101 s on, the upstream is asked again" \
	    asked_after 11 2
	check "second TTL (400 s) is longer: 390 s on, still the entry's 404" \
	    asked_after 390 2
	check "second TTL (400 s): 401 s on, the upstream is asked again" \
	    asked_after 11 3
else
	skip_check "negative TTLs on the test clock" \
	    "symhubd built without --enable-test-clock"
fi
stop_symhubd

# A transient failure (nothing listens on the upstream's port yet), then
# the upstream comes up: the same client, with the same cache, succeeds at
# once.
LATE=$(free_port)
hub -d "$tmp/store-late" -u "http://127.0.0.1:$LATE name=late" \
    --breaker-failures 5 --log-file "$tmp/late-hub.log"
client_env
! f=$(timeout 30 debuginfod-find debuginfo "$ID1" 2>"$tmp/out/err")
verdict $? "upstream down: debuginfod-find fails" "it found $f"
[ -s "$DEBUGINFOD_CACHE_PATH/$ID1/debuginfo" ] ||
    [ ! -e "$DEBUGINFOD_CACHE_PATH/$ID1/debuginfo" ]
verdict $? "... and its cache holds no 'not found' marker" \
    "$(ls -la "$DEBUGINFOD_CACHE_PATH/$ID1/" 2>&1)"
if start_debuginfod late "$LATE" "$tmp/up1" &&
    wait_http 30 "$DURL/buildid/$ID1/debuginfo" 200; then
	s0=$(date +%s.%N)
	f=$(timeout 10 debuginfod-find debuginfo "$ID1" 2>"$tmp/out/err")
	e=$(awk -v a="$s0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
	[ -n "$f" ] && cmp -s "$f" "$DBG1" && less "$e" 3
	verdict $? "upstream up: the same debuginfod-find succeeds at once (${e}s)" \
	    "got '${f:-(no path)}' after ${e}s" "$(tail -3 "$tmp/out/err")"
	check "... and symhubd stored no negative entry" \
	    metric_cmp symhub_cache_negative_entries -eq 0
	stop_symhubd "$DPID"
else
	fail "debuginfod starts on the late port $LATE" \
	    "$(tail -n 5 "$tmp/late.log")"
fi
stop_symhubd


echo "# $(($(date +%s) - t0)) s"
finish
