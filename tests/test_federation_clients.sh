#!/bin/bash
# Federation, as clients see it: bytes from whichever
# upstream has them, through curl, debuginfod-find, dfclient and gdb, warm
# hits with the cold answer's headers, a restart with the upstreams down,
# and an upload without DWARF that an upstream's copy replaces.
# Fixtures, helpers and the two debuginfod upstreams: tests/federation.sh.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_federation_clients.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
. "$top_srcdir/tests/federation.sh"

fed_upstreams 2

section 'the main hub: bytes from whichever upstream has them'
hublog=$tmp/hub.log
# logged PATTERN: the hub's log has (or soon has: a line is written once
# the answer is sent) a line matching PATTERN.
logged() {
	wait_until 10 grep -q "$1" "$hublog"
}
hub -d "$tmp/store" -u "$UP1 name=up1" -u "$UP2 name=up2" \
    --log-file "$hublog"
HUB_PID=$SYMHUBD_PID
HUB=$URL

# X-DEBUGINFOD-MAXSIZE smaller than the file, on a cold key: 406, which
# the client does not cache; then the same key without it: 200.
get "$HUB/buildid/$ID1/executable" "$tmp/out/b" -H "X-DEBUGINFOD-MAXSIZE: 100"
[ "$code" = 406 ]
verdict $? "cold request with X-DEBUGINFOD-MAXSIZE: 100 -> 406" \
    "status $code (curl exit $cexit)"
expect_url "then without a maximum: 200, the executable" \
    "$HUB/buildid/$ID1/executable" "$EXE1"
check "a 406 stores no negative entry" \
    metric_cmp symhub_cache_negative_entries -eq 0 "$HUB"

# Cold, through libdebuginfod: debuginfod-find first, then dfclient (its
# own fresh client cache, so it too asks symhubd).
client_env
client_file "debuginfod-find: prog1 debuginfo (cold)" "$DBG1" \
    debuginfod-find debuginfo "$ID1"
case $(access "$hublog" "$ID1" debuginfo) in
*" upstream up1 "*) pass "access log: prog1 debuginfo came from up1" ;;
*) fail "access log: prog1 debuginfo came from up1" \
    "$(access "$hublog" "$ID1" debuginfo)" ;;
esac
client_file "debuginfod-find: prog1 executable" "$EXE1" \
    debuginfod-find executable "$ID1"
client_file "debuginfod-find: prog1 source hello.c (cold)" "$SRC1" \
    debuginfod-find source "$ID1" "$SRC1"
client_env
client_file "dfclient: prog1 debuginfo" "$DBG1" "$DFCLIENT" debuginfo "$ID1"
client_file "dfclient: prog1 executable" "$EXE1" "$DFCLIENT" executable "$ID1"
f=$(timeout 30 "$DFCLIENT" source "$ID1" "$tmp/src1/greet.c" \
    2>"$tmp/out/err")
expect_file "dfclient: prog1 source greet.c (cold)" "$f" "$tmp/src1/greet.c"
# Sections, each client with nothing cached (libdebuginfod extracts a
# section itself from a debuginfo it has cached).
client_env
client_file "debuginfod-find: prog1 section .debug_line" \
    "$tmp/orig/prog1.debug_line" debuginfod-find section "$ID1" .debug_line
client_env
client_file "dfclient: prog1 section .debug_info" "$tmp/orig/prog1.debug_info" \
    "$DFCLIENT" section "$ID1" .debug_info
# libdebuginfod could have extracted the section itself from a debuginfo
# it fetched: the access log says symhubd answered /section with it.
logged "GET /buildid/$ID1/section/.debug_info 200 " &&
    logged "GET /buildid/$ID1/section/.debug_line 200 "
verdict $? "access log: symhubd served the sections (200)" \
    "$(grep "/section/" "$hublog" | tail -4)"


section "warm hits carry the cold answer's headers"
xhdrs() {
	local h
	for h in Content-Length X-DEBUGINFOD-SIZE X-DEBUGINFOD-FILE \
	    Last-Modified; do
		echo "$h: $(header "$1" "$h")"
	done
}
get "$UP2/buildid/$ID2/source$SRC2" "$tmp/out/direct"
e0=$(metric symhub_cache_entries "$HUB")
get "$HUB/buildid/$ID2/source$SRC2" "$tmp/out/cold"
c1=$code
# The cold answer is sent before the store thread has indexed it.
wait_until 20 metric_cmp symhub_cache_entries -gt "${e0:-0}" "$HUB"
get "$HUB/buildid/$ID2/source$SRC2" "$tmp/out/warm"
c2=$code
[ "$c1$c2" = 200200 ] && cmp -s "$tmp/out/cold" "$SRC2" &&
    cmp -s "$tmp/out/warm" "$SRC2"
verdict $? "prog2 source: cold and warm 200 with up2's bytes" "status $c1, $c2"
[ "$(xhdrs "$tmp/out/cold.hdr")" = "$(xhdrs "$tmp/out/warm.hdr")" ] &&
    [ -n "$(header "$tmp/out/cold.hdr" X-DEBUGINFOD-FILE)" ]
verdict $? "warm hit: same Content-Length, X-DEBUGINFOD-SIZE, -FILE, Last-Modified" \
    "cold:" "$(xhdrs "$tmp/out/cold.hdr")" "warm:" \
    "$(xhdrs "$tmp/out/warm.hdr")"
[ "$(header "$tmp/out/cold.hdr" X-DEBUGINFOD-FILE)" = \
    "$(header "$tmp/out/direct.hdr" X-DEBUGINFOD-FILE)" ] &&
    [ "$(header "$tmp/out/cold.hdr" Last-Modified)" = \
    "$(header "$tmp/out/direct.hdr" Last-Modified)" ]
verdict $? "X-DEBUGINFOD-FILE and Last-Modified are the upstream's" \
    "up2:" "$(xhdrs "$tmp/out/direct.hdr")" "symhubd:" \
    "$(xhdrs "$tmp/out/cold.hdr")"
case $(access "$hublog" "$ID2" "source$SRC2") in
*" hit "*) pass "access log: the second was a hit" ;;
*) fail "access log: the second was a hit" \
    "$(access "$hublog" "$ID2" "source$SRC2")" ;;
esac
# The same for an executable (its cold headers are kept for the restart
# below).
get "$UP2/buildid/$ID2/executable" "$tmp/out/xdirect"
get "$HUB/buildid/$ID2/executable" "$tmp/out/xcold"
get "$HUB/buildid/$ID2/executable" "$tmp/out/xwarm"
[ "$code" = 200 ] &&
    [ "$(xhdrs "$tmp/out/xcold.hdr")" = "$(xhdrs "$tmp/out/xwarm.hdr")" ] &&
    [ "$(xhdrs "$tmp/out/xcold.hdr")" = "$(xhdrs "$tmp/out/xdirect.hdr")" ]
verdict $? "executable: cold and warm headers are up2's own" \
    "up2:" "$(xhdrs "$tmp/out/xdirect.hdr")" \
    "cold:" "$(xhdrs "$tmp/out/xcold.hdr")" \
    "warm:" "$(xhdrs "$tmp/out/xwarm.hdr")"

# prog2 through libdebuginfod and gdb.
client_env
client_file "debuginfod-find: prog2 debuginfo" "$DBG2" \
    debuginfod-find debuginfo "$ID2"
client_file "debuginfod-find: prog2 executable" "$EXE2" \
    debuginfod-find executable "$ID2"
f=$(timeout 30 debuginfod-find source "$ID2" "$tmp/src2/greet.c" \
    2>"$tmp/out/err")
expect_file "debuginfod-find: prog2 source greet.c (cold)" "$f" \
    "$tmp/src2/greet.c"
client_env
client_file "dfclient: prog2 debuginfo" "$DBG2" "$DFCLIENT" debuginfo "$ID2"
client_file "dfclient: prog2 executable" "$EXE2" "$DFCLIENT" executable "$ID2"
client_file "dfclient: prog2 source hello.c (up2's own bytes)" "$SRC2" \
    "$DFCLIENT" source "$ID2" "$SRC2"
client_env
client_file "debuginfod-find: prog2 section .debug_info" \
    "$tmp/orig/prog2.debug_info" debuginfod-find section "$ID2" .debug_info
client_env
client_file "dfclient: prog2 section .debug_line" "$tmp/orig/prog2.debug_line" \
    "$DFCLIENT" section "$ID2" .debug_line
logged "GET /buildid/$ID2/section/.debug_info 200 " &&
    logged "GET /buildid/$ID2/section/.debug_line 200 "
verdict $? "access log: symhubd served prog2's sections (200)" \
    "$(grep "/section/" "$hublog" | tail -4)"
logged "GET /buildid/$ID2/debuginfo 200 .* upstream up2 "
verdict $? "access log: prog2 debuginfo came from up2" \
    "$(grep "/buildid/$ID2/debuginfo" "$hublog" | grep -v ' hit ' | head -3)"

# gdb with the stripped binary alone; substitute-path hides the local
# sources, so they too come through symhubd.
client_env
cp "$EXE2" "$tmp/gdb/prog2"
(cd "$tmp/gdb" && timeout 60 gdb -nx -batch \
    -iex 'set debuginfod enabled on' \
    -iex "set substitute-path $tmp/src2 $tmp/nonexistent" \
    -ex 'info line square' -ex 'list main' "$tmp/gdb/prog2") \
    >"$tmp/out/gdb" 2>&1
# (At -O1 square is inlined into main: the line is named, not <square>.)
grep -Eq '^Line [0-9]+ of "hello.c" starts at address' "$tmp/out/gdb"
verdict $? "gdb: info line square on prog2 (stripped) through symhubd" \
    "$(head -20 "$tmp/out/gdb")"
f=$(find "$DEBUGINFOD_CACHE_PATH/$ID2" -name 'source*hello.c' 2>/dev/null |
    head -1)
grep -q 'square(argc + 1)' "$tmp/out/gdb" &&
    cmp -s "$DEBUGINFOD_CACHE_PATH/$ID2/debuginfo" "$DBG2" &&
    [ -n "$f" ] && cmp -s "$f" "$SRC2"
verdict $? "gdb: debuginfo and source came through symhubd" \
    "$(find "$DEBUGINFOD_CACHE_PATH" | head)"

# A definite miss (both upstreams say 404), kept for the restart below.
next_unknown
UNK_NEG=$U
get "$HUB/buildid/$UNK_NEG/debuginfo" "$tmp/out/b"
c1=$code
n1=$(seen "$tmp/up1.log" "$UNK_NEG" debuginfo)
get "$HUB/buildid/$UNK_NEG/debuginfo" "$tmp/out/b"
c2=$code
[ "$c1$c2" = 404404 ] &&
    [ "$(seen "$tmp/up1.log" "$UNK_NEG" debuginfo)" = 1 ] &&
    [ "$(seen "$tmp/up2.log" "$UNK_NEG" debuginfo)" = 1 ] &&
    [ "$n1" = 1 ] && access "$hublog" "$UNK_NEG" debuginfo | grep -q negative
verdict $? "definite miss: 404, then 404 from the negative entry (1 request each upstream)" \
    "status $c1, $c2; up1 saw $(seen "$tmp/up1.log" "$UNK_NEG" debuginfo)," \
    "up2 saw $(seen "$tmp/up2.log" "$UNK_NEG" debuginfo)" \
    "$(access "$hublog" "$UNK_NEG" debuginfo)"

section 'restart: the store survives, the upstream is down'
stop_check "main hub: SIGTERM, exit 0"
DEAD=$(free_port)
hub -d "$tmp/store" -u "http://127.0.0.1:$DEAD name=dead" --log-file "$hublog"
expect_url "after restart, upstream down: prog1 debuginfo" \
    "$URL/buildid/$ID1/debuginfo" "$DBG1"
expect_url "after restart, upstream down: prog1 executable" \
    "$URL/buildid/$ID1/executable" "$EXE1"
expect_url "after restart, upstream down: prog1 section .debug_info" \
    "$URL/buildid/$ID1/section/.debug_info" "$tmp/orig/prog1.debug_info"
expect_url "after restart, upstream down: prog1 source" \
    "$URL/buildid/$ID1/source$SRC1" "$SRC1"
expect_url "after restart, upstream down: prog2 debuginfo" \
    "$URL/buildid/$ID2/debuginfo" "$DBG2"
get "$URL/buildid/$ID2/executable" "$tmp/out/xre"
[ "$code" = 200 ] &&
    [ "$(xhdrs "$tmp/out/xcold.hdr")" = "$(xhdrs "$tmp/out/xre.hdr")" ]
verdict $? "after restart: prog2 executable with the cold answer's headers" \
    "status $code" "$(xhdrs "$tmp/out/xcold.hdr")" \
    "$(xhdrs "$tmp/out/xre.hdr")"
get "$URL/buildid/$UNK_NEG/debuginfo" "$tmp/out/b"
[ "$code" = 404 ] && metric_cmp \
    'symhub_upstream_requests_total{upstream="dead",outcome="transport"}' \
    -eq 0
verdict $? "after restart: the negative entry answers 404, nobody asked" \
    "status $code (curl exit $cexit)" \
    "$(metrics_text | grep 'upstream="dead"' | grep -v ' 0$')"
# The control: a key with no entry does reach the dead upstream.
next_unknown
expect_reset "after restart: an unknown key, upstream down -> reset" \
    "$URL/buildid/$U/debuginfo" 2
check "... and that one did try the dead upstream" metric_cmp \
    'symhub_upstream_requests_total{upstream="dead",outcome="transport"}' \
    -ge 1
client_env
client_file "after restart: debuginfod-find prog2 executable" "$EXE2" \
    debuginfod-find executable "$ID2"
stop_check "restarted hub: SIGTERM, exit 0"


section "an upload without DWARF does not hide an upstream's copy"
# A debuginfo with only a symbol table is stored; the first request for
# it asks the upstreams once anyway, and a better copy replaces it.
FTOKENS=$tmp/fed.tokens
if FTOK=$(new_token fed upload "$FTOKENS"); then
	hub -d "$tmp/store13" -u "$UP1" --tokens "$FTOKENS" \
	    --log-file "$tmp/h13.log"
	strip -g -o "$tmp/out/p1.symtab" "$tmp/bin/prog1" &&
	    strip -g -o "$tmp/out/p2.symtab" "$tmp/bin/prog2" || exit 99
	for p in 1 2; do
		eval "id=\$ID$p"
		code=$(put_file "/buildid/$id/debuginfo" "$tmp/out/p$p.symtab" \
		    "$tmp/out/put.body" "$tmp/out/put.hdrs" \
		    -H "Authorization: Bearer $FTOK")
		check "prog$p: a debuginfo with only a symbol table is stored" \
		    test "$code" = 201
	done
	n0=$(seen "$tmp/up1.log" "$ID1" debuginfo)
	expect_url "prog1: the first request gets up1's DWARF copy instead" \
	    "$URL/buildid/$ID1/debuginfo" "$DBG1"
	n1=$(seen "$tmp/up1.log" "$ID1" debuginfo)
	check "prog1: up1 was asked once ($n0 -> $n1)" test "$n1" = $((n0 + 1))
	expect_url "prog1: the better copy is kept" \
	    "$URL/buildid/$ID1/debuginfo" "$DBG1"
	check "prog1: and up1 is not asked again" \
	    test "$(seen "$tmp/up1.log" "$ID1" debuginfo)" = "$n1"
	m0=$(seen "$tmp/up1.log" "$ID2" debuginfo)
	expect_url "prog2 (up1 lacks it): the upload is served" \
	    "$URL/buildid/$ID2/debuginfo" "$tmp/out/p2.symtab"
	m1=$(seen "$tmp/up1.log" "$ID2" debuginfo)
	check "prog2: up1 was asked ($m0 -> $m1)" test "$m1" = $((m0 + 1))
	expect_url "prog2: served again" "$URL/buildid/$ID2/debuginfo" \
	    "$tmp/out/p2.symtab"
	check "prog2: up1 is not asked on every request" \
	    test "$(seen "$tmp/up1.log" "$ID2" debuginfo)" = "$m1"
	stop_symhubd "$SYMHUBD_PID"
else
	fail "a token for the upload checks" "new_token failed"
fi


check "upstream up1 still alive" alive "$UP1_PID"
echo "# $(($(date +%s) - t0)) s"
finish
