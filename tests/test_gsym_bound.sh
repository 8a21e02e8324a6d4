#!/bin/bash
# Integration test of symhubd's GSYM service on inputs that once hung it,
# and on a store that cannot take a GSYM (issue 11, items 1 and 10).
# Fixtures built now from tests/fixtures/inl.cc (g++ -g -O2) in three
# directories (three build-ids), debug files scanned (-F), one GSYM
# worker (the default):
#   good   as built;
#   bad    one DW_CHILDREN flag of .debug_abbrev flipped (the most used
#          DW_CHILDREN_no abbreviation, the issue's case): the DIE walk
#          used to revisit the same DIEs without end;
#   slow   sound DWARF that takes minutes to convert (tests/dwarf_mutate.py
#          wide: a function of 200 ranges over 3 million inlined calls,
#          looked at once per range).
#   1. GET /gsym of bad: a definite answer (422), a log line; asked again,
#      the same answer; meanwhile GET /gsym of good is answered, with the
#      bytes of `symhub gsym convert`;
#   2. SIGTERM while slow converts: symhubd exits 0 within 5 s;
#   3. a store that is full at run time (a small tmpfs filled up): GET
#      /gsym and POST /symbolize of good still answer 200 with the same
#      bytes (converted in memory), not a 500 that libdebuginfod would
#      cache for 10 minutes.  Skipped (with the reason) where tmpfs cannot
#      be mounted.
# A hang is detected by curl's and wait_exit's time limits (generous, for
# ASan on a busy machine); the verdicts are the answers, not the times.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_gsym_bound.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl g++ objcopy readelf cmp timeout python3
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"

t0=$(date +%s)
unset DEBUGINFOD_URLS
MUT=$top_srcdir/tests/dwarf_mutate.py
LIMIT=${GSYM_BOUND_LIMIT:-120}	# seconds before a request counts as hung

section 'fixtures'
mkdir -p "$tmp"/{bin,scan,exp,out} || exit 99
for v in good bad slow; do
	mkdir -p "$tmp/src/$v" && cp "$FIXTURES/inl.cc" "$tmp/src/$v/" &&
	    (cd "$tmp/src/$v" && g++ -g -O2 -o "$tmp/bin/$v" inl.cc) &&
	    objcopy --only-keep-debug "$tmp/bin/$v" "$tmp/bin/$v.debug" ||
	    exit 99
done
pick=$(python3 "$MUT" pick "$tmp/bin/bad.debug") &&
    python3 "$MUT" flip "$tmp/bin/bad.debug" "$tmp/scan/bad.debug" "$pick" ||
    { echo "# cannot flip an abbreviation of bad.debug"; exit 99; }
read -r _ text _ < <(elf_section "$tmp/bin/slow.debug" .text)
[ -n "$text" ] || { echo "# slow.debug has no .text"; exit 99; }
text=0x$text
python3 "$MUT" wide 200 3000000 "$text" "$tmp/bin/wide.info" \
    "$tmp/bin/wide.abbrev" "$tmp/bin/wide.ranges" &&
    objcopy --remove-section .debug_ranges \
    --add-section .debug_ranges="$tmp/bin/wide.ranges" \
    --update-section .debug_info="$tmp/bin/wide.info" \
    --update-section .debug_abbrev="$tmp/bin/wide.abbrev" \
    "$tmp/bin/slow.debug" "$tmp/scan/slow.debug" ||
    { echo "# cannot make slow.debug"; exit 99; }
cp "$tmp/bin/good.debug" "$tmp/scan/" || exit 99
declare -A ID
for v in good bad slow; do
	ID[$v]=$(buildid "$tmp/scan/$v.debug")
	[ -n "${ID[$v]}" ] || { echo "# fixtures: $v has no build-id"; exit 99; }
done
[ "$(printf '%s\n' "${ID[@]}" | sort -u | wc -l)" = 3 ] ||
    { echo "# fixtures: build-ids not all different: ${ID[*]}"; exit 99; }
"$SYMHUB" gsym convert "$tmp/scan/good.debug" -o "$tmp/exp/good.gsym" \
    >/dev/null 2>"$tmp/exp/err" ||
    { echo "# symhub gsym convert good.debug: $(cat "$tmp/exp/err")"; exit 99; }

# get_gsym V OUT: GET /buildid/ID/gsym of fixture V, at most $LIMIT s; body
# to OUT; prints the status (000: no answer).
get_gsym() {
	http "/buildid/${ID[$1]}/gsym" "$2" "$2.hdr" --max-time "$LIMIT"
}


section 'a corrupt debug file, and a good one meanwhile'
hub -d "$tmp/store" -F "$tmp/scan" --gsym-workers 1 \
    --log-file "$tmp/hub1.log"
get_gsym bad "$tmp/out/bad" >"$tmp/out/bad.code" &
bad_pid=$!
PIDS+=("$bad_pid")
# The good one is asked once the worker has the corrupt one (queued jobs
# go newest first): answered already, or a job in the queue.
bad_taken() {
	! alive "$bad_pid" || metric_cmp symhub_gsym_jobs -ge 1
}
wait_until 20 bad_taken
code=$(get_gsym good "$tmp/out/good")
if [ "$code" = 200 ] && cmp -s "$tmp/out/good" "$tmp/exp/good.gsym"; then
	pass "GET /gsym of a good build-id, a corrupt one asked at once: 200," \
	    "symhub gsym convert's bytes"
else
	fail "GET /gsym of a good build-id, a corrupt one asked at once" \
	    "status $code (000: no answer in $LIMIT s)" \
	    "$(head -c 200 "$tmp/out/good" 2>/dev/null)"
fi
wait_exit "$bad_pid" "$LIMIT"
code=$(cat "$tmp/out/bad.code" 2>/dev/null)
if [ "$code" = 422 ] && grep -qi corrupt "$tmp/out/bad"; then
	pass "GET /gsym of the corrupt one: 422, \"$(cat "$tmp/out/bad")\""
else
	fail "GET /gsym of the corrupt one: 422" \
	    "status ${code:-none} (000: no answer in $LIMIT s)" \
	    "$(head -c 200 "$tmp/out/bad" 2>/dev/null)"
fi
if grep -q "gsym ${ID[bad]}: cannot convert: .*corrupt" "$tmp/hub1.log"; then
	pass "... logged: $(grep "gsym ${ID[bad]}: cannot" "$tmp/hub1.log" |
	    head -1 | sed 's/^.*gsym /gsym /')"
else
	fail "... logged" "$(tail -n 5 "$tmp/hub1.log")"
fi
code=$(get_gsym bad "$tmp/out/bad2")
expect_status "... asked again: 422 again" 422 "$code" "$tmp/out/bad2"
check "... counted: conversions_total{result=\"corrupt\"} >= 1" \
    metric_cmp 'symhub_gsym_conversions_total{result="corrupt"}' -ge 1

section 'SIGTERM during a long conversion'
get_gsym slow "$tmp/out/slow" >/dev/null &
slow_pid=$!
PIDS+=("$slow_pid")
if wait_metric symhub_gsym_jobs -ge 1 20; then
	kill -TERM "$SYMHUBD_PID"
	if wait_exit "$SYMHUBD_PID" 5; then
		check "SIGTERM during a long conversion: exit 0 within 5 s" \
		    test "$exit_status" = 0
	else
		fail "SIGTERM during a long conversion: exit within 5 s" \
		    "still running 5 s after SIGTERM"
		stop_symhubd "$SYMHUBD_PID"
	fi
else
	fail "SIGTERM during a long conversion" "the conversion never started:" \
	    "$(metrics_text | grep '^symhub_gsym')"
fi
wait_exit "$slow_pid" 10 || kill "$slow_pid" 2>/dev/null

section 'a store full at run time'
full=$tmp/full
mkdir -p "$full" || exit 99
if ! mount -t tmpfs -o size=8m tmpfs "$full" 2>"$tmp/mount.err"; then
	skip_check "a full store: cannot mount a tmpfs here" \
	    "($(head -1 "$tmp/mount.err"))"
else
	MOUNTS+=("$full")
	mkdir -p "$tmp/scan2" && cp "$tmp/scan/good.debug" "$tmp/scan2/" ||
	    exit 99
	hub -d "$full/store" -F "$tmp/scan2" --log-file "$tmp/hub2.log"
	# Fill it: what is left of the 8 MiB, to the last block.
	dd if=/dev/zero of="$full/filler" bs=64k >/dev/null 2>&1
	head -c 4096 /dev/zero >>"$full/filler" 2>/dev/null
	avail=$(df -k --output=avail "$full" | tail -1 | tr -d ' ')
	if [ "$avail" != 0 ]; then
		fail "a full store" "the tmpfs still has $avail KiB free"
	fi
	code=$(get_gsym good "$tmp/out/full")
	if [ "$code" = 200 ] && cmp -s "$tmp/out/full" "$tmp/exp/good.gsym"
	then
		pass "full store: GET /gsym -> 200, symhub gsym convert's bytes"
	else
		fail "full store: GET /gsym -> 200, symhub gsym convert's bytes" \
		    "status $code: $(head -c 200 "$tmp/out/full")" \
		    "$(tail -n 3 "$tmp/hub2.log")"
	fi
	check "... converted in memory, not stored" \
	    metric_cmp symhub_gsym_unstored_total -ge 1
	func=$(readelf -sW "$tmp/scan/good.debug" 2>/dev/null | awk '$4 == "FUNC" &&
	    $3 > 0 && $2 !~ /^0+$/ { print "0x" $2; exit }')
	printf '%s\n' "$func" >"$tmp/out/one"
	code=$(http "/buildid/${ID[good]}/symbolize" "$tmp/out/sym" \
	    "$tmp/out/sym.hdr" --max-time "$LIMIT" \
	    --data-binary "@$tmp/out/one")
	if [ "$code" = 200 ] && grep -q '"function"' "$tmp/out/sym"; then
		pass "... POST /symbolize of $func -> 200, a function"
	else
		fail "... POST /symbolize of $func -> 200, a function" \
		    "status $code: $(head -c 200 "$tmp/out/sym")"
	fi
	code=$(get_gsym good "$tmp/out/full2")
	if [ "$code" = 200 ] && cmp -s "$tmp/out/full2" "$tmp/exp/good.gsym"
	then
		pass "... GET /gsym again: 200, the same bytes"
	else
		fail "... GET /gsym again: 200, the same bytes" "status $code"
	fi
	rm -f "$full/filler"
	stop_check "symhubd on the full store: SIGTERM, exit 0"
fi

echo "# $(($(date +%s) - t0)) s"
finish
