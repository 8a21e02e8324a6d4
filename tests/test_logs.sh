#!/bin/bash
# Integration test of symhubd's log under floods, rotation and broken
# artifacts (issue 27, point 3 and the %00 of point 10):
#   1. a flood from one address (malformed heads that libmicrohttpd
#      refuses, DELETEs refused for their token): the warnings stay within
#      the rate limits (at most 100 lines plus 50 a second, see log.h),
#      a "dropped N warnings like ..." summary says what was dropped, and
#      the access log still has one line for every refused DELETE;
#   2. a path with %00 is logged whole, and bytes that are control bytes
#      or not UTF-8 are escaped (no raw ESC, C1 control or 0xff);
#   3. SIGUSR1 and SIGHUP reopen the log file: after a rename, a new file
#      gets the next lines (as logrotate needs), the old one none;
#   4. a corrupt debuginfo asked for as GSYM ten times: ten 422s, one
#      warning;
#   5. a stored GSYM rotted on disk, /symbolize asked ten times: one
#      warning (or none, where the store catches the rot first).
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_logs.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl g++ objcopy readelf python3 sha256sum dd
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
unset DEBUGINFOD_URLS
MUT=$top_srcdir/tests/dwarf_mutate.py
LOG=$tmp/hub.log

section 'fixtures'
mkdir -p "$tmp"/{bin,scan,out} || exit 99
for v in good bad; do
	mkdir -p "$tmp/src/$v" && cp "$FIXTURES/inl.cc" "$tmp/src/$v/" &&
	    (cd "$tmp/src/$v" && g++ -g -O2 -o "$tmp/bin/$v" inl.cc) &&
	    objcopy --only-keep-debug "$tmp/bin/$v" "$tmp/bin/$v.debug" ||
	    exit 99
done
pick=$(python3 "$MUT" pick "$tmp/bin/bad.debug") &&
    python3 "$MUT" flip "$tmp/bin/bad.debug" "$tmp/scan/bad.debug" "$pick" ||
    { echo "# cannot flip an abbreviation of bad.debug"; exit 99; }
cp "$tmp/bin/good.debug" "$tmp/scan/" || exit 99
declare -A ID
for v in good bad; do
	ID[$v]=$(buildid "$tmp/scan/$v.debug")
	[ -n "${ID[$v]}" ] || { echo "# fixtures: $v has no build-id"; exit 99; }
done
TOKENS=$tmp/tokens
new_token ops upload,admin "$TOKENS" >/dev/null ||
    { echo "# cannot make a token"; exit 99; }

# nlines PATTERN [FILE]: lines of the log matching an extended regexp.
nlines() {
	grep -cE -- "$1" "${2:-$LOG}"
}

# raw PATH: one GET of PATH sent as bytes (no client escapes them); the
# status line's code.
raw() {
	python3 - "$PORT" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
path = sys.argv[2].encode("latin-1").decode("unicode_escape").encode("latin-1")
s.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
s.settimeout(10)
print(s.recv(64).split(b" ")[1].decode())
PY
}

hub -d "$tmp/store" -F "$tmp/scan" --tokens "$TOKENS" --log-file "$LOG"

section 'a flood of warnings from one address'
N=2000
python3 - "$PORT" "$N" >"$tmp/out/flood" <<'PY' || fail "the flood ran" "$(cat "$tmp/out/flood")"
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
t0 = time.time()
# Heads libmicrohttpd refuses itself (two warnings each, no access line).
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: x%d\r\n\r\n" % i)
    s.settimeout(10)
    s.recv(4096)
    s.close()
# DELETEs without a token: a warning and an access line each.
req = b"DELETE /buildid/" + b"ab" * 20 + b"/debuginfo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(req)
    s.settimeout(10)
    while s.recv(4096):
        pass
    s.close()
print(int(time.time() - t0) + 1)
PY
secs=$(cat "$tmp/out/flood")
# warned, dropped: warning lines written, and those summaries say dropped.
count() {
	warned=$(grep 'warning: ' "$LOG" | grep -vc 'warning: dropped ')
	dropped=$(grep -oE 'warning: dropped [0-9]+' "$LOG" |
	    awk '{ n += $3 } END { print n + 0 }')
	[ $((warned + dropped)) -ge $((3 * N)) ]
}
# Summaries come every 5 s, from the maintenance thread.
check "the summaries count every warning not written" wait_until 30 count
check "... $warned written + $dropped dropped = $((3 * N))" \
    [ $((warned + dropped)) -eq $((3 * N)) ]
check "... a summary names the cause and the address" \
    grep -qE 'warning: dropped [0-9]+ warnings like .*refused.* from 127\.0\.0\.1' "$LOG"
check "... and libmicrohttpd's" \
    grep -qE 'warning: dropped [0-9]+ warnings like "Failed to parse' "$LOG"
max=$((100 + 50 * (secs + 1)))
if [ "$warned" -le "$max" ]; then
	pass "$((3 * N)) warnings in ${secs}s made $warned lines (at most $max)"
else
	fail "$((3 * N)) warnings in ${secs}s made $warned lines (at most $max)" \
	    "$(grep 'warning: ' "$LOG" | cut -c40-140 | sort | uniq -c | sort -rn | head -5)"
fi
check "... and every DELETE has its access line ($N)" \
    [ "$(nlines "127\.0\.0\.1 DELETE /buildid/(ab){20}/debuginfo 401 ")" = "$N" ]
check "the hub still answers" [ "$(raw /metrics)" = 200 ]

section 'paths logged whole and escaped'
code=$(raw '/buildid/%00abcd/debuginfo')
check "a %00 path: 400" [ "$code" = 400 ]
check "... logged whole, %00 and all" \
    wait_until 10 grep -qF ' GET /buildid/%00abcd/debuginfo 400 ' "$LOG"
code=$(raw '/x\x1b[31m\xc2\x9b\xff\xc3\xa9/y')
check "a path with ESC, a C1 control, 0xff and an é: 404" [ "$code" = 404 ]
check "... logged escaped, the é as it is" \
    wait_until 10 grep -qF ' GET /x\x1b[31m\xc2\x9b\xff'"$(printf '\303\251')"'/y 404 ' "$LOG"
check "... no raw ESC, C1 control or 0xff in the log" python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
sys.exit(b"\x1b" in b or b"\xff" in b or b"\xc2\x9b" in b)' "$LOG"

section 'the log reopened on SIGUSR1 and SIGHUP'
for sig in USR1 HUP; do
	if ! alive "$SYMHUBD_PID" || ! mv "$LOG" "$LOG.$sig"; then
		fail "SIG$sig: a new log file" "the hub is gone"
		continue
	fi
	kill -"$sig" "$SYMHUBD_PID"
	check "SIG$sig: a new log file" \
	    wait_until 10 grep -q "SIG$sig: log reopened" "$LOG"
	raw "/after-$sig" >/dev/null
	check "... gets the next access line" \
	    wait_until 10 grep -q " GET /after-$sig 404 " "$LOG"
	check "... the renamed one does not" \
	    eval "! grep -q ' /after-$sig ' '$LOG.$sig'"
	check "... and the hub still serves" alive "$SYMHUBD_PID"
done

alive "$SYMHUBD_PID" && stop_check "the hub stops"

section 'a corrupt debuginfo asked for as GSYM'
LOG=$tmp/hub2.log
hub -d "$tmp/store" -F "$tmp/scan" --log-file "$LOG"
codes=
for i in 1 2 3 4 5 6 7 8 9 10; do
	codes+="$(http "/buildid/${ID[bad]}/gsym" "$tmp/out/bad" \
	    "$tmp/out/bad.hdr" --max-time 120) "
done
check "ten GET /gsym of it: 422 each" \
    [ "$codes" = "422 422 422 422 422 422 422 422 422 422 " ]
n=$(nlines "warning: .*${ID[bad]}")
check "... one warning ($n)" [ "$n" = 1 ]

section 'a stored GSYM rotted on disk'
func=$(readelf -sW "$tmp/scan/good.debug" 2>/dev/null | awk '$4 == "FUNC" &&
    $3 > 0 && $2 !~ /^0+$/ { print "0x" $2; exit }')
printf '%s\n' "$func" >"$tmp/out/one"
sym() {
	http "/buildid/${ID[good]}/symbolize" "$tmp/out/sym" \
	    "$tmp/out/sym.hdr" --max-time 120 --data-binary "@$tmp/out/one"
}
check "POST /symbolize of good: 200" [ "$(sym)" = 200 ]
check "GET /gsym of good: 200" \
    [ "$(http "/buildid/${ID[good]}/gsym" "$tmp/out/good.gsym" \
    "$tmp/out/good.hdr")" = 200 ]
h=$(sha256sum "$tmp/out/good.gsym" | cut -c1-64)
blob=$tmp/store/blobs/${h:0:2}/${h:2}
stop_check "the hub stops"
check "the GSYM's blob is in the store" [ -f "$blob" ]
# The magic: the reader refuses the file at once.
printf 'XXXX' | dd of="$blob" bs=1 conv=notrunc status=none
: >"$LOG"
hub -d "$tmp/store" -F "$tmp/scan" --log-file "$LOG"
codes=
for i in 1 2 3 4 5 6 7 8 9 10; do
	codes+="$(sym) "
done
n=$(grep 'warning: ' "$LOG" | grep -ciE "gsym|${ID[good]}|$h")
if [ "$codes" = "500 500 500 500 500 500 500 500 500 500 " ]; then
	check "ten POST /symbolize meet the rotten GSYM: one warning ($n)" \
	    [ "$n" = 1 ]
	check "... naming its blob" grep -q "stored GSYM $h cannot be read" "$LOG"
else
	# The store found the rot itself and converted again.
	check "ten POST /symbolize ($codes): at most one warning ($n)" \
	    [ "$n" -le 1 ]
fi
stop_check "the hub stops"

finish
