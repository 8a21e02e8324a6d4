#!/bin/bash
# Benchmark symhub's GSYM converter and reader against LLVM's tools.
#
# usage: tests/bench/bench_gsym.sh [BUILDDIR]
#
# BUILDDIR is the build tree (default: the repository this script is
# in). Inputs: libc's debug file (libc6-dbg) and
# libceph-common's (the largest .debug file of librados2-dbg), whichever
# are installed. For each, in the same run:
#   - conversion: wall time and peak RSS of `symhub gsym convert` against
#     `llvm-gsymutil-19 --convert` (and -14, for the output size). Targets:
#     on libceph-common (issue 15), time <= 0.5x llvm-gsymutil-19's and
#     peak RSS <= 0.4x its; on libc, whose conversion is too short for
#     threads to pay, time <= 1x (aim: 0.5x) and peak RSS <= 0.5x; output
#     size <= llvm-gsymutil-14's on both;
#   - lookups of 10,000 random .text addresses: `symhub gsym lookup` (on
#     stdin) in our GSYM, `llvm-gsymutil-19 --address...` in LLVM's, and
#     `llvm-symbolizer-19 --obj=DEBUGFILE` on the DWARF, with how often
#     they agree;
#   - symhubd: GET /buildid/ID/gsym once (the first conversion, timed
#     apart), then the same 10,000 addresses POSTed to
#     /buildid/ID/symbolize, against llvm-symbolizer-19. Target: >= 10x
#     faster. Skipped, with a message, when symhubd does not serve GSYM.
#
# Not part of `make check`: it takes a few minutes (mostly libceph-common)
# and its numbers depend on the machine. Environment:
#   BENCH_ROUNDS=3         timed runs per measurement; the median counts
#   BENCH_LOOKUPS=10000    random addresses per input
#   BENCH_BATCH=10000      addresses per POST /symbolize request
#   BENCH_INPUTS="libc ceph"  which inputs to use
#   BENCH_READY_TIMEOUT=120   seconds to wait for symhubd to index
#   BENCH_KEEP=1           keep the temporary directory
# Exits 0 when every target is met, 1 when one is missed or on an error,
# 77 when a tool or every input is missing, as the tests do.

set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
symhub=$builddir/src/symhub/symhub
symhubd=$builddir/src/symhubd/symhubd

rounds=${BENCH_ROUNDS:-3}
nlookups=${BENCH_LOOKUPS:-10000}
batch=${BENCH_BATCH:-10000}
ready_timeout=${BENCH_READY_TIMEOUT:-120}
inputs=${BENCH_INPUTS:-libc ceph}

bench_name=bench_gsym
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"

check_numbers "$rounds" "$nlookups" "$batch" "$ready_timeout"
if [ "$rounds" = 0 ] || [ "$nlookups" = 0 ] || [ "$batch" = 0 ]; then
	die "BENCH_ROUNDS, BENCH_LOOKUPS and BENCH_BATCH must be positive"
fi
[ -x "$symhub" ] || die "no $symhub; build first, or pass the build directory"
for tool in llvm-gsymutil-19 llvm-gsymutil-14 llvm-symbolizer-19 curl \
    readelf awk paste python3; do
	command -v "$tool" >/dev/null || skip "$tool not installed"
done
[ -x /usr/bin/time ] || skip "/usr/bin/time not installed (package time)"

unset DEBUGINFOD_URLS
export LC_ALL=C
bench_setup symhub-bench-gsym

# --- Inputs ---------------------------------------------------------------

declare -A input_file input_id
names=()
for n in $inputs; do
	case $n in
	libc)
		find_libc_debug
		input_file[libc]=$libc_debug
		input_id[libc]=$libc_id
		;;
	ceph)
		f=$(dpkg -L librados2-dbg 2>/dev/null | grep '\.debug$' |
			xargs -r ls -S 2>/dev/null | head -1)
		if [ -z "$f" ]; then
			echo "$bench_name: no librados2-dbg; libceph-common skipped" >&2
			continue
		fi
		input_file[ceph]=$f
		input_id[ceph]=$(build_id "$f")
		;;
	*)
		die "unknown input $n (libc, ceph)"
		;;
	esac
	names+=("$n")
done
[ ${#names[@]} -gt 0 ] || skip "no input installed"

# --- Helpers --------------------------------------------------------------

now_us() {
	echo "${EPOCHREALTIME/./}"
}

# secs_since T0: seconds since now_us printed T0.
secs_since() {
	awk -v a="$1" -v b="$(now_us)" 'BEGIN { printf "%.3f", (b - a) / 1e6 }'
}

# symhubd_logs: the end of symhubd's output and log, for a message.
symhubd_logs() {
	tail -n 5 "$tmp/symhubd.out" "$tmp/symhubd.log" 2>/dev/null
}

llvm_version() { # TOOL
	"$1" --version 2>&1 | awk '/LLVM version/ { print "LLVM " $NF; exit }'
}

# measure OUT-PREFIX CMD...: runs CMD (its stdin, stdout as given by the
# caller's redirections on this function) under /usr/bin/time; appends
# "WALL-SECONDS PEAK-KIB" to OUT-PREFIX.runs. Fails when CMD fails.
measure() {
	local out=$1 t rc
	shift
	t=$(now_us)
	/usr/bin/time -f '%M' -o "$out.rss" "$@"
	rc=$?
	echo "$(secs_since "$t") $(tail -n 1 "$out.rss")" >>"$out.runs"
	return "$rc"
}

# median OUT-PREFIX: "WALL PEAK-KIB" of the median run.
median() {
	median_row <"$1.runs"
}

# rand_addrs N LO HI: N pseudo-random addresses in [LO, HI), as 0x%x, the
# same for the same arguments (as tests/test_gsym.sh).
rand_addrs() {
	# shellcheck disable=SC2046 # one number a word
	printf '0x%x\n' $(awk -v n="$1" -v lo="$2" -v hi="$3" 'BEGIN {
		srand(1)
		for (i = 0; i < n; i++)
			printf "%.0f\n", lo + int(rand() * (hi - lo)) }')
}

# text_range FILE: "LO HI" (decimal) of .text, from the section headers.
text_range() {
	local a s
	read -r a s < <(readelf -SW "$1" 2>/dev/null |
		sed -n 's/^ *\[ *[0-9]*\] //p' | awk '$1 == ".text" { print $3, $5 }')
	[ -n "$a" ] && echo "$((16#$a)) $((16#$a + 16#$s))"
}

# gsym_frames FILE: llvm-gsymutil's (or symhub's) lookup output as one line
# per address: "NAME@FILE:LINE" per frame, innermost first, joined by
# "|"; "??" when not found.
gsym_frames() {
	awk 'NR == 1 && /^Looking up addresses in / { next }
		function flush() { if (n++) print b }
		function frame(s,   loc) {
			sub(/ \[inlined\]$/, "", s)
			loc = ""
			if (match(s, / @ /)) {
				loc = substr(s, RSTART + 3)
				s = substr(s, 1, RSTART - 1)
			}
			sub(/ \+ [0-9]+$/, "", s)
			return s "@" loc
		}
		/^0x[0-9a-f]+: / {
			flush()
			s = substr($0, index($0, ": ") + 2)
			b = (s ~ /^error: /) ? "??" : frame(s)
			next
		}
		{ sub(/^ +/, ""); b = b "|" frame($0) }
		END { flush() }' "$1"
}

# symbolizer_frames FILE: llvm-symbolizer --addresses output the same way.
symbolizer_frames() {
	awk 'function flush() { if (have) print (b == "" ? "??" : b); have = 0 }
		/^0x[0-9a-f]+$/ { flush(); have = 1; b = ""; k = 0; next }
		/^$/ { next }
		{
			if (k++ % 2 == 0) { fn = $0; next }
			loc = $0
			sub(/:[0-9]+$/, "", loc)	# the column
			if (loc == "??:0")
				loc = ""
			if (fn == "??" && loc == "")
				next
			b = (b == "" ? "" : b "|") fn "@" loc
		}
		END { flush() }' "$1"
}

# symbolize_frames JSON...: /symbolize answers the same way.
symbolize_frames() {
	python3 - "$@" <<'EOF'
import json, sys
for path in sys.argv[1:]:
    with open(path) as f:
        doc = json.load(f)
    for r in doc.get("results", []):
        frames = []
        for fr in r.get("frames") or []:
            loc = ""
            if fr.get("file") and fr.get("line"):
                loc = "%s:%d" % (fr["file"], fr["line"])
            frames.append("%s@%s" % (fr.get("function", "??"), loc))
        print("|".join(frames) if frames else "??")
EOF
}

# agree A B: "SAME%, LOCATIONS%": how many lines of two frame files are
# equal, and how many have the same file:line in every frame (names aside:
# llvm-symbolizer names the outermost frame by its symbol, GSYM by DWARF).
agree() {
	paste -d '\t' "$1" "$2" | awk -F'\t' '
		function locs(s,   n, f, i, r) {
			n = split(s, f, "|")
			r = ""
			for (i = 1; i <= n; i++) {
				if (match(f[i], /@[^@]*$/))
					f[i] = substr(f[i], RSTART + 1)
				r = r "|" f[i]
			}
			return r
		}
		{ n++; if ($1 == $2) same++; if (locs($1) == locs($2)) loc++ }
		END {
			if (n == 0) { print "n/a, n/a"; exit }
			printf "%.2f%%, %.2f%%\n", 100 * same / n, 100 * loc / n
		}'
}

mib() { # KIB
	awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'
}

ratio() { # A B
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (b <= 0) print "n/a"; else printf "%.2f", a / b }'
}

# verdict RATIO OP TARGET: PASS or MISS (OP: le, ge).
verdict() {
	awk -v r="$1" -v t="$3" -v op="$2" 'BEGIN {
		if (r == "n/a") { print "MISS"; exit }
		ok = (op == "le") ? r + 0 <= t + 0 : r + 0 >= t + 0
		print ok ? "PASS" : "MISS" }'
}

verdicts=()
fail=0
# target LABEL RATIO OP TARGET [AIM]: records one line of the verdict table.
target() {
	local v
	v=$(verdict "$2" "$3" "$4")
	[ "$v" = PASS ] || fail=1
	verdicts+=("$(printf '  %-40s %7sx  (target %s %sx%s)  %s' "$1" "$2" \
		"$([ "$3" = le ] && echo '<=' || echo '>=')" "$4" \
		"${5:+, aim $5x}" "$v")")
}

# --- Conversion -----------------------------------------------------------

declare -A conv size
echo "$bench_name: converting (${rounds} rounds)..." >&2
for n in "${names[@]}"; do
	f=${input_file[$n]}
	d=$tmp/$n
	mkdir -p "$d"
	for r in $(seq "$rounds"); do
		# Alternate the order, so a neighbour's load that comes and
		# goes does not always land on the same tool.
		if [ $((r % 2)) = 1 ]; then
			order="symhub llvm19 llvm14"
		else
			order="llvm14 llvm19 symhub"
		fi
		for tool in $order; do
			case $tool in
			symhub)
				measure "$d/conv-symhub" "$symhub" gsym convert "$f" \
					-o "$d/ours.gsym" >"$d/ours.log" 2>&1 ||
					die "$n: symhub gsym convert failed: $(tail -n 3 "$d/ours.log")"
				;;
			llvm19)
				measure "$d/conv-llvm19" llvm-gsymutil-19 --convert "$f" \
					--out-file "$d/llvm19.gsym" >"$d/llvm19.log" 2>&1 ||
					die "$n: llvm-gsymutil-19 --convert failed"
				# Its output varies from run to run: keep the
				# first to see by how much.
				[ "$r" != 1 ] || cp "$d/llvm19.gsym" "$d/llvm19.first.gsym"
				;;
			llvm14)
				measure "$d/conv-llvm14" llvm-gsymutil-14 --convert "$f" \
					--out-file "$d/llvm14.gsym" >"$d/llvm14.log" 2>&1 ||
					die "$n: llvm-gsymutil-14 --convert failed"
				;;
			esac
		done
	done
	for tool in symhub llvm19 llvm14; do
		conv[$n-$tool]=$(median "$d/conv-$tool")
	done
	size[$n-symhub]=$(stat -c %s "$d/ours.gsym")
	size[$n-llvm19]=$(stat -c %s "$d/llvm19.gsym")
	size[$n-llvm14]=$(stat -c %s "$d/llvm14.gsym")
done

# --- Lookups --------------------------------------------------------------

declare -A look agreement
echo "$bench_name: looking up $nlookups addresses per input..." >&2
for n in "${names[@]}"; do
	f=${input_file[$n]}
	d=$tmp/$n
	read -r lo hi < <(text_range "$f") || die "$n: no .text in $f"
	rand_addrs "$nlookups" "$lo" "$hi" >"$d/addrs"
	mapfile -t args <"$d/addrs"
	for r in $(seq "$rounds"); do
		measure "$d/look-symhub" "$symhub" gsym lookup "$d/ours.gsym" \
			<"$d/addrs" >"$d/look-symhub.out" 2>"$d/look-symhub.err" ||
			die "$n: symhub gsym lookup failed: $(head -3 "$d/look-symhub.err")"
		measure "$d/look-llvm19" llvm-gsymutil-19 "$d/llvm19.gsym" \
			"${args[@]/#/--address=}" >"$d/look-llvm19.out" 2>&1 ||
			die "$n: llvm-gsymutil-19 lookups failed"
		measure "$d/look-symbolizer" llvm-symbolizer-19 --obj="$f" \
			--addresses --no-demangle <"$d/addrs" \
			>"$d/look-symbolizer.out" 2>/dev/null ||
			die "$n: llvm-symbolizer-19 failed"
	done
	for tool in symhub llvm19 symbolizer; do
		look[$n-$tool]=$(median "$d/look-$tool")
	done
	gsym_frames "$d/look-symhub.out" >"$d/fr-symhub"
	gsym_frames "$d/look-llvm19.out" >"$d/fr-llvm19"
	symbolizer_frames "$d/look-symbolizer.out" >"$d/fr-symbolizer"
	agreement[$n-symhub-llvm19]=$(agree "$d/fr-symhub" "$d/fr-llvm19")
	agreement[$n-symhub-symbolizer]=$(agree "$d/fr-symhub" "$d/fr-symbolizer")
	agreement[$n-llvm19-symbolizer]=$(agree "$d/fr-llvm19" "$d/fr-symbolizer")
	if [ "$rounds" -gt 1 ]; then
		llvm-gsymutil-19 "$d/llvm19.first.gsym" "${args[@]/#/--address=}" \
			>"$d/look-llvm19.first.out" 2>&1
		gsym_frames "$d/look-llvm19.first.out" >"$d/fr-llvm19.first"
		agreement[$n-llvm19-again]=$(agree "$d/fr-llvm19" "$d/fr-llvm19.first")
	fi
done

# --- symhubd: /symbolize ----------------------------------------------------

declare -A served first_get
serve_note=
sym_pid=
if [ ! -x "$symhubd" ]; then
	serve_note="no $symhubd"
else
	mkdir -p "$tmp/scan"
	for n in "${names[@]}"; do
		ln "${input_file[$n]}" "$tmp/scan/$n.debug" 2>/dev/null ||
			cp "${input_file[$n]}" "$tmp/scan/$n.debug" ||
			die "cannot copy ${input_file[$n]}"
	done
	port=$(free_port) || die "no free port"
	"$symhubd" -p "$port" -d "$tmp/store" -F "$tmp/scan" -t 0 \
		--log-file "$tmp/symhubd.log" >"$tmp/symhubd.out" 2>&1 &
	sym_pid=$!
	pids+=("$sym_pid")
	base=http://127.0.0.1:$port
	deadline=$((SECONDS + ready_timeout))
	for n in "${names[@]}"; do
		while [ "$(status_of "$base/buildid/${input_id[$n]}/debuginfo")" != 200 ]; do
			kill -0 "$sym_pid" 2>/dev/null ||
				die "symhubd exited early: $(symhubd_logs)"
			[ "$SECONDS" -lt "$deadline" ] ||
				die "symhubd has not indexed $n after ${ready_timeout}s"
			sleep 0.2
		done
	done
	for n in "${names[@]}"; do
		d=$tmp/$n
		u=$base/buildid/${input_id[$n]}
		t=$(now_us)
		st=$(curl -s -o "$d/served.gsym" -w '%{http_code}' "$u/gsym")
		first_get[$n]=$(secs_since "$t")
		case $st in
		200) ;;
		000)
			kill -0 "$sym_pid" 2>/dev/null ||
				die "symhubd died on GET $u/gsym: $(symhubd_logs)"
			serve_note="GET /buildid/ID/gsym: no answer"
			break
			;;
		400|404|405|501)
			serve_note="GET /buildid/ID/gsym answered $st:"
			serve_note+=" symhubd does not serve GSYM yet"
			break
			;;
		*)
			die "$n: GET $u/gsym answered $st"
			;;
		esac
		rm -f "$d"/batch.*
		split -l "$batch" -d -a 4 "$d/addrs" "$d/batch."
		for r in $(seq "$rounds"); do
			t=$(now_us)
			for b in "$d"/batch.[0-9]*; do
				[ "${b%.json}" = "$b" ] || continue
				st=$(curl -s -o "$b.json" -w '%{http_code}' \
					-H 'Content-Type: text/plain' \
					--data-binary "@$b" "$u/symbolize")
				case $st in
				200) ;;
				000)
					kill -0 "$sym_pid" 2>/dev/null ||
						die "symhubd died on POST $u/symbolize: $(symhubd_logs)"
					serve_note="POST /buildid/ID/symbolize: no answer"
					break 3
					;;
				400|404|405|501)
					serve_note="POST .../symbolize answered $st"
					break 3
					;;
				*)
					die "$n: POST $u/symbolize answered $st: $(head -c 300 "$b.json")"
					;;
				esac
			done
			echo "$(secs_since "$t") 0" >>"$d/serve.runs"
		done
		served[$n]=$(median "$d/serve")
		symbolize_frames "$d"/batch.[0-9]*.json >"$d/fr-served" ||
			die "$n: cannot parse the /symbolize answers"
		agreement[$n-served-symbolizer]=$(agree "$d/fr-served" "$d/fr-symbolizer")
		agreement[$n-served-symhub]=$(agree "$d/fr-served" "$d/fr-symhub")
	done
	kill "$sym_pid" 2>/dev/null
fi

# --- Report -----------------------------------------------------------------

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
echo "machine:   $(nproc) CPUs, ${cpu:-unknown CPU}, $(uname -sr)"
echo "versions:  $("$symhub" --version 2>&1 | head -1);" \
	"$(llvm_version llvm-gsymutil-19); $(llvm_version llvm-gsymutil-14)"
for n in "${names[@]}"; do
	printf 'input:     %-5s %s (%s bytes, build-id %s)\n' "$n" \
		"${input_file[$n]}" "$(stat -L -c %s "${input_file[$n]}")" "${input_id[$n]}"
done
echo "runs:      median of $rounds; $nlookups random .text addresses per input"
echo

echo "conversion        wall s   peak MiB    output bytes"
for n in "${names[@]}"; do
	for tool in symhub llvm19 llvm14; do
		read -r w k <<<"${conv[$n-$tool]}"
		case $tool in
		symhub) label="symhub gsym convert" ;;
		llvm19) label="llvm-gsymutil-19" ;;
		llvm14) label="llvm-gsymutil-14" ;;
		esac
		printf '  %-5s %-22s %8s %9s %14s\n' "$n" "$label" "$w" "$(mib "$k")" \
			"${size[$n-$tool]}"
	done
done
echo

echo "lookups           wall s   agreement (identical, same locations)"
for n in "${names[@]}"; do
	read -r w _ <<<"${look[$n-symhub]}"
	printf '  %-5s %-30s %7s   %s with llvm-gsymutil-19, %s with llvm-symbolizer-19\n' \
		"$n" "symhub gsym lookup (ours)" "$w" \
		"${agreement[$n-symhub-llvm19]}" \
		"${agreement[$n-symhub-symbolizer]}"
	read -r w _ <<<"${look[$n-llvm19]}"
	printf '  %-5s %-30s %7s   %s with llvm-symbolizer-19%s\n' \
		"$n" "llvm-gsymutil-19 (LLVM's)" "$w" \
		"${agreement[$n-llvm19-symbolizer]}" \
		"${agreement[$n-llvm19-again]:+; ${agreement[$n-llvm19-again]} with its own GSYM of another run}"
	read -r w _ <<<"${look[$n-symbolizer]}"
	printf '  %-5s %-30s %7s\n' "$n" "llvm-symbolizer-19 (DWARF)" "$w"
	if [ -n "${served[$n]:-}" ]; then
		read -r w _ <<<"${served[$n]}"
		printf '  %-5s %-30s %7s   %s with symhub gsym lookup, %s with llvm-symbolizer-19\n' \
			"$n" "symhubd POST /symbolize" "$w" \
			"${agreement[$n-served-symhub]}" \
			"${agreement[$n-served-symbolizer]}"
		printf '  %-5s %-30s %7s   (first GET /buildid/ID/gsym: the conversion)\n' \
			"$n" "symhubd GET /gsym, first" "${first_get[$n]}"
	fi
done
echo "agreement: results identical (every frame's function, file and line), and"
echo "           with the same file:line in every frame (llvm-symbolizer names"
echo "           functions by their symbols, GSYM by DWARF: often another alias)"
[ -z "$serve_note" ] || echo "symhubd:   skipped: $serve_note"
echo

for n in "${names[@]}"; do
	read -r ws ks <<<"${conv[$n-symhub]}"
	read -r wl kl <<<"${conv[$n-llvm19]}"
	if [ "$n" = ceph ]; then
		target "$n: convert time ours/llvm-19" "$(ratio "$ws" "$wl")" le 0.5
		target "$n: convert peak RSS ours/llvm-19" \
			"$(ratio "$ks" "$kl")" le 0.4
	else
		target "$n: convert time ours/llvm-19" "$(ratio "$ws" "$wl")" \
			le 1 0.5
		target "$n: convert peak RSS ours/llvm-19" \
			"$(ratio "$ks" "$kl")" le 0.5
	fi
	target "$n: GSYM size ours/llvm-14" \
		"$(ratio "${size[$n-symhub]}" "${size[$n-llvm14]}")" le 1
	if [ -n "${served[$n]:-}" ]; then
		read -r wsv _ <<<"${served[$n]}"
		read -r wsy _ <<<"${look[$n-symbolizer]}"
		target "$n: /symbolize speed-up vs symbolizer" \
			"$(ratio "$wsy" "$wsv")" ge 10
	fi
done
echo "ratios, against the targets:"
printf '%s\n' "${verdicts[@]}"
exit "$fail"
