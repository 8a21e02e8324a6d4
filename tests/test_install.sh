#!/bin/bash
# make install: the binaries, man pages, the example configuration (never
# overwriting one that is there) and a hardened systemd unit with this
# install's paths.  systemd-analyze verifies the unit and rates its
# exposure.  The installed daemon runs with the installed configuration
# under strace through a workload that touches every part (scan, hits,
# HEAD, a section, GSYM and /symbolize, a miss fanned out to elfutils'
# debuginfod, an upload, a reload, a stop), and every system call it makes
# must be one the unit's filter allows.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_install.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need make systemd-analyze strace gcc objcopy curl debuginfod man
mk() {
	make -s -C "$top_builddir" "$@" >>"$tmp/make.log" 2>&1
}
prefix=$(sed -n 's/^prefix = //p' "$top_builddir/Makefile")
[ -n "$prefix" ] || { echo "# no prefix in the Makefile"; exit 99; }

section 'make install DESTDIR=...'
R=$tmp/root
if mk install DESTDIR="$R"; then
	pass "make install into a DESTDIR"
else
	fail "make install into a DESTDIR" "$(tail -n 5 "$tmp/make.log")"
	finish
fi
for f in sbin/symhubd bin/symhub share/man/man8/symhubd.8 \
    share/man/man5/symhubd.conf.5 share/man/man1/symhub.1 etc/symhubd.conf \
    lib/systemd/system/symhubd.service; do
	check "$prefix/$f is installed" [ -s "$R$prefix/$f" ]
done
check "the programs are executable" \
    eval '[ -x "$R$prefix/sbin/symhubd" ] && [ -x "$R$prefix/bin/symhub" ]'
check "the configuration is the example" cmp -s "$R$prefix/etc/symhubd.conf" \
    "$top_srcdir/etc/symhubd.conf"
unit=$R$prefix/lib/systemd/system/symhubd.service
check "the unit names the installed paths" grep -qx "ExecStart=$prefix/sbin/\
symhubd -c $prefix/etc/symhubd.conf -d /var/lib/symhub" "$unit"
check "no @placeholder@ is left in the unit" eval "! grep -q '@[a-z]*@' '$unit'"
n=$(find "$R" -type f | wc -l)
check "nothing else is installed ($n files)" [ "$n" = 7 ]
echo "# a setting of the operator's" >>"$R$prefix/etc/symhubd.conf"
cp "$R$prefix/etc/symhubd.conf" "$tmp/conf.mine"
mk install DESTDIR="$R"
check "a second install keeps the operator's configuration" \
    cmp -s "$R$prefix/etc/symhubd.conf" "$tmp/conf.mine"
mk uninstall DESTDIR="$R"
check "uninstall removes the rest, not a changed configuration" eval \
    "[ \"\$(find '$R' -type f)\" = '$R$prefix/etc/symhubd.conf' ]"

section 'the unit, as systemd sees it'
I=$tmp/inst
if ! mk install prefix="$I"; then
	fail "make install prefix=..." "$(tail -n 5 "$tmp/make.log")"
	finish
fi
unit=$I/lib/systemd/system/symhubd.service
if MANPATH=$I/share/man systemd-analyze verify "$unit" >"$tmp/verify" 2>&1
then
	pass "systemd-analyze verify passes (program and man pages found)"
else
	fail "systemd-analyze verify passes" "$(cat "$tmp/verify")"
fi
systemd-analyze security --offline=true "$unit" >"$tmp/security" 2>&1
score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\) .*/\1/p' \
    "$tmp/security")
echo "# systemd-analyze security: exposure $score ($(systemd-analyze \
    --version | head -n 1))"
check "systemd-analyze security rates it OK, under 2.0 ($score)" \
    awk -v s="${score:-99}" 'BEGIN { exit !(s + 0 < 2.0) }'

section 'the installed daemon, under strace, makes only allowed calls'
mkdir -p "$tmp/scan" "$tmp/up" "$tmp/out"
cp "$FIXTURES/hello.c" "$FIXTURES/greet.c" "$FIXTURES/greet.h" "$tmp/scan/"
(cd "$tmp/scan" && gcc -g -O0 -o prog1 hello.c greet.c &&
    gcc -g -O1 -o "$tmp/up/prog2" hello.c greet.c &&
    gcc -g -O2 -o "$tmp/prog3" hello.c greet.c) || exit 99
ID1=$(buildid "$tmp/scan/prog1")
ID2=$(buildid "$tmp/up/prog2")
ID3=$(buildid "$tmp/prog3")
start_debuginfod up "" "$tmp/up" &&
    wait_http 30 "$DURL/buildid/$ID2/debuginfo" 200 ||
    fail "debuginfod serves prog2"
TOKEN=$(new_token ci upload "$tmp/tokens") || fail "a token"
# strace runs the daemon as its child and exits with its status.
# LeakSanitizer (an --enable-sanitizers build) cannot run under ptrace.
printf '#!/bin/sh\nASAN_OPTIONS=detect_leaks=0 exec strace -f -qq -o "%s" "%s" "$@"\n' \
    "$tmp/trace" "$I/sbin/symhubd" >"$tmp/traced"
chmod +x "$tmp/traced"
SYMHUBD=$tmp/traced
hub -c "$I/etc/symhubd.conf" -d "$tmp/store" -F "$tmp/scan" \
    -u "$DURL name=up" --tokens "$tmp/tokens" --source-root "$tmp/scan" \
    --log-file "$tmp/hub.log"
expect_get "a hit" "/buildid/$ID1/debuginfo" 200 "$tmp/scan/prog1"
code=$(curl -s -o /dev/null -I -w '%{http_code}' "$URL/buildid/$ID1/executable")
check "HEAD" [ "$code" = 200 ]
expect_get "a source" "/buildid/$ID1/source$tmp/scan/hello.c" 200 \
    "$tmp/scan/hello.c"
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/buildid/$ID1/section/.text")
check "a section" [ "$code" = 200 ]
code=$(curl -s -o "$tmp/out/gsym" -w '%{http_code}' "$URL/buildid/$ID1/gsym")
check "a GSYM conversion" [ "$code" = 200 ]
code=$(curl -s -o /dev/null -w '%{http_code}' --data-binary '0x1139' \
    "$URL/buildid/$ID1/symbolize")
check "/symbolize" [ "$code" = 200 ]
expect_get "a miss, fetched from elfutils" "/buildid/$ID2/debuginfo" 200 \
    "$tmp/up/prog2"
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H \
    "Authorization: Bearer $TOKEN" --data-binary "@$tmp/prog3" \
    "$URL/buildid/$ID3/debuginfo")
check "an upload" [ "$code" = 201 ]
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/buildid/$ID3/gsym")
check "the upload's GSYM" [ "$code" = 200 ]
dpid=$(pgrep -P "$SYMHUBD_PID" -x symhubd)
check "the daemon runs under strace (pid ${dpid:-none})" [ -n "$dpid" ]
p=$(metric symhub_scan_passes_total)
kill -HUP "$dpid"
check "a reload (SIGHUP rescans)" wait_metric symhub_scan_passes_total -gt "$p"
kill -TERM "$dpid"
wait_exit "$SYMHUBD_PID" 30
check "the daemon stops cleanly on SIGTERM (status $exit_status)" \
    [ "$exit_status" = 0 ]

# The calls the unit's SystemCallFilter= lines allow, in order (an
# allow-list, then "~" lines taking calls out and plain ones putting
# them back), groups expanded as systemd expands them.
expand() {
	case $1 in
	@*) systemd-analyze syscall-filter "$1" |
	    awk 'NR > 1 && $1 !~ /^#/ { print $1 }' |
	    while read -r n; do expand "$n"; done ;;
	*) echo "$1" ;;
	esac
}
: >"$tmp/allowed"
while read -r line; do
	v=${line#SystemCallFilter=}
	deny=0
	case $v in "~"*) deny=1; v=${v#\~} ;; esac
	for g in $v; do expand "$g"; done | sort -u >"$tmp/these"
	if [ "$deny" = 1 ]; then
		comm -23 "$tmp/allowed" "$tmp/these" >"$tmp/next"
	else
		sort -u "$tmp/allowed" "$tmp/these" >"$tmp/next"
	fi
	mv "$tmp/next" "$tmp/allowed"
done < <(grep '^SystemCallFilter=' "$unit")
check "the filter allows setpriority (the background compressor's nice) and no @privileged call" \
    eval "grep -qx setpriority '$tmp/allowed' &&
    ! comm -12 '$tmp/allowed' <(expand @privileged | sort -u) | grep -q ."
sed -n 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/p' "$tmp/trace" | sort -u \
    >"$tmp/used"
bad=$(comm -23 "$tmp/used" "$tmp/allowed" | tr '\n' ' ')
check "the trace has the daemon's calls ($(wc -l <"$tmp/used") distinct)" \
    grep -qx accept4 "$tmp/used"
if [ -z "$bad" ]; then
	pass "every call is one SystemCallFilter= allows"
else
	fail "every call is one SystemCallFilter= allows" "not allowed: $bad"
fi
mk uninstall prefix="$I"
finish
