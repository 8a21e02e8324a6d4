#!/bin/bash
# HTTP niceties on artifacts: Range (206, 416) for resumable downloads,
# ETag with If-None-Match and If-Modified-Since (304), If-Range, and
# X-DEBUGINFOD-IMASIGNATURE passed on from an upstream and kept.  For a
# scanned file (ETag from its identity), a file fetched from elfutils'
# debuginfod (ETag from its SHA-256), and a section.  The clients are curl,
# including its resume (-C -), and wget -c where installed.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_http.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc objcopy strip curl debuginfod python3 sha256sum
BADUPSTREAM=$top_srcdir/tests/badupstream.py

section 'fixtures, an upstream and the hub'
mkdir -p "$tmp/src" "$tmp/scan" "$tmp/up" "$tmp/ima" "$tmp/out"
cp "$FIXTURES/hello.c" "$FIXTURES/greet.c" "$FIXTURES/greet.h" "$tmp/src/"
(cd "$tmp/src" && gcc -g -O0 -o "$tmp/scan/prog1" hello.c greet.c &&
    gcc -g -O1 -o "$tmp/up/prog2" hello.c greet.c &&
    gcc -g -O2 -o "$tmp/ima/prog3" hello.c greet.c) || exit 99
ID1=$(buildid "$tmp/scan/prog1")
ID2=$(buildid "$tmp/up/prog2")
ID3=$(buildid "$tmp/ima/prog3")
F1=$tmp/scan/prog1
F2=$tmp/up/prog2
SIZE1=$(stat -c %s "$F1")
if ! start_debuginfod up "" "$tmp/up" ||
    ! wait_http 30 "$DURL/buildid/$ID2/debuginfo" 200; then
	fail "debuginfod serves prog2" "$(tail -n 5 "$tmp/up.log")"
	finish
fi
UP=$DURL
start_badupstream ima ima "$tmp/ima/prog3" ||
    fail "badupstream.py ima starts"
hub -d "$tmp/store" -F "$tmp/scan" -u "$UP name=up" -u "$BURL name=ima" \
    --log-file "$tmp/hub.log"

# get URL OUT [CURL-ARGS...]: body to OUT, headers to OUT.hdr; sets code.
get() {
	local u=$1 out=$2
	shift 2
	code=$(curl -s -o "$out" -D "$out.hdr" -w '%{http_code}' "$@" "$u")
}
hdr() {
	header "$1.hdr" "$2"
}
# slice FILE OFF LEN: those bytes of FILE.
slice() {
	tail -c +"$(($2 + 1))" "$1" | head -c "$3"
}

for what in "scanned|$ID1|$F1" "fetched|$ID2|$F2"; do
	IFS='|' read -r name id file <<<"$what"
	size=$(stat -c %s "$file")
	u=$URL/buildid/$id/executable

	section "$name: ETag and conditional requests"
	# A miss is answered while the file is stored, before it is hashed:
	# that first answer has no ETag; every later one has.
	get "$u" "$tmp/out/$name.0"
	check "$name: 200 with the file, first" eval "[ $code = 200 ] &&
	    cmp -s '$tmp/out/$name.0' '$file'"
	wait_until 20 eval "curl -s -D - -o /dev/null '$u' | grep -qi '^etag:'"
	get "$u" "$tmp/out/$name"
	etag=$(hdr "$tmp/out/$name" ETag)
	lm=$(hdr "$tmp/out/$name" Last-Modified)
	check "$name: 200 with the file" eval "[ $code = 200 ] &&
	    cmp -s '$tmp/out/$name' '$file'"
	check "$name: an ETag ($etag)" eval "[[ '$etag' =~ ^\\\"[0-9a-f-]+\\\"\$ ]]"
	check "$name: Accept-Ranges: bytes" \
	    [ "$(hdr "$tmp/out/$name" Accept-Ranges)" = bytes ]
	if [ "$name" = fetched ]; then
		want=\"$(sha256sum "$file" | cut -c1-32)\"
		check "$name: the ETag is its SHA-256" [ "$etag" = "$want" ]
	fi
	get "$u" "$tmp/out/$name.2"
	check "$name: the same ETag again" \
	    [ "$(hdr "$tmp/out/$name.2" ETag)" = "$etag" ]
	get "$u" "$tmp/out/$name.inm" -H "If-None-Match: $etag"
	check "$name: If-None-Match with it: 304, no body" eval "[ $code = 304 ] &&
	    [ ! -s '$tmp/out/$name.inm' ] &&
	    [ \"\$(header '$tmp/out/$name.inm.hdr' ETag)\" = '$etag' ]"
	get "$u" "$tmp/out/$name.inm2" -H "If-None-Match: \"x\", W/$etag"
	check "$name: in a list, weak: 304" [ "$code" = 304 ]
	get "$u" "$tmp/out/$name.inm3" -H 'If-None-Match: "other"'
	check "$name: another tag: 200 with the file" eval "[ $code = 200 ] &&
	    cmp -s '$tmp/out/$name.inm3' '$file'"
	get "$u" "$tmp/out/$name.ims" -H "If-Modified-Since: $lm"
	check "$name: If-Modified-Since Last-Modified: 304" [ "$code" = 304 ]
	get "$u" "$tmp/out/$name.ims2" \
	    -H "If-Modified-Since: Thu, 01 Jan 1998 00:00:00 GMT"
	check "$name: If-Modified-Since long ago: 200" [ "$code" = 200 ]

	section "$name: ranges"
	get "$u" "$tmp/out/$name.r1" -r 100-1123
	check "$name: bytes=100-1123: 206 with those bytes" eval "[ $code = 206 ] &&
	    cmp -s '$tmp/out/$name.r1' <(slice '$file' 100 1024)"
	check "$name: Content-Range" [ "$(hdr "$tmp/out/$name.r1" \
	    Content-Range)" = "bytes 100-1123/$size" ]
	check "$name: X-DEBUGINFOD-SIZE is the whole file's" \
	    [ "$(hdr "$tmp/out/$name.r1" X-DEBUGINFOD-SIZE)" = "$size" ]
	check "$name: Content-Length is the range's" \
	    [ "$(hdr "$tmp/out/$name.r1" Content-Length)" = 1024 ]
	get "$u" "$tmp/out/$name.r2" -r 1000-
	check "$name: bytes=1000-: to the end" eval "[ $code = 206 ] &&
	    cmp -s '$tmp/out/$name.r2' <(tail -c +1001 '$file')"
	get "$u" "$tmp/out/$name.r3" -r -77
	check "$name: bytes=-77: the last 77" eval "[ $code = 206 ] &&
	    cmp -s '$tmp/out/$name.r3' <(tail -c 77 '$file')"
	get "$u" "$tmp/out/$name.r4" -r "$((size - 1))-$((size + 5000))"
	check "$name: past the end is cut to it" eval "[ $code = 206 ] &&
	    [ \"\$(stat -c %s '$tmp/out/$name.r4')\" = 1 ]"
	get "$u" "$tmp/out/$name.r5" -r "$size-"
	check "$name: starting at the end: 416, bytes */SIZE" eval \
	    "[ $code = 416 ] && [ \"\$(header '$tmp/out/$name.r5.hdr' \
	    Content-Range)\" = 'bytes */$size' ]"
	get "$u" "$tmp/out/$name.r6" -r 0-9,20-29
	check "$name: several ranges: the whole file, 200" eval \
	    "[ $code = 200 ] && cmp -s '$tmp/out/$name.r6' '$file'"
	get "$u" "$tmp/out/$name.r7" -H 'Range: lines=1-2'
	check "$name: another unit: the whole file, 200" [ "$code" = 200 ]
	get "$u" "$tmp/out/$name.r8" -r 0-9 -H "If-Range: $etag"
	check "$name: If-Range with the ETag: 206" [ "$code" = 206 ]
	get "$u" "$tmp/out/$name.r9" -r 0-9 -H 'If-Range: "changed"'
	check "$name: If-Range with another: the whole file, 200" eval \
	    "[ $code = 200 ] && cmp -s '$tmp/out/$name.r9' '$file'"
	code=$(curl -s -o /dev/null -I -w '%{http_code}' -r 0-9 "$u")
	check "$name: HEAD with a range: 206" [ "$code" = 206 ]

	section "$name: a download cut short resumes"
	head -c $((size / 3)) "$file" >"$tmp/out/$name.part"
	curl -s -C - -o "$tmp/out/$name.part" "$u"
	check "curl -C -: the whole file" cmp -s "$tmp/out/$name.part" "$file"
	if command -v wget >/dev/null; then
		head -c $((size / 2)) "$file" >"$tmp/out/$name.wget"
		wget -q -c -O "$tmp/out/$name.wget" "$u"
		check "wget -c: the whole file" cmp -s "$tmp/out/$name.wget" \
		    "$file"
	fi
done

section 'a section: a range of it'
extract_section "$F1" .text "$tmp/out/text" || exit 99
# The first answer is cut from the file now, and sent whole.
get "$URL/buildid/$ID1/section/.text" "$tmp/out/sec0" -r 16-47
check "cut now: 200 with all of .text" eval "[ $code = 200 ] &&
    cmp -s '$tmp/out/sec0' '$tmp/out/text'"
get "$URL/buildid/$ID1/section/.text" "$tmp/out/sec" -r 16-47
check "206 with those bytes of .text" eval "[ $code = 206 ] &&
    cmp -s '$tmp/out/sec' <(slice '$tmp/out/text' 16 32)"

section 'X-DEBUGINFOD-IMASIGNATURE from an upstream, kept'
sig=030204$(sha256sum "$tmp/ima/prog3" | cut -d' ' -f1)
get "$URL/buildid/$ID3/executable" "$tmp/out/ima"
check "the first answer carries it" eval "[ $code = 200 ] &&
    [ \"\$(hdr '$tmp/out/ima' X-DEBUGINFOD-IMASIGNATURE)\" = '$sig' ]"
# It is stored after that answer; stored, it has an ETag.
check "it is stored" wait_until 20 eval "curl -s -D - -o /dev/null \
    '$URL/buildid/$ID3/executable' | grep -qi '^etag:'"
stop_symhubd "$SYMHUBD_PID"
hub -d "$tmp/store" --log-file "$tmp/hub2.log"
get "$URL/buildid/$ID3/executable" "$tmp/out/ima2"
check "after a restart with no upstream, from the store" eval \
    "[ $code = 200 ] && cmp -s '$tmp/out/ima2' '$tmp/ima/prog3' &&
    [ \"\$(hdr '$tmp/out/ima2' X-DEBUGINFOD-IMASIGNATURE)\" = '$sig' ]"
get "$URL/buildid/$ID3/executable" "$tmp/out/ima3" -r 0-99
check "and on a range of it" \
    [ "$(hdr "$tmp/out/ima3" X-DEBUGINFOD-IMASIGNATURE)" = "$sig" ]

stop_check "the hub stops cleanly"
finish
