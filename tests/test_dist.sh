#!/bin/bash
# The tarball holds every file of the repository (but the few named
# below).  make distcheck builds and installs the tarball and runs the
# tests that read its files (--enable-dist-check-set); the rest of the
# suite runs once, in the tree, before it.  A test, fixture or bench
# forgotten in EXTRA_DIST would then only show in a tarball nobody
# tests: this check finds it from the tree.
#
# Run by `make check` (top_srcdir, top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_dist.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need git make
git -C "$top_srcdir" rev-parse --git-dir >/dev/null 2>&1 ||
    skip "$top_srcdir is not a git checkout"

# In the repository, not in the tarball, on purpose.
not_shipped='^(\.gitignore)$'

section 'the tarball holds the repository'
d=$tmp/dist
if ! out=$(make -s -C "$top_builddir" distdir distdir="$d" \
    top_distdir="$d" 2>&1); then
	fail "make distdir" "$out"
	finish
fi
(cd "$d" && find . -type f | sed 's|^\./||' | sort) >"$tmp/shipped"
git -C "$top_srcdir" ls-files | sort >"$tmp/tracked"
missing=$(comm -23 "$tmp/tracked" "$tmp/shipped" | grep -Ev "$not_shipped")
if [ -z "$missing" ]; then
	pass "every tracked file is in the tarball ($(wc -l <"$tmp/tracked") files)"
else
	fail "every tracked file is in the tarball" \
	    "missing (add to EXTRA_DIST or to not_shipped here):" "$missing"
fi

# automake's default tar format (v7) leaves out, with a mere warning, a
# name longer than 99 bytes: the tarball then lacks the file, and only
# the copy made from it (distcheck's own `make dist`) fails.
section 'the tar format holds every name'
pv=$(sed -n 's/^PACKAGE_TARNAME = //p' "$top_builddir/Makefile")-$(sed -n \
    's/^PACKAGE_VERSION = //p' "$top_builddir/Makefile")
if grep -q '^am__tar = .*--format=ustar' "$top_builddir/Makefile"; then
	max=255
else
	max=99
fi
long=$(sed "s|^|$pv/|" "$tmp/shipped" | awk -v max="$max" \
    'length($0) > max' )
if [ -z "$long" ]; then
	pass "every name fits the tar format (at most $max bytes)"
else
	fail "every name fits the tar format (at most $max bytes)" \
	    "too long (tar-ustar in AM_INIT_AUTOMAKE, or a shorter path):" \
	    "$long"
fi

finish
