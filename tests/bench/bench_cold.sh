#!/bin/bash
# Cold misses: what a client waits for when the hub has nothing yet.
#
# usage: tests/bench/bench_cold.sh [BUILDDIR]
#
# (a) One cold miss of a large debug file (BENCH_SIZE_MB, 100 MB of
#     DWARF-like bytes in an ELF debug file): curl -> hub -> link ->
#     upstream, the hub symhubd or elfutils' debuginfod federating
#     (DEBUGINFOD_URLS), the upstream one elfutils debuginfod over a
#     BENCH_RATE Mbit/s, BENCH_RTT ms link (tests/bench/wanlink.py).  Time
#     to the first byte and to the last, and the upstream's own through
#     the link.  Each round starts both hubs with empty stores.
# (b) bench_wan.sh's gdb session with a cold hub: gdb -> link -> hub ->
#     link -> upstream, both links BENCH_RATE Mbit/s, BENCH_RTT ms:
#       elfutils debuginfod federating to elfutils debuginfod (the base),
#       symhubd -> elfutils debuginfod,
#       symhubd -> symhubd (upstream accept-encoding=zstd; the central
#       hub warm: its zstd copies made, and made again at its best
#       level, before the timed runs).
#     Seconds end to end, and the bytes that crossed the link between
#     hub and upstream (symhub_upstream_bytes_total).  Targets: symhubd
#     at least 3x faster than elfutils; zstd between hubs at most 0.25x
#     the bytes of identity.
# (c) tests/bench/bench_cold_kernel.sh, when there is one.
#
# Not part of `make check`.  Environment:
#   BENCH_PARTS="a b c"  the parts to run
#   BENCH_ROUNDS=3       timed runs per case; the median counts
#   BENCH_RATE=100       link rate, Mbit/s
#   BENCH_RTT=50         round trip, ms
#   BENCH_SIZE_MB=100    (a)'s file
#   BENCH_UNITS=36       (b)'s program, translation units (as bench_wan.sh;
#                        36: ~64 MB of DWARF; 12: ~22 MB)
#   BENCH_KEEP=1         keep the temporary directory
#   BENCH_PREBUILT=DIR   (b)'s program from DIR, a kept run's directory
#                        with the same BENCH_UNITS (tests/bench/lib.sh)
# Exits 0 when (b)'s targets are met (or (b) did not run), 1 when missed
# or on an error, 77 when a tool is missing.

set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
symhubd=$builddir/src/symhubd/symhubd
parts=${BENCH_PARTS:-a b c}
rounds=${BENCH_ROUNDS:-3}
rate=${BENCH_RATE:-100}
rtt=${BENCH_RTT:-50}
size_mb=${BENCH_SIZE_MB:-100}
units=${BENCH_UNITS:-36}

bench_name=bench_cold
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"

check_numbers "$rounds" "$rate" "$rtt" "$size_mb" "$units"
[ "$rounds" -gt 0 ] && [ "$units" -gt 0 ] && [ "$size_mb" -gt 0 ] ||
	die "rounds, units and size: > 0"
[ -x "$symhubd" ] || die "no $symhubd; build first"
for tool in debuginfod gdb gcc g++ objcopy strip readelf curl python3; do
	command -v "$tool" >/dev/null || skip "$tool not installed"
done
unset DEBUGINFOD_URLS
bench_setup symhub-bench-cold
has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
verdict=0

# wait_ready URL ID: until URL serves ID's debuginfo (an index under way).
wait_ready() {
	local n=1200
	while [ "$(status_of "$1/buildid/$2/debuginfo")" != 200 ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || die "$1 never served $2"
		sleep 0.1
	done
}
# wait_up URL: until URL/metrics answers (a server started).
wait_up() {
	local n=300
	until [ "$(status_of "$1/metrics")" = 200 ]; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || die "$1 never started"
		sleep 0.1
	done
}
# link LISTEN TARGET: a wanlink.py in front of TARGET, until it is ready.
link() {
	local n=100
	python3 "$here/wanlink.py" "$1" "$2" "$rate" "$rtt" \
	    >"$tmp/link-$1.out" 2>&1 &
	pids+=($!)
	until grep -qx ready "$tmp/link-$1.out"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || die "wanlink.py did not start"
		sleep 0.1
	done
}
# stop PID: end one server this script started, and wait for it.
stop() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
# ports N: N distinct free ports into the array ports.
ports() {
	local p i
	ports=()
	while [ "${#ports[@]}" -lt "$1" ]; do
		p=$(free_port) || die "no free port"
		for i in "${ports[@]}"; do [ "$i" = "$p" ] && continue 2; done
		ports+=("$p")
	done
}
# hub PORT DIR UPSTREAM-SPEC: a cold symhubd (an empty store in DIR);
# sets hub_pid.
hub() {
	"$symhubd" -p "$1" -d "$2" -u "$3" -t 0 --log-file "$2.log" \
	    >"$2.out" 2>&1 &
	hub_pid=$!
	pids+=("$hub_pid")
	wait_up "http://127.0.0.1:$1"
}
# fed PORT DIR UPSTREAM-URL: a cold elfutils debuginfod federating to
# UPSTREAM-URL (its cache and database in DIR); sets fed_pid.
fed() {
	mkdir -p "$2"
	env DEBUGINFOD_URLS="$3" DEBUGINFOD_CACHE_PATH="$2/cache" \
	    debuginfod -p "$1" -d "$2/db.sqlite" -t 0 -g 0 \
	    >"$2/log" 2>&1 &
	fed_pid=$!
	pids+=("$fed_pid")
	wait_up "http://127.0.0.1:$1"
}
# wire PORT: the bytes a symhubd on PORT took from its upstreams.
wire() {
	curl -s "http://127.0.0.1:$1/metrics" |
	    awk '$1 ~ /^symhub_upstream_bytes_total/ { s += $2 }
	    END { print s + 0 }'
}

# --- Fixtures, built before any server starts --------------------------------

if has b; then
	wan_program "$units"
	ids=("${wan_ids[@]}")
fi
if has a; then
	echo "making a ${size_mb} MB debug file..." >&2
	mkdir -p "$tmp/big" || die "mkdir"
	make_big_debug "$tmp/bigsrc" "$size_mb" "$tmp/big/big.debug"
	big_id=$(build_id "$tmp/big/big.debug")
	big_bytes=$(stat -c %s "$tmp/big/big.debug")
fi

# --- (a) one cold miss of a large file ----------------------------------------

# ttfb URL: "FIRST LAST" seconds of one GET (curl's clock), or fails.
ttfb() {
	curl -s -o "$tmp/a.out" -w '%{http_code} %{time_starttransfer} %{time_total}\n' \
	    "$1" >"$tmp/a.w" || return 1
	read -r code first last <"$tmp/a.w"
	[ "$code" = 200 ] && cmp -s "$tmp/a.out" "$tmp/big/big.debug" ||
		return 1
	echo "$first $last"
}
if has a; then
	ports 5
	p_up=${ports[0]} p_link=${ports[1]} p_sh=${ports[2]} p_df=${ports[3]}
	debuginfod -F -t 0 -g 0 -p "$p_up" -d "$tmp/a-up.sqlite" "$tmp/big" \
	    >"$tmp/a-up.log" 2>&1 &
	up_pid=$!
	pids+=("$up_pid")
	wait_ready "http://127.0.0.1:$p_up" "$big_id"
	link "$p_link" "$p_up"
	up=http://127.0.0.1:$p_link
	: >"$tmp/a.times"
	for r in $(seq 1 "$rounds"); do
		tu=$(ttfb "$up/buildid/$big_id/debuginfo") ||
			die "(a) the upstream through the link failed"
		hub "$p_sh" "$tmp/a-sh-$r" "$up name=up"
		ts=$(ttfb "http://127.0.0.1:$p_sh/buildid/$big_id/debuginfo") ||
			die "(a) symhubd failed: see $tmp/a-sh-$r.log"
		stop "$hub_pid"
		fed "$p_df" "$tmp/a-df-$r" "$up"
		tf=$(ttfb "http://127.0.0.1:$p_df/buildid/$big_id/debuginfo") ||
			die "(a) elfutils' debuginfod failed: see $tmp/a-df-$r/log"
		stop "$fed_pid"
		echo "$tu $ts $tf" >>"$tmp/a.times"
		echo "(a) round $r: upstream $tu, symhubd $ts, elfutils $tf" \
		    "(first last, s)" >&2
	done
	stop "$up_pid"
fi

# --- (b) gdb through a cold hub ----------------------------------------------

# session PORT N: bench_wan.sh's gdb session through the link on PORT,
# cold client cache; prints its seconds, or fails when gdb did not see
# the locals.
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
if has b; then
	# Upstreams, and the links from the hubs to them.
	ports 10
	p_e=${ports[0]} p_c=${ports[1]} l_e=${ports[2]} l_c=${ports[3]}
	p_h1=${ports[4]} p_h2=${ports[5]} p_f=${ports[6]}
	l_h1=${ports[7]} l_f=${ports[8]}
	l_h2=${ports[9]}
	debuginfod -F -t 0 -g 0 -p "$p_e" -d "$tmp/b-up.sqlite" "$tmp/scan" \
	    >"$tmp/b-up.log" 2>&1 &
	pids+=($!)
	"$symhubd" -p "$p_c" -d "$tmp/b-central" -F "$tmp/scan" -t 0 \
	    --log-file "$tmp/b-central.log" >"$tmp/b-central.out" 2>&1 &
	pids+=($!)
	for id in "${ids[@]}"; do
		wait_ready "http://127.0.0.1:$p_e" "$id"
		wait_ready "http://127.0.0.1:$p_c" "$id"
	done
	# The central hub is warm: its copies made, then made again.
	for id in "${ids[@]}"; do
		curl -s -o /dev/null --compressed \
		    "http://127.0.0.1:$p_c/buildid/$id/debuginfo"
	done
	n=6000
	until curl -s "http://127.0.0.1:$p_c/metrics" | awk '
	    $1 == "symhub_encode_improve_queued" { q = $2 }
	    $1 == "symhub_encode_improving" { i = $2 }
	    END { exit !(q == 0 && i == 0) }'; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || die "the second pass did not end in 10 minutes"
		sleep 0.1
	done
	link "$l_e" "$p_e"
	link "$l_c" "$p_c"
	link "$l_h1" "$p_h1"
	link "$l_h2" "$p_h2"
	link "$l_f" "$p_f"
	: >"$tmp/b.times"
	for r in $(seq 1 "$rounds"); do
		fed "$p_f" "$tmp/b-df-$r" "http://127.0.0.1:$l_e"
		tf=$(session "$l_f" "$r") ||
			die "(b) gdb through elfutils failed: see $tmp/gdb-$l_f-$r"
		stop "$fed_pid"
		hub "$p_h1" "$tmp/b-sh1-$r" "http://127.0.0.1:$l_e name=up"
		t1=$(session "$l_h1" "$r") ||
			die "(b) gdb through symhubd failed: see $tmp/gdb-$l_h1-$r"
		w1=$(wire "$p_h1")
		stop "$hub_pid"
		hub "$p_h2" "$tmp/b-sh2-$r" \
		    "http://127.0.0.1:$l_c name=central accept-encoding=zstd"
		t2=$(session "$l_h2" "$r") ||
			die "(b) gdb through two hubs failed: see $tmp/gdb-$l_h2-$r"
		w2=$(wire "$p_h2")
		stop "$hub_pid"
		echo "$tf $t1 $t2 $w1 $w2" >>"$tmp/b.times"
		echo "(b) round $r: elfutils $tf s, symhubd->elfutils $t1 s" \
		    "($w1 B from upstream), symhubd->symhubd $t2 s ($w2 B)" >&2
	done
fi

# --- Report -------------------------------------------------------------------

echo
echo "cold misses over ${rate} Mbit/s, ${rtt} ms RTT links (wanlink.py)," \
    "median of $rounds"
print_machine "$symhubd"
if has a; then
	col() { awk -v c="$1" '{ print $c }' "$tmp/a.times" | median_row; }
	echo
	echo "(a) one cold miss, $((big_bytes >> 20)) MiB, curl -> hub -> link ->" \
	    "elfutils debuginfod"
	printf '%-34s %12s %12s\n' path "first byte" "last byte"
	printf '%-34s %12s %12s\n' "the upstream itself, through the link" \
	    "$(col 1)" "$(col 2)"
	printf '%-34s %12s %12s\n' "symhubd" "$(col 3)" "$(col 4)"
	printf '%-34s %12s %12s\n' "elfutils debuginfod federating" \
	    "$(col 5)" "$(col 6)"
fi
if has b; then
	col() { awk -v c="$1" '{ print $c }' "$tmp/b.times" | median_row; }
	mf=$(col 1) m1=$(col 2) m2=$(col 3) w1=$(col 4) w2=$(col 5)
	r1=$(awk -v a="$mf" -v b="$m1" 'BEGIN { printf "%.2f", a / b }')
	r2=$(awk -v a="$mf" -v b="$m2" 'BEGIN { printf "%.2f", a / b }')
	rw=$(awk -v a="$w2" -v b="$w1" 'BEGIN { printf "%.2f", b ? a / b : 0 }')
	echo
	echo "(b) gdb session (bench_wan.sh's, $units units), cold hub:" \
	    "gdb -> link -> hub -> link -> upstream"
	echo "debug files: $((wan_bytes / 1024)) KiB ($(ls "$tmp/scan" | tr '\n' ' '))"
	printf '%-40s %10s %14s\n' chain seconds "upstream bytes"
	printf '%-40s %10s %14s\n' "elfutils -> elfutils" "$mf" "-"
	printf '%-40s %10s %14s\n' "symhubd -> elfutils" "$m1" "$w1"
	printf '%-40s %10s %14s\n' "symhubd -> symhubd (zstd)" "$m2" "$w2"
	echo "symhubd->elfutils: ${r1}x faster than elfutils;" \
	    "symhubd->symhubd: ${r2}x (target >= 3x)"
	echo "bytes between the hubs, zstd/identity: ${rw}x (target <= 0.25x)"
	awk -v a="$r1" -v b="$r2" -v w="$rw" \
	    'BEGIN { exit !((a >= 3 || b >= 3) && w <= 0.25) }' || verdict=1
fi
if has c; then
	if [ -f "$here/bench_cold_kernel.sh" ]; then
		echo
		echo "(c) tests/bench/bench_cold_kernel.sh"
		bash "$here/bench_cold_kernel.sh" "$builddir" || verdict=1
	else
		echo
		echo "(c) skipped: no tests/bench/bench_cold_kernel.sh"
	fi
fi
exit "$verdict"
