#!/bin/bash
# Integration test of symhubd's uploads: PUT and DELETE with bearer tokens,
# validation, "which copy wins", concurrency, a daemon killed mid-upload,
# pinning under a tiny byte budget, size limits and a read-only store;
# what was uploaded is read back by curl, debuginfod-find, libdebuginfod
# (dfclient) and gdb.  After every refused upload nothing may be stored.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_upload.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy strip readelf cmp timeout awk sed ss \
    debuginfod-find gdb
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
[ -x "$DFCLIENT" ] || skip "$DFCLIENT not built (make check builds it)"

t0=$(date +%s)

section 'fixtures'
# One program (ID) in four shapes, a second build of it (ID2) in three.
mkdir -p "$tmp"/{src,bin,f,out,gdb,scan,par} || exit 99
cp "$FIXTURES"/hello.c "$FIXTURES"/greet.c "$FIXTURES"/greet.h "$tmp/src/" ||
    exit 99
(cd "$tmp/src" && gcc -g -O0 -o "$tmp/bin/hello" hello.c greet.c &&
    gcc -g -O1 -o "$tmp/bin/hello2" hello.c greet.c) || exit 99
F=$tmp/f
for n in hello hello2; do
	cp "$tmp/bin/$n" "$F/$n.full" &&	# DWARF, symtab, dynsym
	    objcopy --only-keep-debug "$tmp/bin/$n" "$F/$n.debug" &&
	    strip -g -o "$F/$n.stripped" "$tmp/bin/$n" || exit 99	# symtab
done
strip --strip-all -o "$F/hello.nosym" "$tmp/bin/hello" || exit 99 # dynsym
echo "not an ELF file" >"$F/notelf.txt"
head -c 2000 "$F/hello.debug" >"$F/truncated"
: >"$F/empty"

ID=$(buildid "$tmp/bin/hello")
ID2=$(buildid "$tmp/bin/hello2")
for f in hello.full hello.debug hello.stripped hello.nosym; do
	[ -n "$ID" ] && [ "$(buildid "$F/$f")" = "$ID" ] ||
	    { echo "# fixtures: $f has no or another build-id"; exit 99; }
done
[ -n "$ID2" ] && [ "$ID2" != "$ID" ] &&
    [ "$(buildid "$F/hello2.debug")" = "$ID2" ] ||
    { echo "# fixtures: hello2 has no build-id of its own"; exit 99; }

# quality FILE: what symhubd's X-Symhub-Quality should say for FILE.
quality() {
	"$SYMHUB" info "$1" 2>/dev/null | sed -n 's/^quality: //p'
}
for f in hello.full hello.debug hello.stripped hello2.full hello2.debug \
    hello2.stripped; do
	[ -n "$(quality "$F/$f")" ] || { echo "# no quality for $f"; exit 99; }
done
# The "worse copy" checks need: full > debug (no dynsym) > stripped.
case $(quality "$F/hello2.full") in *debug_info*dynsym*) ;; *)
	echo "# fixtures: hello2.full is not debug_info..dynsym"; exit 99 ;; esac
case $(quality "$F/hello2.debug") in *dynsym*|"")
	echo "# fixtures: hello2.debug has dynsym"; exit 99 ;; esac
case $(quality "$F/hello.stripped") in *debug_info*|"")
	echo "# fixtures: hello.stripped has DWARF"; exit 99 ;; esac

if ! { extract_section "$F/hello.debug" .debug_line "$tmp/f/debug_line" &&
    extract_section "$F/hello.debug" .debug_info "$tmp/f/debug_info" &&
    extract_section "$F/hello.stripped" .text "$tmp/f/text"; }; then
	echo "# cannot extract sections with readelf"
	exit 99
fi

TOKENS=$tmp/tokens
{ TOK_UP=$(new_token ci upload "$TOKENS") &&
    TOK_ADM=$(new_token root admin "$TOKENS") &&
    TOK_ALL=$(new_token ops upload,admin "$TOKENS") &&
    TOK_BAD=$(new_token stranger upload); } ||
    { echo "# symhub token new: $(cat "$tmp/token.err")"; exit 99; }
AUTH_UP="Authorization: Bearer $TOK_UP"
AUTH_ADM="Authorization: Bearer $TOK_ADM"
AUTH_ALL="Authorization: Bearer $TOK_ALL"

P_DBG=/buildid/$ID/debuginfo
P_EXE=/buildid/$ID/executable
P2_DBG=/buildid/$ID2/debuginfo

# ---- helpers ---------------------------------------------------------

# store_state: entries and blobs as /metrics says, on one line.
store_state() {
	echo "entries $(metric symhub_cache_entries)" \
	    "blobs $(metric symhub_cache_blobs)"
}

# expect_put DESC CODE PATH FILE [CURL-ARGS...]: the PUT answers CODE;
# for a 2xx, GET then serves FILE's bytes with FILE's quality.  Every
# case: the store's tmp/ is empty afterwards.  The answer's body is left
# in $tmp/out/put.body.
expect_put() {
	local d=$1 want=$2 path=$3 file=$4 code errs=()
	shift 4
	code=$(put_file "$path" "$file" "$tmp/out/put.body" \
	    "$tmp/out/put.hdrs" "$@")
	[ "$code" = "$want" ] || errs+=("PUT: status $code, want $want:" \
	    "$(head -c 300 "$tmp/out/put.body")")
	if [ "${want#2}" != "$want" ]; then
		code=$(http "$path" "$tmp/out/get.body" "$tmp/out/get.hdrs")
		if [ "$code" != 200 ] || ! cmp -s "$tmp/out/get.body" "$file"
		then
			errs+=("GET after: status $code, or not the bytes of $file")
		elif [ "$(header "$tmp/out/get.hdrs" X-Symhub-Quality)" != \
		    "$(quality "$file")" ]; then
			errs+=("X-Symhub-Quality: '$(header "$tmp/out/get.hdrs" \
			    X-Symhub-Quality)', want '$(quality "$file")'")
		fi
	fi
	dir_empty "$STORE/tmp" || errs+=("tmp/ not empty: $(ls -A "$STORE/tmp")")
	[ ${#errs[@]} -eq 0 ]
	verdict $? "$d ($want)" "${errs[@]}"
}

# expect_refused DESC CODE PATH FILE OLD [CURL-ARGS...]: the PUT answers
# CODE, and nothing was stored: GET answers 404 when OLD is empty, else
# 200 with OLD's bytes; entries and blobs unchanged; tmp/ empty.
expect_refused() {
	local d=$1 want=$2 path=$3 file=$4 old=$5 s0 s1 code errs=()
	shift 5
	s0=$(store_state)
	code=$(put_file "$path" "$file" "$tmp/out/put.body" \
	    "$tmp/out/put.hdrs" "$@")
	[ "$code" = "$want" ] || errs+=("PUT: status $code, want $want:" \
	    "$(head -c 300 "$tmp/out/put.body")")
	code=$(http "$path" "$tmp/out/get.body" "$tmp/out/get.hdrs")
	if [ -z "$old" ]; then
		[ "$code" = 404 ] || errs+=("GET after: status $code, want 404")
	elif [ "$code" != 200 ] || ! cmp -s "$tmp/out/get.body" "$old"; then
		errs+=("GET after: status $code, or not the bytes of $old")
	fi
	s1=$(store_state)
	[ "$s0" = "$s1" ] || errs+=("store changed: $s0 -> $s1")
	dir_empty "$STORE/tmp" || errs+=("tmp/ not empty: $(ls -A "$STORE/tmp")")
	[ ${#errs[@]} -eq 0 ]
	verdict $? "$d ($want, nothing stored)" "${errs[@]}"
}

# body_says DESC WORD...: the last PUT's answer names every WORD
# (case-insensitive).
body_says() {
	local d=$1 w miss=()
	shift
	for w in "$@"; do
		grep -qiF -- "$w" "$tmp/out/put.body" || miss+=("$w")
	done
	[ ${#miss[@]} -eq 0 ]
	verdict $? "$d: '$(head -1 "$tmp/out/put.body")'" \
	    "missing: ${miss[*]}" \
	    "body: $(head -c 300 "$tmp/out/put.body")"
}


# expect_code DESC CODE [CURL-ARGS...] URL-PATH: a request's status.
expect_code() {
	local d=$1 want=$2 code
	shift 2
	code=$(http "${@: -1}" "$tmp/out/body" "$tmp/out/hdrs" "${@:1:$#-1}")
	[ "$code" = "$want" ]
	verdict $? "$d ($want)" "status $code, want $want:" \
	    "$(head -c 200 "$tmp/out/body")"
}

# quality_is DESC PATH FILE: GET and HEAD both carry FILE's quality.
quality_is() {
	local q g h
	q=$(quality "$3")
	http "$2" /dev/null "$tmp/out/q.get" >/dev/null
	http "$2" /dev/null "$tmp/out/q.head" --head >/dev/null
	g=$(header "$tmp/out/q.get" X-Symhub-Quality)
	h=$(header "$tmp/out/q.head" X-Symhub-Quality)
	[ "$g" = "$q" ] && [ "$h" = "$q" ]
	verdict $? "$1: X-Symhub-Quality $q on GET and HEAD" \
	    "GET '$g', HEAD '$h', want '$q'"
}

# start DESC ARGS...: start_symhubd, a check, and STORE set from -d.
start() {
	local d=$1 a prev=
	shift
	for a in "$@"; do
		[ "$prev" = -d ] && STORE=$a
		prev=$a
	done
	if start_symhubd "$@"; then
		pass "$d"
		return 0
	fi
	fail "$d" "$(tail -n 5 "$tmp/symhubd.out")"
	return 1
}

section 'tokens, refusals, invalid files, uploads, clients, DELETE'
logA=$tmp/a.log
start "symhubd with --tokens starts" -d "$tmp/sA" --tokens "$TOKENS" \
    --log-file "$logA" || finish
dir_empty "$STORE/tmp" || { echo "# $STORE/tmp: not a directory"; exit 99; }

# 2. Who may upload.
expect_refused "PUT without a token" 401 "$P_DBG" "$F/hello.debug" ""
expect_refused "PUT with an unknown token" 401 "$P_DBG" "$F/hello.debug" "" \
    -H "Authorization: Bearer $TOK_BAD"
expect_refused "PUT with a malformed Authorization" 401 "$P_DBG" \
    "$F/hello.debug" "" -H "Authorization: Basic $TOK_UP"
expect_refused "PUT with an admin-only token" 403 "$P_DBG" "$F/hello.debug" \
    "" -H "$AUTH_ADM"
expect_refused "PUT of a source (not uploadable)" 405 \
    "/buildid/$ID/source$tmp/src/hello.c" "$tmp/src/hello.c" "" -H "$AUTH_UP"
expect_refused "PUT of a section (not uploadable)" 405 \
    "/buildid/$ID/section/.text" "$tmp/f/text" "" -H "$AUTH_UP"
expect_code "PUT with a malformed build-id" 400 -X PUT \
    --data-binary "@$F/hello.debug" -H "$AUTH_UP" "/buildid/${ID:1}/debuginfo"

# 3. Files that are not what the key says: 422, with the reason.
expect_refused "not ELF" 422 "$P_DBG" "$F/notelf.txt" "" -H "$AUTH_UP"
body_says "not ELF: the answer says why" ELF
expect_refused "truncated ELF (2000 bytes)" 422 "$P_DBG" "$F/truncated" "" \
    -H "$AUTH_UP"
body_says "truncated: the answer says why" ELF
expect_refused "another build's debug file under this id" 422 "$P_DBG" \
    "$F/hello2.debug" "" -H "$AUTH_UP"
body_says "build-id mismatch: the answer says why" build-id "$ID2"
expect_refused "debuginfo without DWARF or symtab (strip --strip-all)" 422 \
    "$P_DBG" "$F/hello.nosym" "" -H "$AUTH_UP"
body_says "no symbols: the answer says why" symbol
expect_refused "a .debug file as executable" 422 "$P_EXE" "$F/hello.debug" "" \
    -H "$AUTH_UP"
body_says "no code: the answer says why" code
expect_refused "an empty body" 422 "$P_DBG" "$F/empty" "" -H "$AUTH_UP"
body_says "empty: the answer says why" empty
expect_refused "an empty executable" 422 "$P_EXE" "$F/empty" "" -H "$AUTH_UP"

# 1. Uploads, read back by every client.
expect_put "PUT hello.debug as debuginfo" 201 "$P_DBG" "$F/hello.debug" \
    -H "$AUTH_UP"
body_says "201: the answer says stored" stored
expect_put "PUT the stripped binary as executable" 201 "$P_EXE" \
    "$F/hello.stripped" -H "$AUTH_UP"
check "symhub_cache_entries is 2" metric_cmp symhub_cache_entries -eq 2
check "symhub_cache_blobs is 2" metric_cmp symhub_cache_blobs -eq 2

client_env
client_file "debuginfod-find debuginfo: the uploaded bytes" "$F/hello.debug" \
    debuginfod-find debuginfo "$ID"
client_file "debuginfod-find executable: the uploaded bytes" \
    "$F/hello.stripped" debuginfod-find executable "$ID"
client_env
client_file "dfclient debuginfo: the uploaded bytes" "$F/hello.debug" \
    "$DFCLIENT" debuginfo "$ID"
client_file "dfclient executable: the uploaded bytes" "$F/hello.stripped" \
    "$DFCLIENT" executable "$ID"
client_file "dfclient section .debug_line of the upload" "$tmp/f/debug_line" \
    "$DFCLIENT" section "$ID" .debug_line

# gdb: the stripped binary alone, its sources hidden; the function and its
# line can only come from the uploaded debuginfo.
client_env
gdb_info_line "gdb: info line square resolves through the upload" \
    "$F/hello.stripped" "$tmp/src"
expect_file "gdb: its debuginfo came from symhubd" \
    "$DEBUGINFOD_CACHE_PATH/$ID/debuginfo" "$F/hello.debug"

# 10. HEAD: 200, Content-Length, X-Symhub-Quality, no body (read off the
# socket, not via curl).
if raw_request HEAD "$P_DBG" "$tmp/out/head"; then
	hlen=$(awk '{ n += length($0) + 1 } $0 == "\r" { print n; exit }' \
	    "$tmp/out/head")
	st=$(head -1 "$tmp/out/head" | awk '{ print $2 }')
	cl=$(header "$tmp/out/head" Content-Length)
	q=$(header "$tmp/out/head" X-Symhub-Quality)
	blen=$(($(file_size "$tmp/out/head") - ${hlen:-0}))
	d="HEAD of an upload: 200, Content-Length, X-Symhub-Quality, no body"
	[ "$st" = 200 ] && [ "$cl" = "$(file_size "$F/hello.debug")" ] &&
	    [ "$q" = "$(quality "$F/hello.debug")" ] && [ -n "$hlen" ] &&
	    [ "$blen" = 0 ]
	verdict $? "$d" \
	    "status $st, Content-Length '$cl', quality '$q'," \
	    "header bytes '$hlen', body $blen bytes"
else
	fail "HEAD of an upload" "no connection"
fi
quality_is "executable" "$P_EXE" "$F/hello.stripped"

# 2. DELETE.
expect_code "DELETE without a token" 401 -X DELETE "$P_DBG"
expect_code "DELETE with an upload-only token" 403 -X DELETE -H "$AUTH_UP" \
    "$P_DBG"
expect_get "after refused DELETEs: still served" "$P_DBG" 200 "$F/hello.debug"
expect_code "DELETE of a section" 405 -X DELETE -H "$AUTH_ADM" \
    "/buildid/$ID/section/.text"
expect_code "DELETE with the admin token" 200 -X DELETE -H "$AUTH_ADM" \
    "$P_DBG"
expect_get "after DELETE: GET -> 404" "$P_DBG" 404
expect_get "after DELETE: the executable is still served" "$P_EXE" 200 \
    "$F/hello.stripped"
check "after DELETE: symhub_cache_blobs is 1" \
    metric_cmp symhub_cache_blobs -eq 1
expect_code "DELETE of a missing key" 404 -X DELETE -H "$AUTH_ADM" "$P_DBG"
expect_code "DELETE with an upload,admin token" 200 -X DELETE -H "$AUTH_ALL" \
    "$P_EXE"
expect_get "after DELETE: executable -> 404" "$P_EXE" 404
# One token with both scopes uploads too.
expect_put "PUT with an upload,admin token" 201 "$P_DBG" "$F/hello.debug" \
    -H "$AUTH_ALL"

# 4. Which copy wins (on ID2).
expect_put "PUT hello2 unstripped as debuginfo" 201 "$P2_DBG" \
    "$F/hello2.full" -H "$AUTH_UP"
quality_is "after the first upload" "$P2_DBG" "$F/hello2.full"
expect_put "the same bytes again" 200 "$P2_DBG" "$F/hello2.full" -H "$AUTH_UP"
body_says "the same bytes: the answer says so" already
expect_refused "a worse copy (hello2.debug, no dynsym)" 409 "$P2_DBG" \
    "$F/hello2.debug" "$F/hello2.full" -H "$AUTH_UP"
body_says "409: the answer says why and how to force" force
quality_is "after the 409" "$P2_DBG" "$F/hello2.full"
expect_refused "X-Symhub-Force: 0 does not force" 409 "$P2_DBG" \
    "$F/hello2.debug" "$F/hello2.full" -H "$AUTH_UP" -H 'X-Symhub-Force: 0'
expect_put "the worse copy with ?force=1" 200 "$P2_DBG?force=1" \
    "$F/hello2.debug" -H "$AUTH_UP"
expect_get "?force=1: GET serves the new bytes" "$P2_DBG" 200 "$F/hello2.debug"
quality_is "after ?force=1" "$P2_DBG" "$F/hello2.debug"
expect_refused "a still worse copy (symtab only) without force" 409 "$P2_DBG" \
    "$F/hello2.stripped" "$F/hello2.debug" -H "$AUTH_UP"
expect_put "the same with X-Symhub-Force: 1" 200 "$P2_DBG" \
    "$F/hello2.stripped" -H "$AUTH_UP" -H 'X-Symhub-Force: 1'
expect_get "X-Symhub-Force: GET serves the new bytes" "$P2_DBG" 200 \
    "$F/hello2.stripped"
quality_is "after X-Symhub-Force" "$P2_DBG" "$F/hello2.stripped"
expect_put "a better copy (hello2.debug) without force" 200 "$P2_DBG" \
    "$F/hello2.debug" -H "$AUTH_UP"
body_says "the better copy: the answer says replaced" replaced
expect_put "the best copy (hello2 unstripped) without force" 200 "$P2_DBG" \
    "$F/hello2.full" -H "$AUTH_UP"
quality_is "after the better copies" "$P2_DBG" "$F/hello2.full"
# One record per key, one blob per distinct content: hello.debug (ID) and
# hello2.full (ID2); the replaced blobs are gone.
check "replaced copies leave no blobs: symhub_cache_blobs is 2" \
    metric_cmp symhub_cache_blobs -eq 2
check "symhub_cache_entries is 2" metric_cmp symhub_cache_entries -eq 2

# 2. The log names the refusals, never a token.
wait_until 5 grep -qF "PUT $P_DBG refused" "$logA"
check "log: names the refused PUT" grep -qF "PUT $P_DBG refused" "$logA"
check "log: names the refused DELETE" grep -qF "DELETE $P_DBG refused" "$logA"
check "log: an upload names its token's name, not the token" \
    grep -qF "upload $P2_DBG by ci: stored" "$logA"
check "symhubd still alive after the uploads" alive "$SYMHUBD_PID"
stop_check "SIGTERM: exit 0"

# Without --tokens: uploads and deletions are refused; uploads persist.
start "restart without --tokens" -d "$tmp/sA" --log-file "$logA" || finish
expect_get "after restart: the upload of ID is served" "$P_DBG" 200 \
    "$F/hello.debug"
expect_get "after restart: the upload of ID2 is served" "$P2_DBG" 200 \
    "$F/hello2.full"
expect_refused "no --tokens: PUT with a valid token" 403 "$P_EXE" \
    "$F/hello.stripped" "" -H "$AUTH_UP"
body_says "no --tokens: the answer says uploads are disabled" disabled
expect_code "no --tokens: DELETE with the admin token" 403 -X DELETE \
    -H "$AUTH_ADM" "$P_DBG"
expect_get "no --tokens: still served after the DELETE" "$P_DBG" 200 \
    "$F/hello.debug"
stop_check "SIGTERM: exit 0"

section 'an upload never hides a better scanned copy'
cp "$F/hello.debug" "$tmp/scan/"
start "symhubd scanning hello.debug, with --tokens" -d "$tmp/sB" \
    -F "$tmp/scan" --tokens "$TOKENS" --log-file "$tmp/b.log" || finish
expect_get "the scanned hello.debug is served" "$P_DBG" 200 "$F/hello.debug"
expect_refused "a symtab-only debuginfo over the scanned file" 409 "$P_DBG" \
    "$F/hello.stripped" "$F/hello.debug" -H "$AUTH_UP"
quality_is "the scanned copy" "$P_DBG" "$F/hello.debug"
# A better upload may replace it; once that is deleted, the scanned file
# must come back (at the latest after a rescan).
expect_put "a better copy (unstripped) over the scanned file" 200 "$P_DBG" \
    "$F/hello.full" -H "$AUTH_UP"
expect_code "DELETE that upload" 200 -X DELETE -H "$AUTH_ADM" "$P_DBG"
check "rescan after the DELETE" rescan
expect_get "after DELETE and rescan: the scanned hello.debug is served again" \
    "$P_DBG" 200 "$F/hello.debug"
stop_check "SIGTERM: exit 0"

section 'concurrent uploads of one key'
start "symhubd on a fresh store" -d "$tmp/sC" --tokens "$TOKENS" \
    --log-file "$tmp/c.log" || finish

# race NAME PATH SPEC...: one curl per SPEC ("FILE" or "FILE force"), all
# at once; codes in $tmp/par/NAME.I.code.
race() {
	local name=$1 path=$2 i=0 s pids=() p file mode
	shift 2
	for s in "$@"; do
		read -r file mode <<<"$s"
		p=$path
		[ "$mode" = force ] && p="$path?force=1"
		curl -s --max-time 20 -o "$tmp/par/$name.$i.body" \
		    -w '%{http_code}' -X PUT --data-binary "@$file" -H "$AUTH_UP" \
		    "$URL$p" >"$tmp/par/$name.$i.code" &
		pids+=($!)
		PIDS+=($!)
		i=$((i + 1))
	done
	for p in "${pids[@]}"; do
		wait_exit "$p" 30 || kill -KILL "$p" 2>/dev/null
	done
}
# codes NAME: the status codes, sorted, on one line.
codes() {
	local f
	for f in "$tmp/par/$1".*.code; do
		cat "$f"
		echo
	done | sort | tr '\n' ' '
}
# codes_ok CODES: eight codes, each 200, 201 or 409.
codes_ok() {
	local c n=0
	for c in $1; do
		case $c in 200|201|409) n=$((n + 1)) ;; *) return 1 ;; esac
	done
	[ "$n" = 8 ]
}

# Round 1: debuginfo; two valid files of different quality, half forced.
race mixed "$P_DBG" "$F/hello.debug" "$F/hello.full" "$F/hello.debug force" \
    "$F/hello.full force" "$F/hello.debug" "$F/hello.full" \
    "$F/hello.debug force" "$F/hello.full force"
c=$(codes mixed)
codes_ok "$c"
verdict $? "8 concurrent uploads (forced or not): all 200/201/409 ($c)" \
    "codes: $c"
n201=$(grep -o 201 <<<"$c" | wc -l)
[ "$n201" = 1 ]
verdict $? "8 concurrent uploads: exactly one 201" "codes: $c"
http "$P_DBG" "$tmp/out/race.dbg" /dev/null >/dev/null
cmp -s "$tmp/out/race.dbg" "$F/hello.debug" ||
    cmp -s "$tmp/out/race.dbg" "$F/hello.full"
verdict $? "after the race: debuginfo serves one of the uploaded files"

# Round 2: executable, nothing forced: whatever the order, the best copy
# (hello.full) must win, and only the first upload may say 201.  A race
# is a matter of luck: five rounds, the key deleted before each.
bad=()
for r in 1 2 3 4 5; do
	code=$(http "$P_EXE" /dev/null /dev/null -X DELETE -H "$AUTH_ALL")
	[ "$r" = 1 ] || [ "$code" = 200 ] || bad+=("round $r: DELETE $code")
	rm -f "$tmp/par/plain".*
	race plain "$P_EXE" "$F/hello.stripped" "$F/hello.full" \
	    "$F/hello.stripped" "$F/hello.full" "$F/hello.stripped" \
	    "$F/hello.full" "$F/hello.stripped" "$F/hello.full"
	c=$(codes plain)
	n201=$(grep -o 201 <<<"$c" | wc -l)
	codes_ok "$c" && [ "$n201" = 1 ] ||
	    bad+=("round $r: codes $c ($n201 x 201)")
	code=$(http "$P_EXE" "$tmp/out/race.exe" /dev/null)
	[ "$code" = 200 ] && cmp -s "$tmp/out/race.exe" "$F/hello.full" ||
	    bad+=("round $r: GET $code, $(cmp -s "$tmp/out/race.exe" \
	    "$F/hello.stripped" && echo "the WORSE copy (hello.stripped) won")")
done
[ ${#bad[@]} -eq 0 ]
verdict $? "5 x 8 concurrent unforced uploads: one 201 each, the best copy won" \
    "${bad[@]}"

# Blobs are content-addressed: one per distinct stored content.
if cmp -s "$tmp/out/race.dbg" "$tmp/out/race.exe"; then nb=1; else nb=2; fi
check "after the races: symhub_cache_entries is 2" \
    metric_cmp symhub_cache_entries -eq 2
check "after the races: symhub_cache_blobs is $nb" \
    metric_cmp symhub_cache_blobs -eq "$nb"
check "after the races: tmp/ is empty" dir_empty "$STORE/tmp"
nfiles=$(find "$STORE/blobs" -type f | wc -l)
check "after the races: $nb blob files on disk (found $nfiles)" \
    test "$nfiles" = "$nb"
stop_check "SIGTERM: exit 0"
start "restart after the races" -d "$tmp/sC" --log-file "$tmp/c.log" ||
    finish
expect_get "after restart: the same debuginfo" "$P_DBG" 200 "$tmp/out/race.dbg"
expect_get "after restart: the same executable" "$P_EXE" 200 "$tmp/out/race.exe"
check "after restart: symhub_cache_blobs is $nb" \
    metric_cmp symhub_cache_blobs -eq "$nb"
stop_check "SIGTERM: exit 0"

section 'SIGKILL mid-upload'
# A valid debug file of a few MB: libc6-dbg's largest, or one built now
# (macros make -g3 DWARF big at little compile time).
BIG=$(find /usr/lib/debug/.build-id -name '*.debug' -type f -size +2M \
    -size -8M -printf '%s %p\n' 2>/dev/null | sort -rn | head -1 | cut -d' ' -f2-)
if [ -z "$BIG" ] || [ -z "$(buildid "$BIG")" ] ||
    ! "$SYMHUB" info "$BIG" 2>/dev/null | grep -q '^quality:.*debug_info'; then
	awk 'BEGIN {
	    for (i = 0; i < 90000; i++)
	        printf "#define SYMHUB_TEST_MACRO_%d \"value %d\"\n", i, i
	    for (i = 0; i < 1000; i++)
	        printf "int f%d(int x) { return x + %d; }\n", i, i
	    print "int main(void) { return f0(0); }" }' >"$tmp/src/big.c"
	gcc -g3 -O0 -o "$tmp/bin/big" "$tmp/src/big.c" &&
	    objcopy --only-keep-debug "$tmp/bin/big" "$F/big.debug" || exit 99
	BIG=$F/big.debug
fi
BIGID=$(buildid "$BIG")
P_BIG=/buildid/$BIGID/debuginfo
echo "# big upload: $BIG, $(file_size "$BIG") bytes"

start "symhubd for the killed upload" -d "$tmp/sD" --tokens "$TOKENS" \
    --log-file "$tmp/d.log" || finish
b0=$(metric symhub_cache_blobs)
partial() {
	[ -n "$(find "$STORE/tmp" -type f -size +0c 2>/dev/null)" ]
}
# A client that goes away mid-upload leaves nothing behind.
curl -s --max-time 60 --limit-rate 200k -o /dev/null -X PUT \
    --data-binary "@$BIG" -H "$AUTH_UP" "$URL$P_BIG" &
cpid=$!
PIDS+=("$cpid")
if wait_until 20 partial; then
	kill -TERM "$cpid"
	wait_exit "$cpid" 10
	wait_until 10 dir_empty "$STORE/tmp"
	verdict $? "a client gone mid-upload: tmp/ emptied" \
	    "$(ls -la "$STORE/tmp")"
else
	fail "a client gone mid-upload: its upload reached tmp/" \
	    "$(ls -la "$STORE/tmp")"
fi
expect_get "a client gone mid-upload: the key is 404" "$P_BIG" 404
check "a client gone mid-upload: symhub_cache_blobs unchanged ($b0)" \
    metric_cmp symhub_cache_blobs -eq "$b0"
check "symhubd alive after the client went away" alive "$SYMHUBD_PID"

curl -s --max-time 60 --limit-rate 200k -o /dev/null -X PUT \
    --data-binary "@$BIG" -H "$AUTH_UP" "$URL$P_BIG" &
cpid=$!
PIDS+=("$cpid")
if wait_until 20 partial; then
	pass "the slow upload has reached tmp/" \
	    "($(find "$STORE/tmp" -type f -printf '%s ')bytes)"
else
	fail "the slow upload has reached tmp/" "$(ls -la "$STORE/tmp")"
fi
# (bash reports a job killed by a signal on stderr: not news here)
{ kill -KILL "$SYMHUBD_PID"; wait_exit "$SYMHUBD_PID" 10; } 2>/dev/null
check "symhubd killed mid-upload (status $exit_status)" test "$exit_status" = 137
wait_exit "$cpid" 20 || kill -KILL "$cpid" 2>/dev/null
check "the killed daemon left a partial file in tmp/" partial
start "restart on the store after SIGKILL" -d "$tmp/sD" --tokens "$TOKENS" \
    --log-file "$tmp/d.log" || finish
check "after SIGKILL and restart: tmp/ is empty" dir_empty "$STORE/tmp"
expect_get "after SIGKILL: the key is 404" "$P_BIG" 404
check "after SIGKILL: symhub_cache_blobs unchanged ($b0)" \
    metric_cmp symhub_cache_blobs -eq "$b0"
nfiles=$(find "$STORE/blobs" -type f | wc -l)
check "after SIGKILL: no blob file left behind (found $nfiles)" \
    test "$nfiles" = "$b0"
expect_put "the retried upload" 201 "$P_BIG" "$BIG" -H "$AUTH_UP"
stop_check "SIGTERM: exit 0"

section 'uploads survive eviction under a 1-byte budget'
start "symhubd with --cache-max 1" -d "$tmp/sE" --cache-max 1 \
    --tokens "$TOKENS" --log-file "$tmp/e.log" || finish
expect_put "budget 1: PUT debuginfo" 201 "$P_DBG" "$F/hello.debug" \
    -H "$AUTH_UP"
expect_put "budget 1: PUT executable" 201 "$P_EXE" "$F/hello.stripped" \
    -H "$AUTH_UP"
expect_get "budget 1: section .debug_line of the upload" \
    "/buildid/$ID/section/.debug_line" 200 "$tmp/f/debug_line"
expect_get "budget 1: section .debug_info of the upload" \
    "/buildid/$ID/section/.debug_info" 200 "$tmp/f/debug_info"
expect_get "budget 1: section .text of the upload" \
    "/buildid/$ID/section/.text" 200 "$tmp/f/text"
wait_metric symhub_cache_evictions_total -ge 1 15
verdict $? "budget 1: sections evicted ($(metric symhub_cache_evictions_total))" \
    "symhub_cache_evictions_total '$(metric symhub_cache_evictions_total)'"
expect_get "budget 1, after eviction: debuginfo" "$P_DBG" 200 "$F/hello.debug"
expect_get "budget 1, after eviction: executable" "$P_EXE" 200 \
    "$F/hello.stripped"
stop_check "SIGTERM: exit 0"
start "budget 1: restart" -d "$tmp/sE" --cache-max 1 --log-file "$tmp/e.log" ||
    finish
expect_get "budget 1, after restart: debuginfo" "$P_DBG" 200 "$F/hello.debug"
expect_get "budget 1, after restart: executable" "$P_EXE" 200 \
    "$F/hello.stripped"
stop_check "SIGTERM: exit 0"

section '--max-upload-size'
[ "$(file_size "$F/hello.full")" -gt 10240 ] &&
    [ "$(file_size "$F/hello.debug")" -le 10240 ] ||
    { echo "# fixtures: sizes do not straddle 10k"; exit 99; }
start "symhubd with --max-upload-size 10k" -d "$tmp/sF" \
    --max-upload-size 10k --tokens "$TOKENS" --log-file "$tmp/f.log" || finish
expect_refused "over the limit, Content-Length known" 413 "$P_EXE" \
    "$F/hello.full" "" -H "$AUTH_UP"
expect_refused "over the limit, chunked" 413 "$P_EXE" "$F/hello.full" "" \
    -H "$AUTH_UP" -H "Transfer-Encoding: chunked"
expect_put "under the limit" 201 "$P_DBG" "$F/hello.debug" -H "$AUTH_UP"
expect_refused "over the limit, chunked, onto a stored key" 413 "$P_DBG" \
    "$F/hello.full" "$F/hello.debug" -H "$AUTH_UP" \
    -H "Transfer-Encoding: chunked"
stop_check "SIGTERM: exit 0"

section 'a read-only store: 507'
# Root ignores permissions, so a read-only mount it must be.
ro_store() {
	local mnt=$tmp/mnt-ro code
	mkdir -p "$mnt"
	if [ "$(id -u)" != 0 ] ||
	    ! mount -t tmpfs -o size=16m symhub-test "$mnt" 2>/dev/null; then
		skip_check "read-only store: not root or cannot mount a tmpfs"
		return
	fi
	MOUNTS+=("$mnt")
	start "read-only store: create it" -d "$mnt/store" \
	    --log-file "$tmp/g.log" || return
	stop_symhubd
	if ! mount -o remount,ro "$mnt" 2>/dev/null; then
		skip_check "read-only store: remount,ro not permitted"
		return
	fi
	start "read-only store: symhubd starts" -d "$mnt/store" \
	    --tokens "$TOKENS" --log-file "$tmp/g.log" || return
	expect_get "read-only store: nothing there" "$P_DBG" 404
	code=$(put_file "$P_DBG" "$F/hello.debug" "$tmp/out/put.body" \
	    /dev/null -H "$AUTH_UP")
	check "read-only store: PUT -> 507 (got $code)" test "$code" = 507
	expect_get "read-only store: still nothing there" "$P_DBG" 404
	stop_check "SIGTERM: exit 0"
}
ro_store

section 'FileIDs'
# The FileID of doc/protocol.md ("Keys"), computed here independently.
fileid_ref() {
	python3 - "$1" <<'PYEOF'
import hashlib, struct, sys
d = open(sys.argv[1], "rb").read()
h = hashlib.sha256(d[:4096] + d[-4096:] + struct.pack(">Q", len(d)))
print(h.hexdigest()[:32])
PYEOF
}
(cd "$tmp/src" && gcc -g -O0 -Wl,--build-id=none -o "$tmp/bin/nobid" \
    hello.c greet.c) && objcopy --only-keep-debug "$tmp/bin/nobid" \
    "$F/nobid.debug" && strip -g -o "$F/nobid.stripped" "$tmp/bin/nobid" ||
    { echo "# fixtures: cannot build a binary without a build-id"; exit 99; }
FID=$("$SYMHUB" fileid "$F/hello.stripped")
NFID=$("$SYMHUB" fileid "$F/nobid.stripped")
check "symhub fileid of a real fixture matches an independent computation" \
    test "$FID" = "$(fileid_ref "$F/hello.stripped")"
check "symhub fileid of the build-id-less fixture, likewise" \
    test "$NFID" = "$(fileid_ref "$F/nobid.stripped")"

start "symhubd for FileIDs" -d "$tmp/sG" --tokens "$TOKENS" \
    --log-file "$tmp/g.log" || finish
expect_code "an unknown FileID: 404" 404 "/fileid/$NFID/debuginfo"
expect_code "a FileID of the wrong length: 400" 400 "/fileid/${FID:2}/debuginfo"
expect_put "executable by build-id" 201 "$P_EXE" "$F/hello.stripped" \
    -H "$AUTH_UP"
expect_get "its FileID finds it: /fileid/FILEID/executable" \
    "/fileid/$FID/executable" 200 "$F/hello.stripped"
expect_put "debuginfo naming the deployed binary's FileID" 201 "$P_DBG" \
    "$F/hello.debug" -H "$AUTH_UP" -H "X-Symhub-FileID: $FID"
expect_get "/fileid/FILEID/debuginfo serves the symbols" \
    "/fileid/$FID/debuginfo" 200 "$F/hello.debug"
expect_get "/buildid/FILEID/debuginfo falls back to the FileID map" \
    "/buildid/$FID/debuginfo" 200 "$F/hello.debug"
expect_code "a malformed X-Symhub-FileID: 400" 400 -X PUT \
    --data-binary "@$F/hello.debug" -H "$AUTH_UP" \
    -H "X-Symhub-FileID: nothex" "$P_DBG"
expect_refused "a binary without a build-id under /buildid/" 422 \
    "/buildid/$NFID/executable" "$F/nobid.stripped" "" -H "$AUTH_UP"
body_says "the answer points to /fileid/" fileid
expect_refused "the wrong file under /fileid/FILEID/executable" 422 \
    "/fileid/$NFID/executable" "$F/hello.stripped" "" -H "$AUTH_UP"
body_says "FileID mismatch: the answer says why" FileID
expect_put "a binary without a build-id, by FileID" 201 \
    "/fileid/$NFID/executable" "$F/nobid.stripped" -H "$AUTH_UP"
expect_put "its debug file, by FileID" 201 "/fileid/$NFID/debuginfo" \
    "$F/nobid.debug" -H "$AUTH_UP"
client_env
out=$(debuginfod-find debuginfo "$NFID" 2>&1) && cmp -s "$out" \
    "$F/nobid.debug"
verdict $? "debuginfod-find with the FileID as id gets the symbols" "$out"
stop_check "SIGTERM: exit 0"
start "restart on the same store" -d "$tmp/sG" --tokens "$TOKENS" \
    --log-file "$tmp/g.log" || finish
expect_get "the FileID map survives a restart" "/fileid/$FID/debuginfo" \
    200 "$F/hello.debug"
expect_get "and so does a FileID-only upload" "/fileid/$NFID/executable" \
    200 "$F/nobid.stripped"
stop_check "SIGTERM: exit 0"

section 'the tokens never reach a log'
leaks=()
for t in "$TOK_UP" "$TOK_ADM" "$TOK_ALL" "$TOK_BAD"; do
	f=$(grep -lF "$t" "$tmp"/*.log "$tmp/symhubd.out" 2>/dev/null) &&
	    leaks+=("${t:0:8}... in $f")
done
[ ${#leaks[@]} -eq 0 ]
verdict $? "no token appears in any log or on symhubd's stderr" "${leaks[@]}"

echo "# $(($(date +%s) - t0)) s"
finish
