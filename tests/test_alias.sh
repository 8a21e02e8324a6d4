#!/bin/bash
# Integration test of the rule for aliases (doc/gsym.md, "Aliases: which
# name an address gets"): functions that share an address get one name, by
# a written rule, the same on every run and any number of threads.
# Fixtures built now: tests/fixtures/alias.c with alias_asm.S (C aliases
# strong, weak and local; symbols only; sizes 0, 4 and 8 at one address;
# gas's DWARF ties, as in glibc) and inl.cc at -O2 (C++ constructor and
# destructor aliases, D1/D2).  For each:
#   - `symhub gsym convert` 5 times on each of 1, 2 and 4 threads: the same
#     bytes all 15 times;
#   - at every address where .symtab has two or more function symbols, and
#     past the end of a shorter one where they differ in size, `symhub gsym
#     lookup` names the function the rule picks.  The test applies the rule
#     itself, in the Python below, from `readelf -sW` (the symbols) and
#     `llvm-dwarfdump-19 --debug-info` (the DWARF subprograms, their ranges,
#     names, units and inlined calls).  It knows no line table: it relies on
#     every subprogram here having line rows (gcc and gas write a line
#     program for each unit), so that a subprogram beats the symbols of
#     its range; where several subprograms share a range it requires them
#     to come from one unit and to inline nothing (then their rows are the
#     same, and the name decides), and fails saying it cannot predict
#     otherwise.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_alias.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need gcc g++ readelf cmp python3 llvm-dwarfdump-19
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
[ "$(uname -m)" = x86_64 ] || skip "alias.c's assembler is for x86-64"

# expect FILE: "ADDR<tab>NAME<tab>WHY" for every address the rule decides
# among two or more candidates (ADDR as 0x%x); on stderr, "cover WHAT N"
# for each kind of case met, and "unpredictable ADDR WHY" where the test
# cannot apply the rule.
expect() {
	python3 - "$1" <<'PY'
import re, subprocess, sys
f = sys.argv[1]

def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True,
                          text=True).stdout

# Executable sections.
text = []
for l in run('readelf', '-SW', f).splitlines():
    m = re.match(r'\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+'
                 r'([0-9a-f]+)\s+[0-9a-f]+\s+(\S*)', l)
    if m and 'X' in m.group(4) and int(m.group(3), 16) > 0:
        lo = int(m.group(2), 16)
        text.append((lo, lo + int(m.group(3), 16)))
def is_text(a):
    return any(lo <= a < hi for lo, hi in text)

# .symtab functions: the candidates of the symbol table.
syms = {}
cur = None
for l in run('readelf', '-sW', f).splitlines():
    if l.startswith('Symbol table '):
        cur = "'.symtab'" in l
        continue
    p = l.split()
    if not cur or len(p) < 8 or p[3] != 'FUNC' or p[6] == 'UND':
        continue
    a = int(p[1], 16)
    size = int(p[2], 16) if p[2].startswith('0x') else int(p[2])
    if is_text(a) and p[7]:
        syms.setdefault(a, []).append((size, p[7], 'sym', None))

# DWARF subprograms: ranges, unit, name, inlined calls below.
dies, order, stack = {}, [], []
unit = -1
die = None
for l in run('llvm-dwarfdump-19', '--debug-info', f).splitlines():
    if re.match(r'0x[0-9a-f]+: Compile Unit:', l):
        unit += 1
        stack = []
        continue
    m = re.match(r'0x([0-9a-f]+):( +)(DW_TAG_\w+|NULL)', l)
    if m:
        depth = (len(m.group(2)) - 1) // 2
        if m.group(3) == 'NULL':
            die = None
            continue
        off = int(m.group(1), 16)
        del stack[depth:]
        die = {'tag': m.group(3), 'unit': unit, 'attrs': {}, 'ranges': [],
               'parent': stack[-1] if stack else None, 'off': off}
        dies[off] = die
        order.append(off)
        stack.append(off)
        continue
    if die is None:
        continue
    m = re.match(r'\s+(DW_AT_\w+)\t\((.*)$', l)
    if m:
        die['attrs'][m.group(1)] = m.group(2)
        continue
    m = re.match(r'\s+\[0x([0-9a-f]+), 0x([0-9a-f]+)\)', l)
    if m:
        die['ranges'].append((int(m.group(1), 16), int(m.group(2), 16)))

def ref(d, at):
    v = d['attrs'].get(at)
    m = re.match(r'0x([0-9a-f]+)', v or '')
    return dies.get(int(m.group(1), 16)) if m else None

def strval(v):
    m = re.match(r'"(.*)"\)$', v or '')
    return m.group(1) if m else None

def chain(d):
    seen = []
    while d is not None and d not in seen and len(seen) < 16:
        seen.append(d)
        d = ref(d, 'DW_AT_specification') or ref(d, 'DW_AT_abstract_origin')
    return seen

# The name doc/gsym.md gives a subprogram: its linkage name, else
# DW_AT_name, which must then need no qualification (here: the parent is
# the unit), or None.
def name(d):
    for e in chain(d):
        for at in ('DW_AT_linkage_name', 'DW_AT_MIPS_linkage_name'):
            if at in e['attrs']:
                return strval(e['attrs'][at])
    for e in chain(d):
        if 'DW_AT_name' in e['attrs']:
            p = dies.get(e['parent'])
            if p is not None and p['tag'] not in ('DW_TAG_compile_unit',
                                                  'DW_TAG_partial_unit'):
                return None
            return strval(e['attrs']['DW_AT_name'])
    return None

kids = {}
for o in order:
    kids.setdefault(dies[o]['parent'], []).append(o)

def inlined(off):
    n, todo = 0, [off]
    while todo:
        for k in kids.get(todo.pop(), []):
            n += dies[k]['tag'] == 'DW_TAG_inlined_subroutine'
            todo.append(k)
    return n

dwarf = {}
for off in order:
    d = dies[off]
    if d['tag'] != 'DW_TAG_subprogram':
        continue
    rs = list(d['ranges'])
    m1 = re.match(r'0x([0-9a-f]+)\)', d['attrs'].get('DW_AT_low_pc', ''))
    m2 = re.match(r'0x([0-9a-f]+)\)', d['attrs'].get('DW_AT_high_pc', ''))
    if m1 and m2:
        rs.append((int(m1.group(1), 16), int(m2.group(1), 16)))
    for lo, hi in rs:
        if lo < hi and is_text(lo):
            dwarf.setdefault(lo, []).append(
                (hi - lo, name(d), 'dwarf', (d['unit'], off)))

cover = {}
def covered(what):
    cover[what] = cover.get(what, 0) + 1

ninl = {}
for a in sorted(syms):
    if len(syms[a]) < 2:
        continue
    covered('alias addresses')
    cands = syms[a] + dwarf.get(a, [])
    sizes = sorted(set(c[0] for c in cands if c[0] > 0)) or [0]
    if 0 in [c[0] for c in cands] and sizes != [0]:
        covered('size 0 gives way')
    if len(sizes) > 1:
        covered('sizes differ')
    prev = 0
    for s in sizes:
        group = [c for c in cands if c[0] == s]
        dw = [c for c in group if c[2] == 'dwarf']
        why = None
        if len(dw) == 1:
            win, why = dw[0], 'DWARF over symbols'
        elif dw:
            for c in dw:
                if c[3][1] not in ninl:
                    ninl[c[3][1]] = inlined(c[3][1])
            if len(set(c[3][0] for c in dw)) > 1 or \
               any(ninl[c[3][1]] for c in dw):
                print('unpredictable 0x%x DWARF from two units, or inlining'
                      % (a + prev), file=sys.stderr)
                prev = s
                continue
            win, why = max(dw, key=lambda c: c[1].encode()), 'DWARF tie'
        else:
            win, why = max(group, key=lambda c: c[1].encode()), 'symbols'
        if win[1] is None:
            print('unpredictable 0x%x a name to qualify' % (a + prev),
                  file=sys.stderr)
        elif len(group) > 1 or len(sizes) > 1:
            names = set(c[1] for c in group)
            if why == 'DWARF over symbols' and \
               max(names, key=str.encode) != win[1]:
                covered('DWARF over a greater symbol name')
            if len(names) > 1:
                covered(why + ' by name' if why != 'DWARF over symbols'
                        else why)
            print('0x%x\t%s\t%s' % (a + prev, win[1], why))
        prev = s
for k, v in sorted(cover.items()):
    print('cover %s\t%d' % (k, v), file=sys.stderr)
PY
}

# names OUT: "ADDR<tab>NAME" for each result of `symhub gsym lookup`: the
# address and the last frame's function (the concrete, not inlined, one).
names() {
	python3 - "$1" <<'PY'
import re, sys
res = []
for l in open(sys.argv[1]):
    l = l.rstrip('\n')
    m = re.match(r'0x0*([0-9a-f]+): (.*)$', l)
    if m:
        res.append(['0x' + m.group(1), m.group(2)])
    elif l.startswith(' ') and res:
        res[-1][1] = l.strip()
for a, fr in res:
    print('%s\t%s' % (a, re.split(r' \+ \d+| @ | \[inlined\]', fr)[0]))
PY
}

section 'fixtures'
S=$tmp/src
B=$tmp/bin
mkdir -p "$S" "$B" || exit 99
cp "$FIXTURES/alias.c" "$FIXTURES/alias_asm.S" "$FIXTURES/inl.cc" "$S/" ||
    exit 99
build() { # NAME COMPILER ARGS...
	local n=$1 cc=$2
	shift 2
	(cd "$S" && "$cc" -o "$B/$n" "$@") >"$B/$n.log" 2>&1 ||
	    { echo "# cannot build $n:"; sed 's/^/#   /' "$B/$n.log"; exit 99; }
}
build alias gcc -g -O2 alias.c alias_asm.S
build cc-O2 g++ -g -O2 inl.cc
FIXT=(alias cc-O2)

# What each fixture must hold for the test to cover what it claims.
declare -A want=(
	[alias]='DWARF over a greater symbol name|DWARF tie by name|symbols by name|size 0 gives way|sizes differ'
	[cc-O2]='DWARF over symbols'
)
for v in "${FIXT[@]}"; do
	expect "$B/$v" >"$B/$v.expect" 2>"$B/$v.cover" ||
	    { fail "$v: the rule applied by the test" "$(tail -5 "$B/$v.cover")"
	      continue; }
	probs=()
	IFS='|' read -ra kinds <<<"${want[$v]}"
	for k in "${kinds[@]}"; do
		grep -q "^cover $k	" "$B/$v.cover" || probs+=("no case of: $k")
	done
	grep '^unpredictable' "$B/$v.cover" | while read -r l; do
		echo "# $v: $l"
	done
	grep -q '^unpredictable' "$B/$v.cover" &&
	    probs+=("the test cannot apply the rule everywhere (above)")
	[ -s "$B/$v.expect" ] || probs+=("no address to check")
	if [ ${#probs[@]} -eq 0 ]; then
		pass "$v: $(wc -l <"$B/$v.expect") addresses with aliases to check;" \
		    "$(sed -n 's/^cover \(.*\)	\(.*\)/\1: \2/p' "$B/$v.cover" |
		    paste -sd ';' | sed 's/;/; /g')"
	else
		fail "$v: the cases the test needs" "${probs[@]}"
	fi
done
# The C++ aliases are there: two function symbols, C1/C2 or D1/D2, at one
# address.
if readelf -sW "$B/cc-O2" |
    awk '$4 == "FUNC" && $8 ~ /[CD][12]E/ { print $2 }' | sort | uniq -d |
    grep -q .; then
	pass "cc-O2: constructor or destructor aliases (C1/C2, D1/D2)"
else
	fail "cc-O2: constructor or destructor aliases (C1/C2, D1/D2)"
fi

section 'the same bytes, every run, 1, 2 and 4 threads'
for v in "${FIXT[@]}"; do
	ref=$B/$v.gsym
	"$SYMHUB" gsym convert -j 1 "$B/$v" -o "$ref" >"$B/$v.log" 2>&1 ||
	    { fail "$v: symhub gsym convert" "$(tail -3 "$B/$v.log")"; continue; }
	bad=()
	for j in 1 2 4; do
		for r in 1 2 3 4 5; do
			out=$B/$v.j$j.$r.gsym
			if ! "$SYMHUB" gsym convert -j "$j" "$B/$v" -o "$out" \
			    >"$out.log" 2>&1; then
				bad+=("-j $j, run $r: $(tail -1 "$out.log")")
			elif ! cmp -s "$ref" "$out"; then
				bad+=("-j $j, run $r: $(cmp "$ref" "$out" 2>&1)")
			fi
		done
	done
	if [ ${#bad[@]} -eq 0 ]; then
		pass "$v: 15 conversions (5 each on 1, 2 and 4 threads)," \
		    "$(file_size "$ref") bytes each, all the same"
	else
		fail "$v: 15 conversions give the same bytes" "${bad[@]:0:5}"
	fi
done

section 'the name the rule gives'
for v in "${FIXT[@]}"; do
	if ! [ -s "$B/$v.gsym" ] || ! [ -s "$B/$v.expect" ]; then
		fail "$v: the name the rule picks" "no GSYM or nothing expected"
		continue
	fi
	cut -f1 "$B/$v.expect" >"$B/$v.addrs"
	"$SYMHUB" gsym lookup "$B/$v.gsym" <"$B/$v.addrs" >"$B/$v.lookup" \
	    2>"$B/$v.lookup.err"
	names "$B/$v.lookup" >"$B/$v.got"
	bad=()
	while IFS=$'\t' read -r a w why g; do
		[ "$w" = "$g" ] || bad+=("$a: want $w ($why), got ${g:-nothing}")
	done < <(paste "$B/$v.expect" <(cut -f2 "$B/$v.got"))
	n=$(wc -l <"$B/$v.expect")
	if [ ${#bad[@]} -eq 0 ] && [ "$(wc -l <"$B/$v.got")" = "$n" ]; then
		pass "$v: at all $n addresses, the name the rule picks"
	else
		fail "$v: the name the rule picks, at $n addresses" \
		    "${bad[@]:0:10}" "$(head -3 "$B/$v.lookup.err")"
	fi
done
# Spelled out, so that a change of the rule shows here too.
for p in 'tie_weak symbols' 'impl_sum DWARF over symbols' \
    'asm_copy_w DWARF tie' 'sz_short symbols' 'sz_long2 symbols'; do
	read -r w why <<<"$p"
	if awk -F'\t' -v w="$w" -v y="$why" '$2 == w && $3 == y { f = 1 }
	    END { exit !f }' "$B/alias.expect" &&
	    grep -q "	$w\$" "$B/alias.got"; then
		pass "alias: $w named ($why)"
	else
		fail "alias: $w named ($why)" "$(cat "$B/alias.got")"
	fi
done

finish
