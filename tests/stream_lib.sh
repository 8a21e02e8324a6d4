# Shared by the tests of cold misses streamed as they arrive
# (test_stream.sh, test_stream_zstd.sh, test_stream_coder.sh): their
# fixtures and the upstream that holds half a file back; sourced after
# lib.sh, never run.
# shellcheck shell=bash disable=SC2034,SC2154 # set for, and by, the test

# stream_fixtures [VARIANT...]: under $tmp, bin/big, an executable of 1
# MiB (a table in .rodata, compressible), and bin/VARIANT for each
# VARIANT (the same with another table: another build-id); up/many, an
# executable with ~200 KB of debuginfo (many functions and types),
# bin/many.debug its debuginfo, gdb/many stripped (for gdb).  Sets BIG,
# ID, MID and SIZE; exits 99 when a fixture cannot be made.
stream_fixtures() {
	local v n=1 i
	mkdir -p "$tmp"/{src,bin,out,up,gdb,h} || exit 99
	for v in big "$@"; do
		printf '#include <stdio.h>\nstatic const unsigned char t[1 << 20] = { %s };\nint main(int argc, char **argv) { printf("%%d\\n", t[argc]); return 0; }\n' \
		    "$n" >"$tmp/src/$v.c" || exit 99
		gcc -O0 -o "$tmp/bin/$v" "$tmp/src/$v.c" || exit 99
		n=$((n + 1))
	done
	{
		echo '#include <stdio.h>'
		for i in $(seq 1 600); do
			echo "struct s$i { int a$i; long b$i; const char *c$i; double d${i}[$i]; };"
			echo "int f$i(struct s$i *p, int x) { int y$i = x * $i; p->a$i = y$i; return p->a$i + (int)p->b$i; }"
		done
		echo 'int main(void) { struct s1 s = { 0 }; printf("%d\n", f1(&s, 2)); return 0; }'
	} >"$tmp/src/many.c" || exit 99
	(cd "$tmp/src" && gcc -g -O0 -o "$tmp/up/many" many.c) || exit 99
	objcopy --only-keep-debug "$tmp/up/many" "$tmp/bin/many.debug" ||
	    exit 99
	strip --strip-all -o "$tmp/gdb/many" "$tmp/up/many" || exit 99
	BIG=$tmp/bin/big
	ID=$(buildid "$BIG")
	MID=$(buildid "$tmp/up/many")
	[ -n "$ID" ] && [ -n "$MID" ] || { echo "# fixtures: build-ids"; exit 99; }
	SIZE=$(file_size "$BIG")
}

# stream_halves: the upstream that sends BIG in two halves, the second
# once $tmp/h/go exists, as $tmp/h/then says (tests/badupstream.py
# halves; see afterwards below).  Sets HALVES (its URL) and HPID.
stream_halves() {
	start_badupstream halves halves "$BIG" "$tmp/h" ||
	    { fail "badupstream.py halves starts"; finish; }
	HALVES=$BURL
	HPID=$BPID
}

# stream_big_fixture OUT KIB: an executable at OUT, its head (ELF header,
# program headers, build-id note) first, KIB KiB of bytes after it (a
# non-allocated section: half random, half zeros, so that zstd halves
# it), its section headers at the end.  Sets ID and SIZE.
stream_big_fixture() {
	local out=$1 kib=$2 half
	half=$((kib / 2))
	printf 'int main(void) { return 0; }\n' >"$tmp/stream_main.c" &&
	    gcc -O0 -o "$out.base" "$tmp/stream_main.c" &&
	    { head -c $((half * 1024)) /dev/urandom
	      head -c $(((kib - half) * 1024)) /dev/zero; } >"$out.blob" &&
	    objcopy --add-section .symhubtest="$out.blob" "$out.base" "$out" ||
	    return 1
	rm -f "$out.base" "$out.blob"
	ID=$(buildid "$out")
	SIZE=$(file_size "$out")
	[ -n "$ID" ]
}

# bytes FILE: how many bytes a client wrote so far (0: none yet).
bytes() {
	[ -f "$1" ] && file_size "$1" || echo 0
}
# streams FILE: wait until a client wrote something to FILE.
streams() {
	wait_until 30 eval "[ \$(bytes '$1') -gt 0 ]"
}
# afterwards WORD: what the halves upstream (tests/badupstream.py) sends
# once $tmp/h/go exists (rest, zeros, reset, stall, overflow, excess).
afterwards() {
	rm -f "$tmp/h/go"
	echo "$1" >"$tmp/h/then"
}
