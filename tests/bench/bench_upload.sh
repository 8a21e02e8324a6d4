#!/bin/bash
# Benchmark the upload path: a large valid debuginfo (a real .debug file
# padded with zeros, so its build-id and DWARF stay valid) sent to symhubd
# by `symhub upload` and by curl, over loopback.  Prints throughput and the
# peak RSS of the server and of the CLI, against the targets: both under
# 64 MiB, at least 500 MB/s.
#
# usage: tests/bench/bench_upload.sh [BUILDDIR]
#   BENCH_UPLOAD_MB=1024   size of the upload
#   BENCH_ROUNDS=3         rounds per client; the median counts
# Not part of `make check`. Exits 77 when a tool is missing.

set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
symhubd=$builddir/src/symhubd/symhubd
symhub=$builddir/src/symhub/symhub
mb=${BENCH_UPLOAD_MB:-1024}
rounds=${BENCH_ROUNDS:-3}

[ -x "$symhubd" ] && [ -x "$symhub" ] || { echo "bench: build first" >&2; exit 1; }
for t in gcc objcopy curl python3; do
	command -v $t >/dev/null || { echo "bench: no $t" >&2; exit 77; }
done
[ -x /usr/bin/time ] || { echo "bench: no /usr/bin/time (package time)" >&2; exit 77; }

tmp=$(mktemp -d /tmp/symhub-bench-upload.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

cp "$repo"/tests/fixtures/*.[ch] "$tmp/"
(cd "$tmp" && gcc -g -O0 -o app hello.c greet.c && objcopy --only-keep-debug app app.debug &&
    strip -g -o app.stripped app) || exit 1
size=$((mb * 1024 * 1024))
{ cat "$tmp/app.debug"; head -c $((size - $(stat -c %s "$tmp/app.debug"))) /dev/zero; } >"$tmp/big.debug"
id=$("$symhub" buildid "$tmp/app")
tok=$("$symhub" token new bench 2>"$tmp/line") && tail -n 1 "$tmp/line" >"$tmp/tokens"
echo "$tok" >"$tmp/token"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port

start() {
	rm -rf "$tmp/store"
	"$symhubd" -p "$port" -d "$tmp/store" --tokens "$tmp/tokens" \
	    --log-file "$tmp/symhubd.log" &
	pid=$!
	for _ in $(seq 200); do
		curl -s -o /dev/null "$url/metrics" && return 0
		sleep 0.05
	done
	echo "bench: symhubd did not start" >&2
	exit 1
}
stop() {
	kill "$pid"; wait "$pid" 2>/dev/null; pid=
}
hwm() { awk '/VmHWM/ { print $2 }' "/proc/$pid/status"; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "machine:  $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "upload:   $mb MiB debuginfo ($tmp/big.debug), $rounds rounds, median"
printf '%-8s %10s %10s %14s %14s\n' client seconds MB/s "server RSS MB" "client RSS MB"
for client in symhub curl; do
	: >"$tmp/t"; : >"$tmp/srss"; : >"$tmp/crss"
	for _ in $(seq "$rounds"); do
		start
		if [ $client = symhub ]; then
			/usr/bin/time -f '%e %M' -o "$tmp/time" "$symhub" upload -q \
			    --url "$url" --token-file "$tmp/token" \
			    -e "$tmp/app.stripped" -d "$tmp/big.debug" >/dev/null
		else
			/usr/bin/time -f '%e %M' -o "$tmp/time" curl -sS -o /dev/null \
			    -H "Authorization: Bearer $tok" -T "$tmp/big.debug" \
			    "$url/buildid/$id/debuginfo"
		fi
		code=$(curl -s -o /dev/null -w '%{http_code}' -I "$url/buildid/$id/debuginfo")
		[ "$code" = 200 ] || { echo "bench: upload not stored ($code)" >&2; exit 1; }
		read -r secs crss <"$tmp/time"
		echo "$secs" >>"$tmp/t"; echo "$crss" >>"$tmp/crss"; hwm >>"$tmp/srss"
		stop
	done
	secs=$(median <"$tmp/t"); srss=$(median <"$tmp/srss"); crss=$(median <"$tmp/crss")
	mbs=$(awk -v s="$secs" -v m="$mb" 'BEGIN { printf "%.0f", m * 1.048576 / s }')
	printf '%-8s %10s %10s %14.1f %14.1f\n' $client "$secs" "$mbs" \
	    "$(echo "$srss / 1024" | bc -l)" "$(echo "$crss / 1024" | bc -l)"
	eval "${client}_mbs=$mbs ${client}_srss=$srss ${client}_crss=$crss"
done
verdict() { if [ "$2" = 1 ]; then echo "  $1: PASS"; else echo "  $1: MISS"; fi; }
echo "targets:"
verdict "server peak RSS < 64 MiB" "$((symhub_srss < 65536 && curl_srss < 65536))"
verdict "symhub upload peak RSS < 64 MiB" "$((symhub_crss < 65536))"
verdict "symhub upload >= 500 MB/s (wall time of the whole command)" "$((symhub_mbs >= 500))"
