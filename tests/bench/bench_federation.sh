#!/bin/bash
# Benchmark symhubd as a federating proxy against elfutils' debuginfod as
# one, both in front of the same upstream elfutils debuginfod.
#
# usage: tests/bench/bench_federation.sh [BUILDDIR]
#
# BUILDDIR is the build tree (default: the repository this script is
# in). The upstream indexes a small fixture's debuginfo (~40 KB),
# BENCH_COLD_HITS variants of it (the same program linked with other
# build-ids) and libc's (~4 MB, from libc6-dbg). In front of it:
#   symhubd    -u upstream, a store of its own
#   debuginfod no scan directory, DEBUGINFOD_URLS=upstream, a client cache
# and, for the parked case, a second pair that also asks an upstream that
# never answers (tests/badupstream.py hang). Four measurements:
#   1. cold requests one at a time: the latency each proxy adds to the
#      upstream's for misses (new ids nobody has: the upstream is asked
#      every time) and for cold hits (each variant fetched once);
#   2. warm hits: wrk's req/s on the small file, already fetched;
#   3. the same while BENCH_PARKED misses wait on the hanging upstream,
#      against a twin of that server (same configuration) with nothing
#      parked, the two taking turns;
#   4. BENCH_HERD identical cold requests for libc's debuginfo at once:
#      the time until the last client has it, whether every client got
#      the right bytes, and how often the upstream was asked.
# Then a table and a verdict per target: symhubd adds at most 0.5 ms to a
# cold miss and to a cold hit (p50), serves warm hits at >= 5x
# debuginfod's req/s, keeps >= 90% of them with misses parked, and asks
# the upstream exactly once for the herd.
#
# Not part of `make check`: it takes about five minutes and its numbers
# depend on the machine. Environment:
#   BENCH_MISSES=200        cold misses per path (direct and each proxy)
#   BENCH_COLD_HITS=50      variants of the small file, fetched cold once
#   BENCH_SECONDS=10        length of each timed wrk run
#   BENCH_ROUNDS=3          timed runs per wrk case and server; the median
#                           counts
#   BENCH_CHUNKS=10         the cold requests are sent in this many chunks,
#                           the paths taking turns
#   BENCH_WARMUP=2          length of the wrk warm-up before each run
#   BENCH_CONNS=32          wrk connections
#   BENCH_WRK_THREADS=2     wrk threads
#   BENCH_PARKED=500        requests parked on the hanging upstream
#   BENCH_HANG_TIMEOUT=120  first-byte timeout for the hanging upstream
#                           (symhubd), DEBUGINFOD_TIMEOUT (debuginfod)
#   BENCH_HERD=1000         identical cold requests fired at once
#   BENCH_HERD_TIMEOUT=120  seconds a herd client waits at most
#   BENCH_READY_TIMEOUT=120 seconds to wait for the servers to be ready
#   SYMHUBD_THREADS         pass --threads N to symhubd (default: its own)
#   BENCH_KEEP=1            keep the temporary directory (logs, outputs)
# Exits 0 when every target is met, 1 when one is missed or on an error,
# 77 when a tool is missing, as the tests do.

set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
symhubd=$builddir/src/symhubd/symhubd
badupstream=$repo/tests/badupstream.py

misses=${BENCH_MISSES:-200}
cold_hits=${BENCH_COLD_HITS:-50}
seconds=${BENCH_SECONDS:-10}
rounds=${BENCH_ROUNDS:-3}
chunks=${BENCH_CHUNKS:-10}
warmup=${BENCH_WARMUP:-2}
conns=${BENCH_CONNS:-32}
wrk_threads=${BENCH_WRK_THREADS:-2}
parked=${BENCH_PARKED:-500}
hang_timeout=${BENCH_HANG_TIMEOUT:-120}
herd=${BENCH_HERD:-1000}
herd_timeout=${BENCH_HERD_TIMEOUT:-120}
ready_timeout=${BENCH_READY_TIMEOUT:-120}

bench_name=bench_federation
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"

check_numbers "$misses" "$cold_hits" "$seconds" "$rounds" "$chunks" \
    "$warmup" "$conns" "$wrk_threads" "$parked" "$hang_timeout" "$herd" \
    "$herd_timeout" "$ready_timeout"
for n in "$misses" "$cold_hits" "$seconds" "$rounds" "$chunks" "$parked" \
    "$herd" "$hang_timeout"; do
	[ "$n" -gt 0 ] || die "every count and duration must be positive"
done
if [ "$misses" -lt "$chunks" ] || [ "$cold_hits" -lt "$chunks" ]; then
	die "BENCH_MISSES and BENCH_COLD_HITS must be at least BENCH_CHUNKS"
fi

[ -x "$symhubd" ] ||
	die "no $symhubd; build first, or pass the build directory"
[ -r "$badupstream" ] || die "no $badupstream"
for tool in debuginfod wrk curl gcc objcopy readelf python3 ss; do
	command -v "$tool" >/dev/null || skip "$tool not installed"
done

# The herd and the parked requests need a descriptor per connection.
nofile=$(ulimit -n)
if [ "$nofile" != unlimited ] && [ "$nofile" -lt $((herd * 2 + 1024)) ]; then
	ulimit -n $((herd * 2 + 1024)) 2>/dev/null ||
		skip "cannot raise the open files limit to $((herd * 2 + 1024))"
fi

# Each server is told its upstreams explicitly.
unset DEBUGINFOD_URLS
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

bench_setup symhub-bench-fed

# --- Fixtures -------------------------------------------------------------

scan=$tmp/scan
mkdir -p "$scan" "$tmp/var"

gen_fixture >"$tmp/fixture.c"
gcc -g -O0 -c -o "$tmp/fixture.o" "$tmp/fixture.c" ||
	die "cannot compile the fixture"
gcc -Wl,--build-id -o "$tmp/fixture" "$tmp/fixture.o" ||
	die "cannot link the fixture"
small=$scan/fixture.debug
objcopy --only-keep-debug "$tmp/fixture" "$small" ||
	die "objcopy --only-keep-debug failed"
small_id=$(build_id "$small")
[ -n "$small_id" ] || die "fixture has no build-id"

# The cold hits: the same object linked with chosen build-ids, so that
# each is a file of its own to every cache.
var_id() { printf 'c01d%036x' "$1"; }
for i in $(seq "$cold_hits"); do
	id=$(var_id "$i")
	gcc -Wl,--build-id=0x"$id" -o "$tmp/var/v$i" "$tmp/fixture.o" &&
		objcopy --only-keep-debug "$tmp/var/v$i" "$scan/v$i.debug" ||
		die "cannot build variant $i"
	[ "$(build_id "$scan/v$i.debug")" = "$id" ] ||
		die "variant $i does not have build-id $id"
	echo "$id $(stat -c %s "$scan/v$i.debug")"
done >"$tmp/var-sizes" || exit 1
rm -rf "${tmp:?}/var"

find_libc_debug
large=$scan/libc.debug
ln "$libc_debug" "$large" 2>/dev/null || cp "$libc_debug" "$large" ||
	die "cannot copy $libc_debug"
large_size=$(stat -c %s "$large")

# Ids nobody has: T is the path (0 direct, 1 symhubd, 2 debuginfod, 8 and
# 9 the parked ones), I the request.
miss_id() { printf 'dead%02x%034x' "$1" "$2"; }

# --- Servers --------------------------------------------------------------

ports=()
for i in $(seq 100); do
	[ "${#ports[@]}" -lt 10 ] || break
	p=$(free_port) || die "no free port"
	case " ${ports[*]} " in *" $p "*) ;; *) ports+=("$p") ;; esac
done
[ "${#ports[@]}" = 10 ] || die "no 10 distinct free ports"
port_up=${ports[0]} port_hang=${ports[1]}
port_d1=${ports[2]} port_d2=${ports[3]} port_d2i=${ports[4]}
port_d3=${ports[5]}
port_s1=${ports[6]} port_s2=${ports[7]} port_s2i=${ports[8]}
port_s3=${ports[9]}

declare -A pid
start() { # NAME COMMAND...: in the background, log to $tmp/NAME.log
	local name=$1
	shift
	"$@" >"$tmp/$name.log" 2>&1 &
	pids+=($!)
	pid[$name]=$!
}

# The upstream: scan once, no grooming, no upstream of its own.
start up debuginfod -F -t 0 -g 0 -p "$port_up" -d "$tmp/db-up.sqlite" "$scan"
start hang python3 "$badupstream" hang "$port_hang"

# The federating debuginfods: no scan directory, default connection
# handling (-C not given: a thread per connection), a client cache each.
mkdir -p "$tmp/cache-d1" "$tmp/cache-d2" "$tmp/cache-d2i" "$tmp/cache-d3"
up_url=http://127.0.0.1:$port_up
hang_url=http://127.0.0.1:$port_hang
start d1 env DEBUGINFOD_URLS="$up_url" DEBUGINFOD_CACHE_PATH="$tmp/cache-d1" \
	debuginfod -p "$port_d1" -d "$tmp/db-d1.sqlite" -t 0 -g 0
for name in d2 d2i; do
	port=port_$name
	start "$name" env DEBUGINFOD_URLS="$up_url $hang_url" \
		DEBUGINFOD_CACHE_PATH="$tmp/cache-$name" \
		DEBUGINFOD_TIMEOUT="$hang_timeout" \
		debuginfod -p "${!port}" -d "$tmp/db-$name.sqlite" -t 0 -g 0
done
start d3 env DEBUGINFOD_URLS="$up_url" DEBUGINFOD_CACHE_PATH="$tmp/cache-d3" \
	debuginfod -p "$port_d3" -d "$tmp/db-d3.sqlite" -t 0 -g 0

sh_common=()
[ -n "${SYMHUBD_THREADS:-}" ] && sh_common+=(--threads "$SYMHUBD_THREADS")
s1_args=(-p "$port_s1" -d "$tmp/store1" -u "$up_url"
	--log-file "$tmp/symhubd1.log" "${sh_common[@]}")
s2_args=(-u "$up_url"
	-u "$hang_url first-byte-timeout=$hang_timeout connect-timeout=10"
	--connections $((parked * 2 + 1024)) "${sh_common[@]}")
s3_args=(-p "$port_s3" -d "$tmp/store3" -u "$up_url"
	--connections $((herd * 2 + 1024)) --log-file "$tmp/symhubd3.log"
	"${sh_common[@]}")
start s1 "$symhubd" "${s1_args[@]}"
start s2 "$symhubd" -p "$port_s2" -d "$tmp/store2" "${s2_args[@]}" \
	--log-file "$tmp/symhubd2.log"
start s2i "$symhubd" -p "$port_s2i" -d "$tmp/store2i" "${s2_args[@]}" \
	--log-file "$tmp/symhubd2i.log"
start s3 "$symhubd" "${s3_args[@]}"

alive() { # NAME...: die if one has exited
	local name
	for name; do
		kill -0 "${pid[$name]}" 2>/dev/null ||
			die "$name exited; see its log:
$(tail -n 20 "$tmp/$name.log" "$tmp/symhubd${name#s}.log" 2>/dev/null)"
	done
}

# wait_for SECONDS COMMAND...: until the command succeeds; 1 on timeout.
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.2
	done
}

metric() { # PORT NAME{LABELS}: its value, or nothing
	curl -s --max-time 10 "http://127.0.0.1:$1/metrics" 2>/dev/null |
		awk -v m="$2" '$1 == m { print $2; exit }'
}

up_fetches() {
	local v
	v=$(metric "$port_up" \
		'http_responses_transfer_bytes_count{code="200",type="debuginfo"}')
	echo "${v:-0}"
}

hang_conns() {
	ss -Htn state established "( sport = :$port_hang )" 2>/dev/null | wc -l
}

threads_of() { # PID
	find "/proc/$1/task" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}

# http_workers PID: debuginfod's HTTP threads, as "all busy": libmicrohttpd
# names them MHD-worker, and debuginfod renames one mhd-buildid while it
# handles a /buildid request.
http_workers() {
	cat "/proc/$1"/task/*/comm 2>/dev/null | awk '
		/^MHD-worker$|^mhd-/ { n++ } /^mhd-buildid$/ { b++ }
		END { print n + 0, b + 0 }'
}

# The upstream is ready when it answers 200 for every file.
{
	for id in "$small_id" "$libc_id" $(awk '{ print $1 }' "$tmp/var-sizes")
	do
		echo "url = \"$(url "$port_up" "$id")\""
		echo 'output = "/dev/null"'
	done
} >"$tmp/all.cfg"
nfiles=$((cold_hits + 2))
# shellcheck disable=SC2317 # the readiness checks are called by wait_for
up_ready() {
	alive up
	[ "$(curl -s -K "$tmp/all.cfg" -w '%{http_code}\n' 2>/dev/null |
		grep -c '^200$')" = "$nfiles" ]
}
# shellcheck disable=SC2317
port_ready() { # NAME PORT
	alive "$1"
	[ "$(status_of "http://127.0.0.1:$2/metrics")" = 200 ]
}
# shellcheck disable=SC2317
hang_ready() {
	alive hang
	grep -q '^ready$' "$tmp/hang.log"
}
t0=$SECONDS
wait_for "$ready_timeout" up_ready ||
	die "the upstream has not indexed $nfiles files after ${ready_timeout}s"
wait_for "$ready_timeout" hang_ready || die "badupstream.py did not start"
for s in s1:$port_s1 s2:$port_s2 s2i:$port_s2i s3:$port_s3 d1:$port_d1 \
    d2:$port_d2 d2i:$port_d2i d3:$port_d3; do
	wait_for "$ready_timeout" port_ready "${s%%:*}" "${s##*:}" ||
		die "${s%%:*} does not answer on port ${s##*:}"
done
echo "$bench_name: servers ready after $((SECONDS - t0))s" >&2

# --- Correct answers before timing ----------------------------------------

for server in symhubd:$port_s1 debuginfod:$port_d1; do
	name=${server%%:*}
	port=${server##*:}
	curl -sf -o "$tmp/got" "$(url "$port" "$small_id")" ||
		die "$name: GET small debuginfo failed"
	cmp -s "$tmp/got" "$small" ||
		die "$name: small debuginfo differs from $small"
	st=$(status_of "$(url "$port" "$(miss_id 7 "$port")")")
	[ "$st" = 404 ] || die "$name: unknown build-id answered $st, not 404"
done
rm -f "$tmp/got"

# --- 1. Cold requests, one at a time ---------------------------------------

# One curl per chunk, requests one after the other on one connection; the
# first, a miss of its own, is not counted: it opens the connections (the
# client's, and the proxy's to the upstream where it keeps one).
paths=(direct symhubd debuginfod)
declare -A path_port=([direct]=$port_up [symhubd]=$port_s1
	[debuginfod]=$port_d1)
declare -A path_num=([direct]=0 [symhubd]=1 [debuginfod]=2)
echo "$bench_name: 1. cold requests: $misses misses and $cold_hits cold" \
	"hits per path..." >&2
for chunk in $(seq "$chunks"); do
	# Each path goes first, second and last in turn.
	case $((chunk % 6)) in
	0) order="direct symhubd debuginfod" ;;
	1) order="symhubd debuginfod direct" ;;
	2) order="debuginfod direct symhubd" ;;
	3) order="debuginfod symhubd direct" ;;
	4) order="symhubd direct debuginfod" ;;
	5) order="direct debuginfod symhubd" ;;
	esac
	for kind in miss hit; do
		if [ "$kind" = miss ]; then
			lo=$(((chunk - 1) * misses / chunks))
			hi=$((chunk * misses / chunks))
		else
			lo=$(((chunk - 1) * cold_hits / chunks))
			hi=$((chunk * cold_hits / chunks))
		fi
		for p in $order; do
			port=${path_port[$p]}
			n=${path_num[$p]}
			{
				echo "url = \"$(url "$port" \
					"$(printf 'face%02x%02x%02x%030x' "$n" \
					"$chunk" "${#kind}" 0)")\""
				echo 'output = "/dev/null"'
				for i in $(seq "$lo" $((hi - 1))); do
					if [ "$kind" = miss ]; then
						id=$(miss_id "$n" "$i")
					else
						id=$(var_id $((i + 1)))
					fi
					echo "url = \"$(url "$port" "$id")\""
					echo 'output = "/dev/null"'
				done
			} >"$tmp/cold.cfg"
			curl -s --max-time 30 -K "$tmp/cold.cfg" -w \
				'%{http_code} %{size_download} %{time_total} %{url_effective}\n' \
				2>/dev/null | tail -n +2 >>"$tmp/cold-$kind-$p.txt"
		done
	done
	alive up s1 d1
done

# pctl FILE: p50 and p90 of the third column (seconds), in ms.
pctl() {
	awk '{ print $3 }' "$1" | sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "? ?"; exit }
		i50 = int((NR * 50 + 99) / 100); i90 = int((NR * 90 + 99) / 100)
		printf "%.3f %.3f\n", v[i50] * 1000, v[i90] * 1000 }'
}
# cold_bad FILE KIND: answers that are not 404 (miss), or not 200 with the
# variant's size (hit), plus requests that got no answer line at all.
cold_bad() {
	local want=$3
	awk -v kind="$2" -v want="$want" 'NR == FNR { sz[$1] = $2; next }
		{
			n++
			split($4, p, "/")
			if (kind == "miss" && $1 != 404) bad++
			if (kind == "hit" && ($1 != 200 || $2 != sz[p[5]])) bad++
		}
		END { print bad + (want - n) }' "$tmp/var-sizes" "$1"
}
declare -A cold_p50 cold_p90 cold_n cold_err
for kind in miss hit; do
	[ "$kind" = miss ] && want=$misses || want=$cold_hits
	for p in "${paths[@]}"; do
		f=$tmp/cold-$kind-$p.txt
		touch "$f"
		read -r "cold_p50[$kind-$p]" "cold_p90[$kind-$p]" < <(pctl "$f")
		cold_n[$kind-$p]=$(wc -l <"$f")
		cold_err[$kind-$p]=$(cold_bad "$f" "$kind" "$want")
	done
done

# --- 2. and 3. Warm hits with wrk ------------------------------------------

# wrk_case NAME PORT KEY [WRK-ARGS...]: one timed run after a warm-up;
# appends "rps p50 p99 bad" to runs[KEY].
declare -A runs
wrk_case() {
	local name=$1 port=$2 key=$3 u out i
	shift 3
	u=$(url "$port" "$small_id")
	for i in 1 2 3 4 5; do
		curl -s --max-time 5 -o /dev/null "$u" || break
	done
	if [ "$warmup" != 0 ]; then
		wrk -t"$wrk_threads" -c"$conns" -d"${warmup}s" "$@" "$u" \
			>/dev/null 2>&1
	fi
	out=$tmp/wrk-$key-$(printf '%s' "${runs[$key]:-}" | wc -l).txt
	run_wrk "$out" -t"$wrk_threads" -c"$conns" -d"${seconds}s" --latency \
		"$@" "$u" || die "wrk failed on $u: $(cat "$out")"
	alive "$name"
	parse_wrk "$out" small
	# wrk counts no error for a request that never got an answer.
	[ "$(awk '/ requests in / { print $1 }' "$out")" = 0 ] && bad=stalled
	runs[$key]+="$rps $p50 $p99 $bad"$'\n'
}

echo "$bench_name: 2. warm hits: $rounds rounds x 2 servers x" \
	"${seconds}s..." >&2
for round in $(seq "$rounds"); do
	if [ $((round % 2)) = 1 ]; then
		order="d1:debuginfod s1:symhubd"
	else
		order="s1:symhubd d1:debuginfod"
	fi
	for s in $order; do
		name=${s%%:*}
		port=port_$name
		wrk_case "$name" "${!port}" "warm-${s##*:}"
	done
done

# The parker: opens N connections, sends a request for a new unknown id
# on each, and keeps them open until killed; STATUS says how many it sent
# and how many got an answer (or were closed) meanwhile.
cat >"$tmp/park.py" <<'EOF'
import os, selectors, socket, sys

host, port, n, prefix, status = (sys.argv[1], int(sys.argv[2]),
                                 int(sys.argv[3]), sys.argv[4], sys.argv[5])


def report(sent, answered):
    with open(status + ".new", "w") as f:
        f.write("%d %d\n" % (sent, answered))
    os.replace(status + ".new", status)


sel = selectors.DefaultSelector()
for i in range(n):
    s = socket.create_connection((host, port), timeout=30)
    s.sendall(("GET /buildid/%s%08x/debuginfo HTTP/1.1\r\nHost: %s:%d\r\n"
               "\r\n" % (prefix, i, host, port)).encode("ascii"))
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
answered = 0
report(n, 0)
while True:
    for key, _ in sel.select(0.5):
        sel.unregister(key.fileobj)
        answered += 1
    report(n, answered)
EOF

# shellcheck disable=SC2317 # called by wait_for
park_sent() { # STATUS PID: the parker has sent all, or has died
	[ -s "$1" ] || ! kill -0 "$2" 2>/dev/null
}
# shellcheck disable=SC2317 # called by wait_for
many_hung() { [ "$(hang_conns)" -ge "$parked" ]; }

# m3 SERVER NAME T WAIT: BENCH_PARKED misses parked on the hanging
# upstream at NAME (ids of path T; WAIT seconds at most for all of them to
# reach it), then runs on NAME and on its idle twin NAMEi in turn.  Both
# are stopped at the end, so that the next server's count of connections
# to the hanging upstream is its own.
declare -A park_state
m3() {
	local server=$1 name=$2 t=$3 wait=$4 round ppid sent ans inflight
	local port=port_$2 twin=port_$2i order s
	echo "$bench_name: 3. $server: $parked parked, then $rounds rounds" \
		"x idle twin and parked..." >&2
	# Warm both first: the fetch of the small file asks the hanging
	# upstream too, and that connection must be gone before counting.
	curl -s -o /dev/null --max-time 10 "$(url "${!port}" "$small_id")"
	curl -s -o /dev/null --max-time 10 "$(url "${!twin}" "$small_id")"
	park_state[$server-threads-idle]=$(threads_of "${pid[$name]}")
	python3 "$tmp/park.py" 127.0.0.1 "${!port}" "$parked" \
		"$(printf 'beef%02x%026x' "$t" 0)" "$tmp/park-$server" \
		>"$tmp/park-$server.log" 2>&1 &
	ppid=$!
	pids+=("$ppid")
	wait_for 60 park_sent "$tmp/park-$server" "$ppid"
	read -r sent ans 2>/dev/null <"$tmp/park-$server" || sent=0
	[ "$sent" = "$parked" ] ||
		die "$server: could not send $parked requests:
$(tail -n 5 "$tmp/park-$server.log")"
	# Parked: every miss holds a connection to the hanging upstream.
	wait_for "$wait" many_hung
	park_state[$server-hung-before]=$(hang_conns)
	inflight=
	[ "$server" = symhubd ] &&
		inflight=$(metric "${!port}" symhub_fetch_inflight)
	park_state[$server-inflight-before]=${inflight:--}
	park_state[$server-threads-parked]=$(threads_of "${pid[$name]}")
	park_state[$server-workers]=$(http_workers "${pid[$name]}")
	for round in $(seq "$rounds"); do
		if [ $((round % 2)) = 1 ]; then
			order="${name}i:idle $name:parked"
		else
			order="$name:parked ${name}i:idle"
		fi
		for s in $order; do
			port=port_${s%%:*}
			wrk_case "${s%%:*}" "${!port}" "${s##*:}-$server" \
				--timeout 5s
		done
	done
	read -r sent ans <"$tmp/park-$server"
	park_state[$server-answered]=$ans
	park_state[$server-hung-after]=$(hang_conns)
	inflight=
	port=port_$name
	[ "$server" = symhubd ] &&
		inflight=$(metric "${!port}" symhub_fetch_inflight)
	park_state[$server-inflight-after]=${inflight:--}
	kill "$ppid" "${pid[$name]}" "${pid[${name}i]}" 2>/dev/null
	wait "$ppid" "${pid[$name]}" "${pid[${name}i]}" 2>/dev/null
}
m3 symhubd s2 8 30
# debuginfod parks far fewer (see the report): no long wait for the rest.
m3 debuginfod d2 9 5
kill "${pid[hang]}" 2>/dev/null
wait "${pid[hang]}" 2>/dev/null

declare -A w_rps w_p50 w_p99 w_bad
for key in warm-debuginfod warm-symhubd idle-symhubd parked-symhubd \
    idle-debuginfod parked-debuginfod; do
	read -r w_rps[$key] w_p50[$key] w_p99[$key] _ < <(printf '%s' \
		"${runs[$key]}" | median_row)
	w_bad[$key]=$(printf '%s' "${runs[$key]}" | awk '
		$4 == "stalled" { s++; next } { n += $4 }
		END { print s ? "stalled" : n + 0 }')
done

# --- 4. The herd ------------------------------------------------------------

# curl runs at most 300 transfers of one command line in parallel: the
# herd is split over several, started together.
declare -A h_wall h_p50 h_max h_ok h_bad h_fetches
herd_run() { # NAME PORT SERVER
	local name=$1 port=$2 server=$3 d=$tmp/herd-$3 procs i k before
	local t_start t_end hp=() every
	procs=$(((herd + 249) / 250))
	every=$(((herd + 9) / 10))
	mkdir -p "$d"
	for i in $(seq 0 $((herd - 1))); do
		k=$((i % procs))
		echo "url = \"$(url "$port" "$libc_id")\"" >>"$d/cfg.$k"
		if [ $((i % every)) = 0 ]; then
			echo "output = \"$d/body.$i\"" >>"$d/cfg.$k"
		else
			echo 'output = "/dev/null"' >>"$d/cfg.$k"
		fi
	done
	before=$(up_fetches)
	t_start=$(date +%s.%N)
	for k in $(seq 0 $((procs - 1))); do
		curl -s --parallel --parallel-immediate --parallel-max 250 \
			--max-time "$herd_timeout" -K "$d/cfg.$k" \
			-w '%{http_code} %{size_download} %{time_total}\n' \
			>"$d/out.$k" 2>/dev/null &
		hp+=($!)
		pids+=($!)
	done
	for k in "${hp[@]}"; do
		wait "$k"
	done
	t_end=$(date +%s.%N)
	alive "$name" up
	h_fetches[$server]=$(($(up_fetches) - before))
	h_wall[$server]=$(awk -v a="$t_start" -v b="$t_end" \
		'BEGIN { printf "%.2f", b - a }')
	cat "$d"/out.* >"$d/all"
	h_ok[$server]=$(awk -v size="$large_size" \
		'$1 == 200 && $2 == size { n++ } END { print n + 0 }' "$d/all")
	read -r "h_p50[$server]" "h_max[$server]" < <(awk '{ print $3 }' \
		"$d/all" | sort -g | awk '{ v[NR] = $1 } END {
			printf "%.2f %.2f\n", v[int((NR + 1) / 2)], v[NR] }')
	h_bad[$server]=$((herd - h_ok[$server]))
	h_kept=0
	for i in "$d"/body.*; do
		h_kept=$((h_kept + 1))
		cmp -s "$i" "$large" || h_bad[$server]=$((h_bad[$server] + 1))
	done
	rm -f "$d"/body.*
}
echo "$bench_name: 4. $herd identical cold requests, symhubd..." >&2
herd_run s3 "$port_s3" symhubd
h_coalesced=$(metric "$port_s3" symhub_fetch_coalesced_total)
h_jobs=$(metric "$port_s3" symhub_fetch_jobs_total)
echo "$bench_name: 4. $herd identical cold requests, debuginfod..." >&2
herd_run d3 "$port_d3" debuginfod

# --- Report -----------------------------------------------------------------

print_machine "$symhubd"
echo "parameters: $misses cold misses and $cold_hits cold hits per path," \
	"in $chunks chunks; wrk -t$wrk_threads -c$conns --latency," \
	"${seconds}s per run after a ${warmup}s warm-up, median of $rounds" \
	"runs (--timeout 5s in 3.); $parked parked; herd of $herd"
echo "note:       clients, proxies and the upstream share the same $(nproc)" \
	"CPUs"
echo "files:      small $(stat -c %s "$small") bytes ($small_id), $cold_hits" \
	"variants of it, large $large_size bytes ($libc_id)"
echo "upstream:   debuginfod -F -t 0 -g 0 -p $port_up -d \$tmp/db-up.sqlite" \
	"\$tmp/scan"
echo "symhubd:    ${s1_args[*]}" | sed "s|$tmp|\$tmp|g"
echo "debuginfod: DEBUGINFOD_URLS=$up_url debuginfod -p $port_d1" \
	"-d \$tmp/db-d1.sqlite -t 0 -g 0 (no -C; client cache" \
	"\$tmp/cache-d1)"
echo "parked:     symhubd -p PORT -d STORE ${s2_args[*]}" |
	sed "s|$tmp|\$tmp|g"
echo "            debuginfod with DEBUGINFOD_URLS='$up_url $hang_url'" \
	"DEBUGINFOD_TIMEOUT=$hang_timeout; $hang_url is badupstream.py hang;" \
	"two of each: one parked, its idle twin"
echo "herd:       fresh symhubd (${s3_args[*]})," | sed "s|$tmp|\$tmp|g"
echo "            fresh debuginfod as above; $(((herd + 249) / 250)) curl" \
	"--parallel --parallel-immediate processes"
echo
echo "1. cold requests one at a time (curl, one connection), ms"
printf '%-5s %-11s %5s %9s %9s %11s %7s\n' case path n p50 p90 'added p50' \
	errors
for kind in miss hit; do
	for p in "${paths[@]}"; do
		if [ "$p" = direct ]; then
			added=-
		else
			added=$(awk -v a="${cold_p50[$kind-$p]}" \
				-v b="${cold_p50[$kind-direct]}" \
				'BEGIN { printf "%+.3f", a - b }')
		fi
		printf '%-5s %-11s %5s %9s %9s %11s %7s\n' "$kind" "$p" \
			"${cold_n[$kind-$p]}" "${cold_p50[$kind-$p]}" \
			"${cold_p90[$kind-$p]}" "$added" "${cold_err[$kind-$p]}"
	done
done
echo
echo "2. and 3. warm hits on the small file (wrk)"
printf '%-11s %-28s %11s %9s %9s %7s\n' server case req/s 'p50 ms' \
	'p99 ms' errors
for key in warm-debuginfod warm-symhubd idle-debuginfod parked-debuginfod \
    idle-symhubd parked-symhubd; do
	server=${key#*-}
	case $key in
	warm-*) c="one upstream" ;;
	idle-*) c="two upstreams, idle twin" ;;
	parked-*) c="two upstreams, $parked parked" ;;
	esac
	printf '%-11s %-28s %11s %9s %9s %7s\n' "$server" "$c" \
		"${w_rps[$key]}" "${w_p50[$key]}" "${w_p99[$key]}" \
		"${w_bad[$key]}"
done
echo
echo "   parked requests: connections held to the hanging upstream before/after"
echo "   the parked runs, symhubd's symhub_fetch_inflight before/after, parked"
echo "   requests answered (or closed) during the runs, server threads" \
	"idle/parked"
for server in symhubd debuginfod; do
	printf '   %-11s hung %s/%s  inflight %s/%s  answered %s  threads %s/%s\n' \
		"$server" "${park_state[$server-hung-before]}" \
		"${park_state[$server-hung-after]}" \
		"${park_state[$server-inflight-before]}" \
		"${park_state[$server-inflight-after]}" \
		"${park_state[$server-answered]}" \
		"${park_state[$server-threads-idle]}" \
		"${park_state[$server-threads-parked]}"
done
read -r nw nb <<<"${park_state[debuginfod-workers]}"
pool=$(sed -n 's/.*webapi connection pool \([0-9]*\).*/\1/p' "$tmp/d1.log" |
	head -1)
echo "   debuginfod without -C: \"webapi connection pool ${pool:-?}\" in its" \
	"log (--help says \"default=unlim\"), $nw HTTP worker threads, $nb of them"
echo "   blocked in a /buildid request while parked; the other parked" \
	"requests" \
	"and wrk's wait behind them"
echo
echo "4. $herd identical cold requests for the large file at once"
printf '%-11s %8s %8s %8s %6s %6s %9s\n' server 'wall s' 'p50 s' 'max s' \
	right wrong upstream
for server in symhubd debuginfod; do
	printf '%-11s %8s %8s %8s %6s %6s %9s\n' "$server" "${h_wall[$server]}" \
		"${h_p50[$server]}" "${h_max[$server]}" "${h_ok[$server]}" \
		"${h_bad[$server]}" "${h_fetches[$server]}"
done
echo "   right: 200 with the file's size (and the same bytes, for the" \
	"$h_kept kept); upstream: files" \
	"the upstream sent; symhubd: ${h_jobs:-?} fetch job(s), ${h_coalesced:-?}" \
	"requests coalesced"
echo

fail=0
verdict() { # OK DESCRIPTION
	local v=MISS
	[ "$1" = 1 ] && v=PASS
	[ "$v" = PASS ] || fail=1
	printf '  %-68s %s\n' "${*:2}" "$v"
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }
echo "targets (symhubd):"
for kind in miss hit; do
	a=$(awk -v a="${cold_p50[$kind-symhubd]}" -v b="${cold_p50[$kind-direct]}" \
		'BEGIN { printf "%.3f", a - b }')
	e=$(awk -v a="${cold_p50[$kind-debuginfod]}" \
		-v b="${cold_p50[$kind-direct]}" 'BEGIN { printf "%.3f", a - b }')
	ok=0
	le "$a" 0.5 && [ "${cold_err[$kind-symhubd]}" = 0 ] &&
		[ "${cold_err[$kind-direct]}" = 0 ] && ok=1
	verdict "$ok" "1. cold $kind, added p50: $a ms (<= 0.5 ms; debuginfod $e)"
done
r=$(awk -v a="${w_rps[warm-symhubd]}" -v b="${w_rps[warm-debuginfod]}" \
	'BEGIN { if (b > 0) printf "%.2f", a / b; else print 0 }')
ok=0
le 5 "$r" && [ "${w_bad[warm-symhubd]}" = 0 ] && ok=1
verdict "$ok" "2. warm hits: ${r}x debuginfod's req/s (>= 5x)"
pct() {
	awk -v a="${w_rps[parked-$1]}" -v b="${w_rps[idle-$1]}" \
		'BEGIN { if (b > 0) printf "%.1f", 100 * a / b; else print 0 }'
}
r=$(pct symhubd)
e=$(pct debuginfod)
ok=0
le 90 "$r" && [ "${w_bad[parked-symhubd]}" = 0 ] &&
	[ "${park_state[symhubd-answered]}" = 0 ] &&
	[ "${park_state[symhubd-hung-after]}" -ge "$parked" ] && ok=1
verdict "$ok" "3. warm hits, $parked parked: ${r}% of idle (>= 90%;" \
	"debuginfod ${e}%)"
ok=0
[ "${h_fetches[symhubd]}" = 1 ] && [ "${h_bad[symhubd]}" = 0 ] && ok=1
verdict "$ok" "4. herd of $herd: ${h_fetches[symhubd]} upstream fetch(es)" \
	"(= 1; debuginfod ${h_fetches[debuginfod]}), ${h_bad[symhubd]} wrong"
exit "$fail"
