#!/bin/bash
# The build under test is the build asked for (issue 28, point 4).
# Configured with --enable-sanitizers, symhubd, symhub and the unit tests
# carry ASan and UBSan; configured without, none of them does.  Once, the
# README's test command reconfigured the tree its build command had
# built: make found the objects up to date, and `make check` tested the
# release build under the sanitizers' name.  The test command now builds
# in a directory of its own; this check says which build ran.
#
# Run by `make check` (top_srcdir, top_builddir, SYMHUB_SANITIZERS and
# SYMHUB_TEST_CLOCK_BUILT set), or by hand:
#   SYMHUB_SANITIZERS=yes top_srcdir=SRC top_builddir=BUILD bash tests/test_build.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need nm
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -n "${SYMHUB_SANITIZERS:-}" ] || skip "SYMHUB_SANITIZERS not set (run by make check)"

section "configured with --enable-sanitizers=$SYMHUB_SANITIZERS"
# has SYMBOL FILE: FILE refers to SYMBOL (defined or from a library).
has() {
	nm -D "$2" 2>/dev/null | grep -q " $1" ||
	    nm "$2" 2>/dev/null | grep -q " $1"
}
for f in "$SYMHUBD" "$SYMHUB" "$top_builddir/tests/test_cache"; do
	[ -x "$f" ] || { fail "$f is built" "missing"; continue; }
	name=${f#"$top_builddir"/}
	if [ "$SYMHUB_SANITIZERS" = yes ]; then
		check "$name carries ASan" has __asan_init "$f"
		check "$name carries UBSan" has __ubsan_handle_ "$f"
	else
		check "$name carries no ASan (a release build)" \
		    eval "! has __asan_init '$f'"
	fi
done
# The test clock (src/base/clock.h) is part of a test build only: a
# release symhubd has none of its code.
if [ -n "${SYMHUB_TEST_CLOCK_BUILT:-}" ]; then
	if [ "$SYMHUB_TEST_CLOCK_BUILT" = yes ]; then
		check "src/symhubd/symhubd carries the test clock" \
		    has clock_test_init "$SYMHUBD"
	else
		check "src/symhubd/symhubd carries no test clock" \
		    eval "! has clock_test '$SYMHUBD' &&
		    ! grep -q SYMHUB_TEST_CLOCK '$SYMHUBD'"
	fi
fi
finish
