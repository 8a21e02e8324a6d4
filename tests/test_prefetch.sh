#!/bin/bash
# symhub prefetch: a hub fetches and keeps the debug files of build-ids,
# ELF files, directories and core files while its upstream is there, and
# serves them once it is gone.  The upstream is elfutils' debuginfod; the
# core file is gdb's gcore; the modules a core maps are checked against
# eu-unstrip -n --core, each named by its mapped file, the vdso skipped
# (no server has it), so that a core whose other modules are all upstream
# (a static program's) prefetches with exit 0.  With --sources the hub
# fetches and keeps the source files each debuginfo names (debuginfod
# serves them from the paths its DWARF names), serves them once the
# upstream is gone, and a source nobody has is missing but no failure.
# Names under a relative compilation directory are asked as the hub keeps
# them (rooted at /), from an upstream hub that has them from an upload.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_prefetch.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc objcopy strip readelf curl debuginfod debuginfod-find gdb eu-unstrip

section 'fixtures'
# prog1: its debug file and executable are upstream; prog2: nowhere;
# prog3, linked statically, upstream too: its core maps nothing else
# but the vdso.
mkdir -p "$tmp/src" "$tmp/up" "$tmp/bin" "$tmp/mixed/sub" "$tmp/out"
cp "$FIXTURES/hello.c" "$FIXTURES/greet.c" "$FIXTURES/greet.h" "$tmp/src/"
(cd "$tmp/src" && gcc -g -O0 -o "$tmp/up/prog1" hello.c greet.c &&
    gcc -g -O1 -o "$tmp/bin/prog2" hello.c greet.c &&
    gcc -g -O0 -static -o "$tmp/up/prog3" hello.c greet.c) || exit 99
objcopy --only-keep-debug "$tmp/up/prog1" "$tmp/up/prog1.debug" || exit 99
strip -g -o "$tmp/bin/prog1" "$tmp/up/prog1" || exit 99
strip -g -o "$tmp/bin/prog3" "$tmp/up/prog3" || exit 99
ID1=$(buildid "$tmp/up/prog1")
ID2=$(buildid "$tmp/bin/prog2")
ID3=$(buildid "$tmp/up/prog3")
check "three programs with build-ids" \
    eval '[ -n "$ID1" ] && [ -n "$ID2" ] && [ -n "$ID3" ]'
cp "$tmp/bin/prog1" "$tmp/mixed/sub/"
# prog4: upstream, but one of its sources is gone from where it was built.
mkdir -p "$tmp/src4"
cp "$FIXTURES/hello.c" "$FIXTURES/greet.c" "$FIXTURES/greet.h" "$tmp/src4/"
(cd "$tmp/src4" && gcc -g -O0 -o "$tmp/up/prog4" hello.c greet.c) || exit 99
rm "$tmp/src4/greet.c"
ID4=$(buildid "$tmp/up/prog4")
echo "not ELF" >"$tmp/mixed/notes.txt"

section 'the hub and its upstream'
if ! start_debuginfod up "" "$tmp/up" ||
    ! wait_http 30 "$DURL/buildid/$ID1/debuginfo" 200 ||
    ! wait_http 30 "$DURL/buildid/$ID3/debuginfo" 200 ||
    ! wait_http 30 "$DURL/buildid/$ID4/debuginfo" 200; then
	fail "debuginfod serves prog1" "$(tail -n 5 "$tmp/up.log")"
	finish
fi
pass "debuginfod serves prog1"
UP_PID=$DPID
# What it serves as the debuginfo (prog1 and prog1.debug both qualify).
curl -s -o "$tmp/up.debuginfo" "$DURL/buildid/$ID1/debuginfo" || exit 99
hub -d "$tmp/store" -u "$DURL name=up" --log-file "$tmp/hub.log"
prefetch() {
	"$SYMHUB" prefetch --url "$URL" "$@" >"$tmp/out/pf" 2>"$tmp/out/pf.err"
}
vdso_skipped() {
	[ -n "$VDSO" ] && grep -q "^skipped  *-  *$VDSO  linux-[^ ]*  the vdso: \
the kernel's, no server has it\$" "$tmp/out/pf"
}
vdso_never_asked() {
	[ -n "$VDSO" ] && ! grep -q "/buildid/$VDSO/" "$tmp/hub.log"
}

section 'a program, by its file'
prefetch "$tmp/bin/prog1"
check "exit 0 when everything was found" [ $? = 0 ]
check "found debuginfo $ID1" grep -q "^found  *debuginfo  *$ID1 " \
    "$tmp/out/pf"
check "summary: 1 found" grep -qx "1 found, 0 missing, 0 failed, 0 skipped" \
    "$tmp/out/pf"
check "the hub asked its upstream (access log)" wait_until 10 \
    grep -q "HEAD /buildid/$ID1/debuginfo 200 .* upstream up " "$tmp/hub.log"

section 'a core file: every module it maps'
(cd "$tmp/bin" && timeout 60 gdb -nx -batch -ex 'break main' -ex run \
    -ex "gcore $tmp/core" ./prog1) >"$tmp/gdb.out" 2>&1
if [ -s "$tmp/core" ]; then
	# eu-unstrip names the vdso by its soname (linux-vdso.so.1, or
	# linux-gate.so.1 on i386).
	eu-unstrip -n --core="$tmp/core" >"$tmp/core.unstrip"
	awk '$NF !~ /^linux-(vdso|gate)/ { sub(/@.*/, "", $2); print $2 }' \
	    "$tmp/core.unstrip" | sort -u >"$tmp/core.ids"
	VDSO=$(awk '$NF ~ /^linux-(vdso|gate)/ { sub(/@.*/, "", $2);
	    print $2 }' "$tmp/core.unstrip")
	prefetch "$tmp/core"
	st=$?
	awk '$1 == "found" || $1 == "missing" { print $3 }' "$tmp/out/pf" |
	    sort -u >"$tmp/pf.ids"
	if [ -s "$tmp/core.ids" ] && cmp -s "$tmp/core.ids" "$tmp/pf.ids"; then
		pass "the build-ids of eu-unstrip -n --core but the vdso ($(wc \
		    -l <"$tmp/core.ids") modules)"
	else
		fail "the build-ids of eu-unstrip -n --core but the vdso" \
		    "$(diff "$tmp/core.ids" "$tmp/pf.ids")"
	fi
	check "the vdso is skipped, and says why" vdso_skipped
	check "prog1's is found (stored already), named by its file" \
	    grep -q "^found  *debuginfo  *$ID1  $tmp/bin/prog1\$" "$tmp/out/pf"
	check "libc's is missing (the upstream has only prog1), named by its file" \
	    grep -q "^missing  *debuginfo  *[0-9a-f]*  /.*/libc\.so\.6\$" \
	    "$tmp/out/pf"
	if grep -q "$tmp/core" "$tmp/out/pf"; then
		fail "no module is named by the core's path" \
		    "$(cat "$tmp/out/pf")"
	else
		pass "no module is named by the core's path"
	fi
	check "exit 1 when something is missing" [ "$st" = 1 ]
else
	fail "gdb makes a core file" "$(tail -n 5 "$tmp/gdb.out")"
fi

section 'a core whose every fetchable module is there: exit 0'
# prog3 is static: its core maps prog3 and the vdso, and prog3's is
# upstream.  The vdso must not make a complete prefetch a failed one.
(cd "$tmp/bin" && timeout 60 gdb -nx -batch -ex 'break main' -ex run \
    -ex "gcore $tmp/core3" ./prog3) >"$tmp/gdb3.out" 2>&1
if [ -s "$tmp/core3" ]; then
	prefetch "$tmp/core3"
	st=$?
	check "exit 0 (was 1: the vdso asked for)" [ "$st" = 0 ]
	check "prog3's is found, named by its file" \
	    grep -q "^found  *debuginfo  *$ID3  $tmp/bin/prog3\$" "$tmp/out/pf"
	check "summary: 1 found, the vdso skipped" grep -qx \
	    "1 found, 0 missing, 0 failed, 1 skipped" "$tmp/out/pf"
	check "the hub asked its upstream for prog3" wait_until 10 \
	    grep -q "HEAD /buildid/$ID3/debuginfo 200 .* upstream up " \
	    "$tmp/hub.log"
	check "... and never for the vdso" vdso_never_asked
else
	fail "gdb makes a core file of a static program" \
	    "$(tail -n 5 "$tmp/gdb3.out")"
fi

section 'directories, build-ids, executables'
prefetch -e "$tmp/mixed" "$ID2"
st=$?
check "a file under a directory: found its debuginfo" \
    grep -q "^found  *debuginfo  *$ID1  $tmp/mixed/sub/prog1\$" "$tmp/out/pf"
check "... and with -e its executable" \
    grep -q "^found  *executable  *$ID1 " "$tmp/out/pf"
check "a file that is not ELF is skipped" \
    grep -q "^skipped .*notes.txt  not an ELF file" "$tmp/out/pf"
check "a build-id nobody has is missing, both kinds" \
    [ "$(grep -c "^missing .* $ID2  (build-id)" "$tmp/out/pf")" = 2 ]
check "exit 1" [ "$st" = 1 ]
prefetch "$tmp/nonexistent"
check "neither a file nor a build-id: failed, exit 1" \
    [ $? = 1 ] && grep -q "neither a file nor a build-id" "$tmp/out/pf.err"
"$SYMHUB" prefetch "$tmp/bin/prog1" >/dev/null 2>"$tmp/out/pf.err"
check "no --url and no DEBUGINFOD_URLS: exit 2" [ $? = 2 ]
DEBUGINFOD_URLS="$URL http://127.0.0.1:1" "$SYMHUB" prefetch -q \
    "$tmp/bin/prog1" >"$tmp/out/pf" 2>&1
check "the first of DEBUGINFOD_URLS is the hub; -q prints the summary" \
    [ $? = 0 ] && [ "$(cat "$tmp/out/pf")" = \
    "1 found, 0 missing, 0 failed, 0 skipped" ]

section 'sources (--sources)'
prefetch -s "$tmp/bin/prog1"
check "exit 0" [ $? = 0 ]
for f in hello.c greet.c greet.h; do
	check "found source $f" grep -q \
	    "^found  *source  *$ID1  $tmp/src/$f\$" "$tmp/out/pf"
done
check "summary: the sources counted apart" grep -qx "1 found, 0 missing, \
0 failed, 0 skipped; sources: [1-9][0-9]* found, 0 missing, 0 failed" \
    "$tmp/out/pf"
check "the hub asked its upstream for a source (access log)" wait_until 10 \
    grep -q "HEAD /buildid/$ID1/source$tmp/src/hello.c 200 .* upstream up " \
    "$tmp/hub.log"
prefetch --sources "$ID4"
check_exit "a source nobody has: missing, exit 0" 0 $? grep -q \
    "^missing  *source  *$ID4  $tmp/src4/greet.c\$" "$tmp/out/pf"
check "... counted as a missing source" grep -q \
    "; sources: [1-9][0-9]* found, 1 missing, 0 failed\$" "$tmp/out/pf"

section 'the upstream gone: the hub serves what was prefetched'
kill -TERM "$UP_PID"
wait_exit "$UP_PID" 10
client_env
client_file "debuginfod-find: prog1's debuginfo" "$tmp/up.debuginfo" \
    debuginfod-find debuginfo "$ID1"
client_file "debuginfod-find: prog1's executable" "$tmp/up/prog1" \
    debuginfod-find executable "$ID1"
for f in hello.c greet.h; do
	client_file "debuginfod-find: prog1's source $f" "$tmp/src/$f" \
	    debuginfod-find source "$ID1" "$tmp/src/$f"
done
prefetch "$tmp/bin/prog1"
check "a second prefetch finds it in the store" [ $? = 0 ]
prefetch --sources "$tmp/bin/prog1"
check_exit "... and its sources" 0 $? grep -q \
    "^found  *source  *$ID1  $tmp/src/hello.c\$" "$tmp/out/pf"
stop_check "the hub stops"

section 'sources under a relative compilation directory (--sources)'
# -fdebug-prefix-map=$PWD=. (Debian's builds): the DWARF names
# "./sub/rel.c" under DW_AT_comp_dir "./sub".  The upstream, another hub,
# holds them from `symhub upload --sources` run in the build's root; the
# hub keeps them as /sub/rel.c, as it serves them.
R=$tmp/build5
mkdir -p "$R/sub" "$R/inc" "$tmp/expect" "$tmp/f5" || exit 99
printf 'static inline int rel_h(int x) { return x - 1; }\n' >"$R/inc/rel.h"
printf '#include "../inc/rel.h"\nint\nmain(int c, char **v)\n{\n\t(void)v;\n\treturn rel_h(c);\n}\n' \
    >"$R/sub/rel.c"
cp "$R/sub/rel.c" "$R/inc/rel.h" "$tmp/expect/" || exit 99
(cd "$R/sub" && gcc -g -O0 -fdebug-prefix-map="$R"=. -o "$tmp/f5/rel" rel.c) ||
    exit 99
readelf --debug-dump=info "$tmp/f5/rel" 2>/dev/null |
    grep -q 'DW_AT_comp_dir.*: \./sub$' || exit 99
RID=$(buildid "$tmp/f5/rel")
TOK=$(new_token ci upload "$tmp/tokens") ||
    { echo "# symhub token new: $(cat "$tmp/token.err")"; exit 99; }
echo "$TOK" >"$tmp/tok" || exit 99
hub -d "$tmp/store-up" --tokens "$tmp/tokens" --offline
UP2=$URL
UP2_PID=$SYMHUBD_PID
(cd "$R" && "$SYMHUB" upload --url "$UP2" --token-file "$tmp/tok" \
    --sources "$tmp/f5/rel") >"$tmp/out/up5" 2>&1
verdict $? "the upstream hub has the program and its sources" \
    "$(cat "$tmp/out/up5")"
rm -rf "$R"
hub -d "$tmp/store5" -u "$UP2 name=up2" --log-file "$tmp/hub5.log"
prefetch --sources "$RID"
check_exit "prefetch --sources: exit 0" 0 $? grep -q \
    "; sources: 2 found, 0 missing, 0 failed\$" "$tmp/out/pf"
check "... the relative ./sub/rel.c asked as the hub keeps it: /sub/rel.c" \
    grep -q "^found  *source  *$RID  /sub/rel.c\$" "$tmp/out/pf"
check "... and ./sub/../inc/rel.h as /inc/rel.h" \
    grep -q "^found  *source  *$RID  /inc/rel.h\$" "$tmp/out/pf"
stop_symhubd "$UP2_PID"
forget_pid "$UP2_PID"
expect_get "the upstream gone: the hub serves sub/rel.c" \
    "/buildid/$RID/source/sub/rel.c" 200 "$tmp/expect/rel.c"
expect_get "... and /inc/rel.h" "/buildid/$RID/source/inc/rel.h" 200 \
    "$tmp/expect/rel.h"
stop_check "the hub stops"
finish
