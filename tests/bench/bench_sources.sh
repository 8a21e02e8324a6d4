#!/bin/bash
# Benchmark `symhub upload --sources` on a real project's build: Google
# Test (Debian's googletest package puts its sources in
# /usr/src/googletest; BENCH_SRC names another tree with the same
# layout) copied into a build tree and built with -g as a shared
# library; uploaded with its sources; the build tree removed; then every
# source file gdb says the DWARF names (`info sources`, the project's
# files and the system and libstdc++ headers alike) is asked for with
# `debuginfod-find source` through the hub.
#
# Prints: the files and bytes in the bundle, the bytes sent, the upload's
# wall time (median of BENCH_ROUNDS, --force so each round sends it all),
# and the share of source requests answered with the right bytes.  Goal:
# 100 %.  (elfutils' debuginfod for the same case: 0 %, it has no tree.)
#
# usage: tests/bench/bench_sources.sh [BUILDDIR]
# Not part of `make check`.  Exits 77 when a tool or the sources are
# missing.

set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
symhubd=$builddir/src/symhubd/symhubd
symhub=$builddir/src/symhub/symhub
src=${BENCH_SRC:-/usr/src/googletest}
rounds=${BENCH_ROUNDS:-3}

[ -x "$symhubd" ] && [ -x "$symhub" ] || { echo "bench: build first" >&2; exit 1; }
for t in g++ objcopy strip gdb debuginfod-find curl python3; do
	command -v $t >/dev/null || { echo "bench: no $t" >&2; exit 77; }
done
[ -f "$src/googletest/src/gtest-all.cc" ] ||
    { echo "bench: no $src (Debian: googletest)" >&2; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/symhub-bench-sources.XXXXXX")
tmp=$(cd "$tmp" && pwd -P)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# The build tree: a private CI build's, gone when the crash is debugged.
B=$tmp/build/googletest
mkdir -p "$tmp/build" "$tmp/out" && cp -r "$src" "$B" || exit 1
G=$B/googletest
t0=$(date +%s.%N)
(cd "$G" && g++ -g -O2 -fPIC -shared -Iinclude -I. -o "$tmp/libgtest.so" \
    src/gtest-all.cc src/gtest_main.cc -lpthread) || exit 1
t1=$(date +%s.%N)
objcopy --only-keep-debug "$tmp/libgtest.so" "$tmp/libgtest.debug" &&
    strip --strip-all -o "$tmp/libgtest.stripped" "$tmp/libgtest.so" || exit 1
id=$(readelf -n "$tmp/libgtest.so" | awk '/Build ID:/ { print $3; exit }')
printf 'build: googletest (gtest-all.cc, gtest_main.cc), g++ -g -O2: %.1f s\n' \
    "$(echo "$t1 - $t0" | bc)"

"$symhub" token new bench upload >"$tmp/tok" 2>"$tmp/tok.line" || exit 1
tail -n 1 "$tmp/tok.line" >"$tmp/tokens"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
env -u DEBUGINFOD_URLS "$symhubd" -p "$port" -d "$tmp/store" --offline \
    --tokens "$tmp/tokens" >"$tmp/symhubd.out" 2>&1 &
pid=$!
for _ in $(seq 200); do
	curl -s "$url/metrics" | grep -qx 'ready 1' && break
	sleep 0.05
done

times=()
for r in $(seq "$rounds"); do
	s=$(date +%s.%N)
	"$symhub" upload --url "$url" --token-file "$tmp/tok" --force -q \
	    -e "$tmp/libgtest.stripped" -d "$tmp/libgtest.debug" --sources \
	    >"$tmp/out/up.$r" 2>&1 || { cat "$tmp/out/up.$r"; exit 1; }
	e=$(date +%s.%N)
	times+=("$(echo "$e - $s" | bc)")
done
med=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((rounds + 1) / 2))p")
summary=$(grep '^sources:' "$tmp/out/up.1")
files=$(echo "$summary" | awk '{ print $2 }')
sent=$(echo "$summary" | sed 's/.*(\([0-9]*\) bytes sent).*/\1/')
unread=$(echo "$summary" | sed 's/.*), \([0-9]*\) named.*/\1/')
printf 'upload --sources (debuginfo %s bytes, executable, bundle): %.2f s median of %s (%s)\n' \
    "$(stat -c %s "$tmp/libgtest.debug")" "$med" "$rounds" "${times[*]}"
printf 'bundle: %s files, %s bytes sent (zstd), %s named files unreadable\n' \
    "$files" "$sent" "$unread"
grep '^unread' "$tmp/out/up.1" | sed 's/^/  /'
curl -s "$url/metrics" | grep '^symhub_source_bundle' | sed 's/^/  /'

# What gdb says the DWARF names, read before the tree goes.
gdb -nx -batch -ex 'info sources' "$tmp/libgtest.debug" 2>/dev/null |
    tr ',' '\n' | sed 's/^ *//' | grep '^/' | sort -u >"$tmp/names"
while read -r f; do
	[ -f "$f" ] && echo "$f"
done <"$tmp/names" >"$tmp/readable"
mkdir -p "$tmp/copies"
i=0
while read -r f; do
	i=$((i + 1))
	cp "$f" "$tmp/copies/$i"
done <"$tmp/readable"
rm -rf "$tmp/build"

export DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$tmp/dcache
ok=0
bad=0
i=0
s=$(date +%s.%N)
while read -r f; do
	i=$((i + 1))
	got=$(debuginfod-find source "$id" "$f" 2>/dev/null)
	if [ -n "$got" ] && cmp -s "$got" "$tmp/copies/$i"; then
		ok=$((ok + 1))
	else
		bad=$((bad + 1))
		echo "  not served: $f"
	fi
done <"$tmp/readable"
e=$(date +%s.%N)
comm -23 "$tmp/names" "$tmp/readable" | sed 's/^/  named, not on the build machine: /'
total=$(wc -l <"$tmp/names")
printf 'after the build tree is removed: %s of %s sources gdb lists served right (%.1f %%), %s named but not on the build machine; %.2f s for them all\n' \
    "$ok" "$((ok + bad))" "$(echo "100 * $ok / ($ok + $bad)" | bc -l)" \
    "$((total - ok - bad))" "$(echo "$e - $s" | bc)"
