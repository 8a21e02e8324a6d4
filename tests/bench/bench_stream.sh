#!/bin/bash
# A cold miss through symhubd, streamed: time to the first and to the
# last byte of a 10 MB executable an upstream sends at 2 MB/s, through a
# cold hub (a fresh store each round) and from the upstream directly.
#
# usage: tests/bench/bench_stream.sh [BUILDDIR [BUILDDIR...]]
#
# Each BUILDDIR's src/symhubd/symhubd is measured in turn (default: .),
# so that a build before the change and one after can be set side by
# side.  The upstream is tests/badupstream.py rate (Python: its own
# first byte is measured too, and the hub is judged against it).
# Targets: first byte within the upstream's first byte + 50 ms, last
# byte within the upstream's last byte + 0.3 s.
#
# Not part of `make check`.  Environment:
#   BENCH_ROUNDS=3       rounds per server; the median counts
#   BENCH_MB=10          file size, MB
#   BENCH_RATE=2000000   upstream rate, bytes a second
#   BENCH_KEEP=1         keep the temporary directory
# Exits 0 when the last BUILDDIR meets the targets, 1 when it misses them
# or on an error, 77 when a tool is missing.

set -u
bench_name=bench_stream
. "$(dirname "$0")/lib.sh"

src=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${BENCH_ROUNDS:-3}
mb=${BENCH_MB:-10}
rate=${BENCH_RATE:-2000000}
check_numbers "$rounds" "$mb" "$rate"
for t in curl gcc python3 readelf; do
	command -v "$t" >/dev/null || skip "$t not found"
done
[ $# -gt 0 ] || set -- .
bench_setup bench_stream

# The file: an executable with a table of BENCH_MB MB in .rodata.
printf '#include <stdio.h>\nstatic const unsigned char t[%d] = { 1 };\nint main(int c, char **v) { printf("%%d\\n", t[c]); return 0; }\n' \
    $((mb * 1000 * 1000)) >"$tmp/big.c" || die "fixture"
gcc -O0 -o "$tmp/big" "$tmp/big.c" || die "gcc"
id=$(readelf -n "$tmp/big" | awk '/Build ID:/ { print $3; exit }')
[ -n "$id" ] || die "no build-id"

port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_up URL: until it answers at all (any status).
wait_up() {
	local n=200
	until curl -s -o /dev/null "$1"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || die "$1 never answered"
		sleep 0.05
	done
}

up_port=$(port)
python3 "$src/tests/badupstream.py" rate "$up_port" "$tmp/big" "$rate" \
    >"$tmp/up.out" 2>&1 &
pids+=($!)
wait_up "http://127.0.0.1:$up_port/"

# median of the arguments
median() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# measure URL: "first last" in seconds, the body checked.
measure() {
	local t
	t=$(curl -s -o "$tmp/got" -w '%{time_starttransfer} %{time_total}' "$1") ||
	    die "GET $1 failed"
	cmp -s "$tmp/got" "$tmp/big" || die "GET $1: wrong bytes"
	echo "$t"
}

uf=() ul=()
for r in $(seq 1 "$rounds"); do
	read -r f l <<<"$(measure "http://127.0.0.1:$up_port/buildid/$id/executable")"
	uf+=("$f")
	ul+=("$l")
done
UF=$(median "${uf[@]}")
UL=$(median "${ul[@]}")
printf '%-40s first byte %6.3f s   last byte %6.3f s\n' "upstream directly" "$UF" "$UL"

ok=1
for b; do
	d=$(cd "$b" && pwd)
	[ -x "$d/src/symhubd/symhubd" ] || die "$d/src/symhubd/symhubd not built"
	hf=() hl=()
	for r in $(seq 1 "$rounds"); do
		hp=$(port)
		rm -rf "$tmp/store"
		env -u DEBUGINFOD_URLS "$d/src/symhubd/symhubd" -p "$hp" \
		    -d "$tmp/store" -u "http://127.0.0.1:$up_port" \
		    >>"$tmp/hub.out" 2>&1 &
		hpid=$!
		pids+=("$hpid")
		wait_up "http://127.0.0.1:$hp/metrics"
		read -r f l <<<"$(measure "http://127.0.0.1:$hp/buildid/$id/executable")"
		hf+=("$f")
		hl+=("$l")
		kill "$hpid"
		wait "$hpid" 2>/dev/null
	done
	HF=$(median "${hf[@]}")
	HL=$(median "${hl[@]}")
	printf '%-40s first byte %6.3f s   last byte %6.3f s   (+%.3f, +%.3f)\n' \
	    "cold hub, $b" "$HF" "$HL" "$(echo "$HF - $UF" | bc)" \
	    "$(echo "$HL - $UL" | bc)"
	ok=$(echo "$HF <= $UF + 0.05 && $HL <= $UL + 0.3" | bc)
done
[ "$ok" = 1 ] && echo "$bench_name: targets met" && exit 0
echo "$bench_name: targets missed"
exit 1
