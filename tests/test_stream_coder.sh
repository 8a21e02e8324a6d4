#!/bin/bash
# A cold miss streamed zstd-coded is coded once, however many clients
# read it: one coder per stream, shared by its readers, each reading the
# coded bytes at its own pace:
#   1. readers of one cold fetch (curl raw and --compressed, one that
#      joins late, one that stops reading, one that hangs up) cost one
#      coder, get the same coded bytes, and each decodes to the file;
#      the others finish while one reader stops reading, and it gets the
#      rest when it reads again;
#   2. the coded bytes become the store's zstd copy: the first warm hit
#      is sent them, nothing is coded again;
#   3. the right head then zeros, or a stall: every coded reader is cut
#      short, no whole zstd frame, one coder for all.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_stream_coder.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
. "$top_srcdir/tests/stream_lib.sh"

need curl gcc objcopy readelf cmp python3 zstd
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
BADUPSTREAM=$top_srcdir/tests/badupstream.py
unset DEBUGINFOD_URLS

mkdir -p "$tmp"/{bin,out,h} || exit 99
# 16 MiB after the head, half random: coded bytes that fill the socket
# buffers of a reader that does not read (at most 4 MiB on the hub's
# side, tcp_wmem's default).
stream_big_fixture "$tmp/bin/big" 16384 || { echo "# fixtures"; exit 99; }
BIG=$tmp/bin/big

stream_halves

# A client that reads the answer's first bytes, then nothing until the
# file GATE exists (its socket buffer kept small), then the rest; the
# body, de-chunked, to OUT.  Exits 0 only for a 200 whose last chunk
# came.
cat >"$tmp/slow.py" <<'PY'
import os, socket, sys, time
port, path, gate, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", port))
s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: zstd\r\n"
           "Connection: close\r\n\r\n" % path).encode())
data = s.recv(4096)
with open(out + ".started", "w") as f:
    f.write("%d\n" % len(data))
while not os.path.exists(gate):
    time.sleep(0.05)
# Read on at a normal pace (a 4 KiB window trickles).
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
except OSError:
    pass
head, _, body = data.partition(b"\r\n\r\n")
if not head.startswith(b"HTTP/1.1 200") or b"chunked" not in head.lower():
    sys.exit(2)
res, whole = b"", False
while True:
    line, sep, body = body.partition(b"\r\n")
    if not sep:
        break
    n = int(line.split(b";")[0], 16)
    if n == 0:
        whole = True
        break
    if len(body) < n + 2:
        res += body[:n]
        break
    res += body[:n]
    body = body[n + 2:]
with open(out, "wb") as f:
    f.write(res)
sys.exit(0 if whole else 1)
PY

# raw OUT: GET the big executable in zstd, the coded bytes as they came,
# in the background; sets CPID.
raw() {
	curl -s --max-time 60 -N -H 'Accept-Encoding: zstd' -o "$1" \
	    -D "$1.hdr" "$URL/buildid/$ID/executable" &
	CPID=$!
	PIDS+=("$CPID")
}
# slow OUT GATE: the client above, in the background; sets SPID.
slow() {
	python3 "$tmp/slow.py" "$PORT" "/buildid/$ID/executable" "$2" "$1" &
	SPID=$!
	PIDS+=("$SPID")
}

section 'readers of one cold stream share one coder'
afterwards rest
hub -d "$tmp/st" -u "$HALVES name=halves first-byte-timeout=30" \
    --log-file "$tmp/hub.log"
raw "$tmp/out/z1"
Z1=$CPID
streams "$tmp/out/z1"
verdict $? "the first zstd reader streams while the upstream holds the rest" \
    "$(tail -n 3 "$tmp/hub.log")"
check "... one coder" metric_cmp symhub_encode_stream_coders_total -eq 1
raw "$tmp/out/z2"
Z2=$CPID
raw "$tmp/out/z3"
Z3=$CPID
curl -s --max-time 60 --compressed -o "$tmp/out/c" -D "$tmp/out/c.hdr" \
    "$URL/buildid/$ID/executable" &
C=$CPID
PIDS+=("$C")
slow "$tmp/out/slow" "$tmp/h/read"
S=$SPID
raw "$tmp/out/gone"
G=$CPID
streams "$tmp/out/z2" && streams "$tmp/out/z3" && streams "$tmp/out/c" &&
    streams "$tmp/out/gone" && wait_until 30 test -s "$tmp/out/slow.started"
verdict $? "five more readers stream, coalesced"
kill "$G" 2>/dev/null
wait_exit "$G" 10
check "six coded readers, one of them gone, of one stream: one coder made, one alive" \
    eval "metric_cmp symhub_fetch_streams_total -eq 1 &&
    metric_cmp symhub_fetch_streamed_total -eq 6 &&
    metric_cmp symhub_encode_stream_coders_total -eq 1 &&
    metric_cmp symhub_encode_stream_coders -eq 1"
# One that joins once the others have the head's coded bytes gets the
# frame from its start.
raw "$tmp/out/late"
L=$CPID
streams "$tmp/out/late"
verdict $? "a reader that joins late streams too"
touch "$tmp/h/go"
for p in "$Z1" "$Z2" "$Z3" "$C" "$L"; do
	wait_exit "$p" 30
	[ "$exit_status" = 0 ] || break
done
verdict $? "the readers that read end well while one reader stops reading" \
    "exit $exit_status"
check "... which is still there, its bytes unread" alive "$S"
ok=0
for o in z1 z2 z3 late; do
	[ "$(header "$tmp/out/$o.hdr" Content-Encoding)" = zstd ] &&
	    zstd -q -d -c "$tmp/out/$o" | cmp -s - "$BIG" || ok=1
done
verdict $ok "each zstd reader's bytes decode to the file"
check "... the same coded bytes for each (one coder), fewer than the file's" \
    eval "cmp -s '$tmp/out/z1' '$tmp/out/z2' && cmp -s '$tmp/out/z1' '$tmp/out/z3' &&
    cmp -s '$tmp/out/z1' '$tmp/out/late' &&
    [ \$(bytes '$tmp/out/z1') -lt $((SIZE * 3 / 4)) ]"
check "curl --compressed: the file byte for byte" cmp -s "$tmp/out/c" "$BIG"
touch "$tmp/h/read"
wait_exit "$S" 30
[ "$exit_status" = 0 ] && cmp -s "$tmp/out/slow" "$tmp/out/z1"
verdict $? "the reader that stopped reads the rest: the same frame, whole" \
    "exit $exit_status, $(bytes "$tmp/out/slow") bytes"
check "the coder is gone once its frame ended" \
    metric_cmp symhub_encode_stream_coders -eq 0

section 'the coded bytes become the store'"'"'s zstd copy'
check "the file and its zstd copy are stored" \
    wait_metric symhub_cache_entries -ge 2 10
code=$(http "/buildid/$ID/executable" "$tmp/out/warm" "$tmp/out/warm.hdr" \
    -H 'Accept-Encoding: zstd')
[ "$code" = 200 ] &&
    [ "$(header "$tmp/out/warm.hdr" Content-Encoding)" = zstd ] &&
    cmp -s "$tmp/out/warm" "$tmp/out/z1"
verdict $? "the first warm hit in zstd is sent the streamed frame" \
    "status $code, $(bytes "$tmp/out/warm") bytes"
check "... nothing was coded again" eval \
    "metric_cmp 'symhub_encode_total{coding=\"zstd\",result=\"stored\"}' -eq 0 &&
    grep -q 'GET /buildid/$ID/executable 200 [0-9]* hit zstd' '$tmp/hub.log'"
stop_check "the hub stops"

section 'the one coding reader ends its frame after the file is stored'
# Its coded copy is then kept by the store thread, not on the reader's
# HTTP thread (which must not wait for the copy's fsync): the same copy.
afterwards rest
rm -f "$tmp/h/read"
hub -d "$tmp/st-alone" -u "$HALVES name=halves first-byte-timeout=30" \
    --log-file "$tmp/hub-alone.log"
slow "$tmp/out/alone" "$tmp/h/read"
S=$SPID
wait_until 30 test -s "$tmp/out/alone.started"
verdict $? "one coding reader streams, then reads nothing"
touch "$tmp/h/go"
check "the file is stored while that reader reads nothing" \
    wait_metric symhub_cache_entries -ge 1 30
check "... its frame not ended: the coder is still there" \
    metric_cmp symhub_encode_stream_coders -eq 1
touch "$tmp/h/read"
wait_exit "$S" 30
[ "$exit_status" = 0 ] && zstd -q -d -c "$tmp/out/alone" | cmp -s - "$BIG"
verdict $? "the reader reads the rest: a whole frame of the file" \
    "exit $exit_status, $(bytes "$tmp/out/alone") bytes"
check "its coded bytes become the zstd copy" \
    wait_metric symhub_cache_entries -ge 2 10
code=$(http "/buildid/$ID/executable" "$tmp/out/alone.warm" \
    "$tmp/out/alone.warm.hdr" -H 'Accept-Encoding: zstd')
[ "$code" = 200 ] && cmp -s "$tmp/out/alone.warm" "$tmp/out/alone" &&
    metric_cmp 'symhub_encode_total{coding="zstd",result="stored"}' -eq 0
verdict $? "the first warm hit in zstd is sent that frame, coded once" \
    "status $code, $(bytes "$tmp/out/alone.warm") bytes"
stop_check "the hub stops"

# spoiled WORD SECONDS: four zstd readers and one that stops reading
# stream the first half; then WORD spoils the rest (a stall: SECONDS of
# it, the upstream's first-byte-timeout, long enough for all to join):
# all are cut short, no whole frame, one coder made, nothing stored.
spoiled() {
	local p ok=0 i
	afterwards "$1"
	rm -f "$tmp/h/read"
	hub -d "$tmp/st-$1" -u "$HALVES name=halves first-byte-timeout=$2" \
	    --log-file "$tmp/hub-$1.log"
	local zs=()
	for i in 1 2 3 4; do
		raw "$tmp/out/$1.$i"
		zs+=("$CPID")
	done
	slow "$tmp/out/$1.slow" "$tmp/h/read"
	for i in 1 2 3 4; do
		streams "$tmp/out/$1.$i" || ok=1
	done
	wait_until 30 test -s "$tmp/out/$1.slow.started" || ok=1
	verdict $ok "$1: five coded readers stream first, one coder" \
	    "coders: $(metric symhub_encode_stream_coders_total)"
	check "$1: ... one coder" metric_cmp symhub_encode_stream_coders_total -eq 1
	[ "$1" = stall ] || touch "$tmp/h/go"
	ok=0
	for p in "${zs[@]}"; do
		wait_exit "$p" 60
		[ "$exit_status" != 0 ] && [ "$exit_status" != 124 ] || ok=1
	done
	for i in 1 2 3 4; do
		! zstd -q -t "$tmp/out/$1.$i" 2>/dev/null || ok=1
	done
	verdict $ok "$1: every curl is cut off, no whole zstd frame" \
	    "$(for i in 1 2 3 4; do bytes "$tmp/out/$1.$i"; done)"
	touch "$tmp/h/read"
	wait_exit "$SPID" 30
	[ "$exit_status" = 1 ] && ! zstd -q -t "$tmp/out/$1.slow" 2>/dev/null
	verdict $? "$1: the reader that stopped gets no last chunk, no whole frame" \
	    "exit $exit_status"
	check "$1: the coder is gone, nothing is stored" eval \
	    "metric_cmp symhub_encode_stream_coders -eq 0 &&
	    metric_cmp symhub_cache_entries -eq 0"
	stop_check "$1: the hub stops"
}

section 'the right head, then the wrong bytes; a stall'
spoiled zeros 30
spoiled stall 8

finish
