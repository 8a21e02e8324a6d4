#!/usr/bin/env python3
"""Helpers of tests/test_pprof.sh and tests/bench/bench_pprof.sh: pprof
profiles written and read with a few lines of protobuf wire format (test
input only: the hub reads them with protobuf-c).

    pprofcheck.py make OUT MODULE... [--samples N] [--raw] [--samples-last]
        A profile of the runtime addresses of each MODULE,
        ELF:BUILDID:BASE:ADDRS[:DEBUG] (ADDRS: ELF addresses, one "0x..." a
        line; with --llvm FILE, '"DEBUG" ADDRESS' a location is written to
        FILE, llvm-symbolizer's input, DEBUG ELF when not given;
        BASE: where the module is loaded, 0 for a non-PIE executable; an
        empty BUILDID: a mapping without one).  One mapping a module, its
        executable segment as /proc/PID/maps shows it; one location an
        address (those outside the segment dropped); samples of stacks of
        up to 8 locations (N of them, default one a location), each with
        a label; gzip-compressed unless --raw.  Its fields in the order of
        their numbers (as Go's pprof writes them), or with --samples-last
        the mappings and locations before the samples.
    pprofcheck.py tojson PROFILE OUT
        The symbolized PROFILE as a /symbolize answer (batchcheck.py
        compare-all reads it), a module a mapping with a build-id in
        order, the ELF address of each location (through the mapping and
        the program headers of the mapping's file), its frames innermost
        first: "function" the Function's system_name; checks on the way
        that each name is the system_name demangled (c++filt), and prints
        the has_* flags of each mapping.
    pprofcheck.py request JSON OUT
        The POST /symbolize request for the addresses of a tojson answer
        (a 32-digit id as a "fileid").
    pprofcheck.py merge JSON SYMBOLIZE OUT
        Checks that each location of the tojson answer JSON has exactly the
        frames the hub's POST /symbolize answer SYMBOLIZE gives for the same
        address (names, files, lines), and writes JSON with the functions'
        starts from SYMBOLIZE (batchcheck.py uses them to tell a GCC clone's
        symbol, "f.constprop.0", from another function).
    pprofcheck.py summary PROFILE
        Counts: samples, locations, locations with lines, functions, and
        the labels' keys, for "the rest passes through".
    pprofcheck.py evil KIND OUT
        A bad profile: truncated, bomb, strindex, overlap, outside, badid,
        dupid, nomapping, locations=N; samplestr (a sample's string index
        out of the table, which the hub passes through).

Python 3 standard library only.
"""

import gzip
import json
import random
import subprocess
import sys

# ---- wire format -------------------------------------------------------


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def f_varint(num, v):
    return varint(num << 3) + varint(v) if v else b""


def f_bytes(num, b):
    return varint(num << 3 | 2) + varint(len(b)) + b


def f_packed(num, vals):
    return f_bytes(num, b"".join(varint(v) for v in vals)) if vals else b""


def read_varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """(number, value) pairs: an int for varints, bytes otherwise."""
    i = 0
    while i < len(b):
        key, i = read_varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = read_varint(b, i)
        elif wt == 2:
            n, i = read_varint(b, i)
            v = b[i:i + n]
            i += n
        elif wt == 1:
            v = int.from_bytes(b[i:i + 8], "little")
            i += 8
        elif wt == 5:
            v = int.from_bytes(b[i:i + 4], "little")
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, v


def ints(v):
    """A repeated integer field, packed (bytes) or not (int)."""
    if isinstance(v, int):
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = read_varint(v, i)
        out.append(x)
    return out


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


# ---- profiles ----------------------------------------------------------


class Writer:
    """Fields in the order of their numbers, as protobuf libraries write
    them (Go's pprof: samples, then mappings, locations, functions,
    strings), or with written=True in the order they were added (the
    mappings and locations first, then the samples)."""

    def __init__(self):
        self.strings = [""]
        self.index = {"": 0}
        self.body = []

    def s(self, text):
        if text not in self.index:
            self.index[text] = len(self.strings)
            self.strings.append(text)
        return self.index[text]

    def mapping(self, mid, start, limit, off, fname, bid):
        self.body.append(f_bytes(3, f_varint(1, mid) + f_varint(2, start) +
                                 f_varint(3, limit) + f_varint(4, off) +
                                 f_varint(5, self.s(fname)) +
                                 f_varint(6, self.s(bid) if bid else 0)))

    def location(self, lid, mid, addr):
        self.body.append(f_bytes(4, f_varint(1, lid) + f_varint(2, mid) +
                                 f_varint(3, addr)))

    def sample(self, locs, value, label):
        lab = f_bytes(3, f_varint(1, self.s("thread")) +
                      f_varint(2, self.s(label)))
        self.body.append(f_bytes(2, f_packed(1, locs) +
                                 f_packed(2, [value]) + lab))

    def finish(self, written=False):
        head = f_bytes(1, f_varint(1, self.s("samples")) +
                       f_varint(2, self.s("count")))
        period = f_bytes(11, f_varint(1, self.s("cpu")) +
                         f_varint(2, self.s("nanoseconds")))
        tail = b"".join(f_bytes(6, t.encode()) for t in self.strings)
        body = self.body
        if not written:
            # a record's first byte is its tag: 0x12 sample, 0x1a
            # mapping, 0x22 location (a stable sort keeps their order)
            body = sorted(body, key=lambda b: b[0])
        return head + b"".join(body) + tail + period + \
            f_varint(12, 10000000)


def loads(elf):
    out = []
    text = subprocess.run(["readelf", "-lW", elf], capture_output=True,
                          text=True, check=True).stdout
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            flags = "".join(f[6:-1])
            out.append((int(f[1], 16), int(f[2], 16), int(f[4], 16),
                        int(f[5], 16), "E" in flags))
    return out


def make(argv):
    out, raw, nsamples, mods, llvm = argv[0], False, None, [], None
    written = False
    rest = argv[1:]
    while rest:
        a = rest.pop(0)
        if a == "--raw":
            raw = True
        elif a == "--samples-last":
            written = True
        elif a == "--llvm":
            llvm = open(rest.pop(0), "w")
        elif a == "--samples":
            nsamples = int(rest.pop(0))
        else:
            mods.append(a)
    w = Writer()
    locs, lid = [], 1
    for mid, spec in enumerate(mods, 1):
        elf, bid, base, path = spec.split(":")[:4]
        obj = (spec.split(":") + [elf])[4]
        base = int(base, 0)
        off, va, filesz, memsz, _ = [s for s in loads(elf) if s[4]][0]
        start = base + (va & ~0xfff)
        w.mapping(mid, start, base + va + memsz, off & ~0xfff, elf, bid)
        for line in open(path):
            a = int(line, 16)
            if va <= a < va + filesz:
                w.location(lid, mid, base + a)
                if llvm:
                    llvm.write('"%s" 0x%x\n' % (obj, a))
                locs.append(lid)
                lid += 1
    rng = random.Random(1)
    n = len(locs) if nsamples is None else nsamples
    for i in range(n):
        if nsamples is None:
            stack = [locs[i]] + rng.sample(locs, min(7, len(locs)))
        else:
            stack = rng.sample(locs, min(8, len(locs)))
        w.sample(stack, 1 + i % 5, "t%d" % (i % 3))
    data = w.finish(written)
    with open(out, "wb") as f:
        f.write(data if raw else gzip.compress(data, 1))
    print(len(locs))


def parse(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    p = {"strings": [], "mappings": [], "locations": [], "functions": {},
         "samples": 0, "labels": set()}
    for num, v in fields(data):
        if num == 6:
            p["strings"].append(v.decode())
        elif num == 2:
            p["samples"] += 1
            for n2, v2 in fields(v):
                if n2 == 3:
                    p["labels"].update(x for n3, x in fields(v2) if n3 == 1)
        elif num == 3:
            m = {k: 0 for k in range(1, 11)}
            m.update(dict(fields(v)))
            p["mappings"].append(m)
        elif num == 4:
            loc = {"id": 0, "mapping": 0, "address": 0, "lines": []}
            for n2, v2 in fields(v):
                if n2 == 1:
                    loc["id"] = v2
                elif n2 == 2:
                    loc["mapping"] = v2
                elif n2 == 3:
                    loc["address"] = v2
                elif n2 == 4:
                    ln = dict(fields(v2))
                    loc["lines"].append((ln.get(1, 0),
                                         signed(ln.get(2, 0))))
            p["locations"].append(loc)
        elif num == 5:
            fn = {k: 0 for k in range(1, 6)}
            fn.update(dict(fields(v)))
            p["functions"][fn[1]] = fn
    return p


def tojson(argv):
    import batchcheck
    p = parse(argv[0])
    st = p["strings"]
    mods, names = [], []
    for m in p["mappings"]:
        if not m[6]:
            continue
        lds = loads(st[m[5]])
        res = []
        for loc in p["locations"]:
            if loc["mapping"] != m[1]:
                continue
            off = loc["address"] - m[2] + m[4]
            va = [off - o + v for o, v, fs, _, _ in lds if o <= off < o + fs]
            frames = []
            for fid, line in loc["lines"]:
                fn = p["functions"][fid]
                fr = {"function": st[fn[3]], "start": ""}
                names.append((st[fn[2]], st[fn[3]]))
                if fn[4] and line:
                    fr["file"], fr["line"] = st[fn[4]], line
                frames.append(fr)
            res.append({"address": "0x%x" % va[0], "frames": frames})
        if m[7]:
            mods.append({"buildid": st[m[6]], "status": "symbolized",
                         "file": st[m[5]], "results": res})
        print("mapping %s has_functions=%d has_filenames=%d "
              "has_line_numbers=%d has_inline_frames=%d" %
              (st[m[6]], m[7], m[8], m[9], m[10]))
    batchcheck.demangle([s for _, s in names])
    bad = [(n, s) for n, s in names
           if n != batchcheck._demangled.get(s, s)]
    with open(argv[1], "w") as f:
        json.dump({"modules": mods}, f)
    print("%d names, %d not the system_name demangled%s" %
          (len(names), len(bad), (": %s" % bad[:3]) if bad else ""))
    return 1 if bad else 0


def request(argv):
    mods = json.load(open(argv[0]))["modules"]
    body = {"modules": [{("fileid" if len(m["buildid"]) == 32 else
                          "buildid"): m["buildid"],
                         "addresses": [r["address"] for r in m["results"]]}
                        for m in mods]}
    json.dump(body, open(argv[1], "w"))


def merge(argv):
    ours = json.load(open(argv[0]))
    theirs = json.load(open(argv[1]))["modules"]
    bad = n = 0
    for m, t in zip(ours["modules"], theirs):
        for r, tr in zip(m["results"], t["results"]):
            n += 1
            a = [(f["function"], f.get("file"), f.get("line"))
                 for f in r["frames"]]
            b = [(f["function"], f.get("file"), f.get("line"))
                 for f in tr.get("frames") or []]
            if a != b or r["address"] != tr["address"]:
                bad += 1
                if bad <= 5:
                    print("%s: pprof %s, /symbolize %s" % (r["address"], a, b))
            for f, tf in zip(r["frames"], tr.get("frames") or []):
                f["start"] = tf.get("start", "")
    json.dump(ours, open(argv[2], "w"))
    print("%d of %d locations as POST /symbolize answers" % (n - bad, n))
    return 1 if bad or n == 0 else 0


def summary(argv):
    p = parse(argv[0])
    st = p["strings"]
    print("samples %d locations %d symbolized %d functions %d labels %s" %
          (p["samples"], len(p["locations"]),
           sum(1 for x in p["locations"] if x["lines"]),
           len(p["functions"]),
           ",".join(sorted(st[k] for k in p["labels"]))))


def evil(argv):
    kind, out = argv[0], argv[1]
    w = Writer()
    bid = "ab" * 20
    if kind == "truncated":
        w.mapping(1, 0x1000, 0x2000, 0, "/x", bid)
        w.location(1, 1, 0x1800)
        data = w.finish()[:-7]
    elif kind == "bomb":
        data = gzip.compress(b"\0" * (256 << 20), 9)
        open(out, "wb").write(data)
        return
    elif kind.startswith("locations="):
        n = int(kind.split("=")[1])
        w.mapping(1, 0x1000, 0x1000 + n, 0, "/x", bid)
        body = b"".join(f_bytes(4, f_varint(1, i + 1) + f_varint(2, 1) +
                                f_varint(3, 0x1000 + i)) for i in range(n))
        w.body.append(body)
        data = w.finish()
    else:
        w.mapping(1, 0x1000, 0x2000, 0, "/x",
                  "not-a-build-id" if kind == "badid" else bid)
        w.mapping(2, 0x1800 if kind == "overlap" else 0x3000, 0x4000, 0,
                  "/y", "cd" * 20)
        w.location(1, 3 if kind == "nomapping" else 1,
                   0x2800 if kind == "outside" else 0x1800)
        w.location(1 if kind == "dupid" else 2, 2, 0x3800)
        w.sample([1, 2], 1, "t")
        data = w.finish()
        if kind == "strindex":
            # a mapping whose filename is far past the string table
            data += f_bytes(3, f_varint(1, 9) + f_varint(5, 1000))
        elif kind == "samplestr":
            # a sample label whose key is far past the string table:
            # samples pass through as they came, unread
            data += f_bytes(2, f_packed(1, [1]) + f_bytes(
                3, f_varint(1, 1000)))
    with open(out, "wb") as f:
        f.write(gzip.compress(data, 1))


def main():
    cmd, argv = sys.argv[1], sys.argv[2:]
    if cmd == "make":
        make(argv)
        return 0
    if cmd == "tojson":
        return tojson(argv)
    if cmd == "request":
        request(argv)
        return 0
    if cmd == "merge":
        return merge(argv)
    if cmd == "summary":
        summary(argv)
        return 0
    if cmd == "evil":
        evil(argv)
        return 0
    print("unknown command %s" % cmd, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
