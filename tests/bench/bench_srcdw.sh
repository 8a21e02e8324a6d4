#!/bin/bash
# Sources from the debuginfo itself (doc/protocol.md, "Sources from the
# debuginfo"): what embedding costs and what serving it costs.
#
# usage: tests/bench/bench_srcdw.sh [BUILDDIR]
#
# Generates a C project of BENCH_FILES files (each with a header of its
# own and a shared one), builds it with clang -gdwarf-5 twice, with and
# without -gembed-source, and prints the debuginfo sizes; then removes
# the tree, starts symhubd on the embedded build and times, with curl
# (one request at a time, median of BENCH_REPEAT):
#   first    a file's text read from the line tables (names read too)
#   stored   the same file again (a store hit, the derived entry)
#   other    another file's text (names kept: the tables read for it)
#   miss     a path the DWARF does not name (names kept: no read)
#   relative a relative request matched by suffix (names kept)
# and the line-table reads /metrics counted over all of them.
#
# Not part of `make check`.  Run it on a release build (./configure
# without --enable-sanitizers).  Environment:
#   BENCH_FILES=400   source files in the project
#   BENCH_REPEAT=20   requests per case
#   BENCH_KEEP=1      keep the temporary directory
# Exits 0, 1 on an error, 77 when a tool is missing.

set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
symhubd=$builddir/src/symhubd/symhubd
nfiles=${BENCH_FILES:-400}
repeat=${BENCH_REPEAT:-20}

CLANG=
for c in clang-19 clang; do
	command -v "$c" >/dev/null 2>&1 && { CLANG=$c; break; }
done
[ -n "$CLANG" ] || { echo "SKIP: clang not found"; exit 77; }
for t in curl objcopy readelf python3; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not found"; exit 77; }
done
[ -x "$symhubd" ] || { echo "no $symhubd" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-srcdw.XXXXXX") || exit 1
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	if [ "${BENCH_KEEP:-0}" = 1 ]; then
		echo "kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT

# ---- the project -------------------------------------------------------
P=$tmp/proj
mkdir -p "$P/src" "$P/include" || exit 1
python3 - "$P" "$nfiles" <<'EOF' || exit 1
import os, sys
p, n = sys.argv[1], int(sys.argv[2])
with open(os.path.join(p, 'include', 'common.h'), 'w') as f:
    f.write('#ifndef COMMON_H\n#define COMMON_H\n')
    for i in range(50):
        f.write('static inline int common_%d(int x) { return x * %d + 1; }\n'
                % (i, i + 1))
    f.write('#endif\n')
calls = []
for i in range(n):
    with open(os.path.join(p, 'include', 'mod%d.h' % i), 'w') as f:
        f.write('int mod%d_run(int);\n' % i)
    with open(os.path.join(p, 'src', 'mod%d.c' % i), 'w') as f:
        f.write('#include "common.h"\n#include "mod%d.h"\n\n' % i)
        for j in range(20):
            f.write('static int\nstep%d(int x)\n{\n'
                    '\t/* module %d, step %d */\n'
                    '\treturn common_%d(x) ^ %d;\n}\n\n'
                    % (j, i, j, j % 50, j))
        f.write('int\nmod%d_run(int x)\n{\n' % i)
        for j in range(20):
            f.write('\tx = step%d(x);\n' % j)
        f.write('\treturn x;\n}\n')
    calls.append('mod%d_run' % i)
with open(os.path.join(p, 'src', 'main.c'), 'w') as f:
    for c in calls:
        f.write('int %s(int);\n' % c)
    f.write('int\nmain(int argc, char **argv)\n{\n\t(void)argv;\n'
            '\tint x = argc;\n')
    for c in calls:
        f.write('\tx = %s(x);\n' % c)
    f.write('\treturn x & 1;\n}\n')
EOF
build() {	# OUT FLAGS...
	local out=$1 f
	shift
	mkdir -p "$tmp/obj-$out" || return 1
	for f in "$P"/src/*.c; do
		(cd "$P" && "$CLANG" -gdwarf-5 "$@" -O1 -Iinclude -c "$f" \
		    -o "$tmp/obj-$out/$(basename "${f%.c}").o") || return 1
	done
	"$CLANG" -Wl,--build-id -o "$tmp/$out" "$tmp/obj-$out"/*.o &&
	    objcopy --only-keep-debug "$tmp/$out" "$tmp/$out.debug"
}
echo "building $nfiles files twice ..."
build plain || exit 1
build embed -gembed-source || exit 1
src_bytes=$(cat "$P"/src/*.c "$P"/include/*.h | wc -c)
sz_plain=$(stat -c %s "$tmp/plain.debug")
sz_embed=$(stat -c %s "$tmp/embed.debug")
line_embed=$(readelf -S -W "$tmp/embed.debug" 2>/dev/null | sed -n 's/^ *\[ *[0-9]*\] //p' |
    awk '$1 == ".debug_line_str" { print $5 }')
line_embed=$((16#${line_embed:-0}))
printf 'sources                 %10d bytes in %d files\n' "$src_bytes" \
    $((2 * nfiles + 2))
printf 'debuginfo, -g           %10d bytes\n' "$sz_plain"
printf 'debuginfo, -gembed-src  %10d bytes (+%d%%; .debug_line_str %d)\n' \
    "$sz_embed" $(( (sz_embed - sz_plain) * 100 / sz_plain )) "$line_embed"
cp -r "$P/src" "$tmp/keep" || exit 1
SP=$(cd "$P" && pwd -P)
rm -rf "$P"

# ---- the hub -----------------------------------------------------------
mkdir -p "$tmp/scan" && cp "$tmp/embed.debug" "$tmp/scan/" || exit 1
ID=$(readelf -n "$tmp/embed" | awk '/Build ID:/ { print $3; exit }')
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$port
env -u DEBUGINFOD_URLS "$symhubd" -p "$port" -d "$tmp/store" -F "$tmp/scan" \
    -t 0 >"$tmp/symhubd.out" 2>&1 &
pid=$!
for _ in $(seq 400); do
	curl -s "$URL/metrics" | grep -qx 'ready 1' && break
	sleep 0.05
done
curl -s "$URL/metrics" | grep -qx 'ready 1' || { echo "symhubd not ready"; exit 1; }

# time PATH: seconds of one GET (the status must be the one wanted)
time1() {
	curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$URL$1"
}
median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] * 1000 }'
}
# case NAME WANT PATH-MAKER: BENCH_REPEAT requests, the median in ms
run() {
	local name=$1 want=$2 mk=$3 i out
	for i in $(seq "$repeat"); do
		out=$(time1 "$($mk "$i")")
		[ "${out%% *}" = "$want" ] || { echo "$name: ${out%% *}, want $want" >&2; return 1; }
		echo "${out#* }"
	done | median | awk -v n="$name" '{ printf "%-9s %8.2f ms (median)\n", n, $1 }'
}
first_p() { echo "/buildid/$ID/source$SP/src/mod$(( $1 % nfiles )).c"; }
stored_p() { echo "/buildid/$ID/source$SP/src/mod0.c"; }
miss_p() { echo "/buildid/$ID/source$SP/src/none$1.c"; }
rel_p() { echo "/buildid/$ID/source/src/mod$(( ($1 + repeat) % nfiles )).c"; }

t=$(time1 "/buildid/$ID/source$SP/src/main.c")
[ "${t%% *}" = 200 ] || { echo "first: ${t%% *}" >&2; exit 1; }
printf '%-9s %8.2f ms (one)\n' first "$(echo "${t#* }" | awk '{ print $1 * 1000 }')"
run stored 200 stored_p || exit 1
run other 200 first_p || exit 1
run miss 404 miss_p || exit 1
run relative 200 rel_p || exit 1
curl -s "$URL/buildid/$ID/source$SP/src/mod7.c" | cmp -s - "$tmp/keep/mod7.c" ||
    { echo "mod7.c: wrong text" >&2; exit 1; }
reads=$(curl -s "$URL/metrics" |
    awk '$1 == "symhub_dwarf_source_reads_total" { print $2 }')
echo "line-table reads for $((1 + 4 * repeat)) requests: $reads"
exit 0
