#!/bin/bash
# What --read-auth costs on warm small hits, and whether the token check
# leaks timing: symhubd without tokens against symhubd with --read-auth
# (a tokens file of BENCH_TOKENS entries, every request a Bearer token),
# both on the same ~40 KB debuginfo, wrk in alternating rounds; then
# tests/timing.py with many trials and a strict tolerance (the make
# check variant in tests/test_access.sh is loose).
#
# usage: tests/bench/bench_access.sh [BUILDDIR]
# Environment: BENCH_SECONDS=10, BENCH_ROUNDS=5, BENCH_CONNS=32,
#   BENCH_WRK_THREADS=2, BENCH_TOKENS=50, BENCH_TIMING_N=3000,
#   BENCH_TIMING_TOL=0.03, BENCH_KEEP=1.
# The cost is the server's CPU time a request (from /proc), which the
# rest of the machine disturbs far less than req/s; both are printed.
# Exits 0 when the cost is under 5 % and the medians of a near-miss and
# a far token are within the tolerance, 1 otherwise, 77 when a tool is
# missing.

set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
symhubd=$builddir/src/symhubd/symhubd
symhub=$builddir/src/symhub/symhub

seconds=${BENCH_SECONDS:-10}
rounds=${BENCH_ROUNDS:-5}
conns=${BENCH_CONNS:-32}
wrk_threads=${BENCH_WRK_THREADS:-2}
ntokens=${BENCH_TOKENS:-50}
timing_n=${BENCH_TIMING_N:-3000}
timing_tol=${BENCH_TIMING_TOL:-0.03}

bench_name=bench_access
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"

check_numbers "$seconds" "$rounds" "$conns" "$wrk_threads" "$ntokens" \
    "$timing_n"
[ -x "$symhubd" ] && [ -x "$symhub" ] ||
	die "no $symhubd or $symhub; build first, or pass the build directory"
for tool in wrk curl gcc objcopy readelf python3; do
	command -v "$tool" >/dev/null || skip "$tool not installed"
done

bench_setup bench_access
mkdir -p "$tmp/scan" "$tmp/s1" "$tmp/s2" || die "mkdir"
gen_fixture >"$tmp/fix.c" && gcc -g -O0 -o "$tmp/fix" "$tmp/fix.c" &&
	objcopy --only-keep-debug "$tmp/fix" "$tmp/scan/fix.debug" ||
	die "cannot build the fixture"
id=$(build_id "$tmp/fix")

for i in $(seq 1 "$ntokens"); do
	"$symhub" token new "user$i" read 2>&1 >/dev/null | tail -n 1 \
	    >>"$tmp/tokens"
done
tok=$("$symhub" token new reader read 2>>"$tmp/tokens.err") ||
	die "symhub token new"
tail -n 1 "$tmp/tokens.err" >>"$tmp/tokens"
# A right token that may not read: it matches an entry, is answered 403,
# as short as the 401 of a wrong one, so that the two times compare.
tok_up=$("$symhub" token new pusher upload 2>>"$tmp/tokens.err") ||
	die "symhub token new"
tail -n 1 "$tmp/tokens.err" >>"$tmp/tokens"

# start NAME STORE ARGS...: a symhubd on a free port; sets port_NAME.
start() {
	local name=$1 store=$2 port n
	shift 2
	port=$(free_port) || die "no free port"
	"$symhubd" -p "$port" -d "$store" -F "$tmp/scan" \
	    --log-file "$tmp/$name.log" "$@" >"$tmp/$name.out" 2>&1 &
	pids+=($!)
	for n in $(seq 200); do
		[ "$(status_of "$(url "$port" "$id")" -H \
		    "Authorization: Bearer $tok")" = 200 ] && break
		curl -s -o /dev/null -H "Authorization: Bearer $tok" \
		    "$(url "$port" "$id")"
		sleep 0.1
	done
	eval "port_$name=$port"
}
start open "$tmp/s1"
start auth "$tmp/s2" --tokens "$tmp/tokens" --read-auth
# shellcheck disable=SC2154 # set by start
for p in "$port_open" "$port_auth"; do
	[ "$(curl -s -o /dev/null -w '%{http_code}' -H \
	    "Authorization: Bearer $tok" "$(url "$p" "$id")")" = 200 ] ||
		die "port $p does not serve the fixture"
done
[ "$(status_of "$(url "$port_auth" "$id")")" = 401 ] ||
	die "--read-auth does not refuse a request without a token"

pid_open=${pids[0]}
pid_auth=${pids[1]}
# cpu_ticks PID: the process's user and system time, in clock ticks.  The
# server's CPU time a request is what the check adds, whatever else the
# machine runs (req/s on a shared machine mostly measures the others).
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}
hz=$(getconf CLK_TCK)

cat >"$tmp/auth.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $tok"
LUA
for r in $(seq 1 "$rounds"); do
	for name in open auth; do
		eval "p=\$port_$name"
		a=()
		[ "$name" = auth ] && a=(-s "$tmp/auth.lua")
		run_wrk "$tmp/wrk.$name.$r" -t "$wrk_threads" -c "$conns" \
		    -d 2s "${a[@]}" "$(url "$p" "$id")" >/dev/null	# warm
		eval "pid=\$pid_$name"
		t0=$(cpu_ticks "$pid")
		run_wrk "$tmp/wrk.$name.$r" -t "$wrk_threads" -c "$conns" \
		    -d "${seconds}s" --latency "${a[@]}" "$(url "$p" "$id")"
		t1=$(cpu_ticks "$pid")
		parse_wrk "$tmp/wrk.$name.$r" 200
		[ "$bad" = 0 ] || die "$name round $r: $bad bad answers"
		n=$(awk '/ requests in / { print $1 }' "$tmp/wrk.$name.$r")
		us=$(awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$n" \
		    'BEGIN { printf "%.2f", t * 1e6 / hz / n }')
		echo "$rps $p50 $p99" >>"$tmp/rows.$name"
		echo "$us" >>"$tmp/cpu.$name"
	done
done
read -r rps_open p50_open p99_open < <(median_row <"$tmp/rows.open")
read -r rps_auth p50_auth p99_auth < <(median_row <"$tmp/rows.auth")
cpu_open=$(median_row <"$tmp/cpu.open")
cpu_auth=$(median_row <"$tmp/cpu.auth")
cost=$(awk -v a="$cpu_open" -v b="$cpu_auth" \
    'BEGIN { printf "%.1f", (b - a) * 100 / a }')
rcost=$(awk -v a="$rps_open" -v b="$rps_auth" \
    'BEGIN { printf "%.1f", (a - b) * 100 / a }')

near=${tok:0:63}$( [ "${tok:63}" = 0 ] && echo 1 || echo 0)
far=$(echo "$tok" | tr 0-9a-f a-f0-9)
timing=$(python3 "$repo/tests/timing.py" "$port_auth" \
    "/buildid/$id/debuginfo" "$timing_n" "$timing_tol" "$near" "$far" \
    "$tok_up")
timing_rc=$?

print_machine "$symhubd" 2>/dev/null | sed -n 1p
echo "warm small hits (~40 KB), $conns connections, median of $rounds x" \
    "${seconds}s:"
printf '  %-28s %10s req/s  p50 %s ms  p99 %s ms\n' \
    "no tokens" "$rps_open" "$p50_open" "$p99_open" \
    "--read-auth ($((ntokens + 2)) tokens)" "$rps_auth" "$p50_auth" \
    "$p99_auth"
echo "server CPU a request: $cpu_open us without tokens, $cpu_auth us" \
    "with --read-auth"
echo "cost of the check: $cost % of the CPU a request (target < 5 %);" \
    "req/s $rcost % (noisy on a shared machine)"
echo "timing, medians of $timing_n (near-miss, far, right but no read):" \
    "$timing (tolerance $timing_tol)"
st=0
awk -v c="$cost" 'BEGIN { exit !(c < 5) }' || { echo "cost: MISSED"; st=1; }
[ "$timing_rc" = 0 ] || { echo "timing: MISSED"; st=1; }
exit "$st"
