#!/bin/bash
# Integration test: the memory profiles take is bounded (issue 32: "Memory
# stays bounded by the body limit plus the answer").  symhubd runs with
# --symbolize-max-addresses 200000 (a profile body of at most ~7.9 MiB)
# and --profile-memory-max 16M:
#   1. N (4) hostile pprof profiles and N hostile OTLP ones at once, each
#      ~7.6 MB of empty strings (a few KB gzip'd): each gets a clear 413
#      ("takes too much memory to decode") or 503, and symhubd's peak RSS
#      (VmHWM) grows by at most one profile's own budget (9 times the
#      body limit, its bytes and 8 times them decoded) + the pool + 64 MiB
#      of working set.  Before (24 times the bytes each, no pool) it grew
#      by ~N times 24 times the bytes: well over 1 GiB;
#   2. a profile that waits for its module (an upstream that holds every
#      request) keeps its decoded profile: /metrics symhub_profile_bytes
#      shows it; meanwhile another pprof and another OTLP profile are
#      answered 503 with Retry-After, counted in symhub_profile_busy_total;
#      a profile alone is never refused for the pool (the holder itself
#      is over it), and is answered once its module is given up;
#   3. a normal pprof and a normal OTLP profile afterwards are answered
#      exactly as before the storm, their locations filled in.
# The verdicts are statuses, /metrics values and VmHWM, never times.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_profile_memory.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc python3 protoc
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
unset DEBUGINFOD_URLS
PY=
for p in $(type -ap python3); do
	"$p" -c 'import google.protobuf' 2>/dev/null && { PY=$p; break; }
done
[ -n "$PY" ] || skip "no python3 with google.protobuf (python3-protobuf)"
N=${PROFILE_MEMORY_N:-4}
BODY_KB=$(((200000 * 40 + 1024 * 256 + 4096) / 1024))	# route_body_max()
POOL_KB=$((16 * 1024))
SLACK_KB=$((64 * 1024))
CHECK=$top_srcdir/tests/batchcheck.py
PP=$top_srcdir/tests/pprofcheck.py
OC=$top_srcdir/tests/otlpcheck.py
export PYTHONPATH=$tmp/py:$top_srcdir/tests

section 'fixtures'
mkdir -p "$tmp"/{bin,scan,out,py,gate} || exit 99
protoc --proto_path="$top_srcdir/src/symhubd/otlp" --python_out="$tmp/py" \
    opentelemetry/proto/common/v1/common.proto \
    opentelemetry/proto/resource/v1/resource.proto \
    opentelemetry/proto/profiles/v1development/profiles.proto \
    opentelemetry/proto/collector/profiles/v1development/profiles_service.proto ||
    exit 99
(cd "$tmp/bin" && cp "$FIXTURES/deep.c" . && gcc -g -O2 -o deep deep.c) ||
    exit 99
cp "$tmp/bin/deep" "$tmp/scan/" || exit 99
ID=$(buildid "$tmp/bin/deep")
[ -n "$ID" ] || { echo "# deep has no build-id"; exit 99; }
"$PY" "$CHECK" sample "$tmp/bin/deep" 200 deep >"$tmp/out/deep.addrs" ||
    exit 99
BASE=$((0x555500000000))
"$PY" "$PP" make "$tmp/out/ok.pb.gz" \
    "$tmp/bin/deep:$ID:$BASE:$tmp/out/deep.addrs" >/dev/null || exit 99
"$PY" "$OC" make "$tmp/out/ok.otlp.gz" \
    "$tmp/bin/deep:$ID::$BASE:$tmp/out/deep.addrs" >/dev/null || exit 99
# The holder: a valid profile of ~6 MB (100,000 locations, 200,000
# samples) whose one module only the (held) upstream could give.
python3 - "$tmp/out/hold.pb.gz" <<'EOF' || exit 99
import gzip, random, sys
import pprofcheck as pc
w = pc.Writer()
w.mapping(1, 0x10000000, 0x20000000, 0, "/held", "cd" * 20)
for i in range(100000):
    w.location(i + 1, 1, 0x10000000 + 16 * i)
rng = random.Random(1)
for i in range(200000):
    w.sample([rng.randrange(100000) + 1 for _ in range(4)], 1, "t")
open(sys.argv[1], "wb").write(gzip.compress(w.finish(), 1))
EOF
# Hostile: as many empty strings as the body limit holds, gzip'd: a
# pprof string_table, an OTLP dictionary's.
python3 - "$tmp/out" "$((BODY_KB * 1024 - 65536))" <<'EOF' || exit 99
import gzip, sys
def varint(v):
    b = bytearray()
    while True:
        c, v = v & 0x7f, v >> 7
        b.append(c | (0x80 if v else 0))
        if not v:
            return bytes(b)
out, size = sys.argv[1], int(sys.argv[2])
n = size // 2 - 16
open(out + "/evil.pb.gz", "wb").write(gzip.compress(b"\x32\x00" * n, 9))
d = b"\x2a\x00" * n
open(out + "/evil.otlp.gz", "wb").write(
    gzip.compress(b"\x12" + varint(len(d)) + d, 9))
EOF
pass "fixtures: deep, a holder, hostile profiles of $((BODY_KB / 1024)) MiB"

start_badupstream gate gate "$tmp/gate" ||
    { fail "a holding upstream starts"; finish; }
hub -d "$tmp/store" -F "$tmp/scan" -u "$BURL" \
    --symbolize-max-addresses 200000 --profile-memory-max 16M \
    --log-file "$tmp/hub.log"
wait_until 30 eval '[ "$(http_code "$URL/buildid/$ID/executable")" = 200 ]'

hwm() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$SYMHUBD_PID/status"
}

# post ROUTE BODY OUT: the status to stdout, the headers to OUT.h.
post() {
	curl -s --max-time 120 -o "$3" -D "$3.h" -w '%{http_code}' \
	    --data-binary "@$2" "$URL$1"
}

section 'normal profiles, before'
code=$(post /symbolize/pprof "$tmp/out/ok.pb.gz" "$tmp/out/ok1.pb.gz")
code2=$(post /symbolize/otlp "$tmp/out/ok.otlp.gz" "$tmp/out/ok1.otlp.gz")
check "answered 200, 200 ($code, $code2)" test "$code$code2" = 200200
check "pprof: its locations filled in ($(python3 "$PP" summary \
    "$tmp/out/ok1.pb.gz"))" grep -qE 'symbolized [1-9]' \
    <(python3 "$PP" summary "$tmp/out/ok1.pb.gz")
check "OTLP: its locations filled in" grep -qE '^[1-9][0-9]* locations filled in' \
    <("$PY" "$OC" passthrough "$tmp/out/ok.otlp.gz" "$tmp/out/ok1.otlp.gz")

# ---- 1. hostile profiles at once ----------------------------------------

section "$N hostile pprof and $N hostile OTLP profiles at once"
before=$(hwm)
pids=()
for ((i = 0; i < N; i++)); do
	post /symbolize/pprof "$tmp/out/evil.pb.gz" "$tmp/out/e$i" \
	    >"$tmp/out/e$i.code" &
	pids+=($!)
	post /symbolize/otlp "$tmp/out/evil.otlp.gz" "$tmp/out/o$i" \
	    >"$tmp/out/o$i.code" &
	pids+=($!)
done
wait "${pids[@]}"
after=$(hwm)
for ((i = 0; i < N; i++)); do
	for f in e o; do
		c=$(cat "$tmp/out/$f$i.code")
		case $c in
		413) grep -q 'too much memory to decode' "$tmp/out/$f$i" ;;
		503) grep -q 'profile-memory-max' "$tmp/out/$f$i" ;;
		*) false ;;
		esac
		check "$f$i: a clear 413 or 503 ($c $(head -c 80 "$tmp/out/$f$i"))" \
		    test $? = 0
	done
done
bound=$((9 * BODY_KB + 1024 + POOL_KB + SLACK_KB))
grown=$((after - before))
if [ "$grown" -le "$bound" ]; then
	pass "peak RSS grew by $((grown / 1024)) MiB: at most one profile's" \
	    "budget + the pool + 64 MiB ($((bound / 1024)) MiB)"
else
	fail "peak RSS grew by at most $((bound / 1024)) MiB" \
	    "VmHWM $before kB -> $after kB: +$((grown / 1024)) MiB"
fi

# ---- 2. a holder, and the pool refuses others ---------------------------

section 'a profile waiting for its module holds memory; others get 503'
# The storm's requests let go of their bodies once answered, a moment
# after their clients have the answers: the holder must find the pool
# empty to be alone in it.
wait_metric symhub_profile_bytes -eq 0 30
busy0=$(metric symhub_profile_busy_total)
check "symhub_profile_busy_total is there ($busy0)" test -n "$busy0"
post '/symbolize/pprof?deadline=60000' "$tmp/out/hold.pb.gz" \
    "$tmp/out/hold.ans" >"$tmp/out/hold.code" &
HOLD=$!
wait_until 60 grep -qs "/buildid/cd" "$tmp/gate/log"
check "the holder waits for its module at the upstream" \
    grep -q "/buildid/cd" "$tmp/gate/log"
held=$(metric symhub_profile_bytes)
check "symhub_profile_bytes shows what it holds ($held > 16M: alone, it is not refused)" \
    metric_cmp symhub_profile_bytes -gt $((POOL_KB * 1024))
code=$(post /symbolize/pprof "$tmp/out/ok.pb.gz" "$tmp/out/b1")
check "another pprof profile: 503 ($code $(head -c 100 "$tmp/out/b1"))" \
    test "$code" = 503
check "... with Retry-After" test -n "$(header "$tmp/out/b1.h" Retry-After)"
check "... saying why" grep -q 'profile-memory-max' "$tmp/out/b1"
code=$(post /symbolize/otlp "$tmp/out/ok.otlp.gz" "$tmp/out/b2")
check "an OTLP profile: 503 ($code $(head -c 100 "$tmp/out/b2"))" \
    test "$code" = 503
check "symhub_profile_busy_total counts them" \
    metric_cmp symhub_profile_busy_total -ge $((busy0 + 2))
: >"$tmp/gate/open"
wait "$HOLD"
check "the holder is answered once its module is given up ($(cat "$tmp/out/hold.code"))" \
    test "$(cat "$tmp/out/hold.code")" = 200
wait_metric symhub_profile_bytes -eq 0 30
check "symhub_profile_bytes back to 0" metric_cmp symhub_profile_bytes -eq 0

# ---- 3. then normal profiles --------------------------------------------

section 'normal profiles, after'
code=$(post /symbolize/pprof "$tmp/out/ok.pb.gz" "$tmp/out/ok2.pb.gz")
code2=$(post /symbolize/otlp "$tmp/out/ok.otlp.gz" "$tmp/out/ok2.otlp.gz")
check "answered 200, 200 ($code, $code2)" test "$code$code2" = 200200
check "pprof: the same answer as before ($(wc -c <"$tmp/out/ok2.pb.gz") bytes)" \
    cmp -s "$tmp/out/ok1.pb.gz" "$tmp/out/ok2.pb.gz"
check "OTLP: the same answer as before ($(wc -c <"$tmp/out/ok2.otlp.gz") bytes)" \
    cmp -s "$tmp/out/ok1.otlp.gz" "$tmp/out/ok2.otlp.gz"
stop_check "symhubd exits 0"
finish
