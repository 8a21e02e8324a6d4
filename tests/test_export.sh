#!/bin/bash
# symhub export and import: a store written as the tree stock clients
# read through file:// (elfutils' debuginfod-find, LLVM's
# llvm-debuginfod-find) and a static web server serves, with a manifest
# that verifies it; a second export writes only what changed; a rotten
# blob is reported, not copied.  The tree imported into another store,
# its hub running or not, every file verified; a tree that lies refused.
# With --source-root the sources an exported debuginfo names under the
# root cross too (prog2's, uploaded without them), and an offline hub on
# the imported store serves them.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_export.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc objcopy curl debuginfod-find llvm-debuginfod-find-19 python3 \
    sha256sum

section 'fixtures: a scanned program with its sources, an uploaded one'
mkdir -p "$tmp/src" "$tmp/scan" "$tmp/up" "$tmp/out"
cp "$FIXTURES/hello.c" "$FIXTURES/greet.c" "$FIXTURES/greet.h" "$tmp/src/"
(cd "$tmp/src" && gcc -g -O0 -o "$tmp/scan/prog1" hello.c greet.c &&
    gcc -g -O1 -o "$tmp/up/prog2" hello.c greet.c) || exit 99
objcopy --only-keep-debug "$tmp/up/prog2" "$tmp/up/prog2.debug" || exit 99
ID1=$(buildid "$tmp/scan/prog1")
ID2=$(buildid "$tmp/up/prog2")
TOKENS=$tmp/tokens
TOK=$(new_token ci upload "$TOKENS") || exit 99
hub -d "$tmp/store" -F "$tmp/scan" --source-root "$tmp/src" \
    --tokens "$TOKENS"
"$SYMHUB" upload --url "$URL" --token "$TOK" -q -e "$tmp/up/prog2" \
    -d "$tmp/up/prog2.debug" >"$tmp/out/up" 2>&1
check "prog2 uploaded" [ $? = 0 ]

EXP=$tmp/exp
export_to() {
	"$SYMHUB" export "$@" >"$tmp/out/exp" 2>"$tmp/out/exp.err"
}

section 'an export, while the hub runs'
export_to "$tmp/store" "$EXP"
check "exit 0" [ $? = 0 ]
check "7 files: prog1's debuginfo, executable, 3 sources; prog2's two" \
    grep -q "^7 written ([0-9]* bytes), 0 unchanged, 0 failed\$" \
    "$tmp/out/exp"
B1=$EXP/buildid/$ID1
check "the tree: buildid/ID/{debuginfo,executable,source/PATH}" \
    eval '[ -f "$B1/debuginfo" ] && [ -f "$B1/executable" ] &&
    [ -f "$B1/source$tmp/src/greet.c" ] &&
    [ -f "$EXP/buildid/$ID2/debuginfo" ]'
bad=$(tail -n +2 "$EXP/manifest.tsv" | while IFS=$'\t' read -r id k size sha o p
do
	f=$EXP/buildid/$id/$k
	[ "$k" = source ] && f=$EXP/buildid/$id/source$p
	[ "$(sha256sum <"$f" | cut -d' ' -f1)" = "$sha" ] &&
	    [ "$(file_size "$f")" = "$size" ] || echo "$id $k $p"
done)
check "every manifest line matches its file's SHA-256 and size" [ -z "$bad" ]
FID2=$("$SYMHUB" fileid "$tmp/up/prog2")
check "the FileID map of prog2's upload, in fileids.tsv" \
    grep -qx "$FID2	$ID2" "$EXP/fileids.tsv"
check "the manifest keeps origins: scan, and upload by token ci" \
    eval 'grep -q "^$ID1	debuginfo	.*	scan	-\$" "$EXP/manifest.tsv" &&
    grep -q "^$ID2	debuginfo	.*	upload:ci	-\$" "$EXP/manifest.tsv"'

section 'clients read it through file://'
client_env
export DEBUGINFOD_URLS=file://$EXP
client_file "debuginfod-find: prog1 debuginfo" "$tmp/scan/prog1" \
    debuginfod-find debuginfo "$ID1"
client_file "debuginfod-find: prog1 source greet.c" "$tmp/src/greet.c" \
    debuginfod-find source "$ID1" "$tmp/src/greet.c"
client_file "debuginfod-find: prog2 debuginfo (uploaded)" \
    "$tmp/up/prog2.debug" debuginfod-find debuginfo "$ID2"
client_file "debuginfod-find: prog2 executable (uploaded)" "$tmp/up/prog2" \
    debuginfod-find executable "$ID2"
client_file "llvm-debuginfod-find-19: prog1 debuginfo" "$tmp/scan/prog1" \
    llvm-debuginfod-find-19 --debuginfo "$ID1"
client_file "llvm-debuginfod-find-19: prog1 source hello.c" \
    "$tmp/src/hello.c" llvm-debuginfod-find-19 --source="$tmp/src/hello.c" \
    "$ID1"

section 'a static web server serves it'
# Another port when someone took this one between free_port and bind.
for try in 1 2 3 4 5; do
	WPORT=$(free_port)
	(cd "$EXP" && exec python3 -m http.server --bind 127.0.0.1 "$WPORT") \
	    >"$tmp/web.log" 2>&1 &
	WPID=$!
	PIDS+=("$WPID")
	wait_until 20 eval "[ \"\$(http_code \
	    'http://127.0.0.1:$WPORT/manifest.tsv')\" = 200 ] || ! alive $WPID"
	alive "$WPID" || ! grep -q 'Address already in use' "$tmp/web.log" ||
	    continue
	break
done
if wait_http 20 "http://127.0.0.1:$WPORT/manifest.tsv" 200; then
	client_env
	export DEBUGINFOD_URLS=http://127.0.0.1:$WPORT
	client_file "debuginfod-find over HTTP: prog2 debuginfo" \
	    "$tmp/up/prog2.debug" debuginfod-find debuginfo "$ID2"
else
	fail "python3 -m http.server serves the tree" "$(cat "$tmp/web.log")"
fi
kill -TERM "$WPID"
wait_exit "$WPID" 10

section 'again: only what changed is written'
stat -c '%n %Y %i' "$B1/debuginfo" "$EXP/buildid/$ID2/debuginfo" \
    >"$tmp/before"
export_to "$tmp/store" "$EXP"
check_exit "a second export writes nothing" 0 $? \
    grep -q "^0 written (0 bytes), 7 unchanged, 0 failed\$" "$tmp/out/exp"
stat -c '%n %Y %i' "$B1/debuginfo" "$EXP/buildid/$ID2/debuginfo" \
    >"$tmp/after"
check "... and leaves the files as they were" cmp -s "$tmp/before" \
    "$tmp/after"
echo "/* changed */" >>"$tmp/src/greet.h"
rescan || fail "a rescan after a source changed"
export_to "$tmp/store" "$EXP"
check "a changed source: 1 written, 6 unchanged" \
    grep -q "^1 written ([0-9]* bytes), 6 unchanged, 0 failed\$" \
    "$tmp/out/exp"
check "... with its new bytes" cmp -s "$B1/source$tmp/src/greet.h" \
    "$tmp/src/greet.h"

section 'selections'
export_to --kind executable "$tmp/store" "$tmp/exp-exe"
check "--kind executable: the two executables" \
    eval '[ "$(find "$tmp/exp-exe/buildid" -type f | wc -l)" = 2 ] &&
    [ -f "$tmp/exp-exe/buildid/$ID1/executable" ]'
export_to --origin upload "$tmp/store" "$tmp/exp-up"
check "--origin upload: prog2's two files" \
    eval '[ "$(find "$tmp/exp-up/buildid" -type f | wc -l)" = 2 ] &&
    [ -d "$tmp/exp-up/buildid/$ID2" ] && [ ! -d "$tmp/exp-up/buildid/$ID1" ]'
export_to -q --build-id "$ID1" --kind source "$tmp/store" "$tmp/exp-src"
check "--build-id and --kind source: prog1's 3 sources, quietly" \
    eval '[ "$(find "$tmp/exp-src/buildid" -type f | wc -l)" = 3 ] &&
    [ "$(cat "$tmp/out/exp")" = "3 written ($(cat "$tmp/src/hello.c" \
    "$tmp/src/greet.c" "$tmp/src/greet.h" | wc -c) bytes), 0 unchanged, 0 failed" ]'
export_to --kind gsym "$tmp/store" "$tmp/exp-bad"
check "--kind gsym is a usage error (exit 2)" [ $? = 2 ]
export_to "$tmp/store"
check "no DIR: exit 2" [ $? = 2 ]
stop_check "the hub stops"

section 'a rotten blob is reported, not exported'
blob=$(find "$tmp/store/blobs" -type f -size +1k | head -1)
printf 'X' | dd of="$blob" bs=1 seek=100 conv=notrunc 2>/dev/null
export_to "$tmp/store" "$tmp/exp-rot"
check_exit "exit 1, one failed" 1 $? grep -q " 1 failed\$" "$tmp/out/exp"
check "... named: its bytes do not match their SHA-256" \
    grep -q "do not match their SHA-256" "$tmp/out/exp.err"
check "... and nothing half-written left" \
    [ -z "$(find "$tmp/exp-rot" -name '*.tmp*')" ]

import_to() {
	"$SYMHUB" import "$@" >"$tmp/out/imp" 2>"$tmp/out/imp.err"
}
# lines FILE: a manifest's lines without the header, sorted.
lines() {
	grep -v '^#' "$1" | sort
}

section 'import into a new store, its hub not running'
import_to "$EXP" "$tmp/store-b"
check_exit "exit 0, 7 imported" 0 $? \
    grep -q "^7 imported ([0-9]* bytes), 0 already there, 0 refused\$" \
    "$tmp/out/imp"
check "... and the FileID map" \
    grep -q "^1 FileID mapping(s) imported\$" "$tmp/out/imp"
export_to -q "$tmp/store-b" "$tmp/exp-b"
check "exported again: the same files, hashes and origins" \
    cmp -s <(lines "$EXP/manifest.tsv") <(lines "$tmp/exp-b/manifest.tsv")
import_to "$EXP" "$tmp/store-b"
check_exit "imported again: all already there" 0 $? \
    grep -q "^0 imported (0 bytes), 7 already there, 0 refused\$" \
    "$tmp/out/imp"
hub -d "$tmp/store-b" --offline
client_env
client_file "an offline hub on it: prog2's debuginfo" "$tmp/up/prog2.debug" \
    debuginfod-find debuginfo "$ID2"
client_file "... prog1's source greet.c" "$tmp/src/greet.c" \
    debuginfod-find source "$ID1" "$tmp/src/greet.c"
expect_get "... and prog2 by the FileID its upload mapped" \
    "/fileid/$FID2/debuginfo" 200 "$tmp/up/prog2.debug"
stop_check "... it stops"

section 'export --source-root: the sources under a root cross too'
# store-b, imported above, holds prog1's sources but not prog2's.
export_to -q --source-root "$tmp/src" "$tmp/store-b" "$tmp/exp-roots"
check_exit "exit 0, prog2's 3 sources too (10 files)" 0 $? \
    grep -q "^10 written ([0-9]* bytes), 0 unchanged, 0 failed\$" \
    "$tmp/out/exp"
check "prog2's greet.c, byte-identical, with its manifest line" \
    cmp -s "$tmp/exp-roots/buildid/$ID2/source$tmp/src/greet.c" \
    "$tmp/src/greet.c" && grep -q "^$ID2	source	.*	$tmp/src/greet.c\$" \
    "$tmp/exp-roots/manifest.tsv"
check "nothing outside the root (no /usr/include header)" \
    [ -z "$(grep -v "^#" "$tmp/exp-roots/manifest.tsv" | cut -f6 |
    grep -v -e "^-\$" -e "^$tmp/src/")" ]
export_to -q --source-root "$tmp/src" "$tmp/store-b" "$tmp/exp-roots"
check "again: 10 unchanged" grep -q \
    "^0 written (0 bytes), 10 unchanged, 0 failed\$" "$tmp/out/exp"
import_to "$tmp/exp-roots" "$tmp/store-s"
check_exit "imported: 10" 0 $? grep -q \
    "^10 imported ([0-9]* bytes), 0 already there, 0 refused\$" \
    "$tmp/out/imp"
hub -d "$tmp/store-s" --offline
client_env
for f in greet.c hello.c greet.h; do
	client_file "an offline hub on it: prog2's source $f" "$tmp/src/$f" \
	    debuginfod-find source "$ID2" "$tmp/src/$f"
done
stop_check "... it stops"

section "import into a running hub's store"
hub -d "$tmp/store-c" --offline
expect_get "before: a miss" "/buildid/$ID1/debuginfo" 404
import_to -q "$EXP" "$tmp/store-c"
check_exit "7 imported beside the running hub" 0 $? \
    grep -q "^7 imported" "$tmp/out/imp"
expect_get "after: served" "/buildid/$ID1/debuginfo" 200 "$tmp/scan/prog1"
stop_check "the hub stops, its store intact"

section 'a tree that lies is refused, the rest imported'
cp -r "$EXP" "$tmp/bad"
# A flipped byte; a file under another build-id, its line made to match
# its bytes; a source path that climbs out; a line that is not one.
printf 'X' | dd of="$tmp/bad/buildid/$ID1/executable" bs=1 seek=200 \
    conv=notrunc 2>/dev/null
FAKE=00112233445566778899aabbccddeeff00112233
mkdir -p "$tmp/bad/buildid/$FAKE"
cp "$tmp/up/prog2.debug" "$tmp/bad/buildid/$FAKE/debuginfo"
{
	printf '%s\tdebuginfo\t%s\t%s\tupload:ci\t-\n' "$FAKE" \
	    "$(file_size "$tmp/up/prog2.debug")" \
	    "$(sha256sum <"$tmp/up/prog2.debug" | cut -d' ' -f1)"
	printf '%s\tsource\t1\t%s\tscan\t/x/../../etc/passwd\n' "$ID1" \
	    "$(printf 'x' | sha256sum | cut -d' ' -f1)"
	echo "not a line"
	# Longer than any line of ours: refused, never held whole.
	head -c 20000 /dev/zero | tr '\0' a
	echo
} >>"$tmp/bad/manifest.tsv"
# A FileID line that is none; a FileID of the refused file: not mapped.
printf 'not-a-fileid\t%s\n0123456789abcdef0123456789abcdef\t%s\n' \
    "$ID1" "$FAKE" >>"$tmp/bad/fileids.tsv"
import_to "$tmp/bad" "$tmp/store-d"
st=$?
check_exit "exit 1: 6 refused, the 6 good ones imported" 1 "$st" \
    grep -q "^6 imported ([0-9]* bytes), 0 already there, 6 refused\$" \
    "$tmp/out/imp"
check "... the flipped byte: its SHA-256 differs" \
    grep -q "^refused  executable .*differs from the manifest" \
    "$tmp/out/imp.err"
check "... the file under another build-id" \
    grep -q "^refused  debuginfo  *$FAKE .*not the one it is filed under" \
    "$tmp/out/imp.err"
check "... the path that climbs out" \
    grep -q "^refused  line [0-9]* of the manifest: a source path that is not canonical and absolute: .*/etc/passwd" \
    "$tmp/out/imp.err"
check "... the line that is not one, by its number" \
    grep -q "^refused  line [0-9]* of the manifest: not 6 fields separated by tabs: not a line\$" \
    "$tmp/out/imp.err"
check "... the overlong line, without its text" \
    grep -q "^refused  line [0-9]* of the manifest: a line longer than any manifest line\$" \
    "$tmp/out/imp.err"
check "... the FileID line that is none" \
    grep -q "^refused  line [0-9]* of fileids.tsv: not a FileID and a build-id\$" \
    "$tmp/out/imp.err"
check "... and nothing of them is in the store" \
    [ -z "$(grep -l "$FAKE\|passwd" "$tmp"/store-d/catalog/*/* 2>/dev/null)" ]
import_to "$tmp/store-d"
check "import without a STORE: exit 2" [ $? = 2 ]

section 'a tree with a FIFO, a socket, a link: refused, and never a hang'
# An old import opened a FIFO for reading and waited for a writer that
# never comes: each run is bounded, and 124 (timeout's) fails it.
cp -r "$EXP" "$tmp/odd"
rm "$tmp/odd/buildid/$ID1/debuginfo" "$tmp/odd/buildid/$ID1/executable" \
    "$tmp/odd/fileids.tsv"
mkfifo "$tmp/odd/buildid/$ID1/debuginfo" "$tmp/odd/fileids.tsv"
python3 -c 'import socket, sys
socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
    "$tmp/odd/buildid/$ID1/executable" || exit 99
# prog2's folder a link to a copy outside the tree.
mv "$tmp/odd/buildid/$ID2" "$tmp/elsewhere"
ln -s "$tmp/elsewhere" "$tmp/odd/buildid/$ID2"
timeout 30 "$SYMHUB" import "$tmp/odd" "$tmp/store-e" >"$tmp/out/imp" \
    2>"$tmp/out/imp.err"
st=$?
check "it ends: exit 1, not a hang ($st)" [ "$st" = 1 ]
check "3 sources imported, the 4 odd files and fileids.tsv refused" \
    grep -q "^3 imported ([0-9]* bytes), 0 already there, 5 refused\$" \
    "$tmp/out/imp"
check "... the FIFO, by its name" grep -q \
    "^refused  debuginfo  *$ID1  -  a FIFO, not a regular file\$" \
    "$tmp/out/imp.err"
check "... the socket" grep -q \
    "^refused  executable  *$ID1  -  a socket, not a regular file\$" \
    "$tmp/out/imp.err"
check "... the folder that is a link out of the tree, both its files" \
    [ "$(grep -c "^refused  [a-z]*  *$ID2  -  a symbolic link (not followed)\$" \
    "$tmp/out/imp.err")" = 2 ]
check "... and fileids.tsv, a FIFO too" grep -q \
    "^refused  fileids.tsv: a FIFO, not a regular file\$" "$tmp/out/imp.err"
rm "$tmp/odd/manifest.tsv"
mkfifo "$tmp/odd/manifest.tsv"
timeout 30 "$SYMHUB" import "$tmp/odd" "$tmp/store-e" >"$tmp/out/imp" \
    2>"$tmp/out/imp.err"
st=$?
check "a FIFO for the manifest: exit 1 at once ($st), and why" eval \
    "[ $st = 1 ] && grep -q 'manifest.tsv: a FIFO, not a regular file' \
    '$tmp/out/imp.err'"

section 'control bytes in a manifest field: the line refused, by number'
cp -r "$EXP" "$tmp/ctl"
# Origins with an escape sequence, a byte that is no UTF-8, 300 bytes; a
# source path with an escape; a NUL that would hide the rest of a line.
python3 - "$tmp/ctl/manifest.tsv" "$ID1" "$ID2" <<'EOF'
import sys
path, id1, id2 = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
out = []
for l in open(path, "rb").read().split(b"\n"):
    f = l.split(b"\t")
    if len(f) == 6 and f[0] == id1 and f[1] == b"debuginfo":
        f[4] = b"scan\x1b]0;owned\x07"
    elif len(f) == 6 and f[0] == id1 and f[1] == b"executable":
        f[4] = b"scan\xff"
    elif len(f) == 6 and f[0] == id1 and f[5].endswith(b"/greet.h"):
        f[5] = f[5][:-len(b"greet.h")] + b"\x1b[2Jgreet.h"
    elif len(f) == 6 and f[0] == id2 and f[1] == b"executable":
        f[4] = b"upload:" + b"x" * 300
    elif len(f) == 6 and f[0] == id2 and f[1] == b"debuginfo":
        f[5] = b"-\0\tjunk"
    out.append(b"\t".join(f))
open(path, "wb").write(b"\n".join(out))
EOF
timeout 30 "$SYMHUB" import "$tmp/ctl" "$tmp/store-f" >"$tmp/out/imp" \
    2>"$tmp/out/imp.err"
st=$?
check_exit "exit 1: 5 refused, the 2 good sources imported" 1 "$st" \
    grep -q "^2 imported ([0-9]* bytes), 0 already there, 5 refused\$" \
    "$tmp/out/imp"
check "... the origin with an escape, printed escaped" grep -qF \
    "of the manifest: an origin with a control byte or invalid UTF-8: $ID1\x09debuginfo" \
    "$tmp/out/imp.err"
check "... shown as \\x1b]0;owned\\x07" grep -qF 'scan\x1b]0;owned\x07' \
    "$tmp/out/imp.err"
check "... and \\xff" grep -qF 'scan\xff\x09-' "$tmp/out/imp.err"
check "... the origin that is no UTF-8, its tabs and byte escaped" grep -qF \
    'an origin with a control byte or invalid UTF-8: '"$ID1"'\x09executable' \
    "$tmp/out/imp.err"
check "... the origin of 300 bytes" grep -q \
    "^refused  line [0-9]* of the manifest: an origin longer than 255 bytes" \
    "$tmp/out/imp.err"
check "... the source path with an escape" grep -q \
    "^refused  line [0-9]* of the manifest: a source path with a control byte" \
    "$tmp/out/imp.err"
check "... the line with a NUL" grep -q \
    "^refused  line [0-9]* of the manifest: a NUL byte in the line\$" \
    "$tmp/out/imp.err"
check "... no control byte reaches the terminal" eval "! LC_ALL=C grep -q \
    '[[:cntrl:]]' '$tmp/out/imp.err' '$tmp/out/imp'"
export_to -q "$tmp/store-f" "$tmp/exp-f"
check "... and the store holds none of those files" \
    [ "$(grep -vc '^#' "$tmp/exp-f/manifest.tsv")" = 2 ]
finish
