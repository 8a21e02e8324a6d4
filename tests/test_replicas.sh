#!/bin/bash
# Integration test of replicas: three symhubd on one bucket (a real S3
# server, tests/s3/start-s3.sh) behind a real nginx (Debian's), as an
# operator runs them (man symhubd, "Scaling").
#
#   - a file uploaded through the load balancer is served by every
#     replica, asked directly;
#   - an upload by `symhub upload` through the balancer, after every
#     replica answered 404 for it (HEAD and GET), is served by all of
#     them; so is a forced replacement, and a delete is answered 404 by
#     all.  The replicas remember a miss for 600 s (--negative-ttl), far
#     past this test's patience (20 s): only the upload's event (events/
#     in the bucket, read every second) can make them serve it;
#   - a replica whose upstream is still being asked when the event comes
#     (the bucket having answered 404 before the upload) does not keep
#     that miss: a gate upstream holds its 404 until the event is read;
#   - a replica killed (SIGKILL) under load costs no more requests than
#     were in flight: 8 clients keep asking through nginx, the kill comes
#     after 200 answers, and the clients go on to 400 more.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_replicas.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy python3 nginx
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
need_swift
unset DEBUGINFOD_URLS AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY

section 'a bucket, three replicas, nginx'
start_s3 || { fail "Swift starts" "$(tail -5 "$tmp/start-s3.err")"; finish; }
export AWS_ACCESS_KEY_ID=$S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET_KEY
pass "Swift answers at $S3_ENDPOINT"

mkdir -p "$tmp"/{src,bin,out} || exit 99
cp "$FIXTURES"/hello.c "$FIXTURES"/greet.c "$FIXTURES"/greet.h "$tmp/src/" ||
    exit 99
(cd "$tmp/src" && gcc -g -O1 -o "$tmp/bin/prog" hello.c greet.c) || exit 99
objcopy --only-keep-debug "$tmp/bin/prog" "$tmp/bin/prog.debug" || exit 99
ID=$(buildid "$tmp/bin/prog")
# prog2, and a file of its build-id with other bytes (one more section)
# for a forced replacement.
(cd "$tmp/src" && gcc -g -O2 -o "$tmp/bin/prog2" hello.c greet.c) || exit 99
objcopy --only-keep-debug "$tmp/bin/prog2" "$tmp/bin/prog2.debug" || exit 99
objcopy --add-section .note.other="$tmp/bin/prog" "$tmp/bin/prog2.debug" \
    "$tmp/bin/prog2b.debug" || exit 99
ID2=$(buildid "$tmp/bin/prog2")
[ -n "$ID2" ] && [ "$ID2" != "$ID" ] || exit 99
(cd "$tmp/src" && gcc -g -Os -o "$tmp/bin/prog3" hello.c greet.c) || exit 99
objcopy --only-keep-debug "$tmp/bin/prog3" "$tmp/bin/prog3.debug" || exit 99
ID3=$(buildid "$tmp/bin/prog3")
[ -n "$ID3" ] && [ "$ID3" != "$ID" ] && [ "$ID3" != "$ID2" ] || exit 99
TOKENS=$tmp/tokens
TOK=$(new_token ci upload,admin "$TOKENS") || exit 99

declare -a RURL RPID
for i in 1 2 3; do
	start_symhubd -d "$tmp/store$i" --s3 "$S3_ENDPOINT/$S3_BUCKET" \
	    --tokens "$TOKENS" --negative-ttl 600 -t 0 ||
	    { fail "replica $i starts"; finish; }
	RURL[$i]=$URL
	RPID[$i]=$SYMHUBD_PID
done
pass "three replicas on one bucket"

# nginx in the foreground (its master is our child, stopped by PID),
# its files under $tmp; a request that failed on a replica (no
# connection, timeout, 502, 503) is passed to the next one.
NPORT=$(free_port)
mkdir -p "$tmp/nginx/logs" || exit 99
cat >"$tmp/nginx/nginx.conf" <<EOF
daemon off;
$( [ "$(id -u)" = 0 ] && echo "user root;" )
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log;
events { worker_connections 512; }
http {
	access_log $tmp/nginx/access.log;
	client_body_temp_path $tmp/nginx/body;
	proxy_temp_path $tmp/nginx/proxy;
	fastcgi_temp_path $tmp/nginx/fastcgi;
	uwsgi_temp_path $tmp/nginx/uwsgi;
	scgi_temp_path $tmp/nginx/scgi;
	upstream hubs {
		server ${RURL[1]#http://} max_fails=1 fail_timeout=30s;
		server ${RURL[2]#http://} max_fails=1 fail_timeout=30s;
		server ${RURL[3]#http://} max_fails=1 fail_timeout=30s;
		keepalive 16;
	}
	server {
		listen 127.0.0.1:$NPORT;
		client_max_body_size 0;
		location / {
			proxy_pass http://hubs;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_next_upstream error timeout http_502 http_503;
		}
	}
}
EOF
nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" >"$tmp/nginx/out" 2>&1 &
NGPID=$!
PIDS+=("$NGPID")
LB=http://127.0.0.1:$NPORT
if wait_until 20 eval '[ "$(http_code "$LB/metrics")" = 200 ]'; then
	pass "nginx balances the three"
else
	fail "nginx balances the three" "$(cat "$tmp/nginx/out" "$tmp/nginx/error.log")"
	finish
fi

section 'an upload through the balancer'
URL=$LB
code=$(put_file "/buildid/$ID/debuginfo" "$tmp/bin/prog.debug" \
    "$tmp/out/put" "$tmp/out/puth" -H "Authorization: Bearer $TOK")
check "PUT through nginx: 201 (got $code)" [ "$code" = 201 ]
for i in 1 2 3; do
	URL=${RURL[$i]}
	expect_get "replica $i serves it" "/buildid/$ID/debuginfo" 200 \
	    "$tmp/bin/prog.debug"
done

section 'a miss on every replica, then symhub upload through the balancer'
# serves URL FILE: a GET of prog2's debuginfo from URL answers FILE.
serves() {
	curl -s --max-time 10 -o "$tmp/out/sv" -w '%{http_code}' \
	    "$1/buildid/$ID2/debuginfo" >"$tmp/out/sv.code" &&
	    [ "$(cat "$tmp/out/sv.code")" = 200 ] && cmp -s "$tmp/out/sv" "$2"
}
# gone URL: a GET of prog2's debuginfo from URL answers 404.
gone() {
	[ "$(http_code "$1/buildid/$ID2/debuginfo")" = 404 ]
}
# within_s SECONDS COMMAND...: poll the command until it succeeds, for
# at most SECONDS of the clock (wait_until counts tries, and a try here
# is a request).
within_s() {
	local end=$((${EPOCHREALTIME/./} + $1 * 1000000))
	shift
	until "$@"; do
		[ "${EPOCHREALTIME/./}" -lt "$end" ] || return 1
		sleep 0.05
	done
}
# all_replicas DESC PREDICATE ARGS...: every replica comes to satisfy
# PREDICATE URL ARGS within 20 s (the time each took is only printed).
all_replicas() {
	local d=$1 i t0 t1
	shift
	for i in 1 2 3; do
		t0=${EPOCHREALTIME/./}
		if within_s 20 "$1" "${RURL[$i]}" "${@:2}"; then
			t1=${EPOCHREALTIME/./}
			pass "replica $i: $d (after $(((t1 - t0) / 1000)) ms)"
		else
			fail "replica $i: $d" "$(grep bucket "$tmp/symhubd.out" |
			    tail -5)"
		fi
	done
}
for i in 1 2 3; do
	code=$(curl -s -I --max-time 10 -o /dev/null -w '%{http_code}' \
	    "${RURL[$i]}/buildid/$ID2/debuginfo")
	check "replica $i: HEAD of prog2's debuginfo is 404 (got $code)" \
	    [ "$code" = 404 ]
	check "replica $i: and a GET too, remembered for 600 s" gone \
	    "${RURL[$i]}"
done
timeout 30 "$SYMHUB" upload --url "$LB" --token "$TOK" \
    "$tmp/bin/prog2.debug" >"$tmp/out/up.out" 2>&1
check "symhub upload through nginx stores it (exit $?)" \
    grep -q "^stored *debuginfo *$ID2" "$tmp/out/up.out"
all_replicas "serves the upload" serves "$tmp/bin/prog2.debug"

section 'a forced replacement through the balancer'
timeout 30 "$SYMHUB" upload --url "$LB" --token "$TOK" --force \
    "$tmp/bin/prog2b.debug" >"$tmp/out/up.out" 2>&1
# "replaced" where the replica that took it held the old copy.
check "symhub upload --force sends it (exit $?)" \
    grep -Eq "^(replaced|stored) *debuginfo *$ID2" "$tmp/out/up.out"
all_replicas "serves the new bytes, not its copy of the old" serves \
    "$tmp/bin/prog2b.debug"

section 'a delete through the balancer'
code=$(curl -s --max-time 20 -o "$tmp/out/del" -w '%{http_code}' -X DELETE \
    -H "Authorization: Bearer $TOK" "$LB/buildid/$ID2/debuginfo")
check "DELETE through nginx: 200 (got $code)" [ "$code" = 200 ]
all_replicas "answers 404, not its copy" gone

section 'an upload while a replica is still asking its upstream'
# Replica 4 asks the bucket (404: nothing yet), then its upstream, which
# holds the 404 until $tmp/gate/open exists; meanwhile prog3 is uploaded
# through replica 1 and replica 4 reads the event.  The miss it then
# stores predates the upload: it must not be kept for its 600 s.
mkdir -p "$tmp/gate" || exit 99
start_badupstream gate gate "$tmp/gate" ||
    { fail "the gate upstream starts" "$(cat "$tmp/gate.err")"; finish; }
start_symhubd -d "$tmp/store4" --s3 "$S3_ENDPOINT/$S3_BUCKET" \
    --tokens "$TOKENS" --negative-ttl 600 -t 0 -u "$BURL" \
    --upstream-first-byte-timeout 120 ||
    { fail "replica 4 starts"; finish; }
R4=$URL
R4PID=$SYMHUBD_PID
# nevents: how many events the bucket holds (all of replicas 1 to 3).
S3AUTH=$(printf '%s' "$S3_ACCESS_KEY" | sed 's/:/%3A/g'):$S3_SECRET_KEY
nevents() {
	curl -s --max-time 10 --aws-sigv4 "aws:amz:$S3_REGION:s3" \
	    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
	    "http://$S3AUTH@${S3_ENDPOINT#http://}/$S3_BUCKET?list-type=2&prefix=events%2F" |
	    grep -o '<Key>' | wc -l
}
applied=symhub_bucket_events_applied_total
n0=$(nevents)
check "replica 4 has read the $n0 events so far" \
    within_s 20 metric_cmp "$applied" -eq "$n0" "$R4"
curl -s --max-time 120 -o /dev/null -w '%{http_code}' \
    "$R4/buildid/$ID3/debuginfo" >"$tmp/out/held.code" &
held=$!
check "replica 4 asked the bucket, then its upstream, for prog3" \
    within_s 20 grep -q "buildid/$ID3/debuginfo" "$tmp/gate/log"
URL=${RURL[1]}
code=$(put_file "/buildid/$ID3/debuginfo" "$tmp/bin/prog3.debug" \
    "$tmp/out/put" "$tmp/out/puth" -H "Authorization: Bearer $TOK")
check "prog3 uploaded through replica 1 (got $code)" [ "$code" = 201 ]
check "replica 4 reads the upload's event while its upstream holds" \
    within_s 20 metric_cmp "$applied" -gt "${n0:-0}" "$R4"
touch "$tmp/gate/open"
wait "$held"
check "the held request is answered 404 (the bucket's answer, before; got $(cat "$tmp/out/held.code"))" \
    [ "$(cat "$tmp/out/held.code")" = 404 ]
# No event comes now: only a miss not kept lets replica 4 serve it.
serves3() {
	curl -s --max-time 10 -o "$tmp/out/s3" "$R4/buildid/$ID3/debuginfo" &&
	    cmp -s "$tmp/out/s3" "$tmp/bin/prog3.debug"
}
check "replica 4 serves prog3 next: that miss was not kept" within_s 5 serves3
stop_symhubd "$R4PID"

section 'a replica killed under load'
# 8 clients, keep-alive, through nginx; the kill after 200 answers; 600
# in all.  A request fails when its answer is not the file.
cat >"$tmp/load.py" <<'EOF'
import http.client, sys, threading
port, path, want_file, victim = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
want = open(want_file, 'rb').read()
lock = threading.Lock()
done = {'ok': 0, 'failed': 0, 'killed': False, 'inflight_at_kill': 0}
inflight = [0]
started = [0]
TOTAL, KILL_AT, CLIENTS = 600, 200, 8

def client():
    conn = None
    while True:
        with lock:
            if started[0] >= TOTAL:
                return
            started[0] += 1
            inflight[0] += 1
        good = False
        try:
            if conn is None:
                conn = http.client.HTTPConnection('127.0.0.1', port, timeout=30)
            conn.request('GET', path)
            r = conn.getresponse()
            body = r.read()
            good = r.status == 200 and body == want
            if r.getheader('Connection', '').lower() == 'close':
                conn.close(); conn = None
        except Exception:
            if conn is not None:
                conn.close()
            conn = None
        with lock:
            inflight[0] -= 1
            done['ok' if good else 'failed'] += 1
            if done['ok'] >= KILL_AT and not done['killed']:
                done['killed'] = True
                done['inflight_at_kill'] = inflight[0] + 1
                import os, signal
                os.kill(victim, signal.SIGKILL)

ts = [threading.Thread(target=client) for _ in range(CLIENTS)]
for t in ts: t.start()
for t in ts: t.join()
print(done['ok'], done['failed'], done['inflight_at_kill'], int(done['killed']))
EOF
read -r ok failed inflight killed < <(python3 "$tmp/load.py" "$NPORT" \
    "/buildid/$ID/debuginfo" "$tmp/bin/prog.debug" "${RPID[2]}")
forget_pid "${RPID[2]}"
check "replica 2 was killed after 200 answers (killed=$killed)" \
    [ "${killed:-0}" = 1 ]
check "600 requests: $ok answered with the file, $failed failed; at most the $inflight in flight at the kill failed" \
    eval '[ -n "$ok" ] && [ $((ok + failed)) = 600 ] &&
    [ "$failed" -le "$inflight" ]'
URL=$LB
expect_get "the balancer still serves it" "/buildid/$ID/debuginfo" 200 \
    "$tmp/bin/prog.debug"
for i in 1 3; do
	URL=${RURL[$i]}
	expect_get "replica $i still serves it" "/buildid/$ID/debuginfo" 200 \
	    "$tmp/bin/prog.debug"
done

section 'stops'
kill -QUIT "$NGPID"
wait_exit "$NGPID" 10 && pass "nginx stops" || fail "nginx stops"
for i in 1 3; do
	stop_symhubd "${RPID[$i]}"
	check "replica $i stops (exit $exit_status)" [ "$exit_status" = 0 ]
done
finish
