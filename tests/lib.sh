#!/bin/bash
# Shared helpers for the shell integration tests; sourced, never run.
#
# Sourcing sets up: $tmp (a fresh directory, removed at exit), a trap that
# ends every process started through these helpers (by PID) and unmounts
# what was mounted, counters for pass/fail, and the paths of the programs
# under test.  Everything written goes under $tmp, so `make distcheck`
# (read-only srcdir) works.  SYMHUB_TEST_KEEP=1 keeps $tmp for a look.

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${top_builddir:=.}"
# Absolute, so that helpers may change directory.
top_srcdir=$(cd "$top_srcdir" && pwd) || exit 99
top_builddir=$(cd "$top_builddir" && pwd) || exit 99
export LC_ALL=C

# shellcheck disable=SC2034 # for the test that sources this
{
SYMHUBD=$top_builddir/src/symhubd/symhubd
SYMHUB=$top_builddir/src/symhub/symhub
DFCLIENT=$top_builddir/tests/dfclient
FIXTURES=$top_srcdir/tests/fixtures
}

# Never let a proxy from the environment stand between client and server.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost

tmp=$(mktemp -d "${TMPDIR:-/tmp}/symhub-test.XXXXXX") || exit 99
# Resolved, as the daemon names scanned files by their real paths.
tmp=$(cd "$tmp" && pwd -P) || exit 99

npass=0
nfail=0
nskip=0
ncheck=0
PIDS=()
MOUNTS=()

# ---- reporting --------------------------------------------------------

pass() {
	ncheck=$((ncheck + 1))
	npass=$((npass + 1))
	echo "ok $ncheck - $*"
}

# fail DESCRIPTION [DETAIL...]: details are printed as '#' lines.
fail() {
	local d=$1
	shift
	ncheck=$((ncheck + 1))
	nfail=$((nfail + 1))
	echo "not ok $ncheck - $d"
	local l
	for l in "$@"; do
		printf '%s\n' "$l" | sed 's/^/#   /'
	done
}

# check DESCRIPTION COMMAND...: pass when the command succeeds.
check() {
	local d=$1
	shift
	if "$@"; then
		pass "$d"
	else
		fail "$d" "command failed: $*"
	fi
}

# check_exit DESCRIPTION WANT GOT [COMMAND...]: pass when an exit status
# GOT (taken as `$?` right after the program) is WANT and the command,
# when given (a grep of the program's output), succeeds too.
check_exit() {
	local d=$1 want=$2 got=$3
	shift 3
	if [ "$got" != "$want" ]; then
		fail "$d" "exit status $got, want $want"
	elif [ $# -gt 0 ] && ! "$@"; then
		fail "$d" "command failed: $*"
	else
		pass "$d"
	fi
}

# verdict STATUS DESCRIPTION [DETAIL...]: pass when STATUS, the `$?` of
# the command just before, is 0, else fail with the DETAIL lines (what
# was seen instead).  `$?` goes first: it is expanded before the
# details, whose command substitutions would set it.
#   [ "$code" = 200 ] && cmp -s "$got" "$want"
#   verdict $? "200 with the bytes" "status $code, $(wc -c <"$got") bytes"
verdict() {
	local rc=$1
	shift
	if [ "$rc" = 0 ]; then
		pass "$1"
	else
		fail "$@"
	fi
}

# skip_check DESCRIPTION [REASON...]: a check that cannot run here,
# printed as a SKIP line with its reason and counted in the summary (CI,
# which installs every tool, fails on it).
skip_check() {
	local d=$1
	shift
	nskip=$((nskip + 1))
	if [ $# -gt 0 ]; then
		echo "SKIP: $d ($*)"
	else
		echo "SKIP: $d"
	fi
}

# section TITLE: the next numbered section of the suite, printed so that a
# log reader finds where a failure happened.
nsection=0
section() {
	nsection=$((nsection + 1))
	echo "# $nsection. $*"
}

# The whole test cannot run: Automake's "skipped" status.
skip() {
	echo "SKIP: $*"
	exit 77
}

need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || skip "$t not found"
	done
}

# The last line: "N passed, M failed, K skipped"; exit status 1 when any
# failed.
finish() {
	echo "$npass passed, $nfail failed, $nskip skipped"
	[ "$nfail" -eq 0 ]
	exit $?
}

# ---- cleanup ----------------------------------------------------------

# Is PID still a live process (not gone, not a zombie)?
alive() {
	local st
	kill -0 "$1" 2>/dev/null || return 1
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ "$st" != Z ] && [ "$st" != X ]
}

forget_pid() {
	local p keep=()
	for p in "${PIDS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	PIDS=("${keep[@]}")
}

# wait_exit PID SECONDS: wait for a child to end; its exit status is
# left in $exit_status (124 when it did not end in time).
wait_exit() {
	local pid=$1 n=$(($2 * 20))
	while alive "$pid" && [ "$n" -gt 0 ]; do
		sleep 0.05
		n=$((n - 1))
	done
	if alive "$pid"; then
		exit_status=124
		return 1
	fi
	wait "$pid" 2>/dev/null
	exit_status=$?
	forget_pid "$pid"
	return 0
}

cleanup() {
	local p m
	stop_s3
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		wait_exit "$p" 5 || { kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; }
	done
	for m in "${MOUNTS[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	if [ -n "$SYMHUB_TEST_KEEP" ]; then
		echo "# kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
on_exit() {
	local st=$?
	cleanup
	exit "$st"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- waiting ----------------------------------------------------------

# wait_until SECONDS COMMAND...: poll the command until it succeeds.
wait_until() {
	local n=$(($1 * 20))
	shift
	until "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.05
	done
}

# ---- ports and the daemon ----------------------------------------------

port_free() {
	! ss -Htan 2>/dev/null | awk '{ print $4 }' | grep -q ":$1\$"
}

# A port on 127.0.0.1 that nothing listens on or connects from right now.
free_port() {
	local p
	if command -v ss >/dev/null 2>&1; then
		for _ in $(seq 100); do
			p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
			port_free "$p" && { echo "$p"; return 0; }
		done
	fi
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# metrics_text [URL]: the /metrics page of the current (or given) daemon.
metrics_text() {
	curl -s --max-time 5 "${1:-$URL}/metrics"
}

# metric NAME [URL]: the value of one sample (NAME with its labels, as
# printed), or nothing.
metric() {
	metrics_text "$2" | awk -v n="$1" '$1 == n { print $2; exit }'
}

# metric_cmp NAME OP VALUE [URL], OP one of -ge -gt -eq -le -lt.
metric_cmp() {
	local v
	v=$(metric "$1" "$4")
	[ -n "$v" ] || return 1
	awk -v a="$v" -v b="$3" -v op="$2" 'BEGIN {
	    a += 0; b += 0; r = 0
	    if (op == "-ge") r = a >= b
	    else if (op == "-gt") r = a > b
	    else if (op == "-eq") r = a == b
	    else if (op == "-le") r = a <= b
	    else if (op == "-lt") r = a < b
	    exit !r }'
}

# wait_metric NAME OP VALUE [SECONDS]
wait_metric() {
	wait_until "${4:-20}" metric_cmp "$1" "$2" "$3"
}

is_ready() {
	metrics_text "$1" | grep -qx 'ready 1'
}

# start_symhubd ARGS...: start symhubd on a free port with ARGS, wait
# until /metrics says "ready 1".  Sets PORT, URL, SYMHUBD_PID.  Retries
# with another port when the daemon dies early (someone took the port).
# Returns 1 when it never became ready.
start_symhubd() {
	local try n
	for try in 1 2 3 4 5; do
		PORT=$(free_port)
		URL=http://127.0.0.1:$PORT
		# symhubd takes DEBUGINFOD_URLS as its upstreams: the clients'
		# setting must not make it federate to itself.
		env -u DEBUGINFOD_URLS "$SYMHUBD" -p "$PORT" "$@" \
		    >>"$tmp/symhubd.out" 2>&1 &
		SYMHUBD_PID=$!
		PIDS+=("$SYMHUBD_PID")
		n=400	# 20 s
		while [ "$n" -gt 0 ]; do
			is_ready "$URL" && return 0
			alive "$SYMHUBD_PID" || break
			sleep 0.05
			n=$((n - 1))
		done
		if alive "$SYMHUBD_PID"; then
			echo "# symhubd pid $SYMHUBD_PID not ready after 20 s"
			return 1
		fi
		wait_exit "$SYMHUBD_PID" 1
		echo "# symhubd exited early with status $exit_status (try $try)"
	done
	return 1
}

# hub ARGS...: start_symhubd, or fail the test here.
hub() {
	if ! start_symhubd "$@"; then
		fail "symhubd starts with $*" "$(tail -n 5 "$tmp/symhubd.out")"
		finish
	fi
}

# stop_check DESC: stop the daemon; it must exit 0 within 10 s.
stop_check() {
	stop_symhubd "$SYMHUBD_PID"
	if [ "$exit_status" = 0 ]; then
		pass "$1"
	else
		fail "$1" "exit status $exit_status (124: still running)"
	fi
}

# stop_symhubd [PID]: SIGTERM, wait up to 10 s; the exit status is left
# in $exit_status.  Returns 1 when it did not end in time (it is then
# killed).
stop_symhubd() {
	local pid=${1:-$SYMHUBD_PID}
	kill -TERM "$pid" 2>/dev/null
	if ! wait_exit "$pid" 10; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		forget_pid "$pid"
		exit_status=124
		return 1
	fi
	return 0
}

# rescan: SIGHUP the daemon and wait for the scan pass it starts to end.
rescan() {
	local p
	p=$(metric symhub_scan_passes_total) || return 1
	[ -n "$p" ] || return 1
	kill -HUP "$SYMHUBD_PID" || return 1
	wait_metric symhub_scan_passes_total -ge $((p + 1)) 20
}

# ---- clients ----------------------------------------------------------

# client_env: a fresh libdebuginfod client cache pointed at $URL, so that
# no earlier answer (positive or negative) can hide the server's.
client_env() {
	export DEBUGINFOD_URLS=$URL
	export DEBUGINFOD_TIMEOUT=10
	export DEBUGINFOD_CACHE_PATH
	DEBUGINFOD_CACHE_PATH=$(mktemp -d "$tmp/dcache.XXXXXX")
	unset DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE DEBUGINFOD_MAXSIZE \
	    DEBUGINFOD_MAXTIME DEBUGINFOD_RETRY_LIMIT DEBUGINFOD_HEADERS_FILE
}

# http PATH BODY HDRS [CURL-ARGS...]: GET (by default) $URL/PATH, body and
# headers to files; prints the status code (000 when no answer).
http() {
	local path=$1 body=$2 hdrs=$3
	shift 3
	curl -s --path-as-is --max-time 10 -o "$body" -D "$hdrs" \
	    -w '%{http_code}' "$@" "$URL$path"
}

# header FILE NAME: the value of a response header (case-insensitive).
header() {
	awk -v n="$(echo "$2" | tr "[:upper:]" "[:lower:]")" '{
	    sub(/\r$/, "")
	    i = index($0, ":")
	    if (i && tolower(substr($0, 1, i - 1)) == n) {
	        v = substr($0, i + 1); sub(/^[ \t]+/, "", v); print v; exit
	    } }' "$1"
}

# raw_request METHOD PATH OUT: one HTTP/1.1 request over /dev/tcp, the
# whole answer (headers and any body) to OUT.
raw_request() {
	local fd
	exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || return 1
	printf '%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' \
	    "$1" "$2" >&"$fd"
	timeout 10 cat <&"$fd" >"$3"
	exec {fd}<&-
}

# expect_file DESC PATH EXPECTED: PATH (a client's answer) exists and has
# EXPECTED's bytes; a failure shows the end of $tmp/out/err, the client's
# standard error, when there is one.
expect_file() {
	if [ -n "$2" ] && [ -f "$2" ] && cmp -s "$2" "$3"; then
		pass "$1"
	elif [ -s "$tmp/out/err" ]; then
		fail "$1" "got '${2:-(no path)}', expected the bytes of $3" \
		    "$(tail -3 "$tmp/out/err")"
	else
		fail "$1" "got '${2:-(no path)}', expected the bytes of $3"
	fi
}

# client_file DESC EXPECTED COMMAND...: a client (debuginfod-find,
# dfclient) prints the path of what it got; that file must hold
# EXPECTED's bytes.  The client's standard error goes to $tmp/out/err.
client_file() {
	local d=$1 e=$2 f
	shift 2
	f=$(timeout 30 "$@" 2>"$tmp/out/err")
	expect_file "$d" "$f" "$e"
}

# expect_status DESC WANT GOT [OUT]: a status code (and the body, shown
# when it is not the one wanted).
expect_status() {
	if [ "$3" = "$2" ]; then
		pass "$1"
	else
		fail "$1" "status $3, want $2" \
		    "$( [ -n "$4" ] && head -c 200 "$4" 2>/dev/null)"
	fi
}

# ---- ELF fixtures -----------------------------------------------------

# buildid FILE: the GNU build-id as readelf prints it.
buildid() {
	readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }'
}

# elf_section FILE NAME: "TYPE ADDRESS OFFSET SIZE" of a section (hex, as
# readelf prints them), nothing when there is none.
elf_section() {
	readelf -S -W "$1" 2>/dev/null | sed -n 's/^ *\[ *[0-9]*\] //p' |
	    awk -v n="$2" '$1 == n { print $2, $3, $4, $5; exit }'
}

# extract_section FILE NAME OUT: the raw bytes of a section, found with
# readelf's offset and size (fails for a missing or NOBITS section).
extract_section() {
	local addr off size type
	read -r type addr off size < <(elf_section "$1" "$2")
	[ -n "$off" ] && [ "$type" != NOBITS ] || return 1
	tail -c +$((16#$off + 1)) "$1" | head -c $((16#$size)) >"$3"
}

file_size() {
	stat -c %s "$1"
}

# ---- upstreams: real and misbehaving (tests/federation.sh) ---------------

BADUPSTREAM=$top_srcdir/tests/badupstream.py

# http_code URL [CURL-ARGS...]: the status of a GET (000: no answer).
http_code() {
	local u=$1
	shift
	curl -s --path-as-is --max-time 10 -o /dev/null -w '%{http_code}' \
	    "$@" "$u"
}

# http_is URL CODE: does a GET of URL answer CODE?
http_is() {
	[ "$(http_code "$1")" = "$2" ]
}

# wait_http SECONDS URL CODE: poll until a GET of URL answers CODE.
wait_http() {
	wait_until "$1" http_is "$2" "$3"
}

# start_symhubd_at PORT ARGS...: start_symhubd on a given port, one try
# (for daemons that must know each other's port before they start).
# Sets PORT, URL, SYMHUBD_PID.  Returns 1 when it never became ready.
start_symhubd_at() {
	local n=400	# 20 s
	PORT=$1
	shift
	URL=http://127.0.0.1:$PORT
	env -u DEBUGINFOD_URLS "$SYMHUBD" -p "$PORT" "$@" \
	    >>"$tmp/symhubd.out" 2>&1 &
	SYMHUBD_PID=$!
	PIDS+=("$SYMHUBD_PID")
	while [ "$n" -gt 0 ]; do
		is_ready "$URL" && return 0
		alive "$SYMHUBD_PID" || return 1
		sleep 0.05
		n=$((n - 1))
	done
	return 1
}

# start_debuginfod NAME PORT DIR...: elfutils' debuginfod over the ELF
# files under DIRs (-F), on PORT, or on a free port when PORT is empty
# (retried should someone take it).  Database $tmp/NAME.sqlite, output
# $tmp/NAME.log (one line per request).  Waits until /metrics answers;
# indexing may still be under way.  Sets DPORT, DURL, DPID.
# With DEBUGINFOD_FED=URLS it federates to them (else to nothing).
start_debuginfod() {
	local name=$1 want=$2 try n
	shift 2
	for try in 1 2 3 4 5; do
		DPORT=${want:-$(free_port)}
		DURL=http://127.0.0.1:$DPORT
		# It federates to DEBUGINFOD_URLS: to $DEBUGINFOD_FED only.
		env -u DEBUGINFOD_URLS \
		    ${DEBUGINFOD_FED:+DEBUGINFOD_URLS="$DEBUGINFOD_FED"} \
		    debuginfod -F -t 0 -g 0 -p "$DPORT" \
		    -d "$tmp/$name.sqlite" "$@" >>"$tmp/$name.log" 2>&1 &
		DPID=$!
		PIDS+=("$DPID")
		n=400
		while [ "$n" -gt 0 ]; do
			[ "$(http_code "$DURL/metrics")" = 200 ] && return 0
			alive "$DPID" || break
			sleep 0.05
			n=$((n - 1))
		done
		alive "$DPID" && return 1
		wait_exit "$DPID" 1
		[ -z "$want" ] || return 1
	done
	return 1
}

# start_badupstream NAME MODE [ARG]: tests/badupstream.py on a free port,
# waited for until it says "ready".  Sets BPORT, BURL, BPID.
start_badupstream() {
	local name=$1 try
	shift
	for try in 1 2 3 4 5; do
		BPORT=$(free_port)
		BURL=http://127.0.0.1:$BPORT
		: >"$tmp/$name.ready"
		python3 "$BADUPSTREAM" "$1" "$BPORT" "${@:2}" \
		    >"$tmp/$name.ready" 2>>"$tmp/$name.err" &
		BPID=$!
		PIDS+=("$BPID")
		wait_until 10 eval "grep -qx ready '$tmp/$name.ready' ||
		    ! alive $BPID"
		grep -qx ready "$tmp/$name.ready" && return 0
		alive "$BPID" && return 1
		wait_exit "$BPID" 1
	done
	return 1
}

# ---- the test clock (src/base/clock.h) ----------------------------------

# test_clock_built: was this build configured with the test clock
# (--enable-test-clock, implied by --enable-sanitizers)?  make check says
# so in SYMHUB_TEST_CLOCK_BUILT; by hand, look for its code in symhubd.
test_clock_built() {
	case ${SYMHUB_TEST_CLOCK_BUILT:-} in
	yes) return 0 ;;
	no) return 1 ;;
	esac
	nm "$SYMHUBD" 2>/dev/null | grep -q ' clock_test_init$'
}

# clock_init: a clock file at offset 0, named in SYMHUB_TEST_CLOCK for
# every symhubd started from now on (each maps it once, at start).
clock_init() {
	export SYMHUB_TEST_CLOCK=$tmp/test-clock
	CLOCK_MS=0
	clock_write
}

# clock_write: write $CLOCK_MS in place, in the file's fixed 32 bytes (a
# daemon maps it: truncating it would pull the page from under it).
clock_write() {
	printf '%-31s\n' "$CLOCK_MS" |
	    dd of="$SYMHUB_TEST_CLOCK" conv=notrunc status=none
}

# clock_step SECONDS: move the daemons' clocks forward (whole or decimal
# seconds); nothing sleeps.
clock_step() {
	CLOCK_MS=$((CLOCK_MS + $(awk -v s="$1" 'BEGIN { printf "%d", s * 1000 }')))
	clock_write
}

# ---- an S3 server (tests/s3/start-s3.sh) -------------------------------

# need_swift: skip the test unless Swift's Debian packages are there.
need_swift() {
	local t
	for t in swift-ring-builder swift-proxy-server swift-object-server \
	    swift-container-server swift-account-server memcached; do
		command -v "$t" >/dev/null 2>&1 || skip "$t not found (Debian:" \
		    "swift swift-proxy swift-object swift-container" \
		    "swift-account memcached)"
	done
}

# five_free PORT...: the first PORT with PORT..PORT+4 free.
five_free() {
	local p i
	for p in "$@"; do
		for i in 0 1 2 3 4; do
			port_free $((p + i)) || continue 2
		done
		echo "$p"
		return 0
	done
	return 1
}

# start_s3: a one-node Swift with its S3 API in $S3DIR ($tmp/s3), on
# PORT..PORT+4: SYMHUB_S3_PORT, else five free ones picked at random (not
# a fixed port: suites run two at a time, and two Swifts must not meet);
# a second call after stop_s3 starts it again on the same port, with the
# same objects.  Stopped at exit.  Sets S3_ENDPOINT S3_REGION
# S3_ACCESS_KEY S3_SECRET_KEY S3_BUCKET.  Its errors: $tmp/start-s3.err.
S3DIR=$tmp/s3
S3_BASE=
start_s3() {
	local try base out
	for try in 1 2 3; do
		base=${S3_BASE:-$SYMHUB_S3_PORT}
		[ -n "$base" ] || base=$(five_free \
		    $((20000 + RANDOM % 30000)) $((20000 + RANDOM % 30000)) \
		    $((20000 + RANDOM % 30000))) || continue
		if out=$("$top_srcdir/tests/s3/start-s3.sh" "$S3DIR" "$base" \
		    2>"$tmp/start-s3.err"); then
			S3_BASE=$base
			eval "$out"
			return 0
		fi
		stop_s3
		[ -z "$S3_BASE$SYMHUB_S3_PORT" ] || break
	done
	return 1
}

# stop_s3: stop it, by the PIDs its script wrote.
stop_s3() {
	[ -d "$S3DIR/run" ] &&
	    "$top_srcdir/tests/s3/stop-s3.sh" "$S3DIR" >/dev/null 2>&1
	return 0
}

# ---- uploads (tests/test_upload.sh) ------------------------------------

# new_token NAME SCOPES [FILE]: a fresh token from `symhub token new`,
# printed; its tokens-file line (the last line on stderr, after the hint)
# is appended to FILE when given.  Fails on a malformed line.
new_token() {
	local tok line
	tok=$("$SYMHUB" token new "$1" "$2" 2>"$tmp/token.err") || return 1
	line=$(tail -n 1 "$tmp/token.err")
	[[ $tok =~ ^[0-9a-f]{64}$ ]] || return 1
	[[ $line =~ ^"$1"\ [0-9a-f]{64}\ "$2"$ ]] || return 1
	[ -z "$3" ] || echo "$line" >>"$3" || return 1
	echo "$tok"
}

# put_file PATH FILE BODY HDRS [CURL-ARGS...]: PUT FILE's bytes to
# $URL/PATH (an empty FILE sends an empty body), answer body and headers
# to files; prints the status code (000 when no answer).
put_file() {
	local path=$1 file=$2
	shift 2
	http "$path" "$1" "$2" -X PUT --data-binary "@$file" "${@:3}"
}

# dir_empty DIR: DIR exists and holds nothing.
dir_empty() {
	[ -d "$1" ] && [ -z "$(ls -A "$1")" ]
}

# expect_get DESC PATH CODE [FILE [CURL-ARGS...]]: GET answers CODE, and
# when FILE is given and not empty, FILE's bytes.
expect_get() {
	local d=$1 path=$2 want=$3 exp=$4 code
	shift 4 2>/dev/null || shift $#
	code=$(http "$path" "$tmp/out/body" "$tmp/out/hdrs" "$@")
	if [ "$code" != "$want" ]; then
		fail "$d" "GET $path: status $code, want $want" \
		    "$(head -c 200 "$tmp/out/body" 2>/dev/null)"
	elif [ -n "$exp" ] && ! cmp -s "$tmp/out/body" "$exp"; then
		fail "$d" "GET $path: body differs from $exp"
	else
		pass "$d"
	fi
}

# gdb_info_line DESC BINARY SRCDIR: gdb with debuginfod on resolves
# `info line square` in BINARY, copied alone to a directory with SRCDIR
# hidden, so the function and its line can only come from the server.
# Call client_env first.
gdb_info_line() {
	local d=$1 dir
	dir=$(mktemp -d "$tmp/gdb.XXXXXX") && cp "$2" "$dir/hello" ||
	    { fail "$d" "cannot copy $2"; return; }
	(cd "$dir" && timeout 30 gdb -nx -batch \
	    -iex 'set debuginfod enabled on' \
	    -iex "set substitute-path $3 $tmp/nonexistent" \
	    -ex 'info line square' "$dir/hello") >"$dir/out" 2>&1
	if grep -Eq '^Line [0-9]+ of "hello.c".*<square' "$dir/out"; then
		pass "$d"
	else
		fail "$d" "$(head -20 "$dir/out")"
	fi
}
