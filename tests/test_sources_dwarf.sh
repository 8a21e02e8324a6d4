#!/bin/bash
# Sources from the debuginfo itself (issue 31, points 2 and 5): a clang
# -gdwarf-5 -gembed-source build whose tree is gone, served by symhubd
# to curl, debuginfod-find and gdb from the text its line table embeds;
# relative requests matched within the build-id's own file list (a
# relative-path DWARF, an absolute one under a source root, DWARF 4 read
# through libdw); what must not be served (a file not embedded, a path
# the DWARF does not name, climbing paths, an ambiguous suffix); a
# corrupt .debug_line answered with a clear error.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_sources_dwarf.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy strip readelf cmp timeout python3 debuginfod-find gdb
CLANG=
for c in clang-19 clang; do
	command -v "$c" >/dev/null 2>&1 && { CLANG=$c; break; }
done
[ -n "$CLANG" ] || skip "clang not found"
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"

section 'fixtures'
mkdir -p "$tmp"/{out,keep,debug,deploy,bad,gdb} || exit 99
# A: main.c and its header embedded, plain.c compiled without
# -gembed-source (its own unit: named, no text).  The tree is removed
# before the hub starts; keep/ has the bytes to compare with.
A=$tmp/proj-a
mkdir -p "$A/include" || exit 99
cat >"$A/main.c" <<'EOF'
#include "sq.h"

int plain(int);

int
main(int argc, char **argv)
{
	(void)argv;
	return square(argc + 1) + plain(argc);
}
EOF
cat >"$A/include/sq.h" <<'EOF'
static inline int
square(int x)
{
	return x * x;	/* embedded header */
}
EOF
cat >"$A/plain.c" <<'EOF'
int
plain(int x)
{
	return x - 1;	/* not embedded */
}
EOF
cp "$A/main.c" "$A/include/sq.h" "$tmp/keep/" || exit 99
(cd "$A" && "$CLANG" -gdwarf-5 -gembed-source -O0 -Iinclude -c main.c &&
    "$CLANG" -gdwarf-5 -O0 -c plain.c &&
    "$CLANG" -Wl,--build-id -o prog main.o plain.o) || exit 99
objcopy --only-keep-debug "$A/prog" "$tmp/debug/prog.debug" || exit 99
strip -g -o "$tmp/deploy/prog" "$A/prog" || exit 99
IDA=$(buildid "$A/prog")
[ -n "$IDA" ] || exit 99

# B: relative paths, as Debian records them (-fdebug-prefix-map=$PWD=.,
# compiled from a subdirectory: comp_dir ./libio), two files of one name
# in two directories; embedded, so it needs no tree either.
B=$tmp/proj-b
mkdir -p "$B/libio" "$B/stdio" || exit 99
printf 'int\nio_puts(int x)\n{\n\treturn x + 1;\t/* libio */\n}\n' \
    >"$B/libio/ioputs.c"
printf 'int\nstd_puts(int x)\n{\n\treturn x + 2;\t/* stdio */\n}\n' \
    >"$B/stdio/ioputs.c"
printf 'int io_puts(int);\nint std_puts(int);\nint\nmain(int c, char **v)\n{\n\t(void)v;\n\treturn io_puts(c) + std_puts(c);\n}\n' \
    >"$B/main.c"
cp "$B/libio/ioputs.c" "$tmp/keep/libio-ioputs.c"
cp "$B/stdio/ioputs.c" "$tmp/keep/stdio-ioputs.c"
for d in libio stdio .; do
	(cd "$B/$d" && for f in *.c; do
		"$CLANG" -gdwarf-5 -gembed-source -O0 \
		    -fdebug-prefix-map="$B"=. -c "$f" -o "${f%.c}.o" || exit 1
	done) || exit 99
done
(cd "$B" && "$CLANG" -Wl,--build-id -o progb main.o libio/ioputs.o \
    stdio/ioputs.o) || exit 99
cp "$B/progb" "$tmp/debug/progb" || exit 99
IDB=$(buildid "$B/progb")
readelf --debug-dump=info "$B/progb" 2>/dev/null |
    grep -q 'DW_AT_comp_dir.*: \./libio$'
verdict $? "B records a relative compilation directory"
# C: gcc, DWARF 4 (read through libdw), absolute paths, its tree kept as
# a source root: a relative request finds the file the DWARF names.
C=$tmp/proj-c
mkdir -p "$C/sub" || exit 99
cp "$FIXTURES/hello.c" "$FIXTURES/greet.c" "$FIXTURES/greet.h" "$C/sub/" ||
    exit 99
(cd "$C/sub" && gcc -gdwarf-4 -O0 -o "$tmp/debug/progc" hello.c greet.c) ||
    exit 99
IDC=$(buildid "$tmp/debug/progc")
# D: gcc, DWARF 5, relative paths as Debian records them, nothing
# embedded; its tree is a source root, and holds libio/ioputs.c as B's
# DWARF names it: a relative name does not say which tree it is of, so
# no root serves it, for D or for B.
D=$tmp/proj-d
mkdir -p "$D/libio" || exit 99
printf 'int\nd_puts(int x)\n{\n\treturn x + 3;\t/* gcc, relative */\n}\n' \
    >"$D/libio/ioputs.c"
printf 'int d_puts(int);\nint\nmain(int c, char **v)\n{\n\t(void)v;\n\treturn d_puts(c);\n}\n' \
    >"$D/main.c"
(cd "$D/libio" && gcc -gdwarf-5 -O0 -fdebug-prefix-map="$D"=. -c ioputs.c) &&
    (cd "$D" && gcc -gdwarf-5 -O0 -fdebug-prefix-map="$D"=. \
    -o "$tmp/debug/progd" main.c libio/ioputs.o) || exit 99
IDD=$(buildid "$tmp/debug/progd")
SA=$(cd "$A" && pwd -P)
rm -rf "$A" "$B"
[ -n "$IDB" ] && [ -n "$IDC" ] && [ -n "$IDD" ] && [ ! -e "$SA" ]
verdict $? "fixtures built, trees of A and B removed"

hub -d "$tmp/store" -F "$tmp/debug" -F "$tmp/deploy" --source-root "$C" \
    --source-root "$D" -t 0 --log-file "$tmp/symhubd.log"

section 'embedded sources (clang -gembed-source), no tree anywhere'
# The Firefox Profiler's /source/v1 first: the text comes from the line
# table, not from a stored copy.
code=$(http /source/v1 "$tmp/out/v1" "$tmp/out/h" -X POST --data-binary \
    "{\"codeId\":\"$IDA\",\"debugName\":\"a\",\"file\":\"$SA/main.c\"}")
[ "$code" = 200 ] && python3 -c 'import json, sys
sys.exit(json.load(open(sys.argv[1]))["source"] != open(sys.argv[2]).read())' \
    "$tmp/out/v1" "$tmp/keep/main.c"
verdict $? "/source/v1: main.c from the line table ($code)" \
    "$(head -c 300 "$tmp/out/v1")"
expect_get "curl: main.c from the line table" \
    "/buildid/$IDA/source$SA/main.c" 200 "$tmp/keep/main.c"
expect_get "curl: the header it includes, embedded too" \
    "/buildid/$IDA/source$SA/include/sq.h" 200 "$tmp/keep/sq.h"
expect_get "again: from the store" \
    "/buildid/$IDA/source$SA/main.c" 200 "$tmp/keep/main.c"
expect_get "a file named but not embedded: 404" \
    "/buildid/$IDA/source$SA/plain.c" 404
expect_get "a file the DWARF does not name: 404" \
    "/buildid/$IDA/source$SA/nothere.c" 404
# The names are kept: each file read once (the debuginfo; the executable,
# asked for nothere.c, has no line tables), however many requests.
expect_get "another miss" "/buildid/$IDA/source$SA/nothere2.c" 404
r=$(metric symhub_dwarf_source_reads_total)
e=$(metric 'symhub_dwarf_sources_total{result="embedded"}')
n=$(metric 'symhub_dwarf_sources_total{result="named"}')
[ "$r" = 2 ] && [ "$e" = 2 ] && [ "$n" = 1 ]
verdict $? "each file read once; 2 texts, 1 named file served from them" \
    "reads $r, embedded $e, named $n"
expect_get "an unknown build-id: 404" \
    "/buildid/00112233445566778899aabbccddeeff00112233/source$SA/main.c" 404
client_env
client_file "debuginfod-find source" "$tmp/keep/main.c" \
    debuginfod-find source "$IDA" "$SA/main.c"
cp "$tmp/deploy/prog" "$tmp/gdb/prog"
(cd "$tmp/gdb" && timeout 60 gdb -nx -batch \
    -iex 'set debuginfod enabled on' \
    -ex 'list main' "$tmp/gdb/prog") >"$tmp/out/gdb" 2>&1
grep -q 'square(argc + 1) + plain(argc)' "$tmp/out/gdb"
verdict $? "gdb: list main shows main.c's text" "$(head -20 "$tmp/out/gdb")"
f=$(find "$DEBUGINFOD_CACHE_PATH/$IDA" -name 'source*main.c' 2>/dev/null |
    head -1)
expect_file "gdb: main.c came from symhubd" "$f" "$tmp/keep/main.c"

section 'relative paths, matched within the build-id'
expect_get "relative DWARF, relative request: libio/ioputs.c" \
    "/buildid/$IDB/source/libio/ioputs.c" 200 "$tmp/keep/libio-ioputs.c"
# LLVM's client sends a relative path as it is (/source/libio/...).
LLVMFIND=$(command -v llvm-debuginfod-find-19 llvm-debuginfod-find | head -1)
if [ -n "$LLVMFIND" ]; then
	client_env
	client_file "llvm-debuginfod-find --source=libio/ioputs.c" \
	    "$tmp/keep/libio-ioputs.c" \
	    "$LLVMFIND" --source=libio/ioputs.c "$IDB"
else
	skip_check "llvm-debuginfod-find --source" "not installed"
fi
expect_get "the same with ./ in front" \
    "/buildid/$IDB/source/./stdio/ioputs.c" 200 "$tmp/keep/stdio-ioputs.c"
expect_get "absolute DWARF, relative request (embedded)" \
    "/buildid/$IDA/source/include/sq.h" 200 "$tmp/keep/sq.h"
expect_get "absolute DWARF, relative request, source root" \
    "/buildid/$IDC/source/sub/greet.c" 200 "$C/sub/greet.c"
expect_get "libdw's spelling: the compilation directory twice" \
    "/buildid/$IDB/source/./libio/./libio/ioputs.c" 200 \
    "$tmp/keep/libio-ioputs.c"
expect_get "relative DWARF, not embedded: no root is its tree (404)" \
    "/buildid/$IDD/source/libio/ioputs.c" 404
expect_get "the same in libdw's spelling" \
    "/buildid/$IDD/source/./libio/./libio/ioputs.c" 404
expect_get "a suffix two files end in: 409" \
    "/buildid/$IDB/source/ioputs.c" 409
grep -q 'ambiguous source path' "$tmp/out/body"
verdict $? "the 409 says why" "$(head -c 200 "$tmp/out/body")"
expect_get "a path the DWARF does not name: 404" \
    "/buildid/$IDB/source/libio/nothere.c" 404
expect_get "a partial name is no suffix: 404" \
    "/buildid/$IDB/source/o/ioputs.c" 404
expect_get "another build-id's file: 404" \
    "/buildid/$IDA/source/libio/ioputs.c" 404
expect_get "climbing out: ../../etc/passwd is 404" \
    "/buildid/$IDB/source/../../../etc/passwd" 404
expect_get "climbing through a named directory: 404" \
    "/buildid/$IDC/source/sub/../../../../etc/passwd" 404
expect_get "no path: 400" "/buildid/$IDB/source/" 400

section 'corrupt .debug_line'
# The unit's header_length made larger than the unit: neither symhubd's
# reader nor libdw can read the table.
cp "$tmp/debug/prog.debug" "$tmp/bad/prog.debug"
extract_section "$tmp/bad/prog.debug" .debug_line "$tmp/out/line" || exit 99
python3 - "$tmp/out/line" <<'EOF' || exit 99
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
struct.pack_into('<I', b, 8, 0xfffffff0)	# v5: length, version, sizes
open(sys.argv[1], 'wb').write(b)
EOF
objcopy --update-section .debug_line="$tmp/out/line" "$tmp/bad/prog.debug" ||
    exit 99
stop_symhubd
hub -d "$tmp/store-bad" -F "$tmp/bad" -t 0 --log-file "$tmp/symhubd-bad.log"
expect_get "a source from a corrupt line table: 422" \
    "/buildid/$IDA/source$SA/main.c" 422
grep -q "line tables cannot be read" "$tmp/out/body"
verdict $? "the 422 says why" "$(head -c 200 "$tmp/out/body")"
expect_get "asked again (the names kept): 422" \
    "/buildid/$IDA/source$SA/main.c" 422
expect_get "plain.c, in the unit that still reads: named, not embedded" \
    "/buildid/$IDA/source$SA/plain.c" 404
expect_get "the hub still answers" "/buildid/$IDA/debuginfo" 200 \
    "$tmp/bad/prog.debug"
stop_check "symhubd exits cleanly"
finish
