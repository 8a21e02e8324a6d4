#!/bin/bash
# Seekable xz packages (issue 30.3): a .deb whose data.tar.xz, a .tar.xz
# and an rpm whose payload are xz in many small blocks (as the kernel's
# -dbg packages are, in large ones), each with many members.  A member
# near the end is extracted by seeking to its block, not by reading the
# package from its start: /metrics counts the member as sought to and the
# bytes decompressed for it as a few blocks' worth, and its bytes are the
# file's.  A package whose xz index was corrupted after it was indexed is
# read from its start: same bytes; one corrupt from the start cannot be
# read to its end at all, and is skipped as any corrupt package.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_seek.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc objcopy strip curl xz tar ar python3 dd cmp od

BLOCK=65536

section 'fixtures: four programs, each packaged with 120 members'
mkdir -p "$tmp"/{src,b,repo,out,stage}
cp "$FIXTURES/hello.c" "$FIXTURES/greet.c" "$FIXTURES/greet.h" "$tmp/src/"
for p in p1 p2 p3 p4 p5; do
	# Five programs, five build-ids.
	echo "const char tag_${p}[] = \"$p\";" >"$tmp/src/tag_$p.c"
	(cd "$tmp/src" && gcc -g -O1 -o "$tmp/b/$p" hello.c greet.c \
	    "tag_$p.c") &&
	    objcopy --only-keep-debug "$tmp/b/$p" "$tmp/b/$p.debug" &&
	    strip -g -o "$tmp/b/$p.stripped" "$tmp/b/$p" || exit 99
	eval "ID_$p=$(buildid "$tmp/b/$p")"
done
check "five distinct build-ids" test "$(printf '%s\n' "$ID_p1" "$ID_p2" \
    "$ID_p3" "$ID_p4" "$ID_p5" | sort -u | wc -l)" = 5
# Filler that compresses somewhat (hex of random bytes), 12 KiB a member.
python3 - "$tmp/stage/filler" <<'EOF' || exit 99
import os, sys
d = sys.argv[1]
os.makedirs(d)
for i in range(120):
    with open(os.path.join(d, "f%03d.txt" % i), "w") as f:
        f.write(os.urandom(6144).hex())
EOF
# tree P DIR: P's executable early, its debuginfo near the end, fillers
# around them; the member list (in archive order) to DIR.list.
tree() {
	local d=$2 id
	eval "id=\$ID_$1"
	mkdir -p "$d/usr/share/$1" "$d/usr/bin" \
	    "$d/usr/lib/debug/.build-id/${id:0:2}" &&
	    cp "$tmp/stage/filler"/* "$d/usr/share/$1/" &&
	    cp "$tmp/b/$1.stripped" "$d/usr/bin/$1" &&
	    cp "$tmp/b/$1.debug" "$d/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ||
	    return 1
	(cd "$d" && {
		ls usr/share/"$1"/f00*.txt
		echo "usr/bin/$1"
		ls usr/share/"$1"/f0[1-9]*.txt usr/share/"$1"/f10*.txt
		echo "usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
		ls usr/share/"$1"/f11*.txt
	} | sed 's|^|./|') >"$d.list"
}
# xztar DIR: DIR's members, in DIR.list's order, as a multi-block tar.xz.
xztar() {
	tar -C "$1" --owner=0 --group=0 --no-recursion -T "$1.list" -cf - |
	    xz -6 --block-size=$BLOCK --check=crc64
}
# mkdeb P OUT: a .deb (ar: debian-binary, control.tar.xz, data.tar.xz).
mkdeb() {
	local d=$tmp/stage/deb-$1
	tree "$1" "$d/root" && mkdir -p "$d/control" &&
	    printf 'Package: %s\nVersion: 1.0\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: test\n' \
	    "$1" >"$d/control/control" &&
	    echo 2.0 >"$d/debian-binary" &&
	    tar -C "$d/control" -cf - ./control | xz >"$d/control.tar.xz" &&
	    xztar "$d/root" >"$d/data.tar.xz" &&
	    (cd "$d" && ar rcD "$2" debian-binary control.tar.xz data.tar.xz)
}
mkdeb p1 "$tmp/repo/p1_1.0_amd64.deb" &&
    mkdeb p2 "$tmp/repo/p2_1.0_amd64.deb" &&
    mkdeb p3 "$tmp/repo/p3_1.0_amd64.deb" &&
    tree p4 "$tmp/stage/p4" && xztar "$tmp/stage/p4" >"$tmp/repo/p4.tar.xz" ||
    exit 99
check "the data.tar.xz is xz in many blocks" \
    test "$(xz --robot -l "$tmp/stage/deb-p1/data.tar.xz" |
    awk '$1 == "totals" { print $3 }')" -ge 20

# An rpm whose payload is xz in blocks: rpmbuild writes one block for so
# little, so the payload is compressed again in blocks (the header's
# payload digest then no longer matches; no reader here checks it).
# rpm_payload RPM: the offset of an rpm's payload (after lead, signature
# and header).
rpm_payload() {
	python3 - "$1" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
off = 96
for pad in (True, False):
    n, size = struct.unpack(">II", b[off + 8:off + 16])
    off += 16 + 16 * n + size
    if pad:
        off = (off + 7) & ~7
print(off)
EOF
}
tree p5 "$tmp/stage/p5" || exit 99
files=$(sed 's/^\.//' "$tmp/stage/p5.list")
cat >"$tmp/stage/p5.spec" <<EOF
%define __strip /bin/true
%define debug_package %{nil}
%define __os_install_post %{nil}
%define _build_id_links none
%define _binary_payload w6.xzdio
Name: p5
Version: 1.0
Release: 1
Summary: test
License: MIT
%description
test
%install
cp -a $tmp/stage/p5/. %{buildroot}/
%files
$files
EOF
RPM=$tmp/repo/p5-1.0-1.x86_64.rpm
if command -v rpmbuild >/dev/null && command -v rpm2cpio >/dev/null &&
    rpmbuild -bb --nodeps --quiet --define "_topdir $tmp/stage/rpm" \
    --define "_rpmdir $tmp/stage/rpmout" \
    --define "_build_name_fmt %%{NAME}.rpm" "$tmp/stage/p5.spec" \
    >"$tmp/stage/rpmbuild.log" 2>&1 &&
    off=$(rpm_payload "$tmp/stage/rpmout/p5.rpm") &&
    head -c "$off" "$tmp/stage/rpmout/p5.rpm" >"$RPM" &&
    rpm2cpio "$tmp/stage/rpmout/p5.rpm" |
    xz -6 --block-size=$BLOCK --check=crc64 >>"$RPM"; then
	HAVE_RPM=1
	tail -c +$((off + 1)) "$RPM" >"$tmp/stage/p5.payload.xz"
	check "the rpm's payload is xz in many blocks" \
	    test "$(xz --robot -l "$tmp/stage/p5.payload.xz" |
	    awk '$1 == "totals" { print $3 }')" -ge 20
else
	HAVE_RPM=0
	rm -f "$RPM"
	skip_check "rpmbuild made no rpm" "$(tail -3 "$tmp/stage/rpmbuild.log")"
fi

# p3's xz index is corrupt from the start: its CRC32 (the 4 bytes before
# the 12-byte stream footer, at the ar member's end: data.tar.xz is last).
# corrupt_index FILE END: flip a byte of the index of the xz stream that
# ends at END, in place.
corrupt_index() {
	local at=$(($2 - 12 - 2)) b
	b=$(dd if="$1" bs=1 skip="$at" count=1 2>/dev/null | od -An -tu1)
	printf "\\$(printf %03o $(((b ^ 0x5a) & 255)))" |
	    dd of="$1" bs=1 seek="$at" conv=notrunc 2>/dev/null
}
# deb_xz_end DEB: where data.tar.xz ends in the .deb.
deb_xz_end() {
	local s
	s=$(wc -c <"$tmp/stage/deb-p${1}/data.tar.xz")
	echo $(( $(file_size "$tmp/repo/p${1}_1.0_amd64.deb") - (s & 1) ))
}
corrupt_index "$tmp/repo/p3_1.0_amd64.deb" "$(deb_xz_end 3)"
check "p3's xz index is corrupt" \
    sh -c "! ar p '$tmp/repo/p3_1.0_amd64.deb' data.tar.xz | xz -t 2>/dev/null"

section 'the hub indexes the packages'
hub -d "$tmp/store" -R -U -Z .tar.xz "$tmp/repo" --log-file "$tmp/hub.log" -v
NPKG=$(ls "$tmp/repo" | wc -l)
# p3 cannot be read to its end, in order or not (as xz -t says).
check "the $((NPKG - 1)) good packages are indexed" \
    wait_metric 'symhub_scan_files_total{result="indexed"}' -ge $((NPKG - 1)) 60
check "the one whose xz index is corrupt from the start is skipped" \
    grep -q "skipping package $tmp/repo/p3_1.0_amd64.deb: .*[Cc]orrupt" \
    "$tmp/hub.log"

SEEK='symhub_package_members_total{read="seek"}'
SEQ='symhub_package_members_total{read="sequential"}'
UNPACKED=symhub_package_seek_unpacked_bytes_total
# get P KIND EXPECTED: /buildid/ID/KIND of program P has EXPECTED's bytes.
get() {
	local id code
	eval "id=\$ID_$1"
	code=$(http "/buildid/$id/$2" "$tmp/out/$1.$2" "$tmp/out/$1.$2.h")
	if [ "$code" = 200 ] && cmp -s "$tmp/out/$1.$2" "$3"; then
		pass "$1's $2: the file's bytes"
	else
		fail "$1's $2: the file's bytes" "status $code" \
		    "$(tail -3 "$tmp/hub.log")"
	fi
}
# counts: "seek sequential unpacked" now.
counts() {
	echo "$(metric "$SEEK") $(metric "$SEQ") $(metric "$UNPACKED")"
}

section 'a member near the end of a multi-block .deb: sought to'
read -r k0 q0 u0 < <(counts)
get p1 debuginfo "$tmp/b/p1.debug"
read -r k1 q1 u1 < <(counts)
TARSIZE=$(xz -dc "$tmp/stage/deb-p1/data.tar.xz" | wc -c)
verdict "$([ "$((k1 - k0))" = 1 ] && [ "$q1" = "$q0" ]; echo $?)" \
    "it was sought to, not read from the package's start" \
    "seek $k0 -> $k1, sequential $q0 -> $q1"
verdict "$([ "$((u1 - u0))" -gt 0 ] &&
    [ "$((u1 - u0))" -le "$(($(file_size "$tmp/b/p1.debug") + 3 * BLOCK))" ]
    echo $?)" "it cost its own bytes and a block or so, not the package's" \
    "unpacked $((u1 - u0)) of $TARSIZE"
check "the log says so" grep -q "sought to /usr/lib/debug/.build-id/" \
    "$tmp/hub.log"
get p1 executable "$tmp/b/p1.stripped"
check "the executable, early in the package, was sought to too" \
    metric_cmp "$SEEK" -eq $((k1 + 1))

section 'a multi-block .tar.xz and rpm payload: sought to'
read -r k0 q0 u0 < <(counts)
get p4 debuginfo "$tmp/b/p4.debug"
check "p4.tar.xz's member was sought to" metric_cmp "$SEEK" -eq $((k0 + 1))
if [ "$HAVE_RPM" = 1 ]; then
	get p5 debuginfo "$tmp/b/p5.debug"
	check "the rpm's member was sought to" \
	    metric_cmp "$SEEK" -eq $((k0 + 2))
	get p5 executable "$tmp/b/p5.stripped"
fi
check "none was read from its package's start" metric_cmp "$SEQ" -eq "$q0"

section 'an xz index corrupted after indexing: read from the start'
REF=$tmp/stage/p2.ref
touch -r "$tmp/repo/p2_1.0_amd64.deb" "$REF"
corrupt_index "$tmp/repo/p2_1.0_amd64.deb" "$(deb_xz_end 2)"
# The same file as indexed (inode, size, mtime): its record stands.
touch -r "$REF" "$tmp/repo/p2_1.0_amd64.deb"
read -r k0 q0 u0 < <(counts)
get p2 debuginfo "$tmp/b/p2.debug"
read -r k1 q1 u1 < <(counts)
verdict "$([ "$k1" = "$k0" ] && [ "$((q1 - q0))" = 1 ]; echo $?)" \
    "it was read from the package's start" \
    "seek $k0 -> $k1, sequential $q0 -> $q1"
check "the log says why" grep -q \
    "p2_1.0_amd64.deb: cannot seek to .*a corrupt xz index.*reading the package from its start" \
    "$tmp/hub.log"

section 'a restart keeps the notes'
stop_check "the hub stops cleanly"
hub -d "$tmp/store" -R -U -Z .tar.xz "$tmp/repo" --log-file "$tmp/hub.log" -v
check "the packages are not read again" \
    wait_metric 'symhub_scan_files_total{result="unchanged"}' -ge "$NPKG" 60
check "none is indexed again" \
    metric_cmp 'symhub_scan_files_total{result="indexed"}' -eq 0
read -r k0 q0 u0 < <(counts)
get p4 executable "$tmp/b/p4.stripped"
check "a member is sought to from the stored note" \
    metric_cmp "$SEEK" -eq $((k0 + 1))
stop_check "the hub stops cleanly"

finish
