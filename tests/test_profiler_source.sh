#!/bin/bash
# The Firefox Profiler's source and assembly views against symhubd:
# POST /source/v1 and /asm/v1 in the shapes samply's API.md gives them,
# with the module named as /symbolicate/v5 names it (a Breakpad id) or
# by its codeId (the build-id).  The profiler's own flow: symbolicate a
# frame, then ask /source/v1 for the file the answer names.  Sources only
# for files the module's DWARF names; /asm/v1's instructions are those
# llvm-objdump finds in the same bytes, for x86-64 and aarch64; bad
# requests get a 4xx that says why.  (The profiler itself is a web app
# that cannot run here, offline: curl speaks for it.)
#
# Run by `make check` (top_srcdir and top_builddir set), or by hand:
#   top_srcdir=SRC top_builddir=BUILD bash tests/test_profiler_source.sh

. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

need curl gcc objcopy strip readelf nm python3 llvm-objdump-19
[ -x "$SYMHUBD" ] || skip "$SYMHUBD not built"
CHECK=$top_srcdir/tests/batchcheck.py

section 'fixtures'
mkdir -p "$tmp"/{src,bin,debug,deploy,out} || exit 99
cp "$FIXTURES"/hello.c "$FIXTURES"/greet.c "$FIXTURES"/greet.h "$tmp/src/" ||
    exit 99
# A file under the source root that no DWARF names.
echo 'int secret = 42;' >"$tmp/src/secret.c"
(cd "$tmp/src" && gcc -g -O0 -o "$tmp/bin/hello" hello.c greet.c) || exit 99
objcopy --only-keep-debug "$tmp/bin/hello" "$tmp/debug/hello.debug" || exit 99
strip -g -o "$tmp/deploy/hello" "$tmp/bin/hello" || exit 99
ID=$(buildid "$tmp/bin/hello")
[ -n "$ID" ] || { echo "# no build-id"; exit 99; }
BP=$(python3 "$CHECK" breakpad "$ID")
BASE=$(readelf -lW "$tmp/bin/hello" | awk '$1 == "LOAD" { print $3; exit }')
# greet(): its address relative to the first PT_LOAD, and its size.
read -r GADDR GSIZE < <(nm -S "$tmp/bin/hello" |
    awk '$4 == "greet" { print $1, $2; exit }')
[ -n "$GADDR" ] || { echo "# no greet in nm"; exit 99; }
GREL=$(printf '0x%x' $((16#$GADDR - BASE)))
GSIZE=$(printf '0x%x' $((16#$GSIZE)))

# aarch64: a program with no libc, when clang and lld can make one.
ARM=
cat >"$tmp/src/arm.c" <<'EOF'
int add3(int a, int b, int c) { return a * b + c; }
void _start(void) { for (;;) add3(1, 2, 3); }
EOF
if command -v clang-19 >/dev/null && command -v ld.lld >/dev/null &&
    clang-19 --target=aarch64-linux-gnu -O0 -g -nostdlib -static \
    -fuse-ld=lld -Wl,--build-id=sha1 -o "$tmp/deploy/arm" \
    "$tmp/src/arm.c" 2>/dev/null; then
	ARM=$(buildid "$tmp/deploy/arm")
fi

# --cors: the profiler is a page of another origin.
hub -d "$tmp/store" -F "$tmp/debug" -F "$tmp/deploy" \
    --source-root "$tmp/src" --cors '*' --log-file "$tmp/symhubd.log"

# post PATH JSON OUT: POST the JSON as the profiler does (a text body,
# from its origin); prints the status, the headers to OUT.hdr.
post() {
	curl -s --max-time 30 -o "$3" -D "$3.hdr" -w '%{http_code}' \
	    -H 'Origin: https://profiler.firefox.com' \
	    -H 'Content-Type: text/plain;charset=UTF-8' \
	    --data-binary "$2" "$URL$1"
}

section 'POST /source/v1'
SRC=$tmp/src/hello.c
code=$(post /source/v1 "{\"debugName\":\"hello\",\"debugId\":\"$BP\",\
\"moduleOffset\":\"$GREL\",\"file\":\"$SRC\"}" "$tmp/out/src.json")
expect_status "/source/v1, a file the DWARF names, by debugId -> 200" 200 \
    "$code" "$tmp/out/src.json"
check "... its answer is samply's JSON with the file's text" \
    python3 - "$tmp/out/src.json" "$SRC" <<'EOF'
import json, sys
a = json.load(open(sys.argv[1]))
assert set(a) == {"symbolsLastModified", "sourceLastModified", "file",
                  "source"}, a.keys()
assert a["file"] == sys.argv[2]
assert a["source"] == open(sys.argv[2]).read()
for k in ("symbolsLastModified", "sourceLastModified"):
    assert a[k] is None or (isinstance(a[k], str) and a[k].endswith("Z"))
EOF
check "... as JSON a page of another origin may read (--cors)" \
    test "$(header "$tmp/out/src.json.hdr" Content-Type)" = application/json \
    -a "$(header "$tmp/out/src.json.hdr" Access-Control-Allow-Origin)" = '*'

code=$(post /source/v1 "{\"codeId\":\"$ID\",\"file\":\"$tmp/src/greet.h\"}" \
    "$tmp/out/src2.json")
expect_status "/source/v1, a header, by codeId (the build-id) -> 200" 200 \
    "$code" "$tmp/out/src2.json"
check "... the header's text" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["source"] == open(sys.argv[2]).read()' \
    "$tmp/out/src2.json" "$tmp/src/greet.h"

code=$(post /source/v1 "{\"debugId\":\"$BP\",\"file\":\"greet.c\"}" \
    "$tmp/out/src3.json")
expect_status "/source/v1, a relative path that ends one DWARF name -> 200" \
    200 "$code" "$tmp/out/src3.json"

code=$(post /source/v1 "{\"debugId\":\"$BP\",\"file\":\"$tmp/src/./x/../hello.c\"}" \
    "$tmp/out/src4.json")
expect_status "/source/v1, the same path with . and .. -> 200" 200 "$code" \
    "$tmp/out/src4.json"

section 'the profiler: /symbolicate/v5, then /source/v1 for its file'
# The frame's address inside greet(); the file the answer names is
# asked back as it was given.
code=$(post /symbolicate/v5 "{\"memoryMap\":[[\"hello\",\"$BP\"]],\
\"stacks\":[[[0,$((GREL + 4))]]]}" "$tmp/out/tk.json")
expect_status "/symbolicate/v5 of an address in greet -> 200" 200 "$code" \
    "$tmp/out/tk.json"
FILE=$(python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["results"][0]["stacks"][0][0]
print(f.get("file", ""))' "$tmp/out/tk.json" 2>/dev/null)
check "... the frame names greet.c" test "${FILE##*/}" = greet.c
code=$(post /source/v1 "{\"debugName\":\"hello\",\"debugId\":\"$BP\",\
\"moduleOffset\":\"$GREL\",\"file\":\"$FILE\"}" "$tmp/out/tk-src.json")
expect_status "/source/v1 of the file /symbolicate/v5 named -> 200" 200 \
    "$code" "$tmp/out/tk-src.json"
check "... greet.c's text" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["source"] == open(sys.argv[2]).read()' \
    "$tmp/out/tk-src.json" "$tmp/src/greet.c"

section '/source/v1 refuses what the DWARF does not name'
code=$(post /source/v1 "{\"debugId\":\"$BP\",\"file\":\"$tmp/src/secret.c\"}" \
    "$tmp/out/no1")
expect_status "a file under --source-root the DWARF does not name -> 403" \
    403 "$code" "$tmp/out/no1"
check "... and says so" grep -q "not one the module's DWARF names" \
    "$tmp/out/no1"
code=$(post /source/v1 "{\"debugId\":\"$BP\",\"file\":\"/etc/passwd\"}" \
    "$tmp/out/no2")
expect_status "/etc/passwd -> 403" 403 "$code" "$tmp/out/no2"
code=$(post /source/v1 "{\"debugId\":\"$BP\",\"file\":\"$tmp/src/../../../../etc/passwd\"}" \
    "$tmp/out/no3")
expect_status "a path climbing out of the source root -> 403" 403 "$code" \
    "$tmp/out/no3"
code=$(post /source/v1 "{\"debugId\":\"$BP\",\"file\":\"../../etc/passwd\"}" \
    "$tmp/out/no4")
expect_status "a relative path that climbs -> 400" 400 "$code" "$tmp/out/no4"

section 'bad requests'
# expect_post DESC PATH JSON STATUS [TEXT]: the status, and the message.
expect_post() {
	local c
	c=$(post "$2" "$3" "$tmp/out/bad")
	if [ "$c" = "$4" ] && { [ -z "$5" ] || grep -q "$5" "$tmp/out/bad"; }
	then
		pass "$1"
	else
		fail "$1" "status $c, want $4 ${5:+saying '$5'}" \
		    "$(head -c 200 "$tmp/out/bad")"
	fi
}
expect_post "/source/v1, not JSON -> 400" /source/v1 '{"debugId": ' 400 \
    "malformed JSON"
expect_post "/source/v1, an array -> 400" /source/v1 '[1,2]' 400 \
    "not a JSON object"
expect_post "/source/v1, no file -> 400" /source/v1 \
    "{\"debugId\":\"$BP\"}" 400 'no "file"'
expect_post "/source/v1, no module -> 400" /source/v1 \
    '{"file":"/a.c"}' 400 "no module"
expect_post "/source/v1, a debugId not hex -> 400" /source/v1 \
    '{"debugId":"XYZ","file":"/a.c"}' 400 "not a Breakpad id"
expect_post "/source/v1, file an object -> 400" /source/v1 \
    "{\"debugId\":\"$BP\",\"file\":{}}" 400
expect_post "/source/v1, a module nobody has -> 404" /source/v1 \
    '{"debugId":"00112233445566778899AABBCCDDEEFF0","file":"/a.c"}' 404 \
    "no debuginfo here"
python3 -c 'import sys; print("{\"file\":\"/" + "a" * 20000 + "\"}")' \
    >"$tmp/out/big.json"
expect_post "/source/v1, a body of 20 KB -> 413" /source/v1 \
    "@$tmp/out/big.json" 413
code=$(http /source/v1 "$tmp/out/get" "$tmp/out/get.hdr")
expect_status "GET /source/v1 -> 405" 405 "$code" "$tmp/out/get"
check "... Allow: POST" test "$(header "$tmp/out/get.hdr" Allow)" = POST

section 'POST /asm/v1, x86-64'
code=$(post /asm/v1 "{\"debugName\":\"hello\",\"debugId\":\"$BP\",\
\"startAddress\":\"$GREL\",\"size\":\"$GSIZE\"}" "$tmp/out/asm.json")
expect_status "/asm/v1 of greet -> 200" 200 "$code" "$tmp/out/asm.json"
llvm-objdump-19 -d --no-show-raw-insn --x86-asm-syntax=intel \
    --start-address=0x$GADDR --stop-address=$((16#$GADDR + GSIZE)) \
    "$tmp/bin/hello" >"$tmp/out/objdump.txt" 2>&1
# compare.py ASM OBJDUMP START SIZE ARCH BASE: the answer's start and
# size, and every instruction at the address llvm-objdump decodes one
# at (less the first PT_LOAD's, BASE), with its mnemonic.
cat >"$tmp/out/compare.py" <<'EOF'
import json, re, sys
a = json.load(open(sys.argv[1]))
start, size, arch = int(sys.argv[3], 16), int(sys.argv[4], 16), sys.argv[5]
assert a["arch"] == arch, a["arch"]
assert isinstance(a["syntax"], list) and len(a["syntax"]) == 1
assert int(a["startAddress"], 16) == start and int(a["size"], 16) == size, \
    (a["startAddress"], a["size"])
ours = [(start + o, t.split()[0]) for o, t in a["instructions"]]
theirs = []
for line in open(sys.argv[2]):
    m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)", line)
    if m:
        theirs.append((int(m.group(1), 16) - int(sys.argv[6], 16),
                       m.group(2)))
assert len(theirs) > 3, theirs
assert ours == theirs, (ours, theirs)
print(len(ours), "instructions")
EOF
check "... its instructions are llvm-objdump's (offsets, mnemonics)" \
    python3 "$tmp/out/compare.py" "$tmp/out/asm.json" "$tmp/out/objdump.txt" \
    "$GREL" "$GSIZE" x86_64 "$(printf '%x' "$BASE")"

# The profiler's own flow: the function /symbolicate/v5 found, asked
# from its start (module_offset less function_offset) for its size.
read -r FSTART FSIZE < <(python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["results"][0]["stacks"][0][0]
print(hex(int(f["module_offset"], 16) - int(f["function_offset"], 16)),
      f["function_size"])' "$tmp/out/tk.json" 2>/dev/null)
code=$(post /asm/v1 "{\"debugName\":\"hello\",\"debugId\":\"$BP\",\
\"startAddress\":\"$FSTART\",\"size\":\"$FSIZE\"}" "$tmp/out/asm-tk.json")
expect_status "/asm/v1 of the function /symbolicate/v5 named -> 200" 200 \
    "$code" "$tmp/out/asm-tk.json"
check "... greet's instructions, as llvm-objdump decodes them" \
    python3 "$tmp/out/compare.py" "$tmp/out/asm-tk.json" \
    "$tmp/out/objdump.txt" "$GREL" "$GSIZE" x86_64 "$(printf '%x' "$BASE")"

code=$(post /asm/v1 "{\"codeId\":\"$ID\",\"startAddress\":\"$GREL\",\
\"size\":\"0x1\",\"continueUntilFunctionEnd\":true}" "$tmp/out/asm2.json")
expect_status "/asm/v1, size 1 and continueUntilFunctionEnd -> 200" 200 \
    "$code" "$tmp/out/asm2.json"
check "... the whole function, as llvm-objdump decodes it" \
    python3 "$tmp/out/compare.py" "$tmp/out/asm2.json" "$tmp/out/objdump.txt" \
    "$GREL" "$GSIZE" x86_64 "$(printf '%x' "$BASE")"

expect_post "/asm/v1, a size over 256 KiB -> 413" /asm/v1 \
    "{\"debugId\":\"$BP\",\"startAddress\":\"$GREL\",\"size\":\"0x1000000\"}" \
    413 "decodes at most"
expect_post "/asm/v1, an address in no code -> 404" /asm/v1 \
    "{\"debugId\":\"$BP\",\"startAddress\":\"0x7fffff00\",\"size\":\"0x10\"}" \
    404 "in no code section"
expect_post "/asm/v1, no size -> 400" /asm/v1 \
    "{\"debugId\":\"$BP\",\"startAddress\":\"$GREL\"}" 400
expect_post "/asm/v1, an address not hex -> 400" /asm/v1 \
    "{\"debugId\":\"$BP\",\"startAddress\":\"0xzz\",\"size\":\"0x10\"}" 400 \
    "not a hex number"
expect_post "/asm/v1, a module nobody has -> 404" /asm/v1 \
    '{"debugId":"00112233445566778899AABBCCDDEEFF0","startAddress":"0x0","size":"0x10"}' \
    404

section 'POST /asm/v1, aarch64'
if [ -n "$ARM" ]; then
	read -r AADDR ASIZE < <(nm -S "$tmp/deploy/arm" |
	    awk '$4 == "add3" { print $1, $2; exit }')
	ABASE=$(readelf -lW "$tmp/deploy/arm" |
	    awk '$1 == "LOAD" { print $3; exit }')
	AREL=$(printf '0x%x' $((16#$AADDR - ABASE)))
	code=$(post /asm/v1 "{\"codeId\":\"$ARM\",\"startAddress\":\"$AREL\",\
\"size\":\"0x$ASIZE\"}" "$tmp/out/arm.json")
	expect_status "/asm/v1 of an aarch64 function -> 200" 200 "$code" \
	    "$tmp/out/arm.json"
	llvm-objdump-19 -d --no-show-raw-insn --start-address=0x$AADDR \
	    --stop-address=$((16#$AADDR + 16#$ASIZE)) "$tmp/deploy/arm" \
	    >"$tmp/out/arm-objdump.txt" 2>&1
	check "... its instructions are llvm-objdump's" \
	    python3 "$tmp/out/compare.py" "$tmp/out/arm.json" \
	    "$tmp/out/arm-objdump.txt" "$AREL" "0x$ASIZE" aarch64 \
	    "$(printf '%x' "$ABASE")"
else
	skip_check "/asm/v1 of an aarch64 function" \
	    "clang-19 and ld.lld cannot link an aarch64 program here"
fi

section 'a page of another origin in a browser, fetching as the profiler does'
# The profiler itself is a web app that cannot run offline here; its
# fetch (RegularExternalCommunicationDelegate: a text body, mode cors,
# credentials omitted) can, in Debian's chromium, headless.
if command -v chromium >/dev/null; then
	mkdir -p "$tmp/www"
	cat >"$tmp/www/p.html" <<EOF
<html><body><pre id="out">waiting</pre><script>
async function q(path, req) {
	const r = await fetch("$URL" + path, { body: JSON.stringify(req),
	    method: "POST", mode: "cors", credentials: "omit" });
	if (r.status !== 200)
		throw new Error("status " + r.status);
	return r.json();
}
async function go() {
	const s = [];
	try {
		const j = await q("/source/v1", { debugName: "hello",
		    debugId: "$BP", moduleOffset: "$GREL", file: "$SRC" });
		s.push("source [" + j.source.split("\\n")[0] + "]");
	} catch (e) {
		s.push("source failed " + e);
	}
	try {
		const j = await q("/asm/v1", { debugName: "hello",
		    debugId: "$BP", startAddress: "$GREL", size: "$GSIZE" });
		s.push("asm " + j.arch + " " + j.instructions.length + " [" +
		    j.instructions[0][1] + "]");
	} catch (e) {
		s.push("asm failed " + e);
	}
	document.getElementById("out").textContent = s.join(" / ");
}
go();
</script></body></html>
EOF
	WPORT=$(free_port)
	python3 -m http.server "$WPORT" --bind 127.0.0.1 \
	    --directory "$tmp/www" >"$tmp/www.log" 2>&1 &
	PIDS+=($!)
	WEB=http://127.0.0.1:$WPORT
	wait_until 20 eval "[ \"\$(http_code '$WEB/p.html')\" = 200 ]"
	timeout 120 chromium --headless --no-sandbox --disable-gpu \
	    --no-first-run --user-data-dir="$tmp/chromium" \
	    --virtual-time-budget=10000 --dump-dom "$WEB/p.html" \
	    >"$tmp/out/p.dom" 2>"$tmp/out/p.err"
	n=$(python3 -c 'import json, sys
print(len(json.load(open(sys.argv[1]))["instructions"]))' "$tmp/out/asm.json")
	check "/source/v1 from the page: hello.c's first line" \
	    grep -qF "source [$(head -n 1 "$SRC")]" "$tmp/out/p.dom"
	check "/asm/v1 from the page: greet's $n instructions" \
	    grep -qF "asm x86_64 $n [push rbp]" "$tmp/out/p.dom"
else
	skip_check "a page in a browser" "no chromium"
fi

section 'metrics'
check 'the answers are counted as type="profiler"' \
    metric_cmp 'http_responses_transfer_bytes_count{code="200",type="profiler"}' -ge 8

section 'a source the hub has not, from its upstream'
# A second hub with the debuginfo and no source tree, the first as its
# upstream: /source/v1 asks it as /buildid/ID/source/PATH would.
UP=$URL
hub -d "$tmp/store2" -F "$tmp/debug" -u "$UP" --log-file "$tmp/front.log"
code=$(post /source/v1 "{\"debugId\":\"$BP\",\"file\":\"$SRC\"}" \
    "$tmp/out/up.json")
expect_status "/source/v1 of a file only the upstream has -> 200" 200 \
    "$code" "$tmp/out/up.json"
check "... its text" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["source"] == open(sys.argv[2]).read()' \
    "$tmp/out/up.json" "$SRC"
code=$(post /source/v1 "{\"debugId\":\"$BP\",\"file\":\"$tmp/src/greet.h\"}" \
    "$tmp/out/up2.json")
code2=$(curl -s -o /dev/null -w '%{http_code}' "$UP/buildid/$ID/source$tmp/src/greet.h")
check "... and a second file too ($code; the upstream itself: $code2)" \
    test "$code" = 200
rm "$tmp/src/hello.c"
code=$(post /source/v1 "{\"debugId\":\"$BP\",\"file\":\"$SRC\"}" \
    "$tmp/out/up3.json")
expect_status "... then from the front hub's store, the tree gone -> 200" \
    200 "$code" "$tmp/out/up3.json"
code=$(post /source/v1 "{\"debugId\":\"$BP\",\"file\":\"$tmp/src/secret.c\"}" \
    "$tmp/out/up4")
expect_status "... and still 403 for a file the DWARF does not name" 403 \
    "$code" "$tmp/out/up4"
finish
