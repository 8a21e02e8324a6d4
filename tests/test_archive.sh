#!/bin/bash
# Packages: symhubd -R -U -Z over real .deb/.ddeb (dpkg-deb), .rpm
# (rpmbuild), tar (gz, xz, bz2, zstd through a command) and zip archives
# built here, answered byte for byte and header for header as elfutils'
# debuginfod -R -U -Z answers on the same directory; debuginfod-find and
# gdb through the hub; sources in a source tarball and a debugsource rpm;
# members extracted on demand, kept while the package is unchanged and
# dropped when it changes or vanishes; a restart reads no package again.
# An export reads each package once (strace counts), and one with nothing
# to write reads none.
# Bad packages (truncated, not one, members climbing out, a decompression
# bomb, one rewritten while it is read) are logged and skipped, and the
# rest is served.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_archive.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc objcopy strip curl debuginfod debuginfod-find gdb dpkg-deb \
    rpmbuild bsdtar tar gzip xz bzip2 zstd zstdcat zip python3 truncate \
    strace sha256sum

section 'fixtures: six programs, packaged six ways'
mkdir -p "$tmp"/{src,b,repo,bad,out,stage}
cp "$FIXTURES/hello.c" "$FIXTURES/greet.c" "$FIXTURES/greet.h" "$tmp/src/"
# build NAME CFLAGS PREFIX: $tmp/b/NAME{,.debug,.stripped}, the DWARF
# naming the sources under PREFIX (as a distro build does).
build() {
	(cd "$tmp/src" && gcc -g $2 -fdebug-prefix-map="$tmp/src=$3" \
	    -o "$tmp/b/$1" hello.c greet.c) &&
	    objcopy --only-keep-debug "$tmp/b/$1" "$tmp/b/$1.debug" &&
	    strip -g -o "$tmp/b/$1.stripped" "$tmp/b/$1"
}
# stage DIR FILE DEST: FILE at DIR/DEST.
stage() {
	mkdir -p "$(dirname "$1/$3")" && cp "$2" "$1/$3"
}
# debpath ID: where Debian puts a debug file.
debpath() {
	echo "usr/lib/debug/.build-id/${1:0:2}/${1:2}.debug"
}
# mkdeb NAME DIR OUT COMP: a Debian package of DIR.
mkdeb() {
	mkdir -p "$2/DEBIAN" &&
	    printf 'Package: %s\nVersion: 1.0\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: test\n' \
	    "$1" >"$2/DEBIAN/control" &&
	    dpkg-deb --root-owner-group -Z"$4" --build "$2" "$3" >/dev/null
}
# mkrpm NAME DIR OUT: an rpm of the files under DIR.
mkrpm() {
	local files
	files=$(cd "$2" && find . -type f | sed 's/^\.//')
	cat >"$tmp/stage/$1.spec" <<-EOF
	%define __strip /bin/true
	%define debug_package %{nil}
	%define __os_install_post %{nil}
	%define _build_id_links none
	Name: $1
	Version: 1.0
	Release: 1
	Summary: test
	License: MIT
	%description
	test
	%install
	cp -a $2/. %{buildroot}/
	%files
	$files
	EOF
	rpmbuild -bb --nodeps --quiet --define "_topdir $tmp/stage/rpm" \
	    --define "_rpmdir $tmp/stage/rpmout" \
	    --define "_build_name_fmt %%{NAME}.rpm" "$tmp/stage/$1.spec" \
	    >/dev/null 2>&1 && mv "$tmp/stage/rpmout/$1.rpm" "$3"
}

build p1 -O0 /usr/src/hello-1.0 && build p2 -O1 /usr/src/debug/hello2-1.0 &&
    build p3 -O2 /build/p3 && build p4 -Os /build/p4 &&
    build p5 -O3 /build/p5 && build p6 -Og /build/p6 || exit 99
for p in p1 p2 p3 p4 p5 p6; do
	eval "ID_$p=$(buildid "$tmp/b/$p")"
done
S=$tmp/stage
# p1: Debian, the executable and its -dbgsym apart; sources in a tarball.
stage "$S/p1" "$tmp/b/p1.stripped" usr/bin/hello
stage "$S/p1-dbgsym" "$tmp/b/p1.debug" "$(debpath "$ID_p1")"
mkdeb hello "$S/p1" "$tmp/repo/hello_1.0_amd64.deb" xz &&
    mkdeb hello-dbgsym "$S/p1-dbgsym" "$tmp/repo/hello-dbgsym_1.0_amd64.ddeb" \
    zstd || exit 99
for f in hello.c greet.c greet.h; do
	stage "$S/p1-src" "$tmp/src/$f" "usr/src/hello-1.0/$f"
done
tar -C "$S/p1-src" -cJf "$tmp/repo/hello-src.tar.xz" ./usr || exit 99
# p2: Fedora's way, binary, -debuginfo and -debugsource rpms.
stage "$S/p2" "$tmp/b/p2.stripped" usr/bin/hello2
stage "$S/p2-debuginfo" "$tmp/b/p2.debug" \
    usr/lib/debug/usr/bin/hello2-1.0-1.x86_64.debug
for f in hello.c greet.c greet.h; do
	stage "$S/p2-debugsource" "$tmp/src/$f" "usr/src/debug/hello2-1.0/$f"
done
mkrpm hello2 "$S/p2" "$tmp/repo/hello2-1.0-1.x86_64.rpm" &&
    mkrpm hello2-debuginfo "$S/p2-debuginfo" \
    "$tmp/repo/hello2-debuginfo-1.0-1.x86_64.rpm" &&
    mkrpm hello2-debugsource "$S/p2-debugsource" \
    "$tmp/repo/hello2-debugsource-1.0-1.x86_64.rpm" || exit 99
# p3..p6: a build's output as tar.gz, zip, tar.bz2, tar.zst.
for p in p3 p4 p5 p6; do
	stage "$S/$p" "$tmp/b/$p.stripped" "opt/$p/bin/$p"
	stage "$S/$p" "$tmp/b/$p.debug" "opt/$p/debug/$p.debug"
done
tar -C "$S/p3" -czf "$tmp/repo/p3.tar.gz" opt &&
    (cd "$S/p4" && zip -qr "$tmp/repo/p4.zip" opt) &&
    tar -C "$S/p5" -cjf "$tmp/repo/p5.tar.bz2" opt &&
    tar -C "$S/p6" -c opt | zstd -q >"$tmp/repo/p6.tar.zst" || exit 99
NPKG=$(ls "$tmp/repo" | wc -l)
ZOPTS=(-Z .tar.xz -Z .tar.gz -Z .zip -Z .tar.bz2 -Z .tar.zst=zstdcat)

section 'bad packages beside them'
# A member climbing out, one absolute, and a good one after them.
python3 - "$tmp/bad/evil.tar.gz" "$tmp/b/p3.debug" <<'EOF' || exit 99
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w:gz") as t:
    for name in ("../../escape.c", "/etc/absolute.c"):
        data = b"int x;\n"
        i = tarfile.TarInfo(name)
        i.size = len(data)
        t.addfile(i, io.BytesIO(data))
    t.add(sys.argv[2], arcname="./usr/share/ok.debug")
EOF
head -c "$(($(file_size "$tmp/repo/hello_1.0_amd64.deb") / 2))" \
    "$tmp/repo/hello_1.0_amd64.deb" >"$tmp/bad/truncated_1.0_amd64.deb"
head -c 4096 /dev/urandom >"$tmp/bad/random.rpm"
# 256 MiB of zeros in a few KiB: a decompression bomb, through a command.
# (A sparse file: nothing is written to disk to make it.)
mkdir -p "$S/bomb"
truncate -s 256M "$S/bomb/zeros" &&
    tar -C "$S/bomb" -c zeros | zstd -q -19 >"$tmp/bad/bomb.tar.zst" &&
    rm "$S/bomb/zeros" || exit 99
# A cpio whose header gives its name as 1 GiB long, the name zeros: 33 KiB
# of zstd.  libarchive buffers a name whole before the header is ours to
# check, so the bound must hold on what reaches it.
python3 -c 'import sys
h = b"070701" + b"".join(b"%08x" % v for v in
    (1, 0o100644, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1 << 30, 0))
sys.stdout.buffer.write(h)' >"$tmp/namebomb.hdr" &&
    { cat "$tmp/namebomb.hdr"; head -c $(((1 << 30) + 16)) /dev/zero; } |
    zstd -q -3 >"$tmp/bad/namebomb.cpio.zst" || exit 99
# A package rewritten while it is read: its command touches it first.
cat >"$tmp/rewrite.sh" <<'EOF'
#!/bin/sh
touch "$1" && gzip -dc "$1"
EOF
chmod +x "$tmp/rewrite.sh"
cp "$tmp/repo/p3.tar.gz" "$tmp/bad/moving.tar.mod"

section 'symhubd and elfutils debuginfod on the same packages'
hub -d "$tmp/store" -R -U "${ZOPTS[@]}" -Z ".tar.mod=$tmp/rewrite.sh" \
    -Z .cpio.zst -F "$tmp/bad" "$tmp/repo" --log-file "$tmp/hub.log" -v
HUB=$URL
start_debuginfod elfutils "" -R -U "${ZOPTS[@]}" "$tmp/repo" ||
    { fail "elfutils debuginfod starts" "$(tail -5 "$tmp/elfutils.log")"; finish; }

# What both must serve: each program's debuginfo and executable, and the
# sources of p1 (source tarball) and p2 (debugsource rpm).
PATHS=()
for p in p1 p2 p3 p4 p5 p6; do
	eval "id=\$ID_$p"
	PATHS+=("/buildid/$id/debuginfo" "/buildid/$id/executable")
done
PATHS+=("/buildid/$ID_p1/source/usr/src/hello-1.0/hello.c"
    "/buildid/$ID_p1/source/usr/src/hello-1.0/greet.h"
    "/buildid/$ID_p2/source/usr/src/debug/hello2-1.0/greet.c")
# expected PATH: the file whose bytes PATH must give.
expected() {
	local p
	for p in p1 p2 p3 p4 p5 p6; do
		eval "id=\$ID_$p"
		case $1 in
		"/buildid/$id/debuginfo") echo "$tmp/b/$p.debug"; return ;;
		"/buildid/$id/executable") echo "$tmp/b/$p.stripped"; return ;;
		esac
	done
	echo "$tmp/src/${1##*/}"
}
elfutils_ready() {
	local p
	for p in "${PATHS[@]}"; do
		[ "$(http_code "$DURL$p")" = 200 ] || return 1
	done
}
check "elfutils has indexed the packages" wait_until 60 elfutils_ready

n=0
for p in "${PATHS[@]}"; do
	n=$((n + 1))
	exp=$(expected "$p")
	URL=$HUB http "$p" "$tmp/out/h$n" "$tmp/out/hh$n" >"$tmp/out/hc$n"
	URL=$DURL http "$p" "$tmp/out/d$n" "$tmp/out/dh$n" >"$tmp/out/dc$n"
	what="${p#/buildid/*/}"
	what="$what of ${p:9:8}"
	if [ "$(cat "$tmp/out/hc$n")" != 200 ]; then
		fail "$what: 200" "$(cat "$tmp/out/hc$n") $(head -c 200 "$tmp/out/h$n")"
		continue
	fi
	cmp -s "$tmp/out/h$n" "$exp" && cmp -s "$tmp/out/d$n" "$exp"
	verdict $? "$what: the packaged bytes, as elfutils sends them" \
	    "symhubd's $(cmp -s "$tmp/out/h$n" "$exp" || echo "differ")," \
	    "elfutils' $(cmp -s "$tmp/out/d$n" "$exp" || echo "differ")"
	hs=$(header "$tmp/out/hh$n" X-DEBUGINFOD-SIZE)
	ha=$(header "$tmp/out/hh$n" X-DEBUGINFOD-ARCHIVE)
	hf=$(header "$tmp/out/hh$n" X-DEBUGINFOD-FILE)
	ds=$(header "$tmp/out/dh$n" X-DEBUGINFOD-SIZE)
	da=$(header "$tmp/out/dh$n" X-DEBUGINFOD-ARCHIVE)
	df=$(header "$tmp/out/dh$n" X-DEBUGINFOD-FILE)
	# elfutils 0.188 sends the member's base name as X-DEBUGINFOD-FILE;
	# 0.190 and later the member's path, as symhubd does.
	# p3's debuginfo is also evil.tar.gz's ok.debug (bad/ is symhubd's
	# only): either member may answer for those bytes.
	[ -n "$ha" ] && [ "$hs" = "$ds" ] && [ "${hf:0:1}" = / ] && {
	    { [ "$ha" = "$da" ] &&
	        { [ "$hf" = "$df" ] || [ "${hf##*/}" = "$df" ]; }; } ||
	    { [ "$ha" = "$tmp/bad/evil.tar.gz" ] &&
	        [ "$hf" = /usr/share/ok.debug ]; }; }
	verdict $? "$what: X-DEBUGINFOD-SIZE, -ARCHIVE, -FILE as elfutils'" \
	    "symhubd: size $hs, archive $ha, file $hf" \
	    "elfutils: size $ds, archive $da, file $df"
done
check "a member's X-DEBUGINFOD-FILE is its path in the package" \
    grep -qi "^X-DEBUGINFOD-FILE: /$(debpath "$ID_p1")" "$tmp/out/hh1"
URL=$HUB

section 'clients through the hub'
client_env
debuginfod-find debuginfo "$ID_p2" >"$tmp/out/df" 2>"$tmp/out/df.err"
check "debuginfod-find: p2's debuginfo from its -debuginfo rpm" \
    cmp -s "$(cat "$tmp/out/df")" "$tmp/b/p2.debug"
debuginfod-find source "$ID_p1" /usr/src/hello-1.0/greet.c \
    >"$tmp/out/df" 2>"$tmp/out/df.err"
check "debuginfod-find: p1's source from the source tarball" \
    cmp -s "$(cat "$tmp/out/df")" "$tmp/src/greet.c"
debuginfod-find executable "$ID_p6" >"$tmp/out/df" 2>"$tmp/out/df.err"
check "debuginfod-find: p6's executable through zstdcat" \
    cmp -s "$(cat "$tmp/out/df")" "$tmp/b/p6.stripped"
gdb_info_line "gdb: p1's line table from the -dbgsym package" \
    "$tmp/b/p1.stripped" "$tmp/src"

section 'bad packages: logged, skipped, the rest served'
check "a member climbing out is skipped, named" \
    grep -q 'evil.tar.gz: skipping member ../../escape.c: a member with a ".." in its path' \
    "$tmp/hub.log"
check "an absolute member is skipped, named" \
    grep -q 'evil.tar.gz: skipping member /etc/absolute.c: a member with an absolute path' \
    "$tmp/hub.log"
expect_get "... and the good member after them is served" \
    "/buildid/$ID_p3/debuginfo" 200 "$tmp/b/p3.debug"
check "a truncated .deb is skipped with libarchive's reason" \
    grep -q "skipping package $tmp/bad/truncated_1.0_amd64.deb: ." \
    "$tmp/hub.log"
check "a file that is no rpm is skipped" \
    grep -q "skipping package $tmp/bad/random.rpm: ." "$tmp/hub.log"
check "a decompression bomb is stopped at the bound" \
    grep -q "skipping package $tmp/bad/bomb.tar.zst: unpacks to far more than the archive's size" \
    "$tmp/hub.log"
check "a name of 1 GiB in a cpio.zst of 33 KiB is stopped at the bound" \
    grep -q "skipping package $tmp/bad/namebomb.cpio.zst: unpacks to far more than the archive's size" \
    "$tmp/hub.log"
hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$SYMHUBD_PID/status")
check "... before libarchive holds it: the hub's peak memory $((hwm / 1024)) MiB, under 512" \
    [ "${hwm:-999999999}" -lt $((512 * 1024)) ]
check "a package rewritten while read is not indexed, and said so" \
    grep -q "package $tmp/bad/moving.tar.mod changed while it was read" \
    "$tmp/hub.log"
check "the hub is alive and ready" is_ready "$URL"

section 'members extracted once, kept, dropped with their package'
b0=$(metric symhub_cache_blobs)
expect_get "p1's executable again" "/buildid/$ID_p1/executable" 200 \
    "$tmp/b/p1.stripped"
check "served from its extracted copy (no new blob)" \
    [ "$(metric symhub_cache_blobs)" = "$b0" ]
# p1's package now holds another program; its -dbgsym package is gone.
build p1b "-O0 -fstack-protector-all" /usr/src/hello-1.0 || exit 99
ID_p1b=$(buildid "$tmp/b/p1b")
cp "$tmp/b/p1b.stripped" "$S/p1/usr/bin/hello"
rm "$tmp/repo/hello_1.0_amd64.deb"
mkdeb hello "$S/p1" "$tmp/repo/hello_1.0_amd64.deb" xz || exit 99
rm "$tmp/repo/hello-dbgsym_1.0_amd64.ddeb"
check "a rescan" rescan
expect_get "the old executable is gone with the package's change" \
    "/buildid/$ID_p1/executable" 404
expect_get "the debuginfo is gone with its package" \
    "/buildid/$ID_p1/debuginfo" 404
check "... and so are their extracted copies" \
    [ "$(metric symhub_cache_blobs)" = "$((b0 - 2))" ]
expect_get "the package's new executable is served" \
    "/buildid/$ID_p1b/executable" 200 "$tmp/b/p1b.stripped"

section 'export: members written into the tree'
"$SYMHUB" export -q --build-id "$ID_p2" "$tmp/store" "$tmp/exp" \
    >"$tmp/out/exp" 2>&1
check "export of p2, whose files are rpm members" \
    grep -q "^5 written" "$tmp/out/exp"
check "... its debuginfo, the packaged bytes" \
    cmp -s "$tmp/exp/buildid/$ID_p2/debuginfo" "$tmp/b/p2.debug"
check "... and a source, the packaged bytes" \
    cmp -s "$tmp/exp/buildid/$ID_p2/source/usr/src/debug/hello2-1.0/hello.c" \
    "$tmp/src/hello.c"

section 'export: each package read once, in one pass'
# Under strace, the packages export opens.  Each member was extracted on
# its own, its package read from the start each time.
export_traced() {	# DIR OUT
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	    strace -f -qq -e trace=open,openat -o "$2.trace" \
	    "$SYMHUB" export -q "$tmp/store" "$1" >"$2" 2>"$2.err"
}
# opened TRACE: "COUNT NAME" for each package of the repo opened.
opened() {
	local f n
	for f in "$tmp"/repo/*; do
		n=$(grep -cF "\"$f\"" "$1")
		[ "$n" = 0 ] || echo "$n ${f##*/}"
	done | sort -k2
}
# summary OUT WRITTEN UNCHANGED: OUT's last line, nothing failed.
summary() {
	grep -q "^$2 written ([0-9]* bytes), $3 unchanged, 0 failed\$" "$1"
}
# Every package of the repo has members in the store (hello-src.tar.xz:
# sources of p1, whose records its build-id keeps).
ONCE=$(ls "$tmp/repo" | sort | sed 's/^/1 /')
export_traced "$tmp/exp-all" "$tmp/out/all"
check "an export of every package's members (exit $?)" \
    summary "$tmp/out/all" '[1-9][0-9]*' 0
check "each package opened once" [ "$(opened "$tmp/out/all.trace")" = \
    "$ONCE" ]
bad=$(tail -n +2 "$tmp/exp-all/manifest.tsv" |
while IFS=$'\t' read -r id k size sha o p; do
	f=$tmp/exp-all/buildid/$id/$k
	[ "$k" = source ] && f=$tmp/exp-all/buildid/$id/source$p
	[ "$(sha256sum <"$f" | cut -d' ' -f1)" = "$sha" ] &&
	    [ "$(file_size "$f")" = "$size" ] || echo "$id $k $p"
done)
check "every manifest line matches its file's SHA-256 and size" [ -z "$bad" ]
NALL=$(grep -vc '^#' "$tmp/exp-all/manifest.tsv")
check "as many files as manifest lines ($NALL)" [ "$(find \
    "$tmp/exp-all/buildid" -type f | wc -l)" = "$NALL" ]
same=1
for p in p2 p4 p5 p6; do
	eval "id=\$ID_$p"
	cmp -s "$tmp/exp-all/buildid/$id/debuginfo" "$tmp/b/$p.debug" &&
	    cmp -s "$tmp/exp-all/buildid/$id/executable" "$tmp/b/$p.stripped" ||
	    same=0
done
cmp -s "$tmp/exp-all/buildid/$ID_p1b/executable" "$tmp/b/p1b.stripped" &&
    cmp -s "$tmp/exp-all/buildid/$ID_p1/source/usr/src/hello-1.0/greet.c" \
    "$tmp/src/greet.c" || same=0
check "... the packaged bytes: debuginfo, executables, sources" [ "$same" = 1 ]
check "... the same bytes as the export of p2 alone" \
    diff -r "$tmp/exp/buildid/$ID_p2" "$tmp/exp-all/buildid/$ID_p2"
# Members are written package by package, but the manifest keeps the
# store's order: p2's lines as in the export of p2 alone.
check "... the manifest in the store's order" [ \
    "$(grep "^$ID_p2" "$tmp/exp/manifest.tsv")" = \
    "$(grep "^$ID_p2" "$tmp/exp-all/manifest.tsv")" ]

section 'export again: no package read, or only what changed'
export_traced "$tmp/exp-all" "$tmp/out/again"
check "nothing to write: $NALL unchanged" summary "$tmp/out/again" 0 "$NALL"
check "... decided from the records: no package opened" \
    [ -z "$(opened "$tmp/out/again.trace")" ]
rm "$tmp/exp-all/buildid/$ID_p5/debuginfo"
export_traced "$tmp/exp-all" "$tmp/out/gone"
check "a copy removed: 1 written, the rest unchanged" \
    summary "$tmp/out/gone" 1 $((NALL - 1))
check "... its bytes" cmp -s "$tmp/exp-all/buildid/$ID_p5/debuginfo" \
    "$tmp/b/p5.debug"
check "... only its package read, once" \
    [ "$(opened "$tmp/out/gone.trace")" = "1 p5.tar.bz2" ]
touch -d '2001-01-01 00:00' "$tmp/repo/p4.zip"
check "a rescan after p4.zip's mtime changed" rescan
export_traced "$tmp/exp-all" "$tmp/out/touched"
check "p4.zip touched: its members the same bytes, unchanged" \
    summary "$tmp/out/touched" 0 "$NALL"
check "... found so by reading p4.zip once" \
    [ "$(opened "$tmp/out/touched.trace")" = "1 p4.zip" ]
check "... their copies now carry its mtime" \
    [ "$(stat -c %Y "$tmp/exp-all/buildid/$ID_p4/debuginfo")" = \
    "$(stat -c %Y "$tmp/repo/p4.zip")" ]
export_traced "$tmp/exp-all" "$tmp/out/touched2"
check "... and the next export reads it no more" \
    [ -z "$(opened "$tmp/out/touched2.trace")" ]

section 'a restart reads no package again'
stop_check "the hub stops"
hub -d "$tmp/store" -R -U "${ZOPTS[@]}" -Z ".tar.mod=$tmp/rewrite.sh" \
    -Z .cpio.zst -F "$tmp/bad" "$tmp/repo" --log-file "$tmp/hub2.log"
# Every package is unchanged but the one that moves whenever it is read.
check "the first scan finds every package unchanged" \
    metric_cmp 'symhub_scan_files_total{result="unchanged"}' -eq \
    "$((NPKG - 1 + 5))"
check "... and indexes none" \
    metric_cmp 'symhub_scan_files_total{result="indexed"}' -eq 0
expect_get "p5's debuginfo, from its extracted copy" \
    "/buildid/$ID_p5/debuginfo" 200 "$tmp/b/p5.debug"
stop_check "the hub stops again"
finish
