#!/bin/bash
# Replay every fuzz harness (tests/fuzz/) on its committed corpus, its
# regression cases (every input a fuzzer ever found) and seeds built now
# from the fixtures, under this build's sanitizers.  A crash, a leak or a
# sanitizer report fails the test.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_fuzz_replay.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc g++ objcopy strip curl python3
F=$top_srcdir/tests/fuzz
SYMHUB=$SYMHUB SYMHUBD=$SYMHUBD "$F/seeds.sh" "$tmp/seeds" \
    >"$tmp/seeds.log" 2>&1 || { cat "$tmp/seeds.log"; exit 99; }
for n in webapi record elfinfo gsym gsym_dwarf symjson manifest pkgarchive \
    perfdata metajson demangle gopclntab s3xml event dwscan dwsource srcbundle pprof upzstd \
    otlp; do
	bin=$top_builddir/tests/fuzz/replay_$n
	[ -x "$bin" ] || { fail "replay_$n is built"; continue; }
	dirs=()
	for d in "$F/corpus/$n" "$F/regress/$n" "$tmp/seeds/$n"; do
		[ -d "$d" ] && dirs+=("$d")
	done
	if "$bin" "${dirs[@]}" >"$tmp/$n.out" 2>&1; then
		total=$(awk '/inputs replayed/ { s += $(NF - 2) } END { print s + 0 }' \
		    "$tmp/$n.out")
		check "$n: $total inputs replay cleanly" [ "$total" -gt 0 ]
	else
		fail "$n: replay" "$(tail -n 20 "$tmp/$n.out")"
	fi
done
finish
