#!/bin/bash
# Small files answered from memory (--hot-cache): the same bytes and
# headers as from the file, and never a file that changed, was replaced
# or is gone.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_hot.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc objcopy strip curl debuginfod-find

# get PATH OUT [CURL ARGS...]: GET, body in OUT, headers in OUT.hdr;
# prints the status.
get() {
	local path=$1 out=$2
	shift 2
	curl -s -m 30 -o "$out" -D "$out.hdr" -w '%{http_code}' "$@" "$URL$path"
}
hits() {
	metric symhub_hot_hits_total
}
# same_headers A B: the answers' headers but Date are the same.
same_headers() {
	cmp -s <(grep -vi '^date:' "$1.hdr") <(grep -vi '^date:' "$2.hdr")
}

section 'a hub over small files, and one past --hot-file-max'
mkdir -p "$tmp/src" "$tmp/scan" "$tmp/out" "$tmp/b"
cp "$FIXTURES/hello.c" "$FIXTURES/greet.c" "$FIXTURES/greet.h" "$tmp/src/"
(cd "$tmp/src" && gcc -g -O0 -o "$tmp/b/hello" hello.c greet.c &&
    gcc -g -O2 -o "$tmp/b/big" hello.c greet.c) || exit 99
objcopy --only-keep-debug "$tmp/b/hello" "$tmp/scan/hello.debug" &&
    strip -g -o "$tmp/scan/hello" "$tmp/b/hello" || exit 99
# big: a debug file made larger than --hot-file-max with a section of
# padding.
head -c 200000 /dev/zero >"$tmp/b/pad"
objcopy --only-keep-debug "$tmp/b/big" "$tmp/b/big.debug" &&
    objcopy --add-section .pad="$tmp/b/pad" "$tmp/b/big.debug" \
    "$tmp/scan/big.debug" || exit 99
ID=$(buildid "$tmp/scan/hello")
ID_B=$(buildid "$tmp/scan/big.debug")
TOKENS=$tmp/tokens
TOKEN=$(new_token ci upload,admin "$TOKENS") || exit 99
hub -d "$tmp/store" -F "$tmp/scan" -F "$tmp/src" --source-root "$tmp/src" \
    --hot-file-max 100k --tokens "$TOKENS" --log-file "$tmp/hub.log"

section 'the same answer from memory'
st=$(get "/buildid/$ID/debuginfo" "$tmp/out/a1")
check "first: 200, the file" eval "[ $st = 200 ] &&
    cmp -s '$tmp/out/a1' '$tmp/scan/hello.debug'"
h0=$(hits)
get "/buildid/$ID/debuginfo" "$tmp/out/a2" >/dev/null
check "second: from memory" metric_cmp symhub_hot_hits_total -eq $((h0 + 1))
check "the same bytes" cmp -s "$tmp/out/a2" "$tmp/scan/hello.debug"
check "the same headers (X-DEBUGINFOD-*, ETag, Last-Modified, ...)" \
    same_headers "$tmp/out/a1" "$tmp/out/a2"
st=$(get "/buildid/$ID/debuginfo" "$tmp/out/a3" -I)
check "HEAD from memory: its headers" eval "[ $st = 200 ] &&
    same_headers '$tmp/out/a1' '$tmp/out/a3'"
st=$(get "/buildid/$ID/debuginfo" "$tmp/out/a4" -H 'Range: bytes=10-19')
check "a Range: 206 of those bytes" eval "[ $st = 206 ] &&
    cmp -s '$tmp/out/a4' <(tail -c +11 '$tmp/scan/hello.debug' | head -c 10)"
tag=$(header "$tmp/out/a1.hdr" ETag)
st=$(get "/buildid/$ID/debuginfo" "$tmp/out/a5" -H "If-None-Match: $tag")
check "If-None-Match: 304" [ "$st" = 304 ]
st=$(get "/buildid/$ID/debuginfo" "$tmp/out/a6" -H 'X-DEBUGINFOD-MAXSIZE: 10')
check "over the client's X-DEBUGINFOD-MAXSIZE: 406" [ "$st" = 406 ]
get "/buildid/$ID/executable" "$tmp/out/e1" >/dev/null
get "/buildid/$ID/executable" "$tmp/out/e2" >/dev/null
check "the executable too" eval "cmp -s '$tmp/out/e2' '$tmp/scan/hello' &&
    same_headers '$tmp/out/e1' '$tmp/out/e2'"
get "/buildid/$ID/source$tmp/src/greet.c" "$tmp/out/s1" >/dev/null
h0=$(hits)
get "/buildid/$ID/source$tmp/src/greet.c" "$tmp/out/s2" >/dev/null
check "a source file too" eval "cmp -s '$tmp/out/s2' '$tmp/src/greet.c' &&
    metric_cmp symhub_hot_hits_total -eq $((h0 + 1))"
n=$(metric symhub_hot_entries)
get "/buildid/$ID_B/debuginfo" "$tmp/out/b1" >/dev/null
get "/buildid/$ID_B/debuginfo" "$tmp/out/b2" >/dev/null
check "a file past --hot-file-max is not kept, and served" eval \
    "[ \"\$(metric symhub_hot_entries)\" = $n ] &&
    cmp -s '$tmp/out/b2' '$tmp/scan/big.debug'"
DEBUGINFOD_CACHE_PATH=$tmp/dfc DEBUGINFOD_URLS=$URL timeout 30 \
    debuginfod-find debuginfo "$ID" >"$tmp/out/df" 2>&1
check "debuginfod-find: the file" \
    cmp -s "$(head -n 1 "$tmp/out/df")" "$tmp/scan/hello.debug"

section 'a file that changed, was replaced, or is gone'
# The source changed in place, the same size: a new mtime.
sed 's/greet/GREET/' "$tmp/src/greet.c" >"$tmp/b/greet.c"
cat "$tmp/b/greet.c" >"$tmp/src/greet.c"
touch -d '+1 minute' "$tmp/src/greet.c"
get "/buildid/$ID/source$tmp/src/greet.c" "$tmp/out/s3" >/dev/null
check "a source changed in place: the new bytes" \
    cmp -s "$tmp/out/s3" "$tmp/b/greet.c"
# The debug file replaced by another with the same build-id (a section
# more).
echo extra >"$tmp/b/extra"
objcopy --add-section .extra="$tmp/b/extra" "$tmp/scan/hello.debug" \
    "$tmp/b/hello.more" && mv "$tmp/b/hello.more" "$tmp/scan/hello.debug"
get "/buildid/$ID/debuginfo" "$tmp/out/c1" >/dev/null
check "a debug file replaced: the new one" \
    cmp -s "$tmp/out/c1" "$tmp/scan/hello.debug"
# A forced upload of the original replaces it.
objcopy --only-keep-debug "$tmp/b/hello" "$tmp/b/hello.debug"
st=$(curl -s -o /dev/null -w '%{http_code}' -X PUT \
    -H "Authorization: Bearer $TOKEN" --data-binary "@$tmp/b/hello.debug" \
    "$URL/buildid/$ID/debuginfo?force=1")
get "/buildid/$ID/debuginfo" "$tmp/out/u1" >/dev/null
check "an upload that replaced it ($st): the upload" \
    cmp -s "$tmp/out/u1" "$tmp/b/hello.debug"
get "/buildid/$ID/debuginfo" "$tmp/out/u2" >/dev/null
st=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE \
    -H "Authorization: Bearer $TOKEN" "$URL/buildid/$ID/debuginfo")
st2=$(get "/buildid/$ID/debuginfo" "$tmp/out/u3")
check "deleted ($st): no longer answered from memory ($st2)" eval \
    "[ $st2 != 200 ] || cmp -s '$tmp/out/u3' '$tmp/scan/hello.debug'"
rm -f "$tmp/scan/hello"
st=$(get "/buildid/$ID/executable" "$tmp/out/g1")
check "a scanned file removed: not answered from memory ($st)" \
    [ "$st" = 404 ]
stop_symhubd

section '--hot-cache 0'
hub -d "$tmp/store" -F "$tmp/scan" --hot-cache 0 --log-file "$tmp/hub2.log"
get "/buildid/$ID_B/debuginfo" "$tmp/out/z1" >/dev/null
get "/buildid/$ID_B/debuginfo" "$tmp/out/z2" >/dev/null
check "nothing kept, files served" eval \
    "[ -z \"\$(metric symhub_hot_hits_total)\" ] &&
    cmp -s '$tmp/out/z2' '$tmp/scan/big.debug'"
stop_symhubd

finish
