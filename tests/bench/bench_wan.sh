#!/bin/bash
# A gdb session over a slow link: symhubd (compressing) against elfutils'
# debuginfod, serving the same files.
#
# usage: tests/bench/bench_wan.sh [BUILDDIR]
#
# The session: gdb, with a cold client cache and debuginfod on, runs a
# C++ program built here (-g -O1, its DWARF uncompressed, as a CI build
# uploads it) whose debug files and libc's (libc6-dbg, as Debian ships
# them: sections zlib-compressed already) only the server has; it stops
# at a breakpoint in the program's shared library and prints a backtrace
# with locals.  Both servers index one directory (-F); between gdb and
# each server, tests/bench/wanlink.py makes the link 100 Mbit/s with a
# 50 ms round trip (this kernel has no sch_netem for tc).  symhubd's
# compressed copies are made before the timed runs, and made again at the
# best level (a warm hub); the time the first request pays for making
# them, and the second pass's, are printed apart.  Target: the session at
# least 2.5x faster through symhubd.
#
# Not part of `make check`.  Environment:
#   BENCH_ROUNDS=3       timed sessions per server; the median counts
#   BENCH_RATE=100       link rate, Mbit/s
#   BENCH_RTT=50         round trip, ms
#   BENCH_UNITS=36       translation units of the program (36: ~64 MB of
#                        DWARF; 12: ~22 MB)
#   BENCH_KEEP=1         keep the temporary directory
# Exits 0 when the target is met, 1 when missed or on an error, 77 when a
# tool is missing.

set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
symhubd=$builddir/src/symhubd/symhubd
rounds=${BENCH_ROUNDS:-3}
rate=${BENCH_RATE:-100}
rtt=${BENCH_RTT:-50}
units=${BENCH_UNITS:-36}

bench_name=bench_wan
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"

check_numbers "$rounds" "$rate" "$rtt" "$units"
[ "$rounds" -gt 0 ] && [ "$units" -gt 0 ] || die "rounds and units: > 0"
[ -x "$symhubd" ] || die "no $symhubd; build first"
for tool in debuginfod gdb g++ objcopy strip readelf curl python3; do
	command -v "$tool" >/dev/null || skip "$tool not installed"
done
unset DEBUGINFOD_URLS
bench_setup symhub-bench-wan

# --- The program: a shared library and units heavy with templates ----------

wan_program "$units"
scan=$tmp/scan
ids=("${wan_ids[@]}")
bytes=$wan_bytes

# --- Servers, and a slow link in front of each ------------------------------

port_df=$(free_port) && port_sh=$(free_port) && port_lf=$(free_port) &&
    port_ls=$(free_port) || die "no free port"
debuginfod -F -t 0 -g 0 -p "$port_df" -d "$tmp/db.sqlite" "$scan" \
    >"$tmp/debuginfod.log" 2>&1 &
pids+=($!)
"$symhubd" -p "$port_sh" -d "$tmp/store" -F "$scan" -t 0 \
    --log-file "$tmp/symhubd.log" >"$tmp/symhubd.out" 2>&1 &
pids+=($!)
for p in "$port_df" "$port_sh"; do
	n=1200
	for id in "${ids[@]}"; do
		while [ "$(status_of "http://127.0.0.1:$p/buildid/$id/debuginfo")" != 200 ]; do
			n=$((n - 1))
			[ "$n" -gt 0 ] || die "port $p never served $id"
			sleep 0.1
		done
	done
done
# The compressed copies, made now; what that cost.
t0=$(date +%s.%N)
for id in "${ids[@]}"; do
	curl -s -o /dev/null --compressed \
	    "http://127.0.0.1:$port_sh/buildid/$id/debuginfo"
done
t1=$(date +%s.%N)
make_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
# Then the second pass, at the best level, in the background.
n=6000
until curl -s "http://127.0.0.1:$port_sh/metrics" | awk '
    $1 == "symhub_encode_improve_queued" { q = $2 }
    $1 == "symhub_encode_improving" { i = $2 }
    END { exit !(q == 0 && i == 0) }'; do
	n=$((n - 1))
	[ "$n" -gt 0 ] || die "the second pass did not end in 10 minutes"
	sleep 0.1
done
metrics=$(curl -s "http://127.0.0.1:$port_sh/metrics")
coded=$(echo "$metrics" | awk '
    $1 == "symhub_encode_out_bytes_total" { o = $2 }
    $1 == "symhub_encode_improve_saved_bytes_total" { s = $2 }
    END { print o - s }')
best_s=$(echo "$metrics" |
    awk '$1 == "symhub_encode_improve_seconds_total" { print $2 }')
for pair in "$port_lf:$port_df" "$port_ls:$port_sh"; do
	python3 "$here/wanlink.py" "${pair%%:*}" "${pair##*:}" "$rate" "$rtt" \
	    >"$tmp/link-${pair%%:*}.out" 2>&1 &
	pids+=($!)
	n=100
	until grep -qx ready "$tmp/link-${pair%%:*}.out"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || die "wanlink.py did not start"
		sleep 0.1
	done
done

# --- Sessions ----------------------------------------------------------------

# session PORT N: one gdb session through the link on PORT, cold client
# cache; prints its seconds, or fails when gdb did not see the locals.
session() {
	local out=$tmp/gdb-$1-$2 t0 t1
	t0=$(date +%s.%N)
	DEBUGINFOD_URLS=http://127.0.0.1:$1 DEBUGINFOD_CACHE_PATH=$tmp/cache-$1-$2 \
	    DEBUGINFOD_PROGRESS=0 timeout 600 gdb -nx -batch \
	    -iex 'set debuginfod enabled on' \
	    -iex "set debug-file-directory $tmp/nowhere" \
	    -iex 'set breakpoint pending on' \
	    -ex 'break work.cc:4' -ex run -ex bt -ex 'info locals' -ex 'p unit_1' \
	    "$tmp/bin/app" >"$out" 2>&1
	t1=$(date +%s.%N)
	grep -q 'depth = ' "$out" && grep -q 'in main ()\|main (argc=' "$out" &&
	    grep -q 'unit_1(int)' "$out" || return 1
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}
: >"$tmp/times"
for r in $(seq 1 "$rounds"); do
	tf=$(session "$port_lf" "$r") || die "gdb through elfutils failed: see $tmp/gdb-$port_lf-$r"
	ts=$(session "$port_ls" "$r") || die "gdb through symhubd failed: see $tmp/gdb-$port_ls-$r"
	echo "$tf $ts" >>"$tmp/times"
	echo "round $r: elfutils $tf s, symhubd $ts s" >&2
done
mf=$(awk '{ print $1 }' "$tmp/times" | median_row)
ms=$(awk '{ print $2 }' "$tmp/times" | median_row)
ratio=$(awk -v a="$mf" -v b="$ms" 'BEGIN { printf "%.2f", a / b }')

echo
echo "gdb session over ${rate} Mbit/s, ${rtt} ms RTT (wanlink.py), cold client"
print_machine "$symhubd"
echo "debug files: $((bytes / 1024)) KiB ($(ls "$scan" | tr '\n' ' '))"
echo "symhubd's copies: $((${coded:-0} / 1024)) KiB, made in $make_s s while" \
    "the first client waited, then again at level 19 in $best_s s (once, in" \
    "the background)"
printf '%-24s %10s\n' server "seconds"
printf '%-24s %10s\n' "elfutils debuginfod" "$mf"
printf '%-24s %10s\n' "symhubd" "$ms"
echo "symhubd/elfutils: ${ratio}x faster (target >= 2.5x)"
awk -v r="$ratio" 'BEGIN { exit !(r >= 2.5) }'
