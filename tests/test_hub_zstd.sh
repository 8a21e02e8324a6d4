#!/bin/bash
# Hubs talk zstd: a hub asks an upstream configured with
# accept-encoding=zstd (another symhub) for zstd, decodes as the bytes
# come, checks the decoded file (X-DEBUGINFOD-SIZE, the build-id) and
# keeps the coded bytes as its own zstd copy.  Through two chained hubs
# debuginfod-find and gdb get the files byte for byte, with fewer bytes
# between the hubs; an upstream without the setting is never asked for
# zstd; a bomb, a corrupt or cut stream and plain bytes said to be zstd
# are refused and nothing is stored.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_hub_zstd.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc g++ objcopy strip curl zstd gdb debuginfod-find python3 readelf
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
t0=$(date +%s)
unset DEBUGINFOD_URLS

# get URL OUT [CURL ARGS...]: GET, body in OUT, headers in OUT.hdr;
# prints the status.
get() {
	local url=$1 out=$2
	shift 2
	curl -s -m 60 -o "$out" -D "$out.hdr" -w '%{http_code}' "$@" "$url"
}
# requests LOG: how many requests a fake upstream logged.
requests() {
	if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi
}
# hwm PID: the peak resident memory of a process, in kB.
hwm() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"
}

section 'fixtures: a C++ program and hello, their debug files'
mkdir -p "$tmp/src" "$tmp/scan" "$tmp/out" "$tmp/b"
cp "$FIXTURES/inl.cc" "$FIXTURES/hello.c" "$FIXTURES/greet.c" \
    "$FIXTURES/greet.h" "$tmp/src/"
(cd "$tmp/src" && g++ -g -O0 -o "$tmp/b/inl" inl.cc &&
    gcc -g -O0 -o "$tmp/b/hello" hello.c greet.c) || exit 99
for p in inl hello; do
	objcopy --only-keep-debug "$tmp/b/$p" "$tmp/scan/$p.debug" &&
	    strip -g -o "$tmp/scan/$p" "$tmp/b/$p" || exit 99
done
ID=$(buildid "$tmp/scan/inl")
ID_H=$(buildid "$tmp/scan/hello")
DBG=$tmp/scan/inl.debug
DSIZE=$(file_size "$DBG")
[ -n "$ID" ] && [ -n "$ID_H" ] || exit 99

section 'two chained hubs: regional -> central (accept-encoding=zstd)'
# The central hub scans the files; it sends zstd to whoever accepts it
# (down to 1 KB files here, so hello's are coded too).
hub -d "$tmp/store-c" -F "$tmp/scan" --compress-min 1k \
    --compress-best-level 0 --log-file "$tmp/c.log"
C=$URL
C_PID=$SYMHUBD_PID
# A second upstream, without the setting: it logs what it is asked.
start_badupstream plain count "$tmp/plain.log" ||
    fail "a counting upstream starts"
hub -d "$tmp/store-r" -u "$C name=central accept-encoding=zstd" \
    -u "$BURL name=plain" --compress-best-level 0 --log-file "$tmp/r.log"
R=$URL
R_PID=$SYMHUBD_PID

st=$(get "$R/buildid/$ID/debuginfo" "$tmp/out/d1")
check "curl (identity) through both: 200, the file byte for byte" eval \
    "[ $st = 200 ] && cmp -s '$tmp/out/d1' '$DBG'"
wire=$(metric 'symhub_upstream_bytes_total{upstream="central"}' "$R")
check "fewer bytes between the hubs than the file ($wire < $DSIZE)" \
    eval "[ -n '$wire' ] && [ '$wire' -gt 0 ] && [ '$wire' -lt $DSIZE ]"
echo "# wire between the hubs: $wire bytes for a $DSIZE-byte file" \
    "($(awk -v a="$wire" -v b="$DSIZE" 'BEGIN { printf "%.2f", a / b }')x)"
check "the central hub sent it zstd-coded" eval \
    "grep 'GET /buildid/$ID/debuginfo ' '$tmp/c.log' | grep -q 'hit zstd'"
check "the plain upstream was asked without Accept-Encoding" eval \
    "[ \"\$(requests '$tmp/plain.log')\" -ge 1 ] &&
    ! grep -qi 'accept-encoding' '$tmp/plain.log'"
st=$(get "$R/buildid/$ID/debuginfo" "$tmp/out/z1" -H 'Accept-Encoding: zstd')
check "a client that accepts zstd gets the regional hub's zstd copy" eval \
    "[ $st = 200 ] &&
    [ \"\$(header '$tmp/out/z1.hdr' Content-Encoding)\" = zstd ] &&
    zstd -q -d -c '$tmp/out/z1' | cmp -s - '$DBG'"
check "... the bytes that came, not compressed again at the regional hub" \
    eval "[ \"\$(metric 'symhub_encode_total{coding=\"zstd\",result=\"stored\"}' '$R')\" = 0 ] &&
    [ \"\$(file_size '$tmp/out/z1')\" = '$wire' ]"
check "X-DEBUGINFOD-SIZE is the file's size" \
    [ "$(header "$tmp/out/z1.hdr" X-DEBUGINFOD-SIZE)" = "$DSIZE" ]
check "made at the central hub's level, and says so (X-Symhub-Level 3)" \
    [ "$(header "$tmp/out/z1.hdr" X-Symhub-Level)" = 3 ]

section 'debuginfod-find and gdb through the two hubs'
client_file "debuginfod-find debuginfo: byte for byte" "$tmp/scan/hello.debug" \
    env DEBUGINFOD_URLS="$R" DEBUGINFOD_CACHE_PATH="$tmp/dfc" \
    debuginfod-find debuginfo "$ID_H"
client_file "debuginfod-find executable: byte for byte" "$tmp/scan/inl" \
    env DEBUGINFOD_URLS="$R" DEBUGINFOD_CACHE_PATH="$tmp/dfc" \
    debuginfod-find executable "$ID"
DEBUGINFOD_CACHE_PATH=$tmp/gdbc DEBUGINFOD_URLS=$R \
    gdb_info_line "gdb: hello's line table through two hubs" "$tmp/scan/hello" \
    "$tmp/src"
# gdb asked for hello's debuginfo, cached by libdebuginfod: the file.
check "gdb's cached debuginfo is the file, byte for byte" \
    cmp -s "$tmp/gdbc/$ID_H/debuginfo" "$tmp/scan/hello.debug"
stop_symhubd "$R_PID"
stop_symhubd "$C_PID"

section 'a fake hub: good zstd, a bomb, corrupt, cut, plain bytes, short'
# One fake upstream answers each build-id with its own body (tests/
# badupstream.py's zstd mode); only good's is the real file's id.
mkdir -p "$tmp/z"
BLOG=$tmp/fake.log
# body ID FILE SIZE: the fake upstream's answer for ID.
body() {
	cp "$2" "$tmp/z/$1" && echo "$3" >"$tmp/z/$1.size" || exit 99
}
zstd -q -c "$DBG" >"$tmp/good.zst" || exit 99
zsz=$(file_size "$tmp/good.zst")
body "$ID" "$tmp/good.zst" "$DSIZE"
ID_BOMB=ba$(printf '%038d' 1)
head -c 256M /dev/zero | zstd -q -1 -c >"$tmp/bomb.zst" || exit 99
body "$ID_BOMB" "$tmp/bomb.zst" "$DSIZE"
ID_CORRUPT=ba$(printf '%038d' 2)
cp "$tmp/good.zst" "$tmp/corrupt.zst"
printf '\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377' |
    dd of="$tmp/corrupt.zst" bs=1 seek=$((zsz / 2)) conv=notrunc \
    status=none || exit 99
body "$ID_CORRUPT" "$tmp/corrupt.zst" "$DSIZE"
ID_CUT=ba$(printf '%038d' 3)
head -c $((zsz / 2)) "$tmp/good.zst" >"$tmp/cut.zst"
body "$ID_CUT" "$tmp/cut.zst" "$DSIZE"
ID_PLAIN=ba$(printf '%038d' 4)
body "$ID_PLAIN" "$DBG" "$DSIZE"
# Short: hello's real debuginfo, its head right (so it streams), one
# byte short of what X-DEBUGINFOD-SIZE says: only the end tells.
ID_SHORT=$ID_H
HSIZE=$(file_size "$tmp/scan/hello.debug")
zstd -q -c "$tmp/scan/hello.debug" >"$tmp/short.zst" || exit 99
body "$ID_SHORT" "$tmp/short.zst" $((HSIZE + 1))
start_badupstream fake zstd "$tmp/z" "$BLOG" ||
    fail "the fake upstream starts"
hub -d "$tmp/store-f" -u "$BURL name=fake accept-encoding=zstd" \
    --log-file "$tmp/f.log"

# asked ID: how many times the fake upstream was asked for ID.
asked() {
	grep -c "^GET /buildid/$1/" "$BLOG"
}
# refused WHAT ID: a GET of ID's debuginfo is not served, and nothing is
# stored (asked again, the hub asks its upstream again).
refused() {
	local st n
	st=$(get "$URL/buildid/$2/debuginfo" "$tmp/out/$2")
	check "$1: not served (status $st)" eval "[ $st != 200 ] &&
	    [ \"\$(asked $2)\" -ge 1 ]"
	n=$(asked "$2")
	get "$URL/buildid/$2/debuginfo" "$tmp/out/$2.2" >/dev/null
	check "$1: nothing stored (asked again: the upstream is asked again)" \
	    eval "[ \"\$(asked $2)\" -gt $n ]"
}

st=$(get "$URL/buildid/$ID/debuginfo" "$tmp/out/good")
check "good zstd (the control): 200, the file" eval "[ $st = 200 ] &&
    cmp -s '$tmp/out/good' '$DBG'"
check "asked with Accept-Encoding: zstd" \
    grep -qi 'Accept-Encoding: zstd' "$BLOG"
m0=$(hwm "$SYMHUBD_PID")
refused "a bomb (256 MiB of zeros for $DSIZE bytes)" "$ID_BOMB"
m1=$(hwm "$SYMHUBD_PID")
check "a bomb: refused as one (logged)" \
    grep -q 'decodes past its X-DEBUGINFOD-SIZE' "$tmp/f.log"
check "a bomb: memory stays bounded (peak grew $(((m1 - m0) / 1024)) MiB)" \
    [ $((m1 - m0)) -lt $((64 * 1024)) ]
check "a bomb: no large file left in the store" eval \
    "[ -z \"\$(find '$tmp/store-f' -type f -size +1M)\" ]"
refused "corrupt zstd" "$ID_CORRUPT"
check "corrupt zstd: logged as not decoding" \
    grep -q 'in zstd that does not decode' "$tmp/f.log"
refused "zstd cut inside a frame (Content-Length says so)" "$ID_CUT"
check "a cut stream: logged as cut" grep -q 'ends inside a frame' \
    "$tmp/f.log"
refused "plain bytes said to be zstd" "$ID_PLAIN"
refused "zstd short of X-DEBUGINFOD-SIZE" "$ID_SHORT"
check "zstd short: logged as short" grep -q \
    "sent $HSIZE bytes of debuginfo $ID_SHORT, not the $((HSIZE + 1))" \
    "$tmp/f.log"
stop_symhubd "$SYMHUBD_PID"

echo "# $(($(date +%s) - t0)) s"
finish
