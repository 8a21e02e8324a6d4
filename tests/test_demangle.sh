#!/bin/bash
# POST /buildid/ID/symbolize?demangle=1: function names as a person reads
# them, against c++filt and llvm-cxxfilt-19 on the C++ fixture's symbol
# table, and against llvm-cxxfilt-19 on a Rust program built now with
# each mangling scheme (legacy, v0; skipped without rustc); without it,
# the mangled names the GSYM keeps.
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

# ---- Rust --------------------------------------------------------------

section 'Rust: v0 names as llvm-cxxfilt-19 prints them, legacy as c++filt'
RUSTC=$(command -v rustc || ls "$HOME"/.cargo/bin/rustc 2>/dev/null)
if [ -z "$RUSTC" ]; then
	skip_check "Rust names demangled" "no rustc"
	finish
fi
cat >"$tmp/prog.rs" <<'EOF'
// A fixture: modules, generics, a trait, closures, a const generic.
mod geo {
    pub trait Area { fn area(&self) -> f64; }
    pub struct Sq<T>(pub T);
    impl Area for Sq<f64> {
        #[inline(never)] fn area(&self) -> f64 { self.0 * self.0 }
    }
    #[inline(never)]
    pub fn total<A: Area>(v: &[A]) -> f64 { v.iter().map(|a| a.area()).sum() }
    #[inline(never)]
    pub fn fill<const N: usize>(x: f64) -> [f64; N] { [x; N] }
}
#[inline(never)]
fn apply<F: Fn(u64) -> u64>(f: F, n: u64) -> u64 { (0..n).map(&f).sum() }
fn main() {
    let v = vec![geo::Sq(1.5f64), geo::Sq(2.0)];
    let k = std::env::args().count() as u64;
    println!("{} {} {:?}", geo::total(&v), apply(|x| x * k, 10),
        geo::fill::<3>(k as f64));
}
EOF
# rustc's default mangles the program's own functions the legacy way
# (the standard library it links is v0 already); -C
# symbol-mangling-version=v0 all of them.
for m in v0 legacy; do
	flags=()
	[ $m = v0 ] && flags=(-C symbol-mangling-version=v0)
	"$RUSTC" "${flags[@]}" -C opt-level=1 -C panic=abort \
	    -o "$tmp/prog-$m" "$tmp/prog.rs" 2>"$tmp/rustc-$m.err" &&
	    strip -g -o "$tmp/scan/prog-$m" "$tmp/prog-$m" ||
	    { fail "rustc builds the fixture ($m)" "$(head -3 "$tmp/rustc-$m.err")"; finish; }
done
rescan_wait() {	# the hub indexes the new files
	wait_until 30 eval '[ "$(http_code "$URL/buildid/$(buildid "$tmp/scan/prog-legacy")/executable")" = 200 ]'
}
hub -d "$tmp/store2" -F "$tmp/scan" --log-file "$tmp/hub2.log"
rescan_wait
for m in v0 legacy; do
	RID=$(buildid "$tmp/scan/prog-$m")
	if [ $m = v0 ]; then
		pat='^_R' oracle=llvm-cxxfilt-19
	else
		pat='^_ZN.*17h[0-9a-f]+E$' oracle=c++filt
	fi
	nm --defined-only "$tmp/scan/prog-$m" |
	    awk -v p="$pat" '($2 == "T" || $2 == "t") && $3 ~ p {
	        print "0x" $1 }' | sed 's/^0x0*\([0-9a-f]\)/0x\1/' |
	    sort -u >"$tmp/raddrs-$m"
	n=$(wc -l <"$tmp/raddrs-$m")
	curl -s -o "$tmp/out/rm-$m" --data-binary "@$tmp/raddrs-$m" \
	    "$URL/buildid/$RID/symbolize"
	curl -s -o "$tmp/out/rd-$m" --data-binary "@$tmp/raddrs-$m" \
	    "$URL/buildid/$RID/symbolize?demangle=1"
	names "$tmp/out/rm-$m" >"$tmp/out/rm-$m.names"
	names "$tmp/out/rd-$m" >"$tmp/out/rd-$m.names"
	# v0 names against LLVM's demangler (an implementation of its own);
	# legacy names against c++filt (llvm-cxxfilt-19 reads them as C++,
	# leaving "$LT$" in), less the hash c++filt's verbose form keeps
	# ("::h0123456789abcdef"), which the hub leaves out, as rustfilt does.
	if [ $m = v0 ]; then
		awk '{ print $2 }' "$tmp/out/rm-$m.names" | llvm-cxxfilt-19
	else
		awk '{ print $2 }' "$tmp/out/rm-$m.names" | c++filt |
		    sed -E 's/::h[0-9a-f]{16}$//'
	fi >"$tmp/rllvm-$m"
	paste -d ' ' <(awk '{ print $1 }' "$tmp/out/rm-$m.names") \
	    "$tmp/rllvm-$m" >"$tmp/rexpect-$m"
	nmangled=$(awk '$2 ~ /^_[RZ]/' "$tmp/out/rm-$m.names" | wc -l)
	if [ "$n" -ge 8 ] && [ "$nmangled" = "$n" ] &&
	    cmp -s "$tmp/out/rd-$m.names" "$tmp/rexpect-$m"; then
		pass "$m: $n functions, each as $oracle prints it"
	else
		fail "$m: names as $oracle prints them" \
		    "$n functions, $nmangled mangled in the answer" \
		    "$(diff "$tmp/out/rd-$m.names" "$tmp/rexpect-$m" | head -6)"
	fi
done
check "the fixture's own functions are there, demangled" eval \
    "grep -q ' prog::geo::total::<prog::geo::Sq<f64>>\$' '$tmp/out/rd-v0.names' &&
    grep -q ' <prog::geo::Sq<f64> as prog::geo::Area>::area\$' '$tmp/out/rd-legacy.names'"
stop_symhubd

finish
