#!/bin/bash
# Integration test of POST /symbolize, many modules in one request
# (symhubd(8), "Batches"), on programs and shared libraries built now:
#   1. a profile-shaped request over five modules, each reached another
#      way: an executable scanned with its debug file (by file offsets,
#      mapped through its program headers: a non-PIE, where they differ
#      from addresses), two shared libraries that only a real elfutils
#      debuginfod upstream has (fetched at once, then converted), a C++
#      program uploaded and named by its FileID, a debug file with corrupt
#      DWARF; and ids nobody has.  Each module's status; every address of
#      every symbolized module gives what llvm-symbolizer-19 says (function,
#      file, line, inline chain);
#   2. the same request again: everything from the store, same frames;
#   3. a deadline: an upstream that holds its answers makes a module
#      "timeout" while the rest is answered; once it answers, the next
#      request says "no_debuginfo";
#   4. bad input: malformed and deeply nested JSON, wrong ids, over the
#      limits (413 naming the limit), GET (405), demangled names;
#   5. a stop while a batch waits: the daemon exits at once, cleanly;
#   6. POST /symbolicate/v5 (Tecken) in samply's request shape, modules by
#      Breakpad id: every frame as /symbolize says, demangled; found and
#      missing modules; malformed requests.
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_batch.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc g++ objcopy strip readelf nm python3 debuginfod \
    llvm-symbolizer-19 c++filt
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
[ -x "$SYMHUB" ] || skip "$SYMHUB not built"
CHECK=$top_srcdir/tests/batchcheck.py
FLIP=$top_srcdir/tests/dwarf_mutate.py
unset DEBUGINFOD_URLS

section 'fixtures'
mkdir -p "$tmp"/{src,bin,scan,up,out,gate} || exit 99
cp "$FIXTURES"/*.c "$FIXTURES"/*.h "$FIXTURES"/inl.cc "$tmp/src/" || exit 99
(
	cd "$tmp/src" &&
	    gcc -g -O2 -no-pie -o "$tmp/bin/app" inl.c &&
	    gcc -g -O2 -fPIC -shared -o "$tmp/bin/libgreet.so" greet.c &&
	    gcc -g -O2 -fPIC -shared -o "$tmp/bin/libspin.so" spinlib.c &&
	    g++ -g -O2 -o "$tmp/bin/cxx" inl.cc &&
	    mkdir -p bad && cp inl.c bad/ && cd bad &&
	    gcc -g -O2 -o "$tmp/bin/bad" inl.c
) || exit 99
for m in app libgreet.so libspin.so cxx bad; do
	objcopy --only-keep-debug "$tmp/bin/$m" "$tmp/bin/$m.debug" &&
	    strip -s -o "$tmp/bin/$m.stripped" "$tmp/bin/$m" || exit 99
done
pick=$(python3 "$FLIP" pick "$tmp/bin/bad.debug") &&
    python3 "$FLIP" flip "$tmp/bin/bad.debug" "$tmp/scan/bad.debug" \
    "$pick" || { echo "# cannot corrupt bad.debug"; exit 99; }
# Scanned: app (debug file and stripped executable), bad.  Upstream: the
# two libraries.  Uploaded: cxx.
cp "$tmp/bin/app.debug" "$tmp/scan/" &&
    cp "$tmp/bin/app.stripped" "$tmp/scan/app" &&
    cp "$tmp/bin/libgreet.so.debug" "$tmp/bin/libspin.so.debug" "$tmp/up/" &&
    cp "$tmp/bin/libgreet.so.stripped" "$tmp/up/libgreet.so" &&
    cp "$tmp/bin/libspin.so.stripped" "$tmp/up/libspin.so" || exit 99
declare -A ID
for m in app libgreet.so libspin.so cxx bad; do
	ID[$m]=$(buildid "$tmp/bin/$m")
	[ -n "${ID[$m]}" ] || { echo "# fixtures: $m has no build-id"; exit 99; }
done
FID=$(python3 "$CHECK" fileid "$tmp/bin/cxx.stripped") || exit 99
NOBODY=00112233445566778899aabbccddeeff00112233
LATE=ffeeddccbbaa99887766554433221100ffeeddcc
UNMAPPED=0123456789abcdef0123456789abcdef
# Addresses: every function's start and 300 random ones a module.
for m in app libgreet.so libspin.so cxx; do
	python3 "$CHECK" sample "$tmp/bin/$m" 300 "$m" >"$tmp/out/$m.addrs" ||
	    exit 99
done
# app's as file offsets: through the executable's PT_LOADs, backwards.
python3 - "$tmp/bin/app" "$tmp/out/app.addrs" >"$tmp/out/app.offs" <<'EOF' ||
import subprocess, sys
loads = []
for l in subprocess.run(["readelf", "-lW", sys.argv[1]], capture_output=True,
                        text=True, check=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == "LOAD":
        loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
for a in open(sys.argv[2]):
    a = int(a, 16)
    for off, va, sz in loads:
        if va <= a < va + sz:
            print("0x%x" % (a - va + off))
            break
    else:
        print("0x%x" % a)	# past every segment: its own error
EOF
    exit 99
cmp -s "$tmp/out/app.addrs" "$tmp/out/app.offs" &&
    { echo "# fixtures: app's offsets are its addresses (PIE?)"; exit 99; }
pass "fixtures: 5 programs and libraries, $(wc -l <"$tmp/out/app.addrs") addresses in app"

# ---- helpers ----------------------------------------------------------

# request OUT DEADLINE_MS MODULE...: write a request body to OUT; each
# MODULE is KEY:ID:FIELD:FILE (KEY buildid or fileid, FIELD addresses or
# offsets, FILE one address a line; "-" for none).
request() {
	python3 - "$@" <<'EOF'
import json, sys
out, deadline, mods = sys.argv[1], int(sys.argv[2]), []
for spec in sys.argv[3:]:
    key, ident, field, path = spec.split(":")
    addrs = [] if path == "-" else [l.strip() for l in open(path) if l.strip()]
    mods.append({key: ident, field: addrs})
body = {"modules": mods}
if deadline >= 0:
    body["deadline_ms"] = deadline
with open(out, "w") as f:
    json.dump(body, f)
EOF
}

# post BODY-FILE OUT [CURL-ARGS...]: POST /symbolize; answer to OUT and
# OUT.hdr; prints the status.
post() {
	local body=$1 out=$2
	shift 2
	http /symbolize "$out" "$out.hdr" --max-time 120 \
	    -H 'Content-Type: application/json' --data-binary "@$body" "$@"
}

# field OUT INDEX KEY: a module's field of an answer ("" when absent).
field() {
	python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["modules"][int(sys.argv[2])]
print(m.get(sys.argv[3], ""))' "$@" 2>/dev/null
}

# expect_module DESC OUT INDEX STATUS [HOW]
expect_module() {
	local st how
	st=$(field "$2" "$3" status)
	how=$(field "$2" "$3" how)
	if [ "$st" = "$4" ] && { [ -z "$5" ] || [ "$how" = "$5" ]; }; then
		pass "$1"
	else
		fail "$1" "status '$st' how '$how' error '$(field "$2" "$3" \
		    error)', want '$4' ${5:+how '$5'}"
	fi
}

# agree DESC OUT INDEX FILE: module INDEX's frames are llvm-symbolizer's on
# FILE for the same addresses.
agree() {
	local addrs=$tmp/out/agree.addrs
	python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["modules"][int(sys.argv[2])]
for r in m["results"]:
    if "address" in r:
        print(r["address"])' "$2" "$3" >"$addrs" 2>/dev/null
	llvm-symbolizer-19 --no-demangle --output-style=JSON \
	    --obj="$4" <"$addrs" >"$tmp/out/agree.llvm" 2>/dev/null
	if python3 "$CHECK" compare "$2" "$3" "$tmp/out/agree.llvm" \
	    >"$tmp/out/agree.txt" 2>&1; then
		pass "$1: $(tail -1 "$tmp/out/agree.txt")"
	else
		fail "$1" "$(head -5 "$tmp/out/agree.txt")" \
		    "$(tail -1 "$tmp/out/agree.txt")"
	fi
}

# ---- 1. a profile-shaped request ------------------------------------

section 'a profile-shaped request: five modules, each its own way'
start_debuginfod up "" "$tmp/up" ||
    { fail "elfutils debuginfod starts" "$(tail -3 "$tmp/up.log")"; finish; }
wait_http 30 "$DURL/buildid/${ID[libspin.so]}/debuginfo" 200 ||
    { fail "debuginfod indexes the libraries" "$(tail -3 "$tmp/up.log")"; finish; }
UP=$DURL
# The gate upstream holds each request until $tmp/gate/open exists, then
# says 404: open now, closed for section 3.
start_badupstream gate gate "$tmp/gate" ||
    { fail "the gate upstream starts" "$(cat "$tmp/gate.err")"; finish; }
GATE=$BURL
touch "$tmp/gate/open"
TOKENS=$tmp/tokens
TOK=$(new_token ci upload "$TOKENS") ||
    { echo "# symhub token new: $(cat "$tmp/token.err")"; exit 99; }
hub -d "$tmp/store" -F "$tmp/scan" -u "$UP name=up" -u "$GATE name=gate" \
    --tokens "$TOKENS" --gsym-workers 2 --log-file "$tmp/hub.log"
wait_until 30 eval '[ "$(http_code "$URL/buildid/${ID[app]}/executable")" = 200 ]'
wait_until 30 eval '[ "$(http_code "$URL/buildid/${ID[bad]}/debuginfo")" = 200 ]'
code=$(put_file "/buildid/${ID[cxx]}/debuginfo" "$tmp/bin/cxx.debug" \
    "$tmp/out/put" "$tmp/out/put.h" -H "Authorization: Bearer $TOK")
code2=$(put_file "/buildid/${ID[cxx]}/executable" "$tmp/bin/cxx.stripped" \
    "$tmp/out/put" "$tmp/out/put.h" -H "Authorization: Bearer $TOK")
check "cxx uploaded (debuginfo $code, executable $code2)" \
    test "$code$code2" = 201201

request "$tmp/out/req1" 60000 \
    "buildid:${ID[app]}:offsets:$tmp/out/app.offs" \
    "buildid:${ID[libgreet.so]}:addresses:$tmp/out/libgreet.so.addrs" \
    "buildid:${ID[libspin.so]}:addresses:$tmp/out/libspin.so.addrs" \
    "fileid:$FID:addresses:$tmp/out/cxx.addrs" \
    "buildid:${ID[bad]}:addresses:$tmp/out/app.addrs" \
    "buildid:$NOBODY:addresses:$tmp/out/app.addrs" \
    "fileid:$UNMAPPED:offsets:$tmp/out/app.offs" || exit 99
code=$(post "$tmp/out/req1" "$tmp/out/a1")
expect_status "POST /symbolize, 7 modules -> 200" 200 "$code" "$tmp/out/a1"
check "... application/json" grep -qi '^content-type: application/json' \
    "$tmp/out/a1.hdr"
expect_module "app (scanned, by file offsets): symbolized, converted now" \
    "$tmp/out/a1" 0 symbolized converted
agree "... every address as llvm-symbolizer-19 says" "$tmp/out/a1" 0 \
    "$tmp/bin/app"
check "... each result gives the file offset it was asked as" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["modules"][0]["results"]
offs = [l.strip() for l in open(sys.argv[2])]
sys.exit(len(r) != len(offs) or any(x["file_offset"] != o
    for x, o in zip(r, offs)))' "$tmp/out/a1" "$tmp/out/app.offs"
check "... and maps them to the addresses (${#ID[app]} hex digits of build-id)" \
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["modules"][0]["results"]
addrs = [int(l, 16) for l in open(sys.argv[2])]
got = [int(x["address"], 16) for x in r if "address" in x]
miss = [x for x in r if "address" not in x]
# Only the addresses past every section end may be outside a segment.
sys.exit(got != [a for a in addrs if a in got] or len(got) < len(addrs) - 4
    or any("no loadable segment" not in x["error"] for x in miss))' \
    "$tmp/out/a1" "$tmp/out/app.addrs"
expect_module "libgreet.so (upstream only): fetched, converted" \
    "$tmp/out/a1" 1 symbolized "fetched, converted"
agree "... every address as llvm-symbolizer-19 says" "$tmp/out/a1" 1 \
    "$tmp/bin/libgreet.so"
expect_module "libspin.so (upstream only): fetched, converted" \
    "$tmp/out/a1" 2 symbolized "fetched, converted"
agree "... every address as llvm-symbolizer-19 says" "$tmp/out/a1" 2 \
    "$tmp/bin/libspin.so"
expect_module "cxx (uploaded, named by FileID): symbolized" \
    "$tmp/out/a1" 3 symbolized
check "... the answer names its build-id" \
    test "$(field "$tmp/out/a1" 3 buildid)" = "${ID[cxx]}"
agree "... every address as llvm-symbolizer-19 says" "$tmp/out/a1" 3 \
    "$tmp/bin/cxx"
expect_module "bad (corrupt DWARF): conversion_failed" "$tmp/out/a1" 4 \
    conversion_failed
expect_module "an id nobody has: no_debuginfo" "$tmp/out/a1" 5 no_debuginfo
expect_module "a FileID nobody uploaded: unknown_fileid" "$tmp/out/a1" 6 \
    unknown_fileid
check "... modules that failed give no results" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["modules"]
sys.exit(any(x["results"] for x in m[4:]) or
    any(not x.get("error") for x in m[4:]))' "$tmp/out/a1"
check "both libraries fetched from elfutils, one request each" test "$(metric \
    'symhub_upstream_requests_total{upstream="up",outcome="hit"}')" = 2
check "metrics: one batch, 4 modules symbolized" test "$(metric \
    symhub_batch_requests_total) $(metric \
    'symhub_batch_modules_total{status="symbolized"}')" = "1 4"

section 'the same request again: from the store'
code=$(post "$tmp/out/req1" "$tmp/out/a2")
expect_status "POST /symbolize again -> 200" 200 "$code" "$tmp/out/a2"
check "... every symbolized module now 'stored'" test "$(for i in 0 1 2 3; do
	field "$tmp/out/a2" $i how; done | sort -u)" = stored
check "... the same frames as the first time" python3 -c '
import json, sys
a, b = (json.load(open(p))["modules"] for p in sys.argv[1:])
sys.exit([m["results"] for m in a] != [m["results"] for m in b])' \
    "$tmp/out/a1" "$tmp/out/a2"
# The answer is sent as it is written: a client that reads a little of it
# and goes away costs the hub nothing it keeps.
curl -s --max-time 60 --data-binary "@$tmp/out/req1" "$URL/symbolize" |
    head -c 2000 >"$tmp/out/part"
code=$(post "$tmp/out/req1" "$tmp/out/a2b")
check "a client that left mid-answer: the next one gets it whole" \
    cmp -s "$tmp/out/a2" "$tmp/out/a2b"
check "... nothing asked upstream again" test "$(grep -c \
    "GET /buildid/${ID[libgreet.so]}/" "$tmp/up.log")" = 1

# ---- Tecken --------------------------------------------------------------

section 'POST /symbolicate/v5 (Tecken), as samply and the Firefox Profiler send it'
# A job: each module by debug name and Breakpad id, one stack a module,
# frames at addresses relative to the module's first PT_LOAD; a module
# nobody has gets a stack of its own.
TK=(app libgreet.so libspin.so cxx)
for m in "${TK[@]}"; do
	echo "$m $(python3 "$CHECK" breakpad "${ID[$m]}") $(readelf -lW \
	    "$tmp/bin/$m" | awk '$1 == "LOAD" { print $3; exit }')" \
	    "$tmp/out/$m.addrs"
done >"$tmp/out/tk.mods"
python3 - "$tmp/out/tk.mods" "$(python3 "$CHECK" breakpad "$NOBODY")" \
    "$tmp/out" <<'EOF' || exit 99
import json, sys
mm, stacks = [], []
for i, line in enumerate(open(sys.argv[1])):
    name, bp, base, path = line.split()
    addrs = [int(a, 16) for a in open(path)]
    mm.append([name, bp])
    stacks.append([[i, a - int(base, 16)] for a in addrs])
mm.append(["nobody.so", sys.argv[2]])
stacks.append([[len(mm) - 1, 0x1234], [0, stacks[0][0][1]]])
job = {"memoryMap": mm, "stacks": stacks}
json.dump({"jobs": [job, job]}, open(sys.argv[3] + "/tk.req", "w"))
json.dump(job, open(sys.argv[3] + "/tk1.req", "w"))
EOF
request "$tmp/out/tk.sym" -1 \
    "buildid:${ID[app]}:addresses:$tmp/out/app.addrs" \
    "buildid:${ID[libgreet.so]}:addresses:$tmp/out/libgreet.so.addrs" \
    "buildid:${ID[libspin.so]}:addresses:$tmp/out/libspin.so.addrs" \
    "buildid:${ID[cxx]}:addresses:$tmp/out/cxx.addrs" || exit 99
code=$(post "$tmp/out/tk.sym" "$tmp/out/tk.syma")
code2=$(http /symbolicate/v5 "$tmp/out/tk.a" "$tmp/out/tk.a.hdr" \
    --max-time 120 --data-binary "@$tmp/out/tk.req")
expect_status "POST /symbolicate/v5, two jobs of 5 modules -> 200" 200 \
    "$code2" "$tmp/out/tk.a"
if [ "$code" = 200 ] && python3 "$CHECK" tecken "$tmp/out/tk.syma" \
    "$tmp/out/tk.a" >"$tmp/out/tk.txt" 2>&1; then
	pass "... every frame: /symbolize's function (demangled), file, line and inlines: $(tail -1 "$tmp/out/tk.txt")"
else
	fail "... every frame as /symbolize says" "/symbolize: $code" \
	    "$(head -5 "$tmp/out/tk.txt")"
fi
check "... found_modules: the 4 symbolized true, nobody.so false, with its error" \
    python3 -c '
import json, sys
res = json.load(open(sys.argv[1]))["results"]
for r in res:
    fm, me = r["found_modules"], r.get("module_errors", {})
    if sorted(fm.values()) != [False, True, True, True, True]:
        sys.exit(1)
    bad = [k for k, v in fm.items() if not v]
    if not bad[0].startswith("nobody.so/") or list(me) != bad or \
            me[bad[0]][0]["name"] != "no_debuginfo":
        sys.exit(1)
    st = r["stacks"][-1]
    if st[0] != {"frame": 0, "module_offset": "0x1234",
                 "module": "nobody.so"} or st[1]["frame"] != 1:
        sys.exit(1)
sys.exit(len(res) != 2 or res[0] != res[1])' "$tmp/out/tk.a"
code=$(http /symbolicate/v5 "$tmp/out/tk1.a" "$tmp/out/tk1.a.hdr" \
    --max-time 120 --data-binary "@$tmp/out/tk1.req")
check "... one job without \"jobs\" around it: the same result ($code)" \
    python3 -c '
import json, sys
a, b = (json.load(open(p))["results"] for p in sys.argv[1:])
sys.exit(a[0] != b[0] or len(b) != 1)' "$tmp/out/tk.a" "$tmp/out/tk1.a"
printf '{"memoryMap":[["a","%s"]],"stacks":[[[1,16]]]}' \
    "$(python3 "$CHECK" breakpad "${ID[app]}")" >"$tmp/out/tk.bad1"
printf '{"memoryMap":[["a","XYZ"]],"stacks":[]}' >"$tmp/out/tk.bad2"
for b in 1 2; do
	code=$(http /symbolicate/v5 "$tmp/out/tkb$b" "$tmp/out/tkb$b.h" \
	    --data-binary "@$tmp/out/tk.bad$b")
	expect_status "malformed Tecken request $b -> 400" 400 "$code" \
	    "$tmp/out/tkb$b"
done
check "... a module index beyond the memoryMap is named" \
    grep -q 'beyond the memoryMap' "$tmp/out/tkb1"

# ---- 3. the deadline ----------------------------------------------------

section 'a deadline: what is not ready is reported, the rest answered'
rm -f "$tmp/gate/open"
# The gate holds its answer until told, so the deadline, not the
# machine's speed, ends the wait; 3 s only has to cover the request's way
# to its first step (the deadline counts from its head).
request "$tmp/out/req3" 3000 \
    "buildid:${ID[app]}:offsets:$tmp/out/app.offs" \
    "buildid:$LATE:addresses:$tmp/out/app.addrs" || exit 99
code=$(post "$tmp/out/req3" "$tmp/out/a3")
expect_status "POST /symbolize with deadline_ms 3000 -> 200" 200 "$code" \
    "$tmp/out/a3"
expect_module "app: symbolized" "$tmp/out/a3" 0 symbolized stored
expect_module "an id the gate upstream holds: timeout" "$tmp/out/a3" 1 \
    timeout
check "... its error says so" grep -q 'still fetching at the deadline' \
    "$tmp/out/a3"
check "... the gate upstream was asked for it" \
    grep -q "GET /buildid/$LATE/debuginfo" "$tmp/gate/log"
check "metrics: one batch past its deadline" \
    test "$(metric symhub_batch_deadlines_total)" = 1
GATE404='symhub_upstream_requests_total{upstream="gate",outcome="notfound"}'
n=$(metric "$GATE404")
touch "$tmp/gate/open"
# The fetch goes on without the request: both upstreams now say 404.
wait_metric "$GATE404" -gt "$n"
code=$(post "$tmp/out/req3" "$tmp/out/a4")
expect_module "once the upstream answered: no_debuginfo" "$tmp/out/a4" 1 \
    no_debuginfo

# ---- 4. bad input -------------------------------------------------------

section 'bad input'
printf '%s' '{"modules":[' >"$tmp/out/bad1"
printf '%s' '[1,2,3]' >"$tmp/out/bad2"
python3 -c 'print("{\"modules\":" + "[" * 5000 + "]" * 5000 + "}")' \
    >"$tmp/out/bad3"
printf '{"modules":[{"buildid":"XYZ","addresses":[1]}]}' >"$tmp/out/bad4"
printf '{"modules":[{"buildid":"%s"}]}' "${ID[app]}" >"$tmp/out/bad5"
printf '{"modules":[{"buildid":"%s","addresses":[-1]}]}' "${ID[app]}" \
    >"$tmp/out/bad6"
printf '{"modules":[{"fileid":"%s","addresses":[1]}]}' "${ID[app]}" \
    >"$tmp/out/bad7"
printf '{"modules":[],"deadline_ms":"soon"}' >"$tmp/out/bad8"
for b in 1 2 3 4 5 6 7 8; do
	code=$(post "$tmp/out/bad$b" "$tmp/out/b$b")
	expect_status "malformed body $b ($(head -c 40 "$tmp/out/bad$b")) -> 400" \
	    400 "$code" "$tmp/out/b$b"
done
check "... each 400 says what is wrong" grep -q 'lowercase hex' "$tmp/out/b4"
printf '{"modules":[]}' >"$tmp/out/empty"
code=$(post "$tmp/out/empty" "$tmp/out/e")
check "no modules -> 200, an empty list" test "$code $(cat "$tmp/out/e")" = \
    '200 {"modules":[]}'
code=$(http /symbolize "$tmp/out/g" "$tmp/out/g.hdr")
check "GET /symbolize -> 405, Allow: POST" test "$code $(header \
    "$tmp/out/g.hdr" Allow)" = "405 POST"
# Demangled: every name of the C++ program's answer, as c++filt prints it.
python3 -c 'import json, sys
print(json.dumps({"demangle": True, "modules": [{"buildid": sys.argv[1],
    "addresses": [l.strip() for l in open(sys.argv[2])]}]}))' "${ID[cxx]}" \
    "$tmp/out/cxx.addrs" >"$tmp/out/req7"
code=$(post "$tmp/out/req7" "$tmp/out/a7")
names() {	# names ANSWER: every frame's function, one a line
	python3 -c 'import json, sys
for r in json.load(open(sys.argv[1]))["modules"][0]["results"]:
    for f in r["frames"]:
        print(f["function"])' "$1"
}
names "$tmp/out/a1" >"$tmp/out/n1.all" 2>/dev/null
python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["modules"][3]
json.dump({"modules": [m]}, open(sys.argv[2], "w"))' "$tmp/out/a1" \
    "$tmp/out/a1.cxx" && names "$tmp/out/a1.cxx" | c++filt >"$tmp/out/n1"
names "$tmp/out/a7" >"$tmp/out/n7" 2>/dev/null
nmangled=$(names "$tmp/out/a1.cxx" | grep -c '^_Z')
if [ "$code" = 200 ] && [ "$nmangled" -gt 50 ] &&
    cmp -s "$tmp/out/n1" "$tmp/out/n7"; then
	pass "\"demangle\": true -> c++filt's names ($nmangled mangled ones)"
else
	fail "\"demangle\": true -> c++filt's names" "status $code," \
	    "$nmangled mangled" "$(diff "$tmp/out/n1" "$tmp/out/n7" | head -4)"
fi

stop_symhubd
hub -d "$tmp/store" --symbolize-max-addresses 10 --symbolize-max-modules 2 \
    --log-file "$tmp/hub2.log"
request "$tmp/out/req5" -1 "buildid:${ID[app]}:addresses:$tmp/out/app.addrs" ||
    exit 99
code=$(post "$tmp/out/req5" "$tmp/out/a5")
expect_status "over --symbolize-max-addresses -> 413" 413 "$code" "$tmp/out/a5"
check "... naming the limit" grep -q 'at most 10' "$tmp/out/a5"
request "$tmp/out/req6" -1 "buildid:${ID[app]}:addresses:-" \
    "buildid:${ID[app]}:addresses:-" "buildid:${ID[app]}:addresses:-" ||
    exit 99
code=$(post "$tmp/out/req6" "$tmp/out/a6")
expect_status "over --symbolize-max-modules -> 413" 413 "$code" "$tmp/out/a6"
check "... naming the limit" grep -q 'too many modules (at most 2)' \
    "$tmp/out/a6"
# ---- 5. stop while waiting ---------------------------------------------

section 'a stop while a batch waits'
stop_symhubd
rm -f "$tmp/gate/open"
hub -d "$tmp/store" -u "$GATE name=gate" --log-file "$tmp/hub3.log"
request "$tmp/out/req8" 60000 "buildid:$NOBODY:addresses:-" || exit 99
post "$tmp/out/req8" "$tmp/out/a8" >"$tmp/out/a8.code" &
cpid=$!
wait_until 30 eval "grep -q 'GET /buildid/$NOBODY/debuginfo' '$tmp/gate/log'"
stop_check "SIGTERM while a batch waits on an upstream: exits 0"
wait "$cpid"
code=$(cat "$tmp/out/a8.code")
check "... the waiting client got an answer or a reset, not a hang ($code)" \
    test "$code" = 200 -o "$code" = 503 -o "$code" = 000
touch "$tmp/gate/open"

finish
