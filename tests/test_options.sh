#!/bin/bash
# Each option is described once, in man/options.txt: the --help table
# (src/symhubd/opthelp.h) and the OPTIONS of man/symhubd.8 and
# man/symhubd.conf.5 are what man/options.sh makes from it.  An edit to
# one of them by hand, or to options.txt without `make options`, fails
# here.  (That the descriptions name the table's options is
# test_config's part.)
#
# Run by `make check` (top_srcdir set), or by hand:
#   top_srcdir=SRC bash tests/test_options.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need awk

section 'made from man/options.txt'
if out=$(TMPDIR=$tmp sh "$top_srcdir/man/options.sh" --check \
    "$top_srcdir" 2>&1); then
	pass "--help's table and the man pages' OPTIONS match man/options.txt"
else
	fail "--help's table and the man pages' OPTIONS match man/options.txt" \
	    "$out" "run: make options"
fi

section 'every option in its page'
# symhubd.8 has every option, symhubd.conf.5 those a file may set.
names=$(sed -n 's/^@option[[:space:]]*//p' "$top_srcdir/man/options.txt")
cli=$(awk '/^@option/ { n = $2 } /^@cli$/ { print n }' \
    "$top_srcdir/man/options.txt")
bad=()
for n in $names; do
	r=${n//-/\\\\-}
	grep -q -- "^\.B[RI]\? .*\\\\-\\\\-$r\\b" "$top_srcdir/man/symhubd.8" ||
	    bad+=("symhubd.8:$n")
	grep -qx "$n" <<<"$cli" && continue
	grep -q -- "^\.BI \"$r = \"" "$top_srcdir/man/symhubd.conf.5" ||
	    bad+=("symhubd.conf.5:$n")
done
if [ ${#bad[@]} -eq 0 ] && [ -n "$names" ]; then
	pass "each option has its entry ($(wc -w <<<"$names") options)"
else
	fail "each option has its entry" "missing: ${bad[*]}"
fi

section 'symhub: every long option in its --help and in symhub.1'
# The option tables of the commands' sources, against what a user reads.
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
bad=()
n=0
for spec in upload:symhub.c prefetch:cmd_prefetch.c perf:cmd_perf.c \
    pprof:cmd_pprof.c otlp:cmd_pprof.c export:cmd_export.c \
    import:cmd_import.c gsym:cmd_gsym.c; do
	cmd=${spec%%:*}
	opts=$(sed -n 's/.*{ "\([a-z][a-z-]*\)",[[:space:]]*[a-z_]*_argument.*/\1/p' \
	    "$top_srcdir/src/symhub/${spec#*:}")
	help=$("$SYMHUB" "$cmd" --help 2>&1)
	for o in $opts; do
		n=$((n + 1))
		grep -q -- "--$o\\b" <<<"$help" || bad+=("symhub $cmd --help:--$o")
		r=${o//-/\\\\-}
		grep -q -- "\\\\-\\\\-$r\\b" "$top_srcdir/man/symhub.1" ||
		    bad+=("symhub.1:--$o")
	done
done
if [ ${#bad[@]} -eq 0 ] && [ "$n" -gt 40 ]; then
	pass "each of the $n is there"
else
	fail "each of the $n is there" "missing: ${bad[*]}"
fi

finish
