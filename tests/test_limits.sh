#!/bin/bash
# Integration test of symhubd's limits against hostile or broken clients:
# the per-address connection limit, the request-head deadline, requests
# refused from their head (a POST where none is taken, a body too large,
# Content-Length headers that disagree, a transfer coding other than
# chunked, %00 in the URL), the cap on POST bodies held at once, control
# bytes escaped in the log, and an upload whose body never completes.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_limits.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl python3 ss timeout
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
SLOW=$top_srcdir/tests/slowclient.py
mkdir -p "$tmp/out" || exit 99

TOKENS=$tmp/tokens
TOK=$(new_token ci upload "$TOKENS") || { echo "# token"; exit 99; }

hub -d "$tmp/store" --connections-per-address 8 --head-timeout 2 --timeout 3 \
    --post-buffer-max 64k --tokens "$TOKENS" --log-file "$tmp/hub.log"

section 'connections'
kept=$(python3 "$SLOW" many "$PORT" 127.0.0.2 40 8)
check "40 connections from one address: 8 are kept ($kept)" [ "$kept" = 8 ]
expect_get "meanwhile another address is served" /metrics 200
t=$(python3 "$SLOW" trickle "$PORT" 127.0.0.3 120)
check "a head trickled a byte every 0.2 s is cut ($t)" [ "$t" = cut ]
check "... and counted" metric_cmp symhub_http_head_timeouts_total -ge 1

section 'refused from the head'
code=$(http "/buildid/ab%00cd/debuginfo" "$tmp/out/b" "$tmp/out/h")
check "%00 in the URL: 400 ($code)" [ "$code" = 400 ]
code=$(http "/buildid/abcd/symbolize" "$tmp/out/b" "$tmp/out/h" -X POST \
    -H "Content-Length: 5" -H "Content-Length: 7" --data-binary 12345)
check "two different Content-Length headers: 400 ($code)" [ "$code" = 400 ]
code=$(http "/buildid/abcd/symbolize" "$tmp/out/b" "$tmp/out/h" -X POST \
    -H "Transfer-Encoding: gzip, chunked" --data-binary 12345 --max-time 20)
check "Transfer-Encoding: gzip, chunked: 501 at once ($code)" [ "$code" = 501 ]
code=$(http "/metrics" "$tmp/out/b" "$tmp/out/h" -X POST --data-binary 1)
check "a POST to a route that takes none: 405 with Allow ($code)" \
    eval '[ "$code" = 405 ] && grep -qi "^Allow: GET, HEAD" "$tmp/out/h"'
code=$(http "/buildid/abcd/symbolize" "$tmp/out/b" "$tmp/out/h" -X POST \
    -H "Content-Length: 99999999999" --max-time 20)
check "a POST announcing more than its route takes: 413 before the body \
($code)" [ "$code" = 413 ]

section 'POST bodies held at once'
# Four 40 KB bodies at once against a 64 KiB cap: not all are held; those
# that are not get 503 with Retry-After, and the gauge returns to 0.
head -c 40000 /dev/zero | tr '\0' '\n' >"$tmp/body"
posts=()
for i in 1 2 3 4; do
	curl -s -o /dev/null -w "%{http_code}\n" --limit-rate 20k \
	    --data-binary "@$tmp/body" \
	    "$URL/buildid/abcd/symbolize" >"$tmp/out/post.$i" &
	posts+=($!)
done
wait "${posts[@]}"	# not the hub's
codes=$(cat "$tmp/out"/post.* | sort | tr '\n' ' ')
check "4 bodies of 40 KB against a 64 KiB cap: some get 503 ($codes)" \
    grep -q 503 <<<"$codes"
check "... and the bytes held return to 0" \
    wait_metric symhub_http_post_buffered_bytes -eq 0 10

section 'the log'
http "/buildid/ab%0a%1bcd%5c/debuginfo" "$tmp/out/b" "$tmp/out/h" >/dev/null
check "control bytes and backslashes are escaped in the access line" \
    grep -qF 'GET /buildid/ab\x0a\x1bcd\x5c/debuginfo 400' "$tmp/hub.log"
check "... which stays one line" eval '! grep -q "^cd" "$tmp/hub.log"'

section 'an upload whose body never completes'
python3 - "$PORT" "$TOK" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"PUT /buildid/0123456789abcdef/debuginfo HTTP/1.1\r\nHost: x\r\n"
          b"Authorization: Bearer " + sys.argv[2].encode() +
          b"\r\nContent-Length: 100000\r\n\r\n" + b"\x7fELF" * 100)
s.close()
PY
check "an upload cut short leaves a log line" wait_until 30 grep -q \
    "PUT /buildid/0123456789abcdef/debuginfo from .*upload body incomplete" \
    "$tmp/hub.log"
section 'a store made unwritable at run time'
# Root ignores modes; an immutable tmp/ stops even root.
printf 'not elf' >"$tmp/small"
if chattr +i "$tmp/store/tmp" 2>/dev/null; then
	code=$(put_file "/buildid/0123456789abcdef/debuginfo" "$tmp/small" \
	    "$tmp/out/b" "$tmp/out/h" -H "Authorization: Bearer $TOK")
	chattr -i "$tmp/store/tmp"
	check "an upload to a store made unwritable answers 507 ($code)" \
	    [ "$code" = 507 ]
else
	skip_check "an upload to a store made unwritable answers 507" \
	    "chattr +i does not work here"
fi
stop_check "the hub stops"

finish
