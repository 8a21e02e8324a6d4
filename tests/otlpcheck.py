#!/usr/bin/env python3
"""Helpers of tests/test_otlp.sh: OpenTelemetry profiles (an
ExportProfilesServiceRequest) written and read with the Python code that
Debian's protoc makes from the .proto files the hub is built from
(python3-protobuf): a decoder independent of the hub's protobuf-c.

PYTHONPATH must hold that generated code (protoc --python_out) and
tests/ (pprofcheck.py, batchcheck.py).

    otlpcheck.py make OUT MODULE... [--raw] [--processes P] [--samples N]
            [--llvm FILE]
        A request of P (2) resources (processes) sharing one dictionary;
        MODULE is ELF:GNU:HTLHASH:BASE:ADDRS[:DEBUG] (an empty GNU or
        HTLHASH: no such attribute; BASE where the module is loaded, 0
        for a non-PIE executable; ADDRS ELF addresses, one "0x..." a
        line; with --llvm, '"DEBUG" ADDRESS' a location of the first
        process goes to FILE, llvm-symbolizer's input, DEBUG ELF when
        not given).  One mapping a module and a process, its executable
        segment as /proc/PID/maps shows it; one location an address;
        stacks of up to 8 locations, N samples a process (default one a
        location) with attributes; plus one location symbolized already
        (function "already_there"), which must pass through.
        gzip-compressed unless --raw.  Prints the number of locations.
    otlpcheck.py tojson IN OUT
        The symbolized request IN as a /symbolize answer (what
        pprofcheck.py request and merge and batchcheck.py compare-all
        read): a module a mapping of the first resource with an id, the
        ELF address of each location (through the mapping and the
        program headers of its file), its frames from the lines in
        order, "function" the Function's system_name.  Checks on the
        way that each name is the system_name demangled (c++filt) and
        that a location's lines are innermost first (a Line's function
        only the last of them is not inlined: checked by llvm after).
    otlpcheck.py passthrough IN OUT
        Everything but the filled-in locations and the added functions
        and strings is as it came: resources, scopes, profiles, samples,
        the mapping, stack, link and attribute tables, each location's
        mapping, address and attributes, the lines a location had, and
        the string and function tables as a prefix of the answer's.
    otlpcheck.py evil KIND OUT
        A bad request (gzip-compressed): truncated, bomb, deep,
        locations=N, nodict, str0, strindex, mapindex, funcindex,
        stackindex, attrindex, limit, outside, badgnu, badhtl, notstring.
"""

import gzip
import json
import random
import sys

from opentelemetry.proto.collector.profiles.v1development import \
    profiles_service_pb2 as svc
from opentelemetry.proto.profiles.v1development import profiles_pb2 as pb

import batchcheck
import pprofcheck

try:
    # the C++ reader stops at 64 MiB without this (a bench's request)
    from google.protobuf.pyext import _message
    _message.SetAllowOversizeProtos(True)
except ImportError:
    pass

GNU = "process.executable.build_id.gnu"
HTL = "process.executable.build_id.htlhash"


class Dict:
    def __init__(self, req):
        self.d = req.dictionary
        self.index = {}
        self.d.string_table.append("")
        self.d.mapping_table.add()
        self.d.location_table.add()
        self.d.function_table.add()
        self.d.attribute_table.add()
        self.d.stack_table.add()
        link = self.d.link_table.add()
        link.trace_id = bytes(16)
        link.span_id = bytes(8)

    def s(self, text):
        if text not in self.index:
            self.index[text] = len(self.d.string_table)
            self.d.string_table.append(text)
        return self.index[text]

    def attr(self, key, value):
        if (key, value) in self.index:
            return self.index[(key, value)]
        a = self.d.attribute_table.add()
        a.key_strindex = self.s(key)
        if isinstance(value, int):
            a.value.int_value = value
        else:
            a.value.string_value = value
        self.index[(key, value)] = len(self.d.attribute_table) - 1
        return self.index[(key, value)]


def request(data):
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    req = svc.ExportProfilesServiceRequest()
    req.ParseFromString(data)
    return req


def write(req, out, raw):
    data = req.SerializeToString()
    with open(out, "wb") as f:
        f.write(data if raw else gzip.compress(data, 1))


def make(argv):
    out, raw, mods, nproc, nsamples, llvm = argv[0], False, [], 2, None, None
    rest = argv[1:]
    while rest:
        a = rest.pop(0)
        if a == "--raw":
            raw = True
        elif a == "--processes":
            nproc = int(rest.pop(0))
        elif a == "--samples":
            nsamples = int(rest.pop(0))
        elif a == "--llvm":
            llvm = open(rest.pop(0), "w")
        else:
            mods.append(a)
    rng = random.Random(1)
    req = svc.ExportProfilesServiceRequest()
    t = Dict(req)
    d = t.d
    nlocs = 0
    for pid in range(1000, 1000 * (nproc + 1), 1000):
        rp = req.resource_profiles.add()
        kv = rp.resource.attributes.add()
        kv.key = "process.pid"
        kv.value.int_value = pid
        kv = rp.resource.attributes.add()
        kv.key_strindex = t.s("host.name")
        kv.value.string_value_strindex = t.s("ci")
        sp = rp.scope_profiles.add()
        sp.scope.name = "otlpcheck"
        p = sp.profiles.add()
        p.sample_type.type_strindex = t.s("samples")
        p.sample_type.unit_strindex = t.s("count")
        p.period_type.type_strindex = t.s("cpu")
        p.period_type.unit_strindex = t.s("nanoseconds")
        p.period = 10000000
        p.time_unix_nano = 1700000000000000000 + pid
        p.profile_id = bytes(range(1, 17))
        p.attribute_indices.append(t.attr("profile.frame.type", "native"))
        locs = []
        # the second process maps each module elsewhere
        shift = 0 if pid == 1000 else 0x10000000
        for spec in mods:
            elf, gnu, htl, base, path = spec.split(":")[:5]
            obj = (spec.split(":") + [elf])[5]
            base = int(base, 0)
            if base:
                base += shift
            off, va, filesz, memsz, _ = \
                [s for s in pprofcheck.loads(elf) if s[4]][0]
            m = d.mapping_table.add()
            m.memory_start = base + (va & ~0xfff)
            m.memory_limit = base + va + memsz
            m.file_offset = off & ~0xfff
            m.filename_strindex = t.s(elf)
            if gnu:
                m.attribute_indices.append(t.attr(GNU, gnu))
            if htl:
                m.attribute_indices.append(t.attr(HTL, htl))
            m.attribute_indices.append(t.attr("process.executable.name",
                                              elf.split("/")[-1]))
            mi = len(d.mapping_table) - 1
            first = len(d.location_table)
            for line in open(path):
                a = int(line, 16)
                if va <= a < va + filesz:
                    loc = d.location_table.add()
                    loc.mapping_index = mi
                    loc.address = base + a
                    loc.attribute_indices.append(
                        t.attr("profile.frame.type", "native"))
                    locs.append(len(d.location_table) - 1)
                    if llvm and pid == 1000:
                        llvm.write('"%s" 0x%x\n' % (obj, a))
            if pid == 1000 and spec == mods[0] and \
                    len(d.location_table) > first:
                # one location symbolized already: it must pass through
                fn = d.function_table.add()
                fn.name_strindex = t.s("already_there")
                fn.system_name_strindex = t.s("already_there")
                fn.filename_strindex = t.s("/src/there.c")
                fn.start_line = 3
                loc = d.location_table.add()
                loc.mapping_index = mi
                loc.address = d.location_table[first].address
                ln = loc.lines.add()
                ln.function_index = len(d.function_table) - 1
                ln.line = 4
                ln.column = 2
                locs.append(len(d.location_table) - 1)
        nlocs = len(d.location_table) - 1
        n = len(locs) if nsamples is None else nsamples
        for i in range(n):
            st = d.stack_table.add()
            if nsamples is None:
                st.location_indices.extend([locs[i]] + locs[i + 1:i + 8])
            else:
                st.location_indices.extend(rng.sample(locs,
                                                      min(8, len(locs))))
            s = p.samples.add()
            s.stack_index = len(d.stack_table) - 1
            s.values.append(1 + i % 5)
            s.timestamps_unix_nano.append(p.time_unix_nano + i)
            s.attribute_indices.append(t.attr("thread.name",
                                              "t%d" % (i % 3)))
            s.link_index = 0
    write(req, out, raw)
    print(nlocs)


def ids(d, m):
    out = {}
    for ai in m.attribute_indices:
        a = d.attribute_table[ai]
        key = d.string_table[a.key_strindex]
        if key in (GNU, HTL):
            out[key] = a.value.string_value
    return out


def tojson(argv):
    req = request(open(argv[0], "rb").read())
    d = req.dictionary
    st = d.string_table
    mods, names, bad_order = [], [], 0
    # the first resource's mappings: the second's are the same modules
    seen = set()
    bymap = {}
    for loc in d.location_table:
        bymap.setdefault(loc.mapping_index, []).append(loc)
    for mi, m in enumerate(d.mapping_table):
        if mi == 0:
            continue
        mid = ids(d, m)
        key = (mid.get(GNU), mid.get(HTL), st[m.filename_strindex])
        if not mid or key in seen:
            continue
        seen.add(key)
        lds = pprofcheck.loads(st[m.filename_strindex])
        res = []
        for loc in bymap.get(mi, []):
            if any(st[d.function_table[ln.function_index].name_strindex] ==
                   "already_there" for ln in loc.lines):
                continue
            off = loc.address - m.memory_start + m.file_offset
            va = [off - o + v for o, v, fs, _, _ in lds if o <= off < o + fs]
            frames = []
            for ln in loc.lines:
                fn = d.function_table[ln.function_index]
                fr = {"function": st[fn.system_name_strindex], "start": ""}
                names.append((st[fn.name_strindex],
                              st[fn.system_name_strindex]))
                if fn.filename_strindex and ln.line:
                    fr["file"], fr["line"] = st[fn.filename_strindex], \
                        ln.line
                frames.append(fr)
            res.append({"address": "0x%x" % va[0], "frames": frames})
        mods.append({"buildid": mid.get(HTL) or mid.get(GNU),
                     "status": "symbolized" if any(r["frames"]
                                                   for r in res) else
                     "raw", "file": st[m.filename_strindex],
                     "results": res})
        print("mapping %s %d of %d locations with lines" %
              (mid.get(HTL) or mid.get(GNU),
               sum(1 for r in res if r["frames"]), len(res)))
    batchcheck.demangle([s for _, s in names])
    bad = [(n, s) for n, s in names
           if n != batchcheck._demangled.get(s, s)]
    with open(argv[1], "w") as f:
        json.dump({"modules": [m for m in mods
                               if m["status"] == "symbolized"]}, f)
    print("%d names, %d not the system_name demangled%s" %
          (len(names), len(bad), (": %s" % bad[:3]) if bad else ""))
    return 1 if bad or bad_order else 0


def passthrough(argv):
    a = request(open(argv[0], "rb").read())
    b = request(open(argv[1], "rb").read())
    da, db = a.dictionary, b.dictionary
    bad = []
    if list(a.resource_profiles) != list(b.resource_profiles):
        bad.append("resource_profiles")
    for name in ("mapping_table", "stack_table", "link_table",
                 "attribute_table"):
        if list(getattr(da, name)) != list(getattr(db, name)):
            bad.append(name)
    if list(db.string_table[:len(da.string_table)]) != \
            list(da.string_table):
        bad.append("string_table prefix")
    if list(db.function_table[:len(da.function_table)]) != \
            list(da.function_table):
        bad.append("function_table prefix")
    if len(da.location_table) != len(db.location_table):
        bad.append("location count")
    filled = 0
    for la, lb in zip(da.location_table, db.location_table):
        if (la.mapping_index, la.address, list(la.attribute_indices)) != \
                (lb.mapping_index, lb.address, list(lb.attribute_indices)):
            bad.append("location %d" % la.address)
        if la.lines and list(la.lines) != list(lb.lines):
            bad.append("lines of location %x" % la.address)
        filled += not la.lines and bool(lb.lines)
    dup = len(db.string_table) - len(set(db.string_table))
    dup0 = len(da.string_table) - len(set(da.string_table))
    if dup != dup0:
        bad.append("%d strings twice" % (dup - dup0))
    print("%d locations filled in, %d strings and %d functions added, "
          "%s" % (filled, len(db.string_table) - len(da.string_table),
                  len(db.function_table) - len(da.function_table),
                  "the rest as it came" if not bad else
                  "differs: " + ", ".join(bad[:5])))
    return 1 if bad else 0


def evil(argv):
    kind, out = argv[0], argv[1]
    if kind == "bomb":
        open(out, "wb").write(gzip.compress(b"\0" * (256 << 20), 9))
        return
    req = svc.ExportProfilesServiceRequest()
    t = Dict(req)
    d = t.d
    m = d.mapping_table.add()
    m.memory_start, m.memory_limit = 0x1000, 0x2000
    if kind == "limit":
        m.memory_limit = 0x800
    m.filename_strindex = t.s("/x")
    gnu = {"badgnu": "not-a-build-id"}.get(kind, "ab" * 20)
    if kind == "notstring":
        m.attribute_indices.append(t.attr(GNU, 42))
    else:
        m.attribute_indices.append(t.attr(GNU, gnu))
    if kind == "badhtl":
        m.attribute_indices.append(t.attr(HTL, "ab" * 20))
    n = int(kind.split("=")[1]) if kind.startswith("locations=") else 1
    for i in range(n):
        loc = d.location_table.add()
        loc.mapping_index = 5 if kind == "mapindex" else 1
        loc.address = 0x2800 if kind == "outside" else 0x1000 + i % 0x1000
    if kind == "funcindex":
        d.location_table[1].lines.add().function_index = 9
    if kind == "strindex":
        fn = d.function_table.add()
        fn.name_strindex = 1000
    if kind == "attrindex":
        d.location_table[1].attribute_indices.append(77)
    st = d.stack_table.add()
    st.location_indices.append(1)
    p = req.resource_profiles.add().scope_profiles.add().profiles.add()
    s = p.samples.add()
    s.stack_index = 9 if kind == "stackindex" else 1
    s.values.append(1)
    if kind == "str0":
        d.string_table[0] = "x"
    if kind == "nodict":
        req.ClearField("dictionary")
    data = req.SerializeToString()
    if kind == "truncated":
        data = data[:-3]
    if kind == "deep":
        # a resource attribute of arrays in arrays, 200 deep
        v = b""
        for _ in range(200):
            arr = b"\x0a" + pprofcheck.varint(len(v)) + v
            v = b"\x2a" + pprofcheck.varint(len(arr)) + arr
        kv = b"\x0a\x01k\x12" + pprofcheck.varint(len(v)) + v
        res = b"\x0a" + pprofcheck.varint(len(kv)) + kv
        rp = b"\x0a" + pprofcheck.varint(len(res)) + res
        data += b"\x0a" + pprofcheck.varint(len(rp)) + rp
    with open(out, "wb") as f:
        f.write(gzip.compress(data, 1))


def main():
    cmd, argv = sys.argv[1], sys.argv[2:]
    if cmd == "make":
        make(argv)
        return 0
    if cmd == "tojson":
        return tojson(argv)
    if cmd == "passthrough":
        return passthrough(argv)
    if cmd == "evil":
        evil(argv)
        return 0
    print("unknown command %s" % cmd, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
