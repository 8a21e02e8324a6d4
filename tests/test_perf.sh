#!/bin/bash
# symhub perf: a profile of stripped programs, recorded by the real perf,
# symbolized by perf report, perf script and perf annotate once symhub perf
# has put the debug files that only the hub holds into perf's build-id
# cache.  Debian's perf 6.1 is built without debuginfod, so without the
# command it shows bare addresses.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_perf.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc objcopy strip perf python3 curl
BADUPSTREAM=$top_srcdir/tests/badupstream.py

# perf's own settings must not leak in: its cache and config live in $HOME.
export HOME=$tmp/home PERF_CONFIG_NOSYSTEM=1
unset PERF_BUILDID_DIR PERF_CONFIG DEBUGINFOD_URLS
mkdir -p "$HOME" "$tmp/out"
if ! perf record -q -e cpu-clock -o "$tmp/probe.data" -- true \
    >"$tmp/probe.out" 2>&1; then
	skip "perf record cannot run here: $(head -n 1 "$tmp/probe.out")"
fi

section 'fixtures: a stripped program and its stripped shared library'
mkdir -p "$tmp/bin" "$tmp/hubfiles"
(cd "$tmp/bin" &&
    gcc -g -O1 -fPIC -shared -o libspin.so "$FIXTURES/spinlib.c" &&
    gcc -g -O1 -o spin "$FIXTURES/spin.c" -L. -lspin \
	-Wl,-rpath,'$ORIGIN') || exit 99
for f in spin libspin.so; do
	objcopy --only-keep-debug "$tmp/bin/$f" "$tmp/hubfiles/$f.debug" &&
	    strip --strip-unneeded "$tmp/bin/$f" &&
	    cp "$tmp/bin/$f" "$tmp/hubfiles/$f" || exit 99
done
ID_EXE=$(buildid "$tmp/bin/spin")
ID_LIB=$(buildid "$tmp/bin/libspin.so")
check "two build-ids" eval '[ -n "$ID_EXE" ] && [ -n "$ID_LIB" ]'
check "the stripped program names none of its functions" \
    eval "! nm \"$tmp/bin/spin\" 2>/dev/null | grep -q spin_main_loop"
check "the stripped library names its inner function nowhere" \
    eval "! nm -D \"$tmp/bin/libspin.so\" | grep -q spin_lib_inner"

section 'the hub holds the debug files and executables'
hub -d "$tmp/store" -F "$tmp/hubfiles" --log-file "$tmp/hub.log"
HUB=$URL
HUB_PID=$SYMHUBD_PID
check "it serves the program's debuginfo" wait_http 30 \
    "$HUB/buildid/$ID_EXE/debuginfo" 200
check "it serves the library's debuginfo" wait_http 30 \
    "$HUB/buildid/$ID_LIB/debuginfo" 200

section 'perf record, and perf report without the hub'
# rec OUT ARGS...: perf record of the fixture.
rec() {
	local out=$1
	shift
	(cd "$tmp/bin" && perf record -q -e cpu-clock -o "$out" "$@" \
	    ./spin >/dev/null 2>"$out.err")
}
rec "$tmp/p1.data" || fail "perf record" "$(tail -n 3 "$tmp/p1.data.err")"
check "perf record wrote a profile" [ -s "$tmp/p1.data" ]
# names DIR DATA: the symbols perf report shows, one per line.
report() {
	perf report -i "$1" --stdio --sort dso,sym "${@:2}" 2>/dev/null
}
report "$tmp/p1.data" >"$tmp/out/report0"
check "perf report shows addresses, not spin_main_loop, before" \
    eval "grep -q 'spin ' '$tmp/out/report0' &&
    ! grep -q spin_main_loop '$tmp/out/report0'"

section '--list reads what perf buildid-list reads'
"$SYMHUB" perf --list "$tmp/p1.data" >"$tmp/out/list"
st=$?
perf buildid-list -i "$tmp/p1.data" >"$tmp/out/perflist" 2>/dev/null
check "exit 0" [ "$st" = 0 ]
if cmp -s "$tmp/out/list" "$tmp/out/perflist"; then
	pass "the same build-ids and names ($(wc -l <"$tmp/out/list") modules)"
else
	fail "the same build-ids and names" \
	    "$(diff "$tmp/out/perflist" "$tmp/out/list")"
fi
check "the program is one of them" grep -qx "$ID_EXE $tmp/bin/spin" \
    "$tmp/out/list"
check "the library is one of them" grep -qx "$ID_LIB $tmp/bin/libspin.so" \
    "$tmp/out/list"

section 'symhub perf, then perf symbolizes'
# exit_ok FILE ST: the exit status says what the lines say.
exit_ok() {
	if grep -q '^missing\|^failed' "$1" "$1.err"; then
		[ "$2" = 1 ]
	else
		[ "$2" = 0 ]
	fi
}
cache=$HOME/.debug
elf_before=$(sha256sum "$cache/.build-id/${ID_EXE:0:2}/${ID_EXE:2}/elf" |
    cut -d' ' -f1)
"$SYMHUB" perf -i "$tmp/p1.data" --url "$HUB" >"$tmp/out/run1" \
    2>"$tmp/out/run1.err"
st=$?
check "it says which cache: ~/.debug" grep -qx \
    "perf's build-id cache: $cache (the default)" "$tmp/out/run1"
check "the program's debuginfo is fetched" \
    grep -q "^fetched  *debuginfo  *$ID_EXE  $tmp/bin/spin\$" "$tmp/out/run1"
check "the library's debuginfo is fetched" grep -q \
    "^fetched  *debuginfo  *$ID_LIB  $tmp/bin/libspin.so\$" "$tmp/out/run1"
check "their executables are at their paths: not fetched" eval \
    "grep -q '^present  *executable  *$ID_EXE ' '$tmp/out/run1' &&
    ! grep -q '^fetched  *executable' '$tmp/out/run1'"
if grep -q '\[kernel.kallsyms\]' "$tmp/out/list"; then
	check "the kernel is left alone" grep -q \
	    '^skipped .*\[kernel.kallsyms\]  the kernel' "$tmp/out/run1"
fi
check "exit status $st agrees with the lines" exit_ok "$tmp/out/run1" "$st"
check "the files are the hub's" eval "cmp -s '$tmp/hubfiles/spin.debug' \
    '$cache/.build-id/${ID_EXE:0:2}/${ID_EXE:2}/debug' && cmp -s \
    '$tmp/hubfiles/libspin.so.debug' \
    '$cache/.build-id/${ID_LIB:0:2}/${ID_LIB:2}/debug'"
check "perf's own copy of the program is untouched" [ "$elf_before" = \
    "$(sha256sum "$cache/.build-id/${ID_EXE:0:2}/${ID_EXE:2}/elf" |
    cut -d' ' -f1)" ]
check "no temporary file is left" eval "[ -z \"\$(find '$cache' -name \
    '.symhub-perf.*')\" ]"
report "$tmp/p1.data" >"$tmp/out/report1"
check "perf report names the program's function" \
    grep -q 'spin  *\[\.\] spin_main_loop' "$tmp/out/report1"
check "perf report names the library's static function" \
    grep -q 'libspin.so  *\[\.\] spin_lib_inner' "$tmp/out/report1"
perf script -i "$tmp/p1.data" >"$tmp/out/script1" 2>/dev/null
check "perf script names the program's function" \
    grep -q 'spin_main_loop+0x[0-9a-f]* (.*/bin/spin)' "$tmp/out/script1"
check "perf script names the library's function" grep -q \
    'spin_lib_inner+0x[0-9a-f]* (.*/bin/libspin.so)' "$tmp/out/script1"
perf annotate -i "$tmp/p1.data" --stdio spin_lib_inner \
    >"$tmp/out/annotate1" 2>/dev/null
check "perf annotate disassembles the library's function" \
    grep -Eq '^ +[0-9]+\.[0-9]+ +: +[0-9a-f]+: +(imul|add|cmp|jne)' \
    "$tmp/out/annotate1"

section 'again, with no hub reachable: nothing is fetched twice'
DEAD=http://127.0.0.1:$(free_port)
"$SYMHUB" perf -i "$tmp/p1.data" --url "$DEAD" >"$tmp/out/run2" \
    2>"$tmp/out/run2.err"
st=$?
check "the program's debuginfo is present" \
    grep -q "^present  *debuginfo  *$ID_EXE " "$tmp/out/run2"
check "the library's debuginfo is present" \
    grep -q "^present  *debuginfo  *$ID_LIB " "$tmp/out/run2"
check "nothing is fetched" eval "! grep -q '^fetched' '$tmp/out/run2'"
check "exit status $st agrees with the lines" exit_ok "$tmp/out/run2" "$st"

section 'a profile from another machine: executables fetched too'
mv "$tmp/bin" "$tmp/bin.away"
"$SYMHUB" perf -i "$tmp/p1.data" --url "$HUB" --buildid-dir "$tmp/c2" \
    >"$tmp/out/run3" 2>"$tmp/out/run3.err"
check "it says which cache: --buildid-dir" grep -qx \
    "perf's build-id cache: $tmp/c2 (--buildid-dir)" "$tmp/out/run3"
check "the program's executable is fetched" \
    grep -q "^fetched  *executable  *$ID_EXE " "$tmp/out/run3"
check "the library's executable is fetched" \
    grep -q "^fetched  *executable  *$ID_LIB " "$tmp/out/run3"
check "the link is perf's: ../../PATH/ID" [ "$(readlink \
    "$tmp/c2/.build-id/${ID_LIB:0:2}/${ID_LIB:2}")" = \
    "../..$tmp/bin/libspin.so/$ID_LIB" ]
perf --buildid-dir "$tmp/c2" report -i "$tmp/p1.data" --stdio \
    --sort dso,sym >"$tmp/out/report3" 2>/dev/null
check "perf report names both functions from the cache alone" eval \
    "grep -q spin_main_loop '$tmp/out/report3' &&
    grep -q spin_lib_inner '$tmp/out/report3'"
perf --buildid-dir "$tmp/c2" annotate -i "$tmp/p1.data" --stdio \
    spin_main_loop >"$tmp/out/annotate3" 2>/dev/null
check "perf annotate disassembles from the fetched executable" \
    grep -Eq '^ +[0-9]+\.[0-9]+ +: +[0-9a-f]+: +(imul|add|cmp|jne)' \
    "$tmp/out/annotate3"
mv "$tmp/bin.away" "$tmp/bin"

section "where perf's cache is: \$PERF_BUILDID_DIR and buildid.dir"
printf '# perf config\n[buildid]\n\tdir = %s/c3 ; the cache\n' "$tmp" \
    >"$tmp/perfconfig"
PERF_CONFIG=$tmp/perfconfig "$SYMHUB" perf -i "$tmp/p1.data" --url "$HUB" \
    >"$tmp/out/run4" 2>&1
check "buildid.dir of \$PERF_CONFIG" grep -qx \
    "perf's build-id cache: $tmp/c3 (buildid.dir in \$PERF_CONFIG)" \
    "$tmp/out/run4"
check "the files went there" [ -f \
    "$tmp/c3/.build-id/${ID_LIB:0:2}/${ID_LIB:2}/debug" ]
PERF_CONFIG=$tmp/perfconfig perf report -i "$tmp/p1.data" --stdio \
    --sort dso,sym >"$tmp/out/report4" 2>/dev/null
check "perf with the same config finds them" grep -q spin_lib_inner \
    "$tmp/out/report4"
printf '[BuildID]\n  Dir = "%s/c 4"  # quoted, blank inside\n' "$tmp" \
    >"$HOME/.perfconfig"
"$SYMHUB" perf -i "$tmp/p1.data" --url "$HUB" >"$tmp/out/run5" 2>&1
check "buildid.dir of ~/.perfconfig" grep -qx \
    "perf's build-id cache: $tmp/c 4 (buildid.dir in ~/.perfconfig)" \
    "$tmp/out/run5"
check "perf agrees on that directory" [ "$(perf config buildid.dir)" = \
    "buildid.dir=$tmp/c 4" ]
PERF_BUILDID_DIR=$tmp/c5 "$SYMHUB" perf -i "$tmp/p1.data" --url "$HUB" \
    >"$tmp/out/run6" 2>&1
check "\$PERF_BUILDID_DIR comes before the config" grep -qx \
    "perf's build-id cache: $tmp/c5 (\$PERF_BUILDID_DIR)" "$tmp/out/run6"
check "the files went there" [ -f \
    "$tmp/c5/.build-id/${ID_EXE:0:2}/${ID_EXE:2}/debug" ]
rm -f "$HOME/.perfconfig"

section "what perf put in its cache stays"
# perf's layout, made as perf buildid-cache would, with a debug file of
# its own for the program.
d6=$tmp/c6$tmp/bin/spin/$ID_EXE
mkdir -p "$d6" "$tmp/c6/.build-id/${ID_EXE:0:2}"
echo "perf's own" >"$d6/debug"
ln -s "../..$tmp/bin/spin/$ID_EXE" "$tmp/c6/.build-id/${ID_EXE:0:2}/${ID_EXE:2}"
"$SYMHUB" perf -i "$tmp/p1.data" --url "$HUB" --buildid-dir "$tmp/c6" \
    >"$tmp/out/run7" 2>&1
check "its debug file is present, not fetched" \
    grep -q "^present  *debuginfo  *$ID_EXE " "$tmp/out/run7"
check "and unchanged" [ "$(cat "$d6/debug")" = "perf's own" ]
check "the library's is fetched beside it" \
    grep -q "^fetched  *debuginfo  *$ID_LIB " "$tmp/out/run7"

section 'more than one hub: the next is asked after a 404'
start_badupstream count count "$tmp/count.log" ||
    fail "badupstream.py count starts"
COUNT=$BURL
DEBUGINFOD_URLS="$COUNT $HUB" "$SYMHUB" perf -i "$tmp/p1.data" \
    --buildid-dir "$tmp/c8" >"$tmp/out/run8" 2>&1
check "from \$DEBUGINFOD_URLS: fetched from the second" \
    grep -q "^fetched  *debuginfo  *$ID_LIB " "$tmp/out/run8"
check "after the first was asked" grep -q "^GET /buildid/$ID_LIB/debuginfo" \
    "$tmp/count.log"
"$SYMHUB" perf -i "$tmp/p1.data" --url "$DEAD" --url "$HUB" \
    --buildid-dir "$tmp/c8b" >"$tmp/out/run8b" 2>&1
check "a hub that is down: the next one serves" \
    grep -q "^fetched  *debuginfo  *$ID_LIB " "$tmp/out/run8b"
"$SYMHUB" perf -i "$tmp/p1.data" --url "$DEAD" --buildid-dir "$tmp/c8c" \
    >"$tmp/out/run8c" 2>&1
st=$?
check "no hub up: failed, ask again later" grep -q "^failed  *debuginfo  \
*$ID_LIB .*no answer from $DEAD (.*): ask again later" "$tmp/out/run8c"
check "no hub up: exit 1, nothing left" eval "[ $st = 1 ] &&
    [ -z \"\$(find '$tmp/c8c' -mindepth 1)\" ]"

section 'a hub that lies: nothing is written'
start_badupstream wrong wrongfile "$tmp/hubfiles/spin" ||
    fail "badupstream.py wrongfile starts"
"$SYMHUB" perf -i "$tmp/p1.data" --url "$BURL" --buildid-dir "$tmp/c9" \
    >"$tmp/out/run9" 2>"$tmp/out/run9.err"
st=$?
check "another build-id is refused" grep -q \
    "^failed  *debuginfo  *$ID_LIB .*the hub sent a file with build-id $ID_EXE" \
    "$tmp/out/run9.err"
check "a stripped file is no debuginfo" grep -q \
    "^failed  *debuginfo  *$ID_EXE .*unfit" "$tmp/out/run9.err"
check "exit 1" [ "$st" = 1 ]
check "no file in the cache" eval "[ -z \"\$(find '$tmp/c9' -type f -o \
    -type l)\" ]"
check "no directory left behind" eval "[ -z \"\$(find '$tmp/c9' \
    -mindepth 1)\" ]"
start_badupstream short short "$tmp/hubfiles/libspin.so.debug" ||
    fail "badupstream.py short starts"
"$SYMHUB" perf -i "$tmp/p1.data" --url "$BURL" --buildid-dir "$tmp/c10" \
    >"$tmp/out/run10" 2>"$tmp/out/run10.err"
check "a download cut short fails" grep -q "^failed  *debuginfo  *$ID_LIB " \
    "$tmp/out/run10.err"
check "and leaves nothing" eval "[ -z \"\$(find '$tmp/c10' -mindepth 1)\" ]"

start_badupstream trickle trickle "$tmp/hubfiles/libspin.so.debug" ||
    fail "badupstream.py trickle starts"
"$SYMHUB" perf -i "$tmp/p1.data" --url "$BURL" --buildid-dir "$tmp/c11" \
    >"$tmp/out/run11k" 2>&1 &
kpid=$!
PIDS+=("$kpid")
# The download is under way once its unnamed file is open.
if wait_until 30 eval "ls -l /proc/$kpid/fd 2>/dev/null | grep -q \
    '$tmp/c11/#'"; then
	kill -KILL "$kpid"
	wait_exit "$kpid" 10
	check "killed mid-download: no file in the cache" eval "[ -z \
	    \"\$(find '$tmp/c11' -mindepth 1 -not -type d)\" ]"
else
	fail "the download starts" "$(cat "$tmp/out/run11k")"
fi

section 'a cache that cannot be written'
echo file >"$tmp/afile"
"$SYMHUB" perf -i "$tmp/p1.data" --url "$HUB" --buildid-dir "$tmp/afile/c" \
    >"$tmp/out/run11" 2>&1
st=$?
check "a file in the way: exit 1" [ "$st" = 1 ]
check "a file in the way: said so" grep -q \
    "cannot make perf's build-id cache $tmp/afile/c: Not a directory" \
    "$tmp/out/run11"
mkdir -p "$tmp/ro"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=1m,ro symhub-test \
    "$tmp/ro" 2>"$tmp/mount.err"; then
	MOUNTS+=("$tmp/ro")
	"$SYMHUB" perf -i "$tmp/p1.data" --url "$HUB" --buildid-dir "$tmp/ro" \
	    >"$tmp/out/run12" 2>&1
	st=$?
	check "a read-only cache: exit 1" [ "$st" = 1 ]
	check "a read-only cache: said so" grep -q \
	    "cannot write to perf's build-id cache $tmp/ro: Read-only" \
	    "$tmp/out/run12"
else
	skip_check "a read-only cache" "cannot mount a tmpfs here"
fi

section 'bad profiles: a clear message each, nothing written'
echo "not a profile" >"$tmp/text.data"
head -c 60 "$tmp/p1.data" >"$tmp/short.data"
head -c "$(($(stat -c %s "$tmp/p1.data") / 2))" "$tmp/p1.data" \
    >"$tmp/half.data"
# The build-id table with its first record's size made 3.
python3 - "$tmp/p1.data" "$tmp/bad.data" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
doff, dsize = struct.unpack_from("<QQ", b, 40)
feat = struct.unpack_from("<Q", b, 72)[0]
idx = bin(feat & 3).count("1")
off, size = struct.unpack_from("<QQ", b, doff + dsize + 16 * idx)
struct.pack_into("<H", b, off + 6, 3)
open(sys.argv[2], "wb").write(b)
EOF
for c in "text.data|no PERFILE2 magic: not a perf.data file" \
    "short.data|a header too short" \
    "half.data|past the end of the file" \
    "bad.data|a build-id record with a bad length"; do
	f=${c%%|*}
	msg=${c#*|}
	"$SYMHUB" perf -i "$tmp/$f" --url "$HUB" --buildid-dir "$tmp/c13" \
	    >"$tmp/out/$f.out" 2>&1
	st=$?
	check "$f: exit 1" [ "$st" = 1 ]
	check "$f: $msg" grep -q "symhub perf: $tmp/$f: .*$msg" \
	    "$tmp/out/$f.out"
done
check "nothing was written" [ ! -e "$tmp/c13" ]
"$SYMHUB" perf -i "$tmp/none.data" >"$tmp/out/none" 2>&1
st=$?
check "a missing profile: exit 1 and its name" eval "[ $st = 1 ] &&
    grep -q 'none.data: No such file' '$tmp/out/none'"

section 'a profile of 300 modules the hub does not know, in both byte orders'
# perf.data with a build-id table of 300 records, written as perf does
# (tools/perf/Documentation/perf.data-file-format.txt).
python3 - "$tmp" <<'EOF'
import hashlib, struct, sys
out = sys.argv[1]
for order, name in (("<", "many.data"), (">", "many-be.data")):
    recs = b""
    lst = []
    for i in range(300):
        bid = hashlib.sha1(b"module %d" % i).digest()
        fn = b"/opt/fake/lib%d.so" % i
        fn = fn + b"\0" * (64 - len(fn) % 64)
        size = 8 + 4 + 24 + len(fn)
        misc = 2 | (1 << 15)     # user mode, build-id size given
        recs += struct.pack(order + "IHHi", 0, misc, size, -1)
        recs += bid + bytes([20, 0, 0, 0]) + fn
        lst.append("%s /opt/fake/lib%d.so" % (bid.hex(), i))
    data = b"\0" * 64                  # a data section of no events
    hdr = 104
    feat_tab = hdr + len(data)
    table = feat_tab + 16
    h = b"PERFILE2" if order == "<" else b"2ELIFREP"
    h += struct.pack(order + "QQQQQQQQQ", hdr, 136, 0, 0, hdr, len(data),
                     0, 0, 1 << 2)
    h += b"\0" * 24
    assert len(h) == hdr
    f = h + data + struct.pack(order + "QQ", table, len(recs)) + recs
    open("%s/%s" % (out, name), "wb").write(f)
    open("%s/%s.list" % (out, name), "w").write("\n".join(lst) + "\n")
EOF
for f in many.data many-be.data; do
	"$SYMHUB" perf --list "$tmp/$f" >"$tmp/out/$f.list"
	check "$f: --list gives all 300" cmp -s "$tmp/out/$f.list" \
	    "$tmp/$f.list"
done
"$SYMHUB" perf -q -j 16 -i "$tmp/many.data" --url "$HUB" \
    --buildid-dir "$tmp/c14" >"$tmp/out/many" 2>&1
st=$?
check "300 debuginfo and 300 executables missing" \
    grep -qx "0 fetched, 0 present, 600 missing, 0 failed, 0 skipped" \
    "$tmp/out/many"
check "exit 1 when something is missing" [ "$st" = 1 ]
check "no directory is made for what is missing" eval "[ -z \"\$(find \
    '$tmp/c14' -mindepth 1)\" ]"
if command -v script >/dev/null; then
	# On a terminal (script's pseudo-terminal), a progress bar.
	script -qec "'$SYMHUB' perf -i '$tmp/many.data' --url '$HUB' \
	    --buildid-dir '$tmp/c14'" /dev/null >"$tmp/out/tty" 2>&1
	check "on a terminal: a progress bar to 600/600" \
	    grep -q '\[=\{30\}\] 600/600' "$tmp/out/tty"
else
	skip_check "a progress bar on a terminal" "no script(1)"
fi

section 'profiles written to a pipe, compressed, or with --buildid-mmap'
(cd "$tmp/bin" && perf record -q -e cpu-clock -o - ./spin 2>/dev/null \
    >"$tmp/pipe.data")
"$SYMHUB" perf -i "$tmp/pipe.data" --url "$HUB" >"$tmp/out/pipe" 2>&1
st=$?
check "a pipe: exit 1, and why" eval "[ $st = 1 ] && grep -q \
    'names no build-id: it was recorded to a pipe' '$tmp/out/pipe'"
if rec "$tmp/z.data" -z; then
	"$SYMHUB" perf -i "$tmp/z.data" --url "$HUB" >"$tmp/out/z" 2>&1
	st=$?
	check "-z: exit 1, and why" eval "[ $st = 1 ] && grep -q \
	    'recorded with -z' '$tmp/out/z'"
else
	skip_check "a profile recorded with -z" "this perf has no zstd"
fi
if rec "$tmp/mmap.data" --buildid-mmap; then
	"$SYMHUB" perf --list "$tmp/mmap.data" | sort >"$tmp/out/mmap.list"
	perf buildid-list -i "$tmp/mmap.data" 2>/dev/null | sort \
	    >"$tmp/out/mmap.perflist"
	# perf lists the modules hit; the events name every one mapped.
	check "--buildid-mmap: every build-id perf reads, and more" eval \
	    "[ -s '$tmp/out/mmap.perflist' ] && [ -z \"\$(comm -13 \
	    '$tmp/out/mmap.list' '$tmp/out/mmap.perflist')\" ]"
	"$SYMHUB" perf -i "$tmp/mmap.data" --url "$HUB" \
	    --buildid-dir "$tmp/c15" >"$tmp/out/mmap" 2>&1
	perf --buildid-dir "$tmp/c15" report -i "$tmp/mmap.data" --stdio \
	    --sort dso,sym >"$tmp/out/report15" 2>/dev/null
	check "--buildid-mmap: perf report names both functions" eval \
	    "grep -q spin_main_loop '$tmp/out/report15' &&
	    grep -q spin_lib_inner '$tmp/out/report15'"
else
	skip_check "a profile recorded with --buildid-mmap" \
	    "$(tail -n 1 "$tmp/mmap.data.err")"
fi

section 'a hostile profile: names that climb out, escape bytes, links out'
# Programs under build-ids of our choosing, so that the hub has a file for
# each hostile name and a fetch would really write it somewhere.
mkdir -p "$tmp/hostile"
for k in 1 2 3 4 5 6 7; do
	(cd "$tmp/hostile" && gcc -g -O0 -I"$FIXTURES" \
	    -Wl,--build-id=0x$(printf 'feedface%032d' "$k") \
	    -o "prog$k" "$FIXTURES/hello.c" "$FIXTURES/greet.c" &&
	    objcopy --only-keep-debug "prog$k" "prog$k.debug" &&
	    strip --strip-unneeded "prog$k") || exit 99
done
hid() { printf 'feedface%032d' "$1"; }
hub -d "$tmp/store-h" -F "$tmp/hostile" --log-file "$tmp/hub-h.log"
HHUB=$URL
check "the second hub serves the 7 programs' debuginfo" wait_http 30 \
    "$HHUB/buildid/$(hid 7)/debuginfo" 200
# The cache is two levels down, so that a name that climbs one or two
# levels lands in $tmp/hz, where nothing else is.
mkdir -p "$tmp/hz/cache/c" "$tmp/hz/outside"
HC=$tmp/hz/cache/c
ln -s "$tmp/hz/outside" "$HC/lnk"
python3 - "$tmp/hostile.data" <<'EOF'
import struct, sys
def hid(k):
    return bytes.fromhex("feedface%032d" % k)
mods = [
    (hid(1), b"/.."),
    (hid(2), b"/./.."),
    (hid(3), b"/a/../../x"),
    (hid(4), b"/opt/\x1b]0;pwned\x07\x1b[2J/evil.so"),
    (hid(5), b"/opt/two\nforged: fetched"),
    (hid(6), b"/lnk/x.so"),
    (hid(7), b"/opt/good/prog7"),
    (bytes(19) + b"\x08", b"//x"),
    (bytes(19) + b"\x09", b"/.build-id/ab"),
    (bytes(19) + b"\x0a", b"/" + b"a" * 300),
    (bytes(19) + b"\x0b", (b"/" + b"b" * 200) * 12),
    (bytes(19) + b"\x0c", b"/opt/dir/"),
    (b"\x0d", b"/opt/short-id"),
]
recs = b""
for bid, fn in mods:
    fn = fn + b"\0" * (64 - len(fn) % 64)
    misc = 2 | (1 << 15)
    recs += struct.pack("<IHHi", 0, misc, 8 + 4 + 24 + len(fn), -1)
    recs += bid + b"\0" * (20 - len(bid)) + bytes([len(bid), 0, 0, 0]) + fn
data = b"\0" * 64
hdr = 104
table = hdr + len(data) + 16
h = b"PERFILE2" + struct.pack("<QQQQQQQQQ", hdr, 136, 0, 0, hdr, len(data),
                             0, 0, 1 << 2) + b"\0" * 24
open(sys.argv[1], "wb").write(h + data + struct.pack("<QQ", table,
                              len(recs)) + recs)
EOF
"$SYMHUB" perf -i "$tmp/hostile.data" --url "$HHUB" --buildid-dir "$HC" \
    >"$tmp/out/hostile" 2>"$tmp/out/hostile.err"
st=$?
# refused ID NAME WHY: a line on stderr refuses module ID, its name
# printed as NAME (or starting so), and says WHY.
refused() {
	grep -F -- "$1  $2" "$tmp/out/hostile.err" | grep -q \
	    "^failed  *-  *$1  .*  refused: $3"
}
check "exit 1" [ "$st" = 1 ]
check "/.. is refused" refused "$(hid 1)" "/..  " \
    "a path with a \. or \.\. component"
check "/./.. is refused" refused "$(hid 2)" "/./..  " \
    "a path with a \. or \.\. component"
check "/a/../../x is refused" refused "$(hid 3)" "/a/../../x  " \
    "a path with a \. or \.\. component"
check "//x is refused" refused "$(printf '%038d08' 0)" "//x" \
    "a path with an empty component"
check "a name in perf's .build-id index is refused" \
    refused "$(printf '%038d09' 0)" "/.build-id/ab" \
    "a path inside perf's own \.build-id index"
check "a component over 255 bytes is refused" \
    refused "$(printf '%038d0a' 0)" "/aaaa" "a path with a component over 255"
check "a name over 2048 bytes is refused" \
    refused "$(printf '%038d0b' 0)" "/bbbb" "a path longer than"
check "a trailing / is refused" refused "$(printf '%038d0c' 0)" \
    "/opt/dir/" "a path with an empty component"
check "a one-byte build-id is refused" refused 0d "/opt/short-id" \
    "a build-id too short"
check "a link out of the cache is not written through" grep -q \
    "^failed  *debuginfo  *$(hid 6)  /lnk/x.so  refused: $HC/lnk/x.so/$(hid 6) leads out of perf's cache" \
    "$tmp/out/hostile.err"
check "the rest is read on: the good one is fetched" \
    grep -q "^fetched  *debuginfo  *$(hid 7)  /opt/good/prog7\$" \
    "$tmp/out/hostile"
check "... and so is the one with escape bytes, printed escaped" grep -qF \
    "$(hid 4)  /opt/\\x1b]0;pwned\\x07\\x1b[2J/evil.so" "$tmp/out/hostile"
check "... and the one with a newline, on one line" grep -q \
    "^fetched  *debuginfo  *$(hid 5)  /opt/two\\\\x0aforged: fetched\$" \
    "$tmp/out/hostile"
check "no control byte reaches the terminal" eval "! LC_ALL=C grep -q \
    '[[:cntrl:]]' '$tmp/out/hostile' '$tmp/out/hostile.err'"
check "every line is one of ours" eval "! grep -Evq \"^(fetched|present|\
failed|missing|skipped|perf's build-id cache:|[0-9]+ fetched)\" \
    '$tmp/out/hostile' '$tmp/out/hostile.err'"
check "the files are below the cache" \
    test -f "$HC/opt/good/prog7/$(hid 7)/debug"
check "... the hostile one's too, under its name as it is" \
    test -f "$HC/opt/"$'\e]0;pwned\a\e[2J'"/evil.so/$(hid 4)/debug"
check "nothing is written outside the cache" \
    [ -z "$(find "$tmp/hz" -mindepth 1 -not -path "$HC" -not -path "$HC/*" \
    -not -path "$tmp/hz/cache" -not -path "$tmp/hz/outside")" ]
"$SYMHUB" perf --list "$tmp/hostile.data" >"$tmp/out/hostile.list"
check "--list prints the names escaped" eval "grep -qxF \
    '$(hid 5) /opt/two\\x0aforged: fetched' \
    '$tmp/out/hostile.list' && ! LC_ALL=C grep -q '[[:cntrl:]]' \
    '$tmp/out/hostile.list'"
stop_check "the second hub stops cleanly"
SYMHUBD_PID=$HUB_PID
URL=$HUB

stop_check "the hub stops cleanly"
forget_pid "$HUB_PID"
finish
