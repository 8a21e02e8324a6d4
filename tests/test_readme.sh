#!/bin/bash
# The README's walkthroughs, run as a reader runs them (issue 28): the
# short tour (index, clients, upstreams, uploads, GSYM, batches, the
# store), the air gap, perf, sources (uploaded with the build, embedded
# in DWARF, the profiler's views, across the gap), profiles (pprof, with
# go tool pprof; OTLP, read back by protoc's Python), access (read tokens, private uploads, TLS at nginx),
# and scaling with a real Swift and nginx.
#
# Each code block the README marks with a comment right above it,
#
#   <!-- walkthrough: NAME/STEP [machine=M | machines=M1,M2,...] -->
#
# is run from README.md itself: the sh blocks of one walkthrough in one
# bash, in their order, under `set -e -o pipefail` (a failing command
# fails its step, and the steps after it are not reached), from a fresh
# directory that stands for the checkout (./src/symhub/symhub is the
# built tool; ./src/symhubd/symhubd, and symhubd on PATH, the built
# daemon).  A line ending in `&` starts a hub in the background: the
# harness waits until it answers "ready 1" on /metrics.  machine=M runs a
# block on machine M (its own root, HOME, checkout and port), machines=
# on each of them in turn; an nginx block is a part of nginx's http {}
# block, run by a real nginx.
#
# What only a real site has is replaced, in the blocks' text and nowhere
# else: absolute paths (/srv/, /var/cache/symhub, /etc/symhub/) go under
# the machine's root and /media/usb under one shared directory; port 8002
# (127.0.0.1:8002, hub:8002, 0.0.0.0:8002, 10.0.0.N:8002) is the
# machine's free port, and nginx's `listen 80` one more; the public
# upstream debuginfod.elfutils.org is a local elfutils debuginfod
# holding what it would serve (the system's libc and ld.so, the
# walkthroughs' programs), the private debuginfod.corp.example a local
# server that answers 404 and logs the headers it got; the bucket
# s3.example.com and its keys are a local Swift's (tests/s3); the TLS
# site symbols.example.com is a real nginx on a free port whose
# certificate (/etc/ssl/symhub/) is a self-signed one made here, trusted
# through CURL_CA_BUNDLE; and
# `apt-get download`, which needs Debian's mirrors, copies a .deb the
# test builds with dpkg-deb from the installed libc6-dbg (libc's and
# ld.so's debug files).  The programs the walkthroughs take as given
# (/srv/builds, /srv/ci/app, app, core.1234, cpu.pb.gz, the perf hub at
# hub:8002) are built here from tests/fixtures, and the checkout holds
# tests/fixtures/app.c.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_readme.sh [NAME...]
# (NAME: tour airgap perf sources profiles access scaling; all by
# default).

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc objcopy strip readelf curl gdb debuginfod debuginfod-find \
    dpkg-deb dpkg-query python3 ss
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
README=${SYMHUB_README:-$top_srcdir/README.md}
[ -r "$README" ] || skip "$README not found"
unset DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH DEBUGINFOD_PROGRESS \
    DEBUGINFOD_VERBOSE AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY \
    XDG_CACHE_HOME PERF_BUILDID_DIR PERF_CONFIG
export PERF_CONFIG_NOSYSTEM=1

W=$tmp/walk
mkdir -p "$W/blocks" "$W/media/usb" "$W/bin" "$tmp/out" || exit 99

# ---- the blocks ---------------------------------------------------------

# $W/blocks/N holds block N; $W/index a line per block:
# "N LANG NAME/STEP [OPTION...]".  A marker not followed by a block, or a
# block not closed, is an error.
awk -v dir="$W/blocks" '
    function bad(m) { print "README.md:" NR ": " m > "/dev/stderr"; err = 1 }
    /^<!-- walkthrough: .* -->$/ {
	if (want) bad("marker without a block")
	m = $0; sub(/^<!-- walkthrough: /, "", m); sub(/ -->$/, "", m)
	want = 1; next
    }
    want && /^```[a-z]+$/ {
	n++; f = dir "/" n; printf "" > f
	split(m, w, " "); rest = m; sub(/^[^ ]* ?/, "", rest)
	print n, substr($0, 4), w[1], rest
	inb = 1; want = 0; next
    }
    want { bad("marker not right above a code block"); want = 0 }
    inb && /^```$/ { inb = 0; close(f); next }
    inb { print >> f }
    END { if (want || inb) bad("unterminated"); exit err }' \
    "$README" >"$W/index" || { fail "README.md's walkthrough markers parse"; finish; }

# ---- machines -------------------------------------------------------------

# machine M: make machine M (root, HOME, checkout with the programs, a
# port) unless it exists.
machine() {
	local r=$W/m/$1
	[ -d "$r" ] && return 0
	mkdir -p "$r/home" "$r/checkout/src/symhub" "$r/checkout/src/symhubd" ||
	    return 1
	ln -s "$SYMHUB" "$r/checkout/src/symhub/symhub" &&
	    cp "$W/symhubd.sh" "$r/checkout/src/symhubd/symhubd" &&
	    free_port >"$r/port"
}
mport() {
	cat "$W/m/$1/port"
}

# The daemon as the walkthroughs run it: the machine's port first (a
# later --listen in the README, substituted, wins), the output to the
# machine's log, its PID recorded for the cleanup.  It waits for the
# port to be free, as a reader starting a hub after `kill $!` would.
cat >"$W/symhubd.sh" <<EOF
#!/bin/sh
n=200
while [ \$n -gt 0 ] && ss -Htln "sport = :\$WALK_PORT" | grep -q .; do
	sleep 0.05
	n=\$((n - 1))
done
echo \$\$ >>"$W/pids"
exec "$SYMHUBD" -p "\$WALK_PORT" "\$@" >>"\$WALK_LOG" 2>&1
EOF
chmod +x "$W/symhubd.sh" && cp "$W/symhubd.sh" "$W/bin/symhubd" || exit 99

# subst M: the block on stdin as it runs on machine M.
subst() {
	local r=$W/m/$1 p
	p=$(mport "$1")
	sed -e "s#/srv/#$r/srv/#g" \
	    -e "s#/var/cache/symhub#$r/var/cache/symhub#g" \
	    -e "s#/etc/symhub/#$r/etc/symhub/#g" \
	    -e "s#/media/usb#$W/media/usb#g" \
	    -e "s#\\(127\\.0\\.0\\.1\\|0\\.0\\.0\\.0\\):8002#127.0.0.1:$p#g" \
	    -e "${HUB_PORT:+s#http://hub:8002#http://127.0.0.1:$HUB_PORT#g}" \
	    -e "s#https://debuginfod\\.elfutils\\.org#$UP_URL#g" \
	    -e "s#https://debuginfod\\.corp\\.example#$CORP_URL#g" \
	    -e "s#https://s3\\.example\\.com/symbols?region=eu-west-1#$S3_URL#g" \
	    -e "${NGINX_PORT:+s#https://symbols\\.example\\.com#https://127.0.0.1:$NGINX_PORT#g}" \
	    -e "s#AWS_ACCESS_KEY_ID=\\.\\.\\. AWS_SECRET_ACCESS_KEY=\\.\\.\\.#AWS_ACCESS_KEY_ID=$S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$S3_SECRET_KEY#g"
}

# nginx_subst: an nginx block with the replicas' and its own ports.
nginx_subst() {
	local d m args=()
	for d in "$W"/m/*/; do
		m=$(basename "$d")
		case $m in
		[0-9]*.[0-9]*) args+=(-e "s#$m:8002#127.0.0.1:$(mport "$m")#g");;
		esac
	done
	# etc/nginx-tls.conf's site: its hub (NGINX_HUB, a machine), port
	# and certificate.
	[ -n "$NGINX_HUB" ] &&
	    args+=(-e "s#server 127\\.0\\.0\\.1:8002;#server 127.0.0.1:$(mport "$NGINX_HUB");#")
	sed "${args[@]}" -e "s#listen 80;#listen 127.0.0.1:$NGINX_PORT;#" \
	    -e "s#listen 443 ssl;#listen 127.0.0.1:$NGINX_PORT ssl;#" \
	    -e "s#/etc/ssl/symhub/fullchain\\.pem#$W/tls/cert.pem#" \
	    -e "s#/etc/ssl/symhub/privkey\\.pem#$W/tls/key.pem#"
}

# The functions every walkthrough's script starts with.
cat >"$W/prelude.sh" <<EOF
W=$W
EOF
cat >>"$W/prelude.sh" <<'EOF'
PATH=$W/bin:$PATH
__step=
__begin() {
	__step=$1
	exec >"$W/out.$1" 2>&1
	echo "$1" >>"$W/began"
}
__end() {
	echo "$1" >>"$W/ended"
}
__machine() {
	cd "$W/m/$1/checkout" || exit 1
	export HOME=$W/m/$1/home WALK_PORT WALK_LOG=$W/m/$1/symhubd.log
	WALK_PORT=$(cat "$W/m/$1/port")
}
# __ready: the hub just started with `&` listens on the port (not
# another one left running there) and answers "ready 1".
__ready() {
	local pid=$! n=600
	while [ $n -gt 0 ]; do
		if grep -qx "$pid" "$W/pids" 2>/dev/null &&
		    ss -Htlnp "sport = :$WALK_PORT" | grep -q "pid=$pid," &&
		    curl -s --max-time 2 "http://127.0.0.1:$WALK_PORT/metrics" |
		    grep -qx 'ready 1'; then
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "walkthrough: the hub exited:"
			tail -n 5 "$WALK_LOG"
			return 1
		fi
		sleep 0.05
		n=$((n - 1))
	done
	echo "walkthrough: the hub is not ready after 30 s"
	return 1
}
# __nginx FILE PORT: nginx in the foreground with FILE inside its
# http {}, answering on PORT.
__nginx() {
	local d=$W/nginx n=400
	mkdir -p "$d/logs"
	{
		echo "daemon off;"
		[ "$(id -u)" = 0 ] && echo "user root;"
		echo "worker_processes 1; pid $d/nginx.pid; error_log $d/error.log;"
		echo "events { worker_connections 512; }"
		echo "http { access_log $d/access.log;"
		echo "client_body_temp_path $d/body; proxy_temp_path $d/proxy;"
		echo "fastcgi_temp_path $d/fastcgi; uwsgi_temp_path $d/uwsgi;"
		echo "scgi_temp_path $d/scgi;"
		cat "$1"
		echo "}"
	} >"$d/nginx.conf"
	nginx -p "$d" -c "$d/nginx.conf" >"$d/out" 2>&1 &
	echo $! >>"$W/pids"
	while [ $n -gt 0 ]; do
		[ "$(curl -s -o /dev/null -w '%{http_code}' \
		    "http://127.0.0.1:$2/metrics")" = 200 ] && return 0
		[ "$(curl -s -k -o /dev/null -w '%{http_code}' \
		    "https://127.0.0.1:$2/metrics")" = 200 ] && return 0
		kill -0 $! 2>/dev/null || break
		sleep 0.05
		n=$((n - 1))
	done
	cat "$d/out" "$d/error.log"
	return 1
}
# `apt-get download` fetches from Debian's mirrors: the test's copy of a
# package built here (see the top of tests/test_readme.sh).
apt-get() {
	local p
	[ "$1" = download ] || { echo "apt-get $1: not in this test"; return 100; }
	shift
	for p in "$@"; do
		cp "$W/debs/$p"_*.deb . || return 100
	done
}
trap 'echo "walkthrough: line $LINENO: exit status $?: $BASH_COMMAND"' ERR
set -e -o pipefail
EOF

# script NAME: the script of walkthrough NAME on stdout.
script() {
	local n lang step opts m ms
	cat "$W/prelude.sh"
	while read -r n lang step opts; do
		[ "${step%%/*}" = "$1" ] || continue
		ms=$1
		case $opts in
		machine=*) ms=${opts#machine=};;
		machines=*) ms=${opts#machines=}; ms=${ms//,/ };;
		esac
		for m in $ms; do
			machine "$m" || return 1
			case $lang in
			sh)
				echo "__machine $m"
				# The harness's own wait before the step, if
				# any (settle_before): not the README's text.
				if [ -f "$W/settle/${step//\//-}" ]; then
					subst "$m" <"$W/settle/${step//\//-}"
				fi
				echo "__begin ${step//\//-}@$m"
				# After a line ending in `&`: wait for the hub.
				subst "$m" <"$W/blocks/$n" | sed '/[^&]&$/a __ready'
				echo "__end ${step//\//-}@$m"
				;;
			nginx)
				nginx_subst <"$W/blocks/$n" >"$W/nginx.block"
				echo "__begin ${step//\//-}"
				echo "__nginx $W/nginx.block $NGINX_PORT"
				echo "__end ${step//\//-}"
				;;
			esac
		done
	done <"$W/index"
}

# settle_before STEP: run standard input (shell, substituted as a block
# is) before STEP ("tour-batch"), outside the step: it waits for what
# the step's answer depends on, so that the verdict does not depend on
# the machine's speed.  It must not fail the script.
settle_before() {
	mkdir -p "$W/settle" && cat >"$W/settle/$1"
}

# walk NAME: run walkthrough NAME; a check per step (it ran to its end).
walk() {
	local name=$1 st s
	: >"$W/began"
	: >"$W/ended"
	script "$name" >"$W/$name.sh" || { fail "$name: its script"; return 1; }
	if ! grep -q '^__begin' "$W/$name.sh"; then
		fail "$name: README.md has its blocks" "no block is marked $name/..."
		return 1
	fi
	(cd "$W" && exec timeout 300 bash "$W/$name.sh" </dev/null \
	    >"$W/$name.out" 2>&1)
	st=$?
	for s in $(sed -n 's/^__begin //p' "$W/$name.sh"); do
		if grep -qx "$s" "$W/ended"; then
			pass "$name: $s runs as written"
		elif grep -qx "$s" "$W/began"; then
			fail "$name: $s runs as written" "$(tail -n 15 "$W/out.$s")" \
			    "$( [ "$st" = 124 ] && echo "(timed out)")"
		else
			fail "$name: $s runs as written" "not reached"
		fi
	done
}

# stop_walk: end the daemons the walkthrough started, by PID.
stop_walk() {
	local p n
	[ -f "$W/pids" ] || return 0
	for p in $(cat "$W/pids"); do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $(cat "$W/pids"); do
		n=100
		while alive "$p" && [ $n -gt 0 ]; do
			sleep 0.05
			n=$((n - 1))
		done
		kill -KILL "$p" 2>/dev/null
	done
	: >"$W/pids"
}
# lib.sh's trap ends what it started; the walkthroughs' daemons too.
trap 'st=$?; stop_walk; cleanup; exit $st' EXIT

# out STEP: what a step printed.
out() {
	cat "$W/out.$1" 2>/dev/null
}

# ---- fixtures -------------------------------------------------------------

# build DIR: tests/fixtures/app.c built with gcc -g -O2 in DIR/src, as
# DIR/bin/app, DIR/bin/app.debug and DIR/bin/app.stripped.
build() {
	mkdir -p "$1/src" "$1/bin" && cp "$FIXTURES/app.c" "$1/src/" &&
	    (cd "$1/src" && gcc -g -O2 -o ../bin/app app.c) &&
	    objcopy --only-keep-debug "$1/bin/app" "$1/bin/app.debug" &&
	    strip -o "$1/bin/app.stripped" "$1/bin/app"
}

LIBC=$(ldd /bin/sh | awk '$1 ~ /^libc\.so/ { print $3 }')
LDSO=$(readlink -f "$(ldd /bin/sh | awk '$1 ~ /ld-linux/ { print $1 }')")
LIBC_ID=$(buildid "$LIBC")
LDSO_ID=$(buildid "$LDSO")
dbg() {
	echo "/usr/lib/debug/.build-id/${1:0:2}/${1:2}.debug"
}

section 'the public upstream, a local elfutils debuginfod'
mkdir -p "$W/upstream" || exit 99
cp "$LIBC" "$LDSO" "$W/upstream/" || exit 99
if [ -r "$(dbg "$LIBC_ID")" ]; then
	cp "$(dbg "$LIBC_ID")" "$W/upstream/libc.debug" || exit 99
fi
# The air gap's programs: their debug files and stripped copies are the
# upstream's, as a company's builds are its debuginfod's.
build "$W/airgap" || exit 99
APP_ID=$(buildid "$W/airgap/bin/app")
cp "$W/airgap/bin/app.debug" "$W/airgap/bin/app.stripped" "$W/upstream/" ||
    exit 99
start_debuginfod upstream "" "$W/upstream" ||
    { fail "debuginfod starts"; finish; }
UP_URL=$DURL
check "it serves libc" wait_http 60 "$UP_URL/buildid/$LIBC_ID/executable" 200
start_badupstream corp count "$tmp/corp.log" ||
    { fail "the corp server starts"; finish; }
CORP_URL=$BURL

# ---- the short tour ---------------------------------------------------------

tour() {
	local r=$W/m/tour
	section 'the short tour'
	machine tour || exit 99
	[ -r "$(dbg "$LIBC_ID")" ] ||
	    { skip_check "tour" "no libc6-dbg: libc's debug file"; return; }
	# /srv/builds: a build tree and its sources; app: the program CI
	# built (another build, elsewhere: another build-id).
	build "$r/srv/builds" && mkdir -p "$r/etc/symhub" && build "$r/ci" &&
	    cp "$r/ci/bin/app" "$r/checkout/app" || exit 99
	echo "Authorization: Bearer walkthrough" >"$r/etc/symhub/corp.headers"
	# The batch step asks for libc and app within deadline_ms 2000: libc's
	# GSYM conversion alone can take longer on a loaded machine (once it
	# answered "timeout").  Ask first without a deadline (the hub's
	# --symbolize-deadline, 30 s) until both are converted, as a profiler
	# that asked before would have them; the step then checks the answer
	# the README shows, as written.
	settle_before tour-batch <<'EOF'
__libc=$(./src/symhub/symhub buildid /lib/x86_64-linux-gnu/libc.so.6) ||
    true
for __i in 1 2 3 4 5 6; do
	curl -sS --data-binary '{"modules":[
	    {"buildid":"'$ID'","offsets":["0x1182"]},
	    {"buildid":"'$__libc'","addresses":["0x8c1e0"]}]}' \
	    http://127.0.0.1:8002/symbolize 2>/dev/null |
	    grep -o '"status":"symbolized"' | wc -l | grep -qx 2 && break
done || true
EOF
	walk tour
	stop_walk

	check "tour: debuginfod-find gets the debuginfo" eval \
	    "cmp -s \"\$(out tour-clients@tour | sed -n 1p)\" '$r/srv/builds/bin/app'"
	check "tour: and the source" eval "cmp -s \
	    \"\$(out tour-clients@tour | sed -n 2p)\" '$r/srv/builds/src/app.c'"
	check "tour: gdb lists compute" eval \
	    "out tour-clients@tour | grep -q 'return square(x) + 1;'"
	check "tour: libc's debuginfo comes from the public upstream" eval \
	    "cmp -s \"\$(out tour-upstreams@tour | sed -n 1p)\" '$(dbg "$LIBC_ID")'"
	check "tour: the corp upstream is asked with its header" \
	    grep -q $'\tAuthorization: Bearer walkthrough\t' "$tmp/corp.log"
	check "tour: the upload's quality is DWARF" eval \
	    "out tour-uploads@tour | grep -qi '^x-symhub-quality: debug_info'"
	check "tour: symhub gsym lookup finds square inlined in compute" eval \
	    "out tour-gsym@tour | grep -q '^0x0*1182: square .*\[inlined\]'"
	check "tour: /symbolize names compute and main" eval \
	    "out tour-gsym@tour | grep -q '\"function\":\"compute\"' &&
	    out tour-gsym@tour | grep -q '\"function\":\"main\"'"
	check "tour: the batch symbolizes app and libc (fetched above)" eval \
	    "[ \"\$(out tour-batch@tour | grep -o '\"status\":\"symbolized\"' |
	    wc -l)\" = 2 ]"
}

# ---- the air gap ------------------------------------------------------------

airgap() {
	local on=$W/m/online lab=$W/m/lab v d
	section 'the air gap'
	machine online && machine lab || exit 99
	[ -r "$(dbg "$LIBC_ID")" ] && [ -r "$(dbg "$LDSO_ID")" ] ||
	    { skip_check "airgap" "no libc6-dbg: libc's debug file"; return; }
	# libc6-dbg, as apt-get download would bring it: libc's and ld.so's
	# debug files, where Debian puts them.
	v=$(dpkg-query -W -f '${Version}' libc6-dbg 2>/dev/null)
	d=$W/debsrc/libc6-dbg
	mkdir -p "$d/DEBIAN" "$W/debs" || exit 99
	for id in "$LIBC_ID" "$LDSO_ID"; do
		mkdir -p "$d/usr/lib/debug/.build-id/${id:0:2}" &&
		    cp "$(dbg "$id")" "$d$(dbg "$id")" || exit 99
	done
	printf 'Package: libc6-dbg\nVersion: %s\nArchitecture: amd64\nMaintainer: test <test@example.org>\nDescription: GNU C Library: detached debugging symbols\n' \
	    "${v:-2.36-9}" >"$d/DEBIAN/control"
	dpkg-deb -Zxz -z1 --build "$d" "$W/debs/libc6-dbg_${v:-2.36-9}_amd64.deb" \
	    >/dev/null || exit 99
	# /srv/builds: the stripped program that ships; core.1234: a core
	# of it, stopped in libc; ./app in the lab: the same program.
	mkdir -p "$on/srv/builds" || exit 99
	cp "$W/airgap/bin/app.stripped" "$on/srv/builds/app" &&
	    cp "$W/airgap/bin/app.stripped" "$lab/checkout/app" || exit 99
	(cd "$on/checkout" && timeout 60 gdb -nx -batch \
	    -iex 'set debuginfod enabled off' -ex 'set breakpoint pending on' \
	    -ex 'break write' -ex run -ex 'gcore core.1234' -ex kill \
	    "$on/srv/builds/app") >"$tmp/gcore.out" 2>&1
	[ -s "$on/checkout/core.1234" ] ||
	    { fail "a core of the program" "$(tail -n 5 "$tmp/gcore.out")"; return; }
	walk airgap
	URL=http://127.0.0.1:$(mport lab)
	expect_get "airgap: the offline hub serves the program's debuginfo" \
	    "/buildid/$APP_ID/debuginfo" 200 "$W/airgap/bin/app.debug"
	expect_get "airgap: and libc's" "/buildid/$LIBC_ID/debuginfo" 200 \
	    "$(dbg "$LIBC_ID")"
	# --gsym-ahead: what was imported is converted with nobody asking.
	check "airgap: --gsym-ahead converts what was imported (the program, libc)" \
	    wait_metric 'symhub_gsym_conversions_total{result="ok"}' -ge 2 120
	expect_get "airgap: and serves its GSYM" "/buildid/$APP_ID/gsym" 200
	stop_walk

	check "airgap: the export holds the program's debuginfo" \
	    cmp -s "$W/media/usb/symbols/buildid/$APP_ID/debuginfo" \
	    "$W/airgap/bin/app.debug"
	check "airgap: and libc's, from the package" \
	    cmp -s "$W/media/usb/symbols/buildid/$LIBC_ID/debuginfo" \
	    "$(dbg "$LIBC_ID")"
	check "airgap: gdb in the lab finds compute's line through file://" \
	    eval "out airgap-import@lab | grep -q '^Line [0-9]* of \".*app\\.c\"'"
	check "airgap: prefetch found everything the core and the builds need" \
	    eval "out airgap-prefetch@online |
	    grep -qx '6 found, 0 missing, 0 failed, 1 skipped'"
}

# ---- perf ---------------------------------------------------------------------

perf_walk() {
	local r=$W/m/perf f
	section 'perf'
	need_perf || return
	machine perf || exit 99
	mkdir -p "$W/perfbuild" "$W/perfhub" || exit 99
	(cd "$W/perfbuild" &&
	    gcc -g -O1 -fPIC -shared -o libspin.so "$FIXTURES/spinlib.c" &&
	    gcc -g -O1 -o app "$FIXTURES/spin.c" -L. -lspin \
		-Wl,-rpath,'$ORIGIN') || exit 99
	for f in app libspin.so; do
		objcopy --only-keep-debug "$W/perfbuild/$f" "$W/perfhub/$f.debug" &&
		    strip --strip-unneeded -o "$r/checkout/$f" "$W/perfbuild/$f" &&
		    cp "$r/checkout/$f" "$W/perfhub/$f" || exit 99
	done
	# hub:8002: the site's hub, holding the debug files.
	hub -d "$tmp/perfstore" -F "$W/perfhub"
	HUB_PORT=$PORT
	walk perf
	stop_walk
	check "perf: perf report names the program's function" eval \
	    "out perf-report@perf | grep -q spin_main_loop"
	check "perf: and the library's" eval \
	    "out perf-report@perf | grep -q spin_lib_inner"
}

need_perf() {
	if ! command -v perf >/dev/null 2>&1; then
		skip_check "perf" "perf not found (Debian: linux-perf)"
		return 1
	fi
	if ! perf record -q -o "$tmp/probe.data" -- true >"$tmp/probe.out" 2>&1
	then
		skip_check "perf" "perf record cannot run here:" \
		    "$(head -n 1 "$tmp/probe.out")"
		return 1
	fi
}

# ---- sources ------------------------------------------------------------------

sources_walk() {
	local r=$W/m/sources
	section 'sources: uploaded with the build, embedded, the profiler, the gap'
	command -v clang-19 >/dev/null 2>&1 ||
	    { skip_check "sources" "clang-19 not found"; return; }
	machine sources && machine sources-lab || exit 99
	# /srv/ci/app: the builder's tree, its sources alone; the checkout
	# holds tests/fixtures/app.c.
	mkdir -p "$r/srv/ci/app" "$r/checkout/tests/fixtures" &&
	    cp "$FIXTURES/app.c" "$r/srv/ci/app/" &&
	    cp "$FIXTURES/app.c" "$r/checkout/tests/fixtures/" || exit 99
	walk sources
	stop_walk
	check "sources: the upload stored the bundle" eval \
	    "out sources-upload@sources | grep -q '^stored *sources '"
	check "sources: the build trees are gone" \
	    test ! -e "$r/srv/ci/app" -a ! -e "$r/srv/ci/app2"
	check "sources: debuginfod-find source gets app.c, its tree gone" eval \
	    "cmp -s \"\$(out sources-clients@sources | sed -n 1p)\" '$FIXTURES/app.c'"
	check "sources: gdb lists compute from the bundle" eval \
	    "out sources-clients@sources | grep -q 'return square(x) + 1;'"
	check "sources: gdb lists compute embedded by clang, no tree" eval \
	    "out sources-embedded@sources | grep -q 'return square(x) + 1;'"
	check "sources: /source/v1 answers app.c's text" eval \
	    "out sources-profiler@sources |
	    grep -q '\"file\":\"[^\"]*/srv/ci/app/app.c\",\"source\":\"/\\* The README'"
	check "sources: /asm/v1 disassembles compute" eval \
	    "out sources-profiler@sources | grep -q '\"instructions\":\[\[0,\"'"
	check "sources: the export carries app.c" \
	    cmp -s "$(find "$W/media/usb/ci" -path '*/source/*/srv/ci/app/app.c' |
	    head -n 1)" "$FIXTURES/app.c"
	check "sources: gdb in the lab lists compute, from the import" eval \
	    "out sources-import@sources-lab | grep -q 'return square(x) + 1;'"
}

# ---- profiles -------------------------------------------------------------------

# mkpprof ELF OUT: OUT, a pprof profile of ELF (by its build-id) mapped
# at a PIE's base, a location at each byte of compute and main.
mkpprof() {
	local a n
	nm -S "$1" | awk '$4 == "compute" || $4 == "main" { print $1, $2 }' |
	    while read -r a n; do
		for ((i = 0; i < 16#$n; i++)); do
			printf '0x%x\n' $((16#$a + i))
		done
	done >"$2.addrs" &&
	    python3 "$top_srcdir/tests/pprofcheck.py" make "$2" \
	    "$1:$(buildid "$1"):0x555555554000:$2.addrs" >/dev/null &&
	    rm -f "$2.addrs"
}

# mkotlp ELF OUT: OUT, an OTLP export of ELF (by its build-id) mapped at
# a PIE's base, a location at each byte of compute and main, written by
# the Python that protoc makes from the hub's own .proto files.
mkotlp() {
	local py=$W/m/profiles/py a n
	mkdir -p "$py" && protoc --proto_path="$top_srcdir/src/symhubd/otlp" \
	    --python_out="$py" \
	    opentelemetry/proto/common/v1/common.proto \
	    opentelemetry/proto/resource/v1/resource.proto \
	    opentelemetry/proto/profiles/v1development/profiles.proto \
	    opentelemetry/proto/collector/profiles/v1development/profiles_service.proto ||
	    return 1
	nm -S "$1" | awk '$4 == "compute" || $4 == "main" { print $1, $2 }' |
	    while read -r a n; do
		for ((i = 0; i < 16#$n; i++)); do
			printf '0x%x\n' $((16#$a + i))
		done
	done >"$2.addrs" &&
	    PYTHONPATH=$py:$top_srcdir/tests "$PYPB" \
	    "$top_srcdir/tests/otlpcheck.py" make "$2" \
	    "$1:$(buildid "$1")::0x555555554000:$2.addrs" >/dev/null &&
	    rm -f "$2.addrs"
}

# otlpnames SYM: the names of the functions of the symbolized export SYM.
otlpnames() {
	PYTHONPATH=$W/m/profiles/py:$top_srcdir/tests "$PYPB" \
	    "$top_srcdir/tests/otlpcheck.py" tojson "$1" "$1.json" &&
	    grep -o '"function": *"[^"]*"' "$1.json"
}

profiles_walk() {
	local r=$W/m/profiles p
	section 'profiles: pprof in, pprof out'
	command -v go >/dev/null 2>&1 ||
	    { skip_check "profiles" "go not found (Debian: golang-go)"; return; }
	# the python3 that has python3-protobuf (another may come first)
	PYPB=
	for p in $(type -ap python3); do
		"$p" -c 'import google.protobuf' 2>/dev/null && { PYPB=$p; break; }
	done
	[ -n "$PYPB" ] && command -v protoc >/dev/null 2>&1 ||
	    { skip_check "profiles" "no protoc or python3-protobuf"; return; }
	machine profiles || exit 99
	# /srv/builds: the tour's; cpu.pb.gz: a profile of its program;
	# profiles.pb.gz: an OpenTelemetry export of it.
	build "$r/srv/builds" && mkpprof "$r/srv/builds/bin/app" \
	    "$r/checkout/cpu.pb.gz" && mkotlp "$r/srv/builds/bin/app" \
	    "$r/checkout/profiles.pb.gz" || exit 99
	export GOTOOLCHAIN=local GOPROXY=off
	walk profiles
	stop_walk
	check "profiles: go tool pprof -top names compute" eval \
	    "out profiles-pprof@profiles | grep -qE ' compute$'"
	check "profiles: and main" eval \
	    "out profiles-pprof@profiles | grep -qE ' main$'"
	check "profiles: -lines shows app.c:LINE" eval \
	    "out profiles-pprof@profiles | grep -qE ' compute .*/app\.c:[0-9]+$'"
	check "profiles: -traces marks square (inline)" eval \
	    "HOME=$r/home GOTOOLCHAIN=local go tool pprof -traces \
	    '$r/checkout/cpu.sym.pb.gz' 2>/dev/null | grep -q 'square.*(inline)'"
	check "profiles: POST /symbolize/pprof with curl, read by pprof" eval \
	    "out profiles-curl@profiles | grep -qE ' compute$'"
	check "profiles: symhub otlp names compute" eval \
	    "otlpnames '$r/checkout/profiles.sym.pb.gz' | grep -q '\"compute\"'"
	check "profiles: POST /symbolize/otlp with curl names main" eval \
	    "otlpnames '$r/checkout/profiles.curl.pb.gz' | grep -q '\"main\"'"
}

# ---- access ---------------------------------------------------------------------

access_walk() {
	local r=$W/m/access
	section 'access: read tokens, private uploads, TLS at nginx'
	for p in nginx openssl; do
		command -v "$p" >/dev/null 2>&1 ||
		    { skip_check "access" "$p not found"; return; }
	done
	machine access || exit 99
	# app: the program CI built; cpu.pb.gz: a profile of it.
	build "$r/ci" && cp "$r/ci/bin/app" "$r/checkout/app" &&
	    mkpprof "$r/ci/bin/app" "$r/checkout/cpu.pb.gz" || exit 99
	mkdir -p "$W/tls" || exit 99
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	    -addext subjectAltName=IP:127.0.0.1 -keyout "$W/tls/key.pem" \
	    -out "$W/tls/cert.pem" >/dev/null 2>&1 || exit 99
	NGINX_PORT=$(free_port)
	NGINX_HUB=access
	export CURL_CA_BUNDLE=$W/tls/cert.pem
	walk access
	stop_walk
	unset CURL_CA_BUNDLE NGINX_HUB
	check "access: no token 401, the tenant's reader 200, another tenant 404" \
	    eval "[ \"\$(out access-tokens@access | grep -xE '[0-9]{3}' |
	    tr '\n' ' ')\" = '401 200 404 ' ]"
	check "access: debuginfod-find with the token in DEBUGINFOD_URLS" eval \
	    "cmp -s \"\$(out access-clients@access | sed -n 1p)\" '$r/checkout/app.debug'"
	check "access: gdb too" eval \
	    "out access-clients@access | grep -q '^Line [0-9]* of \".*app\\.c\"'"
	check "access: symhub pprof with the token in its URL" \
	    test -s "$r/checkout/cpu.sym.pb.gz"
	check "access: through nginx's TLS, with a Bearer token" \
	    cmp -s "$r/checkout/app.debug.tls" "$r/checkout/app.debug"
	check "access: and 401 without" eval \
	    "out access-https@access | grep -qx 401"
	# The README shows the heart of etc/nginx-tls.conf: every directive
	# of its block is one of the file's.
	check "access: the README's nginx block is etc/nginx-tls.conf's" \
	    python3 - "$README" "$top_srcdir/etc/nginx-tls.conf" <<'PY'
import re, sys
def directives(text):
    text = re.sub(r"#.*", "", text)
    return {" ".join(d.split()) for d in re.split(r"[;{}]", text)
            if d.strip()}
readme = open(sys.argv[1]).read()
m = re.search(r"<!-- walkthrough: access/tls -->\n```nginx\n(.*?)```",
              readme, re.S)
extra = directives(m.group(1)) - directives(open(sys.argv[2]).read())
assert not extra, extra
PY
}

# ---- scaling ----------------------------------------------------------------

scaling() {
	local m tok p
	section 'scaling: a bucket, replicas, nginx'
	for p in swift-ring-builder swift-proxy-server memcached nginx; do
		command -v "$p" >/dev/null 2>&1 ||
		    { skip_check "scaling" "$p not found"; return; }
	done
	start_s3 || { fail "Swift starts" "$(tail -n 5 "$tmp/start-s3.err")"; return; }
	S3_URL="$S3_ENDPOINT/$S3_BUCKET?region=$S3_REGION"
	NGINX_PORT=$(free_port)
	tok=$(new_token ci upload,admin "$tmp/tokens") || exit 99
	for m in 10.0.0.1 10.0.0.2 10.0.0.3; do
		machine "$m" && mkdir -p "$W/m/$m/etc/symhub" &&
		    cp "$tmp/tokens" "$W/m/$m/etc/symhub/tokens" || exit 99
	done
	walk scaling
	build "$W/scaling" || exit 99
	local id lb=http://127.0.0.1:$NGINX_PORT
	id=$(buildid "$W/scaling/bin/app")
	echo "$tok" >"$tmp/ci.token"
	check "scaling: symhub upload through nginx" "$SYMHUB" upload \
	    --url "$lb" --token-file "$tmp/ci.token" \
	    -e "$W/scaling/bin/app.stripped" -d "$W/scaling/bin/app.debug"
	for m in 10.0.0.1 10.0.0.2 10.0.0.3; do
		# The replicas keep a miss 600 s (the default --negative-ttl):
		# only the upload's event can make them serve it sooner.  The
		# wait is for that event; bench_replicas.sh times it (~1 s).
		check "scaling: replica $m serves the upload (its event read)" \
		    wait_http 30 "http://127.0.0.1:$(mport $m)/buildid/$id/debuginfo" 200
	done
	check "scaling: a miss through nginx comes from the upstream" \
	    wait_http 10 "$lb/buildid/$LIBC_ID/executable" 200
	stop_walk
	stop_s3
}

walks=${*:-tour airgap perf sources profiles access scaling}
for w in $walks; do
	case $w in
	tour) tour;;
	airgap) airgap;;
	perf) perf_walk;;
	sources) sources_walk;;
	profiles) profiles_walk;;
	access) access_walk;;
	scaling) scaling;;
	*) fail "walkthrough $w" "unknown";;
	esac
done
# Every marked walkthrough is one of these.
for w in $(awk '{ sub(/\/.*/, "", $3); print $3 }' "$W/index" | sort -u); do
	check "README walkthrough '$w' is run by this test" \
	    eval "case ' tour airgap perf sources profiles access scaling ' in *' $w '*) true;; *) false;; esac"
done
finish
