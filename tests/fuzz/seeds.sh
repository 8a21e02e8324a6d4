#!/bin/bash
# seeds.sh OUTDIR: seed inputs for the fuzz harnesses, made from the test
# fixtures (tests/fixtures/*.c, built now, so their build-ids are real):
# OUTDIR/{elfinfo,gsym_dwarf,gsym,record,gopclntab}/...  Needs gcc, g++,
# objcopy, strip, and a built symhub (SYMHUB, default src/symhub/symhub)
# and symhubd (SYMHUBD) for the GSYM and record seeds, go for the
# gopclntab one (each skipped when missing).
set -eu
out=$1
here=$(cd "$(dirname "$0")" && pwd)
fix=$here/../fixtures
SYMHUB=${SYMHUB:-src/symhub/symhub}
mkdir -p "$out"/{elfinfo,gsym_dwarf,gsym,record}
w=$(mktemp -d "${TMPDIR:-/tmp}/symhub-seeds.XXXXXX")
trap 'rm -rf "$w"' EXIT
cp "$fix"/hello.c "$fix"/greet.c "$fix"/greet.h "$fix"/inl.c "$fix"/inl.cc "$w/"
(cd "$w" && gcc -g -O0 -o hello hello.c greet.c &&
    gcc -g -O2 -o inl inl.c && g++ -g -O2 -gz=none -o inlcc inl.cc &&
    gcc -g -O2 -gdwarf-4 -o inl4 inl.c && gcc -g -O2 -gz=zlib -o inlz inl.c)
for f in hello inl inlcc inl4 inlz; do
	objcopy --only-keep-debug "$w/$f" "$w/$f.debug"
	cp "$w/$f.debug" "$out/gsym_dwarf/$f.debug"
done
cp "$w/hello" "$w/hello.debug" "$out/elfinfo/"
strip -g -o "$out/elfinfo/hello.stripped" "$w/hello"
strip --strip-all -o "$out/elfinfo/hello.nosym" "$w/hello"
cp "$w/inlz.debug" "$out/elfinfo/"
if [ -x "$SYMHUB" ]; then
	for f in hello inl inlcc; do
		"$SYMHUB" gsym convert "$w/$f.debug" -o "$out/gsym/$f.gsym" >/dev/null
	done
fi
# A real Go table, when Go is installed: a small program's .gopclntab
# (Go 1.18+ layout; the corpus has the others).
mkdir -p "$out/gopclntab"
if command -v go >/dev/null 2>&1; then
	printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hi") }\n' \
	    >"$w/hello.go"
	(cd "$w" && GOCACHE=$w/gocache GOPATH=$w/gopath GOPROXY=off \
	    GOTOOLCHAIN=local GOENV=off GO111MODULE=off CGO_ENABLED=0 \
	    go build -ldflags=-w -o hello-go hello.go) &&
	    objcopy -O binary --only-section=.gopclntab "$w/hello-go" \
	    "$out/gopclntab/hello-go.gopclntab"
fi
# Record seeds: the catalog entries of a store holding an upload.
if [ -x "${SYMHUBD:-}" ] && [ -x "$SYMHUB" ]; then
	tok=$("$SYMHUB" token new fuzz upload 2>"$w/line")
	tail -n 1 "$w/line" >"$w/tokens"
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	env -u DEBUGINFOD_URLS "$SYMHUBD" -p "$port" -d "$w/store" \
	    --tokens "$w/tokens" -L "$w/log" &
	pid=$!
	for _ in $(seq 200); do
		curl -s -o /dev/null "http://127.0.0.1:$port/metrics" && break
		sleep 0.05
	done
	id=$("$SYMHUB" buildid "$w/hello")
	curl -s -o /dev/null -H "Authorization: Bearer $tok" \
	    -T "$w/hello.debug" "http://127.0.0.1:$port/buildid/$id/debuginfo" || true
	curl -s -o /dev/null -H "Authorization: Bearer $tok" \
	    -H "X-Symhub-FileID: 00112233445566778899aabbccddeeff" \
	    -T "$w/hello" "http://127.0.0.1:$port/buildid/$id/executable" || true
	kill "$pid"
	wait "$pid" || true
	find "$w/store/catalog" -type f -exec cp {} "$out/record/" \;
fi
