#!/usr/bin/env python3
"""Helpers of tests/test_batch.sh and tests/bench/bench_symbolize.sh.

    batchcheck.py sample ELF N SEED
        Addresses to ask for, one "0x..." a line: every function's start
        in ELF's symbol table (nm), then N addresses drawn at random (from
        SEED) in its executable sections, then the byte past each section.
    batchcheck.py compare ANSWER INDEX LLVM
        Module INDEX of a POST /symbolize answer against what
        `llvm-symbolizer-19 --no-demangle --output-style=JSON` printed for
        the same addresses (the module's "address" fields, in order): per
        address, the frames innermost first as function, file and line.
        Names are linkage names where DWARF has them, else DW_AT_name, as
        in GSYM; but llvm-symbolizer takes the outermost one from the
        symbol table, so there it may name a GCC clone ("f.constprop.0"
        for "f"), another alias ("...D1Ev" for "...D2Ev") or a mangled
        name DWARF does not give ("_ZN12_GLOBAL__N_11fEv" for "f"): the
        outermost frames agree when their starts, files and lines do.
        An inlined frame's name may differ the way LLVM's two tools
        differ: where DWARF gives no linkage name, GSYM qualifies
        DW_AT_name with its scopes ("ns::f::operator()", as
        llvm-gsymutil-19 does), llvm-symbolizer prints "operator()", or
        another DIE's linkage name.
        Where DWARF knows no function, either may name the symbol, or
        nothing, and llvm-symbolizer may give the line its unit's line
        table has there (GSYM, LLVM's too, keeps lines for DWARF's
        functions only).  Frames llvm-symbolizer gives no function (padding that a
        line row covers) are left out.  Prints one line per disagreement
        and a summary; exit 1 on any.
    batchcheck.py compare-all ANSWER LLVM
        compare for every module of ANSWER, LLVM holding llvm-symbolizer's
        lines for all of them, module after module.
    batchcheck.py fileid FILE
        The FileID of FILE (doc/protocol.md, "Keys").
    batchcheck.py breakpad BUILDID
        The Breakpad debug id of a GNU build-id, as Breakpad's dump_syms
        and samply make it: the first 16 bytes (zero-padded) as a
        little-endian GUID, uppercase, then the age, 0.
    batchcheck.py tecken SYMBOLIZE TECKEN
        A Tecken (/symbolicate/v5) answer against the /symbolize answer
        for the same addresses, module by module in the order of the
        Tecken request's first job's stacks (one stack a module, built so
        by test_batch.sh): the outermost function (demangled), its file
        and line, and the inlined frames.

Python 3 standard library only.
"""

import hashlib
import json
import random
import subprocess
import sys


def sample(elf, n, seed):
    out = subprocess.run(["nm", "--defined-only", elf], capture_output=True,
                         text=True, check=True).stdout
    starts = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "Tt":
            starts.add(int(f[0], 16))
    secs = []
    out = subprocess.run(["readelf", "-SW", elf], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        line = line.replace("[ ", "[")
        f = line.split()
        if len(f) >= 8 and f[0].startswith("[") and "X" in f[7] and \
                f[2] in ("PROGBITS", "NOBITS"):
            addr, size = int(f[3], 16), int(f[5], 16)
            if size:
                secs.append((addr, size))
    rng = random.Random(seed)
    addrs = sorted(starts)
    for _ in range(n):
        a, s = rng.choice(secs)
        addrs.append(a + rng.randrange(s))
    addrs += [a + s for a, s in secs]
    for a in addrs:
        print("0x%x" % a)


def ours(result):
    frames = []
    for fr in result.get("frames") or []:
        loc = ""
        if fr.get("file") and fr.get("line"):
            loc = "%s:%d" % (fr["file"], fr["line"])
        frames.append("%s@%s" % (fr["function"], loc))
    start = result["frames"][-1]["start"] if result.get("frames") else ""
    return frames, start


def theirs(entry):
    frames, start = [], ""
    for s in entry.get("Symbol") or []:
        fn = s.get("FunctionName") or ""
        loc = ""
        if s.get("FileName") and s.get("Line"):
            loc = "%s:%d" % (s["FileName"], s["Line"])
        if fn in ("", "??"):
            continue	# padding that a line row covers
        frames.append("%s@%s" % (fn, loc))
        start = s.get("StartAddress") or ""
    return frames, start


_demangled = {}


def demangle(names):
    """c++filt's reading of each name not read yet."""
    import subprocess as sp
    todo = sorted(n for n in set(names) if n not in _demangled)
    if todo:
        out = sp.run(["c++filt"], input="\n".join(todo) + "\n",
                     capture_output=True, text=True, check=True).stdout
        _demangled.update(zip(todo, out.splitlines()))


def same_name(ours_name, theirs_name):
    """The same function, named as GSYM and as llvm-symbolizer name it:
    where DWARF gives no linkage name, GSYM qualifies DW_AT_name with its
    scopes (as llvm-gsymutil-19 does), llvm-symbolizer prints DW_AT_name
    alone, or the linkage name of another DIE of the function."""
    if ours_name == theirs_name or ours_name.endswith("::" + theirs_name):
        return True
    if theirs_name.startswith("_Z"):
        demangle([theirs_name])
        d = _demangled.get(theirs_name, "")
        return d == ours_name or d.startswith(ours_name + "(")
    return False


def same_frames(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        xn, xl = x.rsplit("@", 1)
        yn, yl = y.rsplit("@", 1)
        if xl != yl or not same_name(xn, yn):
            return False
    return True


def agree(a, astart, b, bstart):
    """0: the same; 1: the same, but the outermost named by another symbol
    at the same start (a clone's suffix, an alias) or known from the
    symbol table alone; None: they differ."""
    if a == b:
        return 0
    if len(b) == 1 and b[0].endswith("@") and len(a) <= 1 and \
            (not a or a[0].endswith("@")):
        return 1	# no DWARF there: the symbol, or nothing
    if same_frames(a, b):
        return 1
    if len(a) == 1 and len(b) == 1 and a[0].endswith("@") and \
            a[0].rsplit("@", 1)[0] == b[0].rsplit("@", 1)[0]:
        # A function only the symbol table has, in a unit whose line
        # table covers it: GSYM keeps lines for DWARF's functions only
        # (llvm-gsymutil-19's too), llvm-symbolizer reads the unit's.
        return 1
    if a and len(a) == len(b) and same_frames(a[:-1], b[:-1]) and \
            a[-1].rsplit("@", 1)[1] == b[-1].rsplit("@", 1)[1] and \
            astart and bstart and int(astart, 16) == int(bstart, 16):
        return 1
    return None


def tally(pairs, label):
    """(results, llvm lines) pairs of the same addresses: prints each
    disagreement (the first 10) and a summary; returns how many."""
    bad = by_symbol = n = 0
    for r, t in pairs:
        n += 1
        a, astart = ours(r)
        b, bstart = theirs(t)
        how = agree(a, astart, b, bstart)
        if how is None:
            bad += 1
            if bad <= 10:
                print("%s%s: ours %s, llvm-symbolizer %s" %
                      (label(t), r["address"], " | ".join(a) or "-",
                       " | ".join(b) or "-"))
        else:
            by_symbol += how
    print("%d of %d addresses agree (%d named another way: by another "
          "symbol at the same start, or qualified)" % (n - bad, n, by_symbol))
    return bad


def compare(answer, index, llvm):
    with open(answer) as f:
        mod = json.load(f)["modules"][index]
    with open(llvm) as f:
        theirs_all = [json.loads(line) for line in f if line.strip()]
    results = [r for r in mod["results"] if "address" in r]
    if len(results) != len(theirs_all):
        print("%d results with an address, llvm-symbolizer printed %d" %
              (len(results), len(theirs_all)))
        return 1
    return 1 if tally(zip(results, theirs_all), lambda t: "") else 0


def compare_all(answer, llvm):
    """Every module of an answer against llvm-symbolizer's output for all
    of them in one run, in the same order."""
    with open(answer) as f:
        mods = json.load(f)["modules"]
    with open(llvm) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    pairs = []
    for m in mods:
        if m["status"] != "symbolized":
            print("%s: %s" % (m.get("buildid"), m["status"]))
            return 1
        results = [r for r in m["results"] if "address" in r]
        pairs += zip(results, lines[len(pairs):len(pairs) + len(results)])
    if len(pairs) != len(lines):
        print("%d results with an address, llvm-symbolizer printed %d" %
              (len(pairs), len(lines)))
        return 1
    return 1 if tally(pairs, lambda t: t.get("ModuleName", "?") + " ") else 0


def fileid(path):
    with open(path, "rb") as f:
        data = f.read()
    n = len(data)
    part = min(n, 4096)
    h = hashlib.sha256(data[:part] + data[n - part:] + n.to_bytes(8, "big"))
    print(h.hexdigest()[:32])


def breakpad(buildid):
    b = bytes.fromhex(buildid)[:16].ljust(16, b"\0")
    guid = b[3::-1] + b[5:3:-1] + b[7:5:-1] + b[8:]
    print(guid.hex().upper() + "0")


def tecken(symbolize, tecken_answer):
    import subprocess as sp
    with open(symbolize) as f:
        mods = json.load(f)["modules"]
    with open(tecken_answer) as f:
        stacks = json.load(f)["results"][0]["stacks"]
    names = set()
    for m in mods:
        for r in m["results"]:
            for fr in r.get("frames", []):
                names.add(fr["function"])
    names = sorted(names)
    out = sp.run(["c++filt"], input="\n".join(names) + "\n",
                 capture_output=True, text=True, check=True).stdout
    dem = dict(zip(names, out.splitlines()))
    bad = n = 0
    for m, st in zip(mods, stacks):
        for r, t in zip(m["results"], st):
            n += 1
            want = {}
            fr = r.get("frames") or []
            if fr:
                o = fr[-1]
                want["function"] = dem[o["function"]]
                if "file" in o:
                    want["file"], want["line"] = o["file"], o["line"]
                if len(fr) > 1:
                    want["inlines"] = [
                        dict([("function", dem[i["function"]])] +
                             ([("file", i["file"]), ("line", i["line"])]
                              if "file" in i else []))
                        for i in fr[:-1]]
            got = {k: t[k] for k in ("function", "file", "line", "inlines")
                   if k in t}
            if got != want:
                bad += 1
                if bad <= 5:
                    print("%s: tecken %s, /symbolize %s" %
                          (r.get("address"), got, want))
    print("%d of %d frames agree" % (n - bad, n))
    return 1 if bad or n == 0 else 0


def main():
    a = sys.argv[1:]
    if len(a) == 4 and a[0] == "sample":
        sample(a[1], int(a[2]), a[3])
        return 0
    if len(a) == 4 and a[0] == "compare":
        return compare(a[1], int(a[2]), a[3])
    if len(a) == 3 and a[0] == "compare-all":
        return compare_all(a[1], a[2])
    if len(a) == 2 and a[0] == "breakpad":
        breakpad(a[1])
        return 0
    if len(a) == 3 and a[0] == "tecken":
        return tecken(a[1], a[2])
    if len(a) == 2 and a[0] == "fileid":
        fileid(a[1])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
