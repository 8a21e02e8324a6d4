#!/bin/bash
# Compression: a debuginfo or executable is sent zstd- or gzip-coded to a
# client that accepts it (Accept-Encoding), compressed once and the copy
# kept; X-DEBUGINFOD-SIZE stays the file's size.  Tried with the real
# clients: curl, debuginfod-find and gdb (libdebuginfod 0.188 accepts
# every coding libcurl has), llvm-debuginfod-find-19, and elfutils'
# debuginfod federating to the hub.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_compress.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc g++ objcopy strip curl zstd gzip gdb debuginfod debuginfod-find \
    llvm-debuginfod-find-19 python3

# get URL OUT [CURL ARGS...]: GET, body in OUT, headers in OUT.hdr;
# prints the status.
get() {
	local url=$1 out=$2
	shift 2
	curl -s -m 60 -o "$out" -D "$out.hdr" -w '%{http_code}' "$@" "$url"
}
# hdr OUT NAME: a header of the answer in OUT.hdr.
hdr() {
	header "$1.hdr" "$2"
}
encoded() {
	metric "symhub_encode_total{coding=\"$1\",result=\"$2\"}"
}

section 'a hub over a C++ program, its debug file and a file that does not compress'
mkdir -p "$tmp/src" "$tmp/scan" "$tmp/out" "$tmp/b"
cp "$FIXTURES/inl.cc" "$FIXTURES/hello.c" "$FIXTURES/greet.c" \
    "$FIXTURES/greet.h" "$tmp/src/"
(cd "$tmp/src" && g++ -g -O0 -o "$tmp/b/inl" inl.cc &&
    gcc -g -O0 -o "$tmp/b/hello" hello.c greet.c &&
    gcc -O2 -o "$tmp/b/small" hello.c greet.c &&
    gcc -O1 -o "$tmp/b/other" hello.c greet.c) || exit 99
objcopy --only-keep-debug "$tmp/b/inl" "$tmp/scan/inl.debug" &&
    strip -g -o "$tmp/scan/inl" "$tmp/b/inl" &&
    cp "$tmp/b/hello" "$tmp/scan/hello" &&
    strip -o "$tmp/scan/small" "$tmp/b/small" || exit 99
# A program whose bulk is random bytes: its copy would save nothing.
head -c 300000 /dev/urandom >"$tmp/b/noise"
objcopy --add-section .noise="$tmp/b/noise" "$tmp/b/other" \
    "$tmp/scan/noisy" || exit 99
ID=$(buildid "$tmp/scan/inl")
ID_H=$(buildid "$tmp/scan/hello")
ID_S=$(buildid "$tmp/scan/small")
ID_N=$(buildid "$tmp/scan/noisy")
DSIZE=$(file_size "$tmp/scan/inl.debug")
hub -d "$tmp/store" -F "$tmp/scan" --log-file "$tmp/hub.log"
H=$URL
H_PID=$SYMHUBD_PID

section 'curl: zstd'
st=$(get "$H/buildid/$ID/debuginfo" "$tmp/out/z1" -H 'Accept-Encoding: zstd')
check "200, Content-Encoding: zstd" eval "[ $st = 200 ] &&
    [ \"\$(hdr '$tmp/out/z1' Content-Encoding)\" = zstd ]"
check "X-DEBUGINFOD-SIZE is the file's size ($DSIZE)" \
    [ "$(hdr "$tmp/out/z1" X-DEBUGINFOD-SIZE)" = "$DSIZE" ]
zsize=$(file_size "$tmp/out/z1")
check "Content-Length is the coded size, smaller ($zsize < $DSIZE)" eval \
    "[ \"\$(hdr '$tmp/out/z1' Content-Length)\" = $zsize ] &&
    [ $zsize -lt $DSIZE ]"
check "Vary: Accept-Encoding, no Accept-Ranges" eval \
    "[ \"\$(hdr '$tmp/out/z1' Vary)\" = Accept-Encoding ] &&
    [ -z \"\$(hdr '$tmp/out/z1' Accept-Ranges)\" ]"
zstd -q -d -c "$tmp/out/z1" >"$tmp/out/z1.dec"
check "it decodes to the file" cmp -s "$tmp/out/z1.dec" "$tmp/scan/inl.debug"
ztag=$(hdr "$tmp/out/z1" ETag)
check "its ETag is weak and names the coding ($ztag)" eval \
    "[[ '$ztag' == W/\\\"*-zstd\\\" ]]"
check "one copy made" eval "[ \"\$(encoded zstd stored)\" = 1 ]"
check "then made again at the best level, smaller, in the background" \
    wait_metric 'symhub_encode_improved_total{coding="zstd"}' -eq 1
get "$H/buildid/$ID/debuginfo" "$tmp/out/z2" -H 'Accept-Encoding: zstd' \
    >/dev/null
z2size=$(file_size "$tmp/out/z2")
check "asked again: the better copy ($z2size < $zsize), the same file" eval \
    "[ $z2size -lt $zsize ] &&
    zstd -q -d -c '$tmp/out/z2' | cmp -s - '$tmp/scan/inl.debug'"
check "with the same tag, and no first copy made again" eval \
    "[ \"\$(hdr '$tmp/out/z2' ETag)\" = '$ztag' ] &&
    [ \"\$(encoded zstd stored)\" = 1 ]"
st=$(get "$H/buildid/$ID/debuginfo" "$tmp/out/z3" -H 'Accept-Encoding: zstd' \
    -H "If-None-Match: $ztag")
check "If-None-Match with the coded tag: 304" eval "[ $st = 304 ] &&
    [ \"\$(hdr '$tmp/out/z3' ETag)\" = '$ztag' ]"
itag=${ztag#W/}
itag=${itag%-zstd\"}\"
st=$(get "$H/buildid/$ID/debuginfo" "$tmp/out/z4" -H 'Accept-Encoding: zstd' \
    -H "If-None-Match: $itag")
check "with the plain file's tag: 200, coded" eval "[ $st = 200 ] &&
    cmp -s '$tmp/out/z2' '$tmp/out/z4'"
st=$(get "$H/buildid/$ID/debuginfo" "$tmp/out/z5" -I -H 'Accept-Encoding: zstd')
check "HEAD: the coded copy's headers" eval "[ $st = 200 ] &&
    [ \"\$(hdr '$tmp/out/z5' Content-Encoding)\" = zstd ] &&
    [ \"\$(hdr '$tmp/out/z5' Content-Length)\" = $z2size ]"

section 'curl: gzip, identity, ranges'
st=$(get "$H/buildid/$ID/debuginfo" "$tmp/out/g1" -H 'Accept-Encoding: gzip')
check "gzip alone: gzip, decodes to the file" eval "[ $st = 200 ] &&
    [ \"\$(hdr '$tmp/out/g1' Content-Encoding)\" = gzip ] &&
    gzip -d -c '$tmp/out/g1' | cmp -s - '$tmp/scan/inl.debug'"
get "$H/buildid/$ID/debuginfo" "$tmp/out/g2" \
    -H 'Accept-Encoding: zstd;q=0, *' >/dev/null
check "zstd;q=0 with *: gzip" \
    [ "$(hdr "$tmp/out/g2" Content-Encoding)" = gzip ]
st=$(get "$H/buildid/$ID/debuginfo" "$tmp/out/i1")
check "no Accept-Encoding: the file, with Vary" eval "[ $st = 200 ] &&
    [ -z \"\$(hdr '$tmp/out/i1' Content-Encoding)\" ] &&
    [ \"\$(hdr '$tmp/out/i1' Vary)\" = Accept-Encoding ] &&
    cmp -s '$tmp/out/i1' '$tmp/scan/inl.debug'"
get "$H/buildid/$ID/debuginfo" "$tmp/out/i2" -H 'Accept-Encoding: br' \
    >/dev/null
check "a coding the hub does not offer: the file" eval \
    "[ -z \"\$(hdr '$tmp/out/i2' Content-Encoding)\" ]"
st=$(get "$H/buildid/$ID/debuginfo" "$tmp/out/r1" -H 'Accept-Encoding: zstd' \
    -H 'Range: bytes=100-199')
check "a Range: 206 of the file itself" eval "[ $st = 206 ] &&
    [ -z \"\$(hdr '$tmp/out/r1' Content-Encoding)\" ] &&
    cmp -s '$tmp/out/r1' <(tail -c +101 '$tmp/scan/inl.debug' | head -c 100)"
st=$(get "$H/buildid/$ID_S/executable" "$tmp/out/s1" -H 'Accept-Encoding: zstd')
check "a file under --compress-min: as it is" eval "[ $st = 200 ] &&
    [ -z \"\$(hdr '$tmp/out/s1' Content-Encoding)\" ] &&
    cmp -s '$tmp/out/s1' '$tmp/scan/small'"
st=$(get "$H/buildid/$ID_N/executable" "$tmp/out/n1" -H 'Accept-Encoding: zstd')
check "a file that does not compress: as it is, once judged" eval \
    "[ $st = 200 ] && [ -z \"\$(hdr '$tmp/out/n1' Content-Encoding)\" ] &&
    cmp -s '$tmp/out/n1' '$tmp/scan/noisy' && [ \"\$(encoded zstd flat)\" = 1 ]"
get "$H/buildid/$ID_N/executable" "$tmp/out/n2" -H 'Accept-Encoding: zstd' \
    >/dev/null
check "and not compressed again" eval \
    "cmp -s '$tmp/out/n2' '$tmp/scan/noisy' && [ \"\$(encoded zstd flat)\" = 1 ]"
st=$(get "$H/buildid/$ID_N/executable" "$tmp/out/n3" -I \
    -H 'Accept-Encoding: gzip')
check "HEAD makes no copy" eval "[ $st = 200 ] &&
    [ \"\$(encoded gzip flat)\" = 0 ] && [ \"\$(encoded gzip stored)\" = 1 ]"

section 'libdebuginfod, gdb, LLVM, and elfutils federating to the hub'
DEBUGINFOD_CACHE_PATH=$tmp/dfc DEBUGINFOD_URLS=$H timeout 60 \
    debuginfod-find debuginfo "$ID_H" >"$tmp/out/df1" 2>&1
check "debuginfod-find: the file, byte for byte" \
    cmp -s "$(head -n 1 "$tmp/out/df1")" "$tmp/scan/hello"
check "sent zstd-coded (libcurl's Accept-Encoding)" eval \
    "grep 'GET /buildid/$ID_H/debuginfo ' '$tmp/hub.log' | tail -n 1 |
    grep -q 'hit zstd'"
DEBUGINFOD_CACHE_PATH=$tmp/gdbc DEBUGINFOD_URLS=$H \
    gdb_info_line "gdb: hello's line table, sent coded" "$tmp/b/hello" \
    "$tmp/src"
DEBUGINFOD_CACHE_PATH=$tmp/llvmc DEBUGINFOD_URLS=$H timeout 60 \
    llvm-debuginfod-find-19 --debuginfo "$ID" >"$tmp/out/llvm1" 2>&1
check "llvm-debuginfod-find-19: the file, byte for byte" \
    cmp -s "$(head -n 1 "$tmp/out/llvm1")" "$tmp/scan/inl.debug"
DEBUGINFOD_FED=$H start_debuginfod fed "" "$tmp/b/hello" ||
    fail "elfutils debuginfod federating to the hub starts"
DEBUGINFOD_CACHE_PATH=$tmp/dfc2 DEBUGINFOD_URLS=$DURL timeout 60 \
    debuginfod-find debuginfo "$ID" >"$tmp/out/df2" 2>&1
check "debuginfod-find through elfutils' debuginfod: the file" \
    cmp -s "$(head -n 1 "$tmp/out/df2")" "$tmp/scan/inl.debug"

section 'a file that changed'
cp "$tmp/scan/inl" "$tmp/b/inl.old"
strip -o "$tmp/scan/inl.new" "$tmp/scan/inl" &&
    mv "$tmp/scan/inl.new" "$tmp/scan/inl" || exit 99
rescan
get "$H/buildid/$ID/executable" "$tmp/out/c1" -H 'Accept-Encoding: zstd' \
    >/dev/null
check "the new bytes, coded anew" eval \
    "zstd -q -d -c '$tmp/out/c1' | cmp -s - '$tmp/scan/inl'"

section 'a stop while a large copy is made again'
# libc's debug file with its sections decompressed: ~10 MB, which zstd
# -19 takes seconds over on one core.
lid=$(buildid /lib/x86_64-linux-gnu/libc.so.6)
ldbg=/usr/lib/debug/.build-id/${lid:0:2}/${lid:2}.debug
if [ -f "$ldbg" ] &&
    objcopy --decompress-debug-sections "$ldbg" "$tmp/scan/libc.debug"; then
	rescan
	# The copies made again so far are done.
	wait_until 60 eval "metric_cmp symhub_encode_improve_queued -eq 0 &&
	    metric_cmp symhub_encode_improving -eq 0"
	n0=$(metric 'symhub_encode_improved_total{coding="zstd"}')
	get "$H/buildid/$lid/debuginfo" "$tmp/out/l1" \
	    -H 'Accept-Encoding: zstd' >/dev/null
	wait_until 20 metric_cmp symhub_encode_improving -eq 1
	if metric_cmp 'symhub_encode_improved_total{coding="zstd"}' -eq "$n0"
	then
		stop_symhubd "$H_PID"
		check "it ends at once, not when the copy is done ($exit_status)" \
		    [ "$exit_status" = 0 ]
	else
		skip_check "the copy was done before the stop"
		stop_symhubd "$H_PID"
	fi
else
	skip_check "no libc6-dbg debug file for libc"
	stop_symhubd "$H_PID"
fi

section 'a first copy from an earlier run, made again on its first use'
hub -d "$tmp/store4" -F "$tmp/scan" --compress-best-level 0 \
    --log-file "$tmp/hub4.log"
get "$URL/buildid/$ID/debuginfo" "$tmp/out/p1" -H 'Accept-Encoding: zstd' \
    >/dev/null
check "without a second pass: one copy, none made again" eval \
    "[ \"\$(encoded zstd stored)\" = 1 ] &&
    metric_cmp 'symhub_encode_improved_total{coding=\"zstd\"}' -eq 0 &&
    metric_cmp symhub_encode_improve_queued -eq 0"
stop_symhubd "$SYMHUBD_PID"
hub -d "$tmp/store4" -F "$tmp/scan" --log-file "$tmp/hub5.log"
get "$URL/buildid/$ID/debuginfo" "$tmp/out/p2" -H 'Accept-Encoding: zstd' \
    >/dev/null
check "restarted: the kept copy served, none made" eval \
    "cmp -s '$tmp/out/p1' '$tmp/out/p2' && [ \"\$(encoded zstd stored)\" = 0 ]"
check "and made again in the background" \
    wait_metric 'symhub_encode_improved_total{coding="zstd"}' -eq 1
get "$URL/buildid/$ID/debuginfo" "$tmp/out/p3" -H 'Accept-Encoding: zstd' \
    >/dev/null
check "then the smaller copy, not queued again" eval \
    "[ \$(file_size '$tmp/out/p3') -lt \$(file_size '$tmp/out/p2') ] &&
    metric_cmp symhub_encode_improve_queued -eq 0 &&
    metric_cmp symhub_encode_improving -eq 0 &&
    metric_cmp 'symhub_encode_improved_total{coding=\"zstd\"}' -eq 1"
stop_symhubd "$SYMHUBD_PID"

section '--compress none, and a store that cannot take the copy'
hub -d "$tmp/store" -F "$tmp/scan" --compress none --log-file "$tmp/hub2.log"
get "$URL/buildid/$ID/debuginfo" "$tmp/out/x1" -H 'Accept-Encoding: zstd' \
    >/dev/null
check "--compress none: the file, no Vary" eval \
    "cmp -s '$tmp/out/x1' '$tmp/scan/inl.debug' &&
    [ -z \"\$(hdr '$tmp/out/x1' Vary)\" ]"
stop_symhubd "$SYMHUBD_PID"
st=$("$SYMHUBD" -n --compress lzma 2>&1)
check "an unknown coding is refused at start" eval \
    "echo '$st' | grep -q 'compress: expected zstd, gzip or none'"
mnt=$tmp/mnt
mkdir -p "$mnt"
if mount -t tmpfs -o size=2m symhub-test "$mnt" 2>/dev/null; then
	MOUNTS+=("$mnt")
	hub -d "$mnt/store" -F "$tmp/scan" --log-file "$tmp/hub3.log"
	# Fill what is left, so no copy can be written.
	head -c 4M /dev/zero >"$mnt/filler" 2>/dev/null
	st=$(get "$URL/buildid/$ID/debuginfo" "$tmp/out/f1" \
	    -H 'Accept-Encoding: zstd')
	check "a full store: the file as it is ($st)" eval "[ $st = 200 ] &&
	    cmp -s '$tmp/out/f1' '$tmp/scan/inl.debug'"
	rm -f "$mnt/filler"
	get "$URL/buildid/$ID/debuginfo" "$tmp/out/f2" \
	    -H 'Accept-Encoding: zstd' >/dev/null
	check "room again: coded" eval \
	    "[ \"\$(hdr '$tmp/out/f2' Content-Encoding)\" = zstd ]"
	stop_symhubd "$SYMHUBD_PID"
else
	skip_check "a full store: cannot mount a tmpfs"
fi

finish
