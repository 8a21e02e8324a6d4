#!/bin/bash
# --cors ORIGIN: a page from another origin, in a real browser (Debian's
# chromium, headless), reads an artifact with its X-DEBUGINFOD-SIZE and
# POSTs JSON to /symbolize (a preflighted request); without --cors the
# browser blocks both.  Also the headers themselves, with curl.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_cors.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc curl chromium python3

section 'a hub, and a page served from another origin'
mkdir -p "$tmp/src" "$tmp/scan" "$tmp/out" "$tmp/www"
cp "$FIXTURES/hello.c" "$FIXTURES/greet.c" "$FIXTURES/greet.h" "$tmp/src/"
(cd "$tmp/src" && gcc -g -O0 -o "$tmp/scan/prog" hello.c greet.c) || exit 99
ID=$(buildid "$tmp/scan/prog")
SIZE=$(file_size "$tmp/scan/prog")
MAIN=$(nm "$tmp/scan/prog" | awk '$3 == "main" { print "0x" $1 }')
# page HUB: the page, asking HUB.
page() {
	cat <<EOF
<html><body><pre id="out">waiting</pre><script>
async function go() {
	const s = [];
	try {
		const r = await fetch("$1/buildid/$ID/debuginfo",
		    { headers: { "Cache-Control": "no-cache" } });
		const b = await r.arrayBuffer();
		s.push("get " + r.status + " " +
		    r.headers.get("X-DEBUGINFOD-SIZE") + " " + b.byteLength);
	} catch (e) {
		s.push("get blocked");
	}
	try {
		const r = await fetch("$1/buildid/$ID/symbolize", {
		    method: "POST",
		    headers: { "Content-Type": "application/json" },
		    body: JSON.stringify(["$MAIN"]) });
		const j = await r.json();
		s.push("post " + r.status + " " + j.results[0].frames[0].function);
	} catch (e) {
		s.push("post blocked");
	}
	document.getElementById("out").textContent = s.join(" / ");
}
go();
</script></body></html>
EOF
}
WPORT=$(free_port)
python3 -m http.server "$WPORT" --bind 127.0.0.1 --directory "$tmp/www" \
    >"$tmp/www.log" 2>&1 &
PIDS+=($!)
WEB=http://127.0.0.1:$WPORT
check "the page's server answers" wait_until 20 eval \
    "[ \"\$(http_code '$WEB/')\" = 200 ]"

# browser OUT URL: the page's DOM once its fetches are done.
browser() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu \
	    --no-first-run --user-data-dir="$tmp/chromium" \
	    --virtual-time-budget=10000 --dump-dom "$2" >"$1" 2>"$1.err"
}

section 'without --cors: the browser blocks the page'
hub -d "$tmp/store" -F "$tmp/scan" --log-file "$tmp/hub1.log"
page "$URL" >"$tmp/www/a.html"
browser "$tmp/out/a.dom" "$WEB/a.html"
check "the page ran" grep -q 'get ' "$tmp/out/a.dom"
check "both requests blocked" grep -q 'get blocked / post blocked' \
    "$tmp/out/a.dom"
st=$(curl -s -o /dev/null -w '%{http_code}' -X OPTIONS "$URL/buildid/$ID/debuginfo")
check "OPTIONS: 405" [ "$st" = 405 ]
stop_symhubd

section "--cors $WEB: the page reads the file and symbolizes"
hub -d "$tmp/store" -F "$tmp/scan" --cors "$WEB" --log-file "$tmp/hub2.log"
page "$URL" >"$tmp/www/b.html"
browser "$tmp/out/b.dom" "$WEB/b.html"
check "GET: 200, X-DEBUGINFOD-SIZE read, the bytes ($SIZE)" \
    grep -q "get 200 $SIZE $SIZE" "$tmp/out/b.dom"
check "POST /symbolize, preflighted: main" grep -q "post 200 main" \
    "$tmp/out/b.dom"
check "the hub answered the preflight" grep -q 'OPTIONS /buildid/.* 204' \
    "$tmp/hub2.log"
curl -s -o /dev/null -D "$tmp/out/o.hdr" -X OPTIONS \
    -H "Origin: $WEB" -H 'Access-Control-Request-Method: POST' \
    "$URL/buildid/$ID/symbolize"
check "the preflight's headers" eval \
    "[ \"\$(header '$tmp/out/o.hdr' Access-Control-Allow-Origin)\" = '$WEB' ] &&
    header '$tmp/out/o.hdr' Access-Control-Allow-Methods | grep -q POST &&
    header '$tmp/out/o.hdr' Access-Control-Allow-Headers | grep -qi content-type"
curl -s -o /dev/null -D "$tmp/out/n.hdr" "$URL/buildid/00ff/debuginfo"
check "a 404 carries it too (the page can read why)" \
    [ "$(header "$tmp/out/n.hdr" Access-Control-Allow-Origin)" = "$WEB" ]
stop_symhubd

section '--cors * (as elfutils --cors), and a bad origin'
hub -d "$tmp/store" -F "$tmp/scan" --cors '*' --log-file "$tmp/hub3.log"
page "$URL" >"$tmp/www/c.html"
browser "$tmp/out/c.dom" "$WEB/c.html"
check "any origin: the page works" grep -q "post 200 main" "$tmp/out/c.dom"
stop_symhubd
out=$("$SYMHUBD" -n --cors 'evil.example, x' 2>&1)
check "an origin list is refused at start" eval \
    "echo '$out' | grep -q 'cors: \* or one origin'"

finish
