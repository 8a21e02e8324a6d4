#!/bin/bash
# Benchmark consistency across replicas: two symhubd on one bucket (a real
# S3 server, tests/s3/start-s3.sh), each remembering a miss for 600 s
# (--negative-ttl).  For each of N build-ids, replica B answers 404 (HEAD
# and GET, as `symhub upload` and a client would), then:
#   upload   PUT through A; the time from A's 201 to B's first 200 with
#            the file's bytes;
#   replace  PUT ?force=1 of other bytes of the build-id through A; from
#            A's answer to B's first answer with the new bytes;
#   delete   DELETE through A; from A's 200 to B's first 404.
# Each change comes after a random pause (0 to 1 s), B is asked every 5 ms.  Prints min, median and max of each, in ms,
# against the target: every one under 2000.
#
# usage: tests/bench/bench_replicas.sh [BUILDDIR]
#   BENCH_ROUNDS=20   build-ids
# Not part of `make check`. Exits 77 when a tool is missing.

set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
builddir=${1:-$repo}
symhubd=$builddir/src/symhubd/symhubd
symhub=$builddir/src/symhub/symhub
rounds=${BENCH_ROUNDS:-20}
bench_name=bench_replicas
. "$here/lib.sh"

[ -x "$symhubd" ] && [ -x "$symhub" ] || die "build first"
check_numbers "$rounds"
for t in gcc objcopy curl python3 swift-ring-builder swift-proxy-server \
    swift-object-server swift-container-server swift-account-server \
    memcached; do
	command -v "$t" >/dev/null || skip "no $t"
done

bench_setup symhub-bench-replicas
s3dir=$tmp/s3
stop_all() {
	[ -d "$s3dir/run" ] && "$repo/tests/s3/stop-s3.sh" "$s3dir" \
	    >/dev/null 2>&1
	bench_cleanup
}
trap stop_all EXIT

# Swift on five ports in a row, tried at random bases.
started=
for _ in 1 2 3; do
	base=$((20000 + RANDOM % 30000))
	if out=$("$repo/tests/s3/start-s3.sh" "$s3dir" "$base" \
	    2>"$tmp/start-s3.err"); then
		eval "$out"
		started=1
		break
	fi
	"$repo/tests/s3/stop-s3.sh" "$s3dir" >/dev/null 2>&1
done
[ -n "$started" ] || die "Swift does not start: $(tail -3 "$tmp/start-s3.err")"
export AWS_ACCESS_KEY_ID=$S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET_KEY
unset DEBUGINFOD_URLS

tok=$("$symhub" token new bench upload,admin 2>"$tmp/line") || die "symhub token new"
tail -n 1 "$tmp/line" >"$tmp/tokens"

# replica NAME: start one; sets rport.  (Not in $(...): the daemon
# would hold the substitution's pipe open.)
replica() {
	rport=$(free_port) || die "no free port"
	"$symhubd" -p "$rport" -d "$tmp/store-$1" \
	    --s3 "$S3_ENDPOINT/$S3_BUCKET" --tokens "$tmp/tokens" \
	    --negative-ttl 600 -t 0 >"$tmp/$1.log" 2>&1 &
	pids+=("$!")
	for _ in $(seq 400); do
		curl -s "http://127.0.0.1:$rport/metrics" 2>/dev/null |
		    grep -qx 'ready 1' && return 0
		sleep 0.05
	done
	die "replica $1 did not start: $(tail -3 "$tmp/$1.log")"
}
replica a
pa=$rport
replica b
pb=$rport

# N programs, each its own build-id; for each, its debuginfo and other
# bytes of the same build-id (one more section).
mkdir -p "$tmp/fix" || die mkdir
for i in $(seq "$rounds"); do
	printf 'int main(void) { return %d; }\n' "$i" >"$tmp/fix/p$i.c"
	gcc -g -o "$tmp/fix/p$i" "$tmp/fix/p$i.c" &&
	    objcopy --only-keep-debug "$tmp/fix/p$i" "$tmp/fix/p$i.debug" &&
	    objcopy --add-section .note.other="$tmp/fix/p$i.c" \
	    "$tmp/fix/p$i.debug" "$tmp/fix/p$i.b.debug" ||
	    die "cannot build fixture $i"
	build_id "$tmp/fix/p$i" >"$tmp/fix/p$i.id"
done

python3 - "$pa" "$pb" "$tok" "$tmp/fix" "$rounds" <<'EOF'
import http.client, random, statistics, sys, time

pa, pb, tok, fix, rounds = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
a = http.client.HTTPConnection('127.0.0.1', pa, timeout=60)
b = http.client.HTTPConnection('127.0.0.1', pb, timeout=60)

def req(conn, method, path, body=None, headers={}):
    conn.request(method, path, body=body, headers=headers)
    r = conn.getresponse()
    return r.status, r.read()

def until_b(path, ok, limit=60):
    t = time.monotonic()
    while True:
        status, body = req(b, 'GET', path)
        if ok(status, body):
            return time.monotonic()
        if time.monotonic() - t > limit:
            sys.exit('bench_replicas: B never followed %s' % path)
        time.sleep(0.005)

auth = {'Authorization': 'Bearer ' + tok}
# Each change comes at a random point of B's second between two looks
# at the events, as a user's would; right after B followed the last one
# it would come just after a look, every time, and wait the longest.
def phase():
    time.sleep(random.random())

res = {'upload': [], 'replace': [], 'delete': []}
for i in range(1, rounds + 1):
    bid = open('%s/p%d.id' % (fix, i)).read().strip()
    old = open('%s/p%d.debug' % (fix, i), 'rb').read()
    new = open('%s/p%d.b.debug' % (fix, i), 'rb').read()
    path = '/buildid/%s/debuginfo' % bid
    if req(b, 'HEAD', path)[0] != 404 or req(b, 'GET', path)[0] != 404:
        sys.exit('bench_replicas: B does not answer 404 for %s' % bid)
    phase()
    status, _ = req(a, 'PUT', path, old, auth)
    t0 = time.monotonic()
    if status != 201:
        sys.exit('bench_replicas: upload %d: %d' % (i, status))
    res['upload'].append(until_b(path, lambda s, d: s == 200 and d == old) - t0)
    phase()
    status, _ = req(a, 'PUT', path + '?force=1', new, auth)
    t0 = time.monotonic()
    if status not in (200, 201):
        sys.exit('bench_replicas: replace %d: %d' % (i, status))
    res['replace'].append(until_b(path, lambda s, d: s == 200 and d == new) - t0)
    phase()
    status, _ = req(a, 'DELETE', path, None, auth)
    t0 = time.monotonic()
    if status != 200:
        sys.exit('bench_replicas: delete %d: %d' % (i, status))
    res['delete'].append(until_b(path, lambda s, d: s == 404) - t0)

worst = 0
print('bench_replicas: %d build-ids, 2 replicas, --negative-ttl 600; '
      'ms from A\'s answer to B following:' % rounds)
for k in ('upload', 'replace', 'delete'):
    v = [x * 1000 for x in res[k]]
    worst = max(worst, max(v))
    print('  %-8s min %5.0f  median %5.0f  max %5.0f' %
          (k, min(v), statistics.median(v), max(v)))
print('bench_replicas: target every one under 2000 ms: %s' %
      ('met' if worst < 2000 else 'MISSED'))
EOF
