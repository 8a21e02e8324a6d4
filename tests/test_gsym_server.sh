#!/bin/bash
# Integration test of symhubd's GSYM service: GET /buildid/ID/gsym and
# POST /buildid/ID/symbolize, on fixtures built now from
# tests/fixtures/inl.c (gcc -g -O2: inlined calls three deep, .cold parts).
#   1. scanned (-F): the GSYM is byte for byte `symhub gsym convert` of the
#      debug file; converted once, then served from the store; HEAD;
#   2. /symbolize of ~500 addresses (every function start, random text
#      addresses, addresses outside every function), as a JSON array and
#      as lines: turned into llvm-gsymutil's text, the answer is exactly
#      what `symhub gsym lookup` prints for the same GSYM; inline chains
#      are addr2line's; the decoded-record cache serves a repeat;
#   3. 20 concurrent first requests: one conversion, 20 equal answers;
#   4. errors: unknown build-id, wrong methods, malformed bodies, a stripped
#      binary with nothing to convert;
#   5. a restart on the same store converts nothing again;
#      --symbolize-max-addresses;
#   6. upstream only: a real elfutils debuginfod has the debug file, the
#      hub has nothing: the same bytes, the upstream asked once;
#   7. --gsym-on-upload: an upload is converted before anyone asks (and
#      without it, by the first GET);
#   8. a stripped executable whose upstream resets: a reset, not a 404.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_gsym_server.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy strip readelf nm addr2line cmp diff timeout awk sed \
    ss python3 debuginfod
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"

t0=$(date +%s)
unset DEBUGINFOD_URLS

section 'fixtures'
# The same inl.c built in five directories (so five build-ids: the comp_dir
# is in the DWARF), one per role, each role's files alone where it is
# served from:
#   a  scanned (-F), checks 1, 2, 4, 5     b  scanned, the concurrent check
#   c  scanned, strip --strip-all: nothing to convert
#   d  on the upstream only                e  uploaded
mkdir -p "$tmp"/{bin,scan,up,exp,out,par} || exit 99
for v in a b c d e; do
	mkdir -p "$tmp/src/$v" && cp "$FIXTURES/inl.c" "$tmp/src/$v/" &&
	    (cd "$tmp/src/$v" && gcc -g -O2 -o "$tmp/bin/$v" inl.c) &&
	    objcopy --only-keep-debug "$tmp/bin/$v" "$tmp/bin/$v.debug" ||
	    exit 99
done
cp "$tmp/bin/a.debug" "$tmp/bin/b.debug" "$tmp/scan/" || exit 99
strip --strip-all -o "$tmp/scan/c.nosym" "$tmp/bin/c" || exit 99
cp "$tmp/bin/d.debug" "$tmp/up/" || exit 99
declare -A ID
for v in a b c d e; do
	ID[$v]=$(buildid "$tmp/bin/$v")
	[ -n "${ID[$v]}" ] && [ "${ID[$v]}" = "$(buildid "$tmp/bin/$v.debug")" ] ||
	    { echo "# fixtures: $v has no build-id, or another in $v.debug"; exit 99; }
done
[ "${ID[c]}" = "$(buildid "$tmp/scan/c.nosym")" ] ||
    { echo "# fixtures: c.nosym lost its build-id"; exit 99; }
[ "$(printf '%s\n' "${ID[@]}" | sort -u | wc -l)" = 5 ] ||
    { echo "# fixtures: build-ids not all different: ${ID[*]}"; exit 99; }
readelf -SW "$tmp/scan/c.nosym" | grep -q '\.symtab ' &&
    { echo "# fixtures: c.nosym still has a symbol table"; exit 99; }
UNKNOWN=00112233445566778899aabbccddeeff00112233

# The expected answers: symhub's own converter on the debug files.
for v in a b d e; do
	"$SYMHUB" gsym convert "$tmp/bin/$v.debug" -o "$tmp/exp/$v.gsym" \
	    >/dev/null 2>"$tmp/exp/$v.err" && [ -s "$tmp/exp/$v.gsym" ] ||
	    { echo "# symhub gsym convert $v.debug:" \
	    "$(cat "$tmp/exp/$v.err")"; exit 99; }
done
cmp -s "$tmp/exp/a.gsym" "$tmp/exp/b.gsym" &&
    { echo "# fixtures: a and b have the same GSYM"; exit 99; }
if "$SYMHUB" gsym convert "$tmp/scan/c.nosym" -o "$tmp/exp/c.gsym" \
    >/dev/null 2>&1; then
	echo "# fixtures: symhub gsym convert c.nosym succeeded"
	exit 99
fi

# ---- helpers ----------------------------------------------------------

conv() {	# conv RESULT: symhub_gsym_conversions_total{result=RESULT}
	metric "symhub_gsym_conversions_total{result=\"$1\"}"
}

# get_gsym V OUT: GET /buildid/ID/gsym of fixture V (or a build-id);
# body to OUT, headers to OUT.hdr; prints the status.
get_gsym() {
	local id=${ID[$1]:-$1}
	http "/buildid/$id/gsym" "$2" "$2.hdr"
}

# expect_gsym DESC V: GET /gsym answers 200 with symhub gsym convert's
# bytes of V's debug file.
expect_gsym() {
	local d=$1 v=$2 code
	code=$(get_gsym "$v" "$tmp/out/$v.gsym")
	if [ "$code" != 200 ]; then
		fail "$d" "GET /buildid/${ID[$v]}/gsym: status $code, want 200" \
		    "$(head -c 200 "$tmp/out/$v.gsym" 2>/dev/null)"
	elif ! cmp -s "$tmp/out/$v.gsym" "$tmp/exp/$v.gsym"; then
		fail "$d" "200, but $(file_size "$tmp/out/$v.gsym") bytes that" \
		    "differ from symhub gsym convert's $(file_size "$tmp/exp/$v.gsym")"
	else
		pass "$d"
	fi
}

# expect_conv DESC OK [NOTHING]: the conversion counters now.
expect_conv() {
	local d=$1 got want
	got="ok=$(conv ok) nothing=$(conv nothing) error=$(conv error)"
	want="ok=$2 nothing=${3:-0} error=0"
	[ "$got" = "$want" ]
	verdict $? "$d ($got)" \
	    "symhub_gsym_conversions_total: $got, want $want"
}

# post PATH BODY-FILE OUT [CURL-ARGS...]: POST the file's bytes; answer to
# OUT and OUT.hdr; prints the status.
post() {
	local path=$1 body=$2 out=$3
	shift 3
	http "$path" "$out" "$out.hdr" --data-binary "@$body" "$@"
}


# access V: the last access-log line for V's /gsym.
access() {
	# The line is written once the answer is sent: wait for it.
	wait_until 10 grep -q "GET /buildid/${ID[$1]}/gsym " "$2"
	grep "GET /buildid/${ID[$1]}/gsym " "$2" | tail -1
}

section 'scanned: GET and HEAD /gsym'
HUB1_ARGS=(-d "$tmp/store1" -F "$tmp/scan" --gsym-workers 2 --gsym-threads 3)
hub "${HUB1_ARGS[@]}" --log-file "$tmp/hub1.log"
expect_conv "fresh store: no conversion yet" 0
expect_gsym "scanned debug file: GET /gsym is symhub gsym convert's bytes" a
case $(access a "$tmp/hub1.log") in
*" converted "*) pass "... the access log says converted" ;;
*) fail "... the access log says converted" "$(access a "$tmp/hub1.log")" ;;
esac
case $(header "$tmp/out/a.gsym.hdr" Content-Length) in
"$(file_size "$tmp/exp/a.gsym")") pass "... with its Content-Length" ;;
*) fail "... with its Content-Length" \
    "Content-Length '$(header "$tmp/out/a.gsym.hdr" Content-Length)'" ;;
esac
expect_conv "... converted once" 1
expect_gsym "second GET /gsym: the same bytes" a
expect_conv "... from the store: no second conversion" 1
case $(access a "$tmp/hub1.log") in
*" converted "*) fail "... and the access log does not say converted" \
    "$(access a "$tmp/hub1.log")" ;;
*) pass "... and the access log does not say converted" ;;
esac
code=$(curl -s --max-time 10 -I -o "$tmp/out/head.hdr" -w '%{http_code}' \
    "$URL/buildid/${ID[a]}/gsym")
[ "$code" = 200 ] && [ "$(header "$tmp/out/head.hdr" Content-Length)" = \
    "$(file_size "$tmp/exp/a.gsym")" ]
verdict $? "HEAD /gsym: 200 with the GSYM's Content-Length" "status $code" \
    "$(cat "$tmp/out/head.hdr")"

section '/symbolize against `symhub gsym lookup`'
# Every function start nm knows, ~480 random addresses over the executable
# sections and a little past them, and addresses far outside (the largest
# twice: once a JSON number, once a string).
lo='' hi=''
while read -r addr size flags; do
	[[ $flags == *X* ]] || continue
	a=$((16#$addr)) e=$((16#$addr + 16#$size))
	if [ -z "$lo" ] || [ "$a" -lt "$lo" ]; then lo=$a; fi
	if [ -z "$hi" ] || [ "$e" -gt "$hi" ]; then hi=$e; fi
done < <(readelf -SW "$tmp/bin/a" | sed -n 's/^ *\[ *[0-9]*\] //p' |
    awk '{ print $3, $5, $7 }')
[ -n "$hi" ] && [ "$hi" -gt "$lo" ] ||
    { echo "# no executable sections"; exit 99; }
{
	nm "$tmp/bin/a" | awk '$2 ~ /^[tTwW]$/ && $1 !~ /^0+$/ { print "0x" $1 }' |
	    sed 's/^0x0*/0x/'
	awk -v lo="$lo" -v hi="$((hi + 64))" 'BEGIN { srand(7)
	    for (i = 0; i < 480; i++) printf "0x%x\n", lo + int(rand() * (hi - lo)) }'
	printf '%s\n' 0x0 0x1 0xfff "$(printf '0x%x' $((hi + 0x10000)))" \
	    0x7fffffffffffffff 0xffffffffffffffff 0xffffffffffffffff
} >"$tmp/par/addrs"
naddr=$(wc -l <"$tmp/par/addrs")
mapfile -t ADDRS <"$tmp/par/addrs"

# The JSON body mixes numbers and hex strings; the line body mixes 0x and
# bare hex, CRLF line ends and blank lines.
python3 - "$tmp/par/addrs" >"$tmp/par/body.json" <<'EOF' || exit 99
import json, sys
a = [int(l, 16) for l in open(sys.argv[1]).read().split()]
print(json.dumps([x if i % 2 == 0 else "0x%x" % x for i, x in enumerate(a)]))
EOF
awk '{ s = NR % 2 ? $0 : substr($0, 3); printf "%s\r\n", s
    if (NR % 100 == 0) printf "\r\n" }' "$tmp/par/addrs" >"$tmp/par/body.txt"

# to_text JSON [V [ADDRS]]: a /symbolize answer in llvm-gsymutil's lookup
# format, after checking its shape: V's build-id (a's by default), the
# addresses of the file ADDRS in order, "error" exactly when there are no
# frames, "inlined" on all frames but the last.  Prints
# "# found N inline M errors K" on stderr.
to_text() {
	python3 - "$1" "${ID[${2:-a}]}" "${3:-$tmp/par/addrs}" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
want = [int(l, 16) for l in open(sys.argv[3]).read().split()]
bad = []
if d.get("buildid") != sys.argv[2]:
    bad.append("buildid %r" % d.get("buildid"))
res = d["results"]
if [int(r["address"], 16) for r in res] != want:
    bad.append("addresses not those asked, in order")
found = inl = err = 0
for r in res:
    a = int(r["address"], 16)
    fr = r["frames"]
    s = "0x%016x: " % a
    if not fr:
        err += 1
        if "error" not in r:
            bad.append("%s: no frames, no error" % r["address"])
        print(s + "error: " + r.get("error", "?"))
        continue
    found += 1
    if "error" in r:
        bad.append("%s: frames and an error" % r["address"])
    if len(fr) > 1:
        inl += 1
    for i, f in enumerate(fr):
        if f["inlined"] != (i < len(fr) - 1):
            bad.append("%s: frame %d inlined=%s" %
                       (r["address"], i, f["inlined"]))
        if i > 0:
            s += "\n" + " " * 20
        s += f["function"]
        if f["offset"] & 0xffffffff:
            s += " + %d" % (f["offset"] & 0xffffffff)
        if f.get("file"):
            s += " @ %s:%d" % (f["file"], f["line"])
        if i < len(fr) - 1:
            s += " [inlined]"
    print(s)
for b in bad[:5]:
    print("# " + b, file=sys.stderr)
print("# found %d inline %d errors %d" % (found, inl, err), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}

hits() { metric 'symhub_gsym_record_cache_total{result="hit"}'; }
misses() { metric 'symhub_gsym_record_cache_total{result="miss"}'; }

"$SYMHUB" gsym lookup "$tmp/out/a.gsym" "${ADDRS[@]}" 2>"$tmp/par/lookup.err" |
    tail -n +2 >"$tmp/par/lookup.txt"
[ -s "$tmp/par/lookup.txt" ] ||
    { echo "# symhub gsym lookup: $(cat "$tmp/par/lookup.err")"; exit 99; }

h0=$(hits) m0=$(misses)
declare -A FOUND
for kind in json txt; do
	[ $kind = json ] && ct=application/json || ct=text/plain
	code=$(post "/buildid/${ID[a]}/symbolize" "$tmp/par/body.$kind" \
	    "$tmp/par/ans.$kind" -H "Content-Type: $ct")
	if [ "$code" != 200 ]; then
		fail "/symbolize, $naddr addresses as $kind: 200" "status $code" \
		    "$(head -c 200 "$tmp/par/ans.$kind")"
		continue
	fi
	pass "/symbolize, $naddr addresses as $kind: 200"
	check "... Content-Type: application/json" \
	    test "$(header "$tmp/par/ans.$kind.hdr" Content-Type)" = application/json
	to_text "$tmp/par/ans.$kind" >"$tmp/par/ans.$kind.txt" \
	    2>"$tmp/par/ans.$kind.err"
	verdict $? "... well formed: $(tail -1 "$tmp/par/ans.$kind.err" | cut -c3-)" \
	    "$(cat "$tmp/par/ans.$kind.err")"
	diff "$tmp/par/lookup.txt" "$tmp/par/ans.$kind.txt" \
	    >"$tmp/par/diff.$kind"
	verdict $? "... as llvm-gsymutil text: identical to symhub gsym lookup" \
	    "$(head -12 "$tmp/par/diff.$kind")"
	read -r _ _ FOUND[$kind] _ ninl _ nerr < <(tail -1 "$tmp/par/ans.$kind.err")
	if [ $kind = json ]; then
		h1=$(hits) m1=$(misses)
	fi
done
h2=$(hits) m2=$(misses)
# Not vacuous: inline chains and misses among the results.
[ "${ninl:-0}" -ge 20 ] && [ "${nerr:-0}" -ge 6 ]
verdict $? "the addresses include $ninl with inline frames, $nerr not in GSYM" \
    "$ninl with inline frames, $nerr not found"
check "the line body's answer is the JSON body's, byte for byte" \
    cmp -s "$tmp/par/ans.json" "$tmp/par/ans.txt"
if [ -n "$m1" ] && [ $((h1 - h0 + m1 - m0)) = "${FOUND[json]}" ] &&
    [ $((m1 - m0)) -gt 0 ]; then
	pass "record cache, first request: $((m1 - m0)) misses +" \
	    "$((h1 - h0)) hits = ${FOUND[json]} found"
else
	fail "record cache, first request: misses + hits = ${FOUND[json]} found" \
	    "$((m1 - m0)) misses, $((h1 - h0)) hits"
fi
[ -n "$m2" ] && [ "$m2" = "$m1" ] && [ $((h2 - h1)) = "${FOUND[txt]}" ]
verdict $? "record cache, the same again: ${FOUND[txt]} hits, no miss" \
    "$((h2 - h1)) hits, $((m2 - m1)) misses"

# Inline chains against binutils: for every address addr2line -i resolves
# to three or more frames, the same functions, files and lines, innermost
# first.
addr2line -a -i -f -e "$tmp/bin/a" "${ADDRS[@]}" >"$tmp/par/a2l" 2>/dev/null
python3 - "$tmp/par/a2l" "$tmp/par/ans.json" >"$tmp/par/a2l.out" <<'EOF'
import json, re, sys
groups = []
for l in open(sys.argv[1]).read().splitlines():
    if re.match(r"^0x[0-9a-f]+$", l):
        groups.append((int(l, 16), []))
    else:
        groups[-1][1].append(l)
res = json.load(open(sys.argv[2]))["results"]
if [a for a, _ in groups] != [int(r["address"], 16) for r in res]:
    print("addr2line answered for other addresses")
    sys.exit(1)
n = bad = 0
for (a, g), r in zip(groups, res):
    chain = [(g[i], re.sub(r" \(discriminator \d+\)$", "", g[i + 1]))
             for i in range(0, len(g) - 1, 2)]
    if len(chain) < 3:
        continue
    n += 1
    got = [(f["function"], "%s:%d" % (f.get("file"), f.get("line", 0)))
           for f in r["frames"]]
    if got != chain:
        bad += 1
        if bad <= 3:
            print("0x%x: addr2line %s, symhubd %s" % (a, chain, got))
print("compared %d mismatched %d" % (n, bad))
EOF
read -r _ ncmp _ nbad < <(tail -1 "$tmp/par/a2l.out")
[ "${ncmp:-0}" -ge 10 ] && [ "$nbad" = 0 ]
verdict $? "inline chains (3+ deep) are addr2line's: $ncmp addresses" \
    "$(cat "$tmp/par/a2l.out")"

section 'concurrent first requests: one conversion'
ok0=$(conv ok) co0=$(metric symhub_gsym_coalesced_total)
cargs=()
for i in $(seq 20); do
	cargs+=(-o "$tmp/par/b.$i" "$URL/buildid/${ID[b]}/gsym")
done
curl -s --max-time 30 -Z --parallel-immediate --parallel-max 20 \
    -w '%{http_code}\n' "${cargs[@]}" >"$tmp/par/b.codes" 2>"$tmp/par/b.err"
nok=0
for i in $(seq 20); do
	cmp -s "$tmp/par/b.$i" "$tmp/exp/b.gsym" && nok=$((nok + 1))
done
codes=$(sort "$tmp/par/b.codes" | uniq -c | awk '{ printf "%s x %s ", $1, $2 }')
[ "$codes" = "20 x 200 " ] && [ "$nok" = 20 ]
verdict $? "20 concurrent GET /gsym of a new build-id: 20 x 200, the right bytes" \
    "statuses: $codes; $nok with the right bytes"
ok1=$(conv ok) co1=$(metric symhub_gsym_coalesced_total)
check "... one conversion ($((ok1 - ok0)); $((co1 - co0)) coalesced)" \
    test $((ok1 - ok0)) = 1

section 'errors'
printf '0x%x\n' "$lo" >"$tmp/par/one"
code=$(get_gsym $UNKNOWN "$tmp/out/unk")
[ "$code" = 404 ] && grep -qx 'no debuginfo for this build-id' "$tmp/out/unk"
verdict $? "unknown build-id, no upstream: GET /gsym -> 404 no debuginfo" \
    "status $code: $(head -c 200 "$tmp/out/unk")"
code=$(post "/buildid/$UNKNOWN/symbolize" "$tmp/par/one" "$tmp/out/unk")
expect_status "unknown build-id: POST /symbolize -> 404" 404 "$code" \
    "$tmp/out/unk"

code=$(http "/buildid/${ID[a]}/symbolize" "$tmp/out/b" "$tmp/out/h")
[ "$code" = 405 ] && [ "$(header "$tmp/out/h" Allow)" = POST ]
verdict $? "GET /symbolize -> 405, Allow: POST" \
    "status $code, Allow: '$(header "$tmp/out/h" Allow)'"
for k in debuginfo gsym; do
	code=$(post "/buildid/${ID[a]}/$k" "$tmp/par/one" "$tmp/out/b")
	[ "$code" = 405 ] && [ "$(header "$tmp/out/b.hdr" Allow)" = "GET, HEAD" ]
	verdict $? "POST /$k -> 405, Allow: GET, HEAD" \
	    "status $code, Allow: '$(header "$tmp/out/b.hdr" Allow)'"
done
for body in zzz '{}' '["0xzz"]' '[-1]' '[{}]' '[1, "0x2"' 0x12345678901234567 \
    '0x10 junk'; do
	printf '%s\n' "$body" >"$tmp/par/bad"
	code=$(post "/buildid/${ID[a]}/symbolize" "$tmp/par/bad" "$tmp/out/b")
	expect_status "POST /symbolize with body '$body' -> 400" 400 "$code" \
	    "$tmp/out/b"
done

code=$(http "/buildid/${ID[c]}/executable" "$tmp/out/b" "$tmp/out/h")
expect_status "stripped binary (--strip-all) is served as an executable" \
    200 "$code" "$tmp/out/b"
code=$(get_gsym c "$tmp/out/c")
expect_status "... but GET /gsym -> 404: nothing to convert" 404 "$code" \
    "$tmp/out/c"
check "... counted: conversions_total{result=\"nothing\"} = 1" \
    test "$(conv nothing)" = 1
code=$(post "/buildid/${ID[c]}/symbolize" "$tmp/par/one" "$tmp/out/c")
expect_status "... and POST /symbolize -> 404" 404 "$code" "$tmp/out/c"
check "symhubd 1 still alive" alive "$SYMHUBD_PID"

section 'restart on the same store, --symbolize-max-addresses'
stop_check "symhubd 1: SIGTERM, exit 0"
hub "${HUB1_ARGS[@]}" --symbolize-max-addresses 10 --log-file "$tmp/hub1.log"
expect_gsym "restarted on the same store: GET /gsym, the same bytes" a
expect_gsym "... and the other one" b
expect_conv "... both from the store: no conversion" 0
head -10 "$tmp/par/addrs" >"$tmp/par/ten"
head -11 "$tmp/par/addrs" >"$tmp/par/eleven"
python3 -c 'import json, sys
print(json.dumps([int(l, 16) for l in open(sys.argv[1]).read().split()]))' \
    "$tmp/par/eleven" >"$tmp/par/eleven.json" || exit 99
code=$(post "/buildid/${ID[a]}/symbolize" "$tmp/par/ten" "$tmp/out/ten")
[ "$code" = 200 ] && [ "$(python3 -c 'import json, sys
print(len(json.load(open(sys.argv[1]))["results"]))' "$tmp/out/ten")" = 10 ]
verdict $? "--symbolize-max-addresses 10: 10 addresses -> 200, 10 results" \
    "status $code: $(head -c 200 "$tmp/out/ten")"
code=$(post "/buildid/${ID[a]}/symbolize" "$tmp/par/eleven" "$tmp/out/b")
expect_status "... 11 addresses as lines -> 413" 413 "$code" "$tmp/out/b"
code=$(post "/buildid/${ID[a]}/symbolize" "$tmp/par/eleven.json" "$tmp/out/b")
expect_status "... 11 addresses as JSON -> 413" 413 "$code" "$tmp/out/b"
stop_check "symhubd 1 (restarted): SIGTERM, exit 0"

section 'upstream only'
# seen ID: how many requests for /buildid/ID/ (any kind) the upstream logged.
seen() {
	local n
	n=$(grep -c "GET /buildid/$1/" "$tmp/up.log" 2>/dev/null)
	echo "${n:-0}"
}
if start_debuginfod up "" "$tmp/up" &&
    wait_http 30 "$DURL/buildid/${ID[d]}/debuginfo" 200; then
	pass "debuginfod upstream serves d.debug"
	UP=$DURL
	TOKENS=$tmp/tokens
	TOK=$(new_token ci upload "$TOKENS") ||
	    { echo "# symhub token new: $(cat "$tmp/token.err")"; exit 99; }
	hub -d "$tmp/store2" -u "$UP name=up" --tokens "$TOKENS" \
	    --log-file "$tmp/hub2.log"
	n0=$(seen "${ID[d]}")
	expect_gsym "upstream only: GET /gsym is symhub gsym convert's bytes" d
	n1=$(seen "${ID[d]}")
	check "... the upstream was asked once ($((n1 - n0)) requests)" \
	    test $((n1 - n0)) = 1
	check "... for the debuginfo" test "$(grep "GET /buildid/${ID[d]}/" \
	    "$tmp/up.log" | tail -1 | grep -c "/debuginfo ")" = 1
	check "... symhubd counts one hit from it" test "$(metric \
	    'symhub_upstream_requests_total{upstream="up",outcome="hit"}')" = 1
	expect_conv "... converted once" 1
	expect_gsym "... again: the same bytes" d
	check "... without asking the upstream again" \
	    test "$(seen "${ID[d]}")" = "$n1"
	expect_conv "... or converting again" 1
	code=$(http "/buildid/${ID[d]}/debuginfo" "$tmp/out/d.dbg" "$tmp/out/h")
	[ "$code" = 200 ] && cmp -s "$tmp/out/d.dbg" "$tmp/bin/d.debug" &&
	    [ "$(seen "${ID[d]}")" = "$n1" ]
	verdict $? "... and the fetched debuginfo is stored: served from the hub" \
	    "status $code; upstream requests $n1 -> $(seen "${ID[d]}")"
	# The control for 7: without --gsym-on-upload an upload is converted
	# by the first request that needs it, here a /symbolize.
	code=$(put_file "/buildid/${ID[e]}/debuginfo" "$tmp/bin/e.debug" \
	    "$tmp/out/put" "$tmp/out/put.hdr" -H "Authorization: Bearer $TOK")
	expect_status "without --gsym-on-upload: PUT e.debug -> 201" 201 \
	    "$code" "$tmp/out/put"
	expect_conv "... not converted by the upload" 1
	head -40 "$tmp/par/addrs" >"$tmp/par/forty"
	mapfile -t forty <"$tmp/par/forty"
	code=$(post "/buildid/${ID[e]}/symbolize" "$tmp/par/forty" \
	    "$tmp/out/e.json")
	"$SYMHUB" gsym lookup "$tmp/exp/e.gsym" "${forty[@]}" |
	    tail -n +2 >"$tmp/par/e.lookup"
	[ "$code" = 200 ] &&
	    to_text "$tmp/out/e.json" e "$tmp/par/forty" >"$tmp/par/e.txt" \
	    2>"$tmp/par/e.err" && cmp -s "$tmp/par/e.txt" "$tmp/par/e.lookup"
	verdict $? "... the first POST /symbolize: symhub gsym lookup's answers" \
	    "status $code: $(head -c 200 "$tmp/out/e.json")" \
	    "$(cat "$tmp/par/e.err")" \
	    "$(diff "$tmp/par/e.lookup" "$tmp/par/e.txt" | head -5)"
	grep "POST /buildid/${ID[e]}/symbolize " "$tmp/hub2.log" |
	    tail -1 | grep -q " converted "
	verdict $? "... converted by it (access log)" \
	    "$(grep "/buildid/${ID[e]}/" "$tmp/hub2.log")"
	expect_conv "... once" 2
	expect_gsym "... then GET /gsym: symhub gsym convert's bytes" e
	expect_conv "... from the store" 2
	stop_check "symhubd 2: SIGTERM, exit 0"
else
	fail "debuginfod upstream serves d.debug" "$(tail -n 5 "$tmp/up.log")"
	TOKENS=$tmp/tokens
	TOK=$(new_token ci upload "$TOKENS") ||
	    { echo "# symhub token new: $(cat "$tmp/token.err")"; exit 99; }
fi

section '--gsym-on-upload'
hub -d "$tmp/store3" --tokens "$TOKENS" --gsym-on-upload \
    --log-file "$tmp/hub3.log"
expect_conv "--gsym-on-upload, empty store: no conversion" 0
code=$(put_file "/buildid/${ID[e]}/debuginfo" "$tmp/bin/e.debug" \
    "$tmp/out/put" "$tmp/out/put.hdr" -H "Authorization: Bearer $TOK")
expect_status "PUT e.debug -> 201" 201 "$code" "$tmp/out/put"
wait_metric 'symhub_gsym_conversions_total{result="ok"}' -ge 1 20
verdict $? "... converted with no request for it" \
    "$(metrics_text | grep '^symhub_gsym_conversions_total')"
expect_conv "... once" 1
expect_gsym "... GET /gsym: symhub gsym convert's bytes" e
expect_conv "... served from the store: no second conversion" 1
case $(access e "$tmp/hub3.log") in
"") fail "... access log has the GET" ;;
*" converted "*) fail "... access log does not say converted" \
    "$(access e "$tmp/hub3.log")" ;;
*) pass "... access log does not say converted" ;;
esac
stop_check "symhubd 3: SIGTERM, exit 0"

section '--gsym-ahead: new debuginfo converted before anybody asks'
# Scanned (a, b) and fetched (d) debug files are converted in the
# background; hub 1 above, without it, converted nothing before a request.
args=(-d "$tmp/store5" -F "$tmp/scan" --gsym-ahead --log-file "$tmp/hub5.log")
[ -n "$UP" ] && args+=(-u "$UP name=up")
hub "${args[@]}"
wait_metric 'symhub_gsym_conversions_total{result="ok"}' -ge 2 60
verdict $? "the scanned a.debug and b.debug are converted with no request" \
    "$(metrics_text | grep '^symhub_gsym_')"
expect_gsym "... GET /gsym: symhub gsym convert's bytes" a
case $(access a "$tmp/hub5.log") in
"") fail "... access log has the GET" ;;
*" converted "*) fail "... served from the store, not converted now" \
    "$(access a "$tmp/hub5.log")" ;;
*) pass "... served from the store, not converted now" ;;
esac
if [ -n "$UP" ]; then
	code=$(http "/buildid/${ID[d]}/debuginfo" "$tmp/out/d5" "$tmp/out/h5")
	expect_status "a fetched debuginfo (d)" 200 "$code" "$tmp/out/d5"
	wait_metric 'symhub_gsym_conversions_total{result="ok"}' -ge 3 60
	verdict $? "... is converted with no request for its GSYM" \
	    "$(metrics_text | grep '^symhub_gsym_')"
	expect_gsym "... GET /gsym: symhub gsym convert's bytes" d
	case $(access d "$tmp/hub5.log") in
	*" converted "*) fail "... served from the store, not converted now" \
	    "$(access d "$tmp/hub5.log")" ;;
	*) pass "... served from the store, not converted now" ;;
	esac
else
	skip_check "--gsym-ahead on a fetched debuginfo" "no upstream"
fi
check "symhub_gsym_ahead_total counts what was queued" metric_cmp \
    'symhub_gsym_ahead_total{result="queued"}' -ge 2
stop_check "symhubd 5: SIGTERM, exit 0"

section 'a stripped executable, and an upstream that resets'
# Nothing definite about the debuginfo: the connection is reset (so that
# libdebuginfod asks again later), not answered 404.
if start_badupstream reset reset; then
	hub -d "$tmp/store4" -F "$tmp/scan" -u "$BURL" --log-file "$tmp/hub4.log"
	code=$(get_gsym c "$tmp/out/c4")
	expect_status "stripped executable, upstream resets: GET /gsym is reset" \
	    000 "$code" "$tmp/out/c4"
	code=$(post "/buildid/${ID[c]}/symbolize" "$tmp/par/one" "$tmp/out/c4")
	expect_status "... and POST /symbolize is reset" 000 "$code" \
	    "$tmp/out/c4"
	stop_check "symhubd 4: SIGTERM, exit 0"
else
	fail "badupstream.py reset starts" "$(cat "$tmp/reset.err")"
fi

echo "# $(($(date +%s) - t0)) s"
finish
