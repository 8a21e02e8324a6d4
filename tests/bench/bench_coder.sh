#!/bin/bash
# Coalesced zstd readers of one cold file: what the hub spends on them.
#
# usage: tests/bench/bench_coder.sh [BUILDDIR]
#
# One cold miss of a large debug file (BENCH_SIZE_MB, 100 MB of
# DWARF-like bytes, as bench_cold.sh's (a)) that the upstream
# (tests/badupstream.py rate) sends at BENCH_RATE Mbit/s, read at once by
# N clients that accept zstd (curl -H 'Accept-Encoding: zstd'), for each
# N in BENCH_READERS: the hub streams it to all of them zstd-coded as it
# arrives.  Per N, the medians of BENCH_ROUNDS rounds (each with an empty
# store) of symhubd's CPU seconds (user + system) and its peak RSS
# (VmHWM), and of the seconds until the last reader had all; each round
# checks that one reader's bytes decode to the file.
#
# Not part of `make check`.  Environment:
#   BENCH_READERS="1 8 32"  readers per round
#   BENCH_ROUNDS=3          rounds per N; the median counts
#   BENCH_RATE=100          the upstream's rate, Mbit/s
#   BENCH_SIZE_MB=100       the file
#   BENCH_KEEP=1            keep the temporary directory

set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
symhubd=$builddir/src/symhubd/symhubd
readers=${BENCH_READERS:-1 8 32}
rounds=${BENCH_ROUNDS:-3}
rate=${BENCH_RATE:-100}
size_mb=${BENCH_SIZE_MB:-100}

bench_name=bench_coder
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"

# shellcheck disable=SC2086 # a list of numbers
check_numbers "$rounds" "$rate" "$size_mb" $readers
[ "$rounds" -gt 0 ] && [ "$rate" -gt 0 ] && [ "$size_mb" -gt 0 ] ||
	die "rounds, rate and size: > 0"
[ -x "$symhubd" ] || die "no $symhubd; build first"
for tool in gcc objcopy readelf curl python3 zstd cmp; do
	command -v "$tool" >/dev/null || skip "$tool not installed"
done
unset DEBUGINFOD_URLS
bench_setup symhub-bench-coder

echo "making a ${size_mb} MB debug file..." >&2
make_big_debug "$tmp/src" "$size_mb" "$tmp/big.debug"
rm -f "$tmp/src/blob"
id=$(build_id "$tmp/big.debug")
[ -n "$id" ] || die "no build-id"

# The upstream, for every round.
uport=$(free_port) || die "no free port"
python3 "$repo/tests/badupstream.py" rate "$uport" "$tmp/big.debug" \
    $((rate * 125000)) >"$tmp/up.out" 2>&1 &
pids+=($!)
n=100
until grep -qx ready "$tmp/up.out"; do
	n=$((n - 1))
	[ "$n" -gt 0 ] || die "badupstream.py did not start"
	sleep 0.1
done

# cpu PID: user + system seconds so far.
cpu() {
	awk -v t="$(getconf CLK_TCK)" '{ printf "%.2f\n", ($14 + $15) / t }' \
	    "/proc/$1/stat"
}
# hwm PID: peak RSS, MiB.
hwm() {
	awk '$1 == "VmHWM:" { printf "%.1f\n", $2 / 1024 }' "/proc/$1/status"
}
median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# round N: one cold miss read by N clients; appends "CPU RSS SECONDS".
round() {
	local n=$1 port hpid i t0 t1 cl=()
	port=$(free_port) || die "no free port"
	rm -rf "$tmp/st" "$tmp/st.log"
	"$symhubd" -p "$port" -d "$tmp/st" -u "http://127.0.0.1:$uport" \
	    -t 0 --log-file "$tmp/st.log" >"$tmp/st.out" 2>&1 &
	hpid=$!
	pids+=("$hpid")
	i=300
	until [ "$(status_of "http://127.0.0.1:$port/metrics")" = 200 ]; do
		i=$((i - 1))
		[ "$i" -gt 0 ] || die "symhubd never started"
		sleep 0.1
	done
	t0=$(date +%s.%N)
	for i in $(seq 1 "$n"); do
		curl -s -H 'Accept-Encoding: zstd' -o "$tmp/r$i" \
		    "http://127.0.0.1:$port/buildid/$id/debuginfo" &
		cl+=($!)
	done
	for i in "${cl[@]}"; do
		wait "$i" || die "a reader failed"
	done
	t1=$(date +%s.%N)
	zstd -q -d -c "$tmp/r1" | cmp -s - "$tmp/big.debug" ||
		die "reader 1's bytes do not decode to the file"
	echo "$(cpu "$hpid") $(hwm "$hpid") $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
	    >>"$tmp/n$n"
	kill "$hpid"
	wait "$hpid" 2>/dev/null
	rm -f "$tmp"/r*
}

echo "$bench_name: $(basename "$(cd "$builddir" && pwd)"), ${size_mb} MB at ${rate} Mbit/s, load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%8s %12s %14s %10s\n' readers "CPU s" "peak RSS MiB" seconds
for n in $readers; do
	for r in $(seq 1 "$rounds"); do
		round "$n"
	done
	printf '%8s %12s %14s %10.2f\n' "$n" \
	    "$(awk '{ print $1 }' "$tmp/n$n" | median)" \
	    "$(awk '{ print $2 }' "$tmp/n$n" | median)" \
	    "$(awk '{ print $3 }' "$tmp/n$n" | median)"
done
echo "$bench_name: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
