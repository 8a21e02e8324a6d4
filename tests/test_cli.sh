#!/bin/bash
# Integration test of `symhub upload`: a real symhubd with a tokens file on
# 127.0.0.1, fixtures built now; what the CLI prints and exits with, what
# reaches the hub (its access log: HEAD and PUT lines), and what
# debuginfod-find then gets back, byte for byte.  A small recorder (python3)
# stands in for a hub once, to see the headers the CLI sends.  At the end,
# the store commands on a path that is not a store.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_cli.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy strip readelf cmp timeout awk sed ss \
    debuginfod-find python3 gdb
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"

log=$tmp/symhubd.log

section 'fixtures'
# hello: unstripped; .stripped keeps the symbol table (strip -g), .bare
# has only dynamic symbols (strip -s), .debug is objcopy --only-keep-debug.
# hello2 and hello3 are other builds, so other build-ids.
mkdir -p "$tmp"/{src,bin,out,dir,rec} || exit 99
cp "$FIXTURES"/hello.c "$FIXTURES"/greet.c "$FIXTURES"/greet.h "$tmp/src/" ||
    exit 99
B=$tmp/bin
(cd "$tmp/src" && gcc -g -O0 -o "$B/hello" hello.c greet.c &&
    gcc -g -O1 -o "$B/hello2" hello.c greet.c &&
    gcc -g -O2 -o "$B/hello3" hello.c greet.c) || exit 99
for p in hello hello2; do
	strip -g -o "$B/$p.stripped" "$B/$p" &&
	    objcopy --only-keep-debug "$B/$p" "$B/$p.debug" || exit 99
done
strip -s -o "$B/hello.bare" "$B/hello" || exit 99
ID=$(buildid "$B/hello")
ID2=$(buildid "$B/hello2")
ID3=$(buildid "$B/hello3")
if [ -z "$ID" ] || [ -z "$ID2" ] || [ -z "$ID3" ] || [ "$ID" = "$ID2" ] ||
    [ "$ID" = "$ID3" ] || [ "$ID2" = "$ID3" ] ||
    [ "$ID" != "$(buildid "$B/hello.stripped")" ]; then
	echo "# fixtures: missing or equal build-ids"
	exit 99
fi

# The token: stdout alone; the tokens-file line is stderr's last line.
TOKEN=$("$SYMHUB" token new ci 2>"$tmp/tokline") || exit 99
tail -n 1 "$tmp/tokline" >"$tmp/tokens" || exit 99
[ ${#TOKEN} -eq 64 ] || { echo "# symhub token new: '$TOKEN'"; exit 99; }
unset SYMHUB_TOKEN

if start_symhubd -d "$tmp/store" --tokens "$tmp/tokens" --log-file "$log"
then
	pass "symhubd starts with a tokens file"
else
	fail "symhubd starts with a tokens file" \
	    "$(tail -n 5 "$tmp/symhubd.out" "$log" 2>/dev/null)"
	finish
fi

# count METHOD: requests of that method for artifacts in the access log.
count() {
	grep -c " $1 /buildid/" "$log"
}

# count_is METHOD N, count_ge METHOD N: for wait_until.
count_is() {
	[ "$(count "$1")" -eq "$2" ]
}
count_ge() {
	[ "$(count "$1")" -ge "$2" ]
}

# up NAME ARGS...: run symhub upload --url $URL ARGS; stdout, stderr and
# the exit status to $tmp/out/NAME.{out,err,rc}.
up() {
	local n=$1
	shift
	timeout 30 "$SYMHUB" upload --url "$URL" "$@" \
	    >"$tmp/out/$n.out" 2>"$tmp/out/$n.err"
	echo $? >"$tmp/out/$n.rc"
}

# sync_log: every request of the programs run so far is in the access
# log.  They have all had their answers, so a request made now and seen
# in the log (a miss for a made-up id) comes after theirs.
nsync=0
sync_log() {
	local id
	nsync=$((nsync + 1))
	id=$(printf 'feed%036x' "$nsync")
	http_code "$URL/buildid/$id/debuginfo" >/dev/null
	wait_until 5 grep -q " GET /buildid/$id/debuginfo " "$log"
}

rc_of() {
	cat "$tmp/out/$1.rc"
}

# expect_rc DESC NAME CODE
expect_rc() {
	[ "$(rc_of "$2")" = "$3" ]
	verdict $? "$1" "exit status $(rc_of "$2"), want $3" \
	    "$(cat "$tmp/out/$2.out" "$tmp/out/$2.err")"
}

# has DESC NAME out|err REGEX: a line of the output matches.
has() {
	grep -Eq -- "$4" "$tmp/out/$2.$3"
	verdict $? "$1" "no line matching '$4' in $3:" \
	    "$(cat "$tmp/out/$2.out" "$tmp/out/$2.err")"
}

# fetch_cmp DESC ID KIND EXPECTED: debuginfod-find through symhubd gets
# EXPECTED's bytes.
fetch_cmp() {
	local f
	client_env
	f=$(debuginfod-find "$3" "$2" 2>/dev/null)
	[ -n "$f" ] && cmp -s "$f" "$4"
	verdict $? "$1" "debuginfod-find $3 $2: '${f:-(nothing)}'"
}

section 'the CI case: -e stripped -d unstripped'
up first --token "$TOKEN" -e "$B/hello.stripped" -d "$B/hello"
expect_rc "upload -e -d exits 0" first 0
has "the debuginfo is stored" first out \
    "^stored +debuginfo +$ID +$B/hello\$"
has "the executable is stored" first out \
    "^stored +executable +$ID +$B/hello.stripped\$"
has "summary counts two stored" first out \
    '^2 stored, 0 replaced, 0 unchanged, 0 skipped, 0 failed$'
check "the hub logged two PUTs" wait_until 5 count_is PUT 2
fetch_cmp "debuginfod-find debuginfo gives the -d file's bytes" "$ID" \
    debuginfo "$B/hello"
fetch_cmp "debuginfod-find executable gives the -e file's bytes" "$ID" \
    executable "$B/hello.stripped"
# The hub records the FileID that came with the PUTs (X-Symhub-FileID):
# asked by the deployed file's FileID, it answers with the debuginfo.
FID=$("$SYMHUB" fileid "$B/hello.stripped")
fetch_cmp "the hub knows the debuginfo by the -e file's FileID" "$FID" \
    debuginfo "$B/hello"

# gdb on the deployed (stripped) binary alone, its sources hidden: the
# function and its line can only come from the uploaded debuginfo.
client_env
gdb_info_line "gdb resolves the deployed binary through the upload" \
    "$B/hello.stripped" "$tmp/src"

section 'a re-run asks, and sends nothing'
heads=$(count HEAD)
up again --token "$TOKEN" -e "$B/hello.stripped" -d "$B/hello"
expect_rc "the same upload again exits 0" again 0
has "debuginfo: already there, with the hub's quality" again out \
    "^skipped +debuginfo +$ID +$B/hello +already there \(debug_info,"
has "executable: already there" again out \
    "^skipped +executable +$ID +$B/hello.stripped +already there \("
has "summary counts two skipped" again out \
    '^0 stored, 0 replaced, 0 unchanged, 2 skipped, 0 failed$'
check "the re-run asked the hub (two HEADs)" \
    wait_until 5 count_ge HEAD $((heads + 2))
sync_log
check "the re-run sent no PUT" test "$(count PUT)" = 2

# A worse debug file than the hub's is not sent either.
up worse --token "$TOKEN" -e "$B/hello.stripped" -d "$B/hello.debug"
has "a worse -d file is skipped" worse out \
    "^skipped +debuginfo +$ID +$B/hello.debug +already there"
sync_log
check "... and not sent" test "$(count PUT)" = 2

section '--force sends without asking'
heads=$(count HEAD)
up force --token "$TOKEN" --force -e "$B/hello.stripped" -d "$B/hello"
expect_rc "--force exits 0" force 0
has "--force re-sends: the hub has the same bytes" force out \
    "^same +debuginfo +$ID +$B/hello\$"
check "--force sent two PUTs" wait_until 5 count_is PUT 4
sync_log
check "--force did not ask first" test "$(count HEAD)" = "$heads"
# Forced, a worse file replaces a better one (unforced: "already there").
up forceworse --token "$TOKEN" -f -e "$B/hello.stripped" -d "$B/hello.debug"
has "--force replaces with a worse file" forceworse out \
    "^replaced +debuginfo +$ID +$B/hello.debug\$"
fetch_cmp "... which the hub then serves" "$ID" debuginfo "$B/hello.debug"
up better --token "$TOKEN" -e "$B/hello.stripped" -d "$B/hello"
has "a better file replaces it without --force" better out \
    "^replaced +debuginfo +$ID +$B/hello\$"
has "... while the executable is skipped" better out \
    "^skipped +executable +$ID +$B/hello.stripped +already there"
fetch_cmp "... and the hub serves it again" "$ID" debuginfo "$B/hello"

section 'refusals before anything is sent'
puts=$(count PUT)
heads=$(count HEAD)
up mismatch --token "$TOKEN" -e "$B/hello.stripped" -d "$B/hello2"
[ "$(rc_of mismatch)" != 0 ] && [ "$(rc_of mismatch)" != 2 ]
verdict $? "-e and -d with different build-ids: an error" \
    "exit status $(rc_of mismatch)"
has "the error names both build-ids" mismatch err "$ID.*$ID2"
up nosyms --token "$TOKEN" -e "$B/hello.stripped" -d "$B/hello.bare"
expect_rc "-d without DWARF or symbols: exit 1" nosyms 1
has "... saying so" nosyms err "no DWARF and no symbol table"
up notoken -e "$B/hello2.stripped" -d "$B/hello2"
expect_rc "no token: usage error, exit 2" notoken 2
up bothtokens --token "$TOKEN" --token-file "$tmp/tokens" -e "$B/hello2"
expect_rc "--token and --token-file together: exit 2" bothtokens 2
up badj --token "$TOKEN" -j 0 -e "$B/hello2"
expect_rc "-j 0: exit 2" badj 2
up both --token "$TOKEN" -e "$B/hello2" "$B/hello3"
expect_rc "-e with PATHs: exit 2" both 2
sync_log
check "none of these sent anything (no HEAD, no PUT)" \
    test "$(count PUT) $(count HEAD)" = "$puts $heads"

section 'a bad token'
up badtoken --token "0123456789abcdef" -e "$B/hello2.stripped" -d "$B/hello2"
expect_rc "a bad token: exit 1" badtoken 1
has "... a failed line with the hub's 401" badtoken err \
    "^failed +debuginfo +$ID2 +$B/hello2 +401 "
has "... counted in the summary" badtoken out ' 2 failed$'
check "... and the hub stored nothing" \
    test "$(http_code "$URL/buildid/$ID2/debuginfo")" = 404

section '--dry-run'
puts=$(count PUT)
up dry --token "$TOKEN" --dry-run -e "$B/hello2.stripped" -d "$B/hello2"
expect_rc "--dry-run exits 0" dry 0
has "--dry-run says what would be sent" dry out \
    "^would +debuginfo +$ID2 +$B/hello2 +debug_info"
has "--dry-run summary" dry out '^2 would be sent, 0 skipped, 0 failed'
up drynotoken --dry-run "$B/hello"
expect_rc "--dry-run needs no token" drynotoken 0
has "... and still asks the hub" drynotoken out \
    "^skipped +debuginfo +$ID +$B/hello +already there"
has "... which has a worse executable" drynotoken out \
    "^would +executable +$ID +$B/hello +debug_info,.* \(the hub has symtab"
sync_log
check "--dry-run sent no PUT" test "$(count PUT)" = "$puts"

section 'the token from the environment'
SYMHUB_TOKEN=$TOKEN up env -j 1 -e "$B/hello2.stripped" -d "$B/hello2.debug"
expect_rc "SYMHUB_TOKEN: exit 0" env 0
has "SYMHUB_TOKEN: stored" env out "^stored +debuginfo +$ID2 +$B/hello2.debug\$"
fetch_cmp "hello2's debuginfo is the .debug file" "$ID2" debuginfo \
    "$B/hello2.debug"

section 'a directory, with --token-file'
# hello3 is new; hello.stripped is there already; a text file and a link
# (to hello3: not followed, so not reported) ride along.
cp "$B/hello3" "$B/hello.stripped" "$tmp/dir/" || exit 99
echo "not a program" >"$tmp/dir/README.txt"
mkdir -p "$tmp/dir/sub" && cp "$B/hello2.debug" "$tmp/dir/sub/" || exit 99
ln -s "$B/hello3" "$tmp/dir/link"
printf '  %s  \nsecond line\n' "$TOKEN" >"$tmp/tokfile"
up dir --token-file "$tmp/tokfile" "$tmp/dir"
expect_rc "a directory with --token-file: exit 0" dir 0
has "the text file is skipped" dir out \
    "^skipped +- +- +$tmp/dir/README.txt +not an ELF file"
has "the new program is stored as debuginfo" dir out \
    "^stored +debuginfo +$ID3 +$tmp/dir/hello3\$"
has "... and as executable" dir out \
    "^stored +executable +$ID3 +$tmp/dir/hello3\$"
has "a subdirectory is searched" dir out \
    "^skipped +debuginfo +$ID2 +$tmp/dir/sub/hello2.debug +already there"
! grep -q "$tmp/dir/link" "$tmp/out/dir.out" "$tmp/out/dir.err"
verdict $? "a symbolic link inside is not followed" \
    "$(cat "$tmp/out/dir.out")"
has "directory summary" dir out \
    '^2 stored, 0 replaced, 0 unchanged, 4 skipped, 0 failed$'
fetch_cmp "hello3's executable is the unstripped file" "$ID3" executable \
    "$B/hello3"

up quiet --token "$TOKEN" -q "$tmp/dir"
expect_rc "-q: exit 0" quiet 0
check "-q prints the summary alone" test "$(cat "$tmp/out/quiet.out")" = \
    "0 stored, 0 replaced, 0 unchanged, 6 skipped, 0 failed"

section 'what goes on the wire: a recorder in place of the hub'
cat >"$tmp/rec/rec.py" <<'EOF'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_HEAD(self):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def do_PUT(self):
        n = int(self.headers["Content-Length"])
        body = self.rfile.read(n)
        with open(sys.argv[2], "a") as f:
            f.write("%s %s %s %d\n" % (self.path,
                self.headers.get("X-Symhub-FileID"),
                self.headers.get("Authorization"), len(body)))
        self.send_response(201)
        self.send_header("Content-Length", "7")
        self.end_headers()
        self.wfile.write(b"stored\n")
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
print("ready", flush=True)
s.serve_forever()
EOF
# Another port when someone took this one between free_port and bind.
for try in 1 2 3 4 5; do
	RPORT=$(free_port)
	python3 "$tmp/rec/rec.py" "$RPORT" "$tmp/rec/puts" \
	    >"$tmp/rec/ready" 2>&1 &
	rpid=$!
	PIDS+=("$rpid")
	wait_until 10 eval "grep -qx ready '$tmp/rec/ready' || ! alive $rpid"
	grep -qx ready "$tmp/rec/ready" && break
	grep -q 'Address already in use' "$tmp/rec/ready" || break
done
if grep -qx ready "$tmp/rec/ready"; then
	timeout 30 "$SYMHUB" upload --url "http://127.0.0.1:$RPORT/" \
	    --token "$TOKEN" -e "$B/hello.stripped" -d "$B/hello" \
	    >"$tmp/out/rec.out" 2>&1
	n=$(grep -c " $FID Bearer $TOKEN " "$tmp/rec/puts" 2>/dev/null)
	[ "$n" = 2 ]
	verdict $? "both PUTs carry the -e file's FileID and the token" \
	    "want FileID $FID" "$(cat "$tmp/rec/puts" 2>/dev/null)"
	grep -q "^/buildid/$ID/debuginfo .* $(file_size "$B/hello")\$" \
	    "$tmp/rec/puts"
	verdict $? "the debuginfo body is the whole -d file" \
	    "$(cat "$tmp/rec/puts")"
else
	fail "the recorder starts" "$(cat "$tmp/rec/ready")"
fi

section 'the token is never printed'
! grep -rqF "$TOKEN" "$tmp/out"
verdict $? "the token appears in no output" "$(grep -rlF "$TOKEN" "$tmp/out")"

section 'store commands refuse a path that is not a store'
# A scheduled `store verify` of a mistyped path must alert: each command
# exits 1, says what is missing, and creates nothing (no store in the
# path, no export directory).
mkdir -p "$tmp/ns/empty" || exit 99
: >"$tmp/ns/file"
for cmd in "store verify" "store rebuild" "export"; do
	for what in missing empty file; do
		dir=$tmp/ns/$what
		out=()
		[ "$cmd" = export ] && out=("$tmp/ns/exp")
		# shellcheck disable=SC2086 # "store verify": two words
		"$SYMHUB" $cmd "$dir" "${out[@]}" >"$tmp/out/ns" \
		    2>"$tmp/out/ns.err"
		st=$?
		case $what in
		missing) want="$dir: no such directory" ;;
		file) want="$dir is not a directory" ;;
		*) want="$dir is not a symhub store: no index/data.mdb" ;;
		esac
		d="symhub $cmd, $what path: exit 1, says so, creates nothing"
		[ "$st" = 1 ] && grep -qF "symhub $cmd: $want" \
		    "$tmp/out/ns.err" && [ ! -e "$tmp/ns/missing" ] &&
		    dir_empty "$tmp/ns/empty" && [ -f "$tmp/ns/file" ] &&
		    [ ! -e "$tmp/ns/exp" ]
		verdict $? "$d" "exit $st" \
		    "$(cat "$tmp/out/ns.err" "$tmp/out/ns")" \
		    "$(find "$tmp/ns" | sed "s|^$tmp/||")"
	done
done
# A store whose index was lost (catalog/ alone) is one: verify points at
# rebuild, which rebuilds it.
mkdir -p "$tmp/ns/lost/catalog" || exit 99
"$SYMHUB" store verify "$tmp/ns/lost" >"$tmp/out/ns" 2>"$tmp/out/ns.err"
st=$?
[ "$st" = 1 ] && [ ! -e "$tmp/ns/lost/index" ] &&
    grep -qF "run 'symhub store rebuild $tmp/ns/lost'" "$tmp/out/ns.err"
verdict $? "store verify of a store without its index: run rebuild" \
    "exit $st" "$(cat "$tmp/out/ns.err")"
"$SYMHUB" store rebuild "$tmp/ns/lost" >"$tmp/out/ns" 2>"$tmp/out/ns.err"
st=$?
"$SYMHUB" store verify "$tmp/ns/lost" >"$tmp/out/ns" 2>>"$tmp/out/ns.err"
st2=$?
[ "$st" = 0 ] && [ "$st2" = 0 ] &&
    grep -q "^verified 0 blobs" "$tmp/out/ns"
verdict $? "... which rebuilds it; then verify passes" "rebuild: exit $st" \
    "verify: exit $st2" "$(cat "$tmp/out/ns.err" "$tmp/out/ns")"

section '--help'
# symhub --help names the commands with a help text of their own, and
# each gives one; the others print the usage instead of taking --help
# for a name or a path (issue 28: it named upload's alone).
"$SYMHUB" --help >"$tmp/out/help" 2>&1
check "symhub --help: exit 0" [ $? = 0 ]
for c in gsym upload prefetch perf pprof otlp export import; do
	"$SYMHUB" $c --help >"$tmp/out/help.$c" 2>&1
	st=$?
	[ "$st" = 0 ] && grep -q "^usage: symhub $c" "$tmp/out/help.$c" &&
	    grep -A2 'COMMAND --help' "$tmp/out/help" | grep -qw "$c"
	verdict $? "symhub --help points at $c --help, which answers" \
	    "exit $st" "$(head -n 3 "$tmp/out/help.$c")" \
	    "$(tail -n 3 "$tmp/out/help")"
done
for c in "token new" "store verify" buildid info; do
	"$SYMHUB" $c --help >"$tmp/out/help.x" 2>&1
	st=$?
	[ "$st" = 0 ] && grep -q '^usage: symhub' "$tmp/out/help.x" &&
	    ! grep -Eq '[0-9a-f]{64}' "$tmp/out/help.x"
	verdict $? "symhub $c --help: the usage, nothing done" "exit $st" \
	    "$(head -n 3 "$tmp/out/help.x")"
done

stop_check "symhubd stops cleanly"
finish
