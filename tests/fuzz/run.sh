#!/bin/bash
# run.sh NAME [RUNS] [LIBFUZZER-ARGS...]: a long libFuzzer run of harness
# NAME (webapi, record, elfinfo, gsym, gsym_dwarf, symjson, manifest,
# pkgarchive, perfdata, metajson, demangle, gopclntab, s3xml, event), built by
# `make fuzz`, from the build directory.  The working corpus is
# tests/fuzz/runs/NAME, seeded from tests/fuzz/corpus/NAME, the
# regression cases and seeds.sh; crashes go to tests/fuzz/runs/NAME-crash-*.
# Copy each finding into tests/fuzz/regress/NAME/ once it is fixed.
#   tests/fuzz/run.sh webapi 10000000
#   tests/fuzz/run.sh gsym_dwarf 1000000
# FUZZ_SMALL=1: the converter on its small seeds only (the C fixtures,
# DWARF 4, 5 and compressed, under 20 KB), about 2,600 executions a
# second here instead of 57 with the 380 KB C++ one; corpus work/NAME-small.
set -eu
name=$1
runs=${2:-1000000}
shift $(($# > 1 ? 2 : 1))
src=$(cd "$(dirname "$0")" && pwd)
bin=tests/fuzz/fuzz_$name
[ -x "$bin" ] || { echo "run.sh: $bin missing: make fuzz" >&2; exit 1; }
work=tests/fuzz/runs/$name${FUZZ_SMALL:+-small}
mkdir -p "$work" tests/fuzz/runs/seeds
[ -d tests/fuzz/runs/seeds/elfinfo ] ||
    SYMHUB=src/symhub/symhub SYMHUBD=src/symhubd/symhubd "$src/seeds.sh" tests/fuzz/runs/seeds
dirs=("$work")
for d in "$src/corpus/$name" "$src/regress/$name" "tests/fuzz/runs/seeds/$name"; do
	[ -d "$d" ] || continue
	if [ -n "${FUZZ_SMALL:-}" ]; then
		mkdir -p "$work.seeds"
		find "$d" -maxdepth 1 -type f -size -20k -exec cp {} "$work.seeds/" \;
	else
		dirs+=("$d")
	fi
done
[ -n "${FUZZ_SMALL:-}" ] && dirs+=("$work.seeds")
case $name in
gsym_dwarf) limits=(-timeout=10 -rss_limit_mb=2048 -max_len=4000000) ;;
elfinfo) limits=(-timeout=10 -max_len=2000000) ;;
# The bound the hub lives under (symhubd.8, Packages): what libarchive
# fills is at most --archive-ratio-max times the input plus 1 MiB, which
# the RSS limit checks; what it reserves for a size a header gives (a
# cpio name, under 4 GiB) is address space only.
pkgarchive) limits=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=4200) ;;
*) limits=(-timeout=10) ;;
esac
[ -n "${FUZZ_SMALL:-}" ] && limits+=(-max_len=20000)
exec "$bin" -runs="$runs" -artifact_prefix="tests/fuzz/runs/$name-" \
    -print_final_stats=1 "${limits[@]}" "$@" "${dirs[@]}"
