#!/bin/bash
# The layers of doc/architecture.md hold: no folder reaches upward or
# sideways, in its sources or in what it links.
#
#   src/base/     errors, hex, clock, buf uses nothing else
#   cache/        the storage engine      uses base/
#   src/common/   vocabulary, ELF, tokens uses base/
#   src/gsym/     GSYM library            uses base/, common/
#   src/s3/       S3 client               uses base/
#   src/symhubd/  the daemon              uses all of the above
#   src/symhub/   the CLI                 uses all of the above
#
# 1. Every #include "DIR/..." names a folder the including one may use
#    (a header of its own folder is included without one), and
#    cache/cache_int.h, the store's private header, is included by no
#    file outside cache/.
# 2. No undefined symbol of a layer's library is defined by a layer it may
#    not use, and no layer but the daemon refers to libmicrohttpd or
#    json-c, no layer but the daemon, the CLI and s3/ to libcurl, none
#    but s3/ to expat, none below the programs to LMDB except cache/.
#    No layer but cache/ refers to a function cache_int.h declares.
# 3. symjson, the JSON of the symbolize routes, does no I/O and no
#    lookup: its objects refer to memory, strings, base/, common/ and yajl.
# 4. The fetch engine calls no upstream kind's functions (upstream.h's
#    rows stand between them).
# 5. The programs need only their libraries: the CLI needs no
#    libmicrohttpd and no json-c; the tests of the GSYM library and of
#    the S3 client's parsers link no daemon library.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_layers.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need nm readelf

# may LAYER: the folders LAYER may use, itself included.
may() {
	case $1 in
	base) echo base ;;
	cache) echo cache base ;;
	common) echo common base ;;
	gsym) echo gsym common base ;;
	s3) echo s3 base ;;
	symhubd) echo symhubd common gsym s3 cache base ;;
	symhub) echo symhub common gsym s3 cache base ;;
	esac
}
# lib LAYER: its library in the build tree.
lib() {
	case $1 in
	cache) echo "$top_builddir/cache/libcache.a" ;;
	*) echo "$top_builddir/src/$1/lib$1.a" ;;
	esac
}
# dir LAYER: its folder in the source tree.
dir() {
	case $1 in
	cache) echo "$top_srcdir/cache" ;;
	*) echo "$top_srcdir/src/$1" ;;
	esac
}
LAYERS="base cache common gsym s3 symhubd symhub"

section 'includes'
for l in $LAYERS; do
	bad=$(grep -Ho '^#include "[^"]*/[^"]*"' "$(dir "$l")"/*.[ch] |
	    while IFS= read -r line; do
		inc=${line#*#include \"}
		to=${inc%%/*}
		case " $(may "$l") " in
		*" $to "*) ;;
		*) echo "${line#"$top_srcdir"/}" ;;
		esac
	done)
	if [ -z "$bad" ]; then
		pass "$l includes only from: $(may "$l")"
	else
		fail "$l includes only from: $(may "$l")" "$bad"
	fi
done

# The store's private header: its files share it, nobody else.
bad=$(grep -rlE '^#include "(cache/)?cache_int\.h"' \
    --include='*.[ch]' --include='*.cc' "$top_srcdir" 2>/dev/null |
    grep -v "^$top_srcdir/cache/[^/]*$" | sed "s|^$top_srcdir/||")
if [ -z "$bad" ]; then
	pass "cache/cache_int.h is included only inside cache/"
else
	fail "cache/cache_int.h is included only inside cache/" "$bad"
fi

section 'symbols'
for l in $LAYERS; do
	nm -g --defined-only "$(lib "$l")" 2>/dev/null |
	    awk 'NF == 3 { print $3 }' | sort -u >"$tmp/def.$l"
done
# The daemon's main() is in its program, not its library.
[ -s "$tmp/def.symhubd" ] || fail "libsymhubd.a has symbols"
# The CLI has no library of its own: its objects stand for it.
nm -g --defined-only "$top_builddir"/src/symhub/*.o 2>/dev/null |
    awk 'NF == 3 { print $3 }' | sort -u >"$tmp/def.symhub"
for l in $LAYERS; do
	if [ "$l" = symhub ]; then
		nm -u "$top_builddir"/src/symhub/*.o
	else
		nm -u "$(lib "$l")"
	fi 2>/dev/null | awk '$1 == "U" { print $2 }' | sort -u >"$tmp/und.$l"
	bad=
	for o in $LAYERS; do
		case " $(may "$l") " in *" $o "*) continue ;; esac
		b=$(comm -12 "$tmp/und.$l" "$tmp/def.$o" | head -5 | tr '\n' ' ')
		[ -z "$b" ] || bad+="uses $o: $b"$'\n'
	done
	# Foreign libraries, by the prefixes of their symbols.
	case $l in
	symhubd) deny='^XML_' ;;
	symhub) deny='^(MHD_|json_|XML_)' ;;
	base) deny='^(MHD_|json_|curl_|mdb_|elf_|elf64_|gelf_|dwarf_|dwfl_|EVP_|SHA|archive_|XML_)' ;;
	cache) deny='^(MHD_|json_|curl_|elf_|elf64_|gelf_|dwarf_|dwfl_|archive_|XML_)' ;;
	gsym) deny='^(MHD_|json_|curl_|mdb_|archive_|XML_)' ;;
	s3) deny='^(MHD_|json_|mdb_|elf_|elf64_|gelf_|dwarf_|dwfl_|archive_)' ;;
	*) deny='^(MHD_|json_|curl_|mdb_|XML_)' ;;
	esac
	if [ -n "$deny" ]; then
		b=$(grep -E "$deny" "$tmp/und.$l" | head -5 | tr '\n' ' ')
		[ -z "$b" ] || bad+="foreign: $b"
	fi
	if [ -z "$bad" ]; then
		pass "$l refers to nothing above it"
	else
		fail "$l refers to nothing above it" "$bad"
	fi
done

# What cache_int.h declares is the store's own: no layer above calls it.
sed -n 's/^[a-z].*[[:space:]*]\(cache_[a-z0-9_]*\)(.*/\1/p' \
    "$top_srcdir/cache/cache_int.h" | sort -u >"$tmp/int.cache"
bad=
for l in $LAYERS; do
	[ "$l" = cache ] && continue
	b=$(comm -12 "$tmp/und.$l" "$tmp/int.cache" | head -5 | tr '\n' ' ')
	[ -z "$b" ] || bad+="$l: $b"$'\n'
done
if [ ! -s "$tmp/int.cache" ]; then
	fail "only cache/ calls the functions of cache_int.h" "no declarations read"
elif [ -n "$bad" ]; then
	fail "only cache/ calls the functions of cache_int.h" "$bad"
else
	pass "only cache/ calls the $(wc -l <"$tmp/int.cache") functions of cache_int.h"
fi

section 'modules without I/O'
# symjson reads the symbolize requests and writes their answers; the
# lookups, the sockets and the store are its callers' (route_batch.c,
# route_stream.c).  Its objects refer to memory and strings, base/,
# the ids and names of common/, each other, and yajl, nothing else.
allow='^(calloc|malloc|realloc|free|mem(chr|cmp|cpy|move|set)|str(cmp|ncmp|len|nlen|chr)|v?a?snprintf|asprintf|__(v?snprintf|asprintf|mem(cpy|move|set))_chk|(buf|hex|utf8|array)_[a-z0-9_]*|demangle|webapi_[a-z0-9_]*|symjson_[a-z_]*|yajl_[a-z_]*|__(asan|ubsan|sanitizer)_[A-Za-z0-9_]*|__stack_chk_fail)$'
for o in "$top_builddir"/src/symhubd/libsymhubd_a-symjson_*.o; do
	[ -e "$o" ] || { fail "symjson's objects are built" "$o"; continue; }
	b=$(nm -u "$o" | awk '{ print $2 }' | grep -Ev "$allow" | head -5 |
	    tr '\n' ' ')
	if [ -z "$b" ]; then
		pass "${o##*-} refers to no I/O, lookup or daemon module"
	else
		fail "${o##*-} refers to no I/O, lookup or daemon module" "$b"
	fi
done

# The arena (pprof.c's and otlp.c's allocator) is memory only: no
# HTTP, no logging, no daemon module (its thread-local state reached
# through the GOT).
allow='^(calloc|malloc|realloc|reallocarray|free|mem(cpy|move|set)|mmap|munmap|madvise|pthread_mutex_(lock|unlock)|arena_[a-z_]*|__(asan|ubsan|sanitizer)_[A-Za-z0-9_]*|__stack_chk_fail|_GLOBAL_OFFSET_TABLE_|__tls_get_addr)$'
o="$top_builddir/src/symhubd/libsymhubd_a-arena.o"
b=$(nm -u "$o" 2>&1 | awk '{ print $NF }' | grep -Ev "$allow" | head -5 |
    tr '\n' ' ')
if [ -e "$o" ] && [ -z "$b" ]; then
	pass "arena.o refers to memory only"
else
	fail "arena.o refers to memory only" "$o: $b"
fi

section 'seams'
# The fetch engine knows upstreams only through their kinds' rows
# (upstream.h): no call into one kind, no test of which kind it is.
bad=$(grep -nE '\<bucket_[a-z_]+\(|->bucket\>|#include "bucket\.h"' \
    "$top_srcdir/src/symhubd/fetch.c")
if [ -z "$bad" ]; then
	pass "fetch.c asks upstreams through their kinds only"
else
	fail "fetch.c asks upstreams through their kinds only" "$bad"
fi

section 'programs'
needed() {
	readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}
n=$(needed "$SYMHUB")
if [ -z "$n" ]; then
	fail "symhub is a dynamic program" "readelf -d $SYMHUB"
elif echo "$n" | grep -Eq '^lib(microhttpd|json-c)\.'; then
	fail "symhub needs no libmicrohttpd, no json-c" "$n"
else
	pass "symhub needs no libmicrohttpd, no json-c"
fi
n=$(needed "$top_builddir/tests/test_webapi")
if echo "$n" | grep -Eq '^lib(microhttpd|json-c|curl|lmdb|dw|elf)\.'; then
	fail "the URL parser's test links no daemon library" "$n"
else
	pass "the URL parser's test links no daemon library"
fi
n=$(needed "$top_builddir/tests/test_gsym_write")
if echo "$n" | grep -Eq '^lib(microhttpd|json-c|curl|lmdb)\.'; then
	fail "the GSYM library's test links no daemon library" "$n"
else
	pass "the GSYM library's test links no daemon library"
fi
n=$(needed "$top_builddir/tests/test_s3parse")
if [ -z "$n" ]; then
	fail "the S3 client's test is a dynamic program"
elif echo "$n" | grep -Eq '^lib(microhttpd|json-c|lmdb|dw|elf|archive)\.'; then
	fail "the S3 client's test links no daemon library" "$n"
else
	pass "the S3 client's test links no daemon library"
fi
finish
