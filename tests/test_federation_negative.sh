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


echo "# $(($(date +%s) - t0)) s"
finish
