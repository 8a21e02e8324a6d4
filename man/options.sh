#!/bin/sh
# options.sh [--check] SRCDIR: make, from SRCDIR/man/options.txt, the
# --help table src/symhubd/opthelp.h and the OPTIONS entries of
# man/symhubd.8 and man/symhubd.conf.5 (between the marker comments of
# each page), in place.  With --check, change nothing: say which files
# differ from what would be made, and exit 1 if any does.
#
# The made files are kept in git and in the tarball, so that neither a
# build nor a reader of the pages needs this script; `make options` runs
# it, tests/test_options.sh runs it with --check.  POSIX sh and awk.

set -eu

check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
[ $# -eq 1 ] || { echo "usage: $0 [--check] SRCDIR" >&2; exit 2; }
src=$1
txt=$src/man/options.txt
awkf=$src/man/options.awk
tmp=$(mktemp -d "${TMPDIR:-/tmp}/options.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

BEGIN='.\" The entries below are made from man/options.txt by man/options.sh:'
END='.\" End of the entries made from man/options.txt.'

# splice PAGE FRAGMENT: PAGE with the lines between its markers replaced.
splice() {
	# Through the environment: awk -v would take the backslashes.
	BEGIN_=$BEGIN END_=$END FRAG_=$2 awk '
	BEGIN { begin = ENVIRON["BEGIN_"]; end = ENVIRON["END_"]
		frag = ENVIRON["FRAG_"] }
	$0 == begin { print; while ((getline l < frag) > 0) print l
		skip = 1; found++; next }
	$0 == end { skip = 0; found++ }
	!skip { print }
	END { if (found != 2) { print FILENAME ": no marker lines" \
	    > "/dev/stderr"; exit 1 } }' "$1"
}

awk -v out=c -f "$awkf" "$txt" >"$tmp/opthelp.h"
awk -v out=man8 -f "$awkf" "$txt" >"$tmp/man8"
awk -v out=man5 -f "$awkf" "$txt" >"$tmp/man5"
splice "$src/man/symhubd.8" "$tmp/man8" >"$tmp/symhubd.8"
splice "$src/man/symhubd.conf.5" "$tmp/man5" >"$tmp/symhubd.conf.5"

rc=0
for f in src/symhubd/opthelp.h man/symhubd.8 man/symhubd.conf.5; do
	new=$tmp/${f##*/}
	if cmp -s "$new" "$src/$f"; then
		continue
	fi
	if [ $check -eq 1 ]; then
		echo "$f differs from what man/options.txt makes:"
		diff -u "$src/$f" "$new" | head -n 20 || :
		rc=1
	else
		cp "$new" "$src/$f"
		echo "made $f"
	fi
done
exit $rc
