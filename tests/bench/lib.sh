#!/bin/bash
# Helpers shared by the benchmarks in this directory; sourced, never run.
#
# The script that sources it may set bench_name first (its messages start
# with it; default "bench"), then calls bench_setup to get $tmp and the
# traps.  Every process the script starts in the background goes into the
# array pids (wrk's into wrk_pid), so that the exit trap ends it by PID.
# BENCH_KEEP=1 keeps $tmp (logs, wrk output) for a look.

: "${bench_name:=bench}"

die() { echo "$bench_name: $*" >&2; exit 1; }
skip() { echo "$bench_name: skipped: $*" >&2; exit 77; }

# check_numbers N...: each must be a non-negative integer.
check_numbers() {
	local n
	for n; do
		[[ $n =~ ^[0-9]+$ ]] || die "not a number: $n"
	done
}

# bench_setup PREFIX: a fresh $tmp named after PREFIX, and the traps that
# end every process in pids and wrk_pid and remove $tmp on the way out.
bench_setup() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || die "mktemp failed"
	pids=()
	wrk_pid=
	trap bench_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# shellcheck disable=SC2317 # called by the trap
bench_cleanup() {
	local pid
	for pid in $wrk_pid "${pids[@]}"; do
		kill "$pid" 2>/dev/null
	done
	for pid in $wrk_pid "${pids[@]}"; do
		wait "$pid" 2>/dev/null
	done
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "$bench_name: kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}

# A port nothing listens on now, below Linux's default ephemeral range
# (32768-60999) so wrk's own client sockets cannot be in the way. Another
# process may take it before the server binds; a server that cannot bind
# exits and the script's readiness wait reports it.
free_port() {
	local port i
	for i in $(seq 100); do
		port=$((20000 + RANDOM % 12000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	return 1
}

build_id() {
	readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }'
}

# A program with enough types and functions that its debuginfo weighs
# ~40 KB: a typical small binary, where per-request overhead dominates.
gen_fixture() {
	local i
	echo '#include <stdio.h>'
	echo '#include <string.h>'
	for i in $(seq 1 100); do
		cat <<EOF
struct rec$i {
	int id;
	long count;
	double weight;
	char name[16];
	struct rec$i *next;
};

static long
walk$i(struct rec$i *r, int depth)
{
	long sum = 0;
	int k;

	for (k = 0; r != NULL && k < depth; k++, r = r->next)
		sum += r->count * $i + (long)r->weight + (long)strlen(r->name);
	return sum;
}

EOF
	done
	echo 'int'
	echo 'main(int argc, char **argv)'
	echo '{'
	echo '	long total = 0;'
	for i in $(seq 1 100); do
		echo "	struct rec$i r$i = { $i, argc, 1.5, \"r$i\", NULL };"
		echo "	total += walk$i(&r$i, argc);"
	done
	cat <<'EOF'
	printf("%s %ld\n", argv[0], total);
	return 0;
}
EOF
}

# find_libc_debug: sets libc_debug (a ~4 MB debug file: libc's from
# libc6-dbg, else any that large) and libc_id, or skips the benchmark.
find_libc_debug() {
	local f
	libc_id=$(build_id /lib/x86_64-linux-gnu/libc.so.6)
	libc_debug=
	if [ -n "$libc_id" ]; then
		f=/usr/lib/debug/.build-id/${libc_id:0:2}/${libc_id:2}.debug
		[ -f "$f" ] && libc_debug=$f
	fi
	if [ -z "$libc_debug" ]; then
		libc_debug=$(find /usr/lib/debug/.build-id -name '*.debug' \
			-size +3M 2>/dev/null | head -1)
		libc_id=$(build_id "$libc_debug")
	fi
	if [ -z "$libc_debug" ] || [ -z "$libc_id" ]; then
		skip "no large debug file found (install libc6-dbg)"
	fi
}

status_of() {
	curl -s -o /dev/null -w '%{http_code}' "$1" 2>/dev/null
}

url() { # PORT ID
	echo "http://127.0.0.1:$1/buildid/$2/debuginfo"
}

# wrk prints latencies as 505.00us, 1.23ms, 2.00s, 1.00m.
to_ms() {
	awk -v v="$1" 'BEGIN {
		if (v ~ /us$/) printf "%.3f", v / 1000
		else if (v ~ /ms$/) printf "%.3f", v + 0
		else if (v ~ /m$/) printf "%.3f", v * 60000
		else if (v ~ /s$/) printf "%.3f", v * 1000
		else printf "?"
	}'
}

# Sets rps, p50, p99 and bad (socket errors plus answers of the wrong
# kind: non-2xx for a hit, 2xx for the 404 case) from wrk's output.
# shellcheck disable=SC2034 # they are the caller's
parse_wrk() { # FILE CASE
	local f=$1 kind=$2 reqs non2xx sockerr
	rps=$(awk '/^Requests\/sec:/ { print $2 }' "$f")
	p50=$(to_ms "$(awk '$1 == "50%" { print $2 }' "$f")")
	p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$f")")
	reqs=$(awk '/ requests in / { print $1 }' "$f")
	non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$f")
	sockerr=$(awk '/Socket errors:/ {
		gsub(/,/, ""); print $4 + $6 + $8 + $10 }' "$f")
	: "${rps:=0}" "${reqs:=0}" "${non2xx:=0}" "${sockerr:=0}"
	if [ "$kind" = 404 ]; then
		bad=$((sockerr + reqs - non2xx))
	else
		bad=$((sockerr + non2xx))
	fi
}

# run_wrk OUT WRK-ARGS...: wrk's output to OUT.  In the background, so
# that a signal ends the run now, not when wrk is done.
run_wrk() {
	local out=$1 rc
	shift
	wrk "$@" >"$out" 2>&1 &
	wrk_pid=$!
	wait "$wrk_pid"
	rc=$?
	wrk_pid=
	return "$rc"
}

# median_row: of the lines on standard input, the one with the median
# first column (the lower middle one of an even count).
median_row() {
	sort -g -k1,1 | awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }'
}

# print_machine SYMHUBD: the machine and versions lines of a report.
print_machine() {
	local cpu
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	echo "machine:    $(nproc) CPUs, ${cpu:-unknown CPU}, $(uname -sr)"
	echo "versions:   $(debuginfod --version 2>&1 | head -1);" \
		"$("$1" --version 2>&1 | head -1)"
}

# wan_program UNITS: bench_wan.sh's session program, built here: a C++
# program of UNITS translation units heavy with templates (-g -O1, its
# DWARF uncompressed, as a CI build uploads it) and its shared library,
# stripped in $tmp/bin, their debug files and libc's (find_libc_debug) in
# $tmp/scan.  Sets wan_ids (the three build-ids) and wan_bytes (the debug
# files' bytes).  gdb stops at work.cc:4 in the library.  With
# BENCH_PREBUILT, a directory a run kept (BENCH_KEEP=1) with the same
# UNITS, its program is taken as it is: no ten minutes of compiling to
# compare two builds (app's rpath still names that directory).
wan_program() {
	local units=$1 src=$tmp/src scan=$tmp/scan i f objs
	mkdir -p "$src" "$scan" "$tmp/bin"
	if [ -n "${BENCH_PREBUILT:-}" ]; then
		[ -f "$BENCH_PREBUILT/bin/app" ] &&
		    [ -f "$BENCH_PREBUILT/scan/libc.debug" ] ||
		    die "BENCH_PREBUILT=$BENCH_PREBUILT: no bin/app, scan/libc.debug"
		cp -a "$BENCH_PREBUILT/bin/." "$tmp/bin/" &&
		    cp -a "$BENCH_PREBUILT/scan/." "$scan/" &&
		    cp -a "$BENCH_PREBUILT/src/." "$src/" ||
		    die "cannot copy $BENCH_PREBUILT"
		wan_ids=("$(build_id "$tmp/bin/app")"
		    "$(build_id "$tmp/bin/libwork.so")"
		    "$(build_id "$scan/libc.debug")")
		wan_bytes=0
		for f in "$scan"/*.debug; do
			wan_bytes=$((wan_bytes + $(stat -c %s "$f")))
		done
		return 0
	fi
	gen_unit() {	# N: one translation unit, unit_N() calling the library
		cat <<EOF
#include <map>
#include <unordered_map>
#include <vector>
#include <string>
#include <set>
#include <deque>
#include <list>
#include <memory>
#include <functional>
#include <sstream>
#include <algorithm>
#include <optional>
#include <variant>
int work(int);
namespace u$1 {
template <int N> struct Node {
	std::map<std::string, std::vector<long>> m;
	std::unordered_map<int, std::deque<std::string>> u;
	std::set<std::pair<int, std::string>> s;
	std::list<std::optional<std::variant<int, double, std::string>>> l;
	long run(int x) {
		std::ostringstream os;
		os << x << N;
		m[os.str()].push_back(N);
		u[x].push_back(os.str());
		s.insert({x, os.str()});
		l.push_back(std::string(os.str()));
		auto f = std::make_shared<std::function<long(int)>>(
		    [this](int y) { return (long)m.size() + y; });
		return (*f)(x) + Node<N - 1>().run(x + 1);
	}
};
template <> struct Node<0> { long run(int x) { return x; } };
}
long unit_$1(int x) { return u$1::Node<24>().run(x) + work(x); }
EOF
	}
	{
		echo '#include <cstdio>'
		echo 'int work(int x) {'
		echo '	volatile int depth = x * 2;'
		echo '	std::printf("work %d\n", depth);'
		echo '	return depth;'
		echo '}'
	} >"$src/work.cc"
	{
		echo '#include <cstdio>'
		for i in $(seq 1 "$units"); do echo "long unit_$i(int);"; done
		echo 'int main(int argc, char **argv) {'
		echo '	long t = 0;'
		for i in $(seq 1 "$units"); do echo "	t += unit_$i(argc);"; done
		echo '	std::printf("%s %ld\n", argv[0], t);'
		echo '	return 0;'
		echo '}'
	} >"$src/main.cc"
	for i in $(seq 1 "$units"); do gen_unit "$i" >"$src/u$i.cc"; done
	echo "building the program ($units units)..." >&2
	(cd "$src" && g++ -g -O1 -fPIC -shared -o "$tmp/bin/libwork.so" work.cc) ||
		die "cannot build libwork.so"
	objs=()
	for i in $(seq 1 "$units"); do
		(cd "$src" && g++ -g -O1 -c -o "u$i.o" "u$i.cc") &
		if (( i % 2 == 0 )); then wait; fi
		objs+=("$src/u$i.o")
	done
	wait
	(cd "$src" && g++ -g -O1 -o "$tmp/bin/app" main.cc "${objs[@]}" \
	    -L"$tmp/bin" -lwork -Wl,-rpath,"$tmp/bin") || die "cannot link app"
	for f in app libwork.so; do
		objcopy --only-keep-debug "$tmp/bin/$f" "$scan/$f.debug" &&
		    strip -g "$tmp/bin/$f" || die "cannot split $f"
	done
	find_libc_debug
	cp "$libc_debug" "$scan/libc.debug" || die "cannot copy $libc_debug"
	wan_ids=("$(build_id "$tmp/bin/app")" "$(build_id "$tmp/bin/libwork.so")"
	    "$libc_id")
	wan_bytes=0
	for f in "$scan"/*.debug; do
		wan_bytes=$((wan_bytes + $(stat -c %s "$f")))
	done
}

# make_big_debug DIR MB OUT: OUT, a debug file of a small program with
# a .debug_bench section of MB MiB of DWARF-like bytes (words from a
# vocabulary, compressible ~5x, the same every run); DIR holds the
# program and the section's bytes.
make_big_debug() {
	mkdir -p "$1" || die "mkdir $1"
	printf 'int main(void) { return 0; }\n' >"$1/big.c"
	gcc -g -o "$1/big" "$1/big.c" ||
		die "cannot build the large file's program"
	python3 - "$1/blob" "$2" <<'PY' || die "no blob"
import random, sys
random.seed(30)
words = [("%x" % random.getrandbits(40)).encode() for _ in range(20000)]
n = int(sys.argv[2]) << 20
with open(sys.argv[1], "wb") as f:
    left = n
    while left > 0:
        b = b"\0".join(random.choices(words, k=4000))[:left]
        f.write(b)
        left -= len(b)
PY
	objcopy --only-keep-debug "$1/big" "$1/big.debug" &&
	    objcopy --add-section .debug_bench="$1/blob" "$1/big.debug" "$3" ||
		die "cannot make the large debug file"
}
