#!/bin/bash
# Benchmark store recovery: how long a hub takes to open a store (the
# child-process probe of the index plus the consistency check), to rebuild
# a lost index from the catalog with `symhub store rebuild`, and to verify
# every blob with `symhub store verify`, for a store of N records.  There
# is no comparator: elfutils' debuginfod keeps no store it could rebuild.
#
# usage: tests/bench/bench_recovery.sh [BUILDDIR]
#   BENCH_RECORDS=20000   records (half debuginfo, half executables)
#   BENCH_SIZE=16384      bytes of each blob
# Not part of `make check`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
n=${BENCH_RECORDS:-20000}
size=${BENCH_SIZE:-16384}
symhub=$builddir/src/symhub/symhub
[ -x "$symhub" ] && [ -f "$builddir/cache/libcache.a" ] ||
    { echo "bench: build first" >&2; exit 1; }
tmp=$(mktemp -d /tmp/symhub-bench-recovery.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

gcc -O2 -I"$repo" -I"$builddir" -o "$tmp/fill" "$here/fill_store.c" \
    "$builddir/cache/libcache.a" -llmdb -lcrypto || exit 1
secs() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; return 1; }
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
S=$tmp/store
fill=$(secs "$tmp/fill" "$S" "$n" "$size") || exit 1
mb=$(du -sm "$S/blobs" | cut -f1)
# An open of an intact store: probe + check (the filler's close and a
# reopen: fill_store with N=... would add records, so use verify's open).
vf=$(secs "$symhub" store verify "$S") || exit 1
rm -rf "$S/index"
rb=$(secs "$symhub" store rebuild "$S") || exit 1
restored=$(sed -n 's/.*: \([0-9]*\) records.*/\1/p' "$tmp/out")
echo "store: $n records of $size bytes ($mb MB of blobs); filled in $fill s"
echo "symhub store verify (open with probe and check, then hash all): $vf s"
echo "symhub store rebuild (index removed): $rb s, $restored records restored"
[ "$restored" = "$n" ] || { echo "bench: rebuild restored $restored of $n" >&2; exit 1; }
