#!/bin/bash
# Benchmark symhubd against elfutils' debuginfod and nginx on the same files.
#
# usage: tests/bench/bench.sh [BUILDDIR]
#
# BUILDDIR is the build tree (default: the repository this script is
# in). Both servers index one scan directory holding a small
# fixture's debuginfo (~40 KB, built here) and libc's (~4 MB, from
# libc6-dbg); nginx serves the same two files from disk laid out as
# buildid/ID/debuginfo (sendfile, an access log, a 404 page: the practical
# limit of serving a file over HTTP on this machine).  wrk then asks each
# server for a small hit, a large hit and a 404 in turn, and the script
# prints a table and a verdict against the targets: small hits and 404s at
# least 5x debuginfod's req/s, the large file at least 1x; small and large
# hits at least 1.0x nginx's.
#
# Not part of `make check`: it takes a few minutes and its numbers depend on
# the machine. Environment:
#   BENCH_SECONDS=10      length of each timed wrk run
#   BENCH_ROUNDS=3        timed runs per case and server; the median counts
#   BENCH_WARMUP=2        length of the wrk warm-up before each run (0: none)
#   BENCH_CONNS=32        wrk connections for the small hit and the 404
#   BENCH_CONNS_LARGE=8   wrk connections for the large hit
#   BENCH_WRK_THREADS=2   wrk threads
#   BENCH_READY_TIMEOUT=120  seconds to wait for both servers to index
#   SYMHUBD_THREADS       pass --threads N to symhubd (default: its own)
#   BENCH_KEEP=1          keep the temporary directory (logs, wrk output)
# Exits 0 when every target is met, 1 when one is missed or on an error,
# 77 when a tool is missing, as the tests do.

set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
symhubd=$builddir/src/symhubd/symhubd

seconds=${BENCH_SECONDS:-10}
warmup=${BENCH_WARMUP:-2}
conns=${BENCH_CONNS:-32}
conns_large=${BENCH_CONNS_LARGE:-8}
wrk_threads=${BENCH_WRK_THREADS:-2}
ready_timeout=${BENCH_READY_TIMEOUT:-120}
rounds=${BENCH_ROUNDS:-3}

bench_name=bench
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"

check_numbers "$seconds" "$warmup" "$conns" "$conns_large" "$wrk_threads" \
    "$ready_timeout" "$rounds"
if [ "$seconds" = 0 ] || [ "$rounds" = 0 ]; then
	die "BENCH_SECONDS and BENCH_ROUNDS must be positive"
fi

[ -x "$symhubd" ] ||
	die "no $symhubd; build first, or pass the build directory"
for tool in debuginfod wrk curl gcc objcopy readelf nginx; do
	command -v "$tool" >/dev/null || skip "$tool not installed"
done

# Neither server may federate: a 404 must be answered locally.
unset DEBUGINFOD_URLS

bench_setup symhub-bench

# --- Fixtures -------------------------------------------------------------

scan=$tmp/scan
mkdir -p "$scan"

gen_fixture >"$tmp/fixture.c"
gcc -g -O0 -Wl,--build-id -o "$tmp/fixture" "$tmp/fixture.c" ||
	die "cannot compile the fixture"
small=$scan/fixture.debug
objcopy --only-keep-debug "$tmp/fixture" "$small" ||
	die "objcopy --only-keep-debug failed"
small_id=$(build_id "$small")
[ -n "$small_id" ] || die "fixture has no build-id"

find_libc_debug
large=$scan/libc.debug
ln "$libc_debug" "$large" 2>/dev/null || cp "$libc_debug" "$large" ||
	die "cannot copy $libc_debug"

# Valid syntax, unknown to both servers.
missing_id=0123456789abcdef0123456789abcdef01234567

# --- Servers --------------------------------------------------------------

port_df=$(free_port) || die "no free port"
port_sh=$(free_port) || die "no free port"
[ "$port_df" != "$port_sh" ] || port_sh=$(free_port) || die "no free port"
port_ng=$(free_port) || die "no free port"
while [ "$port_ng" = "$port_df" ] || [ "$port_ng" = "$port_sh" ]; do
	port_ng=$(free_port) || die "no free port"
done

# elfutils' debuginfod: scan once (-t 0), no grooming (-g 0), default
# connection handling (libmicrohttpd, thread per connection), not verbose.
# It binds every interface, not only 127.0.0.1: it has no option to narrow
# that. Its log goes to a file so the terminal is not in the way.
debuginfod -F -t 0 -g 0 -p "$port_df" -d "$tmp/db.sqlite" "$scan" \
	>"$tmp/debuginfod.log" 2>&1 &
pid_df=$!
pids+=("$pid_df")

sh_args=(-p "$port_sh" -d "$tmp/store" -F "$scan" -t 0
	--log-file "$tmp/symhubd.log")
[ -n "${SYMHUBD_THREADS:-}" ] && sh_args+=(--threads "$SYMHUBD_THREADS")
"$symhubd" "${sh_args[@]}" >"$tmp/symhubd.out" 2>&1 &
pid_sh=$!
pids+=("$pid_sh")

# nginx: the same files as buildid/ID/debuginfo, one worker a CPU,
# sendfile, keep-alive, an access log as the others keep, on 127.0.0.1.
ng=$tmp/nginx
mkdir -p "$ng/logs" "$ng/www/buildid/$small_id" "$ng/www/buildid/$libc_id"
ln "$small" "$ng/www/buildid/$small_id/debuginfo" 2>/dev/null ||
	cp "$small" "$ng/www/buildid/$small_id/debuginfo"
ln "$large" "$ng/www/buildid/$libc_id/debuginfo" 2>/dev/null ||
	cp "$large" "$ng/www/buildid/$libc_id/debuginfo"
{
	# Root may read $tmp (mode 0700); nginx's default user may not.
	[ "$(id -u)" = 0 ] && echo "user root;"
	cat <<NGINX
worker_processes auto;
daemon off;
pid $ng/nginx.pid;
error_log $ng/logs/error.log warn;
events { worker_connections 4096; }
http {
	access_log $ng/logs/access.log;
	sendfile on;
	tcp_nopush on;
	keepalive_requests 1000000;
	default_type application/octet-stream;
	client_body_temp_path $ng/tmp-body;
	proxy_temp_path $ng/tmp-proxy;
	fastcgi_temp_path $ng/tmp-fastcgi;
	uwsgi_temp_path $ng/tmp-uwsgi;
	scgi_temp_path $ng/tmp-scgi;
	server {
		listen 127.0.0.1:$port_ng;
		root $ng/www;
	}
}
NGINX
} >"$ng/nginx.conf"
nginx -p "$ng" -c "$ng/nginx.conf" >"$tmp/nginx.out" 2>&1 &
pid_ng=$!
pids+=("$pid_ng")

# Wait until the server answers 200 for both build-ids: it has finished
# indexing what the benchmark asks for.
wait_ready() {
	local name=$1 pid=$2 port=$3 deadline=$((SECONDS + ready_timeout)) id
	for id in "$small_id" "$libc_id"; do
		while [ "$(status_of "http://127.0.0.1:$port/buildid/$id/debuginfo")" != 200 ]; do
			kill -0 "$pid" 2>/dev/null ||
				die "$name exited early; see its log:
$(tail -n 20 "$tmp/$name".* 2>/dev/null)"
			[ "$SECONDS" -lt "$deadline" ] ||
				die "$name has not indexed $id after ${ready_timeout}s"
			sleep 0.2
		done
	done
}

t0=$SECONDS
wait_ready symhubd "$pid_sh" "$port_sh"
t_sh=$((SECONDS - t0))
wait_ready debuginfod "$pid_df" "$port_df"
t_df=$((SECONDS - t0))
wait_ready nginx "$pid_ng" "$port_ng"

# --- Correct answers before timing ----------------------------------------

for server in symhubd:$port_sh debuginfod:$port_df nginx:$port_ng; do
	name=${server%%:*}
	port=${server##*:}
	for pair in "small:$small_id:$small" "large:$libc_id:$large"; do
		IFS=: read -r what id file <<<"$pair"
		curl -sf -o "$tmp/got" "$(url "$port" "$id")" ||
			die "$name: GET $what debuginfo failed"
		cmp -s "$tmp/got" "$file" ||
			die "$name: $what debuginfo differs from $file"
	done
	st=$(status_of "$(url "$port" "$missing_id")")
	[ "$st" = 404 ] || die "$name: unknown build-id answered $st, not 404"
done
rm -f "$tmp/got"

# --- Timing ---------------------------------------------------------------

cases=(small large 404)
declare -A case_id case_conns runs result_rps result_p50 result_p99 result_bad
case_id=([small]=$small_id [large]=$libc_id [404]=$missing_id)
case_conns=([small]=$conns [large]=$conns_large [404]=$conns)

echo "bench: the servers are ready (symhubd ${t_sh}s, debuginfod ${t_df}s);" \
	"timing $rounds rounds x ${#cases[@]} cases x 3 servers x ${seconds}s..." >&2

# Each round alternates which server goes first, so a neighbour's load
# that comes and goes does not always land on the same one.
for round in $(seq "$rounds"); do
	case $((round % 3)) in
	1) order="debuginfod:$port_df symhubd:$port_sh nginx:$port_ng" ;;
	2) order="symhubd:$port_sh nginx:$port_ng debuginfod:$port_df" ;;
	*) order="nginx:$port_ng debuginfod:$port_df symhubd:$port_sh" ;;
	esac
	for c in "${cases[@]}"; do
		for server in $order; do
			name=${server%%:*}
			port=${server##*:}
			u=$(url "$port" "${case_id[$c]}")
			for i in 1 2 3 4 5; do
				curl -s -o /dev/null "$u"
			done
			if [ "$warmup" != 0 ]; then
				wrk -t"$wrk_threads" -c"${case_conns[$c]}" \
					-d"${warmup}s" "$u" >/dev/null 2>&1
			fi
			out=$tmp/wrk-$c-$name-$round.txt
			run_wrk "$out" -t"$wrk_threads" -c"${case_conns[$c]}" \
				-d"${seconds}s" --latency "$u" ||
				die "wrk failed on $u: $(cat "$out")"
			kill -0 "$pid_sh" 2>/dev/null || die "symhubd died during $c"
			kill -0 "$pid_df" 2>/dev/null ||
				die "debuginfod died during $c"
			kill -0 "$pid_ng" 2>/dev/null || die "nginx died during $c"
			parse_wrk "$out" "$c"
			runs[$c-$name]+="$rps $p50 $p99 $bad"$'\n'
		done
	done
done

# Report the run with the median req/s, and every run's errors.
for c in "${cases[@]}"; do
	for name in debuginfod nginx symhubd; do
		read -r rps p50 p99 _ < <(printf '%s' "${runs[$c-$name]}" |
			median_row)
		result_rps[$c-$name]=$rps
		result_p50[$c-$name]=$p50
		result_p99[$c-$name]=$p99
		result_bad[$c-$name]=$(printf '%s' "${runs[$c-$name]}" |
			awk '{ n += $4 } END { print n + 0 }')
	done
done

# --- Report ---------------------------------------------------------------

print_machine "$symhubd"
echo "load:       wrk -t$wrk_threads --latency, ${seconds}s per run after a" \
	"${warmup}s warm-up; -c$conns (small, 404), -c$conns_large (large);" \
	"median of $rounds runs"
echo "note:       wrk and the server share the same $(nproc) CPUs, so wrk's" \
	"own CPU use caps both servers"
echo "files:      small $(stat -c %s "$small") bytes ($small_id)," \
	"large $(stat -c %s "$large") bytes ($libc_id)"
echo "symhubd:    ${sh_args[*]}" | sed "s|$tmp|\$tmp|g"
echo "debuginfod: -F -t 0 -g 0 -p $port_df -d \$tmp/db.sqlite \$tmp/scan" \
	"(listens on every interface)"
echo "nginx:      $(nginx -v 2>&1 | sed 's/^nginx version: //'), worker_processes" \
	"auto, sendfile, tcp_nopush, access_log on"
echo
printf '%-6s %-11s %12s %10s %10s %7s\n' case server req/s 'p50 ms' 'p99 ms' errors
for c in "${cases[@]}"; do
	for name in debuginfod nginx symhubd; do
		printf '%-6s %-11s %12s %10s %10s %7s\n' "$c" "$name" \
			"${result_rps[$c-$name]}" "${result_p50[$c-$name]}" \
			"${result_p99[$c-$name]}" "${result_bad[$c-$name]}"
	done
done
echo
echo "errors: socket errors plus wrong answers (non-2xx for a hit, not-404 for" \
	"404), over all $rounds runs"
echo

declare -A target=([small]=5 [large]=1 [404]=5)
echo "req/s ratio symhubd/debuginfod, against the target:"
fail=0
for c in "${cases[@]}"; do
	line=$(awk -v a="${result_rps[$c-symhubd]}" \
		-v b="${result_rps[$c-debuginfod]}" -v t="${target[$c]}" 'BEGIN {
		if (b <= 0) { print "n/a MISS"; exit }
		r = a / b
		printf "%.2fx %s\n", r, (r >= t ? "PASS" : "MISS")
	}')
	ratio=${line% *}
	verdict=${line##* }
	[ "${result_bad[$c-symhubd]}" = 0 ] || verdict="MISS (errors)"
	[ "$verdict" = PASS ] || fail=1
	printf '  %-6s %8s  (target >= %sx)  %s\n' "$c" "$ratio" \
		"${target[$c]}" "$verdict"
done
declare -A target_ng=([small]=1 [large]=1 [404]=0)
echo "req/s ratio symhubd/nginx (the practical limit), against the target:"
for c in "${cases[@]}"; do
	line=$(awk -v a="${result_rps[$c-symhubd]}" \
		-v b="${result_rps[$c-nginx]}" -v t="${target_ng[$c]}" 'BEGIN {
		if (b <= 0) { print "n/a MISS"; exit }
		r = a / b
		printf "%.2fx %s\n", r, (t == 0 ? "(reported)" : r >= t ? "PASS" : "MISS")
	}')
	ratio=${line% *}
	verdict=${line#* }
	[ "$verdict" = MISS ] && fail=1
	if [ "${target_ng[$c]}" = 0 ]; then
		printf '  %-6s %8s  %s\n' "$c" "$ratio" "$verdict"
	else
		printf '  %-6s %8s  (target >= %sx)  %s\n' "$c" "$ratio" \
			"${target_ng[$c]}" "$verdict"
	fi
done
exit "$fail"
