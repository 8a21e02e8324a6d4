#!/bin/bash
# Benchmark (c) of issue 30: the first request for a member at the end of
# a real Debian kernel debug package (linux-image-*-amd64-dbg, about
# 860 MB of xz in 24 MiB blocks, 5.7 GB unpacked), served by symhubd -U
# from the package in place, cold (nothing extracted yet).  A build that
# seeks to the member's xz block against one that reads the package from
# its start (the commit before, built alike).
#
# Prints, for each build: the first scan of the package (until the daemon
# is ready), and the first request for each of the last BENCH_MEMBERS ELF
# members of the package (time to first byte and to the last, the CPU
# time symhubd spent meanwhile, which a loaded machine does not inflate,
# and the member's size), their median, and how the member was read (/metrics);
# then the speed-up, and a verdict against the goal: under 0.25 s, where
# a read from the start takes about 50 s.  Every answer is compared with
# the member's bytes as tar reads them.
#
# usage: tests/bench/bench_cold_kernel.sh BUILDDIR [OLD_BUILDDIR]
#   BUILDDIR, OLD_BUILDDIR   release builds (./configure CFLAGS=-O2; no
#                            sanitizers) of this change and of the code
#                            before it; without OLD_BUILDDIR only BUILDDIR
#                            is timed
#   SYMHUB_BENCH_CACHE=DIR   where the package and its last members are
#                            kept between runs (default
#                            ~/.cache/symhub-bench/kernel)
#   BENCH_KERNEL_DEB=FILE    use this package rather than download one
#   BENCH_KERNEL_PKG=NAME    the package to download (default: the newest
#                            linux-image-N-amd64-dbg apt knows)
#   BENCH_MEMBERS=3          members at the package's end to ask for
#   BENCH_KEEP=1             keep the temporary directory
# The package is fetched from the Debian archive with apt-get download
# (once; about 860 MB).  Not part of `make check`; exits 77 when a tool or
# the package is missing.

set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
new=${1:-$repo}
old=${2:-}
nmem=${BENCH_MEMBERS:-3}
cache=${SYMHUB_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/symhub-bench}/kernel

bench_name=bench_cold_kernel
# shellcheck source=tests/bench/lib.sh
. "$here/lib.sh"
check_numbers "$nmem"
[ "$nmem" -gt 0 ] || die "BENCH_MEMBERS must be positive"
for b in "$new" ${old:+"$old"}; do
	[ -x "$b/src/symhubd/symhubd" ] ||
		die "no $b/src/symhubd/symhubd; build first"
done
for tool in curl python3 dpkg-deb readelf sha256sum; do
	command -v "$tool" >/dev/null || skip "$tool not installed"
done
unset DEBUGINFOD_URLS
bench_setup symhub-bench-kernel

# ---- the package and its last members ------------------------------------
mkdir -p "$cache" || die "cannot make $cache"
deb=${BENCH_KERNEL_DEB:-}
if [ -z "$deb" ]; then
	deb=$(ls -1 "$cache"/linux-image-*-dbg_*.deb 2>/dev/null | sort -V |
	    tail -n 1)
fi
if [ -z "$deb" ]; then
	command -v apt-get >/dev/null || skip "no package and no apt-get"
	pkg=${BENCH_KERNEL_PKG:-$(apt-cache search --names-only \
	    '^linux-image-[0-9][0-9.-]*-amd64-dbg$' 2>/dev/null |
	    awk '{ print $1 }' | sort -V | tail -n 1)}
	[ -n "$pkg" ] || skip "apt knows no linux-image-*-amd64-dbg"
	echo "$bench_name: downloading $pkg (once, into $cache)" >&2
	(cd "$cache" && apt-get download "$pkg" >&2) ||
		skip "apt-get download $pkg failed"
	deb=$(ls -1 "$cache"/"$pkg"_*.deb 2>/dev/null | tail -n 1)
fi
[ -f "$deb" ] || skip "no package $deb"
tail=$cache/$(basename "$deb" .deb).tail
# The last ELF members, in archive order, as tar reads them (one pass over
# the whole package, once): $tail/N and $tail/list ("N path size").
if [ ! -s "$tail/list" ] || [ "$(wc -l <"$tail/list")" -lt "$nmem" ]; then
	echo "$bench_name: reading the last members of $(basename "$deb")" \
	    "(once)" >&2
	rm -rf "$tail" && mkdir -p "$tail" || die "cannot make $tail"
	dpkg-deb --fsys-tarfile "$deb" | python3 -c '
import collections, os, sys, tarfile
out, n = sys.argv[1], int(sys.argv[2])
last = collections.deque(maxlen=n)
with tarfile.open(fileobj=sys.stdin.buffer, mode="r|") as t:
    for m in t:
        # What a hub serves is ELF; a huge one (vmlinux) is not kept.
        if not m.isreg() or m.size < 64 or m.size > (256 << 20):
            continue
        f = t.extractfile(m)
        b = f.read(4)
        if b == b"\x7fELF":
            last.append((m.name, b + f.read()))
with open(os.path.join(out, "list.tmp"), "w") as l:
    for i, (name, data) in enumerate(last):
        with open(os.path.join(out, str(i)), "wb") as f:
            f.write(data)
        l.write("%d /%s %d\n" % (i, name.lstrip("./"), len(data)))
os.rename(os.path.join(out, "list.tmp"), os.path.join(out, "list"))
' "$tail" "$nmem" || die "cannot read $deb"
fi
members=()
while read -r i path size; do
	id=$(build_id "$tail/$i")
	[ -n "$id" ] || continue
	members+=("$id $path $size $(sha256sum <"$tail/$i" | cut -d' ' -f1)")
done < <(tail -n "$nmem" "$tail/list")
[ "${#members[@]}" -gt 0 ] || die "no ELF member with a build-id at the end"
xzinfo=$(python3 - "$deb" <<'EOF'
import lzma, struct, sys
# The data.tar.xz member's blocks, from its index (as xz -l tells).
b = open(sys.argv[1], "rb")
b.seek(8)
while True:
    h = b.read(60)
    if len(h) < 60:
        sys.exit(0)
    name, size = h[:16].decode().strip(), int(h[48:58])
    start = b.tell()
    if name.startswith("data.tar"):
        break
    b.seek(start + size + (size & 1))
b.seek(start + size - 12)
foot = b.read(12)
back = (struct.unpack("<I", foot[4:8])[0] + 1) * 4
b.seek(start + size - 12 - back)
idx = b.read(back)
# index: indicator, count (a multibyte integer).
n, shift, i = 0, 0, 1
while True:
    c = idx[i]; i += 1
    n |= (c & 0x7f) << shift; shift += 7
    if not c & 0x80:
        break
print("%s, %d MB, %d xz blocks" % (name, size // 1000000, n))
EOF
)
echo "package: $(basename "$deb") ($xzinfo)"
echo "asked for: the last ${#members[@]} ELF members"

mkdir -p "$tmp/repo"
ln "$deb" "$tmp/repo/" 2>/dev/null || cp "$deb" "$tmp/repo/" ||
	die "cannot put the package in $tmp/repo"

# ---- one build ------------------------------------------------------------
metric() {
	curl -s --max-time 5 "$url/metrics" |
	    awk -v n="$1" '$1 == n { print $2; exit }'
}
# cpu PID: the CPU time the process has used, in seconds.
cpu() {
	awk -v t="$(getconf CLK_TCK)" '{ print ($14 + $15) / t }' \
	    "/proc/$1/stat"
}
median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# run LABEL BUILDDIR: prints the figures; the median first request (s)
# into $tmp/LABEL.median.
run() {
	local label=$1 bin=$2/src/symhubd/symhubd port pid t0 t1 m id path \
	    size sum out ttfb total got seek seq c0 c1
	port=$(free_port) || die "no free port"
	url=http://127.0.0.1:$port
	t0=$(date +%s.%N)
	"$bin" -p "$port" -d "$tmp/store-$label" -U "$tmp/repo" \
	    >"$tmp/$label.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	until curl -s --max-time 2 "$url/metrics" | grep -qx 'ready 1'; do
		kill -0 "$pid" 2>/dev/null ||
			die "$label: symhubd exited: $(tail -3 "$tmp/$label.log")"
		sleep 0.2
	done
	t1=$(date +%s.%N)
	printf '%s: first scan of the package %.1f s\n' "$label" \
	    "$(echo "$t1 - $t0" | bc -l)"
	: >"$tmp/$label.times"
	for m in "${members[@]}"; do
		read -r id path size sum <<<"$m"
		out=$tmp/$label.$id
		c0=$(cpu "$pid")
		read -r ttfb total < <(curl -s --max-time 600 -o "$out" \
		    -w '%{time_starttransfer} %{time_total}\n' \
		    "$url/buildid/$id/debuginfo")
		c1=$(cpu "$pid")
		got=$(sha256sum <"$out" | cut -d' ' -f1)
		[ "$got" = "$sum" ] ||
			die "$label: $path: not the member's bytes"
		printf '  %s (%s bytes): first byte %.3f s, last %.3f s, symhubd CPU %.2f s\n' \
		    "$path" "$size" "$ttfb" "$total" "$(echo "$c1 - $c0" | bc -l)"
		echo "$total" >>"$tmp/$label.times"
		rm -f "$out"
	done
	seek=$(metric 'symhub_package_members_total{read="seek"}')
	seq=$(metric 'symhub_package_members_total{read="sequential"}')
	printf '%s: median first request %.3f s; members sought to %s, read from the start %s\n' \
	    "$label" "$(median <"$tmp/$label.times")" "${seek:-(no counter)}" \
	    "${seq:-(no counter)}"
	median <"$tmp/$label.times" >"$tmp/$label.median"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

run new "$new"
[ -n "$old" ] && run old "$old"

# ---- verdict --------------------------------------------------------------
n=$(cat "$tmp/new.median")
if [ -n "$old" ]; then
	o=$(cat "$tmp/old.median")
	printf 'first request for a member at the end: %.3f s, was %.3f s (%.0fx)\n' \
	    "$n" "$o" "$(echo "$o / $n" | bc -l)"
fi
if [ "$(echo "$n < 0.25" | bc -l)" = 1 ]; then
	echo "goal met: under 0.25 s"
else
	echo "goal missed: $n s, not under 0.25 s"
	exit 1
fi
