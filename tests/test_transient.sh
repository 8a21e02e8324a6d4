#!/bin/bash
# Transient failures, answered per client (issue: a miss the upstreams
# could not settle must never be cached as "not found" and never stop a
# client from asking its next server).  The hub's only upstream resets
# every connection; a second server, elfutils' debuginfod, has the file.
# Each chain is tried with the real client:
#   llvm-debuginfod-find-19 -> hub, next server   (503: it asks the next)
#   debuginfod-find -> hub                         (reset: retried, not cached)
#   debuginfod-find -> elfutils debuginfod -> hub  (reset: it answers 503
#                                                   and caches nothing)
#   llvm-debuginfod-find-19 -> elfutils -> hub     (the same)
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_transient.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc curl debuginfod debuginfod-find llvm-debuginfod-find-19 python3
BADUPSTREAM=$top_srcdir/tests/badupstream.py

section 'a hub whose upstream resets, and a good server beside it'
mkdir -p "$tmp/src" "$tmp/good" "$tmp/out"
cp "$FIXTURES/hello.c" "$FIXTURES/greet.c" "$FIXTURES/greet.h" "$tmp/src/"
(cd "$tmp/src" && gcc -g -O0 -o "$tmp/good/prog" hello.c greet.c) || exit 99
ID=$(buildid "$tmp/good/prog")
if ! start_debuginfod good "" "$tmp/good" ||
    ! wait_http 30 "$DURL/buildid/$ID/debuginfo" 200; then
	fail "debuginfod serves prog" "$(tail -n 5 "$tmp/good.log")"
	finish
fi
GOOD=$DURL
start_badupstream reset reset || fail "badupstream.py reset starts"
# No breaker: every request reaches the resetting upstream.
hub -d "$tmp/store" -u "$BURL name=resets" --breaker-failures 0 \
    --log-file "$tmp/hub.log"
HUB=$URL
# The hub logs a request once it has answered it, which may be after the
# client has moved on: wait for the line.
# logged ID: how many access-log lines the hub has for ID.
logged() {
	grep -c "GET /buildid/$1/debuginfo " "$tmp/hub.log"
}
# answered ID N PATTERN: the hub logs more than N lines for ID, and the
# last one matches PATTERN.
answered() {
	wait_until 20 eval "[ \"\$(logged $1)\" -gt $2 ]" &&
	    grep "GET /buildid/$1/debuginfo " "$tmp/hub.log" | tail -n 1 |
	    grep -q "$3"
}

section 'what each request is answered'
code=$(curl -s -o /dev/null -D "$tmp/out/noua.hdr" -w '%{http_code}' \
    -H 'User-Agent:' "$HUB/buildid/$ID/debuginfo")
check "no User-Agent (as LLVM's client): 503" [ "$code" = 503 ]
check "with Retry-After" [ "$(header "$tmp/out/noua.hdr" Retry-After)" = 1 ]
curl -s -o /dev/null "$HUB/buildid/$ID/debuginfo"
st=$?
check "a User-Agent (curl's): a reset (curl exit $st)" [ "$st" = 56 ]
curl -s -o /dev/null -H 'User-Agent:' -H 'X-Forwarded-For: 10.1.2.3' \
    "$HUB/buildid/$ID/debuginfo"
st=$?
check "no User-Agent but through a proxy: a reset (curl exit $st)" \
    [ "$st" = 56 ]

section 'llvm-debuginfod-find-19: hub first, the good server next'
n=$(logged "$ID")
DEBUGINFOD_CACHE_PATH=$tmp/llvm1 DEBUGINFOD_URLS="$HUB $GOOD" \
    timeout 60 llvm-debuginfod-find-19 --debuginfo "$ID" >"$tmp/out/llvm1" \
    2>&1
st=$?
f=$(head -n 1 "$tmp/out/llvm1")
check "it finds the file at the next server (exit $st)" eval \
    "[ $st = 0 ] && cmp -s '$f' '$tmp/good/prog'"
check "the hub answered it 503" answered "$ID" "$n" ' 503 '

section 'debuginfod-find: hub alone, then the upstream recovers'
n=$(logged "$ID")
DEBUGINFOD_CACHE_PATH=$tmp/dfc1 DEBUGINFOD_URLS=$HUB timeout 60 \
    debuginfod-find debuginfo "$ID" >"$tmp/out/df1" 2>&1
st=$?
check "it fails (exit $st)" [ "$st" != 0 ]
check "the hub reset it" answered "$ID" "$n" ' RST '
check "no negative entry in its cache" \
    [ ! -e "$tmp/dfc1/$ID/debuginfo" ]
DEBUGINFOD_CACHE_PATH=$tmp/dfc1 DEBUGINFOD_URLS="$HUB $GOOD" timeout 60 \
    debuginfod-find debuginfo "$ID" >"$tmp/out/df2" 2>&1
st=$?
check "asked again with the good server too, it finds it (exit $st)" \
    eval "[ $st = 0 ] && cmp -s \"\$(tail -n 1 '$tmp/out/df2')\" \
    '$tmp/good/prog'"

section 'through elfutils debuginfod federating to the hub'
EC=$tmp/e-cache
if DEBUGINFOD_CACHE_PATH=$EC DEBUGINFOD_FED=$HUB start_debuginfod fed "" \
    "$tmp/src"; then
	FED=$DURL
	FED_PID=$DPID
	n=$(logged "$ID")
	DEBUGINFOD_CACHE_PATH=$tmp/dfc2 DEBUGINFOD_URLS=$FED timeout 60 \
	    debuginfod-find debuginfo "$ID" >"$tmp/out/df3" 2>&1
	check "debuginfod-find -> elfutils -> hub: the hub reset it" \
	    answered "$ID" "$n" ' RST '
	check "elfutils answered 503" wait_until 20 grep -q \
	    "GET /buildid/$ID/debuginfo 503 " "$tmp/fed.log"
	check "elfutils caches no negative entry" [ ! -e "$EC/$ID/debuginfo" ]
	n=$(logged "$ID")
	DEBUGINFOD_CACHE_PATH=$tmp/llvm2 DEBUGINFOD_URLS="$FED $GOOD" \
	    timeout 60 llvm-debuginfod-find-19 --debuginfo "$ID" \
	    >"$tmp/out/llvm2" 2>&1
	st=$?
	f=$(head -n 1 "$tmp/out/llvm2")
	check "llvm -> elfutils -> hub: the hub reset elfutils' request" \
	    answered "$ID" "$n" ' RST '
	check "elfutils still caches nothing" [ ! -e "$EC/$ID/debuginfo" ]
	check "and LLVM's client finds the file at its next server (exit $st)" \
	    eval "[ $st = 0 ] && cmp -s '$f' '$tmp/good/prog'"
	kill "$FED_PID"
	wait_exit "$FED_PID" 10
else
	fail "elfutils' debuginfod starts, federating to the hub" \
	    "$(tail -n 3 "$tmp/fed.log")"
fi

stop_check "the hub stops cleanly"
finish
