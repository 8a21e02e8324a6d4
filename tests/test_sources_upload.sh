#!/bin/bash
# Source bundles uploaded with the build (symhub upload --sources, PUT
# /buildid/ID/sources): a private build whose build tree is gone still
# has its sources, for debuginfod-find and gdb; hostile bundles are
# refused or their strange members dropped; bundles cross the gap with
# export and import, and come through a hub's upstream with prefetch.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_sources_upload.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy strip readelf cmp timeout awk sed ss python3 \
    debuginfod-find gdb
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"

section 'fixtures'
# A build tree of its own, with a header made by the build and deleted
# before the upload (a file the DWARF names that the builder cannot read).
B=$tmp/build/app
mkdir -p "$B/include" "$tmp"/{f,out,expect,gdb} || exit 99
cat >"$B/include/util.h" <<'EOF'
/* util.h: the header a debugger lists too */
static inline int twice(int x) { return x + x; }
int sum_to(int n);
EOF
cat >"$B/gen.h" <<'EOF'
static inline int generated(void) { return 0; }
EOF
cat >"$B/util.c" <<'EOF'
#include "util.h"
#include "gen.h"
int sum_to(int n) { int s = generated(); while (n > 0) s += n--; return s; }
EOF
cat >"$B/main.c" <<'EOF'
#include <stdio.h>
#include "util.h"
int
main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", sum_to(twice(argc)));	/* uploaded-source marker */
	return 0;
}
EOF
(cd "$B" && gcc -g -O0 -Iinclude -o "$tmp/f/app.full" main.c util.c) ||
    exit 99
objcopy --only-keep-debug "$tmp/f/app.full" "$tmp/f/app.debug" &&
    strip --strip-all -o "$tmp/f/app" "$tmp/f/app.full" || exit 99
cp "$B/main.c" "$B/util.c" "$B/include/util.h" "$tmp/expect/" || exit 99
rm "$B/gen.h"
ID=$(buildid "$tmp/f/app")
[ -n "$ID" ] || { echo "# fixtures: no build-id"; exit 99; }

TOKENS=$tmp/tokens
TOK=$(new_token ci upload "$TOKENS") || exit 99
TOK_ADM=$(new_token root admin "$TOKENS") || exit 99
echo "$TOK" >"$tmp/tok"
AUTH="Authorization: Bearer $TOK"

STORE=$tmp/store
hub -d "$STORE" --tokens "$TOKENS" --offline --bundle-max-files 40 \
    --bundle-max-unpacked 1M
URL1=$URL
HUB1=$SYMHUBD_PID

section 'upload --sources, then the build tree is gone'
"$SYMHUB" upload --url "$URL" --token-file "$tmp/tok" -e "$tmp/f/app" \
    -d "$tmp/f/app.debug" --sources >"$tmp/out/up" 2>"$tmp/out/up.err"
st=$?
[ "$st" = 0 ] && grep -q "^stored *sources *$ID" "$tmp/out/up"
verdict $? "upload --sources exits 0 and stores the bundle" \
    "exit $st" "$(cat "$tmp/out/up" "$tmp/out/up.err")"
grep -q "^unread *sources *$ID *$B/gen.h" "$tmp/out/up" &&
    grep -q "^sources: .* 1 named file could not be read" "$tmp/out/up"
verdict $? "the file the builder could not read is listed, not an error" \
    "$(cat "$tmp/out/up")"
rm -rf "$tmp/build"

# A relative path (newer clients, llvm-debuginfod-find) and the Firefox
# Profiler's /source/v1 find what the bundle holds too: asked first,
# so each is unpacked from the bundle on that request.
expect_get "a relative path finds the bundle's member" \
    "/buildid/$ID/source/util.c" 200 "$tmp/expect/util.c"
code=$(http /source/v1 "$tmp/out/v1" "$tmp/out/h" -X POST --data-binary \
    "{\"codeId\":\"$ID\",\"debugName\":\"app\",\"file\":\"$B/include/util.h\"}")
[ "$code" = 200 ] && python3 -c 'import json, sys
sys.exit(json.load(open(sys.argv[1]))["source"] != open(sys.argv[2]).read())' \
    "$tmp/out/v1" "$tmp/expect/util.h"
verdict $? "/source/v1 serves a header from the bundle ($code)" \
    "$(head -c 300 "$tmp/out/v1")"

client_env
for f in main.c util.c include/util.h; do
	client_file "debuginfod-find source $f (tree removed)" \
	    "$tmp/expect/${f#include/}" debuginfod-find source "$ID" "$B/$f"
done
code=$(http "/buildid/$ID/source$B/gen.h" "$tmp/out/b" "$tmp/out/h")
expect_status "the unread file is not served" 404 "$code" "$tmp/out/b"
code=$(http "/buildid/$ID/source/etc/passwd" "$tmp/out/b" "$tmp/out/h")
expect_status "a path the bundle does not hold is not served" 404 "$code"

client_env
cp "$tmp/f/app" "$tmp/gdb/app"
(cd "$tmp/gdb" && timeout 30 gdb -nx -batch \
    -iex 'set debuginfod enabled on' -ex 'list main' "$tmp/gdb/app") \
    >"$tmp/out/gdb" 2>&1
grep -q 'uploaded-source marker' "$tmp/out/gdb"
verdict $? "gdb list main shows the uploaded source" \
    "$(head -20 "$tmp/out/gdb")"

section 'again, and without a debuginfo'
"$SYMHUB" upload --url "$URL" --token-file "$tmp/tok" -e "$tmp/f/app" \
    -d "$tmp/f/app.debug" --sources >"$tmp/out/up2" 2>&1
# What is still readable (system headers) is sent; the hub keeps what it
# had: the build-id names one build, whose sources do not change.
grep -q "^same *sources *$ID" "$tmp/out/up2" &&
    grep -q "^unread *sources *$ID *$B/main.c" "$tmp/out/up2"
verdict $? "a re-run without the tree loses nothing: the same bundle" \
    "$(cat "$tmp/out/up2")"
client_env
client_file "debuginfod-find source main.c after the re-run" \
    "$tmp/expect/main.c" debuginfod-find source "$ID" "$B/main.c"

# Bundles made here, as a hostile or careless client would send them.
mkb() {	# mkb OUT SPEC...: NAME=TEXT, NAME<FILE, NAME@LINK, NAME%SIZE
	python3 - "$@" <<'EOF'
import io, sys, tarfile
out = sys.argv[1]
with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as t:
    for spec in sys.argv[2:]:
        i = min(spec.index(c) for c in "=@%<" if c in spec)
        name, op, arg = spec[:i], spec[i], spec[i + 1:]
        if op == "@":
            ti = tarfile.TarInfo(name); ti.type = tarfile.SYMTYPE
            ti.linkname = arg; t.addfile(ti)
        elif op == "<":
            data = open(arg, "rb").read()
            ti = tarfile.TarInfo(name); ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
        elif op == "%":
            data = b"x" * int(arg)
            ti = tarfile.TarInfo(name); ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
        else:
            data = arg.encode()
            ti = tarfile.TarInfo(name); ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
EOF
}
M=${B#/}/main.c
mkb "$tmp/f/good.tgz" "$M<$tmp/expect/main.c" || exit 99
S=/buildid/$ID/sources
code=$(put_file "$S" "$tmp/f/good.tgz" "$tmp/out/b" "$tmp/out/h" -H "$AUTH")
expect_status "a bundle of one member, as stored already: 200" 200 "$code" \
    "$tmp/out/b"
code=$(put_file "$S" "$tmp/f/good.tgz" "$tmp/out/b" "$tmp/out/h" -H "$AUTH")
[ "$code" = 200 ] && grep -q "already stored" "$tmp/out/b"
verdict $? "re-uploading the same bundle: 200, already stored" \
    "status $code: $(cat "$tmp/out/b")"
code=$(put_file "/buildid/0123456789abcdef0123456789abcdef01234567/sources" \
    "$tmp/f/good.tgz" "$tmp/out/b" "$tmp/out/h" -H "$AUTH")
[ "$code" = 422 ] && grep -q "no debuginfo" "$tmp/out/b"
verdict $? "a bundle for a build-id with no debuginfo: 422" \
    "status $code: $(cat "$tmp/out/b")"
code=$(put_file "$S" "$tmp/f/good.tgz" "$tmp/out/b" "$tmp/out/h")
expect_status "a bundle without a token: 401" 401 "$code" "$tmp/out/b"

section 'hostile bundles'
# refused DESC CODE WORDS SPEC...: the bundle is refused with CODE and an
# answer naming WORDS; main.c is still served as before.
refused() {
	local d=$1 want=$2 words=$3 code
	shift 3
	mkb "$tmp/f/bad.tgz" "$@" || exit 99
	code=$(put_file "$S" "$tmp/f/bad.tgz" "$tmp/out/b" "$tmp/out/h" \
	    -H "$AUTH")
	if [ "$code" != "$want" ] || ! grep -q "$words" "$tmp/out/b"; then
		fail "$d: $want" "status $code: $(cat "$tmp/out/b")"
		return
	fi
	code=$(http "/buildid/$ID/source$B/main.c" "$tmp/out/g" "$tmp/out/gh")
	if [ "$code" != 200 ] || ! cmp -s "$tmp/out/g" "$tmp/expect/main.c"
	then
		fail "$d: main.c no longer served as before" "status $code"
		return
	fi
	pass "$d: $want, $(head -c 90 "$tmp/out/b")"
}
refused "a .. member" 422 '\.\.' "$M=x" "${B#/}/../../../etc/passwd=root"
refused "an absolute member" 422 "absolute" "/$M=x"
refused "a symbolic link" 422 "symbolic link" "$M@/etc/passwd"
refused "too many members" 413 "more than 40 members" \
    $(for i in $(seq 41); do echo "x/$i.c=$i"; done)
refused "too big unpacked" 413 "more bytes than allowed" "$M%2000000"
head -c 3000 /dev/urandom >"$tmp/f/bad.tgz"
code=$(put_file "$S" "$tmp/f/bad.tgz" "$tmp/out/b" "$tmp/out/h" -H "$AUTH")
[ "$code" = 422 ] && grep -q "corrupt" "$tmp/out/b"
verdict $? "a corrupt bundle: 422" "status $code: $(cat "$tmp/out/b")"
# Members the DWARF does not name: dropped, said, and never served.
mkb "$tmp/f/extra.tgz" "$M<$tmp/expect/main.c" "${B#/}/evil.c=evil" "etc/shadow=x" ||
    exit 99
code=$(put_file "$S" "$tmp/f/extra.tgz" "$tmp/out/b" "$tmp/out/h" -H "$AUTH")
[ "$code" = 200 ] && grep -q "dropped 2 members the DWARF does not name" \
    "$tmp/out/b" && grep -q "$B/evil.c" "$tmp/out/b"
verdict $? "members the DWARF does not name are dropped, and named" \
    "status $code: $(cat "$tmp/out/b")"
code=$(http "/buildid/$ID/source$B/evil.c" "$tmp/out/g" "$tmp/out/gh")
expect_status "a dropped member is not served" 404 "$code"
code=$(http "/buildid/$ID/source/etc/shadow" "$tmp/out/g" "$tmp/out/gh")
expect_status "nor one outside the build" 404 "$code"

check "/metrics counts bundles stored, same and refused" eval \
    'metric_cmp "symhub_source_bundles_total{result=\"stored\"}" -ge 1 &&
    metric_cmp "symhub_source_bundles_total{result=\"same\"}" -ge 1 &&
    metric_cmp "symhub_source_bundles_total{result=\"refused\"}" -ge 7 &&
    metric_cmp "symhub_source_bundle_members_total{result=\"dropped\"}" -ge 2'

# A source changed under the same build-id: the new text wins.
printf '/* edited */\n' >"$tmp/f/edited.c"
mkb "$tmp/f/edit.tgz" "${B#/}/util.c<$tmp/f/edited.c" || exit 99
code=$(put_file "$S" "$tmp/f/edit.tgz" "$tmp/out/b" "$tmp/out/h" -H "$AUTH")
expect_status "a bundle with another text of a member: 200" 200 "$code" \
    "$tmp/out/b"
expect_get "the member uploaded last is served" "/buildid/$ID/source$B/util.c" \
    200 "$tmp/f/edited.c"
mkb "$tmp/f/back.tgz" "${B#/}/util.c<$tmp/expect/util.c" || exit 99
code=$(put_file "$S" "$tmp/f/back.tgz" "$tmp/out/b" "$tmp/out/h" -H "$AUTH")
expect_get "and back" "/buildid/$ID/source$B/util.c" 200 "$tmp/expect/util.c"

section 'prefetch --sources through a second hub'
hub -d "$tmp/store3" --upstream "$URL1"
URL3=$URL
"$SYMHUB" prefetch --url "$URL3" --sources "$ID" >"$tmp/out/pf" 2>&1
verdict $? "prefetch --sources exits 0" "$(tail -5 "$tmp/out/pf")"
HUB3=$SYMHUBD_PID
stop_symhubd "$HUB1"
SYMHUBD_PID=$HUB3
URL=$URL3
client_env
client_file "the prefetched source is served, its upstream stopped" \
    "$tmp/expect/util.h" debuginfod-find source "$ID" "$B/include/util.h"
stop_symhubd "$SYMHUBD_PID"
URL=$URL1

section 'export and import: sources cross the gap'
# The first hub is stopped: the far side has only what the tree carries.
"$SYMHUB" export "$STORE" "$tmp/tree" >"$tmp/out/ex" 2>&1
verdict $? "export exits 0" "$(tail -5 "$tmp/out/ex")"
[ -f "$tmp/tree/buildid/$ID/source$B/main.c" ]
verdict $? "the tree holds the uploaded sources" \
    "$(find "$tmp/tree" -type f | head)"
"$SYMHUB" import "$tmp/tree" "$tmp/store2" >"$tmp/out/im" 2>&1
verdict $? "import exits 0" "$(tail -5 "$tmp/out/im")"
hub -d "$tmp/store2" --offline
client_env
for f in main.c util.c include/util.h; do
	client_file "far side: debuginfod-find source $f, first hub stopped" \
	    "$tmp/expect/${f#include/}" debuginfod-find source "$ID" "$B/$f"
done

section 'evicted sources come back from the pinned bundle'
# A budget of 1 KiB evicts every source made from the bundle (they are
# not pinned); the bundle, pinned like every upload, makes them again.
stop_symhubd "$SYMHUBD_PID"
hub -d "$STORE" --offline --cache-max 1k
wait_metric symhub_cache_evictions_total -ge 3 15
verdict $? "the budget evicted the sources" \
    "evictions $(metric symhub_cache_evictions_total)"
client_env
for f in main.c include/util.h; do
	client_file "debuginfod-find source $f after eviction" \
	    "$tmp/expect/${f#include/}" debuginfod-find source "$ID" "$B/$f"
done
check "they were made again from the bundle" \
    metric_cmp symhub_source_bundle_expanded_total -ge 2

section 'deleting a bundle'
# No budget now: the sources made from the bundle stay until deleted.
stop_symhubd "$SYMHUBD_PID"
hub -d "$STORE" --offline --tokens "$TOKENS"
expect_get "main.c is served before" "/buildid/$ID/source$B/main.c" 200 \
    "$tmp/expect/main.c"
code=$(http "/buildid/$ID/sources" "$tmp/out/b" "$tmp/out/h" -X DELETE \
    -H "Authorization: Bearer $TOK_ADM")
expect_status "DELETE /buildid/ID/sources with an admin token" 200 "$code" \
    "$tmp/out/b"
expect_get "and none of its sources is served after" \
    "/buildid/$ID/source$B/main.c" 404

section 'a source is served with its own mtime, never after its build'
# gdb warns "Source file is more recent than executable" when the source
# it gets is newer than the debuginfo (libdebuginfod gives each file it
# keeps the Last-Modified it was served with).  The debuginfo goes first;
# the sources an hour later (on the test clock: later runs of a CI job
# add them), from a checkout older than the build, with one header
# dated in the future that must not come out later than the debuginfo.
test_clock_built && clock_init
T=$tmp/build2/mt
mkdir -p "$T" "$tmp/f2" "$tmp/gdb2" || exit 99
cat >"$T/mt.h" <<'EOF'
static inline int mt_twice(int x) { return 2 * x; }
EOF
cat >"$T/mt.c" <<'EOF'
#include "mt.h"
int
mt_func(int n)
{
	return mt_twice(n) + 1;	/* dated-source marker */
}
int main(int argc, char **argv) { (void)argv; return mt_func(argc); }
EOF
touch -d '2021-03-04 05:06:07 UTC' "$T/mt.c" &&
    touch -d '2099-01-01 00:00:00 UTC' "$T/mt.h" || exit 99
(cd "$T" && gcc -g -O0 -o "$tmp/f2/mt.full" mt.c) || exit 99
objcopy --only-keep-debug "$tmp/f2/mt.full" "$tmp/f2/mt.debug" &&
    strip --strip-all -o "$tmp/f2/mt" "$tmp/f2/mt.full" || exit 99
cp "$T/mt.c" "$tmp/expect/mt.c" || exit 99
MID=$(buildid "$tmp/f2/mt")
hub -d "$tmp/store4" --tokens "$TOKENS" --offline
"$SYMHUB" upload --url "$URL" --token-file "$tmp/tok" -e "$tmp/f2/mt" \
    -d "$tmp/f2/mt.debug" >"$tmp/out/mt1" 2>&1
verdict $? "upload of the build, without its sources" "$(cat "$tmp/out/mt1")"
test_clock_built && clock_step 3600
"$SYMHUB" upload --url "$URL" --token-file "$tmp/tok" -e "$tmp/f2/mt" \
    -d "$tmp/f2/mt.debug" --sources >"$tmp/out/mt2" 2>&1
grep -q "^stored *sources *$MID" "$tmp/out/mt2"
verdict $? "then its sources, later" "$(cat "$tmp/out/mt2")"
rm -rf "$tmp/build2"

code=$(http "/buildid/$MID/debuginfo" "$tmp/out/b" "$tmp/out/dh")
DLM=$(header "$tmp/out/dh" Last-Modified)
[ "$code" = 200 ] && [ -n "$DLM" ]
verdict $? "the debuginfo has a Last-Modified" "status $code, '$DLM'"
code=$(http "/buildid/$MID/source$T/mt.c" "$tmp/out/b" "$tmp/out/h")
got=$(header "$tmp/out/h" Last-Modified)
[ "$code" = 200 ] && [ "$got" = "Thu, 04 Mar 2021 05:06:07 GMT" ]
verdict $? "a member is served with the file's own mtime" \
    "status $code, Last-Modified '$got'"
code=$(http "/buildid/$MID/source$T/mt.h" "$tmp/out/b" "$tmp/out/h")
got=$(header "$tmp/out/h" Last-Modified)
[ "$code" = 200 ] && [ "$got" = "$DLM" ]
verdict $? "a member dated later than its debuginfo gets the debuginfo's" \
    "status $code, Last-Modified '$got', debuginfo '$DLM'"

# The Firefox Profiler's /source/v1 says when the symbols and the source
# were made (samply's ISO 8601 strings): the upload's time and the
# file's own.
code=$(http /source/v1 "$tmp/out/v1mt" "$tmp/out/h" -X POST --data-binary \
    "{\"codeId\":\"$MID\",\"debugName\":\"mt\",\"file\":\"$T/mt.c\"}")
[ "$code" = 200 ] && python3 - "$tmp/out/v1mt" "$DLM" <<'EOF'
import json, sys
from email.utils import parsedate_to_datetime
a = json.load(open(sys.argv[1]))
want = parsedate_to_datetime(sys.argv[2]).strftime("%Y-%m-%dT%H:%M:%SZ")
assert a["symbolsLastModified"] == want, (a["symbolsLastModified"], want)
assert a["sourceLastModified"] == "2021-03-04T05:06:07Z", a
EOF
verdict $? "/source/v1 gives the upload's time as symbolsLastModified" \
    "status $code: $(head -c 200 "$tmp/out/v1mt")"

client_env
f=$(timeout 30 debuginfod-find source "$MID" "$T/mt.c" 2>"$tmp/out/err")
expect_file "debuginfod-find source of the dated file" "$f" \
    "$tmp/expect/mt.c"
got=$(stat -c %Y "$f" 2>/dev/null)
[ "$got" = "$(date -d '2021-03-04 05:06:07 UTC' +%s)" ]
verdict $? "debuginfod-find's copy has the file's mtime" "mtime '$got'"
cp "$tmp/f2/mt" "$tmp/gdb2/mt"
(cd "$tmp/gdb2" && timeout 30 gdb -nx -batch \
    -iex 'set debuginfod enabled on' -ex 'list mt_func' "$tmp/gdb2/mt") \
    >"$tmp/out/gdb2" 2>&1
grep -q 'dated-source marker' "$tmp/out/gdb2"
verdict $? "gdb list mt_func shows the uploaded source" \
    "$(head -20 "$tmp/out/gdb2")"
! grep -qi "more recent" "$tmp/out/gdb2"
verdict $? "gdb does not warn that the source is more recent" \
    "$(grep -i "more recent" "$tmp/out/gdb2")"
(cd "$tmp/gdb2" && timeout 30 gdb -nx -batch \
    -iex 'set debuginfod enabled on' -ex "list $T/mt.h:1" \
    "$tmp/gdb2/mt") >"$tmp/out/gdb3" 2>&1
grep -q 'mt_twice' "$tmp/out/gdb3" && ! grep -qi "more recent" "$tmp/out/gdb3"
verdict $? "nor for the header dated in the future" "$(head -20 "$tmp/out/gdb3")"
stop_symhubd "$SYMHUBD_PID"

section 'relative compilation directories (Debian: -fdebug-prefix-map=$PWD=.)'
# The DWARF names "./sub/rel.c" under DW_AT_comp_dir "./sub": relative
# to the build's root, where `symhub upload --sources` runs; the hub, its
# /source/v1 and relative requests name it "sub/rel.c".
R=$tmp/build3
mkdir -p "$R/sub" "$R/inc" "$tmp/f3" || exit 99
printf 'static inline int rel_h(int x) { return x - 1; }\n' >"$R/inc/rel.h"
printf '#include "../inc/rel.h"\nint\nmain(int c, char **v)\n{\n\t(void)v;\n\treturn rel_h(c);\t/* relative-dir marker */\n}\n' \
    >"$R/sub/rel.c"
cp "$R/sub/rel.c" "$tmp/expect/rel.c" && cp "$R/inc/rel.h" "$tmp/expect/rel.h" ||
    exit 99
(cd "$R/sub" && gcc -g -O0 -fdebug-prefix-map="$R"=. -o "$tmp/f3/rel" rel.c) ||
    exit 99
readelf --debug-dump=info "$tmp/f3/rel" 2>/dev/null |
    grep -q 'DW_AT_comp_dir.*: \./sub$' || exit 99
RID=$(buildid "$tmp/f3/rel")
hub -d "$tmp/store5" --tokens "$TOKENS" --offline
(cd "$R" && "$SYMHUB" upload --url "$URL" --token-file "$tmp/tok" \
    --sources "$tmp/f3/rel") >"$tmp/out/rel" 2>&1
grep -q "^stored *sources *$RID" "$tmp/out/rel" &&
    grep -q "^sources: 2 files" "$tmp/out/rel"
verdict $? "upload --sources reads the relative names under the build root" \
    "$(cat "$tmp/out/rel")"
rm -rf "$R"
expect_get "a relative request finds the file in the bundle" \
    "/buildid/$RID/source/sub/rel.c" 200 "$tmp/expect/rel.c"
expect_get "and the header, ../ resolved as DWARF says" \
    "/buildid/$RID/source/inc/rel.h" 200 "$tmp/expect/rel.h"
code=$(http /source/v1 "$tmp/out/v1rel" "$tmp/out/h" -X POST --data-binary \
    "{\"codeId\":\"$RID\",\"debugName\":\"rel\",\"file\":\"sub/rel.c\"}")
[ "$code" = 200 ] && python3 -c 'import json, sys
sys.exit(json.load(open(sys.argv[1]))["source"] != open(sys.argv[2]).read())' \
    "$tmp/out/v1rel" "$tmp/expect/rel.c"
verdict $? "/source/v1 names a file under a relative comp_dir ($code)" \
    "$(head -c 300 "$tmp/out/v1rel")"

# libc6-dbg: Debian's glibc records DW_AT_comp_dir "./csu" and the like.
# Its sources are not here: a tree of our own stands for them.
LIBC=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null)
LID=$( [ -n "$LIBC" ] && buildid "$LIBC")
LDBG=/usr/lib/debug/.build-id/${LID:0:2}/${LID:2}.debug
if [ -n "$LID" ] && [ -f "$LDBG" ] &&
    readelf --debug-dump=info "$LDBG" 2>/dev/null |
    grep -q 'DW_AT_comp_dir.*: \./csu$'; then
	G=$tmp/glibc
	mkdir -p "$G/csu" || exit 99
	printf '/* stands for glibc csu/version.c */\n' >"$G/csu/version.c"
	cp "$G/csu/version.c" "$tmp/expect/version.c"
	(cd "$G" && "$SYMHUB" upload --url "$URL" --token-file "$tmp/tok" \
	    --sources -q "$LDBG") >"$tmp/out/libc" 2>&1
	# -q: the summary (the debuginfo and its bundle) and unread lines.
	grep -q "^2 stored" "$tmp/out/libc" &&
	    ! grep -q "unread .*csu/version.c" "$tmp/out/libc"
	verdict $? "libc6-dbg: upload --sources finds ./csu/version.c" \
	    "$(grep -v '^unread' "$tmp/out/libc" | tail -5)"
	code=$(http /source/v1 "$tmp/out/v1libc" "$tmp/out/h" -X POST \
	    --data-binary "{\"codeId\":\"$LID\",\"debugName\":\"libc.so.6\",\
\"file\":\"csu/version.c\"}")
	[ "$code" = 200 ] && python3 -c 'import json, sys
sys.exit(json.load(open(sys.argv[1]))["source"] != open(sys.argv[2]).read())' \
	    "$tmp/out/v1libc" "$tmp/expect/version.c"
	verdict $? "libc6-dbg: /source/v1 serves csu/version.c ($code)" \
	    "$(head -c 300 "$tmp/out/v1libc")"
else
	skip_check "libc6-dbg's relative comp_dirs" "libc6-dbg not installed"
fi
stop_symhubd "$SYMHUBD_PID"

finish
