#!/bin/bash
# Corrupt DWARF never hangs a GSYM conversion.  A `g++ -g -O2` debug file
# is mutated once per abbreviation (its DW_CHILDREN flag flipped, so that
# the DIE tree no longer matches the bytes; before the converter walked
# offsets forward only, some of these walked the same DIEs without end):
#   1. `symhub gsym convert` of every mutant ends, with exit 0, or exit 1
#      and one line on stderr; the corrupt trees are named as such;
#   2. symhubd serving such a file: /gsym and /symbolize answer 422 at
#      once with a log line, a good build-id is converted meanwhile, and
#      the daemon stops on SIGTERM within 5 s.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_gsym_corrupt.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc g++ objcopy timeout python3 ss
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
unset DEBUGINFOD_URLS

mkdir -p "$tmp"/{cc,c,scan,mut,out} || exit 99
cp "$FIXTURES/inl.cc" "$tmp/cc/" && cp "$FIXTURES/inl.c" "$tmp/c/" || exit 99
(cd "$tmp/cc" && g++ -g -O2 -gz=none -o inl inl.cc &&
    objcopy --only-keep-debug inl inl.debug) || exit 99
(cd "$tmp/c" && gcc -g -O2 -o inl inl.c &&
    objcopy --only-keep-debug inl inl.debug) || exit 99
n=$(python3 "$top_srcdir/tests/flipabbrev.py" "$tmp/cc/inl.debug" \
    "$tmp/mut") || exit 99
[ "$n" -gt 50 ] || { echo "# only $n abbreviations"; exit 99; }

# ---- 1. the CLI --------------------------------------------------------------
ended=0 hung="" bad="" backward=0 ok=0
for i in $(seq 0 $((n - 1))); do
	timeout 60 "$SYMHUB" gsym convert "$tmp/mut/$i" -o "$tmp/out/$i.gsym" \
	    >/dev/null 2>"$tmp/out/$i.err"
	st=$?
	if [ "$st" = 124 ]; then
		hung="$hung $i"
		continue
	fi
	ended=$((ended + 1))
	case $st in
	0) ok=$((ok + 1)) ;;
	1) [ "$(wc -l <"$tmp/out/$i.err")" = 1 ] || bad="$bad $i" ;;
	*) bad="$bad $i(exit $st)" ;;
	esac
	grep -q "goes back on itself" "$tmp/out/$i.err" &&
	    backward=$((backward + 1)) && BACK=$i
done
check "every one of $n mutants ends ($ended ended; hung:${hung:- none})" \
    [ -z "$hung" ]
check "each converts, or exits 1 with one line on stderr (${bad:-all})" \
    [ -z "$bad" ]
echo "# $ok converted, $backward named a DIE tree that goes back on itself"
check "corrupt DIE trees are named as such ($backward mutants)" \
    [ "$backward" -gt 0 ]

# ---- 2. the daemon ------------------------------------------------------------
[ -n "${BACK:-}" ] || finish
cp "$tmp/mut/$BACK" "$tmp/scan/bad.debug" &&
    cp "$tmp/c/inl.debug" "$tmp/scan/good.debug" || exit 99
BAD=$(buildid "$tmp/scan/bad.debug")
GOOD=$(buildid "$tmp/scan/good.debug")
[ -n "$BAD" ] && [ -n "$GOOD" ] && [ "$BAD" != "$GOOD" ] ||
    { echo "# fixtures: build-ids"; exit 99; }
hub -F "$tmp/scan" --gsym-workers 1 --log-file "$tmp/hub.log"

code=$(http "/buildid/$BAD/gsym" "$tmp/out/body" "$tmp/out/hdrs" \
    --max-time 120)
check "/gsym of the corrupt debug file answers 422 ($code)" [ "$code" = 422 ]
check "... saying why" grep -q "DWARF is corrupt" "$tmp/out/body"
check "... with a log line" grep -q "gsym $BAD: cannot convert: corrupt DWARF" \
    "$tmp/hub.log"
code=$(http "/buildid/$BAD/symbolize" "$tmp/out/body" "$tmp/out/hdrs" \
    --max-time 120 --data-binary '0x1000')
check "/symbolize of it answers 422 too ($code)" [ "$code" = 422 ]
code=$(http "/buildid/$GOOD/gsym" "$tmp/out/body" "$tmp/out/hdrs" \
    --max-time 120)
"$SYMHUB" gsym convert "$tmp/c/inl.debug" -o "$tmp/out/good.gsym" \
    >/dev/null 2>&1
check "the single worker then converts a good build-id ($code)" \
    eval '[ "$code" = 200 ] && cmp -s "$tmp/out/body" "$tmp/out/good.gsym"'
check "the failures are counted" \
    metric_cmp 'symhub_gsym_conversions_total{result="error"}' -ge 1
kill -TERM "$SYMHUBD_PID"
wait_exit "$SYMHUBD_PID" 5
check "symhubd stops within 5 s of SIGTERM (status $exit_status)" \
    [ "$exit_status" = 0 ]

finish
