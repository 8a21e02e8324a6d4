#!/bin/bash
# Integration test of the S3 tier (--s3): a real S3 server (OpenStack
# Swift with its S3 API, tests/s3/start-s3.sh), a real elfutils debuginfod
# as the upstream, two hubs on one bucket, curl as the client and for
# looking at the bucket itself.
#
#   - what an upstream sends is written to the bucket, and another hub
#     with no upstream serves it from there, byte for byte;
#   - a GSYM converted by one hub is written to the bucket with its
#     debuginfo's SHA-256, and another hub with that debuginfo reads it
#     there instead of converting;
#   - an upload answers 201 once its bytes are in the bucket, and the
#     other hub serves it at once; a delete through one hub is seen by
#     the other once it reads its event (events/, every second);
#   - two hubs uploading two files of one build-id at once: both 201, or
#     201 and 409 when one came after; the object is a 201's file, whole,
#     and both hubs come to serve it;
#   - the bucket's objects have the debuginfod tree's names, the shape of
#     `symhub export`'s tree;
#   - an object whose bytes are not its x-amz-meta-sha256 is not served;
#   - a staging/ object a crash left behind is deleted after its grace;
#   - faults: the bucket stopped (serving goes on, uploads 503, /metrics
#     says so), started again (uploads 201), a wrong secret (403: the
#     same); a bucket not there at start, one answering 503, one that
#     never answers (tests/badupstream.py): the upstream still serves,
#     uploads are 503; a connection cut mid-upload (503, nothing
#     half-written).
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_bucket.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy strip readelf cmp python3 debuginfod sha256sum
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
need_swift
unset DEBUGINFOD_URLS AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY

section 'the S3 server'
if ! start_s3; then
	fail "Swift starts" "$(tail -5 "$tmp/start-s3.err")"
	finish
fi
pass "Swift with its S3 API answers at $S3_ENDPOINT, bucket $S3_BUCKET"
BUCKET_URL=$S3_ENDPOINT/$S3_BUCKET?region=$S3_REGION
export AWS_ACCESS_KEY_ID=$S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET_KEY
# The access key holds a colon: in a URL's userinfo it is %3A.
S3AUTH=$(printf '%s' "$S3_ACCESS_KEY" | sed 's/:/%3A/g'):$S3_SECRET_KEY
S3HOSTPORT=${S3_ENDPOINT#http://}

# s3 METHOD OBJECT [CURL-ARGS...]: a signed request to the bucket itself;
# prints the status, the body to $tmp/s3.body, headers to $tmp/s3.hdrs.
# PAYLOAD: the body's SHA-256 (a PUT must say it), else UNSIGNED-PAYLOAD.
s3() {
	local m=$1 obj=$2 how
	shift 2
	# -X HEAD would wait for a body: -I asks for the head alone.
	if [ "$m" = HEAD ]; then how=-I; else how="-X$m"; fi
	curl -s -o "$tmp/s3.body" -D "$tmp/s3.hdrs" -w '%{http_code}' \
	    --max-time 20 "$how" --aws-sigv4 "aws:amz:$S3_REGION:s3" \
	    -H "x-amz-content-sha256: ${PAYLOAD:-UNSIGNED-PAYLOAD}" "$@" \
	    "http://$S3AUTH@$S3HOSTPORT/$S3_BUCKET/$obj"
}
# s3_has OBJECT: the object is there.
s3_has() { [ "$(s3 HEAD "$1")" = 200 ]; }
s3_gone() { [ "$(s3 HEAD "$1")" = 404 ]; }

section 'fixtures'
mkdir -p "$tmp"/{src,up,orig,out,bin} || exit 99
cp "$FIXTURES"/hello.c "$FIXTURES"/greet.c "$FIXTURES"/greet.h "$tmp/src/" ||
    exit 99
(cd "$tmp/src" && gcc -g -O0 -o "$tmp/bin/prog1" hello.c greet.c &&
    gcc -g -O1 -o "$tmp/bin/prog2" hello.c greet.c &&
    gcc -g -O2 -o "$tmp/bin/prog3" hello.c greet.c &&
    gcc -g -Os -o "$tmp/bin/prog4" hello.c greet.c &&
    gcc -g -O2 -fno-omit-frame-pointer -o "$tmp/bin/prog5" hello.c greet.c) ||
    exit 99
for p in prog1 prog2 prog3 prog4 prog5; do
	objcopy --only-keep-debug "$tmp/bin/$p" "$tmp/orig/$p.debug" || exit 99
	strip -g -o "$tmp/orig/$p.stripped" "$tmp/bin/$p" || exit 99
done
cp "$tmp/orig/prog1.debug" "$tmp/orig/prog1.stripped" "$tmp/up/" || exit 99
ID1=$(buildid "$tmp/bin/prog1")
ID2=$(buildid "$tmp/bin/prog2")
ID3=$(buildid "$tmp/bin/prog3")
ID4=$(buildid "$tmp/bin/prog4")
ID5=$(buildid "$tmp/bin/prog5")
[ -n "$ID1" ] && [ -n "$ID2" ] && [ "$ID1" != "$ID2" ] &&
    [ -n "$ID5" ] && [ "$ID5" != "$ID3" ] && [ "$ID5" != "$ID4" ] || exit 99
TOKENS=$tmp/tokens
TOK=$(new_token ci upload,admin "$TOKENS") || exit 99
pass "five programs, prog1 upstream only, a token"

start_debuginfod up "" "$tmp/up" || { fail "debuginfod starts"; finish; }
UPURL=$DURL
UPPID=$DPID
wait_until 60 eval '[ "$(http_code "$UPURL/buildid/$ID1/debuginfo")" = 200 ]' ||
    { fail "debuginfod indexes prog1"; finish; }
pass "elfutils' debuginfod serves prog1"

# hub NAME ARGS...: a hub; sets NAME_URL and NAME_PID.
hub_named() {
	local n=$1
	shift
	start_symhubd "$@" || return 1
	eval "${n}_URL=\$URL ${n}_PID=\$SYMHUBD_PID"
}
# Negative TTL 2 s: a miss is asked again soon (events/ are read every
# second whatever the TTL).
COMMON=(--s3 "$BUCKET_URL" --tokens "$TOKENS" --negative-ttl 2 -t 0)

section 'write-back, and a hub with only the bucket'
hub_named A -d "$tmp/storeA" "${COMMON[@]}" -u "$UPURL" ||
    { fail "hub A starts"; finish; }
hub_named B -d "$tmp/storeB" "${COMMON[@]}" --negative-ttl 2,600 ||
    { fail "hub B starts"; finish; }
pass "hub A (upstream: debuginfod) and hub B (no upstream) on one bucket"
URL=$A_URL
expect_get "A serves prog1's debuginfo from the upstream" \
    "/buildid/$ID1/debuginfo" 200 "$tmp/orig/prog1.debug"
expect_get "and its executable" "/buildid/$ID1/executable" 200 \
    "$tmp/orig/prog1.stripped"
if wait_until 30 s3_has "buildid/$ID1/debuginfo" &&
    wait_until 30 s3_has "buildid/$ID1/executable"; then
	pass "both are written to the bucket in the background"
else
	fail "both are written to the bucket in the background" \
	    "$(metrics_text "$A_URL" | grep bucket)"
fi
s3 GET "buildid/$ID1/debuginfo" >/dev/null
check "the object is the file, byte for byte" cmp -s "$tmp/s3.body" \
    "$tmp/orig/prog1.debug"
sum=$(sha256sum "$tmp/orig/prog1.debug" | cut -c1-64)
check "its x-amz-meta-sha256 is the file's SHA-256" \
    grep -qi "^x-amz-meta-sha256: $sum" "$tmp/s3.hdrs"
URL=$B_URL
expect_get "B, with no upstream, serves it from the bucket" \
    "/buildid/$ID1/debuginfo" 200 "$tmp/orig/prog1.debug"
# Counted once stored, just after the answer.
check "and says so in its metrics" wait_metric \
    'symhub_upstream_requests_total{upstream="bucket",outcome="hit"}' -ge 1
check "and logs the hit under the bucket's name, not the origin's" \
    grep -q "GET /buildid/$ID1/debuginfo 200 [0-9]* upstream bucket " \
    "$tmp/symhubd.out"
expect_get "B: a build-id nobody has is 404" "/buildid/$ID5/debuginfo" 404

section 'GSYM converted once for every replica'
URL=$A_URL
code=$(http "/buildid/$ID1/gsym" "$tmp/out/gsymA" "$tmp/out/gsymAh" \
    --max-time 60)
check "A converts prog1's debuginfo to GSYM (got $code)" [ "$code" = 200 ]
check "and writes it to the bucket, with the debuginfo's SHA-256" \
    eval 'wait_until 30 s3_has "buildid/$ID1/gsym" &&
    s3 HEAD "buildid/$ID1/gsym" >/dev/null &&
    grep -qi "^x-amz-meta-parent-sha256: $sum" "$tmp/s3.hdrs"'
URL=$B_URL
code=$(http "/buildid/$ID1/gsym" "$tmp/out/gsymB" "$tmp/out/gsymBh" \
    --max-time 60)
check "B serves the same GSYM (got $code)" \
    eval '[ "$code" = 200 ] && cmp -s "$tmp/out/gsymA" "$tmp/out/gsymB"'
check "read from the bucket, not converted" \
    metric_cmp symhub_gsym_from_bucket_total -ge 1

section 'uploads and deletes across hubs'
URL=$A_URL
code=$(put_file "/buildid/$ID2/debuginfo" "$tmp/orig/prog2.debug" \
    "$tmp/out/put" "$tmp/out/puth" -H "Authorization: Bearer $TOK")
check "an upload through A is 201 (got $code)" [ "$code" = 201 ]
check "and is in the bucket when A answers" s3_has "buildid/$ID2/debuginfo"
URL=$B_URL
expect_get "B serves the upload at once" "/buildid/$ID2/debuginfo" 200 \
    "$tmp/orig/prog2.debug"
# B has a copy now; a delete through A must reach it.
URL=$A_URL
code=$(http "/buildid/$ID2/debuginfo" "$tmp/out/del" "$tmp/out/delh" \
    -X DELETE -H "Authorization: Bearer $TOK")
check "a delete through A is 200 (got $code)" [ "$code" = 200 ]
check "the object is gone from the bucket" s3_gone "buildid/$ID2/debuginfo"
URL=$B_URL
if wait_until 20 eval '[ "$(http_code "$B_URL/buildid/$ID2/debuginfo")" = 404 ]'
then
	pass "B drops its copy once it reads the event"
else
	fail "B drops its copy once it reads the event" \
	    "$(grep bucket "$tmp/symhubd.out" | tail -5)"
fi
check "B counted the event" metric_cmp symhub_bucket_events_applied_total \
    -ge 1
# A miss remembered by B does not hide an upload through A.
# Twice: B's second miss in a row is remembered for 600 s
# (--negative-ttl 2,600), far past this test's patience; only the
# upload's event makes B ask again.
expect_get "B: prog3 is a miss" "/buildid/$ID3/debuginfo" 404
misses() {
	http_code "$B_URL/buildid/$ID3/debuginfo" >/dev/null
	metric_cmp 'symhub_upstream_requests_total{upstream="bucket",outcome="notfound"}' \
	    -ge "$1" "$B_URL"
}
nf=$(metric 'symhub_upstream_requests_total{upstream="bucket",outcome="notfound"}' "$B_URL")
check "and a second miss, remembered for 600 s" wait_until 20 misses $((nf + 1))
URL=$A_URL
code=$(put_file "/buildid/$ID3/debuginfo" "$tmp/orig/prog3.debug" \
    "$tmp/out/put" "$tmp/out/puth" -H "Authorization: Bearer $TOK")
check "prog3 uploaded through A (got $code)" [ "$code" = 201 ]
URL=$B_URL
if wait_until 20 eval '[ "$(http_code "$B_URL/buildid/$ID3/debuginfo")" = 200 ]'
then
	pass "and B serves it once it reads the event"
else
	fail "and B serves it once it reads the event"
fi

section 'a private upload stays out of the bucket'
URL=$A_URL
code=$(put_file "/buildid/$ID2/debuginfo" "$tmp/orig/prog2.debug" \
    "$tmp/out/put" "$tmp/out/puth" -H "Authorization: Bearer $TOK" \
    -H 'X-Symhub-Private: 1')
check "a private upload through A is 201 (got $code)" [ "$code" = 201 ]
check "and is not in the bucket" s3_gone "buildid/$ID2/debuginfo"
expect_get "A serves it to its tenant" "/buildid/$ID2/debuginfo" 200 \
    "$tmp/orig/prog2.debug" -H "Authorization: Bearer $TOK"
expect_get "and to nobody else" "/buildid/$ID2/debuginfo" 404
URL=$B_URL
expect_get "B, which reads the bucket, has none of it" \
    "/buildid/$ID2/debuginfo" 404 "" -H "Authorization: Bearer $TOK"
URL=$A_URL
code=$(http "/buildid/$ID2/debuginfo" "$tmp/out/del" "$tmp/out/delh" \
    -X DELETE -H "Authorization: Bearer $TOK")
check "deleted again (got $code)" [ "$code" = 200 ]

section 'two hubs racing on one build-id'
# prog2's debuginfo, and the same with one more section: two files of one
# build-id, uploaded at once through A and B.
objcopy --add-section .note.race="$tmp/orig/prog1.stripped" \
    "$tmp/orig/prog2.debug" "$tmp/orig/prog2b.debug" || exit 99
URL=$A_URL
put_file "/buildid/$ID2/debuginfo" "$tmp/orig/prog2.debug" "$tmp/out/ra" \
    "$tmp/out/rah" -H "Authorization: Bearer $TOK" >"$tmp/out/ra.code" &
ra=$!
URL=$B_URL
put_file "/buildid/$ID2/debuginfo" "$tmp/orig/prog2b.debug" "$tmp/out/rb" \
    "$tmp/out/rbh" -H "Authorization: Bearer $TOK" >"$tmp/out/rb.code"
wait "$ra"
# Uploads that finish together are both answered 201; one that finishes
# after the other is stored is ranked against it: as good, so 409
# (symhubd(8), "Concurrent uploads and crashes").  Which happens is the
# machine's timing; the bucket must hold a 201's file either way.
codes="$(cat "$tmp/out/ra.code") $(cat "$tmp/out/rb.code")"
case $codes in
"201 201") may="$tmp/orig/prog2.debug $tmp/orig/prog2b.debug" ;;
"201 409") may=$tmp/orig/prog2.debug ;;
"409 201") may=$tmp/orig/prog2b.debug ;;
*) may= ;;
esac
check "the uploads are answered 201, or 201 and 409 when one came after ($codes)" \
    [ -n "$may" ]
s3 GET "buildid/$ID2/debuginfo" >/dev/null
cp "$tmp/s3.body" "$tmp/out/won"
won=$(sha256sum "$tmp/out/won" | cut -c1-64)
# won_is_201: the object is the file of an upload answered 201.
won_is_201() {
	local f
	for f in $may; do
		cmp -s "$tmp/out/won" "$f" && return 0
	done
	return 1
}
check "the object is one answered 201, whole, and its x-amz-meta-sha256 says so" \
    eval 'won_is_201 && grep -qi "^x-amz-meta-sha256: $won" "$tmp/s3.hdrs"'
# serves_won URL: the hub serves what the bucket holds.
serves_won() {
	curl -s --max-time 10 -o "$tmp/out/sw" "$1/buildid/$ID2/debuginfo" &&
	    cmp -s "$tmp/out/sw" "$tmp/out/won"
}
if wait_until 30 serves_won "$A_URL" && wait_until 30 serves_won "$B_URL"
then
	pass "within the negative TTL both hubs serve the bucket's copy"
else
	fail "within the negative TTL both hubs serve the bucket's copy"
fi

section 'the bucket is the debuginfod tree'
names=$(curl -s --aws-sigv4 "aws:amz:$S3_REGION:s3" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
    "http://$S3AUTH@$S3HOSTPORT/$S3_BUCKET?list-type=2&prefix=buildid%2F" |
    grep -o '<Key>[^<]*</Key>' | sed 's/<Key>//; s/<\/Key>//' | sort)
want=$(printf '%s\n' "buildid/$ID1/debuginfo" "buildid/$ID1/executable" \
    "buildid/$ID1/gsym" "buildid/$ID2/debuginfo" "buildid/$ID3/debuginfo" |
    sort)
check "its objects are buildid/ID/KIND" [ "$names" = "$want" ]
staged=$(curl -s --aws-sigv4 "aws:amz:$S3_REGION:s3" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
    "http://$S3AUTH@$S3HOSTPORT/$S3_BUCKET?list-type=2&prefix=staging%2F" |
    grep -c '<Key>')
check "writes went through staging/SHA256 and a copy (Swift: no conditional writes)" \
    grep -q "PUT /$S3_BUCKET/staging/" "$S3DIR/log/proxy.log"
check "and no staging object is left behind ($staged)" [ "$staged" = 0 ]

section 'a source bundle is in the bucket, and the other hub serves it'
# prog3's sources (symhub upload --sources), uploaded through A: the
# bundle is durable in the bucket before the 201, and its sources are
# written behind under their own names, which B serves.
python3 - "$tmp/out/src.tgz" "$tmp/src/hello.c" "$tmp/src/greet.h" <<'EOF'
import sys, tarfile
with tarfile.open(sys.argv[1], "w:gz") as t:
    for f in sys.argv[2:]:
        t.add(f, arcname=f.lstrip("/"))
EOF
URL=$A_URL
code=$(put_file "/buildid/$ID3/sources" "$tmp/out/src.tgz" "$tmp/out/put" \
    "$tmp/out/puth" -H "Authorization: Bearer $TOK")
check "the bundle is stored through A (got $code)" [ "$code" = 201 ]
check "and is in the bucket" s3_has "buildid/$ID3/sources"
b_serves() {
	curl -s --max-time 10 -o "$tmp/out/bs" \
	    "$B_URL/buildid/$ID3/source$tmp/src/$1" && cmp -s "$tmp/out/bs" \
	    "$tmp/src/$1"
}
check "B serves its sources from the bucket" wait_until 30 eval \
    'b_serves hello.c && b_serves greet.h'

section 'staging/ leftovers are collected'
# What a writer that crashed between its put to staging/ and the copy
# leaves: collected by the next hub's poller once older than
# --s3-staging-keep (1 s here; a day by default).
sum5=$(sha256sum "$tmp/orig/prog5.debug" | cut -c1-64)
code=$(PAYLOAD=$sum5 s3 PUT "staging/$sum5" \
    --data-binary "@$tmp/orig/prog5.debug")
check "a staging object is left as by a crash ($code)" [ "$code" = 200 ]
t0=$(date +%s)
# Last-Modified counts whole seconds: let it be 2 s old.
wait_until 10 eval '[ "$(date +%s)" -ge $((t0 + 3)) ]'
hub_named E -d "$tmp/storeE" "${COMMON[@]}" --s3-staging-keep 1 ||
    { fail "hub E starts"; finish; }
check "a hub deletes it once past its grace time" \
    wait_until 30 s3_gone "staging/$sum5"
URL=$E_URL
check "and counts it" wait_metric symhub_bucket_staging_deleted_total -ge 1
stop_symhubd "$E_PID"

section 'objects that lie'
# Another file's bytes under prog4's name, with prog4's SHA-256.
sum4=$(sha256sum "$tmp/orig/prog4.debug" | cut -c1-64)
sum1=$(sha256sum "$tmp/orig/prog1.debug" | cut -c1-64)
code=$(PAYLOAD=$sum1 s3 PUT "buildid/$ID4/debuginfo" \
    -H "x-amz-meta-sha256: $sum4" --data-binary "@$tmp/orig/prog1.debug")
check "an object with prog1's bytes is put under prog4's name ($code)" \
    [ "$code" = 200 ]
URL=$B_URL
# No User-Agent: a 503, where curl's would get a reset (reply.c).
expect_get "B does not serve it (another build-id): 503" \
    "/buildid/$ID4/debuginfo" 503 "" -H 'User-Agent:'
check "and logs why" grep -q "sent a file with another build-id for debuginfo $ID4" "$tmp/symhubd.out"
# prog4's build-id, other bytes (one more section), prog4's SHA-256.
objcopy --add-section .note.lie="$tmp/orig/prog1.stripped" \
    "$tmp/orig/prog4.debug" "$tmp/orig/prog4b.debug" || exit 99
sum4b=$(sha256sum "$tmp/orig/prog4b.debug" | cut -c1-64)
code=$(PAYLOAD=$sum4b s3 PUT "buildid/$ID4/debuginfo" \
    -H "x-amz-meta-sha256: $sum4" --data-binary "@$tmp/orig/prog4b.debug")
check "an object of prog4's build-id whose bytes are not its SHA-256 ($code)" \
    [ "$code" = 200 ]
expect_get "B does not serve it either: 503" "/buildid/$ID4/debuginfo" 503 \
    "" -H 'User-Agent:'
check "and logs why" grep -q "debuginfo $ID4 does not hash to its x-amz-meta-sha256" \
    "$tmp/symhubd.out"
s3 DELETE "buildid/$ID4/debuginfo" >/dev/null

section 'the bucket stopped'
stop_s3
URL=$A_URL
expect_get "A still serves what it holds" "/buildid/$ID1/debuginfo" 200 \
    "$tmp/orig/prog1.debug"
code=$(put_file "/buildid/$ID4/debuginfo" "$tmp/orig/prog4.debug" \
    "$tmp/out/put" "$tmp/out/puth" -H "Authorization: Bearer $TOK")
check "an upload is 503, not 201 (got $code)" [ "$code" = 503 ]
check "and the answer says why" grep -q "bucket" "$tmp/out/put"
expect_get "and it is not kept (503: the bucket cannot say)" \
    "/buildid/$ID4/debuginfo" 503 "" -H 'User-Agent:'
check "/metrics: symhub_bucket_up 0" metric_cmp symhub_bucket_up -eq 0
section 'the bucket started again'
start_s3 || { fail "Swift starts again"; finish; }
code=$(put_file "/buildid/$ID4/debuginfo" "$tmp/orig/prog4.debug" \
    "$tmp/out/put" "$tmp/out/puth" -H "Authorization: Bearer $TOK")
check "an upload is 201 again (got $code)" [ "$code" = 201 ]
check "/metrics: symhub_bucket_up 1" wait_metric symhub_bucket_up -eq 1
check "it is in the bucket" s3_has "buildid/$ID4/debuginfo"

section 'a wrong secret'
AWS_SECRET_ACCESS_KEY=wrong start_symhubd -d "$tmp/storeC" \
    --s3 "$BUCKET_URL" --tokens "$TOKENS" -t 0 ||
    { fail "a hub with a wrong secret starts"; finish; }
C_PID=$SYMHUBD_PID
check "it starts, and logs that the bucket refused it" \
    wait_until 20 grep -q "bucket.*not reachable now" "$tmp/symhubd.out"
code=$(put_file "/buildid/$ID5/debuginfo" "$tmp/orig/prog5.debug" \
    "$tmp/out/put" "$tmp/out/puth" -H "Authorization: Bearer $TOK")
check "its uploads are 503 (got $code)" [ "$code" = 503 ]
check "/metrics: symhub_bucket_up 0" metric_cmp symhub_bucket_up -eq 0
check "nothing of it reached the bucket" s3_gone "buildid/$ID5/debuginfo"
stop_symhubd "$C_PID"

section 'a bucket down at start, answering 503, or hanging'
# bad_bucket DESC URL: a hub on a bad bucket, with debuginfod as
# its upstream still serves prog1 from it, and answers an upload 503.
bad_bucket() {
	local d=$1
	shift
	start_symhubd -d "$tmp/store-$RANDOM" --s3 "$1" --tokens "$TOKENS" \
	    -t 0 -u "$UPURL" || { fail "$d: the hub starts"; return; }
	pass "$d: the hub starts"
	expect_get "$d: it serves from the upstream" \
	    "/buildid/$ID1/executable" 200 "$tmp/orig/prog1.stripped" \
	    --max-time 60
	code=$(put_file "/buildid/$ID5/debuginfo" "$tmp/orig/prog5.debug" \
	    "$tmp/out/put" "$tmp/out/puth" -H "Authorization: Bearer $TOK" \
	    --max-time 90)
	check "$d: an upload is 503 (got $code)" [ "$code" = 503 ]
	check "$d: /metrics: symhub_bucket_up 0" metric_cmp symhub_bucket_up \
	    -eq 0
	stop_symhubd "$SYMHUBD_PID"
}
bad_bucket "nothing listening" "http://127.0.0.1:$(free_port)/$S3_BUCKET"
start_badupstream b503 status 503 || { fail "a 503 server starts"; finish; }
bad_bucket "503 to everything" "$BURL/$S3_BUCKET"
start_badupstream bhang hang || { fail "a hanging server starts"; finish; }
bad_bucket "never answering" "$BURL/$S3_BUCKET"
check "nothing reached the real bucket" s3_gone "buildid/$ID5/debuginfo"

section 'a connection cut mid-upload'
# A proxy that relays each connection, but cuts it once 4 KiB of the
# request have passed (tests/s3proxy.py, also test_s3.sh's).
python3 "$top_srcdir/tests/s3proxy.py" cut "${S3HOSTPORT##*:}" 4096 -1 \
    >"$tmp/proxy.out" 2>"$tmp/proxy.err" &
PXPID=$!
PIDS+=("$PXPID")
wait_until 10 eval "grep -q '^ready ' '$tmp/proxy.out' || ! alive $PXPID"
PPORT=$(awk '/^ready / { print $2 }' "$tmp/proxy.out")
[ -n "$PPORT" ] || { fail "the cutting proxy starts"; finish; }
start_symhubd -d "$tmp/storeD" --s3 "http://127.0.0.1:$PPORT/$S3_BUCKET" \
    --tokens "$TOKENS" -t 0 || { fail "a hub behind the proxy starts"; finish; }
D_PID=$SYMHUBD_PID
code=$(put_file "/buildid/$ID5/debuginfo" "$tmp/orig/prog5.debug" \
    "$tmp/out/put" "$tmp/out/puth" -H "Authorization: Bearer $TOK")
check "an upload cut on its way to the bucket is 503 (got $code)" \
    [ "$code" = 503 ]
check "and nothing of it is in the bucket" s3_gone "buildid/$ID5/debuginfo"
stop_symhubd "$D_PID"

section 'clean stops'
for p in "$A_PID" "$B_PID"; do
	stop_symhubd "$p"
	check "hub $p stops (exit $exit_status)" [ "$exit_status" = 0 ]
done
finish
