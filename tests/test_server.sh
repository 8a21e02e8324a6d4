#!/bin/bash
# Integration test of symhubd: a real daemon on 127.0.0.1 indexing fixtures
# built now, asked by curl, debuginfod-find, libdebuginfod (dfclient) and
# gdb; bytes, status codes, headers, metrics, restarts, rescans, bad
# files, read-only and full stores, the config machinery and its docs.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_server.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy strip readelf cmp timeout awk sed ss \
    debuginfod-find gdb
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
[ -x "$DFCLIENT" ] || skip "$DFCLIENT not built (make check builds it)"

t0=$(date +%s)
log=$tmp/symhubd.log

section 'fixtures'
# hello.debug alone in debug/, hello.stripped alone in deploy/, so the
# expected answer for each artifact is unambiguous.
mkdir -p "$tmp"/{src,bin,debug,deploy,orig,out,gdb,junk,rofix} || exit 99
cp "$FIXTURES"/hello.c "$FIXTURES"/greet.c "$FIXTURES"/greet.h "$tmp/src/" ||
    exit 99
(cd "$tmp/src" && gcc -g -O0 -o "$tmp/bin/hello" hello.c greet.c) || exit 99
objcopy --only-keep-debug "$tmp/bin/hello" "$tmp/debug/hello.debug" || exit 99
strip -g -o "$tmp/deploy/hello.stripped" "$tmp/bin/hello" || exit 99
# A second, different program (other code, so another build-id).
(cd "$tmp/src" && gcc -g -O1 -o "$tmp/bin/hello2" hello.c greet.c) || exit 99
strip -g -o "$tmp/bin/hello2.stripped" "$tmp/bin/hello2" || exit 99
cp "$tmp/debug/hello.debug" "$tmp/deploy/hello.stripped" "$tmp/orig/"
cp "$tmp/debug/hello.debug" "$tmp/rofix/"

DBG=$tmp/orig/hello.debug
EXE=$tmp/orig/hello.stripped
EXE2=$tmp/bin/hello2.stripped
SRC=$tmp/src/hello.c
ID=$(buildid "$tmp/bin/hello")
ID2=$(buildid "$EXE2")
if [ -z "$ID" ] || [ "$ID" != "$(buildid "$EXE")" ] ||
    [ "$ID" != "$(buildid "$DBG")" ]; then
	echo "# fixtures: no or different build-ids"
	exit 99
fi
if [ -z "$ID2" ] || [ "$ID2" = "$ID" ]; then
	echo "# fixtures: hello2 has no build-id of its own"
	exit 99
fi
UNKNOWN=00112233445566778899aabbccddeeff00112233

if ! { extract_section "$DBG" .debug_info "$tmp/orig/debug_info" &&
    extract_section "$DBG" .debug_line "$tmp/orig/debug_line" &&
    extract_section "$DBG" .debug_abbrev "$tmp/orig/debug_abbrev" &&
    extract_section "$DBG" .debug_str "$tmp/orig/debug_str" &&
    extract_section "$EXE" .text "$tmp/orig/text" &&
    extract_section "$EXE2" .text "$tmp/orig/text2"; }; then
	echo "# cannot extract sections with readelf"
	exit 99
fi
cmp -s "$tmp/orig/text" "$tmp/orig/text2" && { echo "# same .text"; exit 99; }
[ -s "$tmp/orig/debug_info" ] || { echo "# empty .debug_info"; exit 99; }


section 'start'
if start_symhubd -d "$tmp/store" -F "$tmp/debug" -F "$tmp/deploy" \
    --source-root "$tmp/src" --log-file "$log"; then
	pass "symhubd starts and /metrics says ready 1"
else
	fail "symhubd starts and /metrics says ready 1" \
	    "$(tail -n 5 "$tmp/symhubd.out" "$log" 2>/dev/null)"
	finish
fi
# symhubd listens only after its first pass: no answer may come from a
# half-built index (a 404 then would be cached by clients for 10 min).
check "first scan pass is done when symhubd first answers" \
    metric_cmp symhub_scan_passes_total -ge 1
files0=$(metric 'http_responses_total{result="file"}')

# Keep-alive: a second request, a 200 and then a 404, on one connection.
conns=$(curl -s -o /dev/null -o /dev/null -w '%{num_connects} ' \
    "$URL/buildid/$ID/debuginfo" "$URL/buildid/${ID%??}00/debuginfo")
check "one connection serves a 200 and a 404 (keep-alive)" \
    test "$conns" = "1 0 "

section 'headers, cold and warm'
# Compare the headers a user-agent sees on the first and second answer.
hdrset() {
	local h
	for h in Content-Type Content-Length X-DEBUGINFOD-SIZE \
	    X-DEBUGINFOD-FILE Last-Modified Cache-Control; do
		echo "$h: $(header "$1" "$h")"
	done
}
# check_headers DESC HDRFILE EXPECTED-SIZE EXPECTED-XFILE
check_headers() {
	local d=$1 h=$2 size=$3 xfile=$4 lm errs=()
	[ "$(header "$h" Content-Type)" = application/octet-stream ] ||
	    errs+=("Content-Type '$(header "$h" Content-Type)'")
	[ "$(header "$h" Content-Length)" = "$size" ] ||
	    errs+=("Content-Length '$(header "$h" Content-Length)' != $size")
	[ "$(header "$h" X-DEBUGINFOD-SIZE)" = "$size" ] ||
	    errs+=("X-DEBUGINFOD-SIZE '$(header "$h" X-DEBUGINFOD-SIZE)'")
	[ "$(header "$h" X-DEBUGINFOD-FILE)" = "$xfile" ] ||
	    errs+=("X-DEBUGINFOD-FILE '$(header "$h" X-DEBUGINFOD-FILE)' != $xfile")
	[ "$(header "$h" Cache-Control)" = public ] ||
	    errs+=("Cache-Control '$(header "$h" Cache-Control)'")
	lm=$(header "$h" Last-Modified)
	lm=$(date -u -d "$lm" +%s 2>/dev/null)
	[ -n "$lm" ] && [ "$lm" -gt 86400 ] ||
	    errs+=("Last-Modified '$(header "$h" Last-Modified)' (epoch or bad)")
	[ ${#errs[@]} -eq 0 ]
	verdict $? "$d" "${errs[@]}"
}

for kind in debuginfo section; do
	if [ $kind = debuginfo ]; then
		p=/buildid/$ID/debuginfo exp=$DBG
		xf=$tmp/debug/hello.debug
	else
		p=/buildid/$ID/section/.debug_line exp=$tmp/orig/debug_line
		xf=$tmp/debug/hello.debug
	fi
	for w in cold warm; do
		expect_get "$kind $w: 200 with the right bytes" "$p" 200 "$exp"
		cp "$tmp/out/hdrs" "$tmp/out/$kind.$w.hdrs"
		check_headers "$kind $w: headers" "$tmp/out/$kind.$w.hdrs" \
		    "$(file_size "$exp")" "$xf"
	done
	[ "$(hdrset "$tmp/out/$kind.cold.hdrs")" = \
	    "$(hdrset "$tmp/out/$kind.warm.hdrs")" ]
	verdict $? "$kind: cold and warm headers identical" \
	    "$(diff <(hdrset "$tmp/out/$kind.cold.hdrs") \
	    <(hdrset "$tmp/out/$kind.warm.hdrs"))"
done
# The access log says how each was served: extracted, then from the cache.
access_hows() {
	grep -F " GET /buildid/$ID/section/.debug_line 200 " "$log" |
	    awk '{ print $(NF - 1) }' | tr '\n' ' '
}
hows_ok() {
	[ "$(access_hows)" = "extracted hit " ]
}
wait_until 5 hows_ok
verdict $? "section: first request extracted, second served from the cache" \
    "log says: $(access_hows)"

section 'debuginfod-find'
client_env
client_file "debuginfod-find debuginfo" "$DBG" debuginfod-find debuginfo "$ID"
client_file "debuginfod-find executable" "$EXE" debuginfod-find executable "$ID"
client_file "debuginfod-find source" "$SRC" debuginfod-find source "$ID" "$SRC"
client_file "debuginfod-find section .debug_info" "$tmp/orig/debug_info" \
    debuginfod-find section "$ID" .debug_info
client_file "debuginfod-find section .text (from the executable)" \
    "$tmp/orig/text" debuginfod-find section "$ID" .text
! timeout 30 debuginfod-find debuginfo "$UNKNOWN" >/dev/null 2>&1
verdict $? "debuginfod-find: unknown build-id fails"
# 406 "too big" is not remembered by the client as "not found".
client_env
! DEBUGINFOD_MAXSIZE=10 timeout 30 debuginfod-find debuginfo "$ID" \
    >/dev/null 2>&1
verdict $? "debuginfod-find with DEBUGINFOD_MAXSIZE=10 fails"
client_file "debuginfod-find after a 406, same client cache" "$DBG" \
    debuginfod-find debuginfo "$ID"

section 'libdebuginfod C API'
client_env
client_file "dfclient debuginfo" "$DBG" "$DFCLIENT" debuginfo "$ID"
client_file "dfclient executable" "$EXE" "$DFCLIENT" executable "$ID"
client_file "dfclient source" "$SRC" "$DFCLIENT" source "$ID" "$SRC"
client_file "dfclient source (second CU)" "$tmp/src/greet.c" \
    "$DFCLIENT" source "$ID" "$tmp/src/greet.c"
client_file "dfclient section .debug_info" "$tmp/orig/debug_info" \
    "$DFCLIENT" section "$ID" .debug_info

section 'gdb'
# The stripped binary alone in a directory; no local debug file reachable
# (no .gnu_debuglink, not under /usr/lib/debug).  substitute-path hides the
# local sources from gdb, so they too must come through debuginfod.
client_env
cp "$EXE" "$tmp/gdb/hello"
(cd "$tmp/gdb" && timeout 30 gdb -nx -batch \
    -iex 'set debuginfod enabled on' \
    -iex "set substitute-path $tmp/src $tmp/nonexistent" \
    -ex 'info line square' -ex 'list main' "$tmp/gdb/hello") \
    >"$tmp/out/gdb" 2>&1
grep -Eq '^Line [0-9]+ of "hello.c".*<square' "$tmp/out/gdb"
verdict $? "gdb: info line square names hello.c and a line" \
    "$(head -20 "$tmp/out/gdb")"
grep -q 'square(argc + 1)' "$tmp/out/gdb"
verdict $? "gdb: list main shows the source, fetched through debuginfod" \
    "$(head -20 "$tmp/out/gdb")"
cmp -s "$DEBUGINFOD_CACHE_PATH/$ID/debuginfo" "$DBG"
verdict $? "gdb: debuginfo came from symhubd" \
    "$(find "$DEBUGINFOD_CACHE_PATH" | head)"
f=$(find "$DEBUGINFOD_CACHE_PATH/$ID" -name 'source*hello.c' 2>/dev/null |
    head -1)
expect_file "gdb: hello.c came from symhubd" "$f" "$SRC"

section 'status codes'
# HEAD: 200, Content-Length, no body (read off the socket, not via curl).
if raw_request HEAD "/buildid/$ID/debuginfo" "$tmp/out/head"; then
	# Bytes up to and including the empty line that ends the headers.
	hlen=$(awk '{ n += length($0) + 1 } $0 == "\r" { print n; exit }' \
	    "$tmp/out/head")
	st=$(head -1 "$tmp/out/head" | awk '{ print $2 }')
	cl=$(header "$tmp/out/head" Content-Length)
	blen=$(($(file_size "$tmp/out/head") - ${hlen:-0}))
	[ "$st" = 200 ] && [ "$cl" = "$(file_size "$DBG")" ] &&
	    [ -n "$hlen" ] && [ "$blen" = 0 ]
	verdict $? "HEAD: 200, Content-Length, no body" "status $st," \
	    "Content-Length '$cl', header bytes '$hlen', body $blen bytes"
else
	fail "HEAD: 200, Content-Length, no body" "no connection"
fi

size=$(file_size "$DBG")
expect_get "X-DEBUGINFOD-MAXSIZE: 10 -> 406" "/buildid/$ID/debuginfo" 406 "" \
    -H 'X-DEBUGINFOD-MAXSIZE: 10'
expect_get "X-DEBUGINFOD-MAXSIZE: exact size -> 200" "/buildid/$ID/debuginfo" \
    200 "$DBG" -H "X-DEBUGINFOD-MAXSIZE: $size"
expect_get "X-DEBUGINFOD-MAXSIZE: size - 1 -> 406" "/buildid/$ID/debuginfo" \
    406 "" -H "X-DEBUGINFOD-MAXSIZE: $((size - 1))"
expect_get "X-DEBUGINFOD-MAXSIZE on a section -> 406" \
    "/buildid/$ID/section/.debug_info" 406 "" -H 'X-DEBUGINFOD-MAXSIZE: 10'

# expect_400 DESC PATH: 400 and a one-line, non-empty reason.
expect_400() {
	local code
	code=$(http "$2" "$tmp/out/body" "$tmp/out/hdrs")
	[ "$code" = 400 ] && [ -s "$tmp/out/body" ] &&
	    [ "$(wc -l <"$tmp/out/body")" -le 1 ] &&
	    [ -n "$(tr -d '[:space:]' <"$tmp/out/body")" ]
	verdict $? "$1 -> 400 ($(head -1 "$tmp/out/body"))" "status $code" \
	    "body: $(head -c 200 "$tmp/out/body")"
}
long=$(printf '%0130d' 0)
expect_400 "uppercase id" "/buildid/$(echo "$ID" | tr a-f A-F)/debuginfo"
expect_400 "odd-length id" "/buildid/${ID:1}/debuginfo"
expect_400 "130 hex characters" "/buildid/$long/debuginfo"
expect_400 "non-hex id" "/buildid/${ID:2}zz/debuginfo"
expect_400 "empty id" "/buildid//debuginfo"
expect_400 "unknown artifact type" "/buildid/$ID/foo"
expect_400 "no artifact type" "/buildid/$ID"
expect_400 "junk after the type" "/buildid/$ID/debuginfo/x"
expect_get "128 hex characters, unknown -> 404" \
    "/buildid/$(printf '%0128d' 0)/debuginfo" 404
expect_get "/nope -> 404" /nope 404
expect_get "unknown id -> 404" "/buildid/$UNKNOWN/debuginfo" 404
expect_get "unknown id section -> 404" "/buildid/$UNKNOWN/section/.text" 404
expect_get "unknown section -> 404" "/buildid/$ID/section/.nosuch" 404
expect_get "POST -> 405" "/buildid/$ID/debuginfo" 405 "" -X POST -d x=1
expect_get "/ -> 200" / 200
expect_get "source with .. and // -> 200, same bytes" \
    "/buildid/$ID/source$tmp/src/../src//./hello.c" 200 "$SRC"
expect_get "source greet.c -> 200" "/buildid/$ID/source$tmp/src/greet.c" 200 \
    "$tmp/src/greet.c"
expect_get "source outside --source-root (/etc/passwd) -> 404" \
    "/buildid/$ID/source/etc/passwd" 404
expect_get "source outside --source-root (the binary) -> 404" \
    "/buildid/$ID/source$tmp/bin/hello" 404
expect_get "source escaping the root with .. -> 404" \
    "/buildid/$ID/source$tmp/src/../bin/hello" 404
expect_get "source escaping with /../../ -> 404" \
    "/buildid/$ID/source/../../../../etc/passwd" 404
expect_get "source not named in the DWARF -> 404" \
    "/buildid/$ID/source$tmp/src/nosuch.c" 404
hops8=10.0.0.1,10.0.0.2,10.0.0.3,10.0.0.4,10.0.0.5,10.0.0.6,10.0.0.7,10.0.0.8
hops7=${hops8%,*}
# The hop limit stops federation, not local answers (as in elfutils):
# what the hub has is served whatever the chain; test_federation_hops.sh
# checks that no upstream is asked past the limit.
expect_get "X-Forwarded-For with 8 hops: a stored hit is still 200" \
    "/buildid/$ID/debuginfo" 200 "$DBG" -H "X-Forwarded-For: $hops8"
# Another id: the last byte changed (one id in 256 ends in 00 already).
OTHER=${ID%??}00
[ "$OTHER" != "$ID" ] || OTHER=${ID%??}ff
expect_get "X-Forwarded-For with 8 hops: a miss is 404" \
    "/buildid/$OTHER/debuginfo" 404 "" -H "X-Forwarded-For: $hops8"
expect_get "X-Forwarded-For with 7 hops -> 200" "/buildid/$ID/debuginfo" 200 \
    "$DBG" -H "X-Forwarded-For: $hops7"
expect_get "X-Forwarded-For with 2 hops -> 200" "/buildid/$ID/debuginfo" 200 \
    "$DBG" -H 'X-Forwarded-For: 10.0.0.1, 10.0.0.2'

section '64 parallel requests'
mkdir -p "$tmp/par"
jobs_=()
for i in $(seq 0 63); do
	case $((i % 4)) in
	0) p=/buildid/$ID/debuginfo ;;
	1) p=/buildid/$ID/executable ;;
	2) p=/buildid/$ID/section/.debug_info ;;
	3) p=/buildid/$ID/section/.text ;;
	esac
	curl -s --max-time 20 -o "$tmp/par/$i" -w '%{http_code}' "$URL$p" \
	    >"$tmp/par/$i.code" 2>/dev/null &
	jobs_+=($!)
	PIDS+=($!)
done
for p in "${jobs_[@]}"; do
	wait_exit "$p" 30 || kill -KILL "$p" 2>/dev/null
done
bad=()
for i in $(seq 0 63); do
	case $((i % 4)) in
	0) exp=$DBG ;;
	1) exp=$EXE ;;
	2) exp=$tmp/orig/debug_info ;;
	3) exp=$tmp/orig/text ;;
	esac
	[ "$(cat "$tmp/par/$i.code")" = 200 ] && cmp -s "$tmp/par/$i" "$exp" ||
	    bad+=("request $i: status $(cat "$tmp/par/$i.code")")
done
[ ${#bad[@]} -eq 0 ]
verdict $? "64 parallel requests: all 200 with the right bytes" "${bad[@]}"
check "symhubd still alive after the parallel burst" alive "$SYMHUBD_PID"

section 'metrics and the access log'
metrics_text >"$tmp/out/metrics"
check "/metrics: ready 1" grep -qx 'ready 1' "$tmp/out/metrics"
files1=$(awk '$1 == "http_responses_total{result=\"file\"}" { print $2 }' \
    "$tmp/out/metrics")
[ -n "$files1" ] && [ "$files1" -gt "${files0:-0}" ]
verdict $? "/metrics: http_responses_total{result=\"file\"} grew ($files0 -> $files1)" \
    "before '$files0', after '$files1'"
check '/metrics: http_responses_transfer_bytes_count{code="200",type="buildid"}' \
    grep -Eq '^http_responses_transfer_bytes_count\{code="200",type="buildid"\} [1-9]' \
    "$tmp/out/metrics"
check "/metrics: symhub_cache_entries > 0" \
    grep -Eq '^symhub_cache_entries [1-9]' "$tmp/out/metrics"
check "/metrics: a 400 was counted" \
    grep -Eq '^http_responses_transfer_bytes_count\{code="400",type="buildid"\} [1-9]' \
    "$tmp/out/metrics"

# Three requests nobody else makes, one line each.
u1=$(printf 'a1%038d' 0) u2=$(printf 'a2%038d' 0) u3=$(printf 'a3%038d' 0)
http "/buildid/$u1/executable" /dev/null /dev/null >/dev/null
http "/buildid/$u2/debuginfo" /dev/null /dev/null --head >/dev/null
http "/buildid/$u3/debuginfo" /dev/null /dev/null -X POST -d x >/dev/null
want=("GET /buildid/$u1/executable 404" "HEAD /buildid/$u2/debuginfo 404"
    "POST /buildid/$u3/debuginfo 405")
for w in "${want[@]}"; do
	wait_until 5 grep -qF " $w " "$log"
	n=$(grep -cF " $w " "$log")
	[ "$n" = 1 ]
	verdict $? "access log: one line for '$w'" "found $n"
done
n=$(grep -cF "GET /buildid/$ID/section/.debug_line 200" "$log")
[ "$n" = 2 ]
verdict $? "access log: one line per request (2 for .debug_line)" "found $n"

section 'restart'
stop_check "SIGTERM: symhubd exits 0 within 10 s"
if start_symhubd -d "$tmp/store" --source-root "$tmp/src" --log-file "$log"
then
	pass "restart on the same store (no scan)"
	client_env
	client_file "after restart: debuginfo" "$DBG" \
	    "$DFCLIENT" debuginfo "$ID"
	client_file "after restart: executable" "$EXE" \
	    "$DFCLIENT" executable "$ID"
	client_file "after restart: section .debug_info" \
	    "$tmp/orig/debug_info" "$DFCLIENT" section "$ID" .debug_info
	client_file "after restart: source" "$SRC" \
	    "$DFCLIENT" source "$ID" "$SRC"
	expect_get "after restart: section .text (cached) by curl" \
	    "/buildid/$ID/section/.text" 200 "$tmp/orig/text"
	check "after restart: symhub_cache_entries > 0" \
	    metric_cmp symhub_cache_entries -gt 0
	stop_check "second SIGTERM: exit 0"
else
	fail "restart on the same store (no scan)" "$(tail -n 5 "$log")"
fi

section 'a scanned file changes, then vanishes'
if start_symhubd -d "$tmp/store" -F "$tmp/debug" -F "$tmp/deploy" \
    -F "$tmp/junk" --source-root "$tmp/src" -t 0 --log-file "$log" &&
    wait_metric symhub_scan_passes_total -ge 1 20; then
	pass "restart with scanning"
	# Files known from the last start are not "0 files indexed".
	l=$(grep 'first scan:' "$log" | tail -n 1)
	grep -Eq 'first scan: [0-9]+ files in 3 directories: [0-9]+ new or changed \([0-9]+ indexed\), [1-9][0-9]* unchanged since the last start' <<<"$l"
	verdict $? "the first scan after a restart counts the unchanged files" \
	    "$l"
else
	fail "restart with scanning" "$(tail -n 5 "$log")"
fi
expect_get "old id .text served before the change" \
    "/buildid/$ID/section/.text" 200 "$tmp/orig/text"
# Same path, new contents (cp keeps the inode; size and mtime change).
cp "$EXE2" "$tmp/deploy/hello.stripped"
# not_new DESC PATH NEW OLD: 404, or 200 with the old bytes; never NEW.
not_new() {
	local code
	code=$(http "$2" "$tmp/out/body" "$tmp/out/hdrs")
	if [ "$code" = 200 ] && cmp -s "$tmp/out/body" "$3"; then
		fail "$1" "the old build-id served the NEW file's bytes"
	elif [ "$code" = 404 ] ||
	    { [ "$code" = 200 ] && cmp -s "$tmp/out/body" "$4"; }; then
		pass "$1 ($code)"
	else
		fail "$1" "status $code, body matches neither"
	fi
}
not_new "replaced file: old id executable is not the new file" \
    "/buildid/$ID/executable" "$EXE2" "$EXE"
not_new "replaced file: old id .text is not the new file's" \
    "/buildid/$ID/section/.text" "$tmp/orig/text2" "$tmp/orig/text"
check "rescan after SIGHUP" rescan
expect_get "after rescan: new id executable is the new file" \
    "/buildid/$ID2/executable" 200 "$EXE2"
expect_get "after rescan: new id .text" "/buildid/$ID2/section/.text" 200 \
    "$tmp/orig/text2"
expect_get "after rescan: old id executable -> 404" \
    "/buildid/$ID/executable" 404
not_new "after rescan: old id .text is not the new file's" \
    "/buildid/$ID/section/.text" "$tmp/orig/text2" "$tmp/orig/text"
expect_get "after rescan: old id debuginfo still served" \
    "/buildid/$ID/debuginfo" 200 "$DBG"
client_env
client_file "debuginfod-find: new id executable" "$EXE2" \
    debuginfod-find executable "$ID2"

rm -f "$tmp/debug/hello.debug"
check "rescan after removing hello.debug" rescan
expect_get "removed debuginfo: old id debuginfo -> 404" \
    "/buildid/$ID/debuginfo" 404
expect_get "removed debuginfo: old id section .debug_info -> 404" \
    "/buildid/$ID/section/.debug_info" 404
expect_get "removed debuginfo: its source -> 404" "/buildid/$ID/source$SRC" 404
client_env
! timeout 30 debuginfod-find debuginfo "$ID" >/dev/null 2>&1
verdict $? "debuginfod-find: removed debuginfo is not found"

section 'files that are not usable ELF'
skipped0=$(metric 'symhub_scan_files_total{result="skipped"}')
echo "not an ELF file" >"$tmp/junk/notelf.txt"
head -c 1000 "$tmp/bin/hello" >"$tmp/junk/truncated"
: >"$tmp/junk/empty"
check "rescan with bad files" rescan
check "symhubd still alive after scanning bad files" alive "$SYMHUBD_PID"
for f in notelf.txt truncated empty; do
	grep -q "skipping $tmp/junk/$f\\b" "$log"
	verdict $? "log: skipping $f" "$(grep -i skipping "$log" | tail -5)"
done
metric_cmp 'symhub_scan_files_total{result="skipped"}' -ge \
    $((${skipped0:-0} + 2))
verdict $? "symhub_scan_files_total{result=\"skipped\"} grew by >= 2" \
    "before $skipped0, now $(metric 'symhub_scan_files_total{result="skipped"}')"
expect_get "after bad files: new id still served" \
    "/buildid/$ID2/executable" 200 "$EXE2"
expect_get "truncated copy of hello does not serve the old id" \
    "/buildid/$ID/executable" 404
stop_check "SIGTERM after rescans: exit 0"

section 'read-only and full stores'
# Root ignores permissions, so a read-only mount it must be.
mnt_ro=$tmp/mnt-ro
mnt_full=$tmp/mnt-full
mkdir -p "$mnt_ro" "$mnt_full"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=16m symhub-test "$mnt_ro" \
    2>/dev/null; then
	MOUNTS+=("$mnt_ro")
	rolog=$tmp/ro.log
	if start_symhubd -d "$mnt_ro/store" -F "$tmp/rofix" -t 0 \
	    --log-file "$rolog" && wait_metric symhub_scan_passes_total -ge 1 20
	then
		expect_get "ro store, populating: section .debug_info" \
		    "/buildid/$ID/section/.debug_info" 200 "$tmp/orig/debug_info"
		stop_symhubd
	else
		fail "ro store: populate" "$(tail -n 5 "$rolog")"
	fi
	if mount -o remount,ro "$mnt_ro" 2>/dev/null; then
		rolines=$(wc -l <"$rolog")
		if start_symhubd -d "$mnt_ro/store" --log-file "$rolog"; then
			pass "read-only store: symhubd starts"
			tail -n +$((rolines + 1)) "$rolog" |
			    grep -i 'read-only' | grep -qF "$mnt_ro/store"
			verdict $? "read-only store: logged" \
			    "$(tail -n 5 "$rolog")"
			expect_get "read-only store: debuginfo" \
			    "/buildid/$ID/debuginfo" 200 "$tmp/rofix/hello.debug"
			expect_get "read-only store: cached section" \
			    "/buildid/$ID/section/.debug_info" 200 \
			    "$tmp/orig/debug_info"
			expect_get "read-only store: new section (not cacheable)" \
			    "/buildid/$ID/section/.debug_abbrev" 200 \
			    "$tmp/orig/debug_abbrev"
			client_env
			f=$(timeout 30 debuginfod-find debuginfo "$ID" 2>/dev/null)
			expect_file "read-only store: debuginfod-find" "$f" \
			    "$tmp/rofix/hello.debug"
			check "read-only store: still alive" alive "$SYMHUBD_PID"
			stop_check "read-only store: SIGTERM, exit 0"
		else
			fail "read-only store: symhubd starts" "$(tail -n 5 "$rolog")"
		fi
	else
		skip_check "read-only store: remount,ro not permitted here"
	fi

	# A tiny file system, filled up after the first scan.
	if mount -t tmpfs -o size=256k symhub-test "$mnt_full" 2>/dev/null; then
		MOUNTS+=("$mnt_full")
		fulllog=$tmp/full.log
		if start_symhubd -d "$mnt_full/store" -F "$tmp/rofix" -t 0 \
		    --log-file "$fulllog" &&
		    wait_metric symhub_scan_passes_total -ge 1 20; then
			dd if=/dev/zero of="$mnt_full/filler" bs=4k \
			    2>/dev/null
			[ "$(df -P "$mnt_full" | awk 'NR == 2 { print $4 }')" = 0 ]
			verdict $? "full store: file system filled" \
			    "$(df -P "$mnt_full")"
			for s in .debug_info .debug_line .debug_str .debug_abbrev; do
				expect_get "full store: section $s" \
				    "/buildid/$ID/section/$s" 200 \
				    "$tmp/orig/debug_${s#.debug_}"
			done
			expect_get "full store: section .debug_str again" \
			    "/buildid/$ID/section/.debug_str" 200 \
			    "$tmp/orig/debug_str"
			expect_get "full store: debuginfo" \
			    "/buildid/$ID/debuginfo" 200 "$tmp/rofix/hello.debug"
			check "full store: still alive" alive "$SYMHUBD_PID"
			check "full store: /metrics answers" is_ready
			stop_check "full store: SIGTERM, exit 0"
		else
			fail "full store: symhubd starts and scans" \
			    "$(tail -n 5 "$fulllog" "$tmp/symhubd.out")"
		fi
	else
		skip_check "full store: cannot mount a tmpfs"
	fi
else
	skip_check "read-only store: not root or cannot mount a tmpfs"
	skip_check "full store: not root or cannot mount a tmpfs"
fi

section 'the command-line tool and the configuration'
out=$("$SYMHUB" buildid "$EXE" 2>&1)
[ "$out" = "$ID" ]
verdict $? "symhub buildid matches readelf" "got '$out', want '$ID'"
out=$("$SYMHUB" info "$EXE" 2>&1)
grep -q '^kind: executable' <<<"$out" && grep -q '^quality:' <<<"$out" &&
    grep -q "^buildid: $ID" <<<"$out"
verdict $? "symhub info: buildid, kind and quality lines (executable)" "$out"
out=$("$SYMHUB" info "$DBG" 2>&1)
grep -q '^kind:.*debuginfo' <<<"$out" &&
    grep -q '^quality:.*debug_info' <<<"$out"
verdict $? "symhub info: debuginfo kind and debug_info quality" "$out"
! "$SYMHUB" buildid "$tmp/junk/notelf.txt" >/dev/null 2>&1
verdict $? "symhub buildid on a non-ELF file fails"

conf=$tmp/test.conf
cat >"$conf" <<EOF
# a comment
listen = 127.0.0.1:1234
store $tmp/conf-store
threads = 3
scan-dir = $tmp/debug
scan-dir = $tmp/deploy
source-root = $tmp/src
cache-max = 2M
EOF
out=$("$SYMHUBD" -n -c "$conf" 2>&1)
verdict $? "symhubd -n -c FILE exits 0" "$out"
bad=()
for l in "listen = 127.0.0.1:1234" "store = $tmp/conf-store" "threads = 3" \
    "scan-dir = $tmp/debug" "scan-dir = $tmp/deploy" \
    "source-root = $tmp/src" "cache-max = 2097152" "rescan = 300"; do
	grep -qxF "$l" <<<"$out" || bad+=("missing: $l")
done
[ ${#bad[@]} -eq 0 ]
verdict $? "symhubd -n prints the effective config" "${bad[@]}" "$out"
out=$("$SYMHUBD" -n -c "$conf" --threads 5 -p 4321 2>&1)
grep -qxF "threads = 5" <<<"$out" &&
    grep -qxF "listen = 127.0.0.1:4321" <<<"$out"
verdict $? "symhubd -n: the command line wins over the file" "$out"
printf 'threads = 2\nno-such-option = 1\n' >"$tmp/bad.conf"
out=$("$SYMHUBD" -n -c "$tmp/bad.conf" 2>&1)
rc=$?
[ "$rc" != 0 ] && grep -q "bad.conf:2" <<<"$out" &&
    grep -q "no-such-option" <<<"$out"
verdict $? "unknown config option: exit $rc, names the line ($out)" \
    "exit $rc: $out"
printf 'threads = lots\n' >"$tmp/bad2.conf"
out=$("$SYMHUBD" -n -c "$tmp/bad2.conf" 2>&1)
rc=$?
[ "$rc" != 0 ] && grep -q "bad2.conf:1" <<<"$out"
verdict $? "bad config value: exit $rc, names the line" "exit $rc: $out"
! "$SYMHUBD" --no-such-flag >/dev/null 2>&1
verdict $? "unknown command-line option: non-zero exit"

# Every option name: those the dump prints (every file option, lists
# included when set) plus the command-line-only ones.
dump=$("$SYMHUBD" -n -d "$tmp/x" -F "$tmp/x" --source-root "$tmp/x" 2>&1)
names=$(sed -n 's/^\([a-z][a-z0-9-]*\) = .*/\1/p' <<<"$dump" | sort -u)
[ "$(wc -l <<<"$names")" -ge 10 ]
verdict $? "symhubd -n dump lists $(wc -l <<<"$names") options" "$dump"
help=$("$SYMHUBD" --help 2>&1)
rc=$?
bad=()
for n in $names port config check help version; do
	grep -q -- "--$n\\b" <<<"$help" || bad+=("--$n")
done
[ "$rc" = 0 ] && [ ${#bad[@]} -eq 0 ]
verdict $? "symhubd --help lists every option" "missing: ${bad[*]}"

section 'start-up errors: one line, the thing and the cause'
# refuses DESC PATTERN ARGS...: symhubd must not start (exit 1), and say
# why in one line, the fatal one, matching PATTERN; -n with the same
# ARGS must refuse them too (exit 1, the same cause) unless check_n=no.
refuses() {
	local desc=$1 pat=$2 out rc lines
	shift 2
	out=$(timeout 20 env -u DEBUGINFOD_URLS -u AWS_ACCESS_KEY_ID \
	    -u AWS_SECRET_ACCESS_KEY "$SYMHUBD" -d "$tmp/store-refused" \
	    "$@" 2>&1)
	rc=$?
	lines=$(grep -c 'warning\|fatal\|http:' <<<"$out")
	[ "$rc" = 1 ] && [ "$lines" = 1 ] &&
	    grep -Eq "fatal: $pat\$" <<<"$out"
	verdict $? "$desc" "exit $rc, want 1 and one line: fatal: $pat" "$out"
	[ "${check_n:-yes}" = yes ] || return
	out=$(env -u DEBUGINFOD_URLS -u AWS_ACCESS_KEY_ID \
	    -u AWS_SECRET_ACCESS_KEY "$SYMHUBD" -n -d "$tmp/store-refused" \
	    "$@" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = 1 ] && grep -Eqx "symhubd: $pat" <<<"$out"
	verdict $? "... and -n refuses it too" "exit $rc, want 1" "$out"
}
refuses "--listen to an address not on this machine" \
    "cannot listen on 192\.0\.2\.1:[0-9]+: the address is not on this machine" \
    --listen "192.0.2.1:$(free_port)"
refuses "--listen without a port" \
    "cannot listen on 127\.0\.0\.1: no port \(write ADDR:PORT.*\)" \
    --listen 127.0.0.1
refuses "--listen nonsense" "cannot listen on nonsense: no port .*" \
    --listen nonsense
refuses "--listen to a name that does not resolve" \
    "cannot listen on no-such-host\.invalid:80: cannot resolve .*" \
    --listen no-such-host.invalid:80
refuses "--s3 without credentials" \
    "bucket http://127\.0\.0\.1:9/bucket: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or --s3-credentials FILE" \
    -p 0 --s3 http://127.0.0.1:9/bucket
refuses "--s3-credentials FILE that is missing" \
    "bucket http://127\.0\.0\.1:9/bucket: --s3-credentials $tmp/no-creds: No such file or directory" \
    -p 0 --s3 http://127.0.0.1:9/bucket --s3-credentials "$tmp/no-creds"
refuses "an upstream's header file that is missing" \
    "upstream 127\.0\.0\.1:9: header file $tmp/no-headers: No such file or directory" \
    -p 0 -u "http://127.0.0.1:9 header-file=$tmp/no-headers"
printf 'Authorization: Bearer x\nno colon here\n' >"$tmp/bad-headers"
refuses "an upstream's header file with a bad line" \
    "upstream 127\.0\.0\.1:9: header file $tmp/bad-headers: line 2 is not 'Name: value'" \
    -p 0 -u "http://127.0.0.1:9 header-file=$tmp/bad-headers"
! [ -e "$tmp/store-refused" ]
verdict $? "a refused start creates no store" \
    "$(ls -la "$tmp/store-refused" 2>&1)"

out=$("$SYMHUBD" --no-such-flag 2>&1)
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && [ "$out" = \
    "symhubd: unknown option --no-such-flag (symhubd --help lists the options)" ]
verdict $? "an unknown option: one line, exit 2" \
    "exit $rc, $(wc -l <<<"$out") lines:" \
    "$(head -n 3 <<<"$out")"
out=$("$SYMHUBD" -d "$tmp/x" --listen 2>&1)
rc=$?
[ "$rc" = 2 ] && [ "$out" = \
    "symhubd: option --listen needs a value (symhubd --help lists the options)" ]
verdict $? "an option without its value: one line naming it, exit 2" \
    "exit $rc:" "$(head -n 3 <<<"$out")"

# A port in use: named so, with no libmicrohttpd line about "port 0".
if start_symhubd -d "$tmp/store-busy"; then
	check_n=no refuses "--listen to a port in use" \
	    "cannot listen on 127\.0\.0\.1:$PORT: the port is in use .*" \
	    -p "$PORT" 2>/dev/null
	# ... where -n, refused above, is for the running hub a note only.
	out=$("$SYMHUBD" -n -d "$tmp/store-busy" -p "$PORT" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = 0 ] && grep -q "note: cannot listen .*in use" <<<"$out"
	verdict $? "-n on the running hub's port: exit 0 and a note" \
	    "exit $rc" "$out"
	stop_check "... and the hub on it stops"
else
	fail "a hub for the port-in-use check starts" \
	    "$(tail -n 3 "$tmp/symhubd.out")"
fi

# A missing scan directory: said once, not at each pass; -n says it too
# (start-up goes on: it may appear later).
out=$("$SYMHUBD" -n -d "$tmp/x" -F "$tmp/no-dir" 2>&1 >/dev/null)
rc=$?
[ "$rc" = 0 ] && grep -q "scan directory $tmp/no-dir: No such file" <<<"$out"
verdict $? "-n names a missing scan directory, exit 0" "exit $rc" "$out"
: >"$tmp/nodir.log"
if start_symhubd -d "$tmp/store-nodir" -F "$tmp/no-dir" -t 0 \
    --log-file "$tmp/nodir.log" && rescan; then
	n=$(grep -c "no-dir" "$tmp/nodir.log")
	[ "$n" = 1 ] && grep -q "warning: scan directory $tmp/no-dir: No such file or directory" "$tmp/nodir.log"
	verdict $? "a missing scan directory is warned once over two passes" \
	    "$n lines:" "$(grep no-dir "$tmp/nodir.log")"
	stop_check "... and the hub stops"
else
	fail "a hub over a missing scan directory starts and rescans" \
	    "$(tail -n 3 "$tmp/nodir.log")"
fi

section 'an empty scan directory'
# Nothing to index is no error: the hub starts, serves nothing, and a
# file that appears later is found by the next pass.
mkdir -p "$tmp/empty"
if start_symhubd -d "$tmp/store-empty" -F "$tmp/empty"; then
	pass "a hub over an empty scan directory starts"
	expect_get "... and has nothing" "/buildid/$ID/debuginfo" 404
	cp "$DBG" "$tmp/empty/"
	if rescan; then
		expect_get "... until a file appears and is rescanned" \
		    "/buildid/$ID/debuginfo" 200 "$DBG"
	else
		fail "... until a file appears and is rescanned" "no pass"
	fi
	stop_check "... and stops"
else
	fail "a hub over an empty scan directory starts" \
	    "$(tail -n 3 "$tmp/symhubd.out")"
fi

section 'the docs name every option'
man5=$top_srcdir/man/symhubd.conf.5
example=$top_srcdir/etc/symhubd.conf
for doc in "$man5" "$example"; do
	bad=()
	if [ ! -s "$doc" ]; then
		fail "$(basename "$doc") documents every option" \
		    "$doc is missing or empty"
		continue
	fi
	for n in $names; do
		if [ "$doc" = "$man5" ]; then
			# An entry: .BI "forwarded\-ttl\-limit = " N (roff may
			# escape the hyphens).
			re=${n//-/\\\\?-}
			grep -Eq "^\.[A-Z]+[[:space:]]+\"?$re([[:space:]\"=]|\$)" \
			    "$doc" || bad+=("$n")
		else
			# "# name = default", or set: "name = value"
			grep -Eq "^#?[[:space:]]*$n[[:space:]]*=" "$doc" ||
			    bad+=("$n")
		fi
	done
	[ ${#bad[@]} -eq 0 ]
	verdict $? "$(basename "$doc") documents every option" \
	    "missing: ${bad[*]}"
done

echo "# $(($(date +%s) - t0)) s"
finish
