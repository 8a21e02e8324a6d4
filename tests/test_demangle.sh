#!/bin/bash
# POST /buildid/ID/symbolize?demangle=1: function names as a person reads
# them, against c++filt and llvm-cxxfilt-19 on the C++ fixture's symbol
# table; without it, the mangled names the GSYM keeps.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_demangle.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need g++ nm strip c++filt llvm-cxxfilt-19 curl python3

section 'a hub over the C++ fixture'
mkdir -p "$tmp/scan" "$tmp/out"
cp "$FIXTURES/inl.cc" "$tmp/"
# Without DWARF, the GSYM is made from the symbol table, whose names are
# mangled (what a profiler meets in release builds); from DWARF, functions
# are named as the DWARF qualifies them.
(cd "$tmp" && g++ -g -O0 -o "$tmp/inl" inl.cc) &&
    strip -g -o "$tmp/scan/inl" "$tmp/inl" || exit 99
ID=$(buildid "$tmp/scan/inl")
# The mangled functions of the program, one "ADDRESS NAME" a line.
nm --defined-only "$tmp/scan/inl" |
    awk '($2 == "T" || $2 == "t" || $2 == "W") && $3 ~ /^_Z/ {
        print "0x" $1, $3 }' | sed 's/^0x0*\([0-9a-f]\)/0x\1/' |
    sort -u >"$tmp/funcs"
n=$(wc -l <"$tmp/funcs")
check "the fixture has mangled functions ($n)" [ "$n" -ge 10 ]
awk '{ print $1 }' "$tmp/funcs" >"$tmp/addrs"
hub -d "$tmp/store" -F "$tmp/scan" --log-file "$tmp/hub.log"

# names OUT: "ADDRESS FUNCTION" of the outermost frame of each result.
names() {
	python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    f = [x for x in r["frames"] if not x["inlined"]]
    print(r["address"], f[-1]["function"] if f else "-")
' "$1"
}

section 'names demangled on request'
code=$(curl -s -o "$tmp/out/m" -w '%{http_code}' --data-binary "@$tmp/addrs" \
    "$URL/buildid/$ID/symbolize")
check "without demangle: 200" [ "$code" = 200 ]
names "$tmp/out/m" | sort >"$tmp/out/m.names"
# Aliases (a constructor's C1 and C2, say) share an address: the answer
# names one of them.
check "mangled names, each one nm lists at its address" eval \
    "[ \$(wc -l <'$tmp/out/m.names') = $n ] &&
    [ -z \"\$(sort -u '$tmp/out/m.names' | comm -23 - '$tmp/funcs')\" ]"
code=$(curl -s -o "$tmp/out/d" -w '%{http_code}' --data-binary "@$tmp/addrs" \
    "$URL/buildid/$ID/symbolize?demangle=1")
check "with demangle=1: 200" [ "$code" = 200 ]
names "$tmp/out/d" | sort >"$tmp/out/d.names"
awk '{ print $2 }' "$tmp/out/m.names" | c++filt >"$tmp/gnu"
awk '{ print $2 }' "$tmp/out/m.names" | llvm-cxxfilt-19 >"$tmp/llvm"
paste -d ' ' <(awk '{ print $1 }' "$tmp/out/m.names") "$tmp/gnu" \
    >"$tmp/expect.gnu"
check "every name as c++filt prints it" cmp -s "$tmp/out/d.names" \
    "$tmp/expect.gnu"
# llvm-cxxfilt-19 writes some names its own way (">>", 'lambda'): where
# the two tools agree, the hub agrees with both.
agrees() {	# where both tools print the same, the hub does too
	python3 -c '
import sys
d, g, l = (open(f).read().splitlines() for f in sys.argv[1:4])
same = [i for i in range(len(g)) if g[i] == l[i]]
bad = [d[i] for i in same if d[i].split(" ", 1)[1] != g[i]]
sys.exit(1 if bad or len(same) < 100 else 0)
' "$tmp/out/d.names" "$tmp/gnu" "$tmp/llvm"
}
check "and as llvm-cxxfilt-19 prints it, where it agrees with c++filt" \
    agrees
code=$(curl -s -o "$tmp/out/t" -w '%{http_code}' --data-binary "@$tmp/addrs" \
    "$URL/buildid/$ID/symbolize?demangle=true")
check "demangle=true too" cmp -s "$tmp/out/t" "$tmp/out/d"
code=$(curl -s -o "$tmp/out/z" -w '%{http_code}' --data-binary "@$tmp/addrs" \
    "$URL/buildid/$ID/symbolize?demangle=0")
check "demangle=0: mangled" cmp -s "$tmp/out/z" "$tmp/out/m"
stop_symhubd

finish
