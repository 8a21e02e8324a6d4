#!/bin/bash
# --gsym-ahead converts what the store held before it was on, with no
# request for it (the backlog pass):
#   1. a store filled by `symhub import` of an exported tree, the hub
#      stopped: started with --gsym-ahead, every debuginfo gets its GSYM,
#      then served from the store, not converted on the request;
#   2. a scan directory indexed at an earlier start without --gsym-ahead,
#      restarted with it: the same;
#   3. requests go first: with one worker and a long backlog, a GET /gsym
#      of the build-id the backlog would reach last is answered, converted
#      for it, while most of the backlog is still to do;
#   4. a restart with everything converted converts nothing; SIGHUP walks
#      the store again (what an import beside the hub added).
# The fixtures are one debug file copied under N build-ids (the note's
# bytes rewritten), so that the backlog is long and cheap to make.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_gsym_backlog.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy readelf python3 cmp awk
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
unset DEBUGINFOD_URLS

N=120		# debug files: the backlog

section 'fixtures'
mkdir -p "$tmp"/{src,scan,exp,out} || exit 99
# 300 small functions: a conversion takes a few milliseconds, not less.
python3 - "$tmp/src/many.c" <<'EOF' || exit 99
import sys
with open(sys.argv[1], "w") as f:
    f.write("#include <stdio.h>\n")
    for i in range(300):
        f.write("__attribute__((noinline)) int f%d(int x) "
                "{ int y = x * %d; if (y & 1) y ^= x << 2; return y + %d; }\n"
                % (i, i + 3, i))
    f.write("int main(int c, char **v) { int s = 0;\n")
    for i in range(300):
        f.write(" s += f%d(c);\n" % i)
    f.write(' printf("%d\\n", s); return 0; }\n')
EOF
(cd "$tmp/src" && gcc -g -O1 -o many many.c) &&
    objcopy --only-keep-debug "$tmp/src/many" "$tmp/src/many.debug" || exit 99
ID0=$(buildid "$tmp/src/many.debug")
[ ${#ID0} = 40 ] || { echo "# fixtures: no 20-byte build-id in many.debug"; exit 99; }
# N copies, each under its own build-id; LAST sorts after every other one
# (the backlog walks the store in build-id order).
python3 - "$tmp/src/many.debug" "$ID0" "$tmp/scan" "$N" >"$tmp/ids" <<'EOF' || exit 99
import hashlib, sys
src, old, out, n = sys.argv[1], bytes.fromhex(sys.argv[2]), sys.argv[3], int(sys.argv[4])
data = open(src, "rb").read()
if data.count(old) != 1:
    sys.exit("the build-id is not in the file exactly once")
for i in range(n):
    new = hashlib.sha1(b"backlog %d" % i).digest()
    new = (b"\xff" + new[1:]) if i == n - 1 else (b"\x10" + new[1:])
    open("%s/%03d.debug" % (out, i), "wb").write(data.replace(old, new))
    print(new.hex())
EOF
mapfile -t IDS <"$tmp/ids"
LAST=${IDS[$((N - 1))]}
check "$N debug files, each with its own build-id" \
    eval '[ "$(sort -u "$tmp/ids" | wc -l)" = "$N" ] &&
    [ "$(buildid "$tmp/scan/$(printf %03d $((N - 1))).debug")" = "$LAST" ]'
# The expected answers, for two of them: symhub's own converter.
for i in 0 $((N - 1)); do
	"$SYMHUB" gsym convert "$tmp/scan/$(printf %03d $i).debug" \
	    -o "$tmp/exp/${IDS[$i]}.gsym" >/dev/null 2>&1 &&
	    [ -s "$tmp/exp/${IDS[$i]}.gsym" ] ||
	    { echo "# symhub gsym convert $i failed"; exit 99; }
done

# ---- helpers ----------------------------------------------------------

conv_ok() {
	metric 'symhub_gsym_conversions_total{result="ok"}'
}

# expect_stored DESC ID LOG: GET /gsym answers symhub gsym convert's bytes
# from the store, and the access log does not say converted; no
# conversion runs for it.
expect_stored() {
	local d=$1 id=$2 log=$3 code before line
	before=$(conv_ok)
	code=$(http "/buildid/$id/gsym" "$tmp/out/$id.gsym" "$tmp/out/$id.hdr")
	wait_until 10 grep -q "GET /buildid/$id/gsym " "$log"
	line=$(grep "GET /buildid/$id/gsym " "$log" | tail -1)
	if [ "$code" != 200 ]; then
		fail "$d" "status $code, want 200" \
		    "$(head -c 200 "$tmp/out/$id.gsym")"
	elif [ -f "$tmp/exp/$id.gsym" ] &&
	    ! cmp -s "$tmp/out/$id.gsym" "$tmp/exp/$id.gsym"; then
		fail "$d" "200, but not symhub gsym convert's bytes"
	elif [[ $line == *" converted "* ]] || [ -z "$line" ]; then
		fail "$d" "the access log says: '$line'"
	elif [ "$(conv_ok)" != "$before" ]; then
		fail "$d" "a conversion ran for the request"
	else
		pass "$d"
	fi
}

# backlog_done: the pass ended and nothing is left queued or running.
backlog_done() {
	metric_cmp symhub_gsym_backlog_passes_total -ge 1 &&
	    metric_cmp symhub_gsym_jobs -eq 0
}

# expect_all DESC: every one of the N converted with no request.
expect_all() {
	if wait_metric 'symhub_gsym_conversions_total{result="ok"}' -ge "$N" \
	    60 && wait_until 20 backlog_done; then
		pass "$1"
	else
		fail "$1" "$(metrics_text | grep '^symhub_gsym_')"
	fi
}

section 'an earlier start without --gsym-ahead indexes the scan directory'
hub -d "$tmp/storeA" -F "$tmp/scan" --log-file "$tmp/hubA1.log"
check "$N debuginfo indexed, nothing converted" \
    [ "$(conv_ok)" = 0 ] && metric_cmp 'symhub_scan_files_total{result="indexed"}' -ge "$N"
stop_check "symhubd (A, without --gsym-ahead): SIGTERM, exit 0"

section 'export, then import into a new store, the hub stopped'
"$SYMHUB" export "$tmp/storeA" "$tmp/tree" >"$tmp/out/exp" 2>&1
check "export: $N written" grep -q "^$N written" "$tmp/out/exp"
"$SYMHUB" import "$tmp/tree" "$tmp/storeB" >"$tmp/out/imp" 2>&1
check "import: $N imported" grep -q "^$N imported" "$tmp/out/imp"
# Another tree, for an import beside a running hub (4): the original
# build-id, which no store above has.
mkdir -p "$tmp/scan0" && cp "$tmp/src/many.debug" "$tmp/scan0/" || exit 99
hub -d "$tmp/storeC" -F "$tmp/scan0" --log-file "$tmp/hubC.log"
stop_check "symhubd (C): SIGTERM, exit 0"
"$SYMHUB" export "$tmp/storeC" "$tmp/tree0" >"$tmp/out/exp0" 2>&1
check "export of C: 1 written" grep -q "^1 written" "$tmp/out/exp0"

section '1. the imported store, started with --gsym-ahead'
hub -d "$tmp/storeB" --gsym-ahead --log-file "$tmp/hubB.log"
expect_all "every imported debuginfo converted, with no request"
check "... by the backlog: symhub_gsym_ahead_total{result=\"backlog\"} = $N" \
    metric_cmp 'symhub_gsym_ahead_total{result="backlog"}' -eq "$N"
check "... each once" metric_cmp \
    'symhub_gsym_conversions_total{result="ok"}' -eq "$N"
expect_stored "GET /gsym of the first: stored, not converted now" \
    "${IDS[0]}" "$tmp/hubB.log"
expect_stored "GET /gsym of the last: stored, not converted now" \
    "$LAST" "$tmp/hubB.log"
stop_check "symhubd (B): SIGTERM, exit 0"

section '4. a restart with everything converted converts nothing'
hub -d "$tmp/storeB" --gsym-ahead --log-file "$tmp/hubB2.log"
if wait_until 30 backlog_done; then
	pass "the pass ends"
else
	fail "the pass ends" "$(metrics_text | grep '^symhub_gsym_backlog')"
fi
check "... having looked at the $N records and queued none" \
    eval 'metric_cmp symhub_gsym_backlog_records_total -eq "$N" &&
    metric_cmp "symhub_gsym_ahead_total{result=\"backlog\"}" -eq 0 &&
    metric_cmp "symhub_gsym_conversions_total{result=\"ok\"}" -eq 0'
"$SYMHUB" import -q "$tmp/tree0" "$tmp/storeB" >"$tmp/out/imp0" 2>&1
check "an import beside the running hub" [ $? = 0 ]
kill -HUP "$SYMHUBD_PID"
if wait_metric symhub_gsym_backlog_passes_total -ge 2 20 &&
    wait_metric 'symhub_gsym_conversions_total{result="ok"}' -ge 1 30; then
	pass "... SIGHUP: another pass converts what it added"
else
	fail "... SIGHUP: another pass converts what it added" \
	    "$(metrics_text | grep '^symhub_gsym_')"
fi
check "... that only" metric_cmp \
    'symhub_gsym_ahead_total{result="backlog"}' -eq 1
stop_check "symhubd (B, again): SIGTERM, exit 0"

section '2 and 3. the scan directory restarted with --gsym-ahead'
# One worker of one thread, so that the backlog is long; the last
# build-id is what the backlog reaches last.
hub -d "$tmp/storeA" -F "$tmp/scan" --gsym-ahead --gsym-workers 1 \
    --gsym-threads 1 --log-file "$tmp/hubA2.log"
code=$(http "/buildid/$LAST/gsym" "$tmp/out/last" "$tmp/out/last.hdr")
done_then=$(conv_ok)
backlog_then=$(metric 'symhub_gsym_ahead_total{result="backlog"}')
expect_status "3. GET /gsym of the last while the backlog runs: 200" 200 \
    "$code" "$tmp/out/last"
check "... symhub gsym convert's bytes" \
    cmp -s "$tmp/out/last" "$tmp/exp/$LAST.gsym"
wait_until 10 grep -q "GET /buildid/$LAST/gsym " "$tmp/hubA2.log"
case $(grep "GET /buildid/$LAST/gsym " "$tmp/hubA2.log" | tail -1) in
*" converted "*) pass "... converted for the request" ;;
*) fail "... converted for the request" \
    "$(grep "GET /buildid/$LAST/gsym " "$tmp/hubA2.log")" ;;
esac
# The backlog walks in build-id order: had the request waited its turn,
# every other one would have been converted first.
if [ -n "$backlog_then" ] && [ "$backlog_then" -ge 1 ] &&
    [ "$done_then" -lt "$N" ]; then
	pass "... before the backlog's ($done_then of $N converted when answered)"
else
	fail "... before the backlog's" "when answered: $done_then of $N" \
	    "converted, ${backlog_then:-no} backlog conversions queued"
fi
expect_all "2. every scanned debuginfo converted, with no request"
check "... each once (the last was not converted again)" metric_cmp \
    'symhub_gsym_conversions_total{result="ok"}' -eq "$N"
expect_stored "GET /gsym of the first: stored, not converted now" \
    "${IDS[0]}" "$tmp/hubA2.log"
stop_check "symhubd (A, with --gsym-ahead): SIGTERM, exit 0"

finish
