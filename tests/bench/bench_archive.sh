#!/bin/bash
# Benchmark the air-gapped tools: package indexing against elfutils'
# debuginfod -U on the same directory of real Debian packages (a few -dbg
# packages and their binary packages, fetched with apt-get download), and
# symhub export / import of 10,000 files.
#
# Prints, each the median of the rounds:
#   - the first scan of the packages, symhubd -U and debuginfod -U, wall
#     time until each has indexed everything, and the peak RSS of each;
#   - a rescan with nothing changed (symhubd: SIGHUP), against its first;
#   - export of the store the packages were indexed into (every member
#     unpacked), against the first scan, and again with nothing to write;
#   - export of 10,000 debug files (files/s, MB/s), a repeated export
#     (which must write nothing), and import into an empty store;
# and a verdict against the targets: first scan at least 2x faster than
# debuginfod's, a rescan at least 20x faster than the first scan, an
# export of the packages within 1.5x of their first scan and again, with
# nothing to write, under 1 s; a repeated export that writes nothing.
#
# usage: tests/bench/bench_archive.sh [BUILDDIR]
#   BENCH_ROUNDS=3        rounds of each scan; the median counts
#   BENCH_FILES=10000     files for export and import
#   BENCH_DEB_DIR=DIR     where the packages are kept between runs
#                         (default ~/.cache/symhub-bench/debs)
#   BENCH_DEBS="..."      the packages to download (default below)
#   BENCH_KEEP=1          keep the temporary directory
# Build BUILDDIR without sanitizers (./configure CFLAGS=-O2): their cost
# is not symhub's.  Not part of `make check`; exits 77 when a tool is
# missing or no package could be had.

set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
symhubd=$builddir/src/symhubd/symhubd
symhub=$builddir/src/symhub/symhub
rounds=${BENCH_ROUNDS:-3}
nfiles=${BENCH_FILES:-10000}
debdir=${BENCH_DEB_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/symhub-bench/debs}
debs=${BENCH_DEBS:-"libc6 libc6-dbg libstdc++6 libstdc++6-12-dbg
    binutils-x86-64-linux-gnu binutils-x86-64-linux-gnu-dbg libbinutils
    libbinutils-dbg libctf0 libctf0-dbg libctf-nobfd0 libctf-nobfd0-dbg
    libgprofng0 libgprofng0-dbg libadns1 libadns1-dbg"}

bench_name=bench_archive
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"
check_numbers "$rounds" "$nfiles"
[ "$rounds" -gt 0 ] && [ "$nfiles" -gt 0 ] ||
	die "BENCH_ROUNDS and BENCH_FILES must be positive"
[ -x "$symhubd" ] && [ -x "$symhub" ] ||
	die "no $symhubd or $symhub; build first, or pass the build directory"
for tool in debuginfod bsdtar curl gcc objcopy readelf python3 apt-get; do
	command -v "$tool" >/dev/null || skip "$tool not installed"
done
unset DEBUGINFOD_URLS
bench_setup symhub-bench-archive

# ---- the packages ------------------------------------------------------
mkdir -p "$debdir" || die "cannot make $debdir"
# shellcheck disable=SC2086
(cd "$debdir" && apt-get download $debs >"$tmp/apt.log" 2>&1) ||
	echo "$bench_name: apt-get download failed; using what $debdir holds" >&2
npkg=$(find "$debdir" -maxdepth 1 -name '*.deb' | wc -l)
[ "$npkg" -gt 0 ] || skip "no package in $debdir (apt-get download: $(tail -1 "$tmp/apt.log"))"
pkgmb=$(du -sm "$debdir" | cut -f1)

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f\n", b - a }'; }
metric_of() {	# URL NAME
	curl -s --max-time 5 "$1/metrics" | awk -v n="$2" '$1 == n { print $2; exit }'
}
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

# symhubd ROUND: the first scan (it runs before the daemon listens),
# then a rescan of the unchanged directory.  Appends to $tmp/s.*.
symhubd_round() {
	local port url t0 pid passes
	port=$(free_port) || die "no free port"
	url=http://127.0.0.1:$port
	rm -rf "$tmp/store"
	t0=$(now)
	"$symhubd" -p "$port" -d "$tmp/store" -U "$debdir" -t 0 \
	    --log-file "$tmp/symhubd.log" &
	pid=$!
	pids+=("$pid")
	until [ "$(metric_of "$url" ready)" = 1 ]; do
		kill -0 "$pid" 2>/dev/null || die "symhubd died: $(tail -3 "$tmp/symhubd.log")"
		sleep 0.02
	done
	since "$t0" >>"$tmp/s.first"
	hwm "$pid" >>"$tmp/s.rss"
	passes=$(metric_of "$url" symhub_scan_passes_total)
	kill -HUP "$pid"
	until [ "$(metric_of "$url" symhub_scan_passes_total)" -gt "$passes" ]; do
		sleep 0.02
	done
	metric_of "$url" symhub_scan_last_pass_seconds >>"$tmp/s.rescan"
	metric_of "$url" symhub_cache_entries >"$tmp/s.entries"
	kill "$pid"
	wait "$pid" 2>/dev/null
}

# debuginfod ROUND: until its first traversal is done and its scanners
# are idle, with every package scanned.
debuginfod_round() {
	local port url t0 pid m
	port=$(free_port) || die "no free port"
	url=http://127.0.0.1:$port
	rm -f "$tmp/d.sqlite"*
	t0=$(now)
	debuginfod -p "$port" -d "$tmp/d.sqlite" -t 0 -g 0 -U "$debdir" \
	    >>"$tmp/debuginfod.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	while :; do
		kill -0 "$pid" 2>/dev/null || die "debuginfod died: $(tail -3 "$tmp/debuginfod.log")"
		m=$(curl -s --max-time 5 "$url/metrics")
		echo "$m" | grep -q '^thread_work_total{role="traverse"} [1-9]' &&
		    echo "$m" | grep -q '^thread_work_pending{role="scan"} 0$' &&
		    echo "$m" | grep -q '^thread_busy{role="scan"} 0$' &&
		    [ "$(echo "$m" | awk '/^scanned_files_total/ { s += $NF } END { print s + 0 }')" -ge "$npkg" ] &&
		    break
		sleep 0.02
	done
	since "$t0" >>"$tmp/d.first"
	hwm "$pid" >>"$tmp/d.rss"
	kill "$pid"
	wait "$pid" 2>/dev/null
}

echo "packages: $npkg .deb files, $pkgmb MB, in $debdir"
echo "machine:  $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); $rounds rounds, medians"
for r in $(seq "$rounds"); do
	symhubd_round
	debuginfod_round
done
s_first=$(median <"$tmp/s.first")
d_first=$(median <"$tmp/d.first")
s_rescan=$(median <"$tmp/s.rescan")
s_rss=$(($(median <"$tmp/s.rss") / 1024))
d_rss=$(($(median <"$tmp/d.rss") / 1024))
printf '\n%-26s %10s %10s %10s\n' "first scan of the packages" seconds "peak RSS" ratio
printf '%-26s %10s %7s MB %10s\n' "symhubd -U" "$s_first" "$s_rss" \
    "$(awk -v a="$d_first" -v b="$s_first" 'BEGIN { printf "%.2fx", a / b }')"
printf '%-26s %10s %7s MB\n' "debuginfod -U (elfutils)" "$d_first" "$d_rss"
printf '%-26s %10s %10s %10s\n' "symhubd rescan, unchanged" "$s_rescan" "" \
    "$(awk -v a="$s_first" -v b="$s_rescan" 'BEGIN { printf "%.0fx", b > 0 ? a / b : 1e9 }')"
echo "(symhubd indexed $(cat "$tmp/s.entries") records)"

# ---- export of the packages --------------------------------------------
# The store of the last round: every member unpacked from its package.
timed() {	# OUT CMD...: run CMD, its output to OUT; prints seconds
	local t0
	t0=$(now)
	"${@:2}" >"$1" 2>&1
	since "$t0"
}
for r in $(seq "$rounds"); do
	rm -rf "$tmp/pexp"
	timed "$tmp/pexp1" "$symhub" export -q "$tmp/store" "$tmp/pexp" \
	    >>"$tmp/p.first"
	timed "$tmp/pexp2" "$symhub" export -q "$tmp/store" "$tmp/pexp" \
	    >>"$tmp/p.again"
done
p_first=$(median <"$tmp/p.first")
p_again=$(median <"$tmp/p.again")
p_written=$(sed -n 's/^\([0-9]*\) written.*/\1/p' "$tmp/pexp1")
p_written2=$(sed -n 's/^\([0-9]*\) written.*/\1/p' "$tmp/pexp2")
printf '\n%-26s %10s %10s  %s\n' "export of the packages" seconds \
    "/ 1st scan" result
printf '%-26s %10s %10s  %s\n' "symhub export" "$p_first" \
    "$(awk -v a="$p_first" -v b="$s_first" 'BEGIN { printf "%.2fx", a / b }')" \
    "$(tail -1 "$tmp/pexp1")"
printf '%-26s %10s %10s  %s\n' "symhub export, again" "$p_again" \
    "$(awk -v a="$p_again" -v b="$s_first" 'BEGIN { printf "%.2fx", a / b }')" \
    "$(tail -1 "$tmp/pexp2")"

# ---- export and import -------------------------------------------------
# nfiles debug files: one real .debug, its build-id note rewritten to a
# different id in each copy.
mkdir -p "$tmp/src" "$tmp/many"
cp "$repo"/tests/fixtures/*.[ch] "$tmp/src/"
(cd "$tmp/src" && gcc -g -O0 -o app hello.c greet.c &&
    objcopy --only-keep-debug app app.debug) || die "cannot build the fixture"
python3 - "$tmp/src/app.debug" "$(build_id "$tmp/src/app.debug")" \
    "$tmp/many" "$nfiles" <<'EOF' || die "cannot make the files"
import hashlib, os, sys
src, idhex, out, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
data = open(src, "rb").read()
old = bytes.fromhex(idhex)
at = data.index(old)
for i in range(n):
    new = hashlib.sha1(b"%d" % i).digest()[:len(old)]
    d = os.path.join(out, "%02x" % (i % 256))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%d.debug" % i), "wb") as f:
        f.write(data[:at] + new + data[at + len(old):])
EOF
port=$(free_port) || die "no free port"
"$symhubd" -p "$port" -d "$tmp/estore" -F "$tmp/many" -t 0 \
    --log-file "$tmp/symhubd-many.log" &
pid=$!
pids+=("$pid")
t0=$(now)
until [ "$(metric_of "http://127.0.0.1:$port" ready)" = 1 ]; do
	kill -0 "$pid" 2>/dev/null || die "symhubd died: $(tail -3 "$tmp/symhubd-many.log")"
	sleep 0.02
done
t_scan=$(since "$t0")
kill "$pid"
wait "$pid" 2>/dev/null

t_exp=$(timed "$tmp/exp1" "$symhub" export -q "$tmp/estore" "$tmp/exp")
t_exp2=$(timed "$tmp/exp2" "$symhub" export -q "$tmp/estore" "$tmp/exp")
t_imp=$(timed "$tmp/imp" "$symhub" import -q "$tmp/exp" "$tmp/istore")
bytes=$(sed -n 's/^\([0-9]*\) written (\([0-9]*\) bytes).*/\2/p' "$tmp/exp1")
written=$(sed -n 's/^\([0-9]*\) written.*/\1/p' "$tmp/exp1")
written2=$(sed -n 's/^\([0-9]*\) written.*/\1/p' "$tmp/exp2")
unchanged2=$(sed -n 's/.* \([0-9]*\) unchanged.*/\1/p' "$tmp/exp2")
imported=$(sed -n 's/^\([0-9]*\) imported.*/\1/p' "$tmp/imp")
rate() {	# SECONDS: files/s and MB/s of $written files, $bytes bytes
	awk -v s="$1" -v n="$written" -v b="$bytes" \
	    'BEGIN { printf "%10.0f %10.1f", n / s, b / 1e6 / s }'
}
printf '\n%-26s %10s %10s %10s  %s\n' "$nfiles files ($((${bytes:-0} / 1000000)) MB)" seconds files/s MB/s result
printf '%-26s %10s %10s %10s\n' "scan (symhubd -F)" "$t_scan" \
    $(awk -v s="$t_scan" -v n="$nfiles" 'BEGIN { printf "%.0f -", n / s }')
printf '%-26s %10s %s  %s\n' "symhub export" "$t_exp" "$(rate "$t_exp")" \
    "${written:-?} written"
printf '%-26s %10s %10s %10s  %s\n' "symhub export, again" "$t_exp2" - - \
    "${written2:-?} written, ${unchanged2:-?} unchanged"
printf '%-26s %10s %s  %s\n' "symhub import" "$t_imp" "$(rate "$t_imp")" \
    "${imported:-?} imported"

verdict() { if [ "$2" = 1 ]; then echo "  $1: PASS"; else echo "  $1: MISS"; fi; }
echo
ok=1
v=$(awk -v a="$d_first" -v b="$s_first" 'BEGIN { print (a >= 2 * b) }')
verdict "first scan at least 2x faster than debuginfod -U" "$v"; [ "$v" = 1 ] || ok=0
v=$(awk -v a="$s_first" -v b="$s_rescan" 'BEGIN { print (a >= 20 * b) }')
verdict "rescan with nothing changed at least 20x faster than the first" "$v"; [ "$v" = 1 ] || ok=0
v=$(awk -v a="$p_first" -v b="$s_first" -v n="${p_written:-0}" \
    'BEGIN { print (n > 0 && a <= 1.5 * b) }')
verdict "export of the packages within 1.5x of their first scan" "$v"; [ "$v" = 1 ] || ok=0
v=$(awk -v a="$p_again" -v n="${p_written2:-x}" \
    'BEGIN { print (n == "0" && a < 1) }')
verdict "the packages exported again, nothing written, under 1 s" "$v"; [ "$v" = 1 ] || ok=0
v=$([ "${written:-0}" = "$nfiles" ] && [ "${imported:-0}" = "$nfiles" ] && echo 1 || echo 0)
verdict "every file exported and imported" "$v"; [ "$v" = 1 ] || ok=0
v=$([ "${written2:-x}" = 0 ] && echo 1 || echo 0)
verdict "a repeated export writes nothing" "$v"; [ "$v" = 1 ] || ok=0
[ "$ok" = 1 ]
