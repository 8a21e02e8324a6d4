#!/bin/bash
# checksrc: the house style's mechanical rules, over every .c and .h of
# the source tree (src/, cache/, tests/), as curl's checksrc does for its
# own.
#
# 1. No banned function: sprintf, vsprintf, strcpy, strcat, strtok, atoi,
#    atol, atoll, gets; the bounded forms (snprintf, memcpy with a length,
#    strtok_r) and strtol with error checks instead.
# 2. A section banner reads "/* ---- what follows ---- */": four dashes
#    each side, not a ruler filled out to some column.
# 3. No typedef of a struct, union or enum: plain structs (naming a
#    function-pointer type is fine).
# 4. No blank at the end of a line.
#
# A line may be let through only by the allow-list below, each entry a
# "file:word" pair with the reason above it; an entry that no longer
# matches anything fails too, so the list cannot outlive its cause.
#
# Run by `make check` (top_srcdir set), or by hand:
#   top_srcdir=SRC bash tests/checksrc.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

# file:word, file relative to the source tree.
ALLOW=(
)

cd "$top_srcdir" || exit 99
# protoc-c's output (src/symhubd/profile.pb-c.[ch], made at build time) is
# not ours to style.
mapfile -t FILES < <(find src cache tests -name '*.[ch]' ! -name '*.pb-c.[ch]' \
    -type f | sort)
[ ${#FILES[@]} -gt 50 ] || { fail "the sources are found" \
    "only ${#FILES[@]} .c/.h files under $top_srcdir"; finish; }

declare -A used

# report RULE DESCRIPTION: the "file:line:text" hits on stdin, less
# those the allow-list lets through.  Fed by < <(...), so that it runs in
# this shell and "used" keeps what it marks.
report() {
	local rule=$1 desc=$2 line f bad=()

	while IFS= read -r line; do
		f=${line%%:*}
		if printf '%s\n' "${ALLOW[@]}" | grep -qxF "$f:$rule"; then
			used[$f:$rule]=1
			continue
		fi
		bad+=("$line")
	done
	if [ ${#bad[@]} -eq 0 ]; then
		pass "$desc"
	else
		fail "$desc" "${bad[@]}"
	fi
}

section 'banned functions'
for fn in sprintf vsprintf strcpy strcat strtok atoi atol atoll gets; do
	# A call: the name after no letter, digit or _, before a (; lines
	# that are comments are left alone.
	report "$fn" "no $fn()" < <(grep -nE \
	    "(^|[^A-Za-z0-9_])$fn[[:space:]]*\(" "${FILES[@]}" |
	    grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/\*|\*( |/|$))')
done

section 'banners'
# A comment that opens with dashes is a banner; it must read exactly
# "/* ---- words ---- */".
report banner 'banners read /* ---- what follows ---- */' < <(grep -nE \
    '^[[:space:]]*/\*[[:space:]]*-{3,}' "${FILES[@]}" | grep -vE \
    '^[^:]+:[0-9]+:/\* ---- [^-[:space:]]([^-]|-[^-])*[^-[:space:]] ---- \*/$')
report banner 'no banner of =, *, # or ~' < <(grep -nE \
    '^[[:space:]]*/\*[[:space:]]*(={3,}|\*{3,}|#{3,}|~{3,})' "${FILES[@]}")

section 'typedefs'
report typedef 'no typedef of a struct, union or enum' < <(grep -nE \
    '^[[:space:]]*typedef[[:space:]]+(struct|union|enum)([^A-Za-z0-9_]|$)' \
    "${FILES[@]}")

section 'blanks'
report blank 'no blank at the end of a line' < <(grep -nE '[[:space:]]+$' \
    "${FILES[@]}")

section 'the allow-list'
stale=()
for a in "${ALLOW[@]}"; do
	[ -n "${used[$a]}" ] || stale+=("$a")
done
if [ ${#stale[@]} -eq 0 ]; then
	pass "every allow-list entry still lets a line through"
else
	fail "every allow-list entry still lets a line through" \
	    "remove: ${stale[*]}"
fi

finish
