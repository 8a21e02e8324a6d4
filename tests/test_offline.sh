#!/bin/bash
# --offline: a hub that opens no outbound connection.  The suite runs in a
# network namespace with nothing but a loopback (unshare -n), where any
# attempt to reach an upstream fails at once, and strace watches every
# connect(2) the daemon makes.  A hub without --offline, in the same
# place, shows that the watch would see one.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_offline.sh

if [ -z "$SYMHUB_IN_NETNS" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: unshare -n needs root"
		exit 77
	fi
	command -v unshare >/dev/null 2>&1 ||
	    { echo "SKIP: unshare not found"; exit 77; }
	exec env SYMHUB_IN_NETNS=1 unshare -n bash "$0" "$@"
fi

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc objcopy curl strace ip readelf
ip link set lo up || skip "cannot bring the loopback up in a namespace"
# Nothing but the loopback: the upstreams below are unreachable.
FAR1=http://192.0.2.1:8002
FAR2=http://198.51.100.7:8002

section 'fixtures'
mkdir -p "$tmp/src" "$tmp/scan" "$tmp/out"
cp "$FIXTURES/hello.c" "$FIXTURES/greet.c" "$FIXTURES/greet.h" "$tmp/src/"
(cd "$tmp/src" && gcc -g -O1 -o hello hello.c greet.c) || exit 99
objcopy --only-keep-debug "$tmp/src/hello" "$tmp/scan/hello.debug"
ID=$(buildid "$tmp/scan/hello.debug")
NOID=0123456789abcdef0123456789abcdef01234567
check "the fixture has a build-id" [ -n "$ID" ]

# trace PID OUT: strace every thread of PID for connect(2), to OUT;
# returns once each thread is traced.  untrace: detach, which must come
# before the daemon exits (LeakSanitizer does not run under ptrace).
trace() {
	local pid=$1 t
	strace -f -qq -e trace=connect -o "$2" -p "$pid" 2>"$2.err" &
	STRACE_PID=$!
	PIDS+=("$STRACE_PID")
	traced() {
		for t in /proc/"$pid"/task/*; do
			awk '/^TracerPid:/ { exit $2 == 0 }' "$t/status" ||
			    return 1
		done
	}
	wait_until 20 traced
}

untrace() {
	kill -INT "$STRACE_PID" 2>/dev/null
	wait_exit "$STRACE_PID" 10
}

# outbound FILE: the connect(2) calls in FILE to anything but the
# loopback or a local socket.
outbound() {
	grep 'connect(' "$1" | grep -v 'AF_UNIX\|AF_LOCAL\|127\.0\.0\.1\|"::1"'
}

section 'an offline hub'
hub -d "$tmp/store" -F "$tmp/scan" --offline \
    -u "$FAR1 name=far" -u "$FAR2 name=farther"
if trace "$SYMHUBD_PID" "$tmp/strace.offline"; then
	pass "strace watches every thread of the offline hub"
else
	fail "strace watches every thread of the offline hub" \
	    "$(cat "$tmp/strace.offline.err")"
fi
check "/metrics: symhub_offline 1" metric_cmp symhub_offline -eq 1
check "the log says it is offline and ignores its upstreams" \
    grep -q "offline: no upstream is asked (the configured ones are ignored)" \
    "$tmp/symhubd.out"
expect_get "a stored debuginfo is served" "/buildid/$ID/debuginfo" 200 \
    "$tmp/scan/hello.debug"
expect_get "a miss is 404" "/buildid/$NOID/debuginfo" 404
# The access log line is written once the answer is sent: wait for it.
check "... at once, without asking anyone (access log: miss)" \
    wait_until 10 grep -q "GET /buildid/$NOID/debuginfo 404 [0-9]* miss " \
    "$tmp/symhubd.out"
expect_get "a source miss is 404" "/buildid/$NOID/source/x/y.c" 404
expect_get "a section miss is 404" "/buildid/$NOID/section/.debug_info" 404
expect_get "a GSYM with no debuginfo is 404" "/buildid/$NOID/gsym" 404
expect_get "the stored one converts to GSYM" "/buildid/$ID/gsym" 200
client_env
client_file "debuginfod-find gets the stored debuginfo" \
    "$tmp/scan/hello.debug" debuginfod-find debuginfo "$ID"
if f=$(timeout 30 debuginfod-find debuginfo "$NOID" 2>"$tmp/out/err"); then
	fail "debuginfod-find: a miss fails" "it printed $f"
else
	pass "debuginfod-find: a miss fails"
fi
untrace
stop_check "the offline hub stops"
o=$(outbound "$tmp/strace.offline")
if [ -z "$o" ]; then
	pass "no connect(2) left the host ($(grep -c 'connect(' \
	    "$tmp/strace.offline") local ones)"
else
	fail "no connect(2) left the host" "$o"
fi

section 'the same hub online: the watch sees it reach out'
hub -d "$tmp/store2" -F "$tmp/scan" -u "$FAR1 name=far"
trace "$SYMHUBD_PID" "$tmp/strace.online" ||
    fail "strace watches every thread of the online hub"
check "/metrics: symhub_offline 0" metric_cmp symhub_offline -eq 0
code=$(http "/buildid/$NOID/debuginfo" "$tmp/out/body" "$tmp/out/hdrs")
check "a miss is not settled: no answer (a reset), got $code" \
    [ "$code" = 000 ]
untrace
stop_check "the online hub stops"
if outbound "$tmp/strace.online" | grep -q '192\.0\.2\.1'; then
	pass "the online hub's connect(2) to its upstream is seen"
else
	fail "the online hub's connect(2) to its upstream is seen" \
	    "$(head -5 "$tmp/strace.online")"
fi
finish
