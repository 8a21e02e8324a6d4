# Shared by the tests of cold misses streamed as they arrive
# (test_stream_zstd.sh, test_stream_coder.sh); sourced after lib.sh,
# never run.

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
