#!/bin/bash
# The status page at / (and /status): the store and its fill, an hour of
# hits and misses as an SVG chart, the scan directories, the upstreams
# with their breakers, symbolization traffic, the last misses, uploads
# and conversions (every conversion, /symbolize's included).  Plain HTML with no script, read
# by a real browser (Debian's chromium, headless): it loads, shows the
# figures, renders, and logs nothing to the console.
# Also --home-html and --home-redirect, as in elfutils 0.195.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_status.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc curl debuginfod chromium
BADUPSTREAM=$top_srcdir/tests/badupstream.py

section 'a hub with a history'
mkdir -p "$tmp/src" "$tmp/scan" "$tmp/up" "$tmp/out"
cp "$FIXTURES/hello.c" "$FIXTURES/greet.c" "$FIXTURES/greet.h" "$tmp/src/"
(cd "$tmp/src" && gcc -g -O0 -o "$tmp/scan/prog1" hello.c greet.c &&
    gcc -g -O1 -o "$tmp/up/prog2" hello.c greet.c &&
    gcc -g -O2 -o "$tmp/prog3" hello.c greet.c) || exit 99
ID1=$(buildid "$tmp/scan/prog1")
ID2=$(buildid "$tmp/up/prog2")
ID3=$(buildid "$tmp/prog3")
UNKNOWN=00112233445566778899aabbccddeeff0011aabb
start_debuginfod up "" "$tmp/up" &&
    wait_http 30 "$DURL/buildid/$ID2/debuginfo" 200 ||
    fail "debuginfod serves prog2"
start_badupstream reset reset || fail "badupstream.py reset starts"
TOKEN=$(new_token ci upload "$tmp/tokens") || fail "a token"
hub -d "$tmp/store" -F "$tmp/scan" -F "$tmp/no-such-dir" -u "$DURL name=up" \
    -u "$BURL name=flaky<b>" --breaker-failures 1 --tokens "$tmp/tokens" \
    --cache-max 100M --log-file "$tmp/hub.log"
code() {
	curl -s -o "${2:-/dev/null}" -w '%{http_code}' "${@:3}" "$URL$1"
}
for i in 1 2 3; do
	check "hit $i" [ "$(code "/buildid/$ID1/debuginfo")" = 200 ]
done
check "a miss" eval "[ \"\$(code /buildid/$UNKNOWN/debuginfo)\" != 200 ]"
check "a file from the upstream" \
    [ "$(code "/buildid/$ID2/debuginfo")" = 200 ]
check "an upload" [ "$(code "/buildid/$ID3/debuginfo" /dev/null -X PUT \
    -H "Authorization: Bearer $TOKEN" --data-binary "@$tmp/prog3")" = 201 ]
check "a conversion to GSYM" [ "$(code "/buildid/$ID1/gsym")" = 200 ]
# Symbolization: one address of prog1 by build-id; a batch of two
# modules, prog3 (uploaded, converted now for the batch: listed among
# the conversions like any other) and prog1; a Tecken request of three
# frames.
A1=$(nm "$tmp/scan/prog1" | awk '$3 == "main" { print "0x" $1 }')
check "POST /buildid/ID/symbolize" [ "$(code "/buildid/$ID1/symbolize" \
    /dev/null --data-binary "$A1")" = 200 ]
printf '{"modules": [{"buildid": "%s", "addresses": ["0x1139"]}, {"buildid": "%s", "addresses": ["%s", "%s"]}]}' \
    "$ID3" "$ID1" "$A1" "$A1" >"$tmp/out/batch.json"
check "POST /symbolize, two modules" [ "$(code /symbolize "$tmp/out/batch" \
    -H 'Content-Type: application/json' \
    --data-binary "@$tmp/out/batch.json")" = 200 ]
check "... prog3 converted for it" grep -q '"converted' "$tmp/out/batch"
BP1=$(python3 "$top_srcdir/tests/batchcheck.py" breakpad "$ID1")
printf '{"jobs": [{"memoryMap": [["prog1", "%s"]], "stacks": [[[0, 4096], [0, 4100], [0, 4104]]]}]}' \
    "$BP1" >"$tmp/out/tecken.json"
check "POST /symbolicate/v5, three frames" [ "$(code /symbolicate/v5 \
    /dev/null -H 'Content-Type: application/json' \
    --data-binary "@$tmp/out/tecken.json")" = 200 ]

section 'the page, as HTML'
# A request counts once answered, which may be after curl returned: wait
# for the page to show the last of them.
page=$tmp/out/page.html
shows_all() {
	c=$(curl -s -o "$page" -D "$tmp/out/page.hdr" -w '%{http_code}' \
	    "$URL/") && grep -q "<code>$ID1</code></td><td>gsym</td>" "$page" &&
	    grep -q "<code>$ID3</code>" "$page" &&
	    grep -q "<code>$UNKNOWN</code>" "$page" &&
	    grep -q "<code>$ID3</code></td><td>gsym</td>" "$page"
}
wait_until 20 shows_all
check "GET /: 200" [ "$c" = 200 ]
check "text/html" [ "$(header "$tmp/out/page.hdr" Content-Type)" = \
    "text/html; charset=utf-8" ]
val() {
	sed -n "s/.*id=\"$1\">\\([^<]*\\)<.*/\\1/p" "$2" | head -n 1
}
check "the store's records ($(val store-records "$page"))" \
    [ "$(val store-records "$page")" -ge 3 ]
check "its fill against --cache-max ($(val store-fill "$page") %)" \
    grep -q 'id="store-fill">[0-9.]*</span> % full' "$page"
check "the hour's hits ($(val hour-hits "$page"))" \
    [ "$(val hour-hits "$page")" -ge 4 ]
check "the hour's misses ($(val hour-misses "$page"))" \
    [ "$(val hour-misses "$page")" -ge 1 ]
check "a chart: an SVG with a bar for the hits" eval "grep -q '<svg id=\"chart\"' \
    '$page' && grep -q '<rect class=\"hit\"' '$page'"
check "the upstream up, its breaker closed" grep -q \
    '<tr><td>up</td>.*<td class="ok">closed</td>' "$page"
check "the failing upstream's breaker open, its name escaped" grep -q \
    '<tr><td>flaky&lt;b&gt;</td>.*<td class="bad">open</td>' "$page"
check "the miss, among the recent ones" grep -q "<code>$UNKNOWN</code>" \
    "$page"
check "the upload, among the recent ones" grep -q \
    "<code>$ID3</code></td><td>debuginfo</td><td>stored" "$page"
check "the conversion, among the recent ones" grep -q \
    "<code>$ID1</code></td><td>gsym</td><td>converted" "$page"
check "the conversion for POST /symbolize too" grep -q \
    "<code>$ID3</code></td><td>gsym</td><td>converted" "$page"
convs=$(metric 'symhub_gsym_conversions_total{result="ok"}')
rows=$(grep -c "</code></td><td>gsym</td><td>converted" "$page")
check "as many listed as /metrics counts ($rows, $convs)" [ "$rows" = "$convs" ]
check "one miss is \"1 miss\", and no \"1 hits\" or \"1 misses\"" eval \
    "grep -q 'id=\"hour-misses\">1</span> miss,' '$page' &&
    ! grep -Eq '(^|[^0-9])1 (hits|misses)' '$page'"
SCAN=$(realpath "$tmp/scan")
check "the scan directory: its path, one file, its last pass" grep -Eq \
    "<tr><td><code>$SCAN</code></td><td class=\"num\">1</td><td class=\"num\">[01]</td><td>[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}</td><td class=\"ok\">ok</td>" \
    "$page"
check "the missing one, and why" grep -q \
    "<code>$tmp/no-such-dir</code>.*<td class=\"bad\">No such file or directory</td>" \
    "$page"
check "symbolization: one request of one address by build-id" grep -q \
    '<tr><td><code>POST /buildid/ID/symbolize</code></td><td class="num">1</td><td class="num">1</td></tr>' \
    "$page"
check "one batch of three addresses" grep -q \
    '<tr><td><code>POST /symbolize</code> (batches)</td><td class="num">1</td><td class="num">3</td></tr>' \
    "$page"
check "one Tecken request of three frames" grep -q \
    '<tr><td><code>/symbolicate/v5</code> (Tecken)</td><td class="num">1</td><td class="num">3</td></tr>' \
    "$page"
check "and the modules of those" grep -q \
    'id="symbolize-modules">Batches and Tecken requests named 3 modules, 3 of them ready' \
    "$page"
# So it works without JavaScript.  (Headless chromium with script turned
# off dumps no DOM and takes no screenshot: it needs script for both.)
check "no script: no <script>, no on* handler" eval "! grep -Eqi \
    '<script|[[:space:]]on[a-z]+=' '$page'"
c=$(curl -s -o "$tmp/out/status.html" -w '%{http_code}' "$URL/status")
check "/status: the same page" eval "[ $c = 200 ] &&
    grep -q 'id=\"hour-hits\"' '$tmp/out/status.html'"

section 'the page, in a browser'
# browser OUT ARGS...: headless chromium; its log (console messages
# included) to OUT.err.
browser() {
	local out=$1
	shift
	timeout 120 chromium --headless --no-sandbox --disable-gpu \
	    --no-first-run --user-data-dir="$tmp/chromium" \
	    --enable-logging=stderr --v=0 "$@" >"$out" 2>"$out.err"
}
# The check can fail: a page that logs to the console is caught.
printf '<html><body><script>console.error("x")</script></body></html>' \
    >"$tmp/out/bad.html"
browser "$tmp/out/bad.dom" --dump-dom "file://$tmp/out/bad.html"
check "a console message is seen in the log (the check works)" \
    grep -q ':CONSOLE' "$tmp/out/bad.dom.err"
browser "$tmp/out/dom" --dump-dom "$URL/"
check "it loads: the figures are in the DOM" eval "grep -q \
    'id=\"hour-hits\">[0-9]' '$tmp/out/dom' && grep -q \
    'id=\"store-records\">[0-9]' '$tmp/out/dom'"
check "no console message" eval "! grep ':CONSOLE' '$tmp/out/dom.err'"
browser "$tmp/out/shot.out" --window-size=1000,1400 \
    --screenshot="$tmp/out/shot.png" "$URL/"
png() {
	[ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' ')" = \
	    89504e470d0a1a0a ]
}
s1=$(stat -c %s "$tmp/out/shot.png" 2>/dev/null)
check "a screenshot of it ($s1 bytes of PNG)" png "$tmp/out/shot.png"
stop_symhubd "$SYMHUBD_PID"

section '--home-html and --home-redirect'
printf '<!DOCTYPE html><title>our symbols</title><p>Ask the team.</p>\n' \
    >"$tmp/home.html"
hub -d "$tmp/store" --home-html "$tmp/home.html"
c=$(curl -s -o "$tmp/out/home" -D "$tmp/out/home.hdr" -w '%{http_code}' \
    "$URL/")
check "/ is the file" eval "[ $c = 200 ] && cmp -s '$tmp/out/home' \
    '$tmp/home.html'"
check "as HTML" [ "$(header "$tmp/out/home.hdr" Content-Type)" = \
    "text/html; charset=utf-8" ]
echo '<p>Edited.</p>' >>"$tmp/home.html"
curl -s -o "$tmp/out/home2" "$URL/"
check "read on each request: an edit shows" cmp -s "$tmp/out/home2" \
    "$tmp/home.html"
check "/status is still the status page" \
    grep -q 'id="hour-hits"' <(curl -s "$URL/status")
stop_symhubd "$SYMHUBD_PID"
hub -d "$tmp/store" --home-redirect "https://symbols.example/"
r=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "$URL/")
check "--home-redirect: 302 to it ($r)" [ "$r" = \
    "302 https://symbols.example/" ]
stop_symhubd "$SYMHUBD_PID"
"$SYMHUBD" -p 0 -d "$tmp/store" --home-html "$tmp/none.html" \
    >"$tmp/out/bad1" 2>&1
st=$?
check "a home page that cannot be read: refused at start" eval "[ $st != 0 ] &&
    grep -q \"home-html '$tmp/none.html': No such file\" '$tmp/out/bad1'"
"$SYMHUBD" -p 0 -d "$tmp/store" --home-html "$tmp/home.html" \
    --home-redirect http://x/ >"$tmp/out/bad2" 2>&1
st=$?
check "both: refused" eval "[ $st != 0 ] && grep -q 'one or the other' \
    '$tmp/out/bad2'"
finish
