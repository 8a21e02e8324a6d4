#!/bin/bash
# /metadata?key=file|glob|buildid&value=V (elfutils 0.192 and later): which
# executables and debuginfo files a hub indexed in place (loose files and
# package members) match, merged with what its upstreams answer.
#
# Debian 12 ships elfutils 0.188, whose debuginfod-find has no "metadata"
# command and whose debuginfod has no /metadata route (it answers 404):
# queries are made with curl, answers read with Python's json module, and
# the 0.188 debuginfod stands as an upstream that cannot answer.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_metadata.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc objcopy strip curl debuginfod dpkg-deb python3 ss
BADUPSTREAM=$top_srcdir/tests/badupstream.py

# meta URL KEY VALUE OUT: GET URL/metadata with key and value (encoded),
# the body in OUT, headers in OUT.hdr; prints the status.
meta() {
	curl -s -G -m 60 -o "$4" -D "$4.hdr" -w '%{http_code}' \
	    --data-urlencode "key=$2" --data-urlencode "value=$3" "$1/metadata"
}

# entries OUT: the answer's entries, one "type buildid file archive" line
# each (archive "-" when absent), in the answer's order, then a last line
# "complete true|false".  Fails when OUT is not an answer of that shape
# or an entry has a member besides the four.
entries() {
	python3 - "$1" <<-'EOF'
	import json, signal, sys
	signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # grep -q, head
	d = json.load(open(sys.argv[1]))
	assert list(d.keys()) == ["results", "complete"], list(d.keys())
	assert isinstance(d["complete"], bool)
	for e in d["results"]:
	    assert set(e) <= {"type", "buildid", "file", "archive"}, e
	    print(e["type"], e["buildid"], e.get("file", "-"),
	          e.get("archive", "-"))
	print("complete", "true" if d["complete"] else "false")
	EOF
}

# has OUT LINE: the entries of OUT include LINE.
has() {
	entries "$1" | grep -qxF "$2"
}

# complete OUT true|false
complete() {
	entries "$1" | tail -n 1 | grep -qx "complete $2"
}

# count OUT: how many entries.
count() {
	entries "$1" | grep -vc '^complete '
}

section 'a hub over loose files and Debian packages'
S=$tmp/stage
mkdir -p "$tmp/src" "$tmp/scan/bin" "$tmp/scan/dbg" "$tmp/repo" "$tmp/out" \
    "$S/p1/usr/bin" "$S/p1-dbgsym" "$tmp/b"
cp "$FIXTURES/hello.c" "$FIXTURES/greet.c" "$FIXTURES/greet.h" "$tmp/src/"
(cd "$tmp/src" &&
    gcc -g -O0 -o "$tmp/scan/bin/prog" hello.c greet.c &&
    gcc -g -O2 -o "$tmp/b/p1" hello.c greet.c &&
    gcc -g -O1 -o "$tmp/b/s" hello.c greet.c) || exit 99
# prog: unstripped, both an executable and a debuginfo.  s: stripped,
# with its debug file beside it.  p1: in a .deb, its debug file in a
# .ddeb.
objcopy --only-keep-debug "$tmp/b/s" "$tmp/scan/dbg/s.debug" &&
    strip -g -o "$tmp/scan/bin/s" "$tmp/b/s" &&
    objcopy --only-keep-debug "$tmp/b/p1" "$tmp/b/p1.debug" &&
    strip -g -o "$S/p1/usr/bin/hello" "$tmp/b/p1" || exit 99
ID_PROG=$(buildid "$tmp/scan/bin/prog")
ID_S=$(buildid "$tmp/scan/bin/s")
ID_P1=$(buildid "$tmp/b/p1")
DBGPATH=usr/lib/debug/.build-id/${ID_P1:0:2}/${ID_P1:2}.debug
mkdir -p "$S/p1-dbgsym/$(dirname "$DBGPATH")" &&
    cp "$tmp/b/p1.debug" "$S/p1-dbgsym/$DBGPATH" || exit 99
for p in p1:hello p1-dbgsym:hello-dbgsym; do
	d=${p%%:*} n=${p#*:}
	mkdir -p "$S/$d/DEBIAN" &&
	    printf 'Package: %s\nVersion: 1.0\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: test\n' \
	    "$n" >"$S/$d/DEBIAN/control" || exit 99
done
DEB=$tmp/repo/hello_1.0_amd64.deb
DDEB=$tmp/repo/hello-dbgsym_1.0_amd64.ddeb
dpkg-deb --root-owner-group -Zxz --build "$S/p1" "$DEB" >/dev/null &&
    dpkg-deb --root-owner-group -Zzstd --build "$S/p1-dbgsym" "$DDEB" \
    >/dev/null || exit 99
# A file name that is not UTF-8 (Latin-1, a stray byte).
mkdir -p "$tmp/scan/odd" && (cd "$tmp/src" && gcc -g -O3 \
    -o "$tmp/scan/odd/$(printf 'caf\351-\377')" hello.c greet.c) || exit 99
hub -d "$tmp/storeB" -U -F "$tmp/scan" -F "$tmp/repo" \
    --log-file "$tmp/hubB.log"
B=$URL
B_PID=$SYMHUBD_PID

section 'local answers'
st=$(meta "$B" glob "$tmp/scan/bin/*" "$tmp/out/g1")
check "glob: 200, JSON" eval "[ $st = 200 ] &&
    grep -qi '^Content-Type: application/json' '$tmp/out/g1.hdr'"
check "glob: the unstripped file as executable and as debuginfo" eval \
    "has '$tmp/out/g1' 'executable $ID_PROG $tmp/scan/bin/prog -' &&
    has '$tmp/out/g1' 'debuginfo $ID_PROG $tmp/scan/bin/prog -'"
check "glob: the stripped file as executable" \
    has "$tmp/out/g1" "executable $ID_S $tmp/scan/bin/s -"
check "glob: nothing else, complete" eval \
    "[ \$(count '$tmp/out/g1') = 3 ] && complete '$tmp/out/g1' true"
check "glob: a file's executable entry comes before its debuginfo" eval \
    "entries '$tmp/out/g1' | grep ' $ID_PROG ' | head -n 1 |
    grep -q '^executable '"
meta "$B" glob "$tmp/scan/*" "$tmp/out/g2" >/dev/null
check "glob: * does not cross a / (FNM_PATHNAME)" eval \
    "[ \$(count '$tmp/out/g2') = 0 ] && complete '$tmp/out/g2' true"
meta "$B" glob "$tmp/scan/*/s.d?bug" "$tmp/out/g3" >/dev/null
check "glob: ? and a separate debug file" eval \
    "has '$tmp/out/g3' 'debuginfo $ID_S $tmp/scan/dbg/s.debug -' &&
    [ \$(count '$tmp/out/g3') = 1 ]"
meta "$B" glob "/usr/bin/[gh]ello" "$tmp/out/g4" >/dev/null
check "glob: a package member, with its archive" eval \
    "has '$tmp/out/g4' 'executable $ID_P1 /usr/bin/hello $DEB' &&
    [ \$(count '$tmp/out/g4') = 1 ]"
meta "$B" file "$tmp/scan/bin/prog" "$tmp/out/f1" >/dev/null
check "file: the exact name, both kinds" eval \
    "[ \$(count '$tmp/out/f1') = 2 ] && complete '$tmp/out/f1' true"
meta "$B" file "$tmp/scan/bin/pro*" "$tmp/out/f2" >/dev/null
check "file: no pattern matching" eval "[ \$(count '$tmp/out/f2') = 0 ]"
meta "$B" buildid "$ID_P1" "$tmp/out/b1" >/dev/null
check "buildid: the member in the package and the one in the .ddeb" eval \
    "has '$tmp/out/b1' 'executable $ID_P1 /usr/bin/hello $DEB' &&
    has '$tmp/out/b1' 'debuginfo $ID_P1 /$DBGPATH $DDEB' &&
    [ \$(count '$tmp/out/b1') = 2 ] && complete '$tmp/out/b1' true"
upper=$(echo "$ID_P1" | tr a-f A-F)
st=$(meta "$B" buildid "$upper" "$tmp/out/b2")
check "buildid in uppercase: nothing, complete (200)" eval \
    "[ $st = 200 ] && [ \$(count '$tmp/out/b2') = 0 ] &&
    complete '$tmp/out/b2' true"
meta "$B" buildid "zz" "$tmp/out/b3" >/dev/null
check "buildid not hex: nothing" eval "[ \$(count '$tmp/out/b3') = 0 ]"
meta "$B" glob "$tmp/scan/odd/*" "$tmp/out/u1" >/dev/null
check "a file name that is not UTF-8: valid JSON, each bad byte U+FFFD" \
    python3 -c 'import json, sys
r = json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))
files = sorted(e["file"] for e in r["results"])
assert files == [sys.argv[2] + "/caf\ufffd-\ufffd"] * 2, files' \
    "$tmp/out/u1" "$tmp/scan/odd"

section 'what elfutils answers to a bad query'
st=$(curl -s -o "$tmp/out/e1" -D "$tmp/out/e1.hdr" -w '%{http_code}' \
    "$B/metadata?value=x")
check "no key: 503, elfutils' text, no Retry-After" eval "[ $st = 503 ] &&
    grep -qx '/metadata webapi error, need key and value' '$tmp/out/e1' &&
    ! grep -qi '^Retry-After' '$tmp/out/e1.hdr'"
st=$(curl -s -o "$tmp/out/e2" -w '%{http_code}' "$B/metadata?key=file")
check "no value: 503" [ "$st" = 503 ]
st=$(curl -s -o "$tmp/out/e3" -w '%{http_code}' \
    "$B/metadata?key=source&value=/a.c")
check "an unsupported key: 503, elfutils' text" eval "[ $st = 503 ] &&
    grep -qx '/metadata webapi error, unsupported key' '$tmp/out/e3'"
st=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$B/metadata?key=file&value=x")
check "POST: 405" [ "$st" = 405 ]
st=$(curl -s -o "$tmp/out/h1" -w '%{http_code}' -I \
    "$B/metadata?key=glob&value=/usr/bin/*")
check "HEAD: 200" [ "$st" = 200 ]
check "metrics count /metadata answers" \
    metric_cmp 'http_responses_transfer_bytes_count{code="200",type="metadata"}' \
    -ge 10 "$B"

section 'federation: local entries first, then each upstream'
mkdir -p "$tmp/scanA/bin"
cp "$tmp/b/s" "$tmp/scanA/bin/s-full"
start_debuginfod old "" "$tmp/scan" ||
    fail "elfutils debuginfod 0.188 starts" "$(tail -n 3 "$tmp/old.log")"
OLD=$DURL
hub -d "$tmp/storeA" -F "$tmp/scanA" -u "$B name=hubB" -u "$OLD name=old" \
    --log-file "$tmp/hubA.log"
A=$URL
A_PID=$SYMHUBD_PID
nB=$(grep -c 'GET /metadata' "$tmp/hubB.log")
meta "$A" glob "$tmp/scan*/bin/*" "$tmp/out/a1" >/dev/null
check "A's own file first" eval "entries '$tmp/out/a1' | head -n 1 |
    grep -qxF 'executable $ID_S $tmp/scanA/bin/s-full -'"
check "then B's" eval \
    "has '$tmp/out/a1' 'executable $ID_S $tmp/scan/bin/s -' &&
    has '$tmp/out/a1' 'executable $ID_PROG $tmp/scan/bin/prog -' &&
    has '$tmp/out/a1' 'debuginfo $ID_PROG $tmp/scan/bin/prog -' &&
    [ \$(count '$tmp/out/a1') = 5 ]"
check "elfutils 0.188 has no /metadata (503, unrecognized): not complete" \
    complete "$tmp/out/a1" false
check "B was asked" eval \
    "[ \$(grep -c 'GET /metadata' '$tmp/hubB.log') = $((nB + 1)) ]"
check "A counts B's answer, and old's as no /metadata" eval \
    "metric_cmp 'symhub_metadata_upstream_total{outcome=\"answer\"}' -eq 1 '$A' &&
    metric_cmp 'symhub_metadata_upstream_total{outcome=\"notfound\"}' -eq 1 '$A'"
meta "$A" glob "$tmp/scan*/bin/*" "$tmp/out/a2" >/dev/null
check "asked again: both answers were kept, no upstream asked" eval \
    "cmp -s '$tmp/out/a1' '$tmp/out/a2' &&
    metric_cmp 'symhub_metadata_upstream_total{outcome=\"kept\"}' -eq 2 '$A' &&
    [ \$(grep -c 'GET /metadata' '$tmp/hubB.log') = $((nB + 1)) ]"
stop_symhubd "$A_PID"

hub -d "$tmp/storeA" -F "$tmp/scanA" -u "$B name=hubB" \
    --log-file "$tmp/hubA2.log"
A=$URL
meta "$A" buildid "$ID_PROG" "$tmp/out/a3" >/dev/null
check "with B alone: complete" eval \
    "complete '$tmp/out/a3' true && [ \$(count '$tmp/out/a3') = 2 ]"
stop_symhubd "$B_PID"
meta "$A" buildid "$ID_PROG" "$tmp/out/a4" >/dev/null
check "B gone: its kept answer is used, still complete" \
    cmp -s "$tmp/out/a3" "$tmp/out/a4"
meta "$A" buildid "$ID_S" "$tmp/out/a5" >/dev/null
check "B gone, a query not kept: A's own entries, not complete" eval \
    "complete '$tmp/out/a5' false && [ \$(count '$tmp/out/a5') = 2 ]"
stop_symhubd "$SYMHUBD_PID"

section 'upstreams that lie'
cat >"$tmp/lies.json" <<EOF
{"results":[{"type":"debuginfo","buildid":"$ID_PROG","file":"/lie/a","evil":{"x":1}},
 7, {"type":"executable"}, {"buildid":"ab"}, {"type":"debuginfo","buildid":"cd","file":3},
 {"type":"debuginfo","buildid":"$ID_PROG","file":"/lie/a"}],"complete":true}
EOF
start_badupstream lies meta "$tmp/lies.json" || fail "badupstream meta starts"
LIES=$BURL
printf '{"results": [' >"$tmp/garbage.json"
start_badupstream garbage meta "$tmp/garbage.json" ||
    fail "badupstream meta (garbage) starts"
GARBAGE=$BURL
hub -d "$tmp/storeC" -F "$tmp/scanA" -u "$LIES name=lies" \
    -u "$GARBAGE name=garbage" --log-file "$tmp/hubC.log"
st=$(meta "$URL" glob "*" "$tmp/out/l1")
check "answered 200 all the same" [ "$st" = 200 ]
check "a well-formed entry is kept once, its odd member dropped" eval \
    "has '$tmp/out/l1' 'debuginfo $ID_PROG /lie/a -' &&
    ! grep -q evil '$tmp/out/l1'"
check "entries without type or buildid are dropped; a non-string file too" \
    eval "has '$tmp/out/l1' 'debuginfo cd - -' &&
    [ \$(count '$tmp/out/l1') = 2 ]"
check "an answer that is not JSON: not complete, logged" eval \
    "complete '$tmp/out/l1' false &&
    grep -q 'upstream garbage: not a /metadata answer' '$tmp/hubC.log'"
stop_symhubd "$SYMHUBD_PID"

section 'an upstream that does not answer'
mkdir -p "$tmp/gate"
start_badupstream gate gate "$tmp/gate" || fail "badupstream gate starts"
GATE=$BURL
hub -d "$tmp/storeD" -F "$tmp/scanA" -u "$GATE name=gate" \
    --metadata-upstream-timeout 2 --log-file "$tmp/hubD.log"
st=$(meta "$URL" file "$tmp/scanA/bin/s-full" "$tmp/out/t1")
check "answered when its time is up: local entries, not complete" eval \
    "[ $st = 200 ] && [ \$(count '$tmp/out/t1') = 2 ] &&
    complete '$tmp/out/t1' false"
check "counted as failed" \
    metric_cmp 'symhub_metadata_upstream_total{outcome="failed"}' -eq 1
stop_symhubd "$SYMHUBD_PID"

section 'too many queries at once'
# Two workers held by the gate, META_QUEUE_MAX (32) queries waiting or
# running in all: of 40, the last 8 are refused at once.
hub -d "$tmp/storeD" -u "$GATE name=gate" --metadata-upstream-timeout 600 \
    --log-file "$tmp/hubE.log"
E=$URL
E_PID=$SYMHUBD_PID
: >"$tmp/gate/log"
for i in $(seq 1 32); do
	meta "$E" file "/q$i" "$tmp/out/q$i" >"$tmp/out/q$i.st" &
	PIDS+=($!)
	# Each is taken in before the next is sent.
	wait_until 20 metric_cmp symhub_metadata_queued -eq "$i" "$E"
done
wait_until 20 eval "[ \$(grep -c /metadata '$tmp/gate/log') = 2 ]"
check "both workers wait on the gate" eval \
    "[ \$(grep -c /metadata '$tmp/gate/log') = 2 ]"
refused=0
for i in $(seq 33 40); do
	st=$(meta "$E" file "/q$i" "$tmp/out/q$i")
	[ "$st" = 503 ] && grep -qi '^Retry-After' "$tmp/out/q$i.hdr" &&
	    refused=$((refused + 1))
done
check "the 8 past the queue: 503 with Retry-After at once ($refused)" \
    [ "$refused" = 8 ]
check "and counted" metric_cmp 'symhub_metadata_busy_total' -eq 8 "$E"
touch "$tmp/gate/open"
ok=0
for i in $(seq 1 32); do
	wait_until 60 test -s "$tmp/out/q$i.st"
	[ "$(cat "$tmp/out/q$i.st")" = 200 ] && complete "$tmp/out/q$i" false &&
	    ok=$((ok + 1))
done
check "the gate open, the 32 waiting are answered (not complete: 404)" \
    [ "$ok" = 32 ]
rm -f "$tmp/gate/open"
: >"$tmp/gate/log"
meta "$E" file "/last" "$tmp/out/z1" >"$tmp/out/z1.st" &
PIDS+=($!)
wait_until 20 eval "[ \$(grep -c /metadata '$tmp/gate/log') -ge 1 ]"
stop_symhubd "$E_PID"
check "stopped with a query held upstream: exits 0 at once ($exit_status)" \
    [ "$exit_status" = 0 ]
wait_until 20 test -s "$tmp/out/z1.st"
# Cut short: told to ask again (503 or a reset, as a fetch cut short is;
# a reset, or the daemon gone before the 503 left: curl says 000).
check "the held query is told to ask again ($(cat "$tmp/out/z1.st"))" \
    eval "grep -qx 503 '$tmp/out/z1.st' || grep -qx 000 '$tmp/out/z1.st'"
touch "$tmp/gate/open"

section 'the federation headers, the hop limit and loops'
start_badupstream count count "$tmp/count.log" || fail "badupstream count starts"
: >"$tmp/count.log"
hub -d "$tmp/storeF" -F "$tmp/scanA" -u "$BURL name=count" \
    --log-file "$tmp/hubF.log"
F=$URL
meta "$F" glob "*" "$tmp/out/h1" >/dev/null
check "the upstream is asked with User-Agent, X-Forwarded-For, Via" eval \
    "grep '^GET /metadata?key=glob&value=%2A' '$tmp/count.log' |
    grep 'User-Agent: curl/.* symhub-via/' |
    grep 'X-Forwarded-For: 127.0.0.1' | grep -q 'X-Symhub-Via: '"
: >"$tmp/count.log"
curl -s -G -o "$tmp/out/h2" \
    -H 'X-Forwarded-For: 1.1.1.1, 2, 3, 4, 5, 6, 7, 8' \
    --data-urlencode key=glob --data-urlencode "value=$tmp/scanA/bin/*" \
    "$F/metadata"
check "past the hop limit: own entries only, complete, nobody asked" eval \
    "complete '$tmp/out/h2' true && [ \$(count '$tmp/out/h2') = 2 ] &&
    [ ! -s '$tmp/count.log' ]"
stop_symhubd "$SYMHUBD_PID"

PA=$(free_port)
PB=$(free_port)
start_symhubd_at "$PB" -d "$tmp/storeG" -F "$tmp/scan" \
    -u "http://127.0.0.1:$PA name=A" --log-file "$tmp/hubG.log" ||
    fail "hub G starts"
G_PID=$SYMHUBD_PID
start_symhubd_at "$PA" -d "$tmp/storeH" -F "$tmp/scanA" \
    -u "http://127.0.0.1:$PB name=G" --log-file "$tmp/hubH.log" ||
    fail "hub H starts"
meta "http://127.0.0.1:$PA" glob "$tmp/scan*/bin/*" "$tmp/out/loop" \
    >/dev/null
check "a hub-to-hub loop ends: each hub's entries once, complete" eval \
    "[ \$(count '$tmp/out/loop') = 5 ] && complete '$tmp/out/loop' true"
check "H, asked back by G, found itself in X-Symhub-Via: nobody asked more" \
    eval "[ \$(grep -c 'GET /metadata' '$tmp/hubH.log') = 2 ] &&
    [ \$(grep -c 'GET /metadata' '$tmp/hubG.log') = 1 ]"
stop_symhubd "$SYMHUBD_PID"
stop_symhubd "$G_PID"

finish
