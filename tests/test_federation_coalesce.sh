#!/bin/bash
# Federation, many clients, one upstream request: 200
# simultaneous cold requests for a file, for misses, and through a slow
# path all wait for one fetch.
# Fixtures, helpers and the two debuginfod upstreams: tests/federation.sh.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_federation_coalesce.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
. "$top_srcdir/tests/federation.sh"

fed_upstreams 2

hublog=$tmp/hub.log
hub -d "$tmp/store" -u "$UP1 name=up1" -u "$UP2 name=up2" \
    --log-file "$hublog"
HUB_PID=$SYMHUBD_PID
HUB=$URL

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
[ "$same" = 200 ]
verdict $? "200 parallel cold requests: all 200 got prog2's debuginfo" \
    "$same of 200" "$(head -3 "$tmp/out/par.err")"
um1=$(metric "$m200" "$UP2")
n=$(($(seen "$tmp/up2.log" "$ID2" debuginfo) - ul0))
[ $((${um1:-0} - ${um0:-0})) = 1 ] && [ "$n" = 1 ]
verdict $? "200 parallel cold requests: exactly 1 reached up2" \
    "up2 /metrics: $m200 went from $um0 to $um1; up2 log: $n requests"
n=$(($(seen "$tmp/up1.log" "$ID2" debuginfo) - ul1))
[ "$n" = 1 ]
verdict $? "200 parallel cold requests: exactly 1 reached up1 (its 404)" \
    "up1 log: $n requests"

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
[ ${#bad[@]} = 0 ]
verdict $? "4 x 200 parallel misses: all 404, each upstream asked once per id" \
    "${bad[@]}"

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
	[ "$same" = 200 ] && [ $((${um1:-0} - ${um0:-0})) = 1 ]
	verdict $? "200 parallel via a 1 s path: identical bytes, 1 upstream fetch" \
	    "$same of 200 right; up2 $mx from $um0 to $um1"
	[ $((${co1:-0} - ${co0:-0})) -ge 1 ]
	verdict $? "symhub_fetch_coalesced_total grew by $((co1 - co0))" \
	    "from $co0 to $co1"
	stop_symhubd "$DHUB_PID"
	stop_symhubd "$DELAY_PID"
	URL=$HUB
	SYMHUBD_PID=$HUB_PID
else
	fail "badupstream.py delay starts" "$(cat "$tmp/delay.err")"
fi


check "upstream up1 still alive" alive "$UP1_PID"
echo "# $(($(date +%s) - t0)) s"
finish
