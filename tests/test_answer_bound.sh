#!/bin/bash
# Integration test: no single request grows symhubd without bound (issue
# 27, item 1).  The answers that grow with the request are streamed, and
# what one request may make is bounded:
#   1. POST /buildid/ID/symbolize of 200,000 addresses, each under
#      sixteen inlined calls (tests/fixtures/deep.c: 18 frames of long
#      names, some 2.4 KB of JSON a result, about 480 MB in all): the
#      answer is whole and exactly the one-address answer repeated, and
#      the daemon's peak RSS (VmHWM) grows by less than the body plus
#      64 MiB (built whole, it grew by the answer and more);
#   2. POST /symbolicate/v5 of 100,000 frames of the same address, its
#      module named with 255 bytes: whole, valid JSON, the same bound;
#   3. a Tecken debugName of 100 KiB (once a 1 GB answer from 212 KB):
#      400, nothing made;
#   4. --symbolize-max-answer 1M: a request whose answer must be larger
#      (its names repeated) is 413 before any work; one that turns out
#      larger is cut (the client never holds a complete answer), logged;
#      the daemon serves the next request.
# The verdicts are bytes and statuses and VmHWM, never times.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_answer_bound.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy strip nm python3 sha256sum
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
unset DEBUGINFOD_URLS
N=${ANSWER_BOUND_N:-200000}	# addresses of the per-module request
NT=${ANSWER_BOUND_NT:-100000}	# frames of the Tecken request
SLACK_KB=$((64 * 1024))		# the working set beside the body

section 'fixtures'
mkdir -p "$tmp"/{bin,scan,out} || exit 99
(cd "$tmp/bin" && cp "$FIXTURES/deep.c" . && gcc -g -O2 -o deep deep.c &&
    objcopy --only-keep-debug deep deep.debug &&
    strip -s -o "$tmp/scan/deep" deep && cp deep.debug "$tmp/scan/") ||
    exit 99
ID=$(buildid "$tmp/bin/deep.debug")
[ -n "$ID" ] || { echo "# deep.debug has no build-id"; exit 99; }
read -r start size < <(nm -S "$tmp/bin/deep" | awk '$4 == "main" {
    print $1, $2 }')
[ -n "$size" ] || { echo "# no main in deep"; exit 99; }
python3 -c 'import sys
s, n = int(sys.argv[1], 16), int(sys.argv[2], 16)
print("\n".join(hex(a) for a in range(s, s + n)))' "$start" "$size" \
    >"$tmp/out/main.addrs" || exit 99

# rss_check BEFORE AFTER BODY: the peak RSS (kB) grew by at most the
# request's body and the working set.
rss_check() {
	local grown=$(($2 - $1))
	if [ "$grown" -le $(($3 + SLACK_KB)) ]; then
		pass "... peak RSS grew by $((grown / 1024)) MiB: at most the" \
		    "body ($(($3 / 1024)) MiB) + $((SLACK_KB / 1024)) MiB"
	else
		fail "... peak RSS grew by at most the body +" \
		    "$((SLACK_KB / 1024)) MiB" \
		    "VmHWM $1 kB -> $2 kB: +$((grown / 1024)) MiB"
	fi
}

# hwm: the daemon's peak RSS so far, in kB.
hwm() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$SYMHUBD_PID/status"
}

# post PATH BODYFILE OUT [CURL-ARGS]: POST, the answer to OUT (a file, or
# "-": stdout); the status to $tmp/out/status, curl's exit to
# $tmp/out/exit.
post() {
	local path=$1 body=$2 out=$3
	shift 3
	curl -s --max-time 600 -o "$out" -w '%{stderr}%{http_code}' \
	    --data-binary @"$body" -H 'Content-Type: text/plain' "$@" \
	    "$URL$path" 2>"$tmp/out/status"
	echo "$?" >"$tmp/out/exit"
}

hub -d "$tmp/store" -F "$tmp/scan" --log-file "$tmp/hub.log"

section 'a deep address'
post "/buildid/$ID/symbolize" "$tmp/out/main.addrs" "$tmp/out/main.json"
deep=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"]
best = max(r, key=lambda x: len(x["frames"]))
print(best["address"], len(best["frames"]))' "$tmp/out/main.json" 2>/dev/null)
read -r addr depth <<<"$deep"
if [ "$(cat "$tmp/out/status")" = 200 ] && [ "${depth:-0}" -ge 17 ]; then
	pass "an address of main symbolizes to $depth frames ($addr)"
else
	fail "an address of main under 16 inlined calls" \
	    "status $(cat "$tmp/out/status"), deepest: ${deep:-none}"
	finish
fi

section "POST /buildid/ID/symbolize of $N deep addresses"
echo "$addr" >"$tmp/out/one.addrs"
post "/buildid/$ID/symbolize" "$tmp/out/one.addrs" "$tmp/out/one.json"
python3 -c 'import sys
a = sys.argv[1] + "\n"
with open(sys.argv[3], "w") as f:
    f.write(a * int(sys.argv[2]))' "$addr" "$N" "$tmp/out/many.addrs"
# The answer of N times the same address: the one-address answer's
# result repeated, byte for byte.
want=$(python3 -c 'import hashlib, sys
one = open(sys.argv[1], "rb").read()
head = one[:one.index(b"[") + 1]
res = one[len(head):-2]
assert one.endswith(b"]}")
h = hashlib.sha256(head + res)
n = int(sys.argv[2]) - 1
chunk = (b"," + res) * 1000
while n >= 1000:
    h.update(chunk)
    n -= 1000
h.update((b"," + res) * n + b"]}")
print(h.hexdigest())' "$tmp/out/one.json" "$N")
body_kb=$(($(stat -c %s "$tmp/out/many.addrs") / 1024))
before=$(hwm)
got=$(post "/buildid/$ID/symbolize" "$tmp/out/many.addrs" - | sha256sum |
    cut -d' ' -f1)
after=$(hwm)
status=$(cat "$tmp/out/status")
if [ "$status" = 200 ] && [ "$(cat "$tmp/out/exit")" = 0 ] &&
    [ "$got" = "$want" ]; then
	pass "... 200, whole, the one-address answer repeated $N times" \
	    "($(($(stat -c %s "$tmp/out/one.json") * N / 1048576)) MB)"
else
	fail "... 200, whole, the one-address answer repeated" \
	    "status $status, curl exit $(cat "$tmp/out/exit"), sha256 $got," \
	    "want $want"
fi
rss_check "$before" "$after" "$body_kb"

section "POST /symbolicate/v5 of $NT frames, a 255-byte module name"
bp=$(python3 -c 'import sys
b = bytes.fromhex(sys.argv[1])[:16]
g = b[3::-1] + b[5:3:-1] + b[7:5:-1] + b[8:16]
print(g.hex().upper() + "0")' "$ID")
python3 -c 'import json, sys
name = "m" * 251 + ".dbg"
off = int(sys.argv[1], 16)
with open(sys.argv[4], "w") as f:
    json.dump({"jobs": [{"memoryMap": [[name, sys.argv[2]]],
        "stacks": [[[0, off]] * int(sys.argv[3])]}]}, f)' \
    "$addr" "$bp" "$NT" "$tmp/out/tecken.json"
# A daemon of its own, so that its peak is this request's.
stop_check "symhubd stops"
hub -d "$tmp/store" -F "$tmp/scan" --log-file "$tmp/hub1.log"
python3 -c 'import json, sys
with open(sys.argv[3], "w") as f:
    json.dump({"memoryMap": [["m" * 251 + ".dbg", sys.argv[1]]],
        "stacks": [[[0, int(sys.argv[2], 16)]]]}, f)' \
    "$bp" "$addr" "$tmp/out/tecken1.json"
post /symbolicate/v5 "$tmp/out/tecken1.json" "$tmp/out/tecken1.out"
expect_status "... one frame first: 200" 200 "$(cat "$tmp/out/status")" \
    "$tmp/out/tecken1.out"
body_kb=$(($(stat -c %s "$tmp/out/tecken.json") / 1024))
before=$(hwm)
post /symbolicate/v5 "$tmp/out/tecken.json" "$tmp/out/tecken.out"
after=$(hwm)
status=$(cat "$tmp/out/status")
if [ "$status" = 200 ] && [ "$(cat "$tmp/out/exit")" = 0 ] &&
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
fr = r["stacks"][0]
assert len(fr) == int(sys.argv[2]), len(fr)
assert all(f["frame"] == i and len(f["module"]) == 255 and
    len(f["inlines"]) >= 16 for i, f in enumerate(fr))
assert list(r["found_modules"].values()) == [True]' \
    "$tmp/out/tecken.out" "$NT"; then
	pass "... 200, valid JSON, $NT frames each with $((depth - 1))" \
	    "inlines ($(($(stat -c %s "$tmp/out/tecken.out") / 1048576)) MB)"
else
	fail "... 200, valid JSON, every frame" "status $status, curl exit" \
	    "$(cat "$tmp/out/exit"): $(head -c 300 "$tmp/out/tecken.out")"
fi
rm -f "$tmp/out/tecken.out"
rss_check "$before" "$after" "$body_kb"

section 'a Tecken debugName of 100 KiB'
python3 -c 'import json, sys
with open(sys.argv[3], "w") as f:
    json.dump({"memoryMap": [["n" * 102400, sys.argv[1]]],
        "stacks": [[[0, int(sys.argv[2], 16)]] * 10000]}, f)' \
    "$bp" "$addr" "$tmp/out/longname.json"
post /symbolicate/v5 "$tmp/out/longname.json" "$tmp/out/longname.out"
expect_status "... 400 (it would be repeated in each of 10,000 frames)" \
    400 "$(cat "$tmp/out/status")" "$tmp/out/longname.out"
check "... the message says why: $(head -c 100 "$tmp/out/longname.out")" \
    grep -q "at most 255 bytes" "$tmp/out/longname.out"

section '--symbolize-max-answer 1M'
stop_check "symhubd stops"
hub -d "$tmp/store" -F "$tmp/scan" --log-file "$tmp/hub2.log" \
    --symbolize-max-answer 1M
python3 -c 'import json, sys
with open(sys.argv[3], "w") as f:
    json.dump({"memoryMap": [["n" * 255, sys.argv[1]]],
        "stacks": [[[0, int(sys.argv[2], 16)]] * 5000]}, f)' \
    "$bp" "$addr" "$tmp/out/echo.json"
post /symbolicate/v5 "$tmp/out/echo.json" "$tmp/out/echo.out"
expect_status "a Tecken request whose names alone make 1.5 MB: 413" 413 \
    "$(cat "$tmp/out/status")" "$tmp/out/echo.out"
check "... before any work: no module looked for" \
    metric_cmp symhub_batch_requests_total -eq 0
head -n 2000 "$tmp/out/many.addrs" >"$tmp/out/2000.addrs"
post "/buildid/$ID/symbolize" "$tmp/out/2000.addrs" "$tmp/out/cut.out"
size=$(stat -c %s "$tmp/out/cut.out")
if [ "$(cat "$tmp/out/exit")" != 0 ] && [ "$size" -le $((1200 * 1024)) ] &&
    ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' \
    "$tmp/out/cut.out" 2>/dev/null; then
	pass "2,000 deep addresses (some 5 MB): cut after 1M, incomplete" \
	    "(curl exit $(cat "$tmp/out/exit"), $size bytes)"
else
	fail "2,000 deep addresses: cut after 1M" "curl exit" \
	    "$(cat "$tmp/out/exit"), status $(cat "$tmp/out/status"), $size bytes"
fi
check "... logged: $(grep -m1 'answer cut' "$tmp/hub2.log" | cut -c1-120)" \
    grep -q "answer cut at 1048576 bytes" "$tmp/hub2.log"
post "/buildid/$ID/symbolize" "$tmp/out/one.addrs" "$tmp/out/after.json"
check "... and the next request is answered as before" \
    cmp -s "$tmp/out/after.json" "$tmp/out/one.json"
stop_check "symhubd stops"
finish
