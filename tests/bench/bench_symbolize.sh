#!/bin/bash
# Benchmark of whole-stack symbolization (issue 15): one POST /symbolize
# of BENCH_ADDRS (100,000) addresses over BENCH_MODULES (50) real shared
# libraries, the largest whose debug files come from BENCH_PACKAGES
# (libc6-dbg: libc, libm, the loader and gconv modules; add
# librados2-dbg for libceph-common and librados, 110 MB of DWARF), against
# llvm-symbolizer-19 given the same debug files and addresses on stdin,
# in one process:
#   - cold: the hub has only the debug files (scanned); the request
#     converts all 50 to GSYM on --gsym-workers threads: reported;
#   - warm: the same request again (median of BENCH_ROUNDS), curl's
#     total time, against llvm-symbolizer-19's wall time (median of
#     BENCH_LLVM_ROUNDS). Target: >= 20x;
#   - agreement: every address of the warm answer against llvm-symbolizer's
#     (function, file, line, inline chain; the outermost frame may be
#     named by another symbol at the same start, see tests/batchcheck.py).
#
# Not part of `make check`. Needs libc6-dbg, llvm-symbolizer-19, curl,
# python3. Environment: BENCH_PACKAGES="libc6-dbg", BENCH_MODULES,
# BENCH_ADDRS, BENCH_ROUNDS=5, BENCH_LLVM_ROUNDS=3, BENCH_KEEP=1. Exit 0 when the target is met, 1 when
# missed or on an error, 77 when something is not installed.

set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
symhubd=$builddir/src/symhubd/symhubd
check_py=$repo/tests/batchcheck.py
nmods=${BENCH_MODULES:-50}
naddrs=${BENCH_ADDRS:-100000}
rounds=${BENCH_ROUNDS:-5}
lrounds=${BENCH_LLVM_ROUNDS:-3}
packages=${BENCH_PACKAGES:-libc6-dbg}

bench_name=bench_symbolize
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"

check_numbers "$nmods" "$naddrs" "$rounds" "$lrounds"
[ -x "$symhubd" ] || die "no $symhubd; build first, or pass the build directory"
for tool in llvm-symbolizer-19 curl python3 readelf; do
	command -v "$tool" >/dev/null || skip "$tool not installed"
done
[ -x /usr/bin/time ] || skip "/usr/bin/time not installed (package time)"
[ -d /usr/lib/debug/.build-id ] || skip "no debug files (install libc6-dbg)"
unset DEBUGINFOD_URLS
export LC_ALL=C
bench_setup symhub-bench-symbolize

now_us() { echo "${EPOCHREALTIME/./}"; }

# --- The modules: shared libraries whose debug file is installed ----------

mkdir -p "$tmp/scan" || die "mkdir"
for p in $packages; do
	dpkg -L "$p" >/dev/null 2>&1 || skip "$p not installed"
	dpkg -L "$p" | grep '/\.build-id/.*\.debug$'
done | sort -u >"$tmp/debugs"
find /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu -maxdepth 3 \
    -name '*.so*' -type f 2>/dev/null | sort -u | while read -r lib; do
	id=$(build_id "$lib")
	dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	[ -n "$id" ] && grep -qxF "$dbg" "$tmp/debugs" &&
	    echo "$(stat -L -c %s "$dbg") $id $dbg $lib"
done | sort -rn | awk '!seen[$2]++' | head -n "$nmods" >"$tmp/mods"
got=$(wc -l <"$tmp/mods")
[ "$got" -eq "$nmods" ] ||
    skip "only $got shared libraries with debug files in $packages"
while read -r _ id dbg _; do
	cp "$dbg" "$tmp/scan/$id.debug" || die "cp"
done <"$tmp/mods"

# Addresses: naddrs / nmods in each module's .text, at random (seeded),
# the request body and llvm-symbolizer's input, module after module.
python3 - "$tmp/mods" "$naddrs" "$tmp" <<'PY' || die "cannot make the inputs"
import json, random, subprocess, sys
mods = [l.split() for l in open(sys.argv[1])]
per = int(sys.argv[2]) // len(mods)
body, lines = [], []
rng = random.Random(15)
for size, bid, dbg, lib in mods:
    out = subprocess.run(["readelf", "-SW", dbg], capture_output=True,
                         text=True, check=True).stdout
    lo = hi = None
    for l in out.splitlines():
        f = l.replace("[ ", "[").split()
        if len(f) > 5 and f[1] == ".text":
            lo = int(f[3], 16)
            hi = lo + int(f[5], 16)
    addrs = ["0x%x" % rng.randrange(lo, hi) for _ in range(per)]
    body.append({"buildid": bid, "addresses": addrs})
    lines += ['"%s" %s' % (dbg, a) for a in addrs]
json.dump({"modules": body}, open(sys.argv[3] + "/body.json", "w"))
open(sys.argv[3] + "/llvm.in", "w").write("\n".join(lines) + "\n")
PY
total=$(wc -l <"$tmp/llvm.in")

# --- symhubd -------------------------------------------------------------

port=$(free_port)
"$symhubd" -p "$port" -d "$tmp/store" -F "$tmp/scan" -t 0 \
    --log-file "$tmp/symhubd.log" >"$tmp/symhubd.out" 2>&1 &
pids+=($!)
last=$(awk 'END { print $2 }' "$tmp/mods")
deadline=$((SECONDS + 120))
until [ "$(status_of "$(url "$port" "$last")")" = 200 ]; do
	kill -0 "${pids[0]}" 2>/dev/null || die "symhubd exited: $(tail -3 "$tmp/symhubd.out")"
	[ $SECONDS -lt $deadline ] || die "symhubd has not indexed the debug files"
	sleep 0.2
done

# post OUT: the request, the answer to OUT; prints curl's total seconds.
post() {
	curl -s -o "$1" -w '%{time_total}' --max-time 600 \
	    --data-binary "@$tmp/body.json" "http://127.0.0.1:$port/symbolize"
}

cold=$(post "$tmp/cold.json") || die "POST /symbolize failed"
ready=$(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["modules"]
print(sum(x["status"] == "symbolized" for x in m))' "$tmp/cold.json")
[ "$ready" = "$nmods" ] || die "cold: $ready of $nmods modules symbolized"
: >"$tmp/warm.runs"
for _ in $(seq "$rounds"); do
	post "$tmp/warm.json" >>"$tmp/warm.runs" || die "POST failed"
	echo >>"$tmp/warm.runs"
done
warm=$(median_row <"$tmp/warm.runs")

# --- llvm-symbolizer-19 ----------------------------------------------------

: >"$tmp/llvm.runs"
for _ in $(seq "$lrounds"); do
	t=$(now_us)
	llvm-symbolizer-19 --no-demangle --output-style=JSON <"$tmp/llvm.in" \
	    >"$tmp/llvm.out" 2>/dev/null || die "llvm-symbolizer-19 failed"
	awk -v a="$t" -v b="$(now_us)" \
	    'BEGIN { printf "%.3f\n", (b - a) / 1e6 }' >>"$tmp/llvm.runs"
done
llvm=$(median_row <"$tmp/llvm.runs")

agree=$(python3 "$check_py" compare-all "$tmp/warm.json" "$tmp/llvm.out" |
    tail -1)

# --- Report ------------------------------------------------------------------

ratio=$(awk -v a="$llvm" -v b="$warm" 'BEGIN { printf "%.1f", a / b }')
print_machine "$symhubd"
echo "input:      $nmods modules ($packages), $total addresses in one request"
echo "cold:       $cold s ($nmods conversions to GSYM, then the lookups)"
echo "warm:       $warm s (median of $rounds; runs: $(tr '\n' ' ' <"$tmp/warm.runs"))"
echo "llvm:       $llvm s llvm-symbolizer-19 (median of $lrounds; runs: $(tr '\n' ' ' <"$tmp/llvm.runs"))"
echo "ratio:      ${ratio}x (target >= 20x)"
echo "agreement:  $agree"
case $agree in
"$total of $total"*) ;;
*) echo "$bench_name: answers differ from llvm-symbolizer-19's" >&2; exit 1 ;;
esac
awk -v r="$ratio" 'BEGIN { exit !(r >= 20) }' || exit 1
exit 0
