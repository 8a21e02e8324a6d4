#!/bin/bash
# Integration test of symhub's GSYM writer and reader, with LLVM's
# llvm-gsymutil (14, 16 and 19) as the oracle.  Inputs: fixtures built now
# from tests/fixtures/inl.c and inl.cc (-O2 and -O0, DWARF 4 and 5, a
# relative comp_dir, compressed debug sections, separate .debug files) and
# libc's debug file (libc6-dbg).  `symhub gsym convert` and
# `llvm-gsymutil-19 --convert` both convert each, and then:
#   - llvm-gsymutil-19, -16 and -14 look up the same addresses (every
#     function's start, last byte and end, 2,000 random text addresses) in
#     our GSYM and in LLVM's: every result the same.  libc: 10,000 random
#     .text addresses, 99.9% the same, where a result that names the
#     function by another symbol of the same address and size counts as
#     the same: LLVM 19 picks one of those at random (two of its own
#     conversions of libc differ on ~0.5% of the addresses);
#   - llvm-gsymutil-14/-16/-19 dump our files whole;
#   - `symhub gsym lookup` prints byte for byte what llvm-gsymutil-19
#     prints, on LLVM's files and on ours;
#   - converting twice gives the same bytes, on 1 to 4 threads; a .debug
#     file and its binary, -gz or not, give the same GSYM; libc's is no
#     larger than llvm-gsymutil-14's;
#   - tests/test_gsym FILE survives 1,000 corruptions of GSYM files;
#   - the converter survives corrupted DWARF (the cc-O2 binary, libc's
#     inflated debug file): each variant converts or fails with a message;
#     every DW_CHILDREN flag of cc-O2's .debug_abbrev flipped in turn
#     (issue 11): each variant ends, converted or refused in one line;
#   - bad inputs (not ELF, truncated, no symbols, a broken or lying
#     compressed section; not GSYM, GSYM version 2) fail with a message
#     naming the file and leave no output behind.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_gsym.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc g++ objcopy strip readelf cmp awk sed od dd paste timeout python3 \
    llvm-gsymutil-14 llvm-gsymutil-16 llvm-gsymutil-19
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
GSYMTEST=$top_builddir/tests/test_gsym
[ -x "$GSYMTEST" ] || skip "$GSYMTEST not built (make check builds it)"

libc=/lib/x86_64-linux-gnu/libc.so.6
[ -f "$libc" ] || libc=$(gcc -print-file-name=libc.so.6)
libc_id=$(buildid "$libc")
LIBC_DEBUG=/usr/lib/debug/.build-id/${libc_id:0:2}/${libc_id:2}.debug
if [ -z "$libc_id" ] || [ ! -f "$LIBC_DEBUG" ]; then
	skip "no debug file for $libc (install libc6-dbg)"
fi

LLVM19=llvm-gsymutil-19
t0=$(date +%s)

# Differences allowed between llvm-gsymutil's lookups in our GSYM and in
# LLVM 19's, for the fixtures (libc has its own threshold).  One entry per
# line: VARIANT-GLOB <tab> ERE on LLVM's result <tab> ERE on ours <tab>
# the reason, naming the doc/gsym.md section.  A result is one line here: the
# address line and its outer frames joined by " | ".  Keep it empty unless
# a difference is a documented improvement.  An entry looks like
#   $'cc-O2*\t@ /x/a\\.h:12\t@ /x/a\\.h:13\tdoc/gsym.md, Lookup: ...'
ALLOW=(
)

# ---- helpers ----------------------------------------------------------

now_us() {
	echo "${EPOCHREALTIME/./}"
}

# secs_since T0: seconds since now_us printed T0, two decimals.
secs_since() {
	awk -v a="$1" -v b="$(now_us)" 'BEGIN { printf "%.2f", (b - a) / 1e6 }'
}

# hex2dec HEX (with or without 0x)
hex2dec() {
	echo $((16#${1#0x}))
}

# rand_addrs N LO HI: N pseudo-random addresses in [LO, HI) (decimal
# bounds), as 0x%x, one a line; the same for the same arguments.
rand_addrs() {
	# shellcheck disable=SC2046 # one number a word
	printf '0x%x\n' $(awk -v n="$1" -v lo="$2" -v hi="$3" 'BEGIN {
	    srand(1)
	    for (i = 0; i < n; i++)
	        printf "%.0f\n", lo + int(rand() * (hi - lo)) }')
}

# exec_range FILE [SECTION]: "LO HI" (decimal): from the lowest start to
# the highest end of the executable sections (or of SECTION alone), from
# the section headers, so it works on a .debug file's NOBITS copies too.
exec_range() {
	local lo='' hi='' name addr size flags a e
	while read -r name addr size flags; do
		if [ -n "$2" ]; then
			[ "$name" = "$2" ] || continue
		else
			[[ $flags == *X* ]] || continue
		fi
		a=$(hex2dec "$addr")
		e=$((a + $(hex2dec "$size")))
		[ $((e > a)) = 1 ] || continue
		if [ -z "$lo" ] || [ "$a" -lt "$lo" ]; then lo=$a; fi
		if [ -z "$hi" ] || [ "$e" -gt "$hi" ]; then hi=$e; fi
	done < <(readelf -SW "$1" 2>/dev/null | sed -n 's/^ *\[ *[0-9]*\] //p' |
	    awk '{ print $1, $3, $5, $7 }')
	[ -n "$lo" ] && echo "$lo $hi"
}

# func_addrs FILE: the start, last byte and end of every defined FUNC
# symbol (.symtab and .dynsym), as 0x%x, one a line.
func_addrs() {
	local v s a
	while read -r v s; do
		a=$(hex2dec "$v")
		[ "$a" != 0 ] || continue
		case $s in 0x*) s=$(hex2dec "$s") ;; esac
		printf '0x%x\n' "$a"
		[ "$s" -gt 0 ] && printf '0x%x\n0x%x\n' $((a + s - 1)) $((a + s))
	done < <(readelf -sW "$1" 2>/dev/null |
	    awk '$4 == "FUNC" && $7 != "UND" { print $2, $3 }')
}

# table_addrs DUMP: the addresses of a GSYM's address table, from
# llvm-gsymutil's dump of it.
table_addrs() {
	sed -n 's/^\[ *[0-9]*\] 0x[0-9a-f]* (0x0*\([0-9a-f][0-9a-f]*\))$/0x\1/p' "$1"
}

# llvm_lookup TOOL GSYM ADDRS OUT: what TOOL prints for every address in
# the file ADDRS, in one invocation; stderr to OUT.err.
llvm_lookup() {
	local a
	mapfile -t a <"$3"
	"$1" "$2" "${a[@]/#/--address=}" >"$4" 2>"$4.err"
}

# symhub_lookup GSYM ADDRS OUT [stdin]: the same from `symhub gsym
# lookup`, the addresses as arguments or (with "stdin") on standard input.
symhub_lookup() {
	local a
	if [ "$4" = stdin ]; then
		"$SYMHUB" gsym lookup "$1" <"$2" >"$3" 2>"$3.err"
	else
		mapfile -t a <"$2"
		"$SYMHUB" gsym lookup "$1" "${a[@]}" >"$3" 2>"$3.err"
	fi
}

# to_blocks FILE: one line per result: the outer frames (continuation
# lines, indented by 20 spaces) joined to their address line by " | ";
# the "Looking up addresses in" line dropped.
to_blocks() {
	awk 'NR == 1 && /^Looking up addresses in / { next }
	    /^0x[0-9a-f]+: / { if (n++) print b; b = $0; next }
	    { sub(/^ +/, ""); b = b " | " $0 }
	    END { if (n) print b }' "$1"
}

# allowed VARIANT LLVM-RESULT OUR-RESULT: is the difference in ALLOW?
allowed() {
	local e glob re_l re_o
	for e in "${ALLOW[@]}"; do
		IFS=$'\t' read -r glob re_l re_o _ <<<"$e"
		# shellcheck disable=SC2053 # a glob on purpose
		[[ $1 == $glob && $2 =~ $re_l && $3 =~ $re_o ]] && return 0
	done
	return 1
}

# same_output DESC EXPECTED GOT [RC]: GOT's bytes are EXPECTED's and the
# command that wrote GOT exited 0.
same_output() {
	if [ "${4:-0}" != 0 ]; then
		fail "$1" "exit status $4" "$(head -5 "$3.err" 2>/dev/null)"
	elif cmp -s "$2" "$3"; then
		pass "$1 ($(to_blocks "$2" | wc -l) results)"
	else
		fail "$1" "$(diff "$2" "$3" | head -20)" \
		    "$(head -5 "$3.err" 2>/dev/null)"
	fi
}

# cmp_results DESC VARIANT LLVM-OUT OUR-OUT N: the results in two lookup
# outputs (LLVM's GSYM, ours), address by address; a difference fails
# unless ALLOW has it.
cmp_results() {
	local d=$1 v=$2 nl no bad=() nallow=0 l o
	to_blocks "$3" >"$3.blocks"
	to_blocks "$4" >"$4.blocks"
	nl=$(wc -l <"$3.blocks")
	no=$(wc -l <"$4.blocks")
	if [ "$nl" != "$5" ] || [ "$no" != "$5" ]; then
		fail "$d" "$5 addresses: $nl results from LLVM's GSYM, $no from ours" \
		    "$(head -3 "$4.err" 2>/dev/null)"
		return
	fi
	while IFS=$'\t' read -r l o; do
		if allowed "$v" "$l" "$o"; then
			nallow=$((nallow + 1))
		else
			bad+=("llvm: $l" "ours: $o")
		fi
	done < <(paste "$3.blocks" "$4.blocks" | awk -F'\t' '$1 != $2')
	[ ${#bad[@]} -eq 0 ]
	verdict $? "$d ($5 addresses, $nallow allowed differences)" \
	    "$((${#bad[@]} / 2)) of $5 results differ (first 10):" \
	    "${bad[@]:0:20}"
}

# alias_names FILE: "START<tab>NAME" (START decimal) for every .symtab
# function that shares its address and size with another of another name:
# LLVM 19 keeps one of them at random (an unstable sort, doc/gsym.md), so two
# of its own conversions of libc name ~1% of 10,000 addresses differently.
alias_names() {
	readelf -sW "$1" 2>/dev/null | awk '
	    function hex(s,   i, v) {
	        v = 0
	        for (i = 1; i <= length(s); i++)
	            v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	        return v
	    }
	    /^Symbol table / { t = index($0, "\047.symtab\047") > 0; next }
	    t && $4 == "FUNC" && $7 != "UND" && !seen[$2, $3, $8]++ {
	        k = $2 " " $3
	        n[k]++
	        names[k] = names[k] "\t" $8
	    }
	    END {
	        for (k in n) {
	            if (n[k] < 2)
	                continue
	            split(k, f, " ")
	            c = split(names[k], nm, "\t")
	            for (i = 2; i <= c; i++)
	                printf "%.0f\t%s\n", hex(f[1]), nm[i]
	        }
	    }'
}

# agreement LLVM-OUT OUR-OUT N ALIASES: compares two lookup outputs result
# by result; sets same (identical results), alias (results that differ
# only in naming the function by another of its aliases, from the
# alias_names file ALIASES), pct ((same + alias) / N, in %), pct_same,
# and diffs (the first 20 other differences).  Returns 1 when either has
# not N results.
agreement() {
	local nl no r
	to_blocks "$1" >"$1.blocks"
	to_blocks "$2" >"$2.blocks"
	nl=$(wc -l <"$1.blocks")
	no=$(wc -l <"$2.blocks")
	same=0 alias=0 pct=0 pct_same=0
	diffs="$3 addresses: $nl results from one, $no from the other"
	[ "$nl" = "$3" ] && [ "$no" = "$3" ] || return 1
	r=$(paste "$1.blocks" "$2.blocks" | awk -F'\t' -v aliases="$4" \
	    -v diffs="$2.diffs" '
	    function hex(s,   i, v) {
	        v = 0
	        s = tolower(s)
	        sub(/^0x/, "", s)
	        for (i = 1; i <= length(s); i++)
	            v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	        return v
	    }
	    # The function (last frame) of a result: its name in P_name, its
	    # start in P_start, the result without the name in P_rest.
	    function parse(line,   n, fr, last, off) {
	        n = split(line, fr, / \| /)
	        last = n > 1 ? fr[n] : substr(line, index(line, ": ") + 2)
	        off = 0
	        if (match(last, / \+ [0-9]+( @ |$)/)) {
	            P_name = substr(last, 1, RSTART - 1)
	            off = substr(last, RSTART + 3) + 0
	        } else if (match(last, / @ /))
	            P_name = substr(last, 1, RSTART - 1)
	        else
	            P_name = last
	        P_start = sprintf("%.0f",
	            hex(substr(line, 1, index(line, ":") - 1)) - off)
	        P_rest = substr(line, 1, length(line) - length(last)) "|" \
	            substr(last, length(P_name) + 1)
	    }
	    BEGIN {
	        while ((getline l < aliases) > 0) {
	            split(l, f, "\t")
	            al[f[1] "\t" f[2]] = 1
	        }
	        printf "" >diffs
	    }
	    $1 == $2 { same++; next }
	    {
	        parse($1)
	        s = P_start; nm = P_name; rest = P_rest
	        parse($2)
	        if (rest == P_rest && s == P_start && ((s "\t" nm) in al) &&
	            ((s "\t" P_name) in al)) {
	            alias++
	            next
	        }
	        if (++k <= 20) {
	            print "llvm: " $1 >diffs
	            print "ours: " $2 >diffs
	        }
	    }
	    END { print same + 0, alias + 0 }')
	read -r same alias <<<"$r"
	pct=$(awk -v s=$((same + alias)) -v n="$3" \
	    'BEGIN { printf "%.2f", 100 * s / n }')
	pct_same=$(awk -v s="$same" -v n="$3" 'BEGIN { printf "%.2f", 100 * s / n }')
	diffs=$(cat "$2.diffs")
}

# dump_check DESC TOOL GSYM OUT: TOOL dumps GSYM, exits 0, and prints
# one well-formed FunctionInfo per address (a record it cannot decode
# prints an error in its place, with exit status 0).
dump_check() {
	local n want
	if ! "$2" "$3" >"$4" 2>"$4.err"; then
		fail "$1" "exit status $?" "$(head -5 "$4.err")"
		return
	fi
	want=$(sed -n 's/^ *NumAddresses = \(0x[0-9a-f]*\)$/\1/p' "$4")
	n=$(grep -Ec \
	    '^FunctionInfo @ 0x[0-9a-f]+: \[0x[0-9a-f]+ - 0x[0-9a-f]+\) "' "$4")
	[ -n "$want" ] && [ "$n" = "$((want))" ]
	verdict $? "$1 ($n functions)" \
	    "NumAddresses ${want:-missing}, $n FunctionInfo lines" \
	    "$(grep '^FunctionInfo' "$4" | grep -v '"$' | head -5)"
}

# corrupt_check DESC GSYM: tests/test_gsym GSYM (1,000 random corruptions
# through the reader) exits 0.
corrupt_check() {
	local rc
	timeout 600 "$GSYMTEST" "$2" >"$2.corrupt" 2>&1
	rc=$?
	[ "$rc" = 0 ]
	verdict $? "$1" \
	    "exit status $rc" "$(grep -v '^ok' "$2.corrupt" | tail -10)"
}

section 'fixtures'
# Built in $tmp/src from relative names, so DW_AT_comp_dir is $tmp/src.
S=$tmp/src
B=$tmp/bin
mkdir -p "$S" "$B" "$tmp/v" "$tmp/libc" "$tmp/err/out" || exit 99
cp "$FIXTURES/inl.c" "$FIXTURES/inl.cc" "$S/" || exit 99
build() { # NAME COMPILER ARGS...
	local n=$1 cc=$2
	shift 2
	(cd "$S" && "$cc" -o "$B/$n" "$@") >"$B/$n.log" 2>&1 ||
	    { echo "# cannot build $n:"; sed 's/^/#   /' "$B/$n.log"; exit 99; }
}
build c-O2 gcc -g -O2 -D_FORTIFY_SOURCE=2 inl.c
build c-O0 gcc -g -O0 inl.c
build c-O2-dwarf4 gcc -g -gdwarf-4 -O2 -D_FORTIFY_SOURCE=2 inl.c
# A relative DW_AT_comp_dir ("./src"), as in Debian's packages: LLVM 14
# doubles it in DWARF 5 paths ("./src/./src/inl.c"), LLVM 19 does not.
build c-O2-reldir gcc -g -O2 -D_FORTIFY_SOURCE=2 -fdebug-prefix-map="$tmp"=. \
    inl.c
build cc-O2 g++ -g -O2 inl.cc
build cc-O0 g++ -g -O0 inl.cc
build cc-O2-dwarf4 g++ -g -gdwarf-4 -O2 inl.cc
build cc-O2-gz g++ -g -O2 -gz inl.cc
# Link-time optimisation: the inlined calls of one unit name their
# origins in another (DW_FORM_ref_addr), whose DIEs' parents qualify the
# names.
build cc-O2-lto g++ -g -O2 -flto inl.cc
for n in c-O2 cc-O2-gz; do
	objcopy --only-keep-debug "$B/$n" "$B/$n.debug" || exit 99
done
VARIANTS=(c-O2 c-O0 c-O2-dwarf4 c-O2-reldir c-O2.debug
    cc-O2 cc-O0 cc-O2-dwarf4 cc-O2-gz cc-O2-gz.debug cc-O2-lto)

# The fixtures must have what this test claims to cover.
bad=()
for v in "${VARIANTS[@]}"; do
	[ -n "$(buildid "$B/$v")" ] || bad+=("$v: no build-id")
done
[ "$(buildid "$B/c-O2")" = "$(buildid "$B/c-O2.debug")" ] ||
    bad+=("c-O2.debug: another build-id")
readelf -sW "$B/c-O2" 2>/dev/null | awk '$4 == "FUNC"' | grep -q '\.cold$' ||
    bad+=("c-O2: no .cold part")
readelf -sW "$B/cc-O2" 2>/dev/null | awk '$4 == "FUNC"' | grep -q '\.cold$' ||
    bad+=("cc-O2: no .cold part")
for v in c-O2 cc-O2; do
	readelf --debug-dump=info "$B/$v" 2>/dev/null |
	    grep -q DW_TAG_inlined_subroutine || bad+=("$v: nothing inlined")
done
readelf --debug-dump=info "$B/c-O2-reldir" 2>/dev/null |
    grep -q 'DW_AT_comp_dir.*: \./src$' ||
    bad+=("c-O2-reldir: comp_dir not ./src")
for v in c-O2-dwarf4 cc-O2-dwarf4; do
	readelf --debug-dump=info "$B/$v" 2>/dev/null |
	    awk '/^ *Version:/ { print $2; exit }' | grep -qx 4 ||
	    bad+=("$v: not DWARF 4")
done
readelf --debug-dump=abbrev "$B/cc-O2-lto" 2>/dev/null |
    grep -q DW_FORM_ref_addr || bad+=("cc-O2-lto: no DW_FORM_ref_addr")
for v in cc-O2-gz cc-O2-gz.debug; do
	readelf -SW "$B/$v" 2>/dev/null | grep -E ' \.debug_info ' |
	    awk '{ print $(NF - 3) }' | grep -q C ||
	    bad+=("$v: .debug_info not compressed")
done
for v in c-O2.debug cc-O2-gz.debug; do
	readelf -SW "$B/$v" 2>/dev/null | grep -q ' \.text *NOBITS ' ||
	    bad+=("$v: .text is not NOBITS")
done
if [ ${#bad[@]} -eq 0 ]; then
	pass "fixtures: ${#VARIANTS[@]} variants with build-ids, inlining," \
	    ".cold parts, DWARF 4, a relative comp_dir, compressed and" \
	    "separate debug files, references across units (LTO)"
else
	fail "fixtures: what the test covers" "${bad[@]}"
fi

section "each fixture: ours against LLVM's"

# check_variant V: every check of one fixture variant, in $tmp/v/V.
check_variant() {
	local v=$1 f=$B/$1 d=$tmp/v/$1 rc t tool n lo hi ver
	mkdir -p "$d"
	local ours=$d/ours.gsym theirs=$d/llvm.gsym

	if ! $LLVM19 --convert "$f" --out-file "$theirs" >"$d/llvm.log" 2>&1; then
		fail "$v: llvm-gsymutil-19 converts it" "$(tail -5 "$d/llvm.log")"
		return
	fi
	$LLVM19 "$theirs" >"$d/llvm.dump" 2>&1

	t=$(now_us)
	"$SYMHUB" gsym convert "$f" -o "$ours" >"$d/ours.log" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && [ -s "$ours" ]; then
		pass "$v: symhub gsym convert ($(file_size "$ours") bytes," \
		    "llvm-gsymutil-19: $(file_size "$theirs"); $(secs_since "$t") s)"
	else
		fail "$v: symhub gsym convert" "exit status $rc" \
		    "$(tail -5 "$d/ours.log")"
		rm -f "$ours"
	fi

	# The addresses: every function's start, last byte and end (symbols,
	# both address tables), the edges of the text, 2,000 random ones.
	read -r lo hi < <(exec_range "$f")
	{
		func_addrs "$f"
		table_addrs "$d/llvm.dump"
		if [ -f "$ours" ]; then
			$LLVM19 "$ours" >"$d/ours.dump" 2>&1
			table_addrs "$d/ours.dump"
		fi
		printf '0x%x\n' 0 $((lo - 1)) $((hi - 1)) "$hi" $((hi + 1))
	} | sort -u >"$d/addrs"
	rand_addrs 2000 "$lo" "$hi" >>"$d/addrs"
	echo 0xffffffffffffffff >>"$d/addrs"
	n=$(wc -l <"$d/addrs")

	# Our reader on LLVM's file: byte for byte what LLVM prints.
	llvm_lookup $LLVM19 "$theirs" "$d/addrs" "$d/l19.llvm"
	symhub_lookup "$theirs" "$d/addrs" "$d/sh.llvm"
	same_output "$v: symhub gsym lookup on LLVM's GSYM = llvm-gsymutil-19" \
	    "$d/l19.llvm" "$d/sh.llvm" $?

	[ -f "$ours" ] || return

	"$SYMHUB" gsym convert -j 1 "$f" -o "$d/ours2.gsym" >/dev/null 2>&1
	cmp -s "$ours" "$d/ours2.gsym"
	verdict $? "$v: a second conversion, on one thread, gives the same bytes" \
	    "$(cmp "$ours" "$d/ours2.gsym" 2>&1)"

	for ver in 14 16 19; do
		tool=llvm-gsymutil-$ver
		dump_check "$v: $tool dumps our GSYM" "$tool" "$ours" \
		    "$d/ours.dump$ver"
		if [ "$ver" != 19 ]; then
			llvm_lookup "$tool" "$theirs" "$d/addrs" "$d/l$ver.llvm"
		fi
		llvm_lookup "$tool" "$ours" "$d/addrs" "$d/l$ver.ours"
		cmp_results "$v: $tool lookups: our GSYM = LLVM 19's" "$v" \
		    "$d/l$ver.llvm" "$d/l$ver.ours" "$n"
	done

	symhub_lookup "$ours" "$d/addrs" "$d/sh.ours" stdin
	same_output "$v: symhub gsym lookup (stdin) on our GSYM = llvm-gsymutil-19" \
	    "$d/l19.ours" "$d/sh.ours" $?

	"$SYMHUB" gsym dump "$ours" >"$d/sh.dump" 2>&1 && [ -s "$d/sh.dump" ]
	verdict $? "$v: symhub gsym dump" "$(tail -5 "$d/sh.dump")"
}

for v in "${VARIANTS[@]}"; do
	check_variant "$v"
done

# The addresses as arguments and on stdin: the same answer.
d=$tmp/v/c-O2
if [ -f "$d/ours.gsym" ]; then
	symhub_lookup "$d/ours.gsym" "$d/addrs" "$d/sh.ours.args"
	same_output "c-O2: symhub gsym lookup, addresses as arguments = on stdin" \
	    "$d/sh.ours" "$d/sh.ours.args" $?
fi

# A .debug file and its binary, -gz and not: the same GSYM (but for the
# UUID when the build-ids differ), when LLVM's are the same.
# same_gsym A B SKIP: the same bytes past SKIP, and in the first 28 (the
# header before the UUID).
same_gsym() {
	cmp -s -i "$3" "$1" "$2" && cmp -s -n 28 "$1" "$2"
}
for p in "c-O2.debug c-O2 0" "cc-O2-gz.debug cc-O2-gz 0" "cc-O2-gz cc-O2 48"
do
	read -r a b skipn <<<"$p"
	desc="our GSYMs of $a and $b are the same"
	[ "$skipn" = 0 ] || desc="$desc but for the UUID"
	if ! [ -f "$tmp/v/$a/ours.gsym" ] || ! [ -f "$tmp/v/$b/ours.gsym" ]; then
		fail "$desc" "one is missing"
	elif ! same_gsym "$tmp/v/$a/llvm.gsym" "$tmp/v/$b/llvm.gsym" "$skipn"
	then
		skip_check "$desc: LLVM's differ too"
	else
		check "$desc" same_gsym "$tmp/v/$a/ours.gsym" \
		    "$tmp/v/$b/ours.gsym" "$skipn"
	fi
done

section 'libc'
# LLVM 19 names aliased functions at random (see alias_names): results are
# compared as equal when they differ only there, and a second LLVM 19
# conversion shows how often that happens.
L=$tmp/libc
echo "# libc: $LIBC_DEBUG ($(file_size "$LIBC_DEBUG") bytes)"
t=$(now_us)
$LLVM19 --convert "$LIBC_DEBUG" --out-file "$L/llvm.gsym" >"$L/llvm.log" 2>&1 ||
    { echo "# llvm-gsymutil-19 cannot convert libc"; exit 99; }
echo "# libc: llvm-gsymutil-19 --convert: $(secs_since "$t") s"
$LLVM19 --convert "$LIBC_DEBUG" --out-file "$L/llvm-again.gsym" \
    >/dev/null 2>&1 || exit 99
llvm-gsymutil-14 --convert "$LIBC_DEBUG" --out-file "$L/llvm14.gsym" \
    >"$L/llvm14.log" 2>&1 ||
    { echo "# llvm-gsymutil-14 cannot convert libc"; exit 99; }
read -r lo hi < <(exec_range "$LIBC_DEBUG" .text)
[ -n "$hi" ] || { echo "# no .text in $LIBC_DEBUG"; exit 99; }
rand_addrs 10000 "$lo" "$hi" >"$L/addrs"
alias_names "$LIBC_DEBUG" >"$L/aliases"

llvm_lookup $LLVM19 "$L/llvm.gsym" "$L/addrs" "$L/l19.llvm"
llvm_lookup $LLVM19 "$L/llvm-again.gsym" "$L/addrs" "$L/l19.again"
if agreement "$L/l19.llvm" "$L/l19.again" 10000 "$L/aliases"; then
	echo "# libc: two llvm-gsymutil-19 conversions: $pct_same% of 10,000" \
	    "results identical, $pct% but for the choice among aliases"
	[ -z "$diffs" ] || printf '%s\n' "$diffs" | sed 's/^/#   /'
fi

t=$(now_us)
symhub_lookup "$L/llvm.gsym" "$L/addrs" "$L/sh.llvm" stdin
rc=$?
echo "# libc: symhub gsym lookup of 10,000 addresses: $(secs_since "$t") s"
same_output "libc: symhub gsym lookup on LLVM's GSYM = llvm-gsymutil-19" \
    "$L/l19.llvm" "$L/sh.llvm" "$rc"

t=$(now_us)
"$SYMHUB" gsym convert "$LIBC_DEBUG" -o "$L/ours.gsym" >"$L/ours.log" 2>&1
rc=$?
if [ "$rc" = 0 ] && [ -s "$L/ours.gsym" ]; then
	pass "libc: symhub gsym convert ($(secs_since "$t") s)"
else
	fail "libc: symhub gsym convert" "exit status $rc" \
	    "$(tail -5 "$L/ours.log")"
	rm -f "$L/ours.gsym"
fi

# libc_agree TOOL: TOOL's lookups in our GSYM and in LLVM 19's agree on
# 99.9% of the addresses.
libc_agree() {
	local d="libc: $1 lookups, our GSYM = LLVM 19's"
	[ -f "$L/l${1#llvm-gsymutil-}.llvm" ] ||
	    llvm_lookup "$1" "$L/llvm.gsym" "$L/addrs" "$L/l${1#llvm-gsymutil-}.llvm"
	llvm_lookup "$1" "$L/ours.gsym" "$L/addrs" "$L/l${1#llvm-gsymutil-}.ours"
	if agreement "$L/l${1#llvm-gsymutil-}.llvm" \
	    "$L/l${1#llvm-gsymutil-}.ours" 10000 "$L/aliases" &&
	    [ $(((same + alias) * 1000)) -ge $((999 * 10000)) ]; then
		pass "$d: $pct% ($pct_same% identical, the rest another alias)"
		[ -z "$diffs" ] || printf '%s\n' "$diffs" | sed 's/^/#   /'
	else
		fail "$d: $pct% ($pct_same% identical), want >= 99.9%" \
		    "first differences:" "$diffs"
	fi
}

if [ -f "$L/ours.gsym" ]; then
	for ver in 19 14 16; do
		libc_agree "llvm-gsymutil-$ver"
	done

	symhub_lookup "$L/ours.gsym" "$L/addrs" "$L/sh.ours" stdin
	same_output "libc: symhub gsym lookup on our GSYM = llvm-gsymutil-19" \
	    "$L/l19.ours" "$L/sh.ours" $?

	for ver in 14 16 19; do
		dump_check "libc: llvm-gsymutil-$ver dumps our GSYM" \
		    "llvm-gsymutil-$ver" "$L/ours.gsym" "$L/ours.dump$ver"
	done

	s_ours=$(file_size "$L/ours.gsym")
	s_14=$(file_size "$L/llvm14.gsym")
	s_19=$(file_size "$L/llvm.gsym")
	if [ "$s_ours" -le "$s_14" ]; then
		pass "libc: our GSYM $s_ours bytes <= llvm-gsymutil-14's $s_14" \
		    "(llvm-gsymutil-19's: $s_19)"
	else
		fail "libc: our GSYM $s_ours bytes <= llvm-gsymutil-14's $s_14" \
		    "(llvm-gsymutil-19's: $s_19)"
	fi

	# The units are shared out among the threads; the bytes may not
	# depend on how.
	for j in 1 2 3 4; do
		"$SYMHUB" gsym convert -j "$j" "$LIBC_DEBUG" \
		    -o "$L/ours.j$j.gsym" >/dev/null 2>&1
		cmp -s "$L/ours.gsym" "$L/ours.j$j.gsym"
		verdict $? "libc: a conversion on $j thread(s) gives the same bytes" \
		    "$(cmp "$L/ours.gsym" "$L/ours.j$j.gsym" 2>&1)"
	done
fi

section 'corruptions through the reader'
for g in "$tmp/v/cc-O2/ours.gsym" "$L/ours.gsym"; do
	name=$(basename "$(dirname "$g")")
	if [ -f "$g" ]; then
		corrupt_check "test_gsym: 1,000 corruptions of our $name GSYM" "$g"
	else
		fail "test_gsym: 1,000 corruptions of our $name GSYM" \
		    "no GSYM of ours"
	fi
done
# LLVM's files are inputs our reader meets too.
corrupt_check "test_gsym: 1,000 corruptions of LLVM 19's cc-O2 GSYM" \
    "$tmp/v/cc-O2/llvm.gsym"

section 'corrupt DWARF into the converter'
# Random bytes of the .debug_* sections overwritten (a fixed seed), each
# variant converted on two threads: it may convert or fail, but with exit
# 1 and a message, never a crash or a sanitizer report.  libc's units
# keep both threads busy; its debug file is inflated first, or the flips
# would only ever break the deflate streams.
# mutate SRC N SEED OUTDIR: N variants of SRC, OUTDIR/v.I.debug
mutate() {
	python3 - "$@" <<'PY'
import random, struct, sys
src, n, seed, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
data = open(src, 'rb').read()
shoff, = struct.unpack_from('<Q', data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)
secs = [struct.unpack_from('<IIQQQQIIQQ', data, shoff + i * shentsize)
        for i in range(shnum)]
stroff = secs[shstrndx][4]
def name(s):
    return data[stroff + s[0]:data.index(b'\0', stroff + s[0])]
rngs = [(s[4], s[5]) for s in secs
        if name(s).startswith(b'.debug_') and s[1] != 8 and s[5] > 0]
rnd = random.Random(seed)
for i in range(n):
    d = bytearray(data)
    off, size = rnd.choice(rngs)
    for _ in range(rnd.randint(1, 8)):
        d[off + rnd.randrange(size)] = rnd.randrange(256)
    open('%s/v.%d.debug' % (out, i), 'wb').write(d)
PY
}
# fuzz_convert DESC SRC N SEED
fuzz_convert() {
	local d=$1 src=$2 n=$3 seed=$4 i rc probs=() ok=0 failed=0
	rm -rf "$tmp/fz"
	mkdir -p "$tmp/fz"
	if ! mutate "$src" "$n" "$seed" "$tmp/fz"; then
		fail "$d" "cannot make the variants"
		return
	fi
	for ((i = 0; i < n; i++)); do
		"$SYMHUB" gsym convert -j 2 "$tmp/fz/v.$i.debug" \
		    -o "$tmp/fz/out.gsym" >/dev/null 2>"$tmp/fz/err"
		rc=$?
		if [ "$rc" = 0 ]; then
			ok=$((ok + 1))
		elif [ "$rc" = 1 ] && [ -s "$tmp/fz/err" ]; then
			failed=$((failed + 1))
		else
			probs+=("variant $i (seed $seed): exit $rc")
		fi
		grep -Eq 'Sanitizer|runtime error' "$tmp/fz/err" &&
		    probs+=("variant $i (seed $seed): $(head -3 "$tmp/fz/err")")
	done
	[ ${#probs[@]} -eq 0 ]
	verdict $? "$d: $ok converted, $failed refused with a message" \
	    "${probs[@]:0:5}"
}
# No line table at all: functions without rows, on two threads as on one.
objcopy --remove-section=.debug_line --remove-section=.debug_line_str \
    "$B/cc-O2" "$tmp/noline" 2>/dev/null &&
    "$SYMHUB" gsym convert -j 2 "$tmp/noline" -o "$tmp/noline.2.gsym" \
    >/dev/null 2>"$tmp/noline.err" &&
    "$SYMHUB" gsym convert -j 1 "$tmp/noline" -o "$tmp/noline.1.gsym" \
    >/dev/null 2>>"$tmp/noline.err" &&
    cmp -s "$tmp/noline.1.gsym" "$tmp/noline.2.gsym"
verdict $? "convert: DWARF without a line table, on 1 and 2 threads: same bytes" \
    "$(head -3 "$tmp/noline.err")"
fuzz_convert "convert: 100 corruptions of the cc-O2 binary's DWARF" \
    "$B/cc-O2" 100 7
if [ -f "$LIBC_DEBUG" ] && objcopy --decompress-debug-sections \
    "$LIBC_DEBUG" "$tmp/libc.plain.debug" 2>/dev/null; then
	fuzz_convert "convert: 20 corruptions of libc's DWARF, 2 threads" \
	    "$tmp/libc.plain.debug" 20 11
else
	fail "convert: corruptions of libc's DWARF" "no inflated libc debug file"
fi

section 'children flags flipped (issue 11)'
# One byte of .debug_abbrev, the DW_CHILDREN flag of an abbreviation, made
# the converter's DIE walk revisit the same DIEs without end, its memory
# growing (issue 11: a g++ -O2 debug file).  Here every abbreviation of the
# cc-O2 debug file (DWARF 5) is flipped in turn, and the most used
# DW_CHILDREN_no one of cc-O2-dwarf4's (whose DIEs carry DW_AT_sibling):
# each variant must end, converted or refused with exit 1 and one line;
# the issue's own case (the most used DW_CHILDREN_no abbreviation, on one
# and on two threads) refused as corrupt.  `timeout` only detects a
# conversion that never ends (FLIP_TIMEOUT seconds, generous for ASan on a
# busy machine): the verdict is how it ended, not how fast; the first
# variant that does not end fails the check and the rest are not tried.
FLIP_TIMEOUT=${FLIP_TIMEOUT:-120}
FLIP=$top_srcdir/tests/dwarf_mutate.py
F=$tmp/flip
mkdir -p "$F/each" || exit 99
for n in cc-O2 cc-O2-dwarf4; do
	objcopy --only-keep-debug "$B/$n" "$F/$n.debug" || exit 99
done

# flip_convert FILE THREADS: converts FILE; sets flip_rc (124: did not end)
# and flip_err (its stderr).
flip_convert() {
	timeout -k 5 "$FLIP_TIMEOUT" "$SYMHUB" gsym convert -j "$2" "$1" \
	    -o "$F/out.gsym" >/dev/null 2>"$F/err"
	flip_rc=$?
	flip_err=$(cat "$F/err")
}

# flip_refused DESC FILE THREADS: FILE is refused as corrupt: exit 1, one
# line naming it and saying "corrupt".
flip_refused() {
	local probs=()
	flip_convert "$2" "$3"
	case $flip_rc in
	1) ;;
	124 | 137) probs+=("did not end within ${FLIP_TIMEOUT} s") ;;
	*) probs+=("exit status $flip_rc") ;;
	esac
	[ "$(wc -l <"$F/err")" = 1 ] || probs+=("not one line on stderr")
	grep -qF "$(basename "$2")" "$F/err" ||
	    probs+=("the message does not name the file")
	grep -qi corrupt "$F/err" || probs+=("the message does not say corrupt")
	[ ${#probs[@]} -eq 0 ]
	verdict $? "$1: exit 1, \"$flip_err\"" \
	    "${probs[@]}" "stderr: $(head -3 "$F/err")"
}

pick=$(python3 "$FLIP" pick "$F/cc-O2.debug") &&
    python3 "$FLIP" flip "$F/cc-O2.debug" "$F/issue.debug" "$pick" ||
    { echo "# cannot flip an abbreviation of cc-O2.debug"; exit 99; }
d="convert: issue 11's flipped children flag (abbreviation $pick)"
flip_refused "$d, 1 thread" "$F/issue.debug" 1
flip_refused "$d, 2 threads" "$F/issue.debug" 2
pick4=$(python3 "$FLIP" pick "$F/cc-O2-dwarf4.debug") &&
    python3 "$FLIP" flip "$F/cc-O2-dwarf4.debug" "$F/issue4.debug" \
    "$pick4" || { echo "# cannot flip an abbreviation"; exit 99; }
d="convert: DWARF 4 (DW_AT_sibling), its most used DW_CHILDREN_no"
flip_refused "$d abbreviation ($pick4) flipped" "$F/issue4.debug" 2

nflip=$(python3 "$FLIP" each "$F/cc-O2.debug" "$F/each") ||
    { echo "# cannot flip the abbreviations of cc-O2.debug"; exit 99; }
converted=0 refused=0 probs=()
for ((i = 0; i < nflip; i++)); do
	flip_convert "$F/each/flip.$i.debug" 2
	if [ "$flip_rc" = 0 ]; then
		converted=$((converted + 1))
	elif [ "$flip_rc" = 1 ] && [ "$(wc -l <"$F/err")" = 1 ]; then
		refused=$((refused + 1))
	elif [ "$flip_rc" = 124 ] || [ "$flip_rc" = 137 ]; then
		probs+=("abbreviation $i flipped: did not end within" \
		    "${FLIP_TIMEOUT} s (the other variants not tried)")
		break
	else
		probs+=("abbreviation $i flipped: exit $flip_rc," \
		    "$(head -3 "$F/err")")
	fi
	grep -Eq 'Sanitizer|runtime error' "$F/err" &&
	    probs+=("abbreviation $i flipped: $(head -3 "$F/err")")
done
if [ ${#probs[@]} -eq 0 ] && [ "$nflip" -gt 100 ]; then
	pass "convert: each of the $nflip abbreviations of cc-O2.debug" \
	    "flipped: $converted converted, $refused refused with one line"
else
	fail "convert: each of the $nflip abbreviations of cc-O2.debug flipped" \
	    "${probs[@]:0:5}"
fi

section 'DWARF as libdw finds it'
# GNU's compression (.zdebug_* sections, objcopy's zlib-gnu): the
# converter reads the sections libdw reads, so the same bytes come out as
# from the file uncompressed.
if objcopy --compress-debug-sections=zlib-gnu "$B/cc-O2" "$F/zgnu" \
    2>/dev/null && readelf -SW "$F/zgnu" | grep -q ' \.zdebug_info '; then
	"$SYMHUB" gsym convert "$B/cc-O2" -o "$F/plain.gsym" >/dev/null &&
	    "$SYMHUB" gsym convert "$F/zgnu" -o "$F/zgnu.gsym" >/dev/null
	check "convert: .zdebug_* sections (zlib-gnu): same bytes as unzipped" \
	    cmp -s "$F/plain.gsym" "$F/zgnu.gsym"
else
	fail "convert: .zdebug_* sections" "objcopy made no .zdebug_info"
fi
# Nesting deeper than the converter follows (512): the DIEs below are
# left out, the rest converted (1 thread and 2).
python3 "$FLIP" deep 600 10 "$F/deep.info" "$F/deep.abbrev" &&
    objcopy --update-section .debug_info="$F/deep.info" \
    --update-section .debug_abbrev="$F/deep.abbrev" \
    "$B/c-O2.debug" "$F/deep.debug" || exit 99
for j in 1 2; do
	flip_convert "$F/deep.debug" "$j"
	check "convert: 600 nested blocks, -j $j: converted (exit $flip_rc${flip_err:+, $flip_err})" \
	    test "$flip_rc" = 0
done

section 'bad inputs'
E=$tmp/err
echo "not an ELF file" >"$E/notelf.txt"
head -c $(($(file_size "$B/c-O2") / 2)) "$B/c-O2" >"$E/truncated"
strip -s -o "$E/stripped" "$B/c-O2" || exit 99
# A compressed .debug_info whose deflate stream is damaged midway.
gz=$B/cc-O2-gz.debug
read -r off size < <(readelf -SW "$gz" | awk '
	{ sub(/^ *\[ *[0-9]+\]/, "") }
	$1 == ".debug_info" { print $4, $5 }')
[ -n "$size" ] || { echo "# no .debug_info in $gz"; exit 99; }
cp "$gz" "$E/badzlib.debug" || exit 99
head -c 64 /dev/zero | dd of="$E/badzlib.debug" bs=1 \
    seek=$((16#$off + 24 + 16#$size / 2)) conv=notrunc 2>/dev/null || exit 99
# ... and one whose compression header claims 1 TiB once inflated.
cp "$gz" "$E/hugezlib.debug" || exit 99
printf '\000\000\000\000\000\001\000\000' | dd of="$E/hugezlib.debug" bs=1 \
    seek=$((16#$off + 8)) conv=notrunc 2>/dev/null || exit 99
gsym=$tmp/v/c-O2/llvm.gsym
head -c 40 "$gsym" >"$E/short.gsym"
cp "$gsym" "$E/v2.gsym" || exit 99
printf '\002\000' |
    dd of="$E/v2.gsym" bs=1 seek=4 conv=notrunc 2>/dev/null || exit 99

# fails_clearly DESC ERE COMMAND...: the command exits non-zero (not by a
# signal), prints nothing on stdout, and on stderr a message that names
# the input (the last argument) and matches ERE (when not empty), and no
# sanitizer report; $E/out stays empty.
fails_clearly() {
	local d=$1 re=$2 rc in probs=()
	shift 2
	in=${*: -1}
	rm -rf "$E/out"
	mkdir "$E/out"
	"$@" >"$E/stdout" 2>"$E/stderr"
	rc=$?
	[ "$rc" != 0 ] || probs+=("exit status 0")
	[ "$rc" -lt 128 ] || probs+=("exit status $rc (a signal)")
	[ ! -s "$E/stdout" ] || probs+=("stdout: $(head -3 "$E/stdout")")
	if ! [ -s "$E/stderr" ]; then
		probs+=("no message")
	elif ! grep -qF "$(basename "$in")" "$E/stderr"; then
		probs+=("the message does not name $(basename "$in")")
	fi
	[ -z "$re" ] || grep -Eqi "$re" "$E/stderr" ||
	    probs+=("the message does not match /$re/")
	! grep -Eq 'Sanitizer|runtime error' "$E/stderr" ||
	    probs+=("sanitizer report")
	dir_empty "$E/out" || probs+=("left behind: $(ls -A "$E/out")")
	[ ${#probs[@]} -eq 0 ]
	verdict $? "$d: exit $rc, \"$(head -1 "$E/stderr")\"" \
	    "${probs[@]}" "stderr: $(head -5 "$E/stderr")"
}

# Wrappers that take the input last, for fails_clearly.
# shellcheck disable=SC2317 # called by fails_clearly
convert_to_out() {
	"$SYMHUB" gsym convert "$1" -o "$E/out/x.gsym"
}
fails_clearly "convert: not an ELF file" '' \
    convert_to_out "$E/notelf.txt"
fails_clearly "convert: a truncated ELF file" '' \
    convert_to_out "$E/truncated"
fails_clearly "convert: a binary without symbols or DWARF" '' \
    convert_to_out "$E/stripped"
fails_clearly "convert: a missing file" '' \
    convert_to_out "$E/no-such-file"
fails_clearly "convert: a compressed .debug_info cut short by zeros" \
    'corrupt' convert_to_out "$E/badzlib.debug"
fails_clearly "convert: a compressed .debug_info said to inflate to 1 TiB" \
    'corrupt' convert_to_out "$E/hugezlib.debug"
# shellcheck disable=SC2317 # called by fails_clearly
lookup_1000() {
	"$SYMHUB" gsym lookup "$1" 0x1000
}
fails_clearly "lookup: not a GSYM file" '' lookup_1000 "$E/notelf.txt"
fails_clearly "lookup: an ELF file" '' lookup_1000 "$B/c-O2"
fails_clearly "lookup: a GSYM cut after 40 bytes" '' lookup_1000 "$E/short.gsym"
fails_clearly "lookup: GSYM version 2" 'version 2.*support|support.*version 2' \
    lookup_1000 "$E/v2.gsym"
# shellcheck disable=SC2317 # called by fails_clearly
dump_of() {
	"$SYMHUB" gsym dump "$1"
}
fails_clearly "dump: GSYM version 2" 'version 2.*support|support.*version 2' \
    dump_of "$E/v2.gsym"

echo "# $(($(date +%s) - t0)) s"
finish
