#!/bin/bash
# Integration test of symhubd against slow request bodies (issue 27,
# point 2): connections that send a head and trickle their bodies, from
# six addresses, hold the --connections budget while the same addresses
# reconnect as fast as they are cut.  A normal client must still get every
# answer, and a large upload on a normal link must not be cut; a body that
# falls behind --body-min-rate, or pauses for --body-timeout, is cut even
# without the pressure.  And after a flood of connections, the memory
# their pools freed goes back to the system.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_slowbody.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl python3 gcc strip
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
SLOW=$top_srcdir/tests/slowclient.py
ADDRS=127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5,127.0.0.6,127.0.0.7
mkdir -p "$tmp/out" || exit 99

TOKENS=$tmp/tokens
TOK=$(new_token ci upload "$TOKENS") || { echo "# token"; exit 99; }

# A 2 MB executable to upload: a large initialised array.
printf 'char big[2 << 20] = { 1 };\nint main(void) { return big[7]; }\n' \
    >"$tmp/big.c"
gcc -Wl,--build-id -o "$tmp/big" "$tmp/big.c" && strip "$tmp/big" ||
    { echo "# cannot build the fixture"; exit 99; }
ID=$(buildid "$tmp/big")
[ -n "$ID" ] || { echo "# the fixture has no build-id"; exit 99; }

# 6 addresses x 16 trickled bodies fill the budget of 96; 16 more
# connections an address reconnect as fast as they are cut.
hub -d "$tmp/store" --connections 96 --connections-per-address 32 \
    --head-timeout 10 --body-timeout 3 --body-min-rate 1k \
    --tokens "$TOKENS" --log-file "$tmp/hub.log"

section 'trickled bodies and reconnects from six addresses'
mkfifo "$tmp/siege.in" || exit 99
python3 "$SLOW" siege "$PORT" "$ADDRS" 16 16 600 <"$tmp/siege.in" \
    >"$tmp/siege.out" 2>&1 &
siege=$!
PIDS+=("$siege")
exec {hold}>"$tmp/siege.in"	# the siege runs until this closes
check "the siege has every body started" \
    wait_until 60 grep -qx ready "$tmp/siege.out"

# A normal upload meanwhile, at 512 KB/s: never cut to make room.
curl -s --max-time 120 --limit-rate 512k -o "$tmp/out/put.body" \
    -w '%{http_code}' -X PUT -H "Authorization: Bearer $TOK" \
    --data-binary "@$tmp/big" "$URL/buildid/$ID/executable" \
    >"$tmp/out/put.code" 2>/dev/null &
put=$!

# A normal client, one new connection a request: every one answered.
ok=0 codes=
for _ in $(seq 40); do
	code=$(curl -s -o /dev/null --max-time 20 -w '%{http_code}' \
	    "$URL/metrics")
	[ "$code" = 200 ] && ok=$((ok + 1))
	codes="$codes $code"
done
if [ "$ok" = 40 ]; then
	pass "a normal client gets 40 answers of 40"
else
	fail "a normal client gets 40 answers of 40 ($ok)" "codes:$codes"
fi
wait "$put"	# curl's, not the hub's
code=$(cat "$tmp/out/put.code")
check "a 2 MB upload at 512 KB/s is stored, not cut ($code)" [ "$code" = 201 ]
check "... whole" cmp -s "$tmp/big" \
    <(curl -s --max-time 20 "$URL/buildid/$ID/executable")
exec {hold}>&-
wait_exit "$siege" 30
check "the trickled bodies were cut ($(tail -1 "$tmp/siege.out"))" \
    metric_cmp symhub_http_body_timeouts_total -ge 1
check "... and the connections drain" \
    wait_metric symhub_http_connections -le 1 30

section 'one slow body, without the pressure'
t=$(python3 "$SLOW" body "$PORT" 127.0.0.8 30 0 0.2)
check "a body of 5 bytes a second is cut after --body-timeout ($t)" \
    [ "$t" = cut ]
t=$(python3 "$SLOW" body "$PORT" 127.0.0.8 30 100000 3600)
check "a body that pauses for --body-timeout is cut, though ahead ($t)" \
    [ "$t" = cut ]
t=$(python3 "$SLOW" body "$PORT" 127.0.0.8 6 100000 1)
check "one ahead of the rate that pauses less is kept ($t)" \
    [ "$t" = whole ]
stop_check "the hub stops"

section 'memory after a flood of connections'
# 2,000 idle connections from 4 addresses, then none: the hub trims what
# their pools freed (issue 27, point 9).  ASan's allocator is not glibc's,
# so the RSS is compared on other builds only.
hub -d "$tmp/store" --log-file "$tmp/hub2.log"
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$SYMHUBD_PID/status"; }
rss0=$(rss)
mkfifo "$tmp/flood.in" || exit 99
python3 "$SLOW" hold "$PORT" 127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5 2000 \
    600 <"$tmp/flood.in" >"$tmp/flood.out" 2>&1 &
flood=$!
PIDS+=("$flood")
exec {hold}>"$tmp/flood.in"
check "2,000 connections are open at once" \
    wait_metric symhub_http_connections -ge 2000 60
rss1=$(rss)
exec {hold}>&-
wait_exit "$flood" 30
check "... and once they are gone, the memory they freed is trimmed" \
    wait_metric symhub_http_memory_trims_total -ge 1 60
if grep -q libasan <(ldd "$SYMHUBD" 2>/dev/null); then
	echo "# the RSS is not compared: an ASan build"
else
	rss2=$(rss)
	check "the RSS falls back after the flood (${rss0} kB, ${rss1} kB \
during, ${rss2} kB after)" [ $((rss2 - rss0)) -le $(((rss1 - rss0) / 2)) ]
fi
stop_check "the hub stops"

finish
