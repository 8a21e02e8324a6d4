#!/bin/bash
# Integration test of POST /symbolize/pprof and `symhub pprof`
# (symhubd(8), "Profiles"), with go tool pprof as the client:
#   1. a profile of unsymbolized addresses in C and C++ programs built
#      now (a PIE, a non-PIE, a shared library at a random base, a program
#      without DWARF but with its symbol table, a C++ program uploaded and
#      named by its OTel FileID), plus a mapping nobody has and one
#      without a build-id: `symhub pprof` fills in every location of the
#      known modules, each frame as llvm-symbolizer-19 gives it for the
#      same address, names demangled with the linkage name kept, the
#      has_* flags set; the unknown mappings keep their raw addresses;
#      samples and labels pass through;
#   2. go tool pprof's -top, -traces, -lines and -list views show the
#      names, the "(inline)" frames and file:line;
#   3. the same through curl: an uncompressed profile is read too, the
#      answer is gzip-compressed application/vnd.google.protobuf;
#   4. the answer to a gzip'd profile written as Go writes one (the
#      samples first) starts with the input's compressed blocks as they
#      came, and inflates to the answer to the same profile uncompressed;
#      samples written after the locations, and two gzip members, give
#      the same answer; a block that ends where the samples do, all the
#      blocks before it copied;
#   5. bad input, each a clear 4xx: truncated protobuf, gzip bomb, too
#      many locations, a string index out of range, overlapping
#      mappings, an address outside its mapping, a mapping that is not
#      there, an id twice, a build_id that is neither a build-id nor a
#      FileID, a bad ?deadline=, an empty body; GET is 405 (a sample's
#      string index out of range passes through: samples are not read);
#   6. the large buffers kept for the next profile go back when idle;
#   7. a profile of 24 MiB of samples grows the hub's peak RSS by less
#      than 110 MiB (the body, the profile inflated); a client that goes
#      away mid-answer, then the next answered whole, in the buffers
#      (its body's too) kept from the last.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_pprof.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc g++ objcopy strip readelf nm python3 llvm-symbolizer-19 \
    c++filt go
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
CHECK=$top_srcdir/tests/batchcheck.py
PP=$top_srcdir/tests/pprofcheck.py
export PYTHONPATH=$top_srcdir/tests
unset DEBUGINFOD_URLS
# go tool pprof: its caches and settings under $tmp, no network.
export GOCACHE=$tmp/gocache HOME=$tmp/home GOTOOLCHAIN=local GOENV=off \
    PPROF_TMPDIR=$tmp/pproftmp GOPROXY=off GOPATH=$tmp/gopath
mkdir -p "$HOME" "$PPROF_TMPDIR" || exit 99

section 'fixtures'
mkdir -p "$tmp"/{src,bin,scan,out} || exit 99
cp "$FIXTURES"/*.c "$FIXTURES"/*.h "$FIXTURES"/inl.cc "$tmp/src/" || exit 99
(
	cd "$tmp/src" &&
	    gcc -g -O2 -o "$tmp/bin/app" inl.c &&
	    gcc -g -O2 -no-pie -o "$tmp/bin/appnp" inl.c &&
	    gcc -g -O2 -fPIC -shared -o "$tmp/bin/libgreet.so" greet.c &&
	    gcc -O2 -o "$tmp/bin/nodw" deep.c &&
	    g++ -g -O2 -o "$tmp/bin/cxx" inl.cc
) || exit 99
for m in app appnp libgreet.so cxx; do
	objcopy --only-keep-debug "$tmp/bin/$m" "$tmp/bin/$m.debug" &&
	    strip -s -o "$tmp/bin/$m.stripped" "$tmp/bin/$m" || exit 99
done
for m in app appnp libgreet.so; do
	cp "$tmp/bin/$m.debug" "$tmp/bin/$m.stripped" "$tmp/scan/" || exit 99
done
cp "$tmp/bin/nodw" "$tmp/scan/" || exit 99
# A Go program without DWARF (-w): the hub reads its .gopclntab.  Go
# writes no GNU build-id unless told (-B).
GOID=5e1f0a0b0c0d0e0f101112131415161718191a1b
mkdir -p "$tmp/gosrc" && cat >"$tmp/gosrc/main.go" <<'EOF' || exit 99
package main

import "os"

// Small enough to be inlined into work.
func inc(x int) int { return x + 1 }

//go:noinline
func work(n int) int {
	total := 0
	for i := 0; i < n; i++ {
		total += inc(i) * inc(i)
	}
	return total
}

func main() {
	os.Exit(work(len(os.Args)) & 1)
}
EOF
printf 'module pprofgo\n\ngo 1.19\n' >"$tmp/gosrc/go.mod" || exit 99
if (cd "$tmp/gosrc" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build \
    -ldflags="-w -B 0x$GOID" -o "$tmp/bin/goprog" .) >"$tmp/go.log" 2>&1
then
	cp "$tmp/bin/goprog" "$tmp/scan/" || exit 99
else
	fail "go build" "$(tail -3 "$tmp/go.log")"
	finish
fi
declare -A ID
for m in app appnp libgreet.so nodw cxx; do
	ID[$m]=$(buildid "$tmp/bin/$m")
	[ -n "${ID[$m]}" ] || { echo "# fixtures: $m has no build-id"; exit 99; }
done
FID=$(python3 "$CHECK" fileid "$tmp/bin/cxx.stripped") || exit 99
NOBODY=00112233445566778899aabbccddeeff00112233
for m in app appnp libgreet.so nodw cxx goprog; do
	python3 "$CHECK" sample "$tmp/bin/$m" 150 "$m" >"$tmp/out/$m.addrs" ||
	    exit 99
done
# and every byte of main.work, where inc is inlined
read -r a n < <(nm -S "$tmp/bin/goprog" | awk '$4 == "main.work" {
    print $1, $2 }')
[ -n "$n" ] || { echo "# fixtures: no main.work in goprog"; exit 99; }
for ((i = 0; i < 16#$n; i++)); do
	printf '0x%x\n' $((16#$a + i))
done >>"$tmp/out/goprog.addrs"
pass "fixtures: 6 programs and libraries"

TOKENS=$tmp/tokens
TOK=$(new_token ci upload "$TOKENS") ||
    { echo "# symhub token new: $(cat "$tmp/token.err")"; exit 99; }
# indexed MODULE...: wait until the hub serves each module's executable
# (its scan of -F done).
indexed() {
	local m
	for m in "$@"; do
		wait_until 30 eval '[ "$(http_code "$URL/buildid/${ID[$m]}/executable")" = 200 ]'
	done
}
hub -d "$tmp/store" -F "$tmp/scan" --tokens "$TOKENS" --gsym-workers 2 \
    --symbolize-max-addresses 20000 --log-file "$tmp/hub.log"
ID[goprog]=$GOID
indexed app appnp libgreet.so nodw goprog
code=$(put_file "/buildid/${ID[cxx]}/debuginfo" "$tmp/bin/cxx.debug" \
    "$tmp/out/put" "$tmp/out/put.h" -H "Authorization: Bearer $TOK")
code2=$(put_file "/buildid/${ID[cxx]}/executable" "$tmp/bin/cxx.stripped" \
    "$tmp/out/put" "$tmp/out/put.h" -H "Authorization: Bearer $TOK")
check "cxx uploaded (debuginfo $code, executable $code2)" \
    test "$code$code2" = 201201

# ---- 1. symhub pprof -----------------------------------------------

section 'symhub pprof: every location of the known modules filled in'
# Bases: the PIE and the library somewhere random, page-aligned and apart;
# the non-PIE where it was linked (0 added); nodw and cxx PIEs too.
r=$((RANDOM % 4096))
python3 "$PP" make "$tmp/out/in.pb.gz" \
    "$tmp/bin/app:${ID[app]}:$((0x555500000000 + r * 0x100000)):$tmp/out/app.addrs" \
    "$tmp/bin/appnp:${ID[appnp]}:0:$tmp/out/appnp.addrs" \
    "$tmp/bin/libgreet.so:${ID[libgreet.so]}:$((0x7f0000000000 + r * 0x200000)):$tmp/out/libgreet.so.addrs" \
    "$tmp/bin/nodw:${ID[nodw]}:0x560000000000:$tmp/out/nodw.addrs" \
    "$tmp/bin/cxx:$FID:0x561000000000:$tmp/out/cxx.addrs" \
    "$tmp/bin/app:$NOBODY:0x562000000000:$tmp/out/app.addrs" \
    "$tmp/bin/app::0x563000000000:$tmp/out/app.addrs" \
    >"$tmp/out/nlocs" || exit 99
nlocs=$(cat "$tmp/out/nlocs")
if "$SYMHUB" pprof --url "$URL" "$tmp/out/in.pb.gz" -o "$tmp/out/sym.pb.gz" \
    2>"$tmp/out/cli.err"; then
	pass "symhub pprof exits 0 ($nlocs locations)"
else
	fail "symhub pprof exits 0" "$(cat "$tmp/out/cli.err")"
	finish
fi
check "symhub_symbolize_addresses_total{api=\"pprof\"} counts its $nlocs locations" \
    metric_cmp 'symhub_symbolize_addresses_total{api="pprof"}' -eq "$nlocs"
python3 "$PP" tojson "$tmp/out/sym.pb.gz" "$tmp/out/sym.json" \
    >"$tmp/out/tojson.txt" 2>&1
check "names are the system_names demangled: $(tail -1 "$tmp/out/tojson.txt")" \
    grep -q ' 0 not the system_name demangled' "$tmp/out/tojson.txt"
# (greet.c inlines nothing)
for m in app:1 appnp:1 libgreet.so:0 cxx:1; do
	inl=${m#*:}
	m=${m%:*}
	id=${ID[$m]}
	[ "$m" = cxx ] && id=$FID
	check "$m: has_functions, has_filenames, has_line_numbers, has_inline_frames=$inl" \
	    grep -qx "mapping $id has_functions=1 has_filenames=1 has_line_numbers=1 has_inline_frames=$inl" \
	    "$tmp/out/tojson.txt"
done
check "nodw (symbol table only): has_functions, no files nor lines" \
    grep -qx "mapping ${ID[nodw]} has_functions=1 has_filenames=0 has_line_numbers=0 has_inline_frames=0" \
    "$tmp/out/tojson.txt"
check "a build-id nobody has: the mapping left as it came" \
    grep -qx "mapping $NOBODY has_functions=0 has_filenames=0 has_line_numbers=0 has_inline_frames=0" \
    "$tmp/out/tojson.txt"

# The hub's POST /symbolize for the same addresses: the same frames,
# and the starts of their functions for the comparison below.
python3 "$PP" request "$tmp/out/sym.json" "$tmp/out/req.json" || exit 99
code=$(http /symbolize "$tmp/out/batch.json" "$tmp/out/batch.h" \
    --max-time 60 --data-binary "@$tmp/out/req.json")
python3 "$PP" merge "$tmp/out/sym.json" "$tmp/out/batch.json" \
    "$tmp/out/symstart.json" >"$tmp/out/merge.txt" 2>&1
check "each location as POST /symbolize answers ($code): $(tail -1 "$tmp/out/merge.txt")" \
    test "$code" = 200 -a "$(grep -c : "$tmp/out/merge.txt")" = 0
# llvm-symbolizer-19 on the same ELF addresses, module after module.
python3 -c 'import json, sys
for m in json.load(open(sys.argv[1]))["modules"]:
    if m["status"] == "symbolized":
        print(m["file"], " ".join(r["address"] for r in m["results"]))' \
    "$tmp/out/sym.json" | while read -r elf addrs; do
	# shellcheck disable=SC2086 # one address a word
	printf '%s\n' $addrs | llvm-symbolizer-19 --no-demangle \
	    --output-style=JSON --obj="$elf"
done >"$tmp/out/llvm.json"
if python3 "$CHECK" compare-all "$tmp/out/symstart.json" "$tmp/out/llvm.json" \
    >"$tmp/out/agree.txt" 2>&1; then
	pass "every location agrees with llvm-symbolizer-19, frame by frame: $(tail -1 "$tmp/out/agree.txt")"
else
	fail "every location agrees with llvm-symbolizer-19" \
	    "$(head -5 "$tmp/out/agree.txt")" "$(tail -1 "$tmp/out/agree.txt")"
fi
nmods=$(python3 -c 'import json, sys
print(sum(1 for m in json.load(open(sys.argv[1]))["modules"]
          if m["status"] == "symbolized"))' "$tmp/out/sym.json")
check "5 modules symbolized (PIE, non-PIE, library, symtab, FileID): $nmods" \
    test "$nmods" = 5
in_sum=$(python3 "$PP" summary "$tmp/out/in.pb.gz")
out_sum=$(python3 "$PP" summary "$tmp/out/sym.pb.gz")
check "samples, locations and labels pass through ($out_sum)" \
    test "$(echo "$in_sum" | awk '{print $2, $4, $10}')" = \
    "$(echo "$out_sum" | awk '{print $2, $4, $10}')"
raw=$(python3 -c 'import sys
sys.path.insert(0, sys.argv[2])
import pprofcheck
p = pprofcheck.parse(sys.argv[1])
st = p["strings"]
ids = [m[1] for m in p["mappings"] if not m[6] or not m[7]]
print(sum(1 for l in p["locations"] if l["mapping"] in ids and l["lines"]),
      sum(1 for l in p["locations"] if l["mapping"] in ids))' \
    "$tmp/out/sym.pb.gz" "$top_srcdir/tests")
check "the unresolved mappings' locations stay raw (lines, locations: $raw)" \
    test "${raw%% *}" = 0 -a "${raw#* }" -gt 0

# A Go program through its .gopclntab: llvm-symbolizer-19 reads no Go
# line table; the frames must be POST /symbolize's (which test_go.sh
# holds to go tool addr2line's).
python3 "$PP" make "$tmp/out/go.pb.gz" \
    "$tmp/bin/goprog:$GOID:0:$tmp/out/goprog.addrs" >/dev/null || exit 99
"$SYMHUB" pprof --url "$URL" "$tmp/out/go.pb.gz" -o "$tmp/out/gosym.pb.gz" \
    2>"$tmp/out/cli.err"
check "symhub pprof of the Go profile ($(cat "$tmp/out/cli.err"))" \
    test -s "$tmp/out/gosym.pb.gz"
python3 "$PP" tojson "$tmp/out/gosym.pb.gz" "$tmp/out/gosym.json" \
    >"$tmp/out/gotojson.txt" 2>&1
python3 "$PP" request "$tmp/out/gosym.json" "$tmp/out/goreq.json" || exit 99
code=$(http /symbolize "$tmp/out/gobatch.json" "$tmp/out/gobatch.h" \
    --max-time 60 --data-binary "@$tmp/out/goreq.json")
python3 "$PP" merge "$tmp/out/gosym.json" "$tmp/out/gobatch.json" \
    "$tmp/out/gostart.json" >"$tmp/out/gomerge.txt" 2>&1
check "Go: each location as POST /symbolize answers: $(tail -1 "$tmp/out/gomerge.txt")" \
    test "$code" = 200 -a "$(grep -c : "$tmp/out/gomerge.txt")" = 0
check "Go: has_functions, has_filenames, has_line_numbers (no inline frames)" \
    grep -qx "mapping $GOID has_functions=1 has_filenames=1 has_line_numbers=1 has_inline_frames=0" \
    "$tmp/out/gotojson.txt"
go tool pprof -traces "$tmp/out/gosym.pb.gz" >"$tmp/out/gotraces.txt" 2>&1
# (the GSYM of a .gopclntab keeps no inline tree: inc's line 6 is
# main.work's, as go tool addr2line prints it too)
check "Go: -traces shows main.work" \
    grep -qx ' *main\.work' "$tmp/out/gotraces.txt"
go tool pprof -top -lines -nodecount=1000 "$tmp/out/gosym.pb.gz" \
    >"$tmp/out/golines.txt" 2>&1
check "Go: -lines shows main.work at main.go:6, inc's line inlined" \
    grep -qE 'main\.work .*/main\.go:6$' "$tmp/out/golines.txt"

# ---- 2. go tool pprof -------------------------------------------------

section 'go tool pprof reads the answer'
gp() {
	go tool pprof "$@" "$tmp/out/sym.pb.gz" 2>"$tmp/out/gp.err"
}
gp -top -nodecount=1000 >"$tmp/out/top.txt"
check "-top names C functions (main, $(grep -c . "$tmp/out/top.txt") lines)" \
    grep -qE ' main$' "$tmp/out/top.txt"
check "-top names C++ functions demangled (::)" \
    grep -q '::' "$tmp/out/top.txt"
check "-top names a library's function (greet)" \
    grep -qE ' greet' "$tmp/out/top.txt"
gp -traces >"$tmp/out/traces.txt"
check "-traces shows inline frames marked (inline) ($(grep -c '(inline)' "$tmp/out/traces.txt"))" \
    grep -q '(inline)' "$tmp/out/traces.txt"
check "-traces shows the unknown mappings' locations raw ([app])" \
    grep -qE '^ +\[app\]$' "$tmp/out/traces.txt"
gp -top -lines -nodecount=1000 >"$tmp/out/lines.txt"
check "-lines shows file:line (inl.c)" \
    grep -qE 'inl\.c:[0-9]+' "$tmp/out/lines.txt"
check "-lines shows file:line (inl.cc)" \
    grep -qE 'inl\.cc:[0-9]+' "$tmp/out/lines.txt"
gp -list '^main$' >"$tmp/out/list.txt"
check "-list main shows the source of inl.c" \
    grep -q 'ROUTINE ======================== main in .*inl\.c' \
    "$tmp/out/list.txt"

# ---- 3. through curl ---------------------------------------------------

section 'POST /symbolize/pprof through curl'
python3 "$PP" make "$tmp/out/raw.pb" --raw \
    "$tmp/bin/app:${ID[app]}:0x555500000000:$tmp/out/app.addrs" \
    >/dev/null || exit 99
code=$(http /symbolize/pprof "$tmp/out/c.pb.gz" "$tmp/out/c.h" \
    --max-time 60 --data-binary "@$tmp/out/raw.pb")
check "an uncompressed profile: 200 ($code)" test "$code" = 200
check "Content-Type application/vnd.google.protobuf" \
    test "$(header "$tmp/out/c.h" Content-Type)" = \
    application/vnd.google.protobuf
check "the answer is gzip-compressed" \
    test "$(head -c 2 "$tmp/out/c.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b
check "the answer has its locations filled in" \
    grep -qE 'symbolized [1-9]' <(python3 "$PP" summary "$tmp/out/c.pb.gz")
code=$(http /symbolize/pprof "$tmp/out/g" "$tmp/out/g.h")
check "GET /symbolize/pprof: 405 ($code)" test "$code" = 405

# ---- 4. the answer reuses the input's compressed blocks -----------------

section "the answer: the input's compressed blocks, the rest anew"
# 20,000 samples (some 800 kB, more than the 64 KiB worth copying),
# written as Go's pprof writes them: samples before mappings and
# locations, so the answer's first bytes are the input's.
specs=("$tmp/bin/app:${ID[app]}:0x555500000000:$tmp/out/app.addrs"
    "$tmp/bin/libgreet.so:${ID[libgreet.so]}:0x7f0000000000:$tmp/out/libgreet.so.addrs")
python3 "$PP" make "$tmp/out/big.pb.gz" --samples 20000 "${specs[@]}" \
    >/dev/null || exit 99
python3 "$PP" make "$tmp/out/big.pb" --raw --samples 20000 "${specs[@]}" \
    >/dev/null || exit 99
code=$(http /symbolize/pprof "$tmp/out/big.ans.gz" "$tmp/out/b.h" \
    --max-time 60 --data-binary "@$tmp/out/big.pb.gz")
check "a profile of 20000 samples: 200 ($code)" test "$code" = 200
# (both gzip headers are 10 bytes: Python's and the hub's)
check "its first 64 KiB compressed are the input's, byte for byte" \
    cmp -s <(tail -c +11 "$tmp/out/big.pb.gz" | head -c 65536) \
    <(tail -c +11 "$tmp/out/big.ans.gz" | head -c 65536)
code=$(http /symbolize/pprof "$tmp/out/bigraw.ans.gz" "$tmp/out/b.h" \
    --max-time 60 --data-binary "@$tmp/out/big.pb")
check "inflated (gzip -t: its CRC), the answer to the uncompressed profile's ($code)" \
    eval 'gzip -t "$tmp/out/big.ans.gz" && cmp -s \
    <(gzip -dc "$tmp/out/big.ans.gz") <(gzip -dc "$tmp/out/bigraw.ans.gz")'
check "samples pass through ($(python3 "$PP" summary "$tmp/out/big.ans.gz"))" \
    test "$(python3 "$PP" summary "$tmp/out/big.ans.gz" | awk '{print $2, $6}')" \
    = "20000 $(python3 "$PP" summary "$tmp/out/bigraw.ans.gz" | awk '{print $6}')"
go tool pprof -top -nodecount=1000 "$tmp/out/big.ans.gz" \
    >"$tmp/out/bigtop.txt" 2>&1
check "go tool pprof -top names its functions (main, greet)" \
    eval 'grep -qE " main$" "$tmp/out/bigtop.txt" &&
    grep -qE " greet" "$tmp/out/bigtop.txt"'
# The same profile as Go's pprof writes it (its own gzip: blocks of
# compress/flate), through go tool pprof -proto (which is not to
# symbolize it itself).
go tool pprof -symbolize=none -proto "$tmp/out/big.pb.gz" \
    >"$tmp/out/gobig.pb.gz" \
    2>"$tmp/out/gp.err" || exit 99
code=$(http /symbolize/pprof "$tmp/out/gobig.ans.gz" "$tmp/out/b.h" \
    --max-time 60 --data-binary "@$tmp/out/gobig.pb.gz")
check "written by go tool pprof -proto: 200 ($code), its first 64 KiB compressed the input's" \
    eval 'gzip -t "$tmp/out/gobig.ans.gz" && cmp -s \
    <(tail -c +11 "$tmp/out/gobig.pb.gz" | head -c 65536) \
    <(tail -c +11 "$tmp/out/gobig.ans.gz" | head -c 65536)'
go tool pprof -top -nodecount=1000 "$tmp/out/gobig.ans.gz" \
    >"$tmp/out/gobigtop.txt" 2>&1
check "... and go tool pprof -top names its functions (main, greet)" \
    eval 'grep -qE " main$" "$tmp/out/gobigtop.txt" &&
    grep -qE " greet" "$tmp/out/gobigtop.txt"'
# Samples after the locations (a writer's own order): nothing to copy,
# the same answer.
python3 "$PP" make "$tmp/out/last.pb.gz" --samples 20000 --samples-last \
    "${specs[@]}" >/dev/null || exit 99
code=$(http /symbolize/pprof "$tmp/out/last.ans.gz" "$tmp/out/b.h" \
    --max-time 60 --data-binary "@$tmp/out/last.pb.gz")
python3 "$PP" tojson "$tmp/out/last.ans.gz" "$tmp/out/last.json" \
    >/dev/null 2>&1
python3 "$PP" tojson "$tmp/out/big.ans.gz" "$tmp/out/big.json" \
    >/dev/null 2>&1
check "samples written after the locations: 200 ($code), the same locations" \
    cmp -s "$tmp/out/last.json" "$tmp/out/big.json"
check "... and the same samples ($(python3 "$PP" summary "$tmp/out/last.ans.gz"))" \
    test "$(python3 "$PP" summary "$tmp/out/last.ans.gz")" = \
    "$(python3 "$PP" summary "$tmp/out/big.ans.gz")"
# Two gzip members (gzip(1) reads them as one stream): all of it read.
size=$(stat -c %s "$tmp/out/big.pb")
{ head -c $((size / 2)) "$tmp/out/big.pb" | gzip -1
  tail -c +$((size / 2 + 1)) "$tmp/out/big.pb" | gzip -1; } \
    >"$tmp/out/two.pb.gz" || exit 99
code=$(http /symbolize/pprof "$tmp/out/two.ans.gz" "$tmp/out/b.h" \
    --max-time 60 --data-binary "@$tmp/out/two.pb.gz")
check "a profile in two gzip members: 200 ($code), the same answer" \
    eval 'cmp -s <(gzip -dc "$tmp/out/two.ans.gz") \
    <(gzip -dc "$tmp/out/bigraw.ans.gz")'

# A block of the input ends exactly where its samples do (a full flush
# there): the answer copies every block before it, its new bytes are the
# rest of the profile alone, and its CRC is the input's up to there
# combined with theirs.
python3 - "$tmp/out/big.pb" "$tmp/out/flush.pb.gz" <<'PY' >"$tmp/out/flush.at" || exit 99
import sys, zlib
from pprofcheck import read_varint
raw = open(sys.argv[1], "rb").read()
i = 0
while True:
    key, j = read_varint(raw, i)
    if key >> 3 not in (1, 2):
        break
    n, j = read_varint(raw, j)
    i = j + n
c = zlib.compressobj(6, zlib.DEFLATED, 31)
head = c.compress(raw[:i]) + c.flush(zlib.Z_FULL_FLUSH)
open(sys.argv[2], "wb").write(head + c.compress(raw[i:]) + c.flush())
print(len(head) - 4)    # less the empty stored block's LEN and NLEN
PY
code=$(http /symbolize/pprof "$tmp/out/flush.ans.gz" "$tmp/out/b.h" \
    --max-time 60 --data-binary "@$tmp/out/flush.pb.gz")
at=$(cat "$tmp/out/flush.at")
check "a block ends where the samples do: 200 ($code), the $((at - 10)) bytes before it the input's, gzip -t, the same answer" \
    eval 'cmp -s <(head -c "$at" "$tmp/out/flush.pb.gz" | tail -c +11) \
    <(head -c "$at" "$tmp/out/flush.ans.gz" | tail -c +11) && gzip -t "$tmp/out/flush.ans.gz" &&
    cmp -s <(gzip -dc "$tmp/out/flush.ans.gz") <(gzip -dc "$tmp/out/bigraw.ans.gz")'

# ---- 5. bad input -------------------------------------------------------

section 'bad input: a clear 4xx each'
bad() {
	local kind=$1 want=$2 msg=$3 code
	python3 "$PP" evil "$kind" "$tmp/out/evil.$kind" || exit 99
	code=$(http "/symbolize/pprof${4:-}" "$tmp/out/e" "$tmp/out/e.h" \
	    --max-time 60 --data-binary "@$tmp/out/evil.$kind")
	if [ "$code" = "$want" ] && grep -q "$msg" "$tmp/out/e"; then
		pass "$kind: $code $(head -c 120 "$tmp/out/e")"
	else
		fail "$kind: want $want '$msg'" "$code $(head -c 200 "$tmp/out/e")"
	fi
}
bad truncated 400 'corrupt or truncated protobuf'
bad bomb 413 'inflates past the limit'
bad locations=20001 413 'too many locations (at most 20000'
bad strindex 400 'string index out of'
python3 "$PP" evil samplestr "$tmp/out/evil.samplestr" || exit 99
code=$(http /symbolize/pprof "$tmp/out/e.gz" "$tmp/out/e.h" \
    --max-time 60 --data-binary "@$tmp/out/evil.samplestr")
check "a sample's string index out of the table: passed through as it came ($code)" \
    test "$code" = 200
bad overlap 400 'mappings that overlap'
bad outside 400 'outside its mapping'
bad nomapping 400 'mapping that is not there'
bad dupid 400 'one id twice'
bad badid 400 'neither a build-id nor a FileID'
bad outside 400 'deadline is a number' '?deadline=soon'
: >"$tmp/out/empty"
code=$(http /symbolize/pprof "$tmp/out/e" "$tmp/out/e.h" \
    --data-binary "@$tmp/out/empty")
check "an empty body: 400 ($code $(cat "$tmp/out/e"))" test "$code" = 400
"$SYMHUB" pprof --url "$URL" "$tmp/out/evil.overlap" -o "$tmp/out/x.pb.gz" \
    2>"$tmp/out/cli.err"
st=$?
check "symhub pprof: exit 1 and the hub's reason ($(cat "$tmp/out/cli.err"))" \
    test "$st" = 1 -a ! -e "$tmp/out/x.pb.gz" -a \
    -n "$(grep 'mappings that overlap' "$tmp/out/cli.err")"
check "the hub still answers" test "$(http_code "$URL/metrics")" = 200

stop_check "symhubd stops cleanly"

# ---- 6. the large buffers kept for the next profile go back ------------

section "the large buffers kept for the next profile go back when idle"
# A profile of some 4 MB (the limit raised for it) inflates into a
# buffer of the pool; the hub keeps it after the answer, then unmaps it
# once no profile came for a maintenance tick (5 s).
hub -d "$tmp/store" -F "$tmp/scan" --symbolize-max-addresses 200000 \
    --log-file "$tmp/hub2.log"
indexed app libgreet.so
python3 "$PP" make "$tmp/out/huge.pb.gz" --samples 100000 "${specs[@]}" \
    >/dev/null || exit 99
code=$(http /symbolize/pprof "$tmp/out/huge.ans.gz" "$tmp/out/b.h" \
    --max-time 120 --data-binary "@$tmp/out/huge.pb.gz")
kept=$(metric symhub_profile_kept_bytes)
check "a profile of 100000 samples: 200 ($code), its buffers kept ($kept bytes)" \
    test "$code" = 200 -a "${kept:-0}" -gt 0
check "idle, they are unmapped (symhub_profile_kept_bytes 0 within 20 s)" \
    wait_metric symhub_profile_kept_bytes -eq 0 20
stop_check "symhubd stops cleanly"

# ---- 7. memory: the body, the profile inflated, and the new bytes ------

section "memory: a large profile costs its body and itself inflated"
# 24 MiB of samples (values of 7 random bits: gzip keeps them near their
# size) before the small profile's fields.  The hub reads them as bytes
# it never copies, and answers with the input's compressed blocks from
# the request's body: its peak RSS grows by the body and the profile
# inflated (each in huge pages), 74 MiB (85 under ASan), under 110 MiB,
# which decoding them and an answer in a buffer of its own went past
# (120-143 MiB).
hub -d "$tmp/store" -F "$tmp/scan" --symbolize-max-addresses 1000000 \
    --log-file "$tmp/hub3.log"
indexed app libgreet.so
python3 - "$tmp/out/big.pb" "$tmp/out/mem.pb.gz" <<'PY' || exit 99
import gzip, os, sys
from pprofcheck import varint
seven = bytes(b & 0x7f for b in range(256))
out = bytearray()
rnd = os.urandom(24 << 20).translate(seven)
for i in range(0, len(rnd), 4096):
    sample = b"\x12" + varint(4096) + rnd[i:i + 4096]    # value, packed
    out += b"\x12" + varint(len(sample)) + sample
out += open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(gzip.compress(bytes(out), 1))
PY
hwm() { awk '/^VmHWM/ { print $2 }' "/proc/$SYMHUBD_PID/status"; }
before=$(hwm)
code=$(http /symbolize/pprof "$tmp/out/mem.ans.gz" "$tmp/out/b.h" \
    --max-time 120 --data-binary "@$tmp/out/mem.pb.gz")
grew=$(( ($(hwm) - before) / 1024 ))
check "24 MiB of samples: 200 ($code), the peak RSS $grew MiB more (< 110)" \
    test "$code" = 200 -a "$grew" -lt 110
check "... the samples pass through ($(python3 "$PP" summary "$tmp/out/mem.ans.gz"))" \
    eval 'gzip -t "$tmp/out/mem.ans.gz" && python3 "$PP" summary "$tmp/out/mem.ans.gz" |
    grep -q "^samples 26144 "'
# A client that reads a little of the answer and goes away: the hub lets
# the answer go (the body with it: ASan would tell a use after free or a
# leak when it stops) and answers the next one whole.
python3 - "$PORT" "$tmp/out/mem.pb.gz" <<'PY' >"$tmp/out/cut.txt" 2>&1
import socket, sys
body = open(sys.argv[2], "rb").read()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"POST /symbolize/pprof HTTP/1.1\r\nHost: x\r\n"
          b"Content-Length: %d\r\n\r\n" % len(body) + body)
got = b""
while b"\r\n\r\n" not in got or len(got) < 65536:
    b = s.recv(65536)
    if not b:
        break
    got += b
print(got.split(b"\r\n")[0].decode(), len(got))
s.close()
PY
check "a client gone after $(awk '{print $NF}' "$tmp/out/cut.txt") bytes of the answer ($(head -1 "$tmp/out/cut.txt"))" \
    grep -q "^HTTP/1.1 200" "$tmp/out/cut.txt"
# Its body's buffer, as the profile's, comes from the pool of large
# buffers kept mapped: the same request again takes no fresh pages for
# either (some 11,000 faults when the body was malloc'd; ~70 now, ~230
# under ASan).
faults() { awk '{ print $10 }' "/proc/$SYMHUBD_PID/stat"; }
f0=$(faults)
code=$(http /symbolize/pprof "$tmp/out/mem2.ans.gz" "$tmp/out/b.h" \
    --max-time 120 --data-binary "@$tmp/out/mem.pb.gz")
f1=$(faults)
check "... the next one answered whole, the same ($code)" \
    cmp -s "$tmp/out/mem.ans.gz" "$tmp/out/mem2.ans.gz"
check "... in pages kept from the last: $((f1 - f0)) minor faults (< 2000)" \
    test $((f1 - f0)) -lt 2000
stop_check "symhubd stops cleanly"
finish
