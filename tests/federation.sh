#!/bin/bash
# Shared by the federation scenarios (tests/test_federation_*.sh); sourced
# after tests/lib.sh, never run.  symhubd's federation: misses fanned out
# to upstream debuginfod servers.  The upstreams are two real elfutils
# debuginfod servers over different programs (fed_upstreams), plus
# misbehaving ones from tests/badupstream.py (hangs, resets, lies,
# trickles, counts requests, or answers as a case file of tests/cases/
# says).  The clients are curl, debuginfod-find, libdebuginfod (dfclient)
# and gdb.

need curl gcc objcopy strip readelf cmp timeout awk sed ss python3 \
    debuginfod debuginfod-find gdb
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$DFCLIENT" ] || skip "$DFCLIENT not built (make check builds it)"
[ -r "$BADUPSTREAM" ] || { echo "# $BADUPSTREAM missing"; exit 99; }

t0=$(date +%s)
unset DEBUGINFOD_URLS

section 'fixtures'
# prog1 and prog2 from the same fixture files, built in different
# directories, at different optimization levels (so different build-ids),
# and prog2's hello.c has one more line (so its source bytes differ too).
# The sources stay where they were built: debuginfod serves /source from
# the files its DWARF names.
mkdir -p "$tmp"/{src1,src2,bin,up1,up2,orig,out,gdb,par} || exit 99
cp "$FIXTURES"/hello.c "$FIXTURES"/greet.c "$FIXTURES"/greet.h \
    "$tmp/src1/" || exit 99
cp "$FIXTURES"/hello.c "$FIXTURES"/greet.c "$FIXTURES"/greet.h \
    "$tmp/src2/" || exit 99
echo '/* prog2 */' >>"$tmp/src2/hello.c"
(cd "$tmp/src1" && gcc -g -O0 -o "$tmp/bin/prog1" hello.c greet.c) || exit 99
(cd "$tmp/src2" && gcc -g -O1 -o "$tmp/bin/prog2" hello.c greet.c) || exit 99
for p in prog1 prog2; do
	d=$tmp/up${p#prog}
	objcopy --only-keep-debug "$tmp/bin/$p" "$d/$p.debug" || exit 99
	strip -g -o "$d/$p.stripped" "$tmp/bin/$p" || exit 99
	cp "$d/$p.debug" "$d/$p.stripped" "$tmp/orig/" || exit 99
	extract_section "$d/$p.debug" .debug_info "$tmp/orig/$p.debug_info" ||
	    exit 99
	extract_section "$d/$p.debug" .debug_line "$tmp/orig/$p.debug_line" ||
	    exit 99
done
DBG1=$tmp/orig/prog1.debug
EXE1=$tmp/orig/prog1.stripped
DBG2=$tmp/orig/prog2.debug
EXE2=$tmp/orig/prog2.stripped
SRC1=$tmp/src1/hello.c
SRC2=$tmp/src2/hello.c
ID1=$(buildid "$tmp/bin/prog1")
ID2=$(buildid "$tmp/bin/prog2")
if [ -z "$ID1" ] || [ -z "$ID2" ] || [ "$ID1" = "$ID2" ] ||
    [ "$ID1" != "$(buildid "$EXE1")" ] || [ "$ID2" != "$(buildid "$DBG2")" ]
then
	echo "# fixtures: missing or equal build-ids ($ID1, $ID2)"
	exit 99
fi
cmp -s "$SRC1" "$SRC2" && { echo "# fixtures: same hello.c"; exit 99; }

# next_unknown: set U to a new id nobody has.  Each check takes its own,
# so that no entry left by an earlier check can answer for it.
n_unknown=0
next_unknown() {
	n_unknown=$((n_unknown + 1))
	U=$(printf 'feedc0de%032x' "$n_unknown")
}

# ---- helpers -----------------------------------------------------------

# get URL OUT [CURL-ARGS...]: one GET; body to OUT, headers to OUT.hdr.
# Sets code (000: no HTTP answer), cexit (curl's exit status: 56 for a
# connection reset) and secs (the time it took).
get() {
	local u=$1 out=$2 w
	shift 2
	rm -f "$out" "$out.hdr"
	w=$(curl -s --path-as-is --max-time 15 -o "$out" -D "$out.hdr" \
	    -w '%{http_code} %{time_total}' "$@" "$u")
	cexit=$?
	read -r code secs <<<"$w"
}

# less A B: is the number A smaller than B?
less() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }'
}

# expect_url DESC URL EXPECTED-FILE [CURL-ARGS...]: 200 with those bytes.
expect_url() {
	local d=$1 u=$2 exp=$3
	shift 3
	get "$u" "$tmp/out/body" "$@"
	if [ "$code" = 200 ] && cmp -s "$tmp/out/body" "$exp"; then
		pass "$d"
	elif [ "$code" = 200 ]; then
		fail "$d" "GET $u: 200, but not the bytes of $exp"
	else
		fail "$d" "GET $u: status $code (curl exit $cexit), want 200"
	fi
}

# expect_reset DESC URL MAX-SECONDS [CURL-ARGS...]: the connection is
# reset (curl exit 56), no HTTP answer, within MAX-SECONDS.  A reset is
# symhubd's answer when it knows nothing definite: libdebuginfod retries
# it, where it would cache any HTTP error (or a closed connection) as
# "not found" for 10 minutes.
expect_reset() {
	local d=$1 u=$2 max=$3
	shift 3
	get "$u" "$tmp/out/body" "$@"
	[ "$code" = 000 ] && [ "$cexit" = 56 ] && less "$secs" "$max"
	verdict $? "$d (${secs}s)" \
	    "GET $u: status $code, curl exit $cexit (want 000, 56:" \
	    "connection reset) after ${secs}s (want < ${max}s)" \
	    "$(head -c 200 "$tmp/out/body" 2>/dev/null)"
}

# seen LOG ID KIND: how many requests for /buildid/ID/KIND a log shows
# (a debuginfod log, a count-server log or a symhubd access log).
seen() {
	local n
	n=$(grep -c "GET /buildid/$2/$3[[:space:]]" "$1" 2>/dev/null)
	echo "${n:-0}"
}

# access LOG ID KIND: the last access-log line of symhubd for it.
access() {
	grep "GET /buildid/$2/$3 " "$1" | tail -1
}

# fed_upstreams [2]: elfutils' debuginfod over prog1 (up1: UP1, UP1_PID,
# its log $tmp/up1.log) and, with 2, over prog2 (up2: UP2), checked to
# serve their own program only.  Ends the test when one does not start.
fed_upstreams() {
	section 'the upstreams'
	if start_debuginfod up1 "" "$tmp/up1" &&
	    wait_http 30 "$DURL/buildid/$ID1/debuginfo" 200; then
		UP1=$DURL
		UP1_PID=$DPID
		pass "debuginfod up1 serves prog1"
	else
		fail "debuginfod up1 serves prog1" "$(tail -n 5 "$tmp/up1.log")"
		finish
	fi
	[ "$1" = 2 ] || return 0
	if start_debuginfod up2 "" "$tmp/up2" &&
	    wait_http 30 "$DURL/buildid/$ID2/debuginfo" 200; then
		UP2=$DURL
		pass "debuginfod up2 serves prog2"
	else
		fail "debuginfod up2 serves prog2" "$(tail -n 5 "$tmp/up2.log")"
		finish
	fi
	# The fixtures are where the issue wants them: each id on one upstream.
	http_is "$UP1/buildid/$ID2/debuginfo" 404 &&
	    http_is "$UP2/buildid/$ID1/debuginfo" 404 &&
	    http_is "$UP1/buildid/$ID1/source$SRC1" 200 &&
	    http_is "$UP2/buildid/$ID2/source$SRC2" 200
	verdict $? "each upstream has only its own program, sources included"
}

# ---- case files (tests/cases/README) ------------------------------------

CASES=$top_srcdir/tests/cases

# case_values FILE KEY: the values of FILE's KEY lines, one a line, with
# {U}, {ID1} and {ID2} put in.
case_values() {
	sed -n "s/^$2: *//p" "$1" |
	    sed -e "s/{U}/$U/g" -e "s/{ID1}/$ID1/g" -e "s/{ID2}/$ID2/g"
}

# got_header LINE NAME: the value of header NAME in a request line of the
# fake upstream's log ("METHOD PATH" then "\tName: value" each), "" when
# it has none.
got_header() {
	printf '%s\n' "$1" | tr '\t' '\n' |
	    awk -v n="$(echo "$2" | tr '[:upper:]' '[:lower:]')" '{
	    i = index($0, ":")
	    if (i && tolower(substr($0, 1, i - 1)) == n) {
	        print substr($0, i + 2); exit } }'
}

# matches VALUE OP WANT: OP "=" (equal) or "~" (an extended regular
# expression that matches).
matches() {
	case $2 in
	=) [ "$1" = "$3" ] ;;
	"~") printf '%s\n' "$1" | grep -Eq -- "$3" ;;
	*) return 1 ;;
	esac
}

# run_case NAME: the scenario tests/cases/NAME: its fake upstream, a hub
# federating to it alone, one request, a check per expect-* line.
run_case() {
	local name=$1 f=$CASES/$1 log=$tmp/case-$1.requests spec method path
	local args=() h line hits key val n op want v
	[ -r "$f" ] || { fail "case $name" "$f: no such case"; return; }
	section "case $name: $(sed -n 's/^# *//p' "$f" | head -1)"
	next_unknown
	: >"$log"
	if ! start_badupstream "case-$name" case "$f" "$log"; then
		fail "$name: the fake upstream starts" \
		    "$(cat "$tmp/case-$name.err")"
		return
	fi
	spec="$BURL name=case"
	if grep -q '^upstream-header-file:' "$f"; then
		case_values "$f" upstream-header-file >"$tmp/case-$name.headers"
		spec="$spec header-file=$tmp/case-$name.headers"
	fi
	hub -d "$tmp/store-case-$name" -u "$spec" \
	    --log-file "$tmp/case-$name.log"
	read -r method path < <(case_values "$f" request)
	args=(-X "$method")
	while IFS= read -r h; do
		args+=(-H "$h")
	done < <(case_values "$f" request-header)
	get "$URL$path" "$tmp/out/case" "${args[@]}"
	hits=$(awk -v r="$method $path" -F '\t' '$1 == r' "$log" | wc -l)
	line=$(awk -v r="$method $path" -F '\t' '$1 == r' "$log" | head -1)
	while IFS= read -r h; do
		key=${h%%:*}
		val=$(printf '%s\n' "${h#*:}" | sed -e 's/^ *//' \
		    -e "s/{U}/$U/g" -e "s/{ID1}/$ID1/g" -e "s/{ID2}/$ID2/g")
		case $key in
		expect-status)
			if [ "$val" = reset ]; then
				check "$name: the hub resets the connection" \
				    test "$code $cexit" = "000 56"
			else
				expect_status "$name: status $val" "$val" \
				    "$code" "$tmp/out/case"
			fi ;;
		expect-hits)
			check "$name: the upstream got $val request(s) ($hits)" \
			    test "$hits" = "$val" ;;
		expect-header|expect-upstream-header)
			read -r n op want <<<"$val"
			if [ "$key" = expect-header ]; then
				v=$(header "$tmp/out/case.hdr" "$n")
			else
				v=$(got_header "$line" "$n")
			fi
			if [ "$op" = absent ]; then
				check "$name: ${key#expect-} $n absent ($v)" \
				    test -z "$v"
			else
				check "$name: ${key#expect-} $n $op $want ($v)" \
				    matches "$v" "$op" "$want"
			fi ;;
		expect-upstream-lacks)
			check "$name: the upstream got no '$val'" \
			    eval '[ -n "$line" ] &&
			    ! printf "%s" "$line" | grep -qF -- "$val"' ;;
		expect-metric)
			read -r n op want <<<"$val"
			# Some are counted just after the answer is sent.
			check "$name: $n $op $want" wait_metric "$n" "$op" \
			    "$want" 5 ;;
		expect-*)
			fail "$name: unknown check '$key'" ;;
		esac
	done < <(grep '^expect-' "$f")
	stop_symhubd
	stop_symhubd "$BPID"
}
