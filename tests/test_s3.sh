#!/bin/bash
# The S3 client (src/s3/) against a real S3 server: a one-node OpenStack
# Swift with its S3 API (tests/s3/start-s3.sh), plus the misbehaving
# endpoints of tests/s3proxy.py (one that never answers, proxies that cut
# a request or an answer).  The checks themselves are tests/test_s3.c.
#
# start-s3.sh takes PORT..PORT+4; PORT is SYMHUB_S3_PORT when set, else
# five free ones found now (tests/lib.sh, start_s3).
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_s3.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need_swift
need curl python3

STOP="$top_srcdir/tests/s3/stop-s3.sh $S3DIR"

# proxy NAME MODE ARGS...: tests/s3proxy.py; sets PROXY_PORT.
proxy() {
	local name=$1 pid
	shift
	python3 "$top_srcdir/tests/s3proxy.py" "$@" >"$tmp/$name.out" \
	    2>"$tmp/$name.err" &
	pid=$!
	PIDS+=("$pid")
	wait_until 10 eval "grep -q '^ready ' '$tmp/$name.out' || ! alive $pid"
	PROXY_PORT=$(awk '/^ready / { print $2 }' "$tmp/$name.out")
	[ -n "$PROXY_PORT" ]
}

section 'servers'
if start_s3; then
	pass "Swift with s3api on $S3_ENDPOINT"
else
	fail "Swift with s3api starts" "$(tail -n 20 "$tmp/start-s3.err")"
	finish
fi
S3_PORT=${S3_ENDPOINT##*:}
proxy hang hang || { fail "the hanging endpoint starts"; finish; }
S3_HANG=http://127.0.0.1:$PROXY_PORT
# tests/test_s3.c's CUT_BYTES: 1 MiB.
proxy cutdown cut "$S3_PORT" -1 1048576 ||
    { fail "the proxy cutting answers starts"; finish; }
S3_CUTDOWN=http://127.0.0.1:$PROXY_PORT
proxy cutup cut "$S3_PORT" 1048576 -1 ||
    { fail "the proxy cutting requests starts"; finish; }
S3_CUTUP=http://127.0.0.1:$PROXY_PORT
pass "the misbehaving endpoints listen"

section 'the client (tests/test_s3.c)'
S3_ENDPOINT=$S3_ENDPOINT S3_REGION=$S3_REGION S3_ACCESS_KEY=$S3_ACCESS_KEY \
    S3_SECRET_KEY=$S3_SECRET_KEY S3_BUCKET=$S3_BUCKET S3_HANG=$S3_HANG \
    S3_CUTDOWN=$S3_CUTDOWN S3_CUTUP=$S3_CUTUP S3_STOP=$STOP TMPDIR=$tmp \
    timeout 600 "$top_builddir/tests/test_s3"
st=$?
if [ "$st" -eq 0 ]; then
	pass "test_s3: every check passed"
else
	fail "test_s3: every check passed" "exit status $st; Swift's logs:" \
	    "$(tail -n 5 "$S3DIR"/log/*.log 2>/dev/null)"
fi
finish
