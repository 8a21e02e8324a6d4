#!/bin/bash
# Federation, with upstreams that misbehave: one that
# hangs (and its breaker), one that resets, one that lies about the
# build-id, one that trickles.
# Fixtures, helpers and the two debuginfod upstreams: tests/federation.sh.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_federation_faults.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
. "$top_srcdir/tests/federation.sh"

fed_upstreams

section 'a hanging upstream'
if ! start_badupstream hang hang; then
	fail "badupstream.py hang starts" "$(cat "$tmp/hang.err")"
	finish
fi
HANG=$BURL
# The breaker's cooldown passes on the test clock (clock_step).
test_clock_built && clock_init
hub -d "$tmp/store-hang" -u "$HANG name=hang" -u "$UP1 name=up1" \
    --upstream-first-byte-timeout 2 --breaker-failures 2 \
    --breaker-cooldown 60 --log-file "$tmp/hang.log"
# "At once" is measured against the first-byte timeout (2 s), the time a
# wait for hang would take, not against this machine's speed.
get "$URL/buildid/$ID1/debuginfo" "$tmp/out/b"
[ "$code" = 200 ] && cmp -s "$tmp/out/b" "$DBG1" && less "$secs" 2
verdict $? "hang + up1: up1's answer served before hang's timeout (${secs}s)" \
    "status $code after ${secs}s (want 200 with prog1.debug, < 2 s)"
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
wait_metric 'symhub_upstream_breaker_state{upstream="hang"}' -eq 1 5
verdict $? "after 2 failures the breaker of hang is open" \
    "$(metrics_text | grep 'upstream="hang"' | grep -v bucket)"
# Breaker open: hang is skipped, up1 says 404.  Still no definite miss
# (job_start() marks a job with a skipped upstream transient, as the
# skipped one may have the file): a reset, but at once.
# hang_asked: the attempts on hang that have ended, whatever their outcome.
# An attempt on hang ends only at its timeout, so one made for a request
# is counted by the time that request is answered.
hang_asked() {
	metrics_text | awk '/^symhub_upstream_requests_total\{upstream="hang",/ \
	    { s += $2 } END { print s + 0 }'
}
asked0=$(hang_asked)
next_unknown
expect_reset "breaker open, unknown id: reset before hang's timeout" \
    "$URL/buildid/$U/debuginfo" 2
check "... hang was not asked ($asked0 attempts before, $(hang_asked) after)" \
    [ "$(hang_asked)" = "$asked0" ]
check "... and no negative entry stored" \
    metric_cmp symhub_cache_negative_entries -eq "${neg0:-0}"
get "$URL/buildid/$ID1/executable" "$tmp/out/b"
[ "$code" = 200 ] && cmp -s "$tmp/out/b" "$EXE1" && less "$secs" 2 &&
    [ "$(hang_asked)" = "$asked0" ]
verdict $? "breaker open: up1's file served, hang not asked (${secs}s)" \
    "status $code after ${secs}s; hang asked $(hang_asked) times, was $asked0"
# The cooldown (60 s), stepped: half of it on, hang is still skipped;
# past it, one request probes hang (half-open, 2), and the probe's
# failure opens the breaker again.
hstate='symhub_upstream_breaker_state{upstream="hang"}'
hasked='symhub_upstream_requests_total{upstream="hang",outcome="timeout"}'
if test_clock_built; then
	h0=$(metric "$hasked")
	clock_step 30
	next_unknown
	expect_reset "30 s into the 60 s cooldown: reset within 100 ms" \
	    "$URL/buildid/$U/debuginfo" 0.1
	check "... hang was not asked, the breaker is still open" \
	    eval 'metric_cmp "$hasked" -eq "$h0" && metric_cmp "$hstate" -eq 1'
	clock_step 31
	next_unknown
	# In the background, its status and curl's exit to a file.
	{ curl -s --max-time 15 -o /dev/null -w '%{http_code}' \
	    "$URL/buildid/$U/debuginfo"; echo " $?"; } >"$tmp/out/probe" &
	probe=$!
	check "61 s on: the cooldown is over, one request probes hang (2)" \
	    wait_metric "$hstate" -eq 2 5
	wait "$probe"
	check "... the probe waits for the first-byte timeout, then resets" \
	    eval '[ "$(cat "$tmp/out/probe")" = "000 56" ]'
	check "... the probe's failure opens the breaker again (1)" \
	    wait_metric "$hstate" -eq 1 5
	check "... and it was the one request hang got" \
	    metric_cmp "$hasked" -eq $((h0 + 1))
else
	skip_check "the breaker's cooldown on the test clock" \
	    "symhubd built without --enable-test-clock"
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
! f=$(timeout 30 debuginfod-find debuginfo "$ID1" 2>"$tmp/out/err")
verdict $? "liar alone: debuginfod-find finds nothing" "it found $f"
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
[ "$(seen "$tmp/up1.log" "$ID1" debuginfo)" = $((u0 + 1)) ]
verdict $? "... fetched from up1: the liar's answer was never stored" \
    "up1 saw $(($(seen "$tmp/up1.log" "$ID1" debuginfo) - u0)) requests"
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
[ ${#bad[@]} = 0 ]
verdict $? "liar + up1, 3 rounds x 2 kinds: always prog1's own bytes" \
    "${bad[@]}"
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
	[ "$code" = 200 ] && cmp -s "$tmp/out/b" "$DBG1" && less "$secs" 4
	verdict $? "trickle (timeout=2) + up1: up1's bytes (${secs}s)" \
	    "status $code, curl $cexit, after ${secs}s"
	stop_symhubd
	# The trickler surely first: up1 behind the 1 s delay.  It wins,
	# times out after 2 s, and up1 must be asked again.
	if [ -n "$SLOW1" ]; then
		hub -d "$tmp/store-trickle1" -u "$TRICKLE name=slow timeout=2" \
		    -u "$SLOW1 name=slowup1"
		get "$URL/buildid/$ID1/debuginfo" "$tmp/out/b"
		[ "$code" = 200 ] && cmp -s "$tmp/out/b" "$DBG1" &&
		    less "$secs" 5 && metric_cmp \
		    'symhub_upstream_requests_total{upstream="slow",outcome="timeout"}' \
		    -ge 1
		verdict $? "trickle wins, times out, up1 asked again: up1's bytes (${secs}s)" \
		    "status $code, curl $cexit, after ${secs}s" \
		    "$(metrics_text | grep 'upstream="slow",outcome="timeout"')"
		stop_symhubd
	fi
	hub -d "$tmp/store-trickle2" -u "$TRICKLE name=slow timeout=2"
	expect_reset "trickle alone (timeout=2): reset within 3.5 s" \
	    "$URL/buildid/$ID1/debuginfo" 3.5
	less 1.5 "$secs"
	verdict $? "... after the transfer timeout, not before (${secs}s)" \
	    "${secs}s"
	check "... counted as a timeout" metric_cmp \
	    'symhub_upstream_requests_total{upstream="slow",outcome="timeout"}' \
	    -ge 1
	check "... nothing cached" metric_cmp symhub_cache_entries -eq 0
	stop_symhubd
else
	fail "badupstream.py trickle starts" "$(cat "$tmp/trickle.err")"
fi


check "upstream up1 still alive" alive "$UP1_PID"
echo "# $(($(date +%s) - t0)) s"
finish
