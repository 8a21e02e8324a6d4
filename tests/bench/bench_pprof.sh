#!/bin/bash
# Benchmark of POST /symbolize/pprof (issue 32): one pprof profile of
# BENCH_SAMPLES (1,000,000) samples over BENCH_LOCATIONS (200,000)
# distinct locations in BENCH_MODULES (50) real shared libraries (the
# modules of bench_symbolize.sh: the largest whose debug files come from
# BENCH_PACKAGES, libc6-dbg), each mapped at a random base, symbolized
# warm by the hub (the libraries and their debug files scanned, the GSYMs
# made by a first request), against llvm-symbolizer-19 given the debug
# files and the same ELF addresses on stdin, in one process:
#   - cold: the first request (50 conversions to GSYM, then the profile);
#   - warm: the same request again (median of BENCH_ROUNDS), curl's total
#     time (upload, decode, look-ups, encode, gzip, download), against
#     llvm-symbolizer-19's wall time (median of BENCH_LLVM_ROUNDS).
#     Target: >= 20x;
#   - the same in CPU seconds (symhubd's user + system time over the
#     request, from /proc; llvm-symbolizer-19's from /usr/bin/time), the
#     figure to trust on a loaded machine, where wall time is the
#     scheduler's;
#   - peak RSS of symhubd (VmHWM) and of llvm-symbolizer-19;
#   - agreement: every location of the warm answer, frame by frame,
#     against llvm-symbolizer's (tests/batchcheck.py compare-all).
#
# Not part of `make check`.  Needs libc6-dbg, llvm-symbolizer-19, curl,
# python3, /usr/bin/time.  Environment: BENCH_PACKAGES, BENCH_MODULES,
# BENCH_SAMPLES, BENCH_LOCATIONS, BENCH_ROUNDS=5, BENCH_LLVM_ROUNDS=3,
# BENCH_SAMPLES_LAST=1: the profile's samples after its locations (a
# writer's own order: the answer then copies none of the input's
# compressed blocks) rather than before them, as Go's pprof and every
# protobuf library write them.
# Usage: bench_pprof.sh [BUILDDIR].  Exit 0 when the target is met, 1
# when missed or on an error, 77 when something is not installed.

set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
symhubd=$builddir/src/symhubd/symhubd
check_py=$repo/tests/batchcheck.py
pp_py=$repo/tests/pprofcheck.py
nmods=${BENCH_MODULES:-50}
nsamples=${BENCH_SAMPLES:-1000000}
nlocs=${BENCH_LOCATIONS:-200000}
rounds=${BENCH_ROUNDS:-5}
lrounds=${BENCH_LLVM_ROUNDS:-3}
packages=${BENCH_PACKAGES:-libc6-dbg}

bench_name=bench_pprof
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"

check_numbers "$nmods" "$nsamples" "$nlocs" "$rounds" "$lrounds"
[ -x "$symhubd" ] || die "no $symhubd; build first, or pass the build directory"
for tool in llvm-symbolizer-19 curl python3 readelf; do
	command -v "$tool" >/dev/null || skip "$tool not installed"
done
[ -x /usr/bin/time ] || skip "/usr/bin/time not installed (package time)"
[ -d /usr/lib/debug/.build-id ] || skip "no debug files (install libc6-dbg)"
unset DEBUGINFOD_URLS
export LC_ALL=C PYTHONPATH=$repo/tests
bench_setup symhub-bench-pprof

now_us() { echo "${EPOCHREALTIME/./}"; }

# --- The modules, as bench_symbolize.sh picks them ---------------------

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
# The hub maps file offsets through a module's executable: scan both.
while read -r _ id dbg lib; do
	cp "$dbg" "$tmp/scan/$id.debug" && cp "$lib" "$tmp/scan/$id.so" ||
	    die "cp"
done <"$tmp/mods"

# Addresses: nlocs / nmods distinct ones in each library's .text, at
# random (seeded); the profile maps each library at a random base.
python3 - "$tmp/mods" "$nlocs" "$tmp" <<'PY' || die "cannot pick addresses"
import random, subprocess, sys
mods = [l.split() for l in open(sys.argv[1])]
per = int(sys.argv[2]) // len(mods)
rng = random.Random(32)
specs = []
for i, (size, bid, dbg, lib) in enumerate(mods):
    out = subprocess.run(["readelf", "-SW", lib], capture_output=True,
                         text=True, check=True).stdout
    for l in out.splitlines():
        f = l.replace("[ ", "[").split()
        if len(f) > 5 and f[1] == ".text":
            lo, hi = int(f[3], 16), int(f[3], 16) + int(f[5], 16)
    addrs = rng.sample(range(lo, hi), min(per, hi - lo))
    path = "%s/%d.addrs" % (sys.argv[3], i)
    open(path, "w").write("".join("0x%x\n" % a for a in addrs))
    base = 0x7f0000000000 + i * 0x100000000 + rng.randrange(1 << 20) * 4096
    specs.append("%s:%s:%d:%s:%s" % (lib, bid, base, path, dbg))
open(sys.argv[3] + "/specs", "w").write("\n".join(specs) + "\n")
PY
# shellcheck disable=SC2046 # one spec a word
total=$(python3 "$pp_py" make "$tmp/prof.pb.gz" --samples "$nsamples" \
    ${BENCH_SAMPLES_LAST:+--samples-last} \
    --llvm "$tmp/llvm.in" $(cat "$tmp/specs")) || die "cannot make the profile"

# --- symhubd -----------------------------------------------------------

port=$(free_port)
"$symhubd" -p "$port" -d "$tmp/store" -F "$tmp/scan" -t 0 \
    --symbolize-max-addresses 1000000 \
    --log-file "$tmp/symhubd.log" >"$tmp/symhubd.out" 2>&1 &
pids+=($!)
last=$(awk 'END { print $2 }' "$tmp/mods")
deadline=$((SECONDS + 120))
until [ "$(status_of "$(url "$port" "$last")")" = 200 ]; do
	kill -0 "${pids[0]}" 2>/dev/null || die "symhubd exited: $(tail -3 "$tmp/symhubd.out")"
	[ $SECONDS -lt $deadline ] || die "symhubd has not indexed the files"
	sleep 0.2
done

# post OUT: the profile, the answer to OUT; prints curl's total seconds.
post() {
	curl -s -o "$1" -w '%{time_total}' --max-time 600 \
	    --data-binary "@$tmp/prof.pb.gz" \
	    "http://127.0.0.1:$port/symbolize/pprof?deadline=300000"
}

# cpu: symhubd's user + system seconds so far.
cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f\n", ($14 + $15) / hz }' \
	    "/proc/${pids[0]}/stat"
}

cold=$(post "$tmp/cold.pb.gz") || die "POST /symbolize/pprof failed"
: >"$tmp/warm.runs"
: >"$tmp/warm.cpu"
for _ in $(seq "$rounds"); do
	c0=$(cpu)
	post "$tmp/warm.pb.gz" >>"$tmp/warm.runs" || die "POST failed"
	echo >>"$tmp/warm.runs"
	awk -v a="$c0" -v b="$(cpu)" 'BEGIN { printf "%.2f\n", b - a }' \
	    >>"$tmp/warm.cpu"
done
warm=$(median_row <"$tmp/warm.runs")
warmcpu=$(median_row <"$tmp/warm.cpu")
rss=$(awk '/^VmHWM/ { print $2 }' "/proc/${pids[0]}/status")

# --- llvm-symbolizer-19 --------------------------------------------------

: >"$tmp/llvm.runs"
: >"$tmp/llvm.cpu"
for _ in $(seq "$lrounds"); do
	t=$(now_us)
	/usr/bin/time -f '%U %S %M' -o "$tmp/llvm.time" llvm-symbolizer-19 \
	    --no-demangle --output-style=JSON <"$tmp/llvm.in" \
	    >"$tmp/llvm.out" 2>/dev/null || die "llvm-symbolizer-19 failed"
	awk -v a="$t" -v b="$(now_us)" \
	    'BEGIN { printf "%.3f\n", (b - a) / 1e6 }' >>"$tmp/llvm.runs"
	awk '{ printf "%.2f\n", $1 + $2 }' "$tmp/llvm.time" >>"$tmp/llvm.cpu"
done
llvm=$(median_row <"$tmp/llvm.runs")
llvmcpu=$(median_row <"$tmp/llvm.cpu")

python3 "$pp_py" tojson "$tmp/warm.pb.gz" "$tmp/warm.json" >"$tmp/tojson.txt" ||
    die "the answer: $(tail -1 "$tmp/tojson.txt")"
# The functions' starts, from POST /symbolize for the same addresses
# (pprof has none): batchcheck.py tells a GCC clone's or an alias's
# symbol from another function by them, as test_pprof.sh does.
python3 "$pp_py" request "$tmp/warm.json" "$tmp/req.json" ||
    die "cannot make the /symbolize request"
curl -s -o "$tmp/batch.json" --max-time 600 --data-binary "@$tmp/req.json" \
    "http://127.0.0.1:$port/symbolize" || die "POST /symbolize failed"
python3 "$pp_py" merge "$tmp/warm.json" "$tmp/batch.json" \
    "$tmp/start.json" >"$tmp/merge.txt" ||
    die "the profile's frames are not POST /symbolize's: $(head -3 "$tmp/merge.txt")"
agree=$(python3 "$check_py" compare-all "$tmp/start.json" "$tmp/llvm.out" |
    tail -1)

# --- Report ----------------------------------------------------------------

ratio=$(awk -v a="$llvm" -v b="$warm" 'BEGIN { printf "%.1f", a / b }')
cratio=$(awk -v a="$llvmcpu" -v b="$warmcpu" 'BEGIN { printf "%.1f", a / b }')
print_machine "$symhubd"
echo "input:      $nmods modules ($packages), $nsamples samples, $total locations, $(stat -c %s "$tmp/prof.pb.gz") bytes gzip'd"
echo "answer:     $(stat -c %s "$tmp/warm.pb.gz") bytes gzip'd; $(python3 "$pp_py" summary "$tmp/warm.pb.gz")"
echo "cold:       $cold s ($nmods conversions to GSYM, then the profile)"
echo "warm:       $warm s (median of $rounds; runs: $(tr '\n' ' ' <"$tmp/warm.runs"))"
echo "llvm:       $llvm s llvm-symbolizer-19 (median of $lrounds; runs: $(tr '\n' ' ' <"$tmp/llvm.runs"))"
echo "cpu:        symhubd $warmcpu s a warm request (median; runs: $(tr '\n' ' ' <"$tmp/warm.cpu")); llvm-symbolizer-19 $llvmcpu s"
echo "ratio:      ${ratio}x wall, ${cratio}x CPU (target >= 20x)"
echo "peak RSS:   symhubd $((rss / 1024)) MiB (VmHWM, whole run); llvm-symbolizer-19 $(($(awk '{ print $3 }' "$tmp/llvm.time") / 1024)) MiB"
echo "agreement:  $agree"
case $agree in
"$total of $total"*) ;;
*) echo "$bench_name: answers differ from llvm-symbolizer-19's" >&2; exit 1 ;;
esac
awk -v r="$ratio" 'BEGIN { exit !(r >= 20) }' || exit 1
exit 0
