#!/bin/bash
# Integration test of POST /symbolize/otlp and `symhub otlp` (symhubd(8),
# "Profiles"): OpenTelemetry profiles (opentelemetry-proto v1.11.0,
# profiles/v1development), written and read by the Python code Debian's
# protoc makes from the same .proto files (python3-protobuf), a decoder
# independent of the hub's protobuf-c:
#   1. an ExportProfilesServiceRequest of two processes sharing one
#      dictionary, with unsymbolized addresses in C and C++ programs
#      built now (a PIE, a non-PIE, a shared library at a random base, a
#      program without DWARF but with its symbol table, a C++ program
#      named by a GNU build-id nobody has and its FileID as
#      process.executable.build_id.htlhash), plus a mapping nobody has
#      and one without ids: `symhub otlp` fills in every location of the
#      known modules, each frame as llvm-symbolizer-19 gives it for the
#      same address, names demangled with the linkage name kept; the
#      unknown mappings keep their raw addresses; a location symbolized
#      already, the resources, samples, attributes and tables pass
#      through;
#   2. the same through curl: Content-Encoding gzip taken, gzip answered
#      only to Accept-Encoding: gzip, application/x-protobuf;
#   3. bad input, each a clear 4xx: truncated protobuf, gzip bomb, too
#      many locations, messages nested too deep, no dictionary, a string
#      table not starting with "", indices out of the dictionary's tables
#      (string, mapping, function, stack, attribute), a mapping ending
#      before it starts, an address outside its mapping, ids that are
#      neither build-ids nor FileIDs, a bad ?deadline=, a Content-Encoding
#      the body does not have or the hub does not know; GET is 405.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_otlp.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc g++ objcopy strip readelf nm llvm-symbolizer-19 c++filt protoc
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
# the python3 that has python3-protobuf (another may come first in PATH)
PY=
for p in $(type -ap python3); do
	"$p" -c 'import google.protobuf' 2>/dev/null && { PY=$p; break; }
done
[ -n "$PY" ] || skip "no python3 with google.protobuf (python3-protobuf)"
CHECK=$top_srcdir/tests/batchcheck.py
PP=$top_srcdir/tests/pprofcheck.py
OC=$top_srcdir/tests/otlpcheck.py
unset DEBUGINFOD_URLS

section 'fixtures'
mkdir -p "$tmp"/{src,bin,scan,out,py} || exit 99
protoc --proto_path="$top_srcdir/src/symhubd/otlp" --python_out="$tmp/py" \
    opentelemetry/proto/common/v1/common.proto \
    opentelemetry/proto/resource/v1/resource.proto \
    opentelemetry/proto/profiles/v1development/profiles.proto \
    opentelemetry/proto/collector/profiles/v1development/profiles_service.proto \
    2>"$tmp/protoc.err" || { cat "$tmp/protoc.err"; exit 99; }
export PYTHONPATH=$tmp/py:$top_srcdir/tests
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
declare -A ID
for m in app appnp libgreet.so nodw cxx; do
	ID[$m]=$(buildid "$tmp/bin/$m")
	[ -n "${ID[$m]}" ] || { echo "# fixtures: $m has no build-id"; exit 99; }
done
FID=$("$PY" "$CHECK" fileid "$tmp/bin/cxx.stripped") || exit 99
NOBODY=00112233445566778899aabbccddeeff00112233
NOBODY2=ffeeddccbbaa99887766554433221100ffeeddcc
for m in app appnp libgreet.so nodw cxx; do
	"$PY" "$CHECK" sample "$tmp/bin/$m" 100 "$m" >"$tmp/out/$m.addrs" ||
	    exit 99
done
pass "fixtures: 5 programs and libraries, Python from the .proto files"

TOKENS=$tmp/tokens
TOK=$(new_token ci upload "$TOKENS") ||
    { echo "# symhub token new: $(cat "$tmp/token.err")"; exit 99; }
hub -d "$tmp/store" -F "$tmp/scan" --tokens "$TOKENS" --gsym-workers 2 \
    --symbolize-max-addresses 20000 --log-file "$tmp/hub.log"
for m in app appnp libgreet.so nodw; do
	wait_until 30 eval '[ "$(http_code "$URL/buildid/${ID[$m]}/executable")" = 200 ]'
done
code=$(put_file "/buildid/${ID[cxx]}/debuginfo" "$tmp/bin/cxx.debug" \
    "$tmp/out/put" "$tmp/out/put.h" -H "Authorization: Bearer $TOK")
code2=$(put_file "/buildid/${ID[cxx]}/executable" "$tmp/bin/cxx.stripped" \
    "$tmp/out/put" "$tmp/out/put.h" -H "Authorization: Bearer $TOK")
check "cxx uploaded (debuginfo $code, executable $code2)" \
    test "$code$code2" = 201201

# ---- 1. symhub otlp ------------------------------------------------

section 'symhub otlp: every location of the known modules filled in'
r=$((RANDOM % 4096))
"$PY" "$OC" make "$tmp/out/in.pb.gz" \
    "$tmp/bin/app:${ID[app]}::$((0x555500000000 + r * 0x100000)):$tmp/out/app.addrs" \
    "$tmp/bin/appnp:${ID[appnp]}::0:$tmp/out/appnp.addrs" \
    "$tmp/bin/libgreet.so:${ID[libgreet.so]}::$((0x7f0000000000 + r * 0x200000)):$tmp/out/libgreet.so.addrs" \
    "$tmp/bin/nodw:${ID[nodw]}::0x560000000000:$tmp/out/nodw.addrs" \
    "$tmp/bin/cxx:$NOBODY2:$FID:0x561000000000:$tmp/out/cxx.addrs" \
    "$tmp/bin/app:$NOBODY::0x562000000000:$tmp/out/app.addrs" \
    "$tmp/bin/app:::0x563000000000:$tmp/out/app.addrs" \
    >"$tmp/out/nlocs" || exit 99
nlocs=$(cat "$tmp/out/nlocs")
if "$SYMHUB" otlp --url "$URL" "$tmp/out/in.pb.gz" -o "$tmp/out/sym.pb.gz" \
    2>"$tmp/out/cli.err"; then
	pass "symhub otlp exits 0 ($nlocs locations)"
else
	fail "symhub otlp exits 0" "$(cat "$tmp/out/cli.err")"
	finish
fi
check "symhub_symbolize_addresses_total{api=\"otlp\"} counts its $nlocs locations" \
    metric_cmp 'symhub_symbolize_addresses_total{api="otlp"}' -eq "$nlocs"
check "the answer is compressed as the request was (gzip)" \
    test "$(head -c 2 "$tmp/out/sym.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b
"$PY" "$OC" tojson "$tmp/out/sym.pb.gz" "$tmp/out/sym.json" \
    >"$tmp/out/tojson.txt" 2>&1
check "names are the system_names demangled: $(tail -1 "$tmp/out/tojson.txt")" \
    grep -q ' 0 not the system_name demangled' "$tmp/out/tojson.txt"
for id in "${ID[app]}" "${ID[appnp]}" "${ID[libgreet.so]}" "${ID[nodw]}" \
    "$FID"; do
	# (all but those where the GSYM has no function: checked below
	# against POST /symbolize)
	check "mapping $id: $(grep "^mapping $id " "$tmp/out/tojson.txt" |
	    cut -d' ' -f3-)" \
	    grep -qE "^mapping $id [1-9][0-9]* of" "$tmp/out/tojson.txt"
done
check "a build-id nobody has: the mapping's locations left raw" \
    grep -qE "^mapping $NOBODY 0 of [1-9][0-9]* locations" \
    "$tmp/out/tojson.txt"
check "the rest passes through: $("$PY" "$OC" passthrough \
    "$tmp/out/in.pb.gz" "$tmp/out/sym.pb.gz" 2>&1 | tail -1)" \
    "$PY" "$OC" passthrough "$tmp/out/in.pb.gz" "$tmp/out/sym.pb.gz"

# The hub's POST /symbolize for the same addresses: the same frames,
# and the starts of their functions for the comparison below.
"$PY" "$PP" request "$tmp/out/sym.json" "$tmp/out/req.json" || exit 99
code=$(http /symbolize "$tmp/out/batch.json" "$tmp/out/batch.h" \
    --max-time 60 --data-binary "@$tmp/out/req.json")
"$PY" "$PP" merge "$tmp/out/sym.json" "$tmp/out/batch.json" \
    "$tmp/out/symstart.json" >"$tmp/out/merge.txt" 2>&1
check "each location as POST /symbolize answers ($code): $(tail -1 "$tmp/out/merge.txt")" \
    test "$code" = 200 -a "$(grep -c : "$tmp/out/merge.txt")" = 0
# llvm-symbolizer-19 on the same ELF addresses, module after module.
"$PY" -c 'import json, sys
for m in json.load(open(sys.argv[1]))["modules"]:
    print(m["file"], " ".join(r["address"] for r in m["results"]))' \
    "$tmp/out/sym.json" | while read -r elf addrs; do
	# shellcheck disable=SC2086 # one address a word
	printf '%s\n' $addrs | llvm-symbolizer-19 --no-demangle \
	    --output-style=JSON --obj="$elf"
done >"$tmp/out/llvm.json"
if "$PY" "$CHECK" compare-all "$tmp/out/symstart.json" "$tmp/out/llvm.json" \
    >"$tmp/out/agree.txt" 2>&1; then
	pass "every location agrees with llvm-symbolizer-19, frame by frame: $(tail -1 "$tmp/out/agree.txt")"
else
	fail "every location agrees with llvm-symbolizer-19" \
	    "$(head -5 "$tmp/out/agree.txt")" "$(tail -1 "$tmp/out/agree.txt")"
fi
nmods=$("$PY" -c 'import json, sys
print(len(json.load(open(sys.argv[1]))["modules"]))' "$tmp/out/sym.json")
check "5 modules symbolized (PIE, non-PIE, library, symtab, FileID): $nmods" \
    test "$nmods" = 5

# ---- 2. through curl ---------------------------------------------------

section 'POST /symbolize/otlp through curl'
"$PY" "$OC" make "$tmp/out/raw.pb" --raw \
    "$tmp/bin/app:${ID[app]}::0x555500000000:$tmp/out/app.addrs" \
    >/dev/null || exit 99
code=$(http /symbolize/otlp "$tmp/out/c.pb" "$tmp/out/c.h" \
    --max-time 60 --data-binary "@$tmp/out/raw.pb")
check "an uncompressed request: 200 ($code)" test "$code" = 200
check "Content-Type application/x-protobuf" \
    test "$(header "$tmp/out/c.h" Content-Type)" = application/x-protobuf
check "no Accept-Encoding: the answer is not compressed" \
    test -z "$(header "$tmp/out/c.h" Content-Encoding)" -a \
    "$(head -c 2 "$tmp/out/c.pb" | od -An -tx1 | tr -d ' ')" != 1f8b
check "its locations filled in: $("$PY" "$OC" passthrough "$tmp/out/raw.pb" \
    "$tmp/out/c.pb" 2>&1 | tail -1)" \
    grep -qE '^[1-9][0-9]* locations filled in' <("$PY" "$OC" passthrough \
    "$tmp/out/raw.pb" "$tmp/out/c.pb")
gzip -c "$tmp/out/raw.pb" >"$tmp/out/raw.pb.gz" || exit 99
code=$(http /symbolize/otlp "$tmp/out/cz.pb" "$tmp/out/cz.h" \
    --max-time 60 --data-binary "@$tmp/out/raw.pb.gz" \
    -H 'Content-Encoding: gzip' -H 'Accept-Encoding: gzip')
check "Content-Encoding: gzip in, Accept-Encoding: gzip: 200 ($code), Content-Encoding: $(header "$tmp/out/cz.h" Content-Encoding)" \
    test "$code" = 200 -a "$(header "$tmp/out/cz.h" Content-Encoding)" = gzip
check "the gzip answer is the plain one compressed" \
    cmp -s "$tmp/out/c.pb" <(gzip -dc "$tmp/out/cz.pb")
code=$(http /symbolize/otlp "$tmp/out/g" "$tmp/out/g.h")
check "GET /symbolize/otlp: 405 ($code)" test "$code" = 405

# ---- 3. bad input -------------------------------------------------------

section 'bad input: a clear 4xx each'
bad() {
	local kind=$1 want=$2 msg=$3 code
	"$PY" "$OC" evil "$kind" "$tmp/out/evil.$kind" || exit 99
	code=$(http "/symbolize/otlp${4:-}" "$tmp/out/e" "$tmp/out/e.h" \
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
bad deep 400 'nested too deep'
bad nodict 400 'no dictionary'
bad str0 400 'string_table does not start with'
bad strindex 400 'index out of its dictionary table'
bad mapindex 400 'index out of its dictionary table'
bad funcindex 400 'index out of its dictionary table'
bad stackindex 400 'index out of its dictionary table'
bad attrindex 400 'index out of its dictionary table'
bad limit 400 'memory_limit is below its memory_start'
bad outside 400 'outside its mapping'
bad badgnu 400 'build_id.gnu is not a build-id'
bad notstring 400 'build_id.gnu is not a build-id'
bad badhtl 400 'build_id.htlhash is not a FileID'
bad outside 400 'deadline is a number' '?deadline=soon'
code=$(http /symbolize/otlp "$tmp/out/e" "$tmp/out/e.h" \
    --data-binary "@$tmp/out/raw.pb" -H 'Content-Encoding: gzip')
check "Content-Encoding: gzip on a body that is not: 400 ($code $(cat "$tmp/out/e"))" \
    test "$code" = 400
code=$(http /symbolize/otlp "$tmp/out/e" "$tmp/out/e.h" \
    --data-binary "@$tmp/out/raw.pb" -H 'Content-Encoding: br')
check "Content-Encoding: br: 400 ($code $(cat "$tmp/out/e"))" \
    test "$code" = 400
: >"$tmp/out/empty"
code=$(http /symbolize/otlp "$tmp/out/e" "$tmp/out/e.h" \
    --data-binary "@$tmp/out/empty")
check "an empty body: 400 ($code $(cat "$tmp/out/e"))" test "$code" = 400
"$SYMHUB" otlp --url "$URL" "$tmp/out/evil.outside" -o "$tmp/out/x.pb.gz" \
    2>"$tmp/out/cli.err"
st=$?
check "symhub otlp: exit 1 and the hub's reason ($(cat "$tmp/out/cli.err"))" \
    test "$st" = 1 -a ! -e "$tmp/out/x.pb.gz" -a \
    -n "$(grep 'outside its mapping' "$tmp/out/cli.err")"
check "the hub still answers" test "$(http_code "$URL/metrics")" = 200

stop_check "symhubd stops cleanly"
finish
