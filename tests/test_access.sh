#!/bin/bash
# Integration test of access control (symhubd(8), ACCESS): read tokens
# under --read-auth and --metrics-auth, as Bearer and as Basic
# credentials, with the real clients (debuginfod-find and gdb with
# credentials in DEBUGINFOD_URLS, llvm-debuginfod-find-19 with a
# DEBUGINFOD_HEADERS_FILE, curl with Bearer); private uploads seen by
# their tenant only; malformed and huge headers; a token revoked (SIGHUP)
# while a download streams; rate limits (429, Retry-After); the refusal
# to take tokens in clear text on a network address; the timing of a
# near-miss token against a far one.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_access.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy readelf nm cmp timeout awk sed ss python3 \
    debuginfod-find gdb
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"

section 'fixtures'
mkdir -p "$tmp"/{src,bin,f,out,store} || exit 99
cp "$FIXTURES"/hello.c "$FIXTURES"/greet.c "$FIXTURES"/greet.h "$tmp/src/" ||
    exit 99
(cd "$tmp/src" && gcc -g -O0 -o "$tmp/bin/hello" hello.c greet.c &&
    gcc -g -O1 -o "$tmp/bin/hello2" hello.c greet.c &&
    gcc -g -O2 -o "$tmp/bin/hello3" hello.c greet.c) || exit 99
F=$tmp/f
objcopy --only-keep-debug "$tmp/bin/hello" "$F/hello.debug" &&
    objcopy --only-keep-debug "$tmp/bin/hello2" "$F/hello2.debug" &&
    objcopy --only-keep-debug "$tmp/bin/hello3" "$F/hello3.debug" &&
    strip -g -o "$tmp/bin/hello.stripped" "$tmp/bin/hello" || exit 99
# A large debuginfo for a download that takes a while.
head -c $((8 * 1024 * 1024)) /dev/urandom >"$F/blob" &&
    objcopy --add-section .big="$F/blob" "$F/hello2.debug" "$F/big.debug" ||
    exit 99
ID=$(buildid "$tmp/bin/hello")
ID2=$(buildid "$tmp/bin/hello2")
ID3=$(buildid "$tmp/bin/hello3")
[ -n "$ID" ] && [ -n "$ID2" ] && [ "$ID" != "$ID2" ] ||
    { echo "# fixtures: no build-ids"; exit 99; }

TOKENS=$tmp/tokens
{ TOK_CI=$(new_token acme/ci upload "$TOKENS") &&
    TOK_DEV=$(new_token acme/dev read "$TOKENS") &&
    TOK_OTHER=$(new_token other/dev read "$TOKENS") &&
    TOK_UPONLY=$(new_token pusher upload "$TOKENS") &&
    TOK_GONE=$(new_token leaver read "$TOKENS") &&
    TOK_PRIV=$(new_token acme/secret upload,private "$TOKENS") &&
    TOK_NONE=$(new_token stranger read); } ||
    { echo "# symhub token new: $(cat "$tmp/token.err")"; exit 99; }

P_DBG=/buildid/$ID/debuginfo
P2_DBG=/buildid/$ID2/debuginfo
P3_DBG=/buildid/$ID3/debuginfo

# get_as DESC PATH CODE TOKEN [FILE]: GET with "Authorization: Bearer
# TOKEN" ("-": none) answers CODE (and FILE's bytes).
get_as() {
	local a=()
	[ "$4" = - ] || a=(-H "Authorization: Bearer $4")
	expect_get "$1" "$2" "$3" "$5" "${a[@]}"
}

# refused DESC PATH [CURL-ARGS...]: 401 with WWW-Authenticate for
# both Bearer and Basic, never a 404.
refused() {
	local d=$1 p=$2 code
	shift 2
	code=$(http "$p" "$tmp/out/body" "$tmp/out/hdrs" "$@")
	if [ "$code" != 401 ]; then
		fail "$d" "status $code, want 401"
	elif ! grep -qi '^WWW-Authenticate: Bearer realm="symhub"' \
	    "$tmp/out/hdrs" || ! grep -qi '^WWW-Authenticate: Basic' \
	    "$tmp/out/hdrs"; then
		fail "$d" "no WWW-Authenticate for Bearer and Basic" \
		    "$(cat "$tmp/out/hdrs")"
	else
		pass "$d"
	fi
}

section 'uploads, then reads under --read-auth'
hub -d "$tmp/store" --tokens "$TOKENS" --read-auth
STORE=$tmp/store
# ID: private to acme, per request; ID3: private, per token; ID2 public.
code=$(put_file "$P_DBG" "$F/hello.debug" "$tmp/out/b" "$tmp/out/h" \
    -H "Authorization: Bearer $TOK_CI" -H 'X-Symhub-Private: 1')
expect_status 'acme/ci uploads, private by request' 201 "$code" "$tmp/out/b"
code=$(put_file "$P3_DBG" "$F/hello3.debug" "$tmp/out/b" "$tmp/out/h" \
    -H "Authorization: Bearer $TOK_PRIV")
expect_status 'acme/secret uploads, private by its token' 201 "$code" \
    "$tmp/out/b"
code=$(put_file "$P2_DBG" "$F/big.debug" "$tmp/out/b" "$tmp/out/h" \
    -H "Authorization: Bearer $TOK_CI")
expect_status 'and a large one' 201 "$code" "$tmp/out/b"

get_as 'a read token of the tenant reads (Bearer)' "$P_DBG" 200 "$TOK_DEV" \
    "$F/hello.debug"
check 'what a token read is Cache-Control: private' \
    grep -qi '^Cache-Control: private' "$tmp/out/hdrs"
expect_get 'Basic credentials, the token as the password' "$P_DBG" 200 \
    "$F/hello.debug" -u "anyone:$TOK_DEV"
refused 'no token: 401, not 404' "$P_DBG"
refused 'no token for an unknown build-id: 401 too (nothing is told)' \
    /buildid/0123456789abcdef0123456789abcdef01234567/debuginfo
refused 'an unknown token: 401' "$P_DBG" -H "Authorization: Bearer $TOK_NONE"
get_as 'an upload-only token may not read: 403' "$P_DBG" 403 "$TOK_UPONLY"
code=$(http "$P2_DBG" "$tmp/out/body" "$tmp/out/hdrs" -I \
    -H "Authorization: Bearer $TOK_UPONLY")
expect_status '... but may ask first, as symhub upload does (HEAD)' 200 \
    "$code"
refused '/metadata needs a token' '/metadata?key=glob&value=/*'
refused 'POST /symbolize needs a token' /symbolize -X POST \
    --data-binary '{"modules":[]}'
refused "GSYM needs a token" "/buildid/$ID/gsym"
refused 'a section needs a token' "/buildid/$ID/section/.debug_info"
get_as '/metrics stays open without --metrics-auth' /metrics 200 -
get_as 'so does the status page' /status 200 -
check 'failures are counted by cause' \
    metric_cmp 'symhub_auth_refused_total{cause="missing"}' -ge 5
check '... unknown tokens apart' \
    metric_cmp 'symhub_auth_refused_total{cause="invalid"}' -ge 1
check '... and tokens without the scope' \
    metric_cmp 'symhub_auth_refused_total{cause="scope"}' -ge 1
check 'refusals are logged with the address' \
    grep -q "refused for 127.0.0.1: no token" "$tmp/symhubd.out"
check '... and never with the token' \
    bash -c "! grep -qe '$TOK_NONE' -e '$TOK_DEV' '$tmp/symhubd.out'"

section 'private uploads: their tenant only'
get_as "another tenant's token: 404, as if absent" "$P_DBG" 404 "$TOK_OTHER"
get_as '... for a private-by-token upload too' "$P3_DBG" 404 "$TOK_OTHER"
get_as 'acme/dev reads that one' "$P3_DBG" 200 "$TOK_DEV" "$F/hello3.debug"
code=$(put_file "$P_DBG" "$F/hello.debug" "$tmp/out/b" "$tmp/out/h" \
    -H "Authorization: Bearer $TOK_UPONLY")
expect_status "another tenant's upload of the same build-id: 409" 409 \
    "$code" "$tmp/out/b"
get_as '... and the upload stays private' "$P_DBG" 404 "$TOK_OTHER"
get_as 'a public upload: every reader' "$P2_DBG" 200 "$TOK_OTHER" \
    "$F/big.debug"
get_as "another tenant: no section of it" "/buildid/$ID/section/.debug_info" \
    404 "$TOK_OTHER"
get_as "... no GSYM" "/buildid/$ID/gsym" 404 "$TOK_OTHER"
get_as "... no executable" "/buildid/$ID/executable" 404 "$TOK_OTHER"
code=$(http /symbolize "$tmp/out/body" "$tmp/out/hdrs" -X POST \
    -H "Authorization: Bearer $TOK_OTHER" -H 'Content-Type: application/json' \
    --data-binary "{\"modules\":[{\"buildid\":\"$ID\",\"addresses\":[\"0x1139\"]}]}")
if [ "$code" = 200 ] && grep -q 'no_debuginfo' "$tmp/out/body" &&
    ! grep -q '"function"' "$tmp/out/body"; then
	pass "... and /symbolize says no_debuginfo"
else
	fail "... and /symbolize says no_debuginfo" "status $code" \
	    "$(head -c 300 "$tmp/out/body")"
fi
# Tecken names a module by a Breakpad id, the first 16 bytes of its
# build-id: the tenant's token symbolizes it, another tenant's finds
# nothing (the batch checks the build-id the prefix resolves to).
BP=$(python3 "$top_srcdir/tests/batchcheck.py" breakpad "$ID")
for t in "$TOK_DEV 1 its tenant symbolizes it" \
    "$TOK_OTHER 0 another tenant finds nothing"; do
	set -- $t
	tk=$1 want=$2
	shift 2
	code=$(http /symbolicate/v5 "$tmp/out/tk" "$tmp/out/hdrs" -X POST \
	    -H "Authorization: Bearer $tk" --data-binary \
	    "{\"memoryMap\":[[\"hello\",\"$BP\"]],\"stacks\":[[[0,4409]]]}")
	got=0
	grep -q '"function"' "$tmp/out/tk" && got=1
	check_exit "/symbolicate/v5 of a private module: $* ($code)" \
	    "$want" "$got"
done
# The profiler's routes find a module by its id: the tenant's module is
# there (a file it does not name: 403), another tenant's is not (404).
for t in "$TOK_DEV 403 its tenant finds the module" \
    "$TOK_OTHER 404 another tenant does not"; do
	set -- $t
	tk=$1 want=$2
	shift 2
	code=$(http /source/v1 "$tmp/out/body" "$tmp/out/hdrs" -X POST \
	    -H "Authorization: Bearer $tk" --data-binary \
	    "{\"codeId\":\"$ID\",\"debugName\":\"hello\",\"file\":\"/x.c\"}")
	check_exit "/source/v1 of a private module: $* ($code)" "$want" "$code"
	code=$(http /asm/v1 "$tmp/out/body" "$tmp/out/hdrs" -X POST \
	    -H "Authorization: Bearer $tk" --data-binary \
	    "{\"codeId\":\"$ID\",\"startAddress\":\"0x0\",\"size\":\"0x4\"}")
	[ "$want" = 404 ] && check_exit "/asm/v1 of a private module: $*" 404 "$code"
done
code=$(http "/metadata?key=glob&value=/*" "$tmp/out/body" "$tmp/out/hdrs" \
    -H "Authorization: Bearer $TOK_OTHER")
check "/metadata names no build-id of it ($code)" \
    bash -c "! grep -q -e '$ID' -e '$ID3' '$tmp/out/body'"
stop_check 'the hub stops'
"$SYMHUB" export "$STORE" "$tmp/exp" >"$tmp/out/exp" 2>&1
check_exit 'symhub export leaves private uploads out' 0 $? \
    bash -c "test -f '$tmp/exp/buildid/$ID2/debuginfo' &&
    ! test -e '$tmp/exp/buildid/$ID' && ! test -e '$tmp/exp/buildid/$ID3' &&
    grep -q '2 private, left out' '$tmp/out/exp'"
"$SYMHUB" export --private "$STORE" "$tmp/exp2" >"$tmp/out/exp" 2>&1
check_exit '... and exports them with --private' 0 $? \
    cmp -s "$tmp/exp2/buildid/$ID/debuginfo" "$F/hello.debug"
hub -d "$tmp/store" --tokens "$TOKENS"
get_as 'without --read-auth: a private upload is not open to all' "$P_DBG" \
    404 -
get_as '... its tenant shows a token and reads it' "$P_DBG" 200 "$TOK_DEV" \
    "$F/hello.debug"
stop_check 'the hub stops'
hub -d "$tmp/store" --tokens "$TOKENS" --read-auth

section 'symhub upload --private, and --token-file for pprof, prefetch and perf'
# What test_access does with curl above, with the symhub commands.
(cd "$tmp/src" && gcc -g -Os -o "$tmp/bin/hello4" hello.c greet.c) &&
    objcopy --only-keep-debug "$tmp/bin/hello4" "$F/hello4.debug" || exit 99
ID4=$(buildid "$tmp/bin/hello4")
echo "$TOK_CI" >"$tmp/tok.ci" && echo "$TOK_DEV" >"$tmp/tok.dev" || exit 99
"$SYMHUB" upload --url "$URL" --token-file "$tmp/tok.ci" --private \
    -e "$tmp/bin/hello4" -d "$F/hello4.debug" >"$tmp/out/up4" 2>&1
verdict $? 'symhub upload --private exits 0' "$(cat "$tmp/out/up4")"
get_as "... another tenant's token: 404, as if absent" \
    "/buildid/$ID4/debuginfo" 404 "$TOK_OTHER"
get_as '... its tenant reads it' "/buildid/$ID4/debuginfo" 200 "$TOK_DEV" \
    "$F/hello4.debug"
get_as '... the executable too is private' "/buildid/$ID4/executable" 404 \
    "$TOK_OTHER"

# pprof: a profile of hello4's main, read under --read-auth.
MAIN4=$(nm "$tmp/bin/hello4" | awk '$3 == "main" { print "0x" $1; exit }')
echo "$MAIN4" >"$tmp/out/main4.addrs"
python3 "$top_srcdir/tests/pprofcheck.py" make "$tmp/out/p4.pb.gz" \
    "$tmp/bin/hello4:$ID4:0x555555554000:$tmp/out/main4.addrs" \
    >/dev/null || exit 99
SYMHUB_TOKEN= "$SYMHUB" pprof --url "$URL" "$tmp/out/p4.pb.gz" \
    -o "$tmp/out/p4.sym.pb.gz" >"$tmp/out/pp" 2>&1
st=$?
[ "$st" = 1 ] && grep -q 401 "$tmp/out/pp"
verdict $? "symhub pprof without a token: refused (401), exit 1" \
    "exit $st: $(cat "$tmp/out/pp")"
"$SYMHUB" pprof --url "$URL" --token-file "$tmp/tok.dev" \
    "$tmp/out/p4.pb.gz" -o "$tmp/out/p4.sym.pb.gz" >"$tmp/out/pp" 2>&1 &&
    python3 "$top_srcdir/tests/pprofcheck.py" tojson "$tmp/out/p4.sym.pb.gz" \
    "$tmp/out/p4.json" >"$tmp/out/pps" 2>&1 &&
    grep -q '"function": *"main"' "$tmp/out/p4.json"
verdict $? "symhub pprof --token-file: the private module symbolized" \
    "$(cat "$tmp/out/pp" "$tmp/out/pps"; head -c 300 "$tmp/out/p4.json")"
SYMHUB_TOKEN=$TOK_DEV "$SYMHUB" pprof --url "$URL" "$tmp/out/p4.pb.gz" \
    -o "$tmp/out/p4.sym2.pb.gz" >"$tmp/out/pp" 2>&1
verdict $? '... and with SYMHUB_TOKEN' "$(cat "$tmp/out/pp")"
echo 'two words' >"$tmp/tok.bad"
"$SYMHUB" pprof --url "$URL" --token-file "$tmp/tok.bad" \
    "$tmp/out/p4.pb.gz" -o "$tmp/out/p4.bad" >"$tmp/out/pp" 2>&1
st=$?
[ "$st" = 2 ] && grep -q 'blanks' "$tmp/out/pp"
verdict $? "... a token with a blank is a usage error, never sent" \
    "exit $st: $(cat "$tmp/out/pp")"

# prefetch: HEAD of a public and of the tenant's private module.
SYMHUB_TOKEN= "$SYMHUB" prefetch --url "$URL" "$ID2" >"$tmp/out/pf" 2>&1
st=$?
[ "$st" = 1 ] && grep -q '^failed' "$tmp/out/pf"
verdict $? "symhub prefetch without a token: failed (401), exit 1" \
    "exit $st: $(cat "$tmp/out/pf")"
"$SYMHUB" prefetch --url "$URL" --token-file "$tmp/tok.dev" "$ID2" "$ID4" \
    >"$tmp/out/pf" 2>&1
st=$?
[ "$st" = 0 ] && grep -q '^2 found' "$tmp/out/pf"
verdict $? "symhub prefetch --token-file: both found" \
    "exit $st: $(cat "$tmp/out/pf")"
"$SYMHUB" prefetch --url "$URL" --token-file "$tmp/nothere" "$ID2" \
    >"$tmp/out/pf" 2>&1
st=$?
[ "$st" = 2 ] && grep -q nothere "$tmp/out/pf"
verdict $? '... a token file that cannot be read: exit 2' \
    "exit $st: $(cat "$tmp/out/pf")"
# perf: a profile (perf.data's build-id table, as perf record writes it)
# naming the private hello4, fetched into perf's build-id cache.
python3 - "$tmp/out/p4.data" "$ID4" <<'EOF' || exit 99
import struct, sys
bid = bytes.fromhex(sys.argv[2])
fn = b"/opt/app/hello4"
fn += b"\0" * (64 - len(fn) % 64)
rec = struct.pack("<IHHi", 0, 2 | (1 << 15), 8 + 4 + 24 + len(fn), -1)
rec += bid + bytes(20 - len(bid)) + bytes([len(bid), 0, 0, 0]) + fn
data = bytes(64)
table = 104 + len(data) + 16
hdr = b"PERFILE2" + struct.pack("<QQQQQQQQQ", 104, 136, 0, 0, 104,
                                len(data), 0, 0, 1 << 2) + bytes(24)
open(sys.argv[1], "wb").write(hdr + data + struct.pack("<QQ", table,
                              len(rec)) + rec)
EOF
SYMHUB_TOKEN= "$SYMHUB" perf --url "$URL" --buildid-dir "$tmp/perf0" \
    "$tmp/out/p4.data" >"$tmp/out/pe" 2>&1
st=$?
[ "$st" = 1 ] && grep -q "^failed  *debuginfo  *$ID4 .*HTTP 401" "$tmp/out/pe"
verdict $? "symhub perf without a token: failed (HTTP 401), exit 1" \
    "exit $st: $(cat "$tmp/out/pe")"
"$SYMHUB" perf --url "$URL" --token-file "$tmp/tok.dev" \
    --buildid-dir "$tmp/perf1" "$tmp/out/p4.data" >"$tmp/out/pe" 2>&1
st=$?
[ "$st" = 0 ] && grep -q "^fetched  *debuginfo  *$ID4 " "$tmp/out/pe" &&
    cmp -s "$tmp/perf1/opt/app/hello4/$ID4/debug" "$F/hello4.debug" &&
    cmp -s "$tmp/perf1/.build-id/${ID4:0:2}/${ID4:2}/elf" "$tmp/bin/hello4"
verdict $? "symhub perf --token-file: the private module in perf's cache" \
    "exit $st: $(cat "$tmp/out/pe")"
SYMHUB_TOKEN=$TOK_DEV "$SYMHUB" perf --url "$URL" --buildid-dir "$tmp/perf2" \
    "$tmp/out/p4.data" >"$tmp/out/pe2" 2>&1
st=$?
[ "$st" = 0 ] && cmp -s "$tmp/perf2/opt/app/hello4/$ID4/debug" \
    "$F/hello4.debug"
verdict $? '... and with SYMHUB_TOKEN' "exit $st: $(cat "$tmp/out/pe2")"
"$SYMHUB" perf --url "$URL" --token-file "$tmp/tok.bad" \
    --buildid-dir "$tmp/perf3" "$tmp/out/p4.data" >"$tmp/out/pe3" 2>&1
st=$?
[ "$st" = 2 ] && grep -q 'blanks' "$tmp/out/pe3" && [ ! -e "$tmp/perf3" ]
verdict $? "... a token with a blank: exit 2, nothing fetched" \
    "exit $st: $(cat "$tmp/out/pe3")"
check '... and tokens never printed' \
    bash -c "! grep -rqe '$TOK_DEV' -e '$TOK_CI' '$tmp/out/pp' '$tmp/out/pf' \
    '$tmp/out/up4' '$tmp/out/pe' '$tmp/out/pe2' '$tmp/out/pe3'"

section 'malformed credentials'
for h in "Bearer" "Bearer " "Bearer $TOK_DEV extra" "Bearer  $TOK_DEV$TOK_DEV" \
    "Basic" "Basic !!!!" "Basic $(printf 'no colon' | base64 -w0)" \
    "Basic $(printf 'user:' | base64 -w0)" "Basic $(printf ':%s' "$TOK_DEV" |
    base64 -w0 | tr -d =)" "Digest username=x" "$TOK_DEV" \
    "Basic $(printf 'u:%s' "$TOK_DEV" | base64 -w0)=="; do
	refused "malformed: '${h:0:24}...'" "$P_DBG" -H "Authorization: $h"
done
expect_get 'Basic with an empty user name' "$P_DBG" 200 "$F/hello.debug" \
    -H "Authorization: Basic $(printf ':%s' "$TOK_DEV" | base64 -w0)"
long=$(head -c 6000 /dev/zero | tr '\0' A)
refused 'a 6000-byte Bearer token' "$P_DBG" -H "Authorization: Bearer $long"
refused 'a 6000-byte Basic value' "$P_DBG" -H "Authorization: Basic $long"
long=$(head -c 40000 /dev/zero | tr '\0' A)
code=$(http "$P_DBG" "$tmp/out/body" "$tmp/out/hdrs" \
    -H "Authorization: Bearer $long")
case $code in 4??) pass "a 40 KB header is refused ($code)" ;;
*) fail 'a 40 KB header is refused' "status $code" ;; esac
get_as 'the hub still answers after all that' "$P_DBG" 200 "$TOK_DEV" \
    "$F/hello.debug"

section 'real clients, credentials in DEBUGINFOD_URLS'
client_env
HOSTPORT=127.0.0.1:$PORT
export DEBUGINFOD_URLS="http://acme:$TOK_DEV@$HOSTPORT/"
client_file 'debuginfod-find, http://USER:TOKEN@hub/ (Basic)' \
    "$F/hello.debug" debuginfod-find debuginfo "$ID"
gdb_info_line 'gdb, the same DEBUGINFOD_URLS' "$tmp/bin/hello.stripped" \
    "$tmp/src"
client_env
export DEBUGINFOD_URLS="http://other:$TOK_OTHER@$HOSTPORT/"
f=$(timeout 30 debuginfod-find debuginfo "$ID" 2>"$tmp/out/err")
check "debuginfod-find, another tenant: not its private upload" test -z "$f"
client_file '... but the public one' "$F/big.debug" \
    debuginfod-find debuginfo "$ID2"
dir=$(mktemp -d "$tmp/gdb.XXXXXX") &&
    cp "$tmp/bin/hello.stripped" "$dir/hello"
(cd "$dir" && timeout 30 gdb -nx -batch -iex 'set debuginfod enabled on' \
    -iex "set substitute-path $tmp/src $tmp/nonexistent" \
    -ex 'info line square' "$dir/hello") >"$dir/out" 2>&1
check "gdb, another tenant: no line for square" \
    bash -c "! grep -Eq '^Line [0-9]+ of \"hello.c\"' '$dir/out' &&
    grep -q 'square' '$dir/out'"
client_env
printf 'Authorization: Bearer %s\n' "$TOK_DEV" >"$tmp/headers"
export DEBUGINFOD_HEADERS_FILE=$tmp/headers
client_file 'debuginfod-find, DEBUGINFOD_HEADERS_FILE (Bearer)' \
    "$F/hello.debug" debuginfod-find debuginfo "$ID"
if command -v llvm-debuginfod-find-19 >/dev/null 2>&1; then
	client_env
	export DEBUGINFOD_HEADERS_FILE=$tmp/headers
	client_file 'llvm-debuginfod-find-19, DEBUGINFOD_HEADERS_FILE (Bearer)' \
	    "$F/hello.debug" llvm-debuginfod-find-19 --debuginfo "$ID"
	client_env
	export DEBUGINFOD_URLS="http://acme:$TOK_DEV@$HOSTPORT/"
	client_file 'llvm-debuginfod-find-19, credentials in the URL' \
	    "$F/hello.debug" llvm-debuginfod-find-19 --debuginfo "$ID"
	client_env
	printf 'Authorization: Bearer %s\n' "$TOK_OTHER" >"$tmp/headers.other"
	export DEBUGINFOD_HEADERS_FILE=$tmp/headers.other
	f=$(timeout 30 llvm-debuginfod-find-19 --debuginfo "$ID" \
	    2>"$tmp/out/err")
	check 'llvm-debuginfod-find-19, another tenant: nothing' test -z "$f"
else
	skip_check 'llvm-debuginfod-find-19 not installed'
fi
client_env
f=$(timeout 30 debuginfod-find debuginfo "$ID2" 2>"$tmp/out/err")
check 'debuginfod-find without a token gets nothing' test -z "$f"
get_as 'curl, Bearer, another tenant: 404' "$P_DBG" 404 "$TOK_OTHER"
unset DEBUGINFOD_HEADERS_FILE

section 'a token revoked while a download streams'
rm -f "$tmp/out/big"
curl -s --max-time 60 --limit-rate 2M -o "$tmp/out/big" \
    -H "Authorization: Bearer $TOK_GONE" "$URL$P2_DBG" &
CURL_PID=$!
PIDS+=("$CURL_PID")
wait_until 20 test -s "$tmp/out/big" ||
    fail 'the download starts' "nothing arrived"
grep -v '^leaver ' "$TOKENS" >"$TOKENS.new" && mv "$TOKENS.new" "$TOKENS"
kill -HUP "$SYMHUBD_PID"
wait_until 20 grep -q 'tokens read again' "$tmp/symhubd.out"
refused 'the next request with the revoked token: 401' "$P_DBG" \
    -H "Authorization: Bearer $TOK_GONE"
wait_exit "$CURL_PID" 60
check_exit 'the download under way finishes' 0 "$exit_status" \
    cmp -s "$tmp/out/big" "$F/big.debug"
get_as 'the other tokens still read' "$P_DBG" 200 "$TOK_DEV" "$F/hello.debug"
echo "garbage line" >>"$TOKENS"
kill -HUP "$SYMHUBD_PID"
wait_until 20 grep -q 'the tokens stay as they were' "$tmp/symhubd.out"
get_as 'a broken tokens file keeps the tokens as they were' "$P_DBG" 200 \
    "$TOK_DEV" "$F/hello.debug"
sed -i '$d' "$TOKENS"

section 'timing: wrong tokens against a right one'
# The right token with its last character changed, one that shares
# nothing with it, and a right token without the read scope (403, an
# answer as short as the 401s): the check hashes first and compares
# every entry, so none may take measurably longer.  Loose here (a
# shared machine); tests/bench/bench_access.sh runs it strictly.
near=${TOK_DEV:0:63}$( [ "${TOK_DEV:63}" = 0 ] && echo 1 || echo 0)
far=$(echo "$TOK_DEV" | tr 0-9a-f a-f0-9)
if out=$(python3 "$top_srcdir/tests/timing.py" "$PORT" "$P_DBG" 300 0.25 \
    "$near" "$far" "$TOK_UPONLY" 2>&1); then
	pass "near-miss, far and right tokens take as long ($out)"
else
	fail 'near-miss, far and right tokens take as long' "$out"
fi
stop_check 'the hub stops'

section '--metrics-auth'
# lib.sh waits for /metrics to say "ready 1": with the token, by a
# .curlrc of this section's start only.
mkdir -p "$tmp/curlhome" &&
    printf 'header = "Authorization: Bearer %s"\n' "$TOK_DEV" \
    >"$tmp/curlhome/.curlrc" || exit 99
CURL_HOME=$tmp/curlhome hub -d "$tmp/store" --tokens "$TOKENS" --metrics-auth
refused '/metrics needs a token' /metrics
refused '/status too' /status
refused 'the home page too' /
get_as '/metrics with a read token' /metrics 200 "$TOK_DEV"
expect_get 'reads stay open without --read-auth' "$P2_DBG" 200 "" -I
check 'what no token was shown for stays Cache-Control: public' \
    grep -qi '^Cache-Control: public' "$tmp/out/hdrs"
stop_check 'the hub stops'

section 'rate limits'
# The buckets refill on the daemon's clock: the test steps it past
# Retry-After instead of sleeping (a build without the test clock sleeps).
[ "${SYMHUB_TEST_CLOCK_BUILT:-}" = yes ] && clock_init
hub -d "$tmp/store" --tokens "$TOKENS" --rate-per-token 1 --rate-burst 3
# Requests until the first 429: at least the burst passes first, and a
# 429 comes however slow the machine (one more a second refills).
n=0
while [ "$n" -lt 30 ]; do
	code=$(http "$P_DBG" "$tmp/out/body" "$tmp/out/hdrs" \
	    -H "Authorization: Bearer $TOK_DEV")
	[ "$code" = 200 ] || break
	n=$((n + 1))
done
expect_status "a token over its burst: 429 (after $n)" 429 "$code" \
    "$tmp/out/body"
check 'the burst passed first' test "$n" -ge 3
ra=$(header "$tmp/out/hdrs" Retry-After)
check "with Retry-After ($ra s)" test "${ra:-0}" -ge 1
P_NONE=/buildid/0123456789abcdef0123456789abcdef01234567/debuginfo
get_as 'another token has its own bucket (404, not 429)' "$P_NONE" 404 \
    "$TOK_OTHER"
get_as 'as has no token (no address limit)' "$P_NONE" 404 -
check 'counted in /metrics' \
    metric_cmp 'symhub_rate_limited_total{by="token"}' -ge 1
# Retry-After is the verdict: that much later, the token reads again.
if [ -n "${SYMHUB_TEST_CLOCK:-}" ]; then
	clock_step "${ra:-1}"
else
	sleep "${ra:-1}"
fi
get_as 'after Retry-After, the token reads again' "$P_DBG" 200 "$TOK_DEV"
stop_check 'the hub stops'

hub -d "$tmp/store" --rate-per-address 1 --rate-burst 2 --rate-addresses 8
n=0
while [ "$n" -lt 30 ]; do
	code=$(http "$P_NONE" "$tmp/out/body" "$tmp/out/hdrs")
	[ "$code" = 404 ] || break
	n=$((n + 1))
done
expect_status "an address over its burst: 429 (after $n)" 429 "$code" \
    "$tmp/out/body"
check 'counted apart from tokens' \
    metric_cmp 'symhub_rate_limited_total{by="address"}' -ge 1
stop_check 'the hub stops'

section 'TLS at nginx (etc/nginx-tls.conf)'
if command -v nginx >/dev/null 2>&1 && command -v openssl >/dev/null 2>&1
then
	hub -d "$tmp/store" --tokens "$TOKENS" --read-auth
	mkdir -p "$tmp/nginx/logs" "$tmp/nginx/tmp" || exit 99
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	    -addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/nginx/key.pem" \
	    -out "$tmp/nginx/cert.pem" >/dev/null 2>&1 || exit 99
	NPORT=$(free_port)
	# The shipped file, with this test's certificate, ports and paths.
	sed -e "s|listen 443 ssl;|listen 127.0.0.1:$NPORT ssl;|" \
	    -e "s|server 127.0.0.1:8002;|server 127.0.0.1:$PORT;|" \
	    -e "s|/etc/ssl/symhub/fullchain.pem|$tmp/nginx/cert.pem|" \
	    -e "s|/etc/ssl/symhub/privkey.pem|$tmp/nginx/key.pem|" \
	    "$top_srcdir/etc/nginx-tls.conf" >"$tmp/nginx/site.conf"
	cat >"$tmp/nginx/nginx.conf" <<-NGINX
	daemon off;
	pid $tmp/nginx/nginx.pid;
	error_log $tmp/nginx/logs/error.log;
	events { worker_connections 64; }
	http {
		access_log $tmp/nginx/logs/access.log;
		client_body_temp_path $tmp/nginx/tmp/body;
		proxy_temp_path $tmp/nginx/tmp/proxy;
		fastcgi_temp_path $tmp/nginx/tmp/fcgi;
		uwsgi_temp_path $tmp/nginx/tmp/uwsgi;
		scgi_temp_path $tmp/nginx/tmp/scgi;
		include $tmp/nginx/site.conf;
	}
	NGINX
	nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" \
	    >"$tmp/nginx/out" 2>&1 &
	PIDS+=("$!")
	TLS=https://127.0.0.1:$NPORT
	wait_until 20 bash -c "curl -s --cacert '$tmp/nginx/cert.pem' \
	    -o /dev/null '$TLS/metrics'" ||
	    fail 'nginx starts' "$(cat "$tmp/nginx/out" \
	    "$tmp/nginx/logs/error.log" 2>/dev/null)"
	code=$(curl -s --cacert "$tmp/nginx/cert.pem" -o "$tmp/out/tls" \
	    -w '%{http_code}' -H "Authorization: Bearer $TOK_DEV" "$TLS$P_DBG")
	check_exit 'through TLS: Bearer reaches the hub' 200 "$code" \
	    cmp -s "$tmp/out/tls" "$F/hello.debug"
	code=$(curl -s --cacert "$tmp/nginx/cert.pem" -o "$tmp/out/tls" \
	    -w '%{http_code}' "https://ci:$TOK_DEV@127.0.0.1:$NPORT$P_DBG")
	check_exit '... and Basic credentials from the URL' 200 "$code" \
	    cmp -s "$tmp/out/tls" "$F/hello.debug"
	code=$(curl -s --cacert "$tmp/nginx/cert.pem" -D "$tmp/out/tlsh" \
	    -o /dev/null -w '%{http_code}' "$TLS$P_DBG")
	check_exit '... no token: 401 and its WWW-Authenticate' 401 "$code" \
	    grep -qi '^WWW-Authenticate: Basic' "$tmp/out/tlsh"
	stop_check 'the hub stops'
else
	skip_check 'nginx or openssl not installed'
fi

section 'tokens never in clear text on a network address'
"$SYMHUBD" -n -d "$tmp/store" --tokens "$TOKENS" --read-auth \
    --listen "0.0.0.0:$(free_port)" >"$tmp/out/n" 2>&1
check_exit '--read-auth on 0.0.0.0 is refused' 2 $? \
    grep -q 'clear text' "$tmp/out/n"
"$SYMHUBD" -n -d "$tmp/store" --tokens "$TOKENS" --read-auth --behind-tls \
    --listen "0.0.0.0:$(free_port)" >"$tmp/out/n" 2>&1
check_exit '... unless --behind-tls' 0 $?
"$SYMHUBD" -n -d "$tmp/store" --read-auth >"$tmp/out/n" 2>&1
check_exit '--read-auth without --tokens is refused' 2 $? \
    grep -q 'tokens file' "$tmp/out/n"

finish
